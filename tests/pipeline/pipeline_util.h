/* Shared helpers of the pipeline suite: TAP output, fatal checks, a temp dir of CSV files.
 * Functions are static inline so a program may include this and use only some of them. */
#ifndef TFQ_TESTS_PIPELINE_UTIL_H
#define TFQ_TESTS_PIPELINE_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

static int tap_n, tap_failed;

static inline void tap(int ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
  if (!ok) tap_failed++;
}

static inline void die_on(tfq_code c, tfq_status *st, const char *what) {
  if (c == TFQ_OK) return;
  printf("Bail out! %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  fflush(stdout);
  exit(1);
}

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* A temp dir holding `nfiles` CSV files "fNN.csv"; file i has lines_of(i) lines "i,j". */
typedef struct csv_dir {
  char dir[256];
  int nfiles;
  char (*paths)[300];
} csv_dir;

static inline void csv_dir_make(csv_dir *d, int nfiles, int (*lines_of)(int)) {
  snprintf(d->dir, sizeof d->dir, "%s/tfq_pipeline_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(d->dir)) {
    printf("Bail out! mkdtemp %s\n", d->dir);
    exit(1);
  }
  d->nfiles = nfiles;
  d->paths = calloc((size_t)nfiles, sizeof *d->paths);
  if (!d->paths) exit(1);
  for (int i = 0; i < nfiles; i++) {
    snprintf(d->paths[i], sizeof d->paths[i], "%s/f%02d.csv", d->dir, i);
    FILE *f = fopen(d->paths[i], "w");
    if (!f) {
      printf("Bail out! cannot create %s\n", d->paths[i]);
      exit(1);
    }
    for (int j = 1; j <= lines_of(i); j++) fprintf(f, "%d,%d\n", i, j);
    fclose(f);
  }
}

static inline void csv_dir_remove(csv_dir *d) {
  for (int i = 0; i < d->nfiles; i++) unlink(d->paths[i]);
  rmdir(d->dir);
  free(d->paths);
}

/* A 1-D string tensor of the file names. */
static inline tfq_tensor *filenames_tensor(const csv_dir *d, tfq_status *st) {
  int64_t n = d->nfiles;
  tfq_tensor *t;
  die_on(tfq_tensor_new(TFQ_STRING, &n, 1, &t, st), st, "filenames tensor");
  for (int i = 0; i < d->nfiles; i++)
    die_on(tfq_tensor_set_string(t, i, d->paths[i], strlen(d->paths[i]), st), st, "set_string");
  return t;
}

/* A spec of `n` scalar components of `dt`. */
static inline tfq_spec *scalar_spec(tfq_dtype dt, int n, tfq_status *st) {
  tfq_spec *s;
  die_on(tfq_spec_new(&s, st), st, "spec");
  for (int i = 0; i < n; i++) die_on(tfq_spec_add(s, dt, NULL, 0, NULL, st), st, "spec");
  return s;
}

#endif
