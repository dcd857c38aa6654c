#!/usr/bin/env python3
"""Peers of bench/bench_decode.c on the same files, one thread each, median of 5 runs after a
warm-up (TF: 1 run, no warm-up; best wall time and median process CPU time printed too):
pandas read_csv (C engine, explicit dtypes), pyarrow.csv (use_threads=False), DuckDB read_csv with
threads=1 (typed columns, summed in SQL), polars read_csv with POLARS_MAX_THREADS=1 (typed
schema, summed with polars expressions), TensorFlow's
decode_csv on batches of 1,024 lines (tf.compat.v1 kernel, eager), and tf.data CsvDataset.
Usage: .venv/bin/python bench/peers_decode.py D1.csv D4.csv   (missing peers print n/a).
Environment: TFQ_BENCH_PEER_RUNS caps the runs per peer (the warm-up stays: bench/report.py runs
this once per interleaved round with a cap of 1), TFQ_BENCH_PEER_SKIP=name,D4:name,... skips peers
(on every data set, or on one).
Each figure is also printed as a `ROW {json}` line (bench/report.py reads them)."""
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["POLARS_MAX_THREADS"] = "1"  # read when polars is imported: one thread, as the others
NF, NI = 6, 3
NAMES = ["f%d" % i for i in range(NF)] + ["i%d" % i for i in range(NI)] + ["s"]


def measure(fn, runs=3):
    """Median wall time, best wall time and median process CPU time of `runs` runs."""
    walls, cpus = [], []
    out = None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), min(walls), statistics.median(cpus), out


def report(ds, name, size, rows, tm, chk):
    med, best_, cpu = tm
    print("%-3s %-14s %8.1f MB/s  (best %6.1f, cpu %6.1f)  %6.2f M rows/s  checksum %.6e %d %d" % (
        ds, name, size / med / 1e6, size / best_ / 1e6, size / cpu / 1e6, rows / med / 1e6,
        chk[0], chk[1], chk[2]))
    print('ROW {"bench":"decode","dataset":"%s","impl":"%s","bytes":%d,"rows":%d,"mb_per_s":%.2f,'
          '"mb_per_s_best":%.2f,"mb_per_s_cpu":%.2f,"rows_per_s":%.0f,"fsum":%.6e,"isum":%d,'
          '"nstr":%d}' % (ds, name, size, rows, size / med / 1e6, size / best_ / 1e6,
                          size / cpu / 1e6, rows / med, chk[0], chk[1], chk[2]))


def pandas_peer(path, ds):
    import numpy as np
    import pandas as pd
    dt = {n: np.float32 for n in NAMES[:NF]}
    # D4 has empty integer fields, NA until fillna: np.int32 would raise "Integer column has NA
    # values", so D4 reads them as the nullable Int32 (D1 keeps the plain, faster np.int32).
    it = pd.Int32Dtype() if ds == "D4" else np.int32
    dt.update({n: it for n in NAMES[NF:NF + NI]})
    dt["s"] = object

    def run():
        df = pd.read_csv(path, header=None, names=NAMES, dtype=dt, engine="c",
                         keep_default_na=False, na_values={n: [""] for n in NAMES[:NF + NI]})
        df = df.fillna(0)
        return (float(df[NAMES[:NF]].to_numpy(np.float64).sum()),
                int(df[NAMES[NF:NF + NI]].to_numpy(np.int64).sum()),
                int((df["s"].str.len() > 0).sum()), len(df))
    return run


def pyarrow_peer(path, ds):
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


def duckdb_peer(path, ds, threads=1):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads=%d" % threads)
    cols = ", ".join(["'%s': 'FLOAT'" % n for n in NAMES[:NF]] +
                     ["'%s': 'INTEGER'" % n for n in NAMES[NF:NF + NI]] + ["'s': 'VARCHAR'"])
    q = ("SELECT %s, %s, count(*) FILTER (WHERE length(s) > 0), count(*) FROM read_csv('%s', "
         "header=false, delim=',', quote='\"', escape='\"', columns={%s})" % (
             " + ".join("coalesce(sum(CAST(%s AS DOUBLE)), 0)" % n for n in NAMES[:NF]),
             " + ".join("coalesce(sum(CAST(%s AS BIGINT)), 0)" % n for n in NAMES[NF:NF + NI]),
             path.replace("'", "''"), cols))

    def run():
        fs, is_, ns, rows = con.execute(q).fetchone()
        return float(fs), int(is_), int(ns), int(rows)
    return run


def polars_peer(path, ds):
    import polars as pl
    schema = {n: pl.Float32 for n in NAMES[:NF]}
    schema.update({n: pl.Int32 for n in NAMES[NF:NF + NI]})
    schema["s"] = pl.String

    def run():
        # empty number fields (D4) are null until fill_null(0); empty strings stay ""
        df = pl.read_csv(path, has_header=False, new_columns=NAMES, schema=schema,
                         empty_string_is_null=False)
        fs = float(sum(df[n].cast(pl.Float64).fill_null(0).sum() for n in NAMES[:NF]))
        is_ = int(sum(df[n].cast(pl.Int64).fill_null(0).sum() for n in NAMES[NF:NF + NI]))
        ns = int((df["s"].str.len_bytes() > 0).sum())
        return fs, is_, ns, df.height
    return run


def tf_setup():
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    return tf


def tf_decode_peer(path, ds):
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


def csvdataset_peer(path, ds):
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
    skip = set(filter(None, os.environ.get("TFQ_BENCH_PEER_SKIP", "").split(",")))
    for ds, path in zip(("D1", "D4"), sys.argv[1:3]):
        size = os.path.getsize(path)
        for name, mk, runs in (("pandas-c", pandas_peer, 5), ("pyarrow-1t", pyarrow_peer, 5),
                               ("duckdb-1t", duckdb_peer, 5), ("polars-1t", polars_peer, 5),
                               ("tf-decode_csv", tf_decode_peer, 1),
                               ("tf-CsvDataset", csvdataset_peer, 1)):
            warm = runs > 1  # the TF peers (10-30 s a run): no warm-up
            runs = min(runs, int(os.environ.get("TFQ_BENCH_PEER_RUNS", "5")))
            if name in skip or "%s:%s" % (ds, name) in skip:
                continue
            try:
                fn = mk(path, ds)
                fn() if warm else None  # warm-up
                med, best_, cpu, out = measure(fn, runs)
                report(ds, name, size, out[3], (med, best_, cpu), out[:3])
            except Exception as e:  # a missing peer prints n/a
                print("%-3s %-14s      n/a (%s)" % (ds, name, str(e).splitlines()[0][:60]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
