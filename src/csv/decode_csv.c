/* The decode_csv driver: records -> fields -> column tensors with TensorFlow's defaults,
 * conversions and messages.  The fused row decoder (split and convert in one pass, libcsv for
 * quoted fields) takes the records it can; the generic path (a tokenizer: fast path, libcsv, or
 * the scalar reference, then the general parsers) redoes any other record. */
#include <string.h>

#include "csv_fused.h"
#include "csv_internal.h"
#include "csv_shared.h"
#include "csv_simd.h"

/* Where the records come from: pointer/length arrays, a string tensor, or lines of a buffer. */
typedef struct rec_src {
  int kind; /* 0: arrays, 1: tfq__str array, 2: buffer lines, 3: buffer lines, each ended by '\n',
             * that the fused decoder cuts as it decodes them (decode stops at the buffer's end) */
  const char *const *recs;
  const size_t *lens;
  const tfq__str *strs;
  const char *cur, *end; /* buffer cursor */
  size_t count;          /* kind 3: the records decode() took */
  tfq_tensor *holder;    /* kind 3: keeps [cur, end) alive, or NULL (tfq__decode_csv_span) */
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

#define SMALL_COLS 32
/* Where decode() puts column f's value i. */
#define AT(T, f, i) ((T *)(void *)(data[f] + (i)*stride[f]))

/* The bytes of the n records of `src`, or `cap` when that is less. */
static size_t rec_bytes(rec_src *src, size_t n, size_t cap) {
  if (src->kind >= 2) /* buffer lines: the cursor is at the start, and next_rec would move it */
    return (size_t)(src->end - src->cur) < cap ? (size_t)(src->end - src->cur) : cap;
  size_t total = 0;
  for (size_t i = 0; i < n && total < cap; i++) {
    const char *rec;
    size_t len;
    next_rec(src, i, &rec, &len);
    total += len;
  }
  return total < cap ? total : cap;
}

/* Whether `t` can take column outputs of `dtype` and shape dims[0..rank) in place: nothing else
 * references it and it does not wrap caller memory. */
static int refillable(const tfq_tensor *t, tfq_dtype dtype, const int64_t *dims, int rank) {
  if (!t || t->dtype != dtype || t->rank != rank || !tfq__tensor_sole(t)) return 0;
  for (int d = 0; d < rank; d++)
    if (t->dims[d] != dims[d]) return 0;
  return 1;
}

/* Decodes the n records of `src` into a new tuple (*out), or into `reuse` (its refillable
 * tensors refilled, the others replaced; *out = reuse).  `outs` (NULL: none): the columns with
 * outs[f].base set are written there instead (tfq__decode_csv_into_out). */
/* Gives each distinct string output tensor of the columns scols[0..nscols) a reference to
 * `holder` in its keep list, so that their strings may point into the bytes it holds.  1, or 0
 * out of memory (then none may: the references taken stay until the tensors' reset, harmless). */
static int keep_holder(tfq_tensor *const *sten, const size_t *scols, size_t nscols,
                       tfq_tensor *holder) {
  for (size_t k = 0; k < nscols; k++) {
    tfq_tensor *t = sten[scols[k]];
    size_t j = 0;
    while (j < k && sten[scols[j]] != t) j++;
    if (j < k) continue; /* a stacked tensor already given one */
    if (tfq__tensor_keep_reserve(t, 1)) return 0;
    tfq_tensor *ref = tfq_tensor_ref(holder);
    tfq__tensor_keep_take(t, &ref, 1);
  }
  return 1;
}

static tfq_code decode(const tfq_csv_options *o, rec_src *src, size_t n, const int64_t *dims,
                       int rank, tfq__csv_path path, tfq_tuple *reuse, const tfq__csv_out *outs,
                       tfq_tuple **out, tfq_status *st) {
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
  char **data = NULL;
  tfq_tensor **sten = NULL;
  size_t *scols = NULL, *stride = NULL;
  size_t at = SIZE_MAX; /* the record being decoded: an error's location */

  /* per-column scratch: on the stack for up to SMALL_COLS columns (no allocation per call) */
  tfq__span spans_s[SMALL_COLS];
  tfq__fcol cols_s[SMALL_COLS];
  tfq__fcol *cols = NULL;
  char *data_s[SMALL_COLS];
  tfq_tensor *sten_s[SMALL_COLS];
  size_t scols_s[SMALL_COLS], stride_s[SMALL_COLS];
  const int small = ncol <= SMALL_COLS;
  if (reuse && reuse->n != ncol)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "the output tuple has %zu slots for %zu columns", reuse->n, ncol);
  if (reuse)
    tup = reuse;
  else if ((rc = tfq_tuple_new(ncol, &tup, st)))
    return rc;
  spans = small ? spans_s : tfq_malloc(ncol * sizeof *spans);
  data = small ? data_s : tfq_malloc(ncol * sizeof *data);
  scols = small ? scols_s : tfq_malloc(ncol * sizeof *scols);
  stride = small ? stride_s : tfq_malloc(ncol * sizeof *stride);
  sten = small ? sten_s : tfq_malloc(ncol * sizeof *sten);
  cols = small ? cols_s : tfq_malloc(ncol * sizeof *cols);
  if (!spans || !data || !scols || !stride || !sten || !cols) {
    rc = TFQ__OOM(st);
    goto fail;
  }
  /* A new string column's bytes: reserved at once, at most 16 a record and no more than all the
   * records' bytes, so that the usual short fields need one block instead of a growing chain
   * (counted only when a string column is new: a refilled one keeps its block). */
  size_t reserve = SIZE_MAX;
  for (size_t f = 0; f < ncol; f++) {
    tfq_tensor *t = tup->c[f];
    const int is_str = o->defs[f].dtype == TFQ_STRING;
    stride[f] = is_str ? sizeof(tfq__str) : tfq_dtype_size(o->defs[f].dtype);
    sten[f] = NULL;
    if (outs && outs[f].base) {
      data[f] = outs[f].base;
      stride[f] = outs[f].stride;
      if (!is_str) continue;
      t = sten[f] = outs[f].str; /* a stacked [B, k] string output: row-major bytes, one arena */
      if (t->arena) continue;
    } else if (refillable(t, o->defs[f].dtype, dims, rank)) {
      if (is_str) tfq__tensor_strings_reset(t); /* keeps its newest chunk */
      data[f] = t->data;
      sten[f] = t;
      continue;
    } else {
      if ((rc = tfq__tensor_alloc(o->defs[f].dtype, dims, rank, 0, &t, st))) goto fail;
      tfq_tuple_set_take(tup, f, t);
      data[f] = t->data;
      sten[f] = t;
    }
    if (!is_str) continue;
    if (reserve == SIZE_MAX) reserve = rec_bytes(src, n, (size_t)16 * n);
    size_t share = 1; /* the string columns whose bytes go into t */
    for (size_t g = f + 1; outs && outs[f].base && g < ncol; g++) share += outs[g].str == t;
    if (tfq__tensor_arena_reserve(t, reserve <= SIZE_MAX / share ? reserve * share : 0)) {
      rc = TFQ__OOM(st);
      goto fail;
    }
  }

  const char *na = o->na;
  const size_t na_len = o->na_len;
  /* The fused row decoder takes every record it can; it needs the fast path's delimiters, no
   * select_cols, and a delimiter its number scanners stop at (not a digit, '.' or '-'). */
  const int fused = path == TFQ__PATH_AUTO && !o->select && (unsigned)(delim - '0') >= 10u &&
                    delim != '.' && delim != '-';
  size_t nscols = 0;
  for (size_t f = 0; f < ncol; f++)
    if (o->defs[f].dtype == TFQ_STRING) scols[nscols++] = f;
  for (size_t f = 0; f < ncol; f++)
    cols[f] = (tfq__fcol){data[f], stride[f], o->defs[f].dtype, o->defs[f].required};
  tfq__fused_ctx fr = {.defs = o->defs,
                       .ncol = ncol,
                       .delim = delim,
                       .q = q,
                       .na = na,
                       .na_len = na_len,
                       .data = data,
                       .stride = stride,
                       .sten = sten,
                       .strs = spans,
                       .scols = scols,
                       .nscols = nscols,
                       .simd = tfq__csv_simd(),
                       .cols = cols};
#if TFQ__CSV_X86
  tfq__fused_stop_table(&fr);
#endif
  if (src->kind == 3 && src->holder && fused && keep_holder(sten, scols, nscols, src->holder)) {
    fr.view_lo = src->cur;
    fr.view_hi = src->end;
  }
  const tfq__tok_fast_fn tok_fast = tfq__tok_fast_for(fr.simd);
#if TFQ__CSV_X86
  const int avx2 = fr.simd == TFQ__SIMD_AVX2;
  tfq__fused_run_fn *const run_recs = avx2 ? tfq__fused_run_avx2 : tfq__fused_run_plain;
  tfq__fused_row_fn *const one_row = avx2 ? tfq__fused_row_avx2 : tfq__fused_row_plain;
#else
  tfq__fused_run_fn *const run_recs = tfq__fused_run_plain;
  tfq__fused_row_fn *const one_row = tfq__fused_row_plain;
#endif
  size_t count = n;
  for (size_t i = 0; i < n; i++) {
    const char *rec;
    size_t len, kept;
    int r;
    if (src->kind == 3) {
      if (fused && (i = run_recs(&fr, &src->cur, src->end, i, n)) == n) break;
      if (src->cur == src->end) {
        count = i;
        break;
      }
    }
    at = i;
    next_rec(src, i, &rec, &len);
    if (fused) {
      fr.lc = lc;
      if (one_row(&fr, rec, len, src->kind >= 2 ? src->end : rec + len, i)) continue;
    }
    if (path == TFQ__PATH_REF) {
      r = tfq__tok_ref(rec, len, delim, q, &sel, spans, ncol, &kept, &sc);
    } else {
      r = path == TFQ__PATH_LIBCSV ? TFQ__TOK_HAS_QUOTE
                                   : tok_fast(rec, len, delim, q, &sel, spans, ncol, &kept, lc);
      if (r == TFQ__TOK_HAS_QUOTE) {
        if (!lc && !(lc = tfq__lcsv_new(delim))) {
          rc = TFQ__OOM(st);
          goto fail;
        }
        r = path == TFQ__PATH_LIBCSV ? tfq__lcsv_record(lc, rec, len, &sel, spans, ncol, &kept)
                                     : tok_fast(rec, len, delim, q, &sel, spans, ncol, &kept, lc);
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
          case TFQ_FLOAT: *AT(float, f, i) = d->v.f; break;
          case TFQ_DOUBLE: *AT(double, f, i) = d->v.d; break;
          case TFQ_INT32: *AT(int32_t, f, i) = d->v.i32; break;
          case TFQ_INT64: *AT(int64_t, f, i) = d->v.i64; break;
          default:
            if (tfq__tensor_put_string_at(sten[f], AT(tfq__str, f, i), d->s, d->s_len)) {
              rc = TFQ__OOM(st);
              goto fail;
            }
        }
        continue;
      }
      switch (d->dtype) {
        case TFQ_FLOAT:
          if (!tfq__parse_f32(sp->p, sp->len, AT(float, f, i))) {
            rc = field_error(st, f, i, "float", sp);
            goto fail;
          }
          break;
        case TFQ_DOUBLE:
          if (!tfq__parse_f64(sp->p, sp->len, AT(double, f, i))) {
            rc = field_error(st, f, i, "double", sp);
            goto fail;
          }
          break;
        case TFQ_INT32:
          if (!tfq__parse_i32(sp->p, sp->len, AT(int32_t, f, i))) {
            rc = field_error(st, f, i, "int32", sp);
            goto fail;
          }
          break;
        case TFQ_INT64:
          if (!tfq__parse_i64(sp->p, sp->len, AT(int64_t, f, i))) {
            rc = field_error(st, f, i, "int64", sp);
            goto fail;
          }
          break;
        default:
          if (tfq__tensor_put_string_at(sten[f], AT(tfq__str, f, i), sp->p, sp->len)) {
            rc = TFQ__OOM(st);
            goto fail;
          }
      }
    }
  }
  tfq__lcsv_free(lc);
  tfq_free(sc.p);
  if (!small) {
    tfq_free(spans);
    tfq_free(data);
    tfq_free(scols);
    tfq_free(stride);
    tfq_free(sten);
    tfq_free(cols);
  }
  src->count = count;
  *out = tup;
  tfq_status_clear(st);
  return TFQ_OK;
