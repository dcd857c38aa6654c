#!/usr/bin/env python3
"""Differential conformance for tf.train.Example parsing and decode_raw: the same scenarios in
the reference TensorFlow (tf.compat.v1.parse_example / parse_single_example / decode_raw, graph
mode) and in tfq (through the C driver conformance_example), compared on values (floats
bitwise), dtypes, shapes, sparse indices / values / dense_shape, error codes and error messages.
See docs/conformance.md ("Example parsing and decode_raw").

Scenarios (fixed seed): random Examples written with the encoder below (packed and unpacked
lists, duplicate keys, empty Features, negative int64s, NaN payloads, NUL bytes, unknown fields,
truncated and garbage bytes) x random configs (FixedLen with and without defaults and shapes,
VarLen, FixedLenSequence with padding, SparseFeature), in the batch path (with and without
example_names), the single path and parse_example over a scalar; the numbered cases of
spec/tf1-example.md (§2.2 wire rules, every §2.4 row, every §5 error row, every §6 worked case,
the §3 config errors); decode_raw over every allowed out_type, both byte orders, and its errors.

Prints "FAIL <family> <case>: ..." per failing scenario, "deviation: ..." per documented
deviation, a per-family table, then exactly
    N passed, M failed
    K deviations
Exit status: 0 when M == 0, 1 otherwise.
"""
import argparse
import ast
import hashlib
import json
import os
import pickle
import random
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_conformance import (Report, arr_tok, new_session, np, tf, tf_cache_store,  # noqa: E402
                             tf_message)

# --------------------------------------------------------------------------------------------
# wire encoder (Python protobuf only writes packed lists, so the bytes are written by hand)

M64 = (1 << 64) - 1


def varint(v, pad=0):
    """Base-128 varint of v (two's complement for negatives); pad adds non-minimal 0x80 bytes."""
    v &= M64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            if pad:
                out.append(b | 0x80)
                out += b"\x80" * (pad - 1)
                out.append(0)
            else:
                out.append(b)
            return bytes(out)


def ld(tag, payload):
    return bytes([tag]) + varint(len(payload)) + payload


def f32b(bits):
    return struct.pack("<I", bits & 0xFFFFFFFF)


def fbits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bytes_list(vals, tail=b""):
    return ld(0x0A, b"".join(ld(0x0A, v) for v in vals) + tail)


def float_list(vals, packed=True, tail=b""):
    """vals: float32 bit patterns."""
    if packed:
        body = ld(0x0A, b"".join(f32b(v) for v in vals)) if vals else b""
    else:
        body = b"".join(b"\x0d" + f32b(v) for v in vals)
    return ld(0x12, body + tail)


def int64_list(vals, packed=True, tail=b"", pad=0):
    if packed:
        body = ld(0x0A, b"".join(varint(v, pad) for v in vals)) if vals else b""
    else:
        body = b"".join(b"\x08" + varint(v, pad) for v in vals)
    return ld(0x1A, body + tail)


def flist(kind, vals, packed=True):
    if kind == "string":
        return bytes_list(vals)
    if kind == "float":
        return float_list(vals, packed)
    return int64_list(vals, packed)


def entry(key, value, order="kv"):
    k = key.encode("utf-8") if isinstance(key, str) else key
    kf, vf = ld(0x0A, k), ld(0x12, value)
    return ld(0x0A, kf + vf if order == "kv" else vf + kf)


def features(entries):
    return ld(0x0A, b"".join(entries))


def example(*pairs):
    """example(('a', 'float', [bits...]), ...) -> serialized Example (packed lists)."""
    return features([entry(k, flist(kind, v)) for k, kind, v in pairs])


def rd_varint(b, i):
    """(value, next index) of the varint at b[i], or None (truncated, or more than 10 bytes)."""
    v = 0
    for k in range(10):
        if i + k >= len(b):
            return None
        v |= (b[i + k] & 0x7F) << (7 * k)
        if b[i + k] < 0x80:
            return v & M64, i + k + 1
    return None


def unpacked_floats(value):
    """How many unpacked float items (0d + 4 bytes) open the float_list of a Feature's bytes."""
    if value[:1] != b"\x12":
        return 0
    r = rd_varint(value, 1)
    if not r:
        return 0
    body = value[r[1]: r[1] + r[0]]
    n = 0
    while len(body) >= 5 * (n + 1) and body[5 * n] == 0x0D:
        n += 1
    return n


def tf_overflows(rec, feats):
    """True when TF 2.21 would write past a FixedLen float slot: an unpacked float_list with
    more values than prod(shape) for a requested FixedLen float key (it corrupts the heap or
    crashes; see docs/conformance.md).  Over-inclusive on purpose: every offset that starts
    something shaped like a map entry (0a len, then two 0a/12 fields fully present) counts."""
    slots = {f["key"].encode("utf-8"): prod(f["shape"]) for f in feats
             if f["kind"] == "fl" and f["dtype"] == "float" and f["shape"] is not None and
             None not in f["shape"]}
    if not slots:
        return False
    for p in range(len(rec)):
        if rec[p] != 0x0A:
            continue
        r = rd_varint(rec, p + 1)
        if not r:
            continue
        i, end = r[1], min(len(rec), r[1] + r[0])
        fields = {}
        for _ in range(2):
            if i >= end or rec[i] not in (0x0A, 0x12):
                break
            q = rd_varint(rec, i + 1)
            if not q or q[1] + q[0] > len(rec):
                break
            fields[rec[i]] = rec[q[1]: q[1] + q[0]]
            i = q[1] + q[0]
        key, value = fields.get(0x0A), fields.get(0x12)
        if key in slots and value is not None and unpacked_floats(value) > slots[key]:
            return True
    return False


# --------------------------------------------------------------------------------------------
# configs: one dict per feature
#   {'kind': 'fl'|'vl'|'fls'|'sp', 'key': str, 'dtype': 'float'|'int64'|'string'|'int32'|
#    'double'|'none', 'shape': list|None, 'default': np array|None, 'allow_missing': bool,
#    'idx': [str], 'val': str|None, 'size': [int], 'sorted': bool, 'idx_str': bool}

TF_DTYPE = {"float": tf.float32, "int64": tf.int64, "string": tf.string, "int32": tf.int32,
            "double": tf.float64, "none": None}
NP_DTYPE = {"float": np.float32, "int64": np.int64}


def hk(s):
    """A key or name as an x<hex> token (UTF-8)."""
    return "x" + (s.encode("utf-8") if isinstance(s, str) else s).hex()


def dims_tok(shape):
    if shape is None:
        return "*"
    if not shape:
        return "_"
    return "x".join("?" if d is None else str(d) for d in shape)


def np_values(dtype, vals, shape=None):
    """A numpy array of float bit patterns / int64s / bytes, in the given shape."""
    if dtype == "float":
        a = np.array(vals, dtype=np.uint32).view(np.float32)
    elif dtype == "int64":
        a = np.array(vals, dtype=np.int64)
    else:
        a = np.empty(len(vals), dtype=object)
        for i, v in enumerate(vals):
            a[i] = v
    return a.reshape(shape if shape is not None else [len(vals)])


def F(kind, key, dtype, shape=(), default=None, allow_missing=True, idx=None, val=None,
      size=None, already_sorted=False, idx_str=None):
    f = {"kind": kind, "key": key, "dtype": dtype,
         "shape": None if shape is None else list(shape), "default": default,
         "allow_missing": allow_missing}
    if kind == "sp":
        f.update(idx=list(idx), val=val, size=list(size), sorted=already_sorted,
                 idx_str=(len(idx) == 1) if idx_str is None else idx_str)
    return f


def feature_line(f):
    k, dt = hk(f["key"]), f["dtype"]
    if f["kind"] == "fl":
        d = "-" if f["default"] is None else arr_tok(f["default"])
        return "fl %s %s %s %s" % (k, dt, dims_tok(f["shape"]), d)
    if f["kind"] == "vl":
        return "vl %s %s" % (k, dt)
    if f["kind"] == "fls":
        d = "-" if f["default"] is None else arr_tok(f["default"])
        return "fls %s %s %s %d %s" % (k, dt, dims_tok(f["shape"]), 1 if f["allow_missing"] else 0,
                                       d)
    return "sp %s %s %d %s %s %s %d" % (
        k, dt, len(f["idx"]), " ".join(hk(i) for i in f["idx"]),
        "-" if f["val"] is None else hk(f["val"]), dims_tok(f["size"]), 1 if f["sorted"] else 0)


def tf_feature(f):
    dt = TF_DTYPE[f["dtype"]]
    if f["kind"] == "fl":
        return tf.FixedLenFeature(f["shape"], dt, default_value=f["default"])
    if f["kind"] == "vl":
        return tf.VarLenFeature(dt)
    if f["kind"] == "fls":
        return tf.FixedLenSequenceFeature(f["shape"], dt, allow_missing=f["allow_missing"],
                                          default_value=f["default"])
    if f["idx_str"]:
        return tf.SparseFeature(f["idx"][0], f["val"], dt, f["size"][0], f["sorted"])
    return tf.SparseFeature(f["idx"], f["val"], dt, f["size"], f["sorted"])


def key_order(k):
    return k.encode("utf-8")


# --------------------------------------------------------------------------------------------
# scenarios


class Scen:
    """One compared call: kind 'batch' | 'single' | 'scalar' | 'raw'."""

    def __init__(self, fam, name, kind, cfg=None, recs=(), names=None, raw=None, note=""):
        self.fam, self.name, self.kind, self.cfg = fam, name, kind, cfg
        self.recs, self.names, self.raw, self.note = list(recs), names, raw, note
        self.sid = None
        self.tf = None
        self.tfq = None


