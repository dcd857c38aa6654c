"""The coordination-layer families of the conformance harness (docs/conformance.md): the
Coordinator, the QueueRunner, every batcher and every producer, run in TF (tf.compat.v1, graph
mode) and in tfq (the driver conformance_coord, public API only), compared step by step.

Threads make TF's results timing-dependent, so every scenario is built to be deterministic:
one enqueue thread per source, a capacity that holds the whole input, the batch (or producer)
queue awaited closed before the first dequeue, and multi-source joins fed one source at a time
(source i+1 gets its input once the thread of source i has ended).  With that, seeded shuffles
come out in TF's exact order and every final OutOfRange message is compared in full.

run_conformance.py imports this module and passes itself as `h` (its helpers: hx, tf_err,
msg_of, arr_tok, tensor_tok, comp_tok, np_array, rand_value, TF_DT, same_result, show,
new_session, Report).  The driver's side: conformance_coord.c and conformance_batch.c.
"""
import random
import sys
import threading
import time

import numpy as np

import tensorflow.compat.v1 as tf

FAMILIES = ("coordinator", "queue_runner", "batchers", "producers")
RUNTIME_ERROR_CODE = 4  # coord.h: stragglers are DEADLINE_EXCEEDED (TF: RuntimeError)


def exc_class(code):
    return tf.errors.exception_type_from_error_code(code)


def py_err(h, e):
    """An exception as a result token: OpError with its code; RuntimeError (the straggler
    error) as DEADLINE_EXCEEDED (coord.h); ValueError/TypeError (graph construction) as
    "PYERR 3", where tfq's message need only be contained in TF's."""
    if isinstance(e, tf.errors.OpError):
        return h.tf_err(e)
    if isinstance(e, RuntimeError):
        return "ERR %d %s" % (RUNTIME_ERROR_CODE, h.hx(str(e).encode()))
    return "PY" + h.tf_err(e)


def run_opts(ms):
    return tf.RunOptions(timeout_in_ms=int(ms))


def wait_until(pred, secs=10.0):
    end = time.time() + secs
    while not pred() and time.time() < end:
        time.sleep(0.001)


# --------------------------------------------------------------------------------------------
# Coordinator scripts

def coord_scripts():
    """(id, clean codes, [(op, args)]): the cases of tf1-queues §7.1 / §9 90-100."""
    S = []

    def s(sid, ops, clean=()):
        S.append((sid, list(clean), ops))

    s("stop_api", [("should",), ("wait", 10000), ("stop", 0, ""), ("should",), ("wait", 10000),
                   ("joined",), ("join", 1000000, 0), ("joined",)])
    s("stop_with_error", [("stop", 3, "bad input"), ("should",), ("error",),
                          ("join", 1000000, 0), ("joined",), ("error",)])
    s("first_error_wins", [("stop", 3, "First"), ("stop", 13, "Too late"), ("stop", 0, ""),
                           ("error",), ("join", 1000000, 0)])
    s("threads_first_error", [("thread", "a", "stopper", 0, 3, "First"),
                              ("thread", "b", "stopper", 300, 9, "Too late"),
                              ("thread", "c", "poll"), ("join", 5000000, 0), ("should",)])
    s("clean_out_of_range", [("stop", 11, "Reached limit of 3"), ("should",), ("error",),
                             ("join", 1000000, 0), ("joined",)])
    s("clean_custom_code", [("stop", 1, "Enqueue operation was cancelled"), ("error",),
                            ("join", 1000000, 0)], clean=[1])
    s("custom_clean_keeps_out_of_range", [("stop", 11, "end"), ("join", 1000000, 0)], clean=[1])
    s("cancelled_is_not_clean", [("stop", 1, "Enqueue operation was cancelled"),
                                 ("join", 1000000, 0)])
    s("stop_after_join_raises", [("stop", 0, ""), ("join", 1000000, 0), ("stop", 3, "late"),
                                 ("joined",), ("error",), ("stop", 11, "clean after join"),
                                 ("should",)])
    s("stop_after_join_keeps_first", [("stop", 3, "first"), ("join", 1000000, 0),
                                      ("stop", 13, "second"), ("error",), ("joined",)])
    s("clear_stop", [("stop", 3, "x"), ("join", 1000000, 0), ("joined",), ("clear",),
                     ("should",), ("joined",), ("error",), ("wait", 10000), ("stop", 0, ""),
                     ("join", 1000000, 0)])
    s("grace_expires", [("thread", "worker", "poll"), ("thread", "sleepy", "sleeper", 2000),
                        ("stop", 0, ""), ("join", 200000, 0), ("joined",)])
    s("grace_ignore_live_threads", [("thread", "sleepy2", "sleeper", 2000), ("stop", 0, ""),
                                    ("join", 200000, 1), ("joined",)])
    s("grace_zero", [("thread", "sleepy3", "sleeper", 2000), ("stop", 0, ""), ("join", 0, 0)])
    s("error_beats_stragglers", [("thread", "sleepy4", "sleeper", 2000), ("stop", 3, "boom"),
                                 ("join", 200000, 0)])
    s("clean_stop_with_straggler", [("thread", "sleepy5", "sleeper", 2000),
                                    ("stop", 11, "end"), ("join", 200000, 0)])
    s("join_without_stop_waits", [("thread", "short", "sleeper", 300), ("join", 0, 0),
                                  ("should",), ("joined",)])
    s("wait_for_stop_async", [("thread", "stopper", "stopper", 100, 0, ""),
                              ("wait", 10000000), ("join", 1000000, 0)])
    s("stop_from_thread_pollers_exit", [("thread", "p1", "poll"), ("thread", "p2", "poll"),
                                        ("thread", "s", "stopper", 50, 0, ""),
                                        ("join", 5000000, 0), ("should",)])
    s("looper_timer", [("looper", "L1", 10000, 3, 0, ""), ("join", 5000000, 0),
                       ("count", "L1")])
    s("looper_back_to_back", [("looper", "L2", -1, 3, 0, ""), ("join", 5000000, 0),
                              ("count", "L2")])
    s("looper_error", [("looper", "L3", -1, 2, 3, "looper failed"), ("join", 5000000, 0),
                       ("count", "L3"), ("error",)])
    return S


