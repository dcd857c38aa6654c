"""tfq.data: files -> shuffled numpy batches, on tfq_pipeline (docs/python.md, docs/pipeline.md).

    with tfq.data.csv("train-*.csv", header=True, batch_size=128, seed=7) as batches:
        for batch in batches:          # {"x": float32 array [128], "label": int64 ...}
            ...

Each batch is a dict of column name -> numpy array; a VarLen feature is a tuple (indices,
values, dense_shape), a FixedLenSequence feature with ragged=True a tuple (values, row_splits).
Numeric arrays view the library's memory without a copy; string columns are numpy object arrays
of bytes (as TF's .numpy() gives).  The GIL is released while a batch is waited for and decoded.
A pipeline runs only in the process that made it: under fork (PyTorch DataLoader workers) make
it in the worker.
"""
import os

from . import _tfq, errors
from .io import _feature_tuple

_WATCHING = []


def _watch_interrupts():
    """Ctrl-C wakes a blocked next(): Python's signal handler writes each signal's number to a
    wakeup pipe (signal.set_wakeup_fd) that a C thread watches (pipeline.c).  Set once, from the
    main thread, and only when nobody else has set a wakeup fd (asyncio sets its own while a loop
    runs, and puts this one back after)."""
    if _WATCHING:
        return
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(r)
        os.close(w)
        return
    if old != -1:  # someone else's: leave it
        signal.set_wakeup_fd(old)
        os.close(r)
        os.close(w)
        return
    _WATCHING.append((r, w))
    _tfq._watch_interrupts(r)

FORMAT_CSV, FORMAT_TEXT, FORMAT_TFRECORD, FORMAT_EXAMPLES, FORMAT_FIXED_LENGTH = 0, 1, 2, 3, 4
FORMAT_TFRECORD_AUTO = 5
_FORMAT_NAMES = {0: "csv", 1: "text", 2: "tfrecord", 3: "examples", 4: "fixed_length"}
_COMPRESSION = {None: 3, "AUTO": 3, "": 0, "NONE": 0, "ZLIB": 1, "GZIP": 2}

_np = None
# TF's dtype names (the library's) -> numpy's.
_NP_NAMES = {"float": "float32", "double": "float64", "half": "float16"}


def _numpy():
    global _np
    if _np is None:
        import numpy
        _np = numpy
    return _np


class Pipeline:
    """An iterator of batches (dicts of numpy arrays) over a tfq_pipeline; a context manager
    that stops its threads on exit.  Made by csv(), text(), tfrecord(), examples()."""

    def __init__(self, files, options):
        if isinstance(files, (str, bytes, os.PathLike)):
            files = [files]
        files = [os.fspath(f) for f in files]
        opts = {k: v for k, v in options.items() if v is not None}
        if isinstance(opts.get("header"), str):
            if opts["header"] != "auto":
                raise ValueError("header must be True, False or 'auto', not %r" % opts["header"])
            opts["header"] = -1  # detected from the file, as tfq-cat does
        for k in ("header", "shuffle", "deterministic", "drop_remainder", "use_quote_delim",
                  "keys", "ragged"):
            if k in opts and opts[k] != -1:
                opts[k] = int(bool(opts[k]))
        self._p = _tfq.Pipeline(files, opts)
        _watch_interrupts()
        self._columns = [(n, _NP_NAMES.get(d, d), s, slot, k)
                         for n, d, s, slot, k in self._p.columns()]
        self._plan = [(n, slot, k, d == "string") for n, d, _, slot, k in self._columns]

    # ---- iteration ----
    def __iter__(self):
        return self

    def __next__(self):
        try:
            slots = self._p.next()
        except errors.OutOfRangeError:
            raise StopIteration from None
        return self._batch(slots)

    def next_raw(self):
        """The next batch as the library's tuple of Tensors (one per slot); OutOfRangeError at
        the end.  Numeric Tensors export the buffer protocol; ._address() is their data."""
        return self._p.next()

    def _batch(self, slots):
        np = _numpy()
        out = {}
        for name, slot, kind, is_str in self._plan:
            if kind == "sparse":
                out[name] = (np.asarray(slots[slot]), _array(np, slots[slot + 1], is_str),
                             np.asarray(slots[slot + 2]))
            elif kind == "ragged":
                out[name] = (_array(np, slots[slot], is_str), np.asarray(slots[slot + 1]))
            else:
                out[name] = _array(np, slots[slot], is_str)
        return out

    # ---- the rest of the pipeline's API ----
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stops the reader threads and frees the pipeline (idempotent)."""
        self._p.close()

    def stop(self):
        """Stops the pipeline from any thread: a blocked next raises errors.CancelledError."""
        self._p.stop()

    @property
    def closed(self):
        return self._p.closed

    def save(self, path=None):
        """The checkpoint state at the current batch boundary: bytes, or written to `path`
        atomically (returns None)."""
        if path is None:
            return self._p.save()
        return self._p.save(os.fspath(path))

    def restore(self, state):
        """Restores a state from save() (bytes) or a file path, before the first batch, into a
        pipeline made with the same options and files."""
        if isinstance(state, (bytes, bytearray, memoryview)):
            self._p.restore(state)
        else:
            self._p.restore_file(os.fspath(state))

    def stats(self):
        """The counters: seed, records_read, records_out, batches_out, bad_records,
        records_dropped, bytes_read, buffer_records, buffer_capacity, epoch, files."""
        return self._p.stats()

    @property
    def columns(self):
        """[(name, dtype, per-record shape, kind)], kind 'dense', 'sparse' or 'ragged'."""
        return [(n, d, s, k) for n, d, s, _, k in self._columns]

    @property
    def column_names(self):
        return [c[0] for c in self._columns]

    @property
    def columns_spec(self):
        """CSV: the columns as a spec string (given or inferred), tfq-cat's -d syntax."""
        return self._p.info()["columns_spec"]

    @property
    def features_spec(self):
        """Examples: the features (given or inferred) as tfq-cat's --features SPEC."""
        return self._p.info()["features_spec"]

    @property
    def format(self):
        return _FORMAT_NAMES[self._p.info()["format"]]


