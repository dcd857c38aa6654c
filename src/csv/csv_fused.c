/* The fused row decoder of decode_csv (csv_fused.h): split and convert in one pass, at the
 * scalar/SSE2 levels and, with the vector number scan, at the AVX2 level. */
#include "csv_fused.h"

#include <string.h>

#include "csv_number_fast.h"
#include "csv_shared.h"

/* End of the unquoted field at p: the first delimiter, or end; NULL if a '"' (quoting on), '\n'
 * or '\r' comes first. */
static inline const char *field_end(int simd, const char *p, const char *end, const char *lim,
                                    unsigned char delim, int q) {
  const char *x = tfq__csv_stop(simd, p, end, lim, delim, q);
  return !x ? end : (unsigned char)*x == delim ? x : NULL;
}

static inline int is_na(const tfq__fused_ctx *c, const char *p, size_t n) {
  return c->na_len && n == c->na_len && memcmp(p, c->na, n) == 0;
}

/* The closing quote of the quoted field at p (*p == '"') when its contents need no unescaping:
 * no '""' and no CR or LF before it (those are libcsv's to decide).  NULL otherwise, and when the
 * record ends first. */
static inline const char *plain_quoted(const char *p, const char *end) {
  for (const char *x = p + 1; x < end; x++) {
    const unsigned char ch = (unsigned char)*x;
    if (ch == '"') return x + 1 < end && x[1] == '"' ? NULL : x;
    if (ch == '\n' || ch == '\r') return NULL;
  }
  return NULL;
}

/* Converts the contents of a quoted field: the fast routines when they take all of it, else the
 * general parsers. */
static int fused_convert(const tfq__csv_default *d, char *at, const tfq__span *sp) {
  const char *p = sp->p, *end = p + sp->len;
  int64_t v = 0; /* set by fast_int when it returns end; the initialiser quiets gcc --coverage */
  switch (d->dtype) {
    case TFQ_FLOAT:
      return fast_f32(p, end, end, (float *)(void *)at) == end ||
             tfq__parse_f32(p, sp->len, (float *)(void *)at);
    case TFQ_DOUBLE:
      return fast_f64(p, end, end, (double *)(void *)at) == end ||
             tfq__parse_f64(p, sp->len, (double *)(void *)at);
    case TFQ_INT32:
      if (fast_int(p, end, end, INT32_MAX, &v) == end) {
        *(int32_t *)(void *)at = (int32_t)v;
        return 1;
      }
      return tfq__parse_i32(p, sp->len, (int32_t *)(void *)at);
    case TFQ_INT64:
      return fast_int(p, end, end, INT64_MAX, (int64_t *)(void *)at) == end ||
             tfq__parse_i64(p, sp->len, (int64_t *)(void *)at);
    default: return 1;
  }
}

static void put_default(const tfq__csv_default *d, char *at) {
  switch (d->dtype) {
    case TFQ_FLOAT: *(float *)(void *)at = d->v.f; break;
    case TFQ_DOUBLE: *(double *)(void *)at = d->v.d; break;
    case TFQ_INT32: *(int32_t *)(void *)at = d->v.i32; break;
    case TFQ_INT64: *(int64_t *)(void *)at = d->v.i64; break;
    default: break;
  }
}

/* Field f of a fused row takes its default (strings: the default's bytes, copied at the end). */
static void fused_default(tfq__fused_ctx *c, const tfq__csv_default *d, size_t f, char *at) {
  put_default(d, at);
  if (d->dtype == TFQ_STRING) {
    c->strs[f].p = d->s;
    c->strs[f].len = d->s_len;
  }
}

/* The fast routines on the unquoted number at p of a column of `dtype`, written at `at`: its end,
 * or NULL (loads may read up to lim). */
static inline const char *fast_field(tfq_dtype dtype, const char *p, const char *end,
                                     const char *lim, char *at) {
  switch (dtype) {
    case TFQ_FLOAT: return fast_f32(p, end, lim, (float *)(void *)at);
    case TFQ_DOUBLE: return fast_f64(p, end, lim, (double *)(void *)at);
    case TFQ_INT32: {
      int64_t v = 0;
      const char *e = fast_int(p, end, lim, INT32_MAX, &v);
      *(int32_t *)(void *)at = (int32_t)v;
      return e;
    }
    case TFQ_INT64: return fast_int(p, end, lim, INT64_MAX, (int64_t *)(void *)at);
    default: return NULL;
  }
}

