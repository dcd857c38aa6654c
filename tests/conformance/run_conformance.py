#!/usr/bin/env python3
"""Differential conformance harness: the same scenarios in the reference TensorFlow
(tf.compat.v1, graph mode) and in tfq (through the C drivers conformance_tfq and
conformance_coord, and tools/tfq-cat), compared on values, dtypes, shapes, error codes and error
messages.  The coordination families live in coord_conformance.py, the CLI family in
cli_conformance.py.  See docs/conformance.md.

Prints one line per failing scenario ("FAIL <family> <case>: ..."), one line per documented
deviation ("deviation: <case> -> <where it is documented>"), one line per case the CLI cannot
express ("not applicable: ..."), per-family counts, and finally
    N passed, M failed
    K deviations
Exit status: 0 when M == 0, 1 otherwise.
"""
import argparse
import concurrent.futures
import gzip
import hashlib
import os
import pickle
import random
import re
import shutil
import struct
import subprocess
import sys
import time
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402

try:
    import tensorflow.compat.v1 as tf  # noqa: E402
except Exception as e:  # pragma: no cover - run_conformance.sh checks this first
    print("SKIPPED: cannot import tensorflow: %s" % e)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

tf.disable_eager_execution()
tf.logging.set_verbosity(tf.logging.ERROR)

# --------------------------------------------------------------------------------------------
# canonical encoding (shared with conformance_tfq.c)


def hx(b):
    if isinstance(b, str):
        b = b.encode("latin-1")
    return "x" + b.hex()


DT_NAME = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
           np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
           np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16", np.dtype(np.int8): "int8",
           np.dtype(np.bool_): "bool", np.dtype(np.uint16): "uint16"}
TF_DT = {"float": tf.float32, "double": tf.float64, "int32": tf.int32, "int64": tf.int64,
         "string": tf.string, "uint8": tf.uint8, "int16": tf.int16, "int8": tf.int8,
         "bool": tf.bool, "uint16": tf.uint16}
NP_DT = {"float": np.float32, "double": np.float64, "int32": np.int32, "int64": np.int64,
         "uint8": np.uint8, "int16": np.int16, "int8": np.int8, "bool": np.bool_,
         "uint16": np.uint16}


def val_tok(dt, v):
    if dt == "float":
        return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]
    if dt == "double":
        return "%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]
    if dt == "string":
        return hx(v)
    if dt == "bool":
        return "1" if v else "0"
    return str(int(v))


def arr_tok(a):
    a = np.asarray(a)
    dt = "string" if a.dtype.kind in "OSU" else DT_NAME[a.dtype]
    dims = "x".join(str(d) for d in a.shape) if a.ndim else "_"
    flat = a.reshape(-1)
    if dt == "float":
        vals = ["%08x" % x for x in flat.view(np.uint32)] if flat.size else []
    elif dt == "double":
        vals = ["%016x" % x for x in flat.view(np.uint64)] if flat.size else []
    else:
        vals = [val_tok(dt, x) for x in flat]
    return "%s/%s/%s" % (dt, dims, ",".join(vals) if vals else "-")


def tensor_tok(dt, shape, vals):
    """A tensor token from a dtype name, a shape list and flat python values."""
    dims = "x".join(str(d) for d in shape) if shape else "_"
    return "%s/%s/%s" % (dt, dims, ",".join(val_tok(dt, v) for v in vals) if vals else "-")


def np_array(dt, shape, vals):
    if dt == "string":
        return np.array([v if isinstance(v, bytes) else v.encode("latin-1") for v in vals],
                        dtype=object).reshape(shape)
    return np.array(vals, dtype=NP_DT[dt]).reshape(shape)


_TAIL = re.compile(r"\n\t \[\[\{\{node [^\n]*\}\}\]\].*\Z", re.S)
_TAIL2 = re.compile(r"\n\nErrors may have originated.*\Z", re.S)


def tf_message(e):
    m = e.message
    i = m.rfind("\nNode: '")
    if i >= 0:
        j = m.find("'\n", i + 8)
        m = m[j + 2:]
    elif m.startswith("Graph execution error:\n\n"):
        m = m[len("Graph execution error:\n\n"):]
    m = _TAIL.sub("", m)
    m = _TAIL2.sub("", m)
    return m


def tf_err(e):
    if isinstance(e, tf.errors.OpError):
        return "ERR %d %s" % (e.error_code, hx(tf_message(e).encode("utf-8", "surrogateescape")))
    # Python-level errors (ValueError/TypeError at graph construction) are INVALID_ARGUMENT.
    return "ERR 3 %s" % hx(str(e).encode())


def msg_of(res):
    """Decoded message of an "ERR c xhex" result."""
    parts = res.split(" ")
    return bytes.fromhex(parts[2][1:]).decode("utf-8", "surrogateescape")


def norm_names(s):
    # Kernel names of unshared queues carry a process-wide counter ('_3_input_producer').
    return re.sub(r"'_\d+_", "'_N_", s)


def same_result(tf_res, tfq_res):
    """tf_res/tfq_res: "OK ..." or "ERR code xhex".  Errors: the same code and exactly the same
    message (kernel names normalised: norm_names), never an empty one.  Python-level errors
    (ValueError/TypeError at graph construction) are compared in full as well: no prefix or
    substring rule (docs/conformance.md, "Messages")."""
    if tf_res.startswith("ERR") and tfq_res.startswith("ERR"):
        if tf_res.split(" ")[1] != tfq_res.split(" ")[1]:
            return False
        a, b = norm_names(msg_of(tf_res)), norm_names(msg_of(tfq_res))
        return a != "" and a == b
    return tf_res == tfq_res


def show(res, limit=300):
    if res is None:
        return "<missing>"
    if res.startswith("ERR"):
        p = res.split(" ")
        try:
            return "ERR %s %r" % (p[1], msg_of(res)[:limit])
        except Exception:
            return res[:limit]
    return res[:limit]


class Report:
    def __init__(self):
        self.fam = {}
        self.failures = []
        self.deviations = []

    def _f(self, fam):
        return self.fam.setdefault(fam, [0, 0, 0])

    def ok(self, fam):
        self._f(fam)[0] += 1

    def fail(self, fam, case, text):
        self._f(fam)[1] += 1
        self.failures.append("FAIL %s %s: %s" % (fam, case, text))

    def deviation(self, fam, case, note="", ref="README#deviations"):
        self._f(fam)[2] += 1
        self.deviations.append("deviation: %s %s -> %s%s"
                               % (fam, case, ref, (" (" + note + ")") if note else ""))


def new_session(graph):
    return tf.Session(graph=graph, config=tf.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=2))


# --------------------------------------------------------------------------------------------
# decode_csv: random records

CSV_TYPES = ["float", "double", "int32", "int64", "string"]
REQ = {"float": "F", "double": "D", "int32": "I", "int64": "L", "string": "S"}

INT_EDGE = ["0", "-0", "+5", "007", "2147483647", "-2147483648", "2147483648", "-2147483649",
            "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "-9223372036854775809", "99999999999999999999999", "0x10", "1.0", "1e3", "- 5",
            "++1", "--1", "+", "-", "1_000", "12abc", " 12", "12 ", "\t12\t", " -3 ", "1 2",
            "\v7", "7\f", "000000000000000000000000000000042", "+0", "-2147483648 "]
FLOAT_EDGE = ["inf", "-inf", "+inf", "Inf", "INF", "infinity", "-Infinity", "INFINITY", "infin",
              "nan", "NaN", "-nan", "+nan", "NAN", "nan(1)", "nanx", "1e39", "-1e39", "1e309",
              "-1e309", "1e-46", "1e-400", "4.9e-324", "2.4703282292062327e-324",
              "1.17549435e-38", "1.4e-45", "3.4028235e38", "3.4028236e38", "1.7976931348623157e308",
              "1.7976931348623159e308", ".5", "5.", "-.5e-3", "+.5", "0.100000000000000000000000000001",
              "0x1.8p3", "0X1P-3", "0x1A", "-0x1.fffffep127", "0x1p-149", "0x1p-1074", "0x.8p1",
              "0x1p", "0x", "0x1.8", "1e", ".", "e5", "1.5f", "1d", "1,5", "1.2.3", " 1.5",
              "1.5 ", "\t-2e3\t", " nan ", "- 1", "1 2", "0.0", "-0.0", "00001.5000",
              "123456789012345678901234567890", "1e+5", "1E-5", "1e+", "+-1", "0e0",
              "9007199254740993", "16777217", "0.1", "0.3", "2.5e-8"]
STR_ALPHA = 'abcXYZ019 _-.,;|\t"\'\\'


def rand_number(rng, typ):
    r = rng.random()
    if typ in ("int32", "int64"):
        if r < 0.55:
            return str(rng.choice([rng.randint(-100, 100), rng.randint(-2**31, 2**31 - 1),
                                   rng.randint(-2**63, 2**63 - 1)]))
        if r < 0.9:
            return rng.choice(INT_EDGE)
        return rng.choice(FLOAT_EDGE)
    if r < 0.5:
        x = rng.choice([rng.uniform(-1000, 1000), rng.gauss(0, 1e10), rng.uniform(-1, 1) * 10.0 **
                        rng.randint(-320, 307), float(rng.randint(-10**6, 10**6))])
        fmt = rng.choice(["%r", "%.3f", "%.9g", "%.17g", "%e", "%.25g", "%a"])
        s = (fmt % x) if fmt != "%a" else float.hex(x)
        return s
    if r < 0.9:
        return rng.choice(FLOAT_EDGE)
    return rng.choice(INT_EDGE)


def rand_string(rng):
    n = rng.choice([0, 1, 2, 3, 5, 8, 12])
    return "".join(rng.choice(STR_ALPHA) for _ in range(n))


