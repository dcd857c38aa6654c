#!/usr/bin/env python3
"""CLI tests for tfq-cat, in the manner of zstd's cli-tests: each case runs one command and
compares its exit code, standard output and standard error with expectations (exact golden
files in golden/<case>.out / .err, regular expressions, or a Python check).

  run_cli_tests.py --list
  run_cli_tests.py --tfq-cat PATH --mkrecords PATH --workdir DIR [--case NAME]... [--update]

Input files are made on demand in WORKDIR/<case>/ (TFRecords with the library's writer through
tfq-mkrecords, gzip/zlib with Python's modules), so cases can run in parallel.  --update rewrites
the golden files of the cases selected (review the diff!).  TensorFlow is never needed: the
expected decode_csv values in golden/tf_conformance.jsonl were computed once with
make_tf_expected.py."""
import argparse
import gzip
import os
import random
import re
import signal
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IRIS = os.path.join(ROOT, "examples", "data", "iris.csv")
GOLDEN = os.path.join(HERE, "golden")
DATA = os.path.join(HERE, "data")
IRIS_SPEC = "float32,float32,float32,float32,string"

# ---- input files, made on demand ------------------------------------------------------------

def _iris_bytes():
    with open(IRIS, "rb") as f:
        return f.read()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _records(ctx, name, lines, comp="none"):
    path = os.path.join(ctx.dir, name)
    subprocess.run([ctx.mkrecords, "-z", comp, path], input=b"\n".join(lines) + b"\n",
                   check=True)
    return path


def _corrupt(ctx, name, src_maker, offset, new=None, truncate=None):
    src = src_maker(ctx)
    with open(src, "rb") as f:
        data = bytearray(f.read())
    if truncate is not None:
        data = data[:truncate]
    else:
        data[offset] ^= 0xFF if new is None else new
    path = os.path.join(ctx.dir, name)
    _write(path, bytes(data))
    return path


def _mk(name, data):
    def make(ctx):
        path = os.path.join(ctx.dir, name)
        _write(path, data(ctx) if callable(data) else data)
        return path
    return make


IRIS_LINES = lambda: _iris_bytes().split(b"\n")[1:-1]  # noqa: E731

MAKERS = {
    "iris": _mk("iris.csv", lambda ctx: _iris_bytes()),
    "conf": _mk("conformance.csv", lambda ctx: open(os.path.join(DATA, "conformance.csv"),
                                                     "rb").read()),
    "iris_gz": _mk("iris.csv.gz", lambda ctx: gzip.compress(_iris_bytes(), mtime=0)),
    "iris_zz": _mk("iris.csv.zz", lambda ctx: zlib.compress(_iris_bytes())),
    "iris_gz_noext": _mk("iris_data", lambda ctx: gzip.compress(_iris_bytes(), mtime=0)),
    "iris_tsv": _mk("iris.tsv", lambda ctx: _iris_bytes().replace(b",", b"\t")),
    "iris_semi": _mk("iris.txt", lambda ctx: _iris_bytes().replace(b",", b";")),
    "iris_trunc_gz": _mk("trunc.csv.gz",
                         lambda ctx: gzip.compress(_iris_bytes(), mtime=0)[:700]),
    "garbage_gz": _mk("garbage.csv.gz", b"\x1f\x8bthis is not deflate data\n"),
    "quoted": _mk("quoted.csv", b'id,text\n1,"a,b"\n2,"say ""hi"""\n3,plain\n4,\n'),
    "noquote": _mk("noquote.csv", b'1,"x\n2,y"\n'),
    "na": _mk("na.csv", b"1,NA,a\nNA,2.5,NA\n3,,c\n"),
    # lines 3 and 6 are bad (a non-number, a missing field)
    "two_bad": _mk("two_bad.csv", b"1,10\n2,20\nx,30\n4,40\n5,50\n6\n7,70\n"),
    "mixed": _mk("mixed.csv", b"1,1.5,x,,7\n2,2,y,,\n-3,1e3,z,,8\n"),
    "header_only": _mk("empty.csv", b"a,b\n"),
    "empty": _mk("empty.txt", b""),
    "utf8": _mk("bytes.txt", "caf\u00e9\n".encode() + b"bad\xff\xfe\n" + b"tab\there\n"),
    "nonfinite": _mk("nonfinite.csv", b"nan,inf\n-inf,-0.0\n1e-45,1e300\n"),
    "bad_quote": _mk("bad_quote.csv", b"1,2\n3,a\"b\n"),
    "bad_quote2": _mk("bad_quote2.csv", b'1,"ab"c\n'),
    "bad_count": _mk("bad_count.csv", b"1,2,3\n4,5,6\n7,8\n"),
    "bad_number": _mk("bad_number.csv", b"1.5,2\n2.5,x\n"),
    "bad_int": _mk("bad_int.csv", b"1,2\n3,99999999999\n"),
    "missing_req": _mk("missing_req.csv", b"1,2\n3,\n"),
    "fixed": _mk("data.bin", b"HH" + b"".join(b"r%03d" % i for i in range(6)) + b"F"),
    "fixed_trunc": _mk("trunc.bin", b"aaaabbbbcc"),
    "tfr": lambda ctx: _records(ctx, "lines.tfrecord", IRIS_LINES()[:20]),
    "tfr_gz": lambda ctx: _records(ctx, "lines.gz.tfrecords", IRIS_LINES()[:20], "gzip"),
    "tfr_zz": lambda ctx: _records(ctx, "lines.tfrecord.zz", IRIS_LINES()[:20], "zlib"),
    "tfr_bytes": lambda ctx: _records(ctx, "bytes.tfrecord", [b"\x00\x01\xffok", b"\xe2\x82\xac"]),
    "tfr_corrupt": lambda ctx: _corrupt(ctx, "corrupt.tfrecord", MAKERS["tfr"], 20),
    "tfr_trunc": lambda ctx: _corrupt(ctx, "trunc.tfrecord", MAKERS["tfr"], 0, truncate=6),
    "big": lambda ctx: _big(ctx, 64 << 20),
    "lines20k": _mk("lines20k.csv", lambda ctx: b"".join(b"%d,%d\n" % (i, i * 7) for i in range(20000))),
    "lines20k_gz": _mk("lines20k.csv.gz", lambda ctx: gzip.compress(
        b"".join(b"%d,%d\n" % (i, i * 7) for i in range(20000)), mtime=0)),
    # line 15,001 of 20,000 is not a number
    "bad20k": _mk("bad20k.csv", lambda ctx: b"".join(
        (b"x,%d\n" % i) if i == 15000 else b"%d,%d\n" % (i, i * 7) for i in range(20000))),
    "longlines": _mk("a_rather_long_file_name_to_show_key_truncation.txt",
                     b"x" * 120 + b"\n" + "\u00e9".encode() * 100 + b"\nshort\n"),
    "exs": _mk("examples.tfrecord", lambda ctx: _tfrecords(EXS())),
    "exs_noext": _mk("examples.bin", lambda ctx: _tfrecords(EXS())),
    "exs_gz": _mk("examples.tfrecord.gz", lambda ctx: gzip.compress(_tfrecords(EXS()), mtime=0)),
    # record 4 holds id as a float list
    "exs_bad4": _mk("bad4.tfrecord", lambda ctx: _tfrecords(
        EXS()[:4] + [_example({"id": ("f", [1.0])})] + EXS()[4:])),
    # records 0-1 are Examples, record 2 is not: the file is printed as bytes
    "exs_partial": _mk("partial.tfrecord", lambda ctx: _tfrecords(EXS()[:2] + [b"\n\x05\x01"])),
    "exs_malformed": _mk("malformed.tfrecord",
                         lambda ctx: _tfrecords(EXS()[:1] + [b"\n\x05\x01"])),
    # an empty Feature, a key given twice (the last entry wins), unpacked lists
    "exs_odd": _mk("odd.tfrecord", lambda ctx: _tfrecords([
        _example({"a": None, "b": ("i", [1])}),
        _ld(1, _ld(1, _ld(1, b"b") + _ld(2, _feature(("i", [2])))) +
            _ld(1, _ld(1, b"b") + _ld(2, _feature(("i", [3]))))) +
        _ld(1, _ld(1, _ld(1, b"a") + _ld(2, b""))),
        _ld(1, _ld(1, _ld(1, b"b") + _ld(2, _ld(3, b"\x08\x04"))) +
            _ld(1, _ld(1, b"a") + _ld(2, _ld(2, b"\x0d" + struct.pack("<f", 2.5))))),
    ])),
    # runs of one dtype (stacked into one queue component each), with keys and every format
    "runs": _mk("runs.csv", lambda ctx: b"".join(
        b"%d,%d,%d.5,-%d.25,%de3,s%d,\"t,%d\",%d,%d.125\n" % ((i, i * 3) + (i,) * 7)
        for i in range(7))),
    "repeat_small": _mk("repeat.csv", b",,7,1.5,,2\nx,\"q,\"\"\",8,,2.5,\n"),
    "wide_mixed": _mk("wide_mixed.csv", lambda ctx: _wide_mixed()),
    "dir": lambda ctx: (os.makedirs(os.path.join(ctx.dir, "adir"), exist_ok=True),
                        os.path.join(ctx.dir, "adir"))[1],
    "missing": lambda ctx: os.path.join(ctx.dir, "no-such-file.csv"),
}


