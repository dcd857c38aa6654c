/* End-to-end shuffled minibatches (W4 of bench/README.md) on D1 (6 floats, 3 ints,
 * 1 short word per row; the generator and seed of bench_decode.c, so the bytes are the same):
 *
 *   filename FIFOQueue <- producer op (QueueRunner, num_epochs 1)
 *   -> one tfq_read_decode_op (TextLineReader read_up_to(READ) + decode_csv + enqueue_many),
 *      run by THREADS QueueRunner threads (default 2; they share the reader as TF1's
 *      shuffle_batch(num_threads=2) shares its one reader, and decode in parallel)
 *   -> RandomShuffleQueue(capacity = M + 3*B, min_after_dequeue = M)
 *   -> consumer: dequeue_many(B) until OUT_OF_RANGE, then dequeue_up_to(B) for the tail (as TF1's
 *      allow_smaller_final_batch), both into one tuple refilled in place (the _into calls),
 *      checksumming every byte of every column.
 *
 * Figures per run: examples/s and MB/s (CSV bytes / wall), time to first batch (from starting
 * the runners), CPU seconds per 1M examples (getrusage, all threads), over the median of --runs
 * runs.  The checksum (sum of float bit patterns, of ints, of string bytes) is independent of
 * the order, so every pipeline must reproduce it exactly.
 *
 * The peers (bench/peers_e2e.py, run with --peers PYTHON in the same process run) are much
 * slower, so they run on a prefix of D1 (--peer-rows, default 100k); tfq runs on that prefix too
 * and on the full --rows file.  Ratios compare examples/s on the same prefix file (and, for
 * reference, tfq's full-size rate).  With --peers the runs interleave: --runs rounds of (tfq on the
 * prefix, then each peer), each ratio the median of its rounds' ratios with their range (the
 * informational tf1-read1 runs in the first round only).
 *
 *   bench_e2e [--rows N] [--peer-rows N] [--runs R] [--threads T] [--min-after-dequeue M]
 *             [--batch B] [--read-batch N] [--dir DIR] [--peers PYTHON] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>

#ifndef TFQ_BENCH_DIR
#define TFQ_BENCH_DIR "bench"
#endif

#include "bench_util.h"

#define NF BENCH_NF
#define NI BENCH_NI

/* bench_decode's D1 data set (gen_data's D1.csv), for `rows` rows. */
static char *gen_d1(long rows, size_t *len) { return bench_gen_d1(rows, 0, len); }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

static tfq_status *st;

static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "bench_e2e: %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  exit(1);
}

typedef struct result {
  long long rows;
  double wall, ttfb, cpu;
  unsigned long long fsum, isum, ssum;
} result;

typedef struct params {
  int threads;
  int64_t mad, batch, read_batch;
} params;

static void touch(const tfq_tuple *b, result *r) {
  int64_t n = tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
  for (size_t f = 0; f < NF; f++) {
    const uint32_t *v = tfq_tensor_cdata(tfq_tuple_get(b, f));
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    r->fsum += s;
  }
  for (size_t f = NF; f < NF + NI; f++) {
    const uint32_t *v = tfq_tensor_cdata(tfq_tuple_get(b, f));
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    r->isum += s;
  }
  const tfq_tensor *str = tfq_tuple_get(b, NF + NI);
  uint64_t s = 0;
  for (int64_t i = 0; i < n; i++) {
    size_t l;
    const unsigned char *p = (const unsigned char *)tfq_tensor_string(str, i, &l);
    for (size_t k = 0; k < l; k++) s += p[k];
  }
  r->ssum += s;
  r->rows += n;
}