def rand_token(rng, typ, opts, dirty=True):
    r = rng.random()
    if not dirty:  # a record meant to decode: edge cases at a low rate
        if r < 0.06:
            return ""
        if r < 0.1 and opts["na"]:
            return opts["na"]
        if typ == "string":
            return rand_string(rng).replace('"', "").replace(opts["delim"], "")
        if r < 0.13:
            return rng.choice(INT_EDGE if typ in ("int32", "int64") else FLOAT_EDGE)
        if typ in ("int32", "int64"):
            lim = 2**31 if typ == "int32" else 2**63
            return str(rng.choice([rng.randint(-100, 100), rng.randint(-lim, lim - 1)]))
        x = rng.choice([rng.uniform(-1000, 1000), rng.gauss(0, 1e10),
                        rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 307)])
        fmt = rng.choice(["%r", "%.3f", "%.9g", "%.17g", "%e", "%.25g", "%a"])
        return (fmt % x) if fmt != "%a" else float.hex(x)
    if r < 0.07:
        return ""
    if r < 0.13 and opts["na"]:
        return opts["na"]
    if r < 0.16:
        return rand_string(rng)
    if r < 0.18:
        return rng.choice(["\r", "\n", "a\rb", "\n1", "1\r"])
    if typ == "string":
        return rand_string(rng)
    return rand_number(rng, typ)


def quote_field(rng, tok, opts, dirty=True):
    if not opts["quote"]:
        return tok
    r = rng.random()
    if r < 0.15:
        return '"' + tok.replace('"', '""') + '"'
    if r < 0.17 and dirty:  # malformed quoting
        return rng.choice(['"' + tok, '"' + tok + '"x', '"' + tok.replace('"', '""') + '" ',
                           tok + '"', '"a"b"'])
    return tok


def rand_csv_config(rng):
    ncols = rng.choice([1, 1, 2, 3, 3, 4, 5, 6])
    cols = []
    for _ in range(ncols):
        typ = rng.choice(CSV_TYPES)
        if rng.random() < 0.25:
            cols.append((typ, None))
        elif typ == "string":
            cols.append((typ, rand_string(rng)))
        elif typ in ("int32", "int64"):
            lim = 2**31 if typ == "int32" else 2**63
            cols.append((typ, rng.choice([0, -1, 7, rng.randint(-lim, lim - 1)])))
        else:
            v = rng.choice([0.0, -1.0, 1.5, rng.uniform(-1e6, 1e6), float("inf"), float("nan")])
            if typ == "float":
                v = float(np.float32(v))
            cols.append((typ, v))
    delim = rng.choice([",", ",", ",", "\t", "|", ";", " ", ":"])
    quote = rng.random() < 0.8
    na = rng.choice(["", "", "", "NA", "nan", "-", "?", "null"])
    sel = None
    if rng.random() < 0.25:
        width = ncols + rng.randint(0, 3)
        sel = sorted(rng.sample(range(width), ncols))
    return {"cols": cols, "delim": delim, "quote": quote, "na": na, "sel": sel}


def rand_record(rng, cfg):
    nfields = (cfg["sel"][-1] + 1 + rng.choice([0, 0, 0, 1, 2])) if cfg["sel"] else len(cfg["cols"])
    dirty = rng.random() < 0.12  # about 1 record in 6 fails in the end
    r = rng.random()
    if r < 0.02 and dirty:
        nfields = 0
    elif r < 0.4 and dirty:
        nfields = max(0, nfields + rng.choice([-2, -1, 1, 2]))
    types = {}
    if cfg["sel"]:
        for i, c in zip(cfg["sel"], cfg["cols"]):
            types[i] = c[0]
    else:
        types = {i: c[0] for i, c in enumerate(cfg["cols"])}
    fields = []
    for i in range(nfields):
        typ = types.get(i, rng.choice(CSV_TYPES))
        fields.append(quote_field(rng, rand_token(rng, typ, cfg, dirty), cfg, dirty))
    rec = cfg["delim"].join(fields)
    if rng.random() < 0.01 and dirty:
        rec = rec + rng.choice(["\n", "\r\n", cfg["delim"]])
    return rec.encode("latin-1")


def csv_col_spec(typ, dflt):
    if dflt is None:
        return REQ[typ]
    if typ == "float":
        return "f=%08x" % struct.unpack("<I", struct.pack("<f", dflt))[0]
    if typ == "double":
        return "d=%016x" % struct.unpack("<Q", struct.pack("<d", dflt))[0]
    if typ == "int32":
        return "i=%d" % dflt
    if typ == "int64":
        return "l=%d" % dflt
    return "s=" + hx(dflt)


def csvopt_line(cfg, cols_spec=None):
    spec = cols_spec if cols_spec is not None else [csv_col_spec(t, d) for t, d in cfg["cols"]]
    sel = ",".join(str(c) for c in cfg["sel"]) if cfg.get("sel") is not None else "-"
    if cfg.get("sel") is not None and not cfg["sel"]:
        sel = "-"
    return "csvopt %s %d %s %s %s" % (hx(cfg["delim"]), 1 if cfg["quote"] else 0,
                                      hx(cfg["na"]), sel, " ".join(spec))


def tf_defaults(cols):
    out = []
    for typ, d in cols:
        if d is None:
            out.append(tf.constant([], dtype=TF_DT[typ]))
        elif typ == "string":
            out.append(tf.constant([d.encode("latin-1")], dtype=tf.string))
        else:
            out.append(tf.constant([d], dtype=TF_DT[typ]))
    return out


def row_text(outs, i):
    parts = []
    for a in outs:
        dt = "string" if a.dtype.kind in "OSU" else DT_NAME[a.dtype]
        x = a[i]
        if dt == "float":
            v = "%08x" % np.array([x], np.float32).view(np.uint32)[0]
        elif dt == "double":
            v = "%016x" % np.array([x], np.float64).view(np.uint64)[0]
        elif dt == "string":
            v = hx(x)
        else:
            v = str(int(x))
        parts.append("%s:%s" % (dt, v))
    return "OK " + " ".join(parts)


class TFCsv:
    """One decode op per configuration; per-record results found by re-running sub-batches."""

    def __init__(self, sess, graph, ph, cfg):
        with graph.as_default():
            self.outs = tf.io.decode_csv(ph, tf_defaults(cfg["cols"]), field_delim=cfg["delim"],
                                         use_quote_delim=cfg["quote"], na_value=cfg["na"],
                                         select_cols=cfg["sel"])
        self.sess, self.ph, self.runs = sess, ph, 0

    def run(self, recs):
        self.runs += 1
        try:
            outs = self.sess.run(self.outs, {self.ph: np.array(recs, dtype=object)})
            return True, outs
        except tf.errors.OpError as e:
            return False, tf_err(e)

    def per_record(self, recs):
        """Per-record results (each as if decoded alone, so "record 0" in messages) and the
        group's own result.  TF's kernel stops at the first failing record in order, so: run the
        tail from the first unknown record; a message naming "record K" locates the failure
        (rewritten to "record 0"); a message without an index (quote errors) is located by
        bisection.  Finally every good record is decoded in one run for its values."""
        n = len(recs)
        res = [None] * n
        ok, first = self.run(recs)
        group = "OK" if ok else first
        good = []
        i, cur_ok, cur = 0, ok, first
        while i < n:
            if cur_ok:
                good.extend(range(i, n))
                break
            msg = msg_of(cur)
            m = re.search(r" in record (\d+)", msg)
            if m and i + int(m.group(1)) < n:
                k = i + int(m.group(1))
                msg = msg[:m.start()] + " in record 0" + msg[m.end():]
                res[k] = "ERR %s %s" % (cur.split(" ")[1], hx(msg.encode("utf-8", "surrogateescape")))
            else:  # no index in the message: bisect for the first failing record
                lo, hi = i + 1, n  # recs[i:hi] fails
                while lo < hi:
                    mid = (lo + hi) // 2
                    if self.run(recs[i:mid])[0]:
                        lo = mid + 1
                    else:
                        hi = mid
                k = hi - 1
                res[k] = cur
            good.extend(range(i, k))
            i = k + 1
            if i < n:
                cur_ok, cur = self.run(recs[i:])
        if good:
            gok, gout = self.run([recs[j] for j in good])
            for idx, j in enumerate(good):
                if gok:
                    res[j] = row_text(gout, idx)
                else:  # cannot happen if records are independent; decode one by one
                    o, r = self.run(recs[j:j + 1])
                    res[j] = row_text(r, 0) if o else r
        return group, res


def parse_driver(out_text):
    """Driver output lines grouped by tag."""
    R, G, C, Q, K, P, B = {}, {}, {}, {}, {}, {}, {}
    for line in out_text.split("\n"):
        if not line:
            continue
        p = line.split(" ", 3)
        tag = p[0]
        if tag == "R":
            R[(p[1], int(p[2]))] = p[3]
        elif tag == "G":
            G[p[1]] = line.split(" ", 2)[2]
        elif tag == "C":
            C[p[1]] = line.split(" ", 2)[2]
        elif tag == "Q":
            Q[(p[1], p[2])] = p[3]
        elif tag == "K":
            K.setdefault(p[1], []).append(line.split(" ", 2)[2])
        elif tag == "P":
            P.setdefault(p[1], []).append(line.split(" ", 2)[2])
        elif tag == "B":
            B.setdefault(p[1], []).append(line.split(" ", 2)[2])
    return {"R": R, "G": G, "C": C, "Q": Q, "K": K, "P": P, "B": B}


def gen_csv_random(rng, n_records, group_size):
    groups = []
    left, gid = n_records, 0
    while left > 0:
        cfg = rand_csv_config(rng)
        n = min(group_size, left)
        recs = [rand_record(rng, cfg) for _ in range(n)]
        groups.append(("g%d" % gid, cfg, recs))
        gid += 1
        left -= n
    return groups


def csv_random_lines(groups):
    lines = []
    for gid, cfg, recs in groups:
        lines.append(csvopt_line(cfg))
        lines.append("csvgrp %s %d" % (gid, len(recs)))
        lines.extend(hx(r) for r in recs)
    return lines


def tf_csv_groups(groups):
    graph = tf.Graph()
    with graph.as_default():
        ph = tf.placeholder(tf.string, [None])
    sess = new_session(graph)
    results, runs = {}, 0
    for gid, cfg, recs in groups:
        d = TFCsv(sess, graph, ph, cfg)
        results[gid] = d.per_record(recs)
        runs += d.runs
    sess.close()
    return results, runs


