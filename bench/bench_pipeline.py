"""Issue #38: tfq_pipeline (bench/bench_pipeline.c) against the tfq-cat pipeline of commit
918d8a9 (the RandomShuffleQueue pipeline tfq-cat ran before it moved onto tfq_pipeline) on the
mixed set (bench/gen_data.c's DM.csv, the file and its 8 part files), from interleaved rounds;
today's tfq-cat (on tfq_pipeline) against that old one; and the checkpoint of a full
10,000-record shuffle buffer.

    bench_pipeline.py --build BUILD [--data DIR] [--runs R] [--parts N] [--baseline COMMIT]

The old tfq-cat is built once from `git archive COMMIT` (default 918d8a9) of the repository
holding this script, with the build dir's buildtype and -Dtensorflow=disabled -Dtests=disabled,
and cached in BUILD/bench-baseline-COMMIT/ (its tools/tfq-cat).

Each round runs every configuration once (R rounds, default 5), batches of 128, shuffled:
  cat-1       old tfq-cat -o none -n 0 -j 1 DM.csv (the RandomShuffleQueue pipeline, 1 reader)
  pl-1        bench_pipeline -j 1 DM.csv (tfq_pipeline, free-running, 1 reader)
  new-1       today's tfq-cat -o none -n 0 -j 1 DM.csv (on tfq_pipeline)
  cat-2       old tfq-cat -o none -n 0 -j 2 on the N part files (2 readers)
  pl-2        bench_pipeline -j 2 on the part files (free-running)
  new-2       today's tfq-cat -j 2 on the part files
  pl-det-2    bench_pipeline -j 2 --deterministic on the part files
  cat-ns/pl-ns/new-ns  the same as cat-1/pl-1/new-1 without shuffling
Every run is timed as a whole process (exec to exit) on both sides; each ratio is computed per
round and printed as the median of the R rounds with its range.  Every run must deliver every
row, or the script exits 1.  Then bench_pipeline --checkpoint: the state's size and the median
save time of 21 saves with 10,000 records in the buffer.

Prints ROW {json} lines (bench "pipeline") and TARGET lines; bench/report.py collects them."""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mixed import SPEC_OF, TYPES, split_parts, timed  # noqa: E402


def records_of(name, out, err):
    if name.startswith("cat") or name.startswith("new"):
        for ln in err.splitlines():
            if "stats: records" in ln:
                return int(ln.split("records ")[1].split(",")[0])
        return -1
    for ln in out.splitlines():
        if ln.startswith("records "):
            return int(ln.split()[1])
    return -1


