#!/usr/bin/env python3
"""tfq-cat's headers, --infer-rows, late type errors and jsonl bytes (issue #42, items 1, 3, 7),
each checked against Python's csv and json modules, not against tfq-cat's own earlier output.

  headers    a corpus of 17 real-shaped CSV files (header or not, a UTF-8 BOM, CRLF, tab and space
             delimiters, quoted names, a header over text columns of codes, files without one,
             a BOM before data, gzip, years over numbers):
             by default tfq-cat takes line 1 as a header exactly when the file has one (with its
             note on stderr), and every record's values (jsonl, the names as keys) equal
             Python's csv reading of the file; --header / --no-header force it.
  late       a column that turns to floats (or to text) after the sampled records: exit 1 with
             TF's message "FILE:LINE: Field N in record 0 is not a valid int64: 1.5", then a line
             naming the column and the -d that reads it; that -d, and the --infer-rows it names,
             then read the whole file, values equal to Python's csv.
  bytes      jsonl of strings holding bytes that are not UTF-8, control bytes and U+0080..U+00FF
             characters: json.loads of each line, then str.encode("utf-8", "surrogateescape"),
             gives the file's bytes back.

  test_cat_headers.py --tfq-cat PATH --workdir DIR

Prints TAP; exit 0 when every check holds.  Needs no TensorFlow."""
import argparse
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys

RESULTS = []


def check(cond, what):
    RESULTS.append((bool(cond), what))
    return cond


def run(cat, args, cwd):
    p = subprocess.run([cat] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60, check=False)
    return p.returncode, p.stdout, p.stderr


def records(out):
    return [json.loads(ln) for ln in out.decode("utf-8").splitlines()]


def convert(text):
    """A CSV field as tfq-cat's inference reads it: int, else float, else the text."""
    for f in (int, float):
        try:
            return f(text)
        except ValueError:
            pass
    return text


def oracle(data, delim, header, sig=True):
    """(names, rows) from Python's csv module; with `sig` a BOM is dropped (Python's utf-8-sig
    codec), else kept as data (--no-header: TF1's bytes)."""
    text = data.decode("utf-8-sig" if sig else "utf-8")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delim))
    names = None
    if header:
        names = rows.pop(0)
    cols = list(zip(*rows))
    typed = []
    for col in cols:  # one type a column: int if every value is, else float, else text
        vals = [convert(v) for v in col]
        if all(isinstance(v, int) for v in vals):
            typed.append(vals)
        elif all(isinstance(v, (int, float)) for v in vals):
            typed.append([float(v) for v in vals])
        else:
            typed.append(list(col))
    return names, [list(r) for r in zip(*typed)]


CORPUS = [  # (name, bytes, delimiter option, has a header)
    ("airports.csv", b"iata,name,city,state,country,latitude,longitude\n"
     b"00M,Thigpen ,Bay Springs,MS,USA,31.95376472,-89.23450472\n"
     b"00R,Livingston Municipal,Livingston,TX,USA,30.68586111,-95.01792778\n"
     b"00V,Meadow Lake,Colorado Springs,CO,USA,38.94574889,-104.5698933\n", [], True),
    ("bom.csv", b"\xef\xbb\xbfid,value\n1,2.5\n2,3.5\n3,-1\n", [], True),
    ("bom_data.csv", b"\xef\xbb\xbf1,2\n3,4\n5,6\n", [], False),
    ("crlf.csv", b"year,month,sales\r\n2001,1,100.5\r\n2001,2,99\r\n2002,1,87.25\r\n", [], True),
    ("tabs.tsv", b"a\tb\tc\n1\t2\t3\n4\t5\t6\n", [], True),
    ("spaces.txt", b"x y label\n0.5 1 one\n1.5 2 two\n", ["--field-delim", " "], True),
    ("quoted.csv", b'"sepal length","petal, width",species\n5.1,0.2,setosa\n4.9,0.2,setosa\n',
     [], True),
    ("codes.csv", b"code,country\nABC,FRA\nDEF,DEU\nGHI,ITA\n", [], True),
    ("plain_numbers.csv", b"1,2,3\n4,5,6\n7,8,9\n", [], False),
    ("plain_mixed.csv", b"1,apple,0.5\n2,pear,1.5\n3,plum,2.5\n", [], False),
    ("one_row.csv", b"a,b,c\n", [], False),
    ("text_rows.csv", b"alice,paris\nbob,rome\ncarol,oslo\n", [], False),
    ("stocks.csv", b"symbol,date,price\nMSFT,Jan 1 2000,39.81\nMSFT,Feb 1 2000,36.35\n"
     b"AMZN,Jan 1 2000,64.56\n", [], True),
    ("cars.csv.gz", b"Name,Miles_per_Gallon,Cylinders,Origin\nchevrolet chevelle malibu,18,8,USA\n"
     b"buick skylark 320,15,8,USA\ntoyota corona mark ii,24,4,Japan\n", [], True),
    ("crlf_plain.csv", b"1.5,2\r\n2.5,3\r\n", [], False),
    ("years.csv", b"2001,2002,2003\n10,20,30\n40,50,60\n", [], False),
    ("iris_head.csv", b"sepal_length,sepal_width,petal_length,petal_width,species\n"
     b"5.1,3.5,1.4,0.2,setosa\n4.9,3.0,1.4,0.2,setosa\n6.3,3.3,6.0,2.5,virginica\n", [], True),
]


