/* linear_cost: hostile shapes of input must cost time linear in their size (issue "wider proof",
 * docs/reliability.md).  A plain program printing TAP (no Criterion, so it also runs in the
 * ThreadSanitizer tree).
 *
 * Quadratic behaviour is caught by counting operations and by ratios between runs of the same
 * program, never by a wall clock alone:
 *   1. one line of 8 MiB and one of 64 MiB (minus the newline) through a TextLineReader: the
 *      64 MiB line takes less than 20x the 8 MiB one (8x is linear, 64x quadratic; the short run
 *      is ~10 ms of CPU, mostly fresh pages, so 12x failed once in a CI run under coverage
 *      with tests in parallel: 14.85x) and less than 10x the time of
 *      64 MiB of ordinary 100-byte lines; the reader's buffer grows by doubling (fewer than 40
 *      reallocations for the 64 MiB line, counted through tfq_set_allocator);
 *   2. 96 MiB without a newline fails with RESOURCE_EXHAUSTED "longer than max_line_bytes" in
 *      less than 10x the ordinary file's time, and with as few reallocations;
 *   3. the same three shapes read gzip-compressed need no more than 2x as many reallocations.
 * CPU seconds of the process (clock_gettime CPUTIME) are the measure: another job on the machine
 * changes them less than the wall clock.  The best of three runs is kept for each shape.
 *
 * Usage: linear_cost [DIR] (scratch files go to DIR, default $TMPDIR or /tmp; removed at exit). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

static int g_test;
static int g_failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", cond ? "ok" : "not ok", ++g_test);
  vprintf(fmt, ap);
  putchar('\n');
  fflush(stdout);
  va_end(ap);
  if (!cond) g_failed = 1;
}

/* ---- counting allocator ---- */
static atomic_long g_reallocs;
static void *count_malloc(size_t n) { return malloc(n); }
static void *count_realloc(void *p, size_t n) {
  atomic_fetch_add(&g_reallocs, 1);
  return realloc(p, n);
}
static void count_free(void *p) { free(p); }

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, tfq_status *st) {
  printf("Bail out! %s: %s\n", what, st ? tfq_status_message(st) : strerror(errno));
  exit(1);
}

/* Writes `total` bytes: lines of `line` bytes each ('x'... then '\n'); line == 0: no newline. */
static void write_shape(const char *path, size_t total, size_t line) {
  FILE *f = fopen(path, "wb");
  if (!f) die(path, NULL);
  static char block[1 << 16];
  size_t col = 0;
  for (size_t done = 0; done < total;) {
    size_t n = total - done < sizeof block ? total - done : sizeof block;
    for (size_t i = 0; i < n; i++, col++) {
      int nl = line && col + 1 == line;
      block[i] = nl ? '\n' : 'x';
      if (nl) col = (size_t)-1;
    }
    if (fwrite(block, 1, n, f) != n) die(path, NULL);
    done += n;
  }
  if (fclose(f)) die(path, NULL);
}

static void gzip_file(const char *in, const char *out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "gzip -1 -c '%s' > '%s'", in, out);
  if (system(cmd) != 0) die("gzip", NULL);
}

typedef struct {
  double cpu;
  long reallocs;
  int64_t records;
  size_t longest;
  tfq_code code;
  char msg[256];
} run_result;

/* Reads every record of path with a TextLineReader (read_up_to 64). */
static run_result read_file(const char *path, tfq_compression comp) {
  run_result res = {0};
  tfq_status *st = tfq_status_new();
  tfq_reader_options *o;
  tfq_spec *s;
  tfq_queue *work;
  tfq_reader *r;
  tfq_tensor *t;
  tfq_tuple *tu;
  if (!st || tfq_reader_options_new(&o, st) || tfq_spec_new(&s, st) ||
      tfq_spec_add(s, TFQ_STRING, NULL, 0, NULL, st) || tfq_fifo_queue_new(s, 4, NULL, &work, st))
    die("setup", st);
  tfq_reader_options_set_compression(o, comp);
  if (tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st)) die("reader", st);
  if (tfq_tensor_new(TFQ_STRING, NULL, 0, &t, st) ||
      tfq_tensor_set_string(t, 0, path, strlen(path), st) || tfq_tuple_new(1, &tu, st))
    die("work unit", st);
  tfq_tuple_set_take(tu, 0, t);
  if (tfq_queue_enqueue(work, tu, NULL, TFQ_NO_TIMEOUT, st) ||
      tfq_queue_close(work, 0, NULL, TFQ_NO_TIMEOUT, st))
    die("work queue", st);
  tfq_tuple_free(tu);
  long r0 = atomic_load(&g_reallocs);
  double t0 = cpu_now();
  for (;;) {
    tfq_tensor *keys, *vals;
    tfq_code c = tfq_reader_read_up_to(r, work, 64, &keys, &vals, NULL, st);
    if (c) {
      res.code = c;
      snprintf(res.msg, sizeof res.msg, "%s", tfq_status_message(st));
      break;
    }
    int64_t n = tfq_tensor_dim(vals, 0);
    for (int64_t i = 0; i < n; i++) {
      size_t len;
      (void)tfq_tensor_string(vals, i, &len);
      if (len > res.longest) res.longest = len;
    }
    res.records += n;
    tfq_tensor_free(keys);
    tfq_tensor_free(vals);
  }
  res.cpu = cpu_now() - t0;
  res.reallocs = atomic_load(&g_reallocs) - r0;
  tfq_reader_free(r);
  tfq_queue_free(work);
  tfq_spec_free(s);
  tfq_reader_options_free(o);
  tfq_status_free(st);
  return res;
}

