#!/usr/bin/env python3
"""tfq-cat --count, --index, --write-index and an indexed --shard (issue #42, items 5, 6, 9),
each against an oracle that is not tfq-cat:

  plain part (suite cli, no TensorFlow):
    count_csv     --count of CSV/text files (CRLF, blank lines, no final newline, gzip, zlib,
                  --skip-header-lines, standard input) = the rows Python's csv module reads
                  (blank lines are records for TextLineReader: csv.reader gives them as [])
    count_tfr     --count of TFRecord files (plain, gzip, zlib, a TFRecord named data.rec,
                  standard input) = the records a framing walk written here finds (struct and
                  a CRC32C table computed here, zlib/gzip from Python)
    corrupt       a payload CRC flipped: exit 1, "corrupted record at <o+12>" with the walk's o,
                  and the good records before it counted
    empty         "0 records" for an empty file in every mode and on empty standard input
    index         --index of a plain file = DALI's tfrecord2idx algorithm (offset, framed size)
                  run here; of a gzip file = the walk over Python's decompression
    shard         --use-index --shard i/n, n in {1, 2, 3, 7}, plain and gzip: the records read
                  (by their payloads) over i = every record of the walk exactly once, shard i
                  the i-th contiguous range
  tf part (suite tf; --tf): the counts against tf.data.TFRecordDataset's for plain and gzip
    files written by tf.io.TFRecordWriter, and the union of the indexed shards against the
    records TF reads.

  test_cat_records.py --tfq-cat PATH --workdir DIR [--tf]

Prints TAP; exit 0 pass, 1 fail, 77 skip (--tf without TensorFlow; a failure when CI=true)."""
import argparse
import csv
import gzip
import io
import os
import random
import re
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")

# ---- CRC32C and the TFRecord framing, written here (the oracle) ------------------------------

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload):
    h = struct.pack("<Q", len(payload))
    return h + struct.pack("<I", masked(h)) + payload + struct.pack("<I", masked(payload))


def walk(data):
    """[(offset, framed size, payload)] of a decompressed TFRecord stream, CRCs checked."""
    out, o = [], 0
    while o < len(data):
        (n,) = struct.unpack_from("<Q", data, o)
        assert struct.unpack_from("<I", data, o + 8)[0] == masked(data[o:o + 8])
        p = data[o + 12:o + 12 + n]
        assert struct.unpack_from("<I", data, o + 12 + n)[0] == masked(p)
        out.append((o, n + 16, p))
        o += n + 16
    return out


def dali_index(path):
    """DALI's tools/tfrecord2idx, the same steps: offset, then f.tell() - offset."""
    lines = []
    with open(path, "rb") as f:
        while True:
            cur = f.tell()
            b = f.read(8)
            if len(b) == 0:
                break
            f.read(4)
            (n,) = struct.unpack("q", b)
            f.read(n)
            f.read(4)
            lines.append("%d %d" % (cur, f.tell() - cur))
    return "".join(line + "\n" for line in lines)


# ---- harness ----------------------------------------------------------------------------------

RESULTS = []


def check(cond, name, detail=""):
    RESULTS.append((bool(cond), name, detail))
    print(("ok" if cond else "not ok") + " %d - %s%s" % (len(RESULTS), name,
                                                        "" if cond else ": " + detail),
          flush=True)


