"""tfq.train against tf.compat.v1.train: every scenario is one program, written once against a
namespace `T`, run with T = TensorFlow's names (graph mode, a Session, TF's own threads) and with
T = tfq's (the same text: only the names differ), and the values it returns compared (exactly,
or as multisets where TF's order depends on thread timing)."""
import os
import signal
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest

import tfq


def write_csv(tmp_path, name, lo, hi):
    p = tmp_path / name
    with open(p, "w") as f:
        f.write("x,y,s\n")
        for i in range(lo, hi):
            f.write("%d.5,%d,s%d\n" % (i, i * 3, i))
    return str(p)


@pytest.fixture
def files(tmp_path):
    return [write_csv(tmp_path, "a.csv", 0, 50), write_csv(tmp_path, "b.csv", 50, 83),
            write_csv(tmp_path, "c.csv", 83, 100)]


def tf_names(tf):
    v1 = tf.compat.v1
    return types.SimpleNamespace(
        train=v1.train, TextLineReader=v1.TextLineReader, decode_csv=v1.decode_csv,
        FIFOQueue=v1.FIFOQueue, Session=v1.Session, errors=tf.errors,
        init=lambda sess: sess.run(v1.local_variables_initializer()))


def tfq_names():
    return types.SimpleNamespace(
        train=tfq.train, TextLineReader=tfq.TextLineReader, decode_csv=tfq.decode_csv,
        FIFOQueue=tfq.FIFOQueue, Session=tfq.train.Session, errors=tfq.errors,
        init=lambda sess: None)


def both(tf, prog, *args):
    """prog(T, *args) in a TF graph and through tfq."""
    with tf.Graph().as_default():
        want = prog(tf_names(tf), *args)
    got = prog(tfq_names(), *args)
    return want, got


def drain(T, fetches, limit=10000):
    """The TF1 loop: a Coordinator, start_queue_runners, sess.run until OutOfRangeError."""
    out = []
    with T.Session() as sess:
        T.init(sess)
        coord = T.train.Coordinator()
        threads = T.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop() and len(out) < limit:
                out.append(sess.run(fetches))
        except T.errors.OutOfRangeError:
            out.append("OutOfRange")
        finally:
            coord.request_stop()
        coord.join(threads)
    return out


def norm(x):
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def test_string_input_producer_epochs_then_out_of_range(tf, files):
    def prog(T, shuffle, seed):
        q = T.train.string_input_producer(files, num_epochs=2, shuffle=shuffle, seed=seed)
        return drain(T, q.dequeue())
    for shuffle, seed in ((False, None), (True, 5), (True, 123)):
        want, got = both(tf, prog, shuffle, seed)
        assert norm(got) == norm(want)
        assert len(want) == 7 and want[-1] == "OutOfRange"


def test_range_and_input_producer_in_tf_order(tf):
    def prog(T):
        r = T.train.range_input_producer(10, num_epochs=3, shuffle=True, seed=42).dequeue()
        return drain(T, r)
    want, got = both(tf, prog)
    assert norm(got) == norm(want)

    def prog2(T):
        q = T.train.input_producer(np.arange(12, dtype=np.int64).reshape(6, 2), num_epochs=2,
                                   shuffle=False)
        return drain(T, q.dequeue_many(4))
    want, got = both(tf, prog2)
    assert norm(got) == norm(want)


def csv_batches(T, files, batcher, **kw):
    fq = T.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = T.TextLineReader(skip_header_lines=1)
    _, line = reader.read(fq)
    x, y, s = T.decode_csv(line, [[0.0], [0], [""]])
    return drain(T, batcher(T)([x, y, s], **kw))


