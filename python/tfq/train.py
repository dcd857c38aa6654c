"""tfq.train: TF1's tf.compat.v1.train input machinery under its names, with C threads.

A TF1 program's input section ports by changing names (docs/migrating-from-tf1.md):

    files = tfq.train.string_input_producer(["a.csv"], num_epochs=1, shuffle=False)
    reader = tfq.TextLineReader(skip_header_lines=1)
    _, line = reader.read(files)
    x, y = tfq.decode_csv(line, [[0.0], [0]])
    xb, yb = tfq.train.shuffle_batch([x, y], batch_size=32, capacity=200, min_after_dequeue=50,
                                     seed=7)
    with tfq.train.Session() as sess:
        coord = tfq.train.Coordinator()
        threads = tfq.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                xs, ys = sess.run([xb, yb])        # numpy arrays
        except tfq.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)

As in TF1's graph mode, what a producer's queue gives before `start_queue_runners` is a
*deferred* value (a `tfq.train.Tensor`): `reader.read(queue)`, `queue.dequeue()`,
`tfq.decode_csv(deferred)` and the producers' and batchers' outputs describe a step that the
library runs on its own threads (read_up_to -> decode_csv -> enqueue_many, a producer's epochs,
a queue-to-queue transfer: the C ops of tfq/ops.h and tfq/producer.h under a C QueueRunner and
the Coordinator's C half), and `Session.run(fetches)` evaluates fetches as TF's does (one
dequeue per batch op per run).  No Python code runs on those threads.  Once the runners are
started, readers and queues run eagerly again.

Not supported (NotImplementedError): batching a reader's keys, deferred values that do not come
from one reader + decode_csv chain or one queue's dequeue, and a deferred keep_input of
maybe_batch (a Python bool, or a per-example list with enqueue_many of constant tensors, works).
"""
import contextlib
import sys
import threading
import time

from . import _tfq, errors
from .data import _numpy

__all__ = ["Coordinator", "QueueRunner", "Session", "Tensor", "add_queue_runner", "batch",
           "global_variables_initializer", "local_variables_initializer",
           "batch_join", "input_producer", "limit_epochs", "maybe_batch", "maybe_batch_join",
           "maybe_shuffle_batch", "maybe_shuffle_batch_join", "range_input_producer",
           "shuffle_batch", "shuffle_batch_join", "slice_input_producer", "stack", "start_queue_runners",
           "string_input_producer"]

# TF's random_seed.DEFAULT_GRAPH_SEED: a graph without a seed gives op seed s the pair (87654321, s)
_DEFAULT_GRAPH_SEED = 87654321

# tf.GraphKeys.QUEUE_RUNNERS: the runners made so far, started by start_queue_runners
_QUEUE_RUNNERS = []
_LOCK = threading.Lock()


# ---- deferred values ------------------------------------------------------------------------
class Tensor:
    """A deferred value (TF1's graph tensor): output `index` of `op`.  Session.run evaluates
    it; batchers and QueueRunners run its op on C threads."""

    def __init__(self, op, index, dtype, shape):
        self.op, self.value_index, self.dtype, self._shape = op, index, dtype, shape

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def numpy(self):
        return Session().run(self)

    def __repr__(self):
        return "<tfq.train.Tensor %s:%d shape=%s dtype=%s>" % (
            type(self.op).__name__, self.value_index, self._shape, self.dtype)


class _Op:
    outputs = ()

    def _run(self, cache):  # the eager value of every output, as a list
        raise NotImplementedError


class _ReadOp(_Op):
    def __init__(self, reader, queue, num_records):
        self.reader, self.queue, self.num_records = reader, queue, num_records
        shape = () if num_records is None else (None,)
        self.outputs = (Tensor(self, 0, "string", shape), Tensor(self, 1, "string", shape))

    def _run(self, cache):
        if self.num_records is None:
            return list(self.reader.read(self.queue))
        return list(self.reader.read_up_to(self.queue, self.num_records))


class _DecodeCsvOp(_Op):
    def __init__(self, value, kwargs, dtypes, csv):
        self.value, self.kwargs, self._csv = value, kwargs, csv
        self.outputs = tuple(Tensor(self, i, d, value.shape) for i, d in enumerate(dtypes))

    def _run(self, cache):
        from .ops import decode_csv
        return decode_csv(_eval(self.value, cache), **self.kwargs)


