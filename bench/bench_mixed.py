"""Issue #18 on the mixed set (bench/gen_data.c, DM.csv: 6 float32 of 6-9 significant digits, an
int64, an int32, a categorical word and a free-text id): the pipeline against its own decoder, and
the library's decode against DuckDB, pyarrow and pandas, from interleaved runs.

    bench_mixed.py --build BUILD [--python PY] [--data DIR] [--runs R] [--parts N]
                   [--csv FILE --types TYPES] [--base-cat TFQ_CAT]

--csv measures the same rows on a CSV of your own instead of DM.csv (no header, no quoted
fields); --types gives its column types as bench_lines takes them, one letter a column:
f float32, d float64, i int32, l int64, s string (tfq-cat's -d spec is derived from them).

Each round runs, one after the other, every configuration once (R rounds, default 5):
  lines        bench_lines DM.csv: tfq_decode_csv_lines on the file's lines in batches of 1,024,
               one thread (the lines split beforehand, untimed) -- the decoder's rate;
  buffer       bench_lines --buffer: read the file + tfq_decode_csv_buffer, one thread;
  no-shuffle   tfq-cat -o none -n 0 --no-shuffle -j 1 -b 128 DM.csv (1 reader thread);
  no-shuffle-1cpu  the same under `taskset -c 0` (the whole process on one CPU, as the peers);
  shuffle      tfq-cat -o none -n 0 -j 1 -b 128 DM.csv (RandomShuffleQueue, 1 reader);
  parts-1/-2   tfq-cat -o none -n 0 -j 1 / -j 2 -b 128 on DM cut into N part files (default 8):
               the reader-thread scaling (one file feeds one reader at a time, as in TF);
  duckdb, pyarrow, pandas, polars  (bench/peers_mixed.py under `taskset -c 0`: one CPU, one
               thread; polars with POLARS_MAX_THREADS=1);
  polars-all   polars on every core, not pinned (its default mode): the peer of parts-2;
  base-1cpu    with --base-cat: no-shuffle-1cpu run by another tfq-cat binary (issue #41: the
               tfq-cat of commit 385f126, built in release mode beside this one), the same
               arguments; TARGET no-shuffle-1cpu / base-1cpu >= 1.5x.
Wall seconds are the process's (exec to exit); CPU seconds its user + system time.  Each ratio is
computed per round (both sides from the same round) and printed as the median of the R rounds
with their range; a row's rate is the median of its R runs.  Every tfq-cat run must report all
rows and every peer bench_lines' checksum, or the script exits 1.

Prints ROW {json} lines (bench "mixed") and TARGET lines; bench/report.py collects them."""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

