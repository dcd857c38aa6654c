#!/usr/bin/env python3
"""Peers of bench/bench_decode.c on the same files, one thread each, best of 3 runs:
pandas read_csv (C engine, explicit dtypes), pyarrow.csv (use_threads=False), TensorFlow's
decode_csv on batches of 1,024 lines (tf.compat.v1 kernel, eager), and tf.data CsvDataset.
Usage: .venv/bin/python bench/peers_decode.py D1.csv D4.csv   (missing peers print n/a)."""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
NF, NI = 6, 3
NAMES = ["f%d" % i for i in range(NF)] + ["i%d" % i for i in range(NI)] + ["s"]


def best(fn, runs=3):
    t = 1e30
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def report(ds, name, size, rows, secs, chk):
    if secs is None:
        print("%-3s %-14s      n/a" % (ds, name))
        return
    print("%-3s %-14s %8.1f MB/s  %6.2f M rows/s  checksum %.6e %d %d" % (
        ds, name, size / secs / 1e6, rows / secs / 1e6, chk[0], chk[1], chk[2]))


def pandas_peer(path):
    import numpy as np
    import pandas as pd
    dt = {n: np.float32 for n in NAMES[:NF]}
    dt.update({n: np.int32 for n in NAMES[NF:NF + NI]})
    dt["s"] = object

    def run():
        df = pd.read_csv(path, header=None, names=NAMES, dtype=dt, engine="c",
                         keep_default_na=False, na_values={n: [""] for n in NAMES[:NF + NI]})
        df = df.fillna(0)
        return (float(df[NAMES[:NF]].to_numpy(np.float64).sum()),
                int(df[NAMES[NF:NF + NI]].to_numpy(np.int64).sum()),
                int((df["s"].str.len() > 0).sum()), len(df))
    return run


def pyarrow_peer(path):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    types = {n: pa.float32() for n in NAMES[:NF]}
    types.update({n: pa.int32() for n in NAMES[NF:NF + NI]})
    types["s"] = pa.string()

    def run():
        t = pcsv.read_csv(path, read_options=pcsv.ReadOptions(use_threads=False,
                                                             column_names=NAMES),
                          convert_options=pcsv.ConvertOptions(column_types=types,
                                                              strings_can_be_null=False))
        fs = sum(float(pc.sum(pc.cast(t[n], pa.float64())).as_py() or 0) for n in NAMES[:NF])
        is_ = sum(int(pc.sum(pc.cast(t[n], pa.int64())).as_py() or 0) for n in NAMES[NF:NF + NI])
        ns = int(pc.sum(pc.greater(pc.utf8_length(t["s"]), 0)).as_py())
        return fs, is_, ns, t.num_rows
    return run


def tf_setup():
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def tf_decode_peer(path):
    tf = tf_setup()
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    batches = [tf.constant(lines[i:i + 1024]) for i in range(0, len(lines), 1024)]
    defaults = [[0.0]] * NF + [[0]] * NI + [[""]]

    def run():
        fs = 0.0
        is_ = 0
        ns = 0
        for b in batches:
            cols = tf.io.decode_csv(b, defaults)
            fs += float(sum(tf.reduce_sum(tf.cast(c, tf.float64)) for c in cols[:NF]))
            is_ += int(sum(tf.reduce_sum(tf.cast(c, tf.int64)) for c in cols[NF:NF + NI]))
            ns += int(tf.reduce_sum(tf.cast(tf.strings.length(cols[-1]) > 0, tf.int64)))
        return fs, is_, ns, len(lines)
    return run


def csvdataset_peer(path):
    tf = tf_setup()
    defaults = [tf.constant(0.0)] * NF + [tf.constant(0)] * NI + [tf.constant("")]

    def run():
        ds = tf.data.experimental.CsvDataset(path, defaults).batch(1024)
        opt = tf.data.Options()
        opt.threading.private_threadpool_size = 1
        ds = ds.with_options(opt)
        fs = 0.0
        is_ = 0
        ns = 0
        rows = 0
        for cols in ds:
            fs += float(sum(tf.reduce_sum(tf.cast(c, tf.float64)) for c in cols[:NF]))
            is_ += int(sum(tf.reduce_sum(tf.cast(c, tf.int64)) for c in cols[NF:NF + NI]))
            ns += int(tf.reduce_sum(tf.cast(tf.strings.length(cols[-1]) > 0, tf.int64)))
            rows += int(cols[0].shape[0])
        return fs, is_, ns, rows
    return run


def main():
    for ds, path in zip(("D1", "D4"), sys.argv[1:3]):
        size = os.path.getsize(path)
        for name, mk, runs in (("pandas-c", pandas_peer, 3), ("pyarrow-1t", pyarrow_peer, 3),
                               ("tf-decode_csv", tf_decode_peer, 1),
                               ("tf-CsvDataset", csvdataset_peer, 1)):
            try:
                fn = mk(path)
                fn() if runs > 1 else None  # warm-up
                secs, out = best(fn, runs)
                report(ds, name, size, out[3], secs, out[:3])
            except Exception as e:  # a missing peer prints n/a
                print("%-3s %-14s      n/a (%s)" % (ds, name, str(e).splitlines()[0][:60]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
