/* decode_csv: every numbered decode_csv case (docs/conformance.md, "Case numbers"), with the
 * expectation the reference TensorFlow (tf.compat.v1 in the tensorflow-cpu 2.21 wheel) gives; a
 * note "TF 2.21 wheel: ..." marks where the wheel differs from TF 1.15 (docs/decode_csv.md).  Then
 * the differential test of the three tokenizer paths (white-box: src/csv/csv_internal.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

#include "../fuzz/csv_diff.h"
#include "csv/csv_shared.h"

/* Column specs: "i:5" int32 default 5, "I" required int32; f/F float, d/D double, l/L int64,
 * s/S string ("s:" an empty-string default).  Separated by spaces. */
static tfq_csv_options *mk(const char *spec) {
  tfq_csv_options *o;
  cr_assert_eq(tfq_csv_options_new(&o, NULL), TFQ_OK);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
    char t = tok[0];
    const char *v = tok[1] == ':' ? tok + 2 : NULL;
    tfq_code rc;
    switch (t) {
      case 'i': rc = tfq_csv_options_add_default_int32(o, (int32_t)atol(v), NULL); break;
      case 'l': rc = tfq_csv_options_add_default_int64(o, atoll(v), NULL); break;
      case 'f': rc = tfq_csv_options_add_default_float(o, strtof(v, NULL), NULL); break;
      case 'd': rc = tfq_csv_options_add_default_double(o, strtod(v, NULL), NULL); break;
      case 's': rc = tfq_csv_options_add_default_string(o, v, strlen(v), NULL); break;
      case 'I': rc = tfq_csv_options_add_required(o, TFQ_INT32, NULL); break;
      case 'L': rc = tfq_csv_options_add_required(o, TFQ_INT64, NULL); break;
      case 'F': rc = tfq_csv_options_add_required(o, TFQ_FLOAT, NULL); break;
      case 'D': rc = tfq_csv_options_add_required(o, TFQ_DOUBLE, NULL); break;
      default: rc = tfq_csv_options_add_required(o, TFQ_STRING, NULL); break;
    }
    cr_assert_eq(rc, TFQ_OK);
  }
  return o;
}

static tfq_status *st;
static void setup(void) { st = tfq_status_new(); }
static void teardown(void) { tfq_status_free(st); }
TestSuite(decode_csv, .init = setup, .fini = teardown);

#define NREC(...) (sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *))
static tfq_code run_n(const tfq_csv_options *o, const char *const *recs, size_t n,
                      tfq_tuple **out) {
  size_t lens[64];
  for (size_t i = 0; i < n; i++) lens[i] = strlen(recs[i]);
  return tfq_decode_csv_lines(o, recs, lens, n, out, st);
}
#define RUN(o, out, ...) run_n(o, (const char *[]){__VA_ARGS__}, NREC(__VA_ARGS__), out)

static void expect_err(tfq_code rc, tfq_tuple *out, const char *msg) {
  cr_assert_eq(rc, TFQ_INVALID_ARGUMENT, "code %d, message [%s]", rc, tfq_status_message(st));
  cr_assert_null(out);
  cr_assert_str_eq(tfq_status_message(st), msg);
}

static void expect_i32(tfq_tuple *t, size_t c, const int32_t *v, size_t n) {
  tfq_tensor *x = tfq_tuple_get(t, c);
  cr_assert_eq(tfq_tensor_dtype(x), TFQ_INT32);
  cr_assert_eq(tfq_tensor_num_elements(x), (int64_t)n);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(((const int32_t *)tfq_tensor_cdata(x))[i], v[i], "col %zu elem %zu", c, i);
}
static void expect_i64(tfq_tuple *t, size_t c, const int64_t *v, size_t n) {
  tfq_tensor *x = tfq_tuple_get(t, c);
  cr_assert_eq(tfq_tensor_dtype(x), TFQ_INT64);
  for (size_t i = 0; i < n; i++) cr_assert_eq(((const int64_t *)tfq_tensor_cdata(x))[i], v[i]);
}
static void expect_f32(tfq_tuple *t, size_t c, const float *v, size_t n) {
  tfq_tensor *x = tfq_tuple_get(t, c);
  cr_assert_eq(tfq_tensor_dtype(x), TFQ_FLOAT);
  for (size_t i = 0; i < n; i++) cr_assert_eq(((const float *)tfq_tensor_cdata(x))[i], v[i]);
}
static void expect_f64(tfq_tuple *t, size_t c, const double *v, size_t n) {
  tfq_tensor *x = tfq_tuple_get(t, c);
  cr_assert_eq(tfq_tensor_dtype(x), TFQ_DOUBLE);
  for (size_t i = 0; i < n; i++) cr_assert_eq(((const double *)tfq_tensor_cdata(x))[i], v[i]);
}
static void expect_str(tfq_tuple *t, size_t c, const char *const *v, size_t n) {
  tfq_tensor *x = tfq_tuple_get(t, c);
  cr_assert_eq(tfq_tensor_dtype(x), TFQ_STRING);
  cr_assert_eq(tfq_tensor_num_elements(x), (int64_t)n);
  for (size_t i = 0; i < n; i++) {
    size_t len;
    const char *s = tfq_tensor_string(x, (int64_t)i, &len);
    cr_assert_eq(len, strlen(v[i]), "col %zu elem %zu: [%.*s] vs [%s]", c, i, (int)len, s, v[i]);
    cr_assert_eq(memcmp(s, v[i], len), 0, "col %zu elem %zu: [%.*s] vs [%s]", c, i, (int)len, s,
                 v[i]);
  }
}
#define I32(...) (const int32_t[]){__VA_ARGS__}, sizeof((int32_t[]){__VA_ARGS__}) / 4
#define I64(...) (const int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / 8
#define F32(...) (const float[]){__VA_ARGS__}, sizeof((float[]){__VA_ARGS__}) / 4
#define F64(...) (const double[]){__VA_ARGS__}, sizeof((double[]){__VA_ARGS__}) / 8
#define STR(...) (const char *const[]){__VA_ARGS__}, NREC(__VA_ARGS__)

static void quote_off(tfq_csv_options *o) { tfq_csv_options_set_use_quote_delim(o, 0); }
static void select_cols(tfq_csv_options *o, const int64_t *c, size_t n) {
  cr_assert_eq(tfq_csv_options_set_select_cols(o, c, n, st), TFQ_OK);
}

Test(decode_csv, case01_quoted_int_is_parsed) {
  tfq_csv_options *o = mk("i:1");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1", "2", "\"3\""), TFQ_OK);
  expect_i32(t, 0, I32(1, 2, 3));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case02_two_int_columns) {
  tfq_csv_options *o = mk("i:1 i:2");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1,4", "2,5", "3,6"), TFQ_OK);
  expect_i32(t, 0, I32(1, 2, 3));
  expect_i32(t, 1, I32(4, 5, 6));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case03_rank2_default_is_rejected) {
  /* TF 2.21 wheel (eager): "Each record default should be at most rank 1". */
  tfq_csv_options *o = mk("");
  tfq_tensor *d;
  int64_t dims[2] = {1, 1};
  cr_assert_eq(tfq_tensor_new(TFQ_INT32, dims, 2, &d, NULL), TFQ_OK);
  cr_assert_eq(tfq_csv_options_add_default_tensor(o, d, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Each record default should be at most rank 1");
  cr_assert_eq(tfq_csv_options_num_columns(o), 0);
  tfq_tensor_free(d);
  tfq_csv_options_free(o);
}

Test(decode_csv, case04_quotes_kept_without_quote_delim) {
  tfq_csv_options *o = mk("s:");
  quote_off(o);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1", "2", "\"3\""), TFQ_OK);
  expect_str(t, 0, STR("1", "2", "\"3\""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case06_records_of_shape_2x2_and_quoted_empty_takes_default) {
  tfq_csv_options *o = mk("i:5");
  tfq_tensor *r;
  int64_t dims[2] = {2, 2};
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, dims, 2, &r, NULL), TFQ_OK);
  const char *v[4] = {"1", "2", "\"\"", "4"};
  for (int i = 0; i < 4; i++)
    cr_assert_eq(tfq_tensor_set_string(r, i, v[i], strlen(v[i]), NULL), 0);
  tfq_tuple *t;
  cr_assert_eq(tfq_decode_csv(o, r, &t, st), TFQ_OK);
  tfq_tensor *c = tfq_tuple_get(t, 0);
  cr_assert_eq(tfq_tensor_rank(c), 2);
  cr_assert_eq(tfq_tensor_dim(c, 0), 2);
  cr_assert_eq(tfq_tensor_dim(c, 1), 2);
  expect_i32(t, 0, I32(1, 2, 5, 4));
  tfq_tuple_free(t);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

Test(decode_csv, case07_shape_2x2_quotes_kept_without_quote_delim) {
  tfq_csv_options *o = mk("s:");
  quote_off(o);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1", "2", "\"\"", "\""), TFQ_OK);
  expect_str(t, 0, STR("1", "2", "\"\"", "\""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case08_required_float64_extremes) {
  tfq_csv_options *o = mk("D");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1.0", "-1.79e+308", "\"1.79e+308\""), TFQ_OK);
  expect_f64(t, 0, F64(1.0, -1.79e308, 1.79e308));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case09_required_int64_beyond_int32) {
  tfq_csv_options *o = mk("L");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1", "2", "\"2147483648\""), TFQ_OK);
  expect_i64(t, 0, I64(1, 2, 2147483648LL));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case10_string_quoting_rules) {
  tfq_csv_options *o = mk("s:1");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\"1.0\"", "\"ab , c\"", "\"a\nbc\"", "\"ab\"\"c\"", " abc "), TFQ_OK);
  expect_str(t, 0, STR("1.0", "ab , c", "a\nbc", "ab\"c", " abc "));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case11_mixed_types) {
  tfq_csv_options *o = mk("f:1.0 i:1 s:aa");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1.0,4,aa", "0.2,5,bb", "3,6,cc"), TFQ_OK);
  expect_f32(t, 0, F32(1.0f, 0.2f, 3.0f));
  expect_i32(t, 1, I32(4, 5, 6));
  expect_str(t, 2, STR("aa", "bb", "cc"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case13_empty_fields_take_defaults) {
  tfq_csv_options *o = mk("f:1.0 i:0 s:a");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, ",1,", "0.2,3,bcd", "3.0,,"), TFQ_OK);
  expect_f32(t, 0, F32(1.0f, 0.2f, 3.0f));
  expect_i32(t, 1, I32(1, 3, 0));
  expect_str(t, 2, STR("a", "bcd", "a"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case14_lone_quote_is_data_without_quote_delim) {
  tfq_csv_options *o = mk("f:1.0 i:0 s:a");
  quote_off(o);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, ",1,", "0.2,3,bcd", "3.0,,\""), TFQ_OK);
  expect_str(t, 2, STR("a", "bcd", "\""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case15_tab_delimiter) {
  tfq_csv_options *o = mk("f:1.0 i:0");
  cr_assert_eq(tfq_csv_options_set_field_delim(o, "\t", 1, st), TFQ_OK);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1\t1", "0.2\t3", "3.0\t"), TFQ_OK);
  expect_f32(t, 0, F32(1.0f, 0.2f, 3.0f));
  expect_i32(t, 1, I32(1, 3, 0));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case17_invalid_int32_names_field_and_record) {
  tfq_csv_options *o = mk("f:1.0 I");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ",1", "0.2,234a", "3.0,2"), t,
             "Field 1 in record 1 is not a valid int32: 234a");
  tfq_csv_options_free(o);
}