#if TFQ__CSV_X86
/* The vector number scan alone on the number at p of a column of `dtype` (p + 16 bytes may be
 * read), written at `at`: its end, or NULL when it does not decide (the usual checks and the
 * scalar parsers then run).  A field it takes starts with '-', '.' or a digit: not empty, not
 * quoted, no CR. */
__attribute__((target("avx2"))) static inline const char *vec_number_at(tfq_dtype dtype,
                                                                        const char *p,
                                                                        const char *end, char *at) {
  uint64_t w;
  int nf, neg;
  const char *e;
  switch (dtype) { /* vec_number inlined in each case, its `dot` a constant */
    case TFQ_FLOAT:
      e = vec_number(p, end, 1, &w, &nf, &neg);
      return e && f32_of(w, nf, neg, (float *)(void *)at) ? e : NULL;
    case TFQ_DOUBLE:
      e = vec_number(p, end, 1, &w, &nf, &neg);
      return e && f64_of(w, nf, neg, (double *)(void *)at) ? e : NULL;
    case TFQ_INT32:
      e = vec_number(p, end, 0, &w, &nf, &neg);
      if (!e || w > (uint64_t)INT32_MAX + (uint64_t)neg) return NULL;
      *(int32_t *)(void *)at = (int32_t)signed_of(w, neg);
      return e;
    case TFQ_INT64:
      e = vec_number(p, end, 0, &w, &nf, &neg);
      if (!e || w > (uint64_t)INT64_MAX + (uint64_t)neg) return NULL;
      *(int64_t *)(void *)at = signed_of(w, neg);
      return e;
    default: return NULL;
  }
}

/* fast_field() at the AVX2 level: the vector scan where 16 bytes may be read and it decides, the
 * scalar parsers otherwise (they decide a number the scan refused the same way). */
__attribute__((target("avx2"))) static inline const char *vec_field(tfq_dtype dtype, const char *p,
                                                                    const char *end,
                                                                    const char *lim, char *at) {
  const char *e;
  if (lim - p >= 16 && (e = vec_number_at(dtype, p, end, at))) return e;
  return fast_field(dtype, p, end, lim, at);
}
#endif

#if TFQ__CSV_X86
void tfq__fused_stop_table(tfq__fused_ctx *c) {
  unsigned char t[16];
  memset(t, 0x80, sizeof t);
  const unsigned char stops[4] = {c->delim, '\n', '\r', c->q ? '"' : c->delim};
  int ok = 1;
  for (int k = 0; k < 4; k++) {
    const unsigned char b = stops[k];
    if (b >= 0x80 || (t[b & 15] != 0x80 && t[b & 15] != b)) ok = 0;
    t[b & 15] = b;
  }
  memcpy(&c->stop_tbl, t, sizeof t);
  c->stop_nib = ok;
}

/* tfq__csv_stop() at the AVX2 level when c->stop_nib: the first stop byte in [p, end) or NULL
 * (loads may read up to lim).  A byte b < 0x80 gives stop_tbl[b & 15], equal to b only for a
 * stop byte; a byte >= 0x80 gives 0 (pshufb), equal to nothing. */
__attribute__((target("avx2"))) static inline const char *nibble_stop(const tfq__fused_ctx *c,
                                                                      const char *p,
                                                                      const char *end,
                                                                      const char *lim) {
  const __m128i tbl = c->stop_tbl;
  while (lim - p >= 16) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    const unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_shuffle_epi8(tbl, v), v));
    if (m) {
      const char *x = p + __builtin_ctz(m);
      return x < end ? x : NULL;
    }
    p += 16;
    if (p >= end) return NULL;
  }
  for (; p < end; p++) {
    const unsigned char ch = (unsigned char)*p;
    if (ch == c->delim || ch == '\n' || ch == '\r' || (c->q && ch == '"')) return p;
  }
  return NULL;
}
#endif

/* Decodes record i = [rec, end) (bytes up to lim may be read); returns 1 if done, 0 to let the
 * generic path redo it. */
