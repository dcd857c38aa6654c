/* tfq_pipeline_options: the builder, and the column spec string ([N*]TYPE[:DEFAULT],...). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#define TFQ_EXPERIMENTAL
#include <tfq/experimental.h>

#include "pipeline_internal.h"

#define SPEC_MAX_COLUMNS 100000

tfq_code tfq_pipeline_options_new(tfq_pipeline_options **out, tfq_status *st) {
  tfq_pipeline_options *o = tfq__calloc(1, sizeof *o);
  if (!o) return TFQ__OOM(st);
  o->format = TFQ_FORMAT_CSV;
  o->compression = TFQ_COMPRESSION_AUTO;
  o->delim = ',';
  o->skip_header_lines = -1;
  o->batch_size = 32;
  o->shuffle = 1;
  o->capacity = -1;
  o->mad = -1;
  o->num_epochs = 1;
  o->threads = 1;
  o->step = 2048;
  o->shard_n = 1;
  o->infer_rows = -1;
  *out = o;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_pipeline_options_free(tfq_pipeline_options *o) {
  if (!o) return;
  for (size_t i = 0; i < o->nfiles; i++) tfq_free(o->files[i]);
  tfq_free(o->files);
  tfq_free(o->columns);
  tfq_free(o->select_cols);
  tfq_free(o->sample_file);
  tfq_free(o->na_value);
  tfq_free(o);
}

tfq_code tfq_pipeline_options_add_file(tfq_pipeline_options *o, const char *path, tfq_status *st) {
  if (!path) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "path must not be NULL");
  if (o->nfiles == o->files_cap) {
    size_t cap = o->files_cap ? 2 * o->files_cap : 8;
    char **f = tfq_realloc(o->files, cap * sizeof *f);
    if (!f) return TFQ__OOM(st);
    o->files = f;
    o->files_cap = cap;
  }
  if (!(o->files[o->nfiles] = tfq__strdup(path))) return TFQ__OOM(st);
  o->nfiles++;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_pipeline_options_set_format(tfq_pipeline_options *o, tfq_format f) { o->format = f; }

tfq_code tfq_pipeline_options_set_index_suffix(tfq_pipeline_options *o, const char *suffix,
                                               tfq_status *st) {
  size_t n = suffix ? strlen(suffix) : 0;
  if (n >= sizeof o->index_suffix)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "index suffix longer than %zu bytes",
                          sizeof o->index_suffix - 1);
  if (suffix && n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "index suffix must not be empty");
  memcpy(o->index_suffix, suffix ? suffix : "", n + 1);
  tfq_status_clear(st);
  return TFQ_OK;
}
void tfq_pipeline_options_set_compression(tfq_pipeline_options *o, tfq_compression c) {
  o->compression = c;
}

tfq_code tfq_pipeline_options_set_columns(tfq_pipeline_options *o, const char *spec,
                                          tfq_status *st) {
  pl_colspec *c;
  size_t n;
  tfq_code rc = tfq__pl_parse_columns(spec ? spec : "", &c, &n, st);
  if (rc) return rc;
  tfq__pl_colspec_free(c, n);
  char *s = tfq__strdup(spec);
  if (!s) return TFQ__OOM(st);
  tfq_free(o->columns);
  o->columns = s;
  return TFQ_OK;
}

tfq_code tfq_pipeline_options_set_na_value(tfq_pipeline_options *o, const char *na,
                                           tfq_status *st) {
  char *s = NULL;
  if (na && !(s = tfq__strdup(na))) return TFQ__OOM(st);
  tfq_free(o->na_value);
  o->na_value = s;
  tfq_status_clear(st);
  return TFQ_OK;
}
void tfq_pipeline_options_set_use_quote_delim(tfq_pipeline_options *o, int on) {
  o->no_quote = !on;
}

void tfq_pipeline_options_set_csv_options(tfq_pipeline_options *o, const tfq_csv_options *csv) {
  o->csv = csv;
}
void tfq_pipeline_options_set_field_delim(tfq_pipeline_options *o, char delim) { o->delim = delim; }

tfq_code tfq_pipeline_options_set_select_cols(tfq_pipeline_options *o, const int64_t *cols,
                                              size_t n, tfq_status *st) {
  int64_t *c = NULL;
  if (n) {
    if (!(c = tfq_malloc(n * sizeof *c))) return TFQ__OOM(st);
    memcpy(c, cols, n * sizeof *c);
  }
  tfq_free(o->select_cols);
  o->select_cols = c;
  o->nselect = n;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_pipeline_options_set_infer_rows(tfq_pipeline_options *o, int64_t rows) {
  o->infer_rows = rows;
}

tfq_code tfq_pipeline_options_set_sample_file(tfq_pipeline_options *o, const char *path,
                                              tfq_status *st) {
  char *s = NULL;
  if (path && !(s = tfq__strdup(path))) return TFQ__OOM(st);
  tfq_free(o->sample_file);
  o->sample_file = s;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_pipeline_options_set_header(tfq_pipeline_options *o, int on) {
  o->header = on < 0 ? -1 : on != 0;
}
void tfq_pipeline_options_set_skip_header_lines(tfq_pipeline_options *o, int64_t n) {
  o->skip_header_lines = n;
}
void tfq_pipeline_options_set_fixed_length(tfq_pipeline_options *o, int64_t record_bytes,
                                           int64_t header_bytes, int64_t footer_bytes,
                                           int64_t hop_bytes) {
  o->record_bytes = record_bytes;
  o->header_bytes = header_bytes;
  o->footer_bytes = footer_bytes;
  o->hop_bytes = hop_bytes;
}
void tfq_pipeline_options_set_features(tfq_pipeline_options *o, const tfq_example_config *cfg) {
  o->features = cfg;
}
void tfq_pipeline_options_set_ragged_sequences(tfq_pipeline_options *o, int on) {
  o->ragged = on != 0;
}
void tfq_pipeline_options_set_keys(tfq_pipeline_options *o, int on) { o->keys = on != 0; }
void tfq_pipeline_options_set_batch_size(tfq_pipeline_options *o, int64_t n) { o->batch_size = n; }
void tfq_pipeline_options_set_drop_remainder(tfq_pipeline_options *o, int on) {
  o->drop_remainder = on != 0;
}
void tfq_pipeline_options_set_shuffle(tfq_pipeline_options *o, int on) { o->shuffle = on != 0; }
void tfq_pipeline_options_set_capacity(tfq_pipeline_options *o, int64_t capacity) {
  o->capacity = capacity;
}
void tfq_pipeline_options_set_min_after_dequeue(tfq_pipeline_options *o, int64_t m) { o->mad = m; }
void tfq_pipeline_options_set_shuffle_batch(tfq_pipeline_options *o, int64_t batch_size,
                                            int num_threads, int64_t capacity,
                                            int64_t min_after_dequeue) {
  o->shuffle = 1;
  o->batch_size = batch_size;
  o->threads = num_threads;
  o->capacity = capacity;
  o->mad = min_after_dequeue;
}
void tfq_pipeline_options_set_seed(tfq_pipeline_options *o, uint64_t seed) {
  o->seed = seed;
  o->seed_set = 1;
}
void tfq_pipeline_options_set_num_epochs(tfq_pipeline_options *o, int64_t n) { o->num_epochs = n; }
void tfq_pipeline_options_set_num_threads(tfq_pipeline_options *o, int n) { o->threads = n; }
void tfq_pipeline_options_set_step(tfq_pipeline_options *o, int64_t records) { o->step = records; }
void tfq_pipeline_options_set_shard(tfq_pipeline_options *o, int64_t index, int64_t count) {
  o->shard_i = index;
  o->shard_n = count;
}
void tfq_pipeline_options_set_max_bad_records(tfq_pipeline_options *o, int64_t n) {
  o->max_bad = n;
}
void tfq_pipeline_options_set_deterministic(tfq_pipeline_options *o, int on) {
  o->deterministic = on != 0;
}
void tfq_pipeline_options_set_bad_record_fn(tfq_pipeline_options *o, tfq_bad_record_fn fn,
                                            void *ctx) {
  o->bad_fn = fn;
  o->bad_ctx = ctx;
}

void tfq__pl_text_add(pl_text *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) cap *= 2;
    char *q = tfq_realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/* ---- the column spec ---- */

