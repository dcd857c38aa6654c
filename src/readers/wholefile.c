/* IdentityReader (the work unit is the record) and WholeFileReader (the file is the record). */
#include "readers_internal.h"

/* ---- IdentityReader ---- */

static tfq_code identity_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                              tfq_status *st) {
  if (tfq__strbatch_push(&out->keys, r->work, r->work_len) ||
      tfq__strbatch_push(&out->values, r->work, r->work_len))
    return TFQ__OOM(st);
  *produced = *at_end = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__identity_ops = {
    "IdentityReader", "IdentityReaderV2", 1, NULL, identity_next, NULL, NULL};

/* ---- WholeFileReader: opens inside the read, so an open failure is sticky (as in TF) ---- */

static tfq_code wholefile_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                               tfq_status *st) {
  if (!r->in) {
    tfq_code c = tfq__reader_open(r, st);
    if (c) return c;
  }
  const char *p;
  size_t avail, want = r->o.buffer_bytes;
  for (;;) {
    tfq_code c = tfq__instream_ensure(r->in, want, &p, &avail, st);
    if (c) return c;
    if (avail < want) break;
    if (want > SIZE_MAX / 2) return TFQ__OOM(st);
    want *= 2;
  }
  if (tfq__strbatch_push(&out->keys, r->work, r->work_len) ||
      tfq__strbatch_push(&out->values, p, avail))
    return TFQ__OOM(st);
  *produced = *at_end = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__wholefile_ops = {
    "WholeFileReader", "WholeFileReaderV2", 1, NULL, wholefile_next, NULL, NULL};
