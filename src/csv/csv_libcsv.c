/* The libcsv tokenizer for quoted fields.  This is the only file of tfq that includes <csv.h>
 * (Debian's libcsv 3.0.3).  Two entry points: tfq__lcsv_quoted parses one field that starts with
 * '"' (the fast paths hand libcsv each quoted field and split the unquoted ones themselves), and
 * tfq__lcsv_record parses a whole record (the reference path the differential tests compare to).
 *
 * The parser is set up so that it does what TensorFlow's DecodeCSV does:
 *   - CSV_STRICT | CSV_STRICT_FINI: a quote inside an unquoted field, a quoted field followed by
 *     anything but the delimiter, and an unterminated quoted field are errors;
 *   - a space function that says "no" (libcsv would trim spaces around unquoted fields); one
 *     record is parsed per csv_parse/csv_fini (TF's record boundaries come from the caller), so
 *     blank rows are never dropped;
 *   - '\n' and '\r' are not given to libcsv blindly: the record is fed in segments split at those
 *     bytes, and at each one the parser state decides, as TF does: at a field start the byte is
 *     skipped, inside a quoted field it is data, inside an unquoted field it is the error
 *     "Unquoted fields cannot have quotes/CRLFs inside", and right after a closing quote it is
 *     "Quote inside a string has to be escaped by another quote";
 *   - the error code is read with csv_error() before csv_fini() (which resets it), and what fini
 *     emits after an error is ignored;
 *   - TF adds a trailing empty field only when the record's last byte is the delimiter, while
 *     csv_fini submits one whenever a field was expected: the wrapper keeps TF's rule;
 *   - libcsv's buffer is allocated with tfq_realloc and released with tfq_free. */
#include <csv.h>
#include <string.h>

#include "csv_internal.h"
#include "csv_simd.h"

/* libcsv 3.0.3's parser states (libcsv.c; struct csv_parser.pstate is public). */
enum { LCSV_ROW_NOT_BEGUN = 0, LCSV_FIELD_NOT_BEGUN = 1, LCSV_FIELD_BEGUN = 2, LCSV_MIGHT_END = 3 };

struct tfq__lcsv {
  struct csv_parser p;
  unsigned char delim;
  int simd; /* the scan level (csv_simd.h), read when the tokenizer is made */
  /* per record */
  const tfq__csv_sel *sel;
  size_t parsed, si, kept, cap;
  tfq__span *spans; /* offsets into buf until the record ends */
  char *buf;
  size_t len, bufcap;
  int done, ignore, oom;
  /* one-field mode (tfq__lcsv_quoted): the field's bytes are copied to buf + len, which was
   * reserved for the whole record by tfq__lcsv_begin, so spans point straight into buf */
  int one, got;
  tfq__span field;
};

static int say_no(unsigned char c) {
  (void)c;
  return 0;
}

static void *lcsv_realloc(void *p, size_t n) { return tfq_realloc(p, n); }
static void lcsv_free(void *p) { tfq_free(p); }

static int setup(tfq__lcsv *t) {
  if (csv_init(&t->p, CSV_STRICT | CSV_STRICT_FINI) != 0) return 0;
  csv_set_realloc_func(&t->p, lcsv_realloc);
  csv_set_free_func(&t->p, lcsv_free);
  csv_set_delim(&t->p, t->delim);
  csv_set_quote(&t->p, '"');
  csv_set_space_func(&t->p, say_no);
  /* The default terminator test (CR, LF) is kept: those bytes only ever reach libcsv inside a
   * quoted field, where libcsv treats them as data, and the default test is inlined. */
  csv_set_term_func(&t->p, NULL);
  return 1;
}

tfq__lcsv *tfq__lcsv_new(unsigned char delim) {
  tfq__lcsv *t = tfq_malloc(sizeof *t);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->delim = delim;
  t->simd = tfq__csv_simd();
  if (!setup(t)) {
    tfq_free(t);
    return NULL;
  }
  return t;
}

void tfq__lcsv_free(tfq__lcsv *t) {
  if (!t) return;
  csv_free(&t->p);
  tfq_free(t->buf);
  tfq_free(t);
}

static void on_field(void *s, size_t n, void *data) {
  tfq__lcsv *t = data;
  if (t->done || t->ignore || t->oom) return;
  if (t->one) { /* n <= the bytes fed for this field, so buf has room (tfq__lcsv_begin) */
    char *dst = t->buf + t->len;
    if (n) memcpy(dst, s, n);
    t->len += n;
    t->field.p = dst;
    t->field.len = n;
    t->got = 1;
    return;
  }
  size_t idx = t->parsed++;
  if (t->sel->cols && (uint64_t)t->sel->cols[t->si] != idx) return;
  if (t->kept < t->cap) {
    if (t->len + n > t->bufcap) {
      size_t nc = t->bufcap ? t->bufcap : 256;
      while (nc < t->len + n) nc *= 2;
      char *nb = tfq_realloc(t->buf, nc);
      if (!nb) {
        t->oom = 1;
        return;
      }
      t->buf = nb;
      t->bufcap = nc;
    }
    if (n) memcpy(t->buf + t->len, s, n);
    t->spans[t->kept].p = (const char *)(uintptr_t)t->len;
    t->spans[t->kept].len = n;
    t->len += n;
  }
  t->kept++;
  if (t->sel->cols && ++t->si == t->sel->n) t->done = 1;
}