static int parse_type(const char *s, size_t n, tfq_dtype *out) {
  static const struct {
    const char *name;
    tfq_dtype dt;
  } types[] = {{"float32", TFQ_FLOAT}, {"float", TFQ_FLOAT}, {"float64", TFQ_DOUBLE},
               {"double", TFQ_DOUBLE}, {"int32", TFQ_INT32}, {"int", TFQ_INT32},
               {"int64", TFQ_INT64},   {"long", TFQ_INT64},  {"string", TFQ_STRING},
               {"str", TFQ_STRING}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen(types[i].name) == n && memcmp(types[i].name, s, n) == 0) {
      *out = types[i].dt;
      return 1;
    }
  return 0;
}

/* Whether `s` is a whole number of dtype `dt` (the library's TF-exact parsers). */
static int valid_number(tfq_dtype dt, const char *s, size_t n) {
  float f;
  double d;
  int32_t i;
  int64_t l;
  switch (dt) {
    case TFQ_FLOAT: return tfq_experimental_parse_f32(s, n, &f);
    case TFQ_DOUBLE: return tfq_experimental_parse_f64(s, n, &d);
    case TFQ_INT32: return tfq_experimental_parse_i32(s, n, &i);
    case TFQ_INT64: return tfq_experimental_parse_i64(s, n, &l);
    default: return 1;
  }
}

