/* Peak RSS of TextLineReader.read_up_to over a large generated text file (plain or gzip): the
 * reader streams, so memory must not grow with the file.  Prints the peak RSS from getrusage and
 * fails (exit 1) above the limit.
 *
 *   rss_textline [--mib N] [--gzip] [--limit-mib L]     (defaults: 64 MiB file, limit 64 MiB)
 *   rss_textline --mib 1024 [--gzip]                    the 1 GiB figure
 *
 * The file is written with zlib (gzip level 1) by this test program; the library itself calls
 * zlib only from src/readers/zstream.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/inputs.h"

static void die(const char *what, tfq_status *st) {
  fprintf(stderr, "%s: %s\n", what, st ? tfq_status_message(st) : "");
  exit(2);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long mib = 64, limit = 64;
  int gz = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--limit-mib") && i + 1 < argc)
      limit = atol(argv[++i]);
    else if (!strcmp(argv[i], "--gzip"))
      gz = 1;
    else {
      fprintf(stderr, "usage: %s [--mib N] [--gzip] [--limit-mib L]\n", argv[0]);
      return 2;
    }
  }
  char dir[] = "/tmp/tfq_rss_XXXXXX";
  if (!mkdtemp(dir)) die("mkdtemp", NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/big.%s", dir, gz ? "txt.gz" : "txt");

  /* generate */
  double t0 = now();
  FILE *f = gz ? NULL : fopen(path, "wb");
  gzFile g = gz ? gzopen(path, "wb1") : NULL;
  if (!f && !g) die("open", NULL);
  uint64_t target = (uint64_t)mib << 20, written = 0, lines = 0;
  char buf[1 << 16];
  size_t n = 0;
  while (written < target) {
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%llu,%.6f,%lld,some text field,%d\n",
                          (unsigned long long)lines, (double)lines * 0.001,
                          (long long)(lines * 2654435761u % 1000003), (int)(lines % 7));
    lines++;
    if (n > sizeof buf - 128) {
      if (f ? fwrite(buf, 1, n, f) != n : gzwrite(g, buf, (unsigned)n) != (int)n)
        die("write", NULL);
      written += n;
      n = 0;
    }
  }
  if (n && (f ? fwrite(buf, 1, n, f) != n : gzwrite(g, buf, (unsigned)n) != (int)n))
    die("write", NULL);
  written += n;
  if (f) fclose(f);
  if (g) gzclose(g);
  double t1 = now();

  /* read */
  tfq_status *st = tfq_status_new();
  tfq_queue *q;
  const char *names[1] = {path};
  if (test_work_queue(names, 1, 4, NULL, &q, st)) die("work queue", st);
  tfq_reader_options *o;
  tfq_reader *r;
  if (tfq_reader_options_new(&o, st)) die("options", st);
  tfq_reader_options_set_compression(o, gz ? TFQ_COMPRESSION_GZIP : TFQ_COMPRESSION_NONE);
  if (tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st)) die("reader", st);
  uint64_t got = 0, bytes = 0;
  tfq_tensor *k, *v;
  tfq_code c;
  while ((c = tfq_reader_read_up_to(r, q, 1024, &k, &v, NULL, st)) == TFQ_OK) {
    int64_t m = tfq_tensor_num_elements(v);
    for (int64_t i = 0; i < m; i++) {
      size_t len;
      (void)tfq_tensor_string(v, i, &len);
      bytes += len + 1;
    }
    got += (uint64_t)m;
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  double t2 = now();
  if (c != TFQ_OUT_OF_RANGE) die("read", st);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  long peak_kib = ru.ru_maxrss;
  printf(
      "file: %llu MiB of text (%s), %llu lines; generated in %.1f s, read in %.1f s (%.0f MB/s)\n",
      (unsigned long long)(written >> 20), gz ? "gzip" : "plain", (unsigned long long)lines,
      t1 - t0, t2 - t1, (double)bytes / 1e6 / (t2 - t1));
  printf("peak RSS: %.1f MiB (limit %ld MiB)\n", peak_kib / 1024.0, limit);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  tfq_status_free(st);
  unlink(path);
  rmdir(dir);
  if (got != lines || bytes != written) {
    printf("FAIL: read %llu lines / %llu bytes, wrote %llu / %llu\n", (unsigned long long)got,
           (unsigned long long)bytes, (unsigned long long)lines, (unsigned long long)written);
    return 1;
  }
  return peak_kib / 1024 < limit ? 0 : 1;
}
