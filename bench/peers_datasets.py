#!/usr/bin/env python3
"""Peers of bench/bench_decode_mt.c on the generated datasets (bench/gen_data.c): typed CSV decode
of FILE (or every file of a directory, D5) with the column types of SCHEMA (f float32, i int32,
s string; empty fields take 0 / ""), the same checksum as tfq (sum of floats, sum of ints, count
of non-empty strings).  Median of --runs runs after a warm-up (none with --no-warmup); prints a
readable line and a `ROW {json}` line per peer (bench/report.py reads them; it runs this once per
interleaved round with --runs 1).

  .venv/bin/python bench/peers_datasets.py [--runs N] [--no-warmup] [--threads T] [--peers a,b]
                                           FILE|DIR SCHEMA LABEL

Peers (T = --threads, default 1): pandas-c (read_csv, C engine; T = 1 only), pyarrow-Tt
(pyarrow.csv, use_threads = T > 1; Arrow's pool then uses every core), duckdb-Tt (read_csv with
SET threads = T), polars-Tt (read_csv with POLARS_MAX_THREADS = T, typed schema), tfdata-Tt (tf.data with T threads: a file is read as TextLineDataset -> batch(1024)
-> map(decode_csv, num_parallel_calls=T); a directory as Dataset.from_tensor_slices(files) ->
interleave(CsvDataset -> batch(1024), cycle_length=T, num_parallel_calls=T); private thread pool
of T threads; not in the default --peers, bench/report.py asks for it in W2).  A missing peer
prints n/a."""
import argparse
import os
import statistics
import sys
import time


def files_of(path):
    if os.path.isdir(path):
        return [os.path.join(path, f) for f in sorted(os.listdir(path)) if not f.startswith(".")]
    return [path]


def names_of(schema):
    return ["c%d" % i for i in range(len(schema))]


def pandas_peer(paths, schema, threads):
    import numpy as np
    import pandas as pd
    names = names_of(schema)
    dt = {n: (np.float32 if t == "f" else np.int32 if t == "i" else object)
          for n, t in zip(names, schema)}

    def run():
        fs, is_, ns, rows = 0.0, 0, 0, 0
        for p in paths:
            df = pd.read_csv(p, header=None, names=names, dtype=dt, engine="c",
                             keep_default_na=False)
            fcols = [n for n, t in zip(names, schema) if t == "f"]
            icols = [n for n, t in zip(names, schema) if t == "i"]
            scols = [n for n, t in zip(names, schema) if t == "s"]
            if fcols:
                fs += float(df[fcols].to_numpy(np.float64).sum())
            if icols:
                is_ += int(df[icols].to_numpy(np.int64).sum())
            for c in scols:
                ns += int((df[c].str.len() > 0).sum())
            rows += len(df)
        return fs, is_, ns, rows
    return run


def pyarrow_peer(paths, schema, threads):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    names = names_of(schema)
    types = {n: (pa.float32() if t == "f" else pa.int32() if t == "i" else pa.string())
             for n, t in zip(names, schema)}

    def run():
        fs, is_, ns, rows = 0.0, 0, 0, 0
        for p in paths:
            t = pcsv.read_csv(p, read_options=pcsv.ReadOptions(use_threads=threads > 1,
                                                               column_names=names),
                              convert_options=pcsv.ConvertOptions(column_types=types,
                                                                  strings_can_be_null=False))
            for n, ty in zip(names, schema):
                if ty == "f":
                    fs += float(pc.sum(pc.cast(t[n], pa.float64())).as_py() or 0)
                elif ty == "i":
                    is_ += int(pc.sum(pc.cast(t[n], pa.int64())).as_py() or 0)
                else:
                    ns += int(pc.sum(pc.greater(pc.utf8_length(t[n]), 0)).as_py() or 0)
            rows += t.num_rows
        return fs, is_, ns, rows
    return run


def duckdb_peer(paths, schema, threads):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads=%d" % threads)
    names = names_of(schema)
    sqlt = {"f": "FLOAT", "i": "INTEGER", "s": "VARCHAR"}
    cols = ", ".join("'%s': '%s'" % (n, sqlt[t]) for n, t in zip(names, schema))
    fsum = " + ".join("coalesce(sum(CAST(%s AS DOUBLE)), 0)" % n
                      for n, t in zip(names, schema) if t == "f") or "0"
    isum = " + ".join("coalesce(sum(CAST(%s AS BIGINT)), 0)" % n
                      for n, t in zip(names, schema) if t == "i") or "0"
    nstr = " + ".join("count(*) FILTER (WHERE length(%s) > 0)" % n
                      for n, t in zip(names, schema) if t == "s") or "0"
    files = "[%s]" % ", ".join("'%s'" % p.replace("'", "''") for p in paths)
    q = ("SELECT %s, %s, %s, count(*) FROM read_csv(%s, header=false, delim=',', quote='\"', "
         "escape='\"', columns={%s})" % (fsum, isum, nstr, files, cols))

    def run():
        fs, is_, ns, rows = con.execute(q).fetchone()
        return float(fs), int(is_), int(ns), int(rows)
    return run


