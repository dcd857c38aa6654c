#!/usr/bin/env python3
"""tfq-feed --acks against a loopback cluster (ps + 2 workers, separate processes): nothing is lost.

  lost-worker   worker 1 dies (SIGKILL of itself, right after dequeuing a batch it will never
                train) at ~30% of a 200,000-record run fed by 2 feeders (--shard 0/2, 1/2, --to
                workers --elements batches --acks): both feeders exit 0, every id was trained at
                least once, the duplicates are no more than the re-sent batches, and the feeders'
                --stats report exactly the duplicate records this test counts from the workers'
                training logs.
  feeder-retry  feeder unit 0 is killed midway (asserted: it was still running and the workers
                had trained part of the data, not all) and run again as attempt 1 (a Spark task
                retry): the queues close once (each worker ends on OutOfRange once), every record
                is trained at least once, duplicates happened (a whole unit re-sent: more than
                the batches in flight), and the retry reports exactly the duplicate records
                (what attempt 0 had trained, sent again), counted from the workers' logs.
  feeder-retry-checkpoint  the same with --checkpoint DIR on both attempts of unit 0: the retry
                resumes from the state attempt 0 persisted (asserted: it says so, at a batch > 0)
                and re-sends only what was not acknowledged: the duplicates, reported exactly,
                are at most the batches in flight at the kill (the workers' queues, the batches
                in the feeder's senders, and what was acknowledged since the last persisted
                state, one acknowledgement poll).  Both figures are printed.

    python tests/tf/test_feed_failover.py TFQ_FEED [--case lost-worker|feeder-retry|
                                                      feeder-retry-checkpoint]

Exit 77 (meson's skip) when TensorFlow or tfq-feed is missing, unless CI=true.
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

N = 200_000
SPEC = "int64,float32:0,string:"


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    if os.environ.get("CI") == "true":
        print("CI=true: this is a failure, not a skip.")
        sys.exit(1)
    sys.exit(77)


def report(fails):
    """Prints each failure and the verdict; the exit code (0 or 1)."""
    for m in fails:
        print("FAIL " + m)
    print("OK" if not fails else f"{len(fails)} failure(s)")
    return 1 if fails else 0


def forked_worker_setup(exe, tools):
    """For tests that fork their worker tasks from this process: skips (77, or a failure under
    CI=true) without tfq-feed or TensorFlow; returns (tf, tfq_feed_worker) in graph mode."""
    if not exe or not os.path.exists(exe):
        skip("tfq-feed was not built (it needs the TensorFlow bridge)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    try:
        import tensorflow as tf
    except ImportError:
        skip("TensorFlow is not importable by " + sys.executable)
    tf.compat.v1.disable_eager_execution()
    sys.path.insert(0, tools)
    import tfq_feed_worker as tfw
    return tf, tfw


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


WORKER = r'''
import os, sys, time, signal
TOOLS = @TOOLS@
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
ports, job, task, out, die_at, pace, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
p = ports.split(",")
cs = tf.train.ClusterSpec({"ps": ["127.0.0.1:" + p[0]], "worker": ["127.0.0.1:" + p[1], "127.0.0.1:" + p[2]]})
server = tf.distribute.Server(cs, job_name=job, task_index=task)
if job == "ps":
    print("ps up", flush=True)
    open(ready, "w").close()
    server.join()
sys.path.insert(0, TOOLS)
import tfq_feed_worker as tfw  # the worker side of tfq-feed --acks
key, ids, x, s = tfw.dequeue("int64,float32:0,string:", queue="ff", task_index=task, acks=True)
with tf.device(f"/job:worker/task:{task}"):
    train = tf.reduce_sum(x)  # stands in for a training step
ack = tfw.ack(key, tf.size(ids), train, task, queue="ff")
sess = tf.compat.v1.Session(server.target, config=tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"]))
log = open(out, "w")
open(ready, "w").close()  # the server and the session are up: the test starts the feeders
steps = 0
while True:
    try:
        if die_at and steps == die_at:
            sess.run(ids)  # dequeued, never trained: the feeder must send it again
            log.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        got, _, _ = sess.run([ids, train, ack])  # the step and its acknowledgement, one run
    except tf.errors.OutOfRangeError:
        break
    log.write(" ".join(map(str, got.tolist())) + "\n")
    log.flush()
    steps += 1
    if pace:
        time.sleep(pace)
log.write("END\n")
log.close()
print(f"worker {task}: {steps} steps", flush=True)
os._exit(0)
'''


class Cluster:
    def __init__(self, d, py, die_at=0, pace=0.0):
        self.ports = free_ports(3)
        self.procs = []
        self.d = d
        self.logs = [os.path.join(d, f"w{i}.log") for i in range(2)]
        script = os.path.join(d, "node.py")
        tools = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "tools")
        open(script, "w").write(WORKER.replace("@TOOLS@", repr(tools)))
        ps = ",".join(map(str, self.ports))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        self.ready = [os.path.join(d, f"ready{i}") for i in range(3)]  # ps, worker 0, worker 1
        self.procs.append(subprocess.Popen([py, script, ps, "ps", "0", "-", "0", "0", self.ready[0]],
                                           env=env,
                                           start_new_session=True, stdout=subprocess.DEVNULL,
                                           stderr=open(os.path.join(d, "ps.err"), "w")))
        for i in range(2):
            self.procs.append(subprocess.Popen(
                [py, script, ps, "worker", str(i), self.logs[i], str(die_at if i == 1 else 0),
                 str(pace), self.ready[i + 1]], env=env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, f"w{i}.err"), "w")))
        self.spec = "ps=127.0.0.1:%d;worker=127.0.0.1:%d,127.0.0.1:%d" % tuple(self.ports)

    def wait_ready(self, timeout=180):
        """Waits until the ps and both workers are up (each writes its marker), rather than for a
        fixed time: a worker that is still importing TensorFlow when the feeders start does not
        answer their first probe, and tfq-feed rightly counts it lost from the start."""
        end = time.monotonic() + timeout
        while not all(os.path.exists(r) for r in self.ready):
            if time.monotonic() > end or any(p.poll() is not None for p in self.procs):
                return
            time.sleep(0.1)

    def kill(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()


def read_logs(logs):
    seen, ended = {}, []
    for path in logs:
        ok = False
        if not os.path.exists(path):
            ended.append(False)
            continue
        for line in open(path):
            line = line.strip()
            if line == "END":
                ok = True
            elif line:
                for i in line.split():
                    seen[int(i)] = seen.get(int(i), 0) + 1
        ended.append(ok)
    return seen, ended


def stat(text, field):
    m = re.search(field + r" (\d+)", text)
    return int(m.group(1)) if m else None


def feeder(exe, cl, files, d, shard, extra=(), name=None):
    err = open(os.path.join(d, f"{name or 'feeder%d' % shard}.err"), "w+")
    p = subprocess.Popen([exe, "--cluster", cl.spec, "--queue", "ff", "-d", SPEC, "-b", "500",
                          "--acks", "--stats", "-q", "--timeout-ms", "20000",
                          f"--shard={shard}/2", *extra, *files],
                         stderr=err, stdout=subprocess.DEVNULL, start_new_session=True)
    return p, err


def finish(p, err, timeout=120):
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        rc = "timeout"
    err.seek(0)
    return rc, err.read()


def lost_worker(exe, py, files, d):
    cl = Cluster(d, py, die_at=60, pace=0.004)  # worker 1 dies at its 61st batch of 500: ~30%
    try:
        cl.wait_ready()
        f0, e0 = feeder(exe, cl, files, d, 0)
        f1, e1 = feeder(exe, cl, files, d, 1)
        (rc0, err0), (rc1, err1) = finish(f0, e0), finish(f1, e1)
        try:
            cl.procs[1].wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass  # reported below: worker 0 did not end on OutOfRange
        seen, ended = read_logs(cl.logs)
    finally:
        cl.kill()
    fails = []
    print(err0 + err1)
    if rc0 != 0 or rc1 != 0:
        fails.append(f"feeders exited {rc0} {rc1}")
    missing = [i for i in range(N) if i not in seen]
    if missing:
        fails.append(f"{len(missing)} ids never trained (e.g. {missing[:5]})")
    dups = sum(c - 1 for c in seen.values() if c > 1)
    reported = [stat(e, "duplicates") for e in (err0, err1)]
    resent = [stat(e, "re-sent") for e in (err0, err1)]
    lost = [stat(e, "workers lost") for e in (err0, err1)]
    if None in reported or sum(reported) != dups:
        fails.append(f"duplicates: the feeders report {reported}, the workers' logs show {dups}")
    if None in resent or dups > 500 * sum(resent):
        fails.append(f"{dups} duplicate records exceed the {resent} re-sent batches")
    if lost != [1, 1]:
        fails.append(f"each feeder should have lost one worker, they report {lost}")
    if not ended[0] or ended[1]:
        fails.append(f"worker 0 should end on OutOfRange and worker 1 not: {ended}")
    print(f"lost-worker: {len(seen)} ids trained, {dups} duplicates (reported {reported}), "
          f"re-sent {resent} batches", flush=True)
    return fails


QUEUE_CAP = 8  # tfq-feed's default --queue-capacity in batches
BATCH = 500


def feeder_retry(exe, py, files, d, checkpoint=False):
    cl = Cluster(d, py, pace=0.004)
    ck = []
    if checkpoint:
        ck = ["--checkpoint", os.path.join(d, "ck")]
        os.mkdir(ck[1])
    fails = []
    try:
        cl.wait_ready()
        f0, e0 = feeder(exe, cl, files, d, 0, ["--attempt", "0", *ck])
        f1, e1 = feeder(exe, cl, files, d, 1)
        t0 = time.time()
        while time.time() - t0 < 60:  # kill unit 0 once the workers trained ~30% of the data
            seen, _ = read_logs(cl.logs)
            if len(seen) > 0.3 * N:
                break
            time.sleep(0.05)
        alive = f0.poll() is None
        os.killpg(f0.pid, signal.SIGKILL)
        f0.wait()
        at_kill = len(read_logs(cl.logs)[0])
        if not alive or not 0 < at_kill < 0.9 * N:
            fails.append(f"the kill was not mid-run: feeder 0 running {alive}, {at_kill} of {N} "
                         "ids trained at the kill")
        e0b_name = "feeder0b" if not checkpoint else "feeder0c"
        f0b, e0b = feeder(exe, cl, files, d, 0, ["--attempt", "1", *ck], name=e0b_name)
        (rc0, err0), (rc1, err1) = finish(f0b, e0b), finish(f1, e1)
        for w in cl.procs[1:]:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass  # reported below
        seen, ended = read_logs(cl.logs)
    finally:
        cl.kill()
    print(err0 + err1)
    if rc0 != 0 or rc1 != 0:
        fails.append(f"the retry and feeder 1 exited {rc0} {rc1}")
    missing = [i for i in range(N) if i not in seen]
    if missing:
        fails.append(f"{len(missing)} ids never trained")
    dups = sum(c - 1 for c in seen.values() if c > 1)
    rep = [stat(err0, "duplicates"), stat(err1, "duplicates")]
    if None in rep:
        fails.append(f"a feeder printed no duplicates figure: {rep}")
    reported = sum(r or 0 for r in rep)
    if reported != dups:
        fails.append(f"duplicates: reported {reported}, the workers' logs show {dups}")
    if ended != [True, True]:
        fails.append(f"both workers should end on OutOfRange once: {ended}")
    # in flight at the kill: both workers' queues full, a batch in each sender, and what was
    # acknowledged within one poll (250 ms) before the kill, bounded by the rate seen here
    in_flight = (2 * QUEUE_CAP + 2) * BATCH
    resumed = stat(err0, "resumed at batch")
    name = "feeder-retry" + ("-checkpoint" if checkpoint else "")
    if checkpoint:
        if not resumed:
            fails.append(f"the retry did not resume from a checkpoint (resumed at {resumed})")
        # the acknowledgement poll persists a state every 250 ms: batches acknowledged after
        # the last persisted state and before the kill are re-sent too
        if dups > 2 * in_flight:
            fails.append(f"{dups} duplicates with --checkpoint exceed the batches in flight "
                         f"({in_flight} records, twice that with one poll's acknowledgements)")
    elif dups <= in_flight:
        fails.append(f"only {dups} duplicates without --checkpoint: the retry should re-send "
                     "the whole unit's acknowledged part")
    print(f"{name}: {len(seen)} ids trained, {at_kill} trained at the kill, {dups} duplicates "
          f"(reported {reported}), resumed at batch {resumed}", flush=True)
    FIGURES[name] = dups
    return fails


FIGURES = {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?")
    ap.add_argument("--case", choices=["lost-worker", "feeder-retry", "feeder-retry-checkpoint",
                                       "all"], default="all")
    a = ap.parse_args()
    if not a.tfq_feed or not os.path.exists(a.tfq_feed):
        skip("tfq-feed was not built (it needs the TensorFlow bridge)")
    py = sys.executable
    try:
        subprocess.run([py, "-c", "import tensorflow"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        skip("TensorFlow is not importable by " + py)
    fails = []
    with tempfile.TemporaryDirectory() as d:
        files = []
        for k in range(4):
            path = os.path.join(d, f"part{k}.csv")
            with open(path, "w") as f:
                for i in range(k, N, 4):
                    f.write(f"{i},{(i % 97) / 7:.3f},s{i % 13}\n")
            files.append(path)
        cases = (["lost-worker", "feeder-retry", "feeder-retry-checkpoint"] if a.case == "all"
                 else [a.case])
        for c in cases:
            sub = os.path.join(d, c)
            os.mkdir(sub)
            if c == "lost-worker":
                fails += [f"{c}: {m}" for m in lost_worker(a.tfq_feed, py, files, sub)]
            else:
                fails += [f"{c}: {m}" for m in feeder_retry(a.tfq_feed, py, files, sub,
                                                             c.endswith("checkpoint"))]
    if FIGURES:
        print("duplicates of the retried unit: " +
              ", ".join(f"{k} {v} records" for k, v in FIGURES.items()), flush=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
