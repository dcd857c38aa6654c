/* tfq-cat's output: number formatting, the cell writers of each format, the batches (see
 * cat_output.h). */
#include "cat_output.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- number formatting (shortest round trip) ---------------------------------------------- */

/* The decimal digits (no leading or trailing zeros) and the exponent of the first digit of
 * `v` (finite, not zero): the shortest digit string that reads back exactly (float32: `f32` set,
 * through strtof; float64 through strtod), of those the nearest to v, as Python's repr and
 * numpy's Dragon4 choose.  Each length p is tried with printf's correctly rounded %.{p-1}e (the
 * nearest p-digit number) and, when that one does not read back, with its neighbour on the other
 * side of v (at a power of two the interval that reads back is lopsided). */
static int read_back(const char *s, double v, int f32) {
  return f32 ? strtof(s, NULL) == (float)v : strtod(s, NULL) == v;
}
static void shortest_digits(double v, int f32, char *dig, int *exp10) {
  char buf[64], alt[64];
  double a = fabs(v);
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, a);
    char *e = strchr(buf, 'e');
    int ex = atoi(e + 1), nd = 0;
    char d[24];
    for (char *q = buf; q < e; q++)
      if (*q != '.') d[nd++] = *q;
    d[nd] = '\0';
    int ok = f32 ? read_back(buf, a, 1) : read_back(buf, a, 0);
    if (!ok) { /* the neighbour on the other side of v */
      double near = strtod(buf, NULL);
      int up = near < a, k = nd - 1, ex2 = ex;
      char d2[24];
      memcpy(d2, d, (size_t)nd + 1);
      if (up) {
        while (k >= 0 && d2[k] == '9') d2[k--] = '0';
        if (k < 0) {
          memmove(d2 + 1, d2, (size_t)nd + 1);
          d2[0] = '1';
          d2[nd] = '\0'; /* 999 -> 1000: keep p digits, one exponent up */
          ex2++;
        } else {
          d2[k]++;
        }
      } else {
        while (k >= 0 && d2[k] == '0') d2[k--] = '9';
        if (k < 0) continue;
        d2[k]--;
        if (d2[0] == '0') { /* 1000 -> 0999: p digits one exponent down */
          memmove(d2, d2 + 1, (size_t)nd);
          d2[nd - 1] = '9';
          ex2--;
        }
      }
      snprintf(alt, sizeof alt, "%c.%se%d", d2[0], d2 + 1, ex2);
      if (!read_back(alt, a, f32)) continue;
      memcpy(d, d2, (size_t)nd + 1);
      ex = ex2;
    }
    while (nd > 1 && d[nd - 1] == '0') d[--nd] = '\0';
    memcpy(dig, d, (size_t)nd + 1);
    *exp10 = ex;
    return;
  }
  snprintf(dig, 24, "0"); /* not reached: 17 digits always read back */
  *exp10 = 0;
}

/* Writes `v` (float32: `f32` set, v holding the float exactly) in the shortest form that reads
 * back exactly (float32: the shortest digits that read back as the same float32, as numpy's
 * str gives them), laid out as Python's repr lays out a float: positional when the exponent e
 * of the first digit is -4 <= e < 16 ("50", "300.5", "0.0001", float32 "16777216", where numpy
 * would write 1.6777216e+07 and 1e-04), else scientific with a signed
 * exponent of at least two digits ("1e-05", "1.5e+16"), except that an integral value has no ".0"
 * (Python's repr writes 50.0); NaN / Infinity / -Infinity. */
