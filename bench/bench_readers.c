/* Reader throughput, printed in one run (never a pass/fail test):
 *   1. TextLineReader.read_up_to(1024) MB/s vs a plain read()+memchr line scan of the same file
 *      (target >= 0.5x);
 *   2. the same reader on gzip input vs `gzip -dc file.gz > /dev/null` (target >= 0.8x);
 *   3. TFRecordReader.read_up_to(1024) MB/s over ~1 KiB records (+ the writer's MB/s).
 * Files are generated under a mkdtemp directory (removed at the end); the page cache is warm
 * (each input is read once before it is timed).
 *
 *   bench_readers [MiB [SECTION]]   MiB default 256; SECTION: all (default), text, gzip, tfrecord
 *                                    (one section only: for profilers and callgrind) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

/* CPU seconds of this process and its waited-for children (gzip): the development machine is
 * shared, so wall-clock ratios are noisy; CPU time is what the comparison is about.  Set
 * TFQ_BENCH_WALL=1 to time with the monotonic clock instead. */
static double now(void) {
  if (getenv("TFQ_BENCH_WALL")) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
  }
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  getrusage(RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
                  b.ru_stime.tv_usec) /
             1e6;
}

static void die(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_readers: %s: %s\n", what, st ? tfq_status_message(st) : "");
  exit(1);
}

/* read() + memchr over the file; returns lines, sets *bytes. */
static long long memchr_scan(const char *path, long long *bytes) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) die(path, NULL);
  static char buf[256 << 10];
  long long lines = 0, total = 0;
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    const char *p = buf, *end = buf + n;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
      lines++;
      p++;
    }
    total += n;
  }
  close(fd);
  *bytes = total;
  return lines;
}

/* Reads `path` with a reader of `kind`; returns the records, sets *bytes (value bytes). */
static long long read_file(tfq_reader_kind kind, const char *path, tfq_compression c,
                           long long *bytes) {
  tfq_status *st = tfq_status_new();
  tfq_spec *spec = NULL;
  tfq_queue *q = NULL;
  tfq_tensor *t = NULL;
  tfq_tuple *tu = NULL;
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st) ||
      tfq_fifo_queue_new(spec, 4, NULL, &q, st) || tfq_tensor_new(TFQ_STRING, NULL, 0, &t, st) ||
      tfq_tensor_set_string(t, 0, path, strlen(path), st) || tfq_tuple_new(1, &tu, st))
    die("setup", st);
  tfq_tuple_set_take(tu, 0, t);
  if (tfq_queue_enqueue(q, tu, NULL, TFQ_NO_TIMEOUT, st) ||
      tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st))
    die("enqueue", st);
  tfq_tuple_free(tu);
  tfq_reader_options *o;
  tfq_reader *r;
  if (tfq_reader_options_new(&o, st)) die("options", st);
  tfq_reader_options_set_compression(o, c);
  if (tfq_reader_new(kind, o, &r, st)) die("reader", st);
  long long recs = 0, total = 0;
  tfq_tensor *k, *v;
  tfq_code code;
  while ((code = tfq_reader_read_up_to(r, q, 1024, &k, &v, NULL, st)) == TFQ_OK) {
    int64_t m = tfq_tensor_num_elements(v);
    for (int64_t i = 0; i < m; i++) {
      size_t len;
      (void)tfq_tensor_string(v, i, &len);
      total += (long long)len;
    }
    recs += m;
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  if (code != TFQ_OUT_OF_RANGE) die("read", st);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  tfq_status_free(st);
  *bytes = total;
  return recs;
}

static double best_of(int runs, double (*fn)(void *), void *arg) {
  double best = 1e30;
  for (int i = 0; i < runs; i++) {
    double t = fn(arg);
    if (t < best) best = t;
  }
  return best;
}

typedef struct {
  const char *path;
  tfq_compression c;
  tfq_reader_kind kind;
  long long recs, bytes;
} job;

static double time_memchr(void *a) {
  job *j = a;
  double t0 = now();
  j->recs = memchr_scan(j->path, &j->bytes);
  return now() - t0;
}
static double time_reader(void *a) {
  job *j = a;
  double t0 = now();
  j->recs = read_file(j->kind, j->path, j->c, &j->bytes);
  return now() - t0;
}
static double time_gzip(void *a) {
  job *j = a;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s' > /dev/null", j->path);
  double t0 = now();
  if (system(cmd) != 0) die("gzip -dc", NULL);
  return now() - t0;
}