/* The best (least CPU) of three runs; the counts must agree between runs. */
static run_result best_of_3(const char *path, tfq_compression comp) {
  run_result best = read_file(path, comp);
  for (int k = 1; k < 3; k++) {
    run_result x = read_file(path, comp);
    if (x.cpu < best.cpu) best = x;
  }
  return best;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  if (tfq_set_allocator(count_malloc, count_realloc, count_free) != TFQ_OK)
    die("tfq_set_allocator", NULL);
  const size_t MiB = (size_t)1 << 20;
  char p8[1024], p64[1024], pord[1024], pnone[1024], g64[1100], gord[1100], gnone[1100];
  snprintf(p8, sizeof p8, "%s/tfq_linear_%d_8.txt", dir, (int)getpid());
  snprintf(p64, sizeof p64, "%s/tfq_linear_%d_64.txt", dir, (int)getpid());
  snprintf(pord, sizeof pord, "%s/tfq_linear_%d_ord.txt", dir, (int)getpid());
  snprintf(pnone, sizeof pnone, "%s/tfq_linear_%d_none.txt", dir, (int)getpid());
  snprintf(g64, sizeof g64, "%s.gz", p64);
  snprintf(gord, sizeof gord, "%s.gz", pord);
  snprintf(gnone, sizeof gnone, "%s.gz", pnone);
  write_shape(p8, 8 * MiB, 8 * MiB);
  write_shape(p64, 64 * MiB, 64 * MiB);
  write_shape(pord, 64 * MiB, 100);
  write_shape(pnone, 96 * MiB, 0);
  gzip_file(p64, g64);
  gzip_file(pord, gord);
  gzip_file(pnone, gnone);
  printf("1..9\n");

  run_result r8 = best_of_3(p8, TFQ_COMPRESSION_NONE);
  run_result r64 = best_of_3(p64, TFQ_COMPRESSION_NONE);
  run_result ord = best_of_3(pord, TFQ_COMPRESSION_NONE);
  run_result none = best_of_3(pnone, TFQ_COMPRESSION_NONE);
  printf(
      "# CPU s: 8 MiB line %.4f, 64 MiB line %.4f, 64 MiB of 100-byte lines %.4f, 96 MiB "
      "without a newline %.4f; reallocations %ld, %ld, %ld, %ld\n",
      r8.cpu, r64.cpu, ord.cpu, none.cpu, r8.reallocs, r64.reallocs, ord.reallocs, none.reallocs);
  ok(r8.code == TFQ_OUT_OF_RANGE && r8.records == 1 && r8.longest == 8 * MiB - 1 &&
         r64.code == TFQ_OUT_OF_RANGE && r64.records == 1 && r64.longest == 64 * MiB - 1 &&
         ord.records == (int64_t)(64 * MiB / 100) + 1,
     "long_lines_are_read_whole (records %" PRId64 ", %" PRId64 ", %" PRId64 ")", r8.records,
     r64.records, ord.records);
  ok(r64.cpu < 20 * (r8.cpu > 1e-4 ? r8.cpu : 1e-4),
     "long_line_time_grows_linearly (64 MiB / 8 MiB = %.2f, bound 20)",
     r64.cpu / (r8.cpu > 1e-9 ? r8.cpu : 1e-9));
  ok(r64.cpu < 10 * (ord.cpu > 1e-3 ? ord.cpu : 1e-3),
     "long_line_reads_within_10x_of_ordinary_lines (%.2fx)",
     r64.cpu / (ord.cpu > 1e-9 ? ord.cpu : 1e-9));
  ok(r64.reallocs < 40, "long_line_buffer_grows_by_doubling (%ld reallocations)", r64.reallocs);
  ok(none.code == TFQ_RESOURCE_EXHAUSTED && strstr(none.msg, "longer than max_line_bytes") &&
         none.records == 0,
     "no_newline_fails_with_max_line_bytes (code %d: %s)", (int)none.code, none.msg);
  ok(none.cpu < 10 * (ord.cpu > 1e-3 ? ord.cpu : 1e-3) && none.reallocs < 40,
     "no_newline_fails_in_linear_time (%.2fx the ordinary file, %ld reallocations)",
     none.cpu / (ord.cpu > 1e-9 ? ord.cpu : 1e-9), none.reallocs);

  run_result z64 = best_of_3(g64, TFQ_COMPRESSION_GZIP);
  run_result zord = best_of_3(gord, TFQ_COMPRESSION_GZIP);
  run_result znone = best_of_3(gnone, TFQ_COMPRESSION_GZIP);
  printf(
      "# gzip CPU s: 64 MiB line %.4f, 64 MiB of 100-byte lines %.4f, 96 MiB without a "
      "newline %.4f; reallocations %ld, %ld, %ld\n",
      z64.cpu, zord.cpu, znone.cpu, z64.reallocs, zord.reallocs, znone.reallocs);
  ok(z64.records == 1 && z64.longest == 64 * MiB - 1 && z64.reallocs < 80,
     "gzip_long_line_buffer_grows_by_doubling (%ld reallocations)", z64.reallocs);
  ok(z64.cpu < 10 * (zord.cpu > 1e-3 ? zord.cpu : 1e-3),
     "gzip_long_line_reads_within_10x_of_ordinary_lines (%.2fx)",
     z64.cpu / (zord.cpu > 1e-9 ? zord.cpu : 1e-9));
  ok(znone.code == TFQ_RESOURCE_EXHAUSTED && znone.reallocs < 80,
     "gzip_no_newline_fails_with_few_reallocations (code %d, %ld reallocations)", (int)znone.code,
     znone.reallocs);

  const char *all[] = {p8, p64, pord, pnone, g64, gord, gnone};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) remove(all[i]);
  return g_failed;
}
