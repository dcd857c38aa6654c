#!/usr/bin/env python3
"""An honest end (issue #40, acceptance 2): a worker sees a clean OutOfRange only when every
feeder unit sent all of its rows.  A feeder that fails or is stopped marks its unit in
<queue>_failed and leaves the queues open; a SIGKILLed one leaves its unit not done.  The
workers run their steps through tfq_feed_worker.Guard, which polls that state while the queue is
empty: a failed unit becomes FeedFailedError (naming the feeder's message), unless a retry of the
unit completes it within the guard's retry_wait_s.

Each case: a fresh cluster of two worker tasks (no ps: the state lives on worker 0), forked from
this process, per-worker batch queues (-b 100, capacity 8 batches), 2,000 ids in two files.
  bad-record   one feeder, a bad int64 at id 1500: both workers raise FeedFailedError with the
               feeder's message, fewer than 2,000 ids trained.
  sigterm      one feeder, SIGTERM while it waits on full queues (the workers hold off until
               both queues are full): both workers raise FeedFailedError naming the signal.
  sigterm-retry  the same, the workers allow a retry (retry_wait_s=120) and the unit is run
               again (attempt 1): both end on OutOfRange, every id trained.
  sigkill      one feeder SIGKILLed on full queues (no mark can be written), then its retry:
               both workers end on OutOfRange with every id trained (none end early).
  sigkill-stall  the same without a retry, the workers with stall_s=3: FeedFailedError "no data".
  one-of-two   two feeders (--shard I/2), the second file holds the bad record: unit 0 completes
               (done 1 of 2, no close), unit 1 fails; both workers raise FeedFailedError naming
               unit 1's message.
Asserts, in every case, that no worker ends on a clean OutOfRange with ids missing.

    python tests/tf/test_feed_end.py TFQ_FEED

Exit 77 (meson's skip) when TensorFlow or tfq-feed is missing, unless CI=true.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from test_feed_failover import forked_worker_setup, free_ports, report  # on sys.path

ROWS = 2000
BAD_ID = 1500
SPEC = "int64,float32:0"
TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "tools")


def worker(tf, tfw, hosts, task, queue, out, d, guard_args):
    """A forked worker task: wait until its queue is full and the test says go, then train
    through a Guard; writes its ids and how it ended (END, or FAILED <message>)."""
    cs = tf.train.ClusterSpec({"worker": hosts})
    server = tf.distribute.Server(cs, job_name="worker", task_index=task)
    ids, _ = tfw.dequeue(SPEC, queue=queue, task_index=task)
    q = tfw.make_queue(SPEC, queue=queue, task_index=task)
    size = q.size()
    sess = tf.compat.v1.Session(server.target, config=tf.compat.v1.ConfigProto(
        device_filters=[f"/job:worker/task:{task}"]))
    guard = tfw.Guard(server.target, device="/job:worker/task:0", queue=queue, poll_ms=300,
                      **guard_args)
    open(os.path.join(d, f"w{task}.ready"), "w").close()
    go = os.path.join(d, "go")
    while not os.path.exists(go):
        if sess.run(size) >= tfw.DEFAULT_CAPACITY_BATCHES:
            open(os.path.join(d, f"w{task}.full"), "w").close()
        time.sleep(0.05)
    got = []
    end = "END"
    while True:
        try:
            got.extend(guard.run(sess, ids).tolist())
        except tf.errors.OutOfRangeError:
            break
        except tfw.FeedFailedError as e:
            end = "FAILED " + str(e).replace("\n", " ")
            break
    with open(out, "w") as f:
        f.write(" ".join(map(str, got)) + "\n" + end + "\n")
    if task == 0:  # the chief hosts the job state: it stays until the other worker has ended
        others = [out.replace("w0.out", "w1.out")]
        try:
            wait_files(others, "worker 1's end", 60)
        except AssertionError:
            pass
    os._exit(0)


def wait_files(paths, what, limit=120):
    t0 = time.monotonic()
    while not all(os.path.exists(p) for p in paths):
        if time.monotonic() - t0 > limit:
            raise AssertionError(f"{what}: not within {limit} s")
        time.sleep(0.02)


def feeder(exe, hosts, queue, files, shard="0/1", attempt=0):
    args = [exe, "--cluster", "worker=" + ",".join(hosts), "--queue", queue, "-d", SPEC,
            "-b", "100", "--timeout-ms", "30000", "--shard", shard, "--attempt", str(attempt),
            *files]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(p, timeout=90):
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        raise AssertionError("a feeder hung") from None
    return p.returncode, err


def one_case(tf, tfw, exe, top, case, good, bad):
    d = os.path.join(top, case)
    os.mkdir(d)
    hosts = [f"127.0.0.1:{p}" for p in free_ports(2)]
    queue = "end_" + case.replace("-", "_")
    outs = [os.path.join(d, f"w{i}.out") for i in range(2)]
    guard_args = {"sigterm-retry": {"retry_wait_s": 120}, "sigkill-stall": {"stall_s": 3}}.get(
        case, {})
    pids = []
    for i in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                worker(tf, tfw, hosts, i, queue, outs[i], d, guard_args)
            finally:
                os._exit(3)
        pids.append(pid)
    fails = []
    wait_files([os.path.join(d, f"w{i}.ready") for i in range(2)], "workers ready")
    want = None  # the text each worker's error must hold; None: both complete
    if case in ("bad-record", "one-of-two"):
        files = [bad] if case == "bad-record" else [good, bad]
        ps = [feeder(exe, hosts, queue, files, f"{k}/{len(files)}") for k in range(len(files))]
        open(os.path.join(d, "go"), "w").close()
        res = [finish(p) for p in ps]
        rc, err = res[-1]
        if rc == 0:
            fails.append(f"the feeder of the bad file exited 0: {err.strip()[-300:]}")
        if len(res) == 2 and res[0][0] != 0:
            fails.append(f"the good feeder exited {res[0][0]}: {res[0][1].strip()[-300:]}")
        want = [f"tfq-feed unit {len(files) - 1} (attempt 0)", "abc"]
    else:
        p = feeder(exe, hosts, queue, [good, bad.replace("bad", "good2")])
        wait_files([os.path.join(d, f"w{i}.full") for i in range(2)], "both queues full")
        sig = signal.SIGKILL if case.startswith("sigkill") else signal.SIGTERM
        p.send_signal(sig)
        rc, err = finish(p)
        if rc != (-9 if sig == signal.SIGKILL else 128 + 15):
            fails.append(f"the stopped feeder exited {rc}: {err.strip()[-300:]}")
        open(os.path.join(d, "go"), "w").close()
        if case in ("sigterm-retry", "sigkill"):
            time.sleep(1)  # let the workers drain first: the retry's rows arrive after
            rc, err = finish(feeder(exe, hosts, queue, [good, bad.replace("bad", "good2")],
                                    attempt=1))
            if rc != 0:
                fails.append(f"the retry exited {rc}: {err.strip()[-300:]}")
        elif case == "sigterm":
            want = ["tfq-feed unit 0 (attempt 0): stopped by signal 15"]
        else:
            want = ["no data for 3 s"]
    end = time.monotonic() + 90
    for pid in pids:
        while True:
            w, status = os.waitpid(pid, os.WNOHANG)
            if w:
                break
            if time.monotonic() > end:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                fails.append("a worker waited: no end within 90 s")
                break
            time.sleep(0.02)
    shown = ""
    trained = set()
    for o in outs:
        if os.path.exists(o):
            trained |= set(int(t) for t in open(o).read().split("\n")[0].split())
    missing = ROWS - len(trained & set(range(ROWS)))
    for o in outs:
        if not os.path.exists(o):
            fails.append(f"{os.path.basename(o)}: the worker wrote nothing")
            continue
        lines = open(o).read().split("\n")
        how = lines[1]
        if how == "END" and missing:
            fails.append(f"{os.path.basename(o)}: a clean OutOfRange with {missing} ids missing")
        if want is None and how != "END":
            fails.append(f"{os.path.basename(o)}: expected to complete, ended {how[:300]}")
        if want is not None and not (how.startswith("FAILED") and all(w in how for w in want)):
            fails.append(f"{os.path.basename(o)}: expected FeedFailedError with {want}, "
                         f"ended {how[:300]}")
        shown = shown or how[:160]
    return fails, f"{shown} ({ROWS - missing} of {ROWS} ids trained)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?")
    ap.add_argument("--case", action="append")
    a = ap.parse_args()
    tf, tfw = forked_worker_setup(a.tfq_feed, TOOLS)
    cases = a.case or ["bad-record", "sigterm", "sigterm-retry", "sigkill", "sigkill-stall",
                       "one-of-two"]
    fails = []
    # tfq.cluster is tools/tfq_feed_worker.py below its own first paragraph: the Guard is in both
    copy = open(os.path.join(TOOLS, "..", "python", "tfq", "cluster.py")).read().split("\n")[6:]
    if copy != open(os.path.join(TOOLS, "tfq_feed_worker.py")).read().split("\n")[1:]:
        fails.append("python/tfq/cluster.py is not tools/tfq_feed_worker.py below its header")
    with tempfile.TemporaryDirectory() as top:
        good, bad, good2 = (os.path.join(top, n) for n in ("good.csv", "bad.csv", "good2.csv"))
        with open(good, "w") as f:
            f.writelines(f"{i},{i / 7:.3f}\n" for i in range(0, ROWS // 2))
        with open(good2, "w") as f:
            f.writelines(f"{i},{i / 7:.3f}\n" for i in range(ROWS // 2, ROWS))
        with open(bad, "w") as f:  # ids 1000..1999 (all 0..1999 with a lone feeder: see below)
            f.writelines((f"{i},{i / 7:.3f}\n" if i != BAD_ID else "abc,1\n")
                         for i in range(ROWS // 2, ROWS))
        for case in cases:
            t0 = time.monotonic()
            f, shown = one_case(tf, tfw, a.tfq_feed, top, case, good, bad)
            print(f"{case}: {time.monotonic() - t0:.1f} s, a worker ended: {shown}", flush=True)
            fails += [f"{case}: {m}" for m in f]
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
