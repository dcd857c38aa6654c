/* Generates the benchmark data sets of bench/README.md ("Data sets") from fixed seeds (PCG-XSH-RR,
 * the generator and seeds of bench_decode.c, so D1 and D4 are byte for byte the files bench_decode
 * and bench_e2e write):
 *   D1.csv  1,000,000 rows x 10 fields: 6 floats "%.6f" in [0,1000), 3 ints in [0,99999], 1 short
 *           word; unquoted, LF (~88 MB)                                         seed 0xD1D1D1D1
 *   D2.csv  10,000,000 rows x 2: int label in [0,99], float "%.6f" in [0,1000) (~145 MB)
 *                                                                              seed 0xD2D2D2D2
 *   D3.csv  20,000 rows x 430 floats "%.6f" in [0,1000) (~95 MB)               seed 0xD3D3D3D3
 *   D4.csv  D1 with ~20% quoted fields (embedded ',' and '""') and ~5% empty fields (no '\n'
 *           inside quotes: decode_csv is fed lines, as TF's reader does)      seed 0xD4D4D4D4
 *   D5/part-NN.csv  D1 cut into 16 files of 62,500 rows
 *   DM.csv  700,000 rows x 10 fields shaped like a real feature file (issue #18's mixed set):
 *           6 float32 of 6-9 significant digits, signed, the point anywhere; an int64 id of 10
 *           digits; a signed int32 over its whole range; a categorical word (12 words of 2-11
 *           letters); a free-text id of 8-20 characters; unquoted, LF (~67 MB)  seed 0xDDDDDDDD
 * and DIR/MANIFEST.json ({"version", "sets": {name: {"rows", "seed", "bytes"}}}), which
 * bench/report.py compares before reusing the files.
 *
 *   gen_data DIR [--scale S]   S in (0,1] scales every row count (for smoke tests only) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"

#define GEN_VERSION 2

/* One DM row (at most 200 bytes). */
static size_t row_dm(char *b) {
  static const char *const cats[12] = {"us",       "de",         "fr",           "mobile",
                                       "desktop",  "tablet",     "organic",      "paid",
                                       "referral", "newsletter", "subscription", "trial"};
  static const unsigned long long p10[10] = {1,      10,      100,      1000,      10000,
                                             100000, 1000000, 10000000, 100000000, 1000000000};
  size_t n = 0;
  for (int f = 0; f < 6; f++) {
    int d = 6 + (int)(bench_rnd() % 4); /* significant digits */
    unsigned long long m = p10[d - 1] + bench_rnd() % (p10[d] - p10[d - 1]);
    int fr = 1 + (int)(bench_rnd() % (unsigned)d); /* digits after the point */
    n += (size_t)sprintf(b + n, "%s%llu.%0*llu,", bench_rnd() % 10 < 3 ? "-" : "", m / p10[fr], fr,
                         m % p10[fr]);
  }
  unsigned long long id =
      1000000000ULL + ((unsigned long long)bench_rnd() << 32 | bench_rnd()) % 9000000000ULL;
  int32_t i32 = (int32_t)bench_rnd();
  n += (size_t)sprintf(b + n, "%llu,%d,%s,", id, i32, cats[bench_rnd() % 12]);
  int len = 8 + (int)(bench_rnd() % 13);
  static const char hex[] = "0123456789abcdefghijklmnopqrstuvwxyz_";
  for (int i = 0; i < len; i++) b[n++] = hex[bench_rnd() % 37];
  b[n++] = '\n';
  return n;
}

static size_t row_d2(char *b) {
  unsigned label = bench_rnd() % 100u;
  return (size_t)sprintf(b, "%u,%.6f\n", label, (bench_rnd() % 1000000000u) / 1e6);
}

static size_t row_d3(char *b) {
  size_t n = 0;
  for (int f = 0; f < 430; f++) {
    if (f) b[n++] = ',';
    n += (size_t)sprintf(b + n, "%.6f", (bench_rnd() % 1000000000u) / 1e6);
  }
  b[n++] = '\n';
  return n;
}

typedef struct {
  FILE *f;
  char *buf;
  size_t n, cap;
  unsigned long long total;
} out_file;

static void flush_out(out_file *o) {
  if (o->n && fwrite(o->buf, 1, o->n, o->f) != o->n) {
    perror("gen_data: write");
    exit(1);
  }
  o->total += o->n;
  o->n = 0;
}

