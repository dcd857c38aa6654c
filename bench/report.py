#!/usr/bin/env python3
"""One benchmark report (the workloads of bench/README.md): runs W0-W5 and the feeder benchmark with every
peer the venv has, in one run, and writes bench/out/report.json and bench/out/report.md.

    scripts/bench report [--quick] [--update-readme]      (builds build-release first)
    .venv/bin/python bench/report.py [--quick] [--update-readme] [--build DIR] [--data DIR]
                                     [--out DIR] [--only W0,W1,...]

Steps (each a program of bench/, its output kept in bench/out/logs/):
  data  bench/gen_data (D1-D5 of bench/README.md, seeded) into --data (default bench/data), reused
        when its MANIFEST.json matches the seeds, row counts and file sizes;
  W3    bench_queue (+ W0 naive ring, SPSC ring, memcpy) and bench/peers_queue.py (Python
        queue.Queue, TF1 FIFOQueue); bench_queue_lat (ping-pong RTT, close latency, capacities 1
        and 10,000 in 1P1C/1P2C/2P1C; naive ring, cache-line ping-pong) and peers_queue.py --lat;
  W0    bench_readers (memchr line scan vs TextLineReader, gzip -dc vs GZIP reader, TFRecord);
  W1    bench_decode --peers (D1, D4: tfq, libcsv, split-fastparse, pandas, pyarrow, DuckDB,
        polars, TF decode_csv, CsvDataset), bench_decode_mt + peers_datasets.py on D2 and D3; in interleaved rounds;
  W2    bench_decode_mt 1 and 2 threads on D1 and D5 + peers_datasets.py --threads 2 (pyarrow,
        DuckDB, polars, tf.data num_parallel_calls=2); in interleaved rounds;
  W4    bench_e2e --peers (TF1 shuffle_batch, tf.data), then bench_e2e --threads 1 and 4;
  W5    bench/bench_cli.sh on D1 (tfq-cat vs shuf, pandas, DuckDB, TF1);
  feed  bench/bench_feed.py (workload #8 of bench/README.md; only when bench_feed was built with the tensorflow feature);
  W6    bench/bench_dist.py (distributed feeding of a loopback ps + 2 workers: tfq-feed's
        topologies, the C limit feeder, the best Python feeder, TF1 in-graph, tf.data and
        TensorFlowOnSpark-style feeding; interleaved rounds on one cluster; only when
        tools/tfq-feed was built with the tensorflow feature);
  WP    bench/bench_pipeline.py (issue #38: tfq_pipeline against tfq-cat's pipeline on the mixed
        set, 1 and 2 readers, free-running and deterministic; the checkpoint of a full buffer;
        11 interleaved rounds, --quick 5);
  PY    bench/bench_python.py (issue #39: tfq.data from a Python loop against tf.data, pandas,
        the tfrecord package and tfq-cat -o none; 5 interleaved rounds, --quick 3; peak RSS);
  EX    bench/bench_example.py (issue #17: tf.train.Example parsing, batch and single path, against
        TF's parse_example on 1 thread; the TFRecord -> parse_example -> shuffle_batch pipeline
        against TF1's queue pipeline and tf.data; medians of interleaved runs).
Interleaved rounds (issue #18): every W0 (#4), W1 and W2 ratio of tfq to a peer, and W2's 1 -> 2
thread scaling, is the median of 5 rounds (--quick: 3), with their range: per round this script runs
the programs once each with --runs 1 (a warm-up and one timed run per implementation; step logs
NAME-r1.log, NAME-r2.log, ...), tfq first, then every peer, and computes the round's ratio from
that round's runs (add_rounds); each figure is the median of its rounds.  The TF peers keep their
earlier run counts, each run in its own round behind that round's tfq run: W1's TF decode_csv and
CsvDataset in round 1, W2's tf.data in rounds 1-2 (--quick: 1).  W4 (bench_e2e), W6
(bench_dist.py), the mixed set (bench_mixed.py: 15 rounds, --quick 5) and EX (bench_example.py)
interleave their own rounds; the targets say "median of N interleaved rounds, range a-b".
Figures never fail the command: a step that fails is recorded (status, log) and its rows are
missing ("n/a" in the table).  --only takes W0..W6, WM, WP, PY, feed and EX, or the parts W3lat (bench_queue_lat
and its peers only), W2tfdata (the tf.data 2-thread peer only) and W4threads (1 and 4 readers only).  The exit status is nonzero only when a benchmark's own correctness
check fails (a checksum mismatch) or the data cannot be generated."""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, ".venv", "bin", "python")
D1_SCHEMA, D2_SCHEMA, D3_SCHEMA = "ffffffiiis", "if", "f" * 430
GEN_VERSION = 2
EXPECTED_SETS = {"D1": (1000000, "0xD1D1D1D1"), "D2": (10000000, "0xD2D2D2D2"),
                 "D3": (20000, "0xD3D3D3D3"), "D4": (1000000, "0xD4D4D4D4"),
                 "D5": (1000000, "0xD1D1D1D1"), "DM": (700000, "0xDDDDDDDD")}
WM = "W1/W4 mixed set DM (issue #18)"
WP = "tfq_pipeline on the mixed set DM (issue #38)"
WPY = "tfq from Python on DM and its Examples (issue #39)"


# ---- machine ------------------------------------------------------------------------------------

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=60).stdout.strip()
    except Exception:
        return ""


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def machine(build):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    flags = sh("grep -m1 '^flags' /proc/cpuinfo")
    cc = ""
    try:
        with open(os.path.join(build, "meson-info", "intro-compilers.json")) as f:
            c = json.load(f).get("host", {}).get("c", {})
            cc = "%s %s" % (c.get("id", ""), c.get("version", ""))
    except Exception:
        cc = sh("cc --version | head -1")
    opts = {}
    try:
        with open(os.path.join(build, "meson-info", "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)
                    if o["name"] in ("buildtype", "b_ndebug", "optimization", "werror")}
    except Exception:
        pass
    tf = sh("%s -c 'import os; os.environ[\"TF_CPP_MIN_LOG_LEVEL\"]=\"3\"; import tensorflow as t;"
            " print(t.__version__)' 2>/dev/null" % PY) if os.path.exists(PY) else ""
    vers = sh("%s -c 'import pandas, pyarrow, duckdb; print(pandas.__version__, pyarrow.__version__,"
              " duckdb.__version__)' 2>/dev/null" % PY) if os.path.exists(PY) else ""
    pv = (vers.split() + ["", "", ""])[:3]
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "hypervisor": " hypervisor" in flags,
        "kernel": platform.release(),
        "glibc": " ".join(platform.libc_ver()),
        "compiler": cc,
        "build_options": opts,
        "python": sh("%s -V" % PY) if os.path.exists(PY) else "",
        "tensorflow": tf or None,
        "pandas": pv[0] or None, "pyarrow": pv[1] or None, "duckdb": pv[2] or None,
        "git_commit": sh("git -C %s rev-parse --short HEAD" % ROOT),
        "git_dirty": bool(sh("git -C %s status --porcelain -uno" % ROOT)),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }


# ---- running steps ------------------------------------------------------------------------------

class Run:
    def __init__(self, out, quick, from_logs=False):
        self.out, self.quick, self.from_logs = out, quick, from_logs
        self.logs = os.path.join(out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.steps = []
        self.rows = []
        self.checks_failed = []

    def step(self, name, argv, env=None, timeout=900):
        """Runs argv, keeps stdout+stderr in logs/NAME.log, returns stdout ('' on failure).
        With --from-logs, returns the stdout kept by an earlier run instead (re-renders a report)."""
        if self.from_logs:
            try:
                with open(os.path.join(self.logs, name + ".log")) as f:
                    text = f.read()
                out = text.split("\n", 1)[1].rsplit("\n--- stderr ---\n", 1)[0]
            except (OSError, IndexError):
                out = ""
            self.steps.append({"step": name, "status": "from log"})
            return out
        t0 = time.time()
        la = loadavg()
        shown = [os.path.relpath(x, ROOT) if x.startswith(ROOT) else x for x in argv]
        print("[report] %-22s %s" % (name, " ".join(x if len(x) < 40 else x[:12] + "..."
                                                     for x in shown)), flush=True)
        e = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **(env or {}))
        try:
            p = subprocess.run(argv, capture_output=True, text=True, env=e, timeout=timeout,
                               cwd=ROOT)
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as x:
            out = x.stdout.decode() if isinstance(x.stdout, bytes) else (x.stdout or "")
            err, rc = "timeout after %d s" % timeout, "timeout"
        except OSError as x:
            out, err, rc = "", str(x), "error"
        dt = time.time() - t0
        with open(os.path.join(self.logs, name + ".log"), "w") as f:
            f.write("$ %s\n%s\n--- stderr ---\n%s" % (" ".join(argv), out, err))
        self.steps.append({"step": name, "seconds": round(dt, 1), "status": rc,
                           "loadavg_start": la, "loadavg_end": loadavg()})
        print("[report] %-22s %.0f s, exit %s, load %.2f" % (name, dt, rc, loadavg()[0]),
              flush=True)
        return out

    def rounds(self, name, n):
        """The number of interleaved rounds of the step NAME (its logs NAME-r1.log, ...): n, or
        with --from-logs as many as the earlier run left."""
        if not self.from_logs:
            return n
        k = 0
        while os.path.exists(os.path.join(self.logs, "%s-r%d.log" % (name, k + 1))):
            k += 1
        return k

    def round_step(self, name, i, n, argv, **kw):
        """Round i (0-based) of n of the step NAME, logged as NAME-r<i+1>.log; the last round
        removes the logs of rounds beyond n (an earlier run's)."""
        if i == n - 1 and not self.from_logs:
            k = n + 1
            while os.path.exists(os.path.join(self.logs, "%s-r%d.log" % (name, k))):
                os.remove(os.path.join(self.logs, "%s-r%d.log" % (name, k)))
                k += 1
        return self.step("%s-r%d" % (name, i + 1), argv, **kw)

    def add(self, workload, impl, metric, value, unit, role, **extra):
        if value is None:
            return
        r = {"workload": workload, "impl": impl, "metric": metric, "value": value, "unit": unit,
             "role": role}
        r.update(extra)
        self.rows.append(r)


