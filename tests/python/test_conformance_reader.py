"""Differential conformance, reader family: the same scripts through tf.compat.v1's readers (in a
graph, each step one Session.run) and through tfq's (eager): every step's value, or its error
class and message (queue names normalized), must agree.  The file names come from one queue of
strings, filled and closed by the script, as string_input_producer would."""
import re
import threading

import pytest

import tfq
from tfconform import norm


class Graph:
    """Wraps a graph-mode object: a method call builds the op and runs it at once."""

    def __init__(self, obj, sess):
        self.obj, self.sess = obj, sess

    def __getattr__(self, name):
        f = getattr(self.obj, name)

        def call(*args):
            args = [a.obj if isinstance(a, Graph) else a for a in args]
            return self.sess.run(f(*args))
        return call


def message(e, tf):
    msg = e.message if isinstance(e, tf.errors.OpError) else str(e)
    if msg.startswith("Graph execution error:"):  # the op's message: the line before "\t [[{{node"
        msg = re.split(r"\nNode: '[^']*'\n", msg.split("\n\t [[")[0], maxsplit=1)[-1]
    msg = re.sub(r"^\{\{[^}]*\}\} ", "", msg.split(" [Op:")[0])
    # protobuf's DebugString starts with a marker that it varies on purpose (debugproto,
    # debugonly, ...) so that nobody parses it
    msg = re.sub(r"goo\.gle/debug\w+ *", "goo.gle/debug<marker> ", msg)
    return re.sub(r"'[^']*'", "'<q>'", msg)


def run(tf, reader, queue, files, script):
    queue.enqueue_many([files])
    queue.close()
    log = []
    for step in script:
        meth, args = step[0], list(step[1:])
        if meth in ("read", "read_up_to"):
            args.insert(0, queue)
        try:
            log.append(("ok", norm(getattr(reader, meth)(*args))))
        except (tf.errors.OpError, tfq.errors.OpError) as e:
            log.append((type(e).__name__, message(e, tf)))
    return log


def compare(tf, make_reader, files, script):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.Session(graph=g) as sess:
        want = run(tf, Graph(make_reader(tf.compat.v1), sess),
                   Graph(tf.compat.v1.FIFOQueue(len(files) + 1, [tf.string], shapes=[[]]), sess),
                   files, script)
    got = run(tf, make_reader(tfq), tfq.FIFOQueue(len(files) + 1, ["string"], shapes=[[]]), files,
              script)
    assert got == want
    return want


READS = [("read",)] * 3 + [("read_up_to", 2), ("num_records_produced",),
                           ("num_work_units_completed",)] + [("read_up_to", 4)] * 4 + [
    ("read",), ("num_records_produced",), ("num_work_units_completed",)]


@pytest.fixture
def files(tmp_path):
    out = []
    for k, body in enumerate([b"h0\nl1\nl2\nl3", b"", b"h2\r\nl4\r\n", b"h3\nl5\nl6\nl7\nl8\n"]):
        p = tmp_path / ("f%d.txt" % k)
        p.write_bytes(body)
        out.append(str(p))
    return out


def test_text_line_reader(tf, files):
    for skip in (None, 1, 3):
        log = compare(tf, lambda m: m.TextLineReader(skip_header_lines=skip), files, READS)
        assert log[-1][0] == "ok" and log[-4][0] == "OutOfRangeError"


def test_text_line_reset_and_missing_file(tf, files, tmp_path):
    script = [("read",), ("reset",), ("num_records_produced",), ("read",), ("read",),
              ("read_up_to", 10), ("read",)]
    compare(tf, lambda m: m.TextLineReader(), [str(tmp_path / "nope")] + files, script)


def test_whole_file_and_identity_reader_state(tf, files):
    script = [("read",), ("serialize_state",), ("read",), ("serialize_state",),
              ("read_up_to", 3), ("num_work_units_completed",), ("reset",),
              ("serialize_state",), ("read",)]
    for make in (lambda m: m.WholeFileReader(), lambda m: m.IdentityReader()):
        log = compare(tf, make, files, script)
        assert log[3][0] == "ok" and log[3][1][2]  # a non-empty ReaderBaseState