def baseline_cat(build, commit):
    """tools/tfq-cat of `commit`, built (once) under BUILD/bench-baseline-COMMIT."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.join(os.path.abspath(build), "bench-baseline-" + commit)
    exe = os.path.join(root, "build", "tools", "tfq-cat")
    if os.path.exists(exe):
        return exe
    src = os.path.join(root, "src")
    os.makedirs(src, exist_ok=True)
    arch = subprocess.run(["git", "-C", here, "archive", "--format=tar", commit],
                          check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=arch, check=True)
    bt = "debugoptimized"
    try:
        intro = subprocess.run(["meson", "introspect", "--buildoptions", build],
                               capture_output=True, text=True, check=True).stdout
        for opt in json.loads(intro):
            if opt["name"] == "buildtype":
                bt = opt["value"]
    except (subprocess.CalledProcessError, ValueError, KeyError):
        pass
    subprocess.run(["meson", "setup", os.path.join(root, "build"), src, "-Dbuildtype=" + bt,
                    "-Dtensorflow=disabled", "-Dtests=disabled"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", os.path.join(root, "build"), "tools/tfq-cat"], check=True,
                   stdout=subprocess.DEVNULL)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--data", default="/tmp/tfq-bench-mixed")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--baseline", default="918d8a9")
    a = ap.parse_args()
    path = os.path.join(a.data, "DM.csv")
    if not os.path.exists(path):
        os.makedirs(a.data, exist_ok=True)
        subprocess.run([os.path.join(a.build, "bench", "gen_data"), a.data], check=True,
                       stdout=subprocess.DEVNULL)
    parts = split_parts(path, a.parts, os.path.join(a.data, "DM-parts"))
    spec = ",".join(SPEC_OF[t] for t in TYPES)
    cat = baseline_cat(a.build, a.baseline)
    new_cat = os.path.join(a.build, "tools", "tfq-cat")
    pl = os.path.join(a.build, "bench", "bench_pipeline")

    def cat_cmd(extra, files, exe=cat):
        return [exe, "-o", "none", "-n", "0", "-b", "128", "-q", "--stats", "-d", spec] + \
            extra + files

    def pl_cmd(extra, files):
        return [pl, "-d", spec, "-b", "128"] + extra + files

    configs = [("cat-1", cat_cmd(["-j", "1"], [path])), ("pl-1", pl_cmd(["-j", "1"], [path])),
               ("new-1", cat_cmd(["-j", "1"], [path], new_cat)),
               ("cat-2", cat_cmd(["-j", "2"], parts)), ("pl-2", pl_cmd(["-j", "2"], parts)),
               ("new-2", cat_cmd(["-j", "2"], parts, new_cat)),
               ("pl-det-2", pl_cmd(["-j", "2", "--deterministic"], parts)),
               ("cat-ns", cat_cmd(["-j", "1", "--no-shuffle"], [path])),
               ("pl-ns", pl_cmd(["-j", "1", "--no-shuffle"], [path])),
               ("new-ns", cat_cmd(["-j", "1", "--no-shuffle"], [path], new_cat))]
    res = {name: [] for name, _ in configs}
    failed = []
    for _ in range(a.runs):
        for name, cmd in configs:
            wall, cpu, out, err = timed(cmd)
            res[name].append({"wall_s": wall, "cpu_s": cpu, "records": records_of(name, out, err)})
    want = res["cat-ns"][0]["records"]
    for name, xs in res.items():
        for x in xs:
            if x["records"] != want or want <= 0:
                failed.append("%s delivered %d records, not %d" % (name, x["records"], want))
    size = os.path.getsize(path)
    for name, _ in configs:
        rs = [size / x["wall_s"] / 1e6 for x in res[name]]
        cs = [size / x["cpu_s"] / 1e6 for x in res[name]]
        row = {"bench": "pipeline", "impl": name, "dataset": "DM", "bytes": size, "runs": a.runs,
               "records": want, "mb_per_s": statistics.median(rs), "mb_per_s_min": min(rs),
               "mb_per_s_max": max(rs), "mb_per_s_cpu": statistics.median(cs)}
        print("ROW " + json.dumps(row))
        print("  %-9s %7.1f MB/s (range %.1f-%.1f; CPU-time rate %.1f)" %
              (name, row["mb_per_s"], row["mb_per_s_min"], row["mb_per_s_max"],
               row["mb_per_s_cpu"]))

    def target(what, num, den, bound):
        rs = [res[den][i]["wall_s"] / res[num][i]["wall_s"] for i in range(a.runs)]
        cs = [res[den][i]["cpu_s"] / res[num][i]["cpu_s"] for i in range(a.runs)]
        m = statistics.median(rs)
        print("TARGET #38 %s >= %.2fx: %.2fx (median of %d rounds, range %.2f-%.2f; CPU-time "
              "%.2fx) %s" % (what, bound, m, a.runs, min(rs), max(rs), statistics.median(cs),
                             "met" if m >= bound else "missed"))
        print("ROW " + json.dumps({"bench": "pipeline-target", "what": what, "value": m,
                                   "min": min(rs), "max": max(rs), "bound": bound}))

    target("tfq_pipeline / tfq-cat, shuffled, 1 reader", "pl-1", "cat-1", 0.95)
    target("tfq_pipeline / tfq-cat, shuffled, 2 readers", "pl-2", "cat-2", 0.95)
    target("deterministic / free-running tfq_pipeline, 2 readers", "pl-det-2", "pl-2", 0.8)
    target("tfq_pipeline / tfq-cat, unshuffled, 1 reader", "pl-ns", "cat-ns", 0.95)
    target("tfq-cat on tfq_pipeline / old tfq-cat, shuffled, 1 reader", "new-1", "cat-1", 0.95)
    target("tfq-cat on tfq_pipeline / old tfq-cat, shuffled, 2 readers", "new-2", "cat-2", 0.95)
    target("tfq-cat on tfq_pipeline / old tfq-cat, unshuffled, 1 reader", "new-ns", "cat-ns", 0.95)

    p = subprocess.run(pl_cmd(["--checkpoint"], [path]), capture_output=True, text=True)
    if p.returncode != 0:
        failed.append("checkpoint: %s" % p.stderr.strip())
    else:
        w = p.stdout.split()
        kv = {w[i]: w[i + 1] for i in range(0, 8, 2)}
        row = {"bench": "pipeline-checkpoint", "state_bytes": int(kv["state_bytes"]),
               "buffer_records": int(kv["buffer_records"]),
               "save_ms_median": float(kv["save_ms_median"]), "line": p.stdout.strip()}
        print("ROW " + json.dumps(row))
        print("checkpoint, full buffer: %s" % p.stdout.strip())
    for f in failed:
        print("CHECK FAILED: " + f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
