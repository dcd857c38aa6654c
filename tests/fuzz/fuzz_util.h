/* Helpers shared by the reader fuzz targets (test code, not part of the library): an in-memory
 * file reachable by path (memfd + /proc/self/fd), a closed one-file work queue and zlib/gzip
 * compression (from ../common/inputs.h), one checked read, and checks that failure codes are
 * proper tfq codes with a message.  Any broken invariant calls FUZZ_CHECK, which prints the
 * condition and aborts (a crash libFuzzer records). */
#ifndef TFQ_FUZZ_UTIL_H
#define TFQ_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tfq/tfq.h>
#include <unistd.h>

#include "../common/inputs.h"

#define FUZZ_CHECK(cond)                                                           \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                     \
    }                                                                              \
  } while (0)

/* A memfd kept for the whole process, so each input costs no file creation. */
typedef struct {
  int fd;
  char path[64];
} fuzz_file;

static inline void fuzz_file_open(fuzz_file *f, const char *name) {
  f->fd = memfd_create(name, 0);
  FUZZ_CHECK(f->fd >= 0);
  snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
}

/* Replaces the file's contents with data[0..n). */
static inline void fuzz_file_set(fuzz_file *f, const void *data, size_t n) {
  FUZZ_CHECK(ftruncate(f->fd, 0) == 0);
  const char *p = data;
  size_t off = 0;
  while (off < n) {
    ssize_t w = pwrite(f->fd, p + off, n - off, (off_t)off);
    FUZZ_CHECK(w > 0);
    off += (size_t)w;
  }
}

/* A closed FIFO work queue "work" holding the one filename `path`. */
static inline tfq_queue *fuzz_work_queue(const char *path, tfq_status *st) {
  tfq_queue *q;
  FUZZ_CHECK(test_work_queue(&path, 1, 4, "work", &q, st) == TFQ_OK);
  return q;
}

/* data[0..n) deflated with zlib's window_bits (15 zlib, 31 gzip); the caller frees. */
static inline unsigned char *fuzz_deflate(const void *data, size_t n, int window_bits,
                                          size_t *out_len) {
  unsigned char *z = test_deflate(data, n, window_bits, out_len);
  FUZZ_CHECK(z != NULL);
  return z;
}

/* A failure must carry a real tfq code (1..16) and a non-empty message. */
static inline void fuzz_check_failure(tfq_code c, const tfq_status *st) {
  FUZZ_CHECK(c > TFQ_OK && c <= TFQ_UNAUTHENTICATED);
  FUZZ_CHECK(tfq_status_code(st) == c);
  const char *m = tfq_status_message(st);
  FUZZ_CHECK(m != NULL && m[0] != 0);
}

/* One read of `r` from `work`: read_up_to(n_batch) when `batch`, else read.  Returns the number
 * of records in *k and *v (checked to be 1..n_batch), or 0 when the read failed, with its code in
 * *end (checked: a tfq code with a message, and no output).  FUZZ_VERBOSE in the environment
 * prints each failure. */
static inline int64_t fuzz_read(tfq_reader *r, tfq_queue *work, int batch, int64_t n_batch,
                                tfq_tensor **k, tfq_tensor **v, tfq_status *st, tfq_code *end) {
  *k = *v = NULL;
  tfq_code c = batch ? tfq_reader_read_up_to(r, work, n_batch, k, v, NULL, st)
                     : tfq_reader_read(r, work, k, v, NULL, st);
  if (c != TFQ_OK) {
    fuzz_check_failure(c, st);
    FUZZ_CHECK(*k == NULL && *v == NULL);
    if (getenv("FUZZ_VERBOSE"))
      fprintf(stderr, "%s: %s\n", tfq_code_name(c), tfq_status_message(st));
    *end = c;
    return 0;
  }
  int64_t m = batch ? tfq_tensor_dim(*v, 0) : 1;
  FUZZ_CHECK(m >= 1 && m <= n_batch);
  return m;
}

/* Key "<path>:<n>" check. */
static inline int fuzz_key_is(const char *k, size_t klen, const char *path, unsigned long long n) {
  char want[96];
  int w = snprintf(want, sizeof want, "%s:%llu", path, n);
  return w > 0 && (size_t)w == klen && memcmp(k, want, klen) == 0;
}

#endif
