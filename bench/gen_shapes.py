"""The shapes of issue #18's re-measurement: four CSV files of other users' shapes, each run
through bench/bench_mixed.py (--csv) by `scripts/bench shapes`, so that the #18 figures are not
only those of the friendliest set (DM).  Generated from fixed seeds (Python's random.Random,
whose sequence for a given seed CPython keeps from release to release), reused while DIR/MANIFEST
matches.

    gen_shapes.py DIR        writes DIR/<name>.csv and DIR/<name>.csv.types, prints one line each

  A_issue    60 MB: the schema issue #18 was filed on -- six float32 of 3-9 significant digits,
             an int64 of 10 digits, an int32, a short categorical word (77 B/row)
  B_strings  60 MB: string-heavy -- 3 float32, a free text of 5-60 characters, a category, two
             more texts, an int64, a float32 (117 B/row)
  C_wide     60 MB: long rows -- 60 float32 of 6-9 significant digits, a category, a text id
             (613 B/row)
  D_narrow   40 MB: short rows -- an int64 and a float32 (14 B/row)

Types are one letter a column as bench_lines takes them (f float32, i int32, l int64, s string)."""
import os
import random
import sys

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "theta", "kappa", "lambda", "mu", "nu",
         "xi", "omicron", "pi", "rho", "sigma"]
LETTERS = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789_-"


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    R = random.Random(12345)

    def fsig(lo, hi):
        return "%.*g" % (R.randint(lo, hi), R.uniform(-1000, 1000))

    def text(lo, hi):
        return "".join(R.choice(LETTERS) for _ in range(R.randint(lo, hi))).strip() or "x"

    shapes = [
        ("A_issue", "fffffflis", 60e6,
         lambda: [fsig(3, 9) for _ in range(6)] +
         [str(R.randint(10**9, 10**10 - 1)), str(R.randint(-2**31, 2**31 - 1)), R.choice(WORDS)]),
        ("B_strings", "fffsssslf", 60e6,
         lambda: [fsig(6, 9) for _ in range(3)] +
         [text(5, 60), R.choice(WORDS), text(10, 30), text(1, 8), str(R.randint(0, 10**12)),
          fsig(6, 9)]),
        ("C_wide", "f" * 60 + "ss", 60e6,
         lambda: [fsig(6, 9) for _ in range(60)] + [R.choice(WORDS), text(8, 20)]),
        ("D_narrow", "lf", 40e6, lambda: [str(R.randint(0, 10**6)), fsig(3, 7)]),
    ]
    manifest = os.path.join(out, "MANIFEST")
    stamp = "gen_shapes 1 seed 12345 " + " ".join("%s:%s:%d" % (n, t, b) for n, t, b, _ in shapes)
    paths = [os.path.join(out, name + ".csv") for name, _, _, _ in shapes]
    if os.path.exists(manifest) and open(manifest).read() == stamp and \
            all(os.path.exists(p) for p in paths):
        for p in paths:
            print("%s: %d bytes (reused)" % (p, os.path.getsize(p)))
        return
    # one generator through every file in turn: a file is only right if the ones before it were
    # made in the same run, so all are made again together
    for (name, types, target, row), path in zip(shapes, paths):
        n = 0
        with open(path, "w") as f:
            while f.tell() < target:
                f.write(",".join(row()) + "\n")
                n += 1
        with open(path + ".types", "w") as f:
            f.write(types)
        print("%s: %d rows, %d bytes, types %s" % (path, n, os.path.getsize(path), types))
    with open(manifest, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
