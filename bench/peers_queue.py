#!/usr/bin/env python3
"""Peers of bench/bench_queue.c (W3 of bench/README.md), 8-byte items (int64), one producer thread and
one consumer thread (1P1C), capacity 1024:
  py-queue      Python's queue.Queue, put/get of one int (the GIL baseline), single ops;
  tf1-fifo      TF1 FIFOQueue (tf.compat.v1 graph mode, one Session shared by the two threads):
                single ops (enqueue / dequeue of one int64 per Session.run) and batches
                (enqueue_many / dequeue_many of 128 per Session.run), as QueueRunner threads run
                them.
Each figure is items/s over a fixed item count (--seconds scales it after a short calibration),
median of --runs runs; the consumer checks the sum.  Prints a readable line and a `ROW {json}`
line per figure (bench/report.py reads them).

With --lat, the peers of bench/bench_queue_lat.c instead (8-byte items):
  pingpong      round trip of one element over two queues between two threads (p50/p99/mean ns):
                py-queue (queue.Queue put/get), tf1-fifo (two FIFOQueue(1); thread A runs
                enqueue then dequeue, thread B runs q2.enqueue(q1.dequeue()): 3 Session.run calls
                per round trip);
  close         tf1-fifo: W Session.run(dequeue) calls blocked on an empty FIFOQueue woken by
                close() and by close(cancel_pending_enqueues=True), W enqueues blocked on a full
                one woken by close(cancel_pending_enqueues=True); time from the close call to the
                last one returning (queue.Queue has no close before Python 3.13: n/a);
  layout        items/s of single put/get with capacities 1 and 10,000 in 1P1C, 1P2C and 2P1C:
                py-queue, and tf1-fifo (capacity 10,000, 1P2C and 2P1C; each thread its own
                Session.run calls on one Session).

  .venv/bin/python bench/peers_queue.py [--runs N] [--seconds S] [--no-tf] [--lat [--reps N]]"""
import argparse
import json
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


# ---- --lat: ping-pong, close latency, layouts ----------------------------------------------------

def row(d):
    print("ROW " + json.dumps(d, separators=(",", ":")))
    sys.stdout.flush()


