#!/usr/bin/env python3
"""tfq-cat on TFRecord files of tf.train.Example, compared live with TensorFlow (suite 'tf').

TensorFlow writes the records (tf.io.TFRecordWriter, tf.train.Example) and parses them
(tf.compat.v1.io.parse_example, graph mode); every value tfq-cat prints with
`--no-shuffle -o jsonl` must be TF's, and so must every error message:

  inferred     the features tfq-cat infers (its stderr line, exactly) and all 240 records'
               values, against parse_example with the same features;
  features     --features with each kind (FixedLen scalar / [k] / [2,2] with and without
               defaults, VarLen, FixedLenSequence [?,2]) against the equivalent TF config (a
               FixedLenSequence record's rows: TF's padded output cut to the record's own rows);
  odd_wire     hand-encoded records (an empty Feature, a key given twice, unpacked lists, two
               Features fields), inferred and with --features;
  errors       for each bad config, "tfq-cat: FILE:K: MSG" with K the first record TF fails on
               and MSG TF's message for the records up to it in one batch ("Index: K");
  padding      --features 'seq:float32[?,2]=9': padded as FixedLenSequenceFeature(default_value)
               pads, the whole file in one batch.

  test_cat_examples_tf.py --tfq-cat PATH [--workdir DIR]

Runs under the venv's Python (.venv/bin/python, re-executed into when the calling Python has no
TensorFlow).  Exit 0 pass, 1 fail, 77 skip (no TensorFlow; a failure when CI=true)."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")


def skip(msg):
    print("#" * 72 + "\n# SKIPPED: %s\n" % msg + "#" * 72, flush=True)
    if os.environ.get("CI") == "true":
        print("CI=true: this is a failure, not a skip.", flush=True)
        sys.exit(1)
    sys.exit(77)


try:
    import numpy as np
    import tensorflow.compat.v1 as tf
except Exception as e:  # noqa: BLE001
    if os.path.exists(VENV_PY) and not os.environ.get("TFQ_CAT_TF_REEXEC"):
        os.environ["TFQ_CAT_TF_REEXEC"] = "1"
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    skip("cannot import tensorflow (%s); the venv's wheel is installed by scripts/setup" % e)

sys.path.insert(0, HERE)
from run_cli_tests import _example, _feature, _ld  # noqa: E402  (the hand encoder)

tf.disable_eager_execution()
tf.logging.set_verbosity(tf.logging.ERROR)

N = 240
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL " + what, flush=True)
    return cond


# ---- the data -------------------------------------------------------------------------------

def feat(kind, vals):
    if kind == "i":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=vals))
    if kind == "f":
        return tf.train.Feature(float_list=tf.train.FloatList(value=vals))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))


NAMES = {9: "caf\u00e9".encode(), 10: b"bad\xff\xfe", 11: b'quote"back\\slash\nnl', 12: b""}
IDS = {5: -2 ** 63, 6: 2 ** 63 - 1, 13: 0}
XS = {7: [float("inf"), -0.0], 8: [float("nan"), 1e-45], 14: [3.4e38, -1.17549435e-38]}


def record(i):
    f = {"id": feat("i", [IDS.get(i, i * 7919 - 10 ** 12)]),
         "x": feat("f", XS.get(i, [i * 0.1, -i / 3.0])),
         "name": feat("b", [NAMES.get(i, b"name%d" % i)]),
         "tags": feat("b", [b"t%d.%d" % (i, j) for j in range(i % 4)]),
         "vals": feat("f", [i + j / 8.0 for j in range((i * 7) % 5)]),
         "seq": feat("f", [float(i * 10 + j) for j in range(2 * (i % 3))])}
    if i % 3 == 0:
        f["opt"] = feat("i", [i // 3])
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def odd_records():
    b = lambda v: _ld(1, _ld(1, b"b") + _ld(2, _feature(("i", [v]))))  # noqa: E731
    return [
        _example({"a": None, "b": ("i", [1])}),
        _ld(1, b(2) + b(3)) + _ld(1, _ld(1, _ld(1, b"a") + _ld(2, b""))),
        _ld(1, _ld(1, _ld(1, b"b") + _ld(2, _ld(3, b"\x08\x04"))) +
            _ld(1, _ld(1, b"a") + _ld(2, _ld(2, b"\x0d\x00\x00\x20\x40")))),
        b"\x2a\x04meta" + _example({"a": ("f", [1.5, 2.5]), "b": ("i", [-5])}),
    ]


def write(path, recs):
    with tf.io.TFRecordWriter(path) as w:
        for r in recs:
            w.write(r)


# ---- TensorFlow's side --------------------------------------------------------------------

def tf_parse(recs, features):
    """parse_example of recs: (dict of per-record values, None) or (None, TF's message)."""
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None])
        out = tf.io.parse_example(s, features)
        with tf.Session() as sess:
            try:
                vals = sess.run(out, {s: recs})
            except tf.errors.InvalidArgumentError as e:
                m = e.message
                if "\nNode: " in m:  # graph mode's "Graph execution error: ... Node: '...'\n"
                    m = m.split("\nNode: ", 1)[1].split("\n", 1)[1]
                return None, m.split("\n\t [[")[0]
    rows = {}
    for k, v in vals.items():
        if isinstance(v, tf.SparseTensorValue):
            per = [[] for _ in recs]
            for (r, _), x in zip(v.indices, v.values):
                per[r].append(x)
            rows[k] = per
        else:
            rows[k] = list(v)
    return rows, None


