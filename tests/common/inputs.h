/* Reader inputs for tests (tests only; shared by tests/unit/readers_util.h, tests/faults,
 * tests/fuzz and tests/rss): a closed work queue of file names, and zlib/gzip compression of test
 * data (tests may call zlib; the library calls it from src/readers/zstream.c only).
 *
 * Nothing here asserts: each caller checks the result with its own check (cr_assert, REQUIRE,
 * FUZZ_CHECK, or an exit).  Public headers only. */
#ifndef TFQ_TEST_INPUTS_H
#define TFQ_TEST_INPUTS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <zlib.h>

/* A closed FIFOQueue of string scalars (capacity `cap`, name `qname` or NULL for a generated
 * one) holding the n file names, as a string_input_producer leaves it at the end of input.
 * Returns TFQ_OK with the queue in *out, or the failing call's code (message in st) with *out
 * NULL. */
static inline tfq_code test_work_queue(const char *const *names, int n, int64_t cap,
                                       const char *qname, tfq_queue **out, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_queue *q = NULL;
  *out = NULL;
  tfq_code c = tfq_spec_new(&spec, st);
  if (c == TFQ_OK) c = tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st);
  if (c == TFQ_OK) c = tfq_fifo_queue_new(spec, cap, qname, &q, st);
  tfq_spec_free(spec);
  for (int i = 0; c == TFQ_OK && i < n; i++) {
    tfq_tensor *name = NULL;
    tfq_tuple *t = NULL;
    c = tfq_tensor_new(TFQ_STRING, NULL, 0, &name, st);
    if (c == TFQ_OK) c = tfq_tensor_set_string(name, 0, names[i], strlen(names[i]), st);
    if (c == TFQ_OK) c = tfq_tuple_new(1, &t, st);
    if (c == TFQ_OK) {
      tfq_tuple_set_take(t, 0, name);
      name = NULL;
      c = tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st);
    }
    tfq_tensor_free(name);
    tfq_tuple_free(t);
  }
  if (c == TFQ_OK) c = tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st);
  if (c != TFQ_OK) {
    tfq_queue_free(q);
    return c;
  }
  *out = q;
  return TFQ_OK;
}

/* data[0..len) deflated at level 6 with zlib's `window_bits` (15: zlib stream, 31: gzip
 * member) into a malloc'd buffer (the caller frees), its length in *out_len; NULL on failure. */
static inline unsigned char *test_deflate(const void *data, size_t len, int window_bits,
                                          size_t *out_len) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
  size_t cap = deflateBound(&z, (uLong)len) + 64;
  unsigned char *out = malloc(cap);
  if (out) {
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
      *out_len = cap - z.avail_out;
    } else {
      free(out);
      out = NULL;
    }
  }
  deflateEnd(&z);
  return out;
}

#endif
