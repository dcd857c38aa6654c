#!/usr/bin/env python3
"""bench_feed: records/s pushed into a TensorFlow cluster queue (a FIFOQueue by shared name on
/job:ps/task:0, over gRPC on 127.0.0.1) by

  1. the tfq feeder (bench_feed, C: tfq queue -> QueueRunner threads -> QueueEnqueueManyV2),
  2. a Python feeder doing the same with feed_dict enqueue_many runs of numpy batches
     (tf.compat.v1 graph mode, the usual TF1 way to feed a queue from Python),
  3. TensorFlowOnSpark-style feeding (InputMode.SPARK): a producer process puts every row, one at
     a time, into a multiprocessing manager JoinableQueue; the TF process pulls rows one at a time
     (DataFeed.next_batch) and enqueues each batch with feed_dict.

All three push the same rows (id int64, x float32[4], y float32) into their own queue on the same
ps process.  Prints one table and the ratio of tfq to the best Python feeder (target >= 5x).

    .venv/bin/python bench/bench_feed.py [--bench build/bench/bench_feed] [--records 200000]
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


def python_feeder(target, n, batch, name="bench_py"):
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        ph, enq, close, size = tf_graph(tf, name)
        sess = session(tf, target)
    ids, x, y = rows(n)
    sess.run(size)  # warm-up: builds the graph on the ps
    t0 = time.perf_counter()
    for off in range(0, n, batch):
        sess.run(enq, feed_dict={ph[0]: ids[off:off + batch], ph[1]: x[off:off + batch],
                                 ph[2]: y[off:off + batch]})
    sess.run(close)
    dt = time.perf_counter() - t0
    assert sess.run(size) == n
    sess.close()
    return dt


def tfos_producer(q, n):
    """A Spark partition task of TFSparkNode.train: every row put one at a time."""
    ids, x, y = rows(n)
    for i in range(n):
        q.put((int(ids[i]), x[i].tolist(), float(y[i])))
    q.put(None)  # end of feed (TFSparkNode.shutdown puts None)


def tfos_feeder(target, n, batch):
    import numpy as np
    import tensorflow as tf
    g = tf.Graph()
    with g.as_default():
        ph, enq, close, size = tf_graph(tf, "bench_tfos")
        sess = session(tf, target)
    sess.run(size)
    mgr = mp.Manager()
    q = mgr.JoinableQueue()
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
    prod.join()
    mgr.shutdown()
    assert total == n and sess.run(size) == n
    sess.close()
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", help="the bench_feed executable")
    ap.add_argument("--records", type=int, default=200000)
    ap.add_argument("--tfos-records", type=int, default=20000,
                    help="rows for the (slow) TensorFlowOnSpark-style feeder")
    ap.add_argument("--batch", type=int, default=1000)
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
    try:
        if not wait_port(port):
            print("bench_feed: the ps did not start")
            return 1
        target = f"grpc://127.0.0.1:{port}"
        out = subprocess.run([exe, "--target", target, "--records", str(a.records), "--batch",
                              str(a.batch), "--dim", str(DIM)], env=env, capture_output=True,
                             text=True, timeout=300)
        line = [l for l in out.stdout.splitlines() if l.startswith("tfq_feeder")]
        if out.returncode != 0 or not line:
            print(out.stdout, out.stderr)
            return 1
        t_tfq = float(line[0].split("seconds=")[1].split()[0])
        out = subprocess.run([exe, "--host-port", str(free_port()), "--records", str(a.records),
                              "--batch", str(a.batch), "--dim", str(DIM)], env=env,
                             capture_output=True, text=True, timeout=300)
        line = [l for l in out.stdout.splitlines() if l.startswith("tfq_feeder")]
        if out.returncode != 0 or not line:
            print(out.stdout, out.stderr)
            return 1
        t_tfq_host = float(line[0].split("seconds=")[1].split()[0])
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
        import tensorflow as tf
        tf.compat.v1.disable_eager_execution()
        t_py = python_feeder(target, a.records, a.batch)
        # The same Python feeder hosting the ps itself (in-process server, like topology B).
        own = tf.distribute.Server(tf.train.ClusterSpec({"ps": [f"127.0.0.1:{free_port()}"]}),
                                   job_name="ps", task_index=0)
        t_py_host = python_feeder(own.target, a.records, a.batch, "bench_py_host")
        t_tfos = tfos_feeder(target, a.tfos_records, 100)
    finally:
        os.killpg(ps.pid, signal.SIGKILL)
        ps.wait()
    res = [("tfq feeder, client of the ps process", a.records, t_tfq),
           ("tfq feeder hosting the ps (TF_NewServer)", a.records, t_tfq_host),
           (f"Python feed_dict enqueue_many, client of the ps", a.records, t_py),
           (f"Python feed_dict enqueue_many hosting the ps", a.records, t_py_host),
           ("TensorFlowOnSpark-style per-row queue (batch 100)", a.tfos_records, t_tfos)]
    print(f"bench_feed: rows (id int64, x float32[{DIM}], y float32) into a FIFOQueue on "
          f"/job:ps/task:0 over gRPC (127.0.0.1), TensorFlow {tf.__version__}")
    print(f"{'feeder':<52} {'records':>9} {'seconds':>8} {'records/s':>11}")
    for name, n, t in res:
        print(f"{name:<52} {n:>9} {t:>8.3f} {n / t:>11.0f}")
    best_py = max(n / t for _, n, t in res[2:])
    print(f"tfq client / best Python feeder: {(a.records / t_tfq) / best_py:.1f}x; "
          f"tfq hosting the ps / best Python feeder: {(a.records / t_tfq_host) / best_py:.1f}x; "
          f"tfq client / TensorFlowOnSpark-style: {(a.records / t_tfq) / (res[4][1] / res[4][2]):.0f}x"
          f" (target >= 5x the best Python feeder)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