# tf.train.Example records, encoded by hand (packed lists, as Python's protobuf writes them) and
# written as TFRecords with their masked CRC32C; tests/cli/test_cat_examples_tf.py checks the
# same paths against TensorFlow itself.
def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _ld(field, data):
    return bytes([field << 3 | 2]) + _varint(len(data)) + data


def _feature(v):
    """("i", [ints]) / ("f", [floats]) / ("b", [bytes]) / None (an empty Feature)."""
    if v is None:
        return b""
    kind, vals = v
    if kind == "i":
        body = _ld(1, b"".join(_varint(x) for x in vals)) if vals else b""
        return _ld(3, body)
    if kind == "f":
        return _ld(2, _ld(1, struct.pack("<%df" % len(vals), *vals)) if vals else b"")
    return _ld(1, b"".join(_ld(1, x) for x in vals))


def _example(feats):
    return _ld(1, b"".join(_ld(1, _ld(1, k.encode()) + _ld(2, _feature(v)))
                           for k, v in feats.items()))


def _crc32c(data, _t=[]):
    if not _t:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            _t.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = _t[(c ^ b) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _tfrecords(recs):
    out = bytearray()
    for r in recs:
        n = struct.pack("<Q", len(r))
        out += n + struct.pack("<I", _crc32c(n)) + r + struct.pack("<I", _crc32c(r))
    return bytes(out)


def _ex(i):
    """Record i of the Example data set: id, x[2], name, a VarLen tags (0-2 values), and w (a
    float list of i % 2 + 1 values)."""
    return _example({"id": ("i", [i * 10 - 20]), "x": ("f", [i * 0.5, -i]),
                     "name": ("b", [b"n%d" % i]),
                     "tags": ("b", [b"t%d" % j for j in range(i % 3)]),
                     "w": ("f", [0.25] * (i % 2 + 1))})


EXS = lambda: [_ex(i) for i in range(7)]  # noqa: E731


def _wide_mixed():
    """20 rows of 3 int, 2 string, 3000 float, 1 string, 2 int, 1 float and 1500 string
    columns (inferred: 3*int64:0,string:,string:,3000*float64:0.0,string:,...)."""
    kinds = "i" * 3 + "s" * 2 + "f" * 3000 + "s" + "i" * 2 + "f" + "s" * 1500
    cell = {"i": lambda r, c: b"%d" % (r * 7 - c),
            "f": lambda r, c: b"%d.%02d" % (c - r, (r * 13 + c) % 100),
            "s": lambda r, c: b"w%d" % (r + c) if (r + c) % 5 else b""}
    return b"".join(b",".join(cell[k](r, c) for c, k in enumerate(kinds)) + b"\n"
                    for r in range(20))


def _big(ctx, size):
    path = os.path.join(ctx.dir, "big.csv")
    row = b"%d,0.%06d,%d,label%d\n"
    block = b"".join(row % (i, i, i * 3, i % 7) for i in range(20000))
    with open(path, "wb") as f:
        n = 0
        while n < size:
            f.write(block)
            n += len(block)
    return path


class Ctx:
    def __init__(self, args, name):
        self.tfq_cat = args.tfq_cat
        self.mkrecords = args.mkrecords
        self.dir = os.path.join(args.workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.made = {}

    def path(self, key):
        """The file for `key`, relative to the case directory (the command's working directory)
        when it is inside it, so that outputs do not depend on where the tree is checked out."""
        if key not in self.made:
            p = MAKERS[key](self)
            self.made[key] = os.path.relpath(p, self.dir) if p.startswith(self.dir + "/") else p
        return self.made[key]

    def expand(self, s):
        return re.sub(r"\{(\w+)\}", lambda m: self.path(m.group(1)), s)

    def run(self, args, stdin=None, timeout=60):
        argv = [self.tfq_cat] + [self.expand(a) for a in args]
        if isinstance(stdin, str) and stdin.startswith("@"):
            with open(os.path.join(self.dir, self.path(stdin[1:])), "rb") as f:
                stdin = f.read()
        p = subprocess.run(argv, input=stdin if stdin is not None else b"",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=self.dir)
        return p.returncode, p.stdout, p.stderr

    def rel(self, b):
        """Replaces the case directory and the source tree in output by stable names."""
        return b.replace(self.dir.encode() + b"/", b"").replace(ROOT.encode() + b"/", b"")


# ---- cases ------------------------------------------------------------------------------------

CASES = {}


def case(name, args, code=0, out=None, err=None, stdin=None, check=None):
    """out/err: "golden" (golden/NAME.out/.err, exact), a regex (bytes, must match somewhere),
    "" (must be empty) or None (not checked).  check(ctx, rc, out, err) -> error text or None."""
    assert name not in CASES, name
    CASES[name] = dict(args=args, code=code, out=out, err=err, stdin=stdin, check=check)


G = "golden"
Q = ["-q"]
NS = ["--no-shuffle"]
HDR = ["--skip-header-lines=1"]

# tf.train.Example (see the makers "exs*"): inference, --features, output formats, errors
EXF = ("w:float[?], tags:bytes[*], id:long, d:int64[2]=7, name:str, s:string=\"a,b\", "
       "x:float32[2,1], f:float32=-0.5")
case("ex_infer_jsonl", NS + ["-b", "4", "-n", "0", "-o", "jsonl", "{exs}"], out=G, err=G)
case("ex_table", Q + NS + ["-b", "3", "-n", "1", "{exs}"], out=G, err="")
case("ex_csv_keys", Q + NS + ["-b", "2", "-n", "1", "-o", "csv", "--keys", "{exs}"], out=G)
case("ex_features_forms", Q + NS + ["-b", "7", "-o", "jsonl", "--features", EXF, "{exs}"],
     out=G, err="")
case("ex_features_seq_rows", Q + NS + ["-o", "jsonl", "--features", "x:float32[?,2], w:float[?]",
                                       "-b", "3", "-n", "1", "{exs}"], out=G)
case("ex_features_quoted", Q + NS + ["-o", "jsonl", "--features", ' "name" : string , id:int64 ',
                                     "-b", "2", "-n", "1", "{exs}"],
     out=rb'^\{"name":"n0","id":-20\}\n\{"name":"n1","id":-10\}\n$')
case("ex_force_noext", NS + ["-f", "example", "-b", "4", "-n", "0", "-o", "jsonl",
                             "{exs_noext}"], out="golden:ex_infer_jsonl.out",
     err="golden:ex_infer_jsonl.err")
case("ex_tfrecord_explicit", NS + ["-f", "tfrecord", "-b", "4", "-n", "0", "-o", "jsonl",
                                   "{exs}"], out="golden:ex_infer_jsonl.out",
     err="golden:ex_infer_jsonl.err")
case("ex_features_imply_example", Q + NS + ["--features", "id:int64", "-o", "csv", "-n", "1",
                                            "{exs_noext}"],
     out=b"^id\n-20\n-10\n0\n10\n20\n30\n40\n$")
case("ex_gzip", NS + ["-b", "4", "-n", "0", "-o", "jsonl", "{exs_gz}"],
     out="golden:ex_infer_jsonl.out", err=rb"inferred --features 'id:int64, name:string, ")
case("ex_stdin", NS + ["-f", "tfrecord", "-b", "4", "-n", "0", "-o", "jsonl", "-"],
     stdin="@exs", out="golden:ex_infer_jsonl.out", err="golden:ex_infer_jsonl.err")
case("ex_raw", Q + NS + ["--raw", "-b", "2", "-n", "1", "-o", "jsonl", "{exs}"], out=G)
case("ex_detect_partial", NS + ["-b", "3", "-n", "1", "-o", "jsonl", "{exs_partial}"],
     out=rb'^\{"record":"\\n', err=G)
case("ex_odd_wire", NS + ["-o", "jsonl", "{exs_odd}"], out=G, err=G)
case("ex_odd_wire_features", Q + NS + ["-o", "jsonl", "--features", "b:int64=0, a:float=9",
                                       "{exs_odd}"], out=G)
case("ex_shuffle_seed", Q + ["--seed=3", "-b", "7", "-n", "1", "-o", "csv", "--features",
                             "id:int64", "{exs}"],
     check=lambda c, rc, o, e: None if sorted(o.split(b"\n")[1:-1], key=int) ==
     [b"%d" % (i * 10 - 20) for i in range(7)] and o.split(b"\n")[1:-1] !=
     [b"%d" % (i * 10 - 20) for i in range(7)] else "not a shuffle of the 7 ids: %r" % o)
case("ex_epochs_stats", Q + ["--num-epochs=3", "-n", "0", "-o", "none", "--stats", "{exs}"],
     err=rb"stats: records 21, ")

# help, version, usage
case("help", ["--help"], out=rb"^Usage: tfq-cat \[OPTION\]\.\.\. \[FILE\]\.\.\.", err="")
case("help_short", ["-h"], out=rb"--record-defaults=SPEC", err="")
case("version", ["--version"], out=rb"^tfq-cat \(tfq\) \d+\.\d+\.\d+\n$", err="")
case("version_short", ["-V"], out=rb"^tfq-cat \(tfq\) ", err="")

# output formats on the bundled iris data
case("iris_table_seed", HDR + ["--seed=7", "{iris}"], out=G, err=G)
case("iris_table_noshuffle", Q + NS + HDR + ["-b", "4", "-n", "2", "{iris}"], out=G, err="")
case("iris_jsonl_keys", Q + NS + HDR + ["-b", "3", "-n", "2", "-o", "jsonl", "--keys", "{iris}"],
     out=G, err="")
case("iris_csv_all", Q + NS + HDR + ["-b", "32", "-n", "0", "-o", "csv", "{iris}"], out=G,
     err="")
case("iris_csv_keys", Q + NS + HDR + ["--batch-size=2", "--batches=1", "--output=csv", "--keys",
                                      "{iris}"], out=G)
case("iris_table_keys", Q + NS + HDR + ["-b", "2", "-n", "1", "--keys", "{iris}"], out=G)
case("iris_none_stats", Q + HDR + ["-o", "none", "--stats", "-n", "0", "{iris}"], out="",
     err=rb"stats: records 150, batches 19, records read 150, bytes read \d+, time ")
case("drop_remainder", Q + NS + HDR + ["-b", "32", "-n", "0", "--drop-remainder", "-o", "jsonl",
                                       "{iris}"],
     check=lambda c, rc, o, e: None if o.count(b"\n") == 4 * 32  # jsonl: a line a record
     else "expected 4 full batches")
case("keep_remainder", Q + NS + HDR + ["-b", "32", "-n", "0", "-o", "jsonl", "{iris}"],
     check=lambda c, rc, o, e: None if o.count(b"\n") == 150  # jsonl: a line a record
     else "expected a final batch of 22")
case("inferred_spec", NS + HDR + ["-n", "1", "-b", "1", "{iris}"],
     err=rb"^tfq-cat: inferred -d '4\*float64:0\.0,string:'\n$")
case("infer_mixed", NS + ["-n", "1", "-b", "3", "-o", "jsonl", "{mixed}"], out=G, err=G)
# the inferred -d writes runs of 3 or more identical entries as N*TYPE[:DEFAULT]
case("infer_repeat_spec", NS + ["-n", "1", "-b", "1", "-o", "none", "{wide_mixed}"],
     err=rb"^tfq-cat: inferred -d '3\*int64:0,string:,string:,3000\*float64:0\.0,string:,"
         rb"int64:0,int64:0,float64:0\.0,1500\*string:'\n$")
case("spec_repeat_quoted", Q + NS + ["-o", "jsonl", "-d", '2*string:"x,""y""",int:7,3*float:1.5',
                                     "{repeat_small}"], out=G, err="")
# columns of one dtype travel as one [B, k] component: every format, keys, select-cols
RUNS_SPEC = "int,int,float,float,float,str,str,long,double"
case("stack_runs_table", Q + NS + ["-b", "4", "-n", "2", "--keys", "-d", RUNS_SPEC, "{runs}"],
     out=G, err="")
case("stack_runs_jsonl", Q + NS + ["-b", "3", "-n", "0", "-o", "jsonl", "--keys", "-d", RUNS_SPEC,
                                   "{runs}"], out=G, err="")
case("stack_runs_csv", Q + NS + ["-b", "5", "-n", "0", "-o", "csv", "-d", RUNS_SPEC, "{runs}"],
     out=G, err="")
case("stack_runs_select", Q + NS + ["-b", "7", "-o", "csv", "--keys", "--select-cols=1,2,3,5,6",
                                    "-d", "3*float,2*str", "{runs}"], out=G, err="")
case("quiet", Q + HDR + ["-n", "1", "{iris}"], err="")
case("seed_printed", HDR + ["-n", "1", "-d", IRIS_SPEC, "{iris}"],
     err=rb"^tfq-cat: seed \d+ \(--seed=\d+ repeats the order with -j 1\)\n$")

# decode_csv against the reference TensorFlow (values computed once with make_tf_expected.py)
case("tf_conformance", Q + NS + ["-b", "1000", "-n", "0", "-o", "jsonl", "--na-value=NA", "-d",
                                 "int32:0,float32:0,float64:0,string:dflt,int64:-1", "{conf}"],
     out="golden:tf_conformance.jsonl", err="")

# CSV options
case("spec_required_and_quoted", Q + NS + HDR + ["-o", "jsonl", "-d", 'int,string:"x,""y"""',
                                                 "{quoted}"], out=G)
case("select_cols", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "jsonl", "--select-cols=1,4",
                                    "-d", "double,str", "{iris}"], out=G)
case("select_cols_infer", NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "--select-cols=0,4",
                                      "{iris}"], out=G, err=G)