static result run_tfq(const char *path, const params *pp) {
  result r;
  memset(&r, 0, sizeof r);
  tfq_coord *coord;
  check(tfq_coord_new(&coord, st), "coordinator");

  /* string_input_producer([path], num_epochs=1, shuffle=False) under the coordinator */
  int64_t one = 1;
  tfq_tensor *names;
  check(tfq_tensor_new(TFQ_STRING, &one, 1, &names, st), "names");
  check(tfq_tensor_set_string(names, 0, path, strlen(path), st), "names");
  tfq_producer_options *po;
  check(tfq_producer_options_new(&po, st), "producer options");
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_producer_options_set_shuffle(po, 0);
  tfq_queue *files;
  tfq_producer_runner *producer;
  check(tfq_string_input_producer_start(names, po, coord, &files, &producer, st),
        "string_input_producer");

  /* RandomShuffleQueue of D1's 10 scalar columns */
  tfq_spec *spec;
  check(tfq_spec_new(&spec, st), "spec");
  for (int i = 0; i < NF + NI + 1; i++)
    check(tfq_spec_add(spec,
                       i < NF        ? TFQ_FLOAT
                       : i < NF + NI ? TFQ_INT32
                                     : TFQ_STRING,
                       NULL, 0, NULL, st),
          "spec");
  tfq_queue_options *qo;
  check(tfq_queue_options_new(&qo, st), "queue options");
  tfq_queue_options_set_capacity(qo, pp->mad + 3 * pp->batch);
  tfq_queue_options_set_min_after_dequeue(qo, pp->mad);
  tfq_queue_options_set_seeds(qo, 87654321, 42);
  tfq_queue *q;
  check(tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, spec, qo, &q, st), "shuffle queue");

  /* reader + decode_csv + enqueue_many, `threads` runner threads */
  tfq_reader *reader;
  check(tfq_reader_new(TFQ_READER_TEXT_LINE, NULL, &reader, st), "reader");
  tfq_csv_options *csv;
  check(tfq_csv_options_new(&csv, st), "csv");
  for (int i = 0; i < NF; i++) check(tfq_csv_options_add_default_float(csv, 0.0f, st), "csv");
  for (int i = 0; i < NI; i++) check(tfq_csv_options_add_default_int32(csv, 0, st), "csv");
  check(tfq_csv_options_add_default_string(csv, "", 0, st), "csv");
  tfq_read_decode_op *op;
  check(tfq_read_decode_op_new(reader, files, csv, pp->read_batch, q, &op, st), "read op");
  tfq_runner *rrunner;
  check(tfq_runner_new(q, &rrunner, st), "runner");
  for (int t = 0; t < pp->threads; t++)
    check(tfq_runner_add_op(rrunner, tfq_read_decode_step, op, "read", st), "op");

  double t0 = now(), c0 = cpu_now();
  check(tfq_runner_start(rrunner, coord, 0, st), "start readers");
  tfq_cancel *cancel = tfq_coord_cancel(coord);
  int tail = 0;
  /* One batch tuple refilled in place (the steady consumer's calls, as tfq-cat's). */
  tfq_tuple *b;
  check(tfq_tuple_new(tfq_spec_size(tfq_queue_spec(q)), &b, st), "batch tuple");
  for (;;) {
    tfq_code c = tail ? tfq_queue_dequeue_up_to_into(q, pp->batch, b, cancel, TFQ_NO_TIMEOUT, st)
                      : tfq_queue_dequeue_many_into(q, pp->batch, b, cancel, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE) {
      if (tail) break;
      tail = 1;
      continue;
    }
    check(c, "dequeue");
    if (r.rows == 0) r.ttfb = now() - t0;
    touch(b, &r);
  }
  tfq_tuple_free(b);
  r.wall = now() - t0;
  r.cpu = cpu_now() - c0;
  check(tfq_coord_request_stop(coord, TFQ_OK, NULL), "request_stop");
  check(tfq_coord_join(coord, 10 * 1000000, 0, st), "join");

  tfq_runner_free(rrunner);
  tfq_read_decode_op_free(op);
  tfq_producer_runner_free(producer);
  tfq_csv_options_free(csv);
  tfq_reader_free(reader);
  tfq_queue_free(q);
  tfq_queue_options_free(qo);
  tfq_spec_free(spec);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
  tfq_queue_free(files);
  tfq_coord_free(coord);
  return r;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The run of rr[0, n) (1 <= n <= 64) with the median wall time; *best_wall (if not NULL) the
 * shortest. */
