/* FixedLengthRecordReader (docs/readers.md): header, records of record_bytes every
 * hop bytes, footer; record k is emitted iff header + k*hop + record + footer <= stream length.
 *
 * Truncation (tfq's default; docs/readers.md, "Deviations from TensorFlow"): a stream shorter
 * than the header, or bytes left after the last record that cannot be the footer (counted from
 * where the next record would start: more than footer + max(0, record - hop), or fewer than
 * footer - max(0, hop - record)), give DATA_LOSS.  With tf_compat_truncation: OUT_OF_RANGE
 * "reached end of file" for the header and a silent end otherwise, as TF. */
#include "readers_internal.h"

/* Skips up to r->skip bytes; leaves in r->skip what the stream did not have. */
static tfq_code skip_bytes(tfq_reader *r, tfq_status *st) {
  while (r->skip > 0) {
    const char *p;
    size_t avail;
    size_t want = r->skip < r->o.buffer_bytes ? (size_t)r->skip : r->o.buffer_bytes;
    tfq_code c = tfq__instream_ensure(r->in, want, &p, &avail, st);
    if (c) return c;
    if (avail == 0) return TFQ_OK;
    size_t k = avail < r->skip ? avail : (size_t)r->skip;
    tfq__instream_consume(r->in, k);
    r->skip -= k;
  }
  return TFQ_OK;
}

static tfq_code fixedlen_start(tfq_reader *r, tfq_status *st) {
  tfq_code c = tfq__reader_open(r, st);
  if (c) return c;
  r->skip = (uint64_t)r->o.header_bytes;
  c = skip_bytes(r, st);
  if (c) return c;
  if (r->skip > 0) {
    if (r->o.tf_compat_truncation)
      return tfq_status_set(st, TFQ_OUT_OF_RANGE, "reached end of file");
    return tfq_status_set(
        st, TFQ_DATA_LOSS, "%s ends at offset %llu inside its header of header_bytes %lld", r->work,
        (unsigned long long)tfq__instream_pos(r->in), (long long)r->o.header_bytes);
  }
  return TFQ_OK;
}

static tfq_code fixedlen_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                              tfq_status *st) {
  uint64_t rec = (uint64_t)r->o.record_bytes, foot = (uint64_t)r->o.footer_bytes;
  uint64_t hop = r->o.hop_bytes ? (uint64_t)r->o.hop_bytes : rec;
  tfq_code c = skip_bytes(r, st);
  if (c) return c;
  const char *p;
  size_t avail = 0;
  if (r->skip == 0) {
    if (rec + foot > SIZE_MAX / 2) return TFQ__OOM(st);
    c = tfq__instream_ensure(r->in, (size_t)(rec + foot), &p, &avail, st);
    if (c) return c;
    if (avail >= rec + foot) {
      c = tfq__reader_emit_num(r, out, (uint64_t)r->index, p, (size_t)rec, st);
      if (c) return c;
      r->index++;
      size_t k = avail < hop ? avail : (size_t)hop;
      tfq__instream_consume(r->in, k);
      r->skip = hop - k;
      *produced = 1;
      return TFQ_OK;
    }
  }
  /* End of stream: are the bytes left a footer? */
  int64_t rem = (int64_t)avail - (int64_t)r->skip;
  int64_t lo = (int64_t)foot - (hop > rec ? (int64_t)(hop - rec) : 0);
  int64_t hi = (int64_t)foot + (rec > hop ? (int64_t)(rec - hop) : 0);
  if (!r->o.tf_compat_truncation && (rem < lo || rem > hi)) {
    tfq_status_set(st, TFQ_DATA_LOSS,
                   "%s ends inside record %lld: %lld bytes left at offset %llu, where "
                   "record_bytes + footer_bytes = %llu are needed (or only the footer of "
                   "%llu bytes)",
                   r->work, (long long)r->index, (long long)rem,
                   (unsigned long long)tfq__instream_pos(r->in), (unsigned long long)(rec + foot),
                   (unsigned long long)foot);
    tfq__status_names_file(st);
    return TFQ_DATA_LOSS;
  }
  *at_end = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__fixedlen_ops = {"FixedLengthRecordReader",
                                           "FixedLengthRecordReaderV2",
                                           0,
                                           fixedlen_start,
                                           fixedlen_next,
                                           NULL,
                                           NULL};
