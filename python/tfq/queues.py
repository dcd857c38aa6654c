"""TF1's queues under their names, eager (tf.queue.FIFOQueue, RandomShuffleQueue,
PaddingFIFOQueue, PriorityQueue; tf.compat.v1.FIFOQueue, ...): every call runs at once and
returns numpy values, as TF 2's eager queues do.  Blocking calls release the GIL; `timeout`
(seconds) is TF's RunOptions.timeout_in_ms (DeadlineExceededError "Timed out waiting for
notification").  A shared_name opens the queue in the process-wide registry, as TF's resource
manager shares it between sessions of one server."""
from . import _tfq
from .data import _numpy
from .io import _dtype_name

_CODES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
          "string": 7, "complex64": 8, "int64": 9, "bool": 10, "uint16": 17, "complex128": 18,
          "float16": 19}


def _norm_shapes(shapes, n):
    if shapes is None:
        return None
    shapes = list(shapes)
    if n == 1 and (not shapes or not isinstance(shapes[0], (list, tuple)) and
                   getattr(shapes[0], "as_list", None) is None):
        shapes = [shapes]
    out = []
    for s in shapes:
        as_list = getattr(s, "as_list", None)
        out.append(tuple(as_list() if as_list else s))
    return out


class QueueBase:
    """The common eager API of the four kinds (TF's QueueBase)."""
    _KIND = 0

    def __init__(self, dtypes, shapes, names, options, prefix=()):
        if not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        own = [_dtype_name(d) for d in dtypes]
        for d in own:
            if d not in _CODES:
                raise TypeError("unsupported dtype %s" % d)
        # a PriorityQueue's int64 priority is component 0; the library adds it to the spec
        self._dtypes = list(prefix) + own
        self._names = list(names) if names is not None else None
        shapes = _norm_shapes(shapes, len(dtypes))
        if shapes is not None and self._KIND != 2 and any(d is None for sh in shapes
                                                          for d in sh):
            # TF's Python layer checks this before the op: a ValueError, as in TF
            raise ValueError("All shapes must be fully defined: %s" % (shapes,))
        self._q = _tfq.Queue(self._KIND, [_CODES[d] for d in own], shapes, options)
        self._shapes = [()] + shapes if shapes is not None and prefix else shapes

    @property
    def name(self):
        return self._q.name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return self._shapes

    @property
    def names(self):
        return self._names

    # ---- values in and out ----
    def _components(self, vals, many):
        np = _numpy()
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            vals = [vals[k] for k in self._names]
        elif not isinstance(vals, (list, tuple)) or len(self._dtypes) == 1 and \
                not isinstance(vals, tuple) and len(vals) != 1:
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components, got %d" % (len(self._dtypes), len(vals)))
        comps = []
        for i, (v, d) in enumerate(zip(vals, self._dtypes)):
            if d == "string":
                a = np.asarray(v, dtype=object)
                flat = [x.encode() if isinstance(x, str) else bytes(x) for x in a.reshape(-1)]
                comps.append((_CODES[d], a.shape, flat))
            else:
                a = np.asarray(v, dtype=d, order="C")  # (ascontiguousarray makes 0-d 1-d)
                comps.append((_CODES[d], a.shape, a.reshape(-1)))
            self._check_shape(i, a.shape[1:] if many else a.shape)
        return comps

    def _check_shape(self, i, shape):
        """TF's static check (TensorShape.merge_with in the Python layer): a ValueError."""
        if self._shapes is None:
            return
        want = self._shapes[i]
        if len(want) != len(shape) or any(w is not None and w != g
                                          for w, g in zip(want, shape)):
            raise ValueError("Shapes %s and %s are incompatible" % (tuple(shape), want))

    def _out(self, tensors, named=True):
        np = _numpy()
        vals = []
        for t in tensors:
            if t.is_string:
                s = t.strings()
                a = np.empty(len(s), dtype=object)
                a[:] = s
                vals.append(a.reshape(t.shape))
            else:
                vals.append(np.asarray(t))
        if not named:
            return vals
        if self._names is not None:
            return dict(zip(self._names, vals))
        return vals[0] if len(vals) == 1 else vals

    @staticmethod
    def _us(timeout):
        return -1 if timeout is None else int(timeout * 1e6)

    # A queue filled by a tfq.train producer whose runner has not started yet (TF1's graph
    # construction) gives deferred values (tfq.train.Tensor), and enqueue of deferred values
    # gives an op for a tfq.train.QueueRunner; otherwise every call runs at once.
    _deferred = False

    def _deferred_enqueue(self, vals, many):
        from . import train
        flat = train._flatten(vals)
        if any(isinstance(v, train.Tensor) for v in flat):
            if isinstance(vals, dict):
                flat = [vals[k] for k in self._names]
            self._deferred = True  # its dequeues are deferred too until its runner starts
            return train._EnqueueOp(self, flat, many)
        return None

    def enqueue(self, vals, name=None, timeout=None):
        op = self._deferred_enqueue(vals, False)
        if op is not None:
            return op
        self._q.enqueue(self._components(vals, False), self._us(timeout))

    def enqueue_many(self, vals, name=None, timeout=None):
        op = self._deferred_enqueue(vals, True)
        if op is not None:
            return op
        self._q.enqueue_many(self._components(vals, True), self._us(timeout))

    def dequeue(self, name=None, timeout=None):
        if self._deferred:
            from . import train
            return train._dequeue_node(self)
        return self._out(self._q.dequeue(self._us(timeout)))

    def dequeue_many(self, n, name=None, timeout=None):
        if self._deferred:
            from . import train
            return train._dequeue_node(self, int(n))
        return self._out(self._q.dequeue_n(int(n), False, self._us(timeout)))

    def dequeue_up_to(self, n, name=None, timeout=None):
        if self._deferred:
            from . import train
            return train._dequeue_node(self, int(n), True)
        return self._out(self._q.dequeue_n(int(n), True, self._us(timeout)))

    def close(self, cancel_pending_enqueues=False, name=None, timeout=None):
        self._q.close(bool(cancel_pending_enqueues), self._us(timeout))

    def size(self, name=None):
        return _numpy().int32(self._q.size())

    def is_closed(self, name=None):
        return _numpy().bool_(self._q.is_closed())


