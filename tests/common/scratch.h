/* A scratch directory for tests that write files (tests only; shared by tests/unit/readers_util.h
 * and tests/faults/test_faults.c): a fresh directory per test, removed with its contents after
 * it, the paths of files in it, and writing and reading whole files.
 *
 * Nothing here asserts: the callers check the results with their own checks (Criterion's
 * cr_assert, or test_faults' REQUIRE, which also reports from a forked child).  One directory
 * per process at a time (Criterion runs each test in its own process). */
#ifndef TFQ_TEST_SCRATCH_H
#define TFQ_TEST_SCRATCH_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The current test's directory (set by scratch_make). */
static char g_dir[256];

static inline int scratch_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb;
  (void)flag;
  (void)f;
  return remove(p);
}

/* Makes a fresh directory /tmp/<prefix>_XXXXXX and names it in g_dir; returns g_dir, or NULL
 * (errno set). */
static inline char *scratch_make(const char *prefix) {
  snprintf(g_dir, sizeof g_dir, "/tmp/%s_XXXXXX", prefix);
  return mkdtemp(g_dir);
}

/* Removes g_dir and everything in it. */
static inline void scratch_remove(void) { nftw(g_dir, scratch_rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* Path of `name` in g_dir (one of 16 static buffers used in turn: valid for the next 15 calls). */
static inline const char *path_of(const char *name) {
  static char bufs[16][512];
  static int k;
  char *b = bufs[k++ & 15];
  snprintf(b, 512, "%s/%s", g_dir, name);
  return b;
}

/* Writes data[0..len) to the file p opened with fopen `mode` ("wb", "ab"); 0, or -1 (errno set
 * where the C library sets it). */
static inline int scratch_put(const char *p, const void *data, size_t len, const char *mode) {
  FILE *f = fopen(p, mode);
  if (!f) return -1;
  int bad = len && fwrite(data, 1, len, f) != len;
  if (fclose(f) != 0) bad = 1;
  return bad ? -1 : 0;
}

/* The contents of the file p in a malloc'd buffer with a NUL after them (the caller frees), their
 * length in *len; NULL if the file cannot be read. */
static inline char *scratch_slurp(const char *p, size_t *len) {
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  char *b = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)) != NULL &&
      fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (!b) return NULL;
  b[n] = 0;
  *len = (size_t)n;
  return b;
}

#endif
