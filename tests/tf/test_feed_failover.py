#!/usr/bin/env python3
"""tfq-feed --acks against a loopback cluster (ps + 2 workers, separate processes): nothing is lost.

Every case first waits for each task to be up (``wait_ready`` raises otherwise: a worker not up
when the feeders start is counted lost from the start, and nothing would be failed over), and
asserts that the failure it stages happened, not only that the result looks right.  The model is
a variable on the ps, ``trained_rows``, that every training step adds its batch's rows to: the
workers' logs must add up to it.

  lost-worker   worker 1 dies (SIGKILL of itself, right after dequeuing a batch it will never
                train) at its 61st batch of 500 (~30% of a 200,000-record run fed by 2 feeders:
                --shard 0/2, 1/2, --to workers --elements batches --acks).  Asserted: worker 1
                trained 60 batches and was SIGKILLed while both feeders ran; both feeders exit 0,
                each lost one worker and re-sent > 0 batches in all; every id was trained at least
                once; the duplicates are no more than the re-sent batches and the feeders' --stats
                report exactly the duplicate records counted from the workers' logs.
  in-step       the same, but worker 1 dies inside its 61st step: after the variable update,
                before its acknowledgement (a numpy_function between the two kills the process).
                Asserted, as docs/tf-bridge.md states it: that batch is trained twice (worker 0
                trains it again: the failover) and is NOT in the duplicates --stats reports, which
                are exactly the logs' duplicates minus that batch.
  feeder-retry  feeder unit 0 is SIGKILLed midway (asserted: it was still running, its exit status
                says SIGKILL, the workers had trained part of the data, not all) and run again as
                attempt 1 (a Spark task retry): the queues close once (each worker ends on
                OutOfRange once), every record is trained at least once, duplicates happened (a
                whole unit re-sent: more than the batches in flight), and the retry reports
                exactly the duplicate records (what attempt 0 had trained, sent again: its "from
                earlier attempts" figure > 0), counted from the workers' logs.  A missing --stats
                line is a failure.
  feeder-retry-checkpoint  the same with --checkpoint DIR on both attempts of unit 0: the retry
                resumes from the state attempt 0 persisted (asserted: it says so, at a batch > 0)
                and re-sends only what was not acknowledged: the duplicates, reported exactly,
                are at most the batches in flight at the kill (the workers' queues, the batches
                in the feeder's senders, and what was acknowledged since the last persisted
                state, one acknowledgement poll).  Both figures are printed.
  negative-control  lost-worker against a cluster whose worker 1 never starts (the harness waits
                for the ps and worker 0 only): every id is trained, nothing duplicated, both
                feeders exit 0 -- and the case must still fail, on "worker 1 trained no batch",
                "worker 1 was not SIGKILLed" and "no batch was re-sent".  This case passes when
                those failures are there.  ``--no-worker1`` (or TFQ_FAILOVER_NO_WORKER1=1) runs any
                case against such a cluster: lost-worker and in-step then exit 1.

    python tests/tf/test_feed_failover.py TFQ_FEED [--case lost-worker|in-step|feeder-retry|
                                 feeder-retry-checkpoint|negative-control|all] [--no-worker1]

("all", the default: every case but negative-control, which meson runs as its own test.)
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
import numpy as np
TOOLS = @TOOLS@
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
ports, job, task, out, die_at, pace, ready, how = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
    sys.argv[4], int(sys.argv[5]), float(sys.argv[6]), sys.argv[7], sys.argv[8])
p = ports.split(",")
cs = tf.train.ClusterSpec({"ps": ["127.0.0.1:" + p[0]], "worker": ["127.0.0.1:" + p[1], "127.0.0.1:" + p[2]]})
server = tf.distribute.Server(cs, job_name=job, task_index=task)
with tf.device("/job:ps/task:0"):  # the model: the rows trained, summed by every step
    trained = tf.Variable(tf.constant(0, tf.int64), name="trained_rows")
if job == "ps":
    with tf.compat.v1.Session(server.target, config=tf.compat.v1.ConfigProto(
            device_filters=["/job:ps"])) as s0:
        s0.run(trained.initializer)
    print("ps up", flush=True)
    open(ready, "w").close()
    server.join()
sys.path.insert(0, TOOLS)
import tfq_feed_worker as tfw  # the worker side of tfq-feed --acks
key, ids, x, s = tfw.dequeue("int64,float32:0,string:", queue="ff", task_index=task, acks=True)
log = open(out, "w")
DIE = [False]
def gate(batch):
    # runs after the variable update and before the acknowledgement, in the worker's own
    # process (a py_func runs where its op is placed: this task)
    if DIE[0]:
        log.write("INSTEP " + " ".join(map(str, batch.tolist())) + "\n")
        log.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return np.int32(batch.size)
with tf.device(f"/job:worker/task:{task}"):
    train = trained.assign_add(tf.size(ids, out_type=tf.int64))  # the training step
    with tf.control_dependencies([train]):
        stepped = tf.numpy_function(gate, [ids], tf.int32, stateful=True)
ack = tfw.ack(key, tf.size(ids), stepped, task, queue="ff")
sess = tf.compat.v1.Session(server.target, config=tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task}"]))
open(ready, "w").close()  # the server and the session are up: the test starts the feeders
steps = 0
while True:
    try:
        if die_at and steps == die_at:
            if how == "dequeue":
                sess.run(ids)  # dequeued, never trained: the feeder must send it again
                log.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            DIE[0] = True  # "step": dies inside this step, trained and not acknowledged
        got, _, _ = sess.run([ids, train, ack])  # the step and its acknowledgement, one run
    except tf.errors.OutOfRangeError:
        break
    log.write(" ".join(map(str, got.tolist())) + "\n")
    log.flush()
    steps += 1
    if pace:
        time.sleep(pace)
log.write("END\n")
log.write("TOTAL %d\n" % sess.run(trained))  # the rows the model was trained on, ever
log.close()
print(f"worker {task}: {steps} steps", flush=True)
os._exit(0)
'''


class Cluster:
    """ps + 2 workers.  ``die_at``: worker 1 kills itself (SIGKILL) at that step, ``how``
    "dequeue" (right after dequeuing a batch it never trains) or "step" (inside its training step:
    after the variable update, before its acknowledgement).  ``no_worker1``: the negative control,
    a cluster whose worker 1 never starts (its port is reserved and never served)."""

    def __init__(self, d, py, die_at=0, pace=0.0, how="dequeue", no_worker1=False):
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
        self.procs.append(subprocess.Popen([py, script, ps, "ps", "0", "-", "0", "0", self.ready[0],
                                            how], env=env,
                                           start_new_session=True, stdout=subprocess.DEVNULL,
                                           stderr=open(os.path.join(d, "ps.err"), "w")))
        for i in range(1 if no_worker1 else 2):
            self.procs.append(subprocess.Popen(
                [py, script, ps, "worker", str(i), self.logs[i], str(die_at if i == 1 else 0),
                 str(pace), self.ready[i + 1], how], env=env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, f"w{i}.err"), "w")))
        if no_worker1:
            self.ready.pop()  # the harness waits for what runs; the checks must see the rest
        self.spec = "ps=127.0.0.1:%d;worker=127.0.0.1:%d,127.0.0.1:%d" % tuple(self.ports)

    def worker1(self):
        """worker 1's process, or None (the negative control)."""
        return self.procs[2] if len(self.procs) > 2 else None

    def wait_ready(self, timeout=180):
        """Waits until the ps and both workers are up (each writes its marker), rather than for a
        fixed time: a worker that is still importing TensorFlow when the feeders start does not
        answer their first probe, and tfq-feed rightly counts it lost from the start -- which
        would let the failover checks pass without a failover.  Raises RuntimeError (naming the
        task and its stderr) when a task exits first or the timeout passes."""
        end = time.monotonic() + timeout
        names = ["ps", "worker 0", "worker 1"]
        while not all(os.path.exists(r) for r in self.ready):
            for i, p in enumerate(self.procs):
                if p.poll() is not None and not os.path.exists(self.ready[i]):
                    err = os.path.join(self.d, "ps.err" if i == 0 else f"w{i - 1}.err")
                    raise RuntimeError(f"{names[i]} exited ({p.returncode}) before it was up: "
                                       + open(err).read()[-2000:])
            if time.monotonic() > end:
                late = [names[i] for i, r in enumerate(self.ready) if not os.path.exists(r)]
                raise RuntimeError(f"{', '.join(late)} not up within {timeout} s")
            time.sleep(0.1)

    def kill(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            p.wait()


def read_logs(logs, info=None):
    """(seen, ended): how often each id was trained over the workers' logs (a batch trained in
    the step a worker died in counts: the variable was updated), and whether each log ends on
    OutOfRange.  ``info`` (a list): per worker {"steps", "instep", "total"} -- the steps logged,
    the ids of the batch trained in the step it died in, and the model's trained-rows variable it
    read at the end (None if it did not end)."""
    seen, ended = {}, []
    for path in logs:
        ok, w = False, {"steps": 0, "instep": [], "total": None}
        if info is not None:
            info.append(w)
        if not os.path.exists(path):
            ended.append(False)
            continue
        for line in open(path):
            line = line.strip()
            if line == "END":
                ok = True
            elif line.startswith("TOTAL "):
                w["total"] = int(line.split()[1])
            elif line:
                ids = line.split()
                if ids[0] == "INSTEP":
                    ids = ids[1:]
                    w["instep"] = [int(i) for i in ids]
                else:
                    w["steps"] += 1
                for i in ids:
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


def watch(cl, feeders, timeout=150):
    """Waits for the feeders, watching worker 1: (its exit status, whether every feeder was still
    running when it was seen gone), or None when it did not exit while the feeders ran."""
    end, death, w1 = time.monotonic() + timeout, None, cl.worker1()
    while time.monotonic() < end:
        running = [f.poll() is None for f in feeders]
        if death is None and w1 is not None and w1.poll() is not None:
            death = (w1.returncode, all(running))
        if not any(running):
            break
        time.sleep(0.02)
    return death


def lost_worker(exe, py, files, d, how="dequeue", no_worker1=False):
    """Worker 1 dies at its 61st batch of 500 (~30%): ``how`` "dequeue" or "step" (inside the
    step, after the variable update, before the acknowledgement)."""
    die_at = 60
    cl = Cluster(d, py, die_at=die_at, pace=0.004, how=how, no_worker1=no_worker1)
    try:
        cl.wait_ready()
        f0, e0 = feeder(exe, cl, files, d, 0)
        f1, e1 = feeder(exe, cl, files, d, 1)
        death = watch(cl, [f0, f1])
        (rc0, err0), (rc1, err1) = finish(f0, e0), finish(f1, e1)
        try:
            cl.procs[1].wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass  # reported below: worker 0 did not end on OutOfRange
        info = []
        seen, ended = read_logs(cl.logs, info)
    finally:
        cl.kill()
    fails = []
    print(err0 + err1)
    if rc0 != 0 or rc1 != 0:
        fails.append(f"feeders exited {rc0} {rc1}")
    missing = [i for i in range(N) if i not in seen]
    if missing:
        fails.append(f"{len(missing)} ids never trained (e.g. {missing[:5]})")
    # the failover happened: worker 1 trained, then was killed while the feed was going
    w1 = info[1]
    trained1 = w1["steps"] + (1 if w1["instep"] else 0)
    if trained1 == 0:
        fails.append("worker 1 trained no batch: no failover happened (did it ever start?)")
    elif w1["steps"] != die_at or (how == "step") != bool(w1["instep"]):
        fails.append(f"worker 1 logged {w1['steps']} steps and an in-step batch of "
                     f"{len(w1['instep'])} ids; expected {die_at} steps and "
                     f"{'one' if how == 'step' else 'no'} in-step batch")
    if death is None or death != (-signal.SIGKILL, True):
        fails.append(f"worker 1 was not SIGKILLed while both feeders ran: (status, feeders "
                     f"running) = {death}")
    dups = sum(c - 1 for c in seen.values() if c > 1)
    reported = [stat(e, "duplicates") for e in (err0, err1)]
    resent = [stat(e, "re-sent") for e in (err0, err1)]
    lost = [stat(e, "workers lost") for e in (err0, err1)]
    if None in resent:
        fails.append(f"a feeder printed no re-sent figure: {resent}")
    elif sum(resent) == 0:
        fails.append("no batch was re-sent: no failover happened")
    elif dups > 500 * sum(resent):
        fails.append(f"{dups} duplicate records exceed the {resent} re-sent batches")
    # what the docs claim is counted: batches acknowledged by two workers; not counted: the
    # batch of the step worker 1 died in (trained, never acknowledged), trained again
    instep = w1["instep"]
    uncounted = len(instep)
    if how == "step":
        twice = [i for i in instep if seen.get(i) != 2]
        if not instep or twice:
            fails.append(f"the batch of the step worker 1 died in should be trained exactly "
                         f"twice: {len(instep)} ids, {len(twice)} not twice")
    if None in reported or sum(reported) != dups - uncounted:
        fails.append(f"duplicates: the feeders report {reported}, the workers' logs show {dups} "
                     f"of which {uncounted} (the in-step batch) are documented as not counted")
    if lost != [1, 1]:
        fails.append(f"each feeder should have lost one worker, they report {lost}")
    if not ended[0] or ended[1]:
        fails.append(f"worker 0 should end on OutOfRange and worker 1 not: {ended}")
    total = info[0]["total"]
    if total != N + dups:
        fails.append(f"the model trained {total} rows; the logs say {N} + {dups} duplicates")
    print(f"lost-worker ({how}{', worker 1 never started' if no_worker1 else ''}): "
          f"{len(seen)} ids trained, worker 1 trained {trained1} batches and died {death}, "
          f"{dups} duplicates (reported {reported}, {uncounted} in-step not counted), "
          f"re-sent {resent} batches, model trained {total} rows", flush=True)
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
        killed_rc = f0.wait()
        at_kill = len(read_logs(cl.logs)[0])
        if not alive or killed_rc != -signal.SIGKILL or not 0 < at_kill < 0.9 * N:
            fails.append(f"the kill was not mid-run: feeder 0 running {alive}, exit status "
                         f"{killed_rc} (SIGKILL is {-signal.SIGKILL}), {at_kill} of {N} ids "
                         "trained at the kill")
        e0b_name = "feeder0b" if not checkpoint else "feeder0c"
        f0b, e0b = feeder(exe, cl, files, d, 0, ["--attempt", "1", *ck], name=e0b_name)
        (rc0, err0), (rc1, err1) = finish(f0b, e0b), finish(f1, e1)
        for w in cl.procs[1:]:
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass  # reported below
        info = []
        seen, ended = read_logs(cl.logs, info)
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
    m = re.search(r"\((\d+) from earlier attempts\)", err0)
    prior = int(m.group(1)) if m else None
    if not checkpoint and not prior:
        fails.append(f"the retry counted {prior} records from earlier attempts: attempt 0 had "
                     "trained part of the unit")
    totals = [w["total"] for w in info]
    if max(t or 0 for t in totals) != N + dups:
        fails.append(f"the model trained {totals} rows (read by each worker at its end); the "
                     f"logs say {N} + {dups} duplicates")
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
    print(f"{name}: {len(seen)} ids trained, {at_kill} trained at the kill (feeder 0's exit "
          f"status {killed_rc}), {dups} duplicates (reported {reported}, {prior} from earlier "
          f"attempts), resumed at batch {resumed}, model trained {totals} rows", flush=True)
    FIGURES[name] = dups
    return fails


FIGURES = {}

# What the lost-worker checks must say when no failover can happen.
NEGATIVE = ["worker 1 trained no batch", "worker 1 was not SIGKILLed", "no batch was re-sent"]


def negative_control(exe, py, files, d):
    """The lost-worker case against a cluster whose worker 1 never starts: the feeders count it
    lost from the start, worker 0 trains everything and nothing is lost or duplicated -- so
    every check that only looks at the result holds.  The case must fail anyway, with each of
    NEGATIVE among its failures; this returns the failures of that expectation."""
    got = lost_worker(exe, py, files, d, "dequeue", no_worker1=True)
    print("negative control, the lost-worker case's failures (expected):")
    for m in got:
        print("  FAIL(expected) " + m)
    return [f"the failover checks did not notice that worker 1 never started: no failure "
            f"containing '{want}'" for want in NEGATIVE if not any(want in m for m in got)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?")
    ap.add_argument("--case", choices=["lost-worker", "in-step", "feeder-retry",
                                       "feeder-retry-checkpoint", "negative-control", "all"],
                    default="all")
    ap.add_argument("--no-worker1", action="store_true",
                    default=os.environ.get("TFQ_FAILOVER_NO_WORKER1") == "1",
                    help="worker 1 never starts (or TFQ_FAILOVER_NO_WORKER1=1): the lost-worker "
                    "and in-step cases must then fail")
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
        cases = (["lost-worker", "in-step", "feeder-retry", "feeder-retry-checkpoint"]
                 if a.case == "all" else [a.case])
        for c in cases:
            sub = os.path.join(d, c)
            os.mkdir(sub)
            if c in ("lost-worker", "in-step"):
                fails += [f"{c}: {m}" for m in lost_worker(
                    a.tfq_feed, py, files, sub, "step" if c == "in-step" else "dequeue",
                    a.no_worker1)]
            elif c == "negative-control":
                fails += [f"{c}: {m}" for m in negative_control(a.tfq_feed, py, files, sub)]
            else:
                fails += [f"{c}: {m}" for m in feeder_retry(a.tfq_feed, py, files, sub,
                                                             c.endswith("checkpoint"))]
    if FIGURES:
        print("duplicates of the retried unit: " +
              ", ".join(f"{k} {v} records" for k, v in FIGURES.items()), flush=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