Test(decode_csv, case18_int32_overflow_is_an_error) {
  tfq_csv_options *o = mk("i:1");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "1", "9999999999999999999999999", "3"), t,
             "Field 0 in record 1 is not a valid int32: 9999999999999999999999999");
  tfq_csv_options_free(o);
}

Test(decode_csv, case19_invalid_float) {
  tfq_csv_options *o = mk("f:1.0 I");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ",1", "0.2,2", "3.0adf,3"), t,
             "Field 0 in record 2 is not a valid float: 3.0adf");
  tfq_csv_options_free(o);
}

Test(decode_csv, case21_too_many_fields) {
  tfq_csv_options *o = mk("f:1.0");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ",1", "0.2,2", "3.0adf,3"), t, "Expect 1 fields but have 2 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case22_lone_quote) {
  tfq_csv_options *o = mk("s:default");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\""), t, "Quoted field has to end with quote followed by delim or end");
  tfq_csv_options_free(o);
}

Test(decode_csv, case23_select_cols) {
  tfq_csv_options *o = mk("i:1 i:2");
  select_cols(o, (const int64_t[]){0, 1}, 2);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, ",,", "4,5,6"), TFQ_OK);
  expect_i32(t, 0, I32(1, 4));
  expect_i32(t, 1, I32(2, 5));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case25_select_cols_beyond_the_record) {
  tfq_csv_options *o = mk("i:1 i:2 i:3");
  select_cols(o, (const int64_t[]){0, 1, 3}, 3);
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ",,", "4,5,6"), t, "Expect 3 fields but have 2 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case26_select_cols_length_mismatch) {
  tfq_csv_options *o = mk("i:1 i:2 i:3");
  select_cols(o, (const int64_t[]){0}, 1);
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "1,2,3", "4,5,6"), t,
             "Length of select_cols and record_defaults do not match.");
  tfq_csv_options_free(o);
}

Test(decode_csv, case27_select_cols_not_increasing) {
  tfq_csv_options *o = mk("i:1 i:2");
  cr_assert_eq(tfq_csv_options_set_select_cols(o, (const int64_t[]){1, 0}, 2, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "select_cols is not strictly increasing.");
  tfq_csv_options_free(o);
}

Test(decode_csv, case28_select_cols_negative) {
  tfq_csv_options *o = mk("i:1 i:2");
  cr_assert_eq(tfq_csv_options_set_select_cols(o, (const int64_t[]){-1, 0}, 2, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "select_cols contains negative values.");
  tfq_csv_options_free(o);
}

Test(decode_csv, case29_select_cols_past_the_end) {
  tfq_csv_options *o = mk("i:1 i:2");
  select_cols(o, (const int64_t[]){0, 3}, 2);
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "1,2,3"), t, "Expect 2 fields but have 1 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case30_numpy_defaults_have_no_c_analogue_but_a_vector_default_is_rejected) {
  /* TF: record_defaults as one NumPy array fails in Python ("Expected list for
   * 'record_defaults'").  The C API takes one default per column, so the nearest mistake is a
   * multi-element default, which gets the kernel's message. */
  tfq_csv_options *o = mk("");
  tfq_tensor *d;
  int64_t dim = 3;
  cr_assert_eq(tfq_tensor_new(TFQ_FLOAT, &dim, 1, &d, NULL), TFQ_OK);
  cr_assert_eq(tfq_csv_options_add_default_tensor(o, d, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "There should only be 1 default per field but field 0 has 3");
  tfq_tensor_free(d);
  tfq_csv_options_free(o);
}

Test(decode_csv, case31_empty_record_has_zero_fields) {
  tfq_csv_options *o = mk("i:7");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ""), t, "Expect 1 fields but have 0 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case32_newline_only_record_has_zero_fields) {
  tfq_csv_options *o = mk("i:7");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\n"), t, "Expect 1 fields but have 0 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case33_newline_inside_unquoted_field) {
  tfq_csv_options *o = mk("i:7 i:8");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "1,2\n"), t, "Unquoted fields cannot have quotes/CRLFs inside");
  tfq_csv_options_free(o);
}

Test(decode_csv, case34_newline_after_delimiter_is_skipped) {
  tfq_csv_options *o = mk("i:7 i:8");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1,\n2"), TFQ_OK);
  expect_i32(t, 0, I32(1));
  expect_i32(t, 1, I32(2));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case35_leading_crlf_is_skipped) {
  tfq_csv_options *o = mk("i:7 i:8");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\r\n1,2"), TFQ_OK);
  expect_i32(t, 0, I32(1));
  expect_i32(t, 1, I32(2));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case37_trailing_delimiter_adds_a_field) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "x,"), t, "Expect 1 fields but have 2 in record 0");
  tfq_csv_options_free(o);
}

Test(decode_csv, case39_quoted_empty_is_missing) {
  tfq_csv_options *o = mk("S S");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\"\",\"\""), t, "Field 0 is required but missing in record 0!");
  tfq_csv_options_free(o);
}

Test(decode_csv, case40_trailing_delimiter_after_quoted_field) {
  tfq_csv_options *o = mk("s:a s:b");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\"a\","), TFQ_OK);
  expect_str(t, 0, STR("a"));
  expect_str(t, 1, STR("b"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case41_unescaped_quote_after_closing_quote) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\"ab\"c"), t, "Quote inside a string has to be escaped by another quote");
  tfq_csv_options_free(o);
}

Test(decode_csv, case42_unterminated_quote) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\"abc"), t, "Quoted field has to end with quote followed by delim or end");
  tfq_csv_options_free(o);
}

Test(decode_csv, case44_escaped_quote_then_delimiter_inside_quotes) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\"a\"\",x\""), TFQ_OK);
  expect_str(t, 0, STR("a\",x"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case46_quote_not_at_field_start) {
  tfq_csv_options *o = mk("s: s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, " \"q\",r"), t, "Unquoted fields cannot have quotes/CRLFs inside");
  tfq_csv_options_free(o);
}

Test(decode_csv, case47_space_after_closing_quote) {
  tfq_csv_options *o = mk("s: s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\"q\" ,r"), t, "Quote inside a string has to be escaped by another quote");
  tfq_csv_options_free(o);
}

Test(decode_csv, case49_carriage_return_unquoted_and_quoted) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "a\rb"), t, "Unquoted fields cannot have quotes/CRLFs inside");
  cr_assert_eq(RUN(o, &t, "\"a\rb\""), TFQ_OK);
  expect_str(t, 0, STR("a\rb"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case50_quotes_are_data_without_quote_delim) {
  tfq_csv_options *o = mk("s:");
  quote_off(o);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "a\"b"), TFQ_OK);
  expect_str(t, 0, STR("a\"b"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
  o = mk("s: s:");
  quote_off(o);
  cr_assert_eq(RUN(o, &t, "\"a,b\""), TFQ_OK);
  expect_str(t, 0, STR("\"a"));
  expect_str(t, 1, STR("b\""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case51_na_value_after_quote_removal) {
  tfq_csv_options *o = mk("s:dflt");
  cr_assert_eq(tfq_csv_options_set_na_value(o, "NA", 2, st), TFQ_OK);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\"NA\"", "NA", "NAN"), TFQ_OK);
  expect_str(t, 0, STR("dflt", "dflt", "NAN"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case52_na_value_in_required_column) {
  tfq_csv_options *o = mk("I");
  cr_assert_eq(tfq_csv_options_set_na_value(o, "NA", 2, st), TFQ_OK);
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "NA"), t, "Field 0 is required but missing in record 0!");
  tfq_csv_options_free(o);
}

Test(decode_csv, case54_unselected_field_is_still_validated) {
  tfq_csv_options *o = mk("i:0 i:0");
  select_cols(o, (const int64_t[]){0, 2}, 2);
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "1,a\"b,3"), t, "Unquoted fields cannot have quotes/CRLFs inside");
  tfq_csv_options_free(o);
}

