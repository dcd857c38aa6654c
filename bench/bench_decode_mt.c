/* decode_csv on the generated data sets of bench/README.md (bench/gen_data.c), with 1 and 2
 * threads (W1 on D2/D3 and W2 on D1/D5):
 *
 *   bench_decode_mt [--runs N] [--threads LIST] FILE|DIR SCHEMA [LABEL]
 *
 * SCHEMA is one letter per column: f float32 (default 0.0), i int32 (default 0), s string
 * (default "").  FILE is read into memory once; a DIR decodes every regular file in it (D5's
 * 16 parts).  With T threads the bytes are cut into T pieces at line ends (a DIR: files dealt
 * round-robin) and each thread calls tfq_decode_csv_buffer on its pieces.  Figures: MB/s = bytes /
 * median wall time of N runs after a warm-up, the best run, and the median process CPU time; the
 * checksum (sum of floats, sum of ints, count of non-empty strings) must match the peers'.
 * Output: a readable line and a `ROW {json}` line per thread count. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tfq/tfq.h>
#include <time.h>

#define MAX_PIECES 64
#define MAX_THREADS 8

typedef struct {
  double fsum;
  long long isum, nstr, rows;
} sums;

typedef struct {
  const char *p;
  size_t n;
} piece;

static const char *schema;
static tfq_csv_options *opts;
static piece pieces[MAX_PIECES];
static int npieces;

typedef struct {
  int first, step;
  sums s;
} job;

static double now(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void decode_piece(const piece *pc, sums *s) {
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  if (tfq_decode_csv_buffer(opts, pc->p, pc->n, &t, st)) {
    fprintf(stderr, "bench_decode_mt: %s\n", tfq_status_message(st));
    exit(1);
  }
  int64_t rows = tfq_tensor_num_elements(tfq_tuple_get(t, 0));
  s->rows += rows;
  for (size_t c = 0; schema[c]; c++) {
    const tfq_tensor *x = tfq_tuple_get(t, c);
    if (schema[c] == 'f') {
      const float *v = tfq_tensor_cdata(x);
      for (int64_t r = 0; r < rows; r++) s->fsum += v[r];
    } else if (schema[c] == 'i') {
      const int32_t *v = tfq_tensor_cdata(x);
      for (int64_t r = 0; r < rows; r++) s->isum += v[r];
    } else {
      for (int64_t r = 0; r < rows; r++) {
        size_t l;
        tfq_tensor_string(x, r, &l);
        s->nstr += l != 0;
      }
    }
  }
  tfq_tuple_free(t);
  tfq_status_free(st);
}

static void *worker(void *arg) {
  job *j = arg;
  for (int k = j->first; k < npieces; k += j->step) decode_piece(&pieces[k], &j->s);
  return NULL;
}

static sums run(int threads) {
  if (threads < 1) threads = 1;
  pthread_t th[MAX_THREADS];
  job jobs[MAX_THREADS] = {{0, 1, {0, 0, 0, 0}}};
  sums s = {0, 0, 0, 0};
  for (int i = 0; i < threads; i++) {
    jobs[i] = (job){i, threads, {0, 0, 0, 0}};
    if (i && pthread_create(&th[i], NULL, worker, &jobs[i])) exit(1);
  }
  worker(&jobs[0]);
  for (int i = 0; i < threads; i++) {
    if (i) pthread_join(th[i], NULL);
    s.fsum += jobs[i].s.fsum;
    s.isum += jobs[i].s.isum;
    s.nstr += jobs[i].s.nstr;
    s.rows += jobs[i].s.rows;
  }
  return s;
}

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)len + 1);
  if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) exit(1);
  fclose(f);
  *n = (size_t)len;
  return b;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int runs = 5, tlist[MAX_THREADS], nt = 0;
  const char *pos[3] = {NULL, "", NULL};
  int np = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      for (char *p = argv[++i]; *p && nt < MAX_THREADS; p++) {
        int t = (int)strtol(p, &p, 10);
        if (t >= 1 && t <= MAX_THREADS) tlist[nt++] = t;
        if (!*p) break;
      }
    } else if (np < 3) {
      pos[np++] = argv[i];
    }
  }
  if (np < 2 || runs < 1 || runs > 64) {
    fprintf(stderr, "usage: bench_decode_mt [--runs N] [--threads 1,2] FILE|DIR SCHEMA [LABEL]\n");
    return 2;
  }
  if (!nt) tlist[nt++] = 1;
  schema = pos[1];
  const char *label = np > 2 ? pos[2] : pos[0];
  if (tfq_csv_options_new(&opts, NULL)) return 1;
  for (const char *c = schema; *c; c++) {
    tfq_code rc = *c == 'f'   ? tfq_csv_options_add_default_float(opts, 0.0f, NULL)
                  : *c == 'i' ? tfq_csv_options_add_default_int32(opts, 0, NULL)
                              : tfq_csv_options_add_default_string(opts, "", 0, NULL);
    if (rc) return 1;
  }

  /* The input: one file cut at line ends later, or every file of a directory. */
  struct stat sb;
  if (stat(pos[0], &sb)) {
    perror(pos[0]);
    return 1;
  }
  size_t total = 0;
  char *whole = NULL;
  if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(pos[0]);
    char *names[MAX_PIECES];
    int nn = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && nn < MAX_PIECES)
      if (e->d_name[0] != '.') names[nn++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], cmp_str);
    for (int k = 0; k < nn; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", pos[0], names[k]);
      pieces[npieces].p = slurp(path, &pieces[npieces].n);
      total += pieces[npieces++].n;
      free(names[k]);
    }
  } else {
    whole = slurp(pos[0], &total);
  }

  for (int ti = 0; ti < nt; ti++) {
    int threads = tlist[ti];
    if (whole) { /* cut into `threads` pieces at line ends */
      npieces = 0;
      size_t at = 0;
      for (int k = 0; k < threads; k++) {
        size_t end = k == threads - 1 ? total : total * (size_t)(k + 1) / (size_t)threads;
        while (end < total && end > at && whole[end - 1] != '\n') end++;
        pieces[npieces++] = (piece){whole + at, end - at};
        at = end;
      }
    }
    double w[64], c[64];
    sums s = run(threads); /* warm-up */
    for (int k = 0; k < runs; k++) {
      double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
      s = run(threads);
      c[k] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
      w[k] = now(CLOCK_MONOTONIC) - w0;
    }
    qsort(w, (size_t)runs, sizeof w[0], cmp_dbl);
    qsort(c, (size_t)runs, sizeof c[0], cmp_dbl);
    double med = runs % 2 ? w[runs / 2] : (w[runs / 2 - 1] + w[runs / 2]) / 2;
    double cpu = runs % 2 ? c[runs / 2] : (c[runs / 2 - 1] + c[runs / 2]) / 2;
    printf(
        "%-3s tfq %d thread%s %8.1f MB/s (best %6.1f, cpu %6.1f)  %6.2f M rows/s  checksum "
        "%.6e %lld %lld (%lld rows, %.1f MB, median of %d)\n",
        label, threads, threads > 1 ? "s" : " ", total / med / 1e6, total / w[0] / 1e6,
        total / cpu / 1e6, s.rows / med / 1e6, s.fsum, s.isum, s.nstr, s.rows, total / 1e6, runs);
    printf(
        "ROW {\"bench\":\"decode_mt\",\"dataset\":\"%s\",\"impl\":\"tfq\",\"threads\":%d,"
        "\"bytes\":%zu,\"rows\":%lld,\"mb_per_s\":%.2f,\"mb_per_s_best\":%.2f,"
        "\"mb_per_s_cpu\":%.2f,\"rows_per_s\":%.0f,\"fsum\":%.6e,\"isum\":%lld,\"nstr\":%lld}\n",
        label, threads, total, s.rows, total / med / 1e6, total / w[0] / 1e6, total / cpu / 1e6,
        s.rows / med, s.fsum, s.isum, s.nstr);
    fflush(stdout);
  }
  tfq_csv_options_free(opts);
  return 0;
}
