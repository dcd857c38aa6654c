/* The driver of the kill-and-resume acceptance test (kill_resume.py; public headers only).
 *
 *   resume_driver --columns SPEC [--header] [--deterministic] [--threads N] [--seed S]
 *                 [--batch B] [--capacity C] [--mad M] [--step K] [--every M] [--state PATH]
 *                 [--sleep-us U] [--limit N] [--probe] --out PATH FILE...
 *
 * Runs a tfq_pipeline over the CSV files and appends one line per batch to --out:
 *
 *   <batches_out after the batch> <records> <record> <record> ...
 *
 * a record being its fields joined by ',': float32 and float64 as the hex digits of their bits
 * (%08x, %016llx), int32 and int64 in decimal, strings as the hex digits of their bytes.  After
 * every M-th batch (--every) the line is written and fsync'ed, then the state is saved with
 * tfq_pipeline_save_file() to --state: the log is never behind the checkpoint.  It may be ahead
 * of it (a kill between a line and the next checkpoint): the harness truncates the log to the
 * checkpoint's batch count (--probe prints it) before resuming, and the driver refuses to resume
 * onto a log whose line count is not the restored batches_out.
 *
 * On start, if --state exists, it is restored before the first batch; standard error says
 * "resume_driver: restored batches_out=N records_out=R seed=S" or "resume_driver: fresh start
 * seed=S".  --probe restores (if the state exists) and prints "batches_out=N" on standard output,
 * then exits.  --sleep-us pauses after each batch (to widen the window of a kill); --limit stops
 * (exit 0) once batches_out reaches N, after its checkpoint (a state from the middle of a run).
 *
 * Exit status: 0 at the end of the input (OUT_OF_RANGE), 1 on a pipeline error (the status'
 * message on standard error), 2 on a usage or I/O error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

static void fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("resume_driver: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(code);
}

/* A pipeline call that failed: its code and message, exit 1. */
static void check(tfq_code c, tfq_status *st, const char *what) {
  if (c != TFQ_OK) fail(1, "%s: %s: %s", what, tfq_code_name(c), tfq_status_message(st));
}

typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) fail(2, "out of memory");
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void putf(buf *b, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  put(b, tmp, (size_t)n);
}

static void write_all(int fd, const char *s, size_t n, const char *path) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail(2, "%s: %s", path, strerror(errno));
    s += w;
    n -= (size_t)w;
  }
}

/* Lines in the file (0 if it does not exist). */
static int64_t count_lines(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int64_t n = 0;
  int ch, last = '\n';
  while ((ch = getc(f)) != EOF) {
    if (ch == '\n') n++;
    last = ch;
  }
  fclose(f);
  if (last != '\n') fail(2, "%s: the last line is incomplete", path);
  return n;
}

/* The batch as one log line. */
static void format_batch(buf *b, const tfq_tuple *t, int64_t index) {
  size_t nc = tfq_tuple_size(t);
  int64_t n = tfq_tensor_dim(tfq_tuple_get(t, 0), 0);
  b->n = 0;
  putf(b, "%" PRId64 " %" PRId64, index, n);
  for (int64_t r = 0; r < n; r++) {
    put(b, " ", 1);
    for (size_t c = 0; c < nc; c++) {
      const tfq_tensor *x = tfq_tuple_get(t, c);
      if (c) put(b, ",", 1);
      if (tfq_tensor_rank(x) != 1 || tfq_tensor_dim(x, 0) != n)
        fail(2, "column %zu: expected shape [%" PRId64 "]", c, n);
      switch (tfq_tensor_dtype(x)) {
        case TFQ_FLOAT: {
          uint32_t bits;
          memcpy(&bits, (const char *)tfq_tensor_cdata(x) + 4 * r, 4);
          putf(b, "%08" PRIx32, bits);
          break;
        }
        case TFQ_DOUBLE: {
          uint64_t bits;
          memcpy(&bits, (const char *)tfq_tensor_cdata(x) + 8 * r, 8);
          putf(b, "%016" PRIx64, bits);
          break;
        }
        case TFQ_INT32: putf(b, "%" PRId32, ((const int32_t *)tfq_tensor_cdata(x))[r]); break;
        case TFQ_INT64: putf(b, "%" PRId64, ((const int64_t *)tfq_tensor_cdata(x))[r]); break;
        case TFQ_STRING: {
          size_t len;
          const unsigned char *s = (const unsigned char *)tfq_tensor_string(x, r, &len);
          for (size_t i = 0; i < len; i++) putf(b, "%02x", s[i]);
          break;
        }
        default: fail(2, "column %zu: unexpected dtype %s", c, tfq_dtype_name(tfq_tensor_dtype(x)));
      }
    }
  }
  put(b, "\n", 1);
}

static int64_t arg_int(const char *name, const char *v) {
  if (!v) fail(2, "%s needs a value", name);
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end || end == v) fail(2, "%s: not an integer: %s", name, v);
  return (int64_t)x;
}