def coord_lines(h, scripts):
    lines = []
    for sid, clean, ops in scripts:
        lines.append("cbegin %s %s" % (sid, ",".join(str(c) for c in clean) or "-"))
        for op in ops:
            a = list(op[1:])
            if op[0] == "stop" or (op[0] == "thread" and a[1] == "stopper"):
                a[-1] = h.hx(a[-1])
            if op[0] == "looper":
                a[-1] = h.hx(a[-1])
            lines.append(("cop %s %s" % (op[0], " ".join(str(x) for x in a))).rstrip())
        lines.append("cend")
    return lines


def tf_coord_script(h, clean, ops):
    ctypes = None
    if clean:
        ctypes = tuple([tf.errors.OutOfRangeError] + [exc_class(c) for c in clean])
    coord = tf.train.Coordinator(clean_stop_exception_types=ctypes)
    out, loopers = [], {}

    def report(code, msg):
        if not code:
            coord.request_stop()
            return
        try:
            raise exc_class(code)(None, None, msg)
        except tf.errors.OpError:
            coord.request_stop(sys.exc_info())

    for op in ops:
        name, a = op[0], op[1:]
        try:
            if name == "stop":
                report(a[0], a[1])
                out.append("OK")
            elif name == "should":
                out.append("B %d" % coord.should_stop())
            elif name == "wait":
                out.append("B %d" % coord.wait_for_stop(a[0] / 1e6))
            elif name == "clear":
                coord.clear_stop()
                out.append("OK")
            elif name == "joined":
                out.append("B %d" % coord.joined)
            elif name == "error":
                coord.raise_requested_exception()
                out.append("OK")
            elif name == "join":
                coord.join(stop_grace_period_secs=a[0] / 1e6, ignore_live_threads=bool(a[1]))
                out.append("OK")
            elif name == "thread":
                tname, kind = a[0], a[1]
                if kind == "poll":
                    def fn():
                        while not coord.should_stop():
                            time.sleep(0.001)
                elif kind == "stopper":
                    def fn(ms=a[2], code=a[3], msg=a[4]):
                        time.sleep(ms / 1000.0)
                        report(code, msg)
                else:
                    def fn(ms=a[2]):
                        time.sleep(ms / 1000.0)
                t = threading.Thread(target=fn, name=tname, daemon=True)
                coord.register_thread(t)
                t.start()
                out.append("OK")
            elif name == "looper":
                tname, interval, n, code, msg = a
                box = {"count": 0}

                def target(box=box, n=n, code=code, msg=msg):
                    box["count"] += 1
                    if box["count"] == n:
                        if code:
                            raise exc_class(code)(None, None, msg)
                        coord.request_stop()
                t = tf.train.LooperThread(coord, None if interval < 0 else interval / 1e6,
                                          target=target)
                t.name = tname
                t.start()
                loopers[tname] = box
                out.append("OK")
            elif name == "count":
                out.append("COUNT %d" % loopers[a[0]]["count"])
            elif name == "sleep":
                time.sleep(a[0] / 1000.0)
                out.append("OK")
        except Exception as e:  # noqa: BLE001 - every raise is a result
            out.append(py_err(h, e))
    return out


# --------------------------------------------------------------------------------------------
# QueueRunner scenarios

RUNNER_VARIANTS = ["close_at_end", "cancel_on_stop", "failing_op", "failing_op_nocoord",
                   "stopped_before_start"]