def tf_csv_random(groups, workers=2):
    """TF's results for every group: `workers` graphs and sessions, each on every workers-th
    group, run side by side (session.run releases the GIL; each group's result depends only on
    the group)."""
    parts = [groups[i::workers] for i in range(workers)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        done = list(pool.map(tf_csv_groups, parts))
    results, runs = {}, 0
    for r, n in done:
        results.update(r)
        runs += n
    return results, runs


def compare_csv_random(groups, tfres, drv, rep):
    bad_records = 0
    for gid, cfg, recs in groups:
        group_tf, rec_tf = tfres[gid]
        problems = []
        g_tfq = drv["G"].get(gid)
        if g_tfq is None or not same_result(group_tf, g_tfq):
            problems.append("group: TF %s | tfq %s" % (show(group_tf), show(g_tfq)))
        for j, r in enumerate(recs):
            t = drv["R"].get((gid, j))
            if t is None or not same_result(rec_tf[j], t):
                bad_records += 1
                if len(problems) < 4:
                    problems.append("record %d %r: TF %s | tfq %s" % (j, r, show(rec_tf[j]),
                                                                       show(t)))
        if problems:
            cfgs = "cols=%s delim=%r quote=%s na=%r sel=%s" % (
                cfg["cols"], cfg["delim"], cfg["quote"], cfg["na"], cfg["sel"])
            rep.fail("decode_csv_random", gid, cfgs + "\n    " + "\n    ".join(problems))
        else:
            rep.ok("decode_csv_random")
    return bad_records


# --------------------------------------------------------------------------------------------
# decode_csv: the deterministic numbered cases (docs/conformance.md, "Case numbers")

def _cfg(cols, delim=",", quote=True, na="", sel=None):
    return {"cols": cols, "delim": delim, "quote": quote, "na": na, "sel": sel}


def csv_cases():
    """(name, cfg, records (nested list of bytes) or None, raw_defaults) -- raw_defaults, when
    given, is a list of (tf-python-value, driver-col-spec) used instead of cfg['cols']."""
    I, F, D, L, S = "int32", "float", "double", "int64", "string"
    c = []
    c.append(("1", _cfg([(I, 1)]), [b"1", b"2", b'"3"']))
    c.append(("2", _cfg([(I, 1), (I, 2)]), [b"1,4", b"2,5", b"3,6"]))
    c.append(("4", _cfg([(S, "")], quote=False), [b"1", b"2", b'"3"']))
    c.append(("6", _cfg([(I, 5)]), [[b"1", b"2"], [b'""', b"4"]]))
    c.append(("7", _cfg([(S, "")], quote=False), [[b"1", b"2"], [b'""', b'"']]))
    c.append(("8", _cfg([(D, None)]), [b"1.0", b"-1.79e+308", b'"1.79e+308"']))
    c.append(("9", _cfg([(L, None)]), [b"1", b"2", b'"2147483648"']))
    c.append(("10", _cfg([(S, "1")]), [b'"1.0"', b'"ab , c"', b'"a\nbc"', b'"ab""c"', b" abc "]))
    c.append(("11", _cfg([(F, 1.0), (I, 1), (S, "aa")]), [b"1.0,4,aa", b"0.2,5,bb", b"3,6,cc"]))
    c.append(("13", _cfg([(F, 1.0), (I, 0), (S, "a")]), [b",1,", b"0.2,3,bcd", b"3.0,,"]))
    c.append(("14", _cfg([(F, 1.0), (I, 0), (S, "a")], quote=False),
              [b",1,", b"0.2,3,bcd", b'3.0,,"']))
    c.append(("15", _cfg([(F, 1.0), (I, 0)], delim="\t"), [b"1\t1", b"0.2\t3", b"3.0\t"]))
    c.append(("17", _cfg([(F, 1.0), (I, None)]), [b",1", b"0.2,234a", b"3.0,2"]))
    c.append(("18", _cfg([(I, 1)]), [b"1", b"9999999999999999999999999", b"3"]))
    c.append(("19", _cfg([(F, 1.0), (I, None)]), [b",1", b"0.2,2", b"3.0adf,3"]))
    c.append(("21", _cfg([(F, 1.0)]), [b",1", b"0.2,2", b"3.0adf,3"]))
    c.append(("22", _cfg([(S, "default")]), [b'"']))
    c.append(("23", _cfg([(I, 1), (I, 2)], sel=[0, 1]), [b",,", b"4,5,6"]))
    c.append(("25", _cfg([(I, 1), (I, 2), (I, 3)], sel=[0, 1, 3]), [b",,", b"4,5,6"]))
    c.append(("26", _cfg([(I, 1), (I, 2), (I, 3)], sel=[0]), [b"1,2,3", b"4,5,6"]))
    c.append(("27", _cfg([(I, 1), (I, 2)], sel=[1, 0]), [b"1,2,3", b"4,5,6"]))
    c.append(("28", _cfg([(I, 1), (I, 2)], sel=[-1, 0]), [b"1,2,3", b"4,5,6"]))
    c.append(("29", _cfg([(I, 1), (I, 2)], sel=[0, 3]), [b"1,2,3"]))
    c.append(("31", _cfg([(I, 7)]), b""))
    c.append(("32", _cfg([(I, 7)]), b"\n"))
    c.append(("33", _cfg([(I, 7), (I, 8)]), b"1,2\n"))
    c.append(("34", _cfg([(I, 7), (I, 8)]), b"1,\n2"))
    c.append(("35", _cfg([(I, 7), (I, 8)]), b"\r\n1,2"))
    c.append(("37", _cfg([(S, "d")]), b"x,"))
    c.append(("39", _cfg([(S, None), (S, None)]), b'"",""'))
    c.append(("40", _cfg([(S, "a"), (S, "b")]), b'"a",'))
    c.append(("41", _cfg([(S, "")]), b'"ab"c'))
    c.append(("42", _cfg([(S, "")]), b'"abc'))
    c.append(("44", _cfg([(S, "")]), b'"a"",x"'))
    c.append(("46", _cfg([(S, ""), (S, "")]), b' "q",r'))
    c.append(("47", _cfg([(S, ""), (S, "")]), b'"q" ,r'))
    c.append(("49a", _cfg([(S, "")]), b"a\rb"))
    c.append(("49b", _cfg([(S, "")]), b'"a\rb"'))
    c.append(("50a", _cfg([(S, "")], quote=False), b'a"b'))
    c.append(("50b", _cfg([(S, ""), (S, "")], quote=False), b'"a,b"'))
    for i, r in enumerate([b'"NA"', b"NA", b"NAN"]):
        c.append(("51%s" % "abc"[i], _cfg([(S, "dflt")], na="NA"), r))
    c.append(("52", _cfg([(I, None)], na="NA"), b"NA"))
    c.append(("54", _cfg([(I, 0), (I, 0)], sel=[0, 2]), b'1,a"b,3'))
    c.append(("55", _cfg([(I, 0), (I, 0)], sel=[0, 2]), b"1,xx,3,4,5"))
    for i, r in enumerate([b"+5", b"- 5", b"0x10", b"1.0", b"2147483648"]):
        c.append(("57%s" % "abcde"[i], _cfg([(I, None)]), r))
    for i, r in enumerate([b"9223372036854775807", b"-9223372036854775808",
                           b"9223372036854775808"]):
        c.append(("58%s" % "abc"[i], _cfg([(L, None)]), r))
    for i, r in enumerate([b".", b"1e", b"0x1p3", b"infinity", b"1.5f", b"1 2", b"- 1",
                           b"0.100000000000000000000000000001"]):
        c.append(("60%s" % "abcdefgh"[i], _cfg([(F, None)]), r))
    c.append(("62", _cfg([(I, None), (S, None)]), []))
    c.append(("64", _cfg([(I, 0)], delim="ab"), [b"1"]))
    return c


def raw_default_cases():
    """Cases with record_defaults given as tensors (driver col spec t=<tensor>)."""
    return [
        # 3: a rank-2 default; in graph mode TF's shape function speaks first.
        ("3", [("int32", [1, 1], [0])], [b"1", b"2", b"3"]),
        # 63: two elements for one column.
        ("63", [("int32", [2], [1, 2])], [b"1", b"2"]),
        # a [1]-shaped and a scalar default side by side.
        ("63b", [("int32", [1], [4]), ("string", [], [b"z"])], [b"1,", b",y"]),
    ]


def records_tensor(recs):
    if isinstance(recs, bytes):
        return np.array(recs, dtype=object), tensor_tok("string", [], [recs])
    a = np.array(recs, dtype=object)
    if a.size == 0:
        a = np.zeros([0], dtype=object)
    return a, tensor_tok("string", list(a.shape), list(a.reshape(-1)))


def csv_cases_lines_and_tf():
    lines, expected, kernel = [], {}, {}
    for name, cfg, recs in csv_cases():
        arr, tok = records_tensor(recs)
        lines.append(csvopt_line(cfg))
        lines.append("csvcase c%s %s" % (name, tok))
        graph = tf.Graph()
        try:
            with graph.as_default():
                outs = tf.io.decode_csv(tf.constant(arr, dtype=tf.string), tf_defaults(cfg["cols"]),
                                        field_delim=cfg["delim"], use_quote_delim=cfg["quote"],
                                        na_value=cfg["na"], select_cols=cfg["sel"])
                with new_session(graph) as sess:
                    vals = sess.run(outs)
            expected["c" + name] = "OK " + " ".join(arr_tok(v) for v in vals)
        except (tf.errors.OpError, ValueError, TypeError) as e:
            expected["c" + name] = tf_err(e)
    for name, cols, recs in raw_default_cases():
        arr, tok = records_tensor(recs)
        spec = ["t=" + tensor_tok(dt, shp, vals) for dt, shp, vals in cols]
        lines.append(csvopt_line(_cfg([]), spec))
        lines.append("csvcase c%s %s" % (name, tok))
        graph = tf.Graph()
        try:
            with graph.as_default():
                defs = [tf.constant(np_array(dt, shp, vals)) for dt, shp, vals in cols]
                outs = tf.io.decode_csv(tf.constant(arr, dtype=tf.string), defs)
                with new_session(graph) as sess:
                    vals = sess.run(outs)
            expected["c" + name] = "OK " + " ".join(arr_tok(v) for v in vals)
        except (tf.errors.OpError, ValueError, TypeError) as e:
            expected["c" + name] = tf_err(e)
            if not isinstance(e, tf.errors.OpError):
                kernel["c" + name] = tf_kernel_decode(arr, cols)
    return lines, expected, kernel


def tf_kernel_decode(arr, cols):
    """decode_csv with record_defaults fed through placeholders of unknown shape: the shape
    function cannot judge them, so the kernel's own check answers (the message tfq gives)."""
    graph = tf.Graph()
    try:
        with graph.as_default():
            phs = [tf.placeholder(TF_DT[dt], shape=None) for dt, _, _ in cols]
            outs = tf.io.decode_csv(tf.constant(arr, dtype=tf.string), phs)
            with new_session(graph) as sess:
                vals = sess.run(outs, feed_dict={p: np_array(dt, shp, v)
                                                 for p, (dt, shp, v) in zip(phs, cols)})
        return "OK " + " ".join(arr_tok(v) for v in vals)
    except (tf.errors.OpError, ValueError, TypeError) as e:
        return tf_err(e)


def compare_simple(fam, expected, got, rep, graph_first=None):
    for k, tf_res in expected.items():
        t = got.get(k)
        if t is not None and same_result(tf_res, t):
            rep.ok(fam)
        elif graph_first and k in graph_first and t is not None and \
                graph_first[k].startswith("ERR ") and same_result(graph_first[k], t):
            # TF's graph-mode shape function speaks first; tfq gives the kernel's message, which
            # TF gives too when the shape function cannot judge the defaults (placeholders of
            # unknown shape): compared exactly with that.  docs/conformance.md lists it.
            rep.deviation(fam, k, "graph-mode shape-function message; tfq gives TF's kernel "
                                  "message %s" % show(graph_first[k], 120))
        else:
            rep.fail(fam, k, "TF %s | tfq %s" % (show(tf_res), show(t)))


# --------------------------------------------------------------------------------------------
# queues

KIND_ID = {"fifo": 0, "shuffle": 1, "padding": 2, "priority": 3}
KIND_NAME = {"fifo": "FIFOQueue", "shuffle": "RandomShuffleQueue", "padding": "PaddingFIFOQueue",
             "priority": "PriorityQueue"}


class QScript:
    def __init__(self, qid, kind, comps, cap=-1, min_after=0, seeds=(0, 0)):
        self.qid, self.kind, self.comps, self.cap = qid, kind, comps, cap
        self.min_after, self.seeds = min_after, seeds
        self.ops = []  # (op, args)
        self.deviation_ops = set()

    def add(self, op, *args):
        self.ops.append((op, args))

    @property
    def shared(self):
        return "cq%d" % self.qid


def comp_tok(dt, shape):
    if shape is None:
        return "%s/*" % dt
    return "%s/%s" % (dt, "x".join("?" if d is None else str(d) for d in shape) if shape else "_")


def qscript_lines(s, timeout_us):
    lines = ["qnew %d %d %d %d %d %d %s %s" % (
        s.qid, KIND_ID[s.kind], s.cap, s.min_after, s.seeds[0], s.seeds[1], s.shared,
        " ".join(comp_tok(dt, shp) for dt, shp in s.comps))]
    for i, (op, args) in enumerate(s.ops):
        if op in ("enq", "enqm"):
            toks = " ".join(tensor_tok(dt, shp, vals) for dt, shp, vals in args)
            lines.append("qop %d %d %d %s %s" % (s.qid, i, timeout_us, op, toks))
        elif op in ("deqm", "dequt", "close"):
            lines.append("qop %d %d %d %s %d" % (s.qid, i, timeout_us, op, args[0]))
        else:
            lines.append("qop %d %d %d %s" % (s.qid, i, timeout_us, op))
    lines.append("qfree %d" % s.qid)
    return lines


def tf_run_qscript(s, timeout_ms, ops=None):
    """Runs the script (or `ops`, a variant of its steps) in TF; returns (new_result,
    [results], {step: (size before, size after)} for each dequeue_many/dequeue_up_to that failed
    after taking elements, which TF drops).  The extra op ("restore", k) takes k elements with
    dequeue_many and appends them back, last taken first (its result is "RESTORED")."""
    ops = s.ops if ops is None else ops
    graph = tf.Graph()
    res = []
    with graph.as_default():
        dtypes = [TF_DT[dt] for dt, _ in s.comps]
        shapes = [shp for _, shp in s.comps]
        have_shapes = all(shp is not None for shp in shapes)
        try:
            if s.kind == "fifo":
                q = tf.FIFOQueue(s.cap, dtypes, shapes=shapes if have_shapes else None,
                                 shared_name=s.shared)
            elif s.kind == "padding":
                q = tf.PaddingFIFOQueue(s.cap, dtypes, shapes=shapes, shared_name=s.shared)
            elif s.kind == "priority":
                q = tf.PriorityQueue(s.cap, dtypes, shapes=shapes if have_shapes else None,
                                     shared_name=s.shared)
            else:
                handle = tf.raw_ops.RandomShuffleQueueV2(
                    component_types=dtypes,
                    shapes=[tf.TensorShape(x) for x in shapes] if have_shapes else [],
                    capacity=s.cap, min_after_dequeue=s.min_after, seed=s.seeds[0],
                    seed2=s.seeds[1], shared_name=s.shared)
                q = tf.QueueBase(dtypes, shapes if have_shapes else None, None, handle)
        except (ValueError, TypeError) as e:
            return tf_err(e), [], {}
        all_dt = ([tf.int64] if s.kind == "priority" else []) + dtypes
        phs = [tf.placeholder(d) for d in all_dt]
        n_ph = tf.placeholder(tf.int32, [])
        ops_t = {"enq": q.enqueue(phs), "enqm": q.enqueue_many(phs), "deq": q.dequeue(),
                 "deqm": q.dequeue_many(n_ph), "dequt": q.dequeue_up_to(n_ph),
                 "close0": q.close(False), "close1": q.close(True), "size": q.size()}
    sess = new_session(graph)
    ro = tf.RunOptions(timeout_in_ms=timeout_ms)
    losses = {}
    for i, (op, args) in enumerate(ops):
        if op == "size":
            try:
                res.append("SIZE %d" % sess.run(ops_t["size"]))
            except tf.errors.OpError as e:
                res.append(tf_err(e))
            continue
        if op == "restore":
            try:
                taken = sess.run(ops_t["deqm"], {n_ph: args[0]}, options=ro)
                taken = taken if isinstance(taken, (list, tuple)) else [taken]
                sess.run(ops_t["enqm"], {ph: a[::-1] for ph, a in zip(phs, taken)}, options=ro)
                res.append("RESTORED")
            except tf.errors.OpError as e:
                res.append("RESTORE FAILED " + tf_err(e))
            continue
        feed = {}
        key = op
        if op in ("enq", "enqm"):
            for ph, (dt, shp, vals) in zip(phs, args):
                feed[ph] = np_array(dt, shp, vals)
        elif op in ("deqm", "dequt"):
            feed[n_ph] = args[0]
        elif op == "close":
            key = "close%d" % args[0]
        before = sess.run(ops_t["size"]) if op in ("deqm", "dequt") else None
        try:
            out = sess.run(ops_t[key], feed, options=ro)
            if op in ("deq", "deqm", "dequt"):
                outs = out if isinstance(out, (list, tuple)) else [out]
                res.append("OK " + " ".join(arr_tok(a) for a in outs))
            else:
                res.append("OK")
        except tf.errors.OpError as e:
            res.append(tf_err(e))
            if op in ("deqm", "dequt"):
                after = sess.run(ops_t["size"])
                if after < before:  # TF dropped the elements this call had taken
                    losses[i] = (before, after)
    sess.close()
    return "OK", res, losses


def tf_qscript_expected(s, timeout_ms):
    """TF's results for the script, the first step where TF lost elements (None: none), and
    what tfq must return for every step: README "Deviations" -- tfq puts the elements of a
    timed-out dequeue_many/dequeue_up_to back (FIFO/Padding: at the front in order, so the
    queue is as if the step took nothing; RandomShuffle: appended, last taken first; Priority:
    back into the heap) and a PriorityQueue dequeue_up_to on a closed queue holding fewer
    returns them.  Modelled by re-running the script in TF with each lossy step replaced by its
    non-lossy equivalent: nothing (the step's own result stays TF's error); for RandomShuffle
    ("restore", k), a dequeue_many(k) drawing the same k elements with the same random draws
    and an enqueue_many appending them back reversed; for the PriorityQueue, a
    dequeue_up_to(size) whose short batch is tfq's result.  Returns (new_result, TF results,
    first lossy step, expected tfq results or an error text)."""
    new_res, res, losses = tf_run_qscript(s, timeout_ms)
    if not losses:
        return new_res, res, None, res
    first = min(losses)
    ops = [(op, args, i) for i, (op, args) in enumerate(s.ops)]
    fixed = {}
    for _ in range(len(s.ops) + 1):
        _, cur, losses = tf_run_qscript(s, timeout_ms, [(op, args) for op, args, _ in ops])
        if not losses:
            break
        j = min(losses)
        op, args, i = ops[j]
        before, after = losses[j]
        code = cur[j].split(" ")[1]
        if code == "4" and s.kind in ("fifo", "padding", "priority"):
            repl, fixed[i] = [], cur[j]
        elif code == "4" and s.kind == "shuffle":
            repl, fixed[i] = [("restore", (before - after,), None)], cur[j]
        elif code == "11" and s.kind == "priority" and op == "dequt":
            repl = [("dequt", (before,), i)]
        else:
            return new_res, res, first, "no model for the data loss at step %d (%s, code %s)" % (
                i, op, code)
        ops = ops[:j] + repl + ops[j + 1:]
    else:
        return new_res, res, first, "the lossy steps did not converge"
    expected = [None] * len(s.ops)
    for (op, args, i), r in zip(ops, cur):
        if i is not None:
            expected[i] = r
    for i, r in fixed.items():
        expected[i] = r
    return new_res, res, first, expected


def rand_value(rng, dt):
    if dt == "string":
        return rng.choice([b"", b"a", b"bc", b"x y", bytes([rng.randint(0, 255)])])
    if dt in ("float", "double"):
        v = rng.choice([0.5, -2.25, 1e10, rng.uniform(-100, 100)])
        return float(np.float32(v)) if dt == "float" else v
    return rng.randint(-1000, 1000)


def rand_qscript(rng, qid, kind):
    ncomp = rng.choice([1, 1, 2, 3])
    comps = []
    for _ in range(ncomp):
        dt = rng.choice(["int32", "float", "string", "int64", "double"])
        if kind == "padding":
            shp = rng.choice([[], [None], [2], [None, 2], [None, None]])
        else:
            shp = rng.choice([[], [], [2], [2, 3]])
        comps.append((dt, shp))
    cap = rng.choice([-1, 1, 2, 3, 5, 8])
    min_after = 0
    seeds = (0, 0)
    if kind == "shuffle":
        if cap < 0:
            cap = rng.choice([4, 6, 10])
        min_after = rng.choice([0, 0, 1, 2]) if cap > 2 else 0
        seeds = (rng.randint(1, 2**31 - 1), rng.randint(0, 2**31 - 1))
    s = QScript(qid, kind, comps, cap, min_after, seeds)
    prios = rng.sample(range(-10000, 10000), 400)  # distinct: ties have no defined order
    counter = [0]

    def elem_values(batch=None):
        vals = []
        if kind == "priority":
            if batch is None:
                vals.append(("int64", [], [prios.pop()]))
            else:
                vals.append(("int64", [batch], [prios.pop() for _ in range(batch)]))
        for dt, shp in comps:
            counter[0] += 1
            if kind == "padding":
                # all None dims share one random size per element (or per batch)
                # (TF 2.21 segfaults on a PaddingFIFOQueue enqueue_many of slices with a
                # 0-sized dimension, so batches use sizes >= 1; single enqueues may use 0.)
                size = rng.randint(0 if batch is None else 1, 3)
                real = [size if d is None else d for d in shp]
            else:
                real = list(shp)
            if batch is not None:
                real = [batch] + real
            n = int(np.prod(real)) if real else 1
            vals.append((dt, real, [rand_value(rng, dt) for _ in range(n)]))
        return vals

    nops = rng.randint(6, 20)
    closed = False
    for _ in range(nops):
        r = rng.random()
        if r < 0.28:
            s.add("enq", *elem_values())
        elif r < 0.42:
            s.add("enqm", *elem_values(rng.choice([0, 1, 2, 3, 4])))
        elif r < 0.55:
            s.add("deq")
        elif r < 0.66:
            s.add("deqm", rng.choice([0, 1, 2, 3]))
        elif r < 0.77:
            s.add("dequt", rng.choice([0, 1, 2, 3]))
        elif r < 0.88:
            s.add("size")
        elif r < 0.93 and rng.random() < 0.6:
            s.add("enq", *wrong_shape(rng, elem_values()))
        elif not closed or rng.random() < 0.3:
            s.add("close", rng.choice([0, 1]))
            closed = True
    if not closed and rng.random() < 0.7:
        s.add("close", 0)
        for _ in range(rng.randint(1, 5)):
            s.add(rng.choice(["deq", "dequt", "deqm", "size"]), *([rng.choice([1, 2, 3])]))
    s.ops = [(op, args if op in ("enq", "enqm", "deqm", "dequt", "close") else ())
             for op, args in s.ops]
    return s


def wrong_shape(rng, vals):
    """Changes one component's shape (keeps its dtype), for the runtime shape checks."""
    i = rng.randrange(len(vals))
    dt, shp, v = vals[i]
    shp = list(shp) + [2]  # one more dimension (a non-scalar priority for component 0)
    v = (list(v) * 2) if v else [v0 for v0 in v]
    n = int(np.prod(shp))
    v = (v * (n // max(len(v), 1) + 1))[:n] if v else []
    vals = list(vals)
    vals[i] = (dt, shp, v)
    return vals


def queue_spec_scripts():
    """Deterministic scripts of the numbered queue cases (docs/conformance.md, "Case numbers"):
    single-threaded, with timeouts for the cases where TF blocks."""
    out = []
    qid = [9000]

    def q(kind, comps, **kw):
        qid[0] += 1
        s = QScript(qid[0], kind, comps, **kw)
        out.append(s)
        return s

    i32, f32 = "int32", "float"
    s = q("fifo", [(f32, [])], cap=10)  # 1
    for v in (10.0, 20.0, 30.0):
        s.add("enq", (f32, [], [v]))
    s.add("deq"), s.add("deq"), s.add("deq")
    s = q("fifo", [(i32, []), (f32, [])], cap=10)  # 2
    for a, b in ((5, 10.0), (10, 20.0), (15, 30.0)):
        s.add("enq", (i32, [], [a]), (f32, [], [b]))
    s.add("deq"), s.add("deq"), s.add("deq")
    s = q("fifo", [(f32, [])], cap=10)  # 3, 4
    s.add("size"), s.add("enq", (f32, [], [1.0])), s.add("size"), s.add("deq"), s.add("size")
    s = q("fifo", [(f32, [])], cap=10)  # 5
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0]))
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0]))
    for _ in range(8):
        s.add("deq")
    s = q("fifo", [(i32, [2, 3])], cap=10)  # 6
    s.add("enqm", (i32, [0, 2, 3], [])), s.add("size")
    s = q("fifo", [(i32, [])], cap=10)  # 7, 8
    s.add("deqm", 0), s.add("dequt", 0), s.add("enq", (i32, [], [10])), s.add("deqm", 0)
    s.add("dequt", 0), s.add("size")
    s = q("fifo", [(i32, None)], cap=10)  # 9
    s.add("deqm", 0), s.add("dequt", 0)
    s = q("fifo", [(f32, []), (i32, [2])], cap=10)  # 10, 13
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0]), (i32, [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]))
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0]), (i32, [4, 2], [1, 2, 3, 4, 5, 6, 7, 8]))
    s.add("deqm", 4), s.add("deq"), s.add("dequt", 4)
    s = q("fifo", [(i32, [])], cap=10)  # 11, 12
    s.add("enqm", (i32, [10], list(range(10)))), s.add("deqm", 4), s.add("deqm", 4)
    s.add("dequt", 4), s.add("dequt", 4)  # the 2nd one blocks on an open queue: timeout
    s = q("fifo", [(i32, [4, 4, 4, 4])], cap=10)  # 15
    s.add("enqm", (i32, [10, 4, 4, 4, 4], list(range(2560)))), s.add("deqm", 10)
    s = q("fifo", [(i32, [2, 2]), (i32, [3, 3])], cap=10)  # 18
    s.add("enq", (i32, [2, 2], [0] * 4), (i32, [3, 4], [0] * 12))
    s = q("fifo", [(i32, [2, 2]), (i32, [3, 3])], cap=10)  # 19
    s.add("enqm", (i32, [2, 2, 2], [0] * 8), (i32, [2, 3, 4], [0] * 24))
    s.add("enqm", (i32, [2, 2, 2], [0] * 8), (i32, [3, 3, 3], [0] * 27))
    s = q("fifo", [(f32, [])], cap=10)  # 20
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("close", 0)
    for _ in range(5):
        s.add("deq")
    s = q("fifo", [(f32, [])], cap=10)  # 21, 27, 28
    s.add("deq"), s.add("deqm", 4), s.add("dequt", 4), s.add("close", 0), s.add("deq")
    s.add("deqm", 4), s.add("dequt", 4)
    s = q("fifo", [(f32, [])], cap=10)  # 22, 23
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("deqm", 3), s.add("close", 0)
    s.add("deqm", 3), s.add("size"), s.add("deq"), s.add("deq")
    s = q("fifo", [(f32, [])], cap=4)  # 25
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("deqm", 3), s.add("close", 0)
    s.add("deqm", 3), s.add("deq")
    s = q("fifo", [(f32, [])], cap=10)  # 29, 30, S2
    s.add("close", 0), s.add("enq", (f32, [], [1.0])), s.add("enqm", (f32, [2], [1.0, 2.0]))
    s.add("enqm", (f32, [0], [])), s.add("close", 0), s.add("close", 1), s.add("close", 0)
    s = q("fifo", [(f32, [])], cap=4)  # 31, 32
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("enq", (f32, [], [50.0]))
    s.add("enqm", (f32, [2], [50.0, 60.0])), s.add("size"), s.add("deq"), s.add("enq",
                                                                             (f32, [], [50.0]))
    for _ in range(5):
        s.add("deq")
    s = q("fifo", [(f32, [])], cap=5)  # 35 (the enqueue_many of 10 times out after 5)
    s.add("enqm", (f32, [10], [float(x) for x in range(10)])), s.add("size")
    s.add("deqm", 5), s.add("deqm", 1)
    s = q("fifo", [(f32, [])], cap=0)  # capacity 0: every enqueue blocks
    s.add("enq", (f32, [], [1.0])), s.add("size"), s.add("close", 0), s.add("deq")
    s = q("fifo", [(i32, [])], cap=10)  # negative n
    s.add("deqm", -1), s.add("dequt", -1)
    # RandomShuffleQueue
    s = q("shuffle", [(i32, [])], cap=10, min_after=5, seeds=(87654321, 1729))  # 55
    s.add("size"), s.add("enq", (i32, [], [1])), s.add("size")
    s = q("shuffle", [(f32, [])], cap=10, min_after=2, seeds=(87654321, 7))  # 57, 58
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0]))
    s.add("deq"), s.add("deq"), s.add("deq"), s.add("close", 0)
    for _ in range(3):
        s.add("deq")
    s = q("shuffle", [(f32, [])], cap=10, min_after=0, seeds=(87654321, 8))  # 61
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("dequt", 3), s.add("close", 0)
    s.add("dequt", 3), s.add("dequt", 3)
    s = q("shuffle", [(f32, None)], cap=10, seeds=(1, 2))  # 62
    s.add("deqm", 0), s.add("enq", (f32, [], [1.0])), s.add("deqm", 0)
    s = q("shuffle", [(f32, [])], cap=4, seeds=(87654321, 9))  # 63, 64
    s.add("enqm", (f32, [4], [10.0, 20.0, 30.0, 40.0])), s.add("enq", (f32, [], [50.0]))
    s.add("deq"), s.add("enq", (f32, [], [50.0])), s.add("deq"), s.add("enqm",
                                                                      (f32, [2], [50.0, 60.0]))
    for _ in range(4):
        s.add("deq")
    for seed2 in (1729, 87539319):  # 70
        s = q("shuffle", [(i32, [])], cap=10, min_after=5, seeds=(87654321, seed2))
        s.add("enqm", (i32, [5], [1, 2, 3, 4, 5])), s.add("enqm", (i32, [5], [1, 2, 3, 4, 5]))
        for _ in range(5):
            s.add("deq")
        s.add("close", 0)
        for _ in range(6):
            s.add("deq")
        s = q("shuffle", [(i32, [])], cap=10, min_after=5, seeds=(87654321, seed2))
        s.add("enqm", (i32, [5], [1, 2, 3, 4, 5])), s.add("enqm", (i32, [5], [1, 2, 3, 4, 5]))
        s.add("deqm", 5), s.add("close", 0), s.add("deqm", 5), s.add("dequt", 5)
    s = q("shuffle", [(i32, [])], cap=10, min_after=10, seeds=(3, 4))  # min >= capacity
    s.add("size")  # TF creates the queue resource at its first use
    s = q("shuffle", [(i32, [])], cap=10, min_after=-1, seeds=(3, 4))  # negative min
    s.add("size")
    # PaddingFIFOQueue
    s = q("padding", [(i32, [None])], cap=10)  # 78
    s.add("deqm", 0)
    s = q("padding", [(i32, [2, 2]), (i32, [None, 3])], cap=10)  # 79
    s.add("enq", (i32, [2, 2], [0] * 4), (i32, [3, 4], [0] * 12))
    s = q("padding", [(i32, [4, None, 4, None])], cap=20)  # 81
    s.add("enqm", (i32, [10, 4, 2, 4, 3], list(range(960)))), s.add("deqm", 10)
    s = q("padding", [(i32, []), (i32, [None])], cap=10)  # 82 + padding
    s.add("enq", (i32, [], [1]), (i32, [3], [1, 2, 3]))
    s.add("enq", (i32, [], [2]), (i32, [1], [4]))
    s.add("enq", (i32, [], [3]), (i32, [0], []))
    s.add("deqm", 3)
    s.add("enqm", (i32, [2], [1, 2]), (i32, [2, 2], [5, 6, 7, 8])), s.add("deq"), s.add("deq")
    s = q("padding", [("string", [None]), (f32, [None, 2])], cap=10)
    s.add("enq", ("string", [2], [b"a", b"bb"]), (f32, [1, 2], [1.0, 2.0]))
    s.add("enq", ("string", [0], []), (f32, [3, 2], [1.0] * 6)), s.add("dequt", 5)
    s.add("close", 0), s.add("dequt", 5), s.add("dequt", 5)
    # PriorityQueue
    s = q("priority", [("string", [])], cap=-1)  # 83
    pr = list(range(-50, 50))
    random.Random(5).shuffle(pr)
    for p in pr:
        s.add("enq", ("int64", [], [p]), ("string", [], [b"v%d" % p]))
    s.add("deqm", 100)
    s = q("priority", [(i32, [])], cap=10)  # 87-ish, S5 (deviation: short dequeue_up_to)
    s.add("enqm", ("int64", [3], [5, 1, 3]), (i32, [3], [50, 10, 30])), s.add("deqm", 2)
    s.add("enq", ("int64", [], [0]), (i32, [], [0])), s.add("close", 0), s.add("dequt", 5)
    s.add("size"), s.add("deq")
    s = q("priority", [(i32, [])], cap=10)
    s.add("enq", ("int64", [2], [1, 2]), (i32, [], [1]))  # non-scalar priority
    s.add("enq", ("int64", [], [4]), (i32, [], [1])), s.add("dequt", 1), s.add("dequt", 1)
    s = q("fifo", [(f32, [])], cap=10)  # S4 (deviation): a timed-out dequeue_many that took 2
    s.add("enqm", (f32, [2], [1.0, 2.0])), s.add("deqm", 3), s.add("size"), s.add("deq")
    return out