def _array(np, t, is_str):
    if is_str:
        # the bytes objects go straight into the array's pointers (one pass, no list)
        a = np.empty(t.shape, dtype=object)
        t.strings_into(a)
        return a
    return np.asarray(t)


def _spec_entry(d):
    """One record_defaults entry (TF's: [value], [] or a typed empty array) as a spec entry."""
    np = None
    if isinstance(d, (list, tuple)):
        if len(d) == 0:
            return "float32"  # tf.constant([]) is float32: a required float32 column
        if len(d) != 1:
            raise errors.InvalidArgumentError(None, None, "record_defaults entry %r: one value "
                                              "(a default) or none (required)" % (d,))
        d = d[0]
    if isinstance(d, str) and d in ("float32", "float64", "int32", "int64", "string"):
        return d  # a dtype name alone: required
    dt = getattr(d, "dtype", None)
    if dt is not None:
        np = _numpy()
        a = np.asarray(d)
        name = {"float32": "float32", "float64": "float64", "int32": "int32",
                "int64": "int64"}.get(a.dtype.name, "string")
        if a.size == 0:
            return name
        d = a.reshape(-1)[0].item()
        if name == "string":
            d = d if isinstance(d, (bytes, str)) else str(d)
        else:
            return "%s:%r" % (name, d)
    if isinstance(d, bool):
        raise errors.InvalidArgumentError(None, None, "record_defaults: bool is not a CSV type")
    if isinstance(d, int):
        return "int32:%d" % d
    if isinstance(d, float):
        return "float32:%r" % d
    if isinstance(d, bytes):
        d = d.decode("utf-8", "surrogateescape")
    if isinstance(d, str):
        return 'string:"%s"' % d.replace('"', '""')
    raise errors.InvalidArgumentError(None, None, "record_defaults entry %r: not a float, int, "
                                      "string or dtype" % (d,))


def _columns_spec(record_defaults):
    if record_defaults is None or isinstance(record_defaults, str):
        return record_defaults
    return ",".join(_spec_entry(d) for d in record_defaults)


def _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs, num_threads,
            shard, max_bad_records, deterministic, drop_remainder, compression, keys, step,
            on_bad_record):
    if shard is not None:
        shard = (int(shard[0]), int(shard[1]))
    comp = compression.upper() if isinstance(compression, str) else compression
    if comp not in _COMPRESSION:
        raise errors.InvalidArgumentError(None, None, "compression %r: one of None, '', 'ZLIB', "
                                          "'GZIP'" % (compression,))
    return dict(batch_size=batch_size, shuffle=shuffle, capacity=capacity,
                min_after_dequeue=min_after_dequeue, seed=seed, num_epochs=num_epochs,
                num_threads=num_threads, shard=shard, max_bad_records=max_bad_records,
                deterministic=deterministic, drop_remainder=drop_remainder,
                compression=_COMPRESSION[comp], keys=keys, step=step,
                on_bad_record=on_bad_record)