static result median_by_wall(const result *rr, int n, double *best_wall) {
  double w[64];
  for (int i = 0; i < n; i++) w[i] = rr[i].wall;
  qsort(w, (size_t)n, sizeof w[0], cmp_d);
  if (best_wall) *best_wall = w[0];
  for (int i = 0; i < n; i++)
    if (rr[i].wall == w[n / 2]) return rr[i];
  return rr[0];
}

/* Median-by-wall of `runs` runs (after one warm-up); checks that every run has the same sums. */
static result measure(const char *path, const params *pp, int runs, double *best_wall) {
  result rr[64];
  if (runs > 64) runs = 64;
  (void)run_tfq(path, pp);
  for (int i = 0; i < runs; i++) {
    rr[i] = run_tfq(path, pp);
    if (rr[i].rows != rr[0].rows || rr[i].fsum != rr[0].fsum || rr[i].isum != rr[0].isum ||
        rr[i].ssum != rr[0].ssum) {
      fprintf(stderr, "bench_e2e: checksum differs between runs\n");
      exit(1);
    }
  }
  return median_by_wall(rr, runs, best_wall);
}

/* One figure line and its ROW.  ratio (NULL for tfq): tfq's rate over this peer's in each round of
 * the interleaved runs -- median, lowest, highest -- and the number of rounds. */
static void print_row(const char *name, const char *file, size_t bytes, const result *r,
                      const double *ratio, int rounds) {
  printf(
      "  %-18s %-7s %10.0f ex/s %8.1f MB/s  first batch %8.2f ms  cpu %6.3f s/1M ex  "
      "(%lld rows; sums %llu %llu %llu)\n",
      name, file, r->rows / r->wall, bytes / r->wall / 1e6, r->ttfb * 1e3,
      r->cpu / (double)r->rows * 1e6, r->rows, r->fsum, r->isum, r->ssum);
  printf(
      "ROW {\"bench\":\"e2e\",\"impl\":\"%s\",\"file\":\"%s\",\"rows\":%lld,\"ex_per_s\":%.0f,"
      "\"mb_per_s\":%.2f,\"ttfb_ms\":%.3f,\"cpu_s_per_1m\":%.4f",
      name, file, r->rows, r->rows / r->wall, bytes / r->wall / 1e6, r->ttfb * 1e3,
      r->cpu / (double)r->rows * 1e6);
  if (ratio)
    printf(",\"tfq_ratio\":%.3f,\"tfq_ratio_min\":%.3f,\"tfq_ratio_max\":%.3f,\"rounds\":%d",
           ratio[0], ratio[1], ratio[2], rounds);
  printf("}\n");
}

/* A peer's results over the interleaved rounds, and tfq's rate on the prefix in the same rounds. */
#define MAX_PEERS 8
typedef struct peer {
  char name[64];
  long long bytes;
  int n;
  result r[64];
  double tfq_rate[64]; /* tfq's examples/s on the prefix, run just before this peer's round */
} peer;

/* Runs bench/peers_e2e.py once on `prefix` (only: its --only list, or NULL for every peer) and
 * appends each peer's result to ps[] (found or added by name), beside `tfq_rate`.  Returns 1 if
 * a peer's checksum differs from tfq's (ref), else 0; exits if the script cannot start. */