def json_rows(text, prefix="ROW "):
    out = []
    for line in text.splitlines():
        if line.startswith(prefix):
            try:
                r = json.loads(line[len(prefix):])
            except ValueError:
                continue
            if r.get("bench") == "decode" and r.get("impl") == "ceiling":  # older bench_decode
                r["impl"] = "split-fastparse"
            out.append(r)
    return out


# ---- data ---------------------------------------------------------------------------------------

def ensure_data(run, build, data):
    man = os.path.join(data, "MANIFEST.json")
    ok = False
    try:
        with open(man) as f:
            m = json.load(f)
        ok = m.get("version") == GEN_VERSION and m.get("scale") == 1
        for k, (rows, seed) in EXPECTED_SETS.items():
            s = m["sets"][k]
            ok = ok and s["rows"] == rows and s["seed"] == seed
            if k == "D5":
                parts = [os.path.join(data, "D5", "part-%02d.csv" % i) for i in range(16)]
                ok = ok and all(os.path.exists(p) for p in parts) and \
                    sum(os.path.getsize(p) for p in parts) == s["bytes"]
            else:
                p = os.path.join(data, k + ".csv")
                ok = ok and os.path.exists(p) and os.path.getsize(p) == s["bytes"]
    except Exception:
        ok = False
    if ok:
        print("[report] data: reusing %s (MANIFEST matches)" % os.path.relpath(data, ROOT))
        run.steps.append({"step": "data", "seconds": 0, "status": "reused"})
    else:
        run.step("data", [os.path.join(build, "bench", "gen_data"), data])
        if not os.path.exists(man):
            sys.exit("report: gen_data failed (see %s)" % run.logs)
    with open(man) as f:
        return json.load(f)


# ---- the steps ----------------------------------------------------------------------------------

def w3_queue(run, build):
    args = ["--quick"] if run.quick else []
    out = run.step("W3-queue", [os.path.join(build, "bench", "bench_queue"), "--quiet"] + args)
    # The median of the probes is in the 64 KiB TARGET line (--quiet hides the per-probe lines).
    probes = [float(x) for x in re.findall(r"vs memcpy ([0-9.]+) GB/s", out)]
    if probes:
        run.add("W0 limits", "memcpy (64 KiB chunks)", "bandwidth", statistics.median(probes),
                "GB/s", "limit")
    for r in json_rows(out):
        if r.get("bench") != "queue":
            continue
        if not r.get("check_ok", True):
            run.checks_failed.append("queue %s" % r)
        cfg = "%s %s %s%s %dP%dC" % (r["kind"], fmt_elem(r["elem_bytes"]), r["mode"],
                                     "(%d)" % r["batch"] if r["mode"] == "batch" else "",
                                     r["producers"], r["consumers"])
        if r["min_after_dequeue"]:
            cfg = cfg.replace(r["kind"], "%s mad=%d" % (r["kind"], r["min_after_dequeue"]))
        # spsc_ring: single 8-byte items, not tfq's batches (tfq batch(128) runs ~6x it): a
        # reference, not a bound (issue #41)
        role = {"tfq": "tfq", "naive_ring": "peer", "spsc_ring": "reference"}[r["impl"]]
        extra = dict(config=cfg, elem_bytes=r["elem_bytes"], mode=r["mode"], batch=r["batch"],
                     layout="%dP%dC" % (r["producers"], r["consumers"]),
                     items_per_s_min=r["items_per_s_min"], vcsw_per_1k=r["vcsw_per_1k"],
                     cpu_ns_per_item=r["cpu_ns_per_item"], bytes_per_s=r["bytes_per_s_median"])
        run.add("W3 queues", r["impl"] if r["impl"] != "tfq" else "tfq " + r["kind"],
                "items/s", r["items_per_s_median"], "items/s", role, **extra)
    qa = ["--runs", "1" if run.quick else "3", "--seconds", "0.3" if run.quick else "1"]
    out = run.step("W3-queue-peers", [PY, os.path.join(ROOT, "bench", "peers_queue.py")] + qa)
    for r in json_rows(out):
        cfg = "FIFOQueue 8B %s%s 1P1C" % (r["mode"], "(%d)" % r["batch"] if r["mode"] == "batch"
                                           else "")
        run.add("W3 queues", r["impl"], "items/s", r["items_per_s_median"], "items/s", "peer",
                config=cfg, elem_bytes=8, mode=r["mode"], batch=r["batch"], layout="1P1C",
                items_per_s_min=r["items_per_s_min"])


def w3_lat(run, build):
    out = run.step("W3-queue-lat", [os.path.join(build, "bench", "bench_queue_lat")] +
                   (["--quick"] if run.quick else []))
    peers = run.step("W3-queue-lat-peers",
                     [PY, os.path.join(ROOT, "bench", "peers_queue.py"), "--lat", "--runs",
                      "1" if run.quick else "3", "--seconds", "0.15" if run.quick else "0.3",
                      "--reps", "3" if run.quick else "8"])
    for r in json_rows(out) + json_rows(peers):
        if r.get("bench") not in ("queue_lat", "queue_lat_peers"):
            continue
        if r.get("check_ok") is False:
            run.checks_failed.append("queue_lat %s" % r)
        impl = "tfq " + r["kind"] if r["impl"] == "tfq" else r["impl"]
        role = "tfq" if r["impl"] == "tfq" else "limit" if r["impl"] == "spin" else "peer"
        if r["test"] == "pingpong":
            run.add("W3 ping-pong RTT", impl, "RTT p50", r["rtt_ns_p50"], "ns", role,
                    rtt_ns_p99=r["rtt_ns_p99"], rtt_ns_mean=r["rtt_ns_mean"],
                    vcsw_per_rt=r.get("vcsw_per_rt"), rounds=r["rounds"])
        elif r["test"] == "close":
            run.add("W3 close latency", impl, "close -> all %d waiters returned" % r["waiters"],
                    r["lat_us_median"], "us", role, scenario=r["scenario"],
                    lat_us_max=r["lat_us_max"], reps=r["reps"], waiters=r["waiters"])
        elif r["test"] == "layout":
            run.add("W3 layouts and capacities", impl, "items/s", r["items_per_s_median"],
                    "items/s", role, config="cap %d %dP%dC" % (r["capacity"], r["producers"],
                                                              r["consumers"]),
                    items_per_s_min=r["items_per_s_min"], vcsw_per_1k=r.get("vcsw_per_1k"))


