/* tfq_pipeline's throughput on CSV files, and its checkpoint's size and save time.
 *
 *   bench_pipeline -d SPEC [-b BATCH] [-j THREADS] [--no-shuffle] [--deterministic]
 *                  [--capacity C] [--mad M] [--seed S] [--step N] FILE...
 *       one pass over FILEs in batches (every record's columns built as tensors, as a consumer
 *       gets them); prints one line: "records N seconds S records_per_s R cpu_s C sum X"
 *       (X: a checksum of the first numeric column, so nothing is optimised away).
 *   bench_pipeline --checkpoint -d SPEC [-b B] [--capacity C] [--mad M] FILE...
 *       fills a shuffle buffer of C records (default 10,000 + BATCH), draws one batch (10,000
 *       records left in it), then saves the state 21 times and
 *       prints "state_bytes N buffer_records K save_ms_median T (min A, max B)".
 * Public API only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static tfq_status *st;
static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "bench_pipeline: %s: %s\n", what, tfq_status_message(st));
  exit(1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  st = tfq_status_new();
  tfq_pipeline_options *o;
  check(tfq_pipeline_options_new(&o, st), "options");
  int checkpoint = 0, nfiles = 0;
  int64_t capacity = -1, mad = -1, batch = 128;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-d") && i + 1 < argc) {
      check(tfq_pipeline_options_set_columns(o, argv[++i], st), "-d");
    } else if (!strcmp(a, "-b") && i + 1 < argc) {
      batch = atoll(argv[++i]);
    } else if (!strcmp(a, "-j") && i + 1 < argc) {
      tfq_pipeline_options_set_num_threads(o, atoi(argv[++i]));
    } else if (!strcmp(a, "--no-shuffle")) {
      tfq_pipeline_options_set_shuffle(o, 0);
    } else if (!strcmp(a, "--deterministic")) {
      tfq_pipeline_options_set_deterministic(o, 1);
    } else if (!strcmp(a, "--capacity") && i + 1 < argc) {
      capacity = atoll(argv[++i]);
    } else if (!strcmp(a, "--mad") && i + 1 < argc) {
      mad = atoll(argv[++i]);
    } else if (!strcmp(a, "--step") && i + 1 < argc) {
      tfq_pipeline_options_set_step(o, atoll(argv[++i]));
    } else if (!strcmp(a, "--seed") && i + 1 < argc) {
      tfq_pipeline_options_set_seed(o, strtoull(argv[++i], NULL, 10));
    } else if (!strcmp(a, "--checkpoint")) {
      checkpoint = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "bench_pipeline: unknown option %s\n", a);
      return 2;
    } else {
      check(tfq_pipeline_options_add_file(o, a, st), "file");
      nfiles++;
    }
  }
  if (!nfiles) {
    fprintf(stderr, "usage: see bench/bench_pipeline.c\n");
    return 2;
  }
  /* a buffer of 10,000 records at the save: one batch more, drawn by the first next() */
  if (checkpoint && capacity < 0) capacity = 10000 + batch;
  tfq_pipeline_options_set_batch_size(o, batch);
  if (capacity >= 0) tfq_pipeline_options_set_capacity(o, capacity);
  if (mad >= 0) tfq_pipeline_options_set_min_after_dequeue(o, mad);
  if (checkpoint) tfq_pipeline_options_set_deterministic(o, 1); /* the buffer is full at a draw */
  tfq_pipeline *p;
  check(tfq_pipeline_new(o, &p, st), "pipeline");
  tfq_tuple *b;
  if (checkpoint) {
    check(tfq_pipeline_next(p, &b, st), "first batch");
    tfq_tuple_free(b);
    double ms[21];
    size_t len = 0;
    for (int k = 0; k < 21; k++) {
      char *s;
      double t0 = now_s();
      check(tfq_pipeline_save(p, &s, &len, st), "save");
      ms[k] = (now_s() - t0) * 1e3;
      tfq_free(s);
    }
    qsort(ms, 21, sizeof ms[0], cmp_double);
    tfq_pipeline_stats s = {.size = sizeof s};
    check(tfq_pipeline_get_stats(p, &s, st), "stats");
    printf("state_bytes %zu buffer_records %lld save_ms_median %.3f (min %.3f, max %.3f)\n", len,
           (long long)s.buffer_records, ms[10], ms[0], ms[20]);
  } else {
    double t0 = now_s(), c0 = cpu_s(), sum = 0;
    int64_t n = 0;
    tfq_code c;
    /* a consumer's steady loop: one tuple refilled in place (tfq_pipeline_next_into) */
    check(tfq_tuple_new(tfq_pipeline_num_slots(p), &b, st), "tuple");
    while ((c = tfq_pipeline_next_into(p, b, st)) == TFQ_OK) {
      tfq_tensor *t = tfq_tuple_get(b, 0);
      int64_t m = tfq_tensor_dim(t, 0);
      n += m;
      if (tfq_tensor_dtype(t) == TFQ_FLOAT) sum += ((const float *)tfq_tensor_cdata(t))[m - 1];
    }
    tfq_tuple_free(b);
    if (c != TFQ_OUT_OF_RANGE) check(c, "next");
    double dt = now_s() - t0;
    printf("records %lld seconds %.4f records_per_s %.0f cpu_s %.4f sum %g\n", (long long)n, dt,
           (double)n / dt, cpu_s() - c0, sum);
  }
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  tfq_status_free(st);
  return 0;
}
