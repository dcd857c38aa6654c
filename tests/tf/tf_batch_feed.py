#!/usr/bin/env python3
"""Batch elements end to end (distributed-feeding.md 4.2, item 2 of its section 6).

A loopback cluster: ps:0 (a tf.distribute.Server in a child process) and worker:0 (a
tf.distribute.Server in this process).  The C client (tf_batch_feed_client, through libtfq_tf)
reads TF_CONFIG, whose task is worker 0, creates the batch-element queue on /job:worker/task:0,
enqueues batches of (id int64 [b], x float32 [b,4], s string [b]) -- a zero-row batch, which must
not arrive, and a short last batch included -- closes the queue and marks unit 0 in the done set
on the ps.  Meanwhile this process, the consumer on the worker, builds
tf.queue.FIFOQueue(C, dtypes, shared_name=...) WITHOUT shapes and dequeue()s until OutOfRange,
checking that it got exactly the batches sent, row for row, in order; then it reads the done set
through tf.raw_ops (size 1, unit 0).

    .venv/bin/python tests/tf/tf_batch_feed.py --client build/tests/tf/tf_batch_feed_client

Exit 0 pass, 1 fail, 77 skip (TensorFlow missing; a failure when CI=true).
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

SIZES = [64, 64, 0, 64, 17]  # rows per batch: a zero-row batch and a short last one
CAPACITY = 2  # batches: small, so the client blocks on a full queue while we consume
NAME = "tfq_feed_w0"


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def serve(cluster, job):
    import tensorflow as tf
    server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=0)
    print(f"{job}: serving {server.target}", flush=True)
    server.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client")
    ap.add_argument("--serve", help=argparse.SUPPRESS)  # child mode: the ps
    ap.add_argument("--cluster", help=argparse.SUPPRESS)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    if a.serve:
        serve(json.loads(a.cluster), a.serve)
        return 0

    try:
        import numpy as np
        import tensorflow as tf
    except ImportError as e:
        skip(f"{e}: run this with the project venv (.venv/bin/python)")
    if not a.client or not os.path.exists(a.client):
        skip("no tf_batch_feed_client: build tfq with the tensorflow feature")
    tf.compat.v1.disable_eager_execution()  # eager mode would rename shared queues

    ps_port, w_port = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w_port}"]}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("ASAN_OPTIONS", None)  # the Python processes are not instrumented
    ps = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", "ps",
                           "--cluster", json.dumps(cluster)], env=env, start_new_session=True)
    client = sess = None
    ok = False
    try:
        server = tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name="worker",
                                      task_index=0)
        with tf.device("/job:worker/task:0"):
            q = tf.queue.FIFOQueue(CAPACITY, [tf.int64, tf.float32, tf.string], shared_name=NAME,
                                   name=NAME)  # no shapes: batch elements
            deq = q.dequeue()
        with tf.device("/job:ps/task:0"):
            table = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.int64,
                                                  shared_name="tfq_done")
            done_size = tf.raw_ops.LookupTableSizeV2(table_handle=table)
            done_keys, _ = tf.raw_ops.LookupTableExportV2(table_handle=table, Tkeys=tf.int64,
                                                          Tvalues=tf.int64)
        config = tf.compat.v1.ConfigProto(device_filters=["/job:worker/task:0", "/job:ps"],
                                          operation_timeout_in_ms=int(a.timeout * 1000))
        sess = tf.compat.v1.Session(server.target, config=config)

        tf_config = {"cluster": cluster, "task": {"type": "worker", "index": 0},
                     "rpc_layer": "grpc", "environment": "cloud"}
        cenv = dict(os.environ, TF_CONFIG=json.dumps(tf_config), TF_CPP_MIN_LOG_LEVEL="2")
        client = subprocess.Popen([a.client, "--name", NAME, "--capacity", str(CAPACITY),
                                   "--sizes", ",".join(map(str, SIZES)), "--unit", "0"],
                                  env=cenv, start_new_session=True)

        got = []
        first = 0
        poll = tf.compat.v1.RunOptions(timeout_in_ms=2000)
        deadline = time.time() + a.timeout
        while True:
            try:
                ids, x, s = sess.run(deq, options=poll)
            except tf.errors.OutOfRangeError:
                break
            except tf.errors.DeadlineExceededError:  # nothing yet: is the client still there?
                assert client.poll() in (None, 0), f"the client exited with {client.returncode}"
                assert time.time() < deadline, "timeout waiting for batches"
                continue
            b = len(ids)
            assert ids.dtype == np.int64 and ids.shape == (b,), (ids.dtype, ids.shape)
            assert x.dtype == np.float32 and x.shape == (b, 4), (x.dtype, x.shape)
            assert s.shape == (b,), s.shape
            want = np.arange(first, first + b, dtype=np.int64)
            assert np.array_equal(ids, want), f"batch {len(got)}: ids {ids[:5]}..., want {want[:5]}..."
            assert np.array_equal(x, want[:, None].astype(np.float32) + np.float32(0.25) *
                                  np.arange(4, dtype=np.float32)), f"batch {len(got)}: x"
            assert [v.decode() for v in s] == [f"row{i}" for i in want], f"batch {len(got)}: s"
            got.append(b)
            first += b
        rc = client.wait(timeout=a.timeout)
        sent = [b for b in SIZES if b > 0]
        print(f"consumer: dequeued {len(got)} batches {got}, {first} rows, then OutOfRange; "
              f"sent {sent}; client exit {rc}", flush=True)
        assert rc == 0, f"the client exited with {rc}"
        assert got == sent, f"got batches {got}, sent {sent}"
        n, keys = sess.run([done_size, done_keys])
        print(f"consumer: done set on the ps: size {n}, units {sorted(keys.tolist())}", flush=True)
        assert n == 1 and keys.tolist() == [0], (n, keys)
        ok = True
    except (AssertionError, tf.errors.OpError, subprocess.TimeoutExpired) as e:
        print(f"consumer: FAILED: {type(e).__name__}: {e}", flush=True)
    finally:
        if sess is not None:
            sess.close()
        for p in (client, ps):
            if p is not None and p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
    print("PASS" if ok else "FAIL", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
