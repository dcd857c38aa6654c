#!/usr/bin/env python3
"""The Spark variants of bench/bench_dist.py (W6, distributed-feeding.md 5), run with --spark:

  spark-pipe   the D5 files read by Spark (sc.textFile(FILES, minPartitions=16), one partition
               per file), each partition piped, between the '#tfq unit=p units=U' header and the
               '#tfq end rows=N' trailer, into `tfq-feed-via SOCKET --to workers --elements
               batches -` (RDD.pipe, checkCode=True; tfq.spark's feed_rdd(resident=...), S2 of
               distributed-feeding.md 3.5): a unit run by the machine's resident tfq-feed (one
               per job, started by the first unit; its CPU and its units' are added to the Spark
               tree's), feeding the batch-element queues of the same loopback cluster and worker
               step as tfq-bc;
  spark-pipe-units  the same with a tfq-feed process per partition (`tfq-feed ... -`), each
               loading TensorFlow and opening its sessions (the mode before the resident feeder);
  tfos-spark   TensorFlowOnSpark InputMode.SPARK through Spark: rdd.foreachPartition whose
               function parses each CSV line in Python and puts it, one proxied put() per row,
               into the JoinableQueue of the multiprocessing manager of worker p mod 2
               (dist_peers.py tfos-manager, as tfos-style), then queue.join(); after the job the
               driver puts the end-of-feed None into each queue (TFCluster.shutdown).  The
               worker side is tfos-style's: DataFeed.next_batch(B) + feed_dict.

One driver process per variant (`dist_spark.py driver`), its SparkContext (local-cluster[2,1,1024]
by default: 2 executors of 1 core each, as the 2 vCPUs of the VM) kept for every repetition:

  start-up    SparkContext, the executors registered, one warm-up job that starts the Python
              worker of each executor (reused by the later jobs); then `UP {json}` (startup_s);
  {"cmd": "run", ...}  builds the job's RDD, prints `READY`;
  go          runs the job (the go is given to the workers at the same moment), prints
              `DONE {json}`: the job's seconds, the summary lines of the tfq-feed units and the
              CPU-seconds of every process of the driver's tree (the Python driver, the driver JVM
              with local-cluster's master and workers, the executor JVMs, their Python daemons and
              workers, the tfq-feed units) from /proc over go -> job end: live processes'
              utime + stime + cutime + cstime, so that the units and Python workers reaped
              during the job count;
  {"cmd": "exit"}     stops Spark.

An error prints `ERROR {json}` and exits 1 (bench_dist.py fails the variant at once).  The JVM
start-up is outside the window that bench_dist.py measures (its records/s start at the workers'
first step, at the go); bench_dist.py prints the whole job as start-up + job.  Every process this
driver started carries TFQ_SPARK_RUN=<token> (tfq_spark.kill_run) and is in the process group
that bench_dist.py kills at the variant's end.
"""
import argparse
import json
import os
import sys
import time

T_START = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPARK_EX = os.path.join(ROOT, "examples", "spark")
SPARK_VARIANTS = ["spark-pipe", "spark-pipe-units", "tfos-spark"]
PIPES = ("spark-pipe", "spark-pipe-units")
CLK = os.sysconf("SC_CLK_TCK")


def emit(tag, obj=None):
    sys.stdout.write(tag + (" " + json.dumps(obj) if obj is not None else "") + "\n")
    sys.stdout.flush()


def tree_cpu(root):
    """CPU-seconds of root and its descendants: utime + stime + cutime + cstime of each live one
    (a reaped child's total is in its parent's cutime/cstime); also the java processes' own."""
    info = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        comm = s[s.find("(") + 1:s.rfind(")")]
        fl = s.rsplit(")", 1)[1].split()
        info[int(d)] = (int(fl[1]), comm, [int(x) for x in fl[11:15]])
    kids = {}
    for pid, (ppid, _, _) in info.items():
        kids.setdefault(ppid, []).append(pid)
    tot = jvm = 0
    todo, n = [root], 0
    while todo:
        pid = todo.pop()
        if pid not in info:
            continue
        n += 1
        _, comm, t = info[pid]
        tot += sum(t)
        if comm == "java":
            jvm += t[0] + t[1]
        todo += kids.get(pid, [])
    return tot / CLK, jvm / CLK, n


# ---- executor side ------------------------------------------------------------------------------

def resident_cpu(sock):
    """CPU-seconds of the resident tfq-feed serving `sock` and of the units it reaped."""
    want = b"--serve\0" + sock.encode() + b"\0"
    tot = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if want not in f.read():
                    continue
            with open("/proc/%s/stat" % d) as f:
                fl = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tot += sum(int(x) for x in fl[11:15])
    return tot / CLK


