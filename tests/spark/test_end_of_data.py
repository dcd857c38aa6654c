#!/usr/bin/env python3
"""The end-of-data hangs that TensorFlowOnSpark users report (distributed-feeding spec 2.4) do
not happen with tfq-feed under Spark (examples/spark, mode S2: RDD.pipe into tfq-feed).

One SparkContext (local-cluster[2,3,1024]: the barrier stage of the TF cluster holds 3 of the 6
slots, so up to 3 feeder units run at once), one TF cluster (ps + 2 workers, started by
tfq.spark.TFCluster) that trains one round per case, each case with its own
queues and done set (tfq-feed --queue):

  empty         partitions [3000, 0, 2500, 0]: empty partitions are units with no rows; they
                still count, and the queues close once every unit is done.
  more_parts    5 partitions for 2 workers, [2000, 2000, 2000, 2000, 1]: a short last partition
                (#55, PR #50) and more units than workers (and than free slots).
  short_batches [1001, 999, 777] at -b 256: every unit ends on a short batch; every row of it is
                trained before the workers see OutOfRange (the last-batch race, #141).
  all_empty     [0, 0, 0]: no data at all; the queues still close, the round ends with 0 rows.
  stall         [20000, 20000] at -b 100, --timeout-ms 5000, and worker 1 stops dequeuing after
                2 steps while staying alive (a worker that stops early; #288, "Timeout while
                feeding partition" after TFoS's 600 s feed_timeout): the feeder unit must fail
                (exit 1, PySpark's PIPE_FUNCTION_EXITED) within the timeout plus scheduling,
                not hang, and name the worker; then the driver cancels the cluster's stage and
                nothing of the run is left.

Checks for the first four: the pipe job succeeds, every unit printed its stats (one per
partition, rows = the partition's size), the workers' round ends (OutOfRange) within 60 s, and
every id was trained exactly once.  The test prints each case's time.

    .venv/bin/python tests/spark/test_end_of_data.py build/tools/tfq-feed

Exit 0 pass, 1 fail, 77 skip (pyspark, Java, TensorFlow or tfq-feed missing; a failure when
CI=true).
"""
import os
import re
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(ROOT, "examples", "spark"))
import run as example  # noqa: E402  (examples/spark/run.py: skip(), the data's generator)

MASTER = "local-cluster[2,3,1024]"
CASES = [  # name, partition sizes, tfq-feed -b
    ("empty", [3000, 0, 2500, 0], 256),
    ("more_parts", [2000, 2000, 2000, 2000, 1], 256),
    ("short_batches", [1001, 999, 777], 256),
    ("all_empty", [0, 0, 0], 256),
]
STALL = ("stall", [20000, 20000], 100)
STALL_TIMEOUT_MS = 5000
STALL_LIMIT_S = STALL_TIMEOUT_MS / 1000 + 25  # the timeout, plus Spark's scheduling of the unit


def lines_for(sizes, seed):
    """Partition p's CSV lines; ids 0..sum(sizes)-1 in order, y = x.W + B."""
    import numpy as np
    n = sum(sizes)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 4)).round(4)
    y = x @ np.array(example.W_TRUE) + example.B_TRUE
    rows = [f"{i}," + ",".join(f"{v:.4f}" for v in x[i]) + f",{y[i]:.6f}" for i in range(n)]
    out, k = [], 0
    for s in sizes:
        out.append(rows[k:k + s])
        k += s
    return out


def rdd_of(sc, parts):
    """An RDD whose partition p holds exactly parts[p] (empty ones included)."""
    return sc.parallelize(range(len(parts)), len(parts)).flatMap(lambda p: parts[p])


def wait_ids(out, queue, timeout):
    import numpy as np
    paths = [os.path.join(out, f"{queue}_w{i}.npy") for i in (0, 1)]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(os.path.exists(p) for p in paths):
            return [np.load(p) for p in paths]
        time.sleep(0.1)
    return None