static inline __attribute__((always_inline)) int fused_row(tfq__fused_ctx *c, const char *rec,
                                                           size_t len, const char *lim, size_t i,
                                                           const int vec) {
  const char *p = rec, *end = rec + len;
  const unsigned char delim = c->delim;
  const size_t ncol = c->ncol;
  int begun = 0;
  if (len == 0) return 0;
  for (size_t f = 0; f < ncol; f++) {
    const tfq__csv_default *d = &c->defs[f];
    char *at = c->data[f] + i * c->stride[f];
    const char *e;
    if (p == end || (unsigned char)*p == delim) { /* empty: the default */
      if (d->required) return 0;
      e = p;
      fused_default(c, d, f, at);
    } else if (c->q && *p == '"') {
      tfq__span sp;
      const char *cq = plain_quoted(p, end);
      if (cq && (cq + 1 == end || (unsigned char)cq[1] == delim)) { /* its bytes as they are */
        sp.p = p + 1;
        sp.len = (size_t)(cq - p - 1);
        e = cq + 1;
      } else {
        if (!c->lc) return 0;
        if (!begun) {
          if (!tfq__lcsv_begin(c->lc, len)) return 0;
          begun = 1;
        }
        if (tfq__lcsv_quoted(c->lc, p, end, &sp, &e) != TFQ__TOK_OK) return 0;
      }
      if (sp.len == 0 || is_na(c, sp.p, sp.len)) {
        if (d->required) return 0;
        fused_default(c, d, f, at);
      } else if (d->dtype == TFQ_STRING) {
        c->strs[f] = sp;
      } else if (!fused_convert(d, at, &sp)) {
        return 0;
      }
    } else {
      if (d->dtype != TFQ_STRING) {
#if TFQ__CSV_X86
        e = vec ? vec_field(d->dtype, p, end, lim, at) : fast_field(d->dtype, p, end, lim, at);
#else
        e = fast_field(d->dtype, p, end, lim, at);
#endif
      } else if ((e = field_end(c->simd, p, end, lim, delim, c->q))) {
        c->strs[f].p = p;
        c->strs[f].len = (size_t)(e - p);
      }
      if (!e || (e != end && (unsigned char)*e != delim)) return 0;
      if (c->na_len && is_na(c, p, (size_t)(e - p))) {
        if (d->required) return 0;
        fused_default(c, d, f, at);
      }
    }
    /* e is at the delimiter or the end */
    if (f + 1 < ncol) {
      if (e == end) return 0; /* too few fields */
      p = e + 1;
    } else if (e != end) {
      return 0; /* more fields */
    }
  }
  for (size_t k = 0; k < c->nscols; k++) {
    size_t f = c->scols[k];
    if (tfq__tensor_put_string_at(c->sten[f], (tfq__str *)(void *)(c->data[f] + i * c->stride[f]),
                                  c->strs[f].p, c->strs[f].len))
      return 0; /* out of memory: the generic path reports it */
  }
  return 1;
}

/* Record i of kind-3 lines (src->kind 3): the line at rec, cut where its fields end, so that the
 * lines need no scan of their own.  Every line of [rec, end) ends with '\n' (end[-1] is '\n').
 * Decodes the line as fused_row() decodes it without its "\n" or "\r\n" and returns the start of
 * the next line; NULL when it cannot decide alone (anything fused_row() would refuse, an empty
 * line, a quoted field with '""' or CR/LF inside, a '\r' that does not end the line): decode()
 * then cuts the line and redoes the whole record the usual way.  Writes what fused_row() writes. */
