/* Whole-file scans that decode no record (tfq/reader.h, "whole-file scans"): the TFRecord
 * framing walked with both CRCs verified (tfq_tfrecord_scan), and records counted, TFRecord or
 * the lines a TextLineReader would read, the kind given or sniffed (tfq_record_count).  Both read
 * through the readers' buffered, optionally inflating stream, a buffer at a time. */
#include <string.h>

#include "readers_internal.h"

#define SCAN_BUFFER ((size_t)256 << 10)

/* One record at the stream's position: *size its framed size, or 0 at a clean end. */
static tfq_code scan_record(tfq__instream *in, const char *path, uint64_t *size, tfq_status *st) {
  uint64_t o = tfq__instream_pos(in);
  const char *p;
  size_t avail;
  *size = 0;
  tfq_code c = tfq__instream_ensure(in, 12, &p, &avail, st);
  if (c || avail == 0) return c;
  if (avail < 12)
    return tfq_status_set(st, TFQ_DATA_LOSS,
                          "truncated record header at %llu: %s ends after %zu of the 12 header "
                          "bytes",
                          (unsigned long long)o, path, avail);
  uint64_t n;
  c = tfq__tfrecord_header(p, o, &n, st);
  if (c) return c;
  tfq__instream_consume(in, 12);
  uint32_t crc = 0;
  for (uint64_t left = n; left > 0;) {
    c = tfq__instream_ensure(in, 1, &p, &avail, st);
    if (c) return c;
    if (avail == 0) goto truncated;
    size_t take = avail < left ? avail : (size_t)left;
    crc = tfq_crc32c_extend(crc, p, take);
    tfq__instream_consume(in, take);
    left -= take;
  }
  c = tfq__instream_ensure(in, 4, &p, &avail, st);
  if (c) return c;
  if (avail < 4) goto truncated;
  if (tfq_crc32c_unmask(tfq__le32(p)) != crc)
    return tfq_status_set(st, TFQ_DATA_LOSS, "corrupted record at %llu",
                          (unsigned long long)(o + 12));
  tfq__instream_consume(in, 4);
  *size = n + 16;
  return TFQ_OK;
truncated:
  return tfq_status_set(
      st, TFQ_DATA_LOSS, "truncated record at %llu' failed with %s", (unsigned long long)o,
      tfq__instream_compression(in) == TFQ_COMPRESSION_NONE ? "Read less bytes than requested"
                                                            : "EOF reached");
}

/* Walks the records of an open stream. */
static tfq_code scan_stream(tfq__instream *in, const char *path, tfq_tfrecord_scan_fn fn, void *ctx,
                            int64_t *records, tfq_status *st) {
  tfq_code c = TFQ_OK;
  int64_t k = 0;
  while (!c) {
    uint64_t o = tfq__instream_pos(in), size;
    c = scan_record(in, path, &size, st);
    if (c || size == 0) break;
    k++;
    if (fn && fn(ctx, o, size)) c = tfq_status_set(st, TFQ_CANCELLED, "scan stopped");
  }
  *records = k;
  return c;
}

/* Counts the lines of an open stream (a last line without '\n' included). */
static tfq_code count_lines(tfq__instream *in, int64_t *lines, tfq_status *st) {
  int64_t n = 0;
  int partial = 0; /* bytes after the last '\n' */
  tfq_code c;
  for (;;) {
    const char *p;
    size_t avail;
    c = tfq__instream_ensure(in, 1, &p, &avail, st);
    if (c || avail == 0) break;
    for (const char *q = p, *e = p + avail; (q = memchr(q, '\n', (size_t)(e - q))); q++) n++;
    partial = p[avail - 1] != '\n';
    tfq__instream_consume(in, avail);
  }
  *lines = n + partial;
  return c;
}

tfq_code tfq_tfrecord_scan(const char *path, tfq_compression comp, tfq_tfrecord_scan_fn fn,
                           void *ctx, int64_t *records, tfq_status *st) {
  int64_t k = 0;
  tfq__instream *in = NULL;
  tfq_code c = tfq__instream_open(path, comp, SCAN_BUFFER, 0, 1, &in, st);
  if (!c) c = scan_stream(in, path, fn, ctx, &k, st);
  if (in) tfq__instream_close(in); /* NULL when the open failed */
  if (records) *records = k;
  if (!c) tfq_status_clear(st);
  return c;
}

tfq_code tfq_record_count(const char *path, tfq_compression comp, tfq_reader_kind kind,
                          int64_t skip_header_lines, int64_t *records, tfq_reader_kind *kind_out,
                          tfq_status *st) {
  *records = 0;
  if (kind != TFQ_READER_TFRECORD && kind != TFQ_READER_TEXT_LINE && kind != (tfq_reader_kind)-1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "cannot count records of reader kind %d",
                          (int)kind);
  tfq__instream *in = NULL;
  tfq_code c = tfq__instream_open(path, comp, SCAN_BUFFER, 0, 1, &in, st);
  if (c) return c;
  if (kind == (tfq_reader_kind)-1) {
    const char *p;
    size_t avail;
    c = tfq__instream_ensure(in, 12, &p, &avail, st);
    kind = !c && avail >= 12 && tfq_crc32c_unmask(tfq__le32(p + 8)) == tfq_crc32c_extend(0, p, 8)
               ? TFQ_READER_TFRECORD
               : TFQ_READER_TEXT_LINE;
  }
  if (kind_out) *kind_out = kind;
  int64_t n = 0;
  if (!c && kind == TFQ_READER_TFRECORD) {
    c = scan_stream(in, path, NULL, NULL, &n, st);
  } else if (!c) {
    c = count_lines(in, &n, st);
    n = n > skip_header_lines ? n - skip_header_lines : 0;
  }
  tfq__instream_close(in);
  *records = n;
  if (!c) tfq_status_clear(st);
  return c;
}
