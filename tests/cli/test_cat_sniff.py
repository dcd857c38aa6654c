#!/usr/bin/env python3
"""tfq-cat's input by content and its streaming (issue #42, item 5; item 6's delimiters), each
against an oracle that is not tfq-cat:

  stream      a batch is printed within 100 ms of its last record arriving on a pipe
              (`-f csv --no-shuffle -b 2`, CSV sniffed on standard input, and TFRecord): the
              test writes a full batch, waits 0.5 s, writes the record that fills the next one
              and times the arrival of that record's output line (a functional latency check
              with a generous bound, the median of 3 runs, not a benchmark)
  stdin_csv   CSV on standard input without -f is read as CSV, with a note; the values equal
              Python's csv module's; gzip and zlib CSV on standard input too, and a ';' inside
              a .csv.gz
  delimiters  TAB, ';', '|' and SPACE on standard input, and ';', '|', TAB in a .csv file:
              the note names the delimiter and the values equal csv.reader's with it
  tfrecord    TFRecord on standard input (plain, gzip, with --raw) and in files named data.rec
              and blob.gz: read as records (the payloads a framing walk written in
              tests/cli/test_cat_records.py finds)
  binary      a binary file read as CSV or lines gets the "binary file?" hint

  test_cat_sniff.py --tfq-cat PATH --workdir DIR

Prints TAP; exit 0 pass, 1 fail."""
import argparse
import csv
import gzip
import io
import os
import select
import statistics
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_cat_records as rec  # noqa: E402  (the harness)
from test_cat_records import check, frame, payloads, run, walk  # noqa: E402  (the framing oracle)

def rows_of(out):
    """tfq-cat -o csv output: its rows after the header line of column names."""
    return list(csv.reader(io.StringIO(out, newline="")))[1:]