def fmt_elem(b):
    return "%dKiB" % (b // 1024) if b % 1024 == 0 else "%dB" % b


# W0's two #4 ratios, per round: the bound or peer (key) and tfq's reader measured against it.
W0_PAIRS = {"memchr-scan": "tfq-textline", "gzip-dc": "tfq-textline-gzip"}


def w0_readers(run, build):
    """W0, interleaved rounds (ROUNDS, --quick ROUNDS_QUICK; issue #18): bench_readers once a
    round (each run times the memchr scan, then TextLineReader, gzip -dc, then the GZIP reader, and
    the TFRecordReader); a rate is the median of its rounds, and each #4 ratio the median of the
    rounds' own ratios (on the memchr-scan and gzip-dc rows, as W1's peers carry theirs)."""
    roles = {"memchr-scan": ("W1 TextLineReader", "limit"),
             "tfq-textline": ("W1 TextLineReader", "tfq"),
             "gzip-dc": ("W1 TextLineReader gzip", "peer"),
             "tfq-textline-gzip": ("W1 TextLineReader gzip", "tfq"),
             "tfq-tfrecord-read": ("W1 TFRecordReader", "tfq"),
             "tfq-tfrecord-write": ("W1 TFRecordReader", "info")}
    per_round = []
    for k in range(1, (ROUNDS_QUICK if run.quick else ROUNDS) + 1):
        out = run.step("W0-readers-r%d" % k, [os.path.join(build, "bench", "bench_readers"),
                                               "64" if run.quick else "256"])
        rs = {r["impl"]: r["mb_per_s"] for r in json_rows(out) if r.get("mb_per_s")}
        if rs:
            per_round.append(rs)
    med = statistics.median
    impls = []
    for rs in per_round:
        impls += [im for im in rs if im not in impls]
    for im in impls:
        xs = [rs[im] for rs in per_round if im in rs]
        extra = {"rounds": len(xs), "mb_per_s_min": min(xs), "mb_per_s_max": max(xs)}
        t = W0_PAIRS.get(im)
        q = [rs[t] / rs[im] for rs in per_round if t and rs.get(t) and rs.get(im)]
        if q:
            extra.update(tfq_ratio=med(q), tfq_ratio_min=min(q), tfq_ratio_max=max(q))
        w, role = roles.get(im, ("W1 readers", "info"))
        run.add(w, im, "throughput", med(xs), "MB/s", role, **extra)
        if im == "memchr-scan":
            run.add("W0 limits", "memchr line scan", "throughput", med(xs), "MB/s", "limit")


# "split-fastparse" (bench_decode: a plain split + tfq's number parsers, no defaults, quotes or
# checks; named "ceiling" before issue #41, and so in older logs: json_rows renames it) is not an
# upper bound -- tfq's fused decoder beats it on D1 -- so it is not a limit: role
# "reference", our own peer, kept out of the "best peer" of the other libraries.
# libcsv-tok (libcsv tokenizing only, no number parsing) was called a limit, but tfq decodes
# faster (1.10x in the full report): a reference, not a bound (issue #41).
DECODE_ROLES = {"tfq": "tfq", "split-fastparse": "reference", "libcsv-tok": "reference"}


ROUNDS, ROUNDS_QUICK = 5, 3  # interleaved rounds of W1 and W2 (issue #18)
ROUND_KEYS = ("mb_per_s_min", "mb_per_s_max", "rounds", "tfq_ratio", "tfq_ratio_min",
              "tfq_ratio_max", "tfq_ratio_cpu")


def decode_ok(r, ref):
    return (r["rows"] == ref["rows"] and r["isum"] == ref["isum"] and r["nstr"] == ref["nstr"]
            and abs(r["fsum"] - ref["fsum"]) <= 1e-5 * max(1.0, abs(ref["fsum"])))


def add_decode(run, workload, r, ref, role=None):
    role = role or DECODE_ROLES.get(r["impl"], "peer")
    if r["impl"] == "libcsv-tok" and r["dataset"] == "D1":
        role = "info"
    ok = r.get("checksum_ok")
    if ref is not None and r["impl"] not in ("libcsv-tok",):
        ok = decode_ok(r, ref)
    if ok is False:
        msg = "%s %s checksum differs from tfq" % (workload, r["impl"])
        if msg not in run.checks_failed:
            run.checks_failed.append(msg)
    run.add(workload, r["impl"], "throughput", r["mb_per_s"], "MB/s", role,
            mb_per_s_cpu=r["mb_per_s_cpu"], mb_per_s_best=r["mb_per_s_best"],
            rows_per_s=r["rows_per_s"], checksum_ok=ok,
            **{k: r[k] for k in ("rows", "fsum", "isum", "nstr") + ROUND_KEYS if k in r})
    return run.rows[-1]


def add_rounds(run, workload, per_round, roles=None):
    """One row per implementation from the decode ROWs of interleaved rounds (per_round: one list
    of ROWs per round, each round's tfq run first): MB/s and rows/s the medians of the rounds
    (mb_per_s_min / _max their range, rounds their number), the CPU-time rate the median, and
    for every other implementation tfq's ratio over it, computed per round from that round's two
    runs: tfq_ratio (median), tfq_ratio_min / _max, tfq_ratio_cpu (the median by CPU time).  Each
    round's checksums must equal that round's tfq ones, and tfq's the same in every round.
    Returns {impl: row}."""
    refs = [next((r for r in rs if r["impl"] == "tfq"), None) for rs in per_round]
    first = next((t for t in refs if t), None)
    if first and any(t and not decode_ok(t, first) for t in refs):
        run.checks_failed.append("%s tfq checksum differs between rounds" % workload)
    impls = []
    for rs in per_round:
        impls += [r["impl"] for r in rs if r["impl"] not in impls]
    out = {}
    for im in impls:
        xs = [(refs[k], r) for k, rs in enumerate(per_round) for r in rs if r["impl"] == im]
        ok = all(t is None or im == "libcsv-tok" or decode_ok(r, t) for t, r in xs)
        med = statistics.median
        a = dict(xs[0][1], checksum_ok=ok if first and im != "libcsv-tok" else None,
                 rounds=len(xs),
                 mb_per_s=med([r["mb_per_s"] for _, r in xs]),
                 mb_per_s_min=min(r["mb_per_s"] for _, r in xs),
                 mb_per_s_max=max(r["mb_per_s"] for _, r in xs),
                 mb_per_s_cpu=med([r["mb_per_s_cpu"] for _, r in xs]),
                 mb_per_s_best=max(r["mb_per_s_best"] for _, r in xs),
                 rows_per_s=med([r["rows_per_s"] for _, r in xs]))
        q = [t["mb_per_s"] / r["mb_per_s"] for t, r in xs if t and r["mb_per_s"]]
        qc = [t["mb_per_s_cpu"] / r["mb_per_s_cpu"] for t, r in xs if t and r["mb_per_s_cpu"]]
        if im != "tfq" and q:
            a.update(tfq_ratio=med(q), tfq_ratio_min=min(q), tfq_ratio_max=max(q))
            if qc:
                a["tfq_ratio_cpu"] = med(qc)
        out[im] = add_decode(run, workload, a, None, (roles or {}).get(im))
    return out


def w1_decode(run, build, data):
    """W1, interleaved rounds (ROUNDS, --quick ROUNDS_QUICK; issue #18): per round bench_decode
    --runs 1 (a warm-up and one run each: tfq, libcsv+strtod, libcsv-tok, split-fastparse, on D1 then D4;
    from round 2 on --reuse: the files of round 1, not generated again) and its --peers
    (peers_decode.py: pandas, pyarrow, DuckDB, polars, each after a warm-up); then D2 and D3, per round
    bench_decode_mt --runs 1 and peers_datasets.py --runs 1.  The TF peers (tf-decode_csv,
    tf-CsvDataset: 10-30 s a run, 20-50x slower than tfq) run in the first round only (--quick:
    on D1 only), as before their single run."""
    name = "W1-decode-D1-D4"
    n = run.rounds(name, ROUNDS_QUICK if run.quick else ROUNDS)
    per = []
    for i in range(n):
        env = {"TFQ_BENCH_PEER_RUNS": "1"}
        if i:
            env["TFQ_BENCH_PEER_SKIP"] = "tf-decode_csv,tf-CsvDataset"
        elif run.quick:  # the TF peers take ~10 s and ~20 s per data set at 4-10 MB/s: D1 only
            env["TFQ_BENCH_PEER_SKIP"] = "D4:tf-decode_csv,D4:tf-CsvDataset"
        out = run.round_step(name, i, n, [os.path.join(build, "bench", "bench_decode"), "--runs",
                                          "1"] + (["--reuse"] if i else []) + ["--peers", PY,
                                                                               data], env=env)
        per.append([r for r in json_rows(out) if r.get("bench") == "decode"])
    for ds in ("D1", "D4"):
        got = add_rounds(run, "W1 decode 1 thread %s" % ds,
                         [[r for r in rs if r["dataset"] == ds] for rs in per])
        if ds == "D1":
            c = got.get("split-fastparse")
            if c:
                run.add("W0 references", "split + fast number parse (D1; a peer, not a bound)",
                        "throughput", c["value"], "MB/s", "info",
                        mb_per_s_cpu=c["mb_per_s_cpu"])
        else:
            c = got.get("libcsv-tok")
            if c:
                run.add("W0 references", "libcsv tokenize only (D4; a reference, not a bound)",
                        "throughput", c["value"], "MB/s", "reference",
                        mb_per_s_cpu=c["mb_per_s_cpu"])
    for ds, schema in (("D2", D2_SCHEMA), ("D3", D3_SCHEMA)):
        path = os.path.join(data, ds + ".csv")
        name = "W1-decode-" + ds
        n = run.rounds(name, ROUNDS_QUICK if run.quick else ROUNDS)
        per = []
        for i in range(n):
            out = run.round_step(name, i, n, [os.path.join(build, "bench", "bench_decode_mt"),
                                              "--runs", "1", path, schema, ds])
            rs = [r for r in json_rows(out) if r.get("bench") == "decode_mt"]
            out = run.round_step(name + "-peers", i, n,
                                 [PY, os.path.join(ROOT, "bench", "peers_datasets.py"), "--runs",
                                  "1", path, schema, ds])
            per.append(rs + json_rows(out))
        add_rounds(run, "W1 decode 1 thread %s" % ds, per)


def wm_mixed(run, build, data):
    """Issue #18 on the mixed set: bench/bench_mixed.py (medians of interleaved rounds)."""
    out = run.step("WM-mixed", [PY, os.path.join(ROOT, "bench", "bench_mixed.py"), "--build",
                                build, "--python", PY, "--data", data, "--runs",
                                "5" if run.quick else "15"], timeout=1800)
    roles = {"lines": "tfq", "buffer": "tfq", "no-shuffle": "tfq", "no-shuffle-1cpu": "tfq",
             "shuffle": "tfq", "parts-1": "tfq", "parts-2": "tfq"}
    for r in json_rows(out):
        if r.get("bench") == "mixed":
            run.add(WM, r["impl"], "throughput", r["mb_per_s"], "MB/s", roles.get(r["impl"], "peer"),
                    mb_per_s_cpu=r["mb_per_s_cpu"], mb_per_s_min=r["mb_per_s_min"],
                    mb_per_s_max=r["mb_per_s_max"], runs=r["runs"],
                    **({"allocs_per_record": r["allocs_per_record"]}
                       if "allocs_per_record" in r else {}))
        elif r.get("bench") == "mixed-target":
            run.add(WM + " ratios", r["what"], "ratio", r["value"], "x", "info", min=r["min"],
                    max=r["max"], bound=r["bound"])
    if "CHECK FAILED" in out:
        run.checks_failed.append("mixed-set check failed (see the WM-mixed log)")


def wp_pipeline(run, build, data):
    """Issue #38: tfq_pipeline against tfq-cat's pipeline on the mixed set, and the checkpoint of
    a full 10,000-record buffer (bench/bench_pipeline.py, medians of interleaved rounds)."""
    out = run.step("WP-pipeline", [PY, os.path.join(ROOT, "bench", "bench_pipeline.py"), "--build",
                                   build, "--data", data, "--runs",
                                   "5" if run.quick else "11"], timeout=1800)
    for r in json_rows(out):
        if r.get("bench") == "pipeline":
            run.add(WP, r["impl"], "throughput", r["mb_per_s"], "MB/s",
                    # pl-*: tfq_pipeline; new-*: today's tfq-cat; the rest: the baseline tfq-cat
                    # built from an older commit (a reference: tfq itself, not a competitor)
                    "tfq" if r["impl"].startswith(("pl", "new")) else "reference",
                    mb_per_s_cpu=r["mb_per_s_cpu"], mb_per_s_min=r["mb_per_s_min"],
                    mb_per_s_max=r["mb_per_s_max"], runs=r["runs"])
        elif r.get("bench") == "pipeline-target":
            run.add(WP + " ratios", r["what"], "ratio", r["value"], "x", "info", min=r["min"],
                    max=r["max"], bound=r["bound"])
        elif r.get("bench") == "pipeline-checkpoint":
            run.add(WP + " checkpoint", "state of a full 10,000-record buffer", "bytes",
                    r["state_bytes"], "B", "info", save_ms_median=r["save_ms_median"])
            run.add(WP + " checkpoint", "save time, median of 21", "ms", r["save_ms_median"], "ms",
                    "info")
    if "CHECK FAILED" in out:
        run.checks_failed.append("pipeline check failed (see the WP-pipeline log)")


def wpy_python(run, build, data):
    """Issue #39: a Python loop consuming shuffled numpy batches of 128 (bench/bench_python.py:
    tfq.data against tf.data, pandas, the tfrecord package and tfq-cat -o none, medians of
    interleaved rounds, peak RSS of each)."""
    out = run.step("PY-python", [PY, os.path.join(ROOT, "bench", "bench_python.py"), "--build",
                                 build, "--data", data, "--runs", "3" if run.quick else "5"]
                   + (["--records", "30000"] if run.quick else []),
                   env=dict(os.environ, PYTHONPATH=os.path.join(build, "python")),
                   timeout=3600)
    for r in json_rows(out):
        if r.get("bench") == "python":
            run.add(WPY, r["impl"], "epoch", r["seconds"], "s",
                    "tfq" if "/tfq" in r["impl"] else "peer", records=r["records"],
                    seconds_min=r["seconds_min"], seconds_max=r["seconds_max"],
                    records_per_s=r["records_per_s"], peak_rss_mib=r["peak_rss_mib"],
                    runs=r["runs"])
        elif r.get("bench") == "python-target":
            run.add(WPY + " ratios", r["what"], "ratio", r["value"], "x", "info", min=r["min"],
                    max=r["max"], bound=r["bound"])
    if "CHECK FAILED" in out or "delivered" in out:
        run.checks_failed.append("python check failed (see the PY-python log)")


def w2_decode(run, build, data, main=True):
    """W2, interleaved rounds (ROUNDS, --quick ROUNDS_QUICK; issue #18), per round and data set
    (D1, then D5): bench_decode_mt --runs 1 --threads 1,2 (tfq 1 thread, then 2 threads: the
    round's scaling), peers_datasets.py --runs 1 --threads 2 (pyarrow, DuckDB, each after a
    warm-up), then in the first 2 rounds (--quick: the first) tf.data with num_parallel_calls=2
    (--no-warmup: ~5-10 s a run).  main=False (--only W2tfdata): only the tf.data rounds, each
    behind its tfq run.  The peers' checksums must equal tfq's 2-thread ones of their round."""
    tf_n = 1 if run.quick else 2
    n = run.rounds("W2-decode-D1", (ROUNDS_QUICK if run.quick else ROUNDS) if main else tf_n)
    sets = (("D1", os.path.join(data, "D1.csv")), ("D5", os.path.join(data, "D5")))
    per = {ds: [] for ds, _ in sets}
    scaling = {ds: [] for ds, _ in sets}
    for i in range(n):
        for ds, path in sets:
            out = run.round_step("W2-decode-" + ds, i, n,
                                 [os.path.join(build, "bench", "bench_decode_mt"), "--runs", "1",
                                  "--threads", "1,2", path, D1_SCHEMA, ds])
            tq = {r["threads"]: r for r in json_rows(out) if r.get("bench") == "decode_mt"}
            rs = []
            if 2 in tq:
                rs.append(dict(tq[2], impl="tfq"))
            if 1 in tq:
                rs.append(dict(tq[1], impl="tfq 1 thread"))
            if 1 in tq and 2 in tq:
                scaling[ds].append((tq[2]["mb_per_s"] / tq[1]["mb_per_s"],
                                    tq[2]["mb_per_s_cpu"] / tq[1]["mb_per_s_cpu"]))
            if main:
                out = run.round_step("W2-decode-%s-peers" % ds, i, n,
                                     [PY, os.path.join(ROOT, "bench", "peers_datasets.py"),
                                      "--runs", "1", "--threads", "2", "--peers",
                                      "pyarrow,duckdb,polars", path, D1_SCHEMA, ds])
                rs += json_rows(out)
            if i < tf_n:
                out = run.round_step("W2-decode-%s-tfdata" % ds, i, min(n, tf_n),
                                     [PY, os.path.join(ROOT, "bench", "peers_datasets.py"),
                                      "--runs", "1", "--no-warmup", "--threads", "2", "--peers",
                                      "tfdata", path, D1_SCHEMA, ds])
                rs += json_rows(out)
            per[ds].append(rs)
    for ds, _ in sets:
        w = "W2 decode 2 threads %s%s" % (ds, " (16 files)" if ds == "D5" else "")
        add_rounds(run, w, per[ds], roles={"tfq 1 thread": "info"})
        sc = scaling[ds]
        if sc:
            v = [x for x, _ in sc]
            run.add(w, "tfq scaling 2t/1t", "scaling", statistics.median(v), "x", "info",
                    scaling_min=min(v), scaling_max=max(v), rounds=len(sc),
                    scaling_cpu=statistics.median([c for _, c in sc]))


def w4_e2e(run, build, data):
    args = ["--dir", data]
    if run.quick:
        args += ["--rows", "300000", "--peer-rows", "30000", "--runs", "3"]
    out = run.step("W4-e2e", [os.path.join(build, "bench", "bench_e2e"), "--peers", PY] + args,
                   timeout=1200)
    for r in json_rows(out):
        if r.get("bench") != "e2e":
            continue
        impl = r["impl"] if r["impl"] != "tfq" else "tfq (%s file)" % r["file"]
        role = "tfq" if r["impl"] == "tfq" and r["file"] == "prefix" else \
            "info" if r["impl"] in ("tfq", "tf1-read1") else "peer"
        # A peer's row carries tfq's ratio over it: the median of the interleaved rounds.
        extra = {k: r[k] for k in ("tfq_ratio", "tfq_ratio_min", "tfq_ratio_max", "rounds")
                 if k in r}
        run.add("W4 end-to-end 2 readers", impl, "examples/s", r["ex_per_s"], "ex/s", role,
                rows=r["rows"], mb_per_s=r["mb_per_s"], ttfb_ms=r["ttfb_ms"],
                cpu_s_per_1m=r["cpu_s_per_1m"], **extra)
    if "CHECKSUM MISMATCH" in out:
        run.checks_failed.append("e2e checksum mismatch")


def w4_threads(run, build, data):
    """tfq's W4 pipeline with 1 and 4 reader threads (of the 1, 2 and 4 W4 asks for), on the same
    file as W4's full-file row (no peers)."""
    rows = "300000" if run.quick else "1000000"
    two = find(run.rows, "W4 end-to-end 2 readers", "tfq (full file)")
    for t in (1, 4):
        if t == 4 and two:
            run.add("W4 end-to-end reader threads (full file)", "tfq 2 reader threads",
                    "examples/s", two["value"], "ex/s", "tfq", rows=two["rows"],
                    mb_per_s=two["mb_per_s"], ttfb_ms=two["ttfb_ms"],
                    cpu_s_per_1m=two["cpu_s_per_1m"], threads=2)
        out = run.step("W4-e2e-%dthreads" % t,
                       [os.path.join(build, "bench", "bench_e2e"), "--dir", data, "--rows", rows,
                        "--peer-rows", rows, "--runs", "3" if run.quick else "5",
                        "--threads", str(t)])
        for r in json_rows(out):
            if r.get("bench") == "e2e" and r["impl"] == "tfq":
                run.add("W4 end-to-end reader threads (full file)",
                        "tfq %d reader thread%s" % (t, "s" if t > 1 else ""), "examples/s",
                        r["ex_per_s"], "ex/s", "info", rows=r["rows"], mb_per_s=r["mb_per_s"],
                        ttfb_ms=r["ttfb_ms"], cpu_s_per_1m=r["cpu_s_per_1m"], threads=t)


def w5_cli(run, build, data):
    env = {"RUNS": "2" if run.quick else "5", "TFQ_CAT": os.path.join(build, "tools", "tfq-cat"),
           "PYTHON": PY}
    if run.quick:
        env["RUNS"] = "1"
    out = run.step("W5-cli", ["sh", os.path.join(ROOT, "bench", "bench_cli.sh"),
                              os.path.join(data, "D1.csv")], env=env)
    for r in json_rows(out):
        # shuf -n 160 samples the whole file, as pandas, DuckDB and TF1 do, while tfq-cat
        # previews the head: the peers are compared with tfq-cat-whole-file (like for like), and
        # shuf is one of them, not a limit; the head preview has no peer here (issue #41)
        role = {"tfq-cat": "info", "tfq-cat-whole-file": "tfq"}.get(r["impl"], "peer")
        run.add("W5 CLI preview (5 x 32 rows of D1)", r["impl"], "wall", r["wall_s"] * 1e3, "ms",
                role, runs=r["runs"])


def feed(run, build):
    exe = os.path.join(build, "bench", "bench_feed")
    if not os.path.exists(exe):
        run.steps.append({"step": "feed", "status": "skipped (bench_feed not built)"})
        return
    script = os.path.join(ROOT, "bench", "bench_feed.py")
    n = ["--records", "50000", "--tfos-records", "5000"] if run.quick else []
    if run.quick and "--repeat" in sh("%s %s --help" % (PY, script)):
        n += ["--repeat", "1"]
    out = run.step("feed", [PY, script, "--bench", exe] + n, timeout=900)
    seen = set()
    for line in out.splitlines():
        # "NAME(52) [THREADS] RECORDS SECONDS RECORDS/S [ps us/row, self us/row, note]"
        m = re.match(r"^(.{52}) +(?:(\d+) +)?(\d+) +([0-9.]+) +(\d+)(?: .*)?$", line)
        if not m:
            continue
        name = m.group(1).strip()
        if m.group(2):
            name += " (%s thr)" % m.group(2)
        if name in seen:
            continue
        seen.add(name)
        role = "tfq" if name.startswith("tfq feeder, client") else \
            "reference" if name.startswith("reference") else \
            "peer" if name.startswith(("Python", "TensorFlowOnSpark")) else "info"
        run.add("Feed a TF cluster queue (issue #8)", name, "records/s", float(m.group(5)),
                "records/s", role, records=int(m.group(3)))


W6 = "W6 distributed feeding (loopback cluster)"


def w6_dist(run, build, data):
    """W6: bench/bench_dist.py, records/s consumed by the 2 workers of a loopback cluster and CPU-s
    per 1M records of every process, per feeding variant.  Its checksum check (the workers' rows
    and sums equal the data's) counts as a correctness check."""
    if not run.from_logs and not os.path.exists(os.path.join(build, "tools", "tfq-feed")):
        run.steps.append({"step": "W6-dist", "status": "skipped (tfq-feed not built)"})
        return
    argv = [PY, os.path.join(ROOT, "bench", "bench_dist.py"), "--build", build, "--data", data,
            "--work", os.path.join(run.out, "dist")] + (["--quick"] if run.quick else [])
    out = run.step("W6-dist", argv, timeout=1800)
    for r in json_rows(out):
        if r.get("bench") != "dist":
            continue
        if r.get("checksum_ok") is False:
            run.checks_failed.append("W6 %s: the workers' checksum differs from the data's" %
                                     r["impl"])
        # records/s: the median of bench_dist's interleaved rounds; tfq_*ratio*: tfq-bc's over
        # this variant, the median of the rounds' ratios (_min, _max; rounds their number).
        run.add(W6, r["impl"], "records/s", r["records_per_s"], "records/s", r["role"],
                **{k: r[k] for k in ("rows", "runs", "batch", "records_per_s_median",
                                     "records_per_s_best", "records_per_s_min",
                                     "records_per_s_max", "ttfb_ms", "cpu_s_per_1m",
                                     "cpu_s_per_1m_procs", "feeder_cpu_s_per_1m", "checksum_ok",
                                     "loadavg_before", "loadavg_after", "rounds") +
                   tuple(k + x for k in ("tfq_ratio", "tfq_cpu_ratio", "tfq_feeder_cpu_ratio")
                         for x in ("", "_min", "_max")) if k in r})
    if "CHECKSUM MISMATCH" in out and not any(c.startswith("W6") for c in run.checks_failed):
        run.checks_failed.append("W6 checksum mismatch")


EXW = {"parse-batch": "Example parse 1 thread, batch path (issue #17)",
       "parse-single": "Example parse 1 thread, single path (issue #17)",
       "pipeline": "Example pipeline TFRecord -> parse -> shuffle_batch (issue #17)"}


def ex_example(run, build, data):
    """bench/bench_example.py: tf.train.Example parsing (batch and single path, 1 thread) against
    TF's parse_example, and the TFRecord -> parse_example -> shuffle_batch pipeline against TF1's
    queue pipeline and tf.data; medians of interleaved runs with their spread.  Its checksum check
    counts as a correctness check."""
    exe = os.path.join(build, "bench", "bench_example")
    if not run.from_logs and not os.path.exists(exe):
        run.steps.append({"step": "EX-example", "status": "skipped (bench_example not built)"})
        return
    argv = [PY, os.path.join(ROOT, "bench", "bench_example.py"), "--bench", exe, "--data", data] \
        + (["--quick"] if run.quick else [])
    out = run.step("EX-example", argv, timeout=1800)
    for r in json_rows(out):
        if r.get("bench") != "example" or r.get("workload") not in EXW:
            continue
        run.add(EXW[r["workload"]], r["impl"], "Examples/s", r["ex_per_s"], "ex/s", r["role"],
                **{k: r[k] for k in ("ex_per_s_min", "ex_per_s_max", "ex_per_s_cpu", "mb_per_s",
                                     "runs", "examples") if k in r})
    if "CHECKSUM MISMATCH" in out:
        run.checks_failed.append("Example benchmark checksum mismatch")


def md_example(rows, workload):
    """The Example tables: median, spread and rate by CPU time of each implementation."""
    rs = rows_of(rows, workload)
    if not rs:
        return ""
    tq = next((r for r in rs if r["role"] == "tfq"), None)
    out = ["### %s" % workload, "",
           "| impl | role | Examples/s (median) | spread (min..max) | by CPU time | runs | "
           "tfq / this |", "|---|---|---|---|---|---|---|"]
    for r in rs:
        rt = ratio(tq, r) if tq and r is not tq else None
        out.append("| %s | %s | %s | %s..%s | %s | %s | %s |" % (
            r["impl"], r["role"], fmt(r["value"], "ex/s"), fmt(r.get("ex_per_s_min"), "ex/s"),
            fmt(r.get("ex_per_s_max"), "ex/s"), fmt(r.get("ex_per_s_cpu"), "ex/s"),
            r.get("runs", ""), "%.2fx" % rt if rt else ""))
    out.append("")
    return "\n".join(out)


# ---- the report ---------------------------------------------------------------------------------

def rows_of(rows, workload):
    return [r for r in rows if r["workload"] == workload]


def best(rows, role, lower=False):
    c = [r for r in rows if r["role"] == role]
    if not c:
        return None
    return (min if lower else max)(c, key=lambda r: r["value"])


def ratio(a, b, lower=False):
    if a is None or b is None or not b["value"] or not a["value"]:
        return None
    return b["value"] / a["value"] if lower else a["value"] / b["value"]


def find(rows, workload, impl=None, config=None):
    for r in rows:
        if r["workload"] == workload and (impl is None or r["impl"] == impl) and \
                (config is None or r.get("config") == config):
            return r
    return None


def cpu_note(a, b):
    """The same ratio by process CPU time (steadier than wall time on a loaded machine)."""
    if b and "tfq_ratio_cpu" in b:
        return "by CPU time %.2f" % b["tfq_ratio_cpu"]
    if a and b and a.get("mb_per_s_cpu") and b.get("mb_per_s_cpu"):
        return "by CPU time %.2f" % (a["mb_per_s_cpu"] / b["mb_per_s_cpu"])
    return ""


def fmt_x(v):
    """A ratio with 3 significant digits or 2 decimals, whichever is shorter."""
    return "%.2f" % v if abs(v) < 10 else "%.1f" % v if abs(v) < 100 else "%.0f" % v


def round_ratio(t, peer, cpu=False):
    """tfq over peer: when the peer's row carries it (W1, W2: report.py's rounds; W4:
    bench_e2e's), the median of the ratios of interleaved rounds, each from one round's tfq and
    peer runs, with a note giving their number and range; else the ratio of the two rows."""
    if peer and "tfq_ratio" in peer:
        note = "median of %d interleaved rounds, range %s-%s" % (
            peer["rounds"], fmt_x(peer["tfq_ratio_min"]), fmt_x(peer["tfq_ratio_max"])) \
            if peer["rounds"] > 1 else "1 round"
        if cpu and cpu_note(t, peer):
            note += "; " + cpu_note(t, peer)
        return peer["tfq_ratio"], note
    return ratio(t, peer), cpu_note(t, peer) if cpu else ""


def targets(rows):
    """(issue, what, value, bound, at_least, note) for each issue target."""
    t = []

    def q(cfg, impl=None):
        return next((r for r in rows if r["workload"] == "W3 queues" and r.get("config") == cfg
                     and (impl is None or r["impl"] == impl)), None)

    def add(issue, what, value, bound, at_least=True, note=""):
        t.append((issue, what, value, bound, at_least, note))

    tb, ts = q("FIFOQueue 8B batch(128) 1P1C", "tfq FIFOQueue"), q("FIFOQueue 8B single 1P1C",
                                                                      "tfq FIFOQueue")
    nb = q("naive-ring 8B single 1P1C")
    add("#2", "W3 FIFO batch(128) 1P1C / naive ring (1 item/lock)", ratio(tb, nb), 3.0)
    add("#2", "W3 FIFO single 1P1C / naive ring", ratio(ts, nb), 1.0)
    add("#2", "W3 FIFO single 1P1C voluntary ctx switches per 1k items",
        ts.get("vcsw_per_1k") if ts else None, 1.0, False)
    tf1b = q("FIFOQueue 8B batch(128) 1P1C", "tf1-fifo")
    add("perf 7.4", "W3 FIFO batch(128) 1P1C / TF1 FIFOQueue batch(128)", ratio(tb, tf1b), 100.0)
    sp = q("spsc-ring 8B single 1P1C")
    add("perf 7.4", "W3 FIFO batch(128) 1P1C / SPSC ring reference (8 B single items)",
        ratio(tb, sp), 0.25)
    s22 = q("FIFOQueue 8B single 2P2C", "tfq FIFOQueue")
    add("perf 7.4", "W3 FIFO single 4 threads (2P2C) / 2 threads (1P1C) on 2 cores",
        ratio(s22, ts), 0.5)
    pp = rows_of(rows, "W3 ping-pong RTT")
    ppf, ppl = find(pp, "W3 ping-pong RTT", "tfq FIFOQueue"), find(pp, "W3 ping-pong RTT", "spin")
    add("perf 7.4", "W3 FIFO ping-pong RTT p50 (ns; std::mutex-queue class)",
        ppf["value"] if ppf else None, 600.0, False)
    add("perf 7.4", "W3 FIFO ping-pong RTT p50 / cache-line RTT",
        ppf["value"] / ppl["value"] if ppf and ppl else None, 3.0, False)
    b64 = q("FIFOQueue 64KiB batch(16) 1P1C", "tfq FIFOQueue")
    mc = find(rows, "W0 limits", "memcpy (64 KiB chunks)")
    add("#3", "W3 64 KiB FIFO batch 1P1C bytes/s / memcpy",
        b64["bytes_per_s"] / (mc["value"] * 1e9) if b64 and mc else None, 0.35)
    tl, mm = find(rows, "W1 TextLineReader", "tfq-textline"), find(rows, "W1 TextLineReader",
                                                                   "memchr-scan")
    v, n = round_ratio(tl, mm)
    add("#4", "TextLineReader read_up_to / memchr line scan", v, 0.5, note=n)
    gz, gd = find(rows, "W1 TextLineReader gzip", "tfq-textline-gzip"), \
        find(rows, "W1 TextLineReader gzip", "gzip-dc")
    v, n = round_ratio(gz, gd)
    add("#4", "TextLineReader GZIP / gzip -dc", v, 0.8, note=n)
    d1 = rows_of(rows, "W1 decode 1 thread D1")
    d1t = find(rows, "W1 decode 1 thread D1", "tfq")
    # W1, W2, W4: each ratio the median of interleaved rounds (issue #18; round_ratio), the best
    # peer the one of the highest median rate.
    bp = best(d1, "peer")
    v, n = round_ratio(d1t, bp, cpu=True)
    add("#5", "W1 D1 tfq / best peer (%s)" % (bp["impl"] if bp else "n/a"), v, 1.3, note=n)
    ce = find(rows, "W1 decode 1 thread D1", "split-fastparse")
    v, n = round_ratio(d1t, ce, cpu=True)
    add("#5", "W1 D1 tfq / split + fast-parse reference (a peer, not a bound)", v, 0.6, note=n)
    d4t = find(rows, "W1 decode 1 thread D4", "tfq")
    lt = find(rows, "W1 decode 1 thread D4", "libcsv-tok")
    v, n = round_ratio(d4t, lt, cpu=True)
    add("#5", "W1 D4 tfq / libcsv tokenize-only reference", v, 0.9, note=n)
    bp4 = best(rows_of(rows, "W1 decode 1 thread D4"), "peer")
    v, n = round_ratio(d4t, bp4, cpu=True)
    add("perf 7.4", "W1 D4 tfq / best peer (%s)" % (bp4["impl"] if bp4 else "n/a"), v, 1.3,
        note=n)
    w2 = rows_of(rows, "W2 decode 2 threads D1")
    t2, dd = find(rows, "W2 decode 2 threads D1", "tfq"), find(rows, "W2 decode 2 threads D1",
                                                               "duckdb-2t")
    v, n = round_ratio(t2, dd, cpu=True)
    add("perf 7.4", "W2 D1 tfq 2 threads / DuckDB 2 threads", v, 1.2, note=n)
    sc = next((r for r in w2 if r["metric"] == "scaling"), None)
    n = ""
    if sc:
        n = "bytes per CPU-second 2t/1t %.2f" % sc["scaling_cpu"]
        if "rounds" in sc:
            n = "median of %d interleaved rounds (tfq 1 thread, then 2 threads), range " \
                "%s-%s; %s" % (sc["rounds"], fmt_x(sc["scaling_min"]),
                               fmt_x(sc["scaling_max"]), n)
    add("perf 7.4", "W2 D1 tfq scaling 1 -> 2 threads", sc["value"] if sc else None, 1.7, note=n)
    w4 = rows_of(rows, "W4 end-to-end 2 readers")
    e2e = find(rows, "W4 end-to-end 2 readers", "tfq (prefix file)")
    v, n = round_ratio(e2e, find(rows, "W4 end-to-end 2 readers", "tf1-shuffle_batch"))
    add("#6", "W4 tfq / TF1 shuffle_batch", v, 20.0, note=n)
    tfd = best([r for r in w4 if r["impl"].startswith("tfdata")], "peer")
    v, n = round_ratio(e2e, tfd)
    add("#6", "W4 tfq / best tf.data (%s)" % (tfd["impl"] if tfd else "n/a"), v, 5.0, note=n)
    full = find(rows, "W4 end-to-end 2 readers", "tfq (full file)")
    add("perf 7.4", "W4 tfq examples/s (full file) / W1 tfq D1 rows/s",
        full["value"] / d1t["rows_per_s"] if full and d1t else None, 0.7)
    pt = [r.get("ttfb_ms") for r in w4 if r["role"] == "peer" and r.get("ttfb_ms")]
    add("perf 7.4", "W4 time to first batch tfq / best peer",
        full["ttfb_ms"] / min(pt) if full and pt else None, 0.5, False)
    w5 = rows_of(rows, "W5 CLI preview (5 x 32 rows of D1)")
    cat = find(w5, w5[0]["workload"], "tfq-cat") if w5 else None
    add("#7", "W5 tfq-cat preview wall time (ms; 'starts printing < 50 ms')",
        cat["value"] if cat else None, 50.0, False)
    # like for like: tfq-cat's whole-file sample against the peers that sample the whole file
    # (shuf, pandas, DuckDB, TF1); the head preview has no peer of its own kind here
    whole = find(w5, w5[0]["workload"], "tfq-cat-whole-file") if w5 else None
    fp = best(w5, "peer", lower=True)
    add("perf 7.4", "W5 tfq-cat-whole-file / fastest whole-file peer (%s)"
        % (fp["impl"] if fp else "n/a"),
        whole["value"] / fp["value"] if whole and fp else None, 0.5, False)
    sf = find(w5, w5[0]["workload"], "shuf") if w5 else None
    add("perf 7.4", "W5 tfq-cat-whole-file / shuf -n 160 (both sample the whole file)",
        whole["value"] / sf["value"] if whole and sf else None, 2.0, False)
    fd = rows_of(rows, "Feed a TF cluster queue (issue #8)")
    ft = next((r for r in fd if r["role"] == "tfq"), None)
    add("#8", "tfq feeder / best Python feeder", ratio(ft, best(fd, "peer")), 5.0)
    w6 = rows_of(rows, W6)
    bc = find(w6, W6, "tfq-bc")
    ing = [r for r in w6 if r["impl"] in ("tf1-ingraph", "tfdata-csv", "tfdata-textline")]
    bi = max(ing, key=lambda r: r["value"]) if ing else None
    lc = min(ing, key=lambda r: r["cpu_s_per_1m"]) if ing else None

    def w6_ratio(peer, key="tfq_ratio", field=None):
        """tfq-bc over the peer: the median of bench_dist's interleaved rounds' ratios (key) with
        their range, else the ratio of the two rows' medians (field; records/s by default)."""
        if peer and key in peer:
            return peer[key], "median of %d interleaved rounds, range %s-%s" % (
                peer["rounds"], fmt_x(peer[key + "_min"]), fmt_x(peer[key + "_max"])) \
                if peer.get("rounds", 1) > 1 else "1 round"
        if field is None:
            return ratio(bc, peer), ""
        return (bc[field] / peer[field] if bc and peer and bc.get(field) and peer.get(field)
                else None), ""
    v, n = w6_ratio(bi)
    add("W6", "tfq-bc / best in-graph peer (%s) records/s" % (bi["impl"] if bi else "n/a"), v,
        10.0, note=n)
    v, n = w6_ratio(lc, "tfq_cpu_ratio", "cpu_s_per_1m")
    add("W6", "tfq-bc / leanest in-graph peer (%s) CPU-s per 1M records, all processes" % (
        lc["impl"] if lc else "n/a"), v, 0.2, False, note=n)
    v, n = w6_ratio(find(w6, W6, "tfq-a"))
    add("W6", "tfq-bc / tfq-a records/s (B=1024)", v, 3.0, note=n)
    v, n = w6_ratio(find(w6, W6, "limit"))
    add("W6", "tfq-bc / limit records/s", v, 0.5, note=n)
    tfos = find(w6, W6, "tfos-style")
    v, n = w6_ratio(tfos)
    add("W6", "tfq-bc / tfos-style records/s", v, 100.0,
        note="; ".join(x for x in (n, "tfos-style on %d rows" % tfos["rows"] if tfos else "")
                       if x))
    v, n = w6_ratio(find(w6, W6, "py-feeder"), "tfq_feeder_cpu_ratio", "feeder_cpu_s_per_1m")
    add("W6", "tfq-feed CPU per record / py-feeder's (tfq-bc topology, feeder processes)", v,
        0.5, False, note=n)
    for r in rows_of(rows, WM + " ratios"):
        add("#18", r["impl"] + " (median, range %.2f-%.2f)" % (r["min"], r["max"]), r["value"],
            r["bound"])
    sh_ = find(rows, WM, "shuffle")
    add("#18", "DM shuffled pipeline allocations per record (tfq-cat --stats)",
        sh_.get("allocs_per_record") if sh_ else None, 0.05, False)
    for r in rows_of(rows, WP + " ratios"):
        add("#38", r["impl"] + " (median, range %.2f-%.2f)" % (r["min"], r["max"]), r["value"],
            r["bound"])
    for r in rows_of(rows, WPY + " ratios"):
        add("#39", r["impl"] + " (median, range %.2f-%.2f)" % (r["min"], r["max"]), r["value"],
            r["bound"])
    for w, what in (("parse-batch", "parse_example (batch path)"),
                    ("parse-single", "parse_single_example (single path)")):
        et, ep = find(rows, EXW[w], "tfq"), find(rows, EXW[w], "tf")
        add("#17", "Example %s tfq / TF 1 thread" % what, ratio(et, ep), 3.0,
            note="by CPU time %.2f" % (et["ex_per_s_cpu"] / ep["ex_per_s_cpu"])
            if et and ep and et.get("ex_per_s_cpu") and ep.get("ex_per_s_cpu") else "")
    ex = rows_of(rows, EXW["pipeline"])
    et, ep = find(ex, EXW["pipeline"], "tfq"), best(ex, "peer")
    add("#17", "Example pipeline tfq / best peer (%s)" % (ep["impl"] if ep else "n/a"),
        ratio(et, ep), 10.0,
        note="by CPU time %.2f" % (et["ex_per_s_cpu"] / ep["ex_per_s_cpu"])
        if et and ep and et.get("ex_per_s_cpu") and ep.get("ex_per_s_cpu") else "")
    return t


def fmt(v, unit=""):
    if v is None:
        return "n/a"
    v = float(v)
    if (abs(v) >= 1e6 or (unit in ("items/s", "ex/s", "records/s",
                                                                 "rows/s") and abs(v) >= 1e4)):
        return "%.3gM" % (v / 1e6) if abs(v) >= 1e6 else "%.0fk" % (v / 1e3)
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3g" % v


def md_table(rows, workload):
    rs = rows_of(rows, workload)
    if not rs:
        return ""
    lower = rs[0]["unit"] == "ms"
    tq = next((r for r in rs if r["role"] == "tfq"), None)
    peer = best(rs, "peer", lower)
    lim = best(rs, "limit", lower)
    out = ["### %s" % workload, ""]
    n = max((r.get("rounds", 0) for r in rs if "mb_per_s_min" in r), default=0)
    if n > 1:
        out += ["Medians of %d interleaved rounds (each round: tfq, then every peer, one after "
                "the other; a row run in fewer rounds gives their number), their range in "
                "brackets; tfq / this: the median of the rounds' ratios, each from one round's "
                "two runs, and their range." % n, ""]
    elif n:
        out += ["One round: tfq, then every peer, one after the other; tfq / this from that "
                "round's runs.", ""]
    elif any("tfq_ratio" in r for r in rs):
        out += ["tfq / this: the median of the ratios of interleaved rounds (each round: tfq, "
                "then every peer, one after the other), each from one round's two runs, their "
                "range in brackets.", ""]
    has_cpu = any("mb_per_s_cpu" in r for r in rs)
    hdr = "| impl | role | %s (%s)%s | tfq / this |" % (rs[0]["metric"], rs[0]["unit"],
                                                       " | by CPU time" if has_cpu else "")
    out += [hdr, "|" + "---|" * (hdr.count("|") - 1)]

    def over(r):  # tfq / r: the median of the interleaved rounds when there were rounds
        if r is None or tq is None:
            return "n/a"
        if "tfq_ratio" in r:
            return "%sx%s" % (fmt_x(r["tfq_ratio"]), " (%s-%s)" % (
                fmt_x(r["tfq_ratio_min"]), fmt_x(r["tfq_ratio_max"])) if r.get("rounds", 2) > 1
                else "")
        v = ratio(tq, r, lower)
        return "%.2fx" % v if v else "n/a"
    for r in rs:
        if r["metric"] == "scaling":
            continue
        cpu = " | %s" % fmt(r.get("mb_per_s_cpu")) if has_cpu else ""
        chk = " (checksum differs!)" if r.get("checksum_ok") is False else ""
        extra = ""
        if "ttfb_ms" in r:
            extra = " (first batch %.1f ms, %.2f CPU-s/1M)" % (r["ttfb_ms"], r["cpu_s_per_1m"])
        if "mb_per_s_min" in r:
            extra += " (%d round%s)" % (r["rounds"], "s" if r["rounds"] > 1 else "") \
                if r["rounds"] != n else ""
        val = fmt(r["value"], r["unit"])
        if "mb_per_s_min" in r and r["rounds"] > 1:
            val += " (%s-%s)" % (fmt(r["mb_per_s_min"]), fmt(r["mb_per_s_max"]))
        out.append("| %s%s%s | %s | %s%s | %s |" % (
            r["impl"], chk, extra, r["role"], val, cpu,
            over(r) if tq and r is not tq and r["role"] != "info" else ""))
    sc = next((r for r in rs if r["metric"] == "scaling"), None)
    out.append("")
    out.append("tfq / best peer%s: **%s**; tfq / limit%s: **%s**%s" % (
        " (%s)" % peer["impl"] if peer else "", over(peer), " (%s)" % lim["impl"] if lim else "",
        over(lim), "; scaling 1 -> 2 threads %.2fx%s (bytes per CPU-second 2t/1t %.2fx)" % (
            sc["value"], " (%.2f-%.2f, %d rounds)" % (sc["scaling_min"], sc["scaling_max"],
                                                       sc["rounds"]) if "rounds" in sc else "",
            sc["scaling_cpu"]) if sc else ""))
    out.append("")
    return "\n".join(out)


def md_queue(rows):
    rs = rows_of(rows, "W3 queues")
    if not rs:
        return ""
    cfgs = []
    for r in rs:
        if r.get("config") not in cfgs:
            cfgs.append(r["config"])
    out = ["### W3 queues", "",
           "Items/s (median); peers of the same configuration: the naive mutex+condvar ring, TF1 "
           "FIFOQueue, Python queue.Queue; reference: the SPSC ring (8 B single items 1P1C, not a "
           "bound); limit: memcpy (64 KiB).", "",
           "| configuration | tfq items/s | MB/s | vcsw/1k | naive ring | TF1 FIFOQueue | "
           "py queue.Queue | tfq / best peer |", "|---|---|---|---|---|---|---|---|"]
    for kind_cfg in cfgs:
        t = next((r for r in rs if r["config"] == kind_cfg and r["role"] == "tfq"), None)
        if not t:
            continue
        base = kind_cfg.split(" ", 1)[1] if " " in kind_cfg else kind_cfg
        base = re.sub(r"^mad=\d+ ", "", base)
        nv = next((r for r in rs if r["impl"] == "naive_ring" and r["config"] ==
                   "naive-ring " + base), None)
        tf = next((r for r in rs if r["impl"] == "tf1-fifo" and r["config"] == "FIFOQueue " + base),
                  None) if kind_cfg.startswith("FIFOQueue") else None
        pq = next((r for r in rs if r["impl"] == "py-queue" and r["config"] == "FIFOQueue " + base),
                  None) if kind_cfg.startswith("FIFOQueue") else None
        ps = [p for p in (nv, tf, pq) if p]
        bp = max(ps, key=lambda p: p["value"]) if ps else None
        out.append("| %s | %s | %s | %.2f | %s | %s | %s | %s |" % (
            kind_cfg, fmt(t["value"], "items/s"), fmt(t["bytes_per_s"] / 1e6),
            t["vcsw_per_1k"], fmt(nv["value"], "items/s") if nv else "",
            fmt(tf["value"], "items/s") if tf else "", fmt(pq["value"], "items/s") if pq else "",
            "%.2fx" % (t["value"] / bp["value"]) if bp else ""))
    sp = next((r for r in rs if r["impl"] == "spsc_ring"), None)
    if sp:
        out += ["", "SPSC ring reference (8 B single items 1P1C; not a bound: tfq's batches "
                "move more): %s items/s." % fmt(sp["value"], "items/s")]
    out.append("")
    return "\n".join(out)


def md_queue_lat(rows):
    """The three bench_queue_lat tables (ping-pong, close latency, layouts and capacities)."""
    out = []
    pp = rows_of(rows, "W3 ping-pong RTT")
    if pp:
        tq = find(pp, "W3 ping-pong RTT", "tfq FIFOQueue")
        out += ["### W3 ping-pong RTT", "",
                "One 8 B element bounced over two queues of capacity 1 between two threads on "
                "different CPUs; limit: a cache-line ping-pong (busy-wait).", "",
                "| impl | role | RTT p50 (ns) | p99 | mean | vcsw / round trip | "
                "this / tfq FIFO (p50; > 1: tfq faster) |", "|---|---|---|---|---|---|---|"]
        for r in pp:
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                r["impl"], r["role"], fmt(r["value"]), fmt(r["rtt_ns_p99"]),
                fmt(r["rtt_ns_mean"]), "%.3f" % r["vcsw_per_rt"]
                if r.get("vcsw_per_rt") is not None else "",
                "%.2fx" % (r["value"] / tq["value"]) if tq and r is not tq else ""))
        out.append("")
    cl = rows_of(rows, "W3 close latency")
    if cl:
        impls = []
        for r in cl:
            if r["impl"] not in impls:
                impls.append(r["impl"])
        out += ["### W3 close latency", "",
                "Time from close() to the last of %d blocked threads returning (median of the "
                "repetitions, max in brackets; µs). Plain close() and close(cancel_pending_"
                "enqueues) on an empty queue wake blocked dequeuers (OUT_OF_RANGE); a cancelling "
                "close on a full queue of capacity 1 fails blocked enqueuers (CANCELLED). Python "
                "queue.Queue has no close (n/a)." % cl[0]["waiters"], "",
                "| scenario | %s |" % " | ".join(impls), "|---|" + "---|" * len(impls)]
        for sc in ("dequeuers+close", "dequeuers+cancel_close", "enqueuers+cancel_close"):
            cells = []
            for im in impls:
                r = next((x for x in cl if x["impl"] == im and x["scenario"] == sc), None)
                cells.append("%s (%s)" % (fmt(r["value"]), fmt(r["lat_us_max"])) if r else "n/a")
            out.append("| %s | %s |" % (sc, " | ".join(cells)))
        out.append("")
    ly = rows_of(rows, "W3 layouts and capacities")
    if ly:
        impls, cfgs = [], []
        for r in ly:
            if r["impl"] not in impls:
                impls.append(r["impl"])
            if r["config"] not in cfgs:
                cfgs.append(r["config"])
        out += ["### W3 layouts and capacities", "",
                "Items/s (median) of single enqueue/dequeue of 8 B items; vcsw/1k of tfq "
                "FIFOQueue in brackets; the last column is tfq FIFOQueue / the best peer (naive "
                "ring, Python queue.Queue, TF1 FIFOQueue) of the same configuration.", "",
                "| configuration | %s | tfq FIFO / best peer |" % " | ".join(impls),
                "|---|" + "---|" * (len(impls) + 1)]
        for c in cfgs:
            cells = []
            for im in impls:
                r = next((x for x in ly if x["impl"] == im and x["config"] == c), None)
                cell = fmt(r["value"], "items/s") if r else ""
                if r and im == "tfq FIFOQueue" and r.get("vcsw_per_1k") is not None:
                    cell += " (%.2f)" % r["vcsw_per_1k"]
                cells.append(cell)
            t = next((x for x in ly if x["impl"] == "tfq FIFOQueue" and x["config"] == c), None)
            bp = best([x for x in ly if x["config"] == c], "peer")
            out.append("| %s | %s | %s |" % (c, " | ".join(cells), "%.2fx" % ratio(t, bp)
                                               if t and bp else ""))
        out.append("")
    return "\n".join(out)


