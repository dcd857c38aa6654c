/* tfq-cat's output (tools/ only): each batch as an aligned table (80 columns), one JSON object a
 * line, or CSV, appended to a->out and written to standard output by out_flush.  Numbers are
 * printed in their shortest round-trip form; NaN, Infinity and -Infinity as such (quoted in
 * JSON).  A tf.train.Example feature holding a list per record prints it as JSON in every
 * format.  Keys are printed with the files as the user named them (standard input as "-"). */
#ifndef TFQ_TOOLS_CAT_OUTPUT_H
#define TFQ_TOOLS_CAT_OUTPUT_H

#include "cat_app.h"

/* Appends batch b (n records: the record queue's components, one per column or, with
 * a->col_comp, one per run of stacked columns; then the keys with --keys) to a->out in the
 * --output format (nothing for none).  Reads a->batches_out (the batch number). */
void emit_batch(app *a, const tfq_tuple *b, int64_t n);

/* Writes a->out to standard output when `force` or when it holds 64 KiB or more, and empties
 * it.  Returns 0, or -1 with a->out_error set to the errno of the failed write. */
int out_flush(app *a, int force);

#endif
