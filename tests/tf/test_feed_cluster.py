#!/usr/bin/env python3
"""tfq-feed against a real loopback TensorFlow cluster (distributed-feeding.md 4.2-4.4).

One cluster -- ps:0, worker:0 and worker:1, each a tf.distribute.Server in its own Python process
-- serves every case; each case uses its own --queue name, so its queues and done set are new.
The workers build their side of the queue with tools/tfq_feed_worker.py and take commands from
this process on standard input (one JSON object a line), writing results into files.

Data: 200,000 CSV records "id,x,y,s" in 4 files, ids 0..199999, x = (id % 1000) * 0.25,
y = id * 0.5, s = "r<id>": every row a worker gets is checked against its id.

  a. two tfq-feed processes, --shard 0/2 and 1/2 (--feeders 2 by default), --cluster,
     --to workers --elements batches: the workers dequeue() until OutOfRange;
  b. the same with --to ps --elements rows: the workers dequeue_up_to(500) from the ps queue;
  c. as (a), with the cluster in the feeders' TF_CONFIG (each its worker's task, TensorFlowOnSpark's
     co-location) instead of --cluster, the default --queue, and the types inferred (no -d);
  d. failures, each one line on stderr naming the cause: a cluster nobody listens on (exit 1,
     the task named), a worker queue that exists with other dtypes (exit 1, TF's "Shared queue
     ..."), a malformed TF_CONFIG (exit 2).

Checks of a-c: every id exactly once across the two workers, every row intact, batches no larger
than the batch size, both workers ended on OutOfRange, both feeders exited 0; after (a) the done
set fa_done on the ps holds units 0 and 1 (read with tfq_feed_worker.done_set).  At the end the
workers exit 0 on command, and no process of the test is left (process groups killed).

    .venv/bin/python tests/tf/test_feed_cluster.py build/tools/tfq-feed

Exit 0 pass, 1 fail, 77 skip (TensorFlow or tfq-feed missing; a failure when CI=true).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(ROOT, "tools")
RECORDS = 200000
NFILES = 4
SPEC = "int64,float32,float64,string"  # id, x, y, s
INFERRED = "int64,float64,float64,string"  # what tfq-feed infers from the files without -d
BATCH = 1024  # tfq-feed's default -b
ROWS_N = 500  # rows per dequeue_up_to in case b


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    if os.environ.get("CI") == "true":
        print("CI=true: this is a failure, not a skip.", flush=True)
        sys.exit(1)
    sys.exit(77)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_port(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


# ---------------------------------------------------------------------------------------------
# Child processes: the ps and the two workers.

def child(role, cluster, task):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, TOOLS)
    import numpy as np
    import tensorflow as tf
    import tfq_feed_worker as tfw

    tf.compat.v1.disable_eager_execution()  # before any queue: eager renames shared queues
    server = tfw.start_server(cluster, role, task)
    print(f"{role}:{task} serving {server.target}", flush=True)
    if role == "ps":
        server.join()
        return 0

    def consume(c):
        """Dequeues until OutOfRange; checks every row; returns the result."""
        with tf.Graph().as_default():
            cols = tfw.dequeue(c["spec"], to=c["to"], elements=c["elements"], queue=c["queue"],
                               task_index=task, n=c.get("n"))
            opts = tf.compat.v1.RunOptions(timeout_in_ms=int(c["timeout_s"] * 1000))
            with tf.compat.v1.Session(server.target, config=tfw.session_config(task)) as sess:
                ids, sizes, bad, end, t0 = [], [], 0, None, time.time()
                while True:
                    try:
                        i, x, y, s = sess.run(cols, options=opts)
                    except tf.errors.OutOfRangeError:
                        end = "OutOfRange"
                        break
                    except tf.errors.OpError as e:
                        end = f"{type(e).__name__}: {e.message.splitlines()[0]}"
                        break
                    want_s = np.array([b"r%d" % v for v in i.tolist()], dtype=object)
                    bad += int(np.sum((x != (i % 1000) * 0.25) | (y != i * 0.5)) +
                               np.sum(s.astype(object) != want_s))
                    ids.append(i)
                    sizes.append(len(i))
        ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        np.save(c["out"] + ".npy", ids)
        return {"end": end, "rows": int(len(ids)), "steps": len(sizes),
                "max": max(sizes, default=0), "zero": sizes.count(0), "bad": bad,
                "seconds": round(time.time() - t0, 2)}

    def done(c):
        """Reads tfq-feed's done set of c["queue"]."""
        with tf.Graph().as_default():
            size, keys = tfw.done_set(c["queue"])
            with tf.compat.v1.Session(server.target, config=tfw.session_config(task)) as sess:
                n, k = sess.run([size, keys])
                return {"size": int(n), "units": sorted(k.tolist())}

    def create(c):
        """Creates the queue (running its size op) and leaves it there."""
        with tf.Graph().as_default():
            q = tfw.make_queue(c["spec"], to=c["to"], elements=c["elements"], queue=c["queue"],
                               task_index=task)
            with tf.compat.v1.Session(server.target, config=tfw.session_config(task)) as sess:
                return {"size": int(sess.run(q.size()))}

    for line in sys.stdin:
        c = json.loads(line)
        if c["op"] == "exit":
            break
        try:
            r = {"consume": consume, "create": create, "done": done}[c["op"]](c)
        except Exception as e:  # reported to the test as the result
            r = {"end": f"{type(e).__name__}: {e}"}
        print(f"worker:{task} {c['op']} {c.get('queue')}: {r}", flush=True)
        with open(c["out"] + ".tmp", "w") as f:
            json.dump(r, f)
        os.rename(c["out"] + ".tmp", c["out"] + ".json")
    print(f"worker:{task} exiting", flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip TensorFlow's slow teardown of gRPC channels


# ---------------------------------------------------------------------------------------------
# The test.

class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


class Harness:
    def __init__(self, tfq_feed, work, timeout):
        self.tfq_feed, self.work, self.timeout = tfq_feed, work, timeout
        self.procs = []  # every Popen ever started (each in its own process group)
        self.env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONDONTWRITEBYTECODE="1")
        # Not TF_ENABLE_ONEDNN_OPTS: tfq-feed must keep TensorFlow's load-time oneDNN note
        # ("I0000 ... port.cc:153] oneDNN custom operations are on") off its stderr by itself.
        self.env.pop("TF_ENABLE_ONEDNN_OPTS", None)
        self.pyenv = dict(self.env)
        self.pyenv.pop("ASAN_OPTIONS", None)  # the Python processes are not instrumented
        self.pyenv.pop("TF_CONFIG", None)
        self.env.pop("TF_CONFIG", None)

    def spawn(self, name, cmd, env, stdin=None):
        log = open(os.path.join(self.work, name + ".log"), "w")
        p = subprocess.Popen(cmd, stdin=stdin, stdout=log, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True, text=True)
        p.name, p.log = name, log
        self.procs.append(p)
        return p

    def feeder(self, name, args, env=None):
        """Starts tfq-feed; its stderr goes to NAME.err, stdout to NAME.log."""
        err = open(os.path.join(self.work, name + ".err"), "w")
        log = open(os.path.join(self.work, name + ".log"), "w")
        p = subprocess.Popen([self.tfq_feed] + args, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=err, env=env or self.env, start_new_session=True)
        p.name, p.log, p.err = name, log, err
        self.procs.append(p)
        return p

    def stderr_of(self, p):
        p.err.flush()
        return open(os.path.join(self.work, p.name + ".err")).read()

    def kill_all(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            p.log.close()
            if hasattr(p, "err"):
                p.err.close()
        left = []
        for p in self.procs:
            try:
                os.killpg(p.pid, 0)
                left.append(p.name)
            except ProcessLookupError:
                pass
        return left


def write_data(work):
    files = [os.path.join(work, f"part-{k:05d}.csv") for k in range(NFILES)]
    per = RECORDS // NFILES
    for k, path in enumerate(files):
        with open(path, "w") as f:
            f.write("".join(f"{i},{(i % 1000) * 0.25:.2f},{i * 0.5:.1f},r{i}\n"
                            for i in range(k * per, (k + 1) * per)))
    return files


def run_case(h, label, workers, feeders_args, consume, feeder_envs=None):
    """Sends `consume` to both workers, starts one tfq-feed per args list, waits for all, checks
    the union of the ids.  Returns a summary line."""
    import numpy as np
    t0 = time.time()
    outs = []
    for i, w in enumerate(workers):
        out = os.path.join(h.work, f"{label}_w{i}")
        outs.append(out)
        w.stdin.write(json.dumps(dict(consume, op="consume", out=out,
                                      timeout_s=h.timeout)) + "\n")
        w.stdin.flush()
    feeders = [h.feeder(f"{label}_feeder{u}", args,
                        feeder_envs[u] if feeder_envs else None)
               for u, args in enumerate(feeders_args)]
    deadline = time.time() + h.timeout
    while True:
        for f in feeders:
            rc = f.poll()
            check(rc in (None, 0), f"{label}: {f.name} exited with {rc}: "
                  f"{h.stderr_of(f).strip()}")
        for w in workers:
            check(w.poll() is None, f"{label}: {w.name} died ({w.returncode})")
        if all(f.poll() == 0 for f in feeders) and all(os.path.exists(o + ".json")
                                                        for o in outs):
            break
        check(time.time() < deadline, f"{label}: timeout after {h.timeout} s")
        time.sleep(0.1)
    res = [json.load(open(o + ".json")) for o in outs]
    for i, r in enumerate(res):
        check(r["end"] == "OutOfRange", f"{label}: worker {i} ended with {r['end']}")
        check(r["bad"] == 0, f"{label}: worker {i}: {r['bad']} rows whose columns do not "
              "match their id")
    limit = BATCH if consume["elements"] == "batches" else ROWS_N
    for i, r in enumerate(res):
        check(r["max"] <= limit, f"{label}: worker {i} got {r['max']} rows in one step "
              f"(> {limit})")
        check(r["zero"] == 0, f"{label}: worker {i} got a zero-row element")
    ids = np.concatenate([np.load(o + ".npy") for o in outs])
    uniq = np.unique(ids)
    check(len(ids) == RECORDS and len(uniq) == RECORDS and uniq[0] == 0
          and uniq[-1] == RECORDS - 1,
          f"{label}: {len(ids)} ids, {len(uniq)} distinct (want each of 0..{RECORDS - 1} once)")
    notes = "".join(f"\n    [{f.name}] {line}" for f in feeders
                    for line in h.stderr_of(f).splitlines())
    return (f"{label}: {' + '.join(str(r['rows']) for r in res)} = {len(ids)} rows, each id "
            f"once; steps {[r['steps'] for r in res]}; both OutOfRange; feeders exit 0; "
            f"{time.time() - t0:.1f} s" + notes)


def command(h, w, c, name):
    """Runs one command on worker w and returns its result."""
    out = os.path.join(h.work, name)
    w.stdin.write(json.dumps(dict(c, out=out)) + "\n")
    w.stdin.flush()
    deadline = time.time() + h.timeout
    while not os.path.exists(out + ".json"):
        check(w.poll() is None, f"{name}: {w.name} died ({w.returncode})")
        check(time.time() < deadline, f"{name}: no answer from {w.name}")
        time.sleep(0.1)
    return json.load(open(out + ".json"))


def expect_failure(h, p, rc_want, needles, label):
    """p exits rc_want with exactly one line on stderr that holds every needle."""
    try:
        rc = p.wait(timeout=h.timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"{label}: tfq-feed still running after {h.timeout} s")
    err = h.stderr_of(p)
    lines = err.splitlines()
    check(rc == rc_want, f"{label}: exit {rc}, want {rc_want}; stderr: {err.strip()!r}")
    check(len(lines) == 1, f"{label}: stderr has {len(lines)} lines, want 1: {err!r}")
    check(lines[0].startswith("tfq-feed: "), f"{label}: {lines[0]!r} does not start 'tfq-feed: '")
    for n in needles:
        check(n in lines[0], f"{label}: {lines[0]!r} does not name {n!r}")
    return f"{label}: exit {rc}: {lines[0]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?", help="the tfq-feed binary")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per case")
    ap.add_argument("--workdir")
    ap.add_argument("--role", help=argparse.SUPPRESS)  # child mode: ps or worker
    ap.add_argument("--cluster", help=argparse.SUPPRESS)
    ap.add_argument("--task", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role:
        return child(a.role, json.loads(a.cluster), a.task)

    import importlib.util
    if importlib.util.find_spec("tensorflow") is None or importlib.util.find_spec("numpy") is None:
        skip("no tensorflow/numpy: run this with the project venv (.venv/bin/python)")
    if not a.tfq_feed or not os.access(a.tfq_feed, os.X_OK):
        skip(f"no tfq-feed binary ({a.tfq_feed!r}): build tfq with the tensorflow feature; "
             "meson passes tools/tfq-feed")
    t_start = time.time()
    work = a.workdir or tempfile.mkdtemp(prefix="tfq_feed_cluster_")
    os.makedirs(work, exist_ok=True)
    h = Harness(os.path.abspath(a.tfq_feed), work, a.timeout)
    files = write_data(work)
    print(f"test: {RECORDS} records in {NFILES} files in {work} ({time.time() - t_start:.1f} s)",
          flush=True)

    ports = free_ports(6)  # the cluster's, and 3 that nobody listens on
    ps_port, w0, w1 = ports[:3]
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    spec = f"ps=127.0.0.1:{ps_port};worker=127.0.0.1:{w0},127.0.0.1:{w1}"
    dead = "ps=127.0.0.1:{};worker=127.0.0.1:{},127.0.0.1:{}".format(*ports[3:])
    me = [sys.executable, os.path.abspath(__file__), "--cluster", json.dumps(cluster)]
    results, ok = [], False
    try:
        # d1 and d3 need no cluster: they run while the cluster starts.
        d1 = h.feeder("d1_dead", ["-q", "-d", SPEC, "--cluster", dead, "--timeout-ms", "3000",
                                  files[0]])
        d3 = h.feeder("d3_tf_config", ["-q", "-d", SPEC, files[0]],
                      dict(h.env, TF_CONFIG='{"cluster": {"ps": ["127.0.0.1:1"], "worker": '))
        h.spawn("ps", me + ["--role", "ps"], h.pyenv)
        workers = [h.spawn(f"worker{i}", me + ["--role", "worker", "--task", str(i)], h.pyenv,
                           stdin=subprocess.PIPE) for i in range(2)]
        results.append(expect_failure(h, d3, 2, ["TF_CONFIG"], "d3 malformed TF_CONFIG"))
        results.append(expect_failure(h, d1, 1, ["/job:worker/task:"], "d1 no cluster there"))
        print("\n".join(results), flush=True)
        for port in (ps_port, w0, w1):
            check(wait_port(port, 90), f"nobody listens on {port}: see {work}/*.log")
        print(f"test: cluster {spec} up ({time.time() - t_start:.1f} s)", flush=True)

        # a. --cluster, per-worker queues of batches
        shards = [["--shard", f"{u}/2"] for u in range(2)]
        base = ["-d", SPEC, "--cluster", spec, "--to", "workers", "--elements", "batches"]
        results.append(run_case(h, "a", workers,
                                [base + ["--queue", "fa"] + s + files for s in shards],
                                {"queue": "fa", "to": "workers", "elements": "batches",
                                 "spec": SPEC}))
        print(results[-1], flush=True)
        r = command(h, workers[1], {"op": "done", "queue": "fa"}, "a_done")
        check(r == {"size": 2, "units": [0, 1]}, f"a: the done set fa_done holds {r}, want "
              "units 0 and 1")
        results.append(f"a: done set fa_done on the ps: {r}")
        print(results[-1], flush=True)
        # b. the per-row ps queue
        base = ["-d", SPEC, "--cluster", spec, "--to", "ps", "--elements", "rows"]
        results.append(run_case(h, "b", workers,
                                [base + ["--queue", "fb"] + s + files for s in shards],
                                {"queue": "fb", "to": "ps", "elements": "rows", "spec": SPEC,
                                 "n": ROWS_N}))
        print(results[-1], flush=True)
        # c. TF_CONFIG (feeder u beside worker u), default --queue, inferred types
        envs = [dict(h.env, TF_CONFIG=json.dumps({"cluster": cluster,
                                                  "task": {"type": "worker", "index": u}}))
                for u in range(2)]
        results.append(run_case(h, "c", workers, [s + files for s in shards],
                                {"queue": "tfq_feed", "to": "workers", "elements": "batches",
                                 "spec": INFERRED}, envs))
        print(results[-1], flush=True)
        # d2. a worker queue that exists with other dtypes
        for i, w in enumerate(workers):
            r = command(h, w, {"op": "create", "queue": "fbad", "to": "workers",
                               "elements": "batches", "spec": "float32"}, f"d2_w{i}")
            check(r.get("size") == 0, f"d2: worker {i} could not create the queue: {r}")
        d2 = h.feeder("d2_dtypes", ["-q", "-d", SPEC, "--cluster", spec, "--queue", "fbad",
                                    "--timeout-ms", "20000"] + files)
        results.append(expect_failure(h, d2, 1, ["/job:worker/task:", "Shared queue 'fbad_w"],
                                      "d2 queue of other dtypes"))
        print(results[-1], flush=True)
        # The workers exit 0 on command.
        for w in workers:
            w.stdin.write(json.dumps({"op": "exit"}) + "\n")
            w.stdin.flush()
        for w in workers:
            try:
                rc = w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                raise Failed(f"{w.name} did not exit")
            check(rc == 0, f"{w.name} exited with {rc}")
        ok = True
    except Failed as e:
        print(f"test: FAILED: {e}", flush=True)
    finally:
        left = h.kill_all()
        if left:
            print(f"test: FAILED: processes left running: {left}", flush=True)
            ok = False
        if not ok:
            for name in ("ps", "worker0", "worker1"):
                path = os.path.join(work, name + ".log")
                if os.path.exists(path):
                    for line in open(path).read().splitlines()[-30:]:
                        print(f"  [{name}] {line}")
    print(f"test: total {time.time() - t_start:.1f} s", flush=True)
    print("PASS" if ok else "FAIL", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