def polars_peer(paths, schema, threads):
    import polars as pl  # POLARS_MAX_THREADS is read at import: main() sets it first
    names = names_of(schema)
    pt = {n: (pl.Float32 if t == "f" else pl.Int32 if t == "i" else pl.String)
          for n, t in zip(names, schema)}

    def run():
        fs, is_, ns, rows = 0.0, 0, 0, 0
        for p in paths:
            df = pl.read_csv(p, has_header=False, new_columns=names, schema=pt,
                             empty_string_is_null=False)
            for n, ty in zip(names, schema):
                if ty == "f":
                    fs += float(df[n].cast(pl.Float64).fill_null(0).sum())
                elif ty == "i":
                    is_ += int(df[n].cast(pl.Int64).fill_null(0).sum())
                else:
                    ns += int((df[n].str.len_bytes() > 0).sum())
            rows += df.height
        return fs, is_, ns, rows
    return run


def tfdata_peer(paths, schema, threads):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    defaults = [[0.0] if t == "f" else [0] if t == "i" else [""] for t in schema]
    cdefaults = [tf.constant(d[0], tf.float32 if t == "f" else tf.int32 if t == "i" else tf.string)
                 for d, t in zip(defaults, schema)]
    fi = [i for i, t in enumerate(schema) if t == "f"]
    ii = [i for i, t in enumerate(schema) if t == "i"]
    si = [i for i, t in enumerate(schema) if t == "s"]

    def make():
        if len(paths) == 1:
            ds = (tf.data.TextLineDataset(paths[0]).batch(1024)
                  .map(lambda l: tuple(tf.io.decode_csv(l, defaults)), num_parallel_calls=threads))
        else:
            ds = tf.data.Dataset.from_tensor_slices(paths).interleave(
                lambda f: tf.data.experimental.CsvDataset(f, cdefaults).batch(1024),
                cycle_length=threads, num_parallel_calls=threads)
        opt = tf.data.Options()
        opt.threading.private_threadpool_size = threads
        return ds.with_options(opt)

    def run():
        fs, is_, ns, rows = 0.0, 0, 0, 0
        for cols in make():
            fs += float(sum(tf.reduce_sum(tf.cast(cols[i], tf.float64)) for i in fi))
            is_ += int(sum(tf.reduce_sum(tf.cast(cols[i], tf.int64)) for i in ii))
            ns += int(sum(tf.reduce_sum(tf.cast(tf.strings.length(cols[i]) > 0, tf.int64))
                          for i in si))
            rows += int(cols[0].shape[0])
        return fs, is_, ns, rows
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--peers", default="pandas-c,pyarrow,duckdb")
    ap.add_argument("path")
    ap.add_argument("schema")
    ap.add_argument("label")
    a = ap.parse_args()
    os.environ["POLARS_MAX_THREADS"] = str(a.threads)  # before polars is imported
    paths = files_of(a.path)
    size = sum(os.path.getsize(p) for p in paths)
    for peer in a.peers.split(","):
        mk = {"pandas-c": pandas_peer, "pyarrow": pyarrow_peer, "duckdb": duckdb_peer,
              "polars": polars_peer, "tfdata": tfdata_peer}[peer]
        if peer == "pandas-c" and a.threads > 1:
            continue
        name = peer if peer == "pandas-c" else "%s-%dt" % (peer, a.threads)
        try:
            fn = mk(paths, a.schema, a.threads)
            if not a.no_warmup:
                fn()  # warm-up (the files are in the page cache already: tfq read them first)
            walls, cpus = [], []
            for _ in range(a.runs):
                t0, c0 = time.perf_counter(), time.process_time()
                out = fn()
                cpus.append(time.process_time() - c0)
                walls.append(time.perf_counter() - t0)
            med, best, cpu = statistics.median(walls), min(walls), statistics.median(cpus)
            print("%-3s %-12s %d thread%s %8.1f MB/s (best %6.1f, cpu %6.1f)  %6.2f M rows/s  "
                  "checksum %.6e %d %d" % (a.label, name, a.threads, "s" if a.threads > 1 else " ",
                                           size / med / 1e6, size / best / 1e6, size / cpu / 1e6,
                                           out[3] / med / 1e6, out[0], out[1], out[2]))
            print('ROW {"bench":"decode_mt","dataset":"%s","impl":"%s","threads":%d,"bytes":%d,'
                  '"rows":%d,"mb_per_s":%.2f,"mb_per_s_best":%.2f,"mb_per_s_cpu":%.2f,'
                  '"rows_per_s":%.0f,"fsum":%.6e,"isum":%d,"nstr":%d}' % (
                      a.label, name, a.threads, size, out[3], size / med / 1e6,
                      size / best / 1e6, size / cpu / 1e6, out[3] / med, out[0], out[1], out[2]))
        except Exception as e:  # a missing peer prints n/a
            print("%-3s %-12s n/a (%s)" % (a.label, name, (str(e).splitlines() or [""])[0][:80]))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
