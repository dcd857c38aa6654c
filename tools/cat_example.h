/* tfq-cat's tf.train.Example input (tools/ only, public tfq headers only).
 *
 * The features come from --features (example_features) or are inferred from the first
 * INFER_ROWS records of the first file (example_columns), which also decides whether a TFRecord
 * file holds Examples at all.  Each feature is one column of the record queue, in the order
 * given (inferred: sorted by key):
 *
 *   FixedLen [shape]          its dense parse_example output, a component of that shape;
 *   VarLen [*]                one string per record, the record's values encoded as below;
 *   FixedLenSequence [?,...]  one string per record, the record's own rows (unpadded) encoded.
 *
 * Why strings: a RandomShuffleQueue element has one shape per component, and dequeue_many of
 * rows whose lists differ in length fails (TF's rule), so a per-record list cannot be a component
 * of unknown shape.  A scalar string holding the list can: the rows shuffle as any other, and the
 * output decodes the list when it prints it.  Encoding (native byte order, never leaves the
 * process): float32 and int64 values are their raw bytes back to back (4 or 8 each); a string
 * value is its length as a uint64 followed by its bytes.  A FixedLenSequence record holds
 * count / prod(row shape) rows.
 *
 * The reader op (cat_example_op.c) parses each read_up_to batch with the batch path
 * (tfq_parse_example_strings), as the CSV op runs decode_csv on it (spec tf1-example.md §10).
 * Thread-safety: everything here runs on the main thread before the pipeline starts, except
 * example_step (any reader thread) and the read-only accessors (main thread, while printing). */
#ifndef TFQ_TOOLS_CAT_EXAMPLE_H
#define TFQ_TOOLS_CAT_EXAMPLE_H

#include <tfq/example.h>

#include "cat_app.h"

/* One feature, one column. */
typedef struct {
  char *name; /* the feature key (NUL-free bytes) */
  tfq_example_kind kind;
  tfq_dtype dtype;  /* TFQ_FLOAT, TFQ_INT64 or TFQ_STRING */
  int rank;         /* FixedLen: its shape; FixedLenSequence: the shape of one row */
  int64_t *dims;    /* rank dims (NULL for rank 0) */
  tfq_tensor *dflt; /* FixedLen: the default (prod(shape) elements), or NULL: required */
  size_t out;       /* the feature's output index in `cfg` (sorted keys) */
  size_t seq_out;   /* FixedLenSequence: its output index in `seq` */
} ex_col;

struct cat_example {
  ex_col *cols; /* one per column, in column order */
  size_t ncols;
  tfq_example_config *cfg; /* every feature */
  tfq_example_config *seq; /* the FixedLenSequence features alone (their row counts), or NULL */
};

/* --features SPEC: builds a->ex (and a->fields, a->nfields, a->names); a bad SPEC is a usage
 * error (exits 2 with a one-line message). */
void example_features(app *a, const char *spec);

/* For a->examples set and a->ex NULL (EX_DETECT, or EX_FORCE without --features): reads the
 * first INFER_ROWS records of the first file.  EX_DETECT: they are Examples when each parses
 * as one and at least one has a feature, else a->examples becomes EX_NONE (the records are
 * printed as bytes).  Examples: the features are inferred (a key with the same value count k in
 * every sampled record is FixedLen, shape [] for k = 1 else [k]; any other key VarLen; the
 * kind from the list type), printed on standard error unless --quiet, and a->ex, a->fields,
 * a->nfields and a->names are set.  Returns EXIT_OK, or EXIT_USAGE after a message (-f example
 * and nothing to infer from). */
int example_columns(app *a, int need_sample, tfq_status *st);

/* Appends the record queue's components of a->ex's columns to `spec` (not the key). */
void example_spec(const app *a, tfq_spec *spec);

/* Frees `ex` (NULL: nothing). */
void example_free(cat_example *ex);

/* Column c when it holds an encoded list (VarLen, FixedLenSequence): returns 1, *dtype the
 * values' dtype and (*rank, *dims) the shape of one row (VarLen: rank 0).  Otherwise 0 (the
 * column's tensor is printed as it is: a scalar, or a list per record for a FixedLen [k]). */
int example_col_list(const app *a, size_t c, tfq_dtype *dtype, int *rank, const int64_t **dims);

/* Decodes an encoded list s[0..n) of `dtype`: returns the value count and, for strings, fills
 * (*sp)[k], (*sn)[k] with each value's bytes (arrays grown with xrealloc, *cap their size); for
 * numbers the values are the bytes of s (read them with memcpy: s is not aligned). */
size_t example_list_decode(const char *s, size_t n, tfq_dtype dtype, const char ***sp, size_t **sn,
                           size_t *cap);

/* ---- the reader op (cat_example_op.c) ---- */
typedef struct example_op example_op;

/* An op reading `chunk` records at a time with `reader` from a->filenames into a->q. */
example_op *example_op_new(app *a, tfq_reader *reader, int64_t chunk);
/* The step: read_up_to -> parse_example -> enqueue_many.  A parse error of record r of a batch
 * enqueues the r records before it, then fails with "<file>:<k>: <TF's message for that record
 * alone>", k the record's index in its file (from 0).  Thread-safe (one op per thread). */
tfq_code example_step(void *op, tfq_cancel *cancel, tfq_status *st);
/* Records enqueued so far.  Thread-safe. */
int64_t example_op_records(const example_op *op);
void example_op_free(example_op *op);

#endif
