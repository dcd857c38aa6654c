/* tf.train.Example parsing and decode_raw (include/tfq/example.h): the worked cases, wire rules,
 * messages and configuration errors of spec/tf1-example.md, and a randomized comparison with the
 * simple reference decoder of example_ref.h (public API only, except the random test's PCG32
 * from src/core, an internal it says so). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "example_ref.h"
#include "helpers.h"

/* ---- helpers -------------------------------------------------------------------------------- */

/* Bytes from hex text ("0a13..."); static storage, one per slot. */
static const uint8_t *hexb(const char *h, size_t *n, int slot) {
  static uint8_t buf[8][4096];
  size_t len = strlen(h) / 2;
  for (size_t i = 0; i < len; i++) {
    unsigned v;
    sscanf(h + 2 * i, "%2x", &v);
    buf[slot][i] = (uint8_t)v;
  }
  *n = len;
  return buf[slot];
}

static tfq_tensor *f32s(const float *v, int64_t n) {
  tfq_tensor *t;
  OK(tfq_tensor_new(TFQ_FLOAT, &n, 1, &t, NULL));
  memcpy(tfq_tensor_data(t), v, (size_t)n * 4);
  return t;
}
static tfq_tensor *i64s(const int64_t *v, int64_t n, int rank) {
  tfq_tensor *t;
  OK(tfq_tensor_new(TFQ_INT64, &n, rank, &t, NULL));
  memcpy(tfq_tensor_data(t), v, (size_t)n * 8);
  return t;
}
static __attribute__((unused)) tfq_tensor *strs(const char *const *v, int64_t n, int rank) {
  tfq_tensor *t;
  OK(tfq_tensor_new(TFQ_STRING, &n, rank, &t, NULL));
  for (int64_t i = 0; i < n; i++) OK(tfq_tensor_set_string(t, i, v[i], strlen(v[i]), NULL));
  return t;
}

static tfq_example_config *cfg_new(void) {
  tfq_example_config *c;
  OK(tfq_example_config_new(&c, NULL));
  return c;
}

/* Parses records (batch path) with the strings API. */
static tfq_code batch(const tfq_example_config *c, const wb *recs, int64_t n,
                      const char *const *names, tfq_example_result **r, tfq_status *st) {
  const char *p[64];
  size_t l[64], nl[64];
  for (int64_t i = 0; i < n; i++) {
    p[i] = (const char *)recs[i].p;
    l[i] = recs[i].n;
    if (names) nl[i] = strlen(names[i]);
  }
  return tfq_parse_example_strings(c, p, l, n, names, names ? nl : NULL, r, st);
}

/* The error text of a failing batch parse (asserts it fails with INVALID_ARGUMENT). */
static const char *batch_err(const tfq_example_config *c, const wb *recs, int64_t n,
                             const char *const *names, tfq_status *st) {
  tfq_example_result *r = (tfq_example_result *)1;
  cr_assert_eq(batch(c, recs, n, names, &r, st), TFQ_INVALID_ARGUMENT, "parse succeeded");
  cr_assert_null(r);
  return tfq_status_message(st);
}
static const char *single_err(const tfq_example_config *c, const wb *rec, tfq_status *st) {
  tfq_example_result *r = (tfq_example_result *)1;
  cr_assert_eq(tfq_parse_single_example(c, (const char *)rec->p, rec->n, &r, st),
               TFQ_INVALID_ARGUMENT, "parse succeeded");
  cr_assert_null(r);
  return tfq_status_message(st);
}

static wb rec_hex(const char *h) {
  size_t n;
  const uint8_t *p = hexb(h, &n, 7);
  wb b = {0};
  wb_put(&b, p, n);
  return b;
}

/* One Example with one feature (Feature bytes). */
static wb ex1(const char *key, wb feat) {
  wb fs = {0};
  ex_entry(&fs, key, strlen(key), &feat);
  wb x = ex_wrap(&fs);
  wb_free(&fs);
  wb_free(&feat);
  return x;
}
static wb ex0(void) {
  wb fs = {0};
  return ex_wrap(&fs);
}
static void recs_free(wb *r, int n) {
  for (int i = 0; i < n; i++) wb_free(&r[i]);
}

static void expect_f32(const tfq_tensor *t, const float *v, int64_t n) {
  cr_assert_eq(tfq_tensor_dtype(t), TFQ_FLOAT);
  cr_assert_eq(tfq_tensor_num_elements(t), n);
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(((const float *)tfq_tensor_cdata(t))[i], v[i], "element %lld", (long long)i);
}
static void expect_i64(const tfq_tensor *t, const int64_t *v, int64_t n) {
  cr_assert_eq(tfq_tensor_dtype(t), TFQ_INT64);
  cr_assert_eq(tfq_tensor_num_elements(t), n, "%lld elements",
               (long long)tfq_tensor_num_elements(t));
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(((const int64_t *)tfq_tensor_cdata(t))[i], v[i], "element %lld: %lld",
                 (long long)i, (long long)((const int64_t *)tfq_tensor_cdata(t))[i]);
}
static void expect_shape(const tfq_tensor *t, const int64_t *d, int rank) {
  cr_assert_eq(tfq_tensor_rank(t), rank, "rank %d", tfq_tensor_rank(t));
  for (int i = 0; i < rank; i++)
    cr_assert_eq(tfq_tensor_dim(t, i), d[i], "dim %d is %lld", i, (long long)tfq_tensor_dim(t, i));
}

/* ---- §6 worked cases ------------------------------------------------------------------------ */

Test(example_worked, packed_and_unpacked_floats_give_the_same_fixed_len_output) {
  tfq_example_config *c = cfg_new();
  int64_t two = 2;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &two, 1, NULL, NULL));
  wb r[2] = {rec_hex("0a130a110a0161120c120a0a080000803f00000040"),
             rec_hex("0a130a110a0161120c120a0d0000803f0d00000040")};
  tfq_example_result *res;
  OK(batch(c, r, 2, NULL, &res, NULL));
  const tfq_tensor *t = tfq_example_result_dense(res, 0);
  int64_t d[2] = {2, 2};
  expect_shape(t, d, 2);
  expect_f32(t, (const float[]){1, 2, 1, 2}, 4);
  tfq_example_result_free(res);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

static wb ints_ex(const char *key, const int64_t *v, size_t n) {
  return ex1(key, feat_ints(v, n, 1));
}
static wb floats_ex(const char *key, const float *v, size_t n) {
  return ex1(key, feat_floats(v, n, 1));
}

Test(example_worked, var_len_batch_and_single) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "ids", TFQ_INT64, NULL));
  wb r[3] = {ints_ex("ids", (const int64_t[]){1, 2}, 2), ex0(),
             ints_ex("ids", (const int64_t[]){3}, 1)};
  tfq_example_result *res;
  OK(batch(c, r, 3, NULL, &res, NULL));
  cr_assert(tfq_example_result_is_sparse(res, 0));
  const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, 0);
  expect_shape(sp->indices, (const int64_t[]){3, 2}, 2);
  expect_i64(sp->indices, (const int64_t[]){0, 0, 0, 1, 2, 0}, 6);
  expect_i64(sp->values, (const int64_t[]){1, 2, 3}, 3);
  expect_i64(sp->dense_shape, (const int64_t[]){3, 2}, 2);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r[0].p, r[0].n, &res, NULL));
  sp = tfq_example_result_sparse(res, 0);
  expect_shape(sp->indices, (const int64_t[]){2, 1}, 2);
  expect_i64(sp->indices, (const int64_t[]){0, 1}, 2);
  expect_i64(sp->values, (const int64_t[]){1, 2}, 2);
  expect_i64(sp->dense_shape, (const int64_t[]){2}, 1);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r[1].p, r[1].n, &res, NULL));
  sp = tfq_example_result_sparse(res, 0);
  expect_shape(sp->indices, (const int64_t[]){0, 1}, 2);
  expect_shape(sp->values, (const int64_t[]){0}, 1);
  expect_i64(sp->dense_shape, (const int64_t[]){0}, 1);
  tfq_example_result_free(res);
  recs_free(r, 3);
  tfq_example_config_free(c);
}

Test(example_worked, fixed_len_default_fills_a_missing_key) {
  tfq_example_config *c = cfg_new();
  int64_t three = 3;
  tfq_tensor *def = f32s((const float[]){7, 8, 9}, 3);
  OK(tfq_example_config_add_fixed_len(c, "v", TFQ_FLOAT, &three, 1, def, NULL));
  tfq_tensor_free(def); /* the config keeps its own copy */
  wb r[2] = {floats_ex("v", (const float[]){0.5f, 1.5f, 2.5f}, 3), ex0()};
  tfq_example_result *res;
  OK(batch(c, r, 2, NULL, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){2, 3}, 2);
  expect_f32(tfq_example_result_dense(res, 0), (const float[]){0.5f, 1.5f, 2.5f, 7, 8, 9}, 6);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r[1].p, r[1].n, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){3}, 1);
  expect_f32(tfq_example_result_dense(res, 0), (const float[]){7, 8, 9}, 3);
  tfq_example_result_free(res);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

Test(example_worked, fixed_len_sequence_pads_rows_with_the_default) {
  tfq_example_config *c = cfg_new();
  tfq_tensor *pad = i64s((const int64_t[]){-1}, 1, 0);
  OK(tfq_example_config_add_fixed_len_sequence(c, "q", TFQ_INT64, NULL, 0, 1, pad, NULL));
  tfq_tensor_free(pad);
  wb r[3] = {ints_ex("q", (const int64_t[]){10, 20}, 2), ex0(),
             ints_ex("q", (const int64_t[]){30}, 1)};
  tfq_example_result *res;
  OK(batch(c, r, 3, NULL, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){3, 2}, 2);
  expect_i64(tfq_example_result_dense(res, 0), (const int64_t[]){10, 20, -1, -1, 30, -1}, 6);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r[1].p, r[1].n, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){0}, 1);
  tfq_example_result_free(res);
  recs_free(r, 3);
  tfq_example_config_free(c);
}

