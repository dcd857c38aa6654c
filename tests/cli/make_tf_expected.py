#!/usr/bin/env python3
"""Computes the expected output of

    tfq-cat --no-shuffle -b 1000 -n 0 -o jsonl --na-value=NA -d SPEC data/conformance.csv

with the reference TensorFlow's decode_csv (tf.compat.v1, the pinned tensorflow-cpu wheel) and
writes golden/tf_conformance.jsonl.  Run once, by hand, with the wheel's Python:

    /work/main/.venv/bin/python tests/cli/make_tf_expected.py

The CLI tests only read the result; they never need TensorFlow."""
import math
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = "int32:0,float32:0,float64:0,string:dflt,int64:-1"


def shortest(v, f32):
    """tfq-cat's number: Python's repr, for float32 of the shortest float32 digits (numpy's
    str; their repr as a float keeps the digits and takes Python's layout), without ".0"."""
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    s = repr(float(str(np.float32(v)))) if f32 else repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def jstr(b):
    out = ['"']
    s = b.decode("utf-8", errors="surrogateescape")
    for ch in s:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append("\\udc%02x" % (o - 0xDC00))  # surrogateescape
        elif ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def main():
    with open(os.path.join(HERE, "data", "conformance.csv"), "rb") as f:
        lines = [l[:-1] if l.endswith(b"\n") else l for l in f.read().split(b"\n")]
    if lines and lines[-1] == b"":
        lines.pop()
    tf.disable_eager_execution()
    recs = tf.placeholder(tf.string, [None])
    defaults = [tf.constant([0], tf.int32), tf.constant([0], tf.float32),
                tf.constant([0], tf.float64), tf.constant(["dflt"], tf.string),
                tf.constant([-1], tf.int64)]
    cols = tf.io.decode_csv(recs, defaults, na_value="NA")
    with tf.Session() as s:
        vals = s.run(cols, {recs: lines})
    cols = []
    for c, v in enumerate(vals):
        if v.dtype == np.float32:
            cols.append([shortest(x, True) for x in v])
        elif v.dtype == np.float64:
            cols.append([shortest(x, False) for x in v])
        elif v.dtype.kind in "iu":
            cols.append([str(int(x)) for x in v])
        else:
            cols.append([jstr(x) for x in v])
    # one object per record, the columns c0, c1, ... as keys
    text = "".join("{" + ",".join('"c%d":%s' % (c, col[r]) for c, col in enumerate(cols)) + "}\n"
                   for r in range(len(lines)))
    with open(os.path.join(HERE, "golden", "tf_conformance.jsonl"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


main()
