/* libFuzzer target: tf.train.Example parsing (parse_example and parse_single_example) against
 * the simple reference decoder of tests/unit/example_ref.h.
 *
 * Input layout: byte 0 = mode, byte 1 = separator, the rest = the payload (missing header bytes
 * read as 0).  The payload split at the separator byte gives the records (at most 24; an empty
 * payload is one empty record unless mode & 8, which gives a batch of 0).
 *   mode % 4    the configuration (below)
 *   mode & 4    example names n0, n1, ... (else "<unknown>")
 * Checks, for the batch of records and for each record alone: tfq's outcome equals the
 * reference's, value by value (floats bitwise) and error text by error text (with the failing
 * record); every failure is INVALID_ARGUMENT with a message; the result converts to a tuple;
 * nothing leaks (LeakSanitizer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/example_ref.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ref_val k_def2f[2] = {{0, 0x3fc00000u, NULL, 0}, {0, 0xbf800000u, NULL, 0}};

/* The four configurations (keys short enough for the fuzzer to find). */
static size_t config(int which, ref_feature *fs) {
  memset(fs, 0, 8 * sizeof *fs);
  switch (which) {
    case 0: /* FixedLen float [2] with a default, int64 [] required, VarLen string */
      fs[0] = (ref_feature){.key = "a",
                            .kind = TFQ_EXAMPLE_FIXED_LEN,
                            .dtype = TFQ_FLOAT,
                            .rank = 1,
                            .dims = {2},
                            .has_def = 1};
      memcpy(fs[0].def, k_def2f, sizeof k_def2f);
      fs[1] = (ref_feature){.key = "b", .kind = TFQ_EXAMPLE_FIXED_LEN, .dtype = TFQ_INT64};
      fs[2] = (ref_feature){.key = "c", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_STRING};
      return 3;
    case 1: /* VarLen of each dtype, one on the empty key */
      fs[0] = (ref_feature){.key = "a", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_FLOAT};
      fs[1] = (ref_feature){.key = "b", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_INT64};
      fs[2] = (ref_feature){.key = "", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_STRING};
      return 3;
    case 2: /* FixedLenSequence float [2] with padding, FixedLen string [2], SparseFeature */
      fs[0] = (ref_feature){.key = "a",
                            .kind = TFQ_EXAMPLE_FIXED_LEN_SEQUENCE,
                            .dtype = TFQ_FLOAT,
                            .rank = 1,
                            .dims = {2},
                            .has_def = 1};
      fs[0].def[0].f = 0x7fc00001u;
      fs[1] = (ref_feature){
          .key = "c", .kind = TFQ_EXAMPLE_FIXED_LEN, .dtype = TFQ_STRING, .rank = 1, .dims = {2}};
      fs[2] = (ref_feature){.key = "s",
                            .kind = TFQ_EXAMPLE_SPARSE,
                            .dtype = TFQ_INT64,
                            .rank = 1,
                            .dims = {10},
                            .index_keys = {"i"},
                            .value_key = "v"};
      return 3;
    default: /* SparseFeature with two index keys, already sorted; FixedLen [0]; FLS string [] */
      fs[0] = (ref_feature){.key = "s",
                            .kind = TFQ_EXAMPLE_SPARSE,
                            .dtype = TFQ_FLOAT,
                            .rank = 2,
                            .dims = {3, 4},
                            .index_keys = {"i", "j"},
                            .value_key = "v",
                            .already_sorted = 1};
      fs[1] = (ref_feature){
          .key = "z", .kind = TFQ_EXAMPLE_FIXED_LEN, .dtype = TFQ_INT64, .rank = 1, .dims = {0}};
      fs[2] =
          (ref_feature){.key = "b", .kind = TFQ_EXAMPLE_FIXED_LEN_SEQUENCE, .dtype = TFQ_STRING};
      fs[3] = (ref_feature){.key = "i", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_INT64};
      return 4;
  }
}