case("tsv_auto", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "{iris_tsv}"],
     out="golden:iris_head2.csv")
case("field_delim", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "--field-delim=;",
                                    "-f", "csv", "{iris_semi}"], out="golden:iris_head2.csv")
case("field_delim_tab", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "--field-delim=\\t",
                                        "{iris_tsv}"], out="golden:iris_head2.csv")
case("no_quote_delim", Q + NS + ["-o", "jsonl", "--no-quote-delim", "-d", "int,str",
                                 "{noquote}"], out=G)
case("na_value", Q + NS + ["-o", "jsonl", "--na-value=NA", "-d", "int:-1,float:-1,str:?",
                           "{na}"], out=G)
case("nonfinite_jsonl", Q + NS + ["-o", "jsonl", "-d", "float,double", "{nonfinite}"], out=G)
case("header_only_file", NS + HDR + ["-o", "csv", "{header_only}"], out=b"^a,b\n$|^$")

# formats
case("text_format", Q + NS + ["-f", "text", "-b", "2", "-n", "2", "--keys", "{iris}"], out=G)
case("text_skip_header", Q + NS + HDR + ["-f", "text", "-b", "2", "-n", "1", "-o", "jsonl",
                                         "{iris}"], out=G)
case("text_utf8_jsonl", Q + NS + ["-o", "jsonl", "{utf8}"], out=G)
case("text_utf8_table", Q + NS + ["{utf8}"], out=G)
case("table_truncation", Q + NS + ["--keys", "{longlines}"], out=G)
# empty input is said, not silent (issue #42 item 6): in the table on stdout; beside csv/jsonl
# on stderr (-q silences it), their stdout holding no record
case("empty_file", Q + NS + ["{empty}"], out=b"\\A0 records\n\\Z", err="")
case("empty_file_csv", NS + ["-o", "csv", "{empty}"], out="", err=b"tfq-cat: 0 records\n")
case("empty_file_jsonl_quiet", Q + NS + ["-o", "jsonl", "{empty}"], out="", err="")
case("empty_stdin", Q + NS, stdin="@empty", out=b"\\A0 records\n\\Z", err="")
case("tfrecord_auto", Q + NS + ["-b", "3", "-n", "1", "--keys", "-o", "jsonl", "{tfr}"], out=G)
case("tfrecord_gzip_magic", Q + NS + ["-b", "3", "-n", "1", "-o", "jsonl", "{tfr_gz}"],
     out="golden:tfrecord_values.jsonl")