def feed(sc, ts, limit, **kw):
    """ts.feed_rdd(**kw) on a thread of its own, given at most limit seconds: a hang is reported
    (and its job cancelled) instead of running into meson's timeout.  Returns (summary lines,
    error, seconds, hung)."""
    from pyspark import InheritableThread
    res, group = {}, f"feed-{kw['queue']}"

    def go():
        sc.setJobGroup(group, "tfq-feed units", interruptOnCancel=True)
        try:
            res["lines"] = ts.feed_rdd(**kw)
        except Exception as e:  # noqa: BLE001 -- returned
            res["error"] = e

    t = time.time()
    th = InheritableThread(target=go, daemon=True)
    th.start()
    th.join(limit)
    hung = th.is_alive()
    if hung:
        sc.cancelJobGroup(group)
        th.join(30)
    return res.get("lines"), res.get("error"), time.time() - t, hung


def main():
    # an empty argument: no tfq-feed was built (meson without TensorFlow): skip
    tfq_feed = sys.argv[1] if len(sys.argv) > 1 else example.find("build*/tools/tfq-feed")
    tfq_feed = os.path.abspath(tfq_feed) if tfq_feed else None
    example.check_requirements(tfq_feed)
    example.on_sigterm()
    import numpy as np
    import tfq.spark as ts  # installed; run.py's check_requirements() checked it

    t0 = time.time()
    work = tempfile.mkdtemp(prefix="tfq_spark_eod_")
    out = os.path.join(work, "out")
    os.makedirs(out)
    token = uuid.uuid4().hex
    queues = [f"eod_{name}" for name, _, _ in CASES] + [f"eod_{STALL[0]}"]
    failures = []

    def check(cond, what):
        print(f"  {'ok' if cond else 'FAIL'}: {what}", flush=True)
        if not cond:
            failures.append(what)

    sc = cluster = None
    try:
        sc = ts.spark_context(MASTER, work, "tfq-spark-end-of-data")
        ts.ship(sc, os.path.join(ROOT, "examples", "spark", "node.py"))
        if not ts.wait_executors(sc, 2, 120):
            raise RuntimeError("2 executors did not register in 120 s")
        print(f"test: Spark up in {time.time() - t0:.1f} s", flush=True)
        t = time.time()
        cluster = ts.TFCluster(sc, queues=queues, token=token, batch=256, tfq_feed=tfq_feed,
                               out=out, node_args=["--stall", f"eod_{STALL[0]}:2"],
                               round_timeout=600).start()
        tf_cluster = cluster.wait_cluster(240)
        print(f"test: TF cluster up in {time.time() - t:.1f} s", flush=True)

        for seed, (name, sizes, b) in enumerate(CASES, 1):
            q = f"eod_{name}"
            print(f"case {name}: partitions {sizes}, -b {b}", flush=True)
            parts = lines_for(sizes, seed)
            t = time.time()
            summary, err, t_pipe, hung = feed(
                sc, ts, 120, rdd=rdd_of(sc, parts), cluster=tf_cluster, tfq_feed=tfq_feed,
                token=token, queue=q, args=["-d", example.SPEC, "-b", str(b), "--stats"])
            if hung or err is not None:
                check(False, f"{name}: the pipe job " + ("hung (120 s)" if hung else
                                                          f"failed: {ts._short(err, 1500)}"))
                break  # the cluster is stuck in this round: the next ones cannot run
            stats = [l for l in summary if "stats: unit" in l]
            units = sorted(int(re.search(r"unit (\d+) of", l).group(1)) for l in stats)
            rows = {int(re.search(r"unit (\d+) of", l).group(1)):
                    int(re.search(r"rows (\d+)", l).group(1)) for l in stats}
            check(units == list(range(len(sizes))) and
                  all(rows[p] == s for p, s in enumerate(sizes)),
                  f"{name}: one stats line per unit, rows = the partition's size "
                  f"(got {[rows.get(p) for p in range(len(sizes))]})")
            check(sum("closed by this feeder" in l for l in stats) == 1,
                  f"{name}: exactly one unit closed the queues")
            ids = wait_ids(out, q, 60)
            t_done = time.time() - t
            check(ids is not None, f"{name}: both workers reached OutOfRange "
                  f"({t_pipe:.1f} s pipe job, {t_done:.1f} s to the last OutOfRange)")
            if ids is None:
                break  # the cluster is stuck in this round: the next ones cannot run
            allids = np.sort(np.concatenate(ids))
            check(np.array_equal(allids, np.arange(sum(sizes))),
                  f"{name}: every id trained exactly once ({len(ids[0])} + {len(ids[1])} rows "
                  f"of {sum(sizes)})")

        name, sizes, b = STALL
        print(f"case {name}: partitions {sizes}, -b {b}, --timeout-ms {STALL_TIMEOUT_MS}, "
              f"worker 1 stops dequeuing after 2 steps", flush=True)
        parts = lines_for(sizes, 99)
        _, err, dt, hung = feed(
            sc, ts, STALL_LIMIT_S + 30, rdd=rdd_of(sc, parts), cluster=tf_cluster,
            tfq_feed=tfq_feed, token=token, queue=f"eod_{name}",
            args=["-d", example.SPEC, "-b", str(b), "--timeout-ms", str(STALL_TIMEOUT_MS)])
        check(not hung, f"{name}: the feeder units did not hang")
        err = str(err) if err is not None else None
        check(err is not None and "PIPE_FUNCTION_EXITED" in err,
              f"{name}: the pipe job failed with PIPE_FUNCTION_EXITED (tfq-feed's exit status)")
        check(dt < STALL_LIMIT_S, f"{name}: ... in {dt:.1f} s (limit {STALL_LIMIT_S:.0f} s)")
        msgs = [l for l in ts.executor_log_lines(work)
                if "task:1" in l and "stats:" not in l]
        for line in msgs[:3]:
            print(f"    [executor log] {line}")
        check(len(msgs) > 0, f"{name}: tfq-feed's error names /job:worker/task:1")
        t = time.time()
        cluster.cancel()
        try:
            cluster.join(60)
            check(False, f"{name}: the cancelled cluster stage reports a failure")
        except RuntimeError as e:
            print(f"    [cluster] {ts._short(e, 300)}")
            check("did not end" not in str(e),
                  f"{name}: the cancelled cluster stage ended in {time.time() - t:.1f} s")
        cluster = None
    except Exception as e:  # noqa: BLE001
        failures.append(f"unexpected: {ts._short(e, 3000)}")
        print(f"test: FAILED: {ts._short(e, 3000)}", flush=True)
    finally:
        teardown(ts, sc, cluster, token, failures, 10)
    return verdict(ts, work, out, failures, t0)