def pingpong(name, hop_a, make_echo, seconds, max_rounds=200000):
    """hop_a(i) -> value back (thread A's round trip); make_echo() -> (thread target, stop())."""
    echo, stop = make_echo()
    th = threading.Thread(target=echo)
    th.start()
    for i in range(50):  # warm-up
        assert hop_a(i) == i
    rtt = []
    end = time.perf_counter() + seconds
    i = 0
    while len(rtt) < max_rounds:
        t0 = time.perf_counter()
        v = hop_a(i)
        t1 = time.perf_counter()
        assert v == i, "%s ping-pong value" % name
        rtt.append(t1 - t0)
        i += 1
        if t1 > end:
            break
    stop()
    th.join()
    rtt.sort()
    p50, p99 = rtt[len(rtt) // 2], rtt[min(len(rtt) - 1, int(0.99 * (len(rtt) - 1) + 0.5))]
    mean = sum(rtt) / len(rtt)
    print("pingpong %-10s %8d round trips  p50 %10.0f ns  p99 %10.0f ns  mean %10.0f ns" % (
        name, len(rtt), p50 * 1e9, p99 * 1e9, mean * 1e9))
    row({"bench": "queue_lat_peers", "test": "pingpong", "impl": name, "kind": "FIFOQueue",
         "rounds": len(rtt), "rtt_ns_p50": round(p50 * 1e9), "rtt_ns_p99": round(p99 * 1e9),
         "rtt_ns_mean": round(mean * 1e9)})


def py_pingpong(seconds):
    q1, q2 = queue.Queue(1), queue.Queue(1)

    def hop(i):
        q1.put(i)
        return q2.get()

    def make_echo():
        def echo():
            while True:
                v = q1.get()
                if v is None:
                    return
                q2.put(v)
        return echo, lambda: q1.put(None)
    pingpong("py-queue", hop, make_echo, seconds)


def tf_session(tf1, g):
    return tf1.Session(graph=g, config=tf1.ConfigProto(inter_op_parallelism_threads=2,
                                                       intra_op_parallelism_threads=1))


def tf_pingpong(seconds):
    tf, tf1 = tf_setup()
    g = tf1.Graph()
    with g.as_default():
        q1 = tf1.FIFOQueue(1, [tf.int64], shapes=[[]])
        q2 = tf1.FIFOQueue(1, [tf.int64], shapes=[[]])
        x = tf1.placeholder(tf.int64, [])
        enq, deq = q1.enqueue([x]), q2.dequeue()
        fwd = q2.enqueue([q1.dequeue()])
        close = q1.close(cancel_pending_enqueues=True)
        sess = tf_session(tf1, g)

    def hop(i):
        sess.run(enq, {x: i})
        return int(sess.run(deq))

    def make_echo():
        def echo():
            try:
                while True:
                    sess.run(fwd)
            except tf.errors.OutOfRangeError:
                return
        return echo, lambda: sess.run(close)
    pingpong("tf1-fifo", hop, make_echo, seconds, max_rounds=20000)
    sess.close()


def tf_close(reps, waiters):
    tf, tf1 = tf_setup()
    scen = (("dequeuers+close", False, False), ("dequeuers+cancel_close", False, True),
            ("enqueuers+cancel_close", True, True))
    for sname, enq_side, cancel in scen:
        g = tf1.Graph()
        with g.as_default():
            qs = [tf1.FIFOQueue(1, [tf.int64], shapes=[[]]) for _ in range(reps)]
            ops = [(q.enqueue([tf.constant(7, tf.int64)]) if enq_side else q.dequeue(),
                    q.close(cancel_pending_enqueues=cancel)) for q in qs]
            sess = tf_session(tf1, g)
        want = tf.errors.CancelledError if enq_side else tf.errors.OutOfRangeError
        lat, ok = [], True
        for op, close in ops:
            if enq_side:
                sess.run(op)  # fill the queue of capacity 1
            ret, codes = [], []
            started = threading.Barrier(waiters + 1)

            def wait():
                started.wait()
                try:
                    sess.run(op)
                    codes.append(None)
                except tf.errors.OpError as e:
                    codes.append(type(e))
                ret.append(time.perf_counter())
            ths = [threading.Thread(target=wait) for _ in range(waiters)]
            for t in ths:
                t.start()
            started.wait()
            time.sleep(0.05)  # every Session.run blocked in the queue
            t0 = time.perf_counter()
            sess.run(close)
            for t in ths:
                t.join()
            ok = ok and all(c is want for c in codes) and len(codes) == waiters
            lat.append(max(ret) - t0)
        sess.close()
        lat.sort()
        med = statistics.median(lat)
        print("close    tf1-fifo   %-23s %d waiters  all returned after %9.1f us median, %9.1f max%s"
              % (sname, waiters, med * 1e6, lat[-1] * 1e6, "" if ok else "  CHECK FAILED"))
        row({"bench": "queue_lat_peers", "test": "close", "scenario": sname, "impl": "tf1-fifo",
             "kind": "FIFOQueue", "waiters": waiters, "reps": reps,
             "lat_us_median": round(med * 1e6, 2), "lat_us_max": round(lat[-1] * 1e6, 2),
             "check_ok": ok})


def run_layout(np_, nc, n, put, get):
    """np_ producers put n // np_ items each, nc consumers get n // nc each; returns seconds."""
    sums = []

    def produce(pid):
        for i in range(n // np_):
            put((i << 8) | pid)

    def consume():
        s = 0
        for _ in range(n // nc):
            s += get()
        sums.append(s)
    ths = [threading.Thread(target=consume) for _ in range(nc)] + \
        [threading.Thread(target=produce, args=(p,)) for p in range(np_)]
    t0 = time.perf_counter()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    dt = time.perf_counter() - t0
    want = sum(((i << 8) | p) for p in range(np_) for i in range(n // np_))
    assert sum(sums) == want, "layout sum"
    return dt


def layouts(name, cases, make, seconds, runs):
    for np_, nc, cap in cases:
        unit = np_ * nc

        def fn(n):
            put, get, done = make(cap)
            try:
                return run_layout(np_, nc, n, put, get)
            finally:
                done()
        n = 64 * unit
        while True:
            t = fn(n)
            if t >= seconds / 4 or n >= 1 << 24:
                break
            n *= 4
        n = max(unit, int(n * seconds / max(t, 1e-6)) // unit * unit)
        rates = sorted(n / fn(n) for _ in range(runs))
        med = statistics.median(rates)
        print("layout   %-10s cap %-6d %dP%dC  %12.0f items/s (min %.0f)" % (
            name, cap, np_, nc, med, rates[0]))
        row({"bench": "queue_lat_peers", "test": "layout", "impl": name, "kind": "FIFOQueue",
             "producers": np_, "consumers": nc, "capacity": cap, "items_per_s_median": round(med),
             "items_per_s_min": round(rates[0]), "runs": runs})


def py_make(cap):
    q = queue.Queue(cap)
    return q.put, q.get, lambda: None


def tf_make_layout():
    tf, tf1 = tf_setup()

    def make(cap):
        g = tf1.Graph()
        with g.as_default():
            q = tf1.FIFOQueue(cap, [tf.int64], shapes=[[]])
            x = tf1.placeholder(tf.int64, [])
            enq, deq = q.enqueue([x]), q.dequeue()
            sess = tf_session(tf1, g)
        return (lambda v: sess.run(enq, {x: v})), (lambda: int(sess.run(deq))), sess.close
    return make


def lat_main(a):
    py_pingpong(a.seconds)
    cases = [(p, c, cap) for cap in (1, 10000) for p, c in ((1, 1), (1, 2), (2, 1))]
    layouts("py-queue", cases, py_make, a.seconds, a.runs)
    if a.no_tf:
        return
    try:
        tf_pingpong(a.seconds)
        tf_close(a.reps, a.waiters)
        layouts("tf1-fifo", [(1, 2, 10000), (2, 1, 10000)], tf_make_layout(), a.seconds, a.runs)
    except ImportError as e:
        print("tf1-fifo   n/a (%s)" % e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--no-tf", action="store_true")
    ap.add_argument("--lat", action="store_true", help="the peers of bench_queue_lat")
    ap.add_argument("--reps", type=int, default=10, help="--lat: close repetitions")
    ap.add_argument("--waiters", type=int, default=4, help="--lat: blocked threads per close")
    a = ap.parse_args()
    if a.lat:
        lat_main(a)
        return
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