def tf_runner(h, sid, v):
    at_end, on_stop = v == "close_at_end", v == "cancel_on_stop"
    failing, nocoord, before = v.startswith("failing_op"), v == "failing_op_nocoord", \
        v == "stopped_before_start"
    g = tf.Graph()
    with g.as_default():
        q1 = tf.FIFOQueue(2 if on_stop else 10, tf.int32, shapes=[[2]] if failing else [[]],
                          shared_name="rq_" + sid)
        qa = tf.FIFOQueue(100, tf.int32, shapes=None if failing else [[]])
        qb = tf.FIFOQueue(100, tf.int32, shapes=[[2]] if failing else [[]])
        if on_stop or before:
            ops = [q1.enqueue(tf.constant(7))]
        else:
            ops = [q1.enqueue(qa.dequeue()), q1.enqueue(qb.dequeue())]
        qr = tf.train.QueueRunner(q1, ops)
        ph = tf.placeholder(tf.int32)
        put = {(id(q), m): (q.enqueue_many([ph]) if m else q.enqueue([ph]))
               for q in (q1, qa, qb) for m in (0, 1)}
        close = {id(q): q.close() for q in (q1, qa, qb)}
        deq, size, is_closed = q1.dequeue(), q1.size(), q1.is_closed()
    sess = h.new_session(g)
    coord = None if nocoord else tf.train.Coordinator()
    out = []

    def res(fn):
        try:
            r = fn()
            out.append("OK" if r is None else "OK " + h.arr_tok(r))
        except Exception as e:  # noqa: BLE001
            out.append(py_err(h, e))

    def rput(q, vals, many, do_close):
        def fn():
            if vals is not None:
                sess.run(put[(id(q), many)], {ph: np.array(vals, np.int32)})
            if do_close:
                sess.run(close[id(q)])
        res(fn)

    def rdeq(ms):
        res(lambda: sess.run(deq, options=run_opts(ms)))

    def closed_wait(secs):
        wait_until(lambda: sess.run(is_closed), secs)
        out.append("B %d" % sess.run(is_closed))

    def sz():
        out.append("SIZE %d" % sess.run(size))

    old_hook, old_verb = threading.excepthook, tf.logging.get_verbosity()
    if nocoord:  # TF re-raises in the thread and logs "Exception in QueueRunner"
        threading.excepthook = lambda args: None
        tf.logging.set_verbosity(tf.logging.FATAL)
    try:
        if at_end:
            rput(qa, [1, 2, 3], 1, 1)
        if before:
            res(lambda: coord.request_stop())
        threads = []

        def start():
            threads.extend(qr.create_threads(sess, coord=coord, start=True))
        res(start)
        if at_end:
            wait_until(lambda: not threads[0].is_alive())
            sz()
            out.append("B %d" % sess.run(is_closed))
            for _ in range(3):
                rdeq(10000)
            rdeq(100)
            rput(qb, [4, 5], 1, 1)
            closed_wait(10)
            sz()
        elif on_stop:
            wait_until(lambda: sess.run(size) >= 2)
            time.sleep(0.05)
            sz()
        elif failing:
            rput(qb, [[1, 2], [3, 4], [5, 6]], 1, 0)
            wait_until(lambda: sess.run(size) >= 3)
            sz()
            rput(qa, [7, 8, 9], 0, 0)
            if nocoord:
                wait_until(lambda: not threads[0].is_alive())
                out.append("COUNT %d" % len(qr.exceptions_raised))
                rput(qb, [[10, 11], [12, 13]], 1, 0)
                wait_until(lambda: sess.run(size) >= 5)
                sz()
                out.append("B %d" % sess.run(is_closed))
                rput(qb, None, 0, 1)
                closed_wait(10)
            else:
                out.append("B %d" % coord.wait_for_stop(10))
        if nocoord:
            for t in threads:
                t.join(10)
            ex = qr.exceptions_raised
            out.append(py_err(h, ex[0]) if ex else "OK")
        else:
            res(lambda: coord.request_stop())
            res(lambda: coord.join(stop_grace_period_secs=0.2 if failing else 10))
            closed_wait(2)
            sz()
            out.append("COUNT %d" % len(qr.exceptions_raised))
        if on_stop:
            rput(q1, 8, 0, 0)
        if failing and not nocoord:
            rput(qb, None, 0, 1)
        for _ in range(sess.run(size) + 1):
            rdeq(2000)
    finally:
        if coord is not None:
            coord.request_stop()
        threading.excepthook = old_hook
        tf.logging.set_verbosity(old_verb)
        sess.close()
    return out


# --------------------------------------------------------------------------------------------
# batchers

KIND_NAMES = {0: "batch", 1: "shuffle_batch", 2: "batch_join", 3: "shuffle_batch_join"}


class BatchCase:
    def __init__(self, bid, kind, maybe, bs, cap, comps, sources, min_after=0, graph_seed=None,
                 op_seed=None, many=False, pad=False, small=False, keep="none"):
        self.bid, self.kind, self.maybe, self.bs, self.cap = bid, kind, maybe, bs, cap
        self.comps, self.sources, self.min_after = comps, sources, min_after
        self.graph_seed, self.op_seed, self.many, self.pad = graph_seed, op_seed, many, pad
        self.small, self.keep = small, keep
        self.seeds = (0, 0)
        self.built = None  # (graph, ops) or an error token

    @property
    def shuffle(self):
        return self.kind in (1, 3)

    @property
    def join(self):
        return self.kind in (2, 3)

    def name(self):
        return "%s/%s%s%s%s%s/bs%d/keep=%s" % (
            self.bid, "maybe_" if self.maybe else "", KIND_NAMES[self.kind],
            "/many" if self.many else "", "/pad" if self.pad else "",
            "/small" if self.small else "", self.bs, self.keep)

    def line(self, h):
        comps = ";".join(h.comp_tok(dt, shp) for dt, shp in self.comps)
        out = ["batcher %s %d %d %d %d %d %d %d %d %d %s %s %s %d" % (
            self.bid, self.kind, self.bs, self.cap, self.min_after, self.seeds[0],
            self.seeds[1], self.many, self.pad, self.small, self.keep, "bq_" + self.bid, comps,
            len(self.sources))]
        for src in self.sources:
            out.append("src %d" % len(src))
            for elem in src:
                out.append(" ".join(h.tensor_tok(dt, shp, vals) for dt, shp, vals in elem))
        return out


