/* libFuzzer target: tfq-cat's command line (tools/tfq_cat_args.c) without running a job.
 * The input split at NUL bytes is argv[1..] (argv[0] is "tfq-cat"; at most 64 arguments).
 * cat_parse_options and then cat_resolve (first operand or "-") must return one of their
 * statuses; a usage error carries a non-empty message; a successful parse gives options inside
 * their documented ranges (batch size >= 1, 1..256 threads, strictly increasing non-negative
 * --select-cols, a concrete format, capacity > min_after_dequeue when shuffling, one valid
 * dtype per -d field with a parseable default); nothing leaks (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tfq_cat_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  FUZZ_CHECK(buf != NULL);
  if (size) memcpy(buf, data, size);
  buf[size] = 0;
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  argv[argc++] = "tfq-cat";
  for (size_t i = 0; i < size && argc <= MAX_ARGS;) {
    argv[argc++] = buf + i;
    i += strlen(buf + i) + 1;
  }
  argv[argc] = NULL;

  options o;
  int first = -1;
  char *msg = NULL;
  cat_args_status s = cat_parse_options(argc, argv, &o, &first, &msg);
  FUZZ_CHECK(s >= CAT_ARGS_OK && s <= CAT_ARGS_NOMEM);
  FUZZ_CHECK(s == CAT_ARGS_NOMEM || (s == CAT_ARGS_USAGE) == (msg != NULL));
  if (msg) FUZZ_CHECK(msg[0] != 0);
  free(msg);
  if (s == CAT_ARGS_OK) {
    FUZZ_CHECK(first >= 1 && first <= argc);
    FUZZ_CHECK(o.batch_size >= 1 && o.batches >= 0 && o.num_epochs >= 1);
    FUZZ_CHECK(o.threads >= 1 && o.threads <= 256);
    FUZZ_CHECK(o.skip_header_lines >= 0 && o.record_bytes >= 0);
    for (size_t i = 0; i < o.nselect; i++)
      FUZZ_CHECK(o.select_cols[i] >= 0 && (i == 0 || o.select_cols[i] > o.select_cols[i - 1]));
    cat_plan p;
    s = cat_resolve(&o, first < argc ? argv[first] : "-", &p, &msg);
    FUZZ_CHECK(s == CAT_ARGS_OK || s == CAT_ARGS_USAGE || s == CAT_ARGS_NOMEM);
    FUZZ_CHECK(s == CAT_ARGS_NOMEM || (s == CAT_ARGS_USAGE) == (msg != NULL));
    if (msg) FUZZ_CHECK(msg[0] != 0);
    free(msg);
    if (s == CAT_ARGS_OK) {
      FUZZ_CHECK(p.fmt >= FMT_CSV && p.fmt <= FMT_FIXED);
      FUZZ_CHECK(p.fmt != FMT_FIXED || o.record_bytes > 0);
      FUZZ_CHECK(!o.record_defaults || p.nfields >= 1);
      FUZZ_CHECK(!o.nselect || !o.record_defaults || o.nselect == p.nfields);
      FUZZ_CHECK(!o.shuffle || p.capacity > p.mad);
      FUZZ_CHECK(p.capacity >= 0 && p.mad >= 0 && o.threads >= 1);
      for (size_t i = 0; i < p.nfields; i++) {
        field_spec f = p.fields[i];
        FUZZ_CHECK(f.dtype == TFQ_FLOAT || f.dtype == TFQ_DOUBLE || f.dtype == TFQ_INT32 ||
                   f.dtype == TFQ_INT64 || f.dtype == TFQ_STRING);
        FUZZ_CHECK(f.required == (f.def == NULL));
        if (f.def) {
          FUZZ_CHECK(strlen(f.def) <= f.deflen || f.dtype == TFQ_STRING);
          FUZZ_CHECK(f.dtype == TFQ_STRING || parse_default_number(&f));
        }
      }
      cat_fields_free(p.fields, p.nfields);
    } else {
      FUZZ_CHECK(p.fields == NULL);
    }
  } else {
    FUZZ_CHECK(o.select_cols == NULL);
  }
  cat_options_free(&o);
  free(buf);
  return 0;
}