def csv(files, record_defaults=None, *, header=False, select_cols=None, field_delim=",",
        na_value=None, use_quote_delim=True, skip_header_lines=None, infer_rows=None,
        batch_size=32, shuffle=True, capacity=None, min_after_dequeue=None, seed=None,
        num_epochs=1, num_threads=1, shard=None, max_bad_records=0, deterministic=False,
        drop_remainder=False, compression=None, keys=False, step=None, on_bad_record=None):
    """Batches of CSV records decoded as tf.io.decode_csv decodes them.

    record_defaults: TF's list ([[0.0], [0], [""], []]: float32, int32, string, required
    float32; a numpy scalar or typed array gives its dtype), a spec string ("2*float32:-1,
    int64:0,string:", tfq-cat's -d), or None to infer the columns from the first file as tfq-cat
    does.  header=True names the columns from the first line (else c0, c1, ...);
    header="auto" takes the first line as a header when it looks like one (text over a column of
    numbers, as csv.Sniffer.has_header judges it; tfq-cat's default), and drops a UTF-8 BOM.
    shard=(i, n): this worker's share (by file with at least n files, else by record).
    max_bad_records: bad records skipped (each reported once to on_bad_record(where, reason),
    on the consuming thread; default: one line on stderr) before one stops the pipeline.
    deterministic=True with a seed: the batches are a function of (input, options, seed)."""
    opts = _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs,
                   num_threads, shard, max_bad_records, deterministic, drop_remainder,
                   compression, keys, step, on_bad_record)
    opts.update(format=FORMAT_CSV, columns=_columns_spec(record_defaults), header=header,
                select_cols=None if select_cols is None else [int(c) for c in select_cols],
                field_delim=field_delim if field_delim != "," else None, na_value=na_value,
                use_quote_delim=use_quote_delim, skip_header_lines=skip_header_lines,
                infer_rows=infer_rows)
    return Pipeline(files, opts)


def text(files, *, skip_header_lines=None, batch_size=32, shuffle=True, capacity=None,
         min_after_dequeue=None, seed=None, num_epochs=1, num_threads=1, shard=None,
         max_bad_records=0, deterministic=False, drop_remainder=False, compression=None,
         keys=False, step=None, on_bad_record=None):
    """Batches of lines (TextLineReader): one string column "line"."""
    opts = _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs,
                   num_threads, shard, max_bad_records, deterministic, drop_remainder,
                   compression, keys, step, on_bad_record)
    opts.update(format=FORMAT_TEXT, skip_header_lines=skip_header_lines)
    return Pipeline(files, opts)


def tfrecord(files, *, batch_size=32, shuffle=True, capacity=None, min_after_dequeue=None,
             seed=None, num_epochs=1, num_threads=1, shard=None, max_bad_records=0,
             deterministic=False, drop_remainder=False, compression=None, keys=False, step=None,
             on_bad_record=None):
    """Batches of raw TFRecord records: one string column "record"."""
    opts = _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs,
                   num_threads, shard, max_bad_records, deterministic, drop_remainder,
                   compression, keys, step, on_bad_record)
    opts.update(format=FORMAT_TFRECORD)
    return Pipeline(files, opts)


def fixed_length(files, record_bytes, *, header_bytes=0, footer_bytes=0, hop_bytes=0,
                 batch_size=32, shuffle=True, capacity=None, min_after_dequeue=None, seed=None,
                 num_epochs=1, num_threads=1, shard=None, max_bad_records=0,
                 deterministic=False, drop_remainder=False, compression=None, keys=False,
                 step=None, on_bad_record=None):
    """Batches of fixed-length records (FixedLengthRecordReader): one string column "record"."""
    opts = _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs,
                   num_threads, shard, max_bad_records, deterministic, drop_remainder,
                   compression, keys, step, on_bad_record)
    opts.update(format=FORMAT_FIXED_LENGTH,
                fixed_length=(record_bytes, header_bytes, footer_bytes, hop_bytes))
    return Pipeline(files, opts)


def examples(files, features=None, *, ragged=False, infer_rows=None, batch_size=32,
             shuffle=True, capacity=None, min_after_dequeue=None, seed=None, num_epochs=1,
             num_threads=1, shard=None, max_bad_records=0, deterministic=False,
             drop_remainder=False, compression=None, keys=False, step=None,
             on_bad_record=None):
    """Batches of tf.train.Example records parsed as tf.io.parse_example parses them.

    features: {key: tfq.io.FixedLenFeature | VarLenFeature | FixedLenSequenceFeature} (TF's
    classes work too), or None to infer them from the first file as tfq-cat does.  A VarLen
    feature is a tuple (indices, values, dense_shape); ragged=True gives FixedLenSequence
    features as (values, row_splits) instead of padded arrays."""
    opts = _common(batch_size, shuffle, capacity, min_after_dequeue, seed, num_epochs,
                   num_threads, shard, max_bad_records, deterministic, drop_remainder,
                   compression, keys, step, on_bad_record)
    feats = None
    if features is not None:
        if not features:
            raise errors.InvalidArgumentError(
                None, None, "Argument `features` cannot be None or falsy. Got %r" % (features,))
        feats = [_feature_tuple(k, features[k]) for k in sorted(features)]
    opts.update(format=FORMAT_EXAMPLES, features=feats, ragged=ragged, infer_rows=infer_rows)
    return Pipeline(files, opts)