class Registry:
    """Configs (one cid each, shared by all scenarios that use them) and scenarios."""

    def __init__(self):
        self.cfgs = []  # (cid, features, order of the driver's add calls, tf_ok)
        self.scens = []

    def cfg(self, feats, add_order=None, tf_ok=True):
        cid = len(self.cfgs)
        self.cfgs.append((cid, feats, add_order, tf_ok))
        return cid

    def add(self, s):
        s.sid = "s%d" % len(self.scens)
        self.scens.append(s)
        return s

    def driver_lines(self):
        out = []
        for cid, feats, order, _ in self.cfgs:
            fs = [feats[i] for i in order] if order else sorted(feats,
                                                                key=lambda f: key_order(f["key"]))
            out.append("cfg %d %d" % (cid, len(fs)))
            out += [feature_line(f) for f in fs]
        for s in self.scens:
            if s.kind == "batch":
                names = s.names or []
                out.append("batch %s %d %d %d" % (s.sid, s.cfg, len(s.recs), len(names)))
                out += [hk(r) for r in s.recs] + [hk(n) for n in names]
            elif s.kind == "nd":
                (sdims, recs), names = s.nd
                out.append("nd %s %d %s %d %s %d" % (
                    s.sid, s.cfg, dims_tok(sdims), len(recs),
                    "-" if names is None else dims_tok(names[0]),
                    0 if names is None else len(names[1])))
                out += [hk(r) for r in recs] + ([hk(x) for x in names[1]] if names else [])
            elif s.kind in ("single", "scalar"):
                out.append("%s %s %d %s" % (s.kind, s.sid, s.cfg, hk(s.recs[0])))
            else:
                out_type, le, shape, elems = s.raw
                out.append("raw %s %s %d %s %d" % (s.sid, out_type, le, dims_tok(shape),
                                                   len(elems)))
                out += [hk(e) for e in elems]
        return out


# --------------------------------------------------------------------------------------------
# TensorFlow side

_TAILB = re.compile(rb"\n\t \[\[\{\{node [^\n]*\}\}\]\].*\Z", re.S)


def py_error(e):
    """A Python-level config error: INVALID_ARGUMENT, text up to the first ' Received' (or
    ' for '{{node', the graph-node part TF appends to shape-function errors)."""
    m = str(e)
    for sep in (" Received", " for '{{node"):
        i = m.find(sep)
        if i >= 0:
            m = m[:i]
    return ("ERR", 3, m.encode("utf-8"), "py")


def run_error(e):
    if isinstance(e, tf.errors.OpError):
        return ("ERR", e.error_code, tf_message(e).encode("utf-8", "surrogateescape"), "kernel")
    if isinstance(e, UnicodeDecodeError) and isinstance(e.object, bytes):
        # TF's binding could not decode a message holding non-UTF-8 bytes: the exception keeps
        # the kernel message itself (then the node suffix).  The code is lost; every Example
        # kernel error is InvalidArgument, so 3 is assumed (said so in docs/conformance.md).
        return ("ERR", 3, _TAILB.sub(b"", e.object), "nonutf8")
    raise e


def tok_of(v):
    if isinstance(v, (bytes, np.bytes_)):
        # a scalar string output comes back as bytes; np.asarray would make it an 'S' array,
        # which drops trailing NULs
        return "string/_/x" + bytes(v).hex()
    if isinstance(v, tf.SparseTensorValue):
        return "%s;%s;%s" % (arr_tok(v.indices), arr_tok(v.values), arr_tok(v.dense_shape))
    return arr_tok(v)


def obj_array(items, shape=None):
    a = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        a[i] = v
    return a.reshape(shape if shape is not None else [len(items)])


def scalar_obj(b):
    a = np.empty((), dtype=object)
    a[()] = b
    return a


TRACE = False  # --trace: name each scenario on stderr before TF runs it (to find a TF crash)


class TFSide:
    """One small graph and session per config (a session over one big graph pays for pruning
    the whole graph at every new fetch), one more for decode_raw."""

    def __init__(self):
        self.raw_graph = tf.Graph()
        with self.raw_graph.as_default():
            self.rph = tf.placeholder(tf.string, None, name="raw")
        self.raw_ops = {}
        self.raw_sess = new_session(self.raw_graph)

    def run_config(self, feats, scens, guard=True):
        """Builds the three parse ops of one config and runs its scenarios through them.
        guard=False (tf_child only) runs even the Examples that overflow TF's buffer."""
        graph = tf.Graph()
        ops = {}
        with graph.as_default():
            xph = tf.placeholder(tf.string, None, name="any_serialized")
            xnph = tf.placeholder(tf.string, None, name="any_names")
            ph = tf.placeholder(tf.string, [None], name="serialized")
            nph = tf.placeholder(tf.string, [None], name="names")
            sph = tf.placeholder(tf.string, [], name="one")
            for path in ("batch", "single", "scalar", "nd", "nd-no-names"):
                if path.startswith("nd") and all(s.kind != "nd" for s in scens):
                    continue
                try:
                    fd = {f["key"]: tf_feature(f) for f in feats}
                    if path == "nd":
                        ops[path] = tf.parse_example(xph, fd, example_names=xnph)
                    elif path == "nd-no-names":
                        ops[path] = tf.parse_example(xph, fd)
                    elif path == "batch":
                        ops[path] = tf.parse_example(ph, fd, example_names=nph)
                    elif path == "single":
                        ops[path] = tf.parse_single_example(sph, fd)
                    else:
                        ops[path] = tf.parse_example(sph, fd)
                except (ValueError, TypeError) as e:
                    ops[path] = py_error(e)
        sess = new_session(graph)
        for s in scens:
            if guard and any(tf_overflows(r, feats) for r in s.recs):
                s.tf = ("SKIP",)
                continue
            op = ops[s.kind if s.kind != "nd" or s.nd[1] is not None else "nd-no-names"]
            if isinstance(op, tuple):
                s.tf = op
                continue
            if s.kind == "nd":
                feed = {xph: obj_array(s.nd[0][1], s.nd[0][0])}
                if s.nd[1] is not None:
                    feed[xnph] = obj_array(s.nd[1][1], s.nd[1][0])
            elif s.kind == "batch":
                feed = {ph: obj_array(s.recs), nph: obj_array(s.names or [])}
            else:
                feed = {sph: scalar_obj(s.recs[0])}
            if TRACE:
                print("TF run", s.sid, s.name, file=sys.stderr, flush=True)
            try:
                r = sess.run(op, feed)
            except (tf.errors.OpError, UnicodeDecodeError) as e:
                s.tf = run_error(e)
                continue
            s.tf = ("OK", sorted(((hk(k), tok_of(v)) for k, v in r.items()),
                                 key=lambda kv: bytes.fromhex(kv[0][1:])))
        sess.close()

    def run_raw(self, s):
        out_type, le, shape, elems = s.raw
        k = (out_type, le)
        if k not in self.raw_ops:
            with self.raw_graph.as_default():
                try:
                    self.raw_ops[k] = tf.decode_raw(self.rph, TF_RAW[out_type],
                                                    little_endian=bool(le))
                except (ValueError, TypeError) as e:
                    self.raw_ops[k] = py_error(e)
        op = self.raw_ops[k]
        if isinstance(op, tuple):
            return op
        try:
            r = self.raw_sess.run(op, {self.rph: obj_array(elems, shape)})
        except (tf.errors.OpError, UnicodeDecodeError) as e:
            return run_error(e)
        return ("OK", [("", raw_tok(out_type, r))])


TF_RAW = {"half": tf.float16, "float": tf.float32, "double": tf.float64, "int32": tf.int32,
          "uint16": tf.uint16, "uint8": tf.uint8, "int16": tf.int16, "int8": tf.int8,
          "int64": tf.int64, "complex64": tf.complex64, "complex128": tf.complex128,
          "bool": tf.bool, "bfloat16": tf.bfloat16, "string": tf.string}
RAW_SIZE = {"half": 2, "float": 4, "double": 8, "int32": 4, "uint16": 2, "uint8": 1,
            "int16": 2, "int8": 1, "int64": 8, "complex64": 8, "complex128": 16, "bool": 1,
            "bfloat16": 2}


def raw_tok(out_type, r):
    want = np.dtype(TF_RAW[out_type].as_numpy_dtype)
    name = out_type if r.dtype == want else "numpy:%s" % r.dtype
    return "%s/%s/x%s" % (name, dims_tok(list(r.shape)), np.ascontiguousarray(r).tobytes().hex())


# --------------------------------------------------------------------------------------------
# the driver's output


def parse_driver(text):
    res = {}
    for line in text.splitlines():
        sid, rest = line.split(" ", 1)
        if rest.startswith("MISMATCH"):
            res.setdefault(sid + "/mismatch", []).append(rest)
            continue
        p = rest.split(" ")
        if p[0] == "OK":
            outs = []
            for t in p[1:]:
                if "=" in t:
                    k, v = t.split("=", 1)
                else:
                    k, v = "", t
                outs.append((k, v))
            res[sid] = ("OK", outs)
        else:
            res[sid] = ("ERR", int(p[1]), bytes.fromhex(p[2][1:]), int(p[3]))
    return res


def show(r, limit=400):
    if r is None:
        return "<missing>"
    if r[0] == "OK":
        t = "OK " + " ".join("%s=%s" % kv if kv[0] else kv[1] for kv in r[1])
        return t[:limit] + ("..." if len(t) > limit else "")
    return "ERR %d %r" % (r[1], r[2][:limit])


def py_rstrip(b):
    return b.decode("utf-8", "surrogateescape").rstrip().encode("utf-8", "surrogateescape")

_SET = re.compile(rb"\{('[^{}]*')\}\Z")


def norm_set(m):
    """The Python set that ends TF's "Dense and sparse keys must not intersect" message is
    printed in hash order, which changes from run to run: compare its elements sorted."""
    g = _SET.search(m)
    if not g:
        return m
    items = sorted(g.group(1).split(b", "))
    return m[: g.start()] + b"{" + b", ".join(items) + b"}"


_INDEX = re.compile(rb", Index: (\d+)\.  ")


