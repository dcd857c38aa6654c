/* decode_csv's private entries for another module: the read-decode op (src/coord/ops.c) decodes
 * the numeric columns it stacks into one [B, k] component straight into that component's rows,
 * instead of into k column tensors that it then copies across (tf.stack). */
#ifndef TFQ_CSV_SHARED_H
#define TFQ_CSV_SHARED_H

#include <tfq/csv.h>

#include "../core/base.h"

/* Where a column's values go: value i of the column at base + i * stride bytes (aligned for the
 * column's dtype).  base NULL: into the destination tuple, as tfq_decode_csv_into() does.  A
 * string column's out also names the string tensor `str` whose elements base points into (its
 * tfq__str views, stride a multiple of their size): the bytes go into str's arena, so that the
 * columns of a stacked [B, k] string tensor fill it row by row, each row's bytes together.  str
 * is owned by the caller alone; the decode gives it an arena when it has none.  A numeric
 * column's str is NULL. */
typedef struct tfq__csv_out {
  char *base;
  size_t stride;
  tfq_tensor *str;
} tfq__csv_out;

/* tfq_decode_csv_into() (`records` a string tensor, `dst` a tuple of one slot per column), except
 * that each column f with outs[f].base set is written there (dst's slot f is left as it is).
 * outs has one entry per column.  On failure the outputs
 * hold unspecified values, as tfq_decode_csv_into()'s.
 * @return as tfq_decode_csv_into(); TFQ_INVALID_ARGUMENT for an out that breaks
 * tfq__csv_out's rules.
 * Thread-safety: as tfq_decode_csv_into(); each thread with its own outputs. */
tfq_code tfq__decode_csv_into_out(const tfq_csv_options *o, const tfq_tensor *records,
                                  tfq_tuple *dst, const tfq__csv_out *outs, tfq_status *st);

/* Decodes up to n lines of buf[0, len) into `dst` (and `outs`, as tfq__decode_csv_into_out()):
 * the lines a text reader's buffer holds, decoded where they are, without a string tensor of
 * them or a scan for their ends of its own.  Every line ends with '\n' (buf[len - 1] must be
 * '\n'); a "\r\n" ends a line as TextLineReader ends it.  Line k is record k, decoded exactly
 * as tfq_decode_csv_into() decodes it.  Stops after n lines or at len: *count = the lines
 * decoded, *used = their bytes.  The outputs have n rows; when *count < n, rows from *count on
 * hold unspecified values.  On failure *count = *used = 0 and the outputs are unspecified; the
 * status's record is the failing line's index.
 * `holder` (or NULL) is a tensor that keeps buf's bytes alive and unchanged while it is
 * referenced (the reader's buffer: tfq__instream_holder).  With it, string fields the fast path
 * takes as they are (no quotes, not a default) are not copied: their elements point into buf,
 * and each string tensor written keeps one reference to holder (tfq__tensor_keep_take) until
 * its strings are reset or it is freed.
 * @return as tfq_decode_csv_into().  Thread-safety: as tfq_decode_csv_into(). */
tfq_code tfq__decode_csv_span(const tfq_csv_options *o, const char *buf, size_t len,
                              tfq_tensor *holder, size_t n, tfq_tuple *dst,
                              const tfq__csv_out *outs, size_t *count, size_t *used,
                              tfq_status *st);

/* Column f's dtype (0 when f is not a column).  Thread-safety: any, after the setters. */
tfq_dtype tfq__csv_column_dtype(const tfq_csv_options *o, size_t f);

#endif