case("tfrecord_zlib_ext", Q + NS + ["-b", "3", "-n", "1", "-o", "jsonl", "{tfr_zz}"],
     out="golden:tfrecord_values.jsonl")
case("tfrecord_explicit", Q + NS + ["-f", "tfrecord", "-z", "zlib", "-b", "3", "-n", "1", "-o",
                                    "jsonl", "{tfr_zz}"], out="golden:tfrecord_values.jsonl")
case("tfrecord_bytes", Q + NS + ["-o", "jsonl", "{tfr_bytes}"], out=G)
case("fixed", Q + NS + ["-f", "fixed", "--record-bytes=4", "--header-bytes=2",
                        "--footer-bytes=1", "-o", "jsonl", "--keys", "{fixed}"], out=G)
case("fixed_hop", Q + NS + ["-f", "fixed", "--record-bytes=4", "--header-bytes=2",
                            "--footer-bytes=1", "--hop-bytes=8", "-o", "jsonl", "{fixed}"],
     out=G)

# compression and standard input
case("gzip_auto", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "{iris_gz}"],
     out="golden:iris_head2.csv")
case("zlib_auto", Q + NS + HDR + ["-b", "2", "-n", "1", "-o", "csv", "{iris_zz}"],
     out="golden:iris_head2.csv")
case("gzip_magic_noext", Q + NS + HDR + ["-f", "csv", "-b", "2", "-n", "1", "-o", "csv",
                                         "{iris_gz_noext}"], out="golden:iris_head2.csv")
case("gzip_explicit", Q + NS + HDR + ["-f", "csv", "--compression=gzip", "-b", "2", "-n", "1",
                                      "-o", "csv", "{iris_gz_noext}"], out="golden:iris_head2.csv")
case("compression_none_on_gzip", Q + NS + ["-z", "none", "-f", "text", "-b", "1", "-n", "1",
                                           "-o", "jsonl", "{iris_gz}"], out=rb'\\u001f\\udc8b')
case("stdin_implicit", Q + NS + HDR + ["-f", "csv", "-b", "2", "-n", "1", "-o", "csv"],
     stdin="@iris", out="golden:iris_head2.csv")
