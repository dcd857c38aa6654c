/* decode_csv throughput, one thread, on the benchmark data sets (bench/README.md, "Data sets"):
 *   D1: 1,000,000 rows x 10 fields (6 floats "%.6f" in [0,1000), 3 ints in [0,99999], 1 short
 *       word), unquoted, LF line ends;
 *   D4: D1 with ~20% quoted fields (embedded ',' and '""') and ~5% empty fields that take the
 *       record defaults.  (No '\n' inside quotes: decode_csv is fed lines, as TF's reader does.)
 * Both are generated from fixed seeds and written to DIR (default /tmp) so that the Python peers
 * (bench/peers_decode.py: pandas C engine, pyarrow.csv one thread, TF decode_csv on batches of
 * lines, tf.data CsvDataset) read the same bytes; pass --peers PYTHON to run them in the same run.
 *
 * --reuse reads DIR/tfq_bench_D1.csv and _D4.csv when they hold 1,000,000 lines (written by an
 * earlier run: bench/report.py's interleaved rounds) instead of generating and writing them again.
 *
 * Figures: MB/s = file bytes / median wall time of --runs N runs (default 5, after a warm-up);
 * the best wall time and the median process CPU time are printed too (on a loaded machine the
 * CPU-time rate is the steadier one).  Every reader must reproduce the checksum (sum of floats,
 * sum of ints, count of non-empty strings).  --tfq-only skips the libcsv readers and the
 * split-fastparse reference.
 *   tfq              tfq_decode_csv_buffer over the whole file (fast path; libcsv for quoted lines)
 *   libcsv+strtod    libcsv 3.0.3 callbacks, strtod/strtol on a NUL-terminated copy
 *   libcsv-tok       libcsv tokenizing only (no-op callbacks)
 *   split-fastparse  plain split on ',' and '\n' + tfq's own number parsers (no record defaults,
 *                    no quotes, no error checks): a reference for typed decoding of unquoted
 *                    data, not an upper bound (the fused decoder beats it; "ceiling" before #41).
 * The split-fastparse reference reaches decode_csv's number parsers through their experimental
 * exports (tfq_experimental_parse_f32 / _i32 in <tfq/experimental.h>); like every bench/ program
 * this one includes public headers only. */
#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <time.h>
#define TFQ_EXPERIMENTAL
#include <tfq/experimental.h>

#include "bench_util.h"

#define ROWS 1000000
#define NF BENCH_NF
#define NI BENCH_NI

static char *gen(int quoted, size_t *len) { return bench_gen_d1(ROWS, quoted, len); }