Test(example_worked, missing_required_key_names_the_example) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "age", TFQ_INT64, NULL, 0, NULL, NULL));
  const char *nm[] = {"b"};
  wb r[2] = {ints_ex("age", (const int64_t[]){30}, 1), ex1("name", feat_bytes(nm, NULL, 1))};
  tfq_status *st = tfq_status_new();
  const char *names[] = {"x0", "x1"};
  cr_assert_str_eq(batch_err(c, r, 2, names, st),
                   "Name: x1, Feature: age (data type: int64) is required but could not be found.");
  cr_assert_eq(tfq_status_record(st), 1);
  cr_assert_str_eq(batch_err(c, r, 2, NULL, st),
                   "Name: <unknown>, Feature: age (data type: int64) "
                   "is required but could not be found.");
  cr_assert_str_eq(single_err(c, &r[1], st),
                   "Feature: age (data type: int64) is required but could not be found.");
  tfq_status_free(st);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

Test(example_worked, kind_mismatch_messages) {
  wb r = ints_ex("a", (const int64_t[]){1}, 1);
  tfq_status *st = tfq_status_new();
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, NULL, 0, NULL, NULL));
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 "
                   "but expected type: float");
  cr_assert_str_eq(single_err(c, &r, st),
                   "Key: a.  Data types don't match. Data type: int64 but expected type: float");
  tfq_example_config_free(c);
  c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_STRING, NULL));
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Expected type: "
                   "string, Actual type: int64");
  cr_assert_str_eq(single_err(c, &r, st),
                   "Key: a.  Data types don't match. Expected type: string, Actual type: int64");
  tfq_example_config_free(c);
  c = cfg_new();
  OK(tfq_example_config_add_fixed_len_sequence(c, "a", TFQ_STRING, NULL, 0, 1, NULL, NULL));
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 "
                   "but expected type: string");
  tfq_example_config_free(c);
  tfq_status_free(st);
  wb_free(&r);
}

Test(example_worked, count_mismatch_batch_and_single_texts) {
  tfq_example_config *c = cfg_new();
  int64_t three = 3;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &three, 1, NULL, NULL));
  wb r = floats_ex("a", (const float[]){1, 2}, 2);
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Number of float values != expected.  "
                   "Values size: 2 but output shape: [3]");
  cr_assert_str_eq(
      single_err(c, &r, st),
      "Key: a.  Can't parse serialized Example: Some float_list slice was not parsed.");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_worked, broken_structure_quotes_the_raw_bytes) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  wb r = rec_hex("0a0501");
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Could not parse example input, value: '\n\x05\x01'");
  cr_assert_eq(tfq_status_record(st), 0);
  cr_assert_str_eq(single_err(c, &r, st), "Could not parse example input, value: '\n\x05\x01'");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_worked, empty_feature_is_absent_for_dense_and_empty_for_batch_var_len) {
  wb r = rec_hex("0a070a050a01611200");
  tfq_example_result *res;
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  OK(batch(c, &r, 1, NULL, &res, NULL));
  const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, 0);
  expect_shape(sp->indices, (const int64_t[]){0, 2}, 2);
  expect_i64(sp->dense_shape, (const int64_t[]){1, 0}, 2);
  tfq_example_result_free(res);
  tfq_example_config_free(c);
  c = cfg_new();
  tfq_tensor *three = f32s((const float[]){3}, 1);
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, NULL, 0, three, NULL));
  tfq_tensor_free(three);
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_f32(tfq_example_result_dense(res, 0), (const float[]){3}, 1);
  tfq_example_result_free(res);
  tfq_example_config_free(c);
  c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, NULL, 0, NULL, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Feature: a (data type: float) "
                   "is required but could not be found.");
  tfq_status_free(st);
  tfq_example_config_free(c);
  wb_free(&r);
}

Test(example_worked, unknown_example_field_before_features_is_skipped) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, NULL, 0, NULL, NULL));
  wb r = rec_hex("2a046d6574610a0f0a0d0a0161120812060a0400008040");
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_f32(tfq_example_result_dense(res, 0), (const float[]){4}, 1);
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_worked, empty_batch_gives_zero_leading_dimensions) {
  tfq_example_config *c = cfg_new();
  int64_t two = 2;
  OK(tfq_example_config_add_fixed_len(c, "f", TFQ_FLOAT, &two, 1, NULL, NULL));
  OK(tfq_example_config_add_var_len(c, "s", TFQ_STRING, NULL));
  OK(tfq_example_config_add_fixed_len_sequence(c, "q", TFQ_INT64, NULL, 0, 1, NULL, NULL));
  const char *ik[] = {"i"};
  int64_t sz = 5;
  OK(tfq_example_config_add_sparse(c, "z", ik, 1, "v", TFQ_FLOAT, &sz, 0, NULL));
  tfq_example_result *res;
  OK(tfq_parse_example_strings(c, NULL, NULL, 0, NULL, NULL, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){0, 2}, 2);
  expect_shape(tfq_example_result_dense(res, 1), (const int64_t[]){0, 0}, 2);
  expect_i64(tfq_example_result_sparse(res, 2)->dense_shape, (const int64_t[]){0, 0}, 2);
  expect_shape(tfq_example_result_sparse(res, 2)->indices, (const int64_t[]){0, 2}, 2);
  expect_i64(tfq_example_result_sparse(res, 3)->dense_shape, (const int64_t[]){0, 5}, 2);
  tfq_example_result_free(res);
  tfq_tensor *empty;
  int64_t zero = 0;
  OK(tfq_tensor_new(TFQ_STRING, &zero, 1, &empty, NULL));
  OK(tfq_parse_example(c, empty, NULL, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){0, 2}, 2);
  tfq_example_result_free(res);
  tfq_tensor_free(empty);
  tfq_example_config_free(c);
}

/* ---- the reference as a second opinion ------------------------------------------------------ */

/* A tfq config equal to the reference features. */
static tfq_example_config *cfg_from(const ref_feature *fs, size_t n, tfq_status *st) {
  tfq_example_config *c = cfg_new();
  for (size_t i = 0; i < n; i++) {
    const ref_feature *f = &fs[i];
    tfq_tensor *def = NULL;
    int64_t nd = 1;
    if (f->kind == TFQ_EXAMPLE_FIXED_LEN)
      for (int d = 0; d < f->rank; d++) nd *= f->dims[d];
    if (f->has_def) {
      OK(tfq_tensor_new(f->dtype, &nd, 1, &def, NULL));
      for (int64_t j = 0; j < nd; j++) {
        if (f->dtype == TFQ_STRING)
          OK(tfq_tensor_set_string(def, j, (const char *)f->def[j].s, f->def[j].n, NULL));
        else if (f->dtype == TFQ_FLOAT)
          memcpy((char *)tfq_tensor_data(def) + 4 * j, &f->def[j].f, 4);
        else
          ((int64_t *)tfq_tensor_data(def))[j] = f->def[j].i;
      }
    }
    tfq_code rc = TFQ_OK;
    switch (f->kind) {
      case TFQ_EXAMPLE_FIXED_LEN:
        rc = tfq_example_config_add_fixed_len(c, f->key, f->dtype, f->dims, f->rank, def, st);
        break;
      case TFQ_EXAMPLE_VAR_LEN: rc = tfq_example_config_add_var_len(c, f->key, f->dtype, st); break;
      case TFQ_EXAMPLE_FIXED_LEN_SEQUENCE:
        rc = tfq_example_config_add_fixed_len_sequence(c, f->key, f->dtype, f->dims, f->rank, 1,
                                                       def, st);
        break;
      case TFQ_EXAMPLE_SPARSE:
        rc = tfq_example_config_add_sparse(c, f->key, f->index_keys, (size_t)f->rank, f->value_key,
                                           f->dtype, f->dims, f->already_sorted, st);
        break;
    }
    tfq_tensor_free(def);
    cr_assert_eq(rc, TFQ_OK, "adding %s: %s", f->key, tfq_status_message(st));
  }
  return c;
}

/* Runs the batch path on all records and the single path on each, comparing with the
 * reference; returns the number of comparisons where tfq succeeded. */
static int agree(ref_feature *fs, size_t nf, const wb *recs, int64_t n, const char *const *names) {
  tfq_status *st = tfq_status_new();
  tfq_example_config *c = cfg_from(fs, nf, st);
  const uint8_t *p[64];
  size_t l[64];
  for (int64_t i = 0; i < n; i++) {
    p[i] = recs[i].p ? recs[i].p : (const uint8_t *)"";
    l[i] = recs[i].n;
  }
  ref_result *ref = malloc(sizeof *ref);
  char why[8192];
  int oks = 0;
  ref_parse(fs, nf, p, l, n, names, 0, ref);
  tfq_example_result *res = NULL;
  tfq_code rc = batch(c, recs, n, names, &res, st);
  cr_assert(ref_compare(ref, rc, st, res, why, sizeof why), "batch: %s", why);
  oks += rc == TFQ_OK;
  tfq_example_result_free(res);
  ref_free(ref);
  for (int64_t i = 0; i < n; i++) {
    ref_parse(fs, nf, &p[i], &l[i], 1, NULL, 1, ref);
    rc = tfq_parse_single_example(c, (const char *)p[i], l[i], &res, st);
    cr_assert(ref_compare(ref, rc, st, res, why, sizeof why), "single %lld: %s", (long long)i, why);
    oks += rc == TFQ_OK;
    tfq_example_result_free(res);
    ref_free(ref);
  }
  free(ref);
  tfq_example_config_free(c);
  tfq_status_free(st);
  return oks;
}