static tfq_example_config *build(const ref_feature *fs, size_t n) {
  tfq_example_config *c;
  FUZZ_CHECK(tfq_example_config_new(&c, NULL) == TFQ_OK);
  for (size_t i = 0; i < n; i++) {
    const ref_feature *f = &fs[i];
    tfq_tensor *def = NULL;
    int64_t nd = 1;
    if (f->kind == TFQ_EXAMPLE_FIXED_LEN)
      for (int d = 0; d < f->rank; d++) nd *= f->dims[d];
    if (f->has_def) {
      FUZZ_CHECK(tfq_tensor_new(f->dtype, &nd, 1, &def, NULL) == TFQ_OK);
      for (int64_t j = 0; j < nd; j++) {
        if (f->dtype == TFQ_FLOAT)
          memcpy((char *)tfq_tensor_data(def) + 4 * j, &f->def[j].f, 4);
        else if (f->dtype == TFQ_INT64)
          ((int64_t *)tfq_tensor_data(def))[j] = f->def[j].i;
      }
    }
    tfq_code rc = TFQ_OK;
    if (f->kind == TFQ_EXAMPLE_FIXED_LEN)
      rc = tfq_example_config_add_fixed_len(c, f->key, f->dtype, f->dims, f->rank, def, NULL);
    else if (f->kind == TFQ_EXAMPLE_VAR_LEN)
      rc = tfq_example_config_add_var_len(c, f->key, f->dtype, NULL);
    else if (f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE)
      rc = tfq_example_config_add_fixed_len_sequence(c, f->key, f->dtype, f->dims, f->rank, 1, def,
                                                     NULL);
    else
      rc = tfq_example_config_add_sparse(c, f->key, f->index_keys, (size_t)f->rank, f->value_key,
                                         f->dtype, f->dims, f->already_sorted, NULL);
    FUZZ_CHECK(rc == TFQ_OK);
    tfq_tensor_free(def);
  }
  FUZZ_CHECK(tfq_example_config_check(c, NULL) == TFQ_OK);
  return c;
}

static void check(const ref_result *ref, tfq_code rc, const tfq_status *st,
                  tfq_example_result *res) {
  char why[8192];
  if (!ref_compare(ref, rc, st, res, why, sizeof why)) {
    fprintf(stderr, "tfq and the reference differ: %s\n", why);
    abort();
  }
  if (rc != TFQ_OK) {
    FUZZ_CHECK(rc == TFQ_INVALID_ARGUMENT && tfq_status_message(st)[0] != '\0');
    FUZZ_CHECK(res == NULL);
    return;
  }
  tfq_tuple *t;
  FUZZ_CHECK(tfq_example_result_to_tuple(res, &t, NULL) == TFQ_OK);
  tfq_tuple_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t mode = size > 0 ? data[0] : 0, sep = size > 1 ? data[1] : 0;
  const uint8_t *p = size > 2 ? data + 2 : data + size;
  size_t n = size > 2 ? size - 2 : 0;
  const uint8_t *recs[24];
  size_t lens[24];
  int64_t B = 0;
  if (!(mode & 8) || n) {
    size_t start = 0;
    for (size_t i = 0; i <= n && B < 24; i++)
      if (i == n || p[i] == sep) {
        recs[B] = p + start;
        lens[B++] = i - start;
        start = i + 1;
      }
  }
  ref_feature fs[8];
  size_t nf = config(mode % 4, fs);
  tfq_example_config *c = build(fs, nf);
  static const char *const nm[24] = {"n0",  "n1",  "n2",  "n3",  "n4",  "n5",  "n6",  "n7",
                                     "n8",  "n9",  "n10", "n11", "n12", "n13", "n14", "n15",
                                     "n16", "n17", "n18", "n19", "n20", "n21", "n22", "n23"};
  const char *const *names = mode & 4 ? nm : NULL;
  size_t nlens[24];
  for (int i = 0; i < 24; i++) nlens[i] = strlen(nm[i]);
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);
  ref_result *ref = malloc(sizeof *ref);
  FUZZ_CHECK(ref != NULL);
  tfq_example_result *res = NULL;
  ref_parse(fs, nf, recs, lens, B, names, 0, ref);
  tfq_code rc = tfq_parse_example_strings(c, (const char *const *)recs, lens, B, names,
                                          names ? nlens : NULL, &res, st);
  check(ref, rc, st, res);
  tfq_example_result_free(res);
  ref_free(ref);
  for (int64_t i = 0; i < B; i++) {
    ref_parse(fs, nf, &recs[i], &lens[i], 1, NULL, 1, ref);
    res = NULL;
    rc = tfq_parse_single_example(c, (const char *)recs[i], lens[i], &res, st);
    check(ref, rc, st, res);
    tfq_example_result_free(res);
    ref_free(ref);
  }
  free(ref);
  tfq_status_free(st);
  tfq_example_config_free(c);
  return 0;
}