def tf_build_batch(h, c):
    g = tf.Graph()
    try:
        with g.as_default():
            if c.graph_seed is not None:
                tf.set_random_seed(c.graph_seed)
            dtypes = [h.TF_DT[dt] for dt, _ in c.comps]
            srcs, feeds = [], []
            for _ in c.sources:
                q = tf.FIFOQueue(1000, dtypes)
                phs = [tf.placeholder(d) for d in dtypes]
                srcs.append(q)
                feeds.append((q.enqueue(phs), phs, q.close()))
            lead = [None] if c.many else []
            tl = []
            for q in srcs:
                d = q.dequeue()
                d = list(d) if isinstance(d, (list, tuple)) else [d]
                for t, (_, shp) in zip(d, c.comps):
                    t.set_shape(lead + list(shp))
                tl.append(d)
            keep, flag = None, None
            if c.keep == "even":
                keep = tf.equal(tf.math.floormod(tl[0][0], 2), 0)
            elif c.keep.startswith("flag:"):
                var = tf.Variable(c.keep[5] == "1", dtype=tf.bool, trainable=False)
                fph = tf.placeholder(tf.bool, [])
                flag = (var.assign(fph), fph)
                keep = tf.identity(var)
            elif c.keep.startswith("pat:"):
                keep = tf.constant([x == "T" for x in c.keep[4:]])
            shapes = [list(shp) for _, shp in c.comps]
            kw = dict(capacity=c.cap, enqueue_many=c.many, shapes=shapes,
                      allow_smaller_final_batch=c.small, shared_name="bq_" + c.bid)
            if not c.shuffle:
                kw["dynamic_pad"] = c.pad
            else:
                kw["min_after_dequeue"] = c.min_after
                kw["seed"] = c.op_seed
            if c.kind == 0:
                out = (tf.train.maybe_batch(tl[0], keep, c.bs, num_threads=1, **kw) if c.maybe
                       else tf.train.batch(tl[0], c.bs, num_threads=1, **kw))
            elif c.kind == 1:
                out = (tf.train.maybe_shuffle_batch(tl[0], c.bs, keep_input=keep, num_threads=1,
                                                    **kw) if c.maybe
                       else tf.train.shuffle_batch(tl[0], c.bs, num_threads=1, **kw))
            elif c.kind == 2:
                out = (tf.train.maybe_batch_join(tl, keep, c.bs, **kw) if c.maybe
                       else tf.train.batch_join(tl, c.bs, **kw))
            else:
                out = (tf.train.maybe_shuffle_batch_join(tl, c.bs, keep_input=keep, **kw)
                       if c.maybe else tf.train.shuffle_batch_join(tl, c.bs, **kw))
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            qr = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
            summ = tf.get_collection(tf.GraphKeys.SUMMARIES)[-1]
            for op in g.get_operations():
                if op.type == "RandomShuffleQueueV2":
                    c.seeds = (op.get_attr("seed"), op.get_attr("seed2"))
            init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
            c.built = (g, dict(feeds=feeds, out=out, qr=qr, summ=summ, init=init, flag=flag,
                               size=qr.queue.size(), closed=qr.queue.is_closed()))
    except (ValueError, TypeError) as e:
        c.built = py_err(h, e)


def tf_run_batch(h, c):
    if isinstance(c.built, str):
        return [c.built]
    g, o = c.built
    out = ["OK"]
    sess = h.new_session(g)
    sess.run(o["init"])

    def feed(i):
        enq, phs, close = o["feeds"][i]
        for elem in c.sources[i]:
            sess.run(enq, {ph: h.np_array(dt, shp, vals) for ph, (dt, shp, vals) in
                           zip(phs, elem)})
        sess.run(close)

    coord = tf.train.Coordinator()
    try:
        feed(0)
        threads = tf.train.start_queue_runners(sess, coord)
        for i in range(1, len(c.sources)):
            tname = "-" + o["qr"].enqueue_ops[i - 1].name
            th = [t for t in threads if t.name.endswith(tname)]
            wait_until(lambda: not any(t.is_alive() for t in th))
            if o["flag"] is not None:
                sess.run(o["flag"][0], {o["flag"][1]: c.keep[5 + i] == "1"})
            feed(i)
        wait_until(lambda: sess.run(o["closed"]))
        out.append("B %d" % sess.run(o["closed"]))
        out.append("SIZE %d" % sess.run(o["size"]))
        sm = tf.Summary.FromString(sess.run(o["summ"]))
        out.append("SUM %s %08x" % (sm.value[0].tag,
                                    np.array([sm.value[0].simple_value], np.float32)
                                    .view(np.uint32)[0]))
        for _ in range(1000):
            try:
                vals = sess.run(o["out"], options=run_opts(10000))
                out.append("OK " + " ".join(h.arr_tok(v) for v in vals))
            except tf.errors.OpError as e:
                out.append(h.tf_err(e))
                break
        coord.request_stop()
        out.append("OK")
        try:
            coord.join(stop_grace_period_secs=10)
            out.append("OK")
        except Exception as e:  # noqa: BLE001
            out.append(py_err(h, e))
    finally:
        coord.request_stop()
        sess.close()
    return out


