"""One task of the example cluster: the ps (hosts the shared-name queue and the variables) or a
worker (dequeues batches that the tfq feeder pushed and trains a linear model), in
tf.compat.v1 graph mode.

    python node.py --job ps     --task 0 --cluster ps=H:P;worker=H:P,H:P ...
    python node.py --job worker --task i --cluster ... --out DIR
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def parse_cluster(text):
    jobs = {}
    for part in text.split(";"):
        name, addrs = part.split("=", 1)
        jobs[name] = addrs.split(",")
    return jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", required=True)
    ap.add_argument("--task", type=int, default=0)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--shared-name", default="tfq_feed")
    ap.add_argument("--capacity", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.2)
    a = ap.parse_args()

    # Graph mode first: in eager mode Python replaces a queue's shared_name with a unique one.
    tf.compat.v1.disable_eager_execution()
    jobs = parse_cluster(a.cluster)
    cluster = tf.train.ClusterSpec(jobs)
    server = tf.distribute.Server(cluster, job_name=a.job, task_index=a.task)
    if a.job == "ps":
        print(f"ps: serving {server.target}", flush=True)
        server.join()
        return

    nworkers = len(jobs["worker"])
    with tf.device("/job:ps/task:0"):
        # Must match the feeder's queue exactly: dtypes, shapes, capacity, container, name.
        q = tf.queue.FIFOQueue(a.capacity, [tf.int64, tf.float32, tf.float32],
                               shapes=[[], [a.dim], []], shared_name=a.shared_name,
                               name=a.shared_name)
        w = tf.compat.v1.get_variable("w", [a.dim], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [], initializer=tf.compat.v1.zeros_initializer())
    with tf.device(f"/job:worker/task:{a.task}"):
        ids, x, y = q.dequeue_up_to(a.batch)
        pred = tf.reduce_sum(x * w, axis=1) + b
        loss = tf.reduce_mean(tf.square(pred - y))
        train = tf.compat.v1.train.GradientDescentOptimizer(a.lr).minimize(loss)
    uninit = tf.compat.v1.report_uninitialized_variables()
    init = tf.compat.v1.global_variables_initializer()

    config = tf.compat.v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{a.task}"])
    with tf.compat.v1.Session(server.target, config=config) as sess:
        if a.task == 0:
            sess.run(init)
        else:
            while len(sess.run(uninit)):
                time.sleep(0.1)
        seen, steps, t0 = [], 0, time.time()
        while True:
            try:
                got, _ = sess.run([ids, train])
            except tf.errors.OutOfRangeError:
                break  # the feeder closed the queue and it is drained
            seen.append(got)
            steps += 1
        dt = time.time() - t0
        seen = np.concatenate(seen) if seen else np.zeros(0, np.int64)
        np.save(os.path.join(a.out, f"ids_worker{a.task}.npy"), seen)
        print(f"worker {a.task}: {len(seen)} records in {steps} steps, {dt:.2f} s", flush=True)
        open(os.path.join(a.out, f"done_worker{a.task}"), "w").close()
        if a.task == 0:  # the chief reports the model once every worker is done
            deadline = time.time() + 120
            while time.time() < deadline and not all(
                    os.path.exists(os.path.join(a.out, f"done_worker{i}")) for i in range(nworkers)):
                time.sleep(0.1)
            wv, bv = sess.run([w, b])
            with open(os.path.join(a.out, "model.json"), "w") as f:
                json.dump({"w": wv.tolist(), "b": float(bv)}, f)
            print(f"worker 0: learned w={np.round(wv, 4).tolist()} b={bv:.4f}", flush=True)
    sys.stdout.flush()
    os._exit(0)  # skip TensorFlow's slow teardown of gRPC channels


if __name__ == "__main__":
    main()
