/* The library's decode rate on a file's lines, one thread: the file is read and split into lines
 * first (not timed), then tfq_decode_csv_lines decodes them in batches of --batch lines (default
 * 1,024), as the read-decode op receives them from a reader.  This is the reference the pipeline
 * figures of issue #18 are measured against (bench/bench_mixed.py): tfq-cat's rate on the same
 * file divided by this one.
 *
 *   bench_lines FILE TYPES [--batch N] [--runs R] [--buffer]
 *
 * --buffer: the library's whole-file decode instead, as a user would call it on a file: each run
 * reads the file into memory and calls tfq_decode_csv_buffer once (both timed), the figure
 * compared with DuckDB, pyarrow and pandas reading the same file (impl "tfq_decode_csv_buffer").
 *
 * TYPES: one letter per column, f float32, d float64, i int32, l int64, s string (every column
 * has a default, so empty fields are allowed).  Each run prints one line
 *   ROW {"bench": "lines", "impl": "tfq_decode_csv_lines", "wall_s": ..., "cpu_s": ...,
 *        "bytes": ..., "rows": ..., "mb_per_s": ..., "mb_per_s_cpu": ..., "check": ...}
 * where check is a checksum of the decoded values (sum of numbers, total string length) that
 * changes if a column is decoded differently.  Public headers only, like every bench/ program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <time.h>

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sum of a column's numbers, or total length of its strings (the peers print the same). */
static double column_sum(const tfq_tensor *t, char type) {
  double s = 0;
  int64_t n = tfq_tensor_num_elements(t);
  for (int64_t i = 0; i < n; i++) {
    size_t len = 0;
    switch (type) {
      case 'f': s += ((const float *)tfq_tensor_cdata(t))[i]; break;
      case 'd': s += ((const double *)tfq_tensor_cdata(t))[i]; break;
      case 'i': s += ((const int32_t *)tfq_tensor_cdata(t))[i]; break;
      case 'l': s += (double)((const int64_t *)tfq_tensor_cdata(t))[i]; break;
      default: (void)tfq_tensor_string(t, i, &len); s += (double)len;
    }
  }
  return s;
}

static void die(const char *what, const tfq_status *st) {
  fprintf(stderr, "bench_lines: %s: %s\n", what, st ? tfq_status_message(st) : "");
  exit(1);
}

int main(int argc, char **argv) {
  const char *path = NULL, *types = NULL;
  size_t batch = 1024;
  int runs = 1, whole = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      batch = (size_t)atol(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--buffer"))
      whole = 1;
    else if (!path)
      path = argv[i];
    else
      types = argv[i];
  }
  if (!path || !types || batch < 1 || runs < 1) {
    fprintf(stderr, "usage: bench_lines FILE TYPES [--batch N] [--runs R]\n");
    return 2;
  }
  FILE *f = fopen(path, "rb");
  if (!f) die(path, NULL);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)size + 1);
  if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) die("read", NULL);
  fclose(f);
  size_t cap = 1 << 16, n = 0;
  const char **lines = malloc(cap * sizeof *lines);
  size_t *lens = malloc(cap * sizeof *lens);
  for (long i = 0, s = 0; i < size; i++) {
    if (buf[i] != '\n') continue;
    if (n == cap) {
      cap *= 2;
      lines = realloc(lines, cap * sizeof *lines);
      lens = realloc(lens, cap * sizeof *lens);
    }
    if (!lines || !lens) die("out of memory", NULL);
    lines[n] = buf + s;
    lens[n++] = (size_t)(i - s);
    s = i + 1;
  }
  tfq_status *st = tfq_status_new();
  tfq_csv_options *o;
  if (!st || tfq_csv_options_new(&o, st)) die("options", st);
  size_t ncol = strlen(types);
  for (size_t c = 0; c < ncol; c++) {
    tfq_code rc;
    switch (types[c]) {
      case 'f': rc = tfq_csv_options_add_default_float(o, 0, st); break;
      case 'd': rc = tfq_csv_options_add_default_double(o, 0, st); break;
      case 'i': rc = tfq_csv_options_add_default_int32(o, 0, st); break;
      case 'l': rc = tfq_csv_options_add_default_int64(o, 0, st); break;
      case 's': rc = tfq_csv_options_add_default_string(o, "", 0, st); break;
      default: fprintf(stderr, "bench_lines: type '%c' is not one of fdils\n", types[c]); return 2;
    }
    if (rc) die("options", st);
  }
  for (int r = 0; r < runs && whole; r++) {
    double check = 0, w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    FILE *g = fopen(path, "rb");
    char *b = malloc((size_t)size);
    if (!g || !b || fread(b, 1, (size_t)size, g) != (size_t)size) die("read", NULL);
    fclose(g);
    tfq_tuple *out;
    if (tfq_decode_csv_buffer(o, b, (size_t)size, &out, st)) die("decode", st);
    double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    int64_t rows = tfq_tensor_dim(tfq_tuple_get(out, 0), 0);
    for (size_t c = 0; c < ncol; c++) check += column_sum(tfq_tuple_get(out, c), types[c]);
    tfq_tuple_free(out);
    free(b);
    printf(
        "ROW {\"bench\": \"lines\", \"impl\": \"tfq_decode_csv_buffer\", \"wall_s\": %.6f, "
        "\"cpu_s\": %.6f, \"bytes\": %ld, \"rows\": %lld, \"mb_per_s\": %.2f, "
        "\"mb_per_s_cpu\": %.2f, \"check\": %.17g}\n",
        wall, cpu, size, (long long)rows, (double)size / wall / 1e6, (double)size / cpu / 1e6,
        check);
    fflush(stdout);
  }
  for (int r = 0; r < runs && !whole; r++) {
    double check = 0, w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t i = 0; i < n; i += batch) {
      size_t k = n - i < batch ? n - i : batch;
      tfq_tuple *out;
      if (tfq_decode_csv_lines(o, lines + i, lens + i, k, &out, st)) die("decode", st);
      /* one value per column and batch keeps the checksum cheap but column-sensitive */
      for (size_t c = 0; c < ncol; c++) {
        const tfq_tensor *t = tfq_tuple_get(out, c);
        size_t len = 0;
        switch (types[c]) {
          case 'f': check += ((const float *)tfq_tensor_cdata(t))[k - 1]; break;
          case 'd': check += ((const double *)tfq_tensor_cdata(t))[k - 1]; break;
          case 'i': check += ((const int32_t *)tfq_tensor_cdata(t))[k - 1]; break;
          case 'l': check += (double)((const int64_t *)tfq_tensor_cdata(t))[k - 1]; break;
          default: (void)tfq_tensor_string(t, (int64_t)k - 1, &len); check += (double)len;
        }
      }
      tfq_tuple_free(out);
    }
    double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    printf(
        "ROW {\"bench\": \"lines\", \"impl\": \"tfq_decode_csv_lines\", \"wall_s\": %.6f, "
        "\"cpu_s\": %.6f, \"bytes\": %ld, \"rows\": %zu, \"batch\": %zu, \"mb_per_s\": %.2f, "
        "\"mb_per_s_cpu\": %.2f, \"check\": %.17g}\n",
        wall, cpu, size, n, batch, (double)size / wall / 1e6, (double)size / cpu / 1e6, check);
    fflush(stdout);
  }
  tfq_csv_options_free(o);
  tfq_status_free(st);
  free(lines);
  free(lens);
  free(buf);
  return 0;
}