def rand_batch_case(rng, h, bid, kind, maybe):
    shuffle, join = kind in (1, 3), kind in (2, 3)
    many = rng.random() < 0.5
    pad = (not shuffle) and rng.random() < 0.35
    keep = "none"
    if maybe:
        if many:
            keep = rng.choice(["pat", "even"] if not join else ["pat"])
        else:
            keep = "even" if not join else "flag"
    ncomp = rng.choice([1, 1, 2, 3])
    comps = []
    for i in range(ncomp):
        dt = rng.choice(["int32", "int64", "float", "string", "double"])
        if i == 0 and keep == "even":
            dt = rng.choice(["int32", "int64"])
        if pad and (i > 0 or keep != "even"):
            shp = rng.choice([[None], [None, 2], []])
        else:
            shp = [] if (i == 0 and keep == "even") else rng.choice([[], [], [2]])
        comps.append((dt, shp))
    nsrc = rng.choice([2, 2, 3]) if join else 1
    k = rng.randint(1, 4)
    if keep == "pat":
        keep = "pat:" + "".join(rng.choice("TF") for _ in range(k))
    if keep == "flag":  # one keep_input tensor for every source, read when a run starts:
        keep = "flag:" + rng.choice("01011") * nsrc  # constant, so no run sees a switch
    counter = [0]
    sources, total = [], 0
    for _ in range(nsrc):
        src = []
        for _ in range(rng.randint(0, 6 if many else 12)):
            rows = k if (many and keep.startswith("pat")) else rng.randint(1, 4)
            total += rows if many else 1
            elem = []
            var = rng.randint(1 if many else 0, 3)
            for dt, shp in comps:
                real = [var if d is None else d for d in shp]
                if many:
                    real = [rows] + real
                n = int(np.prod(real)) if real else 1
                vals = []
                for _ in range(n):
                    counter[0] += 1
                    vals.append(h.rand_value(rng, dt) if dt != "int32" and dt != "int64"
                                else counter[0] * rng.choice([1, 1, -1]))
                elem.append((dt, real, vals))
            src.append(elem)
        sources.append(src)
    cap = total + rng.randint(1, 6)
    min_after = rng.randint(0, max(0, cap - 1)) if shuffle else 0
    c = BatchCase(bid, kind, maybe, rng.randint(1, 5), cap, comps, sources, min_after=min_after,
                  many=many, pad=pad, small=rng.random() < 0.5, keep=keep)
    if shuffle:
        # graph seed, op seed or both (neither: TF seeds from the clock, nothing to compare)
        c.graph_seed, c.op_seed = rng.choice([(rng.randint(1, 2**31 - 1), None),
                                              (None, rng.randint(1, 2**31 - 1)),
                                              (rng.randint(1, 2**31 - 1),
                                               rng.randint(1, 2**31 - 1))])
    return c


def batch_cases(rng, h, per_kind):
    cases = []
    n = [0]

    def bid():
        n[0] += 1
        return "b%d" % n[0]

    i32 = "int32"
    # the numbered cases (123, 125 small, 128, 130, 133)
    ints = [[(i32, [], [v])] for v in range(30)]
    cases.append(BatchCase(bid(), 0, False, 10, 32, [(i32, [])], [ints]))  # 123
    cases.append(BatchCase(bid(), 0, False, 10, 40, [(i32, [])], [ints + ints[:5]],
                           small=True))  # 125 (one thread: in order)
    cases.append(BatchCase(bid(), 0, True, 4, 32, [(i32, [])], [ints], keep="even"))  # 128
    a = [[(i32, [], [v]), ("string", [], [b"a"])] for v in range(70)]
    b = [[(i32, [], [99]), ("string", [], [b"b"])] for _ in range(90)]
    cases.append(BatchCase(bid(), 2, False, 5, 200, [(i32, []), ("string", [])], [a, b]))  # 130
    cases.append(BatchCase(bid(), 1, False, 10, 32, [(i32, [])], [ints], min_after=16,
                           graph_seed=None, op_seed=141421))  # 133
    # dynamic_pad: strings padded with "" and ints with 0
    pads = [[(i32, [n], list(range(n))), ("string", [n], [b"s"] * n)] for n in (3, 0, 1, 2, 5)]
    cases.append(BatchCase(bid(), 0, False, 2, 10, [(i32, [None]), ("string", [None])], [pads],
                           pad=True, small=True))
    # capacity must be bigger than min_after_dequeue (a creation error)
    cases.append(BatchCase(bid(), 1, False, 2, 4, [(i32, [])], [ints[:3]], min_after=4,
                           op_seed=3))
    # the seed rules: graph seed only, op seed only, both
    for gs, os_ in ((1234, None), (None, 77), (1234, 77)):
        cases.append(BatchCase(bid(), 1, False, 3, 40, [(i32, [])], [ints[:25]], min_after=5,
                               graph_seed=gs, op_seed=os_, small=True))
    for kind in range(4):
        for maybe in (False, True):
            for _ in range(per_kind):
                cases.append(rand_batch_case(rng, h, bid(), kind, maybe))
    for c in cases:
        tf_build_batch(h, c)
    return cases