case("stdin_dash_keys", Q + NS + HDR + ["-d", IRIS_SPEC, "-b", "2", "-n", "1", "-o", "jsonl",
                                        "--keys", "-"], stdin="@iris", out=G)
case("stdin_gzip", NS + HDR + ["-f", "csv", "-b", "2", "-n", "1", "-o", "csv", "-"],
     stdin="@iris_gz", out="golden:iris_head2.csv",
     err=rb"inferred -d '4\*float64:0\.0,string:'")
case("stdin_all", Q + NS + HDR + ["-f", "csv", "-b", "50", "-n", "0", "-o", "csv", "-"],
     stdin="@iris", out="golden:iris_csv_all.out")
case("stdin_and_file", Q + NS + HDR + ["-d", IRIS_SPEC, "-n", "0", "-o", "none", "--stats", "-",
                                       "{iris}"], stdin="@iris", err=rb"records 300, ")

# pipeline options
case("num_epochs", Q + HDR + ["--num-epochs=3", "-n", "0", "-b", "100", "-o", "none", "--stats",
                              "{iris}"], err=rb"records 450, batches 5, ")
case("small_queue", Q + HDR + ["--capacity=20", "--min-after-dequeue=10", "--seed=3", "-n", "3",
                               "-o", "jsonl", "{iris}"], out=G)
case("threads_multiset", Q + ["-j", "4", "-b", "64", "-n", "0", "-o", "csv", "-d", "int,int",
                              "{lines20k}", "{lines20k}"],
     check=lambda c, rc, o, e: _same_multiset(c, o, 2))
# Threads whose reader has no file left share the others' readers: every record of one file
# still comes out exactly once, and an error names its line as with one thread.
case("threads_share_one_file", Q + ["-j", "3", "-b", "64", "-n", "0", "-o", "csv", "-d",
                                    "int,int", "{lines20k}"],
     check=lambda c, rc, o, e: _same_multiset(c, o, 1))
case("threads_share_one_file_error_line", Q + ["-j", "2", "-n", "0", "-o", "none", "-d",
                                               "int,int", "{bad20k}"], code=1,
     err=rb"^tfq-cat: bad20k\.csv:15001: Field 0 in record 0 is not a valid int32: x\n$")
# Nothing lost on a bad record; --max-bad-records skips each one with a note (issue #38).
# Oracle: the input above, lines 3 and 6 bad.
case("bad_record_after_good_rows", Q + NS + ["-o", "csv", "-d", "int,int", "{two_bad}"], code=1,
     out=b"^c0,c1\n1,10\n2,20\n$",
     err=rb"^tfq-cat: two_bad\.csv:3: Field 0 in record 0 is not a valid int32: x\n$")
case("max_bad_records_skips_each_once",
     Q + NS + ["-o", "csv", "-d", "int,int", "--max-bad-records=2", "{two_bad}"],
     out=b"^c0,c1\n1,10\n2,20\n4,40\n5,50\n7,70\n$",
     err=rb"^tfq-cat: skipped bad record two_bad\.csv:3: [^\n]*x\n"
         rb"tfq-cat: skipped bad record two_bad\.csv:6: [^\n]*\n$")
case("max_bad_records_budget_exceeded",
     Q + NS + ["-o", "csv", "-d", "int,int", "--max-bad-records=1", "{two_bad}"], code=1,
     out=b"^c0,c1\n1,10\n2,20\n4,40\n5,50\n$",
     err=rb"^tfq-cat: skipped bad record two_bad\.csv:3: [^\n]*\ntfq-cat: two_bad\.csv:6: ")
case("max_bad_records_stdin_named_dash",
     Q + NS + ["-f", "csv", "-o", "csv", "-d", "int,int", "--max-bad-records=1", "-"],
     stdin="@two_bad", code=1, out=b"^c0,c1\n1,10\n2,20\n4,40\n5,50\n$",
     err=rb"^tfq-cat: skipped bad record -:3: [^\n]*\ntfq-cat: -:6: ")
case("max_bad_records_any_shuffled",
     Q + ["--seed=1", "-j", "2", "-n", "0", "-o", "none", "--stats", "-d", "int,int",
          "--max-bad-records=-1", "{two_bad}"],
     err=rb"tfq-cat: stats: records 5, .*bad records 2\n$")
case("threads_seed", Q + HDR + ["--threads=3", "--seed=5", "-n", "0", "-o", "none", "--stats",
                                "{iris}"], err=rb"records 150, ")
# The default capacity: TF's rule, min_after_dequeue + (threads + 2) * batch size (3 batches
# without shuffling), widened to room for a whole read step (1,024 records) per reader above
# min_after_dequeue; a shuffle with --seed and one reader keeps TF's rule (its order depends on
# the capacity).
STATS0 = Q + HDR + ["-n", "0", "-o", "none", "--stats"]
case("capacity_default_one_reader_a_read_step", STATS0 + ["-j", "1", "-b", "8", "{iris}"],
     err=rb"\(capacity 3048, min_after_dequeue 1000\)")
case("capacity_default_seeded_shuffle_keeps_tf_rule",
     STATS0 + ["-j", "1", "-b", "8", "--seed=4", "{iris}"],
     err=rb"\(capacity 1024, min_after_dequeue 1000\)")
case("capacity_default_no_shuffle_two_read_steps", STATS0 + ["--no-shuffle", "-b", "8", "{iris}"],
     err=rb"\(capacity 4096, min_after_dequeue 0\)")
case("capacity_default_no_shuffle_tf_rule_with_big_batches",
     STATS0 + ["--no-shuffle", "-b", "1500", "{iris}"],
     err=rb"\(capacity 4500, min_after_dequeue 0\)")
case("capacity_default_two_readers_a_read_step_each", STATS0 + ["-j", "2", "-b", "8", "{iris}"],
     err=rb"\(capacity 5096, min_after_dequeue 1000\)")
case("capacity_default_tf_rule_with_big_batches", STATS0 + ["-j", "2", "-b", "1200", "{iris}"],
     err=rb"\(capacity 5800, min_after_dequeue 1000\)")
# Narrow rows take longer read steps: about 160 KiB of lines (tools/cat_pipeline.c, size_steps),
# from the mean line of the first file's first 64 KiB.  lines20k's first 64 KiB hold 6,203 lines
# ending at byte 65,533: 163,840 * 6,203 / 65,534 = 15,507 records a step.  Every record still
# comes out once.
NARROW = Q + ["-n", "0", "-o", "none", "--stats", "-d", "int,int"]
case("capacity_default_no_shuffle_narrow_rows_two_longer_steps",
     NARROW + ["--no-shuffle", "{lines20k}"],
     err=rb"records 20000, .*\(capacity 31014, min_after_dequeue 0\)")
case("capacity_default_narrow_rows_a_longer_step_per_reader", NARROW + ["-j", "2", "{lines20k}"],
     err=rb"records 20000, .*\(capacity 32014, min_after_dequeue 1000\)")
