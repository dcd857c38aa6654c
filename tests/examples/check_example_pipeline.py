#!/usr/bin/env python3
"""Runs examples/example_pipeline on TFRecord files of Examples it writes itself (--write) and
checks that every Example comes out exactly once, with its dense values (id, xy) and its VarLen
tags (put back together from each batch's SparseTensor) intact, in minibatches of at most 16 whose
tags dense_shape is [N, M] with M at least the longest tag list of the batch, and at most 3 (the
longest of any read batch).  No TensorFlow needed: the expected values follow from the id.

  check_example_pipeline.py EXE [FILES PER_FILE [RUNS]]"""
import collections
import os
import subprocess
import sys
import tempfile

exe = sys.argv[1]
files = int(sys.argv[2]) if len(sys.argv) > 2 else 4
per = int(sys.argv[3]) if len(sys.argv) > 3 else 250
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3


def expected(i):
    tags = [] if i % 8 == 0 else ["t%d.%d" % (i, k) for k in range(i % 4)]
    return (i / 4, float(-i), tuple(tags))


def fail(msg):
    print("not ok: " + msg)
    sys.exit(1)


with tempfile.TemporaryDirectory() as d:
    w = subprocess.run([exe, "--write", d, str(files), str(per)], capture_output=True, text=True,
                       timeout=60)
    if w.returncode != 0:
        fail("--write exit %d\n%s" % (w.returncode, w.stderr))
    paths = w.stdout.split()
    if len(paths) != files or not all(os.path.exists(p) for p in paths):
        fail("--write printed %r" % paths)
    n = files * per
    for run in range(runs):  # different shuffles, the same set
        out = subprocess.run([exe] + paths, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            fail("exit %d\n%s" % (out.returncode, out.stderr))
        lines = out.stdout.strip().split("\n")
        if lines[-1] != "No more examples":
            fail("missing final line")
        seen = collections.Counter()
        order = []
        batch_left, batch_max, shape = 0, 0, None
        for l in lines[:-1]:
            if l.startswith("batch of "):
                if batch_left:
                    fail("short batch")
                p = l.split()
                b = int(p[2])
                shape = [int(x) for x in p[4].strip("[]").split(",")]
                if not 1 <= b <= 16 or shape[0] != b or shape[1] > 3:
                    fail("batch line %r" % l)
                batch_left, batch_max = b, 0
                continue
            if not batch_left:
                fail("row outside a batch: %r" % l)
            batch_left -= 1
            parts = l.split(" ")
            i, x, y = int(parts[0]), float(parts[1]), float(parts[2])
            tags = tuple(t for t in parts[3].split(",") if t) if len(parts) > 3 else ()
            batch_max = max(batch_max, len(tags))
            if batch_max > shape[1]:
                fail("tags dense_shape %r below a row's %d tags" % (shape, len(tags)))
            if not 0 <= i < n or (x, y, tags) != expected(i):
                fail("example %d came out as %r, want %r" % (i, (x, y, tags), expected(i)))
            seen[i] += 1
            order.append(i)
        if batch_left:
            fail("last batch short of its rows")
        dup = [i for i, c in seen.items() if c > 1]
        missing = n - len(seen)
        if dup or missing:
            fail("%d examples missing, duplicated: %r" % (missing, dup[:10]))
        if order == sorted(order):
            fail("run %d: not shuffled" % run)
print("ok: %d examples in %d files, each exactly once with its dense and sparse values, in %d runs"
      % (files * per, files, runs))