def case_headers(cat, d):
    for name, data, opts, header in CORPUS:
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
        fmt = ["-f", "csv"] if not name.endswith((".csv", ".tsv", ".csv.gz")) else []
        delim = "\t" if name.endswith(".tsv") else opts[1] if opts else ","
        for force in (None, "--header", "--no-header"):
            want_header = header if force is None else force == "--header"
            rc, out, err = run(cat, fmt + opts + ["--no-shuffle", "-n", "0", "-o", "jsonl"] +
                               ([force] if force else []) + [name], d)
            names, rows = oracle(data, delim, want_header, force != "--no-header")
            if names is None:
                names = ["c%d" % i for i in range(len(rows[0]) if rows else 1)]
            got = records(out) if rc == 0 else None
            want = [dict(zip(names, r)) for r in rows]
            note = b"taking line 1 of " + name.encode() + b" as a header" in err
            check(rc == 0 and got == want and list(got[0]) == names if got else rc == 0 and not
                  want, "headers %s %s: exit %d, %s records as Python's csv reads them"
                  % (name, force or "(detected)", rc, len(want)))
            check(note == (force is None and header),
                  "headers %s %s: the note on stderr %s" % (name, force or "(detected)",
                                                           "given" if note else "not given"))


def case_late(cat, d):
    for name, late, widened in (("late.csv", "1.5", "float64:0.0"),
                                ("late_text.csv", "n/a", "string:")):
        lines = ["id,price,name"] + ["%d,%d,n%d" % (i, 3 * i, i) for i in range(1, 1001)]
        lines += ["1001,%s,x" % late] + ["%d,%d,n%d" % (i, 3 * i, i) for i in range(1002, 1010)]
        data = ("\n".join(lines) + "\n").encode()
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        rc, out, err = run(cat, ["-q", "--no-shuffle", "-n", "0", "-o", "none", name], d)
        e = err.decode()
        core = "%s:1002: Field 1 in record 0 is not a valid int64: %s\n" % (name, late)
        m = re.search(r"column 1 'price' was inferred as int64 from the first records: "
                      r"-d '([^']*)' reads it \(or --infer-rows=(\d+) samples that far\)\n$", e)
        check(rc == 1 and ("tfq-cat: " + core) in e and m,
              "late %s: exit %d, TF's message, the column and the -d named: %r" % (name, rc, e))
        if not m:
            continue
        check(m.group(1) == "int64:0,%s,string:" % widened,
              "late %s: the -d suggested widens the column: %s" % (name, m.group(1)))
        names, rows = oracle(data, ",", True)
        for args in (["-d", m.group(1)], ["--infer-rows", m.group(2)]):
            rc, out, err = run(cat, ["-q", "--no-shuffle", "-n", "0", "-o", "jsonl"] + args +
                               [name], d)
            got = records(out) if rc == 0 else []
            want = [dict(zip(names, r)) for r in rows]
            check(rc == 0 and got == want, "late %s with %s: exit %d, %d of %d records as "
                  "Python's csv reads them" % (name, " ".join(args), rc,
                                              sum(a == b for a, b in zip(got, want)), len(want)))


def case_bytes(cat, d):
    lines = [b"plain", b"caf\xc3\xa9 \xc2\x80 (U+00E9, U+0080)", b"raw \x80\xff\xe9 bytes",
             b"cut \xe2\x82 euro", b"ctl \x01\x1f\t\x7f", b"surrogate \xed\xa0\x80 bytes",
             b"\"quoted\" \\ back", b"\xf0\x9f\x98\x80 emoji", bytes(range(0x80, 0x100))]
    path = os.path.join(d, "bytes.txt")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    rc, out, err = run(cat, ["-q", "-f", "text", "--no-shuffle", "-n", "0", "-o", "jsonl",
                             "bytes.txt"], d)
    got = [json.loads(ln)["line"].encode("utf-8", "surrogateescape")
           for ln in out.decode("utf-8").splitlines()] if rc == 0 else []
    check(rc == 0 and got == lines, "bytes: json.loads + surrogateescape give back %d of %d "
          "lines" % (sum(a == b for a, b in zip(got, lines)), len(lines)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    cat = os.path.abspath(args.tfq_cat)
    os.makedirs(args.workdir, exist_ok=True)
    case_headers(cat, args.workdir)
    case_late(cat, args.workdir)
    case_bytes(cat, args.workdir)
    print("1..%d" % len(RESULTS))
    for i, (ok, what) in enumerate(RESULTS, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    sys.exit(0 if all(ok for ok, _ in RESULTS) else 1)


if __name__ == "__main__":
    main()