def tfos_feed_partition(addrs, authkey):
    """The foreachPartition function of tfos-spark (TFSparkNode.train's _train: one put per row,
    then join)."""
    def feed(it):
        import csv
        from multiprocessing.managers import BaseManager

        from pyspark import TaskContext

        class TFManager(BaseManager):
            pass
        TFManager.register("get_queue")
        p = TaskContext.get().partitionId()
        m = TFManager(address=addrs[p % len(addrs)], authkey=authkey.encode())
        m.connect()
        q = m.get_queue("input")
        for r in csv.reader(it):
            q.put((float(r[0]), float(r[1]), float(r[2]), float(r[3]), float(r[4]),
                   float(r[5]), int(r[6]), int(r[7]), int(r[8]), r[9]), block=True)
        q.join()
    return feed


def end_of_feed(addrs, authkey):
    """TFCluster.shutdown: the None that ends DataFeed.next_batch, one per worker queue."""
    from multiprocessing.managers import BaseManager

    class TFManager(BaseManager):
        pass
    TFManager.register("get_queue")
    for addr in addrs:
        m = TFManager(address=addr, authkey=authkey.encode())
        m.connect()
        m.get_queue("input").put(None)


# ---- the driver process -------------------------------------------------------------------------

def source_spark_module():
    """This checkout's python/tfq/spark.py as tfq.spark (the driver side: feed_rdd and the pipe
    command), not the copy installed in the venv, which may be older: the bench measures this
    tree.  The executors' Python workers import the installed one (only _headed runs there)."""
    import importlib.util
    import tfq  # noqa: F401 (the installed package, for the parent)
    path = os.path.join(ROOT, "python", "tfq", "spark.py")
    spec = importlib.util.spec_from_file_location("tfq.spark", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tfq.spark"] = mod
    spec.loader.exec_module(mod)


def driver(a):
    sys.path.insert(0, SPARK_EX)
    source_spark_module()
    import tfq_spark as ts
    from tfq.spark import _headed as headed  # (not in the shim's *)
    sc = None
    try:
        sc = ts.spark_context(a.master, a.work, "w6-" + a.variant,
                              conf=[("spark.python.worker.reuse", "true")])
        sc.addPyFile(os.path.join(SPARK_EX, "tfq_spark.py"))
        t_ctx = time.time() - T_START
        import re
        m = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*(\d+)\]", a.master)
        n_exec = int(m.group(1)) if m else 0
        if n_exec and not ts.wait_executors(sc, n_exec, 300):
            raise RuntimeError("%d executors did not register in 300 s" % n_exec)
        t_exec = time.time() - T_START
        # warm-up: a Python worker on each executor (reused by the jobs), the task path JIT-ed
        sc.parallelize(range(4 * max(1, n_exec)), 2 * max(1, n_exec)).map(
            lambda x: x * x).collect()
        emit("UP", {"startup_s": round(time.time() - T_START, 3), "context_s": round(t_ctx, 3),
                    "executors_s": round(t_exec, 3), "master": a.master,
                    "pid": os.getpid()})
        cluster = json.loads(a.cluster)
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            c = json.loads(line)
            if c.get("cmd") == "exit":
                break
            if c.get("cmd") != "run":
                raise RuntimeError("unknown command %r" % line)
            rdd = sc.textFile(",".join(c["files"]), minPartitions=int(c["partitions"]))
            parts = rdd.getNumPartitions()
            emit("READY", {"partitions": parts})
            if sys.stdin.readline().strip() != "go":
                raise RuntimeError("no go")
            cpu0, jvm0, _ = tree_cpu(os.getpid())
            t0 = time.time()
            lines = []
            resident = c["impl"] == "spark-pipe"
            sock = ts.resident_socket(a.token, c["queue"]) if resident else None
            if c["impl"] in PIPES:
                args = ["--to", "workers", "--elements", "batches", "-d", c["spec"], "-b",
                        str(c["batch"]), "--seed", str(c["seed"]), "-q", "--stats"]
                lines = ts.feed_rdd(rdd, cluster, tfq_feed=a.tfq_feed, token=a.token,
                                    queue=c["queue"], args=args, resident=sock or False)
            else:
                rdd.foreachPartition(tfos_feed_partition(c["managers"], c["authkey"]))
                end_of_feed(c["managers"], c["authkey"])
            t1 = time.time()
            cpu1, jvm1, nproc = tree_cpu(os.getpid())
            # the resident tfq-feed is no descendant of the driver (a session of its own, its
            # starter gone): its CPU and its reaped units' are added, all of it in the window
            # (it starts with the job's first unit)
            res_cpu = resident_cpu(sock) if resident else 0.0
            cpu1 += res_cpu
            sink = {}
            if c["impl"] in PIPES:
                # After the window: the same job into a sink that only reads its standard input
                # (cat > /dev/null): Spark's own row path of S2 (the JVM reading the files, the
                # Python workers, the pipe), which every S2 feeder pays whatever it does.
                s0, sj0, _ = tree_cpu(os.getpid())
                u0 = time.time()
                sunk = rdd.mapPartitionsWithIndex(
                    lambda p, it: headed(p, parts, it)).pipe(
                    "/bin/sh -c 'cat >/dev/null; echo x'", env={"PATH": "/usr/bin:/bin"},
                    checkCode=True).count()
                u1 = time.time()
                s1, sj1, _ = tree_cpu(os.getpid())
                if sunk != parts:
                    raise RuntimeError("sink job: %d of %d partitions" % (sunk, parts))
                sink = {"sink_job_s": round(u1 - u0, 3), "sink_cpu_s": round(s1 - s0, 3),
                        "sink_cpu_s_jvm": round(sj1 - sj0, 3)}
            emit("DONE", dict({"job_s": round(t1 - t0, 3), "partitions": parts,
                               "cpu_s": round(cpu1 - cpu0, 3), "cpu_s_jvm": round(jvm1 - jvm0, 3),
                               "procs": nproc, "resident_cpu_s": round(res_cpu, 3),
                               "stats": [x for x in lines if "stats:" in x][:40]}, **sink))
    except BaseException as e:  # noqa: B036 (reported, then Spark is stopped)
        msg = str(e).strip().splitlines()
        emit("ERROR", {"error": "%s: %s" % (type(e).__name__, " | ".join(
            x for x in msg if "tfq-feed" in x or "Error" in x)[:600] or (msg[0][:300]
                                                                        if msg else ""))})
        try:
            for x in ts.executor_log_lines(a.work)[-10:]:
                print("[executor log] " + x, file=sys.stderr)
        except Exception:  # noqa: BLE001
            pass
        rc = 1
    else:
        rc = 0
    finally:
        if sc is not None:
            try:
                sc.stop()
            except Exception:  # noqa: BLE001
                pass
        time.sleep(0.3)
        ts.kill_run(a.token)
    return rc


