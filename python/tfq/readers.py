"""TF1's readers under their names, eager (tf.compat.v1.TextLineReader, TFRecordReader,
FixedLengthRecordReader, WholeFileReader, IdentityReader): ``read(queue)`` takes the next file
name from a tfq queue of one string component (``tfq.FIFOQueue(n, ["string"])``, filled by the
caller or by ``tfq.train.string_input_producer``) and returns ``(key, value)`` as numpy bytes
scalars; ``read_up_to(queue, n)`` returns two ``[k]`` object arrays of bytes (k <= n, one file at
a time).  Every read runs in C with the GIL released.  Keys are TF's ("<file>:<line>" and so
on); errors are TF's classes and messages (tfq.errors).  TF itself has no eager readers
("Readers are not supported when eager execution is enabled"): these run at once."""
from . import _tfq
from .data import _numpy
from .queues import QueueBase

_TEXT_LINE, _FIXED_LENGTH, _TFRECORD, _WHOLE_FILE, _IDENTITY = range(5)


def _queue(q):
    if isinstance(q, QueueBase):
        return q._q
    raise TypeError("a reader reads file names from a tfq queue (tfq.FIFOQueue(n, ['string']) "
                    "or tfq.train.string_input_producer), not %r" % type(q).__name__)


def _bytes_array(t):
    np = _numpy()
    s = t.strings()
    a = np.empty(len(s), dtype=object)
    a[:] = s
    return a.reshape(t.shape)


class ReaderBase:
    """The common API (TF's ReaderBase)."""
    _KIND = _IDENTITY
    supports_serialize = False

    def __init__(self, name=None, **options):
        options["name"] = name
        self._r = _tfq.Reader(self._KIND, options)
        from .data import _watch_interrupts
        _watch_interrupts()  # Ctrl-C wakes a read that waits for a work unit (main thread)

    @property
    def reader_ref(self):
        return self._r

    def read(self, queue, name=None):
        if getattr(queue, "_deferred", False):  # a tfq.train producer's, not started yet
            from .train import _read_node
            return _read_node(self, queue, None)
        k, v = self._r.read(_queue(queue))
        return _bytes_array(k)[()], _bytes_array(v)[()]

    def read_up_to(self, queue, num_records, name=None):
        if getattr(queue, "_deferred", False):
            from .train import _read_node
            return _read_node(self, queue, int(num_records))
        k, v = self._r.read_up_to(_queue(queue), int(num_records))
        return _bytes_array(k), _bytes_array(v)

    def num_records_produced(self, name=None):
        return _numpy().int64(self._r.num_records_produced())

    def num_work_units_completed(self, name=None):
        return _numpy().int64(self._r.num_work_units_completed())

    def serialize_state(self, name=None):
        return self._r.serialize_state()

    def restore_state(self, state, name=None):
        self._r.restore_state(bytes(state))

    def reset(self, name=None):
        self._r.reset()


class TextLineReader(ReaderBase):
    """tf.compat.v1.TextLineReader(skip_header_lines=None, name=None): one line per record,
    key "<file>:<line>" (1-based)."""
    _KIND = _TEXT_LINE

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(name, skip_header_lines=skip_header_lines)


class FixedLengthRecordReader(ReaderBase):
    """tf.compat.v1.FixedLengthRecordReader(record_bytes, header_bytes=None, footer_bytes=None,
    hop_bytes=None, name=None, encoding=None): key "<file>:<index>".  A file that ends inside a
    record is DataLossError (TF drops the short record silently; tf_compat_truncation=True does
    as TF)."""
    _KIND = _FIXED_LENGTH

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None, tf_compat_truncation=False):
        super().__init__(name, record_bytes=record_bytes, header_bytes=header_bytes,
                         footer_bytes=footer_bytes, hop_bytes=hop_bytes,
                         compression=encoding or "", tf_compat_truncation=tf_compat_truncation)


class TFRecordReader(ReaderBase):
    """tf.compat.v1.TFRecordReader(name=None, options=None): options a compression name ("",
    "ZLIB", "GZIP") or an object with ``compression_type`` (TF's TFRecordOptions)."""
    _KIND = _TFRECORD

    def __init__(self, name=None, options=None):
        comp = getattr(options, "compression_type", options)
        super().__init__(name, compression=comp if isinstance(comp, str) else "")


class WholeFileReader(ReaderBase):
    """tf.compat.v1.WholeFileReader(name=None): key the file name, value its contents."""
    _KIND = _WHOLE_FILE
    supports_serialize = True

    def __init__(self, name=None):
        super().__init__(name)


class IdentityReader(ReaderBase):
    """tf.compat.v1.IdentityReader(name=None): key = value = the work unit."""
    _KIND = _IDENTITY
    supports_serialize = True

    def __init__(self, name=None):
        super().__init__(name)
