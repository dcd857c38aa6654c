/* libFuzzer target: TFRecordReader over arbitrary bytes, and a writer -> reader round trip.
 *
 * Input layout: byte 0 = mode, byte 1 = separator, byte 2 = buffer size, byte 3 = batch size,
 * the rest = the payload (missing header bytes read as 0).
 *   mode % 4 (3 -> 0)   compression the payload is read with as a raw file: NONE, ZLIB, GZIP
 *   mode & 4            read_up_to (else read)
 *   mode & 8            tf_compat_truncation
 *   (mode >> 4) % 4     round-trip compression (3 -> GZIP)
 *   mode & 64           flush the writer after every record
 *   byte 2              buffer_bytes = 64 + 4 * byte;  byte 3: read_up_to batch = 1 + byte % 16
 * 1. Raw: the payload is the file.  Uncompressed, a reference parser of the format predicts the
 *    records (offset keys, payloads) and the ending: OUT_OF_RANGE at a clean end; DATA_LOSS at a
 *    bad length CRC, a bad payload CRC, a cut payload, a cut header (a cut header ends silently
 *    with tf_compat_truncation).  Compressed, only the codes are checked.
 * 2. Round trip: the payload split at the separator byte gives records; tfq's writer writes them
 *    with the chosen compression and the reader must give them back identically, then
 *    OUT_OF_RANGE.
 * Every failure is a tfq code with a message; nothing leaks (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  uint64_t off;
  const char *p;
  size_t len;
} rec;

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
static uint32_t le32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* Reference parse of an uncompressed TFRecord file; returns the code the reader must end with. */
static tfq_code ref_parse(const uint8_t *p, size_t n, int compat, rec *out, size_t *nout) {
  size_t off = 0, k = 0;
  tfq_code end;
  for (;;) {
    size_t rem = n - off;
    if (rem == 0) {
      end = TFQ_OUT_OF_RANGE;
      break;
    }
    if (rem < 12) {
      end = compat ? TFQ_OUT_OF_RANGE : TFQ_DATA_LOSS;
      break;
    }
    uint64_t len = le64(p + off);
    if (tfq_crc32c_unmask(le32(p + off + 8)) != tfq_crc32c_extend(0, p + off, 8) ||
        len > rem - 12 || rem - 12 - len < 4 ||
        tfq_crc32c_unmask(le32(p + off + 12 + len)) != tfq_crc32c_extend(0, p + off + 12, len)) {
      end = TFQ_DATA_LOSS;
      break;
    }
    out[k].off = off;
    out[k].p = (const char *)p + off + 12;
    out[k++].len = (size_t)len;
    off += 16 + (size_t)len;
  }
  *nout = k;
  return end;
}

/* Reads `path` to the end; checks the records against want[0..nwant) (unless want is NULL) and
 * returns the final code. */
static tfq_code read_all(const char *path, tfq_compression comp, int compat, int batch,
                         int64_t n_batch, size_t buf_bytes, const rec *want, size_t nwant) {
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);
  tfq_reader_options *o;
  FUZZ_CHECK(tfq_reader_options_new(&o, st) == TFQ_OK);
  tfq_reader_options_set_compression(o, comp);
  tfq_reader_options_set_tf_compat_truncation(o, compat);
  tfq_reader_options_set_buffer_bytes(o, buf_bytes);
  tfq_reader *r;
  FUZZ_CHECK(tfq_reader_new(TFQ_READER_TFRECORD, o, &r, st) == TFQ_OK);
  tfq_reader_options_free(o);
  tfq_queue *work = fuzz_work_queue(path, st);
  size_t got = 0;
  tfq_code end = TFQ_OK;
  for (int iter = 0; iter < 1000000; iter++) {
    tfq_tensor *k, *v;
    int64_t m = fuzz_read(r, work, batch, n_batch, &k, &v, st, &end);
    if (m == 0) break;
    for (int64_t i = 0; i < m; i++) {
      size_t kl, vl;
      const char *ks = tfq_tensor_string(k, i, &kl), *vs = tfq_tensor_string(v, i, &vl);
      FUZZ_CHECK(ks != NULL && vs != NULL);
      if (want) {
        FUZZ_CHECK(got < nwant);
        FUZZ_CHECK(fuzz_key_is(ks, kl, path, (unsigned long long)want[got].off));
        FUZZ_CHECK(vl == want[got].len && memcmp(vs, want[got].p, vl) == 0);
      }
      got++;
    }
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  if (want) FUZZ_CHECK(got == nwant);
  tfq_queue_free(work);
  tfq_reader_free(r);
  tfq_status_free(st);
  return end;
}

