/* TFRecordReader and the TFRecord writer (docs/readers.md).  Record: uint64 length
 * (LE), masked CRC32C of those 8 bytes, payload, masked CRC32C of the payload.  Messages are the
 * reference wheel's (tensorflow-cpu 2.21), which differ from TF 1.15's:
 *   length CRC mismatch at 0:  "corrupted record at 0 (Is this even a TFRecord file?)"
 *   length CRC mismatch at o:  "corrupted record at <o>"
 *   payload CRC mismatch:      "corrupted record at <o+12>"
 *   payload cut short:         "truncated record at <o>' failed with Read less bytes than
 *                               requested"
 * A header cut short (1-11 bytes) ends the file silently in TF; tfq reports DATA_LOSS unless
 * tf_compat_truncation. */
#include <string.h>

#include "readers_internal.h"

static void put_tfq__le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_tfq__le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Opens the work unit, at r->start_at when tfq__reader_start_at() set one (then cleared). */
tfq_code tfq__tfrecord_header(const char *p, uint64_t o, uint64_t *n, tfq_status *st) {
  *n = tfq__le64(p);
  if (tfq_crc32c_unmask(tfq__le32(p + 8)) != tfq_crc32c_extend(0, p, 8)) {
    if (o == 0)
      return tfq_status_set(st, TFQ_DATA_LOSS,
                            "corrupted record at 0 (Is this even a TFRecord file?)");
    return tfq_status_set(st, TFQ_DATA_LOSS, "corrupted record at %llu", (unsigned long long)o);
  }
  if (*n >= SIZE_MAX - 16 || *n > (uint64_t)1 << 62)
    return tfq_status_set(st, TFQ_DATA_LOSS, "record size too large");
  return TFQ_OK;
}

static tfq_code tfrecord_start(tfq_reader *r, tfq_status *st) {
  uint64_t at = r->start_at;
  r->start_at = 0;
  tfq_code c = tfq__reader_open(r, st);
  if (!c && at) c = tfq__instream_skip(r->in, at, st);
  return c;
}

static tfq_code tfrecord_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                              tfq_status *st) {
  uint64_t o = tfq__instream_pos(r->in);
  const char *p;
  size_t avail;
  tfq_code c = tfq__instream_ensure(r->in, 12, &p, &avail, st);
  if (c) return c;
  if (avail == 0) {
    *at_end = 1;
    return TFQ_OK;
  }
  if (avail < 12) {
    if (r->o.tf_compat_truncation) {
      *at_end = 1;
      return TFQ_OK;
    }
    return tfq_status_set(st, TFQ_DATA_LOSS,
                          "truncated record header at %llu: %s ends after %zu of the 12 header "
                          "bytes",
                          (unsigned long long)o, r->work, avail);
  }
  uint64_t n;
  c = tfq__tfrecord_header(p, o, &n, st);
  if (c) return c;
  size_t need = (size_t)n + 16;
  c = tfq__instream_ensure(r->in, need, &p, &avail, st);
  if (c) return c;
  if (avail < need) /* TF's wording differs for a compressed stream (conformance suite) */
    return tfq_status_set(
        st, TFQ_DATA_LOSS, "truncated record at %llu' failed with %s", (unsigned long long)o,
        tfq__instream_compression(r->in) == TFQ_COMPRESSION_NONE ? "Read less bytes than requested"
                                                                 : "EOF reached");
  if (tfq_crc32c_unmask(tfq__le32(p + 12 + n)) != tfq_crc32c_extend(0, p + 12, (size_t)n))
    return tfq_status_set(st, TFQ_DATA_LOSS, "corrupted record at %llu",
                          (unsigned long long)(o + 12));
  c = tfq__reader_emit_num(r, out, o, p + 12, (size_t)n, st);
  if (c) return c;
  tfq__instream_consume(r->in, need);
  if (need > r->o.buffer_bytes) tfq__instream_trim(r->in);
  *produced = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__tfrecord_ops = {
    "TFRecordReader", "TFRecordReaderV2", 0, tfrecord_start, tfrecord_next, NULL, NULL};

/* ---- writer ---- */

struct tfq_tfrecord_writer {
  tfq__outstream *out;
};

tfq_code tfq_tfrecord_writer_new(const char *path, tfq_compression c, tfq_tfrecord_writer **out,
                                 tfq_status *st) {
  *out = NULL;
  if (c != TFQ_COMPRESSION_NONE && c != TFQ_COMPRESSION_ZLIB && c != TFQ_COMPRESSION_GZIP)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown compression %d", (int)c);
  tfq_tfrecord_writer *w = tfq__calloc(1, sizeof *w);
  if (!w) return TFQ__OOM(st);
  tfq_code code = tfq__outstream_open(path, c, &w->out, st);
  if (code) {
    tfq_free(w);
    return code;
  }
  *out = w;
  tfq_status_clear(st);
  return TFQ_OK;
}

static tfq_code closed(tfq_status *st) {
  return tfq_status_set(st, TFQ_FAILED_PRECONDITION, "TFRecord writer is closed");
}

tfq_code tfq_tfrecord_writer_write(tfq_tfrecord_writer *w, const void *data, size_t len,
                                   tfq_status *st) {
  if (!w->out) return closed(st);
  unsigned char head[12], foot[4];
  put_tfq__le64(head, (uint64_t)len);
  put_tfq__le32(head + 8, tfq_crc32c_mask(tfq_crc32c_extend(0, head, 8)));
  put_tfq__le32(foot, tfq_crc32c_mask(tfq_crc32c_extend(0, data, len)));
  tfq_code c = tfq__outstream_write(w->out, head, 12, st);
  if (!c) c = tfq__outstream_write(w->out, data, len, st);
  if (!c) c = tfq__outstream_write(w->out, foot, 4, st);
  if (!c) tfq_status_clear(st);
  return c;
}

tfq_code tfq_tfrecord_writer_flush(tfq_tfrecord_writer *w, tfq_status *st) {
  if (!w->out) return closed(st);
  tfq_code c = tfq__outstream_flush(w->out, st);
  if (!c) tfq_status_clear(st);
  return c;
}

tfq_code tfq_tfrecord_writer_close(tfq_tfrecord_writer *w, tfq_status *st) {
  if (!w->out) return TFQ_OK;
  tfq_code c = tfq__outstream_close(w->out, st);
  w->out = NULL;
  if (!c) tfq_status_clear(st);
  return c;
}

void tfq_tfrecord_writer_free(tfq_tfrecord_writer *w) {
  if (!w) return;
  if (tfq_tfrecord_writer_close(w, NULL) != TFQ_OK) { /* errors are ignored here */
  }
  tfq_free(w);
}
