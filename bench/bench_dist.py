#!/usr/bin/env python3
"""bench_dist: W6 of distributed-feeding.md 5, end-to-end distributed feeding.  Records/s that the
workers of a loopback TensorFlow cluster consume, and CPU-seconds per million records of every
process, for tfq-feed's topologies against the ways TF1, tf.data, TensorFlowOnSpark and a Python
feeder deliver the same rows to the same training step.

Cluster: ps:0, worker:0 and worker:1, separate processes (bench/dist_worker.py, TF_CONFIG each)
on 127.0.0.1, started once for every variant but the Spark ones and kept for all the rounds
(each run builds its own graph, queues and variables, named after the run), killed (process
groups) at the end, also on failure; a failed run drops its variant from the later rounds and
restarts the cluster.  The Spark variants start their own cluster each.  Data: D5 (D1, 1M rows
x 10 columns: 6 float, 3 int, 1 short word, cut into 16 CSV files; `gen_data` writes it); with
--rows N < 1M, the first N/16 rows of each file.  Worker k's
shard (for the variants that shard) is the files n = k mod 2.

The worker step is the same for every variant: one batch of b <= B rows (default 1,024) -> the
order-independent checksum of W4 (float bit patterns as uint32, ints, string bytes) and a tiny
SGD update of 7 variables on the ps; only scalars are fetched.

Variants (the input of that step):
  tfq-a        one tfq-feed, --to ps --elements rows (-j 2, min_after_dequeue 10k): per-row
               queue on the ps, workers dequeue_up_to(B) (TF1's shared-queue topology);
  tfq-bc       one tfq-feed, --to workers --elements batches (-j 2): a batch-element queue on
               each worker task, workers dequeue() one batch;
  tfq-bc-2f    two tfq-feed, --shard 0/2 and 1/2 (--feeders 2, -j 1 each: the same reader
               threads in all), each feeding both worker queues, with --acks (the workers
               acknowledge each batch in the step's run); the done set closes the queues;
  limit        the tfq-bc topology fed by bench_dist_limit (C, libtfq_tf): the rows decoded
               before the window into batches of B, pushed with tfq_tf_queue_enqueue_batch by
               one thread per queue: no CSV, no shuffle in the window (the ceiling);
  py-feeder    the best Python feeder of issue #8 in the tfq-bc topology (dist_peers.py
               pyfeed): rows parsed and shuffled before the window, one thread per worker queue
               running sess.make_callable(enqueue)(*numpy batch);
  tf1-ingraph  per worker, in its graph: string_input_producer(shard) -> TextLineReader
               .read_up_to(1024) -> decode_csv -> shuffle_batch(B, capacity 10k+3B,
               min_after_dequeue 10k, num_threads=2, enqueue_many) under QueueRunners;
  tfdata       per worker: CsvDataset(shard) -> shuffle(10k) -> batch(B) -> prefetch(1), and
               TextLineDataset(shard) -> batch(1024) -> map(decode_csv, 2) -> unbatch ->
               shuffle(10k) -> batch(B) -> prefetch(1); both reported, the better one is
               "tfdata" in the targets;
  tfos-style   TensorFlowOnSpark InputMode.SPARK (2.2): per worker a manager process serving a
               JoinableQueue and a producer process (Python csv parse, one put per row, then
               join); the worker gets rows one by one (DataFeed.next_batch(B)) and feeds the
               step through feed_dict.  On a --tfos-rows prefix (default 100k), 1 run (in
               the first round).

Measurements per run: records/s = rows / (the last worker's end of input - the first worker's
first step start), the go signal being given to the workers and the feeders at once.  Before
it, every worker has built its graph, opened its session and run its step once with a 300 ms
deadline (no data can be there yet), so that the step's graph is registered on the worker and the
ps; the feeders that need preparing (limit and py-feeder: their rows parsed; the TFoS managers)
are ready.  tfq-feed and the TFoS producers start at the go: their process start-up (tfq-feed:
about 0.2 CPU-s, mostly loading TensorFlow's C library) is inside the window.  Also: records/s
after the first batch (rows / (end - first batch out)), time to first batch per worker (go ->
first step done), CPU-seconds per million records of each process (ps, worker0, worker1, every
feeder, producer or manager) over the window, from /proc/<pid>/stat (a feeder that exits: its
rusage from wait4 minus its CPU at the go), and their sum; the load average before and after.
Interleaved rounds (issue #18): --repeat rounds (default 5; --quick 3), each running tfq-bc, then
every other variant once, one after the other; tfos-style in the first round only.  Every figure
is the median of the variant's runs (records/s with the best, min and max beside it); every
tfq-bc ratio (table, ROW tfq_ratio / tfq_cpu_ratio / tfq_feeder_cpu_ratio with _min, _max and
rounds, TARGET lines) is computed per round from that round's tfq-bc run and the variant's, and
printed as the median of the rounds' ratios with their range.  The Spark variants: --spark-repeat
runs each (3; --quick 1) after the rounds, their medians.

Correctness (exit status 1 otherwise): the row counts and checksums summed over the two workers
equal those of the data, computed once with pyarrow (cached beside the data), for every run;
for tfq-bc-2f also each feeder's --stats: every batch sent acknowledged, no duplicate, and the
acknowledged records of the two adding up to the data's rows.

Prints a table, `ENV {json}`, one `ROW {json}` per variant (bench/report.py reads them) and the
issue's `TARGET` lines (measured ratio, met / missed).

With --spark (not in the default run: 20-50 s of JVM start-up per variant on this VM) also
spark-pipe (units run by a resident tfq-feed per machine), spark-pipe-units (a tfq-feed per
partition) and tfos-spark, TensorFlowOnSpark's way, through a real Spark (local-cluster) into
the same cluster: bench/dist_spark.py; TARGET spark-pipe / tfos-spark records/s >= 50x and
spark-pipe >= 0.8x the LIMIT W6 spark-pipe bound; FEED lines: the feeding's CPU per partition.

  .venv/bin/python bench/bench_dist.py [--quick] [--build DIR] [--data DIR] [--rows N]
      [--repeat R] [--batch B] [--only tfq-bc,limit,...] [--tfos-rows N] [--spark]
      [--spark-repeat R]
"""
import argparse
import glob
import json
import os
import queue
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import dist_spark

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "bench")
SPEC = ",".join(["float32"] * 6 + ["int32"] * 3 + ["string"])
NFILES = 16
VARIANTS = ["tfq-bc", "tfq-a", "tfq-bc-2f", "limit", "py-feeder", "tf1-ingraph", "tfdata",
            "tfos-style"]