static void open_out(out_file *o, const char *path) {
  o->f = fopen(path, "wb");
  if (!o->f) {
    fprintf(stderr, "gen_data: cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
  o->cap = 1 << 22;
  o->buf = malloc(o->cap);
  if (!o->buf) exit(1);
  o->n = 0;
  o->total = 0;
}

static unsigned long long close_out(out_file *o) {
  flush_out(o);
  if (fclose(o->f) != 0) {
    perror("gen_data: close");
    exit(1);
  }
  free(o->buf);
  return o->total;
}

/* Room for the longest row (D3: 430 x 11 bytes). */
static char *room(out_file *o) {
  if (o->cap - o->n < 8192) flush_out(o);
  return o->buf + o->n;
}

int main(int argc, char **argv) {
  const char *dir = NULL;
  double scale = 1.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scale") && i + 1 < argc)
      scale = atof(argv[++i]);
    else
      dir = argv[i];
  }
  if (!dir || !(scale > 0 && scale <= 1)) {
    fprintf(stderr, "usage: gen_data DIR [--scale S]\n");
    return 2;
  }
  long r1 = (long)(1000000 * scale), r2 = (long)(10000000 * scale), r3 = (long)(20000 * scale);
  char path[4096];
  mkdir(dir, 0777);
  out_file o;
  unsigned long long bytes[5 + 16], bytes_dm;

  snprintf(path, sizeof path, "%s/D1.csv", dir);
  open_out(&o, path);
  bench_rs = 0xD1D1D1D1ULL;
  for (long r = 0; r < r1; r++) o.n += bench_row_d1(room(&o), 0);
  bytes[0] = close_out(&o);

  snprintf(path, sizeof path, "%s/D2.csv", dir);
  open_out(&o, path);
  bench_rs = 0xD2D2D2D2ULL;
  for (long r = 0; r < r2; r++) o.n += row_d2(room(&o));
  bytes[1] = close_out(&o);

  snprintf(path, sizeof path, "%s/D3.csv", dir);
  open_out(&o, path);
  bench_rs = 0xD3D3D3D3ULL;
  for (long r = 0; r < r3; r++) o.n += row_d3(room(&o));
  bytes[2] = close_out(&o);

  snprintf(path, sizeof path, "%s/D4.csv", dir);
  open_out(&o, path);
  bench_rs = 0xD4D4D4D4ULL;
  for (long r = 0; r < r1; r++) o.n += bench_row_d1(room(&o), 1);
  bytes[3] = close_out(&o);

  snprintf(path, sizeof path, "%s/D5", dir);
  mkdir(path, 0777);
  bench_rs = 0xD1D1D1D1ULL;
  bytes[4] = 0;
  for (int k = 0; k < 16; k++) {
    snprintf(path, sizeof path, "%s/D5/part-%02d.csv", dir, k);
    open_out(&o, path);
    long lo = r1 * k / 16, hi = r1 * (k + 1) / 16;
    for (long r = lo; r < hi; r++) o.n += bench_row_d1(room(&o), 0);
    bytes[5 + k] = close_out(&o);
    bytes[4] += bytes[5 + k];
  }

  long rm = (long)(700000 * scale);
  snprintf(path, sizeof path, "%s/DM.csv", dir);
  open_out(&o, path);
  bench_rs = 0xDDDDDDDDULL;
  for (long r = 0; r < rm; r++) o.n += row_dm(room(&o));
  bytes_dm = close_out(&o);

  snprintf(path, sizeof path, "%s/MANIFEST.json", dir);
  FILE *m = fopen(path, "w");
  if (!m) return 1;
  fprintf(m,
          "{\"version\": %d, \"scale\": %g, \"sets\": {"
          "\"D1\": {\"rows\": %ld, \"seed\": \"0xD1D1D1D1\", \"bytes\": %llu}, "
          "\"D2\": {\"rows\": %ld, \"seed\": \"0xD2D2D2D2\", \"bytes\": %llu}, "
          "\"D3\": {\"rows\": %ld, \"seed\": \"0xD3D3D3D3\", \"bytes\": %llu}, "
          "\"D4\": {\"rows\": %ld, \"seed\": \"0xD4D4D4D4\", \"bytes\": %llu}, "
          "\"D5\": {\"rows\": %ld, \"seed\": \"0xD1D1D1D1\", \"bytes\": %llu, \"files\": 16}, "
          "\"DM\": {\"rows\": %ld, \"seed\": \"0xDDDDDDDD\", \"bytes\": %llu}}}\n",
          GEN_VERSION, scale, r1, bytes[0], r2, bytes[1], r3, bytes[2], r1, bytes[3], r1, bytes[4],
          rm, bytes_dm);
  if (fclose(m) != 0) return 1;
  printf(
      "gen_data: %s: D1 %.1f MB, D2 %.1f MB, D3 %.1f MB, D4 %.1f MB, D5 16 files %.1f MB, DM "
      "%.1f MB\n",
      dir, bytes[0] / 1e6, bytes[1] / 1e6, bytes[2] / 1e6, bytes[3] / 1e6, bytes[4] / 1e6,
      bytes_dm / 1e6);
  return 0;
}
