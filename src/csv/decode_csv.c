/* The decode_csv driver: records -> fields (fast path, libcsv, or the scalar reference) ->
 * column tensors with TensorFlow's defaults, conversions and messages. */
#include <string.h>

#include "csv_internal.h"

/* Where the records come from: pointer/length arrays, a string tensor, or lines of a buffer. */
typedef struct rec_src {
  int kind; /* 0: arrays, 1: tfq__str array, 2: buffer lines */
  const char *const *recs;
  const size_t *lens;
  const tfq__str *strs;
  const char *cur, *end; /* buffer cursor */
} rec_src;

static inline void next_rec(rec_src *s, size_t i, const char **p, size_t *len) {
  if (s->kind == 0) {
    *p = s->recs[i];
    *len = s->lens[i];
  } else if (s->kind == 1) {
    *p = s->strs[i].p;
    *len = s->strs[i].len;
  } else {
    const char *b = s->cur;
    const char *nl = memchr(b, '\n', (size_t)(s->end - b));
    const char *e = nl ? nl : s->end;
    s->cur = nl ? nl + 1 : s->end;
    if (e > b && e[-1] == '\r') e--;
    *p = b;
    *len = (size_t)(e - b);
  }
}

static tfq_code field_error(tfq_status *st, size_t f, size_t rec, const char *type,
                            const tfq__span *sp) {
  return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Field %zu in record %zu is not a valid %s: %.*s",
                        f, rec, type, (int)(sp->len > 100000 ? 100000 : sp->len), sp->p);
}

static tfq_code decode(const tfq_csv_options *o, rec_src *src, size_t n, const int64_t *dims,
                       int rank, tfq__csv_path path, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  const size_t ncol = o->ndefs;
  if (ncol == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "record_defaults must not be empty");
  if (o->select && o->nselect != ncol)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Length of select_cols and record_defaults do not match.");
  const unsigned char delim = o->delim;
  const int q = o->use_quote;
  /* Delimiters the fast path and libcsv cannot mirror go to the scalar reference. */
  if (delim == '\n' || delim == '\r' || (q && delim == '"')) path = TFQ__PATH_REF;
  if (!q && path == TFQ__PATH_LIBCSV) path = TFQ__PATH_AUTO; /* libcsv cannot turn quotes off */
  const tfq__csv_sel sel = {o->select, o->nselect};

  tfq_code rc = TFQ_OK;
  tfq_tuple *tup = NULL;
  tfq__span *spans = NULL;
  tfq__lcsv *lc = NULL;
  tfq__scratch sc = {NULL, 0, 0};
  void **data = NULL;

  if ((rc = tfq_tuple_new(ncol, &tup, st))) return rc;
  spans = tfq_malloc(ncol * sizeof *spans);
  data = tfq_malloc(ncol * sizeof *data);
  if (!spans || !data) {
    rc = TFQ__OOM(st);
    goto fail;
  }
  for (size_t f = 0; f < ncol; f++) {
    tfq_tensor *t;
    if ((rc = tfq__tensor_alloc(o->defs[f].dtype, dims, rank, 0, &t, st))) goto fail;
    tfq_tuple_set_take(tup, f, t);
    data[f] = t->data;
  }

  const char *na = o->na;
  const size_t na_len = o->na_len;
  for (size_t i = 0; i < n; i++) {
    const char *rec;
    size_t len, kept;
    int r;
    next_rec(src, i, &rec, &len);
    if (path == TFQ__PATH_REF) {
      r = tfq__tok_ref(rec, len, delim, q, &sel, spans, ncol, &kept, &sc);
    } else {
      r = path == TFQ__PATH_LIBCSV ? TFQ__TOK_HAS_QUOTE
                                   : tfq__tok_fast(rec, len, delim, q, &sel, spans, ncol, &kept);
      if (r == TFQ__TOK_HAS_QUOTE) {
        if (!lc && !(lc = tfq__lcsv_new(delim))) {
          rc = TFQ__OOM(st);
          goto fail;
        }
        r = tfq__lcsv_record(lc, rec, len, &sel, spans, ncol, &kept);
      }
    }
    if (r != TFQ__TOK_OK) {
      rc = r == TFQ__TOK_OOM ? TFQ__OOM(st)
                             : tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", tfq__tok_message(r));
      goto fail;
    }
    if (kept != ncol) {
      rc = tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Expect %zu fields but have %zu in record %zu",
                          ncol, kept, i);
      goto fail;
    }
    for (size_t f = 0; f < ncol; f++) {
      const tfq__span *sp = &spans[f];
      const tfq__csv_default *d = &o->defs[f];
      if (sp->len == 0 || (sp->len == na_len && na_len && memcmp(sp->p, na, na_len) == 0)) {
        if (d->required) {
          rc = tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                              "Field %zu is required but missing in record %zu!", f, i);
          goto fail;
        }
        switch (d->dtype) {
          case TFQ_FLOAT: ((float *)data[f])[i] = d->v.f; break;
          case TFQ_DOUBLE: ((double *)data[f])[i] = d->v.d; break;
          case TFQ_INT32: ((int32_t *)data[f])[i] = d->v.i32; break;
          case TFQ_INT64: ((int64_t *)data[f])[i] = d->v.i64; break;
          default:
            if (tfq__tensor_put_string(tfq_tuple_get(tup, f), (int64_t)i, d->s, d->s_len)) {
              rc = TFQ__OOM(st);
              goto fail;
            }
        }
        continue;
      }
      switch (d->dtype) {
        case TFQ_FLOAT:
          if (!tfq__parse_f32(sp->p, sp->len, &((float *)data[f])[i])) {
            rc = field_error(st, f, i, "float", sp);
            goto fail;
          }
          break;
        case TFQ_DOUBLE:
          if (!tfq__parse_f64(sp->p, sp->len, &((double *)data[f])[i])) {
            rc = field_error(st, f, i, "double", sp);
            goto fail;
          }
          break;
        case TFQ_INT32:
          if (!tfq__parse_i32(sp->p, sp->len, &((int32_t *)data[f])[i])) {
            rc = field_error(st, f, i, "int32", sp);
            goto fail;
          }
          break;
        case TFQ_INT64:
          if (!tfq__parse_i64(sp->p, sp->len, &((int64_t *)data[f])[i])) {
            rc = field_error(st, f, i, "int64", sp);
            goto fail;
          }
          break;
        default:
          if (tfq__tensor_put_string(tfq_tuple_get(tup, f), (int64_t)i, sp->p, sp->len)) {
            rc = TFQ__OOM(st);
            goto fail;
          }
      }
    }
  }
  tfq__lcsv_free(lc);
  tfq_free(sc.p);
  tfq_free(spans);
  tfq_free(data);
  *out = tup;
  tfq_status_clear(st);
  return TFQ_OK;
