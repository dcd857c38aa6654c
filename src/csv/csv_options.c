/* The decode_csv options object. */
#include <string.h>

#include "csv_internal.h"

tfq_code tfq_csv_options_new(tfq_csv_options **out, tfq_status *st) {
  tfq_csv_options *o = tfq_malloc(sizeof *o);
  *out = NULL;
  if (!o) return TFQ__OOM(st);
  memset(o, 0, sizeof *o);
  o->delim = ',';
  o->use_quote = 1;
  *out = o;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_csv_options_free(tfq_csv_options *o) {
  if (!o) return;
  for (size_t i = 0; i < o->ndefs; i++) tfq_free(o->defs[i].s);
  tfq_free(o->defs);
  tfq_free(o->na);
  tfq_free(o->select);
  tfq_free(o);
}

tfq_code tfq_csv_options_set_field_delim(tfq_csv_options *o, const char *delim, size_t len,
                                         tfq_status *st) {
  if (len != 1 || !delim)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "field_delim should be only 1 char");
  o->delim = (unsigned char)delim[0];
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_csv_options_set_use_quote_delim(tfq_csv_options *o, int on) { o->use_quote = on != 0; }

tfq_code tfq_csv_options_set_na_value(tfq_csv_options *o, const char *na, size_t len,
                                      tfq_status *st) {
  char *c = NULL;
  if (len) {
    c = tfq_malloc(len);
    if (!c) return TFQ__OOM(st);
    memcpy(c, na, len);
  }
  tfq_free(o->na);
  o->na = c;
  o->na_len = len;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_csv_options_set_select_cols(tfq_csv_options *o, const int64_t *cols, size_t n,
                                         tfq_status *st) {
  /* TF's Python checks, in its order: increasing first, then the first element's sign. */
  for (size_t i = 1; i < n; i++)
    if (cols[i] <= cols[i - 1])
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "select_cols is not strictly increasing.");
  if (n && cols[0] < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "select_cols contains negative values.");
  int64_t *c = NULL;
  if (n) {
    size_t bytes;
    if (!tfq__mul_ok(n, sizeof *c, &bytes) || !(c = tfq_malloc(bytes))) return TFQ__OOM(st);
    memcpy(c, cols, bytes);
  }
  tfq_free(o->select);
  o->select = c;
  o->nselect = n;
  tfq_status_clear(st);
  return TFQ_OK;
}

static int allowed(tfq_dtype dt) {
  return dt == TFQ_FLOAT || dt == TFQ_DOUBLE || dt == TFQ_INT32 || dt == TFQ_INT64 ||
         dt == TFQ_STRING;
}

static tfq_code push(tfq_csv_options *o, const tfq__csv_default *d, tfq_status *st) {
  if (!allowed(d->dtype))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Value for attr 'OUT_TYPE' of %s is not in the list of allowed values: "
                          "float, double, int32, int64, string",
                          tfq_dtype_name(d->dtype));
  if (o->ndefs == o->capdefs) {
    size_t nc = o->capdefs ? o->capdefs * 2 : 8, bytes;
    tfq__csv_default *nd;
    if (!tfq__mul_ok(nc, sizeof *nd, &bytes) || !(nd = tfq_realloc(o->defs, bytes)))
      return TFQ__OOM(st);
    o->defs = nd;
    o->capdefs = nc;
  }
  o->defs[o->ndefs++] = *d;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_csv_options_add_default_float(tfq_csv_options *o, float v, tfq_status *st) {
  tfq__csv_default d = {.dtype = TFQ_FLOAT, .v.f = v};
  return push(o, &d, st);
}

tfq_code tfq_csv_options_add_default_double(tfq_csv_options *o, double v, tfq_status *st) {
  tfq__csv_default d = {.dtype = TFQ_DOUBLE, .v.d = v};
  return push(o, &d, st);
}

tfq_code tfq_csv_options_add_default_int32(tfq_csv_options *o, int32_t v, tfq_status *st) {
  tfq__csv_default d = {.dtype = TFQ_INT32, .v.i32 = v};
  return push(o, &d, st);
}

tfq_code tfq_csv_options_add_default_int64(tfq_csv_options *o, int64_t v, tfq_status *st) {
  tfq__csv_default d = {.dtype = TFQ_INT64, .v.i64 = v};
  return push(o, &d, st);
}

tfq_code tfq_csv_options_add_default_string(tfq_csv_options *o, const char *bytes, size_t len,
                                            tfq_status *st) {
  tfq__csv_default d = {.dtype = TFQ_STRING};
  d.s = tfq_malloc(len ? len : 1);
  if (!d.s) return TFQ__OOM(st);
  if (len) memcpy(d.s, bytes, len);
  d.s_len = len;
  tfq_code c = push(o, &d, st);
  if (c) tfq_free(d.s);
  return c;
}

tfq_code tfq_csv_options_add_required(tfq_csv_options *o, tfq_dtype dtype, tfq_status *st) {
  tfq__csv_default d = {.dtype = dtype, .required = 1};
  return push(o, &d, st);
}

tfq_code tfq_csv_options_add_default_tensor(tfq_csv_options *o, const tfq_tensor *t,
                                            tfq_status *st) {
  tfq_dtype dt = tfq_tensor_dtype(t);
  if (tfq_tensor_rank(t) > 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Each record default should be at most rank 1");
  int64_t n = tfq_tensor_num_elements(t);
  if (n > 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "There should only be 1 default per field but field %zu has %lld",
                          o->ndefs, (long long)n);
  if (n == 0) return tfq_csv_options_add_required(o, dt, st);
  const void *p = tfq_tensor_cdata(t);
  switch (dt) {
    case TFQ_FLOAT: return tfq_csv_options_add_default_float(o, *(const float *)p, st);
    case TFQ_DOUBLE: return tfq_csv_options_add_default_double(o, *(const double *)p, st);
    case TFQ_INT32: return tfq_csv_options_add_default_int32(o, *(const int32_t *)p, st);
    case TFQ_INT64: return tfq_csv_options_add_default_int64(o, *(const int64_t *)p, st);
    case TFQ_STRING: {
      size_t len;
      const char *s = tfq_tensor_string(t, 0, &len);
      return tfq_csv_options_add_default_string(o, s, len, st);
    }
    default: return tfq_csv_options_add_required(o, dt, st); /* reports the dtype */
  }
}

size_t tfq_csv_options_num_columns(const tfq_csv_options *o) { return o->ndefs; }