SPARK_VARIANTS = dist_spark.SPARK_VARIANTS  # with --spark only (bench/dist_spark.py)
ROLES = {"tfq-bc": "tfq", "tfq-a": "info", "tfq-bc-2f": "info", "limit": "limit",
         "py-feeder": "peer", "tf1-ingraph": "peer", "tfdata-csv": "peer",
         "tfdata-textline": "peer", "tfos-style": "peer",
         "spark-pipe": "info", "spark-pipe-units": "info", "tfos-spark": "peer"}
CLK = os.sysconf("SC_CLK_TCK")


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def proc_cpu(pid):
    """utime + stime of process pid (every thread), seconds; None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK
    except (OSError, IndexError, ValueError):
        return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Failed(Exception):
    pass


class Timeout(Failed):
    pass


class Proc:
    """A child process in its own process group, its stdout lines in a queue (a reader thread),
    its stderr kept in a file."""
    live = []

    def __init__(self, name, argv, env, logdir, stdin=True, short=None):
        self.name, self.short = name, short or name
        self.err_path = os.path.join(logdir, name + ".stderr")
        self.err = open(self.err_path, "w")
        self.p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE if stdin else
                                  subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.err,
                                  text=True, start_new_session=True, bufsize=1)
        self.pid = self.p.pid
        self.lines = queue.Queue()
        self.rusage_cpu = None
        Proc.live.append(self)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, obj):
        self.p.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        self.p.stdin.flush()

    def expect(self, tag, timeout):
        """The payload of the next stdout line starting with tag (other lines are skipped)."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise Timeout("%s: no %s within %.1f s%s" % (self.name, tag, timeout,
                                                           self.tail()))
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.p.wait()
                raise Failed("%s exited (%s) before %s%s" % (self.name, self.p.returncode, tag,
                                                             self.tail()))
            if line.startswith("ERROR"):
                raise Failed("%s: %s" % (self.name, line[6:]))
            if line == tag or line.startswith(tag + " "):
                return line[len(tag) + 1:]

    def poll_exit(self):
        """The exit status once exited (reaped with wait4: the process's total CPU, its children
        included, in rusage_cpu), else None."""
        if self.p.returncode is None:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if not pid:
                return None
            self.p.returncode = os.waitstatus_to_exitcode(status)
            self.rusage_cpu = ru.ru_utime + ru.ru_stime
        return self.p.returncode

    def wait_exit(self, timeout):
        end = time.monotonic() + timeout
        while True:
            if self.poll_exit() is not None:
                return self.p.returncode
            if time.monotonic() > end:
                raise Failed("%s did not exit within %.0f s%s" % (self.name, timeout, self.tail()))
            time.sleep(0.01)

    def tail(self):
        try:
            self.err.flush()
            with open(self.err_path) as f:
                t = [x for x in f.read().splitlines() if x.strip() and "oneDNN" not in x and
                     "absl::InitializeLog" not in x]
            return (": " + " | ".join(t[-3:])[:600]) if t else ""
        except OSError:
            return ""

    def kill(self):
        if self.p.returncode is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(10)
            except Exception:
                pass
        else:  # the group may hold children of an exited leader
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.err.close()
        if self in Proc.live:
            Proc.live.remove(self)


def kill_all():
    for p in list(Proc.live):
        p.kill()


# ---- data ---------------------------------------------------------------------------------------

def d5_files(data, build):
    files = [os.path.join(data, "D5", "part-%02d.csv" % k) for k in range(NFILES)]
    if not all(os.path.exists(f) for f in files):
        gen = os.path.join(build, "bench", "gen_data")
        print("bench_dist: generating the data sets into %s (%s)" % (data, gen), flush=True)
        subprocess.run([gen, data], check=True, stdout=subprocess.DEVNULL)
    return files


def prefix_files(files, rows, work):
    """The first rows/16 lines of each file, in work/D5-<rows>/ (reused when present)."""
    per = rows // NFILES
    out = os.path.join(work, "D5-%d" % rows)
    os.makedirs(out, exist_ok=True)
    res = []
    for f in files:
        dst = os.path.join(out, os.path.basename(f))
        res.append(dst)
        if os.path.exists(dst) and os.path.getmtime(dst) >= os.path.getmtime(f):
            continue
        with open(f, "rb") as src, open(dst + ".tmp", "wb") as o:
            for i, line in enumerate(src):
                if i >= per:
                    break
                o.write(line)
        os.replace(dst + ".tmp", dst)
    return res


