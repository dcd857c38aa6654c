/* tfq-cat's options for headers and inference (issue #42): --header, --no-header and
 * --infer-rows, kept apart from tfq_cat_args.c (tools/ only).  tfq_cat_args.c puts
 * CAT_ARGS_A_OPTIONS in tfq-cat's option table, calls cat_args_a_defaults() after its defaults
 * and cat_args_a() for an option code it does not know; tfq-cat prints --help with
 * cat_print_help() (the text is longer than one string literal may be).
 * Thread-safety: the main thread only. */
#ifndef TFQ_TOOLS_CAT_ARGS_A_H
#define TFQ_TOOLS_CAT_ARGS_A_H

#include <stdio.h>

#include "tfq_cat_args.h"

enum { OPT_A_HEADER = OPT_EXTRA + 64, OPT_A_NO_HEADER, OPT_A_INFER_ROWS };

#define CAT_ARGS_A_OPTIONS                                                                        \
  {"header", no_argument, NULL, OPT_A_HEADER}, {"no-header", no_argument, NULL, OPT_A_NO_HEADER}, \
      {"infer-rows", required_argument, NULL, OPT_A_INFER_ROWS},

/* tfq-cat's defaults: header detection on (o->header -1), the pipeline's sample (-1). */
void cat_args_a_defaults(options *o);
/* Handles option code c with argument arg: 1, or 0 for a code that is not one of these. */
int cat_args_a(int c, const char *arg, options *o);

/* Writes cat_usage_text with this file's section before its "Output:" section to `f`. */
void cat_print_help(FILE *f);

#endif
