#!/usr/bin/env python3
"""A task of bench/bench_dist.py's loopback cluster (W6, distributed-feeding.md 5): the ps, or a
worker running the same training step on batches of D5 from one input of each W6 variant.

    dist_worker.py ps|worker       (TF_CONFIG in the environment gives the cluster and the task)

The ps serves until killed.  A worker starts its server, prints `UP`, then obeys one JSON command
per line on standard input (bench_dist.py is the only user):

  {"cmd": "prepare", "rep": K, "input": INPUT, ...}   builds a fresh graph for repetition K
        (every name under the scope INPUT_rK, so nothing of an earlier repetition is reused on a
        server), opens the session, initializes the model (worker 0; the others wait for it),
        creates the input's queue on its device and prints `PREPARED {json}`;
  {"cmd": "go"}       runs steps until the input ends (OutOfRange, or end of feed for tfos) and
        prints `RESULT {json}`: rows, steps and the checksums, and CLOCK_MONOTONIC times (the
        clock is shared by every process of the machine) of the go, of the first step's start
        and end and of the end of input;
  {"cmd": "exit"}.

The step is the same for every input: one batch of b <= B rows -> on the worker, the
order-independent checksum of W4 (the sum of the float bit patterns as uint32, of the ints and of
the string bytes) and a tiny SGD step (a linear model of the 6 floats, 7 parameters on
/job:ps/task:0, shared by the workers); only scalars are fetched.

Inputs (the worker's part of each variant):
  queue-batches  the batch-element FIFOQueue `NAME_w<i>` on this worker (no shapes; tfq-feed
                 --to workers --elements batches, the Python feeder, the C limit feeder):
                 dequeue() one batch per step; with "acks": true (tfq-feed --acks) an element
                 starts with an int64 key, and the step's run also acknowledges the batch
                 (tools/tfq_feed_worker.py's ack(), control-dependent on the training op);
  queue-rows     the per-row FIFOQueue `NAME` on /job:ps/task:0 (shapes [[]] * 10, capacity
                 8 * B; tfq-feed --to ps --elements rows): dequeue_up_to(B);
  tf1            string_input_producer(shard, num_epochs=1, shuffle=False) -> TextLineReader
                 .read_up_to(1024) -> decode_csv -> shuffle_batch(B, capacity=10k+3B,
                 min_after_dequeue=10k, num_threads=2, enqueue_many=True,
                 allow_smaller_final_batch=True) under QueueRunners and a Coordinator;
  tfdata-csv     CsvDataset(shard) -> shuffle(10k) -> batch(B) -> prefetch(1);
  tfdata-textline TextLineDataset(shard) -> batch(1024) -> map(decode_csv, 2) -> unbatch ->
                 shuffle(10k) -> batch(B) -> prefetch(1);
  tfos           TensorFlowOnSpark's DataFeed.next_batch(B): one proxied get() + task_done() per
                 row from the JoinableQueue of this worker's multiprocessing manager
                 (dist_peers.py tfos-manager), None = end of feed, then the step through
                 feed_dict (placeholders in place of the dequeue).
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

NF, NI = 6, 3
NCOLS = NF + NI + 1


def emit(tag, obj=None):
    sys.stdout.write(tag + (" " + json.dumps(obj) if obj is not None else "") + "\n")
    sys.stdout.flush()


def dtypes(tf):
    return [tf.float32] * NF + [tf.int32] * NI + [tf.string]


def step_ops(tf, cols, index, lr=1e-3):
    """The training step of every variant: [rows, fsum, isum, ssum, loss, train_op]."""
    v1 = tf.compat.v1
    with tf.device("/job:ps/task:0"):
        w = v1.get_variable("w", [NF, 1], tf.float32, v1.zeros_initializer())
        b = v1.get_variable("b", [], tf.float32, v1.zeros_initializer())
    with tf.device(f"/job:worker/task:{index}"):
        f, ints, s = cols[:NF], cols[NF:NF + NI], cols[NF + NI]
        for c in cols:
            c.set_shape([None])
        n = tf.size(s, out_type=tf.int64)
        fsum = tf.add_n([tf.reduce_sum(tf.cast(tf.bitcast(c, tf.uint32), tf.int64)) for c in f])
        isum = tf.add_n([tf.reduce_sum(tf.cast(c, tf.int64)) for c in ints])
        ssum = tf.reduce_sum(tf.cast(tf.io.decode_raw(tf.strings.reduce_join(s), tf.uint8),
                                     tf.int64))
        x = tf.stack(f, axis=1) / 1000.0
        y = tf.cast(ints[0], tf.float32) / 1e5
        pred = tf.squeeze(tf.matmul(x, w), 1) + b
        loss = tf.reduce_mean(tf.square(pred - y))
        train = v1.train.GradientDescentOptimizer(lr).minimize(loss)
    return [n, fsum, isum, ssum, loss, train], [w, b]


def fifo(tf, capacity, name, device, rows, acks=False):
    with tf.device(device):
        return tf.queue.FIFOQueue(capacity, ([tf.int64] if acks else []) + dtypes(tf),
                                  shapes=[[]] * NCOLS if rows else None, shared_name=name,
                                  name=name)


def defaults_v1():
    return [[0.0]] * NF + [[0]] * NI + [[""]]


class Worker:
    def __init__(self, tf, server, index):
        self.tf, self.server, self.index = tf, server, index
        self.sess = None

    def prepare(self, c):
        tf = self.tf
        v1 = tf.compat.v1
        if self.sess is not None:
            self.sess.close()
        self.c, self.cmd = c, c["input"]
        i, B = self.index, int(c["batch"])
        dev = f"/job:worker/task:{i}"
        self.graph = g = tf.Graph()
        self.queue_runners = False
        self.iter_init = None
        self.feed = None
        with g.as_default(), v1.variable_scope("%s_r%d" % (c["input"].replace("-", "_"),
                                                            int(c["rep"]))):
            warm = []
            key = None
            if c["input"] == "queue-batches":
                acks = bool(c.get("acks"))
                q = fifo(tf, int(c["capacity"]), "%s_w%d" % (c["queue"], i), dev, False, acks)
                with tf.device(dev):
                    cols = list(q.dequeue())
                if acks:  # tfq-feed --acks: element = (int64 key, columns...)
                    key, cols = cols[0], cols[1:]
                warm.append(q.size())
            elif c["input"] == "queue-rows":
                q = fifo(tf, int(c["capacity"]), c["queue"], "/job:ps/task:0", True)
                with tf.device(dev):
                    cols = list(q.dequeue_up_to(B))
                warm.append(q.size())
            elif c["input"] == "tf1":
                with tf.device(dev):
                    files = v1.train.string_input_producer(c["files"], num_epochs=1,
                                                           shuffle=False)
                    reader = v1.TextLineReader()
                    _, lines = reader.read_up_to(files, int(c.get("read_batch", 1024)))
                    dec = v1.decode_csv(lines, defaults_v1())
                    mad = int(c.get("min_after_dequeue", 10000))
                    cols = list(v1.train.shuffle_batch(
                        dec, batch_size=B, capacity=mad + 3 * B, min_after_dequeue=mad,
                        num_threads=2, enqueue_many=True, allow_smaller_final_batch=True,
                        seed=int(c.get("seed", 1))))
                self.queue_runners = True
            elif c["input"] in ("tfdata-csv", "tfdata-textline"):
                mad = int(c.get("min_after_dequeue", 10000))
                with tf.device(dev):
                    if c["input"] == "tfdata-csv":
                        d = [tf.constant(0.0)] * NF + [tf.constant(0)] * NI + [tf.constant("")]
                        ds = tf.data.experimental.CsvDataset(c["files"], d)
                    else:
                        d = defaults_v1()
                        ds = (tf.data.TextLineDataset(c["files"])
                              .batch(int(c.get("read_batch", 1024)))
                              .map(lambda line: tuple(tf.io.decode_csv(line, d)),
                                   num_parallel_calls=2).unbatch())
                    ds = ds.shuffle(mad, seed=int(c.get("seed", 1))).batch(B).prefetch(1)
                    it = v1.data.make_initializable_iterator(ds)
                    cols = list(it.get_next())
                self.iter_init = it.initializer
            elif c["input"] == "tfos":
                with tf.device(dev):
                    cols = [v1.placeholder(t, [None]) for t in dtypes(tf)]
                self.feed = cols
            else:
                raise ValueError("unknown input %r" % c["input"])
            fetch, model = step_ops(tf, cols, i)
            run_fetch = fetch[:4] + [fetch[5]]
            if key is not None:
                # tfq_feed_worker.ack (tools/): key << 6 | task -> rows into NAME_acked on the
                # ps, control-dependent on the training op, in the same run as the step
                sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
                    os.path.abspath(__file__))), "tools"))
                import tfq_feed_worker as tfw
                run_fetch.append(tfw.ack(key, fetch[0], fetch[5], i, queue=c["queue"]))
            init = v1.variables_initializer(model)
            ready = v1.report_uninitialized_variables(model)
            local = v1.local_variables_initializer()
        cfg = v1.ConfigProto(device_filters=["/job:ps", dev])
        self.sess = v1.Session(self.server.target, graph=g, config=cfg)
        if i == 0:
            self.sess.run(init)
        else:  # the chief (worker 0) initializes the shared model; wait for it
            end = time.monotonic() + 120
            while len(self.sess.run(ready)) and time.monotonic() < end:
                time.sleep(0.05)
        self.sess.run(local)
        if warm:
            self.sess.run(warm)  # creates the queue on its device before any feeder runs
        if self.feed:
            self.run = self.sess.make_callable(run_fetch, feed_list=self.feed)
        else:
            # The same TF_SessionRun as the steps (run options do not change the graph the
            # master caches), once now with a short deadline: the step's graph is pruned,
            # partitioned and registered on this worker and the ps before the window.  Nothing
            # is lost: no feeder runs yet, queue runners are not started, the iterator is not
            # initialized (FailedPrecondition).
            self.run = self.sess.make_callable(run_fetch, accept_options=True)
            try:
                self.run(options=v1.RunOptions(timeout_in_ms=300))
            except (tf.errors.DeadlineExceededError, tf.errors.FailedPreconditionError,
                    tf.errors.OutOfRangeError, tf.errors.CancelledError):
                pass
        if c["input"] == "tfos":
            from multiprocessing.managers import BaseManager

            class TFManager(BaseManager):
                pass
            TFManager.register("get_queue")
            m = TFManager(address=c["manager"], authkey=c["authkey"].encode())
            m.connect()
            self.mq = m.get_queue("input")
        return {"index": i, "input": c["input"], "rep": c["rep"]}

    def next_batch(self, n):
        """TFoS DataFeed.next_batch(n) (TFNode.py): one proxied get() per row, task_done() per
        item, None = end of feed (done_feeding)."""
        q, items, done = self.mq, [], False
        while len(items) < n:
            item = q.get(block=True)
            q.task_done()
            if item is None:
                done = True
                break
            items.append(item)
        return items, done

    def go(self):
        import numpy as np
        tf = self.tf
        res = {"index": self.index, "rows": 0, "steps": 0, "fsum": 0, "isum": 0, "ssum": 0}
        coord = threads = None
        t_go = time.monotonic()
        if self.queue_runners:
            coord = tf.compat.v1.train.Coordinator()
            threads = tf.compat.v1.train.start_queue_runners(sess=self.sess, coord=coord)
        if self.iter_init is not None:
            self.sess.run(self.iter_init)
        t_first = t_first_end = None
        B = int(self.c["batch"])
        while True:
            t = time.monotonic()
            try:
                if self.feed:
                    items, done = self.next_batch(B)
                    if not items:
                        break
                    cs = list(zip(*items))
                    args = [np.array(cs[k], np.float32) for k in range(NF)] + \
                        [np.array(cs[k], np.int32) for k in range(NF, NF + NI)] + \
                        [np.array(cs[NF + NI], object)]
                    n, fs, is_, ss = self.run(*args)[:4]
                else:
                    done = False
                    n, fs, is_, ss = self.run()[:4]
            except tf.errors.OutOfRangeError:
                break
            if t_first is None:
                t_first, t_first_end = t, time.monotonic()
            res["rows"] += int(n)
            res["steps"] += 1
            res["fsum"] += int(fs)
            res["isum"] += int(is_)
            res["ssum"] += int(ss)
            if done:
                break
        t_end = time.monotonic()
        if coord is not None:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
        res.update(t_go=t_go, t_first=t_first if t_first is not None else t_end,
                   t_first_end=t_first_end if t_first_end is not None else t_end, t_end=t_end)
        return res


def main():
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role not in ("ps", "worker"):
        sys.exit("usage: dist_worker.py ps|worker   (TF_CONFIG gives the cluster and the task)")
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    tf.compat.v1.disable_eager_execution()
    c = json.loads(os.environ["TF_CONFIG"])
    index = int(c["task"]["index"])
    server = tf.distribute.Server(tf.train.ClusterSpec(c["cluster"]), job_name=role,
                                  task_index=index, start=True)
    emit("UP", {"role": role, "index": index, "pid": os.getpid()})
    if role == "ps":
        server.join()
        return
    w = Worker(tf, server, index)
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            if cmd["cmd"] == "prepare":
                emit("PREPARED", w.prepare(cmd))
            elif cmd["cmd"] == "go":
                emit("RESULT", w.go())
            elif cmd["cmd"] == "exit":
                break
        except Exception as e:  # reported to the driver, which fails the variant
            emit("ERROR", {"index": index, "error": "%s: %s" % (type(e).__name__,
                                                                  str(e).splitlines()[0][:300]
                                                                  if str(e) else "")})
    if w.sess is not None:
        w.sess.close()


if __name__ == "__main__":
    main()
