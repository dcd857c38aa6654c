"""One TensorFlow task of the Spark example, in tf.compat.v1 graph mode: what TensorFlowOnSpark
calls the ``main_fun`` of a node.  A barrier task of tfq.spark (the installed package) starts it as a
child process and talks to it over standard input and output, one line at a time:

    task -> node   the node's TF_CONFIG (a JSON object on one line), sent once the barrier
                   stage's allGather has produced it; TensorFlow is imported meanwhile
    node -> task   READY <target>              the server listens
    node -> task   ROUND <queue> <rows> <steps> <t_first> <t_end>     a round is trained
    node -> task   STALL <queue> <steps>       (--stall) this worker stops dequeuing
    node -> task   TRAINED                     every round is done
    task -> node   MODEL (chief) or EXIT       after the stage's barrier: all workers are done
    node -> task   MODEL {"w": [...], "b": ...}

End of file on standard input at any point (the barrier task is gone: killed, cancelled, failed)
makes the node exit at once, so a node never outlives its Spark task.

  ps      serves the model variables w[4], b and tfq-feed's done sets; nothing else.
  worker  for each --queues name in turn (a "round": one feeding job), dequeue()s tfq-feed's
          batches from <name>_w<i> on its own task until OutOfRange and trains y = x.w + b by
          SGD (the variables live on the ps: the workers train one model asynchronously); it
          saves the ids of every row it trained in <out>/<name>_w<i>.npy.

    python node.py --queues s1,s2 --out DIR [--batch 1000] [--stall s2:2]
"""
import argparse
import json
import os
import sys
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tfq.cluster as tfw  # noqa: E402  (installed: pip install . / scripts/setup)

# The columns of the example's CSV files, as tfq-feed's -d: id, x0..x3, y.
SPEC = "int64,float32,float32,float32,float32,float32"

_commands = []
_cv = threading.Condition()


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def watch_stdin():
    """Commands from the barrier task; end of file means the task is gone: leave at once."""
    for line in sys.stdin:
        with _cv:
            _commands.append(line.strip())
            _cv.notify_all()
    os._exit(3)


def command():
    with _cv:
        while not _commands:
            _cv.wait()
        return _commands.pop(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--queues", required=True, help="one round per queue name, in order")
    ap.add_argument("--out", required=True, help="where <queue>_w<i>.npy go")
    ap.add_argument("--batch", type=int, default=tfw.DEFAULT_BATCH_SIZE, help="tfq-feed's -b")
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--stall", help="QUEUE:STEPS: worker --stall-worker stops dequeuing after "
                    "STEPS steps of round QUEUE, and stays alive (a worker that stops early)")
    ap.add_argument("--stall-worker", type=int, default=1)
    a = ap.parse_args()
    queues = [q for q in a.queues.split(",") if q]

    # Graph mode first: in eager mode Python replaces a queue's shared_name with a unique one.
    tf.compat.v1.disable_eager_execution()
    tf_config = sys.stdin.readline()
    if not tf_config.strip():
        sys.exit(3)  # the task went away before the cluster was known
    os.environ["TF_CONFIG"] = tf_config.strip()
    threading.Thread(target=watch_stdin, daemon=True).start()
    cluster, job, task = tfw.tf_config()
    server = tfw.start_server(cluster, job, task)
    say(f"READY {server.target}")
    if job == "ps":
        while True:  # serve until the task says EXIT (or goes away)
            if command() == "EXIT":
                os._exit(0)

    with tf.device("/job:ps/task:0"):
        w = tf.compat.v1.get_variable("w", [4], initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [], initializer=tf.compat.v1.zeros_initializer())
    steps_of = {}
    for q in queues:
        cols = tfw.dequeue(SPEC, queue=q, batch_size=a.batch, task_index=task)
        with tf.device(f"/job:worker/task:{task}"):
            ids, x, y = cols[0], tf.stack(cols[1:5], axis=1), cols[5]
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y))
            train = tf.compat.v1.train.GradientDescentOptimizer(a.lr).minimize(loss)
        steps_of[q] = (ids, train)
    uninit = tf.compat.v1.report_uninitialized_variables()
    init = tf.compat.v1.global_variables_initializer()
    stall_q, stall_after = (None, None)
    if a.stall and task == a.stall_worker:
        stall_q, n = a.stall.rsplit(":", 1)
        stall_after = int(n)

    with tf.compat.v1.Session(server.target, config=tfw.session_config(task)) as sess:
        if task == 0:
            sess.run(init)
        else:
            while len(sess.run(uninit)):
                time.sleep(0.1)
        for q in queues:
            ids, train = steps_of[q]
            seen, steps, t_first = [], 0, None
            while True:
                if q == stall_q and steps == stall_after:
                    say(f"STALL {q} {steps}")
                    while True:  # alive, listening, consuming nothing: until the task goes
                        time.sleep(3600)
                try:
                    got, _ = sess.run([ids, train])
                except tf.errors.OutOfRangeError:
                    break  # every feeder unit is done and this worker's queue is drained
                if t_first is None:
                    t_first = time.time()
                seen.append(got)
                steps += 1
            t_end = time.time()
            seen = np.concatenate(seen) if seen else np.zeros(0, np.int64)
            path = os.path.join(a.out, f"{q}_w{task}.npy")
            np.save(path + ".tmp.npy", seen)
            os.replace(path + ".tmp.npy", path)  # whoever waits for the file sees it whole
            say(f"ROUND {q} {len(seen)} {steps} {t_first or t_end:.3f} {t_end:.3f}")
        say("TRAINED")
        if command() == "MODEL":
            wv, bv = sess.run([w, b])
            say("MODEL " + json.dumps({"w": [float(v) for v in wv], "b": float(bv)}))
    os._exit(0)  # skip TensorFlow's slow teardown of gRPC channels


if __name__ == "__main__":
    main()