static void on_row(int c, void *data) {
  (void)c;
  (void)data;
}

/* Brings the parser back to the start state, whatever happened. */
static int reset(tfq__lcsv *t) {
  t->ignore = 1;
  if (csv_fini(&t->p, on_field, on_row, t) != 0) {
    /* An unterminated quote under CSV_STRICT_FINI leaves the state as it was. */
    csv_free(&t->p);
    if (!setup(t)) return 0;
  }
  return 1;
}

/* Feeds [s, s+n); returns TFQ__TOK_OK or an error (errors after the last selected field are
 * TF's "stop scanning" and do not count). */
static int feed(tfq__lcsv *t, const char *s, size_t n) {
  if (n == 0 || t->done) return TFQ__TOK_OK;
  size_t got = csv_parse(&t->p, s, n, on_field, on_row, t);
  if (t->oom) return TFQ__TOK_OOM;
  if (got < n && !t->done) {
    int err = csv_error(&t->p); /* read before csv_fini resets it */
    if (err == CSV_EPARSE)
      return t->p.pstate == LCSV_MIGHT_END ? TFQ__TOK_QUOTE_INSIDE : TFQ__TOK_UNQUOTED;
    return TFQ__TOK_OOM; /* CSV_ENOMEM, CSV_ETOOBIG */
  }
  return TFQ__TOK_OK;
}

static const char *find_crlf(const char *p, const char *end) {
  for (; p < end; p++)
    if (*p == '\n' || *p == '\r') return p;
  return end;
}

int tfq__lcsv_record(tfq__lcsv *t, const char *rec, size_t len, const tfq__csv_sel *sel,
                     tfq__span *spans, size_t cap, size_t *nkept) {
  t->one = 0;
  /* One-field mode may have left the parser between two fields of an earlier record. */
  if (t->p.pstate != LCSV_ROW_NOT_BEGUN && !reset(t)) {
    *nkept = 0;
    return TFQ__TOK_OOM;
  }
  t->sel = sel;
  t->parsed = t->si = t->kept = t->len = 0;
  t->spans = spans;
  t->cap = cap;
  t->done = t->ignore = t->oom = 0;
  int r = TFQ__TOK_OK;
  const char *p = rec, *end = rec + len;
  while (p < end && !t->done) {
    const char *nl = find_crlf(p, end);
    if ((r = feed(t, p, (size_t)(nl - p))) != TFQ__TOK_OK) goto out;
    if (nl == end || t->done) break;
    switch (t->p.pstate) {
      case LCSV_ROW_NOT_BEGUN:
      case LCSV_FIELD_NOT_BEGUN: break; /* TF skips CR/LF where a field starts */
      case LCSV_FIELD_BEGUN:
        if (!t->p.quoted) {
          r = TFQ__TOK_UNQUOTED;
          goto out;
        }
        if ((r = feed(t, nl, 1)) != TFQ__TOK_OK) goto out;
        break;
      default: r = TFQ__TOK_QUOTE_INSIDE; goto out;
    }
    p = nl + 1;
  }
  if (!t->done) {
    int st = t->p.pstate;
    if (st == LCSV_FIELD_BEGUN && t->p.quoted) {
      r = TFQ__TOK_QUOTED_END;
      goto out;
    }
    /* csv_fini submits a last field in every state but ROW_NOT_BEGUN; TF adds the empty
     * trailing field only when the last byte is the delimiter. */
    if (st == LCSV_FIELD_NOT_BEGUN && (unsigned char)rec[len - 1] != t->delim) t->ignore = 1;
    if (csv_fini(&t->p, on_field, on_row, t) != 0) {
      r = TFQ__TOK_QUOTED_END;
      goto out;
    }
    if (t->oom) r = TFQ__TOK_OOM;
    t->ignore = 0;
    goto fix;
  }
out:
  if (!reset(t) && r == TFQ__TOK_OK) r = TFQ__TOK_OOM;
fix:
  for (size_t k = 0; k < t->kept && k < cap; k++)
    spans[k].p = (t->buf ? t->buf : "") + (uintptr_t)spans[k].p;
  *nkept = t->kept;
  return r;
}