int main(int argc, char **argv) {
  const char *columns = NULL, *state = NULL, *out = NULL;
  int header = 0, deterministic = 0, probe = 0, threads = 2, seed_set = 0;
  uint64_t seed = 0;
  int64_t batch = 32, capacity = -1, mad = -1, step = -1, every = 0, sleep_us = 0, limit = -1;
  const char **files = calloc((size_t)argc, sizeof *files);
  size_t nfiles = 0;
  if (!files) fail(2, "out of memory");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strncmp(a, "--", 2) != 0) {
      files[nfiles++] = a;
      continue;
    }
    if (!strcmp(a, "--header")) {
      header = 1;
    } else if (!strcmp(a, "--deterministic")) {
      deterministic = 1;
    } else if (!strcmp(a, "--probe")) {
      probe = 1;
    } else {
      i++;
      if (!strcmp(a, "--columns"))
        columns = v;
      else if (!strcmp(a, "--state"))
        state = v;
      else if (!strcmp(a, "--out"))
        out = v;
      else if (!strcmp(a, "--threads"))
        threads = (int)arg_int(a, v);
      else if (!strcmp(a, "--seed"))
        seed = (uint64_t)arg_int(a, v), seed_set = 1;
      else if (!strcmp(a, "--batch"))
        batch = arg_int(a, v);
      else if (!strcmp(a, "--capacity"))
        capacity = arg_int(a, v);
      else if (!strcmp(a, "--mad"))
        mad = arg_int(a, v);
      else if (!strcmp(a, "--step"))
        step = arg_int(a, v);
      else if (!strcmp(a, "--every"))
        every = arg_int(a, v);
      else if (!strcmp(a, "--sleep-us"))
        sleep_us = arg_int(a, v);
      else if (!strcmp(a, "--limit"))
        limit = arg_int(a, v);
      else
        fail(2, "unknown option %s", a);
    }
  }
  if (!columns || nfiles == 0 || (!out && !probe) || (every > 0 && !state))
    fail(2,
         "usage: resume_driver --columns SPEC --out PATH [--state PATH --every M] [options] "
         "FILE...");

  tfq_status *st = tfq_status_new();
  if (!st) fail(2, "out of memory");
  tfq_pipeline_options *o;
  check(tfq_pipeline_options_new(&o, st), st, "options");
  for (size_t i = 0; i < nfiles; i++)
    check(tfq_pipeline_options_add_file(o, files[i], st), st, "add_file");
  check(tfq_pipeline_options_set_columns(o, columns, st), st, "columns");
  tfq_pipeline_options_set_header(o, header);
  tfq_pipeline_options_set_deterministic(o, deterministic);
  tfq_pipeline_options_set_num_threads(o, threads);
  tfq_pipeline_options_set_batch_size(o, batch);
  if (seed_set) tfq_pipeline_options_set_seed(o, seed);
  if (capacity >= 0) tfq_pipeline_options_set_capacity(o, capacity);
  if (mad >= 0) tfq_pipeline_options_set_min_after_dequeue(o, mad);
  if (step > 0) tfq_pipeline_options_set_step(o, step);
  tfq_pipeline *p;
  check(tfq_pipeline_new(o, &p, st), st, "pipeline_new");

  struct stat sb;
  int restored = state && stat(state, &sb) == 0;
  if (restored) check(tfq_pipeline_restore_file(p, state, st), st, "restore");
  tfq_pipeline_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  check(tfq_pipeline_get_stats(p, &stats, st), st, "stats");
  if (probe) {
    printf("batches_out=%" PRId64 " records_out=%" PRId64 "\n", stats.batches_out,
           stats.records_out);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
    tfq_status_free(st);
    free(files);
    return 0;
  }
  if (restored)
    fprintf(stderr,
            "resume_driver: restored batches_out=%" PRId64 " records_out=%" PRId64 " seed=%" PRIu64
            "\n",
            stats.batches_out, stats.records_out, stats.seed);
  else
    fprintf(stderr, "resume_driver: fresh start seed=%" PRIu64 "\n", stats.seed);
  int64_t have = count_lines(out);
  if (have != stats.batches_out)
    fail(2,
         "%s has %" PRId64 " lines but the pipeline is at batch %" PRId64
         " (truncate the log to the checkpoint first)",
         out, have, stats.batches_out);
  int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail(2, "%s: %s", out, strerror(errno));

  buf line = {0};
  tfq_tuple *b;
  tfq_code rc;
  while ((rc = tfq_pipeline_next(p, &b, st)) == TFQ_OK) {
    check(tfq_pipeline_get_stats(p, &stats, st), st, "stats");
    format_batch(&line, b, stats.batches_out);
    tfq_tuple_free(b);
    write_all(fd, line.p, line.n, out);
    if (every > 0 && stats.batches_out % every == 0) {
      if (fsync(fd) != 0) fail(2, "%s: fsync: %s", out, strerror(errno));
      check(tfq_pipeline_save_file(p, state, st), st, "save_file");
    }
    if (limit >= 0 && stats.batches_out >= limit) {
      rc = TFQ_OUT_OF_RANGE;
      break;
    }
    if (sleep_us > 0) {
      struct timespec ts = {(time_t)(sleep_us / 1000000), (long)(sleep_us % 1000000) * 1000};
      nanosleep(&ts, NULL);
    }
  }
  if (rc != TFQ_OUT_OF_RANGE) check(rc, st, "next");
  if (fsync(fd) != 0) fail(2, "%s: fsync: %s", out, strerror(errno));
  close(fd);
  fprintf(stderr, "resume_driver: %s at batches_out=%" PRId64 "\n",
          limit >= 0 && stats.batches_out >= limit ? "limit" : "end of input", stats.batches_out);
  free(line.p);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  tfq_status_free(st);
  free(files);
  return 0;
}
