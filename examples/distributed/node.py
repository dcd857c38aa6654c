"""One task of the example cluster, in tf.compat.v1 graph mode.  The task comes from TF_CONFIG
(as TensorFlowOnSpark or any launcher sets it), read with tfq.cluster (the installed package):

  ps      serves: the model variables w[4], b, tfq-feed's done set, and (--topology ps) the
          shared per-row queue.
  worker  builds its side of tfq-feed's queue with tfq.cluster, dequeues until
          OutOfRangeError and trains the linear model y = x.w + b by SGD; the variables live on
          the ps, so the workers train one model asynchronously.  Worker 0 is the chief: it
          initialises the variables and, once every worker is done, writes model.json.

    TF_CONFIG='{"cluster": ..., "task": {"type": "worker", "index": 1}}' \\
        python node.py [--topology workers|ps|library] [--batch 1000] [--out DIR]

--topology workers: the queue tfq_feed_w<i> on this worker's own task, an element is a batch
  (tfq-feed --to workers --elements batches): one dequeue() and one SGD step per batch.
--topology ps: the queue tfq_feed on the ps, an element is a row (tfq-feed --to ps --elements
  rows): dequeue_up_to(--step-rows) per step.
--topology library: the queue of feeder.c (the library-API example): tfq_feed on the ps, rows
  (int64 id, float32 x[4], float32 y), capacity 2000.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tfq.cluster as tfw  # noqa: E402  (installed: pip install . / scripts/setup)

# The columns of data.csv / part-*.csv, as tfq-feed's -d: id, x0..x3, y.
SPEC = "int64,float32,float32,float32,float32,float32"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topology", choices=["workers", "ps", "library"], default="workers")
    ap.add_argument("--out", default=".")
    ap.add_argument("--queue", default=tfw.DEFAULT_QUEUE)
    ap.add_argument("--batch", type=int, default=1000, help="tfq-feed's -b")
    ap.add_argument("--step-rows", type=int, default=100, help="rows per step (ps, library)")
    ap.add_argument("--lr", type=float, default=0.2)
    a = ap.parse_args()

    # Graph mode first: in eager mode Python replaces a queue's shared_name with a unique one.
    tf.compat.v1.disable_eager_execution()
    cluster, job, task = tfw.tf_config()
    server = tfw.start_server(cluster, job, task)
    if job == "ps":
        print(f"ps: serving {server.target}", flush=True)
        server.join()
        return

    nworkers = cluster.num_tasks("worker")
    with tf.device("/job:ps/task:0"):
        w = tf.compat.v1.get_variable("w", [4], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [], initializer=tf.compat.v1.zeros_initializer())
    if a.topology == "library":  # feeder.c's queue: components id, x[4], y
        with tf.device("/job:ps/task:0"):
            q = tf.queue.FIFOQueue(2000, [tf.int64, tf.float32, tf.float32],
                                   shapes=[[], [4], []], shared_name=a.queue, name=a.queue)
        with tf.device(f"/job:worker/task:{task}"):
            ids, x, y = q.dequeue_up_to(a.step_rows)
    else:  # tfq-feed's queue: one component per CSV column
        if a.topology == "workers":
            cols = tfw.dequeue(SPEC, to="workers", elements="batches", queue=a.queue,
                               batch_size=a.batch, task_index=task)
        else:
            cols = tfw.dequeue(SPEC, to="ps", elements="rows", queue=a.queue,
                               batch_size=a.batch, task_index=task, n=a.step_rows)
        with tf.device(f"/job:worker/task:{task}"):
            ids, x, y = cols[0], tf.stack(cols[1:5], axis=1), cols[5]
    with tf.device(f"/job:worker/task:{task}"):
        pred = tf.reduce_sum(x * w, axis=1) + b
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.compat.v1.train.GradientDescentOptimizer(a.lr).minimize(loss)
    uninit = tf.compat.v1.report_uninitialized_variables()
    init = tf.compat.v1.global_variables_initializer()

    with tf.compat.v1.Session(server.target, config=tfw.session_config(task)) as sess:
        if task == 0:
            sess.run(init)
        else:
            while len(sess.run(uninit)):
                time.sleep(0.1)
        seen, steps, t0, t_first = [], 0, time.time(), None
        while True:
            try:
                got, _ = sess.run([ids, train])
            except tf.errors.OutOfRangeError:
                break  # every feeder is done and this worker's queue is drained
            if t_first is None:
                t_first = time.time()
            seen.append(got)
            steps += 1
        dt = time.time() - (t_first or t0)
        seen = np.concatenate(seen) if seen else np.zeros(0, np.int64)
        np.save(os.path.join(a.out, f"ids_worker{task}.npy"), seen)
        print(f"worker {task}: {len(seen)} records in {steps} steps, {dt:.2f} s from the first "
              f"step to OutOfRange", flush=True)
        open(os.path.join(a.out, f"done_worker{task}"), "w").close()
        if task == 0:  # the chief reports the model once every worker is done
            deadline = time.time() + 120
            while time.time() < deadline and not all(
                    os.path.exists(os.path.join(a.out, f"done_worker{i}"))
                    for i in range(nworkers)):
                time.sleep(0.1)
            wv, bv = sess.run([w, b])
            with open(os.path.join(a.out, "model.json"), "w") as f:
                json.dump({"w": wv.tolist(), "b": float(bv)}, f)
            print(f"worker 0: learned w={[round(float(v), 4) for v in wv]} b={bv:.4f}", flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip TensorFlow's slow teardown of gRPC channels


if __name__ == "__main__":
    main()
