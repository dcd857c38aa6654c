#!/usr/bin/env python3
"""One command for the distributed example: a loopback TensorFlow cluster (1 ps, 2 workers, each
a process started with its TF_CONFIG), two tfq-feed feeders -- one beside each worker, as
TensorFlowOnSpark's executors -- each reading half of the CSV files and pushing shuffled batches
into its worker's own queue, and two workers that train one linear model from them.

    .venv/bin/python examples/distributed/run.py [--records 100000] [--check]
        [--topology workers|ps] [--tfq-feed build/tools/tfq-feed]
        [--feeder build/src/tf/tfq_distributed_feeder]

--topology workers (default): tfq-feed --to workers --elements batches; worker i dequeue()s
  whole batches from tfq_feed_w<i> on its own task.
--topology ps: tfq-feed --to ps --elements rows; one per-row queue on the ps, the workers
  dequeue_up_to(100) from it (the topology of tfq 0.1).
--feeder PATH: instead of tfq-feed, the library-API example feeder (feeder.c, one process) into
  the per-row ps queue; implies --topology ps.

Everything listens on 127.0.0.1 at ports chosen free at run time; every process is killed at the
end, also on failure or timeout, and the temporary work directory is removed (--keep keeps it).  With --check it verifies that the two workers together saw every
id exactly once and that the learned weights are within 1e-2 of the generating ones (exit 1 if
not).  Exit 77 (meson's skip) when TensorFlow or the feeder is missing, unless CI=true.
"""
import argparse
import atexit
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
W_TRUE = [0.5, -1.25, 2.0, 0.75]
B_TRUE = 0.3
SPEC = "int64,float32,float32,float32,float32,float32"  # id, x0..x3, y