case("capacity_default_narrow_rows_seeded_shuffle_keeps_tf_rule",
     NARROW + ["-j", "1", "--seed=3", "{lines20k}"],
     err=rb"records 20000, .*\(capacity 1024, min_after_dequeue 1000\)")
case("capacity_default_narrow_rows_compressed_keeps_the_step",
     NARROW + ["--no-shuffle", "{lines20k_gz}"],
     err=rb"records 20000, .*\(capacity 4096, min_after_dequeue 0\)")
case("narrow_rows_longer_steps_deliver_every_record_once",
     Q + ["-j", "2", "-b", "1000", "-n", "0", "-o", "csv", "-d", "int,int", "{lines20k}"],
     check=lambda c, rc, o, e: _same_multiset(c, o, 1))
case("capacity_given_is_kept", STATS0 + ["-j", "2", "-b", "8", "--capacity=1100", "{iris}"],
     err=rb"\(capacity 1100, min_after_dequeue 1000\)")
case("shuffle_flag", Q + HDR + ["--shuffle", "--seed=9", "-b", "150", "-n", "1", "-o", "csv",
                                "{iris}"],
     check=lambda c, rc, o, e: _is_permutation_of_iris(o))
case("seed_reproducible", HDR + ["--seed=42", "-n", "0", "-o", "jsonl", "{iris}"],
     check=lambda c, rc, o, e: _rerun_same(c, rc, o, e, same=True))
case("seed_reproducible_big", Q + ["--seed=11", "-b", "32", "-n", "20", "-o", "csv", "{lines20k}"],
     check=lambda c, rc, o, e: _rerun_same(c, rc, o, e, same=True))
case("no_seed_differs", Q + HDR + ["-n", "0", "-o", "jsonl", "{iris}"],
     check=lambda c, rc, o, e: _rerun_same(c, rc, o, e, same=False))

# usage errors: exit 2 and a pointer to --help
HELP = rb"\nTry 'tfq-cat --help' for more information\.\n$"
for name, args in [
        ("usage_unknown_option", ["--bogus", "{iris}"]),
        ("usage_bad_batch", ["-b", "0", "{iris}"]),
        ("usage_bad_batches", ["-n", "x", "{iris}"]),
        ("usage_bad_format", ["-f", "parquet", "{iris}"]),
        ("usage_bad_output", ["-o", "xml", "{iris}"]),
        ("usage_bad_compression", ["-z", "bz2", "{iris}"]),
        ("usage_unknown_type", ["-d", "float,decimal", "{iris}"]),
        ("usage_bad_default", ["-d", "int:1.5", "{iris}"]),
        ("usage_unterminated_quote", ["-d", 'string:"abc', "{iris}"]),
        ("usage_empty_spec", ["-d", "", "{iris}"]),
        ("usage_repeat_zero", ["-d", "0*int", "{iris}"]),
        ("usage_repeat_no_star", ["-d", "float,3int", "{iris}"]),
        ("usage_repeat_no_type", ["-d", "3*,int", "{iris}"]),
        ("usage_repeat_too_many", ["-d", "1048576*int,int", "{iris}"]),
        ("usage_bad_delim", ["--field-delim=ab", "{iris}"]),
        ("usage_select_not_increasing", ["--select-cols=2,1", "{iris}"]),
        ("usage_select_vs_defaults", ["--select-cols=0,1", "-d", "float", "{iris}"]),
        ("usage_fixed_needs_record_bytes", ["-f", "fixed", "{iris}"]),
        ("usage_record_bytes_not_fixed", ["--record-bytes=4", "{iris}"]),
        ("usage_csv_option_on_text", ["-f", "text", "--na-value=x", "{iris}"]),
        ("usage_capacity_vs_mad", ["--capacity=10", "--min-after-dequeue=10", "{iris}"]),
        ("usage_bad_seed", ["--seed=-1", "{iris}"]),
        ("usage_bad_threads", ["-j", "0", "{iris}"]),
        ("usage_stdin_twice", ["-", "-"]),
        ("usage_epochs_on_pipe", ["--num-epochs=2", "-"]),
        ("usage_features_empty", ["--features=", "{exs}"]),
        ("usage_features_no_type", ["--features", "id", "{exs}"]),
        ("usage_features_empty_entry", ["--features", "id:int64,,x:float", "{exs}"]),
        ("usage_features_bad_type", ["--features", "id:int32", "{exs}"]),
        ("usage_features_bad_shape", ["--features", "x:float[a]", "{exs}"]),
        ("usage_features_bad_shape_star", ["--features", "x:float[*,2]", "{exs}"]),
        ("usage_features_unclosed_shape", ["--features", "x:float[2", "{exs}"]),
        ("usage_features_trailing", ["--features", "x:float[2] y", "{exs}"]),
        ("usage_features_default_varlen", ["--features", "x:float[*]=1", "{exs}"]),
        ("usage_features_bad_default", ["--features", "id:int64=1.5", "{exs}"]),
        ("usage_features_unterminated", ["--features", 'id:string="x', "{exs}"]),
        ("usage_features_duplicate", ["--features", "id:int64, id:float", "{exs}"]),
        ("usage_features_zero_inner", ["--features", "x:float[?,0]", "{exs}"]),
        ("usage_features_on_csv", ["-f", "csv", "--features", "id:int64", "{iris}"]),
        ("usage_features_on_text", ["-f", "text", "--features", "id:int64", "{exs}"]),
        ("usage_raw_with_features", ["--raw", "--features", "id:int64", "{exs}"]),
        ("usage_raw_with_example", ["--raw", "-f", "example", "{exs}"]),
        ("usage_raw_on_csv", ["--raw", "{iris}"]),
        ("usage_example_nothing_to_infer", ["--no-shuffle", "-f", "example", "{empty}"]),
]:
    case(name, args, code=2, out="", err=G, stdin=b"x\n" if "-" in args else None)