static void fmt_real(char *buf, size_t cap, double v, int f32) {
  if (isnan(v)) {
    snprintf(buf, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, cap, v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  if (v == 0) {
    snprintf(buf, cap, signbit(v) ? "-0" : "0");
    return;
  }
  char d[24], out[400];
  int e, nd, n = 0;
  shortest_digits(v, f32, d, &e);
  nd = (int)strlen(d);
  if (signbit(v)) out[n++] = '-';
  if (e < -4 || e >= 16) {
    out[n++] = d[0];
    if (nd > 1) n += snprintf(out + n, sizeof out - (size_t)n, ".%s", d + 1);
    n += snprintf(out + n, sizeof out - (size_t)n, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (e < 0) {
    out[n++] = '0';
    out[n++] = '.';
    for (int k = -1; k > e; k--) out[n++] = '0';
    memcpy(out + n, d, (size_t)nd);
    n += nd;
  } else {
    for (int k = 0; k <= e || k < nd; k++) {
      if (k == e + 1) out[n++] = '.';
      out[n++] = k < nd ? d[k] : '0';
    }
  }
  out[n] = '\0';
  snprintf(buf, cap, "%s", out);
}
static void fmt_float(char *buf, size_t cap, float v) { fmt_real(buf, cap, v, 1); }
static void fmt_double(char *buf, size_t cap, double v) { fmt_real(buf, cap, v, 0); }

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 if it is not valid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return len;
}

/* Appends `s` as a JSON string: valid UTF-8 as is, each byte of what is not valid UTF-8 as the
 * lone surrogate \udcXX (XX the byte, 80..ff: Python's surrogateescape, so that
 * json.loads(line) and str.encode("utf-8", "surrogateescape") give the bytes back). */
static void json_string(sbuf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  sb_putc(b, '"');
  size_t i = 0;
  while (i < n) {
    unsigned c = u[i];
    if (c == '"' || c == '\\') {
      sb_putc(b, '\\');
      sb_putc(b, (char)c);
      i++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        default: sb_printf(b, "\\u%04x", c);
      }
      i++;
    } else if (c < 0x80) {
      sb_putc(b, (char)c);
      i++;
    } else {
      size_t l = utf8_seq(u + i, n - i);
      if (l) {
        sb_add(b, s + i, l);
        i += l;
      } else {
        sb_printf(b, "\\udc%02x", c);
        i++;
      }
    }
  }
  sb_putc(b, '"');
}

/* Appends `s` for a terminal table: printable text as is, the rest escaped (\t, \n, \xNN).
 * Returns the display width added (one column per code point). */
static size_t table_string(sbuf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t w = 0, i = 0;
  while (i < n) {
    unsigned c = u[i];
    const char *esc = c == '\\'   ? "\\\\"
                      : c == '\t' ? "\\t"
                      : c == '\n' ? "\\n"
                      : c == '\r' ? "\\r"
                                  : NULL;
    if (esc) {
      sb_puts(b, esc);
      w += 2;
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      sb_printf(b, "\\x%02x", c);
      w += 4;
      i++;
    } else if (c < 0x80) {
      sb_putc(b, (char)c);
      w++;
      i++;
    } else {
      size_t l = utf8_seq(u + i, n - i);
      if (l) {
        sb_add(b, s + i, l);
        w++;
        i += l;
      } else {
        sb_printf(b, "\\x%02x", c);
        w += 4;
        i++;
      }
    }
  }
  return w;
}

/* Appends an RFC 4180 field: quoted when it contains ',', '"', CR or LF. */
static void csv_field(sbuf *b, const char *s, size_t n) {
  int q =
      n == 0 ? 0
             : (memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n) || memchr(s, '\r', n));
  if (!q) {
    sb_add(b, s, n);
    return;
  }
  sb_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') sb_putc(b, '"');
    sb_putc(b, s[i]);
  }
  sb_putc(b, '"');
}

/* ---- batches ---------------------------------------------------------------------------------
 */

/* Maps a reader key "<path>:<n>" to what the user named the file. */
void display_key(const app *a, const char *k, size_t n, sbuf *out) {
  if (a->stdin_path) {
    size_t pl = strlen(a->stdin_path);
    if (n > pl && memcmp(k, a->stdin_path, pl) == 0 && k[pl] == ':') {
      sb_putc(out, '-');
      sb_add(out, k + pl, n - pl);
      return;
    }
  }
  sb_add(out, k, n);
}

/* A cell writer: appends s[0..n) escaped for one output format. */
typedef void (*str_writer)(sbuf *b, const char *s, size_t n);

