#!/usr/bin/env python3
"""The Python feeders of bench/bench_dist.py (W6, distributed-feeding.md 5), one per process:

  pyfeed FILE...      the best Python feeder of numpy batches in the tfq-bc topology (issue #8's
                      "best Python feeder"): the rows parsed beforehand (pyarrow.csv, float32 /
                      int32 / bytes) and shuffled once, then cut into batches of B rows; one
                      thread per worker queue (the batch-element FIFOQueue NAME_w<i> on
                      /job:worker/task:i, no shapes), each taking the next batch and running
                      sess.make_callable(enqueue, feed_list)(*batch) in its own session to that
                      worker (Session.run releases the GIL; make_callable is the fastest client
                      of bench_feed.py); the queues are closed at the end.  Prints `READY` when
                      parsed and connected, starts on a `go` line on standard input, prints
                      `DONE {json}`.
        --cluster JSON --queue NAME --batch B [--capacity C] [--threads-per-queue T]
        [--mode callable|feed_dict] [--seed S]
  tfos-manager ADDR   a stand-in for the TFManager of a TensorFlowOnSpark executor
                      (TFManager.py): a multiprocessing BaseManager serving the JoinableQueue
                      'input' on the unix socket ADDR (authkey from $TFOS_AUTHKEY); prints `UP`
                      and serves until killed;
  tfos-produce ADDR FILE...
                      a stand-in for the Spark task of TFSparkNode.train (InputMode.SPARK): the
                      rows parsed with Python's csv module (6 float, 3 int, 1 str) and put one at
                      a time into the manager's queue (one pickled proxy call each); then
                      queue.join() (the task completes when every row was task_done()) and None
                      (the end of feed TFCluster.shutdown puts).
"""
import argparse
import csv
import json
import os
import sys
import time

NF, NI = 6, 3


def load(files):
    """The columns of the files in order: 6 float32, 3 int32, 1 object array of bytes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pc
    names = ["c%d" % i for i in range(NF + NI + 1)]
    types = {n: (pa.float32() if i < NF else pa.int32() if i < NF + NI else pa.string())
             for i, n in enumerate(names)}
    t = pa.concat_tables([pc.read_csv(f, read_options=pc.ReadOptions(column_names=names),
                                      convert_options=pc.ConvertOptions(column_types=types))
                          for f in files])
    cols = [t.column(i).to_numpy() for i in range(NF + NI)]
    cols.append(np.array([s.encode() for s in t.column(NF + NI).to_pylist()], object))
    return cols


def pyfeed(a):
    import threading

    import numpy as np
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    cl = json.loads(a.cluster)
    workers = cl["worker"]
    cols = load(a.files)
    n = len(cols[0])
    perm = np.random.default_rng(a.seed).permutation(n)
    cols = [c[perm] for c in cols]
    B = a.batch
    batches = [[c[o:o + B] for c in cols] for o in range(0, n, B)]
    types = [tf.float32] * NF + [tf.int32] * NI + [tf.string]
    clients = []
    for i, addr in enumerate(workers):
        g = tf.Graph()
        dev = "/job:worker/task:%d" % i
        with g.as_default(), tf.device(dev):
            name = "%s_w%d" % (a.queue, i)
            q = tf.queue.FIFOQueue(a.capacity, types, shared_name=name, name=name)
            ph = [v1.placeholder(t, [None]) for t in types]
            enq = q.enqueue(ph)
            close = q.close()
            size = q.size()
        sess = v1.Session("grpc://" + addr, graph=g,
                          config=v1.ConfigProto(device_filters=[dev]))
        sess.run(size)
        run = sess.make_callable(enq, feed_list=ph) if a.mode == "callable" else None
        clients.append((sess, run, enq, ph, close))
    print("READY %d" % n, flush=True)
    if sys.stdin.readline().strip() != "go":
        return 1
    t0 = time.monotonic()
    nxt = [0]
    lock = threading.Lock()
    errors = []

    def work(k):
        sess, run, enq, ph, _ = clients[k]
        try:
            while True:
                with lock:
                    if nxt[0] >= len(batches):
                        return
                    b = batches[nxt[0]]
                    nxt[0] += 1
                if run:
                    run(*b)
                else:
                    sess.run(enq, feed_dict=dict(zip(ph, b)))
        except Exception as e:  # noqa: BLE001 (reported, the run fails)
            errors.append(str(e).splitlines()[0] if str(e) else type(e).__name__)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(len(clients))
          for _ in range(a.threads_per_queue)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for c in clients:
        c[0].run(c[4])
    dt = time.monotonic() - t0
    print("DONE " + json.dumps({"rows": n, "batches": len(batches), "seconds": dt,
                                "errors": errors}), flush=True)
    for c in clients:
        c[0].close()
    return 1 if errors else 0


def manager_class():
    from multiprocessing.managers import BaseManager

    class TFManager(BaseManager):
        pass
    return TFManager


def tfos_manager(a):
    from multiprocessing import JoinableQueue
    qdict = {"input": JoinableQueue()}
    M = manager_class()
    M.register("get_queue", callable=lambda name: qdict[name])
    m = M(address=a.addr, authkey=os.environ.get("TFOS_AUTHKEY", "w6").encode())
    server = m.get_server()
    print("UP %d" % os.getpid(), flush=True)
    server.serve_forever()


def tfos_produce(a):
    M = manager_class()
    M.register("get_queue")
    m = M(address=a.addr, authkey=os.environ.get("TFOS_AUTHKEY", "w6").encode())
    m.connect()
    q = m.get_queue("input")
    n = 0
    for path in a.files:
        with open(path, newline="") as f:
            for r in csv.reader(f):
                q.put((float(r[0]), float(r[1]), float(r[2]), float(r[3]), float(r[4]),
                       float(r[5]), int(r[6]), int(r[7]), int(r[8]), r[9]), block=True)
                n += 1
    q.join()
    q.put(None)
    print("DONE " + json.dumps({"rows": n}), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pyfeed")
    p.add_argument("--cluster", required=True, help="the cluster JSON (TF_CONFIG's 'cluster')")
    p.add_argument("--queue", required=True)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--capacity", type=int, default=8)
    p.add_argument("--threads-per-queue", type=int, default=1)
    p.add_argument("--mode", choices=["callable", "feed_dict"], default="callable")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("files", nargs="+")
    p = sub.add_parser("tfos-manager")
    p.add_argument("addr")
    p = sub.add_parser("tfos-produce")
    p.add_argument("addr")
    p.add_argument("files", nargs="+")
    a = ap.parse_args()
    return {"pyfeed": pyfeed, "tfos-manager": tfos_manager, "tfos-produce": tfos_produce}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