def compare_queue(s, tfres, drv, rep, fam):
    new_res, res, dev_step, expected = tfres
    got_new = drv["Q"].get((str(s.qid), "new"))
    case = "%s#%d" % (s.kind, s.qid)
    if new_res.startswith("OK") and got_new and got_new.startswith("ERR") and res and \
            res[0].startswith("ERR"):
        # TF creates the queue resource at its first use: its creation error comes from step 0.
        new_res = res[0]
    if not same_result(new_res, got_new or ""):
        rep.fail(fam, case, "create: TF %s | tfq %s" % (show(new_res), show(got_new)))
        return
    if not new_res.startswith("OK"):
        rep.ok(fam)
        return
    if isinstance(expected, str):
        rep.fail(fam, case, expected + "\n    script: " + describe_script(s))
        return
    for i in range(len(expected)):
        t = drv["Q"].get((str(s.qid), str(i)))
        if t is None or not same_result(expected[i], t):
            op, args = s.ops[i]
            rep.fail(fam, case, "step %d %s%s: %s %s | tfq %s\n    script: %s" % (
                i, op, "(%s)" % args[0] if op in ("deqm", "dequt", "close") else "",
                "TF" if dev_step is None or i < dev_step else "expected (TF's data loss at step "
                "%d modelled as tfq's restoration)" % dev_step, show(expected[i]), show(t),
                describe_script(s)))
            return
    if dev_step is not None:
        op, args = s.ops[dev_step]
        rep.deviation(fam, case, "step %d %s(%s): TF dropped the elements it had taken, tfq "
                                 "restores them; whole script compared with that restoration"
                      % (dev_step, op, args[0]))
        return
    rep.ok(fam)