class _StackOp(_Op):
    """tf.stack of scalar decoded columns (axis 0): one [n] value per record."""

    def __init__(self, values):
        self.values = list(values)
        self.outputs = (Tensor(self, 0, values[0].dtype, (len(values),)),)

    def _run(self, cache):
        return [_numpy().stack([_eval(v, cache) for v in self.values])]


def stack(values, axis=0, name="stack"):
    """tf.stack: of deferred scalar columns of one decode_csv (as TF1's `tf.stack([x1, x2])`
    before a batcher or an enqueue), a deferred [n] value that the C op stacks as it decodes;
    of anything else, numpy's stack."""
    values = list(values)
    if values and any(_deferred(v) for v in values):
        ops = {id(v.op) for v in values}
        if (axis != 0 or len(ops) != 1 or not isinstance(values[0].op, _DecodeCsvOp) or
                values[0].shape != () or len({v.dtype for v in values}) != 1):
            raise NotImplementedError("tfq.stack of deferred values: scalar columns of one "
                                      "decode_csv of the same dtype, axis 0")
        return _StackOp(values).outputs[0]
    return _numpy().stack(values, axis=axis)


class _DequeueOp(_Op):
    """queue.dequeue() (n None), dequeue_many(n) or dequeue_up_to(n)."""

    def __init__(self, queue, n=None, up_to=False, names=None):
        self.queue, self.n, self.up_to, self.names = queue, n, up_to, names
        lead = () if n is None else (None if up_to else n,)
        shapes = queue.shapes or [None] * len(queue.dtypes)
        self.outputs = tuple(Tensor(self, i, d, None if s is None else lead + tuple(s))
                             for i, (d, s) in enumerate(zip(queue.dtypes, shapes)))

    def _run(self, cache):
        q = self.queue
        if self.n is None:
            vals = q._out(q._q.dequeue(-1), named=False)
        else:
            vals = q._out(q._q.dequeue_n(int(self.n), self.up_to, -1), named=False)
        return vals


def _eval(t, cache):
    if not isinstance(t, Tensor):
        return t
    if t.op not in cache:
        cache[t.op] = t.op._run(cache)
    return cache[t.op][t.value_index]


def _deferred(x):
    return isinstance(x, Tensor)


def _read_node(reader, queue, num_records):
    return _ReadOp(reader, queue, num_records).outputs


def _decode_csv_node(records, kwargs, cols):
    """tfq.decode_csv of a deferred value; `cols` as ops._column gives them."""
    if records.shape is None or len(records.shape) > 1:
        raise NotImplementedError("tfq.train: decode_csv of a deferred value needs the records "
                                  "of reader.read or reader.read_up_to")
    names = {1: "float32", 2: "float64", 3: "int32", 9: "int64", 7: "string"}
    sel = kwargs.get("select_cols")
    dtypes = [names[c] for c, _ in cols]
    return list(_DecodeCsvOp(records, kwargs, dtypes, _csv_spec(kwargs, cols)).outputs)


def _dequeue_node(queue, n=None, up_to=False):
    op = _DequeueOp(queue, n, up_to)
    outs = list(op.outputs)
    if queue.names is not None:
        return dict(zip(queue.names, outs))
    return outs[0] if len(outs) == 1 else outs


# ---- nested structures ------------------------------------------------------------------------
def _flatten(x):
    if isinstance(x, dict):
        keys = sorted(x)
        return [v for k in keys for v in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _flatten(e)]
    return [x]


def _pack(structure, flat):
    it = iter(flat)

    def rec(x):
        if isinstance(x, dict):
            return {k: rec(x[k]) for k in sorted(x)}
        if isinstance(x, (list, tuple)):
            return type(x)(rec(e) for e in x) if isinstance(x, list) else tuple(rec(e) for e in x)
        return next(it)
    return rec(structure)


class _NoOp(_Op):
    """An op with nothing to do: tfq has no variables (TF1's num_epochs counters are C state)."""
    outputs = ()

    def _run(self, cache):
        return []


def local_variables_initializer():
    """tf.compat.v1.local_variables_initializer: Session.run of it does nothing and gives None
    (tfq's epoch counters need no initialization), so that the TF1 line stays."""
    return _NoOp()


global_variables_initializer = local_variables_initializer