/* ---- one quoted field at a time (the fast path hands libcsv only the quoted fields) ---- */

int tfq__lcsv_begin(tfq__lcsv *t, size_t len) {
  t->len = 0;
  if (len > t->bufcap) {
    size_t nc = t->bufcap ? t->bufcap : 256;
    while (nc < len) nc *= 2;
    char *nb = tfq_realloc(t->buf, nc);
    if (!nb) return 0;
    t->buf = nb;
    t->bufcap = nc;
  }
  return 1;
}

/* Feeds [s, s+n) in one-field mode; returns TFQ__TOK_OK or the error, as feed(). */
static int feed_one(tfq__lcsv *t, const char *s, size_t n) {
  if (n == 0) return TFQ__TOK_OK;
  size_t got = csv_parse(&t->p, s, n, on_field, on_row, t);
  if (got < n) {
    if (csv_error(&t->p) == CSV_EPARSE)
      return t->p.pstate == LCSV_MIGHT_END ? TFQ__TOK_QUOTE_INSIDE : TFQ__TOK_UNQUOTED;
    return TFQ__TOK_OOM;
  }
  return TFQ__TOK_OK;
}

/* The first '"' followed by the delimiter or the end, or CR/LF, at or after x; or end. */
static inline const char *next_stop(int simd, const char *x, const char *end, unsigned char d) {
#if TFQ__CSV_X86
  const char *z;
  if (simd == TFQ__SIMD_AVX2 && (z = tfq__csv_quote_stop_avx2(&x, end, d))) return z;
  const __m128i vq = _mm_set1_epi8('"'), vn = _mm_set1_epi8('\n'), vr = _mm_set1_epi8('\r');
  while (simd >= TFQ__SIMD_SSE2 && end - x >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)x);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(v, vq), _mm_or_si128(_mm_cmpeq_epi8(v, vn), _mm_cmpeq_epi8(v, vr))));
    while (m) {
      const char *y = x + __builtin_ctz(m);
      m &= m - 1;
      if (*y != '"' || y + 1 == end || (unsigned char)y[1] == d) return y;
    }
    x += 16;
  }
#else
  (void)simd;
#endif
  for (; x < end; x++) {
    unsigned char c = (unsigned char)*x;
    if (c == '"') {
      if (x + 1 == end || (unsigned char)x[1] == d) return x;
    } else if (c == '\n' || c == '\r') {
      return x;
    }
  }
  return end;
}

int tfq__lcsv_quoted(tfq__lcsv *t, const char *p, const char *end, tfq__span *field,
                     const char **fend) {
  const unsigned char d = t->delim;
  const char *s = p, *x = p + 1;
  int r = TFQ__TOK_OK;
  t->one = 1;
  t->got = t->ignore = t->oom = t->done = 0;
  /* Stops: CR/LF (decided by the parser state, as in tfq__lcsv_record) and every '"' followed
   * by the delimiter or the end: libcsv can only complete a quoted field on the delimiter right
   * after such a quote, so after each stop either the field is complete or it goes on. */
  for (;;) {
    x = next_stop(t->simd, x, end, d);
    if (x == end) {
      if ((r = feed_one(t, s, (size_t)(end - s))) != TFQ__TOK_OK) goto fail;
      break;
    }
    if (*x == '"') {
      const char *e = x + 1 == end ? end : x + 2;
      if ((r = feed_one(t, s, (size_t)(e - s))) != TFQ__TOK_OK) goto fail;
      if (t->got) { /* completed by the delimiter at x + 1 */
        *field = t->field;
        *fend = x + 1;
        t->one = 0;
        return TFQ__TOK_OK;
      }
      if (e == end) break;
      s = x = e;
      continue;
    }
    /* CR/LF at x: data inside the quotes, an error right after a closing quote. */
    if ((r = feed_one(t, s, (size_t)(x - s))) != TFQ__TOK_OK) goto fail;
    if (t->p.pstate != LCSV_FIELD_BEGUN || !t->p.quoted) {
      r = TFQ__TOK_QUOTE_INSIDE;
      goto fail;
    }
    if ((r = feed_one(t, x, 1)) != TFQ__TOK_OK) goto fail;
    s = x = x + 1;
  }
  /* The record ends inside the field. */
  if (t->p.pstate == LCSV_FIELD_BEGUN && t->p.quoted) {
    r = TFQ__TOK_QUOTED_END;
    goto fail;
  }
  if (csv_fini(&t->p, on_field, on_row, t) != 0 || !t->got) {
    r = TFQ__TOK_QUOTED_END;
    goto fail;
  }
  *field = t->field;
  *fend = end;
  t->one = 0;
  return TFQ__TOK_OK;
fail:
  t->one = 0;
  if (!reset(t) && r == TFQ__TOK_OK) r = TFQ__TOK_OOM;
  return r;
}