def first_failure(recs, features):
    """(K, message): the first record TF fails on, parsed alone, and TF's message for it when
    parse_example takes the file's records up to it in one batch (its "Index:" is then K, the
    record's position in the file, as tfq-cat's location says)."""
    for k, r in enumerate(recs):
        _, m = tf_parse([r], features)
        if m is not None:
            return k, tf_parse(recs[:k + 1], features)[1]
    return None, None


# ---- tfq-cat's side ---------------------------------------------------------------------------

def run_cat(args, path, cwd):
    p = subprocess.run([ARGS.tfq_cat, "--no-shuffle", "-b", "64", "-n", "0", "-o", "jsonl"] +
                       args + [os.path.basename(path)], cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout, p.stderr


def cat_columns(out):
    """The jsonl records (an object a record, the features as keys) as {name: [per-record
    values]}, in column order."""
    cols = None
    for line in out.decode("utf-8").splitlines():
        # "-0" is float32 -0.0 (json.loads would read the int 0)
        r = json.loads(line, parse_int=lambda t: -0.0 if t == "-0" else int(t))
        if cols is None:
            cols = {n: [] for n in r}
        for n, v in r.items():
            cols[n].append(v)
    return cols or {}


def jstr(b):
    """TF's bytes as tfq-cat prints them in JSON (valid UTF-8 as is, other bytes as lone
    surrogates \\udcXX: Python's surrogateescape), read back by json.loads."""
    return b.decode("utf-8", errors="surrogateescape")


def same_value(got, want):
    """One printed value against one TF value (numbers, bytes, or nested lists of them)."""
    if isinstance(want, (list, np.ndarray)):
        want = list(want)
        return isinstance(got, list) and len(got) == len(want) and \
            all(same_value(g, w) for g, w in zip(got, want))
    if isinstance(want, bytes):
        return got == jstr(want)
    if isinstance(want, (np.floating, float)):
        if isinstance(got, str):
            got = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(got)
        if got is None:
            return False
        g = np.float32(got)
        return (np.isnan(g) and np.isnan(want)) or (g == want and
                                                    np.signbit(g) == np.signbit(want))
    return isinstance(got, int) and got == int(want)


def compare(case, cols, want, order=None):
    if order is not None:
        check(list(cols) == order, "%s: columns %s, expected %s" % (case, list(cols), order))
    for name, vals in want.items():
        got = cols.get(name)
        if not check(got is not None and len(got) == len(vals),
                     "%s: column %s has %s values, expected %d" %
                     (case, name, None if got is None else len(got), len(vals))):
            continue
        for r, (g, w) in enumerate(zip(got, vals)):
            if not check(same_value(g, w), "%s: %s of record %d is %r, TF says %r" %
                         (case, name, r, g, w)):
                break


# ---- the cases ------------------------------------------------------------------------------

FL, VL, FLS = tf.io.FixedLenFeature, tf.io.VarLenFeature, tf.io.FixedLenSequenceFeature


def case_inferred(d, recs):
    path = os.path.join(d, "data.tfrecord")
    rc, out, err = run_cat([], path, d)
    want_err = (b"tfq-cat: inferred --features 'id:int64, name:string, opt:int64[*], "
                b"seq:float32[*], tags:string[*], vals:float32[*], x:float32[2]'\n")
    check(rc == 0, "inferred: exit %d: %r" % (rc, err))
    check(err == want_err, "inferred: stderr %r, expected %r" % (err, want_err))
    want, m = tf_parse(recs, {"id": FL([], tf.int64), "name": FL([], tf.string),
                              "opt": VL(tf.int64), "seq": VL(tf.float32),
                              "tags": VL(tf.string), "vals": VL(tf.float32),
                              "x": FL([2], tf.float32)})
    check(m is None, "inferred: TF fails: %s" % m)
    compare("inferred", cat_columns(out), want or {},
            ["id", "name", "opt", "seq", "tags", "vals", "x"])


def case_features(d, recs):
    path = os.path.join(d, "data.tfrecord")
    spec = ('x:float32[2], opt:int64=-1, seq:float[?,2], tags:bytes[*], id:long, name:str, '
            'dflt:string="a,b", d2:float[2,2]=1.5')
    rc, out, err = run_cat(["--features", spec], path, d)
    check(rc == 0 and err == b"", "features: exit %d, stderr %r" % (rc, err))
    want, m = tf_parse(recs, {
        "x": FL([2], tf.float32), "opt": FL([], tf.int64, default_value=-1),
        "seq": FLS([2], tf.float32, allow_missing=True), "tags": VL(tf.string),
        "id": FL([], tf.int64), "name": FL([], tf.string),
        "dflt": FL([], tf.string, default_value=b"a,b"),
        "d2": FL([2, 2], tf.float32, default_value=[[1.5, 1.5], [1.5, 1.5]])})
    check(m is None, "features: TF fails: %s" % m)
    if want:  # a record's own rows: TF pads them to the batch's longest
        want["seq"] = [rows[:i % 3] for i, rows in enumerate(want["seq"])]
    compare("features", cat_columns(out), want or {},
            ["x", "opt", "seq", "tags", "id", "name", "dflt", "d2"])


def case_odd_wire(d):
    path = os.path.join(d, "odd.tfrecord")
    recs = odd_records()
    write(path, recs)
    rc, out, err = run_cat([], path, d)
    check(rc == 0 and err == b"tfq-cat: inferred --features 'a:float32[*], b:int64'\n",
          "odd_wire: exit %d, stderr %r" % (rc, err))
    want, m = tf_parse(recs, {"a": VL(tf.float32), "b": FL([], tf.int64)})
    check(m is None, "odd_wire: TF fails: %s" % m)
    compare("odd_wire", cat_columns(out), want or {}, ["a", "b"])
    rc, out, err = run_cat(["--features", "b:int64=0, a:float[?]"], path, d)
    check(rc == 0 and err == b"", "odd_wire features: exit %d, stderr %r" % (rc, err))
    want, m = tf_parse(recs, {"b": FL([], tf.int64, default_value=0),
                              "a": FLS([], tf.float32, allow_missing=True)})
    check(m is None, "odd_wire features: TF fails: %s" % m)
    if want:
        want["a"] = [rows[:n] for rows, n in zip(want["a"], [0, 0, 1, 2])]
    compare("odd_wire features", cat_columns(out), want or {}, ["b", "a"])


ERRORS = [  # (--features, TF's features)
    ("id:float", {"id": FL([], tf.float32)}),
    ("x:float32[3]", {"x": FL([3], tf.float32)}),
    ("vals:float32[1]", {"vals": FL([1], tf.float32)}),
    ("id:int64, opt:int64", {"id": FL([], tf.int64), "opt": FL([], tf.int64)}),
    ("tags:int64[*]", {"tags": VL(tf.int64)}),
    ("seq:float[?,4]", {"seq": FLS([4], tf.float32, allow_missing=True)}),
    ("name:string[2]", {"name": FL([2], tf.string)}),
]


def case_errors(d, recs):
    path = os.path.join(d, "data.tfrecord")
    for spec, features in ERRORS:
        k, m = first_failure(recs, features)
        if not check(k is not None, "errors %s: TF parses every record" % spec):
            continue
        rc, out, err = run_cat(["--features", spec], path, d)
        want = ("tfq-cat: data.tfrecord:%d: %s\n" % (k, m)).encode()
        check(rc == 1 and err == want, "errors %s: exit %d, stderr %r, expected %r" %
              (spec, rc, err, want))
    # a record that is no Example at all, after 3 good ones
    bad = os.path.join(d, "malformed.tfrecord")
    brecs = recs[:3] + [b"\n\x05\x01"] + recs[3:6]
    write(bad, brecs)
    k, m = first_failure(brecs, {"id": FL([], tf.int64)})
    rc, out, err = run_cat(["-f", "example", "--features", "id:int64"], bad, d)
    want = ("tfq-cat: malformed.tfrecord:%s: %s\n" % (k, m)).encode()
    check(rc == 1 and err == want, "errors malformed: exit %d, stderr %r, expected %r" %
          (rc, err, want))


def case_padding(d, recs):
    """--features 'seq:float32[?,2]=9': the sequences padded with 9 to the longest record, as
    parse_example's FixedLenSequenceFeature(default_value=9) pads them (the whole file in one
    batch on both sides)."""
    path = os.path.join(d, "data.tfrecord")
    for spec, dv in (("seq:float32[?,2]=9", 9.0), ("seq:float32[?,2]=-1.5", -1.5)):
        want, m = tf_parse(recs, {"seq": FLS([2], tf.float32, allow_missing=True,
                                             default_value=dv)})
        rc, out, err = run_cat(["-q", "-b", str(len(recs)), "--features", spec], path, d)
        if not check(rc == 0 and m is None, "padding %s: exit %d %r, TF %r" % (spec, rc, err, m)):
            continue
        got = cat_columns(out).get("seq", [])
        wantl = [[[float(x) for x in row] for row in rec] for rec in want["seq"]]
        check(got == wantl, "padding %s: %d records differ from TF's" %
              (spec, sum(1 for a, b in zip(got, wantl) if a != b) + abs(len(got) - len(wantl))))
        print("padding %s: %d records, %d rows each, equal to TF's" %
              (spec, len(got), len(wantl[0]) if wantl else 0), flush=True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfq-cat", required=True)
    ap.add_argument("--workdir")
    ARGS = ap.parse_args()
    ARGS.tfq_cat = os.path.abspath(ARGS.tfq_cat)
    if ARGS.workdir:
        os.makedirs(ARGS.workdir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ARGS.workdir) as d:
        recs = [record(i) for i in range(N)]
        write(os.path.join(d, "data.tfrecord"), recs)
        for name, fn in [("inferred", lambda: case_inferred(d, recs)),
                         ("features", lambda: case_features(d, recs)),
                         ("odd_wire", lambda: case_odd_wire(d)),
                         ("errors", lambda: case_errors(d, recs)),
                         ("padding", lambda: case_padding(d, recs))]:
            n = len(FAILS)
            fn()
            print(("ok   " if len(FAILS) == n else "FAIL ") + name, flush=True)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
