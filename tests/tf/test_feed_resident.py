#!/usr/bin/env python3
"""The resident feeder (issue #40 item 5): `tfq-feed --serve SOCKET` and its units,
`tfq-feed-via SOCKET ARGS... -`, against a one-worker cluster (no ps: the job's state lives on
worker 0) whose worker trains through tfq_feed_worker.Guard and logs its ids.

  units        8 units (each '#tfq unit=u units=8' ... '#tfq end rows=N' on its standard input,
               as RDD.pipe gives them), 4 at a time, through one socket that nobody serves at
               first: one server is started (its log says "up" once), every unit exits 0 and
               its --stats line reaches the unit's own standard error (the descriptors were
               handed over), the worker ends on OutOfRange with every id exactly once, and the
               server exits on its own once idle (--idle-ms), removing its socket.
  bad-record   a unit with a bad field: tfq-feed-via exits with the status an ordinary tfq-feed
               run of the same arguments and input exits with (the oracle), and prints the same
               message.
  server-dies  a unit is running (its input held open, the worker trained some of its rows) when
               the server is SIGKILLed: the unit's
               tfq-feed-via exits 1 saying the resident process ended, the unit itself is stopped
               (SIGTERM, as its parent died) and marks itself failed; a retry of the unit
               (attempt=1, as Spark's task retry) starts a new server (a second "up") and
               completes it: the worker, waiting for a retry (Guard retry_wait_s), ends on
               OutOfRange with every id, and saw no FeedFailedError.

    python tests/tf/test_feed_resident.py TFQ_FEED

Exit 77 (meson's skip) when TensorFlow or tfq-feed is missing, unless CI=true.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from test_feed_failover import free_ports, report, skip  # on sys.path

SPEC = "int64,float32:0"
TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "tools")

WORKER = r'''
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
sys.path.insert(0, @TOOLS@)
import tfq_feed_worker as tfw
port, queue, out, ready, retry = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
server = tfw.start_server(f"worker=127.0.0.1:{port}", "worker", 0)
ids, _ = tfw.dequeue("@SPEC@", queue=queue, task_index=0, batch_size=100)
sess = tf.compat.v1.Session(server.target, config=tfw.session_config(0))
guard = tfw.Guard(server.target, device="/job:worker/task:0", queue=queue, poll_ms=300,
                  retry_wait_s=retry)
log = open(out, "w")
open(ready, "w").close()
try:
    while True:
        try:
            got = guard.run(sess, ids)
        except tf.errors.OutOfRangeError:
            log.write("END\n")
            break
        log.write(" ".join(map(str, got.tolist())) + "\n")
        log.flush()
except tfw.FeedFailedError as e:
    log.write("FAILED " + str(e).replace("\n", " ") + "\n")
log.close()
os._exit(0)
'''


class Worker:
    def __init__(self, d, py, queue, retry=0.0):
        self.port = free_ports(1)[0]
        self.d, self.queue = d, queue
        self.log = os.path.join(d, f"{queue}.log")
        ready = os.path.join(d, f"{queue}.ready")
        script = os.path.join(d, "worker.py")
        with open(script, "w") as f:
            f.write(WORKER.replace("@TOOLS@", repr(TOOLS)).replace("@SPEC@", SPEC))
        self.p = subprocess.Popen([py, script, str(self.port), queue, self.log, ready, str(retry)],
                                  stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(d, f"{queue}.err"), "w"),
                                  start_new_session=True)
        end = time.monotonic() + 180
        while not os.path.exists(ready):
            if self.p.poll() is not None or time.monotonic() > end:
                raise RuntimeError("the worker did not come up: " +
                                   open(os.path.join(d, f"{queue}.err")).read()[-2000:])
            time.sleep(0.1)
        self.env = dict(os.environ, TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:%d"]}}'
                        % self.port, TF_ENABLE_ONEDNN_OPTS="0", TF_CPP_MIN_LOG_LEVEL="2")

    def result(self, timeout=60):
        """(ids trained with their counts, how the worker ended: 'END', 'FAILED ...' or None)."""
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        seen, end = {}, None
        for line in open(self.log):
            line = line.strip()
            if line == "END" or line.startswith("FAILED"):
                end = line
            elif line:
                for i in line.split():
                    seen[int(i)] = seen.get(int(i), 0) + 1
        return seen, end

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


def unit_input(d, u, units, rows, attempt=0, bad_at=None):
    path = os.path.join(d, f"in{u}.{attempt}.txt")
    with open(path, "w") as f:
        f.write(f"#tfq unit={u} units={units}" + (f" attempt={attempt}" if attempt else "") + "\n")
        for i in range(u * rows, (u + 1) * rows):
            f.write(f"{i},{'x' if i == bad_at else i * 0.5}\n")
        f.write(f"#tfq end rows={rows}\n")
    return path


def via(exe_via, sock, queue, env, stdin, extra=()):
    return subprocess.Popen([exe_via, sock, "--queue", queue, "-d", SPEC, "-b", "100", "-q",
                             "--stats", *extra, "-"], stdin=stdin, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, text=True)


def ups(sock):
    log = sock + ".log"
    return open(log).read().count(": pid ") if os.path.exists(log) else 0


def case_units(exe, exe_via, py, d):
    fails = []
    w = Worker(d, py, "ru")
    sock = os.path.join(d, "u.sock")
    env = dict(w.env, TFQ_FEED=exe, TFQ_FEED_IDLE_MS="1500")
    units, rows = 8, 1000
    procs = []
    try:
        for u in range(units):
            procs.append((u, via(exe_via, sock, "ru", env, open(unit_input(d, u, units, rows)))))
            if len(procs) % 4 == 0:  # 4 at a time, as 4 Spark task slots
                for _, p in procs[-4:]:
                    p.wait(timeout=120)
        for u, p in procs:
            err = p.communicate(timeout=120)[1]
            if p.returncode != 0:
                fails.append(f"unit {u} exited {p.returncode}: {err.strip()[-500:]}")
            elif f"stats: unit {u} of {units}, rows {rows}" not in err:
                fails.append(f"unit {u}: no --stats line on its standard error: {err[-300:]!r}")
        seen, end = w.result()
    finally:
        w.kill()
    if ups(sock) != 1:
        fails.append(f"{ups(sock)} servers started for {units} units (expected 1): "
                     + open(sock + ".log").read()[-800:])
    want = set(range(units * rows))
    if end != "END" or set(seen) != want or any(c != 1 for c in seen.values()):
        fails.append(f"the worker ended {end!r} with {len(seen)} of {len(want)} ids, "
                     f"{sum(c - 1 for c in seen.values())} duplicates")
    t = time.monotonic()
    while os.path.exists(sock) and time.monotonic() - t < 30:
        time.sleep(0.1)
    if os.path.exists(sock):
        fails.append("the idle server did not exit (its socket is still there after 30 s)")
    print(f"units: {units} units, {len(seen)} ids, servers started {ups(sock)}, worker {end}",
          flush=True)
    return fails


def case_bad(exe, exe_via, py, d):
    fails = []
    w = Worker(d, py, "rb", retry=120)  # alive after the first failure, for the oracle
    sock = os.path.join(d, "b.sock")
    env = dict(w.env, TFQ_FEED=exe, TFQ_FEED_IDLE_MS="1500")
    path = unit_input(d, 0, 1, 500, bad_at=250)
    try:
        p = via(exe_via, sock, "rb", env, open(path))
        err = p.communicate(timeout=120)[1]
        # the oracle: an ordinary tfq-feed run of the same arguments and input
        q = subprocess.run([exe, "--queue", "rb", "-d", SPEC, "-b", "100", "-q", "--stats", "-"],
                           stdin=open(path), capture_output=True, text=True, env=env, timeout=120)
    finally:
        w.kill()
    lines = lambda s: [x for x in s.splitlines() if "seed" not in x]  # noqa: E731
    if p.returncode != q.returncode or p.returncode == 0:
        fails.append(f"tfq-feed-via exited {p.returncode}, tfq-feed {q.returncode}")
    if lines(err) != lines(q.stderr):
        fails.append(f"the messages differ: via {err!r}, tfq-feed {q.stderr!r}")
    print(f"bad-record: tfq-feed-via exited {p.returncode} ({err.strip()[:160]}), tfq-feed "
          f"{q.returncode}", flush=True)
    return fails


def case_server_dies(exe, exe_via, py, d):
    fails = []
    w = Worker(d, py, "rk", retry=120)
    sock = os.path.join(d, "k.sock")
    env = dict(w.env, TFQ_FEED=exe, TFQ_FEED_IDLE_MS="1500")
    rows = 60000
    try:
        r, wfd = os.pipe()
        # --min-after-dequeue 100: the shuffle passes rows on before the input ends
        p = via(exe_via, sock, "rk", env, r, ["--min-after-dequeue", "100", "--capacity", "400"])
        os.close(r)
        out = os.fdopen(wfd, "w")
        out.write("#tfq unit=0 units=1\n")
        for i in range(rows // 2):  # half the partition; the rest never comes
            out.write(f"{i},{i * 0.5}\n")
        out.flush()
        t = time.monotonic()  # the unit is running: the worker trained some of its rows
        while time.monotonic() - t < 120 and not (
                os.path.exists(w.log) and open(w.log).read().strip()):
            time.sleep(0.05)
        # the server (its pid from its log), not its unit: the unit must die with it
        server = [int(x) for x in re.findall(r": pid (\d+), up", open(sock + ".log").read())]
        for pid in server:
            os.kill(pid, signal.SIGKILL)
        at_kill = sum(len(x.split()) for x in open(w.log) if x[0].isdigit())
        err = p.communicate(timeout=60)[1]
        try:
            out.close()
        except BrokenPipeError:
            pass
        if not server:
            fails.append("no resident server found to kill")
        if p.returncode != 1 or "ended before the unit did" not in err:
            fails.append(f"the unit's tfq-feed-via exited {p.returncode}: {err.strip()[-300:]!r}")
        # the retry, attempt 1, as Spark runs the failed task again: a new server
        q = via(exe_via, sock, "rk", env, open(unit_input(d, 0, 1, rows, attempt=1)),
                ["--min-after-dequeue", "100", "--capacity", "400"])
        qerr = q.communicate(timeout=120)[1]
        if q.returncode != 0:
            fails.append(f"the retry exited {q.returncode}: {qerr.strip()[-400:]}")
        seen, end = w.result()
    finally:
        w.kill()
    if ups(sock) != 2:
        fails.append(f"{ups(sock)} servers started (expected 2: the killed one and the retry's); "
                     f"killed {server}; the log: " + open(sock + ".log").read()[-1500:])
    if end != "END" or set(seen) != set(range(rows)):
        fails.append(f"the worker ended {end!r} with {len(seen)} of {rows} ids")
    if not at_kill:
        fails.append("the server was killed before the unit had sent any row")
    print(f"server-dies: {at_kill} rows trained at the kill; the unit exited {p.returncode}, the retry {q.returncode}, servers "
          f"{ups(sock)}, worker {end} with {len(seen)} ids "
          f"({sum(c - 1 for c in seen.values())} trained twice: attempt 0's rows)", flush=True)
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tfq_feed", nargs="?")
    ap.add_argument("--case", choices=["units", "bad-record", "server-dies", "all"], default="all")
    a = ap.parse_args()
    if not a.tfq_feed or not os.path.exists(a.tfq_feed):
        skip("tfq-feed was not built (it needs the TensorFlow bridge)")
    exe = os.path.abspath(a.tfq_feed)
    exe_via = os.path.join(os.path.dirname(exe), "tfq-feed-via")
    if not os.path.exists(exe_via):
        print(f"FAIL tfq-feed-via is not beside {exe}")
        return 1
    py = sys.executable
    try:
        subprocess.run([py, "-c", "import tensorflow"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        skip("TensorFlow is not importable by " + py)
    cases = {"units": case_units, "bad-record": case_bad, "server-dies": case_server_dies}
    fails = []
    with tempfile.TemporaryDirectory(prefix="tfqr") as d:  # short: a socket path < 108 bytes
        for name, fn in cases.items():
            if a.case not in ("all", name):
                continue
            sub = os.path.join(d, name[:2])
            os.mkdir(sub)
            fails += [f"{name}: {m}" for m in fn(exe, exe_via, py, sub)]
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