def write_md(path, mach, rows, tg, steps, quick, total_s):
    la0, la1 = mach["loadavg_before"], mach["loadavg_after"]
    lines = ["# tfq benchmark report", "",
             "%s — %s, %d cores%s, kernel %s, %s; TF %s, pandas %s, pyarrow %s, DuckDB %s; "
             "commit %s%s. Mode: %s; %.0f s in all." % (
                 mach["date"], mach["cpu_model"], mach["cores"],
                 " (VM)" if mach["hypervisor"] else "", mach["kernel"], mach["compiler"],
                 mach["tensorflow"], mach["pandas"], mach["pyarrow"], mach["duckdb"],
                 mach["git_commit"], " (dirty tree)" if mach["git_dirty"] else "",
                 "--quick" if quick else "full", total_s), "",
             "**Load average** before %s, after %s (1/5/15 min). Above ~2 on this 2-core machine "
             "other work competed with the benchmarks and wall-clock figures are low and noisy; "
             "the decode tables also give rates by process CPU time." % (
                 " / ".join("%.2f" % x for x in la0), " / ".join("%.2f" % x for x in la1)), "",
             "Roles: *tfq* is ours, *peer* a competitor measured in the same run, *reference* "
             "a simpler implementation or narrower work run beside tfq (not a bound), *limit* "
             "a real upper bound derived from resources (W0 memcpy / memchr), *info* context. \"tfq / this\" > 1 means tfq is faster (for wall "
             "times: tfq takes less time).", "", "## Targets of the issues", "",
             "| issue | target | measured | bound | result |", "|---|---|---|---|---|"]
    for issue, what, value, bound, at_least, note in tg:
        res = "n/a (peer or step missing)" if value is None else \
            ("met" if (value >= bound if at_least else value <= bound) else "**missed**")
        lines.append("| %s | %s | %s%s | %s %g | %s |" % (
            issue, what, fmt(value) if value is None else "%.3g" % value,
            " (%s)" % note if note else "", ">=" if at_least else "<=", bound, res))
    lines += ["", "## Workloads", ""]
    order = ["W0 limits", "W1 decode 1 thread D1", "W1 decode 1 thread D4",
             "W1 decode 1 thread D2", "W1 decode 1 thread D3", "W1 TextLineReader",
             "W1 TextLineReader gzip", "W1 TFRecordReader", "W2 decode 2 threads D1",
             "W2 decode 2 threads D5 (16 files)", "W3 queues", "W4 end-to-end 2 readers",
             "W4 end-to-end reader threads (full file)",
             "W5 CLI preview (5 x 32 rows of D1)", WM, WP, WPY, "Feed a TF cluster queue (issue #8)", W6,
             EXW["parse-batch"], EXW["parse-single"], EXW["pipeline"]]
    for w in order:
        if w == "W3 queues":
            lines.append(md_queue(rows) or "### W3 queues\n\nn/a (step missing)\n")
            lines.append(md_queue_lat(rows) or "### W3 latency and close\n\nn/a (step missing)\n")
        elif w in EXW.values():
            lines.append(md_example(rows, w) or "### %s\n\nn/a (step missing)\n" % w)
        elif w == WM:
            rs = rows_of(rows, w)
            if rs:
                lines += ["### " + WM, "", "Medians of interleaved rounds (bench/bench_mixed.py): "
                          "MB/s of the 72 MB file by wall time, with the range of the rounds and "
                          "the rate by process CPU time.", "",
                          "| impl | role | MB/s | range | MB/s by CPU | allocations/record |",
                          "|---|---|---|---|---|---|"]
                lines += ["| %s | %s | %.1f | %.1f-%.1f | %.1f | %s |" % (
                    r["impl"], r["role"], r["value"], r["mb_per_s_min"], r["mb_per_s_max"],
                    r["mb_per_s_cpu"], "%.4f" % r["allocs_per_record"]
                    if "allocs_per_record" in r else "") for r in rs]
                lines.append("")
        elif w == WP:
            rs = rows_of(rows, w)
            if rs:
                lines += ["### " + WP, "", "Medians of interleaved rounds (bench/bench_pipeline.py): "
                          "MB/s of the 72 MB file (pl-*: tfq_pipeline; cat-*: tfq-cat -o none; "
                          "-1/-2: reader threads, -2 on 8 part files; ns: no shuffle; det: "
                          "deterministic).", "",
                          "| impl | role | MB/s | range | MB/s by CPU |", "|---|---|---|---|---|"]
                lines += ["| %s | %s | %.1f | %.1f-%.1f | %.1f |" % (
                    r["impl"], r["role"], r["value"], r["mb_per_s_min"], r["mb_per_s_max"],
                    r["mb_per_s_cpu"]) for r in rs]
                ck = rows_of(rows, WP + " checkpoint")
                lines += ["", "Checkpoint of a full 10,000-record buffer: " + ", ".join(
                    "%s %s %s" % (r["impl"], fmt(r["value"], r["unit"]), r["unit"]) for r in ck), ""]
        elif w == WPY:
            rs = rows_of(rows, w)
            if rs:
                lines += ["### " + WPY, "", "Medians of interleaved rounds (bench/bench_python.py): "
                          "one epoch of shuffled batches of 128 consumed by a Python loop (csv/*: "
                          "the mixed set DM; ex/*: its first rows as tf.train.Example records; "
                          "csv/tfq-cat: tfq-cat -o none, the same pipeline without Python), "
                          "seconds per epoch with the range of the rounds, and the peak RSS of "
                          "each.", "",
                          "| impl | role | s/epoch | range | records/s | peak RSS MiB |",
                          "|---|---|---|---|---|---|"]
                lines += ["| %s | %s | %.3f | %.3f-%.3f | %.0f | %.0f |" % (
                    r["impl"], r["role"], r["value"], r["seconds_min"], r["seconds_max"],
                    r["records_per_s"], r["peak_rss_mib"]) for r in rs]
                lines.append("")
        elif w == "W0 limits":
            rs = rows_of(rows, w)
            if rs:
                lines += ["### W0 limits and references", "", "| probe | role | figure |",
                          "|---|---|---|"]
                lines += ["| %s | %s | %s %s |" % (r["impl"], r["role"], fmt(r["value"], r["unit"]),
                                                   r["unit"]) for r in rs]
                sp = next((r for r in rows if r["impl"] == "spsc_ring"), None)
                nv = next((r for r in rows if r.get("config") == "naive-ring 8B single 1P1C"), None)
                for r, nm, role in ((nv, "naive mutex+condvar ring, 8 B single 1P1C", "peer"),
                                    (sp, "SPSC ring, 8 B single 1P1C", "reference, not a bound")):
                    if r:
                        lines.append("| %s | %s | %s items/s |" % (nm, role,
                                                                  fmt(r["value"], "items/s")))
                lines.append("")
        else:
            lines.append(md_table(rows, w) or "### %s\n\nn/a (step missing)\n" % w)
    lines += ["## Steps", "", "| step | seconds | exit | load at start |", "|---|---|---|---|"]
    for s in steps:
        lines.append("| %s | %s | %s | %s |" % (s["step"], s.get("seconds", ""), s["status"],
                                               "%.2f" % s["loadavg_start"][0]
                                               if "loadavg_start" in s else ""))
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def update_readme(md_path, mach, quick):
    """Copies the targets table of the report into README.md (between the bench-table markers)
    and the report itself (md and json) to docs/benchmark-report[-quick].md / .json, which the
    README's footer names."""
    readme = os.path.join(ROOT, "README.md")
    with open(readme) as f:
        text = f.read()
    b, e = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"
    if b not in text or e not in text:
        print("[report] README.md has no %s ... %s block; not updated" % (b, e))
        return
    with open(md_path) as f:
        md = f.read()
    copy = "docs/benchmark-report%s" % ("-quick" if quick else "")
    for ext in (".md", ".json"):
        shutil.copyfile(os.path.splitext(md_path)[0] + ext, os.path.join(ROOT, copy + ext))
    m = re.search(r"## Targets of the issues\n\n(.*?)\n\n", md, re.S)
    block = "%s\n_Latest `scripts/bench report%s` (%s, %s, %d cores, load average %s before / " \
            "%s after):_\n\n%s\n\nFull tables: `bench/out/report.md` after a run; this run's " \
            "copy is `%s.md` (+ `.json`).\n%s" % (
                b, " --quick" if quick else "", mach["date"], mach["cpu_model"], mach["cores"],
                "%.2f" % mach["loadavg_before"][0], "%.2f" % mach["loadavg_after"][0],
                m.group(1) if m else "(no targets)", copy, e)
    text = text[:text.index(b)] + block + text[text.index(e) + len(e):]
    with open(readme, "w") as f:
        f.write(text)
    print("[report] README.md bench table updated; the report copied to %s.md and .json" % copy)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--update-readme", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-release"))
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--only", default="W0,W1,W2,W3,W4,W5,WM,WP,PY,feed,W6,EX")
    ap.add_argument("--from-logs", action="store_true",
                    help="re-render report.json/.md from bench/out/logs of an earlier run")
    a = ap.parse_args()
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    old = None
    if a.from_logs:
        try:
            with open(os.path.join(a.out, "report.json")) as f:
                old = json.load(f)
        except (OSError, ValueError):
            old = None
    mach = old["machine"] if old else machine(a.build)
    if not old:
        mach["loadavg_before"] = loadavg()
    run = Run(a.out, a.quick, a.from_logs)
    only = set(a.only.split(","))
    ensure_data(run, a.build, a.data)
    if "W3" in only:
        w3_queue(run, a.build)
    if "W3" in only or "W3lat" in only:
        w3_lat(run, a.build)
    if "W0" in only:
        w0_readers(run, a.build)
    if "W1" in only:
        w1_decode(run, a.build, a.data)
    if "W2" in only or "W2tfdata" in only:
        w2_decode(run, a.build, a.data, main="W2" in only)
    if "W4" in only:
        w4_e2e(run, a.build, a.data)
    if "W4" in only or "W4threads" in only:
        w4_threads(run, a.build, a.data)
    if "W5" in only:
        w5_cli(run, a.build, a.data)
    if "WM" in only:
        wm_mixed(run, a.build, a.data)
    if "WP" in only:
        wp_pipeline(run, a.build, a.data)
    if "PY" in only:
        wpy_python(run, a.build, a.data)
    if "feed" in only:
        feed(run, a.build)
    if "W6" in only:
        w6_dist(run, a.build, a.data)
    if "EX" in only:
        ex_example(run, a.build, a.data)
    if old:
        total, run.steps = old["seconds"], old["steps"]
    else:
        mach["loadavg_after"] = loadavg()
        total = time.time() - t0
    tg = targets(run.rows)
    rep = {"machine": mach, "mode": old["mode"] if old else "quick" if a.quick else "full", "seconds": round(total, 1),
           "steps": run.steps, "checks_failed": run.checks_failed,
           "targets": [{"issue": i, "target": w, "value": v, "bound": b,
                        "op": ">=" if al else "<=",
                        "met": None if v is None else (v >= b if al else v <= b), "note": nt}
                       for i, w, v, b, al, nt in tg],
           "rows": run.rows}
    jp, mp = os.path.join(a.out, "report.json"), os.path.join(a.out, "report.md")
    with open(jp, "w") as f:
        json.dump(rep, f, indent=1)
    write_md(mp, mach, run.rows, tg, run.steps, rep["mode"] == "quick", total)
    print("[report] %d rows in %.0f s; load average %s -> %s" % (
        len(run.rows), total, mach["loadavg_before"], mach["loadavg_after"]))
    print("[report] wrote %s and %s" % (os.path.relpath(jp, ROOT), os.path.relpath(mp, ROOT)))
    if a.update_readme:
        update_readme(mp, mach, rep["mode"] == "quick")
    if run.checks_failed:
        print("[report] CORRECTNESS CHECKS FAILED: %s" % "; ".join(run.checks_failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
