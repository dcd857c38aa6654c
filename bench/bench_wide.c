/* bench_wide: tfq-cat on wide rows against the library's decode of the same file (issue "wider
 * proof": the CLI must be linear in the number of columns).
 *
 *   bench_wide --tfq-cat PATH [--runs N] [--dir DIR] [--quick]
 *
 * Writes two seeded files of float columns ("%.6g" of PCG32 draws in -1000..1000), wide and
 * shaped like the issue's: W1 200 rows x 20,000 columns (about 33 MB) and W2 2,000 rows x 2,000
 * columns (about 33 MB); --quick: 50 x 20,000 and 500 x 2,000.  For each file, N rounds
 * (default 5), interleaved:
 *   decode    the file read into memory, then tfq_decode_csv_lines over all of its lines at once,
 *             float64 columns (what tfq-cat infers for these files): the library's CPU seconds
 *             for the decode alone;
 *   tfq-cat   `tfq-cat -n 0 -o none -j 1 FILE` with type inference (reads, infers, decodes,
 *             shuffles, batches): the child's CPU seconds (user + system, wait4's rusage).
 * Prints the medians with their spread (min..max), the ratio of the medians, and
 *   TARGET wide <file> tfq-cat / decode_csv_lines CPU <= 2x: R met|missed
 * The CPU time, not the wall clock, is compared: tfq-cat uses 2 threads (a reader and the
 * output), and the wall clock on a shared 2-core machine measures the other jobs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

static double cpu_self(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
  fprintf(stderr, "bench_wide: %s\n", what);
  exit(1);
}

static void write_file(const char *path, int rows, int cols) {
  FILE *f = fopen(path, "w");
  if (!f) die(path);
  bench_rs = 0x5749444555ULL + (uint64_t)cols;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      fprintf(f, "%.6g%c", (double)(bench_rnd() % 2000000u) / 1000.0 - 1000.0,
              c + 1 == cols ? '\n' : ',');
  if (fclose(f)) die(path);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) die(path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) die(path);
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* CPU seconds of tfq_decode_csv_lines over every line of the file (read beforehand). */
static double run_decode(const char *path, int cols) {
  size_t len;
  char *b = slurp(path, &len);
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += b[i] == '\n';
  const char **lines = malloc(n * sizeof *lines);
  size_t *lens = malloc(n * sizeof *lens);
  size_t k = 0, start = 0;
  for (size_t i = 0; i < len; i++)
    if (b[i] == '\n') {
      lines[k] = b + start;
      lens[k++] = i - start;
      start = i + 1;
    }
  tfq_csv_options *o;
  if (tfq_csv_options_new(&o, NULL)) die("options");
  for (int c = 0; c < cols; c++)
    if (tfq_csv_options_add_default_double(o, 0.0, NULL)) die("options");
  double t0 = cpu_self();
  tfq_tuple *t;
  if (tfq_decode_csv_lines(o, lines, lens, n, &t, NULL)) die("decode");
  double dt = cpu_self() - t0;
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
  free(lines);
  free(lens);
  free(b);
  return dt;
}

/* The child's CPU seconds (user + system) of tfq-cat -n 0 -o none -j 1 path. */
static double run_cat(const char *cat, const char *path) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
    execl(cat, cat, "-n", "0", "-o", "none", "-j", "1", path, (char *)NULL);
    _exit(127);
  }
  int ws;
  struct rusage ru;
  if (wait4(pid, &ws, 0, &ru) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    die("tfq-cat failed");
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  const char *cat = NULL, *dir = getenv("TMPDIR");
  int runs = 5, quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tfq-cat") && i + 1 < argc)
      cat = argv[++i];
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else
      die("usage: bench_wide --tfq-cat PATH [--runs N] [--dir DIR] [--quick]");
  }
  if (!cat) die("--tfq-cat PATH is required");
  if (!dir || !*dir) dir = "/tmp";
  if (runs < 1 || runs > 99) runs = 5;
  struct {
    const char *name;
    int rows, cols;
  } shapes[2] = {{"W1", quick ? 50 : 200, 20000}, {"W2", quick ? 500 : 2000, 2000}};
  int missed = 0;
  for (int s = 0; s < 2; s++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tfq_bench_wide_%d_%s.csv", dir, (int)getpid(), shapes[s].name);
    write_file(path, shapes[s].rows, shapes[s].cols);
    double dec[99], cli[99];
    for (int r = 0; r < runs; r++) { /* interleaved: decode, tfq-cat, decode, ... */
      dec[r] = run_decode(path, shapes[s].cols);
      cli[r] = run_cat(cat, path);
    }
    double dmin = dec[0], dmax = dec[0], cmin = cli[0], cmax = cli[0];
    for (int r = 1; r < runs; r++) {
      dmin = dec[r] < dmin ? dec[r] : dmin;
      dmax = dec[r] > dmax ? dec[r] : dmax;
      cmin = cli[r] < cmin ? cli[r] : cmin;
      cmax = cli[r] > cmax ? cli[r] : cmax;
    }
    double dm = median(dec, runs), cm = median(cli, runs), ratio = cm / dm;
    printf(
        "wide %s (%d rows x %d columns): decode_csv_lines %.3f CPU-s (%.3f..%.3f), tfq-cat -n 0 "
        "-o none %.3f CPU-s (%.3f..%.3f); median of %d interleaved runs\n",
        shapes[s].name, shapes[s].rows, shapes[s].cols, dm, dmin, dmax, cm, cmin, cmax, runs);
    printf("TARGET wide %s tfq-cat / decode_csv_lines CPU <= 2x: %.2fx %s\n", shapes[s].name, ratio,
           ratio <= 2 ? "met" : "missed");
    missed |= ratio > 2;
    remove(path);
  }
  return 0;
}