# ---- Session --------------------------------------------------------------------------------
class Session:
    """tf.compat.v1.Session for tfq's deferred values: run(fetches) evaluates a nested structure
    of tfq.train.Tensors (and passes anything else through), each op once per run: one
    dequeue_many per batch.  A context manager (closing does nothing: the Coordinator stops the
    threads)."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if isinstance(fetches, _NoOp):
            return None
        cache = {}
        flat = [_eval(t, cache) for t in _flatten(fetches)]
        if not isinstance(fetches, (list, tuple, dict)):
            return flat[0]
        return _pack(fetches, flat)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# ---- Coordinator ----------------------------------------------------------------------------
class Coordinator:
    """tf.train.Coordinator: TF's semantics (request_stop with an exception or exc_info, the
    first error wins and join raises it, clean_stop_exception_types, stop_on_exception,
    raise_requested_exception, register_thread, join's grace period and "Coordinator stopped
    with threads still running"), plus a C coordinator whose stop cancels the C runners' blocking
    calls; an error that a C runner reports stops this coordinator as its Python error (a
    tfq.errors class)."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()
        self._c = _tfq.Coord()

    def _filter_exception(self, ex):
        ex2 = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(ex2, self._clean_stop_exception_types):
            ex = None
        return ex

    def _sync(self):
        """Adopts a stop (and error) that a C runner requested."""
        if self._stop_event.is_set() or not self._c.should_stop():
            return
        err = self._c.error()
        with self._lock:
            if self._stop_event.is_set():
                return
            if err is not None and self._exc_info_to_raise is None:
                ex = errors._CLASSES.get(err[0], errors.UnknownError)(None, None, err[1])
                if not isinstance(ex, self._clean_stop_exception_types):
                    self._exc_info_to_raise = (type(ex), ex, None)
            self._stop_event.set()

    def request_stop(self, ex=None):
        self._sync()
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1]
                elif ex is not None:
                    raise sys.exc_info()[1]
            if not self._stop_event.is_set():
                if ex and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = ex if isinstance(ex, tuple) else sys.exc_info()
                    if (len(self._exc_info_to_raise) != 3 or not self._exc_info_to_raise[0] or
                            not self._exc_info_to_raise[1]):
                        try:
                            raise ValueError("ex must be a tuple or sys.exc_info must return the "
                                             "current exception: %s" % (self._exc_info_to_raise,))
                        except ValueError:
                            self._exc_info_to_raise = sys.exc_info()
                self._stop_event.set()
        self._c.request_stop(0, None)

    def clear_stop(self):
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()
            self._c.clear_stop()

    def should_stop(self):
        self._sync()
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        try:
            yield
        except:  # noqa: E722 -- TF's: every exception, KeyboardInterrupt included
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.should_stop():
                return True
            left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
            if left <= 0:
                return self.should_stop()
            if self._c.wait_for_stop(int(left * 1e6)):
                self._sync()
                return True

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        with self._lock:
            if threads is None:
                threads = self._registered_threads
            else:
                threads = self._registered_threads.union(set(threads))
            threads = list(threads)
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        stop_wait_secs = 0.001
        while any(t.is_alive() for t in threads) and stop_grace_period_secs >= 0.0:
            time.sleep(stop_wait_secs)
            stop_grace_period_secs -= stop_wait_secs
            stop_wait_secs = 2 * stop_wait_secs
            stop_wait_secs = max(min(stop_wait_secs, stop_grace_period_secs), 0.001)
        stragglers = [t.name for t in threads if t.is_alive()]
        self._sync()
        try:  # the C runners' threads: joined (they have ended, or are detached)
            self._c.join(int(max(stop_grace_period_secs, 0) * 1e6), True)
        except errors.OpError:
            pass  # adopted by _sync
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]
            elif stragglers:
                if not ignore_live_threads:
                    raise RuntimeError("Coordinator stopped with threads still running: %s" %
                                       " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        self._sync()
        with self._lock:
            if self._exc_info_to_raise:
                raise self._exc_info_to_raise[1]


# ---- QueueRunner ----------------------------------------------------------------------------
class _RunnerThread:
    """What start_queue_runners returns for a C runner (TF returns threading.Threads): name,
    is_alive(), join(timeout)."""

    def __init__(self, qr):
        self._qr = qr
        self.name = "QueueRunnerThread-%s" % qr.name
        self.daemon = True

    def is_alive(self):
        return self._qr._runner.running() > 0

    def join(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.is_alive() and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.005)


class _EnqueueOp:
    """queue.enqueue(deferred) / enqueue_many(deferred): a step for a QueueRunner."""

    def __init__(self, queue, vals, many):
        self.queue, self.vals, self.many = queue, vals, many


class QueueRunner:
    """tf.compat.v1.train.QueueRunner(queue, enqueue_ops): each enqueue op (queue.enqueue or
    enqueue_many of deferred values, repeated n times for n threads) runs on a C thread."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if not enqueue_ops:
            raise ValueError("Empty enqueue ops to run.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._runner = _tfq.Runner(queue._q)
        self._started = False
        self._exceptions_raised = []
        groups = {}
        for op in self._enqueue_ops:
            groups.setdefault(id(op), [op, 0])[1] += 1
        for op, n in groups.values():
            if not isinstance(op, _EnqueueOp):
                raise NotImplementedError("tfq.train.QueueRunner runs queue.enqueue(...) of "
                                          "deferred values (reader -> decode_csv, a dequeue)")
            _add_source(self._runner, queue, op.vals, op.many, n, 128)

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def name(self):
        return self._queue.name

    @property
    def exceptions_raised(self):
        return self._exceptions_raised

    def create_threads(self, sess=None, coord=None, daemon=False, start=False):
        if self._started:
            return []
        self._started = True
        _mark_started(self._queue)
        self._runner.start(None if coord is None else coord._c)
        t = _RunnerThread(self)
        if coord is not None:
            coord.register_thread(t)
        return [t]


def add_queue_runner(qr, collection=None):
    """tf.compat.v1.train.add_queue_runner: start_queue_runners will start it."""
    with _LOCK:
        _QUEUE_RUNNERS.append(qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=None):
    """tf.compat.v1.train.start_queue_runners: starts every QueueRunner made so far (by the
    producers, the batchers and add_queue_runner) under `coord`; returns thread-like objects
    (name, is_alive(), join()) that coord.join takes."""
    with _LOCK:
        runners = list(_QUEUE_RUNNERS)
        del _QUEUE_RUNNERS[:]
    threads = []
    for qr in runners:
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


def _mark_started(queue):
    queue._deferred = False


# ---- sources ----------------------------------------------------------------------------------
def _components(values, dtypes):
    """Constant values as queue.c's components (dtype code, shape, data)."""
    from .queues import _CODES
    np = _numpy()
    comps = []
    for v, d in zip(values, dtypes):
        if d == "string":
            a = np.asarray(v, dtype=object)
            flat = [x.encode() if isinstance(x, str) else bytes(x) for x in a.reshape(-1)]
            comps.append((_CODES[d], a.shape, flat))
        else:
            a = np.ascontiguousarray(np.asarray(v, dtype=d))
            comps.append((_CODES[d], a.shape, a.reshape(-1)))
    return comps


def _add_source(runner, queue, tensors, many, threads, chunk):
    """Adds to the C runner of `queue` the op that produces `tensors` (a flat list)."""
    np = _numpy()
    if not any(_deferred(t) for t in tensors):
        # constant tensors: enqueued again and again (TF1 runs the enqueue op forever)
        arrays = [np.asarray(t) for t in tensors]
        rows = arrays if many else [a[None] for a in arrays]
        runner.add_producer(_components(rows, queue.dtypes), -1, False, None, None)
        return
    if not all(_deferred(t) for t in tensors):
        raise NotImplementedError("tfq.train: a batch mixes deferred and constant tensors")
    ops = {id(t.op): t.op for t in tensors}
    if len(ops) == 1:
        op = next(iter(ops.values()))
        idx = [t.value_index for t in tensors]
        if isinstance(op, _DequeueOp) and op.n is None and not many:
            if idx != list(range(len(op.outputs))):
                raise NotImplementedError("tfq.train: a dequeue's components batched in order")
            runner.add_transfer(op.queue._q, 1, threads)
            return
        if isinstance(op, _ReadOp):
            if idx != [1]:
                raise NotImplementedError("tfq.train: batching a reader's keys")
            n = op.num_records if op.num_records is not None else chunk
            runner.add_read_decode(op.reader._r, op.queue._q, None, n, None, threads)
            return
    # columns of one reader -> decode_csv chain, each as it is or stacked (tfq.stack)
    comps, dec = [], None
    for t in tensors:
        if isinstance(t.op, _StackOp):
            d, comp = t.op.values[0].op, ([v.value_index for v in t.op.values], True)
        else:
            d, comp = t.op, ([t.value_index], False)
        if not isinstance(d, _DecodeCsvOp) or (dec is not None and d is not dec):
            dec = None
            break
        dec = d
        comps.append(comp)
    if dec is not None and isinstance(dec.value.op, _ReadOp) and dec.value.value_index == 1:
        read = dec.value.op
        n = read.num_records if read.num_records is not None else chunk
        runner.add_read_decode(read.reader._r, read.queue._q, dec._csv, n, comps, threads)
        return
    raise NotImplementedError("tfq.train: batching deferred values that do not come from one "
                              "reader -> decode_csv chain or one dequeue")


def _csv_spec(kwargs, cols):
    enc = (lambda s: s.encode() if isinstance(s, str) else bytes(s))
    sel = kwargs.get("select_cols")
    return (cols, enc(kwargs.get("field_delim", ",")), bool(kwargs.get("use_quote_delim", True)),
            enc(kwargs.get("na_value", "")), [] if sel is None else [int(c) for c in sel])


# ---- producers --------------------------------------------------------------------------------
def _tf_seeds(seed):
    return None if seed is None else (_DEFAULT_GRAPH_SEED, int(seed))


class _ProducerRunner(QueueRunner):
    def __init__(self, queue, rows, num_epochs, shuffle, seed):
        self._queue = queue
        self._enqueue_ops = []
        self._runner = _tfq.Runner(queue._q)
        self._started = False
        self._exceptions_raised = []
        if num_epochs is not None and num_epochs <= 0:
            raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
        self._runner.add_producer(_components(rows, queue.dtypes),
                                  -1 if num_epochs is None else int(num_epochs), bool(shuffle),
                                  None, _tf_seeds(seed) if shuffle else None)


def _producer_queue(rows, dtype, shape, num_epochs, shuffle, seed, capacity, shared_name, name):
    from .queues import FIFOQueue
    q = FIFOQueue(capacity, [dtype], shapes=[shape], shared_name=shared_name,
                  name=name or "input_producer")
    add_queue_runner(_ProducerRunner(q, rows, num_epochs, shuffle, seed))
    q._deferred = True
    return q


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """tf.compat.v1.train.input_producer: a FIFOQueue of the rows of `input_tensor`, each epoch
    a fresh permutation with shuffle (TF's order for a given seed), closed after num_epochs."""
    from .io import _dtype_name
    np = _numpy()
    a = np.asarray(input_tensor)
    if a.ndim == 0:
        raise ValueError("Either `input_tensor` must have a fully defined shape or "
                         "`element_shape` must be specified")
    dtype = "string" if a.dtype.kind in "USOa" else _dtype_name(a.dtype)
    shape = tuple(element_shape) if element_shape is not None else a.shape[1:]
    return _producer_queue([a], dtype, shape, num_epochs, shuffle, seed, capacity, shared_name,
                           name)


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """tf.compat.v1.train.string_input_producer: a FIFOQueue of file names for the readers."""
    np = _numpy()
    a = np.asarray(string_tensor, dtype=object).reshape(-1)
    return _producer_queue([a], "string", (), num_epochs, shuffle, seed, capacity, shared_name,
                           name)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """tf.compat.v1.train.range_input_producer: the int32 0..limit-1 as input_producer gives
    them."""
    np = _numpy()
    return _producer_queue([np.arange(int(limit), dtype=np.int32)], "int32", (), num_epochs,
                           shuffle, seed, capacity, shared_name, name)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """tf.compat.v1.train.slice_input_producer: one row of every tensor, the same row of each,
    in TF's order; the list of deferred row values (a queue of the row tuples underneath)."""
    from .io import _dtype_name
    from .queues import FIFOQueue
    np = _numpy()
    arrays = [np.asarray(t) for t in tensor_list]
    if not arrays:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    dtypes = ["string" if a.dtype.kind in "USOa" else _dtype_name(a.dtype) for a in arrays]
    q = FIFOQueue(capacity, dtypes, shapes=[a.shape[1:] for a in arrays],
                  shared_name=shared_name, name=name or "input_producer")
    add_queue_runner(_ProducerRunner(q, arrays, num_epochs, shuffle, seed))
    q._deferred = True
    return list(_DequeueOp(q).outputs)


def limit_epochs(tensor, num_epochs=None, name=None):
    """tf.compat.v1.train.limit_epochs: the rows of `tensor` num_epochs times (a deferred
    dequeue of an input_producer without shuffling)."""
    q = input_producer([tensor], num_epochs=num_epochs, shuffle=False)
    return _DequeueOp(q).outputs[0]


# ---- batchers ---------------------------------------------------------------------------------
def _dtype_shape(t, many):
    from .io import _dtype_name
    np = _numpy()
    if _deferred(t):
        shape = t.shape
        if shape is None:
            raise ValueError("All shapes must be fully defined: %s" % (t,))
        shape = tuple(shape)
        return t.dtype, shape[1:] if many else shape
    a = np.asarray(t)
    d = "string" if a.dtype.kind in "USOa" else _dtype_name(a.dtype)
    return d, a.shape[1:] if many else a.shape


class _BatchRunner(QueueRunner):
    def __init__(self, queue, tensors_list, many, threads):
        self._queue = queue
        self._enqueue_ops = []
        self._runner = _tfq.Runner(queue._q)
        self._started = False
        self._exceptions_raised = []
        for tensors in tensors_list:
            _add_source(self._runner, queue, tensors, many, threads, 128)


def _batch(tensors_list, batch_size, capacity, many, shapes, dynamic_pad, allow_smaller,
           shared_name, name, threads, shuffle=False, min_after_dequeue=0, seed=None,
           keep_input=True):
    from .queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
    np = _numpy()
    structure = tensors_list[0]
    flats = [_flatten(t) for t in tensors_list]
    if not flats[0]:
        raise ValueError("Cannot infer Tensor's rank: []")
    ds = [_dtype_shape(t, many) for t in flats[0]]
    dtypes = [d for d, _ in ds]
    if shapes is None:
        shapes = [s for _, s in ds]
    else:
        shapes = [tuple(s) for s in _flatten_shapes(shapes)]
    if isinstance(keep_input, (bool, np.bool_)) or np.ndim(keep_input) == 0:
        if not bool(keep_input):
            flats = []  # nothing is ever enqueued: the batches wait, as TF's
    else:
        if not many or any(_deferred(t) for f in flats for t in f):
            raise NotImplementedError("tfq.train: a per-example keep_input needs "
                                      "enqueue_many=True of constant tensors")
        mask = np.asarray(keep_input, dtype=bool)
        flats = [[np.asarray(t)[mask] for t in f] for f in flats]
    if shuffle:
        if capacity <= min_after_dequeue:
            raise ValueError("capacity %d must be bigger than min_after_dequeue %d." %
                             (capacity, min_after_dequeue))
        q = RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes=shapes,
                               seed=None if seed is None else seed, shared_name=shared_name,
                               name=name or "shuffle_batch/random_shuffle_queue")
    elif dynamic_pad:
        q = PaddingFIFOQueue(capacity, dtypes, shapes=shapes, shared_name=shared_name,
                             name=name or "batch/padding_fifo_queue")
    else:
        q = FIFOQueue(capacity, dtypes, shapes=shapes, shared_name=shared_name,
                      name=name or "batch/fifo_queue")
    if flats:
        add_queue_runner(_BatchRunner(q, flats, many, threads))
    op = _DequeueOp(q, int(batch_size), bool(allow_smaller))
    if not isinstance(structure, dict) and len(op.outputs) == 1:
        return op.outputs[0]  # TF's dequeue_many of one component: the tensor itself
    return _pack(structure, list(op.outputs))


