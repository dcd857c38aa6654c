#!/usr/bin/env python3
"""bench_feed: records/s pushed into a TensorFlow cluster queue (a FIFOQueue by shared name on
/job:ps/task:0 of a Python tf.distribute.Server process, over gRPC on 127.0.0.1) by

  1. the tfq feeder (bench_feed --mode feeder, C: tfq queue of ready batches -> QueueRunner
     threads running tfq_tf_feeder_step -> QueueEnqueueManyV2), as a client of the ps and hosting
     the ps itself (TF_NewServer);
  2. Python feeders written as a competent TF1 user would (tf.compat.v1 graph mode, the rows in
     numpy, one placeholder per component, enqueue_many): sess.run with feed_dict; the
     precompiled sess.make_callable(enq, feed_list) on 1 and 2 threads (Session.run releases the
     GIL); feed_dict (1 thread) and make_callable (2 threads) hosting the ps in-process;
  3. TensorFlowOnSpark-style feeding (InputMode.SPARK): a producer process puts every row, one at
     a time, into a multiprocessing manager JoinableQueue; the TF process pulls rows one at a time
     (DataFeed.next_batch) and enqueues each batch with feed_dict;

and, to show where the time goes, references (not bounds: tfq's client beat the first 1.91x in
the full report, issue #41):

  4. bench_feed --mode raw: the TF C API alone, TF_Tensors made once, TF_SessionRun of
     QueueEnqueueManyV2 in a tight loop on 2 threads (a reference: measured after every feeder,
     on a ps whose queues hold every earlier feeder's never-drained rows, so it is no upper
     bound);
  5. bench_feed --mode sink: the same runs and feeds with the queue replaced by a NoOp after a Size
     per fed tensor (the cost of gRPC + RunStep + the executor without the queue kernel);
  6. bench_feed --mode raw --target local: QueueEnqueueManyV2 in an in-process direct session, no
     gRPC (the FIFOQueue kernel alone: it slices every batch into one tensor per row and
     component, under the queue's mutex).

Every feeder pushes the same rows (id int64, x float32[4], y float32), in batches of the same size
(--batch, default 1,000), into its own unbounded queue on the same ps process.  For each run the
table gives the ps process's CPU time and the feeder process's CPU time per row, both measured
over the timed window (/proc/<pid>/stat, getrusage / time.process_time).  Prints the ratio of
tfq to the best Python feeder (target >= 5x) and the C API reference's ratio to it.

    .venv/bin/python bench/bench_feed.py [--bench build/bench/bench_feed] [--records 500000]
"""

import argparse
import glob
import multiprocessing as mp
import os
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIM = 4


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def rows(n, start=0):
    import numpy as np
    ids = np.arange(start, start + n, dtype=np.int64)
    x = ((ids[:, None] + np.arange(DIM)) % 1000 / 500.0 - 1).astype(np.float32)
    return ids, x, x[:, 0].copy()


def tf_graph(tf, name, capacity=-1):
    with tf.device("/job:ps/task:0"):
        q = tf.queue.FIFOQueue(capacity, [tf.int64, tf.float32, tf.float32],
                               shapes=[[], [DIM], []], shared_name=name, name=name)
        ph = [tf.compat.v1.placeholder(tf.int64, [None]),
              tf.compat.v1.placeholder(tf.float32, [None, DIM]),
              tf.compat.v1.placeholder(tf.float32, [None])]
        enq = q.enqueue_many(ph)
        close = q.close()
        size = q.size()
    return ph, enq, close, size


def session(tf, target):
    cfg = tf.compat.v1.ConfigProto(device_filters=["/job:ps/task:0"])
    return tf.compat.v1.Session(target, config=cfg)


