#!/usr/bin/env python3
"""Peers of bench/bench_e2e.c (W4 of bench/README.md): end-to-end shuffled minibatches of D1.

  tf1-shuffle_batch  tf.compat.v1 graph mode: string_input_producer([file], num_epochs=1) ->
                     TextLineReader.read_up_to(READ) -> decode_csv -> shuffle_batch(256,
                     capacity=M+3*256, min_after_dequeue=M, num_threads=2, enqueue_many=True,
                     allow_smaller_final_batch=True) under QueueRunners and a Coordinator.
  tf1-read1          the same with reader.read() (one record per op run, enqueue_many=False), as
                     the TF "Reading data" guide wrote it; informational (tfq reads in batches).
  tfdata-textline    TextLineDataset -> batch(READ) -> map(decode_csv, num_parallel_calls=2) ->
                     unbatch -> shuffle(M) -> batch(256) -> prefetch(1).
  tfdata-csvdataset  CsvDataset -> shuffle(M) -> batch(256) -> prefetch(1).

The consumer touches every byte of every column of every batch (numpy sums of the float bit
patterns, of the ints and of the string bytes), the same order-independent checksum as tfq's, so
the four pipelines must agree exactly.  Time starts when the queue runners start (TF1) or when the
iterator is created (tf.data); graph construction and imports are outside.  Process CPU time
(time.process_time, all threads) over the same interval.

Usage: .venv/bin/python bench/peers_e2e.py FILE [--min-after-dequeue M] [--read-batch N]
       [--batch B] [--only NAME[,NAME]]
Prints one `PEER name rows wall_s ttfb_s cpu_s file_bytes fsum isum ssum` line per peer
(parsed by bench_e2e) and a human-readable line; a failing peer prints `PEER name n/a`."""
import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402

NF, NI = 6, 3
M64 = (1 << 64) - 1


class Acc:
    def __init__(self):
        self.rows = self.fsum = self.isum = self.ssum = 0

    def touch(self, cols):
        n = len(cols[0])
        for c in cols[:NF]:
            self.fsum += int(np.asarray(c, np.float32).view(np.uint32).sum(dtype=np.uint64))
        for c in cols[NF:NF + NI]:
            self.isum += int(np.asarray(c).astype(np.uint32).sum(dtype=np.uint64))
        s = b"".join(cols[NF + NI].tolist())
        self.ssum += int(np.frombuffer(s, np.uint8).sum(dtype=np.uint64))
        self.rows += n


def defaults_v1():
    return [[0.0]] * NF + [[0]] * NI + [[""]]


def tf1_peer(tf, path, a, per_record=False):
    v1 = tf.compat.v1
    tf.get_logger().setLevel("ERROR")
    v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        files = v1.train.string_input_producer([path], num_epochs=1, shuffle=False)
        reader = v1.TextLineReader()
        if per_record:  # the TF "Reading data" guide's form: one record per read op
            _, lines = reader.read(files)
        else:
            _, lines = reader.read_up_to(files, a.read_batch)
        cols = v1.decode_csv(lines, defaults_v1())
        batch = v1.train.shuffle_batch(cols, batch_size=a.batch,
                                       capacity=a.min_after_dequeue + 3 * a.batch,
                                       min_after_dequeue=a.min_after_dequeue, num_threads=2,
                                       enqueue_many=not per_record, allow_smaller_final_batch=True,
                                       seed=87654321)
        init = [v1.global_variables_initializer(), v1.local_variables_initializer()]
    acc = Acc()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        coord = v1.train.Coordinator()
        t0, c0 = time.perf_counter(), time.process_time()
        threads = v1.train.start_queue_runners(sess=sess, coord=coord)
        ttfb = None
        try:
            while True:
                vals = sess.run(batch)
                if ttfb is None:
                    ttfb = time.perf_counter() - t0
                acc.touch(vals)
        except tf.errors.OutOfRangeError:
            pass
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        coord.request_stop()
        coord.join(threads)
    return acc, wall, ttfb, cpu


def run_dataset(tf, ds):
    acc = Acc()
    t0, c0 = time.perf_counter(), time.process_time()
    ttfb = None
    for cols in ds:
        vals = [c.numpy() for c in cols]
        if ttfb is None:
            ttfb = time.perf_counter() - t0
        acc.touch(vals)
    return acc, time.perf_counter() - t0, ttfb, time.process_time() - c0


def tfdata_textline_peer(tf, path, a):
    defaults = defaults_v1()
    ds = (tf.data.TextLineDataset(path).batch(a.read_batch)
          .map(lambda l: tuple(tf.io.decode_csv(l, defaults)), num_parallel_calls=2)
          .unbatch().shuffle(a.min_after_dequeue, seed=87654321).batch(a.batch).prefetch(1))
    return run_dataset(tf, ds)


def tfdata_csv_peer(tf, path, a):
    defaults = [tf.constant(0.0)] * NF + [tf.constant(0)] * NI + [tf.constant("")]
    ds = (tf.data.experimental.CsvDataset(path, defaults)
          .shuffle(a.min_after_dequeue, seed=87654321).batch(a.batch).prefetch(1))
    return run_dataset(tf, ds)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--min-after-dequeue", type=int, default=10000)
    p.add_argument("--read-batch", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--only", default="tfdata-textline,tfdata-csvdataset,tf1-shuffle_batch,tf1-read1")
    a = p.parse_args()
    size = os.path.getsize(a.file)
    peers = {"tf1-shuffle_batch": tf1_peer,
             "tf1-read1": lambda tf, path, a: tf1_peer(tf, path, a, per_record=True), "tfdata-textline": tfdata_textline_peer,
             "tfdata-csvdataset": tfdata_csv_peer}
    # TF1 graph mode disables eager for the process, so it runs last.
    for name in a.only.split(","):
        try:
            import tensorflow as tf
            acc, wall, ttfb, cpu = peers[name](tf, a.file, a)
            print("PEER %s %d %.6f %.6f %.6f %d %d %d %d" % (
                name, acc.rows, wall, ttfb or 0.0, cpu, size, acc.fsum & M64, acc.isum & M64,
                acc.ssum & M64))
            print("  %-18s %9.0f ex/s %7.1f MB/s  first batch %8.1f ms  cpu %6.2f s/1M ex" % (
                name, acc.rows / wall, size / wall / 1e6, (ttfb or 0) * 1e3,
                cpu / acc.rows * 1e6))
        except Exception as e:  # a missing peer prints n/a
            print("PEER %s n/a (%s)" % (name, str(e).splitlines()[0][:80] if str(e) else type(e)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