def skip(msg):
    print("#" * 72 + f"\n# SKIPPED: {msg}\n" + "#" * 72, flush=True)
    if os.environ.get("CI") == "true":
        print("CI=true: this is a failure, not a skip.")
        sys.exit(1)
    sys.exit(77)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_port(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def gen_csv(paths, n, seed):
    """n records "id,x0,x1,x2,x3,y" with y = x.W_TRUE + B_TRUE, split evenly over paths."""
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, len(W_TRUE))).round(4)
    y = x @ np.array(W_TRUE) + B_TRUE
    per = -(-n // len(paths))
    for k, path in enumerate(paths):
        with open(path, "w") as f:
            f.write("".join(f"{i}," + ",".join(f"{v:.4f}" for v in x[i]) + f",{y[i]:.6f}\n"
                            for i in range(k * per, min(n, (k + 1) * per))))


def sanitized(tree):
    """Whether the meson build tree was configured with a sanitizer (b_sanitize)."""
    try:
        with open(os.path.join(tree, "meson-info", "intro-buildoptions.json")) as f:
            opts = json.load(f)
    except (OSError, ValueError):
        return False
    return any(o.get("name") == "b_sanitize" and o.get("value") not in ("none", [], "")
               for o in opts)


def find(rel):
    """ROOT/build/rel, the tree the README builds; else the newest other build*/ tree that has
    it and is not a sanitizer tree (scripts/test leaves build-asan/ and build-tsan/ behind: their
    binaries report TensorFlow's uninstrumented threads and exit 66)."""
    main_tree = os.path.join(ROOT, "build")
    if os.path.exists(os.path.join(main_tree, rel)) and not sanitized(main_tree):
        return os.path.join(main_tree, rel)
    trees = [t for t in glob.glob(os.path.join(ROOT, "build*"))
             if os.path.exists(os.path.join(t, rel)) and not sanitized(t)]
    trees.sort(key=lambda t: os.path.getmtime(os.path.join(t, rel)), reverse=True)
    return os.path.join(trees[0], rel) if trees else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--files", type=int, default=4, help="CSV files (Spark partitions)")
    ap.add_argument("--topology", choices=["workers", "ps"], default="workers")
    ap.add_argument("--batch", type=int, help="rows per element (tfq-feed -b); default 1000 "
                    "(workers) or 500 (ps)")
    ap.add_argument("--tfq-feed", dest="tfq_feed", help="the tfq-feed binary")
    ap.add_argument("--feeder", help="the library-API example feeder (tfq_distributed_feeder) "
                    "instead of tfq-feed; implies --topology ps")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--workdir", help="work directory (kept); default: a temporary one, "
                    "removed at exit")
    ap.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    a = ap.parse_args()
    library = a.feeder is not None
    topology = "library" if library else a.topology
    batch = a.batch or (1000 if topology == "workers" else 500)

    try:
        import numpy  # noqa: F401
        import importlib.util
        if importlib.util.find_spec("tensorflow") is None:
            raise ImportError("tensorflow")
    except ImportError as e:
        skip(f"{e}: run this with the project venv (.venv/bin/python; scripts/setup installs it)")
    if importlib.util.find_spec("tfq") is None or importlib.util.find_spec("tfq.cluster") is None:
        # node.py imports tfq.cluster: the package tfq, installed as every cluster user has it
        skip("the package tfq (with tfq.cluster) is not installed: pip install . from the source "
             "tree, or scripts/setup, which installs it into .venv")
    if library:
        feeder = a.feeder
        if not os.path.exists(feeder):
            skip(f"no {feeder}: build tfq with the tensorflow feature (meson + ninja)")
    else:
        feeder = a.tfq_feed or find(os.path.join("tools", "tfq-feed"))
        if not feeder or not os.path.exists(feeder):
            skip("no tfq-feed: build tfq with the tensorflow feature (meson + ninja), or pass "
                 "--tfq-feed")

    work = a.workdir or tempfile.mkdtemp(prefix="tfq_distributed_")
    if not a.workdir and not a.keep:
        # Removed at exit, also on failure or an exception (the logs' tails are printed first).
        atexit.register(shutil.rmtree, work, True)
    os.makedirs(work, exist_ok=True)
    nfiles = 1 if library else a.files
    files = [os.path.join(work, "data.csv")] if library else [
        os.path.join(work, f"part-{k:05d}.csv") for k in range(nfiles)]
    t0 = time.time()
    gen_csv(files, a.records, a.seed)
    print(f"run: {a.records} records in {nfiles} file(s) in {work} ({time.time() - t0:.1f} s); "
          f"y = x.{W_TRUE} + {B_TRUE}", flush=True)

    ps_port, w0, w1 = free_ports(3)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{w0}", f"127.0.0.1:{w1}"]}
    print(f"run: topology {topology}, cluster {json.dumps(cluster)}", flush=True)

    def tf_config(job, index):
        return json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    pyenv = dict(env, PYTHONDONTWRITEBYTECODE="1")
    pyenv.pop("ASAN_OPTIONS", None)  # the Python processes are not instrumented
    node = [sys.executable, os.path.join(HERE, "node.py"), "--topology", topology,
            "--batch", str(batch), "--out", work]
    procs = {}

    def spawn(name, cmd, penv):
        log = open(os.path.join(work, name + ".log"), "w")
        procs[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=penv,
                                        start_new_session=True), log)

    ok = False
    t_feed, exits = None, {}
    try:
        spawn("ps", node, dict(pyenv, TF_CONFIG=tf_config("ps", 0)))
        for i in range(2):
            spawn(f"worker{i}", node, dict(pyenv, TF_CONFIG=tf_config("worker", i)))
        for port in (ps_port, w0, w1):
            if not wait_port(port, 90):
                raise RuntimeError(f"nobody listens on port {port}")
        t_feed = time.time()
        if library:
            feeders = ["feeder"]
            spawn("feeder", [feeder, "--csv", files[0], "--target", f"grpc://127.0.0.1:{ps_port}",
                             "--device", "/job:ps/task:0", "--seed", str(a.seed)], os.environ)
        else:
            # One feeder beside each worker: its TF_CONFIG is the worker's (TensorFlowOnSpark's
            # co-location), it reads shard u of the files.
            to, elements = ("workers", "batches") if topology == "workers" else ("ps", "rows")
            feeders = [f"feeder{u}" for u in range(2)]
            for u in range(2):
                spawn(f"feeder{u}", [feeder, "-d", SPEC, "-b", str(batch), "--to", to,
                                     "--elements", elements, "--shard", f"{u}/2",
                                     "--seed", str(a.seed + u), "--stats"] + files,
                      dict(env, TF_CONFIG=tf_config("worker", u)))
        deadline = time.time() + a.timeout
        pending = set(feeders) | {"worker0", "worker1"}
        while pending:
            for name in list(pending):
                rc = procs[name][0].poll()
                if rc is None:
                    continue
                pending.discard(name)
                exits[name] = time.time() - t_feed
                if rc != 0:
                    raise RuntimeError(f"{name} exited with {rc}")
            if procs["ps"][0].poll() is not None:
                raise RuntimeError("the ps died")
            if time.time() > deadline:
                raise RuntimeError(f"timeout; still running: {sorted(pending)}")
            time.sleep(0.1)
        ok = True
    except RuntimeError as e:
        print(f"run: FAILED: {e}", flush=True)
    finally:
        t_end = time.time()
        for name, (p, log) in procs.items():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()
            log.close()
        for name in sorted(n for n in procs if n != "ps") + ["ps"]:
            path = os.path.join(work, name + ".log")
            if os.path.exists(path):
                lines = [l for l in open(path).read().splitlines()
                         if not ok or l.startswith(("feeder", "tfq-feed", "worker", "ps:"))]
                for line in lines[-40:]:
                    print(f"  [{name}] {line}")
    if t_feed:
        print(f"run: feeders started to last worker done: {t_end - t_feed:.1f} s (exits: " +
              ", ".join(f"{n} {t:.1f} s" for n, t in sorted(exits.items(), key=lambda e: e[1])) +
              f"); total {t_end - t0:.1f} s", flush=True)
    if not ok:
        return 1

    import numpy as np
    ids = [np.load(os.path.join(work, f"ids_worker{i}.npy")) for i in (0, 1)]
    allids = np.sort(np.concatenate(ids))
    exact = len(allids) == a.records and np.array_equal(allids, np.arange(a.records))
    print(f"run: worker0 got {len(ids[0])}, worker1 got {len(ids[1])}, total {len(allids)}, "
          f"unique {len(np.unique(allids))}: every id exactly once: {exact}")
    model = json.load(open(os.path.join(work, "model.json")))
    err = max([abs(u - v) for u, v in zip(model["w"], W_TRUE)] + [abs(model["b"] - B_TRUE)])
    print(f"run: learned w={np.round(model['w'], 4).tolist()} b={model['b']:.4f}; "
          f"max |error| = {err:.2e} (tolerance 1e-2)")
    # A feeder has nothing left to do once the workers have drained its queues: it must not
    # outlive them by long (a session closed towards a worker that has exited can block until
    # the feeder's --timeout-ms, 60 s).
    lag = max(exits[f] for f in feeders) - max(exits[w] for w in ("worker0", "worker1"))
    print(f"run: last feeder exit - last worker exit = {lag:.1f} s (limit 30 s)")
    why = [w for w, bad in (
        ("an id missing or seen twice", not exact),
        (f"weights off by {err:.2e} > 1e-2", err > 1e-2),
        ("a worker trained on nothing", min(len(i) for i in ids) == 0),
        (f"a feeder outlived the workers by {lag:.1f} s (blocked closing its sessions towards "
         "workers that had exited?)", lag >= 30)) if bad]
    if a.check and why:
        print(f"run: CHECK FAILED: {'; '.join(why)}")
        return 1
    print("run: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
