"""tfq.cluster: the worker side of tfq-feed, for TF1-style programs (tf.compat.v1, graph mode).

Installed with the package (pip install on every worker is all a cluster user needs): a copy of
tools/tfq_feed_worker.py (identical below this paragraph), imported as ``import tfq.cluster as
tfw`` instead of putting tools/ on sys.path.  Needs TensorFlow (imported with this module, not with
``import tfq``).

tfq-feed (tools/tfq-feed.c) pushes the records of CSV, text or TFRecord files into TensorFlow
queues of a running cluster.  A worker reads them by building *the same* queue -- same shared
name, capacity, component dtypes, shapes and device -- in its own graph and dequeuing from it.
This module builds that queue for each of tfq-feed's topologies, so that the two sides cannot
drift apart:

  --to workers --elements batches (tfq-feed's default)
      one FIFOQueue per worker, ``NAME_w<i>`` on ``/job:worker/task:<i>``, without shapes;
      an element is one batch: a ``[b]`` tensor per column (b <= batch size, the last one may be
      short); the worker ``dequeue()``s one batch per step.
  --to ps --elements rows
      one FIFOQueue ``NAME`` on ``/job:ps/task:0`` with shapes ``[[]] * ncols``; an element is
      one row; workers ``dequeue_up_to(n)`` (or TF1's usual ``dequeue_many(n)``).
  (--to workers --elements rows and --to ps --elements batches are built the same way.)

At the end of the data the last of tfq-feed's ``--feeders`` closes every queue (a plain close):
the workers drain what is left and then get ``tf.errors.OutOfRangeError``.  Only then: a feeder
that fails or is stopped marks its unit in ``<queue>_failed`` and leaves the queues open, and a
SIGKILLed one never marks its unit done, so a clean OutOfRange means every unit sent all of its
rows.  Run the steps through ``Guard`` to turn a failed unit (or, with ``stall_s``, a stalled
feed) into ``FeedFailedError`` within a bounded time, or to wait ``retry_wait_s`` for a retry.

A complete worker (TF_CONFIG in the environment, as TensorFlowOnSpark or a launcher sets it;
``sys.path`` must reach this file, e.g. ``sys.path.insert(0, "<tfq>/tools")``)::

    import tensorflow as tf
    import tfq_feed_worker as tfw

    tf.compat.v1.disable_eager_execution()       # first: eager mode renames shared queues
    cluster, job, index = tfw.tf_config()        # TF_CONFIG -> ClusterSpec, "worker", i
    server = tfw.start_server(cluster, job, index)
    if job == "ps":
        server.join()                            # the ps only serves (and holds the done set)
    # the same -d SPEC as tfq-feed's (or the one it printed: "inferred -d '...'")
    ids, x, y = tfw.dequeue("int64,float32,float32", task_index=index)
    loss = ...                                   # ids, x, y: [b] tensors, b <= batch size
    train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.compat.v1.Session(server.target, config=tfw.session_config(index)) as sess:
        if index == 0:                           # the chief; the others wait for it
            sess.run(tf.compat.v1.global_variables_initializer())
        while True:
            try:
                sess.run(train)                  # or guard.run(sess, train): see Guard
            except tf.errors.OutOfRangeError:    # every feeder is done and the queue is drained
                break

and N feeders, e.g. one beside each worker (TensorFlowOnSpark's co-location), each reading its
share of the files and feeding every worker's queue, whichever has room::

    tfq-feed -d int64,float32,float32 --shard I/N part-*.csv      # TF_CONFIG as the worker's

For the per-row ps queue pass ``to="ps", elements="rows"`` and a row count ``n``:
``dequeue(spec, to="ps", elements="rows", n=100)`` (``many=True`` for ``dequeue_many``).

Rules that TensorFlow enforces (an error "Shared queue 'NAME' has ... but requested ... was ..."
on whichever side comes second): the capacity, dtypes and shapes must be identical.  Pass the
same ``batch_size``/``capacity`` as tfq-feed's ``-b``/``--queue-capacity`` when you change them:
the rows-mode default capacity is ``8 * batch_size``.

Do not put a short ``RunOptions.timeout_in_ms`` on a ``dequeue_up_to``/``dequeue_many`` run: when
it expires, TensorFlow cancels the dequeue and the rows it had already taken are lost (checked
with TF 2.21: ``dequeue_up_to(5)`` of a queue holding 3 rows times out, and the queue's size
afterwards is 0).  A single ``dequeue()`` of a batch element is all or nothing.

Only TensorFlow (``tf.compat.v1``) and the standard library are imported.
"""
import json
import os

