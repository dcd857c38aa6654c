/* Helpers shared by the reader suites (test_readers.c, test_reader_edges.c, test_tfrecord.c,
 * test_producers.c, test_coord_edges.c), checked with Criterion: a scratch directory removed at
 * the end of each test, files, work queues, reads, and zlib/gzip compression of test data.  The
 * assertion-free parts, shared with tests/faults, tests/fuzz and tests/rss, are in
 * ../common/scratch.h and ../common/inputs.h. */
#ifndef TFQ_TEST_READERS_UTIL_H
#define TFQ_TEST_READERS_UTIL_H

#include <criterion/criterion.h>

/* Not every test file uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <unistd.h>
#include <zlib.h>

#include "../common/inputs.h"
#include "../common/scratch.h"

static void tmp_setup(void) { cr_assert_not_null(scratch_make("tfq_readers")); }
static void tmp_teardown(void) { scratch_remove(); }

/* Writes `name` in the scratch dir; returns its path (path_of: static rotating buffers). */
static const char *write_file(const char *name, const void *data, size_t len) {
  const char *p = path_of(name);
  cr_assert_eq(scratch_put(p, data, len, "wb"), 0, "writing %s: %s", p, strerror(errno));
  return p;
}

/* The contents of file p (malloc'd, NUL-terminated; the caller frees). */
static char *read_all(const char *p, size_t *len) {
  char *b = scratch_slurp(p, len);
  cr_assert_not_null(b, "reading %s", p);
  return b;
}

/* gzip (gz = 1) or zlib (gz = 0) of data; caller frees. */
static unsigned char *compress_buf(const void *data, size_t len, int gz, size_t *out_len) {
  unsigned char *out = test_deflate(data, len, gz ? 31 : 15, out_len);
  cr_assert_not_null(out, "deflate failed");
  return out;
}

static const char *write_compressed(const char *name, const void *data, size_t len, int gz) {
  size_t n = 0;
  unsigned char *c = compress_buf(data, len, gz, &n);
  const char *p = write_file(name, c, n);
  free(c);
  return p;
}

static tfq_queue *string_queue(int64_t cap) {
  tfq_spec *s;
  tfq_queue *q;
  cr_assert_eq(tfq_spec_new(&s, NULL), TFQ_OK);
  cr_assert_eq(tfq_spec_add(s, TFQ_STRING, NULL, 0, NULL, NULL), TFQ_OK);
  cr_assert_eq(tfq_fifo_queue_new(s, cap, NULL, &q, NULL), TFQ_OK);
  tfq_spec_free(s);
  return q;
}

static void enqueue_str(tfq_queue *q, const char *s) {
  tfq_tensor *t;
  tfq_tuple *tu;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, NULL, 0, &t, NULL), TFQ_OK);
  cr_assert_eq(tfq_tensor_set_string(t, 0, s, strlen(s), NULL), TFQ_OK);
  cr_assert_eq(tfq_tuple_new(1, &tu, NULL), TFQ_OK);
  tfq_tuple_set_take(tu, 0, t);
  cr_assert_eq(tfq_queue_enqueue(q, tu, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
  tfq_tuple_free(tu);
}

static void close_queue(tfq_queue *q) {
  cr_assert_eq(tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
}

/* A closed work queue holding `n` names. */
static tfq_queue *work_of(const char *const *names, int n) {
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(test_work_queue(names, n, -1, NULL, &q, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return q;
}

static tfq_reader *new_reader(tfq_reader_kind k, tfq_reader_options *o) {
  tfq_reader *r;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_reader_new(k, o, &r, st);
  cr_assert_eq(c, TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return r;
}

static tfq_reader_options *opts(void) {
  tfq_reader_options *o;
  cr_assert_eq(tfq_reader_options_new(&o, NULL), TFQ_OK);
  return o;
}

/* String element i of t as a NUL-terminated static copy (for comparisons). */
static const char *S(const tfq_tensor *t, int64_t i) {
  static char bufs[4][4096];
  static int k;
  char *b = bufs[k++ & 3];
  size_t len;
  const char *p = tfq_tensor_string(t, i, &len);
  if (len > 4095) len = 4095;
  memcpy(b, p, len);
  b[len] = 0;
  return b;
}

/* One read; expects OK and checks key and value (value compared with its length). */
static void expect_read(tfq_reader *r, tfq_queue *q, const char *key, const char *val,
                        size_t vlen) {
  tfq_tensor *k, *v;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_reader_read(r, q, &k, &v, NULL, st);
  cr_assert_eq(c, TFQ_OK, "expected %s, got %s: %s", key, tfq_code_name(c), tfq_status_message(st));
  cr_assert_eq(tfq_tensor_rank(k), 0);
  cr_assert_str_eq(S(k, 0), key);
  size_t len;
  const char *p = tfq_tensor_string(v, 0, &len);
  cr_assert_eq(len, vlen, "%s: value length %zu != %zu", key, len, vlen);
  cr_assert(memcmp(p, val, vlen) == 0, "%s: value differs", key);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  tfq_status_free(st);
}
#define EXPECT_READ(r, q, key, val) expect_read(r, q, key, val, strlen(val))

/* One read expected to fail with `code` and a message containing `sub`. */
static void expect_fail(tfq_reader *r, tfq_queue *q, tfq_code code, const char *sub) {
  tfq_tensor *k = NULL, *v = NULL;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_reader_read(r, q, &k, &v, NULL, st);
  cr_assert_eq(c, code, "expected %s, got %s: %s", tfq_code_name(code), tfq_code_name(c),
               c ? tfq_status_message(st) : S(k, 0));
  cr_assert_null(k);
  cr_assert_null(v);
  if (sub)
    cr_assert(strstr(tfq_status_message(st), sub), "message '%s' lacks '%s'",
              tfq_status_message(st), sub);
  tfq_status_free(st);
}

#endif