static wb feat_hex(const char *h) { return rec_hex(h); }

/* ---- §2.4: where TF differs from protobuf --------------------------------------------------- */

static const float *parse_floats1(const char *feature_hex, int fixed, int64_t *n, tfq_status *st,
                                  tfq_code *rc) {
  static float out[64];
  tfq_example_config *c = cfg_new();
  int64_t dim = fixed;
  if (fixed)
    OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &dim, 1, NULL, NULL));
  else
    OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  wb r = ex1("a", feat_hex(feature_hex));
  tfq_example_result *res = NULL;
  *rc = batch(c, &r, 1, NULL, &res, st);
  *n = -1;
  if (*rc == TFQ_OK) {
    const tfq_tensor *t =
        fixed ? tfq_example_result_dense(res, 0) : tfq_example_result_sparse(res, 0)->values;
    *n = tfq_tensor_num_elements(t);
    memcpy(out, tfq_tensor_cdata(t), (size_t)*n * 4);
  }
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_example_config_free(c);
  return out;
}

Test(example_wire, two_packed_chunks_keep_the_first_only) {
  int64_t n;
  tfq_code rc;
  /* float_list { 0a 04 <1.0> 0a 04 <2.0> } */
  const float *v = parse_floats1("120c0a040000803f0a0400000040", 0, &n, NULL, &rc);
  cr_assert_eq(rc, TFQ_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(v[0], 1.0f);
}

Test(example_wire, packed_then_unpacked_keeps_the_packed_chunk) {
  int64_t n;
  tfq_code rc;
  const float *v = parse_floats1("120b0a040000803f0d00000040", 0, &n, NULL, &rc);
  cr_assert_eq(rc, TFQ_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(v[0], 1.0f);
}

Test(example_wire, unpacked_then_packed_is_a_list_failure) {
  int64_t n;
  tfq_code rc;
  tfq_status *st = tfq_status_new();
  parse_floats1("120b0d0000803f0a0400000040", 0, &n, st, &rc);
  cr_assert_eq(rc, TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  tfq_status_free(st);
}

Test(example_wire, packed_float_spare_bytes_are_ignored) {
  int64_t n;
  tfq_code rc;
  const float *v = parse_floats1("12080a060000803f0102", 0, &n, NULL, &rc);
  cr_assert_eq(rc, TFQ_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(v[0], 1.0f);
}

Test(example_wire, the_first_byte_decides_the_kind) {
  /* float_list [1.0] followed by an int64_list: the float list wins */
  int64_t n;
  tfq_code rc;
  const float *v = parse_floats1("12060a040000803f1a030a0105", 0, &n, NULL, &rc);
  cr_assert_eq(rc, TFQ_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(v[0], 1.0f);
}

Test(example_wire, unknown_field_in_a_feature_before_the_list_is_unsupported_after_ignored) {
  int64_t n;
  tfq_code rc;
  tfq_status *st = tfq_status_new();
  parse_floats1("2001120412020a00", 0, &n, st, &rc);
  cr_assert_eq(rc, TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Unsupported datatype.");
  cr_assert_eq(tfq_status_record(st), 0);
  const float *v = parse_floats1("12060a040000803f2001", 0, &n, st, &rc);
  cr_assert_eq(rc, TFQ_OK);
  cr_assert_eq(n, 1);
  cr_assert_eq(v[0], 1.0f);
  tfq_status_free(st);
}

Test(example_wire, unknown_field_in_features_or_entry_breaks_the_structure) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  tfq_status *st = tfq_status_new();
  /* Features { 10 01 } */
  wb r = rec_hex("0a021001");
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Could not parse example input, value: '\n\x02\x10\x01'");
  wb_free(&r);
  /* entry { key "a", value <empty>, 18 01 } */
  r = rec_hex("0a090a070a016112001801");
  cr_assert(contains(batch_err(c, &r, 1, NULL, st), "Could not parse example input, value: '"));
  cr_assert(contains(single_err(c, &r, st), "Could not parse example input, value: '"));
  wb_free(&r);
  tfq_status_free(st);
  tfq_example_config_free(c);
}

Test(example_wire, unknown_field_in_a_bytes_list_is_a_list_failure) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_STRING, NULL));
  wb r = ex1("a", feat_hex("0a050a01781001"));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  cr_assert_str_eq(single_err(c, &r, st),
                   "Key: a.  Can't parse serialized Example: Could not get "
                   "num elements in bytes_list.");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_wire, entry_with_one_or_three_fields_breaks_the_structure) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  tfq_status *st = tfq_status_new();
  const char *bad[] = {"0a050a030a0161", "0a040a021200", "0a020a00", "0a0b0a090a016112000a0162"};
  for (int i = 0; i < 4; i++) {
    wb r = rec_hex(bad[i]);
    cr_assert(contains(batch_err(c, &r, 1, NULL, st), "Could not parse example input"), "%s",
              bad[i]);
    wb_free(&r);
  }
  tfq_status_free(st);
  tfq_example_config_free(c);
}

Test(example_wire, entry_fields_in_any_order_and_repeats_overwrite) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "b", TFQ_INT64, NULL));
  OK(tfq_example_config_add_var_len(c, "", TFQ_INT64, NULL));
  /* value first, then key "b" */
  wb r[3] = {rec_hex("0a0c0a0a12051a030a01070a0162"),
             /* key "a" then key "b": the later key wins, the value is an empty Feature */
             rec_hex("0a080a060a01610a0162"),
             /* two values and no key: key "" with the second value */
             rec_hex("0a100a0e12051a030a010112051a030a0102")};
  tfq_example_result *res;
  OK(batch(c, r, 3, NULL, &res, NULL));
  const tfq_sparse_tensor *b = tfq_example_result_sparse(res, 1),
                          *e = tfq_example_result_sparse(res, 0);
  expect_i64(b->values, (const int64_t[]){7}, 1);
  expect_i64(b->indices, (const int64_t[]){0, 0}, 2);
  expect_i64(e->values, (const int64_t[]){2}, 1);
  expect_i64(e->indices, (const int64_t[]){2, 0}, 2);
  tfq_example_result_free(res);
  ref_feature fs[2] = {{.key = "b", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_INT64},
                       {.key = "", .kind = TFQ_EXAMPLE_VAR_LEN, .dtype = TFQ_INT64}};
  agree(fs, 2, r, 3, NULL);
  recs_free(r, 3);
  tfq_example_config_free(c);
}

Test(example_wire, bytes_stopping_at_an_entry_boundary_with_a_longer_length_are_accepted) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_INT64, NULL));
  /* Example.features declares 0x40 bytes, the entry ends the buffer */
  wb r = rec_hex("0a400a0a0a016112051a030a0105");
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){5}, 1);
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_wire, garbage_in_an_unrequested_feature_is_never_read) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_INT64, NULL));
  wb fs = {0}, g = feat_hex("ffffff"), v = feat_ints((const int64_t[]){9}, 1, 1);
  ex_entry(&fs, "zz", 2, &g);
  ex_entry(&fs, "a", 1, &v);
  wb r = ex_wrap(&fs);
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){9}, 1);
  tfq_example_result_free(res);
  wb_free(&fs);
  wb_free(&g);
  wb_free(&v);
  wb_free(&r);
  tfq_example_config_free(c);
}

/* Two entries for one key: an earlier non-empty one and a last empty one. */
static wb dup_with_empty_last(void) {
  wb fs = {0}, v = feat_ints((const int64_t[]){4}, 1, 1), e = {0};
  ex_entry(&fs, "k", 1, &v);
  ex_entry(&fs, "k", 1, &e);
  wb r = ex_wrap(&fs);
  wb_free(&fs);
  wb_free(&v);
  return r;
}

Test(example_wire, duplicate_key_with_an_empty_last_entry) {
  wb r = dup_with_empty_last();
  tfq_example_result *res;
  /* dense: the empty entry is skipped, the earlier one supplies the value */
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "k", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_dense(res, 0), (const int64_t[]){4}, 1);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r.p, r.n, &res, NULL));
  expect_i64(tfq_example_result_dense(res, 0), (const int64_t[]){4}, 1);
  tfq_example_result_free(res);
  tfq_example_config_free(c);
  /* VarLen: the batch path uses the empty entry (0 values), the single path skips it */
  c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "k", TFQ_INT64, NULL));
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_shape(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){0}, 1);
  expect_i64(tfq_example_result_sparse(res, 0)->dense_shape, (const int64_t[]){1, 0}, 2);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r.p, r.n, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){4}, 1);
  tfq_example_result_free(res);
  tfq_example_config_free(c);
  wb_free(&r);
}

Test(example_wire, last_entry_wins_and_a_skipped_duplicate_of_the_wrong_kind_is_harmless) {
  wb fs = {0}, a = feat_floats((const float[]){1}, 1, 1), b = feat_ints((const int64_t[]){5}, 1, 0);
  ex_entry(&fs, "k", 1, &a);
  ex_entry(&fs, "k", 1, &b);
  wb r = ex_wrap(&fs);
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "k", TFQ_INT64, NULL, 0, NULL, NULL));
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_dense(res, 0), (const int64_t[]){5}, 1);
  tfq_example_result_free(res);
  tfq_example_config_free(c);
  wb_free(&fs);
  wb_free(&a);
  wb_free(&b);
  wb_free(&r);
}

Test(example_wire, unsupported_datatype_in_an_overridden_entry_still_fails) {
  wb fs = {0}, bad = feat_hex("2200"), good = feat_ints((const int64_t[]){5}, 1, 1);
  ex_entry(&fs, "k", 1, &bad);
  ex_entry(&fs, "k", 1, &good);
  wb r = ex_wrap(&fs);
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "k", TFQ_INT64, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st), "Unsupported datatype.");
  cr_assert_str_eq(single_err(c, &r, st), "Unsupported datatype.");
  tfq_status_free(st);
  tfq_example_config_free(c);
  wb_free(&fs);
  wb_free(&bad);
  wb_free(&good);
  wb_free(&r);
}