def compare(s, rep, stats):
    """Appends the verdict for s to rep; returns nothing."""
    case = "%s %s" % (s.sid, s.name)
    t, q = s.tf, s.tfq
    if s.mismatch:
        rep.fail(s.fam, case, "driver cross-check: " + " | ".join(s.mismatch)[:600])
        return
    if q is None:
        rep.fail(s.fam, case, "no tfq result")
        return
    if t[0] == "OK" and q[0] == "OK":
        if s.kind != "raw":
            keys = [k for k, _ in q[1]]
            if keys != sorted(keys, key=lambda k: bytes.fromhex(k[1:])):
                rep.fail(s.fam, case, "tfq outputs not in sorted key order: %s" % keys)
                return
            if sorted(q[1]) != sorted(t[1]):
                rep.fail(s.fam, case, "TF %s | tfq %s" % (show(t), show(q)))
                return
        elif q[1] != t[1]:
            rep.fail(s.fam, case, "TF %s | tfq %s" % (show(t), show(q)))
            return
        rep.ok(s.fam)
        return
    if t[0] != q[0]:
        rep.fail(s.fam, case, "TF %s | tfq %s" % (show(t), show(q)))
        return
    tcode, tmsg, how = t[1], t[2], t[3]
    qcode, qmsg, qrec = q[1], q[2], q[3]
    if not tmsg:
        rep.fail(s.fam, case, "TF's message is empty: nothing to compare (%s)" % show(t))
        return
    if tcode != qcode:
        rep.fail(s.fam, case, "code: TF %s | tfq %s" % (show(t), show(q)))
        return
    if how == "py":
        tmsg, qmsg = norm_set(tmsg), norm_set(qmsg)
    if tmsg != qmsg:
        nul = b"Could not parse example input" in tmsg and any(b"\0" in r for r in s.recs)
        # tfq keeps 1023 bytes of a message (include/tfq/status.h); TF keeps all of it.
        if len(tmsg) > 1023 and qmsg == tmsg[:1023]:
            stats["cut1023"] += 1
            rep.deviation(s.fam, case, "tfq status messages keep the first 1023 bytes")
            return
        elif nul and py_rstrip(qmsg) == tmsg and not qmsg.endswith(b"'"):
            # the message was cut at a NUL (both sides); TF's Python layer then also strips
            # the whitespace (str.rstrip(): \x1c-\x1f count too) that ends the cut message
            stats["nulstrip"] += 1
        else:
            rep.fail(s.fam, case, "message: TF %s | tfq %s" % (show(t), show(q)))
            return
    if how == "nonutf8":
        stats["nonutf8"] += 1
    elif b"Could not parse example input" in tmsg and any(b"\0" in r for r in s.recs):
        stats["nulcut"] += 1
    if s.kind == "batch":
        m = _INDEX.search(tmsg)
        if m and how != "py" and int(m.group(1)) != qrec:
            rep.fail(s.fam, case, "tfq_status_record %d, TF's message names index %s"
                     % (qrec, m.group(1).decode()))
            return
    rep.ok(s.fam)


# --------------------------------------------------------------------------------------------
# random values, Examples and configs

KEYS = ["a", "b", "ids", "v", "q", "\u00e9t\u00e9", "", "A", "label", "x.y", "w", "z9"]
FLOAT_SPECIAL = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                 0x7F800001, 0x7FA12345, 0xFFFFFFFF, 0x00000001, 0x007FFFFF, 0x00800000,
                 0x7F7FFFFF, 0x3F800000, 0xBF800000]
INT_SPECIAL = [0, 1, -1, 127, 128, -128, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 2 ** 63 - 1, -2 ** 63,
               2 ** 32, -2 ** 40 - 7, 300, 16384]


class Gen:
    def __init__(self, rng):
        self.r = rng

    def f32(self):
        r = self.r.random()
        if r < 0.5:
            return fbits(round(self.r.uniform(-1000, 1000), self.r.randint(0, 3)))
        if r < 0.8:
            return self.r.choice(FLOAT_SPECIAL)
        return self.r.getrandbits(32)

    def i64(self):
        r = self.r.random()
        if r < 0.5:
            return self.r.randint(-50, 1000)
        if r < 0.8:
            return self.r.choice(INT_SPECIAL)
        return self.r.getrandbits(64) - 2 ** 63

    def bstr(self):
        r = self.r.random()
        if r < 0.15:
            return b""
        if r < 0.55:
            return bytes(self.r.choice(b"abcxyz019 _-") for _ in range(self.r.randint(1, 8)))
        if r < 0.7:
            return "\u00e9\u4e2d\U0001f600".encode("utf-8")[: self.r.randint(1, 9)]
        if r < 0.85:
            return b"a\x00b" + bytes([self.r.randint(0, 3)])
        return bytes(self.r.getrandbits(8) for _ in range(self.r.randint(1, 12)))

    def values(self, dtype, n):
        g = {"float": self.f32, "int64": self.i64, "string": self.bstr}[dtype]
        return [g() for _ in range(n)]

    def name(self):
        r = self.r.random()
        if r < 0.7:
            return "ex%d" % self.r.randint(0, 999)
        if r < 0.9:
            return "n\u00e4me/%d" % self.r.randint(0, 9)
        if r < 0.95:
            return ""
        return bytes([0x6E, 0xFF, 0x80, self.r.randint(1, 255)])  # not UTF-8

    # ---- one Feature value ----
    def feature(self, dtype, vals, benign=True):
        """Feature bytes for vals of dtype, with random benign encoding variants."""
        r = self.r
        packed = r.random() < 0.6
        tail = b""
        if benign and r.random() < 0.08:
            # a second kind after the first list, or an unknown field: ignored by TF
            tail = r.choice([int64_list([5]), float_list([fbits(1.0)]), bytes_list([b"zz"]),
                             b"\x20\x07", b"\x2a\x02hi"])
        if dtype == "string":
            return bytes_list(vals) + tail
        if dtype == "float":
            if benign and packed and vals and r.random() < 0.15:
                q = r.randrange(4)
                body = ld(0x0A, b"".join(f32b(v) for v in vals) + b"\x01\x02\x03"[:q])
                if r.random() < 0.4:  # a second packed chunk or unpacked items: ignored
                    body += r.choice([ld(0x0A, f32b(self.f32())), b"\x0d" + f32b(self.f32())])
                return ld(0x12, body) + tail
            return float_list(vals, packed) + tail
        pad = r.randint(1, 3) if benign and r.random() < 0.1 else 0
        if benign and packed and vals and r.random() < 0.1:
            body = ld(0x0A, b"".join(varint(v) for v in vals))
            body += r.choice([ld(0x0A, varint(7)), b"\x08\x09"])
            return ld(0x1A, body) + tail
        if pad and any((v & M64) >= 1 << 56 for v in vals):
            pad = 0  # keep every varint at 10 bytes or fewer
        return int64_list(vals, packed, pad=pad) + tail

    def bad_feature(self, dtype, vals):
        """A malformed Feature (list failure, bad first byte, broken varint, ...)."""
        r = self.r
        c = r.randrange(7)
        if c == 0:
            return bytes([r.choice([0x22, 0x08, 0x0D, 0x2A, 0x10, 0x32, 0x00])]) + b"\x01\x02"
        if c == 1 and dtype == "string":
            return ld(0x0A, ld(0x0A, b"ok") + b"\x10\x01")  # unknown field inside BytesList
        if c == 1 and dtype == "float":  # unpacked then packed
            return ld(0x12, b"\x0d" + f32b(self.f32()) + ld(0x0A, f32b(self.f32())))
        if c == 1:
            return ld(0x1A, b"\x08\x01" + ld(0x0A, varint(2)))
        if c == 2 and dtype == "int64":  # 11-byte varint
            return ld(0x1A, ld(0x0A, b"\xff" * 10 + b"\x01"))
        if c == 2 and dtype == "float":  # packed block declares more than the list holds
            return ld(0x12, b"\x0a\x08" + f32b(self.f32()))
        if c == 2:
            return ld(0x0A, b"\x0a\x05ab")
        if c == 3:  # a list item with the wrong wire type
            return bytes([{"string": 0x0A, "float": 0x12, "int64": 0x1A}[dtype]]) + \
                varint(3) + b"\x15\x01\x02"
        if c == 4:  # empty list: present, zero values
            return bytes([{"string": 0x0A, "float": 0x12, "int64": 0x1A}[dtype], 0])
        if c == 5:  # the list's length overruns the Feature
            full = self.feature(dtype, vals or self.values(dtype, 1), benign=False)
            return full[:-1] if len(full) > 2 else full
        return self.feature(dtype, vals, benign=True)


def prod(shape):
    p = 1
    for d in shape:
        p *= d
    return p


def rand_shape(rng, zero_ok):
    rank = rng.choice([0, 0, 1, 1, 1, 2])
    return [rng.choice([0, 1, 2, 3]) if zero_ok and rng.random() < 0.1 else rng.randint(1, 3)
            for _ in range(rank)]