# --------------------------------------------------------------------------------------------
# producers

class ProdCase:
    def __init__(self, pid, kind, via, epochs, tensors, shuffle=False, seed=0, cap=32, take=-1,
                 many=1, graph_seed=None, note=""):
        self.pid, self.kind, self.via, self.epochs, self.tensors = pid, kind, via, epochs, tensors
        self.shuffle, self.seed, self.cap, self.take, self.many = shuffle, seed, cap, take, many
        self.graph_seed, self.note = graph_seed, note

    def op_seeds(self):
        """The RandomShuffle op's (seed, seed2) attributes, as TF derives them from the graph
        seed and the op seed (random_seed.get_seed)."""
        from tensorflow.python.framework import random_seed
        g = tf.Graph()
        with g.as_default():
            if self.graph_seed is not None:
                tf.set_random_seed(self.graph_seed)
            return random_seed.get_seed(self.seed or None)

    def line(self, h, pid=None):
        seed = "%d:%d" % self.op_seeds() if self.shuffle and self.seed else "%d" % self.seed
        return "producer %s %s %s %d %d %s %d %d %d %d %s" % (
            pid or self.pid, self.kind, self.via, self.epochs, self.shuffle, seed, self.cap,
            self.take, self.many, len(self.tensors),
            " ".join(h.tensor_tok(dt, shp, vals) for dt, shp, vals in self.tensors))

    def name(self):
        return "%s/%s/%s/epochs%d%s/cap%d%s" % (
            self.pid, self.kind, self.via, self.epochs, "/shuffle" if self.shuffle else "",
            self.cap, ("/" + self.note) if self.note else "")


def tf_run_producer(h, c):
    g = tf.Graph()
    out = []
    with g.as_default():
        try:
            if c.graph_seed is not None:
                tf.set_random_seed(c.graph_seed)
            ne = None if c.epochs < 0 else c.epochs
            arrs = [tf.constant(h.np_array(dt, shp, vals)) for dt, shp, vals in c.tensors]
            kw = dict(num_epochs=ne, shuffle=bool(c.shuffle), seed=c.seed or None,
                      capacity=c.cap)
            queue = None
            if c.via == "step":
                d = [tf.train.limit_epochs(tf.constant(c.tensors[0][2][0]), c.epochs)]
            elif c.kind == "string":
                queue = tf.train.string_input_producer(arrs[0] if arrs else [], **kw)
            elif c.kind == "range":
                queue = tf.train.range_input_producer(int(c.tensors[0][2][0]), **kw)
            elif c.kind == "input":
                queue = tf.train.input_producer(arrs[0], **kw)
            else:
                d = tf.train.slice_input_producer(arrs, **kw)
            if queue is not None:
                d = [queue.dequeue_many(c.many) if c.many > 1 else queue.dequeue()]
            elif c.via != "step":
                queue = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].queue
            init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
            if queue is not None:
                size, closed = queue.size(), queue.is_closed()
        except (ValueError, TypeError) as e:
            return [py_err(h, e)]
    out.append("OK")
    sess = h.new_session(g)
    sess.run(init)
    if c.via == "step":
        for _ in range(c.epochs + 1):
            try:
                out.append("OK " + h.arr_tok(sess.run(d[0])))
            except tf.errors.OpError as e:
                out.append(h.tf_err(e))
        sess.close()
        return out
    coord = tf.train.Coordinator()
    try:
        tf.train.start_queue_runners(sess, coord)
        wait_until(lambda: sess.run(closed) or sess.run(size) >= c.cap)
        out.append("B %d" % sess.run(closed))
        out.append("SIZE %d" % sess.run(size))
        i = 0
        while c.take < 0 or i < c.take:
            i += 1
            try:
                vals = sess.run(d, options=run_opts(10000))
                out.append("OK " + " ".join(h.arr_tok(v) for v in vals))
            except tf.errors.OpError as e:
                out.append(h.tf_err(e))
                break
        if c.via == "runner":
            coord.request_stop()
            out.append("OK")
        try:
            coord.request_stop()
            coord.join(stop_grace_period_secs=10)
            out.append("OK")
        except Exception as e:  # noqa: BLE001
            out.append(py_err(h, e))
    finally:
        coord.request_stop()
        sess.close()
    return out