def expected(files, work):
    """rows, fsum, isum, ssum of the files (pyarrow: float32 parsed directly, as decode_csv),
    cached in work/expected.json by path, size and mtime."""
    cache_path = os.path.join(work, "expected.json")
    try:
        with open(cache_path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pc
    tot = {"rows": 0, "fsum": 0, "isum": 0, "ssum": 0}
    names = ["c%d" % i for i in range(10)]
    types = {n: (pa.float32() if i < 6 else pa.int32() if i < 9 else pa.string())
             for i, n in enumerate(names)}
    changed = False
    for path in files:
        st = os.stat(path)
        key = "%s|%d|%d" % (os.path.abspath(path), st.st_size, int(st.st_mtime))
        if key not in cache:
            t = pc.read_csv(path, read_options=pc.ReadOptions(column_names=names),
                            convert_options=pc.ConvertOptions(column_types=types))
            e = {"rows": t.num_rows, "fsum": 0, "isum": 0, "ssum": 0}
            for i in range(6):
                e["fsum"] += int(t.column(i).to_numpy().view(np.uint32).sum(dtype=np.uint64))
            for i in range(6, 9):
                e["isum"] += int(t.column(i).to_numpy().astype(np.int64).sum())
            s = t.column(9).combine_chunks()
            off = np.frombuffer(s.buffers()[1], np.int32)[s.offset:s.offset + len(s) + 1]
            e["ssum"] = int(np.frombuffer(s.buffers()[2], np.uint8)[off[0]:off[-1]]
                            .sum(dtype=np.uint64))
            cache[key] = e
            changed = True
        for k in tot:
            tot[k] += cache[key][k]
    if changed:
        with open(cache_path, "w") as f:
            json.dump(cache, f)
    return tot


# ---- one variant --------------------------------------------------------------------------------

class Cluster:
    def __init__(self, py, logdir, tag):
        ports = [free_port() for _ in range(3)]
        self.spec = {"ps": ["127.0.0.1:%d" % ports[0]],
                     "worker": ["127.0.0.1:%d" % ports[1], "127.0.0.1:%d" % ports[2]]}
        self.spec_string = "ps=%s;worker=%s" % (self.spec["ps"][0], ",".join(self.spec["worker"]))
        self.procs = {}
        for job, i, name in (("ps", 0, "ps"), ("worker", 0, "worker0"), ("worker", 1, "worker1")):
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_CONFIG=json.dumps(
                {"cluster": self.spec, "task": {"type": job, "index": i}}))
            self.procs[name] = Proc("%s-%s" % (tag, name), [py, os.path.join(HERE,
                                                                           "dist_worker.py"), job],
                                    env, logdir, stdin=job == "worker")
        for p in self.procs.values():
            p.expect("UP", 180)
        self.workers = [self.procs["worker0"], self.procs["worker1"]]

    def tf_config(self, task=None):
        c = {"cluster": self.spec}
        if task is not None:
            c["task"] = {"type": "worker", "index": task}
        return json.dumps(c)

    def close(self):
        for w in self.workers:
            try:
                w.send({"cmd": "exit"})
            except OSError:
                pass
        for p in self.procs.values():
            p.kill()


