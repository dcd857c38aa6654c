/* tfq-cat's columns (tools/ only): for CSV, the field types (-d, else inferred from the first
 * INFER_ROWS records of the first file, fewer for wide rows (INFER_VALUES, cat_app.h), with
 * decode_csv's own number rules), the column names (the first header line, else c0, c1, ...)
 * and the decode_csv options; for tf.train.Example input the features (cat_example.h); for the
 * other formats the single string column "line" or "record". */
#ifndef TFQ_TOOLS_CAT_INFER_H
#define TFQ_TOOLS_CAT_INFER_H

#include "cat_app.h"

/* Sets a->fields / a->nfields (when -d did not), a->names and, for CSV, a->csv; prints the
 * inferred -d on standard error unless --quiet (runs as N*TYPE with a->spec_repeat).  need_sample:
 * read the first file's header and records (the files and a->coord are set up).  Returns EXIT_OK,
 * or EXIT_USAGE after printing why (options decode_csv rejects).  Exits on out of memory. */
int setup_columns(app *a, int need_sample, tfq_status *st);

#endif