Test(decode_csv, case55_extra_columns_fine_with_select_cols) {
  tfq_csv_options *o = mk("i:0 i:0");
  select_cols(o, (const int64_t[]){0, 2}, 2);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "1,xx,3,4,5"), TFQ_OK);
  expect_i32(t, 0, I32(1));
  expect_i32(t, 1, I32(3));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, case57_int32_rejections) {
  /* TF 2.21 wheel: "+5" is ACCEPTED (absl::SimpleAtoi), unlike 1.15; the others are rejected. */
  tfq_csv_options *o = mk("I");
  tfq_tuple *t = NULL;
  cr_assert_eq(RUN(o, &t, "+5"), TFQ_OK);
  expect_i32(t, 0, I32(5));
  tfq_tuple_free(t);
  const char *bad[] = {"- 5", "0x10", "1.0", "2147483648"};
  for (int i = 0; i < 4; i++) {
    t = NULL;
    char msg[128];
    snprintf(msg, sizeof msg, "Field 0 in record 0 is not a valid int32: %s", bad[i]);
    expect_err(run_n(o, &bad[i], 1, &t), t, msg);
  }
  tfq_csv_options_free(o);
}

Test(decode_csv, case58_int64_bounds) {
  tfq_csv_options *o = mk("L");
  tfq_tuple *t = NULL;
  cr_assert_eq(RUN(o, &t, "9223372036854775807", "-9223372036854775808"), TFQ_OK);
  expect_i64(t, 0, I64(INT64_MAX, INT64_MIN));
  tfq_tuple_free(t);
  t = NULL;
  expect_err(RUN(o, &t, "9223372036854775808"), t,
             "Field 0 in record 0 is not a valid int64: 9223372036854775808");
  tfq_csv_options_free(o);
}

Test(decode_csv, case60_float32_rejections_and_wheel_acceptances) {
  /* TF 2.21 wheel: "0x1p3" (8), "infinity" (inf) and the 32-byte
   * "0.100000000000000000000000000001" (0.1f) are ACCEPTED, unlike in TF 1.15; the
   * rest are rejected. */
  tfq_csv_options *o = mk("F");
  tfq_tuple *t = NULL;
  cr_assert_eq(RUN(o, &t, "0x1p3", "infinity", "0.100000000000000000000000000001"), TFQ_OK);
  expect_f32(t, 0, F32(8.0f, __builtin_inff(), 0.1f));
  tfq_tuple_free(t);
  const char *bad[] = {".", "1e", "1.5f", "1 2", "- 1"};
  for (int i = 0; i < 5; i++) {
    t = NULL;
    char msg[128];
    snprintf(msg, sizeof msg, "Field 0 in record 0 is not a valid float: %s", bad[i]);
    expect_err(run_n(o, &bad[i], 1, &t), t, msg);
  }
  tfq_csv_options_free(o);
}

Test(decode_csv, case62_empty_records_give_empty_outputs) {
  tfq_csv_options *o = mk("I F");
  tfq_tensor *r;
  int64_t dim = 0;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, &dim, 1, &r, NULL), TFQ_OK);
  tfq_tuple *t;
  cr_assert_eq(tfq_decode_csv(o, r, &t, st), TFQ_OK);
  cr_assert_eq(tfq_tuple_size(t), 2);
  for (int c = 0; c < 2; c++) {
    cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, c)), 1);
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, c), 0), 0);
  }
  cr_assert_eq(tfq_tensor_dtype(tfq_tuple_get(t, 1)), TFQ_FLOAT);
  tfq_tuple_free(t);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

Test(decode_csv, case63_two_element_default) {
  tfq_csv_options *o = mk("");
  tfq_tensor *d;
  int64_t dim = 2;
  cr_assert_eq(tfq_tensor_new(TFQ_INT32, &dim, 1, &d, NULL), TFQ_OK);
  cr_assert_eq(tfq_csv_options_add_default_tensor(o, d, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "There should only be 1 default per field but field 0 has 2");
  tfq_tensor_free(d);
  tfq_csv_options_free(o);
}

Test(decode_csv, case64_multi_byte_delimiter) {
  tfq_csv_options *o = mk("i:1");
  cr_assert_eq(tfq_csv_options_set_field_delim(o, "ab", 2, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "field_delim should be only 1 char");
  tfq_csv_options_free(o);
}

/* ---- further rules checked against the wheel ---- */

Test(decode_csv, wheel_float64_errors_say_double) {
  tfq_csv_options *o = mk("d:1");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "abc"), t, "Field 0 in record 0 is not a valid double: abc");
  tfq_csv_options_free(o);
}

Test(decode_csv, wheel_trailing_newline_after_delimiter_adds_no_field) {
  /* TF 2.21 wheel: ",\n" and "1,\n" have ONE field; with two columns "Expect 2 ... have 1". */
  tfq_csv_options *o = mk("s: s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, ",\n"), t, "Expect 2 fields but have 1 in record 0");
  tfq_csv_options_free(o);
  o = mk("i:0");
  cr_assert_eq(RUN(o, &t, "1,\n"), TFQ_OK);
  expect_i32(t, 0, I32(1));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, wheel_newline_after_closing_quote_is_an_error_and_before_quote_is_skipped) {
  tfq_csv_options *o = mk("s:");
  tfq_tuple *t = NULL;
  expect_err(RUN(o, &t, "\"a\"\n"), t, "Quote inside a string has to be escaped by another quote");
  tfq_csv_options_free(o);
  o = mk("s: s:");
  cr_assert_eq(RUN(o, &t, "\n\"a\",\"b\"", "a,\n\"b\""), TFQ_OK);
  expect_str(t, 0, STR("a", "a"));
  expect_str(t, 1, STR("b", "b"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, wheel_select_cols_trailing_field_only_if_selected) {
  tfq_csv_options *o = mk("s: s:");
  select_cols(o, (const int64_t[]){1, 2}, 2);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "a,b,c", "a,b,"), TFQ_OK);
  expect_str(t, 0, STR("b", "b"));
  expect_str(t, 1, STR("c", ""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, wheel_newline_delimiter_quirk) {
  /* TF 2.21 wheel: with field_delim "\n" the record "\n" has one (empty) field. */
  tfq_csv_options *o = mk("s:");
  cr_assert_eq(tfq_csv_options_set_field_delim(o, "\n", 1, st), TFQ_OK);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "\n"), TFQ_OK);
  expect_str(t, 0, STR(""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, na_value_equal_to_a_field_uses_the_default) {
  tfq_csv_options *o = mk("s: s:");
  cr_assert_eq(tfq_csv_options_set_na_value(o, "y", 1, st), TFQ_OK);
  tfq_tuple *t;
  cr_assert_eq(RUN(o, &t, "x,y"), TFQ_OK);
  expect_str(t, 0, STR("x"));
  expect_str(t, 1, STR(""));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, single_record_gives_scalars) {
  tfq_csv_options *o = mk("f:0 l:0 s:");
  tfq_tuple *t;
  cr_assert_eq(tfq_decode_csv_record(o, "2.5,7,\"x,y\"", 11, &t, st), TFQ_OK);
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 0)), 0);
  expect_f32(t, 0, F32(2.5f));
  expect_i64(t, 1, I64(7));
  expect_str(t, 2, STR("x,y"));
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

Test(decode_csv, buffer_splits_lines_like_text_line_reader) {
  tfq_csv_options *o = mk("i:0 s:");
  const char buf[] = "1,a\r\n2,\"b\"\n3,c";
  tfq_tuple *t;
  cr_assert_eq(tfq_decode_csv_buffer(o, buf, sizeof buf - 1, &t, st), TFQ_OK);
  expect_i32(t, 0, I32(1, 2, 3));
  expect_str(t, 1, STR("a", "b", "c"));
  tfq_tuple_free(t);
  t = NULL;
  const char bad[] = "1,a\n\n";
  expect_err(tfq_decode_csv_buffer(o, bad, sizeof bad - 1, &t, st), t,
             "Expect 2 fields but have 0 in record 1");
  tfq_csv_options_free(o);
}

/* tfq_decode_csv_buffer sizes its output by counting the buffer's lines 16 bytes at a time in
 * blocks of up to 255: thousands of lines of every length from 1 to 40 bytes cross every block
 * and lane boundary, with and without a last '\n'. */
Test(decode_csv, buffer_counts_every_line_of_long_buffers) {
  tfq_csv_options *o = mk("s:");
  enum { N = 3001 };
  size_t cap = (size_t)N * 41 + 1, len = 0;
  char *buf = malloc(cap);
  cr_assert(buf);
  for (int i = 0; i < N; i++) {
    size_t k = (size_t)(i * 7 % 40) + 1;
    memset(buf + len, 'a' + i % 26, k);
    len += k;
    buf[len++] = '\n';
  }
  for (int trailing = 1; trailing >= 0; trailing--) {
    size_t n = trailing ? len : len - 1; /* without the last '\n' */
    tfq_tuple *t;
    cr_assert_eq(tfq_decode_csv_buffer(o, buf, n, &t, st), TFQ_OK, "%s", tfq_status_message(st));
    const tfq_tensor *c = tfq_tuple_get(t, 0);
    cr_assert_eq(tfq_tensor_dim(c, 0), N, "trailing %d: %lld lines", trailing,
                 (long long)tfq_tensor_dim(c, 0));
    for (int i = 0; i < N; i++) {
      size_t got;
      const char *v = tfq_tensor_string(c, i, &got);
      cr_assert_eq(got, (size_t)(i * 7 % 40) + 1, "line %d", i);
      cr_assert_eq(v[0], 'a' + i % 26, "line %d", i);
    }
    tfq_tuple_free(t);
  }
  free(buf);
  tfq_csv_options_free(o);
}

Test(decode_csv, bad_dtype_is_rejected) {
  tfq_csv_options *o = mk("");
  cr_assert_eq(tfq_csv_options_add_required(o, TFQ_BOOL, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Value for attr 'OUT_TYPE' of bool is not in the list of allowed values: "
                   "float, double, int32, int64, string");
  tfq_csv_options_free(o);
}

static tfq_tensor *records_of(const char *const *recs, int64_t n);

/* ---- allocation failures: every k-th allocation fails once, nothing leaks ---- */
static long alloc_budget = -1, live = 0;
static void *f_malloc(size_t n) {
  if (alloc_budget == 0) return NULL;
  if (alloc_budget > 0) alloc_budget--;
  void *p = malloc(n);
  if (p) live++;
  return p;
}
static void *f_realloc(void *p, size_t n) {
  if (alloc_budget == 0) return NULL;
  if (alloc_budget > 0) alloc_budget--;
  void *q = realloc(p, n);
  if (q && !p) live++;
  return q;
}
static void f_free(void *p) {
  if (p) live--;
  free(p);
}

Test(decode_csv_alloc, failed_allocations_return_resource_exhausted_without_leaks) {
  cr_assert_eq(tfq_set_allocator(f_malloc, f_realloc, f_free), TFQ_OK);
  const char *recs[] = {"1.5,\"a\"\"b\",7", "2,plain,8", "\"3\",\"q,r\",9"};
  size_t lens[3];
  for (int i = 0; i < 3; i++) lens[i] = strlen(recs[i]);
  int saw_ok = 0, saw_oom = 0;
  for (long k = 0; k < 200 && !saw_ok; k++) {
    alloc_budget = -1;
    tfq_csv_options *o = mk("f:0 s: l:0");
    tfq_status *s2 = tfq_status_new();
    alloc_budget = k;
    tfq_tuple *t = NULL;
    tfq_code rc = tfq_decode_csv_lines(o, recs, lens, 3, &t, s2);
    alloc_budget = -1;
    if (rc == TFQ_OK) {
      saw_ok = 1;
      expect_str(t, 1, STR("a\"b", "plain", "q,r"));
    } else {
      cr_assert_eq(rc, TFQ_RESOURCE_EXHAUSTED, "k=%ld rc=%d %s", k, rc, tfq_status_message(s2));
      cr_assert_null(t);
      saw_oom = 1;
    }
    tfq_tuple_free(t);
    tfq_status_free(s2);
    tfq_csv_options_free(o);
    cr_assert_eq(live, 0, "leak after k=%ld", k);
  }
  cr_assert(saw_ok && saw_oom);
  cr_assert_eq(tfq_set_allocator(NULL, NULL, NULL), TFQ_OK);
}

/* decode_into under failing allocations: the call fails cleanly, `dst` stays a valid tuple (its
 * tensors freed with it, nothing leaks), and a later call with room succeeds into it. */
Test(decode_csv_alloc, decode_into_failures_leave_a_valid_tuple_without_leaks) {
  cr_assert_eq(tfq_set_allocator(f_malloc, f_realloc, f_free), TFQ_OK);
  const char *recs[] = {"1.5,\"a\"\"b\",7", "2,plain,8"};
  int saw_ok = 0, saw_oom = 0;
  for (long k = 0; k < 200 && !saw_ok; k++) {
    alloc_budget = -1;
    tfq_csv_options *o = mk("f:0 s: l:0");
    tfq_status *s2 = tfq_status_new();
    tfq_tensor *r = records_of(recs, 2);
    tfq_tuple *dst;
    cr_assert_eq(tfq_tuple_new(3, &dst, NULL), TFQ_OK);
    alloc_budget = k;
    tfq_code rc = tfq_decode_csv_into(o, r, dst, s2);
    alloc_budget = -1;
    if (rc == TFQ_OK) {
      saw_ok = 1;
    } else {
      cr_assert_eq(rc, TFQ_RESOURCE_EXHAUSTED, "k=%ld rc=%d %s", k, rc, tfq_status_message(s2));
      saw_oom = 1;
      cr_assert_eq(tfq_decode_csv_into(o, r, dst, s2), TFQ_OK, "k=%ld: no retry", k);
    }
    expect_str(dst, 1, STR("a\"b", "plain"));
    tfq_tuple_free(dst);
    tfq_tensor_free(r);
    tfq_status_free(s2);
    tfq_csv_options_free(o);
    cr_assert_eq(live, 0, "leak after k=%ld", k);
  }
  cr_assert(saw_ok && saw_oom);
  cr_assert_eq(tfq_set_allocator(NULL, NULL, NULL), TFQ_OK);
}

/* ---- the three tokenizer paths agree (deterministic differential test) ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rng_state >> 33);
}

Test(decode_csv_diff, two_hundred_thousand_random_records_agree_on_all_paths, .timeout = 600) {
  static const char alpha[] = ",,,\"\"\"\n\r 1234567890.-+eExaNA|\t;";
  uint8_t buf[8 + 8 * 40];
  size_t total = 0, rounds = 0;
  while (total < 200000) {
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)rnd();
    if (rnd() % 4) buf[0] |= 1; /* mostly quoting on */
    size_t len = 8, nrec = 1 + rnd() % 8;
    for (size_t r = 0; r < nrec; r++) {
      size_t rl = rnd() % 24;
      for (size_t j = 0; j < rl; j++)
        buf[len++] = rnd() % 16 ? (uint8_t)alpha[rnd() % (sizeof alpha - 1)] : (uint8_t)rnd();
      if (r + 1 < nrec) buf[len++] = 0xFF;
    }
    cr_assert_eq(csv_diff_run(buf, len), 0, "paths differ (round %zu)", rounds);
    total += nrec;
    rounds++;
  }
}