Test(example_wire, varints_up_to_ten_bytes_non_minimal_accepted) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_INT64, NULL));
  /* int64_list unpacked: 08 80 00 (non-minimal 0), 08 + ten-byte -1 */
  wb r = ex1("a", feat_hex("1a0f08800008ffffffffffffffffff01"));
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){0, -1}, 2);
  tfq_example_result_free(res);
  wb_free(&r);
  /* an eleven-byte varint fails the list */
  r = ex1("a", feat_hex("1a0c08ffffffffffffffffffff01"));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  cr_assert_str_eq(single_err(c, &r, st),
                   "Key: a.  Can't parse serialized Example: Parsing int64_list failed.");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_wire, example_level_fields_skip_merge_and_fail_by_wire_type) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_INT64, NULL));
  OK(tfq_example_config_add_var_len(c, "b", TFQ_INT64, NULL));
  tfq_example_result *res;
  /* two Features fields (two Examples concatenated) merge; varint, fixed64, fixed32 and
   * field-1-as-varint (08) unknown fields are skipped; a 00 tag skips a varint */
  wb r = rec_hex(
      "0a090a070a016112021a00"
      "0801"
      "090000000000000000"
      "2d00000000"
      "0000"
      "0a090a070a016212021a00");
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_shape(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){0}, 1);
  expect_i64(tfq_example_result_sparse(res, 0)->dense_shape, (const int64_t[]){1, 0}, 2);
  expect_i64(tfq_example_result_sparse(res, 1)->dense_shape, (const int64_t[]){1, 0}, 2);
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_status *st = tfq_status_new();
  const char *bad[] = {"0b", "0c", "0e", "0f", "00", "08ff", "09000000"};
  for (int i = 0; i < 7; i++) {
    r = rec_hex(bad[i]);
    cr_assert(contains(batch_err(c, &r, 1, NULL, st), "Could not parse example input"), "%s",
              bad[i]);
    wb_free(&r);
  }
  /* a length-delimited skip past the end is fine */
  r = rec_hex("1a7f0102");
  OK(batch(c, &r, 1, NULL, &res, st));
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_status_free(st);
  tfq_example_config_free(c);
}

Test(example_wire, float_bits_nan_payloads_and_negative_zero_are_kept) {
  tfq_example_config *c = cfg_new();
  int64_t three = 3;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &three, 1, NULL, NULL));
  uint32_t bits[3] = {0x7fa00001u, 0xffc12345u, 0x80000000u};
  float v[3];
  memcpy(v, bits, sizeof v);
  wb r[2] = {ex1("a", feat_floats(v, 3, 1)), ex1("a", feat_floats(v, 3, 0))};
  tfq_example_result *res;
  OK(batch(c, r, 2, NULL, &res, NULL));
  const uint32_t *got = tfq_tensor_cdata(tfq_example_result_dense(res, 0));
  for (int i = 0; i < 6; i++) cr_assert_eq(got[i], bits[i % 3], "value %d: %08x", i, got[i]);
  tfq_example_result_free(res);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

Test(example_wire, packed_float_fixed_len_copies_min_of_count_and_stride) {
  /* a chunk declaring 8 bytes but carrying 4 */
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, NULL, 0, NULL, NULL));
  wb r = ex1("a", feat_hex("12060a080000803f"));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Number of float values != expected.  "
                   "Values size: 2 but output shape: []");
  tfq_example_config_free(c);
  c = cfg_new();
  int64_t two = 2;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &two, 1, NULL, NULL));
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  tfq_example_config_free(c);
  c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "a", TFQ_FLOAT, NULL));
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  tfq_example_config_free(c);
  tfq_status_free(st);
  wb_free(&r);
}

Test(example_wire, string_fixed_len_with_too_many_values_is_a_list_failure) {
  tfq_example_config *c = cfg_new();
  int64_t two = 2;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_STRING, &two, 1, NULL, NULL));
  const char *v3[] = {"x", "y", "z"}, *v1[] = {"x"};
  wb r[2] = {ex1("a", feat_bytes(v3, NULL, 3)), ex1("a", feat_bytes(v1, NULL, 1))};
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r[0], 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Can't parse serialized Example.");
  cr_assert_str_eq(single_err(c, &r[0], st),
                   "Key: a.  Can't parse serialized Example: Parsing bytes_list failed.");
  cr_assert_str_eq(batch_err(c, &r[1], 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Number of bytes values != expected.  "
                   "Values size: 1 but output shape: [2]");
  cr_assert_str_eq(
      single_err(c, &r[1], st),
      "Key: a.  Can't parse serialized Example: Some bytes_list slice was not parsed.");
  tfq_status_free(st);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

Test(example_wire, present_empty_list_is_a_count_error_even_with_a_default) {
  tfq_example_config *c = cfg_new();
  tfq_tensor *d = i64s((const int64_t[]){1}, 1, 0);
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_INT64, NULL, 0, d, NULL));
  tfq_tensor_free(d);
  wb r = ex1("a", feat_ints(NULL, 0, 1));
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Number of int64 values != expected.  "
                   "Values size: 0 but output shape: []");
  cr_assert_str_eq(
      single_err(c, &r, st),
      "Key: a.  Can't parse serialized Example: Some int64_list slice was not parsed.");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_wire, zero_sized_shape_is_required_when_missing_but_parses_an_empty_list) {
  tfq_example_config *c = cfg_new();
  int64_t zero = 0;
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_FLOAT, &zero, 1, NULL, NULL));
  wb r[2] = {ex1("a", feat_floats(NULL, 0, 1)), ex0()};
  tfq_example_result *res;
  OK(batch(c, r, 1, NULL, &res, NULL));
  expect_shape(tfq_example_result_dense(res, 0), (const int64_t[]){1, 0}, 2);
  tfq_example_result_free(res);
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, r, 2, NULL, st),
                   "Name: <unknown>, Feature: a (data type: float) "
                   "is required but could not be found.");
  tfq_status_free(st);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

/* ---- §4, §5: the batch algorithm and the messages ------------------------------------------- */

Test(example_errors, lowest_index_failing_example_wins) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_INT64, NULL, 0, NULL, NULL));
  wb r[12];
  for (int i = 0; i < 12; i++) r[i] = ints_ex("a", (const int64_t[]){i}, 1);
  wb_free(&r[5]);
  r[5] = rec_hex("0a0501"); /* broken */
  wb_free(&r[9]);
  r[9] = ex0(); /* missing */
  wb_free(&r[3]);
  r[3] = floats_ex("a", (const float[]){1}, 1); /* wrong kind */
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, r, 12, NULL, st),
                   "Name: <unknown>, Key: a, Index: 3.  Data types "
                   "don't match. Data type: float but expected type: int64");
  cr_assert_eq(tfq_status_record(st), 3);
  cr_assert_str_eq(batch_err(c, r + 4, 8, NULL, st),
                   "Could not parse example input, value: '\n\x05\x01'");
  cr_assert_eq(tfq_status_record(st), 1);
  tfq_status_free(st);
  recs_free(r, 12);
  tfq_example_config_free(c);
}

Test(example_errors, entry_errors_come_in_reverse_wire_order_before_missing_required) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_fixed_len(c, "b", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_fixed_len(c, "c", TFQ_INT64, NULL, 0, NULL, NULL));
  wb fs = {0}, fb = feat_floats((const float[]){1}, 1, 1), fc = feat_hex("12020a01");
  ex_entry(&fs, "b", 1, &fb);
  ex_entry(&fs, "c", 1, &fc);
  wb r = ex_wrap(&fs);
  tfq_status *st = tfq_status_new();
  /* "c" (last on the wire) fails first; "a" is missing but reported only after */
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: c, Index: 0.  Data types "
                   "don't match. Data type: float but expected type: int64");
  wb_free(&r);
  wb fs2 = {0};
  wb fi = feat_ints((const int64_t[]){1}, 1, 1);
  ex_entry(&fs2, "b", 1, &fi);
  r = ex_wrap(&fs2);
  /* "a" and "c" missing: the first in key order */
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Feature: a (data type: int64) "
                   "is required but could not be found.");
  tfq_status_free(st);
  wb_free(&fs);
  wb_free(&fs2);
  wb_free(&fb);
  wb_free(&fc);
  wb_free(&fi);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_errors, fixed_len_sequence_stride_messages_both_paths) {
  tfq_example_config *c = cfg_new();
  int64_t dims[2] = {2, 3};
  OK(tfq_example_config_add_fixed_len_sequence(c, "a", TFQ_FLOAT, dims, 2, 1, NULL, NULL));
  wb r = floats_ex("a", (const float[]){1, 2}, 2);
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Name: <unknown>, Key: a, Index: 0.  Number of float values is not a multiple "
                   "of stride length. Saw 2 values but output shape is: [?,2,3]");
  cr_assert_str_eq(single_err(c, &r, st),
                   "Error while parsing feature with key a: number of "
                   "elements should be divisible by 6, found 2 instead");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_errors, stride_message_counts_the_values_of_the_whole_minibatch) {
  /* (verified on the 2.21 wheel) 9 examples make 8 minibatches: {0} ... {6}, {7, 8} */
  tfq_example_config *c = cfg_new();
  int64_t two = 2;
  OK(tfq_example_config_add_fixed_len_sequence(c, "a", TFQ_INT64, &two, 1, 1, NULL, NULL));
  wb r[16];
  for (int i = 0; i < 16; i++)
    r[i] = ints_ex("a", (const int64_t[]){1, 2, 3}, i == 8 || i == 15 ? 3 : 2);
  tfq_status *st = tfq_status_new();
  cr_assert_str_eq(batch_err(c, r, 9, NULL, st),
                   "Name: <unknown>, Key: a, Index: 8.  Number of int64 values is not a multiple "
                   "of stride length. Saw 5 values but output shape is: [?,2]");
  wb_free(&r[7]);
  r[7] = ex0();
  cr_assert(contains(batch_err(c, r, 9, NULL, st), "Saw 3 values"));
  wb_free(&r[8]);
  r[8] = ints_ex("a", (const int64_t[]){1, 2}, 2);
  cr_assert(contains(batch_err(c, r, 16, NULL, st),
                     "Index: 15.  Number of int64 values is not a "
                     "multiple of stride length. Saw 5 values"));
  tfq_status_free(st);
  recs_free(r, 16);
  tfq_example_config_free(c);
}

