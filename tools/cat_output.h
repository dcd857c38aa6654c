/* tfq-cat's output (tools/ only): each batch as an aligned table (80 columns), one JSON object a
 * record (the column names as keys; bytes that are not UTF-8 as \udcXX, Python's
 * surrogateescape), or CSV, appended to a->out and written to standard output by out_flush.
 * Numbers are printed in their shortest round-trip form laid out as Python's repr (float64) and
 * numpy's str (float32) without a trailing ".0"; NaN, Infinity and -Infinity as such (quoted in
 * JSON).  A tf.train.Example feature holding a list per record prints it as JSON in every
 * format.  Keys are printed with the files as the user named them (standard input as "-"). */
#ifndef TFQ_TOOLS_CAT_OUTPUT_H
#define TFQ_TOOLS_CAT_OUTPUT_H

#include "cat_app.h"

/* Appends batch b (n records: a tuple of tfq_pipeline_next(), a->p's slots) to a->out in the
 * --output format (nothing for none): the columns a->col[0 .. a->ncols) under a->names, then
 * with --keys the pipeline's key column.  Reads a->batches_out (the batch number). */
void emit_batch(app *a, const tfq_tuple *b, int64_t n);

/* Writes a->out to standard output when `force` or when it holds 64 KiB or more, and empties
 * it.  Returns 0, or -1 with a->out_error set to the errno of the failed write. */
int out_flush(app *a, int force);

#endif