fail:
  if (rc == TFQ_INVALID_ARGUMENT && at != SIZE_MAX) tfq__status_set_record(st, (int64_t)at);
  tfq__lcsv_free(lc);
  tfq_free(sc.p);
  if (!small) {
    tfq_free(spans);
    tfq_free(data);
    tfq_free(scols);
    tfq_free(stride);
    tfq_free(sten);
    tfq_free(cols);
  }
  if (tup != reuse) tfq_tuple_free(tup);
  return rc;
}

tfq_code tfq__decode_csv_path(const tfq_csv_options *o, const char *const *recs, const size_t *lens,
                              size_t n, const int64_t *dims, int rank, tfq__csv_path path,
                              tfq_tuple **out, tfq_status *st) {
  rec_src s = {0, recs, lens, NULL, NULL, NULL, 0, NULL};
  return decode(o, &s, n, dims, rank, path, NULL, NULL, out, st);
}

tfq_code tfq_decode_csv(const tfq_csv_options *o, const tfq_tensor *records, tfq_tuple **out,
                        tfq_status *st) {
  *out = NULL;
  if (tfq_tensor_dtype(records) != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected records to be a string tensor, got %s",
                          tfq_dtype_name(tfq_tensor_dtype(records)));
  rec_src s = {1, NULL, NULL, tfq__strs(records), NULL, NULL, 0, NULL};
  return decode(o, &s, (size_t)tfq_tensor_num_elements(records), tfq_tensor_dims(records),
                tfq_tensor_rank(records), TFQ__PATH_AUTO, NULL, NULL, out, st);
}