def proc_cpu(pid):
    """utime + stime of process pid (every thread), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Result:
    def __init__(self, name, threads, batch, n, seconds, ps_cpu, self_cpu, note=""):
        self.name, self.threads, self.batch, self.n = name, threads, batch, n
        self.seconds, self.ps_cpu, self.self_cpu, self.note = seconds, ps_cpu, self_cpu, note

    @property
    def rate(self):
        return self.n / self.seconds


def python_feeder(target, n, batch, name, ps_pid, mode="feed_dict", threads=1):
    """mode feed_dict: sess.run(enq, feed_dict=...); callable: sess.make_callable(enq, ph)."""
    import threading
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        ph, enq, close, size = tf_graph(tf, name)
        sess = session(tf, target)
    ids, x, y = rows(n)
    sess.run(size)  # warm-up: builds the graph on the ps
    run = sess.make_callable(enq, feed_list=ph) if mode == "callable" else None
    offs = list(range(0, n, batch))
    nxt = [0]
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                if nxt[0] >= len(offs):
                    return
                off = offs[nxt[0]]
                nxt[0] += 1
            if run:
                run(ids[off:off + batch], x[off:off + batch], y[off:off + batch])
            else:
                sess.run(enq, feed_dict={ph[0]: ids[off:off + batch], ph[1]: x[off:off + batch],
                                         ph[2]: y[off:off + batch]})

    p0 = proc_cpu(ps_pid)
    c0 = time.process_time()
    t0 = time.perf_counter()
    if threads == 1:
        work()
    else:
        ts = [threading.Thread(target=work) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    sess.run(close)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    ps_cpu = proc_cpu(ps_pid) - p0
    assert sess.run(size) == n
    sess.close()
    return dt, ps_cpu, cpu


def tfos_producer(q, n):
    """A Spark partition task of TFSparkNode.train: every row put one at a time."""
    ids, x, y = rows(n)
    for i in range(n):
        q.put((int(ids[i]), x[i].tolist(), float(y[i])))
    q.put(None)  # end of feed (TFSparkNode.shutdown puts None)


def tfos_feeder(target, n, batch, ps_pid):
    import numpy as np
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        ph, enq, close, size = tf_graph(tf, "bench_tfos")
        sess = session(tf, target)
    sess.run(size)
    mgr = mp.Manager()
    q = mgr.JoinableQueue()
    p0 = proc_cpu(ps_pid)
    c0 = time.process_time()
    t0 = time.perf_counter()
    prod = mp.Process(target=tfos_producer, args=(q, n))
    prod.start()
    done, total = False, 0
    while not done:  # DataFeed.next_batch(batch): one proxied get() per row
        items = []
        while len(items) < batch:
            item = q.get()
            q.task_done()
            if item is None:
                done = True
                break
            items.append(item)
        if items:
            sess.run(enq, feed_dict={ph[0]: np.array([r[0] for r in items], np.int64),
                                     ph[1]: np.array([r[1] for r in items], np.float32),
                                     ph[2]: np.array([r[2] for r in items], np.float32)})
            total += len(items)
    sess.run(close)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0  # the TF process only (the producer is another process)
    ps_cpu = proc_cpu(ps_pid) - p0
    prod.join()
    mgr.shutdown()
    assert total == n and sess.run(size) == n
    sess.close()
    return dt, ps_cpu, cpu


def run_c(exe, env, args):
    out = subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=600)
    line = [l for l in out.stdout.splitlines() if l.startswith("tfq_feeder")]
    if out.returncode != 0 or not line:
        raise RuntimeError(f"{exe} {' '.join(args)}: {out.stdout} {out.stderr[-2000:]}")
    kv = dict(f.split("=", 1) for f in line[0].split()[1:])
    return float(kv["seconds"]), float(kv["ps_cpu"]), float(kv["self_cpu"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="the bench_feed executable")
    ap.add_argument("--records", type=int, default=500000)
    ap.add_argument("--tfos-records", type=int, default=20000,
                    help="rows for the (slow) TensorFlowOnSpark-style feeder")
    ap.add_argument("--batch", type=int, default=1000, help="rows per enqueue, every feeder")
    ap.add_argument("--threads", type=int, default=2, help="tfq feeder threads")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of each feeder (TensorFlowOnSpark-style: 1); the fastest is kept")
    a = ap.parse_args()
    exe = a.bench
    if not exe:
        hits = sorted(glob.glob(os.path.join(ROOT, "build*/bench/bench_feed")),
                      key=os.path.getmtime, reverse=True)
        exe = hits[0] if hits else None
    if not exe or not os.path.exists(exe):
        print("bench_feed: build bench_feed first (meson with the tensorflow feature)")
        return 77

    port = free_port()
    cluster_py = (f"import os; os.environ['TF_CPP_MIN_LOG_LEVEL']='2'\n"
                  f"import tensorflow as tf\n"
                  f"s = tf.distribute.Server(tf.train.ClusterSpec({{'ps': ['127.0.0.1:{port}']}}),"
                  f" job_name='ps', task_index=0)\nprint('ps up', flush=True)\ns.join()\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    ps = subprocess.Popen([sys.executable, "-c", cluster_py], env=env, start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    N, B, T = a.records, a.batch, a.threads
    res = []
    try:
        if not wait_port(port):
            print("bench_feed: the ps did not start")
            return 1
        target = f"grpc://127.0.0.1:{port}"
        common = ["--records", str(N), "--batch", str(B), "--dim", str(DIM)]
        client = ["--target", target, "--ps-pid", str(ps.pid)] + common

        def best(runs):  # the fastest of the runs, by wall time
            return min(runs, key=lambda r: r[0])

        def c(name, args, threads, note=""):
            res.append(Result(name, threads, B, N,
                              *best([run_c(exe, env, [str(free_port()) if x == "PORT" else x
                                                      for x in args] +
                                           ["--shared-name", f"c{len(res)}_{i}"])
                                     for i in range(a.repeat)]), note))

        c("tfq feeder, client of the ps process", client + ["--mode", "feeder", "--threads",
                                                              str(T)], T)
        c("tfq feeder hosting the ps (TF_NewServer)",
          ["--host-port", "PORT", "--mode", "feeder", "--threads", str(T)] + common, T,
          "ps = the feeder process")
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
        import tensorflow as tf
        tf.compat.v1.disable_eager_execution()
        for name, mode, th in [("Python feed_dict enqueue_many, client of the ps", "feed_dict", 1),
                               ("Python make_callable enqueue_many, client of the ps",
                                "callable", 1),
                               ("Python make_callable enqueue_many, client of the ps",
                                "callable", 2)]:
            res.append(Result(name, th, B, N, *best([
                python_feeder(target, N, B, f"py_{mode}_{th}_{i}", ps.pid, mode, th)
                for i in range(a.repeat)])))
        # The same Python feeder hosting the ps itself (in-process server, like topology B).
        own = tf.distribute.Server(tf.train.ClusterSpec({"ps": [f"127.0.0.1:{free_port()}"]}),
                                   job_name="ps", task_index=0)
        for name, mode, th in [("Python feed_dict enqueue_many hosting the ps", "feed_dict", 1),
                               ("Python make_callable enqueue_many hosting the ps",
                                "callable", 2)]:
            dt, _, cpu = best([python_feeder(own.target, N, B, f"py_host_{mode}_{th}_{i}",
                                             os.getpid(), mode, th) for i in range(a.repeat)])
            res.append(Result(name, th, B, N, dt, cpu, cpu, "ps = the feeder process"))
        dt, pc, cpu = tfos_feeder(target, a.tfos_records, B, ps.pid)
        res.append(Result("TensorFlowOnSpark-style per-row queue", 1, B, a.tfos_records, dt, pc,
                          cpu, "+ a producer process"))
        n_tfos = len(res)
        c("reference: C API tight loop, prebuilt tensors",
          client + ["--mode", "raw", "--threads", "2"], 2)
        c("no queue: same runs into a NoOp sink on the ps",
          client + ["--mode", "sink", "--threads", "2"], 2)
        c("queue kernel alone: in-process direct session",
          ["--target", "local", "--mode", "raw", "--threads", "1"] + common, 1,
          "no gRPC, no ps")
    finally:
        os.killpg(ps.pid, signal.SIGKILL)
        ps.wait()
    print(f"bench_feed: rows (id int64, x float32[{DIM}], y float32) into a FIFOQueue on "
          f"/job:ps/task:0 over gRPC (127.0.0.1), TensorFlow {tf.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; every feeder: batch {B}")
    print(f"{'feeder':<52} {'thr':>3} {'records':>8} {'seconds':>8} {'records/s':>10} "
          f"{'ps us/row':>9} {'self us/row':>11}  note")
    for r in res:
        print(f"{r.name:<52} {r.threads:>3} {r.n:>8} {r.seconds:>8.3f} {r.rate:>10.0f} "
              f"{f'{r.ps_cpu / r.n * 1e6:.2f}' if r.ps_cpu >= 0 else '-':>9} "
              f"{r.self_cpu / r.n * 1e6:>11.2f}  {r.note}")
    tfq, tfq_host = res[0].rate, res[1].rate
    best_py = max(r.rate for r in res[2:n_tfos])
    capi_ref, sink, kernel = res[n_tfos].rate, res[n_tfos + 1], res[n_tfos + 2]
    print(f"tfq client / best Python feeder: {tfq / best_py:.1f}x; tfq hosting the ps / best "
          f"Python feeder: {tfq_host / best_py:.1f}x; tfq client / TensorFlowOnSpark-style: "
          f"{tfq / res[n_tfos - 1].rate:.0f}x (target >= 5x the best Python feeder)")
    ps_row = min(r.ps_cpu for r in res[:n_tfos - 1]) / N  # the cheapest ps CPU/row of a feeder
    ncpu = os.cpu_count()
    print(f"reference (C API tight loop) / best Python feeder: {capi_ref / best_py:.1f}x; tfq "
          f"client / reference: {tfq / capi_ref:.2f}; 5x the best Python feeder would need "
          f"{5 * best_py:.0f} records/s")
    print(f"ps CPU per row: {res[n_tfos].ps_cpu / N * 1e6:.2f} us with the queue, "
          f"{sink.ps_cpu / N * 1e6:.2f} us without it; the queue kernel alone (one mutex) "
          f"{kernel.self_cpu / N * 1e6:.2f} us/row = {kernel.rate:.0f} records/s; bound: {ncpu} "
          f"CPUs / {ps_row * 1e6:.2f} us of ps CPU per row (the cheapest feeder above) = "
          f"{ncpu / ps_row:.0f} records/s = {ncpu / ps_row / best_py:.1f}x the best Python "
          f"feeder, with the feeder itself using no CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
