"""The `cli_decode_csv` family of the conformance harness (docs/conformance.md): every decode_csv
case of the spec (the `decode_csv_cases` family's cases) through `tfq-cat -f csv --no-shuffle
-o jsonl`, compared live with the wheel's `tf.compat.v1.decode_csv`: the values, or the exit
status and the error text.

How a case maps to the CLI: the records become the lines of a file (tfq-cat reads CSV with a
TextLineReader), record_defaults become `-d TYPE[:DEFAULT],...`, and field_delim, use_quote_delim,
na_value and select_cols their options.  One batch holds every record (`-b` larger than the
file), so the values come out in record order, flat (a records tensor of rank 2 is compared in
row-major order: the CLI has no record shapes).

Errors: tfq-cat decodes a record at a time, so its message is the one TF gives for the failing
record decoded alone ("record 0"), prefixed by "tfq-cat: FILE:LINE: " with LINE the failing
record's line (TF's flat record index + 1).  The error cases run with `--drop-remainder`: no
batch can complete, so stdout must be empty (without it, whether the records before the failing
one are printed depends on whether the consumer took them before the stop).  Option errors are
usage errors (exit 2) whose first line ends with TF's message.

Cases the CLI cannot express are listed by `not_applicable()` with the reason.
"""
import ctypes
import json
import os
import re
import subprocess

import numpy as np

import tensorflow.compat.v1 as tf

FAMILY = "cli_decode_csv"
TYPE = {"float": "float32", "double": "float64", "int32": "int32", "int64": "int64",
        "string": "string"}
_libc = ctypes.CDLL(None)
_libc.strtof.restype = ctypes.c_float
_libc.strtof.argtypes = [ctypes.c_char_p, ctypes.c_void_p]


def flat_records(recs):
    if isinstance(recs, bytes):
        return [recs], []
    a = np.array(recs, dtype=object)
    return list(a.reshape(-1)), list(a.shape)


def why_not(recs, raw):
    """The reason a case cannot go through the CLI, or None."""
    if raw:
        shapes = [shp for _, shp, _ in raw]
        if any(len(s) > 1 for s in shapes) or any(int(np.prod(s)) > 1 for s in shapes):
            return ("record_defaults given as tensors of shape %s: -d has one scalar default "
                    "per field" % shapes)
    flat, _ = flat_records(recs)
    if any(b"\n" in r for r in flat):
        return "a record holding a newline: tfq-cat reads CSV lines (TextLineReader)"
    if any(r.endswith(b"\r") for r in flat):
        return "a record ending in \\r: the TextLineReader drops a line's final \\r"
    return None


def spec_of(cols):
    out = []
    for typ, d in cols:
        t = TYPE[typ]
        if d is None:
            out.append(t)
        elif typ == "string":
            s = d if isinstance(d, str) else d.decode("latin-1")
            out.append('%s:"%s"' % (t, s.replace('"', '""')))
        elif typ in ("float", "double"):
            out.append("%s:%r" % (t, float(d)))
        else:
            out.append("%s:%d" % (t, d))
    return ",".join(out)


def cases(h):
    """(name, cfg, records, raw_defaults or None) for every decode_csv case."""
    out = [(name, cfg, recs, None) for name, cfg, recs in h.csv_cases()]
    for name, cols, recs in h.raw_default_cases():
        cfg = h._cfg([(dt, vals[0] if dt != "string" else vals[0].decode("latin-1"))
                      for dt, shp, vals in cols])
        out.append((name, cfg, recs, cols))
    return out


def tf_decode(h, cfg, recs, raw):
    """TF on the records (any shape): ("OK", [flat column arrays]) or ("ERR", token)."""
    g = tf.Graph()
    try:
        with g.as_default():
            defs = ([tf.constant(h.np_array(dt, shp, vals)) for dt, shp, vals in raw] if raw
                    else h.tf_defaults(cfg["cols"]))
            arr = np.array(recs, dtype=object)
            if arr.size == 0:
                arr = np.zeros([0], dtype=object)
            outs = tf.io.decode_csv(tf.constant(arr, dtype=tf.string), defs,
                                    field_delim=cfg["delim"], use_quote_delim=cfg["quote"],
                                    na_value=cfg["na"], select_cols=cfg["sel"])
            with h.new_session(g) as sess:
                vals = sess.run(outs)
        return "OK", [np.asarray(v).reshape(-1) for v in vals]
    except tf.errors.OpError as e:
        return "ERR", h.tf_err(e)
    except (ValueError, TypeError) as e:
        return "PYERR", str(e)