tfq_code tfq_decode_csv_into(const tfq_csv_options *o, const tfq_tensor *records, tfq_tuple *dst,
                             tfq_status *st) {
  if (tfq_tensor_dtype(records) != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected records to be a string tensor, got %s",
                          tfq_dtype_name(tfq_tensor_dtype(records)));
  if (!dst) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "dst must not be NULL");
  rec_src s = {1, NULL, NULL, tfq__strs(records), NULL, NULL, 0, NULL};
  tfq_tuple *out;
  return decode(o, &s, (size_t)tfq_tensor_num_elements(records), tfq_tensor_dims(records),
                tfq_tensor_rank(records), TFQ__PATH_AUTO, dst, NULL, &out, st);
}

/* Whether `outs` breaks tfq__csv_out's rules (st set): a string column's out names its string
 * tensor, and only a string column's does. */
static int bad_outs(const tfq_csv_options *o, const tfq_tuple *dst, const tfq__csv_out *outs,
                    tfq_status *st) {
  for (size_t f = 0; f < o->ndefs && f < dst->n; f++) {
    if (!outs[f].base) continue;
    int is_str = o->defs[f].dtype == TFQ_STRING;
    if (is_str != (outs[f].str != NULL) || (is_str && outs[f].str->dtype != TFQ_STRING)) {
      tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                     "column %zu: only a string column's out, and every one, names a string "
                     "tensor",
                     f);
      return 1;
    }
  }
  return 0;
}

