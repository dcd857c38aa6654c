"""Differential conformance, parse_example / parse_single_example / decode_raw family: the same
scenarios through tf.compat.v1 (eager) and through tfq.io; values and dtypes, or the error class
and message, must agree."""
import numpy as np
import pytest

import tfq
from tfconform import compare


def ex(tf, **feats):
    f = {}
    for k, v in feats.items():
        if isinstance(v, list) and v and isinstance(v[0], float):
            f[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            f[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        elif isinstance(v, list) and v:
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        else:
            f[k] = tf.train.Feature()
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


# (name, records as a function of tf, features as a function of the module (tf.io or tfq.io))
def R(*specs):
    return lambda tf: [ex(tf, **s) for s in specs]


FL, VL, SQ = "FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature"
SCEN = [
    ("scalar int", R({"a": [1]}, {"a": [2]}), {"a": (FL, [], "int64")}),
    ("vector float", R({"x": [1.0, 2.0]}, {"x": [3.5, -1.0]}), {"x": (FL, [2], "float32")}),
    ("matrix", R({"m": [1, 2, 3, 4, 5, 6]}), {"m": (FL, [2, 3], "int64")}),
    ("string", R({"s": [b"ab"]}, {"s": [b""]}), {"s": (FL, [], "string")}),
    ("default for missing", R({"a": [1]}, {}), {"a": (FL, [], "int64", -7)}),
    ("missing required", R({"a": [1]}, {}), {"a": (FL, [], "int64")}),
    ("wrong count", R({"x": [1.0]}), {"x": (FL, [2], "float32")}),
    ("wrong type", R({"a": [1.0]}), {"a": (FL, [], "int64")}),
    ("varlen", R({"t": [b"a", b"b"]}, {"t": [b"c"]}, {}), {"t": (VL, "string")}),
    ("varlen ints", R({"v": [5, 6, 7]}, {"v": []}), {"v": (VL, "int64")}),
    ("varlen wrong type", R({"v": [1.0]}), {"v": (VL, "int64")}),
    ("sequence", R({"q": [1.0, 2.0]}, {"q": [3.0]}, {}), {"q": (SQ, [], "float32")}),
    ("sequence rows", R({"q": [1, 2, 3, 4]}, {"q": [5, 6]}), {"q": (SQ, [2], "int64")}),
    ("sequence bad rows", R({"q": [1, 2, 3]}), {"q": (SQ, [2], "int64")}),
    ("mixed", R({"a": [1], "t": [b"x"], "x": [0.5, 0.25]}, {"a": [2], "x": [1.0, 2.0]}),
     {"a": (FL, [], "int64"), "t": (VL, "string"), "x": (FL, [2], "float32")}),
    ("corrupt record", lambda tf: [b"\x0a\x05garbage"], {"a": (FL, [], "int64", 0)}),
    ("empty batch", lambda tf: [], {"a": (FL, [], "int64")}),
    ("empty feature list", R({"a": []}), {"a": (FL, [], "int64", 3)}),
]


def feats(mod, spec, tf):
    out = {}
    for k, s in spec.items():
        if s[0] == VL:
            out[k] = mod.VarLenFeature(getattr(tf, s[1]) if mod is tf.io else s[1])
        elif s[0] == SQ:
            out[k] = mod.FixedLenSequenceFeature(s[1], getattr(tf, s[2]) if mod is tf.io else
                                                 s[2], allow_missing=True)
        else:
            dt = getattr(tf, s[2]) if mod is tf.io else s[2]
            out[k] = mod.FixedLenFeature(s[1], dt, s[3] if len(s) > 3 else None)
    return out


def same(w, g):
    if isinstance(w, tuple) or hasattr(w, "indices"):
        for a, b in zip((w.indices, w.values, w.dense_shape), g):
            same(a, b)
        return
    w = w.numpy() if hasattr(w, "numpy") else w
    w = np.asarray(w, dtype=object) if isinstance(w, bytes) or getattr(w, "dtype", None) is not \
        None and w.dtype.kind in "SO" else np.asarray(w)
    g = np.asarray(g)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape
    assert g.tolist() == w.tolist()


@pytest.mark.parametrize("name,recs,spec", SCEN, ids=[s[0] for s in SCEN])
def test_parse_example_conformance(tf, name, recs, spec):
    records = recs(tf)
    r = compare(tf, lambda: tf.compat.v1.io.parse_example(tf.constant(records, dtype=tf.string),
                                                          feats(tf.io, spec, tf)),
                lambda: tfq.io.parse_example(records, feats(tfq.io, spec, tf)))
    if r is not None:
        want, got = r
        assert sorted(want) == sorted(got)
        for k in want:
            same(want[k], got[k])


@pytest.mark.parametrize("name,recs,spec", [s for s in SCEN if s[0] not in ("empty batch",)],
                         ids=[s[0] for s in SCEN if s[0] not in ("empty batch",)])
def test_parse_single_example_conformance(tf, name, recs, spec):
    record = recs(tf)[-1]
    r = compare(tf, lambda: tf.compat.v1.io.parse_single_example(record,
                                                                 feats(tf.io, spec, tf)),
                lambda: tfq.io.parse_single_example(record, feats(tfq.io, spec, tf)))
    if r is not None:
        want, got = r
        for k in want:
            same(want[k], got[k])


RAW = [("uint8", [b"abc", b"xyz"], True), ("int32 little", [b"\x01\x00\x00\x00" * 2], True),
       ("int32 big", [b"\x00\x00\x00\x01"], False), ("float64", [np.float64(2.5).tobytes()], True),
       ("int16 big", [b"\x01\x02\x03\x04"], False), ("sizes differ", [b"ab", b"abcd"], True),
       ("not a multiple", [b"abc"], True), ("empty strings", [b"", b""], True)]


@pytest.mark.parametrize("name,data,little", RAW, ids=[r[0] for r in RAW])
def test_decode_raw_conformance(tf, name, data, little):
    dt = {"uint8": "uint8", "int32 little": "int32", "int32 big": "int32",
          "float64": "float64", "int16 big": "int16", "sizes differ": "int16",
          "not a multiple": "int16", "empty strings": "int32"}[name]
    r = compare(tf, lambda: tf.compat.v1.io.decode_raw(data, getattr(tf, dt), little),
                lambda: tfq.io.decode_raw(data, dt, little))
    if r is not None:
        same(*r)


SPARSE = [  # (name, records' features, SparseFeature args (index_key, value_key, dtype, size, sorted))
    ("1d", [dict(ix=[3, 1], v=[0.5, 1.5]), dict(ix=[], v=[]), dict(ix=[0], v=[2.0])],
     ("ix", "v", "float32", 5, False)),
    ("1d_sorted", [dict(ix=[1, 3], v=[7, 8]), dict(ix=[4], v=[9])], ("ix", "v", "int64", 5, True)),
    ("2d", [dict(a=[1, 0, 1], b=[2, 2, 0], v=[b"x", b"y", b"z"]), dict(a=[0], b=[1], v=[b"w"])],
     (["a", "b"], "v", "string", [2, 3], False)),
    ("out_of_range", [dict(ix=[5], v=[1.0])], ("ix", "v", "float32", 5, False)),
]


@pytest.mark.parametrize("name,recs,args", SPARSE, ids=[s[0] for s in SPARSE])
def test_sparse_feature_conformance(tf, name, recs, args):
    records = [ex(tf, **r) for r in recs]
    ik, vk, dt, size, srt = args
    r = compare(tf, lambda: tf.compat.v1.io.parse_example(
        tf.constant(records, dtype=tf.string),
        {"sp": tf.io.SparseFeature(ik, vk, getattr(tf, dt), size, srt)}),
        lambda: tfq.io.parse_example(records, {"sp": tfq.io.SparseFeature(ik, vk, dt, size, srt)}))
    if r is not None:
        same(r[0]["sp"], r[1]["sp"])


@pytest.mark.parametrize("name,recs,args", SPARSE, ids=[s[0] for s in SPARSE])
def test_sparse_feature_single_conformance(tf, name, recs, args):
    record = ex(tf, **recs[0])
    ik, vk, dt, size, srt = args
    r = compare(tf, lambda: tf.compat.v1.io.parse_single_example(
        record, {"sp": tf.io.SparseFeature(ik, vk, getattr(tf, dt), size, srt)}),
        lambda: tfq.io.parse_single_example(
            record, {"sp": tfq.io.SparseFeature(ik, vk, dt, size, srt)}))
    if r is not None:
        same(r[0]["sp"], r[1]["sp"])
