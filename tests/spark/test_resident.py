#!/usr/bin/env python3
"""S2 through the resident feeder (issue #40 item 5): RDD.pipe units that run in a resident
`tfq-feed --serve` per machine (tfq.spark.feed_rdd(resident=...): `tfq-feed-via SOCKET ... -`).

One SparkContext (local-cluster[2,3,1024], spark.task.maxFailures 2: a failed pipe task is run
again once, as attempt 1), one TF cluster (ps + 2 workers, tfq.spark.TFCluster), two rounds:

  resident      partitions [3000, 3000, 2500, 2000, 1, 0] at -b 256: the pipe job succeeds,
                one stats line per unit (rows = the partition's size), exactly one unit closed
                the queues, every id trained exactly once, and one server served every unit
                (the executors share the machine, so one socket: its log says "up" once).
  server-dies   partitions [40000] * 4 at -b 100 through a fresh socket; once the server runs a
                unit (a live child process of its), the test SIGKILLs the resident process:
                the units running in it fail (tfq-feed-via exits 1), Spark runs them again as
                attempt 1, the first retry starts a new server (the log says "up" twice), the
                pipe job succeeds and every id is trained at least once (a re-run unit sends its
                whole partition again: without --acks its first attempt's rows are trained
                twice, as docs/tf-bridge.md says).

The driver uses this checkout's python/tfq/spark.py (feed_rdd's resident mode), the executors
the installed tfq.spark (its _headed).  Every process of the run is gone at the end (the
servers exit once idle: TFQ_FEED_IDLE_MS=2000).

    .venv/bin/python tests/spark/test_resident.py build/tools/tfq-feed

Exit 0 pass, 1 fail, 77 skip (pyspark, Java, TensorFlow or tfq-feed missing; a failure when
CI=true).
"""
import importlib.util
import os
import re
import signal
import sys
import tempfile
import threading
import time
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the end-of-data test's helpers, and through it examples/spark/run.py (example)
from test_end_of_data import (ROOT, example, feed, lines_for, rdd_of, teardown,  # noqa: E402
                              verdict, wait_ids)

MASTER = "local-cluster[2,3,1024]"


