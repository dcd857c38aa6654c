/* tf.train.Example parsing and the TFRecord → parse_example → shuffle_batch pipeline: the tfq
 * side of bench/bench_example.py, which drives it, runs the TensorFlow peers and documents the
 * workloads.
 *
 * The Example is spec §10's: 10 float32 scalars (f0..f9), 5 int64 scalars (i0..i4, 5-byte
 * varints) and 2 bytes features of 8 letters (s0, s1), about 293 bytes serialized; records are
 * drawn from a fixed PCG stream, so every run and every peer reads the same bytes.
 *
 *   bench_example gen FILE N          writes N Examples to the TFRecord file FILE
 *   bench_example parse-batch FILE K SECONDS
 *                                     parse_example (batch path) over the first K records of
 *                                     FILE, held in memory, in batches of 256, 1 thread, for at
 *                                     least SECONDS (whole passes over the K records)
 *   bench_example parse-single FILE K SECONDS
 *                                     parse_single_example of each record, the same way
 *   bench_example pipeline FILE [THREADS [READ_BATCH [BATCH [MIN_AFTER_DEQUEUE]]]]
 *                                     string_input_producer([FILE], num_epochs=1) →
 *                                     TFRecordReader.read_up_to(READ_BATCH, default 1024) →
 *                                     parse_example (the read-parse op of ops.h as the batcher's
 *                                     source) → shuffle_batch(BATCH = 256, capacity M + 3B,
 *                                     min_after_dequeue M = 10000, THREADS = 2 threads,
 *                                     enqueue_many, allow_smaller_final_batch); the consumer sums
 *                                     every value of every batch
 *
 * Each prints one `RESULT {json}` line: examples, wall_s, cpu_s (process CPU time), bytes of the
 * records parsed, and the order-independent checksum fsum (float32 bit patterns), isum (int64
 * values, wrapping), ssum (string bytes) of the values parsed once (parse modes: one untimed
 * pass) or delivered (pipeline), which every peer must reproduce. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>

#include "bench_util.h"

#define NFLT 10
#define NINT 5
#define NSTR 2
#define NFEAT (NFLT + NINT + NSTR)
#define PARSE_BATCH 256

static tfq_status *st;

static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "bench_example: %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  exit(1);
}

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

typedef struct sums {
  unsigned long long f, i, s;
} sums;

/* ---- the Example (protobuf wire format) ---- */

typedef struct wbuf {
  unsigned char b[400];
  size_t n;
} wbuf;

