"""The extension's mechanics: zero-copy arrays, the GIL released while a batch blocks, fork,
reference counts over 10,000 batches, save/restore in deterministic mode."""
import gc
import os
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import tfq


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("".join("%d,%d.25,w%d\n" % (i, i, i % 7) for i in range(500)))
    return path


def test_zero_copy_array_is_the_tensor_memory(small):
    p = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=100, shuffle=False)
    slots = p.next_raw()
    a = np.asarray(slots[0])
    assert a.__array_interface__["data"][0] == slots[0]._address()
    assert a.dtype == np.int64 and a.shape == (100,)
    assert a.tolist() == list(range(100))
    f = np.frombuffer(slots[1], dtype=np.float64)
    assert f.__array_interface__["data"][0] == slots[1]._address()
    # The array keeps the tensor alive: drop every other reference, the memory stays valid.
    addr = slots[1]._address()
    del slots, f
    gc.collect()
    assert a.tolist() == list(range(100))
    # The dict batches view the tensors in the same way (no copy through the Python layer).
    b = next(p)
    assert b["c0"].base is not None and b["c0"].flags.writeable
    assert addr != 0


def test_gil_released_while_next_blocks(tmp_path):
    """next() waits on a FIFO without a writer (num_threads=0: on the calling thread); this
    thread must run Python meanwhile and is the one that finally writes the data.  If the GIL
    were held, this thread could not run until a watchdog process (30 s) fed the FIFO, and the
    assertion on `waiting` would fail."""
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    p = tfq.data.csv(fifo, "int32:0", batch_size=4, shuffle=False, num_threads=0,
                     compression="")
    result = {}
    started = threading.Event()

    def consume():
        started.set()
        result["batch"] = next(p)

    watchdog = subprocess.Popen(["sh", "-c", 'sleep 30; printf "9\\n" > "$0"', str(fifo)])
    try:
        t = threading.Thread(target=consume)
        t.start()
        started.wait()
        n = 0
        for _ in range(200000):  # Python work while next() blocks in open()/read()
            n += 1
        waiting = t.is_alive()
        with open(fifo, "w") as w:
            w.write("1\n2\n3\n")
        t.join()
    finally:
        watchdog.kill()
        watchdog.wait()
    assert n == 200000
    assert waiting, "the consumer finished before this thread wrote: the GIL was not released"
    assert result["batch"]["c0"].tolist() == [1, 2, 3]


def test_fork_child_makes_its_own_pipeline(small):
    parent = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=10, shuffle=False)
    first = next(parent)["c0"].tolist()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        code = 0
        try:
            try:
                next(parent)
                code = 2  # the parent's pipeline must refuse to run here
            except RuntimeError as e:
                if "fork" not in str(e):
                    code = 3
            if code == 0:
                child = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=10,
                                     shuffle=False, num_threads=2)
                ids = [int(x) for b in child for x in b["c0"]]
                if ids != list(range(500)):
                    code = 4
        except BaseException:
            code = 5
        os.write(w, bytes([code]))
        os._exit(0)
    os.close(w)
    code = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    assert code == b"\x00", "child failed with code %r" % code
    assert next(parent)["c0"].tolist() == [x + 10 for x in first]


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_no_leak_over_10000_batches(small):
    p = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=50, num_epochs=0, seed=1,
                     min_after_dequeue=100)
    for _ in range(500):
        next(p)
    gc.collect()
    tracemalloc.start()
    base_py = tracemalloc.get_traced_memory()[0]
    base_rss = rss_kb()
    probe = next(p)["c2"][0]
    base_ref = sys.getrefcount(probe)
    for _ in range(10000):
        b = next(p)
        raw = p.next_raw()
        assert raw[0]._refcount() == 1
    del b, raw
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - base_py
    tracemalloc.stop()
    grown_rss = rss_kb() - base_rss
    assert sys.getrefcount(probe) == base_ref
    assert grown_py < 64 * 1024, "Python memory grew by %d bytes" % grown_py
    assert grown_rss < 8 * 1024, "RSS grew by %d kB over 20,000 batches" % grown_rss
    assert p.stats()["batches_out"] >= 20501
    p.close()


def run_all(p):
    return [{k: v.tolist() for k, v in b.items()} for b in p]


def test_save_restore_exact_in_deterministic_mode(small, tmp_path):
    opts = dict(record_defaults="int64:0,float64:0,string:", batch_size=32, seed=11,
                deterministic=True, capacity=200, min_after_dequeue=50, num_threads=2, num_epochs=2)
    full = run_all(tfq.data.csv(small, **opts))
    p = tfq.data.csv(small, **opts)
    head = [{k: v.tolist() for k, v in next(p).items()} for _ in range(7)]
    state = p.save()
    p.save(tmp_path / "state.bin")
    p.close()
    assert head == full[:7]
    q = tfq.data.csv(small, **opts)
    q.restore(state)
    assert run_all(q) == full[7:]
    r = tfq.data.csv(small, **opts)
    r.restore(tmp_path / "state.bin")
    assert run_all(r) == full[7:]
    ids = sorted(x for b in full for x in b["c0"])
    assert ids == sorted(list(range(500)) * 2)


def test_restore_refuses_other_options(small):
    p = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=32, seed=1)
    next(p)
    state = p.save()
    q = tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=16, seed=1)
    with pytest.raises(tfq.errors.InvalidArgumentError):
        q.restore(state)
    with pytest.raises(tfq.errors.DataLossError):
        tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=32, seed=1).restore(
            state[:-3] + b"xyz")


def test_context_manager_and_close(small):
    with tfq.data.csv(small, "int64:0,float64:0,string:", batch_size=10) as p:
        next(p)
    assert p.closed
    with pytest.raises(ValueError):
        next(p)


def test_stop_from_another_thread_cancels(tmp_path):
    fifo = tmp_path / "g.csv"
    os.mkfifo(fifo)
    hold = os.open(fifo, os.O_RDWR)  # the reader's open succeeds; its read() then waits
    p = tfq.data.csv(fifo, "int32:0", batch_size=4, compression="", num_threads=1)
    errs = []

    def consume():
        try:
            next(p)
        except tfq.errors.CancelledError as e:
            errs.append(e)

    t = threading.Thread(target=consume)
    t.start()
    p.stop()
    t.join(60)
    alive = t.is_alive()
    os.close(hold)  # no writer left: the reader's read() ends, so close() can join it
    p.close()
    assert not alive and len(errs) == 1


def test_version_is_meson_projects_and_the_librarys():
    """tfq.__version__, libtfq's tfq_version_string() and meson.build's project() agree."""
    import os
    import re

    import tfq

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "meson.build")) as f:
        want = re.search(r"version:\s*'([0-9.]+)'", f.read()).group(1)
    assert tfq.__version__ == want
    assert tfq.library_version == want