static fuzz_file g_raw, g_rt;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t hdr[4] = {0, 0, 0, 0};
  size_t h = size < 4 ? size : 4;
  memcpy(hdr, data, h);
  const uint8_t *payload = data + h;
  size_t plen = size - h;
  static const tfq_compression comps[4] = {TFQ_COMPRESSION_NONE, TFQ_COMPRESSION_ZLIB,
                                           TFQ_COMPRESSION_GZIP, TFQ_COMPRESSION_NONE};
  static const tfq_compression rt_comps[4] = {TFQ_COMPRESSION_NONE, TFQ_COMPRESSION_ZLIB,
                                              TFQ_COMPRESSION_GZIP, TFQ_COMPRESSION_GZIP};
  tfq_compression raw_comp = comps[hdr[0] & 3], rt_comp = rt_comps[(hdr[0] >> 4) & 3];
  int batch = (hdr[0] & 4) != 0, compat = (hdr[0] & 8) != 0, flush = (hdr[0] & 64) != 0;
  uint8_t sep = hdr[1];
  size_t buf_bytes = 64 + 4 * (size_t)hdr[2];
  int64_t n_batch = 1 + (hdr[3] & 15);
  if (g_raw.fd == 0) {
    fuzz_file_open(&g_raw, "fuzz_tfrecord_raw");
    fuzz_file_open(&g_rt, "fuzz_tfrecord_rt");
  }

  /* 1. the payload as a TFRecord file */
  rec *want = calloc(plen / 16 + 1, sizeof *want);
  FUZZ_CHECK(want != NULL);
  fuzz_file_set(&g_raw, payload, plen);
  if (raw_comp == TFQ_COMPRESSION_NONE) {
    size_t nwant;
    tfq_code end = ref_parse(payload, plen, compat, want, &nwant);
    tfq_code c = read_all(g_raw.path, raw_comp, compat, batch, n_batch, buf_bytes, want, nwant);
    FUZZ_CHECK(c == end);
  } else {
    tfq_code c = read_all(g_raw.path, raw_comp, compat, batch, n_batch, buf_bytes, NULL, 0);
    FUZZ_CHECK(c == TFQ_OUT_OF_RANGE || c == TFQ_DATA_LOSS);
  }
  free(want);

  /* 2. round trip: records split at `sep` */
  size_t nrec = 1;
  for (size_t i = 0; i < plen; i++) nrec += payload[i] == sep;
  rec *recs = calloc(nrec, sizeof *recs);
  FUZZ_CHECK(recs != NULL);
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);
  tfq_tfrecord_writer *w;
  FUZZ_CHECK(tfq_tfrecord_writer_new(g_rt.path, rt_comp, &w, st) == TFQ_OK);
  size_t start = 0, k = 0;
  uint64_t off = 0;
  for (size_t i = 0; i <= plen; i++) {
    if (i < plen && payload[i] != sep) continue;
    recs[k].off = off;
    recs[k].p = (const char *)payload + start;
    recs[k].len = i - start;
    FUZZ_CHECK(tfq_tfrecord_writer_write(w, recs[k].p, recs[k].len, st) == TFQ_OK);
    if (flush) FUZZ_CHECK(tfq_tfrecord_writer_flush(w, st) == TFQ_OK);
    off += 16 + recs[k].len;
    k++;
    start = i + 1;
  }
  FUZZ_CHECK(k == nrec);
  FUZZ_CHECK(tfq_tfrecord_writer_close(w, st) == TFQ_OK);
  FUZZ_CHECK(tfq_tfrecord_writer_write(w, "x", 1, st) == TFQ_FAILED_PRECONDITION);
  tfq_tfrecord_writer_free(w);
  tfq_status_free(st);
  FUZZ_CHECK(read_all(g_rt.path, rt_comp, compat, batch, n_batch, buf_bytes, recs, nrec) ==
             TFQ_OUT_OF_RANGE);
  free(recs);
  return 0;
}