def teardown(ts, sc, cluster, token, failures, settle):
    """Stops the cluster's stage and Spark, waits up to `settle` s for the run's processes to
    end (the cancelled tasks' children die with their workers), counts and kills the rest."""
    if cluster is not None:
        cluster.cancel()
    if sc is not None:
        sc.stop()
    deadline = time.time() + settle
    while time.time() < deadline and ts.run_pids(token):
        time.sleep(0.5)
    left_before = len(ts.run_pids(token))
    ts.kill_run(token)
    print(f"test: processes of the run left after the teardown: {left_before}", flush=True)
    if left_before:
        failures.append(f"{left_before} processes outlived the teardown")


def verdict(ts, work, out, failures, t0):
    """Prints the logs of a failed run and the verdict; the exit code."""
    if failures:
        for line in ts.executor_log_lines(work)[-30:]:
            print(f"  [executor log] {line}")
        for name in sorted(os.listdir(out)):
            if name.endswith(".log"):
                for line in open(os.path.join(out, name), errors="replace").readlines()[-10:]:
                    print(f"  [{name}] {line.rstrip()}")
        print(f"test: {len(failures)} FAILED ({time.time() - t0:.1f} s): " + "; ".join(failures))
        return 1
    import shutil
    shutil.rmtree(work, ignore_errors=True)
    print(f"test: OK ({time.time() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