# data and I/O errors: exit 1, "tfq-cat: FILE:LINE: <TF's message>"
for name, args, e in [
        ("err_missing_file", ["{iris}", "{missing}"], G),
        ("err_directory", ["{dir}"], rb"^tfq-cat: .*: Is a directory\n$"),
        ("err_malformed_quote", NS + ["-d", "int,str", "{bad_quote}"], G),
        ("err_malformed_quote_end", NS + ["-d", "int,str", "{bad_quote2}"], G),
        ("err_field_count", NS + ["-d", "int,int,int", "{bad_count}"], G),
        ("err_bad_number", NS + ["-d", "float,float", "{bad_number}"], G),
        ("err_int_range", NS + ["-d", "int,int", "{bad_int}"], G),
        ("err_required_missing", NS + ["-d", "int,int", "{missing_req}"], G),
        ("err_truncated_gzip", NS + HDR + ["-d", IRIS_SPEC, "-n", "0", "{iris_trunc_gz}"],
         rb"^tfq-cat: trunc\.csv\.gz:121: truncated GZIP stream: trunc\.csv\.gz ends at "),
        ("err_garbage_gzip", NS + ["-f", "text", "{garbage_gz}"],
         rb"^tfq-cat: garbage\.csv\.gz:1: "),
        ("err_corrupt_tfrecord", NS + ["-n", "0", "{tfr_corrupt}"],
         rb"^tfq-cat: corrupt\.tfrecord: .*corrupted record at 12"),
        ("err_truncated_tfrecord", NS + ["-n", "0", "{tfr_trunc}"],
         rb"^tfq-cat: trunc\.tfrecord: "),
        ("err_fixed_truncated", NS + ["-f", "fixed", "--record-bytes=4", "-n", "0",
                                      "{fixed_trunc}"], rb"^tfq-cat: trunc\.bin: "),
        ("err_stdin_bad_number", NS + ["-d", "float,float", "-"], G),
        ("err_example_dtype", NS + ["--features", "id:float", "{exs}"], G),
        ("err_example_count", NS + ["--features", "x:float[3]", "{exs}"], G),
        ("err_example_required", NS + ["--features", "id:int64, nope:string", "{exs}"], G),
        ("err_example_varlen_dtype", NS + ["--features", "tags:int64[*]", "{exs}"], G),
        ("err_example_seq_stride", NS + ["--features", "w:float[?,2]", "{exs}"], G),
        ("err_example_record4", NS + ["-b", "3", "-n", "0", "-o", "csv", "{exs_bad4}"], G),
        ("err_example_malformed", NS + ["-f", "example", "{exs_malformed}"], G),
]:
    case(name, Q + args, code=1, err=e, stdin="@bad_number" if "-" in args else None,
         out="" if name.startswith("err_missing") else None)


