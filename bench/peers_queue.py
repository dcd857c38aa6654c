#!/usr/bin/env python3
"""Peers of bench/bench_queue.c (perf-anchors 7.3 W3), 8-byte items (int64), one producer thread and
one consumer thread (1P1C), capacity 1024:
  py-queue      Python's queue.Queue, put/get of one int (the GIL baseline), single ops;
  tf1-fifo      TF1 FIFOQueue (tf.compat.v1 graph mode, one Session shared by the two threads):
                single ops (enqueue / dequeue of one int64 per Session.run) and batches
                (enqueue_many / dequeue_many of 128 per Session.run), as QueueRunner threads run
                them.
Each figure is items/s over a fixed item count (--seconds scales it after a short calibration),
median of --runs runs; the consumer checks the sum.  Prints a readable line and a `ROW {json}`
line per figure (bench/report.py reads them).

  .venv/bin/python bench/peers_queue.py [--runs N] [--seconds S] [--no-tf]"""
import argparse
import os
import queue
import statistics
import sys
import threading
import time


def run_pair(produce, consume):
    out = {}
    t0 = time.perf_counter()
    c = threading.Thread(target=lambda: out.update(s=consume()))
    p = threading.Thread(target=produce)
    c.start()
    p.start()
    p.join()
    c.join()
    return time.perf_counter() - t0, out.get("s")


def py_queue(n):
    q = queue.Queue(1024)

    def produce():
        for i in range(n):
            q.put(i)

    def consume():
        s = 0
        for _ in range(n):
            s += q.get()
        return s
    t, s = run_pair(produce, consume)
    assert s == n * (n - 1) // 2, "py-queue sum"
    return t


def tf_setup():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    return tf, tf1


def tf_fifo(batch):
    tf, tf1 = tf_setup()
    g = tf1.Graph()
    with g.as_default():
        q = tf1.FIFOQueue(1024, [tf.int64], shapes=[[]])
        if batch > 1:
            x = tf1.placeholder(tf.int64, [batch])
            enq = q.enqueue_many([x])
            deq = q.dequeue_many(batch)
        else:
            x = tf1.placeholder(tf.int64, [])
            enq = q.enqueue([x])
            deq = q.dequeue()
        sess = tf1.Session(graph=g, config=tf1.ConfigProto(inter_op_parallelism_threads=2,
                                                           intra_op_parallelism_threads=1))

    def run(n):
        import numpy as np
        calls = n // batch
        data = [np.arange(k * batch, (k + 1) * batch, dtype=np.int64) for k in range(calls)] \
            if batch > 1 else list(range(calls))

        def produce():
            for d in data:
                sess.run(enq, {x: d})

        def consume():
            s = 0
            for _ in range(calls):
                v = sess.run(deq)
                s += int(v.sum()) if batch > 1 else int(v)
            return s
        t, s = run_pair(produce, consume)
        m = calls * batch
        assert s == m * (m - 1) // 2, "tf1-fifo sum"
        return t, m
    return run


def measure(name, mode, batch, fn, seconds, runs):
    """fn(n) -> seconds or (seconds, items).  Calibrates n to take about `seconds`."""
    n = 1024
    while True:
        r = fn(n)
        t = r[0] if isinstance(r, tuple) else r
        if t >= seconds / 4 or n >= 1 << 26:
            break
        n *= 4
    n = max(1024, int(n * seconds / max(t, 1e-6)))
    rates = []
    for _ in range(runs):
        r = fn(n)
        t, m = r if isinstance(r, tuple) else (r, n)
        rates.append(m / t)
    med = statistics.median(rates)
    print("%-10s %-6s batch %4d 1P1C  %12.0f items/s (min %.0f, max %.0f; %d runs)" % (
        name, mode, batch, med, min(rates), max(rates), runs))
    print('ROW {"bench":"queue_peers","impl":"%s","kind":"FIFOQueue","elem_bytes":8,"mode":"%s",'
          '"batch":%d,"producers":1,"consumers":1,"items_per_s_median":%.0f,'
          '"items_per_s_min":%.0f,"items_per_s_max":%.0f,"runs":%d}' % (
              name, mode, batch, med, min(rates), max(rates), runs))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--no-tf", action="store_true")
    a = ap.parse_args()
    measure("py-queue", "single", 1, py_queue, a.seconds, a.runs)
    if a.no_tf:
        return
    try:
        measure("tf1-fifo", "single", 1, tf_fifo(1), a.seconds, a.runs)
        measure("tf1-fifo", "batch", 128, tf_fifo(128), a.seconds, a.runs)
    except ImportError as e:
        print("tf1-fifo   n/a (%s)" % e)


if __name__ == "__main__":
    main()