def reshape_any(rng, n):
    """A random nesting of n elements: [n], a 2-d factorisation or (n == 1) a scalar."""
    if n == 1 and rng.random() < 0.4:
        return []
    divs = [d for d in range(1, n + 1) if n % d == 0]
    if n > 1 and rng.random() < 0.5:
        d = rng.choice(divs)
        return [d, n // d]
    return [n]


def rand_config(rng, gen):
    """A valid random features dict (no config error)."""
    n = rng.choice([1, 1, 2, 2, 3, 4])
    keys = rng.sample(KEYS, len(KEYS))
    feats = []
    sparse_dt = {}  # keys read as VarLen -> dtype
    dense = set()
    while len(feats) < n and keys:
        key = keys.pop()
        kind = rng.choice(["fl", "fl", "fl", "vl", "vl", "fls", "fls", "sp"])
        dt = rng.choice(["float", "int64", "string"])
        if kind == "fl":
            if key in sparse_dt:
                continue
            shape = rand_shape(rng, True)
            d = None
            if rng.random() < 0.5:
                d = np_values(dt, gen.values(dt, prod(shape)), reshape_any(rng, prod(shape)))
            feats.append(F("fl", key, dt, shape, d))
            dense.add(key)
        elif kind == "vl":
            if key in dense or sparse_dt.get(key, dt) != dt:
                continue
            feats.append(F("vl", key, dt))
            sparse_dt[key] = dt
        elif kind == "fls":
            if key in sparse_dt:
                continue
            shape = rand_shape(rng, False)
            d = np_values(dt, gen.values(dt, 1), []) if rng.random() < 0.6 else None
            feats.append(F("fls", key, dt, shape, d))
            dense.add(key)
        else:
            ni = rng.choice([1, 1, 1, 2])
            # an empty index or value key is a config error (example_config covers it)
            others = [k for k in KEYS if k and k != key and k not in dense]
            if len(others) < ni + 1:
                continue
            picked = rng.sample(others, ni + 1)
            idx, val = picked[:ni], picked[ni]
            if any(sparse_dt.get(i, "int64") != "int64" for i in idx) or \
                    sparse_dt.get(val, dt) != dt or key in sparse_dt:
                continue
            size = [rng.randint(1, 6) for _ in range(ni)]
            feats.append(F("sp", key, dt, idx=idx, val=val, size=size,
                           already_sorted=rng.random() < 0.3,
                           idx_str=(ni == 1 and rng.random() < 0.7)))
            for i in idx:
                sparse_dt[i] = "int64"
            sparse_dt[val] = dt
            dense.add(key)  # a SparseFeature's own key is an output: no other feature takes it
    # an index or value key may also be a VarLen feature of its own (same dtype)
    return feats


def wire_plan(feats):
    """key -> (dtype, role) of the keys an Example should carry for this config."""
    plan = {}
    for f in feats:
        if f["kind"] == "sp":
            for i in f["idx"]:
                plan.setdefault(i, ("int64", ("spidx", f)))
            plan.setdefault(f["val"], (f["dtype"], ("spval", f)))
    for f in feats:
        if f["kind"] != "sp":
            plan.setdefault(f["key"], (f["dtype"], (f["kind"], f)))
    return plan


def rand_example(rng, gen, feats, p_bad):
    """Serialized Example for the config, mostly well-formed; p_bad scales the corruptions."""
    plan = wire_plan(feats)
    entries = []  # (key, value bytes)
    sp_len = {}
    sp_absent = {}
    for key, (dt, (role, f)) in plan.items():
        r = rng.random()
        required = role == "fl" and f["default"] is None and prod(f["shape"]) > 0
        if role in ("spidx", "spval"):
            # the index and value lists of a SparseFeature are absent together (mostly)
            r = sp_absent.setdefault(id(f), r) if rng.random() < 0.95 else r
        if r < (0.03 if required else 0.2):
            continue
        if role == "fl":
            n = prod(f["shape"])
        elif role == "fls":
            n = rng.randint(0, 3) * prod(f["shape"])
        elif role in ("spidx", "spval"):
            n = sp_len.setdefault(id(f), rng.randint(0, 4))
        else:
            n = rng.randint(0, 4)
        if role == "spidx":
            vals = [rng.randint(-1, max(f["size"]) + 1) if rng.random() < 0.1
                    else rng.randrange(max(f["size"])) for _ in range(n)]
        else:
            vals = gen.values(dt, n)
        r = rng.random()
        if r < p_bad * 0.25:  # wrong kind
            other = rng.choice([d for d in ("float", "int64", "string") if d != dt])
            value = gen.feature(other, gen.values(other, max(n, 1)))
        elif r < p_bad * 0.55:  # wrong count
            m = max(0, n + rng.choice([-2, -1, 1, 2]))
            value = gen.feature(dt, gen.values(dt, m))
        elif r < p_bad * 0.8:
            value = gen.bad_feature(dt, vals)
        elif r < p_bad * 0.8 + 0.04:
            value = b""  # an empty Feature (kind none)
        else:
            value = gen.feature(dt, vals)
        entries.append((key, value))
        if rng.random() < 0.1:  # a duplicate entry for the same key
            pos = rng.randrange(len(entries) + 1)
            c = rng.random()
            if c < 0.3:
                dup = b""
            elif c < 0.6:
                dup = gen.feature(dt, gen.values(dt, rng.randint(0, 3)))
            elif c < 0.95:
                other = rng.choice(["float", "int64", "string"])
                dup = gen.feature(other, gen.values(other, 1))
            else:
                dup = gen.bad_feature(dt, [])
            entries.insert(pos, (key, dup))
    # unrequested keys, with well-formed or garbage values (never looked at)
    for _ in range(rng.choice([0, 0, 1, 2])):
        k = rng.choice(["zz", "unused", "a b", "\u00fc"] + [k for k in KEYS if k not in plan])
        v = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 6))) if rng.random() < 0.4 \
            else gen.feature("int64", gen.values("int64", 2))
        entries.insert(rng.randrange(len(entries) + 1), (k, v))
    enc = [entry(k, v, "vk" if rng.random() < 0.15 else "kv") for k, v in entries]
    # entry-level corruption
    if enc and rng.random() < p_bad * 0.15:
        i = rng.randrange(len(enc))
        k = entries[i][0].encode("utf-8")
        enc[i] = rng.choice([ld(0x0A, ld(0x0A, k)), ld(0x0A, ld(0x12, entries[i][1])),
                             ld(0x0A, ld(0x0A, k) + ld(0x12, b"") + ld(0x0A, b"x")), b"\x0a\x00",
                             ld(0x0A, ld(0x0A, k) + ld(0x12, b"") + b"\x18\x01")])
    # Features blocks (several blocks merge), unknown Example-level fields
    blocks = []
    while enc:
        cut = rng.randint(1, len(enc)) if rng.random() < 0.2 else len(enc)
        blocks.append(enc[:cut])
        enc = enc[cut:]
    if not blocks and rng.random() < 0.5:
        blocks.append([])
    parts = []
    for b in blocks:
        body = b"".join(b)
        if rng.random() < p_bad * 0.05:
            body += rng.choice([b"\x10\x01", b"\x12\x00"])  # unknown field inside Features
        parts.append(ld(0x0A, body))
    if rng.random() < 0.15:
        unk = rng.choice([b"\x10\x96\x01", b"\x19" + bytes(8), b"\x25" + bytes(4),
                          ld(0x2A, b"meta"), b"\x08\x01", b"\x00\x05", b"\x80\x01\x00",
                          b"\xf8\xff\xff\xff\x0f\x01"])
        parts.insert(rng.randrange(len(parts) + 1), unk)
    data = b"".join(parts)
    r = rng.random()
    if r < p_bad * 0.1 and data:  # truncated
        data = data[: rng.randrange(len(data))]
    elif r < p_bad * 0.2 and data:  # a byte replaced
        i = rng.randrange(len(data))
        data = data[:i] + bytes([rng.getrandbits(8)]) + data[i + 1:]
    elif r < p_bad * 0.25:
        data += rng.choice([b"\x00", b"\x0b", b"\x0c\x01", b"\x0f", b"\x2a\x09ab",
                            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"])
    elif r < p_bad * 0.3 and parts and parts[-1][:1] == b"\x0a" and blocks and blocks[-1]:
        # the last Features block declares more bytes than follow, stopping at an entry edge
        body = b"".join(blocks[-1])
        data = b"".join(parts[:-1]) + b"\x0a" + varint(len(body) + rng.randint(1, 9)) + body
    return data


def safe_example(rng, gen, feats, p_bad):
    """rand_example, drawn again while TF would overflow a FixedLen float slot with it."""
    for _ in range(50):
        rec = rand_example(rng, gen, feats, p_bad)
        if not tf_overflows(rec, feats):
            return rec
    return example()


def gen_random(reg, rng, n_cfg, batches_per_cfg):
    gen = Gen(rng)
    for ci in range(n_cfg):
        feats = rand_config(rng, gen)
        order = list(range(len(feats)))
        rng.shuffle(order)
        cid = reg.cfg(feats, add_order=order)
        desc = "cfg%d[%s]" % (cid, ",".join("%s:%s:%s" % (f["kind"], f["key"], f["dtype"])
                                             for f in feats))
        for bi in range(batches_per_cfg):
            b = rng.choice([0, 1, 1, 2, 3, 3, 4, 5, 8]) if bi else rng.choice([1, 2, 3])
            p_bad = rng.choice([0.0, 0.1, 0.3, 0.6])
            recs = [safe_example(rng, gen, feats, p_bad) for _ in range(b)]
            if rng.random() < 0.08 and recs:  # two serialized Examples concatenated
                i = rng.randrange(len(recs))
                cat = recs[i] + safe_example(rng, gen, feats, p_bad)
                recs[i] = cat if not tf_overflows(cat, feats) else recs[i]
            names = None
            if rng.random() < 0.5:
                names = [gen.name() for _ in recs]
                if rng.random() < 0.06:
                    names = names + ["extra"] if rng.random() < 0.5 or not names else names[1:]
            reg.add(Scen("example_random_batch", "%s/batch%d/B%d/%s" % (
                desc, bi, b, "names" if names is not None else "no-names"), "batch", cid,
                recs, names))
            for i, rec in enumerate(recs[:3]):
                for kind in ("single", "scalar"):
                    reg.add(Scen("example_random_" + kind, "%s/batch%d/e%d" % (desc, bi, i),
                                 kind, cid, [rec]))


# --------------------------------------------------------------------------------------------
# the spec's numbered cases


def gen_spec(reg):
    fam = "example_spec"

    def both(name, feats, recs, names=None, single=None, paths=("batch", "single"), cid=None):
        cid = reg.cfg(feats) if cid is None else cid
        if "batch" in paths:
            reg.add(Scen(fam, name + "/batch", "batch", cid, recs, names))
        if "single" in paths:
            for i, r in enumerate(recs if single is None else [recs[j] for j in single]):
                reg.add(Scen(fam, "%s/single%d" % (name, i), "single", cid, [r]))
        if "scalar" in paths:
            for i, r in enumerate(recs if single is None else [recs[j] for j in single]):
                reg.add(Scen(fam, "%s/scalar%d" % (name, i), "scalar", cid, [r]))
        return cid

    one = fbits(1.0)
    two = fbits(2.0)
    H = bytes.fromhex
    # ---- §6 worked cases ----
    both("s6.1", [F("fl", "a", "float", [2])],
         [H("0a130a110a0161120c120a0a080000803f00000040"),
          H("0a130a110a0161120c120a0d0000803f0d00000040")], paths=("batch", "single", "scalar"))
    ids = [example(("ids", "int64", [1, 2])), example(), example(("ids", "int64", [3]))]
    both("s6.2", [F("vl", "ids", "int64")], ids, paths=("batch", "single", "scalar"))
    both("s6.3", [F("fl", "v", "float", [3], np_values("float", [fbits(x) for x in (7, 8, 9)]))],
         [example(("v", "float", [fbits(0.5), fbits(1.5), fbits(2.5)])), example()])
    both("s6.4", [F("fls", "q", "int64", [], np_values("int64", [-1], []))],
         [example(("q", "int64", [10, 20])), example(), example(("q", "int64", [30]))])
    age = [example(("age", "int64", [30])), example(("name", "string", [b"bob"]))]
    cid = both("s6.5", [F("fl", "age", "int64", [])], age, names=["x0", "x1"])
    both("s6.5/no-names", None, age, cid=cid, paths=("batch",))
    a1 = [example(("a", "int64", [1]))]
    both("s6.6/fl", [F("fl", "a", "float", [])], a1)
    both("s6.6/vl", [F("vl", "a", "string")], a1)
    both("s6.6/fls", [F("fls", "a", "float", [])], a1)
    both("s6.7", [F("fl", "a", "float", [3])], [example(("a", "float", [one, two]))])
    both("s6.8", [F("fl", "a", "float", [2])], [H("0a0501")])
    e9 = [H("0a070a050a01611200")]
    both("s6.9/vl", [F("vl", "a", "float")], e9)
    both("s6.9/fl-default", [F("fl", "a", "float", [], np_values("float", [fbits(3.0)], []))], e9)
    both("s6.9/fl-required", [F("fl", "a", "float", [])], e9)
    both("s6.10", [F("fl", "a", "float", [])],
         [H("2a046d6574610a0f0a0d0a0161120812060a0400008040")])
    both("s6.11", [F("fl", "f", "float", [2]), F("vl", "s", "string"),
                   F("fls", "q", "int64", [])], [], paths=("batch",))

    # ---- §5 error rows, both paths ----
    both("s5.structure", [F("vl", "a", "int64")], [H("0a0501"), H("0a03")])
    both("s5.bad-first-byte", [F("fl", "a", "int64", [])], [features([entry("a", b"\x22\x00")])])
    for dt, other in (("float", "int64"), ("int64", "string"), ("string", "float")):
        rec = [example(("a", other, [1] if other == "int64" else
                        ([one] if other == "float" else [b"s"])))]
        both("s5.kind/fl/%s<-%s" % (dt, other), [F("fl", "a", dt, [])], rec)
        both("s5.kind/fls/%s<-%s" % (dt, other), [F("fls", "a", dt, [])], rec)
        both("s5.kind/vl/%s<-%s" % (dt, other), [F("vl", "a", dt)], rec)
    bad_lists = {"string": ld(0x0A, ld(0x0A, b"x") + b"\x10\x01"),
                 "float": ld(0x12, b"\x0d" + f32b(one) + ld(0x0A, f32b(two))),
                 "int64": ld(0x1A, b"\x08\x01" + ld(0x0A, b"\x02"))}
    for dt, v in bad_lists.items():
        rec = [features([entry("a", v)])]
        both("s5.list-failure/fl/%s" % dt, [F("fl", "a", dt, [])], rec)
        both("s5.list-failure/vl/%s" % dt, [F("vl", "a", dt)], rec)
        both("s5.list-failure/fls/%s" % dt, [F("fls", "a", dt, [])], rec)
    for dt, vals in (("float", [one, two]), ("int64", [1, 2]), ("string", [b"x", b"y"])):
        rec = [example(("a", dt, vals))]
        both("s5.count/%s/too-few" % dt, [F("fl", "a", dt, [3])], rec)
        both("s5.count/%s/too-many" % dt, [F("fl", "a", dt, [])], rec)
        both("s5.count/%s/[2,2]" % dt, [F("fl", "a", dt, [2, 2])], rec)
        rec3 = [example(("a", dt, vals + vals[:1]))]
        both("s5.stride/%s" % dt, [F("fls", "a", dt, [2])], rec3)
        both("s5.stride/%s/[2,1]" % dt, [F("fls", "a", dt, [2, 1])], rec3)
        both("s5.required/%s" % dt, [F("fl", "a", dt, [2])], [example(("b", dt, vals))],
             names=["nm"])
    # lowest-index failing example wins; within one example reverse wire order, then required
    recs = [example(("a", "float", [one])), example(("a", "int64", [1])), H("0a0501")]
    both("s4.lowest-index", [F("fl", "a", "float", [])], recs, names=["e0", "e1", "e2"])
    both("s4.lowest-index2", [F("fl", "a", "float", [])], [recs[0], recs[2], recs[1]])
    rev = [features([entry("a", int64_list([1])), entry("b", float_list([one, two]))])]
    both("s4.reverse-wire-order", [F("fl", "a", "float", []), F("fl", "b", "float", []),
                                   F("fl", "c", "float", [])], rev)
    rev2 = [features([entry("b", float_list([one, two])), entry("a", int64_list([1]))])]
    both("s4.reverse-wire-order2", [F("fl", "a", "float", []), F("fl", "b", "float", [])], rev2)
    both("s4.required-sorted-order", [F("fl", "b", "int64", []), F("fl", "a", "string", [])],
         [example(("z", "int64", [1]))])
    cid = reg.cfg([F("fl", "a", "float", [])])
    reg.add(Scen(fam, "s4.names-shape", "batch", cid, [example(("a", "float", [one]))] * 2,
                 ["n0"]))
    reg.add(Scen(fam, "s4.names-shape3", "batch", cid, [example(("a", "float", [one]))],
                 ["n0", "n1", "n2"]))
    reg.add(Scen(fam, "s4.B0-required", "batch", cid, []))
    reg.add(Scen(fam, "s4.names-unicode", "batch", cid, [example(("a", "int64", [1]))],
                 ["n\u00e4me \u4e2d"]))

    # ---- §1/§4 shapes of serialized and names (parse_example over placeholders of unknown
    # shape, so the kernel speaks, not the graph-time shape function) ----
    ok1 = example(("a", "float", [one]))
    cid = reg.cfg([F("fl", "a", "float", [], np_values("float", [two], []))])
    for name, ser, names in (
            ("serialized[1,1]", ([1, 1], [ok1]), None),
            ("serialized[0,1]", ([0, 1], []), None),
            ("serialized[2,2]-names[0]", ([2, 2], [ok1] * 4), ([0], [])),
            ("serialized[]-no-names", ([], [ok1]), None),
            ("serialized[]-names[]", ([], [ok1]), ([], ["n"])),
            ("serialized[]-names[0]", ([], [ok1]), ([0], [])),
            ("serialized[]-names[1]", ([], [ok1]), ([1], ["n"])),
            ("serialized[2]-names[]", ([2], [ok1, ok1]), ([], ["n"])),
            ("serialized[2]-names[1,1]", ([2], [ok1, ok1]), ([1, 1], ["n"])),
            ("serialized[2]-names[1,2]", ([2], [ok1, ok1]), ([1, 2], ["n", "m"])),
            ("serialized[2]-names[2,1]", ([2], [ok1, ok1]), ([2, 1], ["n", "m"])),
            ("serialized[1]-names[1,1]", ([1], [ok1]), ([1, 1], ["n"])),
            ("serialized[2]-names[2]", ([2], [ok1, b"\x0a\x01"]), ([2], ["n0", "n1"])),
            ("serialized[0]-names[0]", ([0], []), ([0], []))):
        sc = reg.add(Scen(fam, "s1.shapes/" + name, "nd", cid))
        sc.nd = (ser, names)

    # ---- §2.2 wire rules ----
    a_f = entry("a", float_list([fbits(4.0)]))
    w = [F("fl", "a", "float", [], np_values("float", [fbits(-9.0)], []))]
    wire = {
        "nonminimal-varint-len": b"\x0a\x87\x00" + a_f,
        "varint-11-bytes": b"\x0a" + b"\x80" * 10 + b"\x01" + a_f,
        "wiretype3": b"\x0b" + features([a_f]),
        "wiretype4": b"\x0c" + features([a_f]),
        "wiretype6": b"\x0e" + features([a_f]),
        "wiretype7": b"\x0f" + features([a_f]),
        "field1-varint-skipped": b"\x08\x05" + features([a_f]),
        "field1-fixed32-skipped": b"\x0d\x01\x02\x03\x04" + features([a_f]),
        "tag00-skipped": b"\x00\x05" + features([a_f]),
        "trailing-00": features([a_f]) + b"\x00",
        "len-skip-past-end": features([a_f]) + b"\x2a\x09ab",
        "fixed64-skip-past-end": features([a_f]) + b"\x19\x01",
        "two-features-merge": features([entry("z", b"")]) + features([a_f]),
        "concatenated": example(("a", "float", [one])) + example(("a", "float", [two])),
        "features-unknown-field": ld(0x0A, b"\x10\x01" + a_f),
        "entry-value-first": features([entry("a", float_list([one]), "vk")]),
        "entry-key-repeated": features([ld(0x0A, ld(0x0A, b"a") + ld(0x0A, b"a"))]),
        "entry-value-repeated": features([ld(0x0A, ld(0x12, float_list([one])) +
                                             ld(0x12, float_list([two])))]),
        "entry-empty": features([b"\x0a\x00"]),
        "entry-third-field": features([ld(0x0A, ld(0x0A, b"a") + ld(0x12, float_list([one])) +
                                          ld(0x0A, b"a"))]),
        "entry-unknown-field": features([ld(0x0A, ld(0x0A, b"a") + b"\x18\x01" +
                                            ld(0x12, float_list([one])))]),
        "key-truncated": b"\x0a\x06\x0a\x04\x0a\x05ab",
        "value-truncated": b"\x0a\x0a\x0a\x08\x0a\x01a\x12\x06\x12\x04\x0d\x00",
        "key-case": example(("A", "float", [one])),
        "entry-len-overrun-boundary": b"\x0a\x7f" + a_f,
        "entry-len-overrun-mid": b"\x0a\x7f" + a_f[:-2],
        "neg-zero-and-nan-payload": example(("a", "float", [0x80000000])),
        "snan": example(("a", "float", [0x7F800001])),
        "garbage-unrequested": features([entry("zz", b"\xff\xfe\x01"), a_f]),
        "long-input-then-broken": ld(0x2A, b"0123456789abcdef" * 100) + features([a_f]) +
        b"\x0b",
        "feature-second-kind": features([entry("a", float_list([one]) + int64_list([1]))]),
        "feature-second-float": features([entry("a", float_list([one]) + float_list([two]))]),
    }
    for k, v in wire.items():
        both("s2.2." + k, w, [v])
    i1 = [F("vl", "a", "int64")]
    for k, v in {
        "int64-negative-10-bytes": example(("a", "int64", [-1, -2 ** 63, 2 ** 63 - 1])),
        "int64-bits-beyond-64-dropped": features([entry("a", ld(0x1A, ld(
            0x0A, b"\xff" * 9 + b"\x7f")))]),
        "int64-unpacked": features([entry("a", int64_list([5, -5], packed=False))]),
        "int64-nonminimal": features([entry("a", int64_list([1, 300], pad=3))]),
        "int64-packed-empty": features([entry("a", ld(0x1A, b"\x0a\x00"))]),
        "int64-list-empty": features([entry("a", b"\x1a\x00")]),
        "int64-packed-truncated-varint": features([entry("a", ld(0x1A, ld(0x0A, b"\x81")))]),
        "int64-packed-len-overrun": features([entry("a", ld(0x1A, b"\x0a\x05\x01\x02"))]),
        "int64-unpacked-bad-wiretype": features([entry("a", ld(0x1A, b"\x08\x01\x10\x02"))]),
        "int64-varint-11-bytes": features([entry("a", ld(0x1A, ld(0x0A, b"\xff" * 10 +
                                                                   b"\x01")))]),
    }.items():
        both("s2.2." + k, i1, [v])
    fv = [F("vl", "a", "float")]
    f2 = [F("fl", "a", "float", [2])]
    f0 = [F("fl", "a", "float", [])]
    fls = [F("fls", "a", "float", [])]
    short = features([entry("a", ld(0x12, b"\x0a\x08" + f32b(one)))])
    for cfg_name, cfg in (("vl", fv), ("fl[2]", f2), ("fl[]", f0), ("fls", fls)):
        both("s2.2.packed-float-declares-8-carries-4/" + cfg_name, cfg, [short])
    both("s2.2.float-unpacked", fv, [features([entry("a", float_list([one, two], False))])])
    both("s2.2.float-bad-first-byte-in-list", fv, [features([entry("a", ld(0x12, b"\x08\x01"))])])
    both("s2.2.key-empty", [F("fl", "", "int64", [])], [example(("", "int64", [7]))])
    both("s2.2.key-utf8", [F("vl", "\u00e9t\u00e9", "string")],
         [example(("\u00e9t\u00e9", "string", [b"a\x00b", b""]))])
    both("s2.2.bytes-nul-and-binary", [F("fl", "a", "string", [3])],
         [example(("a", "string", [b"\x00", b"\xff\xfe", "\u00e9".encode()]))])

    # ---- §2.3 duplicates ----
    dup_last_empty = features([entry("a", float_list([one])), entry("a", b"")])
    dup_last_wins = features([entry("a", float_list([one])), entry("a", float_list([two]))])
    dup_bad_earlier = features([entry("a", b"\x22\x01"), entry("a", float_list([two]))])
    dup_wrong_kind_earlier = features([entry("a", int64_list([1])),
                                       entry("a", float_list([two]))])
    dup_bad_list_earlier = features([entry("a", ld(0x12, b"\x0d\x01")),
                                     entry("a", float_list([two]))])
    for n, rec in (("last-empty", dup_last_empty), ("last-wins", dup_last_wins),
                   ("unsupported-earlier", dup_bad_earlier),
                   ("wrong-kind-earlier", dup_wrong_kind_earlier),
                   ("bad-list-earlier", dup_bad_list_earlier)):
        both("s2.3.%s/fl" % n, [F("fl", "a", "float", [], np_values("float", [fbits(-1)], []))],
             [rec])
        both("s2.3.%s/fl-required" % n, [F("fl", "a", "float", [])], [rec])
        both("s2.3.%s/vl" % n, fv, [rec], paths=("batch", "single", "scalar"))
        both("s2.3.%s/fls" % n, fls, [rec])

    # ---- §2.4 table rows ----
    t24 = {
        "two-packed-chunks": features([entry("a", ld(0x12, ld(0x0A, f32b(one)) +
                                                     ld(0x0A, f32b(two))))]),
        "packed-then-unpacked": features([entry("a", ld(0x12, ld(0x0A, f32b(one)) + b"\x0d" +
                                                        f32b(two)))]),
        "unpacked-then-packed": features([entry("a", ld(0x12, b"\x0d" + f32b(one) +
                                                        ld(0x0A, f32b(two))))]),
        "packed-len-not-multiple-of-4": features([entry("a", ld(0x12, ld(0x0A, f32b(one) +
                                                                         b"\x01\x02")))]),
        "feature-two-kinds": features([entry("a", int64_list([1]) + float_list([one]))]),
        "feature-unknown-before": features([entry("a", b"\x20\x01" + float_list([one]))]),
        "feature-unknown-after": features([entry("a", float_list([one]) + b"\x20\x01")]),
        "features-unknown-field": ld(0x0A, entry("a", float_list([one])) + b"\x10\x01"),
        "entry-unknown-field": features([ld(0x0A, ld(0x0A, b"a") + ld(0x12, float_list([one]))
                                            + b"\x20\x01")]),
        "bytes-list-unknown-field": features([entry("a", ld(0x0A, ld(0x0A, b"s") +
                                                            b"\x10\x01"))]),
        "entry-key-only": features([ld(0x0A, ld(0x0A, b"a"))]),
        "entry-value-only": features([ld(0x0A, ld(0x12, float_list([one])))]),
        "declared-longer-stops-at-boundary": b"\x0a\x40" + entry("a", float_list([one])),
        "garbage-in-unrequested": features([entry("b", b"\x12\x09\xff"),
                                            entry("a", float_list([one]))]),
        "duplicate-last-empty": dup_last_empty,
    }
    for k, v in t24.items():
        for cfg_name, cfg in (("fl", [F("fl", "a", "float", [])]), ("vl", fv),
                              ("vl-string", [F("vl", "a", "string")])):
            both("s2.4.%s/%s" % (k, cfg_name), cfg, [v])

    # ---- tfq-only: an unpacked float_list longer than a FixedLen float slot makes TF 2.21
    # write past its output buffer (heap corruption, abort or SIGSEGV), so TF never runs these;
    # tfq must give the count error TF reports when it survives (observed for small overflows)
    for shape, n in (([0], 1), ([1], 3), ([2], 40), ([2, 2], 5)):
        cid = reg.cfg([F("fl", "a", "float", shape)], tf_ok=False)
        rec = features([entry("a", float_list([one] * n, packed=False))])
        for kind, want in (
                ("batch", "Name: <unknown>, Key: a, Index: 0.  Number of float values != "
                          "expected.  Values size: %d but output shape: [%s]"
                 % (n, ",".join(map(str, shape)))),
                ("single", "Key: a.  Can't parse serialized Example: Some float_list slice was "
                           "not parsed.")):
            sc = reg.add(Scen(fam, "tfq-only.unpacked-float-overflow%s/n%d/%s" % (shape, n, kind),
                              kind, cid, [rec], note="TF 2.21 overflows its FixedLen float "
                                                     "buffer on unpacked floats"))
            sc.tf = ("ERR", 3, want.encode(), "kernel")

    # ---- §3 configs that parse ----
    both("s3.2.shape0-required-missing", [F("fl", "a", "float", [0])], [example()])
    both("s3.2.shape0-present-empty", [F("fl", "a", "float", [0])],
         [features([entry("a", b"\x12\x00")]), features([entry("a", b"\x12\x02\x0a\x00")])])
    both("s3.2.shape2x0", [F("fl", "a", "int64", [2, 0])], [features([entry("a", b"\x1a\x00")])])
    both("s3.2.present-empty-with-default", [F("fl", "a", "float", [], np_values(
        "float", [one], []))], [features([entry("a", b"\x12\x00")])])
    both("s3.2.default-nested", [F("fl", "a", "int64", [2, 3], np_values(
        "int64", list(range(6)), [3, 2]))], [example(), example(("a", "int64", list(range(6))))])
    both("s3.2.default-flat-for-matrix", [F("fl", "a", "string", [2, 1], np_values(
        "string", [b"p", b"\x00"], [2]))], [example()])
    both("s3.2.default-nan-payloads", [F("fl", "a", "float", [3], np_values(
        "float", [0x7FA12345, 0xFFC00001, 0x80000000]))], [example()])
    both("s3.2.row-major", [F("fl", "a", "float", [2, 2])],
         [example(("a", "float", [fbits(x) for x in (1, 2, 3, 4)]))])
    both("s3.3.vl-all-missing", [F("vl", "a", "string")], [example(), example()])
    both("s3.3.vl-empty-lists", [F("vl", "a", "int64")],
         [features([entry("a", b"\x1a\x00")]), example(("a", "int64", [4]))])
    both("s3.4.fls-padding-string", [F("fls", "a", "string", [2], np_values("string", [b"PAD"],
                                                                           []))],
         [example(("a", "string", [b"1", b"2", b"3", b"4"])), example(),
          example(("a", "string", [b"x", b"y"]))])
    both("s3.4.fls-all-missing", [F("fls", "a", "float", [2, 3])], [example(), example()])
    both("s3.4.fls-nan-padding", [F("fls", "a", "float", [], np_values("float", [0x7FC0BEEF],
                                                                       []))],
         [example(("a", "float", [one, two])), example()])
    both("s3.4.fls-empty-list", [F("fls", "a", "int64", [2])], [features([entry("a",
                                                                                 b"\x1a\x00")])])
    both("s3.4.fls-vs-vl-kind-none", [F("fls", "a", "int64", []), F("vl", "b", "int64")],
         [features([entry("a", b""), entry("b", b"")])], paths=("batch", "single", "scalar"))
    sp2 = [F("sp", "s", "float", idx=["i", "j"], val="v", size=[3, 4])]
    spx = lambda i, j, v: example(("i", "int64", i), ("j", "int64", j),  # noqa: E731
                                  ("v", "float", [fbits(x) for x in v]))
    both("s3.5.sp-sorted", sp2, [spx([2, 0, 1], [1, 3, 0], [1, 2, 3]), example(),
                                 spx([0], [0], [9])])
    both("s3.5.sp-already-sorted", [F("sp", "s", "float", idx=["i", "j"], val="v", size=[3, 4],
                                      already_sorted=True)],
         [spx([2, 0, 1], [1, 3, 0], [1, 2, 3])])
    both("s3.5.sp-out-of-range-and-dups", sp2, [spx([50, -1, 2, 2], [0, 9, 1, 1], [1, 2, 3, 4])])
    both("s3.5.sp-len-mismatch", sp2, [spx([1, 2], [1, 2], [5])])
    both("s3.5.sp-index-len-mismatch", sp2, [spx([1, 2], [1], [5, 6])])
    both("s3.5.sp-one-index-str", [F("sp", "s", "int64", idx=["i"], val="v", size=[10])],
         [example(("i", "int64", [3, 1]), ("v", "int64", [30, 10]))])
    both("s3.5.sp-one-index-list", [F("sp", "s", "string", idx=["i"], val="v", size=[10],
                                      idx_str=False)],
         [example(("i", "int64", [3, 1]), ("v", "string", [b"c", b"a"]))])
    both("s3.5.sp-keys-also-requested", sp2 + [F("vl", "i", "int64"), F("vl", "v", "float")],
         [spx([1, 0], [2, 2], [7, 8])])
    both("s3.5.sp-wrong-index-kind", sp2, [example(("i", "float", [one]), ("j", "int64", [1]),
                                                   ("v", "float", [one]))])


# What spec §6 says TF gives for its worked cases, in show()'s form: checked against the wheel
# on every run, so that the harness itself is known to read TF right (a mismatch is a FAIL).
SPEC_EXPECTED = {
    "s6.1/batch": "OK x61=float/2x2/3f800000,40000000,3f800000,40000000",
    "s6.2/batch": "OK x696473=int64/3x2/0,0,0,1,2,0;int64/3/1,2,3;int64/2/3,2",
    "s6.2/single0": "OK x696473=int64/2x1/0,1;int64/2/1,2;int64/1/2",
    "s6.3/batch": "OK x76=float/2x3/3f000000,3fc00000,40200000,40e00000,41000000,41100000",
    "s6.4/batch": "OK x71=int64/3x2/10,20,-1,-1,30,-1",
    "s6.4/single1": "OK x71=int64/0/-",
    "s6.5/batch": "ERR 3 b'Name: x1, Feature: age (data type: int64) is required but could not "
                  "be found.'",
    "s6.5/no-names/batch": "ERR 3 b'Name: <unknown>, Feature: age (data type: int64) is "
                           "required but could not be found.'",
    "s6.5/single1": "ERR 3 b'Feature: age (data type: int64) is required but could not be "
                    "found.'",
    "s6.6/fl/batch": "ERR 3 b\"Name: <unknown>, Key: a, Index: 0.  Data types don't match. "
                     "Data type: int64 but expected type: float\"",
    "s6.6/vl/batch": "ERR 3 b\"Name: <unknown>, Key: a, Index: 0.  Data types don't match. "
                     "Expected type: string, Actual type: int64\"",
    "s6.6/fl/single0": "ERR 3 b\"Key: a.  Data types don't match. Data type: int64 but "
                       "expected type: float\"",
    "s6.7/batch": "ERR 3 b'Name: <unknown>, Key: a, Index: 0.  Number of float values != "
                  "expected.  Values size: 2 but output shape: [3]'",
    "s6.7/single0": "ERR 3 b\"Key: a.  Can't parse serialized Example: Some float_list slice "
                    "was not parsed.\"",
    "s6.8/batch": "ERR 3 b\"Could not parse example input, value: '\\n\\x05\\x01'\"",
    "s6.9/vl/batch": "OK x61=int64/0x2/-;float/0/-;int64/2/1,0",
    "s6.9/fl-default/batch": "OK x61=float/1/40400000",
    "s6.9/fl-required/batch": "ERR 3 b'Name: <unknown>, Feature: a (data type: float) is "
                              "required but could not be found.'",
    "s6.10/batch": "OK x61=float/1/40800000",
    "s6.11/batch": "OK x66=float/0x2/- x71=int64/0x0/- x73=int64/0x2/-;string/0/-;int64/2/0,0",
}


def gen_config_errors(reg):
    """Config errors (Python layer in TF, config-build or parse-time checks in tfq): one error per
    config, added in sorted key order (TF walks the sorted keys)."""
    fam = "example_config"
    ok_rec = example(("a", "float", [fbits(1.0)]))
    cases = [
        ("missing-shape", [F("fl", "m", "float", None)]),
        ("first-dim-unknown", [F("fl", "m", "float", [None])]),
        ("dim-unknown", [F("fl", "m", "float", [2, None])]),
        ("int32-fl", [F("fl", "m", "int32", [])]),
        ("double-fl", [F("fl", "m", "double", [])]),
        ("int32-vl", [F("vl", "m", "int32")]),
        ("int32-fls", [F("fls", "m", "int32", [])]),
        ("int32-sp", [F("sp", "s", "int32", idx=["i"], val="v", size=[3])]),
        ("no-dtype-vl", [F("vl", "m", "none")]),
        ("no-dtype-fl", [F("fl", "m", "none", [])]),
        ("no-dtype-fls", [F("fls", "m", "none", [])]),
        ("default-size-scalar-for-3", [F("fl", "m", "float", [3], np_values("float", [0], []))]),
        ("default-size-3-for-2x2", [F("fl", "m", "int64", [2, 2], np_values("int64", [1, 2, 3]))]),
        ("default-size-2-for-scalar", [F("fl", "m", "string", [],
                                         np_values("string", [b"a", b"b"]))]),
        ("fls-allow-missing-false", [F("fls", "m", "float", [], allow_missing=False)]),
        ("fls-padding-2", [F("fls", "m", "float", [], np_values("float", [0, 0]))]),
        ("fls-unknown-inner", [F("fls", "m", "float", [None])]),
        ("fls-unknown-inner-2nd-dense", [F("fl", "a", "float", []),
                                         F("fls", "m", "float", [2, None]), F("vl", "z", "int64")]),
        ("dense-sparse-intersect-sp", [F("sp", "s", "float", idx=["v"], val="m", size=[3]),
                                       F("fl", "v", "float", [])]),
        ("dense-sparse-intersect-sp2", [F("sp", "b", "float", idx=["x", "y"], val="a",
                                          size=[3, 3]), F("fls", "a", "float", []),
                                        F("fl", "y", "int64", [])]),
        ("conflicting-type", [F("sp", "s", "float", idx=["ix"], val="m", size=[3]),
                              F("vl", "ix", "float")]),
        ("conflicting-type-value", [F("sp", "s", "float", idx=["ix"], val="m", size=[3]),
                                    F("vl", "m", "string")]),
        ("sp-no-index-key", [F("sp", "s", "float", idx=[""], val="m", size=[3])]),
        ("sp-no-index-keys", [F("sp", "s", "float", idx=[], val="m", size=[], idx_str=False)]),
        ("sp-no-value-key", [F("sp", "s", "float", idx=["i"], val="", size=[3])]),
        ("sp-value-key-none", [F("sp", "s", "float", idx=["i"], val=None, size=[3])]),
        ("sp-two-index-empty", [F("sp", "s", "int64", idx=["i", ""], val="v", size=[3, 3])]),
        ("empty-dict", []),
    ]
    for name, feats in cases:
        cid = reg.cfg(feats)
        for kind in ("batch", "single", "scalar"):
            reg.add(Scen(fam, "%s/%s" % (name, kind), kind, cid, [ok_rec]))
    # tfq-only: a zero inner dimension kills TF 2.21 with SIGFPE (spec §3.4), so TF never runs
    # it; tfq must refuse the config with its own text (a documented deviation).
    for shape, d, feats in (([0], 0, None), ([2, 0], 1, [F("fl", "a", "float", [])])):
        fs = (feats or []) + [F("fls", "m", "float", shape)]
        cid = reg.cfg(fs, tf_ok=False)
        want = "dense_shapes[%d] has a zero inner dimension: [?,%s]" % (
            d, ",".join(str(x) for x in shape))
        for kind in ("batch", "single"):
            s = reg.add(Scen(fam, "fls-zero-inner-dim%s/%s" % (shape, kind), kind, cid, [ok_rec],
                             note="TF 2.21 dies with SIGFPE; tfq refuses the config"))
            s.tf = ("ERR", 3, want.encode(), "kernel")


def gen_raw(reg, rng):
    fam = "decode_raw"
    types = list(RAW_SIZE)
    for t in types:
        sz = RAW_SIZE[t]
        for le in (1, 0):
            for shape in ([3], [], [2, 2], [0], [2]):
                n = prod(shape)
                k = rng.randint(0, 4) if shape != [2] else 0
                elems = [bytes(rng.getrandbits(8) for _ in range(k * sz)) for _ in range(n)]
                reg.add(Scen(fam, "%s/le%d/shape%s/len%d" % (t, le, shape, k * sz), "raw",
                             raw=(t, le, shape, elems)))
            if sz > 1:
                elems = [bytes(sz + 1), bytes(sz + 1)]
                reg.add(Scen(fam, "%s/le%d/not-multiple" % (t, le), "raw",
                             raw=(t, le, [2], elems)))
            elems = [bytes(2 * sz), bytes(sz), bytes(2 * sz)]
            reg.add(Scen(fam, "%s/le%d/unequal" % (t, le), "raw", raw=(t, le, [3], elems)))
    spec = [("int16", 1, [2], [b"\x01\x02\x03\x04", b"\xff\xff\x00\x80"]),
            ("int16", 0, [1], [b"\x01\x02\x03\x04"]),
            ("float", 1, [1], [b"abc"]),
            ("uint8", 1, [2], [b"abcd", b"ab"]),
            ("uint8", 1, [2], [b"", b"ab"]),
            ("bool", 1, [1], [b"\x00\x01\x02\xff"]),
            ("float", 0, [1], [f32b(0x7FA12345) + f32b(0x00000001)]),
            ("complex128", 0, [1], [bytes(range(16))]),
            ("string", 1, [1], [b"ab"]),
            ]
    for i, (t, le, shape, elems) in enumerate(spec):
        reg.add(Scen(fam, "s8.%d/%s/le%d" % (i, t, le), "raw", raw=(t, le, shape, elems)))


# --------------------------------------------------------------------------------------------


def tf_child():
    """--tf-child: runs the tfq-only scenarios named on stdin (a JSON list) through TF, one
    config at a time, printing "START <cid>" before and one "RES <repr>" per scenario after
    each; the parent (tf_where_it_survives) restarts it past a config that kills TF."""
    names = set(json.load(sys.stdin))
    reg = Registry()
    gen_spec(reg)
    gen_config_errors(reg)
    side = TFSide()
    by_cfg = {}
    for sc in reg.scens:
        if sc.name in names:
            by_cfg.setdefault(sc.cfg, []).append(sc)
    for cid, feats, _, _ in reg.cfgs:
        if cid in by_cfg:
            print("START %s" % json.dumps([x.name for x in by_cfg[cid]]), flush=True)
            side.run_config(feats, by_cfg[cid], guard=False)
            for sc in by_cfg[cid]:
                print("RES %r" % ((sc.name, sc.tf),), flush=True)
    os._exit(0)


def tf_where_it_survives(names):
    """TF's own result for each tfq-only scenario (TF 2.21 crashes on some: SIGFPE, heap
    corruption), each config run in a child process: {name: ("TF", result)} where TF survived,
    {name: ("CRASH", how)} where the child died in that config.  Started in the background
    (Popen) so it overlaps the main TF work; .result() collects."""
    state = {"todo": list(names), "out": {}}

    def spawn():
        return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--tf-child"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)

    def start():
        p = spawn()
        p.stdin.write(json.dumps(state["todo"]).encode())
        p.stdin.close()
        return p

    def run_one():
        p = state.pop("proc", None) or start()
        out = p.stdout.read()
        p.wait()
        current = []
        for ln in out.decode("utf-8", "replace").splitlines():
            if ln.startswith("START "):
                current = json.loads(ln[6:])
            elif ln.startswith("RES "):
                name, res = ast.literal_eval(ln[4:])
                state["out"][name] = ("TF", res)
                current = [c for c in current if c != name]
        for name in current:  # the config TF died in
            how = ("TF died in this config: signal %d" % -p.returncode) if p.returncode < 0 \
                else "TF died in this config: exit %d" % p.returncode
            state["out"][name] = ("CRASH", how)  # TF died in its config
        state["todo"] = [n for n in state["todo"] if n not in state["out"]]
        return bool(current) or p.returncode != 0

    if state["todo"]:
        state["proc"] = start()

    class Pending:
        def result(self):
            while state["todo"]:
                if not run_one() and state["todo"]:
                    for n in state["todo"]:  # the child ended cleanly without them
                        state["out"][n] = ("CRASH", "not run by the child")
                    break
            return state["out"]
    return Pending()


def tf_cache_lookup(args, only, reg):
    """TF's results for these scenarios, cached as run_conformance.py caches its reference: under
    $TFQ_CONFORMANCE_CACHE (scripts/test points every tree at the first tree's cache, so the ASan
    tree does not run TF again) or --tf-cache, keyed by the seed and options, TF's version, this
    harness's source and the scenarios themselves.  (path, {"tf": {sid: result}, "child": ...})
    when cached, (path, None) when not, (None, None) without a cache directory."""
    d = os.environ.get("TFQ_CONFORMANCE_CACHE", "") or args.tf_cache
    if not d:
        return None, None
    h = hashlib.sha256()
    for name in ("example_conformance.py", "run_conformance.py"):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "rb") as f:
            h.update(f.read())
    h.update(repr((args.seed, args.configs, args.batches, sorted(only), tf.__version__)).encode())
    h.update("\n".join(reg.driver_lines()).encode())
    path = os.path.join(d, "tf-example-reference-%s.pickle" % h.hexdigest()[:24])
    try:
        with open(path, "rb") as f:
            got = pickle.load(f)
        if set(got["tf"]) != {s.sid for s in reg.scens}:
            raise EOFError("other scenarios")
        print("-- TF reference: cached %s" % path)
        return path, got
    except (OSError, EOFError, KeyError, pickle.UnpicklingError):
        print("-- TF reference: computed (cache %s)" % path)
        return path, None


def main():
    if "--tf-child" in sys.argv:
        tf_child()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--workdir", default="conformance-example-work")
    ap.add_argument("--seed", type=int, default=20240917)
    ap.add_argument("--configs", type=int, default=100, help="random configs")
    ap.add_argument("--batches", type=int, default=3, help="random batches per config")
    ap.add_argument("--only", default="", help="comma list: random,spec,config,raw")
    ap.add_argument("--trace", action="store_true",
                    help="name each scenario on stderr before TF runs it")
    ap.add_argument("--tf-cache", default="",
                    help="directory of cached TF results ($TFQ_CONFORMANCE_CACHE wins; "
                         "default: none, TF runs every time)")
    args = ap.parse_args()
    global TRACE
    TRACE = args.trace
    only = set(args.only.split(",")) if args.only else {"random", "spec", "config", "raw"}
    t0 = time.time()
    rng = random.Random(args.seed)
    wd = os.path.abspath(args.workdir)
    os.makedirs(wd, exist_ok=True)
    reg = Registry()
    if "spec" in only:
        gen_spec(reg)
    if "config" in only:
        gen_config_errors(reg)
    if "random" in only:
        gen_random(reg, random.Random(rng.random()), args.configs, args.batches)
    if "raw" in only:
        gen_raw(reg, random.Random(rng.random()))
    scen = os.path.join(wd, "example-scenarios.txt")
    with open(scen, "w") as f:
        f.write("\n".join(reg.driver_lines()) + "\n")
    t_gen = time.time() - t0

    drv_out = open(os.path.join(wd, "example-tfq-output.txt"), "w")
    proc = subprocess.Popen([args.driver, scen], stdout=drv_out, stderr=subprocess.PIPE)
    cache_path, cached = tf_cache_lookup(args, only, reg)
    t1 = time.time()
    if cached is not None:
        for s in reg.scens:
            s.tf = cached["tf"][s.sid]
        tf_child_res = cached["child"]
        t_parse = t_raw = 0.0
    else:
        # the documented deviations TF "cannot run": run in TF all the same, in child processes
        # that may crash, to check tfq against TF wherever TF survives
        tf_only = tf_where_it_survives([s.name for s in reg.scens if s.note])
        side = TFSide()
        by_cfg = {}
        for s in reg.scens:
            if s.tf is None and s.kind != "raw":
                by_cfg.setdefault(s.cfg, []).append(s)
        for cid, feats, _, tf_ok in reg.cfgs:
            if tf_ok and cid in by_cfg:
                side.run_config(feats, by_cfg[cid])
        t_parse = time.time() - t1
        t1 = time.time()
        for s in reg.scens:
            if s.kind == "raw":
                s.tf = side.run_raw(s)
        t_raw = time.time() - t1
        tf_child_res = tf_only.result()
        tf_cache_store(cache_path, {"tf": {s.sid: s.tf for s in reg.scens},
                                    "child": tf_child_res})

    _, err = proc.communicate()
    drv_out.close()
    rep = Report()
    if proc.returncode != 0:
        print("FAIL driver: conformance_example exited with %d: %s"
              % (proc.returncode, err.decode(errors="replace")[-2000:]))
        print("0 passed, 1 failed")
        print("0 deviations")
        sys.stdout.flush()
        os._exit(1)
    with open(os.path.join(wd, "example-tfq-output.txt")) as f:
        drv = parse_driver(f.read())

    stats = {"cut1023": 0, "nonutf8": 0, "nulcut": 0, "nulstrip": 0, "skipped": [],
             "tf_survived": 0, "tf_crashed": []}
    for s in reg.scens:
        s.tfq = drv.get(s.sid)
        s.mismatch = drv.get(s.sid + "/mismatch", [])
        if s.tf[0] == "SKIP":
            stats["skipped"].append("%s %s" % (s.sid, s.name))
            continue
        if s.note:
            # documented deviation: TF crashes on it (or overflows its buffer).  Where the child
            # TF survived, tfq must give TF's own result; where TF died, the documented text.
            how, res = tf_child_res.get(s.name, ("CRASH", "not run"))
            want = res if how == "TF" else s.tf
            if how == "TF":
                stats["tf_survived"] += 1
            else:
                stats["tf_crashed"].append("%s (%s)" % (s.name, res))
            if not s.mismatch and s.tfq is not None and s.tfq[:3] == want[:3] and \
                    want[0] == "ERR" and want[2]:
                rep.deviation(s.fam, "%s %s" % (s.sid, s.name), s.note + (
                    "; checked against TF's own result (TF survived)" if how == "TF" else
                    "; %s: checked against the documented text" % res))
            else:
                rep.fail(s.fam, "%s %s" % (s.sid, s.name), "expected tfq %s (%s) | tfq %s"
                         % (show(want), "TF's own" if how == "TF" else res,
                            show(s.tfq)))
            continue
        if s.name in SPEC_EXPECTED and show(s.tf, 100000) != SPEC_EXPECTED[s.name]:
            rep.fail(s.fam, "%s %s" % (s.sid, s.name), "TF itself disagrees with the spec's "
                     "worked case: TF %s | spec %s" % (show(s.tf), SPEC_EXPECTED[s.name]))
            continue
        compare(s, rep, stats)

    for line in rep.failures:
        print(line)
    for line in rep.deviations:
        print(line)
    print("-- per family (passed / failed / deviations):")
    for fam, (p, f_, d) in sorted(rep.fam.items()):
        print("   %-24s %5d %5d %5d" % (fam, p, f_, d))
    outcomes = {}
    with open(os.path.join(wd, "example-tf-output.txt"), "w") as f:
        for s in reg.scens:
            o = outcomes.setdefault(s.fam, [0, 0])
            o[0 if s.tf[0] == "OK" else 1] += 1
            f.write("%s %s %s\n" % (s.sid, s.name, show(s.tf, 100000)))
    print("-- TF outcomes (OK / error) per family: %s; %d configs" % (
        ", ".join("%s %d/%d" % (k, v[0], v[1]) for k, v in sorted(outcomes.items())),
        len(reg.cfgs)))
    print("-- messages embedding raw bytes: %d non-UTF-8 (taken from the UnicodeDecodeError TF's "
          "binding raises; code assumed 3), %d holding a NUL (compared up to the NUL, where both "
          "TF's binding and tfq's C-string status stop; %d of them end in whitespace there, which "
          "TF strips), %d longer than 1023 bytes (tfq keeps the first 1023)"
          % (stats["nonutf8"], stats["nulcut"], stats["nulstrip"], stats["cut1023"]))
    for name in stats["skipped"]:
        print("skipped: %s (an unpacked float_list longer than a FixedLen float slot would "
              "overflow TF 2.21's buffer)" % name)
    print("-- %d scenarios skipped (not compared; listed above): an unpacked float_list longer "
          "than a FixedLen float slot overflows TF 2.21's buffer (see docs/conformance.md)"
          % len(stats["skipped"]))
    print("-- documented deviations TF cannot run: %d checked against TF's own result in a "
          "child process that survived, %d against the documented text where TF crashed: %s"
          % (stats["tf_survived"], len(stats["tf_crashed"]),
             "; ".join(stats["tf_crashed"]) or "none"))
    print("-- time: generate %.1fs, TF parse_example %.1fs, TF decode_raw %.1fs, total %.1fs"
          % (t_gen, t_parse, t_raw, time.time() - t0))
    passed = sum(v[0] for v in rep.fam.values())
    failed = sum(v[1] for v in rep.fam.values())
    devs = sum(v[2] for v in rep.fam.values())
    print("%d passed, %d failed" % (passed, failed))
    print("%d deviations" % devs)
    print("%d skipped" % len(stats["skipped"]))
    sys.stdout.flush()
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
