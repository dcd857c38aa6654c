#!/usr/bin/env python3
"""tf.train.Example parsing and the TFRecord -> parse -> shuffle_batch pipeline: tfq
(bench/bench_example.c) against TensorFlow 2.21 in the same run, runs interleaved.

    .venv/bin/python bench/bench_example.py [--quick] [--bench EXE] [--data DIR] [--records N]
        [--runs R] [--seconds S] [--only parse,pipeline] [--base EXE]
    (scripts/bench example [--quick ...]; scripts/bench report runs it as step EX-example)

The Example is spec/tf1-example.md §10's: 10 float32 scalars, 5 int64 scalars, 2 bytes features
of 8 bytes, 293 bytes serialized; `bench_example gen` writes --records of them (fixed PCG seed)
to DIR/EX_<N>.tfrecord, which every measurement reads.

Workloads (Examples/s; median of the runs, spread min..max, and the rate by process CPU time):
  parse-batch   parse_example over the first 4,096 records held in memory, batches of 256, one
                thread.  tfq: tfq_parse_example_strings in a loop.  TF: graph mode, Session with
                intra_op = inter_op = 1 and Grappler off; each run executes 16 independent
                ParseExampleV2 ops, each reading its own resource variable of 256 records, and
                fetches a tf.group (spec §10's method).
  parse-single  parse_single_example of each record.  tfq: tfq_parse_single_example in a loop.
                TF: the same session settings; each run executes 256 ParseExampleV2 ops on scalar
                string constants (the first 256 records).
  pipeline      string_input_producer([file], num_epochs=1) -> TFRecordReader.read_up_to(1024)
                -> parse_example -> shuffle_batch(256, capacity 10000 + 3*256,
                min_after_dequeue 10000, num_threads=2, enqueue_many, allow_smaller_final_batch),
                the consumer summing every value of every batch.  tfq: the read-parse op of
                ops.h as the batcher's source.  Peers: tf1-shuffle_batch (that graph under
                QueueRunners), tfdata-map (TFRecordDataset.map(parse_single_example,
                num_parallel_calls=2).shuffle(10000).batch(256).prefetch(1)) and tfdata-batch-map
                (TFRecordDataset.shuffle(10000).batch(256).map(parse_example,
                num_parallel_calls=2).prefetch(1)); the targets take the best of them.
Interleaving: each round runs tfq then TF for each parse path, and tfq before each pipeline peer
(tfq, tf1, tfq, tfdata-map, tfq, tfdata-batch-map), so load changes hit both sides.  The pipeline
TARGET line is the ratio of the medians; the line under it gives each round's own ratio (median
and range over rounds, by wall and by CPU time).  --base EXE runs a second bench_example (say,
main's build in another build dir) next to tfq in every pipeline slot, the two in alternating
order, reported as tfq-base with the same ratios and tfq/tfq-base per round: before/after
figures from one run under one load.  The TF peers
run in two long-lived processes (graph mode; eager for tf.data) started before the first round;
graph construction and imports are outside the timed windows.

Correctness: every run's order-independent checksum (float32 bit patterns, int64 values, string
bytes) must equal the data's (pipeline) or tfq's over the same records (parse; TF's single path
is checked against TF's batch path over its 256 records); a mismatch prints CHECKSUM MISMATCH and
makes the exit status 1.  A missing TF prints n/a.  Prints a table, one `ROW {json}` line per
figure (bench/report.py) and `TARGET` lines: parse batch and single path tfq/TF >= 3x, pipeline
tfq/best peer >= 10x.  --quick: 50k records, 2 rounds, 0.3 s parse windows."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NFLT, NINT, NSTR = 10, 5, 2
KEYS = (["f%d" % i for i in range(NFLT)] + ["i%d" % i for i in range(NINT)] +
        ["s%d" % i for i in range(NSTR)])
K = 4096            # records parsed in memory
PARSE_BATCH = 256
MAD, BATCH, READ = 10000, 256, 1024
M64 = (1 << 64) - 1


# ---- the TF side (runs in the --serve processes) -------------------------------------------------

def features(tf):
    f = {k: tf.io.FixedLenFeature([], tf.float32) for k in KEYS[:NFLT]}
    f.update({k: tf.io.FixedLenFeature([], tf.int64) for k in KEYS[NFLT:NFLT + NINT]})
    f.update({k: tf.io.FixedLenFeature([], tf.string) for k in KEYS[NFLT + NINT:]})
    return f


def checksum(cols):
    """cols: dict key -> numpy array (any shape); returns [fsum, isum, ssum, rows]."""
    import numpy as np
    fs = is_ = ss = 0
    for k in KEYS[:NFLT]:
        fs += int(np.asarray(cols[k], np.float32).view(np.uint32).sum(dtype=np.uint64))
    for k in KEYS[NFLT:NFLT + NINT]:
        is_ += int(np.asarray(cols[k]).astype(np.int64).sum(dtype=np.uint64))
    for k in KEYS[NFLT + NINT:]:
        ss += int(np.frombuffer(b"".join(np.asarray(cols[k]).ravel().tolist()),
                                np.uint8).sum(dtype=np.uint64))
    return [fs & M64, is_ & M64, ss & M64, int(np.asarray(cols[KEYS[0]]).size)]


class GraphPeer:
    """TF1 graph mode: the parse graphs (built once) and the TF1 queue pipeline."""

    def __init__(self, tf, path):
        self.tf, self.path, self.v1 = tf, path, tf.compat.v1
        self.v1.disable_eager_execution()
        self.recs = []
        for r in self.v1.io.tf_record_iterator(path):
            self.recs.append(r)
            if len(self.recs) == K:
                break
        self.graphs = {}

    def session(self, g):
        cfg = self.v1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        cfg.graph_options.rewrite_options.disable_meta_optimizer = True
        return self.v1.Session(graph=g, config=cfg)

    def parse_graph(self, single):
        if single in self.graphs:
            return self.graphs[single]
        tf, v1 = self.tf, self.v1
        g = tf.Graph()
        with g.as_default():
            feats = features(tf)
            if single:  # 256 scalar constants -> 256 single-path ops
                outs = [v1.parse_single_example(tf.constant(r), feats) for r in self.recs[:256]]
                n = 256
                ref = v1.io.parse_example(tf.constant(self.recs[:256]), feats)
            else:  # 16 resource variables of 256 records -> 16 batch-path ops
                vs = [v1.Variable(self.recs[i * PARSE_BATCH:(i + 1) * PARSE_BATCH],
                                  dtype=tf.string, use_resource=True, trainable=False)
                      for i in range(len(self.recs) // PARSE_BATCH)]
                outs = [v1.io.parse_example(v.read_value(), feats) for v in vs]
                n = PARSE_BATCH * len(vs)
                ref = None
            group = tf.group(*[t for o in outs for t in o.values()])
            init = v1.global_variables_initializer()
        sess = self.session(g)
        sess.run(init)
        vals = sess.run(outs)
        cols = {k: [v[k] for v in vals] for k in KEYS}
        import numpy as np
        cols = {k: np.stack(c) if single else np.concatenate(c) for k, c in cols.items()}
        chk = checksum(cols)
        ok = True
        if ref is not None:  # the single path against the batch path on the same records
            ok = checksum(sess.run(ref)) == chk
        sess.run(group)
        self.graphs[single] = (sess, group, n, chk, ok)
        return self.graphs[single]

    def parse(self, single, seconds):
        sess, group, n, chk, ok = self.parse_graph(single)
        done = 0
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            sess.run(group)
            done += n
            wall = time.perf_counter() - t0
            if wall >= seconds:
                break
        cpu = time.process_time() - c0
        size = sum(len(r) for r in self.recs[:n])
        return {"examples": done, "wall_s": wall, "cpu_s": cpu, "bytes": size * (done // n),
                "fsum": chk[0], "isum": chk[1], "ssum": chk[2], "records": chk[3],
                "single_matches_batch": ok}

    def tf1_pipeline(self):
        tf, v1 = self.tf, self.v1
        g = tf.Graph()
        with g.as_default():
            files = v1.train.string_input_producer([self.path], num_epochs=1, shuffle=False)
            _, ser = v1.TFRecordReader().read_up_to(files, READ)
            parsed = v1.io.parse_example(ser, features(tf))
            batch = v1.train.shuffle_batch(parsed, batch_size=BATCH, capacity=MAD + 3 * BATCH,
                                           min_after_dequeue=MAD, num_threads=2, seed=87654321,
                                           enqueue_many=True, allow_smaller_final_batch=True)
            init = [v1.global_variables_initializer(), v1.local_variables_initializer()]
        acc = Acc()
        with v1.Session(graph=g) as sess:
            sess.run(init)
            coord = v1.train.Coordinator()
            t0, c0 = time.perf_counter(), time.process_time()
            threads = v1.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while True:
                    acc.add(sess.run(batch))
            except tf.errors.OutOfRangeError:
                pass
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            coord.request_stop()
            coord.join(threads)
        return acc.result(wall, cpu, os.path.getsize(self.path))


class Acc:
    def __init__(self):
        self.s = [0, 0, 0, 0]

    def add(self, cols):
        c = checksum(cols)
        self.s = [(a + b) & M64 for a, b in zip(self.s, c)]

    def result(self, wall, cpu, size):
        return {"examples": self.s[3], "wall_s": wall, "cpu_s": cpu, "bytes": size,
                "fsum": self.s[0], "isum": self.s[1], "ssum": self.s[2]}


class EagerPeer:
    """tf.data in eager mode."""

    def __init__(self, tf, path):
        self.tf, self.path = tf, path

    def run(self, ds):
        acc = Acc()
        t0, c0 = time.perf_counter(), time.process_time()
        for b in ds:
            acc.add({k: v.numpy() for k, v in b.items()})
        return acc.result(time.perf_counter() - t0, time.process_time() - c0,
                          os.path.getsize(self.path))

    def tfdata_map(self):
        tf, feats = self.tf, features(self.tf)
        ds = (tf.data.TFRecordDataset(self.path)
              .map(lambda s: tf.io.parse_single_example(s, feats), num_parallel_calls=2)
              .shuffle(MAD, seed=87654321).batch(BATCH).prefetch(1))
        return self.run(ds)

    def tfdata_batch_map(self):
        tf, feats = self.tf, features(self.tf)
        ds = (tf.data.TFRecordDataset(self.path).shuffle(MAD, seed=87654321).batch(BATCH)
              .map(lambda s: tf.io.parse_example(s, feats), num_parallel_calls=2).prefetch(1))
        return self.run(ds)


def serve(kind, path):
    """A peer process: reads commands on stdin, prints RESULT / ERROR lines."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
        tf.get_logger().setLevel("ERROR")
        peer = GraphPeer(tf, path) if kind == "graph" else EagerPeer(tf, path)
        print("READY %s" % tf.__version__, flush=True)
    except Exception as e:  # no TensorFlow: the driver prints n/a
        print("ERROR %s" % (str(e).splitlines() or [type(e).__name__])[0][:200], flush=True)
        return
    cmds = {"parse-batch": lambda a: peer.parse(False, float(a[0])),
            "parse-single": lambda a: peer.parse(True, float(a[0])),
            "tf1-shuffle_batch": lambda a: peer.tf1_pipeline(),
            "tfdata-map": lambda a: peer.tfdata_map(),
            "tfdata-batch-map": lambda a: peer.tfdata_batch_map()}
    for line in sys.stdin:
        w = line.split()
        if not w or w[0] == "quit":
            break
        try:
            print("RESULT " + json.dumps(cmds[w[0]](w[1:])), flush=True)
        except Exception as e:
            print("ERROR %s" % (str(e).splitlines() or [type(e).__name__])[0][:200], flush=True)