def describe_script(s):
    parts = ["%s cap=%d" % (s.kind, s.cap)]
    if s.kind == "shuffle":
        parts.append("min_after=%d seeds=%s" % (s.min_after, s.seeds))
    parts.append("comps=%s" % s.comps)
    for op, args in s.ops:
        if op in ("enq", "enqm"):
            parts.append("%s%s" % (op, [(dt, shp, vals[:4]) for dt, shp, vals in args]))
        elif args:
            parts.append("%s(%s)" % (op, args[0]))
        else:
            parts.append(op)
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# readers

COMP_ID = {"": 0, "ZLIB": 1, "GZIP": 2}
READER_ID = {"text": 0, "fixed": 1, "tfrecord": 2}


def write_compressed(path, data, comp):
    if comp == "GZIP":
        data = gzip.compress(data)
    elif comp == "ZLIB":
        data = zlib.compress(data)
    with open(path, "wb") as f:
        f.write(data)


def rand_lines(rng, n):
    out = []
    for _ in range(n):
        ln = "".join(rng.choice("abc xyz,019\t\"") for _ in range(rng.randint(0, 30))).encode()
        if rng.random() < 0.1:
            ln += b"\r"
        if rng.random() < 0.05:
            ln = b"a\rb"
        out.append(ln)
    return out