import tensorflow as tf

__all__ = ["DEFAULT_QUEUE", "DEFAULT_BATCH_SIZE", "DEFAULT_CAPACITY_BATCHES", "parse_spec",
           "queue_name", "queue_device", "default_capacity", "make_queue", "dequeue",
           "done_set", "feed_state", "Guard", "FeedFailedError", "tf_config", "start_server",
           "session_config"]

DEFAULT_QUEUE = "tfq_feed"  # tfq-feed --queue
DEFAULT_BATCH_SIZE = 1024  # tfq-feed -b
DEFAULT_CAPACITY_BATCHES = 8  # tfq-feed --queue-capacity in batches mode; rows: 8 * batch size

_TYPES = {
    "float32": tf.float32, "float": tf.float32,
    "float64": tf.float64, "double": tf.float64,
    "int32": tf.int32, "int": tf.int32,
    "int64": tf.int64, "long": tf.int64,
    "string": tf.string, "str": tf.string,
}


def parse_spec(spec):
    """The component dtypes of tfq-feed's ``-d SPEC``.

    ``spec``: ``"TYPE[:DEFAULT],..."`` as tfq-cat/tfq-feed take it (only the types matter;
    defaults may be quoted: ``string:"a,b"``), the line tfq-feed prints without ``-d``
    (``inferred -d 'int64:0,float64:0.0,string:'``, the quotes and prefix are accepted), or a
    list of TYPE names or ``tf.DType``s.  ``None`` means a text or TFRecord feed (``-f text`` /
    ``-f tfrecord``): one string component.  Raises ValueError naming a bad type.

    >>> parse_spec('int64,float32:0.5,string:"a,b"')
    [tf.int64, tf.float32, tf.string]

    ``N*TYPE[:DEFAULT]`` repeats an entry N times, as the inferred line prints runs of 3 or more
    identical entries (``4*float64:0.0,string:``).
    """
    if spec is None:
        return [tf.string]
    if not isinstance(spec, str):
        return [t if isinstance(t, tf.DType) else _type(str(t)) for t in spec]
    s = spec.strip()
    if s.startswith("inferred -d"):
        s = s[len("inferred -d"):].strip()
    if len(s) >= 2 and s[0] == s[-1] == "'":
        s = s[1:-1]
    if not s:
        raise ValueError("empty -d SPEC")
    out, i = [], 0
    while True:  # [N*]TYPE[:DEFAULT], a DEFAULT in double quotes may hold ',' and '""'
        j = i
        while j < len(s) and s[j] not in ",:":
            j += 1
        entry, times = s[i:j], 1
        star = entry.find("*")
        if star > 0 and entry[:star].strip().isdigit():
            entry, times = entry[star + 1:], int(entry[:star])
        out.extend([_type(entry)] * times)
        if j < len(s) and s[j] == ":":
            j += 1
            if j < len(s) and s[j] == '"':
                j += 1
                while True:
                    if j >= len(s):
                        raise ValueError(f"unterminated quote in -d SPEC '{spec}'")
                    if s[j] == '"':
                        if s[j + 1:j + 2] == '"':
                            j += 2
                            continue
                        j += 1
                        break
                    j += 1
            else:
                while j < len(s) and s[j] != ",":
                    j += 1
        if j >= len(s):
            return out
        if s[j] != ",":
            raise ValueError(f"invalid -d SPEC '{spec}'")
        i = j + 1


def _type(name):
    try:
        return _TYPES[name.strip()]
    except KeyError:
        raise ValueError(f"unknown type '{name}' in -d SPEC (expected float32, float64, int32, "
                         "int64 or string)") from None


def _check(to, elements):
    if to not in ("workers", "ps"):
        raise ValueError(f"to={to!r}: expected 'workers' or 'ps'")
    if elements not in ("batches", "rows"):
        raise ValueError(f"elements={elements!r}: expected 'batches' or 'rows'")