def _flatten_shapes(shapes):
    out = []
    for s in shapes:
        as_list = getattr(s, "as_list", None)
        out.append(as_list() if as_list else s)
    return out


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """tf.compat.v1.train.batch: deferred batches of `tensors` (a list or dict, as given)."""
    return _batch([tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, num_threads)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    """tf.compat.v1.train.maybe_batch (keep_input a bool, or a per-example mask of constant
    tensors with enqueue_many)."""
    return _batch([tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, num_threads,
                  keep_input=keep_input)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """tf.compat.v1.train.batch_join: one thread per entry of tensors_list."""
    return _batch(list(tensors_list), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, 1)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """tf.compat.v1.train.maybe_batch_join."""
    return _batch(list(tensors_list), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, 1, keep_input=keep_input)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """tf.compat.v1.train.shuffle_batch: a RandomShuffleQueue between the source and the
    batches."""
    return _batch([tensors], batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, num_threads, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """tf.compat.v1.train.maybe_shuffle_batch."""
    return _batch([tensors], batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, num_threads, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed, keep_input=keep_input)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """tf.compat.v1.train.shuffle_batch_join."""
    return _batch(list(tensors_list), batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, 1, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                             seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """tf.compat.v1.train.maybe_shuffle_batch_join."""
    return _batch(list(tensors_list), batch_size, capacity, enqueue_many, shapes, False,
                  allow_smaller_final_batch, shared_name, name, 1, shuffle=True,
                  min_after_dequeue=min_after_dequeue, seed=seed, keep_input=keep_input)