/* Ten-digit int32 and nineteen-digit int64 fields take the fused fast path up to the type's
 * bounds; one past a bound still fails with TF's message (the generic parser decides). */
Test(decode_csv, integers_of_ten_and_nineteen_digits_decode_up_to_the_bounds) {
  tfq_csv_options *o = mk("i:0 l:0");
  tfq_tuple *t = NULL;
  cr_assert_eq(RUN(o, &t, "2147483647,9223372036854775807", "-2147483648,-9223372036854775808",
                   "-1847456881,1000000000000000000", "0000000007,-0000000000000000001"),
               TFQ_OK);
  expect_i32(t, 0, I32(INT32_MAX, INT32_MIN, -1847456881, 7));
  expect_i64(t, 1, I64(INT64_MAX, INT64_MIN, 1000000000000000000LL, -1));
  tfq_tuple_free(t);
  t = NULL;
  expect_err(RUN(o, &t, "1,1", "2147483648,1"), t,
             "Field 0 in record 1 is not a valid int32: 2147483648");
  t = NULL;
  expect_err(RUN(o, &t, "-2147483649,1"), t,
             "Field 0 in record 0 is not a valid int32: -2147483649");
  t = NULL;
  expect_err(RUN(o, &t, "1,9223372036854775808"), t,
             "Field 1 in record 0 is not a valid int64: 9223372036854775808");
  t = NULL;
  expect_err(RUN(o, &t, "1,-9223372036854775809"), t,
             "Field 1 in record 0 is not a valid int64: -9223372036854775809");
  tfq_csv_options_free(o);
}

/* ---- tfq_decode_csv_into ---- */

/* A string tensor [n] of the given records. */
static tfq_tensor *records_of(const char *const *recs, int64_t n) {
  tfq_tensor *t;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, &n, 1, &t, NULL), TFQ_OK);
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(tfq_tensor_set_string(t, i, recs[i], strlen(recs[i]), NULL), TFQ_OK);
  return t;
}

