/* TFRecord: CRC32C (software and hardware against the check value), writer → reader round trips
 * over random records (empty to 1 MiB, plain/ZLIB/GZIP), a flipped byte anywhere, a file cut at
 * every length.  White-box: calls tfq__crc32c_* from the static library. */
#include "readers/readers_internal.h"
#include "readers_util.h"

TestSuite(tfrecord, .init = tmp_setup, .fini = tmp_teardown);

Test(tfrecord, crc32c_check_value_software_and_hardware) {
  cr_assert_eq(tfq__crc32c_sw(0, "123456789", 9), 0xE3069283u);
  cr_assert_eq(tfq_crc32c_extend(0, "123456789", 9), 0xE3069283u);
  if (tfq__crc32c_hw_available()) {
    cr_assert_eq(tfq__crc32c_hw(0, "123456789", 9), 0xE3069283u);
  } else {
    cr_log_warn("SSE4.2 not available: hardware CRC32C not tested");
  }
  /* both agree on every length and alignment, and extend in pieces */
  unsigned char buf[300];
  for (int i = 0; i < 300; i++) buf[i] = (unsigned char)(i * 7 + 3);
  for (size_t off = 0; off < 9; off++)
    for (size_t n = 0; n + off <= 300; n += 13) {
      uint32_t a = tfq__crc32c_sw(0, buf + off, n);
      if (tfq__crc32c_hw_available()) cr_assert_eq(a, tfq__crc32c_hw(0, buf + off, n));
      cr_assert_eq(
          a, tfq__crc32c_sw(tfq__crc32c_sw(0, buf + off, n / 2), buf + off + n / 2, n - n / 2));
    }
  cr_assert_eq(tfq_crc32c_mask(0), 0xA282EAD8u);
  cr_assert_eq(tfq_crc32c_unmask(tfq_crc32c_mask(0x12345678u)), 0x12345678u);
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

typedef struct {
  int n;
  size_t len[64];
  unsigned char *data[64];
} recs;

static void make_recs(recs *r, int n, size_t maxlen) {
  r->n = n;
  for (int i = 0; i < n; i++) {
    size_t len = i == 0 ? 0 : i == 1 ? maxlen : (size_t)(rnd() % (i % 4 == 0 ? maxlen : 300));
    r->len[i] = len;
    r->data[i] = malloc(len + 1);
    for (size_t j = 0; j < len; j++) r->data[i][j] = (unsigned char)rnd();
  }
}
static void free_recs(recs *r) {
  for (int i = 0; i < r->n; i++) free(r->data[i]);
}

static const char *write_recs(const char *name, const recs *r, tfq_compression c) {
  const char *p = path_of(name);
  tfq_tfrecord_writer *w;
  cr_assert_eq(tfq_tfrecord_writer_new(p, c, &w, NULL), TFQ_OK);
  for (int i = 0; i < r->n; i++) {
    cr_assert_eq(tfq_tfrecord_writer_write(w, r->data[i], r->len[i], NULL), TFQ_OK);
    if (i == 3) cr_assert_eq(tfq_tfrecord_writer_flush(w, NULL), TFQ_OK);
  }
  cr_assert_eq(tfq_tfrecord_writer_close(w, NULL), TFQ_OK);
  cr_assert_eq(tfq_tfrecord_writer_write(w, "x", 1, NULL), TFQ_FAILED_PRECONDITION);
  tfq_tfrecord_writer_free(w);
  return p;
}

/* Reads `f` with read_up_to(5); checks records [0, k) against `r`; returns the final code and
 * copies its message. */
static tfq_code read_back(const char *f, const recs *r, tfq_compression c, int compat, int *k,
                          char *msg) {
  tfq_queue *q = work_of(&f, 1);
  tfq_reader_options *o = opts();
  tfq_reader_options_set_compression(o, c);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader_options_set_buffer_bytes(o, 4096);
  tfq_reader *rd = new_reader(TFQ_READER_TFRECORD, o);
  tfq_status *st = tfq_status_new();
  tfq_tensor *keys, *vals;
  tfq_code code;
  *k = 0;
  uint64_t off = 0;
  while ((code = tfq_reader_read_up_to(rd, q, 5, &keys, &vals, NULL, st)) == TFQ_OK) {
    for (int64_t i = 0; i < tfq_tensor_num_elements(vals); i++, (*k)++) {
      cr_assert_lt(*k, r->n);
      size_t len;
      const char *p = tfq_tensor_string(vals, i, &len);
      cr_assert_eq(len, r->len[*k], "record %d: %zu != %zu", *k, len, r->len[*k]);
      cr_assert(len == 0 || memcmp(p, r->data[*k], len) == 0);
      char key[600];
      snprintf(key, sizeof key, "%s:%llu", f, (unsigned long long)off);
      cr_assert_str_eq(S(keys, i), key);
      off += r->len[*k] + 16;
    }
    tfq_tensor_free(keys);
    tfq_tensor_free(vals);
  }
  snprintf(msg, 1024, "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_reader_free(rd);
  tfq_reader_options_free(o);
  tfq_queue_free(q);
  return code;
}

static void round_trip(tfq_compression c) {
  recs r;
  make_recs(&r, 24, 1u << 20);
  const char *f = write_recs("rt", &r, c);
  int k;
  char msg[1024];
  cr_assert_eq(read_back(f, &r, c, 0, &k, msg), TFQ_OUT_OF_RANGE, "%s", msg);
  cr_assert_eq(k, r.n);
  free_recs(&r);
}
Test(tfrecord, round_trip_plain) { round_trip(TFQ_COMPRESSION_NONE); }
Test(tfrecord, round_trip_zlib) { round_trip(TFQ_COMPRESSION_ZLIB); }
Test(tfrecord, round_trip_gzip) { round_trip(TFQ_COMPRESSION_GZIP); }

Test(tfrecord, gzip_output_is_standard_gzip) {
  recs r;
  make_recs(&r, 3, 100);
  const char *f = write_recs("std.gz", &r, TFQ_COMPRESSION_GZIP);
  const char *g = write_recs("std", &r, TFQ_COMPRESSION_NONE);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s' | cmp -s - '%s'", f, g);
  cr_assert_eq(system(cmd), 0);
  free_recs(&r);
}

/* Record boundaries of r: starts[i] = offset of record i, starts[n] = file size. */
static void starts_of(const recs *r, uint64_t *starts) {
  starts[0] = 0;
  for (int i = 0; i < r->n; i++) starts[i + 1] = starts[i] + r->len[i] + 16;
}

Test(tfrecord, flipped_byte_anywhere_is_data_loss_at_the_right_offset) {
  recs r;
  make_recs(&r, 6, 40);
  const char *f = write_recs("flip", &r, TFQ_COMPRESSION_NONE);
  size_t n;
  char *orig = read_all(f, &n);
  uint64_t starts[8];
  starts_of(&r, starts);
  cr_assert_eq(starts[r.n], n);
  for (size_t pos = 0; pos < n; pos++) {
    int rec = 0;
    while (starts[rec + 1] <= pos) rec++;
    orig[pos] ^= 0x20;
    write_file("flip", orig, n);
    orig[pos] ^= 0x20;
    int k;
    char msg[1024], want[128];
    cr_assert_eq(read_back(f, &r, 0, 0, &k, msg), TFQ_DATA_LOSS, "pos %zu: %s", pos, msg);
    cr_assert_eq(k, rec, "pos %zu", pos);
    uint64_t o = starts[rec];
    if (pos < o + 12)
      snprintf(want, sizeof want,
               o ? "corrupted record at %llu"
                 : "corrupted record at %llu (Is this even a TFRecord file?)",
               (unsigned long long)o);
    else
      snprintf(want, sizeof want, "corrupted record at %llu", (unsigned long long)(o + 12));
    /* a flipped length can also make the record look truncated or too large: it is then
     * caught by the length CRC first, so the message is always "corrupted" */
    cr_assert_str_eq(msg, want, "pos %zu", pos);
  }
  free(orig);
  free_recs(&r);
}

static void cut_everywhere(int compat) {
  recs r;
  make_recs(&r, 5, 30);
  const char *f = write_recs("cut", &r, TFQ_COMPRESSION_NONE);
  size_t n;
  char *orig = read_all(f, &n);
  uint64_t starts[8];
  starts_of(&r, starts);
  for (size_t len = 0; len <= n; len++) {
    int rec = 0;
    while (rec < r.n && starts[rec + 1] <= len) rec++;
    write_file("cut", orig, len);
    int k;
    char msg[1024], want[160];
    tfq_code c = read_back(f, &r, 0, compat, &k, msg);
    cr_assert_eq(k, rec, "len %zu: %d records", len, k);
    uint64_t o = starts[rec];
    if (len == o) {
      cr_assert_eq(c, TFQ_OUT_OF_RANGE, "len %zu: %s", len, msg);
    } else if (len - o < 12) {
      if (compat) {
        cr_assert_eq(c, TFQ_OUT_OF_RANGE, "len %zu: %s", len, msg); /* TF: silent end */
      } else {
        cr_assert_eq(c, TFQ_DATA_LOSS, "len %zu", len);
        snprintf(want, sizeof want, "truncated record header at %llu", (unsigned long long)o);
        cr_assert(strstr(msg, want), "len %zu: %s", len, msg);
      }
    } else {
      cr_assert_eq(c, TFQ_DATA_LOSS, "len %zu", len);
      snprintf(want, sizeof want,
               "truncated record at %llu' failed with Read less bytes than requested",
               (unsigned long long)o);
      cr_assert_str_eq(msg, want, "len %zu", len);
    }
  }
  free(orig);
  free_recs(&r);
}
Test(tfrecord, cut_at_every_length_is_data_loss_by_default) { cut_everywhere(0); }
Test(tfrecord, cut_at_every_length_follows_tf_with_tf_compat) { cut_everywhere(1); }

static void cut_compressed(tfq_compression c) {
  recs r;
  make_recs(&r, 8, 2000);
  const char *f = write_recs("cz", &r, c);
  size_t n;
  char *orig = read_all(f, &n);
  for (size_t len = 1; len < n; len += 1 + len / 3) {
    write_file("cz", orig, len);
    for (int compat = 0; compat < 2; compat++) {
      int k;
      char msg[1024];
      tfq_code code = read_back(f, &r, c, compat, &k, msg);
      cr_assert_lt(k, r.n);
      if (compat) {
        /* TF: the records that inflated completely, then a silent end or "truncated record" */
        cr_assert(code == TFQ_OUT_OF_RANGE || code == TFQ_DATA_LOSS, "len %zu: %s", len, msg);
      } else {
        cr_assert_eq(code, TFQ_DATA_LOSS, "len %zu: %s", len, msg);
        cr_assert(strstr(msg, "truncated") || strstr(msg, "inflate"), "len %zu: %s", len, msg);
      }
    }
  }
  free(orig);
  free_recs(&r);
}
Test(tfrecord, cut_compressed_file_is_data_loss_after_complete_records_zlib) {
  cut_compressed(TFQ_COMPRESSION_ZLIB);
}
Test(tfrecord, cut_compressed_file_is_data_loss_after_complete_records_gzip) {
  cut_compressed(TFQ_COMPRESSION_GZIP);
}

/* Every allocation can fail: a failing allocator gives RESOURCE_EXHAUSTED, never a crash or a
 * leak (ASan checks the leak part). */
static int g_fail_at, g_count;
static void *fail_malloc(size_t n) { return ++g_count == g_fail_at ? NULL : malloc(n); }
static void *fail_realloc(void *p, size_t n) {
  return ++g_count == g_fail_at ? NULL : realloc(p, n);
}

Test(tfrecord, allocation_failures_are_resource_exhausted) {
  recs r;
  make_recs(&r, 4, 100);
  const char *f = write_recs("af.gz", &r, TFQ_COMPRESSION_GZIP);
  int ok_seen = 0;
  for (g_fail_at = 1; g_fail_at < 400 && !ok_seen; g_fail_at++) {
    g_count = 0;
    tfq_queue *q = work_of(&f, 1);
    cr_assert_eq(tfq_set_allocator(fail_malloc, fail_realloc, free), TFQ_OK);
    tfq_reader_options *o = NULL;
    tfq_reader *rd = NULL;
    tfq_code c = tfq_reader_options_new(&o, NULL);
    if (!c) {
      tfq_reader_options_set_compression(o, TFQ_COMPRESSION_GZIP);
      c = tfq_reader_new(TFQ_READER_TFRECORD, o, &rd, NULL);
    }
    tfq_tensor *k = NULL, *v = NULL;
    if (!c) c = tfq_reader_read_up_to(rd, q, 10, &k, &v, NULL, NULL);
    cr_assert(c == TFQ_OK || c == TFQ_RESOURCE_EXHAUSTED, "fail at %d: %s", g_fail_at,
              tfq_code_name(c));
    if (c == TFQ_OK) ok_seen = g_count < g_fail_at;
    tfq_tensor_free(k);
    tfq_tensor_free(v);
    tfq_reader_free(rd);
    tfq_reader_options_free(o);
    tfq_queue_free(q);
    cr_assert_eq(tfq_set_allocator(NULL, NULL, NULL), TFQ_OK);
  }
  cr_assert(ok_seen);
  free_recs(&r);
}