def queue_name(queue=DEFAULT_QUEUE, to="workers", task_index=0):
    """The shared name tfq-feed uses: ``queue`` on the ps, ``queue_w<task_index>`` on a worker."""
    _check(to, "batches")
    return queue if to == "ps" else f"{queue}_w{int(task_index)}"


def queue_device(to="workers", task_index=0):
    """The device of the queue: ``/job:ps/task:0`` or ``/job:worker/task:<task_index>``."""
    _check(to, "batches")
    return "/job:ps/task:0" if to == "ps" else f"/job:worker/task:{int(task_index)}"


def default_capacity(elements="batches", batch_size=DEFAULT_BATCH_SIZE):
    """tfq-feed's default --queue-capacity: 8 (batches) or 8 * batch_size (rows)."""
    _check("workers", elements)
    return DEFAULT_CAPACITY_BATCHES * (int(batch_size) if elements == "rows" else 1)


def make_queue(spec, to="workers", elements="batches", queue=DEFAULT_QUEUE, capacity=None,
               batch_size=DEFAULT_BATCH_SIZE, task_index=0, acks=False):
    """The ``tf.queue.FIFOQueue`` tfq-feed feeds, built in the default graph.

    ``spec``: as ``parse_spec``.  ``to``/``elements``/``queue``: tfq-feed's ``--to``,
    ``--elements``, ``--queue``.  ``capacity``: its ``--queue-capacity`` (None: the default,
    ``default_capacity(elements, batch_size)``); ``batch_size`` (its ``-b``) matters only for
    that default.  ``task_index``: the worker whose queue this is (``to="workers"``; ignored for
    the ps queue).  Rows: ``shapes=[[]] * ncols``; batches: no shapes.

    ``acks``: tfq-feed runs with ``--acks``: every element starts with an int64 scalar key.

    Raises RuntimeError in eager mode (TF would give the queue a unique shared name, so it would
    never meet tfq-feed's): call ``tf.compat.v1.disable_eager_execution()`` first.
    """
    _check(to, elements)
    if acks and (to != "workers" or elements != "batches"):
        raise ValueError("acks: tfq-feed --acks feeds per-worker batch queues only")
    if tf.executing_eagerly():
        raise RuntimeError("tfq_feed_worker: eager mode would rename the shared queue; call "
                           "tf.compat.v1.disable_eager_execution() before building the graph")
    dtypes = ([tf.int64] if acks else []) + list(parse_spec(spec))
    if capacity is None:
        capacity = default_capacity(elements, batch_size)
    name = queue_name(queue, to, task_index)
    shapes = [[]] * len(dtypes) if elements == "rows" else None
    with tf.device(queue_device(to, task_index)):
        return tf.queue.FIFOQueue(int(capacity), dtypes, shapes=shapes, shared_name=name,
                                  name=name)


def dequeue(spec, to="workers", elements="batches", queue=DEFAULT_QUEUE, capacity=None,
            batch_size=DEFAULT_BATCH_SIZE, task_index=0, n=None, many=False, device=None,
            acks=False):
    """The dequeue op of tfq-feed's queue (``make_queue``'s arguments), as a list of tensors, one
    per column in the order of the CSV columns (``-d``/``--select-cols``).

    * batches: ``q.dequeue()``; each tensor gets ``set_shape([None])``: one batch, ``[b]``.
    * rows: ``q.dequeue_up_to(n)`` (the last run may return fewer than ``n`` rows), or with
      ``many=True`` TF1's usual ``q.dequeue_many(n)`` (exactly ``n``: the rows left after the
      last full batch are not returned).  ``n`` is required.

    The op is placed on ``device`` (default: the worker ``task_index``, where the training step
    runs).  Each run raises ``tf.errors.OutOfRangeError`` once tfq-feed has closed the queue and
    it is empty.

    ``acks=True`` (tfq-feed ``--acks``): the first tensor returned is the batch's key (an int64
    scalar), to be passed to ``ack`` in the same run as the training step.
    """
    q = make_queue(spec, to, elements, queue, capacity, batch_size, task_index, acks)
    ncols = len(q.dtypes)
    with tf.device(device or f"/job:worker/task:{int(task_index)}"):
        if elements == "batches":
            if n is not None or many:
                raise ValueError("batches: an element is a whole batch; dequeue() takes no n")
            out = q.dequeue()
        else:
            if n is None or int(n) < 1:
                raise ValueError("rows: give the number of rows n >= 1 of each dequeue")
            out = q.dequeue_many(int(n)) if many else q.dequeue_up_to(int(n))
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    assert len(out) == ncols
    if elements == "batches":
        for t in out[1 if acks else 0:]:
            t.set_shape([None])
    return out