void tfq__pl_colspec_free(pl_colspec *c, size_t n) {
  for (size_t i = 0; c && i < n; i++) tfq_free(c[i].def);
  tfq_free(c);
}

static tfq_code spec_error(pl_colspec *c, size_t n, tfq_status *st, const char *fmt, const char *a,
                           int alen, const char *spec) {
  tfq__pl_colspec_free(c, n);
  char msg[256];
  snprintf(msg, sizeof msg, fmt, alen, a);
  return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s in column spec '%s'", msg, spec);
}

tfq_code tfq__pl_parse_columns(const char *spec, pl_colspec **out, size_t *nout, tfq_status *st) {
  size_t n = 0, cap = 0;
  pl_colspec *c = NULL;
  const char *p = spec;
  if (!*spec) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "empty column spec");
  for (;;) {
    size_t repeat = 1;
    if (*p >= '0' && *p <= '9') {
      const char *ns = p;
      repeat = 0;
      for (; *p >= '0' && *p <= '9'; p++)
        repeat = repeat > SPEC_MAX_COLUMNS ? repeat : repeat * 10 + (size_t)(*p - '0');
      if (*p != '*' || repeat < 1)
        return spec_error(c, n, st, "invalid repeat '%.*s' (expected N*TYPE[:DEFAULT], N >= 1)", ns,
                          (int)strcspn(ns, ",:"), spec);
      p++;
    }
    if (repeat > SPEC_MAX_COLUMNS - n)
      return spec_error(c, n, st, "more than %.*s100000 columns", "", 0, spec);
    const char *ts = p;
    while (*p && *p != ',' && *p != ':') p++;
    pl_colspec f = {0};
    if (!parse_type(ts, (size_t)(p - ts), &f.dtype))
      return spec_error(c, n, st,
                        "unknown type '%.*s' (expected float32, float64, int32, int64 or string)",
                        ts, (int)(p - ts), spec);
    char *def = NULL;
    size_t dl = 0;
    if (*p == ':') {
      p++;
      size_t rest = strlen(p);
      if (!(def = tfq_malloc(rest + 1))) {
        tfq__pl_colspec_free(c, n);
        return TFQ__OOM(st);
      }
      if (*p == '"') {
        p++;
        for (;;) {
          if (!*p) {
            tfq_free(def);
            return spec_error(c, n, st, "unterminated quote%.*s", "", 0, spec);
          }
          if (*p == '"' && p[1] == '"') {
            def[dl++] = '"';
            p += 2;
          } else if (*p == '"') {
            p++;
            break;
          } else {
            def[dl++] = *p++;
          }
        }
        if (*p && *p != ',') {
          tfq_free(def);
          return spec_error(c, n, st, "a quoted default must end at ','%.*s", "", 0, spec);
        }
      } else {
        while (*p && *p != ',') def[dl++] = *p++;
      }
      def[dl] = '\0';
      if (f.dtype != TFQ_STRING && !valid_number(f.dtype, def, dl)) {
        tfq_code rc = spec_error(c, n, st, "invalid default '%.*s'", def, (int)dl, spec);
        tfq_free(def);
        return rc;
      }
    } else {
      f.required = 1;
    }
    if (n + repeat > cap) {
      size_t nc = cap ? cap : 8;
      while (nc < n + repeat) nc *= 2;
      pl_colspec *g = tfq_realloc(c, nc * sizeof *g);
      if (!g) {
        tfq_free(def);
        tfq__pl_colspec_free(c, n);
        return TFQ__OOM(st);
      }
      c = g;
      cap = nc;
    }
    for (size_t k = 0; k < repeat; k++) {
      c[n] = f;
      if (def) {
        if (!(c[n].def = tfq_malloc(dl + 1))) {
          tfq_free(def);
          tfq__pl_colspec_free(c, n);
          return TFQ__OOM(st);
        }
        memcpy(c[n].def, def, dl + 1);
        c[n].deflen = dl;
      }
      n++;
    }
    tfq_free(def);
    if (!*p) break;
    if (*p != ',') return spec_error(c, n, st, "unexpected '%.*s'", p, 1, spec);
    p++;
  }
  *out = c;
  *nout = n;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq__pl_csv_from_spec(const pl_colspec *c, size_t n, const tfq_pipeline_options *po,
                               tfq_csv_options **out, tfq_status *st) {
  tfq_csv_options *o;
  tfq_code rc = tfq_csv_options_new(&o, st);
  if (rc) return rc;
  rc = tfq_csv_options_set_field_delim(o, &po->delim, 1, st);
  tfq_csv_options_set_use_quote_delim(o, !po->no_quote);
  if (!rc && po->na_value)
    rc = tfq_csv_options_set_na_value(o, po->na_value, strlen(po->na_value), st);
  for (size_t i = 0; !rc && i < n; i++) {
    const pl_colspec *f = &c[i];
    if (f->required) {
      rc = tfq_csv_options_add_required(o, f->dtype, st);
      continue;
    }
    float fv;
    double dv;
    int32_t iv;
    int64_t lv;
    switch (f->dtype) {
      case TFQ_FLOAT:
        tfq_experimental_parse_f32(f->def, f->deflen, &fv);
        rc = tfq_csv_options_add_default_float(o, fv, st);
        break;
      case TFQ_DOUBLE:
        tfq_experimental_parse_f64(f->def, f->deflen, &dv);
        rc = tfq_csv_options_add_default_double(o, dv, st);
        break;
      case TFQ_INT32:
        tfq_experimental_parse_i32(f->def, f->deflen, &iv);
        rc = tfq_csv_options_add_default_int32(o, iv, st);
        break;
      case TFQ_INT64:
        tfq_experimental_parse_i64(f->def, f->deflen, &lv);
        rc = tfq_csv_options_add_default_int64(o, lv, st);
        break;
      default: rc = tfq_csv_options_add_default_string(o, f->def, f->deflen, st); break;
    }
  }
  if (!rc && po->nselect) rc = tfq_csv_options_set_select_cols(o, po->select_cols, po->nselect, st);
  if (rc) {
    tfq_csv_options_free(o);
    return rc;
  }
  *out = o;
  return TFQ_OK;
}
