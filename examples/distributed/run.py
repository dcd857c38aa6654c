#!/usr/bin/env python3
"""One command for the distributed example: a loopback TensorFlow cluster (1 ps, 2 workers), the
tfq feeder (C) that reads and shuffles a CSV and pushes it into the ps's shared-name queue, and
two workers that train a linear model from it.

    .venv/bin/python examples/distributed/run.py [--records 100000] [--check]
                     [--feeder build/src/tf/tfq_distributed_feeder]

Everything listens on 127.0.0.1 at ports chosen free at run time; every process is killed at the
end, also on failure or timeout.  With --check it verifies that the two workers together saw every
id exactly once and that the learned weights are within 1e-2 of the generating ones (exit 1 if
not).  Exit 77 (meson's skip) when TensorFlow or the feeder is missing, unless CI=true.
"""
import argparse
import glob
import json
import os
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


def gen_csv(path, n, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, len(W_TRUE))).round(4)
    y = x @ np.array(W_TRUE) + B_TRUE
    with open(path, "w") as f:
        for i in range(n):
            f.write(f"{i}," + ",".join(f"{v:.4f}" for v in x[i]) + f",{y[i]:.6f}\n")


def find_feeder():
    for pat in ("build*/src/tf/tfq_distributed_feeder",):
        hits = sorted(glob.glob(os.path.join(ROOT, pat)), key=os.path.getmtime, reverse=True)
        if hits:
            return hits[0]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--feeder")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--workdir")
    a = ap.parse_args()

    try:
        import numpy  # noqa: F401
        import importlib.util
        if importlib.util.find_spec("tensorflow") is None:
            raise ImportError("tensorflow")
    except ImportError as e:
        skip(f"{e}: run this with the project venv (.venv/bin/python; scripts/setup installs it)")
    feeder = a.feeder or find_feeder()
    if not feeder or not os.path.exists(feeder):
        skip("no tfq_distributed_feeder: build tfq with the tensorflow feature (meson + ninja)")

    work = a.workdir or tempfile.mkdtemp(prefix="tfq_distributed_")
    os.makedirs(work, exist_ok=True)
    csv = os.path.join(work, "data.csv")
    t0 = time.time()
    gen_csv(csv, a.records, a.seed)
    print(f"run: {a.records} records in {csv} ({time.time() - t0:.1f} s); "
          f"y = x.{W_TRUE} + {B_TRUE}", flush=True)

    ps_port, w0, w1 = free_ports(3)
    cluster = f"ps=127.0.0.1:{ps_port};worker=127.0.0.1:{w0},127.0.0.1:{w1}"
    print(f"run: cluster {cluster}", flush=True)
    node = [sys.executable, os.path.join(HERE, "node.py"), "--cluster", cluster, "--out", work]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("ASAN_OPTIONS", None)  # the Python processes are not instrumented
    procs = {}

    def spawn(name, cmd, penv=env):
        log = open(os.path.join(work, name + ".log"), "w")
        procs[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=penv,
                                        start_new_session=True), log)

    ok = False
    try:
        spawn("ps", node + ["--job", "ps", "--task", "0"])
        spawn("worker0", node + ["--job", "worker", "--task", "0"])
        spawn("worker1", node + ["--job", "worker", "--task", "1"])
        if not wait_port(ps_port, 90):
            raise RuntimeError("the ps did not start listening")
        spawn("feeder", [feeder, "--csv", csv, "--target", f"grpc://127.0.0.1:{ps_port}",
                         "--device", "/job:ps/task:0", "--seed", str(a.seed)], os.environ)
        deadline = time.time() + a.timeout
        pending = {"feeder", "worker0", "worker1"}
        while pending:
            for name in list(pending):
                rc = procs[name][0].poll()
                if rc is None:
                    continue
                pending.discard(name)
                if rc != 0:
                    raise RuntimeError(f"{name} exited with {rc}")
            if procs["ps"][0].poll() is not None:
                raise RuntimeError("the ps died")
            if time.time() > deadline:
                raise RuntimeError(f"timeout; still running: {sorted(pending)}")
            time.sleep(0.2)
        ok = True
    except RuntimeError as e:
        print(f"run: FAILED: {e}", flush=True)
    finally:
        for name, (p, log) in procs.items():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()
            log.close()
        for name in ("feeder", "worker0", "worker1", "ps"):
            path = os.path.join(work, name + ".log")
            if os.path.exists(path):
                lines = [l for l in open(path).read().splitlines()
                         if not ok or l.startswith(("feeder:", "worker", "ps:"))]
                for line in lines[-40:]:
                    print(f"  [{name}] {line}")
    print(f"run: total {time.time() - t0:.1f} s", flush=True)
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
    if a.check and not (exact and err <= 1e-2 and min(len(i) for i in ids) > 0):
        print("run: CHECK FAILED")
        return 1
    print("run: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
