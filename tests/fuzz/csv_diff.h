/* Differential harness shared by the libFuzzer target and the unit test: decodes the same records
 * with the same options through the three tokenizer paths (auto = fast path + libcsv for quoted
 * records, libcsv for every record, scalar reference) and reports any difference in the code, the
 * message or the outputs; and the same records as the lines of one buffer through the read-decode
 * op's decode in place (tfq__decode_csv_span).  White-box: uses src/csv/csv_internal.h and
 * src/csv/csv_shared.h.
 *
 * Input layout: byte 0 flags (bit0 use_quote_delim, bits1-2 delimiter: ',' '\t' '|' or byte 6,
 * bit3 na_value "NA", bit4 select_cols from byte 7), byte 1 column count (1 + b % 4),
 * bytes 2..5 per-column dtype (b % 5: string, int32, float, double, int64; bit 3 required),
 * byte 6 custom delimiter, byte 7 selection bit mask; the rest are records separated by 0xFF. */
#ifndef TFQ_CSV_DIFF_H
#define TFQ_CSV_DIFF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

#include "../../src/csv/csv_internal.h"
#include "../../src/csv/csv_shared.h"
#include "../../src/csv/csv_simd.h"

#define CSV_DIFF_MAX_RECS 64

static int csv_diff_same_tensor(const tfq_tensor *a, const tfq_tensor *b) {
  if (tfq_tensor_dtype(a) != tfq_tensor_dtype(b)) return 0;
  if (tfq_tensor_num_elements(a) != tfq_tensor_num_elements(b)) return 0;
  if (tfq_tensor_dtype(a) == TFQ_STRING) {
    for (int64_t i = 0; i < tfq_tensor_num_elements(a); i++) {
      size_t la, lb;
      const char *pa = tfq_tensor_string(a, i, &la), *pb = tfq_tensor_string(b, i, &lb);
      if (la != lb || memcmp(pa, pb, la) != 0) return 0;
    }
    return 1;
  }
  return memcmp(tfq_tensor_cdata(a), tfq_tensor_cdata(b), tfq_tensor_byte_size(a)) == 0;
}

/* The read-decode op's decode of lines where they lie in a reader's buffer
 * (tfq__decode_csv_span): the records as the lines of one buffer, each ended by '\n', against
 * the auto path's result (code `rc`, message `msg`, outputs `out`).  Records a line cannot carry
 * (a '\n' inside, or a last '\r' that TextLineReader would take for half of "\r\n") are
 * skipped.  Returns 1 on a difference. */
static int csv_diff_span(const tfq_csv_options *o, const char *const *recs, const size_t *lens,
                         size_t n, tfq_code rc, const char *msg, tfq_tuple *out) {
  size_t total = 0;
  for (size_t r = 0; r < n; r++) {
    if (memchr(recs[r], '\n', lens[r]) || (lens[r] && recs[r][lens[r] - 1] == '\r')) return 0;
    total += lens[r] + 1;
  }
  char *buf = malloc(total ? total : 1);
  tfq_status *st = tfq_status_new();
  tfq_tuple *got = NULL;
  if (!buf || !st || tfq_tuple_new(tfq_csv_options_num_columns(o), &got, NULL)) abort();
  size_t at = 0, count = 0, used = 0;
  for (size_t r = 0; r < n; r++) {
    if (lens[r]) memcpy(buf + at, recs[r], lens[r]);
    at += lens[r];
    buf[at++] = '\n';
  }
  int64_t one = 1;
  tfq_tensor *holder; /* the string fields taken as they are point into buf, kept by holder */
  if (tfq_tensor_new(TFQ_UINT8, &one, 1, &holder, NULL)) abort();
  tfq_code c = tfq__decode_csv_span(o, buf, total, holder, n, got, NULL, &count, &used, st);
  char m[256]; /* cut as csv_diff_run cuts the paths' messages */
  snprintf(m, sizeof m, "%s", tfq_status_message(st));
  int differ = c != rc || strcmp(m, msg) != 0;
  if (!differ && c == TFQ_OK) {
    differ = count != n || used != total;
    for (size_t k = 0; k < tfq_csv_options_num_columns(o) && !differ; k++)
      if (!csv_diff_same_tensor(tfq_tuple_get(out, k), tfq_tuple_get(got, k))) differ = 1;
  }
  if (differ) {
    fprintf(stderr, "csv_diff: the span decode differs from auto: [%s] vs [%s]; buffer:\n  \"",
            tfq_status_message(st), msg);
    for (size_t j = 0; j < total; j++) fprintf(stderr, "\\x%02x", (unsigned char)buf[j]);
    fprintf(stderr, "\"\n");
  }
  tfq_tuple_free(got);
  if (tfq_tensor_refcount(holder) != 1) {
    fprintf(stderr, "csv_diff: the span decode's outputs leave %lld references to the holder\n",
            (long long)tfq_tensor_refcount(holder) - 1);
    differ = 1;
  }
  tfq_tensor_free(holder);
  tfq_status_free(st);
  free(buf);
  return differ;
}