def same_values(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if len(g) != len(w):
            return False
        for a, b in zip(g, w):
            try:
                if float(a) != float(b):
                    return False
            except ValueError:
                if a != b:
                    return False
    return True


# ---- streaming ------------------------------------------------------------------------------

def latency(args, first, last, marker):
    """Seconds from writing `last` (after `first` and 0.5 s) to `marker` in the output."""
    p = subprocess.Popen([TFQ_CAT] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        p.stdin.write(first)
        p.stdin.flush()
        time.sleep(0.5)
        t = time.monotonic()
        p.stdin.write(last)
        p.stdin.flush()
        out = b""
        while marker not in out and time.monotonic() - t < 5:
            r, _, _ = select.select([p.stdout], [], [], 0.01)
            if r:
                b = os.read(p.stdout.fileno(), 65536)
                if not b:
                    break
                out += b
        dt = time.monotonic() - t if marker in out else float("inf")
    finally:
        p.stdin.close()
        p.wait(timeout=30)
        p.stdout.close()
        p.stderr.close()
    return dt


def part_stream():
    rows = b"".join(b"%d,%d.5,%d\n" % (i, i, 7 * i) for i in range(5))
    for name, args in (("-f csv", ["-f", "csv", "--no-shuffle", "-n", "3", "-b", "2", "-o",
                                   "csv"]),
                       ("sniffed CSV", ["--no-shuffle", "-n", "3", "-b", "2", "-o", "csv", "-q"])):
        ts = [latency(args, rows[:rows.index(b"3,")], b"3,3.5,21\n", b"\n3,") for _ in range(3)]
        check(statistics.median(ts) <= 0.1, "stream %s: batch out within 100 ms" % name,
              "median %.3f s of %r" % (statistics.median(ts), ts))
    recs = [frame(b"stream-%d" % i) for i in range(4)]
    args = ["-f", "tfrecord", "--raw", "--no-shuffle", "-n", "2", "-b", "2", "-o", "csv"]
    ts = [latency(args, b"".join(recs[:3]), recs[3], b"stream-3") for _ in range(3)]
    check(statistics.median(ts) <= 0.1, "stream tfrecord: batch out within 100 ms",
          "median %.3f s of %r" % (statistics.median(ts), ts))


# ---- content ------------------------------------------------------------------------------

def part_content(wd):
    os.chdir(wd)
    table = [[str(i), "%d.25" % (i * 3), str(-i)] for i in range(30)]
    for delim, label in ((",", "','"), ("\t", "TAB"), (";", "';'"), ("|", "'|'"), (" ", "SPACE")):
        buf = io.StringIO()
        csv.writer(buf, delimiter=delim, lineterminator="\n").writerows(table)
        data = buf.getvalue()
        rc, out, err = run(["--no-shuffle", "-n", "0", "-b", "7", "-o", "csv"],
                           stdin=data.encode())
        want = list(csv.reader(io.StringIO(data), delimiter=delim))
        check(rc == 0 and "read as CSV, 3 fields split at %s" % label in err and
              same_values(rows_of(out), want), "stdin CSV split at %s = csv.reader" % label,
              "rc %d err %r out %r" % (rc, err, out[:200]))
        if delim in ";|\t":
            with open("d.csv", "w") as f:
                f.write(data)
            rc, out, err = run(["--no-shuffle", "-n", "0", "-b", "7", "-o", "csv", "d.csv"])
            check(rc == 0 and "d.csv: fields split at %s (3 a line" % label in err and
                  same_values(rows_of(out), want), "d.csv split at %s = csv.reader" % label,
                  "rc %d err %r" % (rc, err))
    # a one-column CSV of names with a space stays one column
    with open("names.csv", "w") as f:
        f.write("".join("First%d Last%d\n" % (i, i) for i in range(5)))
    rc, out, err = run(["--no-shuffle", "-n", "0", "-o", "csv", "names.csv"])
    check(rc == 0 and "split at" not in err and len(rows_of(out)[0]) == 1,
          "names.csv: a space does not split a .csv", err)
    # compressed CSV: on standard input (gzip, zlib) and in a .csv.gz split at ';'
    buf = io.StringIO()
    csv.writer(buf, delimiter=";", lineterminator="\n").writerows(table)
    data = buf.getvalue()
    want = list(csv.reader(io.StringIO(data), delimiter=";"))
    for label, comp in (("gzip", gzip.compress), ("zlib", zlib.compress)):
        rc, out, err = run(["--no-shuffle", "-n", "0", "-b", "7", "-o", "csv"],
                           stdin=comp(data.encode()))
        check(rc == 0 and "read as compressed CSV, 3 fields split at ';'" in err and
              same_values(rows_of(out), want), "stdin %s CSV split at ';' = csv.reader" % label,
              "rc %d err %r out %r" % (rc, err, out[:200]))
    with open("d.csv.gz", "wb") as f:
        f.write(gzip.compress(data.encode()))
    rc, out, err = run(["--no-shuffle", "-n", "0", "-b", "7", "-o", "csv", "d.csv.gz"])
    check(rc == 0 and "d.csv.gz: fields split at ';' (3 a line" in err and
          same_values(rows_of(out), want), "d.csv.gz split at ';' = csv.reader",
          "rc %d err %r" % (rc, err))
    # prose on standard input stays text
    rc, out, err = run(["--no-shuffle", "-n", "1", "-o", "csv"],
                       stdin=b"the quick brown fox\njumps over\nthe lazy dog today\n")
    check(rc == 0 and "read as CSV" not in err and rows_of(out)[0] == ["the quick brown fox"],
          "prose on stdin stays lines", err + out)

    recs = payloads(50, 3)
    data = b"".join(frame(p) for p in recs)
    want = sorted(p for _, _, p in walk(data))
    with open("data.rec", "wb") as f:
        f.write(data)
    with open("blob.gz", "wb") as f:
        f.write(gzip.compress(data))
    for name, args, stdin in (("stdin", [], data), ("data.rec", ["data.rec"], None),
                              ("gzip stdin", [], gzip.compress(data)),
                              ("blob.gz", ["blob.gz"], None),
                              ("stdin --raw", ["--raw"], data)):
        rc, out, err = run(["--no-shuffle", "-n", "0", "-b", "8", "-o", "csv"] + args,
                           stdin=stdin)
        got = sorted(r[0].encode() for r in rows_of(out))
        check(rc == 0 and "TFRecord records (by their framing" in err and got == want,
              "tfrecord on %s read as records" % name, "rc %d err %r" % (rc, err))

    with open("bin.dat", "wb") as f:
        f.write(bytes(range(256)) * 8)
    for args in (["-f", "csv", "bin.dat"], ["bin.dat"]):
        rc, out, err = run(["--no-shuffle", "-n", "1"] + args)
        check("binary file?" in err, "binary hint: %s" % " ".join(args), err)


def main():
    global TFQ_CAT
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    TFQ_CAT = rec.TFQ_CAT = os.path.abspath(a.tfq_cat)
    wd = os.path.join(os.path.abspath(a.workdir), "sniff")
    os.makedirs(wd, exist_ok=True)
    part_stream()
    part_content(wd)
    print("1..%d" % len(rec.RESULTS))
    sys.exit(0 if rec.RESULTS and all(r[0] for r in rec.RESULTS) else 1)


if __name__ == "__main__":
    main()