/* The file at path if it is there and holds ROWS lines (the last one ending in '\n'), else NULL. */
static char *load(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  if (n > 0 && !fseek(f, 0, SEEK_SET) && (b = malloc((size_t)n + 1)) &&
      fread(b, 1, (size_t)n, f) == (size_t)n && b[n - 1] == '\n') {
    long lines = 0;
    for (const char *p = b, *end = b + n; (p = memchr(p, '\n', (size_t)(end - p))); p++) lines++;
    if (lines == ROWS) {
      fclose(f);
      *len = (size_t)n;
      return b;
    }
  }
  free(b);
  fclose(f);
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct sums {
  double fsum;
  long long isum, nstr;
} sums;

/* ---- tfq ---- */
static tfq_csv_options *opts(void) {
  tfq_csv_options *o;
  if (tfq_csv_options_new(&o, NULL)) exit(1);
  for (int i = 0; i < NF; i++)
    if (tfq_csv_options_add_default_float(o, 0.0f, NULL)) exit(1);
  for (int i = 0; i < NI; i++)
    if (tfq_csv_options_add_default_int32(o, 0, NULL)) exit(1);
  if (tfq_csv_options_add_default_string(o, "", 0, NULL)) exit(1);
  return o;
}

static sums run_tfq(const tfq_csv_options *o, const char *b, size_t n) {
  sums s = {0, 0, 0};
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  if (tfq_decode_csv_buffer(o, b, n, &t, st)) {
    fprintf(stderr, "tfq: %s\n", tfq_status_message(st));
    exit(1);
  }
  int64_t rows = tfq_tensor_num_elements(tfq_tuple_get(t, 0));
  for (int f = 0; f < NF; f++) {
    const float *v = tfq_tensor_cdata(tfq_tuple_get(t, (size_t)f));
    for (int64_t r = 0; r < rows; r++) s.fsum += v[r];
  }
  for (int f = NF; f < NF + NI; f++) {
    const int32_t *v = tfq_tensor_cdata(tfq_tuple_get(t, (size_t)f));
    for (int64_t r = 0; r < rows; r++) s.isum += v[r];
  }
  for (int64_t r = 0; r < rows; r++) {
    size_t l;
    tfq_tensor_string(tfq_tuple_get(t, 9), r, &l);
    s.nstr += l != 0;
  }
  tfq_tuple_free(t);
  tfq_status_free(st);
  return s;
}

/* ---- libcsv peers ---- */
typedef struct lc_ctx {
  int field;
  sums s;
  int convert;
} lc_ctx;

static void lc_field(void *p, size_t len, void *data) {
  lc_ctx *c = data;
  if (c->convert) {
    char tmp[128];
    size_t l = len < 127 ? len : 127;
    memcpy(tmp, p, l);
    tmp[l] = 0;
    if (c->field < NF)
      c->s.fsum += (float)strtod(tmp, NULL);
    else if (c->field < NF + NI)
      c->s.isum += strtol(tmp, NULL, 10);
    else
      c->s.nstr += len != 0;
  }
  c->field++;
}
static void lc_row(int ch, void *data) {
  (void)ch;
  ((lc_ctx *)data)->field = 0;
}

static sums run_libcsv(const char *b, size_t n, int convert) {
  struct csv_parser p;
  lc_ctx c = {0, {0, 0, 0}, convert};
  if (csv_init(&p, CSV_STRICT) != 0) exit(1);
  for (size_t off = 0; off < n; off += 1 << 20) {
    size_t chunk = n - off < (1u << 20) ? n - off : 1u << 20;
    if (csv_parse(&p, b + off, chunk, lc_field, lc_row, &c) != chunk) exit(2);
  }
  csv_fini(&p, lc_field, lc_row, &c);
  csv_free(&p);
  return c.s;
}

/* ---- the split-fastparse reference: plain split + fast number parsing ---- */
static float fcol[NF][ROWS];
static int32_t icol[NI][ROWS];
static sums run_ceiling(const char *b, size_t n) {
  sums s = {0, 0, 0};
  const char *p = b, *end = b + n;
  int r = 0;
  while (p < end) {
    for (int f = 0; f < 10; f++) {
      const char *q = p;
      while (q < end && *q != ',' && *q != '\n') q++;
      if (f < NF)
        tfq_experimental_parse_f32(p, (size_t)(q - p), &fcol[f][r]);
      else if (f < NF + NI)
        tfq_experimental_parse_i32(p, (size_t)(q - p), &icol[f - NF][r]);
      else
        s.nstr += q != p;
      p = q + 1;
    }
    r++;
  }
  for (int f = 0; f < NF; f++)
    for (int i = 0; i < r; i++) s.fsum += fcol[f][i];
  for (int f = 0; f < NI; f++)
    for (int i = 0; i < r; i++) s.isum += icol[f][i];
  return s;
}

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int runs = 5;

/* One warm-up, then `runs` timed runs: median and best wall time, median CPU time. */
typedef struct timing {
  double med, best, cpu;
} timing;

#define MEASURE(expr, out, tm)                                        \
  do {                                                                \
    double w_[64], c_[64];                                            \
    int n_ = runs < 64 ? runs : 64;                                   \
    out = expr;                                                       \
    for (int k_ = 0; k_ < n_; k_++) {                                 \
      double t0 = now(), c0 = cpu_now();                              \
      out = expr;                                                     \
      c_[k_] = cpu_now() - c0;                                        \
      w_[k_] = now() - t0;                                            \
    }                                                                 \
    qsort(w_, (size_t)n_, sizeof w_[0], cmp_dbl);                     \
    qsort(c_, (size_t)n_, sizeof c_[0], cmp_dbl);                     \
    tm.med = n_ % 2 ? w_[n_ / 2] : (w_[n_ / 2 - 1] + w_[n_ / 2]) / 2; \
    tm.cpu = n_ % 2 ? c_[n_ / 2] : (c_[n_ / 2 - 1] + c_[n_ / 2]) / 2; \
    tm.best = w_[0];                                                  \
  } while (0)

static double report(const char *ds, const char *name, size_t n, timing tm, sums s) {
  printf(
      "%-3s %-14s %8.1f MB/s  (best %6.1f, cpu %6.1f)  %6.2f M rows/s  checksum %.6e %lld %lld\n",
      ds, name, n / tm.med / 1e6, n / tm.best / 1e6, n / tm.cpu / 1e6, ROWS / tm.med / 1e6, s.fsum,
      s.isum, s.nstr);
  printf(
      "ROW {\"bench\":\"decode\",\"dataset\":\"%s\",\"impl\":\"%s\",\"bytes\":%zu,"
      "\"rows\":%d,\"mb_per_s\":%.2f,\"mb_per_s_best\":%.2f,\"mb_per_s_cpu\":%.2f,"
      "\"rows_per_s\":%.0f,\"fsum\":%.6e,\"isum\":%lld,\"nstr\":%lld}\n",
      ds, name, n, ROWS, n / tm.med / 1e6, n / tm.best / 1e6, n / tm.cpu / 1e6, ROWS / tm.med,
      s.fsum, s.isum, s.nstr);
  return n / tm.med / 1e6;
}

int main(int argc, char **argv) {
  const char *dir = "/tmp", *python = NULL;
  int only_tfq = 0, reuse = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--peers") && i + 1 < argc)
      python = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
    else if (!strcmp(argv[i], "--tfq-only"))
      only_tfq = 1;
    else if (!strcmp(argv[i], "--reuse"))
      reuse = 1;
    else
      dir = argv[i];
  }
  tfq_csv_options *o = opts();
  char path[2][512];
  for (int ds = 0; ds < 2; ds++) {
    size_t n;
    const char *name = ds ? "D4" : "D1";
    snprintf(path[ds], sizeof path[ds], "%s/tfq_bench_%s.csv", dir, name);
    char *b = reuse ? load(path[ds], &n) : NULL;
    if (!b) {
      b = gen(ds == 1, &n);
      FILE *f = fopen(path[ds], "wb");
      if (!f || fwrite(b, 1, n, f) != n) return 1;
      fclose(f);
    }
    printf("%s: %zu rows, %.2f MB (%s); median of %d runs\n", name, (size_t)ROWS, n / 1e6, path[ds],
           runs);
    timing tm;
    sums s;
    MEASURE(run_tfq(o, b, n), s, tm);
    double tfq_rate = report(name, "tfq", n, tm, s), tfq_cpu = n / tm.cpu / 1e6;
    if (only_tfq) {
      free(b);
      continue;
    }
    MEASURE(run_libcsv(b, n, 1), s, tm);
    report(name, "libcsv+strtod", n, tm, s);
    MEASURE(run_libcsv(b, n, 0), s, tm);
    double tok_rate = report(name, "libcsv-tok", n, tm, s), tok_cpu = n / tm.cpu / 1e6;
    if (!ds) {
      MEASURE(run_ceiling(b, n), s, tm);
      double ceil_rate = report(name, "split-fastparse", n, tm, s), ceil_cpu = n / tm.cpu / 1e6;
      printf("D1  tfq / split-fastparse reference = %.2f, by cpu time %.2f (target >= 0.6)\n",
             tfq_rate / ceil_rate, tfq_cpu / ceil_cpu);
    } else {
      printf("D4  tfq / libcsv-tok = %.2f, by cpu time %.2f (target >= 0.9)\n", tfq_rate / tok_rate,
             tfq_cpu / tok_cpu);
    }
    free(b);
  }
  tfq_csv_options_free(o);
  if (python) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s/peers_decode.py %s %s", python, TFQ_BENCH_DIR, path[0],
             path[1]);
    fflush(stdout);
    if (system(cmd) != 0) fprintf(stderr, "peers failed\n");
  }
  return 0;
}