def run_once(a, cl, impl, rep, files, exp, logdir, extra_procs):
    """One timed run of `impl` on the live cluster `cl`; returns its figures."""
    B = a.batch
    qname = "w6_%s_%d" % (impl.replace("-", "_"), rep)
    shards = [files[k::2] for k in range(2)]
    base = {"cmd": "prepare", "rep": rep, "batch": B, "queue": qname, "seed": 1000 + rep}
    spark = getattr(cl, "spark", None) if impl in SPARK_VARIANTS else None
    if impl in ("tfq-bc", "tfq-bc-2f", "limit", "py-feeder", "spark-pipe", "spark-pipe-units"):
        cmds = [dict(base, input="queue-batches", capacity=8, acks=impl == "tfq-bc-2f")
                for _ in range(2)]
    elif impl == "tfq-a":
        cmds = [dict(base, input="queue-rows", capacity=8 * B) for _ in range(2)]
    elif impl == "tf1-ingraph":
        cmds = [dict(base, input="tf1", files=shards[k]) for k in range(2)]
    elif impl in ("tfdata-csv", "tfdata-textline"):
        cmds = [dict(base, input=impl, files=shards[k]) for k in range(2)]
    elif impl in ("tfos-style", "tfos-spark"):
        cmds = [dict(base, input="tfos", manager=extra_procs[k].addr, authkey="w6")
                for k in range(2)]
    else:
        raise ValueError(impl)
    for w, c in zip(cl.workers, cmds):
        w.send(c)
    for w in cl.workers:
        w.expect("PREPARED", 300)

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    feeders, prepared, at_go = [], [], []
    tfq_feed = os.path.join(a.build, "tools", "tfq-feed")
    common = ["-d", SPEC, "-b", str(B), "--queue", qname, "--seed", str(1000 + rep), "-q",
              "--stats"]
    if impl == "limit":
        prepared.append(Proc("%s-r%d-limit" % (impl, rep),
                             [os.path.join(a.build, "bench", "bench_dist_limit"), "--cluster",
                              cl.spec_string, "--queue", qname, "-b", str(B),
                              "--threads-per-queue", str(a.feeder_threads)] + files, env,
                             logdir, short="limit"))
    elif impl == "py-feeder":
        prepared.append(Proc("%s-r%d-pyfeed" % (impl, rep),
                             [a.python, os.path.join(HERE, "dist_peers.py"), "pyfeed",
                              "--cluster", json.dumps(cl.spec), "--queue", qname, "--batch",
                              str(B), "--seed", str(1000 + rep), "--threads-per-queue",
                              str(a.feeder_threads)] + files, env, logdir, short="pyfeed"))
    elif impl == "tfq-a":
        at_go.append(("tfq-feed", [tfq_feed, "--to", "ps", "--elements", "rows", "-j", "2"] +
                      common + files, dict(env, TF_CONFIG=cl.tf_config())))
    elif impl == "tfq-bc":
        at_go.append(("tfq-feed", [tfq_feed, "--to", "workers", "--elements", "batches", "-j",
                                   "2"] + common + files, dict(env, TF_CONFIG=cl.tf_config())))
    elif impl == "tfq-bc-2f":
        for k in range(2):  # each beside its worker (TF_CONFIG's task), reading its shard
            at_go.append(("tfq-feed%d" % k, [tfq_feed, "--to", "workers", "--elements",
                                             "batches", "-j", "1", "--shard", "%d/2" % k,
                                             "--feeders", "2", "--acks"] + common + files,
                          dict(env, TF_CONFIG=cl.tf_config(k))))
    elif impl == "tfos-style":
        for k in range(2):
            at_go.append(("producer%d" % k, [a.python, os.path.join(HERE, "dist_peers.py"),
                                             "tfos-produce", extra_procs[k].addr] + shards[k],
                          dict(env, TFOS_AUTHKEY="w6")))
    for p in prepared:
        p.expect("READY", 600)
    if spark:  # the job's RDD (Spark, its executors and their Python workers are up already)
        dist_spark.prepare(spark, impl, qname, files, a, rep, SPEC,
                           [m.addr for m in extra_procs] if impl == "tfos-spark" else None)

    # The window: CPU of every live process now, then go to the workers and the feeders at once.
    live = {"ps": cl.procs["ps"].pid, "worker0": cl.workers[0].pid, "worker1": cl.workers[1].pid}
    for k, m in enumerate(extra_procs):
        live["manager%d" % k] = m.pid
    for p in prepared:
        live[p.short] = p.pid
    la0 = loadavg()
    cpu0 = {k: proc_cpu(pid) for k, pid in live.items()}
    t_go = time.monotonic()
    for w in cl.workers:
        w.send({"cmd": "go"})
    for p in prepared:
        p.send("go")
    if spark:
        spark.send("go")
    started = [Proc("%s-r%d-%s" % (impl, rep, name), argv, e, logdir, stdin=False, short=name)
               for name, argv, e in at_go]
    results = []
    end = time.monotonic() + a.timeout
    for w in cl.workers:
        while True:  # a feeder that fails leaves the workers waiting: fail at once
            try:
                results.append(json.loads(w.expect("RESULT", 0.5)))
                break
            except Timeout:
                if time.monotonic() > end:
                    raise Timeout("%s: no RESULT within %.0f s (--timeout)%s" % (
                        w.name, a.timeout, w.tail()))
            for p in prepared + started + ([spark] if spark else []):
                rc = p.poll_exit()
                if rc:
                    raise Failed("%s exited with status %s%s" % (p.name, rc, p.tail()))
    cpu1 = {k: proc_cpu(pid) for k, pid in live.items()}
    la1 = loadavg()
    cpu = {}
    for k in live:
        if cpu1[k] is not None and cpu0[k] is not None:
            cpu[k] = cpu1[k] - cpu0[k]
    stats = []
    for p in prepared + started:
        rc = p.wait_exit(120)
        short = p.short
        if rc != 0:
            raise Failed("%s exited with status %s%s" % (p.name, rc, p.tail()))
        cpu[short] = p.rusage_cpu - (cpu0.get(short) or 0.0)
        with open(p.err_path) as f:
            stats += [x for x in f.read().splitlines() if "stats:" in x]
        p.kill()

    spark_done = None
    if spark:  # the CPU of the whole Spark tree (JVMs, Python workers, tfq-feed units)
        spark_done = dist_spark.finish(spark, 120)
        cpu["spark"] = spark_done["cpu_s"]
        stats += spark_done["stats"]
    rows = sum(r["rows"] for r in results)
    got = {k: sum(r[k] for r in results) for k in ("fsum", "isum", "ssum")}
    got["rows"] = rows
    ok = all(got[k] == exp[k] for k in exp)
    acks = [x for x in stats if "stats: acks:" in x]
    if impl == "tfq-bc-2f":  # every batch sent acknowledged once, no duplicate, all rows
        m = [re.search(r"sent (\d+), re-sent (\d+), acknowledged (\d+) \((\d+) records\), "
                       r"duplicates (\d+)", x) for x in acks]
        ok = ok and len(m) == 2 and all(x and x.group(1) == x.group(3) and x.group(5) == "0"
                                        for x in m) and \
            sum(int(x.group(4)) for x in m) == exp["rows"]
        if not ok:
            got["acks"] = acks
    t0 = min(r["t_first"] for r in results)
    t1 = max(r["t_end"] for r in results)
    tb = min(r["t_first_end"] for r in results)
    return {"impl": impl, "rep": rep, "rows": rows, "seconds": t1 - t0,
            "records_per_s": rows / (t1 - t0) if t1 > t0 else 0.0,
            "records_per_s_after_first": rows / (t1 - tb) if t1 > tb else 0.0,
            "ttfb_ms": [round((r["t_first_end"] - t_go) * 1e3, 2) for r in results],
            "worker_rows": [r["rows"] for r in results], "steps": [r["steps"] for r in results],
            "cpu_s": cpu, "checksum_ok": ok, "got": got, "expected": exp,
            "loadavg_before": la0, "loadavg_after": la1, "stats": stats, "spark": spark_done}


def start_managers(a, logdir, tag):
    """The two TFoS multiprocessing managers (dist_peers.py tfos-manager), one per worker."""
    extra = []
    for k in range(2):
        addr = os.path.join(logdir, "tfos-%d-%d.sock" % (os.getpid(), k))
        if os.path.exists(addr):
            os.unlink(addr)
        m = Proc("%s-manager%d" % (tag, k), [a.python, os.path.join(HERE, "dist_peers.py"),
                                             "tfos-manager", addr],
                 dict(os.environ, TFOS_AUTHKEY="w6"), logdir, stdin=False)
        extra.append(m)
        m.addr = addr
        m.expect("UP", 60)
    return extra


def stop_managers(extra):
    for m in extra:
        m.kill()
        if os.path.exists(m.addr):
            os.unlink(m.addr)


def print_run(impl, label, r):
    print("  %-16s %s: %9.0f records/s, %.2f s, first batch %s ms, %s%s" % (
        impl, label, r["records_per_s"], r["seconds"], "/".join("%.0f" % x for x in r["ttfb_ms"]),
        " ".join("%s %.2f" % (k, v) for k, v in r["cpu_s"].items()),
        "" if r["checksum_ok"] else "  CHECKSUM MISMATCH"), flush=True)


