#!/usr/bin/env python3
"""The final close cannot hang (issue #40, acceptance 1): tfq-feed's last feeder closes every
queue while the workers drain them and exit the instant they see OutOfRange, as every TF1 worker
script does.  A worker gone before the close's reply reached the feeder made that close wait its
whole --timeout-ms (exit 1, Deadline Exceeded, the later queues never closed): now every queue is
closed on its own thread through a handle with a short limit, and a worker that no longer
answers after the close counts as closed.

ROUNDS rounds (default 50), each with a fresh cluster of two worker tasks (no ps; forked from
this process, which imported TensorFlow once) and 2,000 rows fed with -b 100 into per-worker
batch queues; odd rounds with one feeder, even rounds with two (--shard I/2, the done set on
worker 0).  --timeout-ms is 30000, so a close stuck on a gone worker would show as a feeder
running 30 s and failing.  Asserts, every round: every feeder exits 0, both workers reach
OutOfRange and exit (nobody waits), every id is trained exactly once.  Prints how many closes
met a gone worker (the race happened) over the rounds.

    python tests/tf/test_feed_close_race.py TFQ_FEED [--rounds N]

Exit 77 (meson's skip) when TensorFlow or tfq-feed is missing, unless CI=true.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from test_feed_failover import forked_worker_setup, free_ports, report  # on sys.path

ROWS = 2000
SPEC = "int64,float32:0"
TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "tools")


def worker(tf, tfw, hosts, task, queue, out, ready):
    """A forked worker task: drain its queue, then exit at once on OutOfRange."""
    cs = tf.train.ClusterSpec({"worker": hosts})
    server = tf.distribute.Server(cs, job_name="worker", task_index=task)
    ids, _ = tfw.dequeue(SPEC, queue=queue, task_index=task)
    sess = tf.compat.v1.Session(server.target, config=tf.compat.v1.ConfigProto(
        device_filters=[f"/job:worker/task:{task}"]))
    got = []
    open(ready, "w").close()
    while True:
        try:
            got.extend(sess.run(ids).tolist())
        except tf.errors.OutOfRangeError:
            with open(out, "w") as f:
                f.write(" ".join(map(str, got)) + "\nEND\n")
            os._exit(0)  # the instant it sees OutOfRange: no session close, no server stop


def one_round(tf, tfw, exe, d, r, files):
    ports = free_ports(2)
    hosts = [f"127.0.0.1:{p}" for p in ports]
    queue = f"cr{r}"
    outs = [os.path.join(d, f"r{r}_w{i}.out") for i in range(2)]
    ready = [os.path.join(d, f"r{r}_w{i}.ready") for i in range(2)]
    pids = []
    for i in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                worker(tf, tfw, hosts, i, queue, outs[i], ready[i])
            finally:
                os._exit(3)
        pids.append(pid)
    fails = []
    t0 = time.monotonic()
    while not all(os.path.exists(x) for x in ready) and time.monotonic() - t0 < 60:
        time.sleep(0.02)
    nfeed = 1 if r % 2 else 2
    spec = "worker=" + ",".join(hosts)
    feeders = []
    for k in range(nfeed):
        args = [exe, "--cluster", spec, "--queue", queue, "-d", SPEC, "-b", "100",
                "--timeout-ms", "30000", "--shard", f"{k}/{nfeed}", *files]
        feeders.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True))
    errs = []
    for p in feeders:
        try:
            _, err = p.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            fails.append("a feeder hung")
        errs.append(err)
        if p.returncode != 0:
            fails.append(f"a feeder exited {p.returncode}: {err.strip()[-300:]}")
    gone = sum(e.count("the worker is gone") for e in errs)
    end = time.monotonic() + 60
    for pid in pids:
        while True:
            w, status = os.waitpid(pid, os.WNOHANG)
            if w:
                if os.waitstatus_to_exitcode(status) != 0:
                    fails.append(f"worker pid {pid} exited {os.waitstatus_to_exitcode(status)}")
                break
            if time.monotonic() > end:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                fails.append("a worker waited: no OutOfRange within 60 s of the feeders' end")
                break
            time.sleep(0.02)
    seen = {}
    for o in outs:
        if not os.path.exists(o) or not open(o).read().endswith("END\n"):
            fails.append(f"{os.path.basename(o)}: the worker did not end on OutOfRange")
            continue
        for tok in open(o).read().split("\n")[0].split():
            seen[int(tok)] = seen.get(int(tok), 0) + 1
    wrong = [i for i in range(ROWS) if seen.get(i) != 1]
    if wrong:
        fails.append(f"{len(wrong)} ids not trained exactly once (e.g. {wrong[:5]})")
    return [f"round {r} ({nfeed} feeders): {m}" for m in fails], gone


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?")
    ap.add_argument("--rounds", type=int, default=50)
    a = ap.parse_args()
    tf, tfw = forked_worker_setup(a.tfq_feed, TOOLS)
    fails, gone = [], 0
    with tempfile.TemporaryDirectory() as d:
        files = []
        for k in range(2):
            path = os.path.join(d, f"part{k}.csv")
            with open(path, "w") as f:
                for i in range(k, ROWS, 2):
                    f.write(f"{i},{i / 7:.3f}\n")
            files.append(path)
        t0 = time.monotonic()
        for r in range(a.rounds):
            f, g = one_round(tf, tfw, a.tfq_feed, d, r, files)
            fails += f
            gone += g
        dt = time.monotonic() - t0
    print(f"{a.rounds} rounds in {dt:.0f} s: closes that met a gone worker {gone}", flush=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