Test(example_errors, list_failure_texts_per_kind_and_path) {
  tfq_status *st = tfq_status_new();
  struct {
    tfq_example_kind kind;
    tfq_dtype dt;
    const char *feature, *single;
  } cases[] = {
      {TFQ_EXAMPLE_FIXED_LEN, TFQ_INT64, "1a030a0180", "Parsing int64_list failed."},
      {TFQ_EXAMPLE_FIXED_LEN, TFQ_FLOAT, "12020d01", "Parsing float_list failed."},
      {TFQ_EXAMPLE_FIXED_LEN, TFQ_STRING, "0a020a05", "Parsing bytes_list failed."},
      {TFQ_EXAMPLE_VAR_LEN, TFQ_INT64, "1a030a0180", "Parsing int64_list failed."},
      {TFQ_EXAMPLE_VAR_LEN, TFQ_FLOAT, "12020d01", "Parsing float_list failed."},
      {TFQ_EXAMPLE_VAR_LEN, TFQ_STRING, "0a020a05", "Could not get num elements in bytes_list."},
      {TFQ_EXAMPLE_FIXED_LEN_SEQUENCE, TFQ_FLOAT, "12020d01", "Parsing float_list failed."},
      {TFQ_EXAMPLE_FIXED_LEN_SEQUENCE, TFQ_STRING, "0a020a05",
       "Could not get num elements in bytes_list."},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tfq_example_config *c = cfg_new();
    if (cases[i].kind == TFQ_EXAMPLE_FIXED_LEN)
      OK(tfq_example_config_add_fixed_len(c, "k", cases[i].dt, NULL, 0, NULL, NULL));
    else if (cases[i].kind == TFQ_EXAMPLE_VAR_LEN)
      OK(tfq_example_config_add_var_len(c, "k", cases[i].dt, NULL));
    else
      OK(tfq_example_config_add_fixed_len_sequence(c, "k", cases[i].dt, NULL, 0, 1, NULL, NULL));
    wb r = ex1("k", feat_hex(cases[i].feature));
    cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                     "Name: <unknown>, Key: k, Index: 0.  Can't parse serialized Example.",
                     "case %zu", i);
    char want[256];
    snprintf(want, sizeof want, "Key: k.  Can't parse serialized Example: %s", cases[i].single);
    cr_assert_str_eq(single_err(c, &r, st), want, "case %zu", i);
    wb_free(&r);
    tfq_example_config_free(c);
  }
  tfq_status_free(st);
}

Test(example_errors, names_must_match_the_batch_and_appear_verbatim) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_fixed_len(c, "a", TFQ_INT64, NULL, 0, NULL, NULL));
  wb r = ex0();
  tfq_tensor *ser = strs((const char *[]){"", ""}, 2, 1);
  OK(tfq_tensor_set_string(ser, 0, (const char *)r.p, r.n, NULL));
  OK(tfq_tensor_set_string(ser, 1, (const char *)r.p, r.n, NULL));
  tfq_tensor *one = strs((const char *[]){"n0"}, 1, 1);
  tfq_tensor *two = strs((const char *[]){"n0", "name one"}, 2, 1);
  tfq_tensor *none = strs(NULL, 0, 1);
  tfq_status *st = tfq_status_new();
  tfq_example_result *res;
  cr_assert_eq(tfq_parse_example(c, ser, one, &res, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Expected names have the same shape as serialized: "
                   "name.shape=[1], serialized.shape=[2]");
  cr_assert_eq(tfq_parse_example(c, ser, two, &res, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Name: n0, Feature: a (data type: int64) is required "
                   "but could not be found.");
  cr_assert_eq(tfq_parse_example(c, ser, none, &res, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "Name: <unknown>, Feature: a"));
  tfq_tensor *m;
  int64_t d2[2] = {1, 1};
  OK(tfq_tensor_new(TFQ_STRING, d2, 2, &m, NULL));
  cr_assert_eq(tfq_parse_example(c, m, NULL, &res, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Expected serialized to be a scalar or vector, got shape: [1,1]");
  tfq_tensor_free(m);
  tfq_tensor_free(ser);
  tfq_tensor_free(one);
  tfq_tensor_free(two);
  tfq_tensor_free(none);
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_errors, scalar_input_takes_the_single_path) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "k", TFQ_INT64, NULL));
  wb r = dup_with_empty_last();
  tfq_tensor *ser;
  OK(tfq_tensor_new(TFQ_STRING, NULL, 0, &ser, NULL));
  OK(tfq_tensor_set_string(ser, 0, (const char *)r.p, r.n, NULL));
  tfq_example_result *res;
  OK(tfq_parse_example(c, ser, NULL, &res, NULL));
  const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, 0);
  expect_i64(sp->values, (const int64_t[]){4}, 1); /* single path: the empty entry is skipped */
  expect_shape(sp->indices, (const int64_t[]){1, 1}, 2);
  expect_i64(sp->dense_shape, (const int64_t[]){1}, 1);
  tfq_example_result_free(res);
  tfq_tensor_free(ser);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_errors, empty_config_messages_per_path) {
  tfq_example_config *c = cfg_new();
  tfq_status *st = tfq_status_new();
  tfq_example_result *res;
  cr_assert_eq(tfq_parse_example_strings(c, NULL, NULL, 0, NULL, NULL, &res, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Argument `features` cannot be None or falsy. Got {}");
  cr_assert_eq(tfq_parse_single_example(c, "", 0, &res, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Invalid argument: features cannot be empty.");
  cr_assert_eq(tfq_example_config_check(c, st), TFQ_INVALID_ARGUMENT);
  tfq_status_free(st);
  tfq_example_config_free(c);
}

/* ---- SparseFeature (§3.5) -------------------------------------------------------------------- */

static wb sparse_ex(const int64_t *ix, size_t ni, const int64_t *iy, size_t nj, const float *v,
                    size_t nv) {
  wb fs = {0}, a = feat_ints(ix, ni, 1), b = feat_ints(iy, nj, 1), c = feat_floats(v, nv, 1);
  ex_entry(&fs, "ix", 2, &a);
  if (iy) ex_entry(&fs, "iy", 2, &b);
  ex_entry(&fs, "val", 3, &c);
  wb r = ex_wrap(&fs);
  wb_free(&fs);
  wb_free(&a);
  wb_free(&b);
  wb_free(&c);
  return r;
}

Test(example_sparse, entries_sorted_within_each_example_no_range_check_duplicates_kept) {
  tfq_example_config *c = cfg_new();
  const char *ik[] = {"ix"};
  int64_t size = 10;
  OK(tfq_example_config_add_sparse(c, "sp", ik, 1, "val", TFQ_FLOAT, &size, 0, NULL));
  wb r[2] = {sparse_ex((const int64_t[]){50, 3, 3}, 3, NULL, 0, (const float[]){1, 2, 3}, 3),
             sparse_ex((const int64_t[]){-1}, 1, NULL, 0, (const float[]){4}, 1)};
  tfq_example_result *res;
  OK(batch(c, r, 2, NULL, &res, NULL));
  cr_assert_eq(tfq_example_result_size(res), 1); /* index and value keys are not outputs */
  const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, 0);
  expect_i64(sp->indices, (const int64_t[]){0, 3, 0, 3, 0, 50, 1, -1}, 8);
  expect_f32(sp->values, (const float[]){2, 3, 1, 4}, 4);
  expect_i64(sp->dense_shape, (const int64_t[]){2, 10}, 2);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r[0].p, r[0].n, &res, NULL));
  sp = tfq_example_result_sparse(res, 0);
  expect_shape(sp->indices, (const int64_t[]){3, 1}, 2);
  expect_i64(sp->indices, (const int64_t[]){3, 3, 50}, 3);
  expect_i64(sp->dense_shape, (const int64_t[]){10}, 1);
  tfq_example_result_free(res);
  recs_free(r, 2);
  tfq_example_config_free(c);
}

Test(example_sparse, already_sorted_keeps_the_wire_order_and_two_index_keys) {
  tfq_example_config *c = cfg_new();
  const char *ik[] = {"ix", "iy"};
  int64_t size[2] = {4, 4};
  OK(tfq_example_config_add_sparse(c, "sp", ik, 2, "val", TFQ_FLOAT, size, 1, NULL));
  OK(tfq_example_config_add_var_len(c, "ix", TFQ_INT64, NULL));
  wb r =
      sparse_ex((const int64_t[]){3, 1}, 2, (const int64_t[]){0, 5}, 2, (const float[]){1, 2}, 2);
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  cr_assert_eq(tfq_example_result_size(res), 2);
  cr_assert_str_eq(tfq_example_result_key(res, 0), "ix");
  const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, 1);
  expect_i64(sp->indices, (const int64_t[]){0, 3, 0, 0, 1, 5}, 6);
  expect_f32(sp->values, (const float[]){1, 2}, 2);
  expect_i64(sp->dense_shape, (const int64_t[]){1, 4, 4}, 3);
  expect_i64(tfq_example_result_sparse(res, 0)->values, (const int64_t[]){3, 1}, 2);
  tfq_example_result_free(res);
  OK(tfq_parse_single_example(c, (const char *)r.p, r.n, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 1)->indices, (const int64_t[]){3, 0, 1, 5}, 4);
  expect_i64(tfq_example_result_sparse(res, 1)->dense_shape, (const int64_t[]){4, 4}, 2);
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_example_config_free(c);
}

