/* Helpers shared by the reader fuzz targets (test code, not part of the library): an in-memory
 * file reachable by path (memfd + /proc/self/fd), a closed one-file work queue, and checks that
 * failure codes are proper tfq codes with a message.  Any broken invariant calls FUZZ_CHECK,
 * which prints the condition and aborts (a crash libFuzzer records). */
#ifndef TFQ_FUZZ_UTIL_H
#define TFQ_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <tfq/tfq.h>
#include <unistd.h>

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

/* A closed FIFO work queue holding the one filename `path`. */
static inline tfq_queue *fuzz_work_queue(const char *path, tfq_status *st) {
  tfq_spec *spec;
  tfq_queue *q;
  tfq_tensor *name;
  tfq_tuple *t;
  FUZZ_CHECK(tfq_spec_new(&spec, st) == TFQ_OK);
  FUZZ_CHECK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st) == TFQ_OK);
  FUZZ_CHECK(tfq_fifo_queue_new(spec, 4, "work", &q, st) == TFQ_OK);
  tfq_spec_free(spec);
  FUZZ_CHECK(tfq_tensor_new(TFQ_STRING, NULL, 0, &name, st) == TFQ_OK);
  FUZZ_CHECK(tfq_tensor_set_string(name, 0, path, strlen(path), st) == TFQ_OK);
  FUZZ_CHECK(tfq_tuple_new(1, &t, st) == TFQ_OK);
  tfq_tuple_set_take(t, 0, name);
  FUZZ_CHECK(tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st) == TFQ_OK);
  tfq_tuple_free(t);
  FUZZ_CHECK(tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st) == TFQ_OK);
  return q;
}

/* A failure must carry a real tfq code (1..16) and a non-empty message. */
static inline void fuzz_check_failure(tfq_code c, const tfq_status *st) {
  FUZZ_CHECK(c > TFQ_OK && c <= TFQ_UNAUTHENTICATED);
  FUZZ_CHECK(tfq_status_code(st) == c);
  const char *m = tfq_status_message(st);
  FUZZ_CHECK(m != NULL && m[0] != 0);
}

/* Key "<path>:<n>" check. */
static inline int fuzz_key_is(const char *k, size_t klen, const char *path, unsigned long long n) {
  char want[96];
  int w = snprintf(want, sizeof want, "%s:%llu", path, n);
  return w > 0 && (size_t)w == klen && memcmp(k, want, klen) == 0;
}

#endif
