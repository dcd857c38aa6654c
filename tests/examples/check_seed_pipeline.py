#!/usr/bin/env python3
"""Runs examples/seed_pipeline on the bundled my_test.csv and checks that every data row comes out
exactly once (as a multiset: the queue shuffles), with TF's record_defaults applied to empty
fields, in minibatches of at most 2, and that the run ends with "No more training instances"."""
import collections, subprocess, sys

exe, csv_path = sys.argv[1], sys.argv[2]
defaults = [-1.0, -1.0, -1]
want = collections.Counter()
with open(csv_path) as f:
    next(f)  # header (skip_header_lines=1)
    for line in f:
        fields = line.rstrip("\n").split(",")
        vals = [float(fields[0] or defaults[0]), float(fields[1] or defaults[1]),
                int(fields[2] or defaults[2])]
        want[tuple(vals)] += 1

for run in range(3):  # three runs: different shuffles, same multiset
    out = subprocess.run([exe, csv_path], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        print(f"not ok: exit {out.returncode}\n{out.stderr}")
        sys.exit(1)
    lines = out.stdout.strip().split("\n")
    if lines[-1] != "No more training instances":
        print("not ok: missing final line"); sys.exit(1)
    got = collections.Counter()
    for l in lines[:-1]:
        if l.startswith("batch of "):
            n = int(l.split()[-1])
            if not 1 <= n <= 2:
                print(f"not ok: batch of {n}"); sys.exit(1)
            continue
        a, b, c = l.split()
        got[(float(a), float(b), int(c))] += 1
    if got != want:
        print(f"not ok: rows differ\nmissing {want - got}\nextra {got - want}")
        sys.exit(1)
print(f"ok: {sum(want.values())} rows, each exactly once, in 3 runs")
