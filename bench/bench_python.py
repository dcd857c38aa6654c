"""Issue #39, acceptance 3: a Python loop consuming shuffled numpy batches of 128, tfq.data
against the Python peers, from interleaved rounds.

    bench_python.py --build BUILD [--data DIR] [--runs R] [--records N] [--quick]

The mixed CSV set DM (bench/gen_data.c: 700,000 rows, 6 float32, int64, int32, 2 strings; made
by BUILD/bench/gen_data when DIR lacks it) and a TFRecord file of tf.train.Example made from its
first N rows (default 100,000; written once with TF, kept in DIR).  Each round runs, each in a
fresh process (its peak RSS from wait4), one epoch of:
  csv/tfq          tfq.data.csv(DM, spec, batch_size=128, seed, num_threads=1): dict batches
  csv/tfq-2        the same with num_threads=2 (2 reader threads)
  csv/tfq-cat      tfq-cat -o none -j 1 -b 128 -d spec DM (the same pipeline, no Python)
  csv/tf.data      CsvDataset -> shuffle(1000) -> batch(128) -> prefetch(AUTOTUNE) ->
                   as_numpy_iterator
  csv/pandas       read_csv (dtypes given) -> a permutation -> slices of 128 of each column
  ex/tfq           tfq.data.examples(file, features, batch_size=128, seed)
  ex/tf.data       TFRecordDataset(num_parallel_reads=AUTOTUNE) -> shuffle(1000) -> batch(128)
                   -> map(parse_example, AUTOTUNE) -> prefetch -> as_numpy_iterator
  ex/tfrecord      the `tfrecord` package: tfrecord_loader -> shuffle_iterator(1000) -> np.stack
                   of 128 records (when the package is installed)
Every child runs with OPENBLAS_NUM_THREADS=1 (set unless given): numpy's OpenBLAS threads spin
for a moment after the import and took a core from the timed loop on 2 cores (see main()).
Peak RSS: VmHWM of a Python run, ru_maxrss (wait4) of tfq-cat, whose parent stays small.
The time of a Python run is its epoch loop (pipeline made, every batch consumed; imports
excluded: numpy's too, which tfq imports at its first batch and the peers before their loop); tfq-cat's is the process.  Ratios are per round, printed as the median of R rounds
with their range, with TARGET lines.  Every run must deliver every record, or exit 1.
Prints ROW {json} lines (bench "python")."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mixed import SPEC_OF, TYPES  # noqa: E402

NAMES = ["f0", "f1", "f2", "f3", "f4", "f5", "l", "i", "s0", "s1"]
BATCH = 128
BUFFER = 1000


# ---- the child runs (one epoch each, in their own process) ----------------------------------

def run_tfq_csv(path, n, threads=1):
    import numpy  # noqa: F401 -- tfq imports it at the first batch: an import, outside the time
    import tfq
    spec = ",".join(SPEC_OF[t] for t in TYPES)
    t0 = time.perf_counter()
    recs = 0
    with tfq.data.csv(path, spec, batch_size=BATCH, seed=1, num_threads=threads,
                      min_after_dequeue=BUFFER) as p:
        for b in p:
            recs += len(b["c0"])
    return time.perf_counter() - t0, recs


def tf_quiet():
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
    return tf


def run_tf_csv(path, n):
    tf = tf_quiet()
    defaults = [tf.constant([0], dtype={"f": tf.float32, "l": tf.int64, "i": tf.int32,
                                        "s": tf.string}[t]) if t != "s" else [""]
                for t in TYPES]
    t0 = time.perf_counter()
    ds = tf.data.experimental.CsvDataset(path, defaults, header=False)
    ds = ds.shuffle(BUFFER, seed=1).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    recs = 0
    for b in ds.as_numpy_iterator():
        recs += len(b[0])
    return time.perf_counter() - t0, recs


def run_pandas(path, n):
    import numpy as np
    import pandas as pd
    dt = {"f": np.float32, "l": np.int64, "i": np.int32, "s": object}
    t0 = time.perf_counter()
    df = pd.read_csv(path, header=None, names=NAMES,
                     dtype={NAMES[k]: dt[t] for k, t in enumerate(TYPES)},
                     keep_default_na=False)
    perm = np.random.default_rng(1).permutation(len(df))
    cols = {c: df[c].to_numpy()[perm] for c in NAMES}
    recs = 0
    for s in range(0, len(df), BATCH):
        b = {c: a[s:s + BATCH] for c, a in cols.items()}
        recs += len(b["f0"])
    return time.perf_counter() - t0, recs


def run_tfq_ex(path, n):
    import numpy  # noqa: F401 -- as run_tfq_csv
    import tfq
    feats = {NAMES[k]: tfq.io.FixedLenFeature([], {"f": "float32", "l": "int64", "i": "int64",
                                                    "s": "string"}[t])
             for k, t in enumerate(TYPES)}
    t0 = time.perf_counter()
    recs = 0
    with tfq.data.examples(path, feats, batch_size=BATCH, seed=1, num_threads=1,
                           min_after_dequeue=BUFFER) as p:
        for b in p:
            recs += len(b["f0"])
    return time.perf_counter() - t0, recs


def run_tf_ex(path, n):
    tf = tf_quiet()
    feats = {NAMES[k]: tf.io.FixedLenFeature([], {"f": tf.float32, "l": tf.int64,
                                                  "i": tf.int64, "s": tf.string}[t])
             for k, t in enumerate(TYPES)}
    t0 = time.perf_counter()
    ds = tf.data.TFRecordDataset(path, num_parallel_reads=tf.data.AUTOTUNE)
    ds = ds.shuffle(BUFFER, seed=1).batch(BATCH)
    ds = ds.map(lambda x: tf.io.parse_example(x, feats), num_parallel_calls=tf.data.AUTOTUNE)
    recs = 0
    for b in ds.prefetch(tf.data.AUTOTUNE).as_numpy_iterator():
        recs += len(b["f0"])
    return time.perf_counter() - t0, recs


def run_tfrecord_pkg(path, n):
    import numpy as np
    from tfrecord import iterator_utils, reader
    desc = {NAMES[k]: "float" if t == "f" else "int" if t in "li" else "byte"
            for k, t in enumerate(TYPES)}
    t0 = time.perf_counter()
    it = iterator_utils.shuffle_iterator(reader.tfrecord_loader(path, None, desc), BUFFER)
    recs = 0
    buf = []
    for r in it:
        buf.append(r)
        if len(buf) == BATCH:
            b = {k: np.stack([x[k] for x in buf]) for k in NAMES}
            recs += len(b["f0"])
            buf = []
    if buf:
        b = {k: np.stack([x[k] for x in buf]) for k in NAMES}
        recs += len(b["f0"])
    return time.perf_counter() - t0, recs


CHILD = {"csv/tfq": run_tfq_csv, "csv/tfq-2": lambda p, n: run_tfq_csv(p, n, 2), "csv/tf.data": run_tf_csv, "csv/pandas": run_pandas,
         "ex/tfq": run_tfq_ex, "ex/tf.data": run_tf_ex, "ex/tfrecord": run_tfrecord_pkg}


def write_examples(csv_path, out, n):
    tf = tf_quiet()
    import csv
    conv = {"f": lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)])),
            "l": lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)])),
            "s": lambda v: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v.encode()]))}
    conv["i"] = conv["l"]
    tmp = out + ".tmp"
    with open(csv_path, newline="") as f, tf.io.TFRecordWriter(tmp) as w:
        for k, row in enumerate(csv.reader(f)):
            if k == n:
                break
            feat = {NAMES[j]: conv[t](row[j]) for j, t in enumerate(TYPES)}
            w.write(tf.train.Example(features=tf.train.Features(feature=feat))
                    .SerializeToString())
    os.replace(tmp, out)


def vm_hwm_mib():
    """This process's peak RSS (VmHWM: reset by exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return -1.0


