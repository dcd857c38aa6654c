"""tfq.spark: tfq-feed under Spark (the one copy: examples/spark/tfq_spark.py is a shim that
imports it), installed with the package, so that ``pip install`` on every executor replaces
shipping this module; the node program a barrier task starts is the caller's, shipped by ``ship(sc,
node_py)``, and imports ``tfq.cluster`` for the worker side): a TensorFlow cluster started by a barrier stage, fed by tfq-feed.

The two modes of docs (distributed-feeding spec 3.5), for PySpark (tested with 4.3.0):

S1 "Spark schedules, tfq reads"
    ``TFCluster(sc, ..., feed_files=[...]).start()``: a barrier stage of P + W tasks.  Each task
    starts its TensorFlow node (node.py) as a child; ``BarrierTaskContext.allGather`` of every
    task's host:port gives all of them the same TF_CONFIG (tasks 0..P-1 are ps, the rest
    workers).  Worker task i also starts ``tfq-feed --shard i/W FILES`` beside its node: tfq
    reads its shard of the files itself, no row passes through the JVM or Python.
S2 "TFoS-compatible streaming"
    ``TFCluster(sc, ...).start()`` without files runs the same stage on a driver thread and hands
    the cluster (TF_CONFIG) to the driver; then ``feed_rdd(rdd, cluster, ...)`` pipes each
    partition, behind a header line ``#tfq unit=<p> units=<U>``, into its own ``tfq-feed -``
    (``RDD.pipe(..., checkCode=True)``): one feeder unit per partition.  With
    ``feed_rdd(..., resident=True)`` each unit is ``tfq-feed-via SOCKET ... -`` instead: a
    resident ``tfq-feed --serve SOCKET`` per machine (started by the first unit that finds none,
    exiting once idle) has TensorFlow loaded and forks each unit, which reads its partition
    straight from the pipe: a partition no longer pays a start of TensorFlow (docs/tf-bridge.md,
    "The resident feeder").

Either way the queues are closed by the last feeder unit to finish (tfq-feed's done set on the
ps), the workers drain them and stop on OutOfRange, and the stage ends with every task's result.

The task functions run in Spark's Python workers, which import this module from the package
installed on every executor; the driver ships the node program with ``sc.addFile``
(``ship(sc, node_py)``), and the node imports ``tfq.cluster``.  tfq-feed must be installed at the
same path on every executor.

Process hygiene: each child is in a session of its own, dies with its task (PR_SET_PDEATHSIG
and, for the node, end of file on its standard input), and carries ``TFQ_SPARK_RUN=<token>`` in
its environment, so that ``kill_run(token)`` finds what is left on this machine (local-cluster)
after a failure.
"""
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

RUN_ENV = "TFQ_SPARK_RUN"
HERE = os.path.dirname(os.path.abspath(__file__))


def ship(sc, node_py):
    """Makes the node program (started by each barrier task as ``node.py``) available to the
    executors; tfq.spark and tfq.cluster come with the package installed on each of them."""
    if os.path.basename(node_py) != "node.py":
        raise ValueError("the node program is shipped and started as node.py: %s" % node_py)
    sc.addFile(node_py)


# ---------------------------------------------------------------------------------------------
# Executor side: one barrier task.

def _die_with_parent():
    """preexec_fn: a session of its own (killpg), and SIGKILL when the Spark task's Python
    worker dies (Spark kills it when it cancels or aborts a stage)."""
    os.setsid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # not Linux: end of file on stdin still stops the node
        pass


def _kill(p):
    if p is not None and p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        p.wait()


class _Lines:
    """The node's standard output, line by line, with timeouts."""

    def __init__(self, stream):
        self.lines, self.cv = [], threading.Condition()
        self.eof = False
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in stream:
            with self.cv:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self.cv.notify_all()
        with self.cv:
            self.eof = True
            self.cv.notify_all()

    def expect(self, prefix, timeout, proc, log):
        """The first unread line starting with prefix (other lines are skipped)."""
        deadline = time.time() + timeout
        with self.cv:
            while True:
                while self.lines:
                    line = self.lines.pop(0)
                    if line.startswith(prefix):
                        return line
                if self.eof:
                    proc.wait()
                    raise RuntimeError(f"the node exited ({proc.returncode}) before '{prefix}'"
                                       f"\n{_tail(log)}")
                left = deadline - time.time()
                if left <= 0:
                    raise RuntimeError(f"no '{prefix}' from the node in {timeout:.0f} s\n"
                                       f"{_tail(log)}")
                self.cv.wait(min(left, 1.0))