class ReadCase:
    def __init__(self, rid, kind, comp, files, batch=0, skip=0, rec=0, hdr=0, ftr=0, hop=0,
                 compat=0, deviation=None, tf_plain=()):
        self.rid, self.kind, self.comp, self.files = rid, kind, comp, files
        self.batch, self.skip, self.rec, self.hdr, self.ftr, self.hop = batch, skip, rec, hdr, ftr, hop
        # tf_plain: a compressed TextLine case's files uncompressed (TF1's TextLineReader has no
        # compression: TF reads those, and its keys name the compressed files)
        self.compat, self.deviation, self.tf_plain = compat, deviation, list(tf_plain)
        self.name = ""
        self.trunc = None  # (index of the truncated file, tfq's DATA_LOSS message)

    def line(self):
        return "read %s %d %d %d %d %d %d %d %d %d %d %s" % (
            self.rid, READER_ID[self.kind], COMP_ID[self.comp], self.batch, self.skip, self.rec,
            self.hdr, self.ftr, self.hop, self.compat, len(self.files), " ".join(self.files))


def tfrecord_bytes(recs):
    out = bytearray()
    for r in recs:
        ln = struct.pack("<Q", len(r))
        out += ln + struct.pack("<I", masked_crc(ln)) + r + struct.pack("<I", masked_crc(r))
    return bytes(out)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def gen_reader_cases(rng, wd):
    cases, pre_lines = [], []
    n = [0]

    def rid():
        n[0] += 1
        return "r%d" % n[0]

    def path(name):
        return os.path.join(wd, name)

    for comp in ("", "GZIP", "ZLIB"):
        ext = {"": "", "GZIP": ".gz", "ZLIB": ".zz"}[comp]
        # text files (spec 73, 75, 77, 78)
        for variant in range(4):
            files, plain = [], []
            for fi in range(2):
                lines = rand_lines(rng, rng.randint(0, 12))
                data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 or not lines else b"")
                if variant == 3 and fi == 0:
                    data = b"h1\nh2\n"  # shorter than the header
                p = path("t_%s_%d_%d.txt%s" % (comp or "none", variant, fi, ext))
                write_compressed(p, data, comp)
                files.append(p)
                if comp:  # the same bytes uncompressed, for TF's TextLineReader (tf_read)
                    os.makedirs(path("plain"), exist_ok=True)
                    plain.append(os.path.join(path("plain"), os.path.basename(p)))
                    write_compressed(plain[-1], data, "")
            c = ReadCase(rid(), "text", comp, files, batch=[0, 0, 3, 0][variant],
                         skip=[0, 1, 0, 5][variant], tf_plain=plain)
            c.name = "text/%s/v%d" % (comp or "none", variant)
            cases.append(c)
        # TFRecord files written by Python (TF's format) and by tfq's writer
        for writer in ("tf", "tfq"):
            files = []
            for fi in range(2):
                recs = [("Record %d of file %d" % (j, fi)).encode() + bytes(rng.randint(0, 3))
                        for j in range(rng.randint(0, 9))]
                recs.append(b"")
                recs.append(bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 300))))
                p = path("r_%s_%s_%d.tfrecord%s" % (writer, comp or "none", fi, ext))
                if writer == "tf":
                    with tf.io.TFRecordWriter(p, tf.io.TFRecordOptions(
                            compression_type=comp or None)) as w:
                        for r in recs:
                            w.write(r)
                else:
                    pre_lines.append("tfwrite %s %d %d" % (p, COMP_ID[comp], len(recs)))
                    pre_lines.extend(hx(r) for r in recs)
                files.append(p)
            for batch in (0, 3):
                c = ReadCase(rid(), "tfrecord", comp, files, batch=batch)
                c.name = "tfrecord/%s/written-by-%s/batch%d" % (comp or "none", writer, batch)
                cases.append(c)
        # fixed-length (spec 80, 81, 82)
        for variant in range(3):
            hdr, rec, ftr = [(5, 3, 2), (5, 3, 2), (0, 4, 0)][variant]
            hop = [0, 4, 0][variant]
            files = []
            for fi in range(2):
                nrec = rng.randint(0, 7) if fi else 7
                body = b""
                for j in range(nrec):
                    r = (str(j) * rec).encode()[:rec]
                    body += r + (b"G" * (hop - rec) if hop and j < nrec - 1 else b"")
                data = b"H" * hdr + body + b"F" * ftr
                p = path("f_%s_%d_%d.bin%s" % (comp or "none", variant, fi, ext))
                write_compressed(p, data, comp)
                files.append(p)
            c = ReadCase(rid(), "fixed", comp, files, batch=[0, 0, 2][variant], rec=rec,
                         hdr=hdr, ftr=ftr, hop=hop)
            c.name = "fixed/%s/v%d" % (comp or "none", variant)
            cases.append(c)
    # errors and truncation
    good = tfrecord_bytes([b"123"])
    p = path("e_trunc14.tfrecord")
    open(p, "wb").write(good[:14])  # 90
    c = ReadCase(rid(), "tfrecord", "", [p])
    c.name = "tfrecord/truncated-at-14"
    cases.append(c)
    bad = bytearray(tfrecord_bytes([b"123", b"456"]))
    bad[9] ^= 1
    p = path("e_badcrc.tfrecord")
    open(p, "wb").write(bytes(bad))  # 93
    c = ReadCase(rid(), "tfrecord", "", [p])
    c.name = "tfrecord/corrupted-length-crc"
    cases.append(c)
    bad = bytearray(tfrecord_bytes([b"123", b"456"]))
    bad[13] ^= 1
    p = path("e_baddata.tfrecord")
    open(p, "wb").write(bytes(bad))
    c = ReadCase(rid(), "tfrecord", "", [p])
    c.name = "tfrecord/corrupted-data"
    cases.append(c)
    p0 = path("e_empty.tfrecord")
    open(p0, "wb").close()
    p = path("e_trunc5.tfrecord")
    open(p, "wb").write(tfrecord_bytes([b"123"]) + tfrecord_bytes([b"456"])[:5])  # 91
    for compat in (1, 0):
        c = ReadCase(rid(), "tfrecord", "", [p0, p], compat=compat)
        c.name = "tfrecord/cut-inside-header/compat%d" % compat
        if not compat:
            c.deviation = "truncation is DATA_LOSS by default (tf_compat_truncation off)"
            c.trunc = (1, "truncated record header at %d: %s ends after 5 of the 12 header bytes"
                       % (len(tfrecord_bytes([b"123"])), p))
        cases.append(c)
    p = path("e_fixed_short.bin")
    open(p, "wb").write(b"HHHHHH" + b"000111222" + b"33")  # ends inside a record
    ps = path("e_fixed_tiny.bin")
    open(ps, "wb").write(b"HHHH")  # shorter than the header (85)
    for compat in (1, 0):
        c = ReadCase(rid(), "fixed", "", [p, ps, p], rec=3, hdr=6, compat=compat)
        c.name = "fixed/ends-inside-record/compat%d" % compat
        if not compat:
            c.deviation = "truncation is DATA_LOSS by default (tf_compat_truncation off)"
            c.trunc = (0, "%s ends inside record 3: 2 bytes left at offset 15, where record_bytes "
                       "+ footer_bytes = 3 are needed (or only the footer of 0 bytes)" % p)
        cases.append(c)
    raw = gzip.compress(tfrecord_bytes([b"a" * 100, b"b" * 100, b"c" * 5000]))
    p = path("e_trunc.tfrecord.gz")
    open(p, "wb").write(raw[:len(raw) // 2])
    cut = raw[:len(raw) // 2]
    for compat in (1, 0):
        c = ReadCase(rid(), "tfrecord", "GZIP", [p], compat=compat)
        c.name = "tfrecord/gzip-cut-short/compat%d" % compat
        if not compat:
            c.deviation = "truncation is DATA_LOSS by default (tf_compat_truncation off)"
            c.trunc = (0, "truncated GZIP stream: %s ends at compressed offset %d (decompressed "
                       "offset %d) before the end of the stream" % (
                           p, len(cut), len(zlib.decompressobj(31).decompress(cut))))
        cases.append(c)
    p = path("e_missing_file.tfrecord")
    c = ReadCase(rid(), "tfrecord", "", [p])
    c.name = "tfrecord/missing-file"
    cases.append(c)
    return cases, pre_lines


def tf_read(c):
    """(list of "key value" strings, final error) from TF.  A compressed TextLine case: TF's
    TextLineReader over the same bytes uncompressed (c.tf_plain), keys, header lines and '\r'
    as it gives them, each key's file name put back to the compressed file's."""
    graph = tf.Graph()
    out = []
    files = c.tf_plain or c.files
    rename = {p.encode(): f.encode() for p, f in zip(c.tf_plain, c.files)}

    def key(k):
        name, _, line = k.rpartition(b":")
        return hx(rename.get(name, name) + b":" + line)
    with graph.as_default():
        fq = tf.FIFOQueue(100, [tf.string], shapes=[[]], shared_name="fq" + c.rid)
        if c.kind == "text":
            r = tf.TextLineReader(skip_header_lines=c.skip)
        elif c.kind == "tfrecord":
            r = tf.TFRecordReader(options=tf.io.TFRecordOptions(compression_type=c.comp or None))
        else:
            r = tf.FixedLengthRecordReader(c.rec, header_bytes=c.hdr, footer_bytes=c.ftr,
                                           hop_bytes=c.hop, encoding=c.comp or None)
        if c.batch:
            k, v = r.read_up_to(fq, c.batch)
        else:
            k, v = r.read(fq)
        init = [fq.enqueue_many([files]), fq.close()]
    with new_session(graph) as sess:
        for op in init:
            sess.run(op)
        for _ in range(100000):
            try:
                kk, vv = sess.run([k, v])
            except tf.errors.OpError as e:
                if c.kind == "fixed" and isinstance(e, tf.errors.OutOfRangeError) and \
                        "reached end of file" in tf_message(e):
                    out.append("ERR %d %s" % (e.error_code, hx(tf_message(e).encode())))
                    continue  # spec 85: the next read moves on to the next file
                return out, tf_err(e)
            if c.batch:
                for a, b in zip(kk, vv):
                    out.append("%s %s" % (key(a), hx(b)))
            else:
                out.append("%s %s" % (key(kk), hx(vv)))
    return out, None


def records_through_file(files, items, t):
    """TF's items (records "key value", and the ERR of a file shorter than its header) that
    come from files[0..t] (the list may name a file twice: a record with index 0, or from
    another file, starts the next one)."""
    out, pos, seen = [], 0, False
    for it in items:
        if it.startswith("ERR"):  # a file with no record: the next one
            pos, seen = (pos + 1 if seen else pos), True
        else:
            path, idx = bytes.fromhex(it.split(" ")[0][1:]).decode().rsplit(":", 1)
            if not seen or files[pos] != path or idx == "0":
                pos += 1 if seen else 0
                while pos < len(files) and files[pos] != path:
                    pos += 1
            seen = True
        if pos > t:
            break
        out.append(it)
    return out


def split_tfq_read(lines):
    """The driver prints records as 'key value' and ends with 'END ERR c m'.  A FixedLength
    "reached end of file" is not the end in TF: the driver stops at any error, so re-reading is
    driven here by a second 'read' only if needed (see compare)."""
    recs, end = [], None
    for ln in lines:
        if ln.startswith("END "):
            end = ln[4:]
        else:
            recs.append(ln)
    return recs, end


def compare_read(c, tfout, drv, rep):
    fam = "readers"
    tf_recs, tf_end = tfout
    got = drv["K"].get(c.rid, [])
    recs, end = split_tfq_read(got)
    # the driver stops at its first error; the TF loop continues past "reached end of file"
    tf_all = tf_recs + ([tf_end] if tf_end else [])
    tfq_all = recs + ([end] if end else [])
    if c.deviation:
        # tfq: exactly TF's records up to the end of the truncated file, then its DATA_LOSS
        t, msg = c.trunc
        want = records_through_file(c.files, tf_recs, t) + ["ERR 15 " + hx(msg.encode())]
        if tfq_all == want:
            rep.deviation(fam, c.name, c.deviation + "; tfq: TF's records through the truncated "
                                                     "file, then " + show(end, 120))
        else:
            i = next((i for i, (a, b) in enumerate(zip(want, tfq_all)) if a != b),
                     min(len(want), len(tfq_all)))
            rep.fail(fam, c.name, "item %d: expected %s | tfq %s (expected %d items, tfq %d)" % (
                i, show(want[i]) if i < len(want) else "<end>",
                show(tfq_all[i]) if i < len(tfq_all) else "<end>", len(want), len(tfq_all)))
        return
    ok = len(tf_all) == len(tfq_all) and all(
        same_result(a, b) if a.startswith("ERR") else a == b for a, b in zip(tf_all, tfq_all))
    if ok:
        rep.ok(fam)
    else:
        i = next((i for i, (a, b) in enumerate(zip(tf_all, tfq_all)) if a != b),
                 min(len(tf_all), len(tfq_all)))
        rep.fail(fam, c.name, "first difference at item %d: TF %s | tfq %s (TF %d items, tfq %d)"
                 % (i, show(tf_all[i]) if i < len(tf_all) else "<end>",
                    show(tfq_all[i]) if i < len(tfq_all) else "<end>", len(tf_all), len(tfq_all)))


# --------------------------------------------------------------------------------------------
# The TensorFlow reference of the families that depend on TF alone (decode_csv random groups,
# queue scripts, coordination), cached per seed and options, TF version and the harness's own
# source (a file under the build dir: tests/conformance/meson.build passes --tf-cache), and
# scripts/test points every tree at the first tree's cache with TFQ_CONFORMANCE_CACHE, so the
# ASan tree's run does not recompute what the first tree's run computed.  The readers
# (TF reads files tfq wrote), decode_csv cases and the CLI family are always run live.

def tf_cache_lookup(args, only):
    d = os.environ.get("TFQ_CONFORMANCE_CACHE", "") or args.tf_cache
    if not d:
        return None, None
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("run_conformance.py", "coord_conformance.py", "cli_conformance.py"):
        with open(os.path.join(here, name), "rb") as f:
            h.update(f.read())
    key = "seed%d-tf%s-%s-%s" % (args.seed, tf.__version__, h.hexdigest()[:16], hashlib.sha256(
        repr((sorted(only), args.records, args.group_size, args.queue_scripts,
              args.batch_scenarios, args.producer_scenarios, args.timeout_ms)).encode())
        .hexdigest()[:12])
    path = os.path.join(d, "tf-reference-%s.pickle" % key)
    try:
        with open(path, "rb") as f:
            got = pickle.load(f)
        print("-- TF reference: cached %s" % path)
        return path, got
    except (OSError, EOFError, pickle.UnpicklingError):
        print("-- TF reference: computed (cache %s)" % path)
        return path, None


def tf_cache_store(path, value):
    if not path:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        pickle.dump(value, f)
    os.replace(tmp, path)  # atomic: a concurrent reader sees the whole file or none


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--coord-driver", default="",
                    help="conformance_coord (families coordinator, queue_runner, batchers, "
                         "producers; skipped when not given)")
    ap.add_argument("--tfq-cat", default="",
                    help="tools/tfq-cat (family cli_decode_csv; skipped when not given)")
    ap.add_argument("--workdir", default="conformance-work")
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--group-size", type=int, default=250)
    ap.add_argument("--queue-scripts", type=int, default=60, help="random scripts per kind")
    ap.add_argument("--batch-scenarios", type=int, default=4,
                    help="random batcher scenarios per batcher (8: batch, shuffle_batch, "
                         "batch_join, shuffle_batch_join and their maybe_ forms)")
    ap.add_argument("--producer-scenarios", type=int, default=12,
                    help="random producer scenarios besides the numbered ones")
    ap.add_argument("--timeout-ms", type=int, default=100,
                    help="TF RunOptions timeout that shows a blocking op")
    ap.add_argument("--tf-threads", type=int, default=4,
                    help="queue scripts run in TF side by side (each its own session)")
    ap.add_argument("--only", default="",
                    help="comma list: csv,cases,readers,queues,coord,cli")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--tf-cache", default="",
                    help="directory of cached TF references ($TFQ_CONFORMANCE_CACHE wins; "
                         "neither: always computed)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else {"csv", "cases", "readers", "queues",
                                                         "coord", "cli"}
    if not args.coord_driver:
        only.discard("coord")
    if not args.tfq_cat:
        only.discard("cli")
    t0 = time.time()
    rng = random.Random(args.seed)
    wd = os.path.abspath(args.workdir)
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    rep = Report()
    me = sys.modules[__name__]

    # ---- generate every scenario (and the files Python writes) --------------------------
    lines = []
    groups = []
    if "csv" in only:
        groups = gen_csv_random(random.Random(rng.random()), args.records, args.group_size)
        lines += csv_random_lines(groups)
    case_lines, case_expected, case_kernel = ([], {}, {})
    if "cases" in only:
        case_lines, case_expected, case_kernel = csv_cases_lines_and_tf()
        lines += case_lines
    read_cases, pre = ([], [])
    if "readers" in only:
        read_cases, pre = gen_reader_cases(random.Random(rng.random()), wd)
        lines += pre + [c.line() for c in read_cases]
    scripts = []
    if "queues" in only:
        qrng = random.Random(rng.random())
        qid = 0
        for kind in ("fifo", "shuffle", "padding", "priority"):
            for _ in range(args.queue_scripts):
                qid += 1
                scripts.append(rand_qscript(qrng, qid, kind))
        scripts += queue_spec_scripts()
        for s in scripts:
            lines += qscript_lines(s, 1000)
    scen = os.path.join(wd, "scenarios.txt")
    with open(scen, "w") as f:
        f.write("\n".join(lines) + "\n")
    coord_plan = None
    if "coord" in only:
        import coord_conformance
        coord_plan, clines = coord_conformance.generate(me, random.Random(args.seed + 1), args)
        with open(os.path.join(wd, "coord-scenarios.txt"), "w") as f:
            f.write("\n".join(clines) + "\n")
    t_gen = time.time() - t0

    # ---- tfq runs in the background while TF works ----------------------------------------
    drv_out = open(os.path.join(wd, "tfq-output.txt"), "w")
    proc = subprocess.Popen([args.driver, scen], stdout=drv_out, stderr=subprocess.PIPE)
    if coord_plan:
        coord_out = open(os.path.join(wd, "tfq-coord-output.txt"), "w")
        cproc = subprocess.Popen([args.coord_driver, os.path.join(wd, "coord-scenarios.txt")],
                                 stdout=coord_out, stderr=subprocess.PIPE)

    cache_path, cached = tf_cache_lookup(args, only)
    t1 = time.time()
    if cached:
        csv_tf, runs = cached["csv"]
    else:
        csv_tf, runs = tf_csv_random(groups) if groups else ({}, 0)
    t_csv = time.time() - t1
    t1 = time.time()
    if cached:
        q_tf = cached["queues"]
    else:
        # Each script has its own graph and session, and most of its time is TF waiting out the
        # RunOptions timeout of a blocking op: the scripts run side by side (session.run
        # releases the GIL), which cuts this family's wall time ~4x without changing a result.
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.tf_threads) as pool:
            q_res = list(pool.map(lambda s: tf_qscript_expected(s, args.timeout_ms), scripts))
        q_tf = {s.qid: r for s, r in zip(scripts, q_res)}
    t_q = time.time() - t1
    t1 = time.time()
    if cached:
        coord_tf = cached["coord"]
    else:
        coord_tf = coord_conformance.run_tf(me, coord_plan) if coord_plan else {}
        tf_cache_store(cache_path, {"csv": (csv_tf, runs), "queues": q_tf, "coord": coord_tf})
    t_coord = time.time() - t1

    for name, p in [("conformance_tfq", proc)] + ([("conformance_coord", cproc)]
                                                  if coord_plan else []):
        _, err = p.communicate()
        if p.returncode != 0:
            print("FAIL driver: %s exited with %d: %s" % (name, p.returncode,
                                                          err.decode()[-2000:]))
            print("0 passed, 1 failed")
            sys.exit(1)
    drv_out.close()
    if coord_plan:
        coord_out.close()
    # readers after the driver: tfq wrote some of the TFRecord files TF reads
    t1 = time.time()
    r_tf = {c.rid: tf_read(c) for c in read_cases}
    t_r = time.time() - t1
    with open(os.path.join(wd, "tfq-output.txt")) as f:
        drv = parse_driver(f.read())

    # ---- compare ------------------------------------------------------------------------
    bad_records = compare_csv_random(groups, csv_tf, drv, rep) if groups else 0
    compare_simple("decode_csv_cases", case_expected, drv["C"], rep, graph_first=case_kernel)
    for s in scripts:
        compare_queue(s, q_tf[s.qid], drv, rep, "queues_spec" if s.qid > 9000 else "queues_random")
    for c in read_cases:
        compare_read(c, r_tf[c.rid], drv, rep)
    if coord_plan:
        with open(os.path.join(wd, "tfq-coord-output.txt")) as f:
            coord_conformance.compare(me, coord_plan, coord_tf, coord_conformance.parse(f.read()),
                                      rep)
    t1 = time.time()
    cli_na = []
    if "cli" in only:
        import cli_conformance
        os.makedirs(os.path.join(wd, "cli"))
        cli_na = cli_conformance.run(me, args.tfq_cat, os.path.join(wd, "cli"), rep)
    t_cli = time.time() - t1

    for line in rep.failures:
        print(line)
    for line in rep.deviations:
        print(line)
    for case, why in cli_na:
        print("not applicable: cli_decode_csv %s (%s)" % (case, why))
    print("-- per family (passed / failed / deviations):")
    for fam, (p, f_, d) in sorted(rep.fam.items()):
        print("   %-20s %5d %5d %5d" % (fam, p, f_, d))
    if groups:
        print("-- decode_csv random: %d records in %d groups (a group is one scenario); %d "
              "records disagree; %d TF runs" % (sum(len(g[2]) for g in groups), len(groups),
                                                bad_records, runs))
    print("-- time: generate %.1fs, TF decode_csv %.1fs, TF queues %.1fs, TF coordination "
          "%.1fs, TF readers %.1fs, CLI %.1fs, total %.1fs" % (
              t_gen, t_csv, t_q, t_coord, t_r, t_cli, time.time() - t0))
    passed = sum(v[0] for v in rep.fam.values())
    failed = sum(v[1] for v in rep.fam.values())
    devs = sum(v[2] for v in rep.fam.values())
    print("conformance: families %s" % ", ".join("%s %d/%d/%d" % (k, v[0], v[1], v[2])
                                                 for k, v in sorted(rep.fam.items())))
    print("%d passed, %d failed" % (passed, failed))
    print("%d deviations" % devs)
    print("%d skipped (the not-applicable cases listed above)" % len(cli_na))
    sys.stdout.flush()
    # os._exit: TF may crash while tearing down sessions that still hold timed-out queue ops.
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