def run_cli(tfq_cat, wd, name, cfg, recs, raw, drop):
    flat, _ = flat_records(recs)
    path = os.path.join(wd, "cli_%s.csv" % name)
    with open(path, "wb") as f:
        f.write(b"".join(r + b"\n" for r in flat))
    # --no-header: line 1 is data, as decode_csv reads it (tfq-cat detects headers by default)
    cmd = [tfq_cat, "-q", "-f", "csv", "--no-header", "--no-shuffle", "-o", "jsonl", "-n", "0",
           "-b", str(len(flat) + 1000), "-d", spec_of(cfg["cols"])]
    if cfg["delim"] != ",":
        cmd.append("--field-delim=" + cfg["delim"])
    if not cfg["quote"]:
        cmd.append("--no-quote-delim")
    if cfg["na"]:
        cmd.append("--na-value=" + cfg["na"])
    if cfg["sel"] is not None:
        cmd.append("--select-cols=" + ",".join(str(c) for c in cfg["sel"]))
    if drop:
        cmd.append("--drop-remainder")
    cmd.append(path)
    p = subprocess.run(cmd, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr, path


def parse_value(typ, v):
    if typ == "string":
        return v.encode("utf-8")
    if typ in ("int32", "int64"):
        return int(v)
    s = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}.get(v, v) if isinstance(v, str) \
        else v
    if typ == "float":
        return np.float32(_libc.strtof(str(s).encode(), None))
    return np.float64(float(s))


def same_value(typ, a, b):
    if typ in ("float", "double"):
        a, b = np.asarray(a), np.asarray(b)
        if np.isnan(a) and np.isnan(b):
            return True  # JSON has one NaN: sign and payload are not compared
        return a.tobytes() == b.tobytes()
    return a == b


# tfq-cat's usage errors put TF's message (compared exactly, never empty) after one of these
# named prefixes, which say which option it is about (docs/conformance.md, "Messages").
USAGE_WRAPPER = re.compile(r"tfq-cat: (--select-cols|--select-cols names \d+ columns but -d lists "
                           r"\d+ fields|invalid --field-delim '[^']*'): ")


def compare_case(h, tfq_cat, wd, name, cfg, recs, raw, rep):
    case = "c" + name
    kind, res = tf_decode(h, cfg, recs, raw)
    flat, _ = flat_records(recs)
    if kind == "OK":
        rc, out, err, _ = run_cli(tfq_cat, wd, name, cfg, recs, raw, drop=False)
        cols = [[] for _ in cfg["cols"]]
        try:
            for line in out.decode("utf-8").splitlines():  # an object a record, in column order
                rec = json.loads(line, parse_float=str, parse_int=str)
                if len(rec) != len(cols):
                    raise IndexError("%d values in a record, %d columns" % (len(rec), len(cols)))
                for i, v in enumerate(rec.values()):
                    cols[i].append(v)
        except (ValueError, IndexError, KeyError) as e:
            rep.fail(FAMILY, case, "unreadable output %r: %s" % (out[:200], e))
            return
        problems = []
        if rc != 0 or err:
            problems.append("exit %d, stderr %r" % (rc, err[:200]))
        for (typ, _), want, got in zip(cfg["cols"], res, cols):
            if len(want) != len(got):
                problems.append("%d values, TF %d" % (len(got), len(want)))
                continue
            for j, (a, b) in enumerate(zip(want, got)):
                if not same_value(typ, a, parse_value(typ, b)):
                    problems.append("record %d: TF %r | tfq-cat %r" % (j, a, b))
                    break
        if problems:
            rep.fail(FAMILY, case, "; ".join(problems))
        else:
            rep.ok(FAMILY)
        return
    rc, out, err, path = run_cli(tfq_cat, wd, name, cfg, recs, raw, drop=True)
    lines = err.decode("utf-8", "surrogateescape").split("\n")
    msg = res if kind == "PYERR" else h.msg_of(res)
    if kind == "PYERR" or msg.startswith("field_delim"):  # option errors: tfq-cat's usage errors
        ok = rc == 2 and msg != "" and USAGE_WRAPPER.match(lines[0]) is not None and \
            lines[0][USAGE_WRAPPER.match(lines[0]).end():] == msg and not out
        if ok:
            rep.ok(FAMILY)
        else:
            rep.fail(FAMILY, case, "usage error expected ending in %r: exit %d, stderr %r" % (
                msg, rc, err[:300]))
        return
    # the first record that fails alone, and TF's message for it alone
    k, alone = None, None
    for j, r in enumerate(flat):
        kk, rr = tf_decode(h, cfg, [r], raw)
        if kk != "OK":
            k, alone = j, rr
            break
    if k is None:
        rep.fail(FAMILY, case, "TF fails on the batch but on no record alone: %s" % h.show(res))
        return
    want = "tfq-cat: %s:%d: %s" % (path, k + 1, h.msg_of(alone))
    if rc == 1 and not out and lines[0] == want and lines[1:] == [""]:
        rep.ok(FAMILY)
    else:
        rep.fail(FAMILY, case, "expected exit 1, no output and %r: exit %d, stdout %r, stderr %r"
                 % (want, rc, out[:100], err[:300]))


def run(h, tfq_cat, wd, rep):
    """Runs the family; returns the list of (case, reason) not applicable."""
    na = []
    for name, cfg, recs, raw in cases(h):
        reason = why_not(recs, raw)
        if reason:
            na.append(("c" + name, reason))
            continue
        compare_case(h, tfq_cat, wd, name, cfg, recs, raw, rep)
    return na