def producer_cases(rng, h, nrandom):
    S, I, F = "string", "int32", "float"
    cases = []
    n = [0]

    def p(*a, **kw):
        n[0] += 1
        cases.append(ProdCase("p%d" % n[0], *a, **kw))

    p("string", "step", 2, [(S, [1], [b"Love Me"])], note="115-limit_epochs")
    p("input", "runner", 2, [(I, [3, 2], [1, 2, 3, 4, 5, 6])], many=6, note="116")
    p("input", "thread", 2, [(I, [3, 2], [1, 2, 3, 4, 5, 6])], note="116-one-by-one")
    p("input", "runner", 1, [(I, [], [5])], note="117-scalar")
    strs = [b"to", b"be", b"or", b"not", b"to", b"be"]
    p("string", "thread", 3, [(S, [6], strs)], note="118")
    p("string", "runner", 3, [(S, [6], strs)], note="118")
    p("string", "thread", 1, [], note="120-no-tensor")
    p("string", "runner", 1, [(S, [0], [])], note="120-empty-tensor")
    p("range", "thread", 3, [(I, [], [5])], note="121")
    p("range", "runner", 3, [(I, [], [5])], note="121")
    p("range", "runner", 2, [(I, [], [0])], note="range-0")
    p("input", "thread", 2, [(I, [0], [])], note="range-0")
    p("slice", "thread", 2, [(S, [4], [b"A", b"B", b"C", b"D"]), (I, [4], [1, 2, 3, 4])],
      note="122")
    p("slice", "runner", 2, [(S, [4], [b"A", b"B", b"C", b"D"]), (I, [4], [1, 2, 3, 4])],
      note="122")
    p("string", "thread", 0, [(S, [2], [b"a", b"b"])], note="num_epochs-0")
    p("range", "runner", 2, [(I, [], [10])], cap=4, note="capacity-below-input")
    p("string", "runner", -1, [(S, [3], [b"a", b"b", b"c"])], cap=5, take=8,
      note="unlimited-epochs")
    p("input", "runner", 2, [(F, [3, 2, 2], [float(x) for x in range(12)])],
      note="rank-3-rows")
    # seeded shuffles: TF's exact order (tfq_producer_options_set_tf_seeds with the op's seeds)
    p("range", "runner", 3, [(I, [], [6])], shuffle=True, seed=7, graph_seed=1234,
      note="shuffle")
    p("string", "thread", 2, [(S, [5], [b"v%d" % i for i in range(5)])], shuffle=True, seed=11,
      note="shuffle")
    p("slice", "runner", 2, [(S, [4], [b"A", b"B", b"C", b"D"]), (I, [4], [1, 2, 3, 4])],
      shuffle=True, seed=5, graph_seed=99, note="122-shuffle")
    p("input", "thread", 3, [(I, [4, 2], list(range(8)))], shuffle=True, seed=3,
      note="shuffle")
    p("string", "runner", 4, [(S, [13], [b"f%02d" % i for i in range(13)])], shuffle=True,
      seed=42, graph_seed=7, note="shuffle-13")
    p("input", "thread", 3, [(I, [2], [5, 6])], shuffle=True, seed=9, note="shuffle-2")
    for _ in range(nrandom):
        kind = rng.choice(["string", "range", "slice", "input"])
        via = rng.choice(["thread", "runner"])
        ep = rng.choice([1, 2, 3])
        cap = rng.choice([32, 32, rng.randint(1, 6)])
        if kind == "string":
            k = rng.randint(1, 6)
            t = [(S, [k], [h.rand_value(rng, "string") for _ in range(k)])]
        elif kind == "range":
            t = [(I, [], [rng.randint(1, 7)])]
        else:
            k = rng.randint(1, 5)
            t = [(I, [k], [rng.randint(-9, 9) for _ in range(k)])]
            if kind == "slice" and rng.random() < 0.5:
                t.append(("double", [k], [rng.uniform(-5, 5) for _ in range(k)]))
        total = ep * (t[0][2][0] if kind == "range" else t[0][1][0])
        if cap == total:  # a queue filled exactly: "closed yet?" would be a race
            cap += 1
        p(kind, via, ep, t, cap=cap)
    return cases


# --------------------------------------------------------------------------------------------
# the family: lines for the driver, TF's results, comparison

class Plan:
    def __init__(self):
        self.scripts, self.runners, self.batches, self.prods = [], [], [], []


def generate(h, rng, args):
    plan = Plan()
    plan.scripts = coord_scripts()
    plan.runners = [("r%d" % i, v) for i, v in enumerate(RUNNER_VARIANTS)]
    plan.batches = batch_cases(random.Random(rng.random()), h, args.batch_scenarios)
    plan.prods = producer_cases(random.Random(rng.random()), h, args.producer_scenarios)
    lines = coord_lines(h, plan.scripts)
    lines += ["runner %s %s" % r for r in plan.runners]
    for c in plan.batches:
        lines += c.line(h)
    for c in plan.prods:
        lines.append(c.line(h))
        if c.shuffle:
            lines.append(c.line(h, c.pid + "again"))  # tfq's order must be deterministic
    return plan, lines


def run_tf(h, plan):
    res = {}
    for sid, clean, ops in plan.scripts:
        res[("X", sid)] = tf_coord_script(h, clean, ops)
    for sid, v in plan.runners:
        res[("Y", sid)] = tf_runner(h, sid, v)
    for c in plan.batches:
        res[("B", c.bid)] = tf_run_batch(h, c)
    for c in plan.prods:
        res[("P", c.pid)] = tf_run_producer(h, c)
    return res