def source_spark():
    """This checkout's tfq.spark for the driver (see the module's note)."""
    import tfq  # noqa: F401
    spec = importlib.util.spec_from_file_location(
        "tfq.spark", os.path.join(ROOT, "python", "tfq", "spark.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tfq.spark"] = mod
    spec.loader.exec_module(mod)
    return mod


def servers(sock):
    want = b"--serve\0" + sock.encode() + b"\0"
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if want in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


def children(pid):
    """The live processes whose parent is pid (a resident server's running units)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                fields = st[st.rindex(")") + 2:].split()
                if int(fields[1]) == pid and fields[0] != "Z":
                    out.append(int(d))
            except (OSError, ValueError):
                pass
    return out


def ups(sock):
    log = sock + ".log"
    return open(log).read().count(": pid ") if os.path.exists(log) else 0


def main():
    tfq_feed = sys.argv[1] if len(sys.argv) > 1 else example.find("build*/tools/tfq-feed")
    tfq_feed = os.path.abspath(tfq_feed) if tfq_feed else None
    example.check_requirements(tfq_feed)
    if not os.path.exists(os.path.join(os.path.dirname(tfq_feed), "tfq-feed-via")):
        print("test: FAILED: tfq-feed-via is not beside tfq-feed")
        return 1
    example.on_sigterm()
    import numpy as np
    ts = source_spark()

    t0 = time.time()
    work = tempfile.mkdtemp(prefix="tfq_spark_res_")
    out = os.path.join(work, "out")
    os.makedirs(out)
    token = uuid.uuid4().hex
    queues = ["res_resident", "res_dies"]
    env = {"TFQ_FEED_IDLE_MS": "2000"}
    failures = []

    def check(cond, what):
        print(f"  {'ok' if cond else 'FAIL'}: {what}", flush=True)
        if not cond:
            failures.append(what)

    sc = cluster = None
    try:
        sc = ts.spark_context(MASTER, work, "tfq-spark-resident",
                              conf=[("spark.task.maxFailures", "2")])
        ts.ship(sc, os.path.join(ROOT, "examples", "spark", "node.py"))
        if not ts.wait_executors(sc, 2, 120):
            raise RuntimeError("2 executors did not register in 120 s")
        cluster = ts.TFCluster(sc, queues=queues, token=token, batch=256, tfq_feed=tfq_feed,
                               out=out, round_timeout=600).start()
        tf_cluster = cluster.wait_cluster(240)
        print(f"test: Spark and the TF cluster up in {time.time() - t0:.1f} s", flush=True)

        # ---- resident: every unit in one server, every id once ----
        sizes, q = [3000, 3000, 2500, 2000, 1, 0], queues[0]
        sock = ts.resident_socket(token, q)
        parts = lines_for(sizes, 1)
        summary, err, t_pipe, hung = feed(
            sc, ts, 180, rdd=rdd_of(sc, parts), cluster=tf_cluster, tfq_feed=tfq_feed,
            token=token, queue=q, args=["-d", example.SPEC, "-b", "256", "--stats"], env=env,
            resident=True)
        check(not hung and err is None, "resident: the pipe job succeeded" +
              ("" if err is None else f": {ts._short(err, 1500)}"))
        stats = [x for x in summary or [] if "stats: unit" in x]
        rows = {int(re.search(r"unit (\d+) of", x).group(1)): int(re.search(r"rows (\d+)",
                                                                             x).group(1))
                for x in stats}
        check(sorted(rows) == list(range(len(sizes))) and
              all(rows[p] == s for p, s in enumerate(sizes)),
              f"resident: one stats line per unit, rows = the partition's size ({rows})")
        check(sum("closed by this feeder" in x for x in stats) == 1,
              "resident: exactly one unit closed the queues")
        check(ups(sock) == 1, f"resident: one server for the {len(sizes)} units "
              f"(started {ups(sock)})")
        ids = wait_ids(out, q, 60)
        check(ids is not None and np.array_equal(np.sort(np.concatenate(ids)),
                                                 np.arange(sum(sizes))),
              f"resident: every id trained exactly once ({t_pipe:.1f} s)")

        # ---- server-dies: the units fail, Spark's retry starts a new server ----
        sizes, q = [40000] * 4, queues[1]
        sock = ts.resident_socket(token, q)
        parts = lines_for(sizes, 2)
        killed = {}

        def killer():  # once the server runs a unit (a child of its): never after the last one
            end = time.time() + 120
            pids = []
            while time.time() < end:
                if os.path.exists(sock + ".log"):
                    # the server (its pid from its log), not its units: they must die with it
                    pids = [int(x) for x in re.findall(r": pid (\d+), up",
                                                       open(sock + ".log").read())]
                if pids and any(children(p) for p in pids):
                    break
                time.sleep(0.02)
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            killed["pids"] = pids

        th = threading.Thread(target=killer, daemon=True)
        th.start()
        summary, err, t_pipe, hung = feed(
            sc, ts, 300, rdd=rdd_of(sc, parts), cluster=tf_cluster, tfq_feed=tfq_feed,
            token=token, queue=q, args=["-d", example.SPEC, "-b", "100", "--stats"], env=env,
            resident=True)
        th.join(10)
        check(bool(killed.get("pids")), f"server-dies: the server was killed ({killed})")
        check(not hung and err is None, "server-dies: the pipe job succeeded after the retries" +
              ("" if err is None else f": {ts._short(err, 1500)}"))
        check(ups(sock) >= 2, f"server-dies: a retry started a new server (started {ups(sock)})")
        fails = [x for x in ts.executor_log_lines(work, "tfq-feed-via") if "ended before" in x]
        for x in fails[:2]:
            print(f"    [executor log] {x}")
        check(len(fails) > 0, "server-dies: the units in the killed server failed "
              "(tfq-feed-via: the resident tfq-feed ended before the unit did)")
        ids = wait_ids(out, q, 120)
        if ids is not None:
            allids = np.concatenate(ids)
            twice = len(allids) - len(np.unique(allids))
        check(ids is not None and np.array_equal(np.unique(allids), np.arange(sum(sizes))),
              "server-dies: every id trained at least once" +
              (f" ({twice} trained twice: the killed attempts' rows, sent again)"
               if ids is not None else ""))
        cluster.join(120)
        cluster = None
    except Exception as e:  # noqa: BLE001
        failures.append(f"unexpected: {ts._short(e, 3000)}")
        print(f"test: FAILED: {ts._short(e, 3000)}", flush=True)
    finally:
        teardown(ts, sc, cluster, token, failures, 15)  # the servers exit 2 s after their last unit
    return verdict(ts, work, out, failures, t0)


if __name__ == "__main__":
    sys.exit(main())