def _tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def _node_task(cfg, it):
    """The barrier task: partition k of num_ps + num_workers.  Yields one result dict."""
    from pyspark import BarrierTaskContext, SparkFiles
    ctx = BarrierTaskContext.get()
    k = ctx.partitionId()
    job, index = ("ps", k) if k < cfg["num_ps"] else ("worker", k - cfg["num_ps"])
    name = f"{job}{index}"
    own_out = not cfg["out"]  # a real cluster: a private directory on this executor
    out = cfg["out"] or tempfile.mkdtemp(prefix="tfq_spark_node_")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, f"{name}.log")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_ENABLE_ONEDNN_OPTS="0",
               PYTHONDONTWRITEBYTECODE="1", **{RUN_ENV: cfg["token"]})
    for key in ("TF_CONFIG", "ASAN_OPTIONS", "LSAN_OPTIONS", "LD_PRELOAD"):
        env.pop(key, None)  # Python is not instrumented; TF_CONFIG comes on stdin
    node_py = SparkFiles.get("node.py")
    cmd = [sys.executable, node_py, "--queues", ",".join(cfg["queues"]), "--out", out,
           "--batch", str(cfg["batch"])] + cfg.get("node_args", [])
    t = {"start": time.time()}
    node = feeder = None
    try:
        # TensorFlow takes seconds to import: start the node first, and give it its TF_CONFIG
        # when the allGather has produced it.
        with open(log, "w") as logf:
            node = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=logf, env=env, preexec_fn=_die_with_parent)
        lines = _Lines(node.stdout)
        # Discovery (TFoS's reservation server): bind port 0 on this executor's host, tell
        # everybody, then free the port for the node.  allGather returns the list in partition
        # order, so every task builds the same cluster.
        host = ctx.getTaskInfos()[k].address.rsplit(":", 1)[0]
        s = socket.socket()
        s.bind((host, 0))
        addrs = ctx.allGather(f"{host}:{s.getsockname()[1]}")
        t["gathered"] = time.time()
        cluster = {"ps": addrs[:cfg["num_ps"]], "worker": addrs[cfg["num_ps"]:]}
        tf_config = {"cluster": cluster, "task": {"type": job, "index": index}}
        s.close()
        node.stdin.write((json.dumps(tf_config) + "\n").encode())
        node.stdin.flush()
        lines.expect("READY", cfg["start_timeout"], node, log)
        t["ready"] = time.time()
        ctx.barrier()  # every node listens
        t["cluster_up"] = time.time()
        if k == 0 and cfg.get("notify"):  # S2: the driver needs TF_CONFIG for RDD.pipe's env
            with socket.create_connection(tuple(cfg["notify"]), timeout=30) as c:
                c.sendall((json.dumps({"cluster": cluster}) + "\n").encode())
        result = {"job": job, "index": index, "host": host, "rounds": {}, "times": t}
        if job == "worker" and cfg.get("feed_files"):  # S1: the feeder beside the worker
            nw = len(cluster["worker"])
            fenv = feed_env(cluster, cfg["token"], cfg["feed_env"])
            fenv["TF_CONFIG"] = json.dumps(tf_config)  # its worker's: TFoS's co-location
            fcmd = [cfg["tfq_feed"], "--shard", f"{index}/{nw}", "--queue", cfg["queues"][0],
                    "--seed", str(cfg["seed"] + index)] + cfg["feed_args"] + cfg["feed_files"]
            flog = os.path.join(out, f"feeder{index}.log")
            with open(flog, "w") as f:
                feeder = subprocess.Popen(fcmd, stdin=subprocess.DEVNULL, stdout=f,
                                          stderr=subprocess.STDOUT, env=fenv,
                                          preexec_fn=_die_with_parent)
            rc = feeder.wait()
            t["feeder_exit"] = time.time()
            result["feeder"] = {"rc": rc, "log": _tail(flog, 20)}
            if rc != 0:
                raise RuntimeError(f"tfq-feed (worker {index}) exited with {rc}:\n{_tail(flog)}")
        if job == "worker":
            for q in cfg["queues"]:
                line = lines.expect(f"ROUND {q} ", cfg["round_timeout"], node, log)
                _, _, rows, steps, t_first, t_end = line.split()
                import numpy as np
                result["rounds"][q] = {"ids": np.load(os.path.join(out, f"{q}_w{index}.npy")),
                                       "steps": int(steps), "t_first": float(t_first),
                                       "t_end": float(t_end)}
            lines.expect("TRAINED", cfg["round_timeout"], node, log)
        t["trained"] = time.time()
        ctx.barrier()  # every worker has trained every round
        if job == "worker" and index == 0:
            node.stdin.write(b"MODEL\n")
            node.stdin.flush()
            result["model"] = json.loads(lines.expect("MODEL", 60, node, log)[6:])
        ctx.barrier()  # the model is read: the ps may go
        try:
            node.stdin.write(b"EXIT\n")  # the chief has left already
            node.stdin.close()
        except BrokenPipeError:
            pass
        try:
            node.wait(10)
        except subprocess.TimeoutExpired:
            pass
        t["end"] = time.time()
        result["log"] = _tail(log, 10)
        yield result
    finally:
        _kill(feeder)
        _kill(node)
        if own_out:
            import shutil
            shutil.rmtree(out, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Driver side.

class TFCluster:
    """A TensorFlow cluster (num_ps ps + num_workers workers) run by one barrier stage.

    queues: the rounds, one tfq-feed --queue name each, trained in order by every worker.
    feed_files: S1 -- worker task i runs tfq-feed --shard i/W on these files into queues[0]
    (paths readable on every executor); None for S2 (feed with feed_rdd()).
    """

    def __init__(self, sc, *, queues, token, num_ps=1, num_workers=2, batch=1000,
                 tfq_feed=None, feed_files=None, feed_args=(), feed_env=None, out="",
                 node_args=(), seed=1234, start_timeout=180, round_timeout=300,
                 notify_driver=None, group="tfq-cluster"):
        self.sc, self.group = sc, group
        self.cfg = {"num_ps": num_ps, "queues": list(queues), "token": token, "batch": batch,
                    "tfq_feed": tfq_feed, "feed_files": list(feed_files or []),
                    "feed_args": list(feed_args), "feed_env": dict(feed_env or {}), "out": out,
                    "node_args": list(node_args), "seed": seed, "start_timeout": start_timeout,
                    "round_timeout": round_timeout}
        self.ntasks = num_ps + num_workers
        self.results = self.error = None
        self.cluster = None
        self._listener = None
        self._thread = None
        self.notify_driver = not feed_files if notify_driver is None else notify_driver

    def start(self):
        """Submits the barrier stage on a thread of its own (TFoS's TFCluster.run)."""
        from pyspark import InheritableThread
        if self.notify_driver:
            # S2: task 0 sends the cluster back once every node listens (one line, one
            # connection: allGather has done the discovery already).
            self._listener = socket.socket()
            host = self.sc.getConf().get("spark.driver.host", "127.0.0.1")
            self._listener.bind((host, 0))
            self._listener.listen(1)
            self.cfg["notify"] = [host, self._listener.getsockname()[1]]
        cfg, n = self.cfg, self.ntasks

        def run():
            self.sc.setJobGroup(self.group, "tfq TensorFlow cluster", interruptOnCancel=True)
            try:
                rdd = self.sc.parallelize(range(n), n).barrier()
                self.results = rdd.mapPartitions(lambda it: _node_task(cfg, it)).collect()
            except BaseException as e:  # noqa: B036 -- reported by join()
                self.error = e

        self._thread = InheritableThread(target=run, daemon=True)
        self._thread.start()
        return self

    def wait_cluster(self, timeout):
        """S2: the cluster dict {"ps": [...], "worker": [...]} once every node listens."""
        self._listener.settimeout(1.0)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.error is not None or (self._thread and not self._thread.is_alive()):
                raise RuntimeError(f"the cluster's stage ended: {_short(self.error)}")
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            with conn, conn.makefile() as f:
                self.cluster = json.loads(f.readline())["cluster"]
            self._listener.close()
            return self.cluster
        raise RuntimeError(f"the cluster did not come up in {timeout:.0f} s")

    def join(self, timeout):
        """The tasks' results (ps first, then the workers) once the stage has ended."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError(f"the cluster's stage did not end in {timeout:.0f} s")
        if self.error is not None:
            raise RuntimeError(f"the cluster's stage failed: {_short(self.error)}")
        return self.results

    def cancel(self):
        self.sc.cancelJobGroup(self.group)
        if self._listener is not None:
            self._listener.close()


def _short(e, n=3000):
    s = str(e)
    return s if len(s) <= n else s[:n] + " ..."


# tfq-feed says nothing on standard output: its notes and --stats go to standard error.  Under
# RDD.pipe standard error lands in the executor's log, and standard output becomes the RDD.  This
# wrapper keeps the notes in the log and, when tfq-feed succeeds, also prints them on standard
# output, so that the driver collects one summary per unit.  It keeps tfq-feed's exit status.
_WRAP = ('err=$(mktemp) || exit 1; "$0" "$@" 2>"$err"; rc=$?; cat "$err" >&2; '
         '[ "$rc" -eq 0 ] && cat "$err"; rm -f "$err"; exit "$rc"')


def pipe_command(tfq_feed, args, socket_path=None):
    """The command string for RDD.pipe (PySpark splits it with shlex; no shell involved).
    ``socket_path``: run the unit through the resident tfq-feed on that Unix socket
    (``tfq-feed-via``, beside ``tfq_feed``)."""
    head = [tfq_feed]
    if socket_path:
        head = [os.path.join(os.path.dirname(tfq_feed), "tfq-feed-via"), socket_path]
    return " ".join(shlex.quote(a) for a in ["/bin/sh", "-c", _WRAP] + head + list(args) + ["-"])


def resident_socket(token, queue):
    """The resident tfq-feed's socket for a job: one per machine (a path on the local file
    system), named by the run's token and the queue, in $TMPDIR (/tmp): short enough for a Unix
    socket's 108 bytes."""
    import hashlib
    h = hashlib.sha1(f"{token}/{queue}".encode()).hexdigest()[:16]
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"tfq-feed-{os.getuid()}-{h}.sock")