Test(example_sparse, length_mismatches_fail_as_tf_does) {
  tfq_example_config *c = cfg_new();
  const char *ik[] = {"ix", "iy"};
  int64_t size[2] = {4, 4};
  OK(tfq_example_config_add_sparse(c, "sp", ik, 2, "val", TFQ_FLOAT, size, 0, NULL));
  tfq_status *st = tfq_status_new();
  wb r = sparse_ex((const int64_t[]){1, 2}, 2, (const int64_t[]){1}, 1, (const float[]){1, 2}, 2);
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "ConcatOp : Dimension 0 in both shapes must be "
                   "equal: shape[0] = [2,1] vs. shape[2] = [1,1]");
  cr_assert_str_eq(single_err(c, &r, st),
                   "ConcatOp : Dimension 0 in both shapes must be equal: "
                   "shape[0] = [2,0] vs. shape[2] = [1,1]");
  wb_free(&r);
  r = sparse_ex((const int64_t[]){1, 2}, 2, (const int64_t[]){1, 1}, 2, (const float[]){1}, 1);
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st),
                   "Number of elements in indices (2) and values (1) do not match");
  wb_free(&r);
  tfq_example_config_free(c);
  /* already_sorted: no check, as in TF (2 index rows, 1 value) */
  c = cfg_new();
  OK(tfq_example_config_add_sparse(c, "sp", ik, 1, "val", TFQ_FLOAT, size, 1, NULL));
  r = sparse_ex((const int64_t[]){1, 2}, 2, NULL, 0, (const float[]){1}, 1);
  tfq_example_result *res;
  OK(batch(c, &r, 1, NULL, &res, NULL));
  expect_i64(tfq_example_result_sparse(res, 0)->indices, (const int64_t[]){0, 1, 0, 2}, 4);
  expect_f32(tfq_example_result_sparse(res, 0)->values, (const float[]){1}, 1);
  tfq_example_result_free(res);
  wb_free(&r);
  tfq_status_free(st);
  tfq_example_config_free(c);
}

Test(example_sparse, dense_and_sparse_keys_must_not_intersect_nor_conflict) {
  tfq_example_config *c = cfg_new();
  const char *ik[] = {"m"};
  int64_t size = 3;
  OK(tfq_example_config_add_fixed_len(c, "v", TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_sparse(c, "s", ik, 1, "v", TFQ_FLOAT, &size, 0, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_example_config_check(c, st), TFQ_INVALID_ARGUMENT);
  const char *want =
      "Dense and sparse keys must not intersect; dense_keys: ['v'], sparse_keys: "
      "['m', 'v'], intersection: {'v'}";
  cr_assert_str_eq(tfq_status_message(st), want);
  wb r = ex0();
  cr_assert_str_eq(batch_err(c, &r, 1, NULL, st), want);
  cr_assert_str_eq(single_err(c, &r, st), want);
  tfq_example_config_free(c);
  c = cfg_new();
  const char *ik2[] = {"ix"};
  OK(tfq_example_config_add_var_len(c, "ix", TFQ_FLOAT, NULL));
  OK(tfq_example_config_add_sparse(c, "sp", ik2, 1, "v", TFQ_FLOAT, &size, 0, NULL));
  cr_assert_eq(tfq_example_config_check(c, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Conflicting type <dtype: 'float32'> vs <dtype: 'int64'> for feature ix.");
  tfq_status_free(st);
  wb_free(&r);
  tfq_example_config_free(c);
}

/* ---- configuration errors (§3) --------------------------------------------------------------- */

Test(example_config, python_layer_errors_at_add_time) {
  tfq_example_config *c = cfg_new();
  tfq_status *st = tfq_status_new();
  int64_t d[2] = {2, TFQ_UNKNOWN_DIM}, u = TFQ_UNKNOWN_DIM, three = 3, zero[1] = {0};
  struct {
    tfq_code rc;
    const char *msg;
  } got[16];
  int n = 0;
#define TRY(call)                                  \
  do {                                             \
    got[n].rc = (call);                            \
    got[n++].msg = strdup(tfq_status_message(st)); \
  } while (0)
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_FLOAT, NULL, TFQ_UNKNOWN_RANK, NULL, st));
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_FLOAT, &u, 1, NULL, st));
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_FLOAT, d, 2, NULL, st));
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_INT32, NULL, 0, NULL, st));
  TRY(tfq_example_config_add_var_len(c, "m", TFQ_INT32, st));
  TRY(tfq_example_config_add_var_len(c, "m", (tfq_dtype)0, st));
  tfq_tensor *one = f32s((const float[]){1}, 1);
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_FLOAT, &three, 1, one, st));
  TRY(tfq_example_config_add_fixed_len_sequence(c, "m", TFQ_FLOAT, NULL, 0, 0, NULL, st));
  tfq_tensor *twof = f32s((const float[]){1, 2}, 2);
  TRY(tfq_example_config_add_fixed_len_sequence(c, "m", TFQ_FLOAT, NULL, 0, 1, twof, st));
  TRY(tfq_example_config_add_fixed_len_sequence(c, "m", TFQ_FLOAT, zero, 1, 1, NULL, st));
  TRY(tfq_example_config_add_fixed_len_sequence(c, "m", TFQ_FLOAT, &u, 1, 1, NULL, st));
  tfq_tensor *i32;
  OK(tfq_tensor_new(TFQ_INT32, NULL, 0, &i32, NULL));
  TRY(tfq_example_config_add_fixed_len(c, "m", TFQ_INT64, NULL, 0, i32, st));
  const char *none[] = {NULL};
  TRY(tfq_example_config_add_sparse(c, "s", none, 0, "v", TFQ_FLOAT, NULL, 0, st));
  const char *ik[] = {"i"};
  TRY(tfq_example_config_add_sparse(c, "s", ik, 1, "", TFQ_INT64, &three, 1, st));
  OK(tfq_example_config_add_var_len(c, "m", TFQ_STRING, st));
  TRY(tfq_example_config_add_var_len(c, "m", TFQ_STRING, st));
#undef TRY
  const char *want[] = {
      "Missing shape for feature m.",
      "First dimension of shape for feature m unknown. Consider using FixedLenSequenceFeature.",
      "All dimensions of shape for feature m need to be known but received [2, None].",
      "Value passed to parameter 'dense_defaults' has DataType int32 not in list of allowed "
      "values: float32, int64, string",
      "Value passed to parameter 'sparse_types' has DataType int32 not in list of allowed "
      "values: float32, int64, string",
      "Missing type for feature m.",
      "Cannot reshape a tensor with 1 elements to shape [3] (3 elements)",
      "Unsupported: FixedLenSequenceFeature requires allow_missing to be True.",
      "Cannot reshape a tensor with 2 elements to shape [] (1 elements)",
      "dense_shapes[0] has a zero inner dimension: [?,0]",
      "dense_shapes[0] has unknown rank or unknown inner dimensions: [?,?]",
      "Value passed to parameter 'dense_defaults' has DataType int32 not in list of allowed "
      "values: float32, int64, string",
      "Missing index_key for SparseFeature SparseFeature(index_key=[], value_key='v', "
      "dtype=tf.float32, size=[], already_sorted=False).",
      "Missing value_key for SparseFeature SparseFeature(index_key='i', value_key='', "
      "dtype=tf.int64, size=3, already_sorted=True).",
      "Duplicate feature key: m",
  };
  cr_assert_eq(n, 15);
  for (int i = 0; i < n; i++) {
    cr_assert_eq(got[i].rc, TFQ_INVALID_ARGUMENT, "call %d", i);
    cr_assert_str_eq(got[i].msg, want[i], "call %d", i);
    free((void *)got[i].msg);
  }
  cr_assert_eq(tfq_example_config_size(c), 1); /* failed adds change nothing */
  tfq_tensor_free(one);
  tfq_tensor_free(twof);
  tfq_tensor_free(i32);
  tfq_status_free(st);
  tfq_example_config_free(c);
}

Test(example_config, outputs_in_key_order_with_kinds_dtypes_and_static_shapes) {
  tfq_example_config *c = cfg_new();
  int64_t two[2] = {2, 3}, size[2] = {7, 8};
  const char *ik[] = {"i", "j"};
  OK(tfq_example_config_add_var_len(c, "z", TFQ_STRING, NULL));
  OK(tfq_example_config_add_fixed_len(c, "b", TFQ_FLOAT, two, 2, NULL, NULL));
  OK(tfq_example_config_add_fixed_len_sequence(c, "a", TFQ_INT64, two, 1, 1, NULL, NULL));
  OK(tfq_example_config_add_sparse(c, "", ik, 2, "v", TFQ_FLOAT, size, 0, NULL));
  OK(tfq_example_config_check(c, NULL));
  cr_assert_eq(tfq_example_config_size(c), 4);
  const char *keys[] = {"", "a", "b", "z"};
  tfq_example_kind kinds[] = {TFQ_EXAMPLE_SPARSE, TFQ_EXAMPLE_FIXED_LEN_SEQUENCE,
                              TFQ_EXAMPLE_FIXED_LEN, TFQ_EXAMPLE_VAR_LEN};
  int ranks[] = {2, 2, 2, 1};
  for (size_t i = 0; i < 4; i++) {
    cr_assert_str_eq(tfq_example_config_key(c, i), keys[i]);
    cr_assert_eq(tfq_example_config_kind(c, i), kinds[i]);
    cr_assert_eq(tfq_example_config_rank(c, i), ranks[i]);
    cr_assert_eq(tfq_example_config_find(c, keys[i]), (int64_t)i);
  }
  cr_assert_eq(tfq_example_config_find(c, "nope"), -1);
  cr_assert(tfq_example_config_is_sparse(c, 0) && tfq_example_config_is_sparse(c, 3));
  cr_assert(!tfq_example_config_is_sparse(c, 1) && !tfq_example_config_is_sparse(c, 2));
  cr_assert_eq(tfq_example_config_dims(c, 1)[0], TFQ_UNKNOWN_DIM);
  cr_assert_eq(tfq_example_config_dims(c, 1)[1], 2);
  cr_assert_eq(tfq_example_config_dims(c, 0)[1], 8);
  cr_assert_eq(tfq_example_config_dtype(c, 3), TFQ_STRING);
  tfq_example_config_free(c);
}