def run(args, stdin=None):
    p = subprocess.run([TFQ_CAT] + args, input=stdin, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def counts(out):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(.*): (\d+) records$", out, re.M)}


def payloads(n, seed):
    r = random.Random(seed)
    return [("rec-%05d-" % i + "".join(r.choice("abcdefghij") for _ in range(r.randint(0, 200))))
            .encode() for i in range(n)]


def write_tfr(path, recs, comp):
    data = b"".join(frame(p) for p in recs)
    if comp == "gzip":
        data = gzip.compress(data)
    elif comp == "zlib":
        data = zlib.compress(data)
    with open(path, "wb") as f:
        f.write(data)


def read_stream(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if path.endswith(".zz"):
        return zlib.decompress(data)
    return data


# ---- plain part -------------------------------------------------------------------------------

def csv_rows(text, skip):
    return max(0, len(list(csv.reader(io.StringIO(text, newline="")))) - skip)


def part_plain(wd):
    files = {
        "crlf.csv": "a,b\r\n1,2\r\n\r\n3,4\r\n",
        "nofinal.csv": "x;y\n1;2\n3;4",
        "blank.csv": "\n\n\n",
        "one.txt": "only line",
        "big.csv": "".join("%d,%s,%f\n" % (i, "v" * (i % 50), i / 7) for i in range(20000)),
    }
    for name, text in files.items():
        with open(os.path.join(wd, name), "w", newline="") as f:
            f.write(text)
    with open(os.path.join(wd, "big.csv.gz"), "wb") as f:
        f.write(gzip.compress(files["big.csv"].encode()))
    with open(os.path.join(wd, "big.csv.zz"), "wb") as f:
        f.write(zlib.compress(files["big.csv"].encode()))
    files["big.csv.gz"] = files["big.csv.zz"] = files["big.csv"]
    os.chdir(wd)
    names = list(files)
    for skip in (0, 1, 5):
        rc, out, err = run(["--count", "-f", "csv", "--skip-header-lines", str(skip)] + names)
        got = counts(out)
        want = {n: csv_rows(files[n], skip) for n in names}
        want["total"] = sum(want.values())
        check(rc == 0 and got == want, "count_csv skip=%d" % skip,
              "rc %d got %r want %r %s" % (rc, got, want, err))
    rc, out, err = run(["--count", "--header", "crlf.csv"])
    check(rc == 0 and counts(out) == {"crlf.csv": csv_rows(files["crlf.csv"], 1)},
          "count_csv --header skips line 1", out + err)
    rc, out, err = run(["--count"], stdin=files["crlf.csv"].encode())
    check(rc == 0 and counts(out) == {"-": csv_rows(files["crlf.csv"], 0)}, "count_csv stdin",
          out + err)

    recs = payloads(700, 1)
    for name, comp in (("p.tfrecord", None), ("g.tfrecord.gz", "gzip"), ("z.tfrecord.zz", "zlib"),
                       ("data.rec", None)):
        write_tfr(name, recs, comp)
        want = len(walk(read_stream(name)))
        rc, out, err = run(["--count", name])
        check(rc == 0 and counts(out) == {name: want}, "count_tfr %s (sniffed)" % name,
              out + err)
        with open(name, "rb") as f:
            rc, out, err = run(["--count"], stdin=f.read())
        check(rc == 0 and counts(out) == {"-": want}, "count_tfr %s on stdin" % name, out + err)

    # corrupt: flip a payload byte of record 300
    with open("p.tfrecord", "rb") as f:
        data = bytearray(f.read())
    o, size, _ = walk(bytes(data))[300]
    data[o + 20] ^= 0xFF
    with open("bad.tfrecord", "wb") as f:
        f.write(data)
    rc, out, err = run(["--count", "bad.tfrecord"])
    check(rc == 1 and counts(out) == {"bad.tfrecord": 300} and
          ("corrupted record at %d" % (o + 12)) in err, "corrupt: exit 1, offset, 300 good",
          "rc %d %s %s" % (rc, out, err))

    # empty input, every mode
    open("empty.tfrecord", "wb").close()
    open("empty.csv", "wb").close()
    for args in (["-f", "csv", "empty.csv"], ["-f", "text", "empty.csv"],
                 ["-f", "tfrecord", "empty.tfrecord"], ["empty.tfrecord"], ["-f", "example",
                                                                            "empty.tfrecord"]):
        rc, out, err = run(["--count"] + args)
        check(rc == 0 and out.endswith(": 0 records\n"), "empty --count %s" % " ".join(args),
              out + err)
    for args in ([], ["-f", "tfrecord"], ["-f", "csv"]):
        rc, out, err = run(["--count"] + args, stdin=b"")
        check(rc == 0 and out == "-: 0 records\n", "empty stdin --count %s" % " ".join(args),
              out + err)

    # --index: DALI's format on plain files; the decompressed walk on compressed ones
    for name in ("p.tfrecord", "data.rec", "empty.tfrecord"):
        rc, out, err = run(["--index", name])
        check(rc == 0 and out == dali_index(name), "index %s = tfrecord2idx" % name, err)
    for name in ("g.tfrecord.gz", "z.tfrecord.zz"):
        rc, out, err = run(["--index", name])
        want = "".join("%d %d\n" % (o, s) for o, s, _ in walk(read_stream(name)))
        check(rc == 0 and out == want, "index %s = walk of the decompressed stream" % name, err)
        rc, out, err = run(["--write-index", name])
        with open(name + ".idx") as f:
            check(rc == 0 and f.read() == want, "write-index %s" % name, out + err)
    rc, out, err = run(["--write-index", "p.tfrecord"])
    rc, out, err = run(["--index", "bad.tfrecord"])
    check(rc == 1 and "corrupted record" in err, "index of a corrupt file fails", out + err)

    # indexed shards: every record once, contiguous ranges
    for name in ("p.tfrecord", "g.tfrecord.gz"):
        shard_union(name, [p for _, _, p in walk(read_stream(name))], "walk")
    # a stale index is refused
    with open("stale.tfrecord", "wb") as f:
        f.write(b"".join(frame(p) for p in recs[:10]))
    with open("stale.tfrecord.idx", "w") as f:
        f.write(dali_index("p.tfrecord"))
    rc, out, err = run(["--use-index", "--shard", "0/2", "-f", "tfrecord", "stale.tfrecord"])
    check(rc == 1 and "stale" in err, "stale index refused", out + err)


REC = re.compile(r"rec-(\d{5})-")


def shard_union(name, want, oracle):
    N = len(want)
    ids_want = [int(REC.match(p.decode()).group(1)) for p in want]
    for n in (1, 2, 3, 7):
        seen = []
        ok = True
        for i in range(n):
            rc, out, err = run(["--use-index", "--shard", "%d/%d" % (i, n), "-f", "tfrecord",
                                "--no-shuffle", "-n", "0", "-b", "16", "-o", "csv", "-q", name])
            ids = [int(x) for x in REC.findall(out)]
            lo, hi = i * N // n, (i + 1) * N // n
            if rc != 0 or ids != ids_want[lo:hi]:
                ok = False
                detail = "shard %d/%d rc %d: %d records, want [%d, %d) %s" % (
                    i, n, rc, len(ids), lo, hi, err[:300])
            seen += ids
        if ok and sorted(seen) != sorted(ids_want):
            ok, detail = False, "union differs"
        check(ok, "shard %s n=%d: every record once (%s)" % (name, n, oracle),
              "" if ok else detail)


# ---- tf part ----------------------------------------------------------------------------------

def part_tf(wd):
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf
    except Exception as e:  # noqa: BLE001
        if os.path.exists(VENV_PY) and not os.environ.get("TFQ_REC_TF_REEXEC"):
            os.environ["TFQ_REC_TF_REEXEC"] = "1"
            os.execv(VENV_PY, [VENV_PY] + sys.argv)
        print("# SKIPPED: cannot import tensorflow (%s)" % e, flush=True)
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    os.chdir(wd)
    recs = payloads(1500, 2)
    for name, opt in (("tf.tfrecord", None), ("tf.tfrecord.gz", "GZIP"), ("tf.zz", "ZLIB")):
        with tf.io.TFRecordWriter(name, options=opt) as w:
            for p in recs:
                w.write(p)
        ds = tf.data.TFRecordDataset(name, compression_type=opt or "")
        tf_recs = [r.numpy() for r in ds]
        rc, out, err = run(["--count", name])
        check(rc == 0 and counts(out) == {name: len(tf_recs)},
              "count %s = TFRecordDataset's %d" % (name, len(tf_recs)), out + err)
        rc, out, err = run(["--write-index", name])
        check(rc == 0, "write-index " + name, err)
        shard_union(name, tf_recs, "TFRecordDataset")


def main():
    global TFQ_CAT
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--tf", action="store_true")
    a = ap.parse_args()
    TFQ_CAT = os.path.abspath(a.tfq_cat)
    wd = os.path.join(os.path.abspath(a.workdir), "records-tf" if a.tf else "records")
    os.makedirs(wd, exist_ok=True)
    (part_tf if a.tf else part_plain)(wd)
    print("1..%d" % len(RESULTS))
    bad = sum(1 for r in RESULTS if not r[0])
    sys.exit(1 if bad or not RESULTS else 0)


if __name__ == "__main__":
    main()