/* The text of the number of dtype dt at p (not necessarily aligned). */
static void fmt_scalar(tfq_dtype dt, const void *p, char *buf, size_t cap) {
  union {
    float f;
    double d;
    int32_t i32;
    int64_t i64;
  } v;
  memcpy(&v, p, tfq_dtype_size(dt) <= sizeof v ? tfq_dtype_size(dt) : sizeof v);
  switch (dt) {
    case TFQ_FLOAT: fmt_float(buf, cap, v.f); break;
    case TFQ_DOUBLE: fmt_double(buf, cap, v.d); break;
    case TFQ_INT32: snprintf(buf, cap, "%" PRId32, v.i32); break;
    case TFQ_INT64: snprintf(buf, cap, "%" PRId64, v.i64); break;
    default: snprintf(buf, cap, "?");
  }
}

/* Appends the number of dtype dt at p as its text (NaN and the infinities in double quotes when
 * `quote_special`: JSON has no such numbers). */
static void put_scalar(sbuf *o, tfq_dtype dt, const void *p, int quote_special) {
  char buf[64];
  fmt_scalar(dt, p, buf, sizeof buf);
  if (quote_special && (isalpha((unsigned char)buf[0]) || (buf[0] == '-' && buf[1] == 'I')))
    sb_printf(o, "\"%s\"", buf);
  else
    sb_puts(o, buf);
}

/* Column c of a batch as printed: its tensor (a sparse column: its values; a ragged one: its
 * rows), and for a list per record where record i's values are.  Dense columns: record i's
 * values are elements i * width .. (i + 1) * width of t (a scalar column: width 1, no list).
 * Sparse (VarLen): record i's are elements start[i] .. start[i + 1]; ragged (FixedLenSequence):
 * rows start[i] .. start[i + 1] of `rowdims`. */
typedef struct {
  const tfq_tensor *t;
  int list;      /* a list per record: printed as JSON */
  int64_t width; /* dense: elements per record */
  int rank;      /* dense list: the record's shape; ragged: a row's shape */
  const int64_t *dims;
  int ragged;       /* 1 sparse, 2 ragged */
  int64_t *start;   /* sparse and ragged: n + 1 offsets (owned) */
  int64_t rowwidth; /* ragged: elements per row */
} column;

static column get_column(const app *a, const tfq_tuple *b, size_t c, int64_t n) {
  const tfq_pipeline *p = a->p;
  size_t pc = a->col[c], slot = tfq_pipeline_column_slot(p, pc);
  column v = {tfq_tuple_get(b, slot), 0, 1, 0, NULL, 0, NULL, 1};
  if (tfq_pipeline_column_is_sparse(p, pc)) { /* indices [N, 2] (record, position), values [N] */
    const tfq_tensor *ix = tfq_tuple_get(b, slot);
    v.t = tfq_tuple_get(b, slot + 1);
    v.list = 1;
    v.ragged = 1;
    v.start = xcalloc((size_t)n + 1, sizeof *v.start);
    int64_t nv = tfq_tensor_dim(v.t, 0);
    const int64_t *idx = tfq_tensor_cdata(ix);
    for (int64_t k = 0; k < nv; k++)
      if (idx[2 * k] >= 0 && idx[2 * k] < n) v.start[idx[2 * k] + 1]++;
    for (int64_t i = 0; i < n; i++) v.start[i + 1] += v.start[i];
    return v;
  }
  if (tfq_pipeline_column_is_ragged(p, pc)) { /* rows [R, row shape], splits int64 [n + 1] */
    v.t = tfq_tuple_get(b, slot);
    const int64_t *sp = tfq_tensor_cdata(tfq_tuple_get(b, slot + 1));
    v.list = 1;
    v.ragged = 2;
    v.rank = tfq_tensor_rank(v.t) - 1;
    v.dims = tfq_tensor_dims(v.t) + 1;
    for (int j = 0; j < v.rank; j++) v.rowwidth *= v.dims[j];
    v.start = xmalloc(((size_t)n + 1) * sizeof *v.start);
    memcpy(v.start, sp, ((size_t)n + 1) * sizeof *v.start);
    return v;
  }
  v.rank = tfq_tensor_rank(v.t) - 1;
  v.dims = tfq_tensor_dims(v.t) + 1;
  v.list = v.rank > 0;
  for (int j = 0; j < v.rank; j++) v.width *= v.dims[j];
  return v;
}

