/* The `limit` feeder of bench/bench_dist.py (W6, distributed-feeding.md 5): the tfq-bc topology
 * (a batch-element FIFOQueue NAME_w<i> on each /job:worker/task:i, no shapes, workers dequeue()
 * one batch per step) fed from prebuilt tfq tensors, with no CSV, no shuffle and no pipeline in
 * the timed window: the ceiling of that topology for any feeder on this machine.
 *
 * Before the window the files are read and decoded (tfq_decode_csv_lines, 6 float32, 3 int32,
 * 1 string: D1's columns) into batches of -b rows, in file order, and every worker queue is opened
 * (created if the worker has not yet) and checked with a QueueSize run.  Then it prints
 * "READY <rows> <batches>" and waits for one line on standard input.  Then one thread per queue
 * takes the next batch (an atomic counter: the queue with room takes it, as tfq-feed's ops do)
 * and pushes it with tfq_tf_queue_enqueue_batch (one QueueEnqueueV2 RunStep; numeric columns
 * lent without a copy, strings copied into TF_TStrings); at the end every queue gets a plain
 * close, and it prints "DONE rows=<n> batches=<n> seconds=<s> cpu=<s>" (cpu: this process, the
 * window only).
 *
 *   bench_dist_limit --cluster 'ps=h:p;worker=h:p,h:p' --queue NAME [-b 1024] [--capacity 8]
 *                    [--threads-per-queue 1] FILE...
 * (--threads-per-queue T: T pushing threads per queue, T enqueues in flight on each.)
 * Exit status 0, 1 on any error (message on standard error), 2 on a usage error. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/csv.h>
#include <tfq/tf.h>
#include <time.h>

#define NCOLS 10

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double self_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

static _Noreturn void fail(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_dist_limit: %s: %s\n", what, st ? tfq_status_message(st) : "");
  exit(1);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  size_t cap = 1 << 20, n = 0;
  char *b = malloc(cap);
  for (;;) {
    if (!b) fail("out of memory", NULL);
    n += fread(b + n, 1, cap - n, f);
    if (n < cap) break;
    cap *= 2;
    b = realloc(b, cap);
  }
  if (ferror(f)) {
    perror(path);
    exit(1);
  }
  fclose(f);
  *len = n;
  return b;
}

typedef struct shared {
  tfq_tuple **batches;
  long long nbatches;
  atomic_llong next;
  atomic_int failed;
} shared;

typedef struct pusher {
  shared *s;
  tfq_tf_queue *q;
  long long rows, pushed;
  pthread_t th;
} pusher;

static void *push_main(void *arg) {
  pusher *p = arg;
  tfq_status *st = tfq_status_new();
  for (;;) {
    long long b = atomic_fetch_add(&p->s->next, 1);
    if (b >= p->s->nbatches || atomic_load(&p->s->failed)) break;
    if (tfq_tf_queue_enqueue_batch(p->q, p->s->batches[b], st) != TFQ_OK) {
      fprintf(stderr, "bench_dist_limit: enqueue: %s\n", tfq_status_message(st));
      atomic_store(&p->s->failed, 1);
      break;
    }
    p->rows += tfq_tensor_dim(tfq_tuple_get(p->s->batches[b], 0), 0);
    p->pushed++;
  }
  tfq_status_free(st);
  return NULL;
}

static _Noreturn void usage(void) {
  fprintf(stderr,
          "usage: bench_dist_limit --cluster 'ps=h:p;worker=h:p,...' --queue NAME [-b B] "
          "[--capacity C] [--threads-per-queue T] FILE...\n");
  exit(2);
}

int main(int argc, char **argv) {
  const char *cluster = NULL, *queue = NULL;
  long long batch = 1024, capacity = 8, tpq = 1;
  int first = argc;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
      cluster = argv[++i];
    else if (!strcmp(argv[i], "--queue") && i + 1 < argc)
      queue = argv[++i];
    else if (!strcmp(argv[i], "-b") && i + 1 < argc)
      batch = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--capacity") && i + 1 < argc)
      capacity = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--threads-per-queue") && i + 1 < argc)
      tpq = atoll(argv[++i]);
    else if (argv[i][0] == '-')
      usage();
    else {
      first = i;
      break;
    }
  }
  if (!cluster || !queue || batch < 1 || capacity < 1 || tpq < 1 || tpq > 64 || first >= argc)
    usage();
  tfq_status *st = tfq_status_new();
  if (!st) fail("out of memory", NULL);

  /* The columns of D1: 6 float32, 3 int32, 1 string, every one required. */
  tfq_csv_options *co;
  tfq_spec *spec;
  if (tfq_csv_options_new(&co, st) || tfq_spec_new(&spec, st)) fail("options", st);
  for (int c = 0; c < NCOLS; c++) {
    tfq_dtype dt = c < 6 ? TFQ_FLOAT : c < 9 ? TFQ_INT32 : TFQ_STRING;
    if (tfq_csv_options_add_required(co, dt, st) || tfq_spec_add(spec, dt, NULL, 0, NULL, st))
      fail("options", st);
  }

  /* Every line of every file, in order, decoded into batches of `batch` rows. */
  size_t nlines = 0, cap_lines = 1 << 16;
  const char **lines = malloc(cap_lines * sizeof *lines);
  size_t *lens = malloc(cap_lines * sizeof *lens);
  for (int i = first; i < argc; i++) {
    size_t len;
    char *buf = read_file(argv[i], &len); /* kept until exit: the lines point into it */
    for (size_t off = 0; off < len;) {
      char *nl = memchr(buf + off, '\n', len - off);
      size_t end = nl ? (size_t)(nl - buf) : len;
      if (end > off) {
        if (nlines == cap_lines) {
          cap_lines *= 2;
          lines = realloc(lines, cap_lines * sizeof *lines);
          lens = realloc(lens, cap_lines * sizeof *lens);
        }
        if (!lines || !lens) fail("out of memory", NULL);
        lines[nlines] = buf + off;
        lens[nlines++] = end - off - (end > off && buf[end - 1] == '\r');
      }
      off = end + 1;
    }
  }
  shared s = {0};
  s.nbatches = (long long)((nlines + (size_t)batch - 1) / (size_t)batch);
  s.batches = calloc((size_t)s.nbatches ? (size_t)s.nbatches : 1, sizeof *s.batches);
  if (!s.batches) fail("out of memory", NULL);
  for (long long b = 0; b < s.nbatches; b++) {
    size_t lo = (size_t)b * (size_t)batch,
           n = nlines - lo < (size_t)batch ? nlines - lo : (size_t)batch;
    if (tfq_decode_csv_lines(co, lines + lo, lens + lo, n, &s.batches[b], st)) fail("decode", st);
  }

  /* One queue per worker task, as tfq-feed --to workers --elements batches opens them. */
  tfq_tf_cluster *cl;
  if (tfq_tf_cluster_from_spec_string(cluster, &cl, st)) fail("--cluster", st);
  int nw = tfq_tf_cluster_num_tasks(cl, "worker");
  if (nw < 1) fail("--cluster has no worker job", NULL);
  int np = nw * (int)tpq; /* pusher k feeds queue k % nw */
  pusher *p = calloc((size_t)np, sizeof *p);
  if (!p) fail("out of memory", NULL);
  for (int i = 0; i < nw; i++) {
    int task = tfq_tf_cluster_task_index(cl, "worker", i);
    char dev[64], name[512];
    snprintf(dev, sizeof dev, "/job:worker/task:%d", task);
    snprintf(name, sizeof name, "%s_w%d", queue, task);
    tfq_tf_queue_options *qo;
    if (tfq_tf_queue_options_new(&qo, st) ||
        tfq_tf_queue_options_set_target(qo, tfq_tf_cluster_target(cl, "worker", task), st) ||
        tfq_tf_queue_options_set_device(qo, dev, st) ||
        tfq_tf_queue_options_set_shared_name(qo, name, st))
      fail("queue options", st);
    tfq_tf_queue_options_set_capacity(qo, capacity);
    tfq_tf_queue_options_set_timeout_ms(qo, 120000);
    tfq_tf_queue_options_set_element(qo, TFQ_TF_ELEMENT_BATCH);
    int64_t size;
    if (tfq_tf_queue_open(spec, qo, &p[i].q, st) || tfq_tf_queue_size(p[i].q, &size, st))
      fail(name, st);
    tfq_tf_queue_options_free(qo);
  }
  for (int k = 0; k < np; k++) {
    p[k].s = &s;
    p[k].q = p[k % nw].q;
  }
  printf("READY %zu %lld\n", nlines, s.nbatches);
  fflush(stdout);
  char go[64];
  if (!fgets(go, sizeof go, stdin)) return 1;

  double c0 = self_cpu(), t0 = now();
  for (int i = 0; i < np; i++)
    if (pthread_create(&p[i].th, NULL, push_main, &p[i])) fail("pthread_create", NULL);
  long long rows = 0, pushed = 0;
  for (int i = 0; i < np; i++) {
    pthread_join(p[i].th, NULL);
    rows += p[i].rows;
    pushed += p[i].pushed;
  }
  int failed = atomic_load(&s.failed);
  for (int i = 0; i < nw; i++) {
    if (tfq_tf_queue_close(p[i].q, failed, st) != TFQ_OK && !failed) fail("close", st);
  }
  double dt = now() - t0, cpu = self_cpu() - c0;
  printf("DONE rows=%lld batches=%lld seconds=%.6f cpu=%.6f\n", rows, pushed, dt, cpu);
  fflush(stdout);
  for (int i = 0; i < nw; i++) tfq_tf_queue_free(p[i].q);
  for (long long b = 0; b < s.nbatches; b++) tfq_tuple_free(s.batches[b]);
  free(s.batches);
  free(p);
  tfq_tf_cluster_free(cl);
  tfq_spec_free(spec);
  tfq_csv_options_free(co);
  tfq_status_free(st);
  return failed;
}