def _opts(capacity, name, shared_name, **kw):
    d = dict(capacity=capacity, name=name, shared_name=shared_name)
    d.update(kw)
    return d


class FIFOQueue(QueueBase):
    """tf.queue.FIFOQueue(capacity, dtypes, shapes=None, names=None, shared_name=None,
    name="fifo_queue")."""
    _KIND = 0

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        super().__init__(dtypes, shapes, names, _opts(capacity, name, shared_name))


class RandomShuffleQueue(QueueBase):
    """tf.queue.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes=None, names=None,
    seed=None, shared_name=None, name="random_shuffle_queue")."""
    _KIND = 1

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        super().__init__(dtypes, shapes, names,
                         _opts(capacity, name, shared_name, min_after_dequeue=min_after_dequeue,
                               seed=seed, seed2=0 if seed is None else seed))


class PaddingFIFOQueue(QueueBase):
    """tf.queue.PaddingFIFOQueue(capacity, dtypes, shapes, names=None, shared_name=None,
    name="padding_fifo_queue"): dequeue_many pads unknown dims (None) to the batch's longest."""
    _KIND = 2

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        super().__init__(dtypes, shapes, names, _opts(capacity, name, shared_name))


class PriorityQueue(QueueBase):
    """tf.queue.PriorityQueue(capacity, types, shapes=None, names=None, shared_name=None,
    name="priority_queue"): component 0 of every element is its int64 priority; dequeues come
    in ascending priority."""
    _KIND = 3

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name="priority_queue"):
        super().__init__(types, shapes, names, _opts(capacity, name, shared_name),
                         prefix=("int64",))