static void drop_column(column *v) { free(v->start); }

/* Appends element i of numeric column t as its text (see put_scalar). */
static void put_number(sbuf *o, const tfq_tensor *t, int64_t i, int quote_special) {
  tfq_dtype dt = tfq_tensor_dtype(t);
  put_scalar(o, dt, (const char *)tfq_tensor_cdata(t) + (size_t)i * tfq_dtype_size(dt),
             quote_special);
}

/* ---- list cells (tf.train.Example: FixedLen [k], VarLen, FixedLenSequence) ----------------
 * A record's list prints as JSON in every format: nested for a shape of rank > 1, strings in
 * double quotes, NaN and the infinities quoted. */

static void put_elem(sbuf *o, const tfq_tensor *t, int64_t k) {
  if (tfq_tensor_dtype(t) == TFQ_STRING) {
    size_t len;
    const char *s = tfq_tensor_string(t, k, &len);
    json_string(o, s, len);
  } else {
    put_number(o, t, k, 1);
  }
}

static void put_nested(sbuf *o, const tfq_tensor *t, const int64_t *dims, int rank, int64_t *k) {
  sb_putc(o, '[');
  for (int64_t j = 0; j < dims[0]; j++) {
    if (j) sb_putc(o, ',');
    if (rank == 1)
      put_elem(o, t, (*k)++);
    else
      put_nested(o, t, dims + 1, rank - 1, k);
  }
  sb_putc(o, ']');
}

/* Appends record i of list column v as JSON. */
static void put_list(sbuf *o, const column *v, int64_t i) {
  int64_t shape[TFQ_MAX_RANK + 1], k;
  if (v->ragged) {
    shape[0] = v->start[i + 1] - v->start[i];
    if (v->ragged == 2 && v->rank) memcpy(shape + 1, v->dims, (size_t)v->rank * sizeof *v->dims);
    k = v->ragged == 2 ? v->start[i] * v->rowwidth : v->start[i];
    put_nested(o, v->t, shape, v->ragged == 2 ? v->rank + 1 : 1, &k);
    return;
  }
  k = i * v->width;
  put_nested(o, v->t, v->dims, v->rank, &k);
}

/* Appends element i of column t: a string through `str`, a number with put_number. */
static void put_value(sbuf *o, const tfq_tensor *t, int64_t i, str_writer str, int quote_special) {
  if (tfq_tensor_dtype(t) == TFQ_STRING) {
    size_t len;
    const char *s = tfq_tensor_string(t, i, &len);
    str(o, s, len);
  } else {
    put_number(o, t, i, quote_special);
  }
}

/* The key of record i of b (its last component) as the user named the file, in *k (emptied
 * first). */
static void key_text(const app *a, const tfq_tuple *b, int64_t i, sbuf *k) {
  size_t len;
  const tfq_tensor *t = tfq_tuple_get(b, tfq_pipeline_column_slot(a->p, a->key_col));
  const char *s = tfq_tensor_string(t, i, &len);
  sb_clear(k);
  display_key(a, s, len, k);
}

/* Appends the column names through `str`, separated by ','. */
static void put_names(const app *a, sbuf *o, str_writer str) {
  for (size_t c = 0; c < a->ncols; c++) {
    if (c) sb_putc(o, ',');
    str(o, a->names[c], strlen(a->names[c]));
  }
}

/* One JSON object a record: {"NAME":VALUE,...} in column order ("key" first with --keys). */
static void emit_jsonl(app *a, const tfq_tuple *b, int64_t n) {
  sbuf *o = &a->out, k = {0};
  column *cols = xcalloc(a->ncols ? a->ncols : 1, sizeof *cols);
  for (size_t c = 0; c < a->ncols; c++) cols[c] = get_column(a, b, c, n);
  for (int64_t i = 0; i < n; i++) {
    sb_putc(o, '{');
    if (a->o.keys) {
      key_text(a, b, i, &k);
      sb_puts(o, "\"key\":");
      json_string(o, k.p, k.n);
    }
    for (size_t c = 0; c < a->ncols; c++) {
      const column *v = &cols[c];
      if (c || a->o.keys) sb_putc(o, ',');
      json_string(o, a->names[c], strlen(a->names[c]));
      sb_putc(o, ':');
      if (v->list)
        put_list(o, v, i);
      else
        put_value(o, v->t, i, json_string, 1);
    }
    sb_puts(o, "}\n");
  }
  for (size_t c = 0; c < a->ncols; c++) drop_column(&cols[c]);
  free(cols);
  free(k.p);
}

