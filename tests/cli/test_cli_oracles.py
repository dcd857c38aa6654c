#!/usr/bin/env python3
"""Independent oracles for the CLI goldens that hold CSV values (issue #41): each case's values
are re-derived here from the input bytes through Python's csv module plus the record defaults
(decode_csv's rules: an empty field or --na-value takes the column's default, a required column
has none; float32 columns are rounded to float32), then compared with what tfq-cat prints now AND
with the stored golden file, so neither tfq-cat nor a golden written from its own earlier output
(run_cli_tests.py --update) is its own oracle.  docs/conformance.md names the oracle per golden.

    test_cli_oracles.py --tfq-cat build/tools/tfq-cat --workdir DIR

Prints TAP; exit 0 when every case agrees, 1 otherwise.  Needs no TensorFlow.
"""
import argparse
import csv
import io
import json
import math
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
IRIS = os.path.join(HERE, "..", "..", "examples", "data", "iris.csv")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def convert(typ, text, default, na):
    """One field as decode_csv gives it; None default = required (the field must be there)."""
    if text == "" or (na is not None and text == na):
        if default is None:
            raise ValueError("required field missing")
        text = default
    if typ in ("str", "string"):
        return text
    if typ in ("int", "int32", "int64", "long"):
        return int(text)
    v = float(text)  # Python's float() takes nan, inf, -inf, 1e300 as strtod does
    return f32(v) if typ in ("float", "float32") else v


def oracle(data, spec, skip=0, select=None, quote=True, na=None):
    """Rows of converted values: data (bytes) through csv.reader, spec [(type, default|None)]."""
    text = data.decode("utf-8")
    rd = csv.reader(io.StringIO(text), delimiter=",", quoting=csv.QUOTE_MINIMAL if quote
                    else csv.QUOTE_NONE, **({"quotechar": '"', "doublequote": True} if quote
                                            else {"quotechar": None}))
    rows = []
    for i, fields in enumerate(rd):
        if i < skip:
            continue
        if select is not None:
            fields = [fields[c] for c in select]
        assert len(fields) == len(spec), (fields, spec)
        rows.append([convert(t, f, d, na) for (t, d), f in zip(spec, fields)])
    return rows


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def json_value(v):
    # tfq-cat writes non-finite floats as the strings "NaN", "Infinity", "-Infinity"
    return float(v) if v in ("NaN", "Infinity", "-Infinity") else v


def jsonl_rows(out, types):
    """Rows from tfq-cat's JSON lines (an object a record, the columns in order; "key" left out);
    float32 columns' shortest decimal strings (1e-45) read back as float32."""
    rows = []
    for line in out.decode("utf-8").splitlines():
        # "-0" is JSON's negative zero (Python's int() would drop the sign)
        obj = json.loads(line, parse_int=lambda t: -0.0 if t == "-0" else int(t))
        vals = [v for k, v in obj.items() if k != "key"]
        rows.append([f32(json_value(v)) if t in ("float", "float32") else json_value(v)
                     for t, v in zip(types, vals)])
    return rows


def csv_rows(out, types):
    rd = list(csv.reader(io.StringIO(out.decode("utf-8"))))
    return [[convert(t, f, None, None) for t, f in zip(types, r)]
            for r in rd[1:]]  # the first line is the header


# name: (input bytes or path, tfq-cat args, oracle kwargs, output kind, limit of rows printed)
def cases():
    iris = open(IRIS, "rb").read()
    return [
        ("na_value", b"1,NA,a\nNA,2.5,NA\n3,,c\n",
         ["-o", "jsonl", "--na-value=NA", "-d", "int:-1,float:-1,str:?"],
         dict(spec=[("int", "-1"), ("float", "-1"), ("str", "?")], na="NA"), "jsonl", None),
        ("no_quote_delim", b'1,"x\n2,y"\n',
         ["-o", "jsonl", "--no-quote-delim", "-d", "int,str"],
         dict(spec=[("int", None), ("str", "")], quote=False), "jsonl", None),
        ("nonfinite_jsonl", b"nan,inf\n-inf,-0.0\n1e-45,1e300\n",
         ["-o", "jsonl", "-d", "float,double"],
         dict(spec=[("float", None), ("double", None)]), "jsonl", None),
        ("spec_required_and_quoted", b'id,text\n1,"a,b"\n2,"say ""hi"""\n3,plain\n4,\n',
         ["--skip-header-lines=1", "-o", "jsonl", "-d", 'int,string:"x,""y"""'],
         dict(spec=[("int", None), ("str", 'x,"y"')], skip=1), "jsonl", None),
        ("select_cols", iris,
         ["--skip-header-lines=1", "-b", "2", "-n", "1", "-o", "jsonl", "--select-cols=1,4",
          "-d", "double,str"],
         dict(spec=[("double", None), ("str", "")], skip=1, select=[1, 4]), "jsonl", 2),
        ("iris_csv_all", iris,
         ["--skip-header-lines=1", "-b", "32", "-n", "0", "-o", "csv"],
         dict(spec=[("double", "0.0")] * 4 + [("str", "")], skip=1), "csv", None),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    cs = cases()
    print("1..%d" % (2 * len(cs)))
    n, failed = 0, 0
    for name, data, args, kw, kind, limit in cs:
        path = os.path.join(a.workdir, "oracle_%s.csv" % name)
        with open(path, "wb") as f:
            f.write(data)
        want = oracle(data, **kw)
        if limit is not None:
            want = want[:limit]
        types = [t for t, _ in kw["spec"]]
        p = subprocess.run([a.tfq_cat, "-q", "--no-shuffle"] + args + [path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with open(os.path.join(GOLDEN, name + ".out"), "rb") as f:
            golden = f.read()
        for what, out in (("tfq-cat now", p.stdout), ("golden/%s.out" % name, golden)):
            n += 1
            try:
                got = jsonl_rows(out, types) if kind == "jsonl" else csv_rows(out, types)
                bad = [] if len(got) == len(want) else ["%d rows, oracle %d" % (len(got),
                                                                                 len(want))]
                for i, (g, w) in enumerate(zip(got, want)):
                    if len(g) != len(w) or not all(same(x, y) for x, y in zip(g, w)):
                        bad.append("row %d: %r, oracle %r" % (i, g, w))
                        break
                if what == "tfq-cat now" and (p.returncode != 0 or p.stderr):
                    bad.append("exit %d, stderr %r" % (p.returncode, p.stderr[:200]))
            except (ValueError, KeyError, IndexError) as e:
                bad = ["unreadable: %s" % e]
            ok = not bad
            failed += not ok
            print("%s %d - %s: %s agrees with Python's csv + record defaults (%d rows)%s" % (
                "ok" if ok else "not ok", n, name, what, len(want),
                "" if ok else ": " + "; ".join(bad)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
