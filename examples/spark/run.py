#!/usr/bin/env python3
"""One command for the Spark example: a Spark job in local-cluster mode starts a TensorFlow
cluster (1 ps + 2 workers) in a barrier stage and feeds it with tfq-feed, in either or both of
the two modes (README.md):

  s1  "Spark schedules, tfq reads": worker task i of the barrier stage runs
      tfq-feed --shard i/2 on the CSV files beside its TensorFlow worker; no row crosses the JVM.
  s2  "TFoS-compatible streaming": the rows are an RDD (sc.textFile); every partition is piped,
      behind a '#tfq unit=p units=U' header line, into its own tfq-feed (RDD.pipe, checkCode).

    .venv/bin/python examples/spark/run.py [--mode s1|s2|both] [--records 100000] [--check]
        [--master 'local-cluster[2,2,1024]'] [--tfq-feed build/tools/tfq-feed]

With both, the one cluster trains two rounds, each from its own queues: s1's, then s2's (the
pipe job starts as soon as the cluster is up; its feeders wait on full queues until the workers
reach round s2).  The workers train y = x.w + b and record the id of every row they train.
--check: every id exactly once in every round, the learned weights within 1e-2, both workers
trained, and no process of the run left at the end (exit 1 if not).  Every process the run
started is killed at the end, also on failure, timeout or Ctrl-C.  Exit 77 (meson's skip) when
TensorFlow, pyspark, Java or tfq-feed is missing, unless CI=true.
"""
import argparse
import glob
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_PY = os.path.join(HERE, "node.py")  # started by each barrier task (tfq.spark.ship)
ROOT = os.path.dirname(os.path.dirname(HERE))
W_TRUE = [0.5, -1.25, 2.0, 0.75]
B_TRUE = 0.3
SPEC = "int64,float32,float32,float32,float32,float32"  # id, x0..x3, y


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    if os.environ.get("CI") == "true":
        print("CI=true: this is a failure, not a skip.")
        sys.exit(1)
    sys.exit(77)


def check_requirements(tfq_feed):
    """Skips (77) unless numpy, TensorFlow, pyspark, Java and tfq-feed are there."""
    for mod in ("numpy", "tensorflow", "pyspark"):
        if importlib.util.find_spec(mod) is None:
            skip(f"no Python module {mod}: run this with the project venv (.venv/bin/python); "
                 "scripts/setup installs tensorflow-cpu and pyspark")
    try:
        import tfq.spark  # noqa: F401  (the driver's side; the executors import it too)
    except ImportError as e:
        skip(f"the package tfq (with tfq.spark) is not installed ({e}): pip install . from the "
             "source tree, or scripts/setup, which installs it into .venv")
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and os.access(
            os.path.join(java_home, "bin", "java"), os.X_OK)):
        skip("no Java (java on PATH or JAVA_HOME): scripts/setup installs openjdk-17-jre-headless")
    if not tfq_feed or not os.access(tfq_feed, os.X_OK):
        skip("no tfq-feed: build tfq with the tensorflow feature (meson + ninja), or pass "
             "--tfq-feed")


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def on_sigterm():
    """SIGTERM (meson's timeout, a kill) unwinds like Ctrl-C: the teardown in the finally
    blocks still runs (cancel the stage, stop Spark, kill what is left of the run)."""
    import signal
    signal.signal(signal.SIGTERM, _interrupt)


def find(pattern):
    hits = sorted(glob.glob(os.path.join(ROOT, pattern)), key=os.path.getmtime, reverse=True)
    return hits[0] if hits else None