int main(int argc, char **argv) {
  long mib = argc > 1 ? atol(argv[1]) : 256;
  if (mib <= 0) mib = 256;
  const char *section = argc > 2 ? argv[2] : "all";
  int all = strcmp(section, "all") == 0, do_text = all || strcmp(section, "text") == 0,
      do_gzip = all || strcmp(section, "gzip") == 0,
      do_tfr = all || strcmp(section, "tfrecord") == 0;
  if (!do_text && !do_gzip && !do_tfr) {
    fprintf(stderr, "usage: bench_readers [MiB [all|text|gzip|tfrecord]]\n");
    return 2;
  }
  char dir[] = "/tmp/tfq_bench_readers_XXXXXX";
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  char txt[256], gz[256], tfr[256], cmd[1024];
  snprintf(txt, sizeof txt, "%s/lines.txt", dir);
  snprintf(gz, sizeof gz, "%s/lines.txt.gz", dir);
  snprintf(tfr, sizeof tfr, "%s/records.tfrecord", dir);

  /* a CSV-like text file, ~60-byte lines */
  FILE *f = fopen(txt, "wb");
  if (!f) die(txt, NULL);
  long long target = (long long)mib << 20, written = 0, lines = 0;
  while (written < target) {
    int n = fprintf(f, "%lld,%.6f,%lld,some text field,%d\n", lines, (double)lines * 0.001,
                    (long long)(lines * 2654435761u % 1000003), (int)(lines % 7));
    written += n;
    lines++;
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "gzip -6 -c '%s' > '%s'", txt, gz);
  if (do_gzip && system(cmd) != 0) die("gzip", NULL);

  printf("bench_readers: timing by %s\n",
         getenv("TFQ_BENCH_WALL") ? "wall clock" : "CPU time (process + gzip child)");
  printf("bench_readers: %ld MiB text file, %lld lines (avg %.1f bytes)\n", mib, lines,
         (double)written / (double)lines);
  if (do_text) {
    job m = {txt, TFQ_COMPRESSION_NONE, TFQ_READER_TEXT_LINE, 0, 0};
    job r = m;
    (void)time_memchr(&m); /* warm the page cache */
    double tm = best_of(3, time_memchr, &m);
    double tr = best_of(3, time_reader, &r);
    if (m.recs != lines || r.recs != lines) die("line counts differ", NULL);
    double mbm = (double)written / 1e6 / tm, mbr = (double)written / 1e6 / tr;
    printf("  memchr line scan           %8.0f MB/s\n", mbm);
    printf("  TextLineReader read_up_to  %8.0f MB/s   ratio %.2fx (target >= 0.5x)\n", mbr,
           mbr / mbm);
    printf("ROW {\"bench\":\"readers\",\"impl\":\"memchr-scan\",\"mb_per_s\":%.1f}\n", mbm);
    printf("ROW {\"bench\":\"readers\",\"impl\":\"tfq-textline\",\"mb_per_s\":%.1f}\n", mbr);
  }

  if (do_gzip) {
    job g = {gz, TFQ_COMPRESSION_GZIP, TFQ_READER_TEXT_LINE, 0, 0};
    double tg = best_of(3, time_gzip, &g);
    double trg = best_of(3, time_reader, &g);
    if (g.recs != lines) die("gzip line count differs", NULL);
    printf("  gzip -dc > /dev/null       %8.0f MB/s (uncompressed bytes)\n",
           (double)written / 1e6 / tg);
    printf("  TextLineReader GZIP        %8.0f MB/s   ratio %.2fx (target >= 0.8x)\n",
           (double)written / 1e6 / trg, tg / trg);
    printf("ROW {\"bench\":\"readers\",\"impl\":\"gzip-dc\",\"mb_per_s\":%.1f}\n",
           (double)written / 1e6 / tg);
    printf("ROW {\"bench\":\"readers\",\"impl\":\"tfq-textline-gzip\",\"mb_per_s\":%.1f}\n",
           (double)written / 1e6 / trg);
  }
  unlink(txt);
  unlink(gz);
  if (!do_tfr) {
    rmdir(dir);
    return 0;
  }

  /* TFRecord: ~1 KiB records */
  tfq_status *st = tfq_status_new();
  tfq_tfrecord_writer *w;
  if (tfq_tfrecord_writer_new(tfr, TFQ_COMPRESSION_NONE, &w, st)) die("writer", st);
  char *rec = malloc(2048);
  for (int i = 0; i < 2048; i++) rec[i] = (char)('a' + i % 26);
  long long nrec = 0, payload = 0;
  double t0 = now();
  while (payload < target) {
    size_t len = 512 + (size_t)(nrec * 7919 % 1024);
    if (tfq_tfrecord_writer_write(w, rec, len, st)) die("write", st);
    payload += (long long)len;
    nrec++;
  }
  if (tfq_tfrecord_writer_close(w, st)) die("close", st);
  double tw = now() - t0;
  tfq_tfrecord_writer_free(w);
  free(rec);
  job t = {tfr, TFQ_COMPRESSION_NONE, TFQ_READER_TFRECORD, 0, 0};
  (void)time_reader(&t);
  double tt = best_of(3, time_reader, &t);
  if (t.recs != nrec || t.bytes != payload) die("tfrecord count differs", NULL);
  printf(
      "  TFRecord writer            %8.0f MB/s (%lld records, payload bytes, incl. fsync-less "
      "close)\n",
      (double)payload / 1e6 / tw, nrec);
  printf("  TFRecordReader read_up_to  %8.0f MB/s (payload bytes, CRC32C checked)\n",
         (double)payload / 1e6 / tt);
  printf("ROW {\"bench\":\"readers\",\"impl\":\"tfq-tfrecord-write\",\"mb_per_s\":%.1f}\n",
         (double)payload / 1e6 / tw);
  printf("ROW {\"bench\":\"readers\",\"impl\":\"tfq-tfrecord-read\",\"mb_per_s\":%.1f}\n",
         (double)payload / 1e6 / tt);
  tfq_status_free(st);
  unlink(txt);
  unlink(gz);
  unlink(tfr);
  rmdir(dir);
  return 0;
}