/* The options the input's first 8 bytes give (layout above), or NULL (too short, or options
 * the library refuses); *ncol: their column count. */
static tfq_csv_options *csv_diff_options(const uint8_t *data, size_t size, size_t *ncol_out) {
  if (size < 8) return NULL;
  tfq_csv_options *o;
  if (tfq_csv_options_new(&o, NULL)) return NULL;
  uint8_t fl = data[0];
  tfq_csv_options_set_use_quote_delim(o, fl & 1);
  static const char delims[3] = {',', '\t', '|'};
  char d = ((fl >> 1) & 3) == 3 ? (char)data[6] : delims[(fl >> 1) & 3];
  int bad = 0;
  if (tfq_csv_options_set_field_delim(o, &d, 1, NULL)) bad = 1;
  if ((fl & 8) && tfq_csv_options_set_na_value(o, "NA", 2, NULL)) bad = 1;
  size_t ncol = 1 + data[1] % 4;
  for (size_t c = 0; c < ncol && !bad; c++) {
    static const tfq_dtype dts[5] = {TFQ_STRING, TFQ_INT32, TFQ_FLOAT, TFQ_DOUBLE, TFQ_INT64};
    tfq_dtype dt = dts[data[2 + c] % 5];
    tfq_code rc;
    if (data[2 + c] & 8) {
      rc = tfq_csv_options_add_required(o, dt, NULL);
    } else {
      switch (dt) {
        case TFQ_INT32: rc = tfq_csv_options_add_default_int32(o, -7, NULL); break;
        case TFQ_FLOAT: rc = tfq_csv_options_add_default_float(o, -1.5f, NULL); break;
        case TFQ_DOUBLE: rc = tfq_csv_options_add_default_double(o, 2.25, NULL); break;
        case TFQ_INT64: rc = tfq_csv_options_add_default_int64(o, 1LL << 40, NULL); break;
        default: rc = tfq_csv_options_add_default_string(o, "dflt", 4, NULL); break;
      }
    }
    if (rc) bad = 1;
  }
  if (!bad && (fl & 16)) {
    int64_t cols[8];
    size_t k = 0;
    for (int b = 0; b < 8 && k < ncol; b++)
      if (data[7] & (1 << b)) cols[k++] = b;
    if (k == ncol && tfq_csv_options_set_select_cols(o, cols, k, NULL)) bad = 1;
  }
  if (bad) {
    tfq_csv_options_free(o);
    return NULL;
  }
  *ncol_out = ncol;
  return o;
}