def ack(key, rows, train, task_index, queue=DEFAULT_QUEUE, device="/job:ps/task:0"):
    """The acknowledgement of tfq-feed ``--acks``: an op, control-dependent on ``train`` (the
    training step), that inserts ``key << 6 | task_index -> rows`` into the table
    ``<queue>_acked`` on the ps (``/job:worker/task:0`` in a cluster without a ps).  Run it in
    the same ``Session.run`` as the step: ``sess.run([train, ack_op])``.  ``key``: the first
    tensor of ``dequeue(..., acks=True)``; ``rows``: the rows of the batch (e.g. ``tf.size`` of
    a column).  At most 64 worker tasks.

    The feeder keeps each batch until it sees its acknowledgement; when a worker is lost (three
    failed probes), its unacknowledged batches go to the other workers, so every record is
    trained at least once.  The feeder's ``--stats`` duplicates count only what the ack table
    shows: re-sent batches acknowledged by two or more workers, and what earlier attempts of a
    unit acknowledged.  NOT counted: a batch whose ``train`` ran on a worker that died before this
    insert landed (after the variable update, before or during the acknowledgement): it is
    re-sent, trained again by another worker and acknowledged once -- at most one batch per
    ``Session.run`` that was inside a step on the dead worker (one per lost worker for a loop
    that runs one step at a time).  Record the keys your model applied in its own state, in the
    same step, if you must know exactly."""
    if not 0 <= int(task_index) < 64:
        raise ValueError("acks: worker task indices 0..63")
    with tf.device(device):
        table = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.int64,
                                              shared_name=f"{queue}_acked", container="",
                                              use_node_name_sharing=False)
        with tf.control_dependencies([train]):
            k = tf.bitwise.bitwise_or(tf.bitwise.left_shift(tf.cast(key, tf.int64),
                                                            tf.constant(6, tf.int64)),
                                      tf.constant(int(task_index), tf.int64))
            return tf.raw_ops.LookupTableInsertV2(
                table_handle=table, keys=tf.reshape(k, [1]),
                values=tf.reshape(tf.cast(rows, tf.int64), [1]))


def done_set(queue=DEFAULT_QUEUE, device="/job:ps/task:0"):
    """(size, units): ops reading tfq-feed's done set, the ``MutableHashTable`` ``<queue>_done``
    (int64 unit -> int64 1) on ``/job:ps/task:0`` (``/job:worker/task:0`` in a cluster without
    a ps): how many feeder units have finished, and which.  Useful to see which feeder is
    missing when the workers wait for ever."""
    with tf.device(device):
        table = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.int64,
                                              shared_name=f"{queue}_done")
        size = tf.raw_ops.LookupTableSizeV2(table_handle=table)
        keys, _ = tf.raw_ops.LookupTableExportV2(table_handle=table, Tkeys=tf.int64,
                                                 Tvalues=tf.int64)
    return size, keys


class FeedFailedError(RuntimeError):
    """A feeder unit failed or was stopped (its mark in ``<queue>_failed``), or the feed stalled:
    the input did not reach the workers whole, so the worker must not end as if it had."""