def run_rounds(a, impls, files, tfos_files, exps, logdir):
    """The variants other than the Spark ones in --repeat interleaved rounds on one cluster (and,
    for tfos-style, one pair of TFoS managers) kept for every round: in each round every
    implementation once, one after the other, in the order of impls (tfq-bc first); tfos-style
    (on its prefix, ~50x slower) in the first round only.  Each run builds its own graph, queues
    and variables (names carry the run's number), so no state of an earlier run is reused.  A
    run that fails drops its implementation from the later rounds and restarts the cluster (a
    failed feeder can leave the workers blocked).  Returns ({impl: [runs]}, {impl: error})."""
    runs, errors = {impl: [] for impl in impls}, {}
    cl, managers, starts = None, [], 0
    try:
        for rnd in range(a.repeat):
            for k, impl in enumerate(impls):
                tfos = impl == "tfos-style"
                if impl in errors or (tfos and rnd > 0):
                    continue
                if cl is None:
                    cl = Cluster(a.python, logdir, "w6-%d" % starts)
                    starts += 1
                    if "tfos-style" in impls and rnd == 0 and not runs["tfos-style"] and \
                            "tfos-style" not in errors:
                        managers = start_managers(a, logdir, "w6-%d" % (starts - 1))
                try:
                    r = run_once(a, cl, impl, rnd + 100 * k, tfos_files if tfos else files,
                                 exps["tfos" if tfos else "main"], logdir,
                                 managers if tfos else [])
                except Failed as e:
                    errors[impl] = str(e)
                    print("  %-16s round %d FAILED: %s" % (impl, rnd + 1, e), flush=True)
                    cl.close()
                    stop_managers(managers)
                    cl, managers = None, []
                    kill_all()
                    continue
                r["round"] = rnd
                runs[impl].append(r)
                print_run(impl, "round %d" % (rnd + 1), r)
                if tfos:  # no later round uses them
                    stop_managers(managers)
                    managers = []
    except Failed as e:  # the cluster or the managers did not start
        print("  cluster FAILED: %s" % e, flush=True)
        for impl in impls:
            if not runs[impl]:
                errors.setdefault(impl, str(e))
    finally:
        stop_managers(managers)
        if cl:
            cl.close()
        kill_all()
    return runs, errors


def run_variant(a, variant, files, tfos_files, exps, logdir):
    """A Spark variant: a fresh cluster and Spark driver, its runs one after the other
    (--spark-repeat; tfos-spark 1)."""
    impls = [variant]
    tfos = variant in ("tfos-style", "tfos-spark")
    reps = 1 if tfos else a.spark_repeat
    vfiles = tfos_files if tfos else files
    exp = exps["tfos" if tfos else "main"]
    out = {}
    cl = None
    extra = []
    try:
        cl = Cluster(a.python, logdir, variant)
        if tfos:
            extra = start_managers(a, logdir, variant)
        cl.spark = dist_spark.start_driver(Proc, a, cl, logdir, variant)
        for impl in impls:
            runs = []
            for rep in range(reps):
                try:
                    r = run_once(a, cl, impl, len(runs) + 100 * impls.index(impl), vfiles, exp,
                                 logdir, extra)
                except Failed as e:
                    out[impl] = {"impl": impl, "error": str(e)}
                    print("  %-16s run %d FAILED: %s" % (impl, rep + 1, e), flush=True)
                    break
                print_run(impl, "run %d" % (rep + 1), r)
                runs.append(r)
            else:
                out[impl] = {"impl": impl, "runs": runs}
    except Failed as e:
        for impl in impls:
            out.setdefault(impl, {"impl": impl, "error": str(e)})
        print("  %-16s FAILED: %s" % (variant, e), flush=True)
    finally:
        if cl and getattr(cl, "spark", None):
            dist_spark.stop_driver(cl.spark)
        stop_managers(extra)
        if cl:
            cl.close()
        kill_all()
    return out


FEEDERS = ("tfq-feed", "limit", "pyfeed", "producer", "manager", "spark")


def run_cpu(r, feeders_only=False):
    """CPU-s per 1M records of one run: every process, or the feeder processes only (None when
    the run has none)."""
    ks = [k for k in r["cpu_s"] if not feeders_only or k.startswith(FEEDERS)]
    if not ks:
        return None
    return sum(r["cpu_s"][k] for k in ks) / r["rows"] * 1e6


def round_ratios(tfq_runs, runs, f):
    """f(tfq-bc's run) / f(this run) in every round that has both (tfq-bc ran first in it): the
    median, lowest and highest, and the number of rounds; None without such a round."""
    by = {r["round"]: r for r in tfq_runs if "round" in r}
    q = [f(by[r["round"]]) / f(r) for r in runs
         if r.get("round") in by and f(r) and f(by[r["round"]]) is not None]
    if not q:
        return None
    return statistics.median(q), min(q), max(q), len(q)


def summarize(impl, runs, batch, tfq_runs=None):
    """The figures of an implementation's runs: records/s the median of the runs (best, min and
    max beside it), the other rates, times and CPU figures medians too; with tfq_runs (tfq-bc's,
    of the same rounds) tfq-bc's ratios over it computed per round: records/s (tfq_ratio, _min,
    _max, rounds), CPU-s per 1M records of every process (tfq_cpu_ratio, ...) and of the feeder
    processes (tfq_feeder_cpu_ratio, ...)."""
    med = statistics.median(r["records_per_s"] for r in runs)
    mid = min(runs, key=lambda r: abs(r["records_per_s"] - med))  # the median run (odd counts)
    rates = [r["records_per_s"] for r in runs]
    procs = []
    for r in runs:
        for k in r["cpu_s"]:
            if k not in procs:
                procs.append(k)
    per = {k: statistics.median([r["cpu_s"].get(k, 0.0) / r["rows"] * 1e6 for r in runs])
           for k in procs}
    feeders = [k for k in procs if k.startswith(FEEDERS)]
    ratios = {}
    if tfq_runs and runs is not tfq_runs:
        for key, f in (("tfq_ratio", lambda r: r["records_per_s"]), ("tfq_cpu_ratio", run_cpu),
                       ("tfq_feeder_cpu_ratio", lambda r: run_cpu(r, True))):
            q = round_ratios(tfq_runs, runs, f)
            if q:
                ratios.update({key: round(q[0], 4), key + "_min": round(q[1], 4),
                               key + "_max": round(q[2], 4)})
                ratios.setdefault("rounds", q[3])
    return {"bench": "dist", "impl": impl, "role": ROLES.get(impl, "info"),
            "rows": mid["rows"], "runs": len(runs), "batch": batch,
            "records_per_s": round(med), "records_per_s_best": round(max(rates)),
            "records_per_s_median": round(med),
            "records_per_s_min": round(min(rates)), "records_per_s_max": round(max(rates)),
            "records_per_s_after_first_batch": round(statistics.median(
                [r["records_per_s_after_first"] for r in runs])),
            "seconds": round(statistics.median(r["seconds"] for r in runs), 3),
            "ttfb_ms": round(statistics.median([max(r["ttfb_ms"]) for r in runs]), 1),
            "ttfb_ms_workers": mid["ttfb_ms"], "worker_rows": mid["worker_rows"],
            "cpu_s_per_1m": round(sum(per.values()), 3),
            "cpu_s_per_1m_procs": {k: round(v, 3) for k, v in per.items()},
            "feeder_cpu_s_per_1m": round(sum(per[k] for k in feeders), 3) if feeders else None,
            "checksum_ok": all(r["checksum_ok"] for r in runs),
            "loadavg_before": runs[0]["loadavg_before"], "loadavg_after": runs[-1]["loadavg_after"],
            **ratios}