# ---- the driver ----------------------------------------------------------------------------------

class Peer:
    def __init__(self, kind, path):
        self.kind, self.p, self.version = kind, None, None
        try:
            self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", kind,
                                       path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
        except OSError as e:
            print("  (%s peer: %s)" % (kind, e))

    def ready(self):
        if self.p and self.version is None:
            line = self.p.stdout.readline()
            if line.startswith("READY"):
                self.version = line.split()[1]
            else:
                print("  (%s peer n/a: %s)" % (self.kind, line.strip() or "exited"))
                self.close()
        return self.p is not None

    def run(self, cmd):
        if not self.ready():
            return None
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if line.startswith("RESULT "):
            return json.loads(line[7:])
        print("  (%s: %s)" % (cmd, line.strip() or "peer exited"))
        return None

    def close(self):
        if self.p:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.flush()
            except OSError:
                pass
            self.p.wait(timeout=60)
            self.p = None


def tfq(exe, *args):
    out = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True,
                         timeout=900)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.exit("bench_example: %s %s failed: %s" % (exe, " ".join(map(str, args)),
                                                  out.stderr.strip()[-300:]))


def summary(runs):
    rates = [r["examples"] / r["wall_s"] for r in runs]
    cpu = [r["examples"] / r["cpu_s"] for r in runs if r["cpu_s"] > 0]
    b = [r["bytes"] / r["wall_s"] / 1e6 for r in runs]
    return {"ex_per_s": statistics.median(rates), "ex_per_s_min": min(rates),
            "ex_per_s_max": max(rates), "ex_per_s_cpu": statistics.median(cpu) if cpu else None,
            "mb_per_s": statistics.median(b), "runs": len(runs),
            "examples": runs[0]["examples"] if runs else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build-release", "bench",
                                                    "bench_example"))
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    ap.add_argument("--records", type=int)
    ap.add_argument("--runs", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--only", default="parse,pipeline")
    ap.add_argument("--base", metavar="EXE",
                    help="a second bench_example (e.g. main's build) run next to tfq in every "
                         "slot (order alternating by round), reported as tfq-base")
    a = ap.parse_args()
    if a.serve:
        return serve(*a.serve)
    n = a.records or (50000 if a.quick else 200000)
    runs = a.runs or (2 if a.quick else 5)
    secs = a.seconds or (0.3 if a.quick else 1.0)
    only = set(a.only.split(","))
    os.makedirs(a.data, exist_ok=True)
    path = os.path.join(a.data, "EX_%d.tfrecord" % n)
    gen = tfq(a.bench, "gen", path, n)
    la = os.getloadavg()
    print("Examples (spec §10: %d floats, %d int64, %d bytes features; %.1f bytes each): %d in %s"
          % (NFLT, NINT, NSTR, gen["mean_bytes"], n, path))
    print("median of %d interleaved runs; parse windows %.1f s over %d records in memory; load "
          "average %.2f %.2f %.2f" % (runs, secs, K, *la))
    print('ENV {"bench":"example","records":%d,"runs":%d,"seconds":%g,"mean_bytes":%.1f,'
          '"loadavg":[%.2f,%.2f,%.2f]}' % (n, runs, secs, gen["mean_bytes"], *la))
    sys.stdout.flush()
    graph, eager = Peer("graph", path), Peer("eager", path)
    res = {}  # (workload, impl) -> [run results]
    bad = []

    def rec(w, impl, r, want=None):
        if r is None:
            return
        r["round"] = rnd
        res.setdefault((w, impl), []).append(r)
        got = [r["fsum"], r["isum"], r["ssum"]]
        if want is not None and got != want:
            bad.append("%s %s: checksum %s, want %s" % (w, impl, got, want))
        if r.get("single_matches_batch") is False:
            bad.append("%s %s: the single path differs from the batch path" % (w, impl))

    data_sum = [gen["fsum"], gen["isum"], gen["ssum"]]
    rnd = 0
    for rnd in range(runs):
        if "parse" in only:
            for mode in ("parse-batch", "parse-single"):
                t = tfq(a.bench, mode, path, K, secs)
                rec(mode, "tfq", t)
                want = [t["fsum"], t["isum"], t["ssum"]]
                rec(mode, "tf", graph.run("%s %g" % (mode, secs)),
                    want if mode == "parse-batch" else None)
        if "pipeline" in only:
            for peer, name in ((graph, "tf1-shuffle_batch"), (eager, "tfdata-map"),
                               (eager, "tfdata-batch-map")):
                mine = [("tfq", a.bench)] + ([("tfq-base", a.base)] if a.base else [])
                for impl, exe in (mine if rnd % 2 == 0 else mine[::-1]):
                    rec("pipeline", impl, tfq(exe, "pipeline", path), data_sum)
                rec("pipeline", name, peer.run(name), data_sum)
        print("  round %d/%d done (load %.2f)" % (rnd + 1, runs, os.getloadavg()[0]), flush=True)
    graph.close()
    eager.close()

    print("\n%-14s %-18s %12s %23s %12s %9s %8s" % ("workload", "impl", "Examples/s",
                                                    "spread (min..max)", "by CPU", "MB/s",
                                                    "tfq/this"))
    tq = {w: summary(res[(w, "tfq")]) for w in ("parse-batch", "parse-single", "pipeline")
          if (w, "tfq") in res}
    for (w, impl), rs in sorted(res.items(),
                                key=lambda x: (x[0][0], x[0][1] != "tfq", x[0][1] != "tfq-base")):
        s = summary(rs)
        ratio = tq[w]["ex_per_s"] / s["ex_per_s"] if impl != "tfq" and w in tq else None
        print("%-14s %-18s %12.0f %11.0f..%-11.0f %12s %9.1f %8s" % (
            w, impl, s["ex_per_s"], s["ex_per_s_min"], s["ex_per_s_max"],
            "%.0f" % s["ex_per_s_cpu"] if s["ex_per_s_cpu"] else "n/a", s["mb_per_s"],
            "%.2fx" % ratio if ratio else "-"))
        row = {"bench": "example", "workload": w, "impl": impl,
               "role": "tfq" if impl == "tfq" else "peer"}
        row.update(s)
        print("ROW " + json.dumps(row))
    print("load average %.2f %.2f %.2f (2 vCPUs; figures are noisy under load)" %
          os.getloadavg())

    def per_round(w, mine, peer, key):
        """Each round's ratio (the median of `mine`'s runs in that round over the peer's run
        in it), by wall (key wall_s) or CPU time (cpu_s): the median and range over rounds."""
        rs = []
        for k in range(runs):
            m = [r["examples"] / r[key] for r in res.get((w, mine), [])
                 if r["round"] == k and r[key] > 0]
            p = [r["examples"] / r[key] for r in res.get((w, peer), [])
                 if r["round"] == k and r[key] > 0]
            if m and p:
                rs.append(statistics.median(m) / statistics.median(p))
        if not rs:
            return "n/a"
        return "%.2fx (%.2f..%.2f)" % (statistics.median(rs), min(rs), max(rs))

    def target(label, w, peers, bound):
        if w not in tq:
            return
        ps = [(summary(res[(w, p)])["ex_per_s"], p) for p in peers if (w, p) in res]
        if not ps:
            print("TARGET %s >= %gx: peer missing (n/a)" % (label, bound))
            return
        best, name = max(ps)
        r = tq[w]["ex_per_s"] / best
        pc = summary(res[(w, name)])["ex_per_s_cpu"]
        print("TARGET %s (%s) >= %gx: %.2fx (%.0f vs %.0f Examples/s; by CPU time %s) %s" % (
            label, name, bound, r, tq[w]["ex_per_s"], best,
            "%.2fx" % (tq[w]["ex_per_s_cpu"] / pc) if pc and tq[w]["ex_per_s_cpu"] else "n/a",
            "PASS" if r >= bound else "MISS"))
        print("  per-round ratios, median (min..max) of %d rounds: wall %s, CPU time %s" % (
            runs, per_round(w, "tfq", name, "wall_s"), per_round(w, "tfq", name, "cpu_s")))
        if (w, "tfq-base") in res:
            b = summary(res[(w, "tfq-base")])
            print("  tfq-base (--base %s) against %s: %.2fx, by CPU time %s; per-round wall %s, "
                  "CPU time %s; tfq/tfq-base per round: wall %s, CPU time %s" % (
                      a.base, name, b["ex_per_s"] / best,
                      "%.2fx" % (b["ex_per_s_cpu"] / pc) if pc and b["ex_per_s_cpu"] else "n/a",
                      per_round(w, "tfq-base", name, "wall_s"),
                      per_round(w, "tfq-base", name, "cpu_s"),
                      per_round(w, "tfq", "tfq-base", "wall_s"),
                      per_round(w, "tfq", "tfq-base", "cpu_s")))

    target("example parse_example batch path tfq/TF 1 thread", "parse-batch", ["tf"], 3)
    target("example parse_single_example tfq/TF 1 thread", "parse-single", ["tf"], 3)
    target("example pipeline tfq/best peer", "pipeline",
           ["tf1-shuffle_batch", "tfdata-map", "tfdata-batch-map"], 10)
    for b in bad:
        print("CHECKSUM MISMATCH: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