@pytest.mark.parametrize("smaller", [True, False])
def test_batch_allow_smaller_final_batch(tf, files, smaller):
    want, got = both(tf, lambda T: csv_batches(
        T, files, lambda T: T.train.batch, batch_size=16, allow_smaller_final_batch=smaller))
    assert norm(got) == norm(want)
    assert len(want) == (100 // 16 + (2 if smaller else 1))


def rows(batches):
    out = []
    for b in batches:
        if b == "OutOfRange":
            continue
        out.extend(zip(*[norm(c) for c in b]))
    return sorted(out)


def test_shuffle_batch_same_multiset(tf, files):
    want, got = both(tf, lambda T: csv_batches(
        T, files, lambda T: T.train.shuffle_batch, batch_size=10, capacity=60,
        min_after_dequeue=20, seed=7, num_threads=2, allow_smaller_final_batch=True))
    assert rows(got) == rows(want)
    assert len(rows(want)) == 100 and got[-1] == want[-1] == "OutOfRange"
    # a shuffle: not the file order
    assert [r[1] for r in zip(*[norm(c) for c in got[0]])] != list(range(0, 30, 3))


def test_batch_join_and_shuffle_batch_join(tf, files):
    def prog(T, shuffle):
        fq = T.train.string_input_producer(files, num_epochs=1, shuffle=False)
        lists = []
        for _ in range(3):
            _, line = T.TextLineReader(skip_header_lines=1).read(fq)
            lists.append(T.decode_csv(line, [[0.0], [0], [""]]))
        if shuffle:
            b = T.train.shuffle_batch_join(lists, batch_size=7, capacity=50, min_after_dequeue=10,
                                           seed=3, allow_smaller_final_batch=True)
        else:
            b = T.train.batch_join(lists, batch_size=7, allow_smaller_final_batch=True)
        return drain(T, b)
    for shuffle in (False, True):
        want, got = both(tf, prog, shuffle)
        assert rows(got) == rows(want) and len(rows(want)) == 100


def test_slice_input_producer_and_batch(tf):
    def prog(T):
        x, y = T.train.slice_input_producer(
            [np.arange(20, dtype=np.float32), np.array([b"r%d" % i for i in range(20)])],
            num_epochs=2, shuffle=True, seed=9)
        return drain(T, T.train.batch([x, y], batch_size=6, allow_smaller_final_batch=True))
    want, got = both(tf, prog)
    assert norm(got) == norm(want)


def test_batch_dict_and_enqueue_many_read_up_to(tf, files):
    def prog(T):
        fq = T.train.string_input_producer(files, num_epochs=1, shuffle=False)
        _, lines = T.TextLineReader(skip_header_lines=1).read_up_to(fq, 8)
        x, y, s = T.decode_csv(lines, [[0.0], [0], [""]])
        return drain(T, T.train.batch({"x": x, "s": s}, batch_size=25, enqueue_many=True,
                                      allow_smaller_final_batch=True))
    want, got = both(tf, prog)
    assert norm(got) == norm(want)


def test_maybe_batch_constant_mask(tf):
    def prog(T):
        b = T.train.maybe_batch([np.arange(6, dtype=np.int32)],
                                keep_input=np.array([1, 0, 1, 1, 0, 1], bool), batch_size=3,
                                enqueue_many=True)
        return drain(T, b, limit=4)
    want, got = both(tf, prog)
    assert norm(got) == norm(want)


def test_queue_runner_of_enqueue_ops(tf, files):
    def prog(T):
        fq = T.train.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = T.TextLineReader(skip_header_lines=1).read(fq)
        x, y, s = T.decode_csv(line, [[0.0], [0], [""]])
        q = T.FIFOQueue(40, ["float32", "int32"], shapes=[[], []])
        qr = T.train.QueueRunner(q, [q.enqueue([x, y])] * 3)
        T.train.add_queue_runner(qr)
        return drain(T, q.dequeue_up_to(9))
    want, got = both(tf, prog)
    assert rows(got) == rows(want) and len(rows(want)) == 100


def coordinator_program(T, kind):
    """TF's Coordinator semantics: what join, should_stop, raise_requested_exception do."""
    coord = T.train.Coordinator()
    log = []

    def worker(i):
        with coord.stop_on_exception():
            if kind == "error" and i == 1:
                raise ValueError("boom %d" % i)
            if kind == "clean" and i == 1:
                raise T.errors.OutOfRangeError(None, None, "done")
            while not coord.should_stop():
                time.sleep(0.001)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        coord.register_thread(t)
        t.start()
    if kind == "stop":
        coord.request_stop()
    try:
        coord.join(threads)
        log.append("joined")
    except Exception as e:  # noqa: BLE001 -- the class and message are compared
        log.append((type(e).__name__, str(e)))
    log.append(coord.should_stop())
    log.append(coord.joined)
    try:
        coord.raise_requested_exception()
        log.append("nothing to raise")
    except Exception as e:  # noqa: BLE001
        log.append(("raised", type(e).__name__, str(e)))
    try:
        try:
            raise KeyError("after join")
        except KeyError as e:
            coord.request_stop(e)
        log.append("no raise")
    except KeyError as e:
        log.append(("after join", repr(e)))
    coord.clear_stop()
    log.append((coord.should_stop(), coord.joined))
    return log


@pytest.mark.parametrize("kind", ["error", "clean", "stop"])
def test_coordinator_like_tf(tf, kind):
    want, got = both(tf, coordinator_program, kind)
    assert got == want


def test_coordinator_reports_a_runner_error_like_tf(tf, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y,s\n1.5,2,a\nnot-a-number,3,b\n")

    def prog(T):
        fq = T.train.string_input_producer([str(bad)], shuffle=False)
        _, line = T.TextLineReader(skip_header_lines=1).read(fq)
        b = T.train.batch(T.decode_csv(line, [[0.0], [0], [""]]), batch_size=5)
        with T.Session() as sess:
            T.init(sess)
            coord = T.train.Coordinator()
            threads = T.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while not coord.should_stop():
                    sess.run(b)
            except (T.errors.OutOfRangeError, T.errors.CancelledError):
                pass
            try:
                coord.join(threads, stop_grace_period_secs=5)
                return "joined"
            except Exception as e:  # noqa: BLE001
                return type(e).__name__
    want, got = both(tf, prog)
    assert got == want == "InvalidArgumentError"


def test_ctrl_c_wakes_a_blocked_dequeue():
    """SIGINT while blocked in dequeue: KeyboardInterrupt, and the process exits."""
    code = ("import sys, tfq\n"
            "q = tfq.FIFOQueue(3, ['int32'])\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    q.dequeue()\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
            "    sys.exit(3)\n")
    interrupt(code, "the dequeue")


def interrupt(code, what):
    """Runs `code`, sends SIGINT once it printed 'ready' and waits: it must exit with status 3
    (its KeyboardInterrupt handler) within 2 s."""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    assert line == "ready", line
    time.sleep(0.5)  # inside the blocking call
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("%s did not wake on SIGINT within 2 s" % what)
    assert p.returncode == 3 and "interrupted" in out
    return out


def test_ctrl_c_wakes_a_reader_waiting_for_a_file(tmp_path):
    """SIGINT while a reader's read waits on an empty filename queue: KeyboardInterrupt within
    2 s, nothing taken from the queue, and the same reader then reads the file enqueued after
    it (its first line, as Python's own reading gives it)."""
    f = tmp_path / "a.txt"
    f.write_bytes(b"first line\nsecond\n")
    code = ("import sys, tfq\n"
            "q = tfq.FIFOQueue(3, ['string'], shapes=[[]])\n"
            "r = tfq.TextLineReader()\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    r.read(q)\n"
            "except KeyboardInterrupt:\n"
            "    q.enqueue([%r])\n"
            "    q.close()\n"
            "    k, v = r.read(q)\n"
            "    print('interrupted', q.size(), repr(v), flush=True)\n"
            "    sys.exit(3)\n") % str(f)
    out = interrupt(code, "the reader's read")
    want = open(f, "rb").read().splitlines()[0]
    assert out.strip() == "interrupted 0 %r" % want, out


def test_stubs_cover_tfq_train():
    """python/tfq/train.pyi declares every public name of tfq.train."""
    import ast
    stub = os.path.join(os.path.dirname(tfq.train.__file__), "train.pyi")
    tree = ast.parse(open(stub).read())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    missing = sorted(set(tfq.train.__all__) - declared)
    assert not missing, missing


def test_ctrl_c_wakes_a_blocked_pipeline_next(tmp_path):
    """SIGINT while tfq.data's next() waits (a FIFO that delivers nothing yet): KeyboardInterrupt
    within 2 s."""
    fifo = tmp_path / "never.csv"
    os.mkfifo(fifo)
    code = ("import sys, threading, tfq\n"
            "def feed():\n"
            "    f = open(%r, 'w'); f.write('a,b\\n'); f.flush()\n"
            "    threading.Event().wait()\n"
            "threading.Thread(target=feed, daemon=True).start()\n"
            "p = tfq.data.csv([%r], 'int32,int32', batch_size=4)\n"
            "print('ready', flush=True)\n"
            "try:\n"
            "    next(p)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n"
            "    sys.exit(3)\n") % (str(fifo), str(fifo))
    interrupt(code, "next()")


def test_exit_with_runners_still_running(files):
    """A program that drops its Coordinator and batches without stopping them (its runners
    blocked on a full queue) still exits: the runners are left to their threads, as TF's."""
    code = ("import gc, tfq\n"
            "fq = tfq.train.string_input_producer(%r)\n"
            "_, line = tfq.TextLineReader(skip_header_lines=1).read(fq)\n"
            "x, y, s = tfq.decode_csv(line, [[0.0], [0], ['']])\n"
            "b = tfq.train.shuffle_batch([x, y], batch_size=4, capacity=20, min_after_dequeue=5)\n"
            "coord = tfq.train.Coordinator()\n"
            "threads = tfq.train.start_queue_runners(coord=coord)\n"
            "print(tfq.Session().run(b)[1].shape)\n"
            "del threads, b, coord\n"
            "gc.collect()\n"
            "print('exiting')\n") % (files,)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["(4,)", "exiting"]