def gen_csv(paths, n, seed):
    """n records "id,x0,x1,x2,x3,y" with y = x.W_TRUE + B_TRUE, split evenly over paths."""
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, len(W_TRUE))).round(4)
    y = x @ np.array(W_TRUE) + B_TRUE
    per = -(-n // len(paths))
    for k, path in enumerate(paths):
        with open(path, "w") as f:
            f.write("".join(f"{i}," + ",".join(f"{v:.4f}" for v in x[i]) + f",{y[i]:.6f}\n"
                            for i in range(k * per, min(n, (k + 1) * per))))


def executors_of(master):
    m = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*(\d+)\]", master)
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["s1", "s2", "both"], default="both")
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--files", type=int, default=4, help="CSV files (S1 shards them)")
    ap.add_argument("--partitions", type=int, default=4,
                    help="S2: minPartitions of sc.textFile (the feeder units)")
    ap.add_argument("--batch", type=int, default=1000, help="rows per element (tfq-feed -b)")
    ap.add_argument("--master", default="local-cluster[2,2,1024]",
                    help="2 executors x 2 cores: the barrier stage holds 3 slots (ps, worker0, "
                    "worker1), the pipe tasks of S2 take the 4th")
    ap.add_argument("--tfq-feed", dest="tfq_feed", help="the tfq-feed binary")
    ap.add_argument("--feed-timeout-ms", type=int, default=60000, help="tfq-feed --timeout-ms")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--timeout", type=float, default=420, help="the whole run, in seconds")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    # --tfq-feed= (empty): none was built (meson without TensorFlow): skip
    tfq_feed = find("build*/tools/tfq-feed") if a.tfq_feed is None else a.tfq_feed
    tfq_feed = os.path.abspath(tfq_feed) if tfq_feed else None
    check_requirements(tfq_feed)
    on_sigterm()
    import numpy as np
    import tfq.spark as ts  # the installed package (pip install . / scripts/setup)

    t0 = time.time()
    deadline = t0 + a.timeout
    work = a.workdir or tempfile.mkdtemp(prefix="tfq_spark_")
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    files = [os.path.join(work, f"part-{k:05d}.csv") for k in range(a.files)]
    gen_csv(files, a.records, a.seed)
    rounds = {"s1": ["tfq_s1"], "s2": ["tfq_s2"], "both": ["tfq_s1", "tfq_s2"]}[a.mode]
    token = uuid.uuid4().hex
    feed_args = ["-d", SPEC, "-b", str(a.batch), "--timeout-ms", str(a.feed_timeout_ms),
                 "--stats"]
    print(f"run: {a.records} records in {a.files} files in {work}; y = x.{W_TRUE} + {B_TRUE}; "
          f"mode {a.mode}, master {a.master}", flush=True)

    sc = cluster = None
    ok, results, pipe_lines, times = False, None, [], {}
    try:
        sc = ts.spark_context(a.master, work, "tfq-spark-example")
        ts.ship(sc, NODE_PY)
        times["context"] = time.time() - t0
        n_exec = executors_of(a.master)
        if n_exec and not ts.wait_executors(sc, n_exec, max(10, deadline - time.time())):
            raise RuntimeError(f"{n_exec} executors did not register")
        times["executors"] = time.time() - t0
        print(f"run: Spark context {times['context']:.1f} s, executors up at "
              f"{times['executors']:.1f} s", flush=True)

        t_sub = time.time()
        cluster = ts.TFCluster(
            sc, queues=rounds, token=token, batch=a.batch, tfq_feed=tfq_feed,
            feed_files=files if "tfq_s1" in rounds else None, feed_args=feed_args,
            out=os.path.join(work, "out"), seed=a.seed, notify_driver="tfq_s2" in rounds,
            round_timeout=max(60, a.timeout)).start()
        if "tfq_s2" in rounds:
            tf_cluster = cluster.wait_cluster(deadline - time.time())
            times["cluster_up"] = time.time() - t_sub
            print(f"run: TF cluster up in {times['cluster_up']:.1f} s: "
                  f"{json.dumps(tf_cluster)}", flush=True)
            # S2: the rows come from Spark; one tfq-feed unit per partition.
            rdd = sc.textFile(",".join(files), minPartitions=a.partitions)
            t_pipe = time.time()
            pipe_lines = ts.feed_rdd(rdd, tf_cluster, tfq_feed=tfq_feed, token=token,
                                     queue="tfq_s2", args=feed_args)
            times["pipe"] = time.time() - t_pipe
            times["units"] = rdd.getNumPartitions()
            print(f"run: s2: {times['units']} partitions piped into tfq-feed units in "
                  f"{times['pipe']:.1f} s", flush=True)
        results = cluster.join(max(1, deadline - time.time()))
        times["stage"] = time.time() - t_sub
        ok = True
    except KeyboardInterrupt:
        print("run: interrupted", flush=True)
    except Exception as e:  # noqa: BLE001 -- reported, then everything is torn down
        print(f"run: FAILED: {ts._short(e, 4000)}", flush=True)
    finally:
        if cluster is not None and not ok:
            cluster.cancel()
        if not ok:
            for line in ts.executor_log_lines(work)[-20:]:
                print(f"  [executor log] {line}")
            for log in sorted(glob.glob(os.path.join(work, "out", "*.log"))):
                for line in open(log, errors="replace").read().splitlines()[-15:]:
                    print(f"  [{os.path.basename(log)}] {line}")
        if sc is not None:
            sc.stop()
        time.sleep(0.5)
        left = ts.kill_run(token)
    t_end = time.time()
    print(f"run: total {t_end - t0:.1f} s; processes of the run left at the end: {left}")
    if not ok:
        return 1

    for line in pipe_lines:
        if "stats: unit" in line:
            print(f"  [pipe] {line}")
    for r in results:
        if r.get("feeder"):
            for line in r["feeder"]["log"].splitlines():
                if "stats: unit" in line:
                    print(f"  [s1 feeder {r['index']}] {line}")
    workers = [r for r in results if r["job"] == "worker"]
    ps = [r for r in results if r["job"] == "ps"][0]
    exact_all = True
    for q in rounds:
        ids = [w["rounds"][q]["ids"] for w in workers]
        allids = np.sort(np.concatenate(ids))
        exact = len(allids) == a.records and np.array_equal(allids, np.arange(a.records))
        both = min(len(i) for i in ids) > 0
        exact_all &= exact and both
        t_first = min(w["rounds"][q]["t_first"] for w in workers)
        t_last = max(w["rounds"][q]["t_end"] for w in workers)
        print(f"run: round {q}: " + ", ".join(f"worker{w['index']} {len(w['rounds'][q]['ids'])} "
                                              f"rows in {w['rounds'][q]['steps']} steps"
                                              for w in workers) +
              f"; every id exactly once: {exact}; first step to last OutOfRange "
              f"{t_last - t_first:.2f} s ({a.records / max(t_last - t_first, 1e-9):.0f} rows/s)")
    tt = ps["times"]
    print(f"run: barrier stage: allGather {tt['gathered'] - tt['start']:.1f} s after the ps task "
          f"started, nodes listening {tt['ready'] - tt['start']:.1f} s, cluster up (barrier) "
          f"{tt['cluster_up'] - tt['start']:.1f} s; whole stage {times['stage']:.1f} s")
    model = [w for w in workers if "model" in w][0]["model"]
    err = max([abs(u - v) for u, v in zip(model["w"], W_TRUE)] + [abs(model["b"] - B_TRUE)])
    print(f"run: learned w={np.round(model['w'], 4).tolist()} b={model['b']:.4f}; "
          f"max |error| = {err:.2e} (tolerance 1e-2)")
    if not a.keep and not a.workdir:
        shutil.rmtree(work, ignore_errors=True)
    if a.check and not (exact_all and err <= 1e-2 and left == 0):
        print("run: CHECK FAILED")
        return 1
    print("run: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