def spark_bound(sp, lim):
    """The most spark-pipe could reach here: the CPUs divided by what every S2 feeder must spend
    per record -- Spark's row path (the sink job: files read by the JVM, rows through the Python
    workers and the pipe) plus the worker step and ps (the least of spark-pipe's own and the
    limit variant's) -- with the feeder itself free and every CPU busy all the time."""
    if not sp or "spark_row_path_cpu_s_per_1m" not in sp:
        return None
    side = [sum(x["cpu_s_per_1m_procs"].get(k, 0) for k in ("ps", "worker0", "worker1"))
            for x in (sp, lim) if x]
    per = sp["spark_row_path_cpu_s_per_1m"] + min(side)
    return {"records_per_s": os.cpu_count() * 1e6 / per,
            "row_path": sp["spark_row_path_cpu_s_per_1m"], "workers": min(side)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="200k rows, 3 rounds, tfos-style on 50k rows")
    ap.add_argument("--build", help="build tree with tools/tfq-feed and bench/bench_dist_limit "
                    "(default: the newest build*/ that has tfq-feed)")
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", "data"),
                    help="data directory holding D5/ (generated with gen_data when missing)")
    ap.add_argument("--work", default=os.path.join(ROOT, "bench", "out", "dist"),
                    help="prefix files, expected checksums and the processes' logs")
    ap.add_argument("--rows", type=int, help="rows of D5 used (default 1,000,000; --quick 200k)")
    ap.add_argument("--tfos-rows", type=int, help="rows for tfos-style (100k; --quick 50k)")
    ap.add_argument("--repeat", type=int, help="interleaved rounds, each running every variant "
                    "once (5; --quick 3); tfos-style in the first only")
    ap.add_argument("--spark-repeat", type=int, help="runs of each Spark variant (3; --quick 1)")
    ap.add_argument("--batch", type=int, default=1024, help="B, rows per training step")
    ap.add_argument("--only", help="variants, comma-separated (default: all but the Spark ones; "
                    "with --spark all)")
    ap.add_argument("--spark", action="store_true",
                    help="also spark-pipe and tfos-spark (bench/dist_spark.py; pyspark + Java)")
    ap.add_argument("--spark-master", default="local-cluster[2,1,1024]",
                    help="the Spark master of the Spark variants")
    ap.add_argument("--spark-units-build",
                    help="spark-pipe-units: the tfq-feed of this build tree instead (e.g. a "
                    "build of the commit before the resident feeder: today's figure beside "
                    "spark-pipe's in one run)")
    ap.add_argument("--spark-partitions", type=int, default=16,
                    help="spark-pipe, tfos-spark: sc.textFile's minPartitions (16: one per file)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run")
    ap.add_argument("--feeder-threads", type=int, default=1,
                    help="limit and py-feeder: pushing threads per worker queue")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    a.rows = a.rows or (200000 if a.quick else 1000000)
    a.tfos_rows = min(a.tfos_rows or (50000 if a.quick else 100000), a.rows)
    a.repeat = a.repeat or (3 if a.quick else 5)
    a.spark_repeat = a.spark_repeat or (1 if a.quick else 3)
    if a.only is None:
        a.only = ",".join(VARIANTS + (SPARK_VARIANTS if a.spark else []))
    only = [v for v in a.only.split(",") if v]
    bad = [v for v in only if v not in VARIANTS + SPARK_VARIANTS]
    if bad:
        ap.error("unknown variant(s) %s (known: %s)" % (",".join(bad),
                                                        ",".join(VARIANTS + SPARK_VARIANTS)))
    spark_asked = [v for v in only if v in SPARK_VARIANTS]
    why = dist_spark.available() if spark_asked else None
    if why:
        print("bench_dist: %s: %s skipped" % (why, ", ".join(spark_asked)))
        only = [v for v in only if v not in SPARK_VARIANTS]
    if not a.build:
        hits = sorted(glob.glob(os.path.join(ROOT, "build*", "tools", "tfq-feed")),
                      key=os.path.getmtime, reverse=True)
        a.build = os.path.dirname(os.path.dirname(hits[0])) if hits else None
    if not a.build or not os.path.exists(os.path.join(a.build, "tools", "tfq-feed")):
        print("bench_dist: no tfq-feed (build with the tensorflow feature: tools/tfq-feed)")
        return 77
    if "limit" in only and not os.path.exists(os.path.join(a.build, "bench", "bench_dist_limit")):
        print("bench_dist: no bench/bench_dist_limit in %s: limit skipped" % a.build)
        only.remove("limit")
    t_start = time.time()
    os.makedirs(a.work, exist_ok=True)
    logdir = os.path.join(a.work, "logs")
    os.makedirs(logdir, exist_ok=True)
    files = d5_files(a.data, a.build)
    if a.rows < 1000000:
        files = prefix_files(files, a.rows, a.work)
    tfos_files = prefix_files(files, a.tfos_rows, a.work) if a.tfos_rows < a.rows else files
    exps = {"main": expected(files, a.work), "tfos": expected(tfos_files, a.work)}

    def on_term(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, on_term)

    la0 = loadavg()
    print("bench_dist: W6 distributed feeding, loopback cluster ps:0 + worker:0 + worker:1, "
          "%d CPUs, D5 %d rows in %d files (tfos-style %d), B=%d, medians of %d interleaved "
          "rounds; load average %.2f %.2f %.2f" % (
              os.cpu_count(), exps["main"]["rows"], len(files), exps["tfos"]["rows"], a.batch,
              a.repeat, *la0), flush=True)
    print("ENV " + json.dumps({"bench": "dist", "rows": exps["main"]["rows"],
                               "tfos_rows": exps["tfos"]["rows"], "batch": a.batch,
                               "repeat": a.repeat, "cpus": os.cpu_count(), "loadavg": la0,
                               "build": os.path.relpath(a.build, ROOT),
                               "quick": bool(a.quick)}), flush=True)
    summary, errors, mismatch = [], {}, False
    try:
        # tfq-bc first in each round: every ratio is tfq-bc's run over the peer's of its round.
        impls = [i for v in sorted(only, key=lambda v: v != "tfq-bc") if v not in SPARK_VARIANTS
                 for i in {"tfdata": ["tfdata-csv", "tfdata-textline"]}.get(v, [v])]
        res = {}
        if impls:
            print("[rounds: %s] load %.2f" % (", ".join(impls), loadavg()[0]), flush=True)
            runs, errs = run_rounds(a, impls, files, tfos_files, exps, logdir)
            res = {i: {"impl": i, "error": errs[i]} if i in errs else {"impl": i, "runs": runs[i]}
                   for i in impls}
        tfq_runs = res.get("tfq-bc", {}).get("runs")
        for v in only:
            if v in SPARK_VARIANTS:
                print("[%s] load %.2f" % (v, loadavg()[0]), flush=True)
                res.update(run_variant(a, v, files, tfos_files, exps, logdir))
        for impl, r in res.items():
            if "error" in r:
                errors[impl] = r["error"]
                continue
            s = summarize(impl, r["runs"], a.batch,
                          tfq_runs if impl not in SPARK_VARIANTS else None)
            if not s["checksum_ok"]:
                mismatch = True
                bad_run = next(x for x in r["runs"] if not x["checksum_ok"])
                print("  CHECKSUM MISMATCH %s: got %s, expected %s" % (
                    impl, bad_run["got"], bad_run["expected"]), flush=True)
            if r["runs"][0]["stats"]:
                print("    " + "\n    ".join(r["runs"][0]["stats"][:8]))
            if r["runs"][0].get("spark"):  # the Spark variants: start-up, the best job
                sd = max(r["runs"], key=lambda x: x["records_per_s"])["spark"]
                s.update(spark_startup_s=sd["startup_s"], spark_job_s=sd["job_s"],
                         spark_whole_job_s=round(sd["startup_s"] + sd["job_s"], 3),
                         spark_partitions=sd["partitions"])
                sinks = [x["spark"]["sink_cpu_s"] / x["rows"] * 1e6 for x in r["runs"]
                         if "sink_cpu_s" in x["spark"]]
                if sinks:  # spark-pipe: Spark's row path alone (dist_spark.py's sink job)
                    s["spark_row_path_cpu_s_per_1m"] = round(min(sinks), 3)
                    # the feeding beyond Spark's row path, per partition: the Spark tree's CPU
                    # (with the resident tfq-feed's) less the same job's into cat, median
                    feed = sorted((x["spark"]["cpu_s"] - x["spark"]["sink_cpu_s"]) /
                                  x["spark"]["partitions"] for x in r["runs"]
                                  if "sink_cpu_s" in x["spark"])
                    s["spark_feed_cpu_s_per_partition"] = round(feed[len(feed) // 2], 3)
                    s["spark_resident_cpu_s"] = sd.get("resident_cpu_s", 0.0)
            summary.append(s)
            print("ROW " + json.dumps(s), flush=True)
    finally:
        kill_all()
    la1 = loadavg()

    # ---- the table and the targets ----
    print()
    print("Medians of %d interleaved rounds (tfq-bc first in each; tfos-style in the first only)"
          "; tfq-bc / this: the median of the rounds' ratios, each from one round's two runs, "
          "with their range and number" % a.repeat)
    print("%-16s %-5s %10s %10s %17s %10s %9s | %6s %7s %7s %7s %7s | %7s | %s" % (
        "variant", "role", "records/s", "best", "spread (min-max)", "after 1st", "1st batch",
        "ps", "worker0", "worker1", "feeders", "total", "rows", "tfq-bc / this records/s"))
    print("%-16s %-5s %10s %10s %17s %10s %9s | %6s %-38s|" % (
        "", "", "(median)", "", "", "", "", "", "<- CPU-s per 1M records"))
    for s in summary:
        p = s["cpu_s_per_1m_procs"]
        print("%-16s %-5s %10.0f %10.0f %8.0f-%-8.0f %10.0f %7.0fms | %6.2f %7.2f %7.2f %7s %7.2f"
              " | %7d | %s%s" % (
                  s["impl"], s["role"], s["records_per_s"], s["records_per_s_best"],
                  s["records_per_s_min"], s["records_per_s_max"],
                  s["records_per_s_after_first_batch"], s["ttfb_ms"], p.get("ps", 0),
                  p.get("worker0", 0), p.get("worker1", 0),
                  "%.2f" % s["feeder_cpu_s_per_1m"] if s["feeder_cpu_s_per_1m"] is not None
                  else "-", s["cpu_s_per_1m"], s["rows"],
                  "%.2fx (%.2f-%.2f, %d round%s)" % (
                      s["tfq_ratio"], s["tfq_ratio_min"], s["tfq_ratio_max"], s["rounds"],
                      "s" if s["rounds"] > 1 else "") if "tfq_ratio" in s else "",
                  "" if s["checksum_ok"] else " CHECKSUM MISMATCH"))
    for impl, e in errors.items():
        print("%-16s n/a (%s)" % (impl, e[:200]))
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f (2 vCPUs shared: above ~2 "
          "the figures are low and noisy); %.0f s" % (*la0, *la1, time.time() - t_start))

    by = {s["impl"]: s for s in summary}
    bc = by.get("tfq-bc")
    ing = [by[k] for k in ("tf1-ingraph", "tfdata-csv", "tfdata-textline") if k in by]
    best_in = max(ing, key=lambda s: s["records_per_s"]) if ing else None
    low_cpu = min(ing, key=lambda s: s["cpu_s_per_1m"]) if ing else None

    # Each tfq-bc target is the median of the per-round ratios (the peer's row: tfq_ratio,
    # tfq_cpu_ratio, tfq_feeder_cpu_ratio); the others (Spark) the ratio of the medians.
    def target(what, num, den, key, bound, at_least=True, note="", rkey=None):
        if den and rkey and rkey in den:
            v = den[rkey]
            note = " (median of %d interleaved rounds, range %.2f-%.2f%s)" % (
                den["rounds"], den[rkey + "_min"], den[rkey + "_max"], note) \
                if den["rounds"] > 1 else " (1 round%s)" % note
        elif not num or not den or not den.get(key) or num.get(key) is None:
            print("TARGET W6 %s: n/a (variant missing)" % what)
            return
        else:
            v = num[key] / den[key]
        met = v >= bound if at_least else v <= bound
        print("TARGET W6 %s %s %gx: %.2fx%s %s" % (what, ">=" if at_least else "<=", bound, v,
                                                   note, "met" if met else "missed"))
    lim = by.get("limit")

    def ceiling(f, peer):  # what the limit variant itself reaches against that peer, per round
        lr, pr = res.get("limit", {}).get("runs"), peer and res.get(peer["impl"], {}).get("runs")
        q = round_ratios(lr, pr, f) if lr and pr else None
        return "; the limit variant: %.2fx" % q[0] if q else ""
    target("tfq-bc / best in-graph peer (%s) records/s" % (best_in["impl"] if best_in else "-"),
           bc, best_in, "records_per_s", 10, rkey="tfq_ratio",
           note=ceiling(lambda r: r["records_per_s"], best_in))
    target("tfq-bc / leanest in-graph peer (%s) CPU-s per 1M records, all processes" % (
        low_cpu["impl"] if low_cpu else "-"), bc, low_cpu, "cpu_s_per_1m", 0.2, at_least=False,
        rkey="tfq_cpu_ratio", note=ceiling(run_cpu, low_cpu))
    target("tfq-bc / tfq-a records/s (B=%d)" % a.batch, bc, by.get("tfq-a"), "records_per_s", 3,
           rkey="tfq_ratio")
    target("tfq-bc / limit records/s", bc, by.get("limit"), "records_per_s", 0.5,
           rkey="tfq_ratio")
    target("tfq-bc / tfos-style records/s", bc, by.get("tfos-style"), "records_per_s", 100,
           rkey="tfq_ratio", note="; tfos-style on %d rows" % exps["tfos"]["rows"])
    if spark_asked:
        sp, tfos = by.get("spark-pipe"), by.get("tfos-spark")
        note = " (tfos-spark on %d rows)" % exps["tfos"]["rows"]
        bound = spark_bound(sp, lim)
        if bound:
            print("LIMIT W6 spark-pipe (S2, Spark's rows through RDD.pipe) on this machine: %.0f "
                  "records/s = %d CPUs / (%.2f CPU-s per 1M records of Spark's row path alone + "
                  "%.2f of the worker step and ps, the least measured) -- an upper bound for any "
                  "feeder behind the pipe, which costs nothing in it" % (
                      bound["records_per_s"], os.cpu_count(), bound["row_path"],
                      bound["workers"]))
            if tfos and tfos.get("records_per_s"):
                note += "; the bound itself: %.1fx" % (bound["records_per_s"] /
                                                       tfos["records_per_s"])
        target("spark-pipe / tfos-spark records/s", sp, tfos, "records_per_s", 50, note=note)
        if bound:
            target("spark-pipe / LIMIT W6 spark-pipe records/s", sp,
                   {"records_per_s": bound["records_per_s"]}, "records_per_s", 0.8)
            units = by.get("spark-pipe-units")
            if units:
                target("spark-pipe-units (a tfq-feed per partition) / LIMIT W6 spark-pipe "
                       "records/s", units, {"records_per_s": bound["records_per_s"]},
                       "records_per_s", 0.8, note=" (before the resident feeder; information)")
        for v in ("spark-pipe", "spark-pipe-units"):
            if v in by and "spark_feed_cpu_s_per_partition" in by[v]:
                print("FEED W6 %s: the feeding's CPU per partition (Spark tree%s less Spark's row "
                      "path alone, %d partitions of %d rows): %.3f CPU-s%s" % (
                          v, " + the resident tfq-feed" if v == "spark-pipe" else "",
                          by[v]["spark_partitions"], by[v]["rows"] // by[v]["spark_partitions"],
                          by[v]["spark_feed_cpu_s_per_partition"],
                          " (tfq-feed of %s)" % a.spark_units_build
                          if v == "spark-pipe-units" and a.spark_units_build else ""))
    target("tfq-feed CPU per record / py-feeder's (tfq-bc topology; feeder processes only)", bc,
           by.get("py-feeder"), "feeder_cpu_s_per_1m", 0.5, at_least=False,
           rkey="tfq_feeder_cpu_ratio")
    if mismatch:
        print("bench_dist: CHECKSUM MISMATCH (see above)")
        return 1
    tfq_failed = [k for k in errors if k.startswith("tfq")]
    if tfq_failed:
        print("bench_dist: FAILED: %s" % ", ".join(tfq_failed))
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        kill_all()
