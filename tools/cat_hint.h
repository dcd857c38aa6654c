/* tfq-cat's hint after a late type error (tools/ only): the column named, and the -d that reads
 * the file.  Thread-safety: the main thread. */
#ifndef TFQ_TOOLS_CAT_HINT_H
#define TFQ_TOOLS_CAT_HINT_H

#include "cat_app.h"

/* A decode_csv type error ("Field N in record M is not a valid TYPE: VALUE") in a column whose
 * type was inferred (no -d): "column N 'NAME' was inferred as TYPE from the first records: -d
 * 'SPEC' reads it (or --infer-rows=R samples that far)", SPEC the inferred one with that column
 * widened (int32/int64 to float64 when VALUE is a number, else string), R the records up to `line`,
 * the error's line (<= 0: unknown).  NULL for any other message.  Ownership: the caller frees the
 * result. */
char *type_error_hint(const app *a, const char *msg, int64_t line);

#endif
