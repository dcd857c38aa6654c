/* Helpers shared by test_readers.c, test_tfrecord.c and test_producers.c: a scratch directory
 * removed at the end of each test, files, work queues, and zlib/gzip compression of test data
 * (tests may call zlib; the library calls it from src/readers/zstream.c only). */
#ifndef TFQ_TEST_READERS_UTIL_H
#define TFQ_TEST_READERS_UTIL_H

#include <criterion/criterion.h>

/* Not every test file uses every helper. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <unistd.h>
#include <zlib.h>

static char g_dir[256];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f) {
  (void)sb;
  (void)flag;
  (void)f;
  return remove(p);
}
static void tmp_setup(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/tfq_readers_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
}
static void tmp_teardown(void) { nftw(g_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

/* Path of `name` in the scratch dir (static rotating buffers). */
static const char *path_of(const char *name) {
  static char bufs[8][512];
  static int k;
  char *b = bufs[k++ & 7];
  snprintf(b, 512, "%s/%s", g_dir, name);
  return b;
}

static const char *write_file(const char *name, const void *data, size_t len) {
  const char *p = path_of(name);
  FILE *f = fopen(p, "wb");
  cr_assert_not_null(f);
  if (len) cr_assert_eq(fwrite(data, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
  return p;
}

static char *read_all(const char *p, size_t *len) {
  FILE *f = fopen(p, "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* gzip (gz = 1) or zlib (gz = 0) of data; caller frees. */
static unsigned char *compress_buf(const void *data, size_t len, int gz, size_t *out_len) {
  z_stream z;
  memset(&z, 0, sizeof z);
  cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, gz ? 31 : 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t cap = deflateBound(&z, (uLong)len) + 64;
  unsigned char *out = malloc(cap);
  z.next_in = (Bytef *)(uintptr_t)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
  *out_len = cap - z.avail_out;
  deflateEnd(&z);
  return out;
}

static const char *write_compressed(const char *name, const void *data, size_t len, int gz) {
  size_t n;
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
  tfq_queue *q = string_queue(-1);
  for (int i = 0; i < n; i++) enqueue_str(q, names[i]);
  close_queue(q);
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
