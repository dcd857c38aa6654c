"""Differential conformance, queue family: the same scenario scripts through tf.compat.v1's
queues (eager) and through tfq's (tfq.FIFOQueue, ...); every step's value, or its error class and
message (queue names normalized: TF's eager names differ), must agree."""
import re

import numpy as np
import pytest

import tfq
from tfconform import norm


def message(e, tf):
    msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
    msg = re.sub(r"^\{\{[^}]*\}\} ", "", msg.split(" [Op:")[0])
    return re.sub(r"'[^']*'", "'<q>'", msg)


def run(tf, m, script):
    log = []
    for step in script:
        try:
            log.append(("ok", norm(step(m))))
        except (tf.errors.OpError, tfq.errors.OpError) as e:
            log.append((type(e).__name__, message(e, tf)))
        except (ValueError, TypeError) as e:  # Python-level checks: the class only
            log.append((type(e).__name__,))
    return log


def fifo_basic(m):
    q = m.FIFOQueue(10, ["int32"], shapes=[[]])
    return [lambda _: q.enqueue([1]), lambda _: q.enqueue_many([[2, 3, 4]]),
            lambda _: q.size(), lambda _: q.dequeue(), lambda _: q.dequeue_many(2),
            lambda _: q.size(), lambda _: q.is_closed()]


def fifo_close(m):
    q = m.FIFOQueue(10, ["float32", "string"], shapes=[[2], []])
    return [lambda _: q.enqueue(([1.0, 2.0], "a")), lambda _: q.close(),
            lambda _: q.is_closed(), lambda _: q.enqueue(([3.0, 4.0], "b")),
            lambda _: q.dequeue(), lambda _: q.dequeue(), lambda _: q.close()]


def fifo_up_to(m):
    q = m.FIFOQueue(10, ["int64"], shapes=[[]])
    return [lambda _: q.enqueue_many([np.arange(3, dtype=np.int64)]), lambda _: q.close(),
            lambda _: q.dequeue_up_to(5), lambda _: q.dequeue_up_to(1),
            lambda _: q.dequeue_many(0)]


def fifo_unshaped(m):
    q = m.FIFOQueue(10, ["int32"])
    return [lambda _: q.enqueue([7]), lambda _: q.dequeue_many(1), lambda _: q.dequeue()]


def fifo_errors(m):
    q = m.FIFOQueue(10, ["int32", "int32"], shapes=[[2], []])
    return [lambda _: q.enqueue_many(([[1, 2, 3]], [1])),
            lambda _: q.dequeue_many(-1), lambda _: q.size()]


def fifo_cancel_close(m):
    q = m.FIFOQueue(2, ["int32"], shapes=[[]])
    return [lambda _: q.enqueue([1]), lambda _: q.close(cancel_pending_enqueues=True),
            lambda _: q.close(cancel_pending_enqueues=True), lambda _: q.enqueue([2]),
            lambda _: q.dequeue_many(2), lambda _: q.dequeue_up_to(2)]


def padding(m):
    q = m.PaddingFIFOQueue(10, ["int32", "string"], shapes=[[None], [None]])
    return [lambda _: q.enqueue(([1, 2, 3], ["a"])), lambda _: q.enqueue(([4], ["b", "c"])),
            lambda _: q.dequeue_many(2), lambda _: q.enqueue(([5, 6], ["d"])),
            lambda _: q.dequeue()]


def padding_rank(m):
    q = m.PaddingFIFOQueue(10, ["int32"], shapes=[[None, 2]])
    return [lambda _: q.enqueue([[[1, 2]]]), lambda _: q.enqueue([[[3, 4], [5, 6]]]),
            lambda _: q.dequeue_many(2), lambda _: q.enqueue([[[1, 2, 3]]])]


def priority(m):
    q = m.PriorityQueue(10, ["string"], shapes=[[]])
    return [lambda _: q.enqueue((5, "e")), lambda _: q.enqueue((1, "a")),
            lambda _: q.enqueue_many(([3, 2], ["c", "b"])), lambda _: q.dequeue(),
            lambda _: q.dequeue_many(3), lambda _: q.size()]


def shuffle(m):
    q = m.RandomShuffleQueue(20, 0, ["int32"], shapes=[[]], seed=3)
    return [lambda _: q.enqueue_many([list(range(10))]), lambda _: q.size(),
            lambda _: q.close(), lambda _: _sorted(q.dequeue_up_to(20)), lambda _: q.dequeue()]


def _sorted(x):
    a = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    return np.sort(a)


def shuffle_min(m):
    q = m.RandomShuffleQueue(10, 4, ["int32"], shapes=[[]])
    return [lambda _: q.enqueue_many([list(range(6))]), lambda _: q.size(),
            lambda _: q.close(), lambda _: _sorted(q.dequeue_up_to(10)), lambda _: q.size()]


def names(m):
    q = m.FIFOQueue(5, ["int32", "float32"], shapes=[[], []], names=["a", "b"])
    return [lambda _: q.enqueue({"a": 1, "b": 2.5}), lambda _: q.dequeue(),
            lambda _: q.enqueue_many({"a": [1, 2], "b": [3.0, 4.0]}),
            lambda _: q.dequeue_many(2)]


def bad_shapes(m):
    return [lambda _: m.FIFOQueue(5, ["int32", "int32"], shapes=[[1], [None]]).size(),
            lambda _: m.RandomShuffleQueue(5, 5, ["int32"]).size(),
            lambda _: m.PaddingFIFOQueue(5, ["int32"], shapes=[[2]]).size()]


SCRIPTS = [fifo_basic, fifo_close, fifo_up_to, fifo_unshaped, fifo_errors, fifo_cancel_close,
           padding, padding_rank, priority, shuffle, shuffle_min, names, bad_shapes]


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.__name__ for s in SCRIPTS])
def test_queue_conformance(tf, script):
    def build(m):
        try:
            return script(m)
        except (tf.errors.OpError, tfq.errors.OpError, ValueError) as e:
            return [lambda _, e=e: (_ for _ in ()).throw(e)]

    want = run(tf, tf.compat.v1, build(tf.compat.v1))
    got = run(tf, tfq, build(tfq))
    assert got == want