tfq_code tfq__decode_csv_into_out(const tfq_csv_options *o, const tfq_tensor *records,
                                  tfq_tuple *dst, const tfq__csv_out *outs, tfq_status *st) {
  if (bad_outs(o, dst, outs, st)) return TFQ_INVALID_ARGUMENT;
  rec_src s = {1, NULL, NULL, tfq__strs(records), NULL, NULL, 0, NULL};
  tfq_tuple *out;
  return decode(o, &s, (size_t)tfq_tensor_num_elements(records), tfq_tensor_dims(records),
                tfq_tensor_rank(records), TFQ__PATH_AUTO, dst, outs, &out, st);
}

tfq_dtype tfq__csv_column_dtype(const tfq_csv_options *o, size_t f) {
  return f < o->ndefs ? o->defs[f].dtype : (tfq_dtype)0;
}

tfq_code tfq_decode_csv_lines(const tfq_csv_options *o, const char *const *lines,
                              const size_t *lens, size_t n, tfq_tuple **out, tfq_status *st) {
  int64_t dim = (int64_t)n;
  rec_src s = {0, lines, lens, NULL, NULL, NULL, 0, NULL};
  return decode(o, &s, n, &dim, 1, TFQ__PATH_AUTO, NULL, NULL, out, st);
}

tfq_code tfq_decode_csv_record(const tfq_csv_options *o, const char *rec, size_t len,
                               tfq_tuple **out, tfq_status *st) {
  rec_src s = {0, &rec, &len, NULL, NULL, NULL, 0, NULL};
  return decode(o, &s, 1, NULL, 0, TFQ__PATH_AUTO, NULL, NULL, out, st);
}

tfq_code tfq_decode_csv_buffer(const tfq_csv_options *o, const char *buf, size_t len,
                               tfq_tuple **out, tfq_status *st) {
  size_t n = len ? tfq__csv_count_lines(buf, len) : 0;
  int64_t dim = (int64_t)n;
  rec_src s = {2, NULL, NULL, NULL, buf, buf + len, 0, NULL};
  return decode(o, &s, n, &dim, 1, TFQ__PATH_AUTO, NULL, NULL, out, st);
}

tfq_code tfq__decode_csv_span(const tfq_csv_options *o, const char *buf, size_t len,
                              tfq_tensor *holder, size_t n, tfq_tuple *dst,
                              const tfq__csv_out *outs, size_t *count, size_t *used,
                              tfq_status *st) {
  *count = *used = 0;
  if (!len || buf[len - 1] != '\n')
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "the span must end with a line's '\\n'");
  if (outs && bad_outs(o, dst, outs, st)) return TFQ_INVALID_ARGUMENT;
  int64_t dim = (int64_t)n;
  rec_src s = {3, NULL, NULL, NULL, buf, buf + len, 0, holder};
  tfq_tuple *out;
  tfq_code c = decode(o, &s, n, &dim, 1, TFQ__PATH_AUTO, dst, outs, &out, st);
  if (!c) {
    *count = s.count;
    *used = (size_t)(s.cur - buf);
  }
  return c;
}