# pipes and signals (custom runners)
def _pipe_head(ctx):
    big = os.path.join(ctx.dir, ctx.path("lines20k"))
    p = subprocess.run(["bash", "-c", 'set -o pipefail; "$1" -q --no-shuffle -n 0 -b 10 -o csv '
                        '-d int,int "$2" | head -n 3 >/dev/null', "sh", ctx.tfq_cat, big],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0 or p.stderr:
        return "expected exit 0 and no stderr, got %d %r" % (p.returncode, p.stderr)
    return None


def _sigint(ctx):
    # Standard input stays open and silent: the pipeline waits; SIGINT must stop it cleanly.
    p = subprocess.Popen([ctx.tfq_cat, "-q", "-f", "text", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"one line\n")
    p.stdin.flush()
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    # Standard input stays open until tfq-cat exits: communicate() would close it at once, and an
    # end of input that tfq-cat met before the signal thread ran ended the run with 0.
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return "tfq-cat did not stop on SIGINT"
    finally:
        p.stdin.close()
    err = p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    if p.returncode != 130:
        return "expected exit 130 after SIGINT, got %d (%r)" % (p.returncode, err)
    return None


def _slow_stdin(ctx):
    # A stream that stays open (tail -f | tfq-cat): the first batch prints and tfq-cat exits
    # without waiting for the input to end.
    p = subprocess.Popen([ctx.tfq_cat, "-q", "-f", "text", "--no-shuffle", "-b", "1", "-n", "1",
                          "-o", "jsonl"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"a\nb\n")
    p.stdin.flush()
    try:
        p.wait(timeout=10)  # standard input stays open meanwhile
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return "tfq-cat waited for the end of an open standard input"
    out, err = p.communicate()
    if p.returncode != 0 or out != b'{"line":"a"}\n' or err:
        return "rc %d out %r err %r" % (p.returncode, out, err)
    return None


def _streaming(ctx):
    big = os.path.join(ctx.dir, ctx.path("big"))
    size = os.path.getsize(big)
    t0 = time.monotonic()
    rc, out, err = ctx.run(["-q", "--shuffle", "-b", "32", "-n", "5", "--stats", big])
    dt = time.monotonic() - t0
    m = re.search(rb"bytes read (\d+)", err)
    if rc != 0 or not m:
        return "rc %d, stderr %r" % (rc, err)
    read = int(m.group(1))
    sys.stdout.write("streaming: file %d bytes, tfq-cat read %d bytes (%.2f%%) in %.3f s\n"
                     % (size, read, 100.0 * read / size, dt))
    if out.count(b"batch ") != 5:
        return "expected 5 batches"
    if read > size // 20:
        return "read %d of %d bytes: not streaming" % (read, size)
    return None


def _cpu_seconds(argv, cwd):
    """Runs argv (stdout to /dev/null) and returns its exit code and CPU seconds (user + sys)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    _, status, ru = os.wait4(p.pid, 0)
    p.stderr.close()
    return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime


def _wide_linear(ctx):
    # tfq-cat's cost is linear in the number of columns: 100 rows of 2,000 and of 16,000 float
    # columns (the same bytes per value), with type inference, reading everything with -o none,
    # and printing 2 batches with -o csv.  8x the columns must cost less than 20x the CPU time
    # (the best of 3 runs each; linear is 8x, quadratic 64x; 12x was once measured 12.1x on a
    # loaded machine, where the short run's fixed costs weigh more).
    paths = {}
    for cols in (2000, 16000):
        path = os.path.join(ctx.dir, "wide%d.csv" % cols)
        row = lambda r: ",".join("%d.%03d" % (100 + (r * 31 + c * 7) % 900, (r + c) % 1000)  # noqa
                                 for c in range(cols))
        with open(path, "w") as f:
            f.write("".join(row(r) + "\n" for r in range(100)))
        paths[cols] = path
    report = []
    for out, batches in (("none", "0"), ("csv", "2")):
        best = {}
        for cols, path in paths.items():
            times = []
            for _ in range(3):
                rc, t = _cpu_seconds([ctx.tfq_cat, "-q", "-n", batches, "-o", out, "-j", "1",
                                      path], ctx.dir)
                if rc != 0:
                    return "tfq-cat -o %s on %d columns: exit %d" % (out, cols, rc)
                times.append(t)
            best[cols] = min(times)
        ratio = best[16000] / max(best[2000], 1e-3)
        report.append("-o %s: 2,000 columns %.3f CPU-s, 16,000 columns %.3f CPU-s, ratio %.1f"
                      % (out, best[2000], best[16000], ratio))
        if ratio >= 20:
            return "not linear in the columns: " + "; ".join(report)
    sys.stdout.write("wide_linear: " + "; ".join(report) + "\n")
    return None


def _repeat_round_trip(ctx):
    # The inferred -d of a wide file is short (runs as N*TYPE) and, pasted back, gives the same
    # output.
    path = ctx.path("wide_mixed")
    args = ["--no-shuffle", "-b", "6", "-n", "0", "-o", "csv", "--keys", path]
    rc, out, err = ctx.run(args)
    m = re.match(rb"^tfq-cat: inferred -d '(.*)'\n$", err)
    if rc != 0 or not m:
        return "inference: exit %d, stderr %r" % (rc, err[:300])
    spec = m.group(1).decode()
    if len(spec) > 200 or "*" not in spec:
        return "the inferred -d is not compressed: %r" % spec[:300]
    rc2, out2, err2 = ctx.run(["-d", spec] + args)
    if rc2 != 0 or err2:
        return "with -d '%s': exit %d, stderr %r" % (spec, rc2, err2[:300])
    if out2 != out or out.count(b"\n") != 21:
        return "the output with the inferred -d pasted back differs"
    return None


def _steady_allocations(ctx):
    # Issue #18: the library allocates at most 0.05 times per record in the steady state of the
    # shuffled (and the unshuffled) pipeline, counted by tfq-cat --stats through the allocator
    # hook (tfq_set_allocator).  100,000 records of a mixed schema: 6 float32 of 6-9 digits, an
    # int64, an int32, a categorical word and a free-text id.
    path = os.path.join(ctx.dir, "mixed_allocs.csv")
    rnd = random.Random(18)
    words = ["us", "de", "mobile", "desktop", "organic", "referral", "subscription", "trial"]
    with open(path, "w") as f:
        for _ in range(100000):
            fl = ["%.*f" % (rnd.randint(1, 5), rnd.uniform(-5e4, 5e4)) for _ in range(6)]
            f.write(",".join(fl) + ",%d,%d,%s,%s\n" % (
                rnd.randint(10 ** 9, 10 ** 10 - 1), rnd.randint(-2 ** 31, 2 ** 31 - 1),
                rnd.choice(words), "".join(rnd.choice("abcdef0123456789_")
                                           for _ in range(rnd.randint(8, 20)))))
    spec = "6*float32:0,int64:0,int32:0,string:,string:"
    report = []
    for mode in (["-j", "1"], ["--no-shuffle", "-j", "1"], ["-j", "2"]):
        rc, out, err = ctx.run(["-q", "-o", "none", "-n", "0", "-b", "128", "--stats", "-d", spec]
                               + mode + [path])
        m = re.search(rb"records (\d+),.* ([0-9.]+) allocations per record \(steady state\)", err)
        if rc != 0 or not m:
            return "rc %d, stderr %r" % (rc, err)
        recs, per = int(m.group(1)), float(m.group(2))
        report.append("%s: %.4f" % (" ".join(mode), per))
        if recs != 100000:
            return "%s: %d records, not 100000" % (" ".join(mode), recs)
        if per > 0.05:
            return "%s: %.4f allocations per record > 0.05" % (" ".join(mode), per)
    sys.stdout.write("steady_allocations: " + "; ".join(report) + "\n")
    return None


SPECIAL = {"pipe_head_quiet": _pipe_head, "sigint_130": _sigint, "streaming_big_file": _streaming,
           "stdin_open_stream": _slow_stdin, "wide_linear": _wide_linear,
           "repeat_spec_round_trip": _repeat_round_trip, "steady_allocations": _steady_allocations}


# ---- checks -----------------------------------------------------------------------------------

def _rerun_same(ctx, rc, out, err, same):
    rc2, out2, err2 = ctx.run(CASES[ctx.case]["args"])
    if rc != 0 or rc2 != 0:
        return "exit codes %d %d" % (rc, rc2)
    if same and out != out2:
        return "two runs with --seed differ"
    if not same and out == out2:
        return "two runs without --seed printed the same order"
    return None


def _same_multiset(ctx, out, copies):
    rows = sorted(out.split(b"\n")[1:-1])
    want = sorted(b"%d,%d" % (i, i * 7) for i in range(20000) for _ in range(copies))
    return None if rows == want else "rows differ from the input (%d vs %d)" % (len(rows), len(want))


def _is_permutation_of_iris(out):
    got = out.split(b"\n")[1:-1]
    with open(IRIS, "rb") as f:
        lines = f.read().split(b"\n")[1:-1]
    # floats print shortest: 3.0 -> 3
    norm = lambda l: b",".join(  # noqa: E731
        (b"%g" % float(x)) if i < 4 else x for i, x in enumerate(l.split(b",")))
    if sorted(map(norm, got)) != sorted(map(norm, lines)):
        return "not a permutation of iris"
    if got == [norm(l) for l in lines]:
        return "not shuffled"
    return None


def _golden_path(name, spec, ext):
    if isinstance(spec, str) and spec.startswith("golden:"):
        return os.path.join(GOLDEN, spec[len("golden:"):])
    return os.path.join(GOLDEN, name + ext)


def _expect(ctx, name, what, spec, got, ext, update):
    if spec is None:
        return None
    if spec == G or (isinstance(spec, str) and spec.startswith("golden:")):
        path = _golden_path(name, spec, ext)
        got = ctx.rel(got)
        if update and spec == G:
            _write(path, got)
            return None
        try:
            with open(path, "rb") as f:
                want = f.read()
        except FileNotFoundError:
            return "%s: missing golden file %s (run with --update)" % (what, path)
        if got != want:
            return "%s differs from %s:\n--- want\n%s\n--- got\n%s" % (
                what, path, want.decode(errors="replace"), got.decode(errors="replace"))
        return None
    if spec == "":
        return None if got == b"" else "%s: expected nothing, got %r" % (what, got[:2000])
    pat = spec if isinstance(spec, bytes) else spec.encode()
    if not re.search(pat, ctx.rel(got)):
        return "%s: %r does not match %r" % (what, ctx.rel(got)[:2000], pat)
    return None


def run_case(args, name):
    ctx = Ctx(args, name)
    ctx.case = name
    if name in SPECIAL:
        return SPECIAL[name](ctx)
    c = CASES[name]
    rc, out, err = ctx.run(c["args"], c["stdin"])
    problems = []
    if rc != c["code"]:
        problems.append("exit code %d, expected %d; stderr: %r" % (rc, c["code"], err[:2000]))
    for what, spec, got, ext in (("stdout", c["out"], out, ".out"),
                                 ("stderr", c["err"], err, ".err")):
        p = _expect(ctx, name, what, spec, got, ext, args.update)
        if p:
            problems.append(p)
    if c["check"] and not problems:
        p = c["check"](ctx, rc, out, err)
        if p:
            problems.append(p)
    return "\n".join(problems) or None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--tfq-cat")
    ap.add_argument("--mkrecords")
    ap.add_argument("--workdir", default="cli-work")
    ap.add_argument("--case", action="append")
    ap.add_argument("--update", action="store_true")
    args = ap.parse_args()
    for k in ("tfq_cat", "mkrecords", "workdir"):
        if getattr(args, k):
            setattr(args, k, os.path.abspath(getattr(args, k)))
    names = list(CASES) + list(SPECIAL)
    if args.list:
        print("\n".join(names))
        return 0
    failed = 0
    for name in args.case or names:
        try:
            p = run_case(args, name)
        except subprocess.TimeoutExpired:
            p = "timed out"
        print(("FAIL " if p else "ok   ") + name)
        if p:
            print("  " + p.replace("\n", "\n  "))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
