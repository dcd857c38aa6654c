#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_decode_csv.c (layout in tests/fuzz/csv_diff.h)."""
import os
import random

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fuzz", "corpus", "decode_csv")
RECS = [b"1,2", b'"a",b', b'"a""x","b,c"', b"1,\n2", b'"a"\n,b', b'"a\nb",c', b"a\n,b",
        b'"ab"c,d', b'"abc', b"x,", b'"x",', b',\n"q"', b'"",""', b'"a",b\n', b"", b"\n",
        b"\r\n1,2", b" 1 , 2 ", b"0x1A,inf", b"nan,-0", b"1e400,1e-400", b"+5,-5",
        b"NA,NA", b'"NA",x', b"1,2,3,4,5", b'1,"2",3,"4"', b'""""', b'"""', b"a\"b,c"]


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(20261129)
    n = 0
    for flags in range(32):
        for ncol in (0, 1, 3):
            if rng.random() < 0.5:
                continue
            head = bytes([flags, ncol, rng.randrange(256), rng.randrange(256), rng.randrange(256),
                          rng.randrange(256), rng.choice(b',;"\n\r\x00 '), rng.randrange(256)])
            recs = rng.sample(RECS, 4)
            with open(os.path.join(OUT, "seed_%03d" % n), "wb") as f:
                f.write(head + b"\xff".join(recs))
            n += 1
    for i, r in enumerate(RECS):
        with open(os.path.join(OUT, "rec_%02d" % i), "wb") as f:
            f.write(bytes([1, 1, 0, 0, 0, 0, 44, 3]) + r)
    print("wrote", n + len(RECS), "files to", OUT)


if __name__ == "__main__":
    main()