TYPES = "ffffffliss"
# tfq-cat's configurations (the others are bench_lines and the peers)
CAT = ["no-shuffle", "no-shuffle-1cpu", "shuffle", "parts-1", "parts-2"]
SPEC_OF = {"f": "float32:0", "d": "float64:0", "i": "int32:0", "l": "int64:0", "s": "string:"}


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd):
    c0, w0 = child_cpu(), time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - w0, child_cpu() - c0
    if p.returncode != 0:
        sys.exit("bench_mixed: %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return wall, cpu, p.stdout, p.stderr


def row_of(text):
    for line in text.splitlines():
        if line.startswith("ROW "):
            return json.loads(line[4:])
    sys.exit("bench_mixed: no ROW in %r" % text[:200])


def split_parts(path, n, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    parts = [os.path.join(out_dir, "part-%02d.csv" % i) for i in range(n)]
    if all(os.path.exists(p) for p in parts) and \
            sum(os.path.getsize(p) for p in parts) == os.path.getsize(path):
        return parts
    with open(path, "rb") as f:
        lines = f.readlines()
    for i, p in enumerate(parts):
        with open(p, "wb") as g:
            g.writelines(lines[len(lines) * i // n:len(lines) * (i + 1) // n])
    return parts


def med(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--python", default=None)
    ap.add_argument("--data", default="/tmp/tfq-bench-mixed")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--types", default=None)
    ap.add_argument("--base-cat", default=None,
                    help="another tfq-cat binary, run as no-shuffle-1cpu (row base-1cpu)")
    a = ap.parse_args()
    types = TYPES
    if a.csv:
        if not a.types or any(t not in SPEC_OF for t in a.types):
            sys.exit("bench_mixed: --csv needs --types, one of %s per column" % "".join(SPEC_OF))
        types = a.types
        path = os.path.abspath(a.csv)
        dsname = os.path.basename(path)
        parts_dir = path + ".parts"
    else:
        path = os.path.join(a.data, "DM.csv")
        dsname = "DM"
        parts_dir = os.path.join(a.data, "DM-parts")
    if not os.path.exists(path) and not a.csv:
        subprocess.run([os.path.join(a.build, "bench", "gen_data"), a.data], check=True,
                       stdout=subprocess.DEVNULL)
    spec = ",".join(SPEC_OF[t] for t in types)  # tfq-cat's -d
    size = os.path.getsize(path)
    parts = split_parts(path, a.parts, parts_dir)
    lines = os.path.join(a.build, "bench", "bench_lines")
    cat = os.path.join(a.build, "tools", "tfq-cat")
    peers = []
    if a.python and os.path.exists(a.python):
        peers = ["duckdb", "pyarrow", "pandas"]
        if subprocess.run([a.python, "-c", "import polars"], capture_output=True).returncode == 0:
            peers += ["polars", "polars-all"]  # polars on one CPU; and on every core, unpinned
    taskset = ["taskset", "-c", "0"] if subprocess.run(["sh", "-c", "command -v taskset"],
                                                       capture_output=True).returncode == 0 else []

    def cat_cmd(extra, files, binary=cat):
        return [binary, "-o", "none", "-n", "0", "-b", "128", "-q", "--stats", "-d", spec] + \
            extra + files

    configs = [("lines", [lines, path, types]), ("buffer", [lines, path, types, "--buffer"]),
               ("no-shuffle", cat_cmd(["--no-shuffle", "-j", "1"], [path])),
               ("no-shuffle-1cpu", taskset + cat_cmd(["--no-shuffle", "-j", "1"], [path])),
               ("shuffle", cat_cmd(["-j", "1"], [path])),
               ("parts-1", cat_cmd(["-j", "1"], parts)),
               ("parts-2", cat_cmd(["-j", "2"], parts))]
    if a.base_cat:
        if not os.access(a.base_cat, os.X_OK):
            sys.exit("bench_mixed: --base-cat %s is not an executable" % a.base_cat)
        CAT.append("base-1cpu")
        configs.append(("base-1cpu", taskset + cat_cmd(["--no-shuffle", "-j", "1"], [path],
                                                       os.path.abspath(a.base_cat))))
    for p in peers:
        configs.append((p, ([] if p == "polars-all" else taskset) +
                        [a.python, os.path.join(os.path.dirname(__file__), "peers_mixed.py"), p,
                         path, types]))
    res = {name: [] for name, _ in configs}
    ref_check, failed = None, []
    for r in range(a.runs):
        for name, cmd in configs:
            wall, cpu, out, err = timed(cmd)
            x = {"wall_s": wall, "cpu_s": cpu}
            if name in ("lines", "buffer") or name in peers:
                row = row_of(out)
                x["inner_wall_s"] = row["wall_s"]
                if name != "lines":
                    if ref_check is None:
                        ref_check = row["check"]
                    elif abs(row["check"] - ref_check) > 1e-9 * abs(ref_check):
                        failed.append("%s checksum %r != %r" % (name, row["check"], ref_check))
            else:
                stats = [ln for ln in err.splitlines() if "stats: records" in ln]
                recs = int(stats[0].split("records ")[1].split(",")[0]) if stats else -1
                if recs <= 0:
                    failed.append("%s: no stats line" % name)
                x["records"] = recs
                m = re.search(r"([0-9.]+) allocations per record", stats[0]) if stats else None
                x["allocs_per_record"] = float(m.group(1)) if m else None
            res[name].append(x)
    rows_expected = res["no-shuffle"][0]["records"]
    for name in CAT:
        for x in res[name]:
            if x["records"] != rows_expected:
                failed.append("%s delivered %d records, not %d" % (name, x["records"],
                                                                   rows_expected))

    # Rates.  lines/buffer/peers: the program's own timed region (the decode, or read + decode);
    # tfq-cat: the whole process.
    def rate(name, i, cpu=False):
        x = res[name][i]
        if cpu:
            return size / x["cpu_s"] / 1e6 if name in CAT else size / x["inner_wall_s"] / 1e6
        return size / x.get("inner_wall_s", x["wall_s"]) / 1e6

    out_rows = []
    for name, _ in configs:
        rs = [rate(name, i) for i in range(a.runs)]
        cs = [rate(name, i, True) for i in range(a.runs)]
        row = {"bench": "mixed", "impl": name, "dataset": dsname, "bytes": size, "runs": a.runs,
               "mb_per_s": med(rs), "mb_per_s_min": min(rs), "mb_per_s_max": max(rs),
               "mb_per_s_cpu": med(cs)}
        if name in CAT:
            row["allocs_per_record"] = med([x["allocs_per_record"] for x in res[name]])
            row["records"] = rows_expected
        out_rows.append(row)
        print("ROW " + json.dumps(row))

    def ratio(num, den, cpu=False):
        rs = [rate(num, i, cpu) / rate(den, i, cpu) for i in range(a.runs)]
        return med(rs), min(rs), max(rs)

    def target(what, num, den, bound, cpu_too=True):
        m, lo, hi = ratio(num, den)
        note = ""
        if cpu_too:
            cm, clo, chi = ratio(num, den, True)
            note = " (CPU-time %.2fx, %.2f-%.2f)" % (cm, clo, chi)
        print("TARGET #18 %s >= %.1fx: %.2fx (median of %d rounds, range %.2f-%.2f)%s %s" %
              (what, bound, m, a.runs, lo, hi, note, "met" if m >= bound else "missed"))
        print("ROW " + json.dumps({"bench": "mixed-target", "what": what, "value": m, "min": lo,
                                   "max": hi, "bound": bound}))

    print("%s: %.1f MB, %d rows; medians of %d interleaved rounds (MB/s, wall):" %
          (dsname, size / 1e6, rows_expected, a.runs))
    for row in out_rows:
        extra = " allocs/record %.4f" % row["allocs_per_record"] if "allocs_per_record" in row \
            else ""
        print("  %-11s %7.1f MB/s (range %.1f-%.1f; CPU-time rate %.1f)%s" %
              (row["impl"], row["mb_per_s"], row["mb_per_s_min"], row["mb_per_s_max"],
               row["mb_per_s_cpu"], extra))
    target(dsname + " tfq-cat shuffled b128 1 reader / tfq_decode_csv_lines 1 thread",
           "shuffle", "lines", 0.8)
    target(dsname + " tfq-cat no-shuffle b128 1 reader / tfq_decode_csv_lines 1 thread",
           "no-shuffle", "lines", 0.9)
    target(dsname + " tfq-cat 2 readers / 1 reader (%d part files, 2 cores)" % a.parts,
           "parts-2", "parts-1", 1.6)
    # What the cores allow at the CPU the 2-reader run itself spent: its wall time is at least
    # its CPU time over the cores, so in each round wall(1 reader) / wall(2 readers) is at most
    # cores * wall(1 reader) / CPU(2 readers).  A real upper bound of the round's ratio.
    cores = os.cpu_count() or 1
    lim = [cores * res["parts-1"][i]["wall_s"] / res["parts-2"][i]["cpu_s"] for i in range(a.runs)]
    print("LIMIT #18 2 readers / 1 reader on %d cores at the 2-reader run's CPU time: %.2fx "
          "(median of %d rounds, range %.2f-%.2f; 1 reader uses %.2f cores)" %
          (cores, med(lim), a.runs, min(lim), max(lim),
           med([res["parts-1"][i]["cpu_s"] / res["parts-1"][i]["wall_s"] for i in range(a.runs)])))
    one_cpu = [p for p in peers if p != "polars-all"]
    if one_cpu:
        best = max(one_cpu, key=lambda p: med([rate(p, i) for i in range(a.runs)]))
        target(dsname + " library decode (read + tfq_decode_csv_buffer) / best peer (%s, 1 CPU)"
               % best, "buffer", best, 2.0, cpu_too=False)
        # issue #41: end to end from the file, both sides on one CPU, every column materialised
        # (tfq-cat's whole process, exec to exit, against the peer's read + conversion to numpy
        # with its interpreter start and imports left out)
        target(dsname + " tfq-cat end to end, 1 CPU (whole process) / best peer (%s, 1 CPU, "
               "read + numpy)" % best, "no-shuffle-1cpu", best, 4.0, cpu_too=False)
    if a.base_cat:
        target(dsname + " tfq-cat end to end, 1 CPU / the base tfq-cat (%s), 1 CPU" % a.base_cat,
               "no-shuffle-1cpu", "base-1cpu", 1.5)
    if "polars-all" in peers:
        target(dsname + " tfq-cat 2 readers on %d part files / polars on every core" % len(parts),
               "parts-2", "polars-all", 2.0, cpu_too=False)
    ap_ = med([x["allocs_per_record"] for x in res["shuffle"]])
    print("TARGET #18 %s shuffled pipeline allocations per record (tfq-cat --stats) <= 0.05: "
          "%.4f %s" % (dsname, ap_, "met" if ap_ <= 0.05 else "missed"))
    if failed:
        print("CHECK FAILED: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
