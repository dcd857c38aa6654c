"""The peers of issue #18's library decode figure: one of DuckDB, pyarrow, pandas and polars
reads the mixed set (bench/gen_data.c, DM.csv) with every column typed and materialised as numpy
arrays (no projection push-down), one thread.  bench/bench_mixed.py runs each under `taskset` on
one CPU (pandas and pyarrow start helper threads of their own otherwise), one run per process,
interleaved with tfq's runs.  polars-all is polars in its default mode, every core (not pinned,
POLARS_MAX_THREADS unset): the peer of tfq's two-reader row.

    peers_mixed.py IMPL FILE TYPES      IMPL: duckdb, pyarrow, pandas, polars (POLARS_MAX_THREADS=1)
                                        or polars-all; TYPES as bench_lines

Prints one line  ROW {"bench": "lines", "impl": IMPL, "wall_s", "cpu_s", "bytes", "rows",
"mb_per_s", "mb_per_s_cpu", "check"}  where check is bench_lines' checksum (sum of every number,
total length of the strings), so that a peer reading the file differently is caught.  The timed
region is the read and the conversion, not the interpreter's start or the imports."""
import json
import os
import sys
import time

import numpy as np

NP = {"f": np.float32, "d": np.float64, "i": np.int32, "l": np.int64}
ARROW = {"f": "float32", "d": "float64", "i": "int32", "l": "int64", "s": "string"}
DUCK = {"f": "FLOAT", "d": "DOUBLE", "i": "INTEGER", "l": "BIGINT", "s": "VARCHAR"}


def check(cols, types):
    s = 0.0
    for c, t in zip(cols, types):
        if t == "s":
            s += float(sum(len(x) for x in c))
        else:
            s += float(np.sum(c.astype(np.float64)))
    return s


def run_duckdb(path, names, types):
    import duckdb
    con = duckdb.connect()
    con.execute("SET threads=1")
    cols = ", ".join("'%s': '%s'" % (n, DUCK[t]) for n, t in zip(names, types))
    r = con.execute("SELECT * FROM read_csv('%s', header=false, delim=',', quote='', "
                    "columns={%s})" % (path, cols)).fetchnumpy()
    return [np.asarray(r[n]) for n in names]


def run_pyarrow(path, names, types):
    import pyarrow as pa
    import pyarrow.csv as pc
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    t = pc.read_csv(path, read_options=pc.ReadOptions(column_names=names, use_threads=False),
                    convert_options=pc.ConvertOptions(
                        column_types={n: getattr(pa, ARROW[k])() for n, k in zip(names, types)}))
    return [t.column(n).to_numpy() for n in names]


def run_pandas(path, names, types):
    import pandas as pd
    df = pd.read_csv(path, header=None, names=names, engine="c",
                     dtype={n: (NP[k] if k in NP else object) for n, k in zip(names, types)})
    return [df[n].to_numpy() for n in names]


POLARS = {"f": "Float32", "d": "Float64", "i": "Int32", "l": "Int64", "s": "String"}


def run_polars(path, names, types):
    import polars as pl  # POLARS_MAX_THREADS is read at import: main() sets it first
    df = pl.read_csv(path, has_header=False, new_columns=names, quote_char=None,
                     schema={n: getattr(pl, POLARS[k]) for n, k in zip(names, types)})
    return [df[n].to_numpy() for n in names]


def main():
    impl, path, types = sys.argv[1], sys.argv[2], sys.argv[3]
    names = ["c%d" % i for i in range(len(types))]
    if impl == "polars":
        os.environ["POLARS_MAX_THREADS"] = "1"
    elif impl == "polars-all":
        os.environ.pop("POLARS_MAX_THREADS", None)
    fn = {"duckdb": run_duckdb, "pyarrow": run_pyarrow, "pandas": run_pandas,
          "polars": run_polars, "polars-all": run_polars}[impl]
    w0, c0 = time.perf_counter(), time.process_time()
    cols = fn(path, names, types)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    size = os.path.getsize(path)
    print("ROW " + json.dumps({"bench": "lines", "impl": impl, "wall_s": wall, "cpu_s": cpu,
                               "bytes": size, "rows": len(cols[0]),
                               "mb_per_s": size / wall / 1e6, "mb_per_s_cpu": size / cpu / 1e6,
                               "check": check(cols, types)}), flush=True)


if __name__ == "__main__":
    main()