def test_restore_state_errors(tf, files):
    for state in (b"", b"\x08\x05\x10\x01", b"\xff\xff", b"\x18\x03"):
        compare(tf, lambda m: m.IdentityReader(), files, [("restore_state", state),
                                                          ("num_records_produced",),
                                                          ("read",)])
    compare(tf, lambda m: m.TextLineReader(), files, [("serialize_state",),
                                                      ("restore_state", b"")])


def test_fixed_length_reader(tf, tmp_path):
    fs = []
    for k, n in enumerate([23, 0, 7, 31]):
        p = tmp_path / ("r%d.bin" % k)
        p.write_bytes(bytes((k * 37 + i) % 256 for i in range(n)))
        fs.append(str(p))
    for kw in ({"record_bytes": 4}, {"record_bytes": 3, "header_bytes": 2, "footer_bytes": 1},
               {"record_bytes": 5, "hop_bytes": 2}):
        # TF drops a short last record silently; tfq raises DataLoss unless told to do as TF
        compare(tf, lambda m: m.FixedLengthRecordReader(**kw) if m is not tfq else
                m.FixedLengthRecordReader(**kw, tf_compat_truncation=True), fs, READS)
    with pytest.raises(tfq.errors.DataLossError, match="ends inside record 5"):
        q = tfq.FIFOQueue(2, ["string"])
        q.enqueue(fs[0])
        q.close()
        r = tfq.FixedLengthRecordReader(4)
        assert r.read_up_to(q, 100)[1].tolist() == [bytes(range(k, k + 4)) for k in
                                                    range(0, 20, 4)]
        r.read_up_to(q, 100)  # the kept error


def test_tfrecord_reader(tf, tmp_path):
    fs = []
    for k, (n, comp) in enumerate([(5, ""), (0, ""), (3, "GZIP"), (4, "ZLIB")]):
        p = str(tmp_path / ("t%d.tfrecord" % k))
        with tf.io.TFRecordWriter(p, options=comp or None) as w:
            for i in range(n):
                w.write(b"rec-%d-%d" % (k, i) * (i + 1))
        fs.append((p, comp))
    plain = [p for p, c in fs if c == ""]
    compare(tf, lambda m: m.TFRecordReader(), plain, READS)
    for comp in ("GZIP", "ZLIB"):
        one = [p for p, c in fs if c == comp]
        compare(tf, lambda m: m.TFRecordReader(
            options=tf.io.TFRecordOptions(compression_type=comp)), one, READS)
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(open(plain[0], "rb").read()[:-3])
    # read: tfq's read_up_to returns the records before a corrupt one (TF drops them), so
    # the corrupt file is compared record by record
    compare(tf, lambda m: m.TFRecordReader(), [str(bad)], [("read",)] * 6)


def test_reader_takes_only_a_tfq_queue():
    with pytest.raises(TypeError):
        tfq.TextLineReader().read(["a.txt"])


def test_gil_released_while_read_blocks(files):
    """read() waits on an empty, open queue of file names; this thread must run Python meanwhile
    and is the one that finally enqueues the file.  Were the GIL held, the enqueue below could
    not run and the test would hang (meson's timeout fails it), never pass."""
    q = tfq.FIFOQueue(4, ["string"])
    r = tfq.TextLineReader()
    result = {}
    started = threading.Event()

    def consume():
        started.set()
        result["rec"] = r.read(q)

    t = threading.Thread(target=consume)
    t.start()
    started.wait()
    n = 0
    for _ in range(200000):  # Python work while read() blocks in the queue
        n += 1
    waiting = t.is_alive()
    q.enqueue(files[0])
    t.join()
    assert n == 200000 and waiting, "read() returned before this thread gave it a file"
    assert result["rec"] == (files[0].encode() + b":1", b"h0")