Test(decode_csv, decode_into_refills_unshared_columns_in_place_and_replaces_the_others) {
  tfq_csv_options *o = mk("i:0 f:0 s:x");
  const char *a[3] = {"1,1.5,ab", "2,,", ",3.25,cd"}, *b[3] = {"7,0.5,", "8,8,efgh", "9,9,i"};
  tfq_tensor *ra = records_of(a, 3), *rb = records_of(b, 3);
  tfq_tuple *dst;
  cr_assert_eq(tfq_tuple_new(3, &dst, NULL), TFQ_OK);
  cr_assert_eq(tfq_decode_csv_into(o, ra, dst, st), TFQ_OK, "%s", tfq_status_message(st));
  expect_i32(dst, 0, I32(1, 2, 0));
  expect_f32(dst, 1, F32(1.5f, 0.f, 3.25f));
  expect_str(dst, 2, STR("ab", "x", "cd"));
  tfq_tensor *ints = tfq_tuple_get(dst, 0), *strs = tfq_tuple_get(dst, 2);
  tfq_tensor *kept = tfq_tensor_ref(tfq_tuple_get(dst, 1)); /* shared: must not be overwritten */
  cr_assert_eq(tfq_decode_csv_into(o, rb, dst, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_tuple_get(dst, 0), ints, "an unshared column is refilled in place");
  cr_assert_eq(tfq_tuple_get(dst, 2), strs, "an unshared string column too");
  cr_assert_neq(tfq_tuple_get(dst, 1), kept, "a shared column gets a new tensor");
  expect_i32(dst, 0, I32(7, 8, 9));
  expect_f32(dst, 1, F32(0.5f, 8.f, 9.f));
  expect_str(dst, 2, STR("x", "efgh", "i"));
  const float *kv = tfq_tensor_cdata(kept);
  cr_assert(kv[0] == 1.5f && kv[1] == 0.f && kv[2] == 3.25f, "the shared column is intact");
  cr_assert_eq(tfq_tensor_refcount(kept), 1, "dst dropped its reference to it");
  tfq_tensor_free(kept);
  /* another shape: new tensors with the right values */
  const char *c1[1] = {"5,5,5"};
  tfq_tensor *rc1 = records_of(c1, 1);
  cr_assert_eq(tfq_decode_csv_into(o, rc1, dst, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_tensor_num_elements(tfq_tuple_get(dst, 0)), 1);
  expect_str(dst, 2, STR("5"));
  tfq_tensor_free(rc1);
  tfq_tensor_free(ra);
  tfq_tensor_free(rb);
  tfq_tuple_free(dst);
  tfq_csv_options_free(o);
}

Test(decode_csv, decode_into_reports_errors_as_decode_csv_does_and_checks_the_tuple) {
  tfq_csv_options *o = mk("i:0 f:0");
  const char *bad[2] = {"1,2", "3,x"};
  tfq_tensor *r = records_of(bad, 2);
  tfq_tuple *dst, *wrong;
  cr_assert_eq(tfq_tuple_new(2, &dst, NULL), TFQ_OK);
  cr_assert_eq(tfq_decode_csv_into(o, r, dst, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Field 1 in record 1 is not a valid float: x");
  cr_assert_eq(tfq_tuple_new(3, &wrong, NULL), TFQ_OK);
  cr_assert_eq(tfq_decode_csv_into(o, r, wrong, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "the output tuple has 3 slots for 2 columns");
  cr_assert_eq(tfq_decode_csv_into(o, r, NULL, st), TFQ_INVALID_ARGUMENT);
  int64_t two = 2;
  tfq_tensor *nums;
  cr_assert_eq(tfq_tensor_new(TFQ_INT32, &two, 1, &nums, NULL), TFQ_OK);
  cr_assert_eq(tfq_decode_csv_into(o, nums, dst, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Expected records to be a string tensor, got int32");
  tfq_tensor_free(nums);
  tfq_tuple_free(wrong);
  tfq_tuple_free(dst);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

/* ---- tfq__decode_csv_into_out (src/csv/csv_shared.h: the read-decode op's stacked columns) ----
 */

Test(decode_csv, decode_into_out_writes_numbers_at_their_stride_by_every_path) {
  /* f0 and f2 into one [3, 2] float block in the order (f2, f0); i1 and s3 into dst.  Record 1
   * has an empty field (the default), a quoted number (the fused path's quoted route) and "inf"
   * and a 25-digit number (which the fast routines may leave to the generic path). */
  tfq_csv_options *o = mk("f:-1 i:0 f:-2 s:x");
  const char *recs[3] = {"1.5,7,2.5,ab", ",8,\"4.25\",", "inf,9,1.000000000000000000000001,c"};
  tfq_tensor *r = records_of(recs, 3);
  float block[3][2];
  memset(block, 0, sizeof block);
  tfq__csv_out outs[4] = {{(char *)&block[0][1], 2 * sizeof(float), NULL},
                          {NULL, 0, NULL},
                          {(char *)&block[0][0], 2 * sizeof(float), NULL},
                          {NULL, 0, NULL}};
  tfq_tuple *dst;
  cr_assert_eq(tfq_tuple_new(4, &dst, NULL), TFQ_OK);
  cr_assert_eq(tfq__decode_csv_into_out(o, r, dst, outs, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_null(tfq_tuple_get(dst, 0), "an out column leaves its slot alone");
  cr_assert_null(tfq_tuple_get(dst, 2));
  expect_i32(dst, 1, I32(7, 8, 9));
  expect_str(dst, 3, STR("ab", "x", "c"));
  const float want[3][2] = {{2.5f, 1.5f}, {4.25f, -1.f}, {1.f, INFINITY}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      cr_assert(block[i][j] == want[i][j], "row %d col %d: %g", i, j, (double)block[i][j]);
  tfq_tuple_free(dst);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

Test(decode_csv,
     decode_into_out_reports_the_failing_record_and_refuses_a_string_out_without_its_tensor) {
  tfq_csv_options *o = mk("l:0 l:0 s:");
  const char *recs[2] = {"1,2,a", "3,zz,b"};
  tfq_tensor *r = records_of(recs, 2);
  int64_t block[2][2];
  tfq__csv_out outs[3] = {
      {(char *)&block[0][0], 16, NULL}, {(char *)&block[0][1], 16, NULL}, {NULL, 0, NULL}};
  tfq_tuple *dst;
  cr_assert_eq(tfq_tuple_new(3, &dst, NULL), TFQ_OK);
  cr_assert_eq(tfq__decode_csv_into_out(o, r, dst, outs, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Field 1 in record 1 is not a valid int64: zz");
  cr_assert_eq(tfq_status_record(st), 1);
  cr_assert(block[0][0] == 1 && block[0][1] == 2, "record 0 was written before the error");
  static const char *const msg[2] = {
      "column 2: only a string column's out, and every one, names a string tensor",
      "column 0: only a string column's out, and every one, names a string tensor"};
  tfq__csv_out bad[3] = {{NULL, 0, NULL}, {NULL, 0, NULL}, {(char *)&block[0][0], 16, NULL}};
  cr_assert_eq(tfq__decode_csv_into_out(o, r, dst, bad, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), msg[0]);
  tfq_tensor *strs;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, NULL, 0, &strs, NULL), TFQ_OK);
  tfq__csv_out numeric_with_tensor[3] = {
      {(char *)&block[0][0], 16, strs}, {NULL, 0, NULL}, {NULL, 0, NULL}};
  cr_assert_eq(tfq__decode_csv_into_out(o, r, dst, numeric_with_tensor, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), msg[1]);
  size_t count, used;
  cr_assert_eq(tfq__decode_csv_span(o, "1,2,a\n", 6, NULL, 1, dst, bad, &count, &used, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), msg[0]);
  tfq_tensor_free(strs);
  tfq_tuple_free(dst);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

/* The strings of stacked [n, 2] output `t`, row by row, against want[2 * n]; and each row's bytes
 * lie together in its arena, column `first` then the other (decode writes a record's fields in
 * column order). */
static void expect_stacked_rows(const tfq_tensor *t, const char *const *want, int64_t n,
                                int first) {
  cr_assert_eq(tfq_tensor_num_elements(t), 2 * n);
  for (int64_t i = 0; i < 2 * n; i++) {
    size_t l;
    const char *x = tfq_tensor_string(t, i, &l);
    cr_assert(l == strlen(want[i]) && memcmp(x, want[i], l) == 0, "element %lld: %.*s != %s",
              (long long)i, (int)l, x, want[i]);
  }
  for (int64_t r = 0; r < n; r++) {
    size_t l0, l1;
    const char *a = tfq_tensor_string(t, 2 * r + first, &l0);
    const char *b = tfq_tensor_string(t, 2 * r + 1 - first, &l1);
    if (l0 && l1) cr_assert(a + l0 == b, "row %lld: its strings are apart", (long long)r);
  }
}

Test(decode_csv, decode_into_out_puts_string_columns_row_by_row_into_one_stacked_tensor) {
  /* s0 and s2 into one [4, 2] string tensor in the order (s2, s0), by the fused path (record 0),
   * its quoted route (1), the default (2), and the generic path (3: a 25-digit number, which the
   * fast routines leave to it); the number column and s3 into dst. */
  tfq_csv_options *o = mk("s:dflt l:0 s:y s:z");
  const char *recs[4] = {"ab,1,cd,e", "\"q,r\",2,st,", ",3,uv,w",
                         "xy,0000000000000000000000004,\"z\"\"\",k"};
  tfq_tensor *r = records_of(recs, 4);
  int64_t dims[2] = {4, 2};
  tfq_tensor *strs;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, dims, 2, &strs, NULL), TFQ_OK);
  char *v = (char *)tfq__strs(strs);
  size_t view = sizeof(tfq__str);
  tfq__csv_out outs[4] = {
      {v + view, 2 * view, strs}, {NULL, 0, NULL}, {v, 2 * view, strs}, {NULL, 0, NULL}};
  tfq_tuple *dst;
  cr_assert_eq(tfq_tuple_new(4, &dst, NULL), TFQ_OK);
  tfq_code c = tfq__decode_csv_into_out(o, r, dst, outs, st);
  cr_assert_eq(c, TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_null(tfq_tuple_get(dst, 0), "an out column leaves its slot alone");
  cr_assert_null(tfq_tuple_get(dst, 2));
  expect_i64(dst, 1, I64(1, 2, 3, 4));
  expect_str(dst, 3, STR("e", "z", "w", "k"));
  static const char *const want[8] = {"cd", "ab", "st", "q,r", "uv", "dflt", "z\"", "xy"};
  expect_stacked_rows(strs, want, 4, 1);
  tfq_tuple_free(dst);
  tfq_tensor_free(strs);
  tfq_tensor_free(r);
  tfq_csv_options_free(o);
}

Test(decode_csv, span_puts_string_columns_row_by_row_into_one_stacked_tensor) {
  tfq_csv_options *o = mk("i:0 s:d s:e");
  const char buf[] = "1,ab,c\n2,,de\r\n3,fgh,\n";
  int64_t dims[2] = {3, 2};
  tfq_tensor *strs;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, dims, 2, &strs, NULL), TFQ_OK);
  char *v = (char *)tfq__strs(strs);
  tfq__csv_out outs[3] = {{NULL, 0, NULL},
                          {v, 2 * sizeof(tfq__str), strs},
                          {v + sizeof(tfq__str), 2 * sizeof(tfq__str), strs}};
  tfq_tuple *t;
  size_t count, used;
  cr_assert_eq(tfq_tuple_new(3, &t, NULL), TFQ_OK);
  cr_assert_eq(tfq__decode_csv_span(o, buf, strlen(buf), NULL, 3, t, outs, &count, &used, st),
               TFQ_OK, "%s", tfq_status_message(st));
  cr_assert(count == 3 && used == strlen(buf), "%zu lines, %zu bytes", count, used);
  expect_i32(t, 0, I32(1, 2, 3));
  static const char *const want[6] = {"ab", "c", "d", "de", "fgh", "e"};
  expect_stacked_rows(strs, want, 3, 0);
  tfq_tuple_free(t);
  tfq_tensor_free(strs);
  tfq_csv_options_free(o);
}

/* ---- tfq__decode_csv_span (src/csv/csv_shared.h: a text reader's lines decoded where they lie)
 * ---- */

static unsigned span_next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 16) & 0x7fffu;
}

/* A field the fast routines take, one they leave to the generic path, or a malformed one. */
static const char *span_field(unsigned *s) {
  static const char *const pick[] = {"",
                                     "12",
                                     "-7",
                                     "3.25",
                                     "0.1234567",
                                     "1e5",
                                     "abc",
                                     "NA",
                                     "\"q,x\"",
                                     "\"7\"",
                                     "1234567890123",
                                     "-0.5",
                                     "99999999999",
                                     " 5",
                                     "+3",
                                     "x\ry",
                                     "4\r",
                                     "\"a\"\"b\"",
                                     "nan",
                                     "-",
                                     "2147483648",
                                     "1.5.5",
                                     "é",
                                     "\"\"",
                                     "7,",
                                     "\"un",
                                     "12345678901234567890",
                                     "0",
                                     "-2147483648",
                                     "3.4e39",
                                     "ab\"c",
                                     "1."};
  return pick[span_next(s) % (sizeof pick / sizeof pick[0])];
}

/* The records TextLineReader makes of buf: its lines, each without "\n" and one '\r' before it. */
static tfq_tensor *span_records(const char *buf, size_t len, int64_t *n) {
  int64_t k = 0;
  for (size_t i = 0; i < len; i++) k += buf[i] == '\n';
  tfq_tensor *t;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, &k, 1, &t, NULL), TFQ_OK);
  const char *p = buf;
  for (int64_t i = 0; i < k; i++) {
    const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
    size_t l = (size_t)(nl - p);
    if (l && p[l - 1] == '\r') l--;
    cr_assert_eq(tfq_tensor_set_string(t, i, p, l, NULL), TFQ_OK);
    p = nl + 1;
  }
  *n = k;
  return t;
}

/* Both decodes of one span agree: code, message, failing record; on success every value and
 * string, the lines taken and their bytes. */
static void span_agrees(tfq_csv_options *o, const char *buf, size_t len, int64_t n,
                        const char *what) {
  int64_t k;
  size_t want_used = 0; /* the bytes of the first n lines: the records decode_csv is given */
  for (int64_t i = 0; i < n; i++)
    want_used +=
        (size_t)((const char *)memchr(buf + want_used, '\n', len - want_used) - (buf + want_used)) +
        1;
  tfq_tensor *recs = span_records(buf, want_used, &k);
  tfq_tuple *want, *got;
  tfq_status *st2 = tfq_status_new();
  size_t ncol = tfq_csv_options_num_columns(o), count = 99, used = 99;
  cr_assert_eq(tfq_tuple_new(ncol, &want, NULL), TFQ_OK);
  cr_assert_eq(tfq_tuple_new(ncol, &got, NULL), TFQ_OK);
  tfq_code cw = tfq_decode_csv_into(o, recs, want, st);
  /* with a holder of the bytes: the string fields it can take as they are point into buf */
  int64_t one = 1;
  tfq_tensor *holder;
  cr_assert_eq(tfq_tensor_new(TFQ_UINT8, &one, 1, &holder, NULL), TFQ_OK);
  tfq_code cg = tfq__decode_csv_span(o, buf, len, holder, (size_t)n, got, NULL, &count, &used, st2);
  cr_assert_eq(cg, cw, "%s: %s / %s", what, tfq_status_message(st2), tfq_status_message(st));
  if (cw) {
    cr_assert_str_eq(tfq_status_message(st2), tfq_status_message(st), "%s", what);
    cr_assert_eq(tfq_status_record(st2), tfq_status_record(st), "%s", what);
    cr_assert(count == 0 && used == 0, "%s", what);
  } else {
    cr_assert_eq(count, (size_t)n, "%s", what);
    cr_assert_eq(used, want_used, "%s", what);
    for (size_t f = 0; f < ncol; f++) {
      const tfq_tensor *a = tfq_tuple_get(want, f), *b = tfq_tuple_get(got, f);
      cr_assert_eq(tfq_tensor_dtype(a), tfq_tensor_dtype(b));
      for (int64_t i = 0; i < n; i++) {
        if (tfq_tensor_dtype(a) == TFQ_STRING) {
          size_t la, lb;
          const char *sa = tfq_tensor_string(a, i, &la), *sb = tfq_tensor_string(b, i, &lb);
          cr_assert(la == lb && memcmp(sa, sb, la) == 0, "%s: line %lld column %zu", what,
                    (long long)i, f);
        } else {
          size_t z = tfq_dtype_size(tfq_tensor_dtype(a));
          cr_assert(memcmp((const char *)tfq_tensor_cdata(a) + (size_t)i * z,
                           (const char *)tfq_tensor_cdata(b) + (size_t)i * z, z) == 0,
                    "%s: line %lld column %zu", what, (long long)i, f);
        }
      }
    }
  }
  tfq_status_free(st2);
  tfq_tuple_free(want);
  tfq_tuple_free(got);
  cr_assert_eq(tfq_tensor_refcount(holder), 1, "%s: the outputs gone, nothing keeps the holder",
               what);
  tfq_tensor_free(holder);
  tfq_tensor_free(recs);
}

Test(decode_csv, span_decodes_every_line_as_decode_csv_decodes_the_records_textline_makes) {
  static const char *const schemas[] = {"f:0 l:0 i:0 s:z d:0",
                                        "s:a s:b",
                                        "i:1",
                                        "F L s:q",
                                        "f:0 f:0 f:0 f:0 f:0 f:0 l:0 i:0 s: s:",
                                        "I s:u"};
  unsigned seed = 12345;
  char buf[4096];
  int decoded = 0, refused = 0;
  for (int it = 0; it < 6000; it++) {
    const char *spec = schemas[it % (sizeof schemas / sizeof schemas[0])];
    tfq_csv_options *o = mk(spec);
    if (it % 5 == 1) cr_assert_eq(tfq_csv_options_set_na_value(o, "NA", 2, NULL), TFQ_OK);
    if (it % 7 == 2) tfq_csv_options_set_use_quote_delim(o, 0);
    size_t ncol = tfq_csv_options_num_columns(o), len = 0;
    /* mostly well-formed lines (so that later lines are reached), some of any shape */
    int lines = 1 + (int)(span_next(&seed) % 12), bad = span_next(&seed) % 3 == 0;
    for (int l = 0; l < lines; l++) {
      size_t nf = ncol;
      if (bad && span_next(&seed) % 8 == 0) nf = span_next(&seed) % (ncol + 2);
      for (size_t f = 0; f < nf; f++) {
        const char *v = bad || span_next(&seed) % 4 == 0 ? span_field(&seed) : "5";
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", f ? "," : "", v);
      }
      unsigned e = span_next(&seed) % 10;
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s",
                              e < 6   ? "\n"
                              : e < 9 ? "\r\n"
                                      : "\r\r\n");
    }
    char what[64];
    snprintf(what, sizeof what, "iteration %d (%s)", it, spec);
    int64_t n = lines;
    if (it % 3 == 0) n = 1 + (int64_t)(span_next(&seed) % (unsigned)lines); /* stop early */
    span_agrees(o, buf, len, n, what);
    int64_t k;
    tfq_tensor *r = span_records(buf, len, &k);
    tfq_tuple *t = NULL;
    if (tfq_decode_csv(o, r, &t, NULL) == TFQ_OK)
      decoded++;
    else
      refused++;
    tfq_tuple_free(t);
    tfq_tensor_free(r);
    tfq_csv_options_free(o);
  }
  /* the cases hold both outcomes in numbers */
  cr_assert_gt(decoded, 500, "%d decoded", decoded);
  cr_assert_gt(refused, 1000, "%d refused", refused);
}

Test(decode_csv, span_stops_after_n_lines_and_at_the_spans_end) {
  tfq_csv_options *o = mk("i:0 s:x");
  const char buf[] = "1,a\n2,bb\r\n3,\n";
  tfq_tuple *t;
  size_t count, used;
  cr_assert_eq(tfq_tuple_new(2, &t, NULL), TFQ_OK);
  cr_assert_eq(tfq__decode_csv_span(o, buf, strlen(buf), NULL, 2, t, NULL, &count, &used, st),
               TFQ_OK);
  cr_assert(count == 2 && used == 10, "%zu lines, %zu bytes", count, used);
  expect_i32(t, 0, I32(1, 2));
  expect_str(t, 1, STR("a", "bb"));
  /* more lines asked for than the span holds: all of them, the rest of the rows unspecified */
  cr_assert_eq(tfq__decode_csv_span(o, buf, strlen(buf), NULL, 5, t, NULL, &count, &used, st),
               TFQ_OK);
  cr_assert(count == 3 && used == strlen(buf), "%zu lines, %zu bytes", count, used);
  cr_assert_eq(tfq_tensor_num_elements(tfq_tuple_get(t, 0)), 5);
  const int32_t *v = tfq_tensor_cdata(tfq_tuple_get(t, 0));
  cr_assert(v[0] == 1 && v[1] == 2 && v[2] == 3);
  size_t l;
  const char *x = tfq_tensor_string(tfq_tuple_get(t, 1), 2, &l);
  cr_assert(l == 1 && x[0] == 'x', "the default");
  /* a span must end with a whole line */
  cr_assert_eq(tfq__decode_csv_span(o, buf, strlen(buf) - 1, NULL, 5, t, NULL, &count, &used, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "the span must end with a line's '\\n'");
  cr_assert(count == 0 && used == 0);
  tfq_tuple_free(t);
  tfq_csv_options_free(o);
}

/* ---- the structural scan's levels (src/csv/csv_simd.h): scalar, SSE2, AVX2 ---- */

/* TFQ_SIMD picks the level at the first decode (each Criterion test runs in its own process);
 * a level the CPU lacks falls to the best below it. */
Test(decode_csv_simd, tfq_simd_and_the_setter_choose_the_level) {
  const char *e = getenv("TFQ_SIMD");
  const int best = tfq__csv_simd_set(TFQ__SIMD_AVX2);
  tfq__csv_simd_set(-1);
  int want = best;
  if (e && strcmp(e, "scalar") == 0) want = TFQ__SIMD_SCALAR;
  if (e && strcmp(e, "sse2") == 0 && best >= TFQ__SIMD_SSE2) want = TFQ__SIMD_SSE2;
  cr_assert_eq(tfq__csv_simd(), want, "TFQ_SIMD=%s gave %s", e ? e : "(unset)",
               tfq__csv_simd_name(tfq__csv_simd()));
#if defined(__x86_64__)
  cr_assert_geq(best, TFQ__SIMD_SSE2, "x86-64 always has SSE2");
#endif
  for (int l = TFQ__SIMD_SCALAR; l <= TFQ__SIMD_AVX2; l++) {
    int got = tfq__csv_simd_set(l);
    cr_assert_eq(got, l <= best ? l : best);
    cr_assert_eq(tfq__csv_simd(), got);
  }
  cr_assert_str_eq(tfq__csv_simd_name(TFQ__SIMD_AVX2), "avx2");
  tfq__csv_simd_set(-1);
  cr_assert_eq(tfq__csv_simd(), want);
}

/* The scan kernels against a byte loop written here: every start offset and length over 0..130
 * bytes (blocks of 16 and 32 and their tails), special bytes at random places, loads allowed to
 * lim = end or up to 40 bytes past it; and the line count of tfq_decode_csv_buffer. */
Test(decode_csv_simd, the_scan_kernels_agree_with_a_byte_loop_at_every_offset) {
  const int best = tfq__csv_simd_set(TFQ__SIMD_AVX2);
  static const char alpha[] = "abc0123456789.-\x80\xff";
  char buf[256];
  for (int round = 0; round < 400; round++) {
    for (size_t j = 0; j < sizeof buf; j++) buf[j] = alpha[rnd() % (sizeof alpha - 1)];
    const unsigned char delim = (unsigned char)",\t|;\0"[rnd() % 5];
    for (int k = 0, nspecial = (int)(rnd() % 6); k < nspecial; k++)
      buf[rnd() % sizeof buf] = "\n\r\"x"[rnd() % 4] == 'x' ? (char)delim : "\n\r\""[rnd() % 3];
    buf[rnd() % sizeof buf] = '\0';
    for (size_t off = 0; off < 40; off++) {
      for (size_t n = 0; n <= 130; n++) {
        const char *p = buf + off, *end = p + n;
        for (int q = 0; q < 2; q++) {
          const char *want = NULL;
          for (const char *x = p; x < end && !want; x++) {
            unsigned char c = (unsigned char)*x;
            if (c == delim || c == '\n' || c == '\r' || (q && c == '"')) want = x;
          }
          const char *lim = end + rnd() % 41;
          for (int l = TFQ__SIMD_SCALAR; l <= best; l++) {
            cr_assert_eq(tfq__csv_stop(l, p, end, lim, delim, q), want,
                         "level %s, offset %zu, length %zu, quoting %d", tfq__csv_simd_name(l), off,
                         n, q);
            cr_assert_eq(tfq__csv_stop(l, p, end, end, delim, q), want, "lim = end");
          }
        }
        if (n == 0) continue;
        size_t lines = 0;
        for (size_t j = 0; j < n; j++) lines += p[j] == '\n';
        lines += p[n - 1] != '\n';
        for (int l = TFQ__SIMD_SCALAR; l <= best; l++) {
          tfq__csv_simd_set(l);
          cr_assert_eq(tfq__csv_count_lines(p, n), lines, "level %s, offset %zu, length %zu",
                       tfq__csv_simd_name(l), off, n);
        }
      }
    }
  }
  /* the 255-block counters roll over: over 255 x 32 bytes of '\n' */
  size_t big = 255 * 32 * 3 + 17;
  char *nl = malloc(big);
  cr_assert(nl);
  memset(nl, '\n', big);
  for (int l = TFQ__SIMD_SCALAR; l <= best; l++) {
    tfq__csv_simd_set(l);
    cr_assert_eq(tfq__csv_count_lines(nl, big), big, "level %s", tfq__csv_simd_name(l));
  }
  free(nl);
  tfq__csv_simd_set(-1);
}

/* Records of up to ~120 bytes with quoted and escaped quotes, delimiters, CR/LF, empty fields,
 * quoted numbers, NA and delimiters (the quoted fields the fused decoders take as they are),
 * long fields that cross the 16- and 32-byte blocks, bytes over 0x7f and NUL: every level's
 * fast paths against the scalar reference tokenizer (TensorFlow's loop), and the levels against
 * each other on the buffer decode (csv_diff_levels). */
Test(decode_csv_simd, random_long_records_agree_on_every_level, .timeout = 600) {
  static const char *const pieces[] = {",",
                                       ",",
                                       "\"",
                                       "\"\"",
                                       "\"a,b\"",
                                       "\n",
                                       "\r",
                                       "\r\n",
                                       "",
                                       "NA",
                                       "-12.5e3",
                                       "7",
                                       "\t",
                                       "|",
                                       "\x80\xfe",
                                       "\0",
                                       "0x1A",
                                       " 3 ",
                                       "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                       "1234567890123456789",
                                       "\"long quoted field, with \"\"quotes\"\" and, commas\"",
                                       "\"-12.5\"",
                                       "\"NA\"",
                                       "\"7\"x",
                                       "\"a\tb|c\""};
  /* each piece's length (\0 is a piece of its own, so not strlen); the longest is 48 bytes */
  static const size_t plen[] = {1, 1, 1, 2, 5, 1,  1,  2,  0, 2, 7, 1, 1,
                                1, 2, 1, 4, 3, 35, 19, 48, 7, 4, 4, 7};
  _Static_assert(sizeof plen / sizeof plen[0] == sizeof pieces / sizeof pieces[0],
                 "one length per piece");
  for (size_t k = 0; k < sizeof plen / sizeof plen[0]; k++)
    if (pieces[k][0] != '\0') cr_assert_eq(strlen(pieces[k]), plen[k], "piece %zu", k);
  uint8_t buf[8 + 8 * 140];
  size_t total = 0, rounds = 0;
  while (total < 40000) {
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)rnd();
    if (rnd() % 4) buf[0] |= 1; /* mostly quoting on */
    size_t len = 8, nrec = 1 + rnd() % 8;
    for (size_t r = 0; r < nrec; r++) {
      size_t target = rnd() % 120, start = len;
      while (len - start < target) {
        size_t k = rnd() % (sizeof plen / sizeof plen[0]);
        if (len - start + plen[k] > 130) break;
        memcpy(buf + len, pieces[k], plen[k]);
        len += plen[k];
      }
      if (r + 1 < nrec) buf[len++] = 0xFF;
    }
    cr_assert_eq(csv_diff_levels(buf, len), 0, "levels or paths differ (round %zu)", rounds);
    total += nrec;
    rounds++;
  }
}

/* A random decimal for the vector number scan: sign, 0..12 integer digits (leading zeros too),
 * maybe a '.', 0..12 fraction digits, at least one digit; now and then longer than the 15 bytes
 * the scan decides alone (up to 22 digits: the scalar parsers' turn). */
static size_t rand_decimal(char *o) {
  size_t n = 0;
  if (rnd() % 2) o[n++] = '-';
  const int longer = rnd() % 16 == 0;
  int ni = (int)(rnd() % (longer ? 12 : 8)), nf = (int)(rnd() % (longer ? 11 : 8));
  const int dot = rnd() % 4 != 0;
  if (!dot) nf = 0;
  if (ni + nf == 0) ni = 1;
  for (int k = 0; k < ni; k++) o[n++] = (char)('0' + (rnd() % 10 == 0 ? 0 : rnd() % 10));
  if (dot) o[n++] = '.';
  for (int k = 0; k < nf; k++) o[n++] = (char)('0' + rnd() % 10);
  return n;
}

/* A decimal of at most 15 bytes within about 1e-14 of the halfway point between a random float
 * and the next: where the fast float path must not round twice (csv_number_fast.h f32_of). */
static size_t near_half_float(char *o) {
  uint32_t b = 0x3E000000u + rnd() % (0x4A000000u - 0x3E000000u); /* 0.125 <= f < 2^21 */
  float f;
  memcpy(&f, &b, 4);
  const double mid = ((double)f + (double)nextafterf(f, INFINITY)) / 2; /* exact in a double */
  int ni = 1;
  for (double x = mid; x >= 10; x /= 10) ni++;
  const int neg = rnd() % 2;
  int nd = 15 - neg - ni - 1 - (int)(rnd() % 3); /* 15 bytes or a little less */
  if (nd < 1) nd = 1;
  return (size_t)snprintf(o, 40, "%s%.*f", neg ? "-" : "", nd, mid);
}

/* A random integer within [lo, hi] (as int64), sometimes with leading zeros. */
static size_t rand_integer(char *o, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo, r = ((uint64_t)rnd() << 32) | rnd();
  int digits = 1 + (int)(rnd() % 19); /* a spread of lengths, not mostly 19 digits */
  uint64_t cap = 1;
  for (int k = 0; k < digits && cap < UINT64_MAX / 10; k++) cap *= 10;
  uint64_t m = span < cap ? span : cap;
  int64_t v = (int64_t)((uint64_t)lo + (span == UINT64_MAX ? r : r % (m + 1)));
  if (rnd() % 3 == 0) v = rnd() % 2 ? lo : hi; /* the bounds */
  size_t n = 0;
  if (v < 0) o[n++] = '-';
  for (int z = rnd() % 8 == 0 ? (int)(rnd() % 3) : 0; z > 0; z--) o[n++] = '0';
  uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  char d[24];
  int k = 0;
  do d[k++] = (char)('0' + a % 10);
  while ((a /= 10) != 0);
  while (k) o[n++] = d[--k];
  return n;
}

/* The AVX2 level's vector number scan (csv_number_fast.h vec_number) and the scalar fast
 * parsers, through both row decoders (a buffer's lines: tfq_decode_csv_buffer; lines cut as they
 * are decoded: tfq__decode_csv_span), against the C library as the oracle (strtof, strtod,
 * strtoll: correctly rounded), value for value, at every level; and a text column after them
 * against the bytes written, its line sometimes ended by "\r\n".  The lines' lengths vary, so the
 * fields fall at every distance from the buffer's end (the last 16 bytes take the scalar path). */
Test(decode_csv_simd, number_fields_agree_with_strtof_strtod_strtoll_on_every_level,
     .timeout = 600) {
  enum { LINES = 20000 };
  char *buf = malloc((size_t)LINES * 144);
  float *wf = malloc(LINES * sizeof *wf);
  double *wd = malloc(LINES * sizeof *wd);
  int32_t *wi = malloc(LINES * sizeof *wi);
  int64_t *wl = malloc(LINES * sizeof *wl);
  size_t *ws = malloc(LINES * sizeof *ws), *wn = malloc(LINES * sizeof *wn);
  cr_assert(buf && wf && wd && wi && wl && ws && wn);
  size_t len = 0, vec_sized = 0;
  for (size_t r = 0; r < LINES; r++) {
    char tok[40];
    size_t n = rnd() % 4 ? rand_decimal(tok) : near_half_float(tok);
    tok[n] = '\0';
    wf[r] = strtof(tok, NULL);
    vec_sized += n <= 15;
    memcpy(buf + len, tok, n), len += n, buf[len++] = ',';
    n = rand_decimal(tok);
    tok[n] = '\0';
    wd[r] = strtod(tok, NULL);
    memcpy(buf + len, tok, n), len += n, buf[len++] = ',';
    n = rand_integer(tok, INT32_MIN, INT32_MAX);
    tok[n] = '\0';
    wi[r] = (int32_t)strtoll(tok, NULL, 10);
    memcpy(buf + len, tok, n), len += n, buf[len++] = ',';
    n = rand_integer(tok, INT64_MIN, INT64_MAX);
    tok[n] = '\0';
    wl[r] = strtoll(tok, NULL, 10);
    memcpy(buf + len, tok, n), len += n, buf[len++] = ',';
    /* a text of 1..40 bytes (no stop byte; ':' '*' 'J' share '\n' and '\r''s low four bits) */
    static const char text[] = "abc XYZ:*J=?_-.0123456789";
    ws[r] = len;
    wn[r] = 1 + rnd() % 40;
    for (size_t k = 0; k < wn[r]; k++) buf[len++] = text[rnd() % (sizeof text - 1)];
    if (rnd() % 8 == 0) buf[len++] = '\r';
    buf[len++] = '\n';
  }
  cr_assert_gt(vec_sized, LINES / 2, "most floats fit the vector scan's 15 bytes");
  tfq_csv_options *o = mk("F D I L S");
  const int best = tfq__csv_simd_set(TFQ__SIMD_AVX2);
  int64_t one = 1;
  for (int l = TFQ__SIMD_SCALAR; l <= best; l++) {
    tfq__csv_simd_set(l);
    for (int way = 0; way < 2; way++) {
      tfq_tuple *t = NULL;
      tfq_status *sts = tfq_status_new();
      if (way == 0) {
        cr_assert_eq(tfq_decode_csv_buffer(o, buf, len, &t, sts), TFQ_OK, "%s",
                     tfq_status_message(sts));
      } else {
        tfq_tensor *holder;
        size_t count = 0, used = 0;
        cr_assert_eq(tfq_tensor_new(TFQ_UINT8, &one, 1, &holder, NULL), TFQ_OK);
        cr_assert_eq(tfq_tuple_new(5, &t, NULL), TFQ_OK);
        cr_assert_eq(tfq__decode_csv_span(o, buf, len, holder, LINES, t, NULL, &count, &used, sts),
                     TFQ_OK, "%s", tfq_status_message(sts));
        cr_assert_eq(count, LINES);
        cr_assert_eq(used, len);
        tfq_tensor_free(holder);
      }
      const float *gf = tfq_tensor_cdata(tfq_tuple_get(t, 0));
      const double *gd = tfq_tensor_cdata(tfq_tuple_get(t, 1));
      const int32_t *gi = tfq_tensor_cdata(tfq_tuple_get(t, 2));
      const int64_t *gl = tfq_tensor_cdata(tfq_tuple_get(t, 3));
      for (size_t r = 0; r < LINES; r++) {
        cr_assert(memcmp(&gf[r], &wf[r], 4) == 0, "level %s way %d line %zu: float %.9g vs %.9g",
                  tfq__csv_simd_name(l), way, r, (double)gf[r], (double)wf[r]);
        cr_assert(memcmp(&gd[r], &wd[r], 8) == 0, "level %s way %d line %zu: double %.17g vs %.17g",
                  tfq__csv_simd_name(l), way, r, gd[r], wd[r]);
        cr_assert_eq(gi[r], wi[r], "level %s way %d line %zu", tfq__csv_simd_name(l), way, r);
        cr_assert_eq(gl[r], wl[r], "level %s way %d line %zu", tfq__csv_simd_name(l), way, r);
        size_t sl;
        const char *sp = tfq_tensor_string(tfq_tuple_get(t, 4), (int64_t)r, &sl);
        cr_assert(sl == wn[r] && memcmp(sp, buf + ws[r], sl) == 0,
                  "level %s way %d line %zu: text [%.*s] vs [%.*s]", tfq__csv_simd_name(l), way, r,
                  (int)sl, sp, (int)wn[r], buf + ws[r]);
      }
      tfq_tuple_free(t);
      tfq_status_free(sts);
    }
  }
  tfq__csv_simd_set(-1);
  tfq_csv_options_free(o);
  free(buf), free(wf), free(wd), free(wi), free(wl), free(ws), free(wn);
}

/* Number-like fields the scan must not decide alone (no digit, two '.', an exponent, '+', a hex
 * prefix, out of range, too long), and the valid ones around them: every level, every path and
 * the span decode give the same values and the same errors (csv_diff_levels: auto, libcsv and the
 * scalar reference with the exact parsers). */
Test(decode_csv_simd, odd_number_fields_agree_on_every_level_and_path, .timeout = 600) {
  static const char *const toks[] = {"",
                                     "-",
                                     ".",
                                     "-.",
                                     "5.",
                                     ".5",
                                     "-.5",
                                     "-5.",
                                     "1.2.3",
                                     "--1",
                                     "+1",
                                     "1e5",
                                     "1e+03",
                                     "-2.5E-3",
                                     "0x1A",
                                     " 7",
                                     "7 ",
                                     "007",
                                     "-0",
                                     "-0.0",
                                     "2147483647",
                                     "2147483648",
                                     "-2147483648",
                                     "-2147483649",
                                     "9223372036854775807",
                                     "9223372036854775808",
                                     "-9223372036854775808",
                                     "-9223372036854775809",
                                     "123456789012345",
                                     "1234567890123456",
                                     "12345678.1234567",
                                     "1234567.12345678",
                                     "0.000000000000001",
                                     "12345678901234567890",
                                     "1.5nan",
                                     "inf",
                                     "-12.5x",
                                     "NA",
                                     "\"12.5\""};
  const size_t ntok = sizeof toks / sizeof toks[0];
  uint8_t buf[8 + 8 * 120];
  for (int round = 0; round < 3000; round++) {
    buf[0] = (uint8_t)((rnd() % 2) | (rnd() % 4 == 0 ? 8 : 0)); /* quoting, maybe na "NA" */
    buf[1] = 3;                                                 /* 1 + 3: four columns */
    for (int c = 0; c < 4; c++) /* b % 5 in 1..4: a number column; 10 more: required (bit 3) */
      buf[2 + c] = (uint8_t)(1 + rnd() % 4 + (rnd() % 4 == 0 ? 10 : 0));
    buf[6] = ',';
    buf[7] = 0;
    size_t len = 8, nrec = 1 + rnd() % 8;
    for (size_t r = 0; r < nrec; r++) {
      for (int c = 0; c < 4; c++) {
        const char *tk = toks[rnd() % ntok];
        char mine[40];
        if (rnd() % 2) { /* half the fields valid: a random decimal */
          mine[rand_decimal(mine)] = '\0';
          tk = mine;
        }
        size_t n = strlen(tk);
        memcpy(buf + len, tk, n);
        len += n;
        if (c < 3) buf[len++] = ',';
      }
      if (r + 1 < nrec) buf[len++] = 0xFF;
    }
    cr_assert_eq(csv_diff_levels(buf, len), 0, "levels or paths differ (round %d)", round);
  }
}

/* The AVX2 level's string stop (csv_fused.c nibble_stop: one byte shuffle and one compare, when
 * the stop bytes have distinct low four bits; else the four compares) under every delimiter
 * byte, quoting on and off, on fields of 1..70 bytes that hold bytes sharing a stop byte's low
 * four bits, high bytes and the stop bytes themselves: every level and path agree
 * (csv_diff_levels). */
Test(decode_csv_simd, string_fields_under_every_delimiter_agree_on_every_level, .timeout = 600) {
  static const unsigned char alpha[] =
      "\r\nabc:*J\x8a\x8d\xa2\xac\"\",\t|;Z\x1a\x2d\x3c\x0c 0123456789";
  uint8_t buf[8 + 8 * 160];
  for (int d = 1; d < 256; d++) {
    if (d == '\n' || d == '\r' || d == 0xFF) continue; /* 0xFF separates the records */
    for (int quote = 0; quote < 2; quote++) {
      buf[0] = (uint8_t)(quote | 6); /* bits 1-2 = 3: the delimiter is byte 6 */
      buf[1] = (uint8_t)(rnd() % 4);
      for (int c = 0; c < 4; c++) buf[2 + c] = (uint8_t)(rnd() % 3 ? 0 : 2); /* strings, floats */
      buf[6] = (uint8_t)d;
      buf[7] = 0;
      size_t len = 8, nrec = 1 + rnd() % 6;
      for (size_t r = 0; r < nrec; r++) {
        for (int f = 0; f < 4; f++) {
          size_t n = 1 + rnd() % 70;
          for (size_t k = 0; k < n; k++) {
            unsigned char ch = alpha[rnd() % (sizeof alpha - 1)];
            buf[len++] = ch == 0xFF ? 'x' : ch;
          }
          if (f < 3) buf[len++] = (uint8_t)d;
        }
        if (r + 1 < nrec) buf[len++] = 0xFF;
      }
      cr_assert_eq(csv_diff_levels(buf, len), 0, "delimiter 0x%02x, quoting %d", d, quote);
    }
  }
}