static void put(wbuf *w, const void *p, size_t n) {
  if (w->n + n > sizeof w->b) abort();
  memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void varint(wbuf *w, uint64_t v) {
  unsigned char c[10];
  size_t n = 0;
  do {
    c[n++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(w, c, n);
}

static void ld(wbuf *w, int field, const void *p, size_t n) {
  varint(w, (uint64_t)field << 3 | 2);
  varint(w, n);
  put(w, p, n);
}

/* Features map entry: key → Feature{kind: list} (1 bytes_list, 2 float_list, 3 int64_list). */
static void entry(wbuf *fs, const char *key, int kind, const wbuf *list) {
  wbuf f = {.n = 0}, e = {.n = 0};
  ld(&f, kind, list->b, list->n);
  ld(&e, 1, key, strlen(key));
  ld(&e, 2, f.b, f.n);
  ld(fs, 1, e.b, e.n);
}

/* The next Example of the stream (bench_rs), adding its values to *s. */
static void make_example(wbuf *out, sums *s) {
  wbuf fs = {.n = 0};
  char key[8];
  for (int k = 0; k < NFLT; k++) {
    float v = (float)(bench_rnd() % 1000000u) / 1000.0f;
    uint32_t bits;
    memcpy(&bits, &v, 4);
    s->f += bits;
    wbuf l = {.n = 0};
    ld(&l, 1, &v, 4);
    snprintf(key, sizeof key, "f%d", k);
    entry(&fs, key, 2, &l);
  }
  for (int k = 0; k < NINT; k++) {
    uint64_t v = bench_rnd() | (uint64_t)(8 + bench_rnd() % 8) << 32; /* a 5-byte varint */
    s->i += v;
    wbuf l = {.n = 0}, p = {.n = 0};
    varint(&p, v);
    ld(&l, 1, p.b, p.n);
    snprintf(key, sizeof key, "i%d", k);
    entry(&fs, key, 3, &l);
  }
  for (int k = 0; k < NSTR; k++) {
    char v[8];
    for (int c = 0; c < 8; c++) {
      v[c] = (char)('a' + bench_rnd() % 26);
      s->s += (unsigned char)v[c];
    }
    wbuf l = {.n = 0};
    ld(&l, 1, v, 8);
    snprintf(key, sizeof key, "s%d", k);
    entry(&fs, key, 1, &l);
  }
  out->n = 0;
  ld(out, 1, fs.b, fs.n);
}

static int gen(const char *path, long n) {
  bench_rs = 0xE7E7E7E7ULL;
  tfq_tfrecord_writer *w;
  check(tfq_tfrecord_writer_new(path, TFQ_COMPRESSION_NONE, &w, st), "writer");
  sums s = {0, 0, 0};
  size_t bytes = 0;
  for (long r = 0; r < n; r++) {
    wbuf ex;
    make_example(&ex, &s);
    bytes += ex.n;
    check(tfq_tfrecord_writer_write(w, ex.b, ex.n, st), "write");
  }
  check(tfq_tfrecord_writer_close(w, st), "close");
  tfq_tfrecord_writer_free(w);
  printf(
      "RESULT {\"mode\":\"gen\",\"examples\":%ld,\"bytes\":%zu,\"mean_bytes\":%.1f,\"fsum\":%llu,"
      "\"isum\":%llu,\"ssum\":%llu}\n",
      n, bytes, (double)bytes / (double)n, s.f, s.i, s.s);
  return 0;
}

/* ---- parsing ---- */

static tfq_example_config *config(void) {
  tfq_example_config *cfg;
  check(tfq_example_config_new(&cfg, st), "config");
  char key[8];
  for (int k = 0; k < NFEAT; k++) {
    tfq_dtype dt = k < NFLT ? TFQ_FLOAT : k < NFLT + NINT ? TFQ_INT64 : TFQ_STRING;
    if (k < NFLT)
      snprintf(key, sizeof key, "f%d", k);
    else if (k < NFLT + NINT)
      snprintf(key, sizeof key, "i%d", k - NFLT);
    else
      snprintf(key, sizeof key, "s%d", k - NFLT - NINT);
    check(tfq_example_config_add_fixed_len(cfg, key, dt, NULL, 0, NULL, st), "feature");
  }
  return cfg;
}

/* Adds the values of rows [0, n) of the outputs (feature order f*, i*, s*: sorted keys). */
static void sum_outputs(tfq_tensor *const *t, int64_t n, sums *s) {
  for (int k = 0; k < NFEAT; k++) {
    if (k < NFLT) {
      const uint32_t *v = tfq_tensor_cdata(t[k]);
      for (int64_t r = 0; r < n; r++) s->f += v[r];
    } else if (k < NFLT + NINT) {
      const uint64_t *v = tfq_tensor_cdata(t[k]);
      for (int64_t r = 0; r < n; r++) s->i += v[r];
    } else {
      for (int64_t r = 0; r < n; r++) {
        size_t len;
        const unsigned char *p = (const unsigned char *)tfq_tensor_string(t[k], r, &len);
        for (size_t c = 0; c < len; c++) s->s += p[c];
      }
    }
  }
}

static void sum_result(const tfq_example_result *res, int64_t n, sums *s) {
  tfq_tensor *t[NFEAT];
  for (int k = 0; k < NFEAT; k++) t[k] = tfq_example_result_dense(res, (size_t)k);
  sum_outputs(t, n, s);
}

static void result_line(const char *mode, int64_t n, double wall, double cpu, size_t bytes,
                        const sums *s) {
  printf(
      "RESULT {\"impl\":\"tfq\",\"mode\":\"%s\",\"examples\":%lld,\"wall_s\":%.6f,\"cpu_s\":%.6f,"
      "\"bytes\":%zu,\"fsum\":%llu,\"isum\":%llu,\"ssum\":%llu}\n",
      mode, (long long)n, wall, cpu, bytes, s->f, s->i, s->s);
}

static int parse_mode(const char *path, int64_t k, double seconds, int single) {
  /* the first k records, in memory */
  int64_t one = 1;
  tfq_tensor *names;
  check(tfq_tensor_new(TFQ_STRING, &one, 1, &names, st), "names");
  check(tfq_tensor_set_string(names, 0, path, strlen(path), st), "names");
  tfq_queue *work;
  tfq_producer_thread *pt;
  check(tfq_string_input_producer(names, NULL, &work, &pt, st), "producer");
  tfq_reader *reader;
  check(tfq_reader_new(TFQ_READER_TFRECORD, NULL, &reader, st), "reader");
  tfq_tensor *keys, *values;
  check(tfq_reader_read_up_to(reader, work, k, &keys, &values, NULL, st), "read_up_to");
  tfq_producer_thread_stop(pt);
  if (tfq_producer_thread_join(pt, NULL) == TFQ_INTERNAL) return 1; /* CANCELLED: the stop */
  k = tfq_tensor_num_elements(values);
  k -= k % PARSE_BATCH;
  if (k == 0) {
    fprintf(stderr, "bench_example: fewer than %d records in %s\n", PARSE_BATCH, path);
    return 1;
  }
  const char **ptrs = malloc((size_t)k * sizeof *ptrs);
  size_t *lens = malloc((size_t)k * sizeof *lens), bytes = 0;
  if (!ptrs || !lens) return 1;
  for (int64_t r = 0; r < k; r++) {
    ptrs[r] = tfq_tensor_string(values, r, &lens[r]);
    bytes += lens[r];
  }
  tfq_example_config *cfg = config();
  tfq_example_result *res;

  /* one untimed pass for the checksum (and the warm-up) */
  sums s = {0, 0, 0};
  for (int64_t r = 0; r < k; r += single ? 1 : PARSE_BATCH) {
    if (single) {
      check(tfq_parse_single_example(cfg, ptrs[r], lens[r], &res, st), "parse_single_example");
      sum_result(res, 1, &s);
    } else {
      check(tfq_parse_example_strings(cfg, ptrs + r, lens + r, PARSE_BATCH, NULL, NULL, &res, st),
            "parse_example");
      sum_result(res, PARSE_BATCH, &s);
    }
    tfq_example_result_free(res);
  }

  int64_t done = 0;
  double t0 = now(), c0 = cpu_now(), wall;
  do {
    if (single) {
      for (int64_t r = 0; r < k; r++) {
        check(tfq_parse_single_example(cfg, ptrs[r], lens[r], &res, st), "parse_single_example");
        tfq_example_result_free(res);
      }
    } else {
      for (int64_t r = 0; r < k; r += PARSE_BATCH) {
        check(tfq_parse_example_strings(cfg, ptrs + r, lens + r, PARSE_BATCH, NULL, NULL, &res, st),
              "parse_example");
        tfq_example_result_free(res);
      }
    }
    done += k;
    wall = now() - t0;
  } while (wall < seconds);
  double cpu = cpu_now() - c0;
  result_line(single ? "parse-single" : "parse-batch", done, wall, cpu, bytes * (size_t)(done / k),
              &s);
  printf("RESULT_CHECK {\"examples\":%lld,\"bytes\":%zu}\n", (long long)k, bytes);
  tfq_example_config_free(cfg);
  free(ptrs);
  free(lens);
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  tfq_reader_free(reader);
  tfq_queue_free(work);
  tfq_tensor_free(names);
  return 0;
}

/* ---- the pipeline ---- */

static int pipeline(const char *path, int threads, int64_t read_batch, int64_t batch, int64_t mad) {
  tfq_coord *coord;
  check(tfq_coord_new(&coord, st), "coordinator");
  int64_t one = 1;
  tfq_tensor *names;
  check(tfq_tensor_new(TFQ_STRING, &one, 1, &names, st), "names");
  check(tfq_tensor_set_string(names, 0, path, strlen(path), st), "names");
  tfq_producer_options *po;
  check(tfq_producer_options_new(&po, st), "producer options");
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_producer_options_set_shuffle(po, 0);
  tfq_example_config *cfg = config();
  tfq_reader *reader;
  check(tfq_reader_new(TFQ_READER_TFRECORD, NULL, &reader, st), "reader");
  tfq_batch_options *bo;
  check(tfq_batch_options_new(&bo, st), "batch options");
  tfq_batch_options_set_capacity(bo, mad + 3 * batch);
  tfq_batch_options_set_min_after_dequeue(bo, mad);
  tfq_batch_options_set_num_threads(bo, threads);
  tfq_batch_options_set_seeds(bo, 87654321, 42);
  tfq_batch_options_set_enqueue_many(bo, 1);
  tfq_batch_options_set_allow_smaller_final_batch(bo, 1);

  double t0 = now(), c0 = cpu_now();
  tfq_queue *files;
  tfq_producer_runner *producer;
  check(tfq_string_input_producer_start(names, po, coord, &files, &producer, st),
        "string_input_producer");
  tfq_read_parse_op *op;
  check(tfq_read_parse_op_new(reader, files, cfg, NULL, read_batch, NULL, &op, st), "op");
  tfq_spec *spec;
  check(tfq_read_parse_op_spec(op, &spec, st), "spec");
  tfq_source_fn src = tfq_read_parse_source;
  void *ctx = op;
  tfq_batcher *b;
  check(tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, batch, &src, &ctx, 1, bo, coord, &b, st),
        "shuffle_batch");
  sums s = {0, 0, 0};
  int64_t n = 0;
  tfq_tuple *t; /* one batch tuple refilled in place, the steady consumer's call */
  check(tfq_tuple_new(tfq_spec_size(tfq_queue_spec(tfq_batcher_queue(b))), &t, st), "tuple");
  for (;;) {
    tfq_code c = tfq_batcher_next_into(b, t, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    check(c, "batch");
    tfq_tensor *comp[NFEAT];
    for (int k = 0; k < NFEAT; k++) comp[k] = tfq_tuple_get(t, (size_t)k);
    int64_t rows = tfq_tensor_dim(comp[0], 0);
    sum_outputs(comp, rows, &s);
    n += rows;
  }
  tfq_tuple_free(t);
  double wall = now() - t0, cpu = cpu_now() - c0;
  check(tfq_coord_request_stop(coord, TFQ_OK, NULL), "request_stop");
  check(tfq_coord_join(coord, 10 * 1000000, 0, st), "join");
  FILE *f = fopen(path, "rb");
  long bytes = 0;
  if (f && !fseek(f, 0, SEEK_END)) bytes = ftell(f);
  if (f) fclose(f);
  result_line("pipeline", n, wall, cpu, (size_t)bytes, &s);
  tfq_batcher_free(b);
  tfq_spec_free(spec);
  tfq_read_parse_op_free(op);
  tfq_producer_runner_free(producer);
  tfq_queue_free(files);
  tfq_batch_options_free(bo);
  tfq_reader_free(reader);
  tfq_example_config_free(cfg);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
  tfq_coord_free(coord);
  return 0;
}

int main(int argc, char **argv) {
  st = tfq_status_new();
  if (!st) return 1;
  int rc = 2;
  const char *mode = argc > 2 ? argv[1] : "";
  if (!strcmp(mode, "gen") && argc == 4) {
    rc = gen(argv[2], atol(argv[3]));
  } else if ((!strcmp(mode, "parse-batch") || !strcmp(mode, "parse-single")) && argc == 5) {
    rc = parse_mode(argv[2], atol(argv[3]), atof(argv[4]), !strcmp(mode, "parse-single"));
  } else if (!strcmp(mode, "pipeline") && argc >= 3 && argc <= 7) {
    rc = pipeline(argv[2], argc > 3 ? atoi(argv[3]) : 2, argc > 4 ? atol(argv[4]) : 1024,
                  argc > 5 ? atol(argv[5]) : 256, argc > 6 ? atol(argv[6]) : 10000);
  } else {
    fprintf(stderr,
            "usage: bench_example gen FILE N | parse-batch FILE K SECONDS | parse-single FILE K "
            "SECONDS | pipeline FILE [THREADS [READ_BATCH [BATCH [MIN_AFTER_DEQUEUE]]]]\n");
  }
  tfq_status_free(st);
  return rc;
}
