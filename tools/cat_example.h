/* tfq-cat's tf.train.Example input (tools/ only, public tfq headers only): --features SPEC
 * parsed into the tfq_example_config that the pipeline parses the records with
 * (tfq_pipeline_options_set_features).  Without --features the pipeline infers the features and
 * detects whether TFRecord files hold Examples at all (tfq/pipeline.h).  tfq-cat prints the
 * columns in the order SPEC gives them (the pipeline's columns are sorted by key).
 * Thread-safety: the main thread. */
#ifndef TFQ_TOOLS_CAT_EXAMPLE_H
#define TFQ_TOOLS_CAT_EXAMPLE_H

#include <tfq/example.h>

#include "cat_app.h"

/* One feature of SPEC. */
typedef struct {
  char *name; /* the feature key (NUL-free bytes) */
  tfq_example_kind kind;
  tfq_dtype dtype;  /* TFQ_FLOAT, TFQ_INT64 or TFQ_STRING */
  int rank;         /* FixedLen: its shape; FixedLenSequence: the shape of one row */
  int64_t *dims;    /* rank dims (NULL for rank 0) */
  tfq_tensor *dflt; /* FixedLen: the default (prod(shape) elements), or NULL: required;
                     * FixedLenSequence: the padding (one element), or NULL (0, "") */
} ex_col;

typedef struct cat_example {
  ex_col *cols; /* in SPEC's order */
  size_t ncols;
  tfq_example_config *cfg; /* every feature */
  int padded; /* a FixedLenSequence feature has a padding: sequences print padded, as TF's */
} cat_example;

/* --features SPEC: NAME:TYPE[SHAPE][=DEFAULT] entries separated by ','.  A bad SPEC is a usage
 * error (exits 2 with a one-line message).  Ownership: the result is the caller's
 * (example_free). */
cat_example *example_features(const char *spec);

/* Frees `ex` (NULL: nothing). */
void example_free(cat_example *ex);

#endif