def parse(text):
    out = {}
    for line in text.split("\n"):
        p = line.split(" ", 2)
        if len(p) == 3 and p[0] in "XYBP":
            out.setdefault((p[0], p[1]), []).append(p[2])
    return out


def same_step(h, a, b):
    """One step: equal, or the same error (PYERR, a Python-level error in TF: the same code and
    exactly the same message, as for kernel errors)."""
    if a is None or b is None:
        return False
    if a.startswith("PYERR "):
        return b.startswith("ERR ") and h.same_result(a[2:], b)
    return h.same_result(a, b)


def first_diff(h, a, b):
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if not same_step(h, x, y):
            return i, x, y
    return None


def sum_close(a, b):
    """SUM <tag> <f32 bits>: equal tags, values within 1 float32 ulp (TF computes
    size * float32(1/capacity), tfq size / capacity in double)."""
    pa, pb = a.split(" "), b.split(" ")
    if len(pa) != 3 or len(pb) != 3 or pa[1] != pb[1]:
        return False
    return abs(int(pa[2], 16) - int(pb[2], 16)) <= 1


# tfq bugs found by these families and reported (docs/conformance.md, "Known tfq bugs"): the
# scenario key, the step, a substring of what tfq gives there, and the bug.  A scenario that
# differs from TF exactly there (and nowhere else) is reported as a deviation naming the bug;
# once the bug is fixed it passes, and any other difference still fails.
# None is open (the four found on 2026-12-01 are fixed).
KNOWN_BUGS = {}


def compare(h, plan, tfres, drv, rep):
    def check(fam, bug_key, case, tf_list, got):
        if got is None:
            got = []
        tf_list = list(tf_list)
        got = list(got)
        for i, (a, b) in enumerate(zip(tf_list, got)):
            if a.startswith("SUM ") and b.startswith("SUM ") and sum_close(a, b):
                got[i] = a
        d = first_diff(h, tf_list, got)
        if d is None:
            rep.ok(fam)
            return
        i, x, y = d
        bug = KNOWN_BUGS.get(bug_key)
        if bug and i in bug[0] and y is not None and bug[1] in h.show(y, 10000) and \
                len(got) == len(tf_list) \
                and first_diff(h, tf_list[i + 1:], got[i + 1:]) is None:
            rep.deviation(fam, case, "known tfq bug, step %d: %s" % (i, bug[2]),
                          ref="docs/conformance.md#known-tfq-bugs")
            return
        rep.fail(fam, case, "step %d: TF %s | tfq %s (TF %d steps, tfq %d)" % (
            i, h.show(x[2:] if x and x.startswith("PY") else x), h.show(y), len(tf_list),
            len(got)))

    for sid, clean, ops in plan.scripts:
        check("coordinator", sid, sid, tfres[("X", sid)], drv.get(("X", sid)))
    for sid, v in plan.runners:
        check("queue_runner", v, "%s/%s" % (sid, v), tfres[("Y", sid)], drv.get(("Y", sid)))
    for c in plan.batches:
        check("batchers", None, c.name(), tfres[("B", c.bid)], drv.get(("B", c.bid)))
    for c in plan.prods:
        tf_list, got = tfres[("P", c.pid)], drv.get(("P", c.pid)) or []
        if not c.shuffle or c.seed:  # seeded shuffles: TF's exact order (set_tf_seeds)
            check("producers", c.note, c.name(), tf_list, got)
            continue
        compare_shuffled(h, c, tf_list, got, drv.get(("P", c.pid + "again")) or [], rep)


def compare_shuffled(h, c, tf_list, got, again, rep):
    """A seeded producer shuffle: tfq shuffles with its own PCG32, not TF's random_shuffle
    (docs/conformance.md, deviations).  Every non-value step must match exactly, each epoch must
    be a permutation of the rows, TF's too, and tfq's order must repeat for the same seed."""
    fam = "producers"
    vals_tf = [r for r in tf_list if r.startswith("OK ")]
    vals_q = [r for r in got if r.startswith("OK ")]
    rest_tf = [r for r in tf_list if not r.startswith("OK ")]
    rest_q = [r for r in got if not r.startswith("OK ")]
    nrows = len(vals_tf) // max(c.epochs, 1)
    problems = []
    if first_diff(h, got, again) is not None:
        problems.append("tfq's order differs between two runs with seed %d" % c.seed)
    d = first_diff(h, rest_tf, rest_q)
    if d is not None:
        problems.append("non-value step %d: TF %s | tfq %s" % (d[0], h.show(d[1]),
                                                               h.show(d[2])))
    if len(vals_tf) != len(vals_q) or nrows == 0:
        problems.append("TF %d values, tfq %d" % (len(vals_tf), len(vals_q)))
    else:
        for e in range(c.epochs):
            a = sorted(vals_tf[e * nrows:(e + 1) * nrows])
            b = sorted(vals_q[e * nrows:(e + 1) * nrows])
            if a != b:
                problems.append("epoch %d is not the same set of rows" % e)
    if problems:
        rep.fail(fam, c.name(), "; ".join(problems))
    else:
        rep.deviation(fam, c.name(), "seeded producer shuffle: tfq's PCG32 order, not TF's "
                                     "random_shuffle; compared as per-epoch permutations",
                      ref="docs/conformance.md#deviations")
