#!/bin/sh
# bench_cli.sh: wall time of previewing 5 shuffled batches of 32 rows from a large CSV with
# tfq-cat, against `shuf -n 160`, a pandas script, DuckDB (`ORDER BY random() LIMIT 160`) and the
# TF1 pipeline (string_input_producer -> TextLineReader -> decode_csv -> shuffle_batch, import
# included) on the same file.  Prints figures and one `ROW {json}` line per command (read by
# bench/report.py); it is never a pass/fail test (W5 of bench/README.md).  Peers whose Python
# module is missing print "skipped"; NO_TF=1 skips the (slow) TF1 peer.
#
#   bench/bench_cli.sh [CSV]          default: a generated 200 MB CSV in $TMPDIR (kept between
#                                     runs); TFQ_CAT=path/to/tfq-cat overrides the binary,
#                                     PYTHON=... the Python used for pandas; RUNS=3 runs each.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
tfq_cat=${TFQ_CAT:-}
if [ -z "$tfq_cat" ]; then
  for b in build-release build build-bench build-cat; do
    if [ -x "$here/$b/tools/tfq-cat" ]; then tfq_cat="$here/$b/tools/tfq-cat"; break; fi
  done
fi
[ -n "$tfq_cat" ] || { echo "bench_cli: build tfq-cat first (or set TFQ_CAT)" >&2; exit 1; }

csv=${1:-}
if [ -z "$csv" ]; then
  csv=${TMPDIR:-/tmp}/tfq_bench_cli_200MB.csv
  if [ ! -s "$csv" ]; then
    echo "bench_cli: writing $csv (200 MB) ..." >&2
    awk 'BEGIN { srand(1); print "id,x1,x2,x3,label";
                 for (i = 0; n < 200000000; i++) {
                   line = sprintf("%d,%.6f,%.6f,%d,%s", i, rand(), rand() * 100,
                                  int(rand() * 1000), (rand() < 0.5 ? "cat" : "dog"));
                   print line; n += length(line) + 1 } }' > "$csv"
  fi
fi
size=$(wc -c < "$csv")

now() { date +%s.%N; }
# best_of CMD...: the best wall time of $runs runs, in seconds.
best_of() {
  best=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    t0=$(now)
    "$@" > /dev/null
    t1=$(now)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" -eq 1 ]; then best=$t; fi
    i=$((i + 1))
  done
  printf '%.4f' "$best"
}

echo "bench_cli: file $csv, $size bytes; best of $runs runs (page cache warm)"
cat "$csv" > /dev/null
# row IMPL SECONDS: the machine-readable line.
row() { printf 'ROW {"bench":"cli","impl":"%s","wall_s":%s,"runs":%s}\n' "$1" "$2" "$runs"; }
t=$(best_of "$tfq_cat" -q --shuffle -b 32 -n 5 --skip-header-lines=1 "$csv")
printf '%-44s %8s s\n' "tfq-cat --shuffle -b 32 -n 5" "$t"
row tfq-cat "$t"
stats=$("$tfq_cat" -q --shuffle -b 32 -n 5 --skip-header-lines=1 -o none --stats "$csv" 2>&1)
echo "  ($(echo "$stats" | sed -n 's/.*\(bytes read [0-9]*\).*\(first batch [0-9.]* s\).*/\1, \2/p'))"
t=$(best_of "$tfq_cat" -q --shuffle -b 32 -n 0 -o none --skip-header-lines=1 "$csv")
printf '%-44s %8s s\n' "tfq-cat -n 0 -o none (whole file, decoded)" "$t"
row tfq-cat-whole-file "$t"
t=$(best_of shuf -n 160 "$csv")
printf '%-44s %8s s\n' "shuf -n 160" "$t"
row shuf "$t"

py=${PYTHON:-}
if [ -z "$py" ]; then
  if [ -x "$here/.venv/bin/python" ]; then py="$here/.venv/bin/python"; else py=python3; fi
fi
if "$py" -c 'import pandas' 2>/dev/null; then
  t=$(best_of "$py" -c 'import sys, pandas as pd
df = pd.read_csv(sys.argv[1]).sample(n=160)
for k in range(5): print(df.iloc[32 * k:32 * (k + 1)])' "$csv")
  printf '%-44s %8s s\n' "pandas read_csv + sample(160)" "$t"
  row pandas "$t"
else
  echo "pandas: skipped (no pandas for $py)"
fi
if "$py" -c 'import duckdb' 2>/dev/null; then
  t=$(best_of "$py" -c 'import sys, duckdb
rows = duckdb.sql("SELECT * FROM read_csv(?, header=false) ORDER BY random() LIMIT 160",
                  params=[sys.argv[1]]).fetchall()
for k in range(5): print(rows[32 * k:32 * (k + 1)])' "$csv")
  printf '%-44s %8s s\n' "duckdb ORDER BY random() LIMIT 160" "$t"
  row duckdb "$t"
else
  echo "duckdb: skipped (no duckdb for $py)"
fi
if [ -z "${NO_TF:-}" ] && "$py" -c 'import tensorflow' 2>/dev/null; then
  t=$(TF_CPP_MIN_LOG_LEVEL=3 best_of "$py" -c 'import sys
import tensorflow as tf
tf1 = tf.compat.v1
tf1.disable_eager_execution()
with open(sys.argv[1]) as f:
    ncol = f.readline().count(",") + 1
q = tf1.train.string_input_producer([sys.argv[1]])
_, line = tf1.TextLineReader().read_up_to(q, 1024)
cols = tf1.decode_csv(line, [[""]] * ncol)
batch = tf1.train.shuffle_batch(cols, 32, capacity=1000 + 3 * 32, min_after_dequeue=1000,
                                num_threads=2, enqueue_many=True)
with tf1.Session() as s:
    coord = tf1.train.Coordinator()
    th = tf1.train.start_queue_runners(s, coord)
    for k in range(5): print(s.run(batch)[0][:2])
    coord.request_stop()
    coord.join(th, stop_grace_period_secs=5)' "$csv")
  printf '%-44s %8s s\n' "TF1 shuffle_batch pipeline (import incl.)" "$t"
  row tf1-shuffle_batch "$t"
else
  echo "tf1: skipped (NO_TF set or no tensorflow for $py)"
fi
