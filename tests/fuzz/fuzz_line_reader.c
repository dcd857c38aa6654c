/* libFuzzer target: TextLineReader over arbitrary bytes, through the public reader API.
 *
 * Input layout: byte 0 = mode, byte 1 = options, byte 2 = buffer size, byte 3 = truncation,
 * the rest = the file payload (missing header bytes read as 0).
 *   mode & 3      0 plain; 1 payload gzip-compressed here; 2 zlib-compressed here; 3 the payload
 *                 given raw to the reader as a compressed file (mode & 4: ZLIB, else GZIP), to
 *                 exercise corrupt-stream errors
 *   mode & 8      read_up_to (else read)
 *   mode & 16     tf_compat_truncation
 *   opts & 3      skip_header_lines 0..3
 *   opts >> 2 & 3 max_line_bytes: default, 1, 16, 200
 *   opts >> 4     read_up_to batch size - 1
 *   byte 2        buffer_bytes = 64 + 4 * byte
 *   byte 3        compressed modes 1/2: drop that many bytes off the end of the compressed file
 * Invariants: for plain and intact compressed input the lines returned, in order, are exactly
 * the input's lines (split at '\n', one trailing '\r' removed, a non-empty final fragment, the
 * header skipped) with keys "<file>:<line>"; the only failure allowed is RESOURCE_EXHAUSTED for
 * a line over max_line_bytes.  A truncated stream gives a prefix then DATA_LOSS (or, with
 * tf_compat_truncation, a prefix whose last line may be cut); a compressed file cut to 0 bytes
 * is an empty stream (no lines, no error).  Every failure is a tfq code with
 * a message; nothing leaks (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  const char *p;
  size_t len;
} span;

/* The lines TextLineReader must produce for `s` (reader.h, docs/readers.md), before skipping. */
static size_t split_lines(const char *s, size_t n, span *out) {
  size_t k = 0, start = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\n') {
      size_t len = i - start;
      if (len && s[start + len - 1] == '\r') len--;
      out[k].p = s + start;
      out[k++].len = len;
      start = i + 1;
    }
  if (start < n) {
    size_t len = n - start;
    if (s[start + len - 1] == '\r') len--;
    if (len) {
      out[k].p = s + start;
      out[k++].len = len;
    }
  }
  return k;
}

static fuzz_file g_file;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t hdr[4] = {0, 0, 0, 0};
  size_t h = size < 4 ? size : 4;
  memcpy(hdr, data, h);
  const char *payload = (const char *)data + h;
  size_t plen = size - h;
  int mode = hdr[0] & 3, batch = (hdr[0] & 8) != 0, compat = (hdr[0] & 16) != 0;
  int64_t skip = hdr[1] & 3;
  static const size_t max_lines[4] = {TFQ_DEFAULT_MAX_LINE_BYTES, 1, 16, 200};
  size_t max_line = max_lines[(hdr[1] >> 2) & 3];
  int64_t n_batch = 1 + (hdr[1] >> 4);
  size_t buf_bytes = 64 + 4 * (size_t)hdr[2];

  if (g_file.fd == 0) fuzz_file_open(&g_file, "fuzz_line_reader");
  tfq_compression comp = TFQ_COMPRESSION_NONE;
  int checked = 1, truncated = 0, empty_file = 0;
  unsigned char *z = NULL;
  if (mode == 0) {
    fuzz_file_set(&g_file, payload, plen);
  } else if (mode == 1 || mode == 2) {
    size_t zlen;
    comp = mode == 1 ? TFQ_COMPRESSION_GZIP : TFQ_COMPRESSION_ZLIB;
    z = fuzz_deflate(payload, plen, mode == 1 ? 31 : 15, &zlen);
    size_t cut = hdr[3] < zlen ? hdr[3] : zlen;
    truncated = cut > 0 && cut < zlen;
    empty_file = cut == zlen; /* an empty file is an empty stream (zstream.c), not a cut one */
    fuzz_file_set(&g_file, z, zlen - cut);
  } else {
    comp = (hdr[0] & 4) ? TFQ_COMPRESSION_ZLIB : TFQ_COMPRESSION_GZIP;
    checked = 0;
    fuzz_file_set(&g_file, payload, plen);
  }

  span *want = malloc((plen + 1) * sizeof *want);
  FUZZ_CHECK(want != NULL);
  size_t nwant = empty_file ? 0 : split_lines(payload, plen, want);
  size_t first = (size_t)skip < nwant ? (size_t)skip : nwant;
  size_t longest = 0;
  for (size_t i = 0; i < nwant; i++)
    if (want[i].len > longest) longest = want[i].len;

  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);
  tfq_reader_options *o;
  FUZZ_CHECK(tfq_reader_options_new(&o, st) == TFQ_OK);
  tfq_reader_options_set_skip_header_lines(o, skip);
  tfq_reader_options_set_compression(o, comp);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader_options_set_max_line_bytes(o, max_line);
  tfq_reader_options_set_buffer_bytes(o, buf_bytes);
  tfq_reader *r;
  FUZZ_CHECK(tfq_reader_new(TFQ_READER_TEXT_LINE, o, &r, st) == TFQ_OK);
  tfq_reader_options_free(o);
  tfq_queue *work = fuzz_work_queue(g_file.path, st);

  size_t got = 0; /* lines received */
  int last_cut = 0;
  tfq_code end = TFQ_OK;
  for (int iter = 0; iter < 100000; iter++) {
    tfq_tensor *k, *v;
    int64_t m = fuzz_read(r, work, batch, n_batch, &k, &v, st, &end);
    if (m == 0) break;
    FUZZ_CHECK(!batch || tfq_tensor_dim(k, 0) == m);
    for (int64_t i = 0; i < m; i++) {
      size_t kl, vl;
      const char *ks = tfq_tensor_string(k, i, &kl), *vs = tfq_tensor_string(v, i, &vl);
      FUZZ_CHECK(ks != NULL && vs != NULL);
      if (checked) {
        FUZZ_CHECK(!last_cut);
        size_t idx = first + got;
        FUZZ_CHECK(idx < nwant);
        FUZZ_CHECK(fuzz_key_is(ks, kl, g_file.path, (unsigned long long)idx + 1));
        if (truncated && vl < want[idx].len && memcmp(vs, want[idx].p, vl) == 0) {
          FUZZ_CHECK(compat); /* a cut last line only when truncation is silent */
          last_cut = 1;
        } else {
          FUZZ_CHECK(vl == want[idx].len && memcmp(vs, want[idx].p, vl) == 0);
        }
      }
      got++;
    }
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  if (checked) {
    if (end == TFQ_OUT_OF_RANGE) {
      /* the normal end: every line, unless the stream was cut short and truncation is silent */
      FUZZ_CHECK(got == nwant - first || (truncated && compat));
    } else if (end == TFQ_RESOURCE_EXHAUSTED) {
      FUZZ_CHECK(longest > max_line);
    } else {
      FUZZ_CHECK(end == TFQ_DATA_LOSS && truncated && !compat);
    }
  } else {
    FUZZ_CHECK(end == TFQ_OUT_OF_RANGE || end == TFQ_DATA_LOSS || end == TFQ_RESOURCE_EXHAUSTED);
  }
  tfq_queue_free(work);
  tfq_reader_free(r);
  tfq_status_free(st);
  free(want);
  free(z);
  return 0;
}