fail:
  tfq__lcsv_free(lc);
  tfq_free(sc.p);
  tfq_free(spans);
  tfq_free(data);
  tfq_tuple_free(tup);
  return rc;
}

tfq_code tfq__decode_csv_path(const tfq_csv_options *o, const char *const *recs, const size_t *lens,
                              size_t n, const int64_t *dims, int rank, tfq__csv_path path,
                              tfq_tuple **out, tfq_status *st) {
  rec_src s = {0, recs, lens, NULL, NULL, NULL};
  return decode(o, &s, n, dims, rank, path, out, st);
}

tfq_code tfq_decode_csv(const tfq_csv_options *o, const tfq_tensor *records, tfq_tuple **out,
                        tfq_status *st) {
  *out = NULL;
  if (tfq_tensor_dtype(records) != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected records to be a string tensor, got %s",
                          tfq_dtype_name(tfq_tensor_dtype(records)));
  rec_src s = {1, NULL, NULL, tfq__strs(records), NULL, NULL};
  return decode(o, &s, (size_t)tfq_tensor_num_elements(records), tfq_tensor_dims(records),
                tfq_tensor_rank(records), TFQ__PATH_AUTO, out, st);
}

tfq_code tfq_decode_csv_lines(const tfq_csv_options *o, const char *const *lines,
                              const size_t *lens, size_t n, tfq_tuple **out, tfq_status *st) {
  int64_t dim = (int64_t)n;
  rec_src s = {0, lines, lens, NULL, NULL, NULL};
  return decode(o, &s, n, &dim, 1, TFQ__PATH_AUTO, out, st);
}

tfq_code tfq_decode_csv_record(const tfq_csv_options *o, const char *rec, size_t len,
                               tfq_tuple **out, tfq_status *st) {
  rec_src s = {0, &rec, &len, NULL, NULL, NULL};
  return decode(o, &s, 1, NULL, 0, TFQ__PATH_AUTO, out, st);
}

static size_t count_lines(const char *buf, size_t len) {
  size_t n = 0;
  const char *p = buf, *end = buf + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    n++;
    if (!nl) break;
    p = nl + 1;
  }
  return n;
}

tfq_code tfq_decode_csv_buffer(const tfq_csv_options *o, const char *buf, size_t len,
                               tfq_tuple **out, tfq_status *st) {
  size_t n = len ? count_lines(buf, len) : 0;
  int64_t dim = (int64_t)n;
  rec_src s = {2, NULL, NULL, NULL, buf, buf + len};
  return decode(o, &s, n, &dim, 1, TFQ__PATH_AUTO, out, st);
}
