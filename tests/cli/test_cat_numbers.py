#!/usr/bin/env python3
"""tfq-cat prints numbers as Python prints them (issue #42, item 2).

10,000 float64 and 10,000 float32 values (random bit patterns, subnormals, huge and tiny
magnitudes, integers, short decimals, powers of two and ten, both signs) go through tfq-cat as a
CSV file (-d float64,float32, written with repr, which reads back exactly) and come out in every
output format (csv, jsonl, table).  Each printed number must

  - read back exactly (float64 through float(), float32 through numpy.float32), sign of zero
    included, and
  - equal the oracle's text: Python's repr(x) for float64; for float32 the shortest digits that
    read back as the same float32 (numpy's str(numpy.float32(x))) laid out by Python's repr
    rule (positional for 1e-4 <= |x| < 1e16: 16777216 and 0.0001, where numpy's str would say
    1.6777216e+07 and 1e-04), that is repr(float(str(numpy.float32(x)))): a decimal of at most
    9 significant digits is the shortest repr of the double it parses to; with a trailing ".0"
    dropped (tfq-cat prints 50, Python 50.0).

  test_cat_numbers.py --tfq-cat PATH --workdir DIR

Exit 0 pass, 1 fail, 77 skip (no numpy; a failure when CI=true)."""
import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_PY = os.path.join(HERE, "..", "..", ".venv", "bin", "python")

try:
    import numpy as np
except Exception as e:  # noqa: BLE001
    if os.path.exists(VENV_PY) and not os.environ.get("TFQ_CAT_NUM_REEXEC"):
        os.environ["TFQ_CAT_NUM_REEXEC"] = "1"
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    print("# SKIPPED: no numpy (%s)" % e)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

N = 10000


def f64_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def f32_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def doubles(rng):
    out = []
    while len(out) < N:
        k = len(out) % 8
        sign = rng.getrandbits(1) << 63
        if k == 0:  # any bit pattern
            x = f64_bits(rng.getrandbits(64))
        elif k == 1:  # subnormal
            x = f64_bits(sign | rng.getrandbits(52))
        elif k == 2:  # huge
            x = f64_bits(sign | (rng.randrange(2000, 2047) << 52) | rng.getrandbits(52))
        elif k == 3:  # tiny (normal)
            x = f64_bits(sign | (rng.randrange(1, 60) << 52) | rng.getrandbits(52))
        elif k == 4:  # integers
            x = float(rng.randrange(-2**rng.randrange(1, 70), 2**rng.randrange(1, 70)))
        elif k == 5:  # short decimals
            x = round(rng.uniform(-1e4, 1e4), rng.randrange(0, 6)) * 10.0 ** rng.randrange(-8, 18)
        elif k == 6:  # powers of two (lopsided intervals) and ten
            x = math.ldexp(1.0, rng.randrange(-1074, 1024))
        else:
            x = 10.0 ** rng.randrange(-323, 309) * rng.choice([1, -1, 2.5])
        if math.isfinite(x):
            out.append(x)
    return out


def floats(rng):
    out = []
    while len(out) < N:
        k = len(out) % 7
        sign = rng.getrandbits(1) << 31
        if k == 0:
            x = f32_bits(rng.getrandbits(32))
        elif k == 1:
            x = f32_bits(sign | rng.getrandbits(23))
        elif k == 2:
            x = f32_bits(sign | (rng.randrange(230, 255) << 23) | rng.getrandbits(23))
        elif k == 3:
            x = float(np.float32(rng.randrange(-2**rng.randrange(1, 40), 2**rng.randrange(1, 40))))
        elif k == 4:
            x = float(np.float32(round(rng.uniform(-1e4, 1e4), rng.randrange(0, 5))
                                 * 10.0 ** rng.randrange(-6, 9)))
        elif k == 5:
            x = float(np.float32(math.ldexp(1.0, rng.randrange(-149, 128))))
        else:
            x = float(np.float32(10.0 ** rng.randrange(-45, 39)))
        if math.isfinite(x):
            out.append(x)
    return out


def expect64(x):
    r = repr(x)
    return r[:-2] if r.endswith(".0") else r


def expect32(x):
    s = str(np.float32(x))
    r = s if s in ("nan", "inf", "-inf") else repr(float(s))
    return r[:-2] if r.endswith(".0") else r


def same(a, b):
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rng = random.Random(42)
    d, f = doubles(rng), floats(rng)
    path = os.path.join(args.workdir, "numbers.csv")
    with open(path, "w") as fh:
        for x, y in zip(d, f):
            fh.write("%r,%r\n" % (x, y))
    fails = 0
    for fmt in ("csv", "jsonl", "table"):
        cmd = [args.tfq_cat, "-d", "float64,float32", "--no-header", "--no-shuffle", "-b", str(N),
               "-n", "0", "-q", "-o", fmt, path]
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        if res.returncode != 0:
            print("FAIL %s: exit %d: %s" % (fmt, res.returncode, res.stderr.decode()))
            fails += 1
            continue
        lines = res.stdout.decode().splitlines()
        if fmt == "csv":
            rows = [ln.split(",") for ln in lines[1:]]
        elif fmt == "jsonl":
            objs = [json.loads(ln, parse_float=str, parse_int=str) for ln in lines]
            rows = [[o["c0"], o["c1"]] for o in objs]
        else:
            rows = [ln.split() for ln in lines[2:]]
        if len(rows) != N:
            print("FAIL %s: %d rows, expected %d" % (fmt, len(rows), N))
            fails += 1
            continue
        bad = 0
        for i, (x, y) in enumerate(zip(d, f)):
            a, b = rows[i]
            ok = (a == expect64(x) and same(float(a), x) and b == expect32(y)
                  and same(float(np.float32(b)), y))
            if not ok:
                bad += 1
                if bad <= 10:
                    print("FAIL %s row %d: printed %s,%s; expected %s,%s" %
                          (fmt, i, a, b, expect64(x), expect32(y)))
        print("%s: %d of %d float64 and float32 values as Python prints them"
              % (fmt, N - bad, N))
        fails += bad
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