# ---- bench_dist.py's side -----------------------------------------------------------------------

def available():
    """None when pyspark and Java are there, else why not."""
    import importlib.util
    import shutil
    if importlib.util.find_spec("pyspark") is None:
        return "no pyspark in this Python"
    jh = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (jh and os.access(os.path.join(jh, "bin", "java"),
                                                          os.X_OK)):
        return "no Java"
    return None


def start_driver(Proc, a, cl, logdir, variant):
    """The driver of the variant, up (its SparkContext, executors and Python workers ready)."""
    import uuid
    token = uuid.uuid4().hex
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TFQ_SPARK_RUN=token)
    env.pop("TF_CONFIG", None)
    # spark-pipe-units may run another build's tfq-feed (--spark-units-build: the baseline)
    build = (a.spark_units_build if variant == "spark-pipe-units" and a.spark_units_build
             else a.build)
    d = Proc("%s-driver" % variant, [a.python, os.path.abspath(__file__), "driver", "--variant",
                                     variant, "--cluster", json.dumps(cl.spec), "--tfq-feed",
                                     os.path.join(os.path.abspath(build), "tools",
                                                  "tfq-feed"), "--master", a.spark_master,
                                     "--work", os.path.join(os.path.abspath(a.work), "spark"),
                                     "--token", token], env, logdir, short="spark")
    d.up = json.loads(d.expect("UP", 600))
    print("  %-16s Spark up in %.1f s (context %.1f s, executors %.1f s, %s)" % (
        variant, d.up["startup_s"], d.up["context_s"], d.up["executors_s"], d.up["master"]),
        flush=True)
    return d


def prepare(d, impl, qname, files, a, rep, spec, managers):
    """Before the window: the job's RDD built; returns its partitions."""
    d.send({"cmd": "run", "impl": impl, "queue": qname, "files": files, "batch": a.batch,
            "seed": 1000 + rep, "spec": spec, "partitions": a.spark_partitions,
            "managers": managers, "authkey": "w6"})
    return json.loads(d.expect("READY", 120))["partitions"]


def finish(d, timeout):
    """After the workers' results: the job's DONE figures."""
    done = json.loads(d.expect("DONE", timeout))
    done["startup_s"] = d.up["startup_s"]
    print("  %-16s Spark job %.2f s (%d partitions), whole job (Spark start-up + job) %.1f s; "
          "CPU of the Spark tree %.2f s (JVMs %.2f s)" % (
              "", done["job_s"], done["partitions"], d.up["startup_s"] + done["job_s"],
              done["cpu_s"], done["cpu_s_jvm"]), flush=True)
    if "sink_job_s" in done:
        print("  %-16s the same Spark job into cat > /dev/null (Spark's row path alone): %.2f s, "
              "CPU of the Spark tree %.2f s (JVMs %.2f s)" % (
                  "", done["sink_job_s"], done["sink_cpu_s"], done["sink_cpu_s_jvm"]),
              flush=True)
    return done


def stop_driver(d):
    try:
        d.send({"cmd": "exit"})
        d.wait_exit(60)
    except Exception:  # noqa: BLE001 (killed with its group by the caller)
        pass
    d.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("driver")
    p.add_argument("--variant", choices=SPARK_VARIANTS, required=True)
    p.add_argument("--cluster", required=True, help="the cluster JSON (TF_CONFIG's 'cluster')")
    p.add_argument("--tfq-feed", required=True)
    p.add_argument("--master", default="local-cluster[2,1,1024]")
    p.add_argument("--work", required=True, help="SPARK_HOME and the executors' logs")
    p.add_argument("--token", required=True)
    a = ap.parse_args()
    return driver(a)


if __name__ == "__main__":
    sys.exit(main())