static inline __attribute__((always_inline)) const char *fused_open(tfq__fused_ctx *c,
                                                                    const char *rec,
                                                                    const char *end, size_t i,
                                                                    const int vec) {
  const char *p = rec, *next = NULL;
  const unsigned char delim = c->delim;
  const size_t ncol = c->ncol;
  /* the string fields go straight to their columns as views of the buffer; the closing loop
   * (copies, defaults, quoted fields) runs only when one is not such a view */
  int copy = !c->view_lo;
  if (*p == '\n' || *p == '\r') return NULL; /* an empty line: fused_row() refuses it too */
  for (size_t f = 0; f < ncol; f++) {
    const tfq__fcol *col = &c->cols[f];
    char *at = col->base + i * col->stride;
    const char *e;
#if TFQ__CSV_X86
    if (vec && col->dtype != TFQ_STRING && end - p >= 16 &&
        (e = vec_number_at(col->dtype, p, end, at))) {
      if (c->na_len && is_na(c, p, (size_t)(e - p))) {
        if (col->required) return NULL;
        fused_default(c, &c->defs[f], f, at);
      }
      goto field_end;
    }
#endif
    const tfq__csv_default *d = &c->defs[f];
    const unsigned char ch = (unsigned char)*p; /* p < end: end[-1] is '\n', never a delimiter */
    if (ch == delim || ch == '\n') {            /* empty: the default */
      if (d->required) return NULL;
      e = p;
      fused_default(c, d, f, at);
      copy |= d->dtype == TFQ_STRING;
    } else if (ch == '\r') {
      return NULL;
    } else if (c->q && ch == '"') { /* a quoted field with nothing to unescape, as fused_row() */
      const char *cq = plain_quoted(p, end);
      if (!cq) return NULL; /* '""', CR/LF inside: the usual path */
      const tfq__span sp = {p + 1, (size_t)(cq - p - 1)};
      e = cq + 1; /* < end: end[-1] is '\n', not a quote */
      copy = 1;
      if (sp.len == 0 || is_na(c, sp.p, sp.len)) {
        if (d->required) return NULL;
        fused_default(c, d, f, at);
      } else if (d->dtype == TFQ_STRING) {
        c->strs[f] = sp;
      } else if (!fused_convert(d, at, &sp)) {
        return NULL;
      }
    } else {
      if (d->dtype != TFQ_STRING) {
        e = fast_field(d->dtype, p, end, end, at); /* (at the AVX2 level the scan ran above) */
      } else if ((e =
#if TFQ__CSV_X86
                      vec && c->stop_nib ? nibble_stop(c, p, end, end) :
#endif
                                         tfq__csv_stop(c->simd, p, end, end, delim, c->q))) {
        c->strs[f].p = p;
        c->strs[f].len = (size_t)(e - p);
        tfq__str *sv = (tfq__str *)(void *)at;
        sv->p = p;
        sv->len = (size_t)(e - p);
      }
      if (!e || e == end) return NULL;
      if (c->na_len && is_na(c, p, (size_t)(e - p))) {
        if (d->required) return NULL;
        fused_default(c, d, f, at);
        copy |= d->dtype == TFQ_STRING;
      }
    }
#if TFQ__CSV_X86
  field_end:
#endif
    /* e is at the field's end: a delimiter goes on to the next field, "\n" or "\r\n" ends the
     * line, anything else is for the usual path */
    if ((unsigned char)*e == delim) {
      if (f + 1 == ncol) return NULL; /* more fields */
      p = e + 1;
    } else if (f + 1 < ncol) {
      return NULL; /* too few fields, or not a number */
    } else if (*e == '\n') {
      next = e + 1;
    } else if (*e == '\r' && end - e >= 2 && e[1] == '\n') {
      next = e + 2;
    } else {
      return NULL;
    }
  }
  for (size_t k = 0; copy && k < c->nscols; k++) {
    size_t f = c->scols[k];
    tfq__str *sv = (tfq__str *)(void *)(c->cols[f].base + i * c->cols[f].stride);
    const uintptr_t sp = (uintptr_t)c->strs[f].p;
    if (sp >= (uintptr_t)c->view_lo && sp < (uintptr_t)c->view_hi) { /* a field, not a default */
      sv->p = c->strs[f].p;
      sv->len = c->strs[f].len;
    } else if (tfq__tensor_put_string_at(c->sten[f], sv, c->strs[f].p, c->strs[f].len)) {
      return NULL; /* out of memory: the usual path reports it */
    }
  }
  return next;
}

/* Records i, i+1, ... (fewer than n) of kind-3 lines from *cur by fused_open(), until one it
 * cannot decide or the end: returns the index of the first record not taken, *cur its line. */
static inline __attribute__((always_inline)) size_t fused_run(tfq__fused_ctx *c, const char **cur,
                                                              const char *end, size_t i, size_t n,
                                                              const int vec) {
  const char *p = *cur;
  for (; i < n && p != end; i++) {
    const char *next = fused_open(c, p, end, i, vec);
    if (!next) break;
    p = next;
  }
  *cur = p;
  return i;
}

size_t tfq__fused_run_plain(tfq__fused_ctx *c, const char **cur, const char *end, size_t i,
                            size_t n) {
  return fused_run(c, cur, end, i, n, 0);
}
int tfq__fused_row_plain(tfq__fused_ctx *c, const char *rec, size_t len, const char *lim,
                         size_t i) {
  return fused_row(c, rec, len, lim, i, 0);
}
#if TFQ__CSV_X86
__attribute__((target("avx2"))) size_t tfq__fused_run_avx2(tfq__fused_ctx *c, const char **cur,
                                                           const char *end, size_t i, size_t n) {
  return fused_run(c, cur, end, i, n, 1);
}
__attribute__((target("avx2"))) int tfq__fused_row_avx2(tfq__fused_ctx *c, const char *rec,
                                                        size_t len, const char *lim, size_t i) {
  return fused_row(c, rec, len, lim, i, 1);
}
#endif