def feed_state(queue=DEFAULT_QUEUE, device="/job:ps/task:0"):
    """(done_units, failed_units, failed_messages): ops reading tfq-feed's job state on ``device``
    (``/job:worker/task:0`` in a cluster without a ps), in the default graph.  ``<queue>_done`` is
    a ``MutableHashTable`` int64 unit -> int64 1 (a unit whose input ended and was all sent);
    ``<queue>_failed`` is a ``MutableHashTable`` int64 unit -> string message, written by a
    feeder that met an error or a signal (SIGINT, SIGTERM, SIGHUP) before the end of its input
    ("tfq-feed unit U (attempt A): MESSAGE").  A unit is failed while it is in the failed set and
    not in the done set (a retry that completes it marks it done).  A SIGKILLed feeder writes
    nothing: its unit is simply never done."""
    with tf.device(device):
        done = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.int64,
                                             shared_name=f"{queue}_done")
        failed = tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.string,
                                               shared_name=f"{queue}_failed")
        done_units, _ = tf.raw_ops.LookupTableExportV2(table_handle=done, Tkeys=tf.int64,
                                                       Tvalues=tf.int64)
        units, messages = tf.raw_ops.LookupTableExportV2(table_handle=failed, Tkeys=tf.int64,
                                                         Tvalues=tf.string)
    return done_units, units, messages


class Guard:
    """Runs a worker's steps so that a failed feed ends in an error, within a bounded time.

    ``target``: the session target (``server.target``); ``device``: where tfq-feed keeps the job
    state (``/job:ps/task:0``, or ``/job:worker/task:0`` without a ps); ``queue``: its
    ``--queue``.  ``guard.run(sess, fetches)`` is ``sess.run(fetches)`` with
    ``RunOptions.timeout_in_ms = poll_ms``: while the queue is empty, every ``poll_ms`` the guard
    reads the job state (its own graph and session, device filter ``device``) and raises
    ``FeedFailedError`` with the feeder's message once a unit has been failed (and not done) for
    ``retry_wait_s`` seconds (0, the default: at once; give the time your scheduler needs to retry
    a unit, e.g. Spark's task retry, to let a retry complete the feed), or, with ``stall_s``, once
    no step has completed for ``stall_s`` seconds while no feeder has closed the queues (a
    SIGKILLed feeder leaves no mark).  ``tf.errors.OutOfRangeError`` still ends the loop: the
    queues are closed only when every unit is done.

    The timeout cancels a step waiting on the queue before it dequeued (a batch element is
    dequeued whole or not at all), so use it with ``elements="batches"`` queues, and make
    ``poll_ms`` longer than a training step.  Not for ``dequeue_up_to``/``dequeue_many`` of the
    rows queue (see the module's note on timeouts)."""

    def __init__(self, target, device="/job:ps/task:0", queue=DEFAULT_QUEUE, poll_ms=1000,
                 retry_wait_s=0.0, stall_s=None):
        import time
        self._time = time.monotonic
        self.poll_ms, self.retry_wait_s, self.stall_s = int(poll_ms), float(retry_wait_s), stall_s
        self._graph = tf.Graph()
        with self._graph.as_default():
            self._state = feed_state(queue, device)
        self._sess = tf.compat.v1.Session(target, graph=self._graph,
                                          config=tf.compat.v1.ConfigProto(
                                              device_filters=[device]))
        self._options = tf.compat.v1.RunOptions(timeout_in_ms=self.poll_ms)
        self._failed_since = None
        self._last_step = self._time()

    def run(self, sess, fetches, feed_dict=None):
        """``sess.run(fetches, feed_dict)``, polling the job state while it waits (see the class)."""
        while True:
            try:
                out = sess.run(fetches, feed_dict=feed_dict, options=self._options)
                self._last_step = self._time()
                return out
            except tf.errors.DeadlineExceededError:
                self.check()

    def check(self):
        """Raises FeedFailedError when the feed failed (see the class); else returns."""
        try:
            done, units, messages = self._sess.run(self._state)
        except tf.errors.OpError as e:
            raise FeedFailedError(f"the feed's state is unreachable ({e.message.splitlines()[0]}):"
                                  " the feed cannot be known to be complete") from e
        done = set(done.tolist())
        failed = sorted((int(u), m.decode("utf-8", "replace"))
                        for u, m in zip(units.tolist(), messages) if u not in done)
        now = self._time()
        if not failed:
            self._failed_since = None
        elif self._failed_since is None:
            self._failed_since = now
        if failed and now - self._failed_since >= self.retry_wait_s:
            wait = (f" (no retry completed it within {self.retry_wait_s:g} s)"
                    if self.retry_wait_s else "")
            raise FeedFailedError("; ".join(m for _, m in failed) + wait)
        if self.stall_s is not None and now - self._last_step >= float(self.stall_s):
            raise FeedFailedError(
                f"no data for {float(self.stall_s):g} s and the feed is not finished (units "
                f"done: {sorted(done) or 'none'}): a feeder was killed without a mark (SIGKILL) "
                "or is stuck")

    def close(self):
        self._sess.close()