def feed_env(cluster, token, extra=None):
    """The child's whole environment (PySpark's pipe passes exactly this, nothing inherited)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TF_CONFIG": json.dumps({"cluster": cluster}), "TF_CPP_MIN_LOG_LEVEL": "2",
           # set, tfq-feed need not run itself again to keep TF's load-time note off stderr
           "TF_ENABLE_ONEDNN_OPTS": "0", RUN_ENV: token}
    for key in ("LD_LIBRARY_PATH", "ASAN_OPTIONS", "LSAN_OPTIONS", "TMPDIR"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    env.update(extra or {})
    return env


def _headed(p, units, it, chunk=1024):
    """Partition p's lines between tfq-feed's header and trailer.  A re-run task
    (spark.task.maxFailures > 1) also says which attempt it is (tfq-feed's attempt=, for --acks:
    what an earlier attempt had acknowledged counts as duplicates); the first attempt's header
    is the plain one.  The trailer ``#tfq end rows=N`` lets tfq-feed tell a whole partition from
    one cut short by a writer that died: without it, or with another count, the unit fails with
    DATA_LOSS instead of counting as done.

    The lines go to the pipe in blocks of about ``chunk`` lines joined by newlines: PySpark's
    pipe writes each element as ``str(e).rstrip("\n") + "\n"``, so one block costs one write
    instead of one per row, and the bytes tfq-feed reads are the same.  A block never ends with
    an empty line (rstrip would drop it): it grows until its last line is not empty, and the
    trailer closes the last one."""
    from pyspark import TaskContext
    attempt = TaskContext.get().attemptNumber()
    buf = [f"#tfq unit={p} units={units}" + (f" attempt={attempt}" if attempt else "")]
    rows = 0
    for line in it:
        rows += 1
        buf.append(line)
        if len(buf) >= chunk and line:
            yield "\n".join(buf)
            buf = []
    buf.append(f"#tfq end rows={rows}")
    yield "\n".join(buf)


def feed_rdd(rdd, cluster, *, tfq_feed, token, queue, args=(), env=None, resident=False):
    """S2: every partition of rdd (lines of CSV) into its own tfq-feed unit.  Returns the summary
    lines of the units (tfq-feed's notes and --stats).  Raises when a unit fails: PySpark's
    PIPE_FUNCTION_EXITED with tfq-feed's status; its message is in the executor's log.

    ``resident``: True (a socket per run and queue, ``resident_socket``) or a socket path: the
    units run in the resident tfq-feed of their machine (``tfq-feed-via``).  A unit fails when
    the resident process fails or dies (tfq-feed-via exits 1, or with the unit's status), so
    Spark's task retry runs it again as attempt A, through the same server or, if that one is
    gone, a new one the retry starts.  The server inherits this environment (``TFQ_SPARK_RUN``:
    ``kill_run`` finds it) and exits after ``TFQ_FEED_IDLE_MS`` (``env``; 10,000 by default) with
    no unit."""
    units = rdd.getNumPartitions()
    sock = (resident_socket(token, queue) if resident is True else resident) or None
    cmd = pipe_command(tfq_feed, ["--queue", queue] + list(args), sock)
    headed = rdd.mapPartitionsWithIndex(lambda p, it: _headed(p, units, it))
    env = dict(env or {})
    if sock:
        env.setdefault("TFQ_FEED", tfq_feed)
    return headed.pipe(cmd, env=feed_env(cluster, token, env), checkCode=True).collect()


def spark_context(master, workdir, app="tfq-spark", conf=()):
    """A SparkContext for the example and the tests.

    SPARK_HOME becomes workdir/spark, symlinks to pip's pyspark: local-cluster puts its work
    directories (the executors' stdout/stderr logs) under SPARK_HOME/work, which must not be the
    venv.  The executors run this Python (PYSPARK_PYTHON), everything binds to 127.0.0.1
    (SPARK_LOCAL_IP), and the barrier stage's slot check is retried every second (60 times)
    instead of every 15 s (40 times).  spark.task.maxFailures 1: a re-run pipe task would
    re-send its whole partition (duplicates); see README.md."""
    import pyspark
    real = os.path.dirname(os.path.abspath(pyspark.__file__))
    home = os.path.join(workdir, "spark")
    os.makedirs(os.path.join(home, "conf"), exist_ok=True)
    for e in os.listdir(real):
        link = os.path.join(home, e)
        if e not in ("work", "conf") and not os.path.lexists(link):
            os.symlink(os.path.join(real, e), link)
    with open(os.path.join(home, "conf", "log4j2.properties"), "w") as f:
        f.write("rootLogger.level = warn\nrootLogger.appenderRef.stdout.ref = console\n"
                "appender.console.type = Console\nappender.console.name = console\n"
                "appender.console.target = SYSTEM_ERR\n"
                "appender.console.layout.type = PatternLayout\n"
                "appender.console.layout.pattern = spark: %p %c{1}: %m%n%ex\n"
                "logger.hadoop.name = org.apache.hadoop\nlogger.hadoop.level = error\n")
    os.environ["SPARK_HOME"] = home
    os.environ["SPARK_CONF_DIR"] = os.path.join(home, "conf")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf, SparkContext
    c = (SparkConf().setMaster(master).setAppName(app)
         .set("spark.ui.enabled", "false")
         .set("spark.ui.showConsoleProgress", "false")
         .set("spark.task.maxFailures", "1")
         .set("spark.locality.wait", "0s")
         .set("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s")
         .set("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "60"))
    for k, v in conf:
        c.set(k, v)
    sc = SparkContext(conf=c)
    sc.setLogLevel("WARN")
    return sc


def wait_executors(sc, n, timeout):
    """Until n executors have registered (local-cluster starts them after the context)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if sc._jsc.sc().getExecutorMemoryStatus().size() - 1 >= n:  # minus the driver
            return True
        time.sleep(0.2)
    return False


def executor_log_lines(workdir, prefix="tfq-feed"):
    """local-cluster: the lines of the executors' stderr logs that start with prefix."""
    out = []
    for root, _, files in os.walk(os.path.join(workdir, "spark", "work")):
        if "stderr" in files:
            with open(os.path.join(root, "stderr"), errors="replace") as f:
                out += [line.rstrip("\n") for line in f if line.startswith(prefix)]
    return out


# ---------------------------------------------------------------------------------------------
# Cleanup of this machine (local-cluster; on a real cluster the executors' own deaths suffice).

def run_pids(token):
    """Pids of processes on this machine whose environment carries TFQ_SPARK_RUN=token."""
    want = f"{RUN_ENV}={token}".encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if want in f.read().split(b"\0"):
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def kill_run(token):
    """SIGKILLs every process of this run that is still there; returns how many there were."""
    pids = run_pids(token)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(pids)