/* Returns 0 when the three paths agree (or the input is too short), 1 otherwise. */
static int csv_diff_run(const uint8_t *data, size_t size) {
  size_t ncol;
  tfq_csv_options *o = csv_diff_options(data, size, &ncol);
  if (!o) return 0;
  const char *recs[CSV_DIFF_MAX_RECS];
  size_t lens[CSV_DIFF_MAX_RECS], n = 0;
  const char *p = (const char *)data + 8, *end = (const char *)data + size;
  while (p <= end && n < CSV_DIFF_MAX_RECS) {
    const char *e = memchr(p, 0xFF, (size_t)(end - p));
    if (!e) e = end;
    recs[n] = p;
    lens[n++] = (size_t)(e - p);
    p = e + 1;
  }
  int differ = 0;
  /* The whole batch, then each record alone (the first error hides later records). */
  for (size_t start = 0; start <= n && !differ; start++) {
    size_t cnt = start == 0 ? n : 1;
    size_t off = start == 0 ? 0 : start - 1;
    int64_t dim = (int64_t)cnt;
    tfq_tuple *out[3] = {NULL, NULL, NULL};
    tfq_code rc[3];
    char msg[3][256];
    for (int path = 0; path < 3; path++) {
      tfq_status *st = tfq_status_new();
      if (!st) abort();
      rc[path] = tfq__decode_csv_path(o, recs + off, lens + off, cnt, &dim, 1, (tfq__csv_path)path,
                                      &out[path], st);
      snprintf(msg[path], sizeof msg[path], "%s", tfq_status_message(st));
      tfq_status_free(st);
    }
    for (int path = 1; path < 3 && !differ; path++) {
      if (rc[path] != rc[0] || strcmp(msg[path], msg[0]) != 0) {
        differ = 1;
      } else if (rc[0] == TFQ_OK) {
        for (size_t c = 0; c < ncol; c++)
          if (!csv_diff_same_tensor(tfq_tuple_get(out[0], c), tfq_tuple_get(out[path], c)))
            differ = 1;
      }
      if (differ) {
        fprintf(stderr, "csv_diff: path %d differs from auto: [%s] vs [%s]; records:\n", path,
                msg[path], msg[0]);
        for (size_t r = off; r < off + cnt; r++) {
          fprintf(stderr, "  \"");
          for (size_t j = 0; j < lens[r]; j++)
            fprintf(stderr, "\\x%02x", (unsigned char)recs[r][j]);
          fprintf(stderr, "\"\n");
        }
      }
    }
    if (start == 0 && !differ) differ = csv_diff_span(o, recs, lens, n, rc[0], msg[0], out[0]);
    for (int path = 0; path < 3; path++) tfq_tuple_free(out[path]);
  }
  tfq_csv_options_free(o);
  return differ;
}

/* The structural scan's levels (src/csv/csv_simd.h) on one input: csv_diff_run under each level
 * the CPU has (each level's fast paths against the scalar reference tokenizer, whose scan has no
 * levels), and the input's records as the lines of one buffer (tfq_decode_csv_buffer: the line
 * count, the line splitter and the fused decoder) decoded under each level against the scalar
 * level: the same code, message and outputs.  Leaves the level to TFQ_SIMD / the CPU.  Returns 0
 * when all agree, 1 otherwise. */
static int csv_diff_levels(const uint8_t *data, size_t size) {
  const int best = tfq__csv_simd_set(TFQ__SIMD_AVX2);
  int differ = 0;
  for (int l = TFQ__SIMD_SCALAR; l <= best && !differ; l++) {
    tfq__csv_simd_set(l);
    if (csv_diff_run(data, size)) {
      fprintf(stderr, "csv_diff: (the difference above: scan level %s)\n", tfq__csv_simd_name(l));
      differ = 1;
    }
  }
  size_t ncol;
  tfq_csv_options *o = differ ? NULL : csv_diff_options(data, size, &ncol);
  if (o) {
    size_t len = size - 8;
    char *buf = malloc(len ? len : 1);
    if (!buf) abort();
    for (size_t j = 0; j < len; j++) buf[j] = data[8 + j] == 0xFF ? '\n' : (char)data[8 + j];
    tfq_tuple *out[3] = {NULL, NULL, NULL};
    tfq_code rc[3];
    char msg[3][256];
    for (int l = TFQ__SIMD_SCALAR; l <= best; l++) {
      tfq_status *st = tfq_status_new();
      if (!st) abort();
      tfq__csv_simd_set(l);
      rc[l] = tfq_decode_csv_buffer(o, buf, len, &out[l], st);
      snprintf(msg[l], sizeof msg[l], "%s", tfq_status_message(st));
      tfq_status_free(st);
      int d = rc[l] != rc[0] || strcmp(msg[l], msg[0]) != 0;
      for (size_t c = 0; !d && rc[0] == TFQ_OK && c < ncol; c++)
        d = !csv_diff_same_tensor(tfq_tuple_get(out[0], c), tfq_tuple_get(out[l], c));
      if (d) {
        fprintf(stderr,
                "csv_diff: the buffer decode at level %s differs from scalar: [%s] vs [%s]\n",
                tfq__csv_simd_name(l), msg[l], msg[0]);
        differ = 1;
      }
    }
    for (int l = 0; l < 3; l++) tfq_tuple_free(out[l]);
    free(buf);
    tfq_csv_options_free(o);
  }
  tfq__csv_simd_set(-1);
  return differ;
}

#endif