Test(example_result, outlives_its_config_and_flattens_to_a_tuple) {
  tfq_example_config *c = cfg_new();
  OK(tfq_example_config_add_var_len(c, "s", TFQ_STRING, NULL));
  tfq_tensor *d = strs((const char *[]){"dflt"}, 1, 0);
  OK(tfq_example_config_add_fixed_len(c, "f", TFQ_STRING, NULL, 0, d, NULL));
  tfq_tensor_free(d);
  const char *v[] = {"x\0y", "zz"};
  size_t lens[] = {3, 2};
  wb r[2] = {ex1("s", feat_bytes(v, lens, 2)), ex0()};
  tfq_example_result *res;
  OK(batch(c, r, 2, NULL, &res, NULL));
  tfq_example_config_free(c);
  recs_free(r, 2); /* outputs own their bytes */
  cr_assert_eq(tfq_example_result_find(res, "s"), 1);
  cr_assert_eq(tfq_example_result_find(res, "q"), -1);
  size_t n;
  const char *s = tfq_tensor_string(tfq_example_result_sparse(res, 1)->values, 0, &n);
  cr_assert(n == 3 && memcmp(s, "x\0y", 3) == 0);
  s = tfq_tensor_string(tfq_example_result_dense(res, 0), 1, &n);
  cr_assert(n == 4 && memcmp(s, "dflt", 4) == 0);
  cr_assert_null(tfq_example_result_sparse(res, 0));
  cr_assert_null(tfq_example_result_dense(res, 1));
  tfq_tuple *t;
  OK(tfq_example_result_to_tuple(res, &t, NULL));
  cr_assert_eq(tfq_tuple_size(t), 4);
  cr_assert_eq(tfq_tuple_get(t, 1), tfq_example_result_sparse(res, 1)->indices);
  tfq_tensor *keep = tfq_tensor_ref(tfq_example_result_sparse(res, 1)->values);
  tfq_example_result_free(res);
  tfq_tuple_free(t);
  s = tfq_tensor_string(keep, 1, &n);
  cr_assert(n == 2 && memcmp(s, "zz", 2) == 0);
  tfq_tensor_free(keep);
}

/* ---- decode_raw (§8) and the new dtypes -------------------------------------------------- */

Test(decode_raw, little_and_big_endian_int16) {
  tfq_tensor *in = strs((const char *[]){"\x01\x02\x03\x04", "\xff\xff\x00\x80"}, 2, 1);
  OK(tfq_tensor_set_string(in, 1, "\xff\xff\x00\x80", 4, NULL));
  tfq_tensor *out;
  OK(tfq_decode_raw(in, TFQ_INT16, 1, &out, NULL));
  expect_shape(out, (const int64_t[]){2, 2}, 2);
  const int16_t *v = tfq_tensor_cdata(out);
  cr_assert(v[0] == 513 && v[1] == 1027 && v[2] == -1 && v[3] == -32768);
  tfq_tensor_free(out);
  tfq_tensor_free(in);
  in = strs((const char *[]){"\x01\x02\x03\x04"}, 1, 1);
  OK(tfq_decode_raw(in, TFQ_INT16, 0, &out, NULL));
  v = tfq_tensor_cdata(out);
  cr_assert(v[0] == 258 && v[1] == 772);
  tfq_tensor_free(out);
  tfq_tensor_free(in);
}

Test(decode_raw, complex_halves_swap_separately_and_half_types_decode) {
  tfq_tensor *in;
  OK(tfq_tensor_new(TFQ_STRING, NULL, 0, &in, NULL));
  float re = 1.5f, im = -2.0f;
  uint8_t be[8];
  for (int i = 0; i < 4; i++) {
    be[i] = ((uint8_t *)&re)[3 - i];
    be[4 + i] = ((uint8_t *)&im)[3 - i];
  }
  OK(tfq_tensor_set_string(in, 0, (const char *)be, 8, NULL));
  tfq_tensor *out;
  OK(tfq_decode_raw(in, TFQ_COMPLEX64, 0, &out, NULL));
  expect_shape(out, (const int64_t[]){1}, 1);
  const float *c = tfq_tensor_cdata(out);
  cr_assert(c[0] == 1.5f && c[1] == -2.0f);
  tfq_tensor_free(out);
  OK(tfq_decode_raw(in, TFQ_HALF, 1, &out, NULL));
  cr_assert_eq(tfq_tensor_dtype(out), TFQ_HALF);
  expect_shape(out, (const int64_t[]){4}, 1);
  tfq_tensor_free(out);
  OK(tfq_decode_raw(in, TFQ_BFLOAT16, 0, &out, NULL));
  cr_assert_eq(((const uint16_t *)tfq_tensor_cdata(out))[0], (uint16_t)(be[0] << 8 | be[1]));
  tfq_tensor_free(out);
  tfq_tensor_free(in);
}