static void emit_csv(app *a, const tfq_tuple *b, int64_t n) {
  sbuf *o = &a->out;
  if (!a->header_done) {
    a->header_done = 1;
    if (a->o.keys) sb_puts(o, "key,");
    put_names(a, o, csv_field);
    sb_putc(o, '\n');
  }
  sbuf k = {0};
  column *cols = xcalloc(a->ncols ? a->ncols : 1, sizeof *cols);
  for (size_t c = 0; c < a->ncols; c++) cols[c] = get_column(a, b, c, n);
  for (int64_t i = 0; i < n; i++) {
    if (a->o.keys) {
      key_text(a, b, i, &k);
      csv_field(o, k.p, k.n);
      sb_putc(o, ',');
    }
    for (size_t c = 0; c < a->ncols; c++) {
      const column *v = &cols[c];
      if (c) sb_putc(o, ',');
      if (v->list) { /* the JSON text of the list, as one field */
        sb_clear(&k);
        put_list(&k, v, i);
        csv_field(o, k.p, k.n);
      } else {
        put_value(o, v->t, i, csv_field, 0);
      }
    }
    sb_putc(o, '\n');
  }
  for (size_t c = 0; c < a->ncols; c++) drop_column(&cols[c]);
  free(cols);
  free(k.p);
}

/* A table column to shrink: its width and position; qsort order: wider first, then by position
 * (the first of the widest goes first). */
typedef struct {
  size_t width, col;
} text_col;
static int wider_first(const void *x, const void *y) {
  const text_col *a = x, *b = y;
  if (a->width != b->width) return a->width > b->width ? -1 : 1;
  return a->col < b->col ? -1 : a->col > b->col;
}

/* Truncates an escaped cell to `w` display columns ("..." marks the cut; right-aligned cells,
 * keys and numbers, keep their end). */
static void put_cell(sbuf *o, const char *s, size_t cw, size_t w, int right) {
  if (cw > w && right && w > 3) {
    size_t skip = cw - (w - 3), i = 0;
    while (s[i] && skip) {
      i++;
      while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
      skip--;
    }
    sb_puts(o, "...");
    sb_puts(o, s + i);
    return;
  }
  if (cw <= w) {
    if (right == 1)
      for (size_t k = cw; k < w; k++) sb_putc(o, ' ');
    sb_puts(o, s);
    if (right != 1)
      for (size_t k = cw; k < w; k++) sb_putc(o, ' ');
    return;
  }
  /* Cut after w-3 code points. */
  size_t keep = w > 3 ? w - 3 : 0, cps = 0, i = 0;
  while (s[i] && cps < keep) {
    i++;
    while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
    cps++;
  }
  sb_add(o, s, i);
  sb_puts(o, w >= 3 ? "..." : "");
}

