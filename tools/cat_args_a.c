/* tfq-cat's --header, --no-header and --infer-rows (see cat_args_a.h). */
#include "cat_args_a.h"

#include <getopt.h>
#include <string.h>

static const char help_a[] =
    "Headers and inference:\n"
    "      --header              csv: line 1 names the columns (as --skip-header-lines=1)\n"
    "      --no-header           csv: line 1 is data (TF1's default)\n"
    "                            Default: line 1 is a header when it looks like one (text\n"
    "                            over a column of numbers); a note on standard error says so\n"
    "      --infer-rows=N        csv, example: records sampled to infer the types (default\n"
    "                            100)\n"
    "\n";

void cat_print_help(FILE *f) {
  const char *cut = strstr(cat_usage_text, "Output:\n");
  size_t n = cut ? (size_t)(cut - cat_usage_text) : strlen(cat_usage_text);
  fwrite(cat_usage_text, 1, n, f);
  fputs(help_a, f);
  fputs(cat_usage_text + n, f);
}

void cat_args_a_defaults(options *o) {
  o->header = -1;
  o->infer_rows = -1;
}

int cat_args_a(int c, const char *arg, options *o) {
  switch (c) {
    case OPT_A_HEADER: o->header = 1; return 1;
    case OPT_A_NO_HEADER: o->header = 0; return 1;
    case OPT_A_INFER_ROWS: o->infer_rows = args_count("--infer-rows", arg, 1); return 1;
    default: return 0;
  }
}