static int peers_round(const char *python, const char *prefix, const params *pp, const char *only,
                       const result *ref, double tfq_rate, peer *ps, int *nps) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s %s/peers_e2e.py %s --min-after-dequeue %lld --read-batch %lld --batch %lld%s%s "
           "2>/dev/null",
           python, TFQ_BENCH_DIR, prefix, (long long)pp->mad, (long long)pp->read_batch,
           (long long)pp->batch, only ? " --only " : "", only ? only : "");
  FILE *p = popen(cmd, "r");
  if (!p) {
    fprintf(stderr, "bench_e2e: cannot run peers\n");
    exit(1);
  }
  char line[1024];
  int status = 0;
  while (fgets(line, sizeof line, p)) {
    char name[64];
    result r;
    long long fbytes;
    if (strncmp(line, "PEER ", 5) != 0) continue;
    if (sscanf(line, "PEER %63s %lld %lf %lf %lf %lld %llu %llu %llu", name, &r.rows, &r.wall,
               &r.ttfb, &r.cpu, &fbytes, &r.fsum, &r.isum, &r.ssum) != 9) {
      printf("  %s", line + 5);
      continue;
    }
    if (r.rows != ref->rows || r.fsum != ref->fsum || r.isum != ref->isum || r.ssum != ref->ssum) {
      printf("  CHECKSUM MISMATCH: %s differs from tfq on the prefix\n", name);
      status = 1;
    }
    int k = 0;
    while (k < *nps && strcmp(ps[k].name, name)) k++;
    if (k == *nps) {
      if (*nps == MAX_PEERS) continue;
      memset(&ps[k], 0, sizeof ps[k]);
      snprintf(ps[k].name, sizeof ps[k].name, "%s", name);
      ps[k].bytes = fbytes;
      (*nps)++;
    }
    if (ps[k].n < 64) {
      ps[k].r[ps[k].n] = r;
      ps[k].tfq_rate[ps[k].n++] = tfq_rate;
    }
  }
  if (pclose(p) != 0) fprintf(stderr, "bench_e2e: peers exited with an error\n");
  return status;
}

/* The peer's median-by-wall result, and tfq's per-round ratio over it: median, lowest, highest. */
static result peer_median(const peer *pe, double ratio[3]) {
  double q[64];
  for (int i = 0; i < pe->n; i++) q[i] = pe->tfq_rate[i] / (pe->r[i].rows / pe->r[i].wall);
  qsort(q, (size_t)pe->n, sizeof q[0], cmp_d);
  ratio[0] = pe->n % 2 ? q[pe->n / 2] : (q[pe->n / 2 - 1] + q[pe->n / 2]) / 2;
  ratio[1] = q[0];
  ratio[2] = q[pe->n - 1];
  return median_by_wall(pe->r, pe->n, NULL);
}

static void write_file(const char *path, const char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "bench_e2e: cannot write %s\n", path);
    exit(1);
  }
}