def tf_config(text=None):
    """(ClusterSpec, job, index) from TF_CONFIG, read as TF's TFConfigClusterResolver does.

    ``text``: the JSON (a str or an already parsed dict); None reads ``$TF_CONFIG``.  A job may
    be a list of addresses or the sparse form ``{"1": "h:p"}`` (keys turned into ints).
    ``job``/``index`` come from ``task`` (``type``, ``index`` as an int or a numeric string);
    ``(None, None)`` when there is no task (a pure client).  Raises ValueError on malformed
    JSON or a bad task, naming the cause.
    """
    if text is None:
        text = os.environ.get("TF_CONFIG", "") or "{}"
    try:
        c = text if isinstance(text, dict) else json.loads(text)
    except ValueError as e:
        raise ValueError(f"TF_CONFIG: malformed JSON: {e}") from None
    if not isinstance(c, dict):
        raise ValueError("TF_CONFIG: not a JSON object")
    jobs = {}
    for name, tasks in (c.get("cluster") or {}).items():
        if isinstance(tasks, dict):
            try:
                jobs[name] = {int(k): v for k, v in tasks.items()}
            except ValueError:
                raise ValueError(f"TF_CONFIG: cluster.{name}: a non-integer index") from None
        elif isinstance(tasks, list):
            jobs[name] = list(tasks)
        else:
            raise ValueError(f"TF_CONFIG: cluster.{name}: neither a list nor an object")
    task = c.get("task") or {}
    job = task.get("type")
    index = task.get("index")
    if job is not None:
        try:
            index = int(index if index is not None else 0)
        except (TypeError, ValueError):
            raise ValueError(f"TF_CONFIG: task.index {index!r} is not an integer") from None
    else:
        index = None
    return tf.train.ClusterSpec(jobs), job, index


def start_server(cluster=None, job=None, index=None, config=None, start=True):
    """Starts this process's task: ``tf.distribute.Server(cluster, job_name=job,
    task_index=index)`` over gRPC.  With no arguments the three come from ``tf_config()``.
    ``cluster`` may be a ClusterSpec, a dict, or tfq-feed's ``--cluster`` form
    ``'ps=h:p;worker=h:p,h:p'``.  Returns the server; ``server.target`` is the session target
    and ``server.join()`` serves for ever (the ps)."""
    if cluster is None:
        cluster, cjob, cindex = tf_config()
        job = job if job is not None else cjob
        index = index if index is not None else cindex
    elif isinstance(cluster, str):
        jobs = {}
        for part in filter(None, cluster.split(";")):
            name, addrs = part.split("=", 1)
            jobs[name.strip()] = [a.strip() for a in addrs.split(",")]
        cluster = tf.train.ClusterSpec(jobs)
    elif isinstance(cluster, dict):
        cluster = tf.train.ClusterSpec(cluster)
    if job is None:
        raise ValueError("start_server: no task (TF_CONFIG has no \"task\"; pass job and index)")
    return tf.distribute.Server(cluster, job_name=job, task_index=int(index or 0), config=config,
                                start=start)


def session_config(task_index, job="worker", timeout_ms=None, **kwargs):
    """A ``ConfigProto`` for the session of ``/job:<job>/task:<task_index>``: ``device_filters``
    of the ps and this task only, so that creating the session does not wait for the other
    workers, and optionally ``operation_timeout_in_ms`` (see the module's note on timeouts and
    ``dequeue_up_to``).  Extra keyword arguments go to ConfigProto."""
    cfg = tf.compat.v1.ConfigProto(
        device_filters=["/job:ps", f"/job:{job}/task:{int(task_index)}"], **kwargs)
    if timeout_ms:
        cfg.operation_timeout_in_ms = int(timeout_ms)
    return cfg