static void emit_table(app *a, const tfq_tuple *b, int64_t n) {
  size_t ncol = a->ncols + (a->o.keys ? 1 : 0);
  char ***cells = xcalloc(ncol, sizeof *cells);
  size_t **cw = xcalloc(ncol, sizeof *cw);
  size_t *width = xcalloc(ncol, sizeof *width);
  int *right = xcalloc(ncol, sizeof *right);
  const char **head = xcalloc(ncol, sizeof *head);
  sbuf k = {0};
  for (size_t c = 0; c < ncol; c++) {
    int is_key = a->o.keys && c == 0;
    size_t fc = a->o.keys ? c - 1 : c;
    column v = {0};
    if (!is_key) v = get_column(a, b, fc, n);
    const tfq_tensor *t = v.t;
    head[c] = is_key ? "key" : a->names[fc];
    sbuf hb = {0};
    width[c] = table_string(&hb, head[c], strlen(head[c]));
    free(hb.p);
    int list = !is_key && v.list;
    right[c] = is_key ? 2 : !list && tfq_tensor_dtype(t) != TFQ_STRING; /* 2: key, left */
    cells[c] = xcalloc((size_t)n, sizeof **cells);
    cw[c] = xcalloc((size_t)n, sizeof **cw);
    for (int64_t i = 0; i < n; i++) {
      sbuf s = {0};
      if (is_key) {
        key_text(a, b, i, &k);
        cw[c][i] = table_string(&s, k.p, k.n);
      } else if (list) { /* JSON: printable UTF-8, one column per code point */
        put_list(&s, &v, i);
        for (size_t j = 0; j < s.n; j++) cw[c][i] += ((unsigned char)s.p[j] & 0xC0) != 0x80;
      } else if (tfq_tensor_dtype(t) == TFQ_STRING) {
        size_t len;
        const char *sv = tfq_tensor_string(t, i, &len);
        cw[c][i] = table_string(&s, sv, len);
      } else {
        put_number(&s, t, i, 0);
        cw[c][i] = s.n;
      }
      if (!s.p) sb_add(&s, "", 0);
      cells[c][i] = s.p;
      if (cw[c][i] > width[c]) width[c] = cw[c][i];
    }
    drop_column(&v);
  }
  /* Fit 80 columns: shrink the widest text column (the first of the widest) while the table is
   * wider, to no less than 12.  A shrunk column is either down to 12 or the table fits, so the
   * columns shrink in the order of their widths: sorted once, not searched for each. */
  size_t total = 0, ntext = 0;
  text_col *order = xcalloc(ncol, sizeof *order);
  for (size_t c = 0; c < ncol; c++) {
    total += width[c] + (c ? 2 : 0);
    if (right[c] != 1 && width[c] > 12) order[ntext++] = (text_col){width[c], c};
  }
  qsort(order, ntext, sizeof *order, wider_first);
  for (size_t j = 0; j < ntext && total > 80; j++) {
    size_t c = order[j].col, over = total - 80;
    size_t w = width[c] > over + 12 ? width[c] - over : 12;
    total -= width[c] - w;
    width[c] = w;
  }
  free(order);
  sbuf *o = &a->out;
  if (a->batches_out) sb_putc(o, '\n');
  sb_printf(o, "batch %" PRId64 " (%" PRId64 " record%s)\n", a->batches_out, n, n == 1 ? "" : "s");
  for (size_t c = 0; c < ncol; c++) {
    if (c) sb_puts(o, "  ");
    sbuf hb = {0};
    size_t hw = table_string(&hb, head[c], strlen(head[c]));
    put_cell(o, hb.p ? hb.p : "", hw, width[c], right[c]);
    free(hb.p);
  }
  while (o->n && o->p[o->n - 1] == ' ') o->n--;
  sb_putc(o, '\n');
  for (int64_t i = 0; i < n; i++) {
    for (size_t c = 0; c < ncol; c++) {
      if (c) sb_puts(o, "  ");
      put_cell(o, cells[c][i], cw[c][i], width[c], right[c]);
    }
    while (o->n && o->p[o->n - 1] == ' ') o->n--;
    sb_putc(o, '\n');
  }
  for (size_t c = 0; c < ncol; c++) {
    for (int64_t i = 0; i < n; i++) free(cells[c][i]);
    free(cells[c]);
    free(cw[c]);
  }
  free(cells);
  free(cw);
  free(width);
  free(right);
  free(head);
  free(k.p);
}

void emit_batch(app *a, const tfq_tuple *b, int64_t n) {
  switch (a->o.output) {
    case OUT_TABLE: emit_table(a, b, n); break;
    case OUT_JSONL: emit_jsonl(a, b, n); break;
    case OUT_CSV: emit_csv(a, b, n); break;
    case OUT_NONE: break;
  }
}

int out_flush(app *a, int force) {
  if (a->out.n && (force || a->out.n >= (1 << 16))) {
    if (write_all(STDOUT_FILENO, a->out.p, a->out.n)) {
      a->out_error = errno;
      sb_clear(&a->out);
      return -1;
    }
    sb_clear(&a->out);
  }
  return 0;
}