int main(int argc, char **argv) {
  const char *dir = "/tmp", *python = NULL;
  long nrows = 1000000, prows = 100000;
  int runs = 5;
  params pp = {2, 10000, 256, 1024};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "bench_e2e: bad argument %s\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--rows"))
      nrows = atol(v);
    else if (!strcmp(a, "--peer-rows"))
      prows = atol(v);
    else if (!strcmp(a, "--runs"))
      runs = atoi(v) > 0 ? atoi(v) : 1;
    else if (!strcmp(a, "--threads"))
      pp.threads = atoi(v) > 0 ? atoi(v) : 1;
    else if (!strcmp(a, "--min-after-dequeue"))
      pp.mad = atol(v);
    else if (!strcmp(a, "--batch"))
      pp.batch = atol(v);
    else if (!strcmp(a, "--read-batch"))
      pp.read_batch = atol(v);
    else if (!strcmp(a, "--dir"))
      dir = v;
    else if (!strcmp(a, "--peers"))
      python = v;
    else {
      fprintf(stderr, "bench_e2e: unknown option %s\n", a);
      return 2;
    }
  }
  if (nrows < 1) nrows = 1;
  if (prows < 1 || prows > nrows) prows = nrows;
  st = tfq_status_new();
  if (!st) return 1;

  size_t n;
  char *b = gen_d1(nrows, &n);
  size_t pn = 0;
  for (long r = 0; r < prows; pn++)
    if (b[pn] == '\n') r++;
  char full[512], prefix[512];
  snprintf(full, sizeof full, "%s/tfq_e2e_D1_%ld.csv", dir, nrows);
  snprintf(prefix, sizeof prefix, "%s/tfq_e2e_D1_%ld.csv", dir, prows);
  write_file(full, b, n);
  if (prows != nrows) write_file(prefix, b, pn);
  free(b);

  double la[3] = {0, 0, 0};
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf) {
    if (fscanf(lf, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3) la[0] = la[1] = la[2] = 0;
    fclose(lf);
  }
  printf(
      "W4 end-to-end shuffled minibatches, D1: %ld rows %.2f MB (%s); peer prefix %ld rows "
      "%.2f MB (%s)\n",
      nrows, n / 1e6, full, prows, pn / 1e6, prefix);
  printf(
      "reader threads %d, read_up_to %lld, RandomShuffleQueue capacity %lld "
      "min_after_dequeue %lld, dequeue_many(%lld); tfq median of %d runs; load average "
      "%.2f %.2f %.2f\n",
      pp.threads, (long long)pp.read_batch, (long long)(pp.mad + 3 * pp.batch), (long long)pp.mad,
      (long long)pp.batch, runs, la[0], la[1], la[2]);
  printf(
      "ENV {\"bench\":\"e2e\",\"rows\":%ld,\"peer_rows\":%ld,\"threads\":%d,\"loadavg\":[%.2f,"
      "%.2f,%.2f]}\n",
      nrows, prows, pp.threads, la[0], la[1], la[2]);

  double bw_full, bw_pre;
  result rf = measure(full, &pp, runs, &bw_full);
  print_row("tfq", "full", n, &rf, NULL, 0);
  /* --peer-rows equal to --rows: the prefix is the full file, measured once. */
  bw_pre = bw_full;
  result rp = prows == nrows ? rf : measure(prefix, &pp, runs, &bw_pre);
  if (prows != nrows) print_row("tfq", "prefix", pn, &rp, NULL, 0);
  printf("  (tfq best-of-runs: full %.0f ex/s, prefix %.0f ex/s)\n", rf.rows / bw_full,
         rp.rows / bw_pre);
  fflush(stdout);
  int status = 0;
  if (python) {
    /* Interleaved rounds: tfq on the prefix, then every peer, `runs` times; each ratio is the
     * median of its rounds' ratios.  tf1-read1 (informational, ~7 s a run) runs in the first
     * round only. */
    peer ps[MAX_PEERS];
    int nps = 0;
    for (int i = 0; i < runs; i++) {
      result t = run_tfq(prefix, &pp);
      if (t.rows != rp.rows || t.fsum != rp.fsum || t.isum != rp.isum || t.ssum != rp.ssum) {
        fprintf(stderr, "bench_e2e: checksum differs between runs\n");
        return 1;
      }
      status |= peers_round(python, prefix, &pp,
                            i ? "tfdata-textline,tfdata-csvdataset,tf1-shuffle_batch" : NULL, &rp,
                            t.rows / t.wall, ps, &nps);
    }
    double tf1[3] = {0}, read1[3] = {0}, best_data[3] = {0}, tf1_rate = 0, read1_rate = 0;
    double best_data_rate = 0, best_ttfb = 0;
    int tf1_n = 0, read1_n = 0, best_data_n = 0;
    char best_data_name[64] = "none";
    for (int k = 0; k < nps; k++) {
      double q[3];
      result m = peer_median(&ps[k], q);
      print_row(ps[k].name, "prefix", (size_t)ps[k].bytes, &m, q, ps[k].n);
      double rate = m.rows / m.wall;
      if (m.ttfb > 0 && (best_ttfb == 0 || m.ttfb < best_ttfb)) best_ttfb = m.ttfb;
      if (!strcmp(ps[k].name, "tf1-shuffle_batch")) {
        memcpy(tf1, q, sizeof q);
        tf1_rate = rate;
        tf1_n = ps[k].n;
      } else if (!strcmp(ps[k].name, "tf1-read1")) {
        memcpy(read1, q, sizeof q);
        read1_rate = rate;
        read1_n = ps[k].n;
      } else if (!strncmp(ps[k].name, "tfdata", 6) && rate > best_data_rate) {
        memcpy(best_data, q, sizeof q);
        best_data_rate = rate;
        best_data_n = ps[k].n;
        snprintf(best_data_name, sizeof best_data_name, "%.63s", ps[k].name);
      }
    }
    double tq = rp.rows / rp.wall, tqf = rf.rows / rf.wall;
    printf("\n%-34s %12s %26s %13s\n", "examples/s (prefix file)", "ex/s",
           "tfq/peer (rounds: range)", "tfq-full/peer");
    printf("%-34s %12.0f %26s %13s\n", "tfq (prefix)", tq, "-", "-");
    printf("%-34s %12.0f %26s %13s\n", "tfq (full)", tqf, "-", "-");
    const char *names[3] = {"tf1-shuffle_batch (read_up_to)", "tf1-read1 (read, informational)",
                            "best tf.data"};
    const double *qs[3] = {tf1, read1, best_data},
                 rates[3] = {tf1_rate, read1_rate, best_data_rate};
    const int ns[3] = {tf1_n, read1_n, best_data_n};
    for (int k = 0; k < 3; k++) {
      if (rates[k] <= 0) continue;
      char cell[64];
      snprintf(cell, sizeof cell, "%.1fx (%d: %.1f-%.1f)", qs[k][0], ns[k], qs[k][1], qs[k][2]);
      printf("%-34s %12.0f %26s %12.1fx\n", names[k], rates[k], cell, tqf / rates[k]);
    }
    printf("load average %.2f %.2f %.2f (2 vCPUs; figures are noisy under load)\n", la[0], la[1],
           la[2]);
    if (tf1_rate > 0)
      printf(
          "TARGET e2e tfq/TF1 shuffle_batch >= 20x: %.1fx (median of %d interleaved rounds, range "
          "%.1f-%.1f; full-size tfq %.1fx) %s\n",
          tf1[0], tf1_n, tf1[1], tf1[2], tqf / tf1_rate, tf1[0] >= 20 ? "PASS" : "MISS");
    else
      printf(
          "TARGET e2e tfq/TF1 shuffle_batch >= 20x: peer missing (anchor 3k-17k ex/s: %.1fx "
          "the 17k anchor)\n",
          tq / 17000);
    if (best_data_rate > 0)
      printf(
          "TARGET e2e tfq/best tf.data (%s) >= 5x: %.1fx (median of %d interleaved rounds, range "
          "%.1f-%.1f; full-size tfq %.1fx) %s\n",
          best_data_name, best_data[0], best_data_n, best_data[1], best_data[2],
          tqf / best_data_rate, best_data[0] >= 5 ? "PASS" : "MISS");
    else
      printf("TARGET e2e tfq/best tf.data >= 5x: peer missing (anchor 64k rows/s: %.1fx)\n",
             tq / 64000);
    /* Issue #18 item 4 raised the two ratios to 30x and 10x, in the same run, on the same file. */
    if (tf1_rate > 0 && best_data_rate > 0)
      printf(
          "TARGET #18 W4 tfq/TF1 shuffle_batch >= 30x and tfq/best tf.data >= 10x: %.1fx and "
          "%.1fx (medians of %d and %d interleaved rounds) %s\n",
          tf1[0], best_data[0], tf1_n, best_data_n,
          tf1[0] >= 30 && best_data[0] >= 10 ? "PASS" : "MISS");
    if (best_ttfb > 0)
      printf("TARGET e2e time to first batch <= 0.5x best peer: %.2f ms vs %.2f ms = %.3fx %s\n",
             rf.ttfb * 1e3, best_ttfb * 1e3, rf.ttfb / best_ttfb,
             rf.ttfb <= 0.5 * best_ttfb ? "PASS" : "MISS");
  }
  printf("TARGET e2e tfq >= ~2M examples/s (2-core box): %.0f ex/s (full) %s\n", rf.rows / rf.wall,
         rf.rows / rf.wall >= 2e6 ? "PASS" : "MISS");
  tfq_status_free(st);
  return status;
}