Test(decode_raw, errors_and_empty_inputs) {
  tfq_status *st = tfq_status_new();
  tfq_tensor *out, *in = strs((const char *[]){"abc"}, 1, 1);
  cr_assert_eq(tfq_decode_raw(in, TFQ_FLOAT, 1, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Input to DecodeRaw has length 3 that is not a "
                   "multiple of 4, the size of float");
  cr_assert_eq(tfq_decode_raw(in, TFQ_HALF, 1, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Input to DecodeRaw has length 3 that is not a "
                   "multiple of 2, the size of half");
  tfq_tensor_free(in);
  in = strs((const char *[]){"abcd", "ab"}, 2, 1);
  cr_assert_eq(tfq_decode_raw(in, TFQ_UINT8, 1, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "DecodeRaw requires input strings to all be the same "
                   "size, but element 1 has size 4 != 2");
  const char *allowed =
      "not in list of allowed values: float16, float32, float64, int32, uint16, "
      "uint8, int16, int8, int64, complex64, complex128, bool, bfloat16";
  cr_assert_eq(tfq_decode_raw(in, TFQ_STRING, 1, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert(
      contains(tfq_status_message(st), "Value passed to parameter 'out_type' has DataType string"));
  cr_assert(contains(tfq_status_message(st), allowed));
  tfq_tensor_free(in);
  in = strs((const char *[]){"", ""}, 2, 1);
  OK(tfq_decode_raw(in, TFQ_DOUBLE, 1, &out, NULL));
  expect_shape(out, (const int64_t[]){2, 0}, 2);
  tfq_tensor_free(out);
  tfq_tensor_free(in);
  in = strs(NULL, 0, 1);
  OK(tfq_decode_raw(in, TFQ_INT64, 1, &out, NULL));
  expect_shape(out, (const int64_t[]){0, 0}, 2);
  tfq_tensor_free(out);
  tfq_tensor_free(in);
  tfq_status_free(st);
}

Test(dtype, half_and_bfloat16_have_tf_numbers_names_and_sizes) {
  cr_assert_eq(TFQ_HALF, 19);
  cr_assert_eq(TFQ_BFLOAT16, 14);
  cr_assert_str_eq(tfq_dtype_name(TFQ_HALF), "half");
  cr_assert_str_eq(tfq_dtype_name(TFQ_BFLOAT16), "bfloat16");
  cr_assert_eq(tfq_dtype_size(TFQ_HALF), 2);
  cr_assert_eq(tfq_dtype_size(TFQ_BFLOAT16), 2);
  cr_assert(tfq_dtype_valid(TFQ_HALF) && tfq_dtype_valid(TFQ_BFLOAT16));
  cr_assert(!tfq_dtype_valid((tfq_dtype)11));
}

/* ---- randomized comparison with the reference (example_ref.h) -------------------------------- */

/* Uses src/core's PCG32 (an internal, as the test says): a fixed seed, reproducible runs. */
#include "core/base.h"

/* -DEXAMPLE_SEED=... -DEXAMPLE_ITERS=... for longer runs by hand */
#ifndef EXAMPLE_SEED
#define EXAMPLE_SEED 20240517u
#endif
#ifndef EXAMPLE_ITERS
#define EXAMPLE_ITERS 700
#endif

static tfq__pcg32 g_rng;
static uint32_t rnd(uint32_t n) { return tfq__pcg32_bounded(&g_rng, n); }
static uint64_t rnd64(void) {
  return (uint64_t)tfq__pcg32_next(&g_rng) << 32 | tfq__pcg32_next(&g_rng);
}

static const char *const k_pool[] = {"a", "b", "c", "dd", "", "\xc3\xa9"};
#define K_POOL 6
static const char *const k_strings[] = {"", "x", "\0y", "zz\0", "hello"};
static const size_t k_string_lens[] = {0, 1, 2, 3, 5};

static ref_val random_val(tfq_dtype dt) {
  ref_val v = {0, 0, (const uint8_t *)"", 0};
  if (dt == TFQ_STRING) {
    uint32_t k = rnd(5);
    v.s = (const uint8_t *)k_strings[k];
    v.n = k_string_lens[k];
  } else if (dt == TFQ_FLOAT) {
    static const uint32_t special[] = {0x7fc00000u, 0x7f800001u, 0xffa5a5a5u, 0x80000000u,
                                       0x3f800000u};
    v.f = rnd(3) ? special[rnd(5)] : tfq__pcg32_next(&g_rng);
  } else {
    static const int64_t special[] = {0, 1, -1, INT64_MIN, INT64_MAX, 300};
    v.i = rnd(3) ? special[rnd(6)] : (int64_t)rnd64();
  }
  return v;
}

/* A random valid configuration of 1..4 features. */
static size_t random_config(ref_feature *fs) {
  size_t n = 1 + rnd(4), k = 0;
  int used[K_POOL] = {0};
  static const tfq_dtype dts[] = {TFQ_FLOAT, TFQ_INT64, TFQ_STRING};
  for (size_t i = 0; i < n; i++) {
    uint32_t key = rnd(K_POOL);
    if (used[key]) continue;
    used[key] = 1;
    ref_feature *f = &fs[k++];
    memset(f, 0, sizeof *f);
    f->key = k_pool[key];
    f->kind = (tfq_example_kind)rnd(4);
    f->dtype = dts[rnd(3)];
    if (f->kind == TFQ_EXAMPLE_FIXED_LEN) {
      static const int64_t shapes[][2] = {{0, 0}, {2, 0}, {1, 2}, {0, 0}};
      static const int ranks[] = {0, 1, 2, 1};
      uint32_t s = rnd(rnd(8) ? 3 : 4);
      f->rank = ranks[s];
      memcpy(f->dims, shapes[s], sizeof shapes[s]);
      int64_t nd = 1;
      for (int d = 0; d < f->rank; d++) nd *= f->dims[d];
      if (nd > 0 && rnd(2)) {
        f->has_def = 1;
        for (int64_t j = 0; j < nd; j++) f->def[j] = random_val(f->dtype);
      }
    } else if (f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) {
      f->rank = (int)rnd(2);
      f->dims[0] = 2;
      if (rnd(2)) {
        f->has_def = 1;
        f->def[0] = random_val(f->dtype);
      }
    } else if (f->kind == TFQ_EXAMPLE_SPARSE) {
      f->rank = 1 + (int)rnd(2);
      for (int j = 0; j < f->rank; j++) { /* (an empty index or value key is "missing") */
        f->index_keys[j] = k_pool[rnd(K_POOL - 1) + (j == 0 && f->rank == 1 ? 0 : 0)];
        if (!f->index_keys[j][0]) f->index_keys[j] = "a";
        f->dims[j] = rnd(5);
      }
      f->value_key = k_pool[rnd(K_POOL)];
      if (!f->value_key[0]) f->value_key = "b";
      f->already_sorted = !rnd(4);
    }
  }
  return k;
}

/* A random Feature: well formed most of the time, with the odd corner; of kind `want` (1 bytes,
 * 2 float, 3 int64; 0 any) two times in three. */
static wb random_feature(int want) {
  wb f = {0}, list = {0}, chunk = {0};
  uint32_t what = rnd(20);
  if (what == 0) return f; /* empty: kind none */
  if (what == 1) {         /* a bad first byte */
    wb_byte(&f, (uint8_t)(0x20 + rnd(8)));
    wb_byte(&f, 0);
    return f;
  }
  int kind = want && rnd(3) ? want : 1 + (int)rnd(3), packed = (int)rnd(2), n = (int)rnd(6);
  if (rnd(3) == 0) n = 2 * (int)rnd(3); /* whole rows of FixedLenSequence [2] more often */
  tfq_dtype dt = kind == 1 ? TFQ_STRING : kind == 2 ? TFQ_FLOAT : TFQ_INT64;
  for (int rep = 0; rep < (rnd(10) ? 1 : 2); rep++) { /* sometimes a second chunk or run */
    for (int i = 0; i < n; i++) {
      ref_val v = random_val(dt);
      if (kind == 1)
        wb_ld(&list, 0x0a, v.s, v.n);
      else if (kind == 2) {
        if (!packed) wb_byte(&list, 0x0d);
        wb_put(packed ? &chunk : &list, &v.f, 4);
      } else {
        if (!packed) wb_byte(&list, 0x08);
        wb_varint(packed ? &chunk : &list, (uint64_t)v.i);
      }
    }
    if (kind != 1 && packed && (n || rnd(2))) {
      wb_byte(&list, 0x0a); /* a declared length that is off now and then */
      static const int off[] = {-4, -1, 1, 4};
      int64_t len = (int64_t)chunk.n + (rnd(5) ? 0 : off[rnd(4)]);
      wb_varint(&list, (uint64_t)(len < 0 ? 0 : len));
      wb_put(&list, chunk.p, chunk.n);
      chunk.n = 0;
    }
    packed = (int)rnd(2);
  }
  if (!rnd(15)) wb_byte(&list, (uint8_t)rnd(256)); /* a stray byte inside the list */
  wb_byte(&f, (uint8_t)(kind == 1 ? 0x0a : kind == 2 ? 0x12 : 0x1a));
  wb_varint(&f, rnd(12) ? list.n : list.n + rnd(6));
  wb_put(&f, list.p, list.n);
  if (!rnd(10)) wb_ld(&f, 0x1a, "\x0a\x01\x05", 3); /* a second member: ignored */
  wb_free(&list);
  wb_free(&chunk);
  return f;
}

static wb random_example(const ref_feature *cf, size_t nf) {
  wb x = {0};
  if (!rnd(25)) { /* random bytes */
    size_t n = rnd(24);
    for (size_t i = 0; i < n; i++) wb_byte(&x, (uint8_t)rnd(256));
    return x;
  }
  int nfs = rnd(12) ? 1 : 2;
  for (int k = 0; k < nfs; k++) {
    if (!rnd(10)) wb_ld(&x, 0x2a, "meta", 4); /* an unknown Example field */
    wb fs = {0};
    int ne = (int)rnd(7);
    for (int i = 0; i < ne; i++) {
      const char *key = rnd(6) ? k_pool[rnd(K_POOL)] : "zz";
      int want = 0;
      for (size_t j = 0; j < nf; j++) {
        if (strcmp(cf[j].key, key) == 0) want = cf[j].dtype;
        for (int q = 0; cf[j].kind == TFQ_EXAMPLE_SPARSE && q < cf[j].rank; q++)
          if (strcmp(cf[j].index_keys[q], key) == 0) want = TFQ_INT64;
        if (cf[j].kind == TFQ_EXAMPLE_SPARSE && strcmp(cf[j].value_key, key) == 0)
          want = cf[j].dtype;
      }
      wb f = random_feature(want == TFQ_STRING ? 1 : want == TFQ_FLOAT ? 2 : want ? 3 : 0);
      ex_entry(&fs, key, strlen(key), &f);
      wb_free(&f);
    }
    wb_ld(&x, 0x0a, fs.p, fs.n);
    wb_free(&fs);
  }
  if (x.n && !rnd(12)) { /* one corrupted or cut byte */
    if (rnd(2))
      x.p[rnd((uint32_t)x.n)] = (uint8_t)rnd(256);
    else
      x.n = rnd((uint32_t)x.n);
  }
  return x;
}

Test(example_random, fast_parser_matches_the_reference_value_by_value) {
  tfq__pcg32_seed(&g_rng, EXAMPLE_SEED, 17u);
  int examples = 0, configs = 0, successes = 0, failures = 0;
  for (int iter = 0; iter < EXAMPLE_ITERS; iter++) {
    ref_feature fs[8];
    size_t nf = random_config(fs);
    tfq_example_config *c = cfg_from(fs, nf, NULL);
    int valid = tfq_example_config_check(c, NULL) == TFQ_OK;
    tfq_example_config_free(c);
    if (!valid) continue;
    configs++;
    int64_t B = rnd(10) ? rnd(7) : 9 + rnd(12);
    wb recs[24];
    for (int64_t i = 0; i < B; i++) recs[i] = random_example(fs, nf);
    const char *names[24],
        *nm[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "nA",
                 "nB", "nC", "nD", "nE", "nF", "nG", "nH", "nI", "nJ", "nK"};
    for (int64_t i = 0; i < B; i++) names[i] = nm[i];
    int oks = agree(fs, nf, recs, B, rnd(3) ? NULL : names);
    successes += oks;
    failures += (int)B + 1 - oks;
    examples += (int)B;
    recs_free(recs, (int)B);
  }
  cr_log_info("%d examples, %d configs, %d successes, %d failures", examples, configs, successes,
              failures);
  cr_assert_geq(examples, 2000, "%d examples", examples);
  cr_assert_geq(configs, 500, "%d configs", configs);
  cr_assert_geq(successes, 500, "%d successes", successes);
  cr_assert_geq(failures, 300, "%d failures", failures);
}

/* ---- the key table's comparison (example_internal.h) ---- */

#include "example/example_internal.h"

/* Feature names are compared with fixed-size loads up to 16 bytes: a name equals only itself, at
 * every length and whichever single byte differs (the overlap of the two loads included). */
Test(example_keys, a_feature_name_equals_only_itself_at_every_length) {
  uint8_t a[40], b[40];
  for (size_t n = 0; n <= 33; n++) {
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (uint8_t)('a' + (i * 7) % 26);
    cr_assert(tfq__ex_key_eq(a, b, n), "length %zu: equal names differ", n);
    for (size_t i = 0; i < n; i++) {
      b[i] ^= 0x20;
      cr_assert(!tfq__ex_key_eq(a, b, n), "length %zu: byte %zu ignored", n, i);
      b[i] ^= 0x20;
    }
  }
}