# ---- the parent -----------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "data"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--quick", action="store_true", help="3 rounds, 30,000 Examples")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--csv", help=argparse.SUPPRESS)
    a = ap.parse_args()
    # Every child (tfq and the peers alike) runs with numpy's OpenBLAS on one thread: importing
    # numpy starts an OpenBLAS thread per core that spins (sched_yield) for a moment before it
    # sleeps, and on 2 cores that took a core from whatever the child timed next (tfq.data.csv's
    # epoch of DM: 0.117-0.123 s right after the import, 0.093-0.095 s with one BLAS thread; its
    # profile showed blas_thread_server at 24% of the samples).  No child calls BLAS.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if a.child:
        if a.child == "make-examples":
            write_examples(a.csv, a.file, a.records)
            return
        secs, recs = CHILD[a.child](a.file, a.records)
        print(json.dumps({"seconds": secs, "records": recs, "rss_mib": vm_hwm_mib()}))
        return
    if a.quick:
        a.runs, a.records = 3, 30000
    csv_path = os.path.join(a.data, "DM.csv")
    if not os.path.exists(csv_path):
        os.makedirs(a.data, exist_ok=True)
        subprocess.run([os.path.join(a.build, "bench", "gen_data"), a.data], check=True,
                       stdout=subprocess.DEVNULL)
    ex_path = os.path.join(a.data, "DM-examples-%d.tfrecord" % a.records)
    if not os.path.exists(ex_path):
        print("bench_python: writing %d Examples to %s (once)" % (a.records, ex_path),
              flush=True)
        # in a child: TF's memory would raise the high-water mark every later child inherits
        subprocess.run([sys.executable, os.path.abspath(__file__), "--build", a.build,
                        "--records", str(a.records), "--child", "make-examples", "--csv",
                        csv_path, "--file", ex_path], check=True)
    rows = sum(1 for _ in open(csv_path, "rb"))
    spec = ",".join(SPEC_OF[t] for t in TYPES)
    cat = os.path.join(a.build, "tools", "tfq-cat")
    me = [sys.executable, os.path.abspath(__file__), "--build", a.build,
          "--records", str(a.records)]
    have_tfrecord = subprocess.run([sys.executable, "-c", "import tfrecord"],
                                   capture_output=True).returncode == 0
    configs = [("csv/tfq", csv_path), ("csv/tfq-2", csv_path), ("csv/tfq-cat", csv_path), ("csv/tf.data", csv_path),
               ("csv/pandas", csv_path), ("ex/tfq", ex_path), ("ex/tf.data", ex_path)]
    if have_tfrecord:
        configs.append(("ex/tfrecord", ex_path))
    else:
        print("bench_python: the tfrecord package is not installed: its loader is left out")
    want = {"csv": rows, "ex": a.records}
    res = {name: [] for name, _ in configs}
    print("ENV " + json.dumps({"load": os.getloadavg(), "rows": rows, "examples": a.records,
                               "runs": a.runs}))
    for _ in range(a.runs):
        for name, path in configs:
            if name == "csv/tfq-cat":
                cmd = [cat, "-o", "none", "-n", "0", "-b", str(BATCH), "-q", "--stats", "-j",
                       "1", "--seed", "1", "-d", spec, path]
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                t0 = time.perf_counter()
                _, status, ru = os.wait4(p.pid, 0)
                secs = time.perf_counter() - t0
                err = p.stderr.read().decode()
                p.stdout.close()
                p.stderr.close()
                recs = -1
                for ln in err.splitlines():
                    if "stats: records" in ln:
                        recs = int(ln.split("records ")[1].split(",")[0])
                res[name].append({"seconds": secs, "records": recs,
                                  "rss_mib": ru.ru_maxrss / 1024.0})
                continue
            p = subprocess.Popen(me + ["--child", name, "--file", path], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            out, err = p.communicate()
            if p.returncode != 0:
                sys.exit("bench_python: %s failed: %s" % (name, err.decode()[-2000:]))
            res[name].append(json.loads(out.decode().strip().splitlines()[-1]))
    failed = []
    for name, xs in res.items():
        for x in xs:
            if x["records"] != want[name.split("/")[0]]:
                failed.append("%s delivered %d records, not %d" % (name, x["records"],
                                                                  want[name.split("/")[0]]))
    for name, _ in configs:
        ts = [x["seconds"] for x in res[name]]
        n = want[name.split("/")[0]]
        row = {"bench": "python", "impl": name, "records": n, "runs": a.runs,
               "seconds": statistics.median(ts), "seconds_min": min(ts),
               "seconds_max": max(ts), "records_per_s": n / statistics.median(ts),
               "peak_rss_mib": max(x["rss_mib"] for x in res[name])}
        print("ROW " + json.dumps(row))
        print("  %-12s %8.3f s/epoch (range %.3f-%.3f)  %10.0f records/s  peak RSS %6.0f MiB" %
              (name, row["seconds"], min(ts), max(ts), row["records_per_s"],
               row["peak_rss_mib"]))

    def ratio(num, den):
        return [res[den][i]["seconds"] / res[num][i]["seconds"] for i in range(a.runs)]

    def target(what, num, dens, bound):
        dens = [d for d in dens if d in res]
        if not dens:
            return
        # against the best peer of each round
        rs = [min(res[d][i]["seconds"] for d in dens) / res[num][i]["seconds"]
              for i in range(a.runs)]
        m = statistics.median(rs)
        print("TARGET #39 %s >= %.2fx: %.2fx (median of %d rounds, range %.2f-%.2f) %s" %
              (what, bound, m, a.runs, min(rs), max(rs), "met" if m >= bound else "missed"))
        print("ROW " + json.dumps({"bench": "python-target", "what": what, "value": m,
                                   "min": min(rs), "max": max(rs), "bound": bound}))

    target("tfq.data.csv / tf.data CsvDataset", "csv/tfq", ["csv/tf.data"], 10.0)
    target("tfq.data.csv / pandas", "csv/tfq", ["csv/pandas"], 2.0)
    target("tfq.data.csv, 2 readers / pandas", "csv/tfq-2", ["csv/pandas"], 2.0)
    target("tfq.data.examples / best of tf.data and tfrecord", "ex/tfq",
           ["ex/tf.data", "ex/tfrecord"], 10.0)
    target("tfq.data.csv / tfq-cat -o none", "csv/tfq", ["csv/tfq-cat"], 0.9)
    if failed:
        print("\n".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
