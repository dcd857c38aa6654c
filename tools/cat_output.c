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

/* Writes `v` in the shortest %.{1..9}g (float32: `f32` set, v holding the float exactly) or
 * %.{1..17}g (float64) form that parses back to the same value; NaN / Infinity / -Infinity. */
static void fmt_real(char *buf, size_t cap, double v, int f32) {
  if (isnan(v)) {
    snprintf(buf, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, cap, v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  for (int p = 1; p <= (f32 ? 9 : 17); p++) {
    snprintf(buf, cap, "%.*g", p, v);
    if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) return;
  }
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

/* Appends `s` as a JSON string: valid UTF-8 as is, other bytes as \u00XX. */
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
        sb_printf(b, "\\u%04x", c);
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

/* A cell writer: appends s[0..n) escaped for one output format. */
typedef void (*str_writer)(sbuf *b, const char *s, size_t n);

/* The text of element i of a numeric column. */
static void fmt_value(const tfq_tensor *t, int64_t i, char *buf, size_t cap) {
  const void *d = tfq_tensor_cdata(t);
  switch (tfq_tensor_dtype(t)) {
    case TFQ_FLOAT: fmt_float(buf, cap, ((const float *)d)[i]); break;
    case TFQ_DOUBLE: fmt_double(buf, cap, ((const double *)d)[i]); break;
    case TFQ_INT32: snprintf(buf, cap, "%" PRId32, ((const int32_t *)d)[i]); break;
    case TFQ_INT64: snprintf(buf, cap, "%" PRId64, ((const int64_t *)d)[i]); break;
    default: snprintf(buf, cap, "?");
  }
}

/* Appends element i of numeric column t as its text (NaN and the infinities in double quotes
 * when `quote_special`: JSON has no such numbers). */
static void put_number(sbuf *o, const tfq_tensor *t, int64_t i, int quote_special) {
  char buf[64];
  fmt_value(t, i, buf, sizeof buf);
  if (quote_special && (isalpha((unsigned char)buf[0]) || (buf[0] == '-' && buf[1] == 'I')))
    sb_printf(o, "\"%s\"", buf);
  else
    sb_puts(o, buf);
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

/* The key of record i of b (its last column) as the user named the file, in *k (emptied first). */
static void key_text(const app *a, const tfq_tuple *b, int64_t i, sbuf *k) {
  size_t len;
  const char *s = tfq_tensor_string(tfq_tuple_get(b, a->nfields), i, &len);
  sb_clear(k);
  display_key(a, s, len, k);
}

/* Appends the column names through `str`, separated by ','. */
static void put_names(const app *a, sbuf *o, str_writer str) {
  for (size_t c = 0; c < a->nfields; c++) {
    if (c) sb_putc(o, ',');
    str(o, a->names[c], strlen(a->names[c]));
  }
}

static void emit_jsonl(app *a, const tfq_tuple *b, int64_t n) {
  sbuf *o = &a->out;
  sb_printf(o, "{\"batch\":%" PRId64 ",\"size\":%" PRId64 ",\"columns\":[", a->batches_out, n);
  for (size_t c = 0; c < a->nfields; c++) {
    const tfq_tensor *t = tfq_tuple_get(b, c);
    sb_puts(o, c ? ",[" : "[");
    for (int64_t i = 0; i < n; i++) {
      if (i) sb_putc(o, ',');
      put_value(o, t, i, json_string, 1);
    }
    sb_putc(o, ']');
  }
  sb_putc(o, ']');
  if (a->o.keys) {
    sb_puts(o, ",\"keys\":[");
    sbuf k = {0};
    for (int64_t i = 0; i < n; i++) {
      key_text(a, b, i, &k);
      if (i) sb_putc(o, ',');
      json_string(o, k.p, k.n);
    }
    free(k.p);
    sb_putc(o, ']');
  }
  if (a->o.skip_header_lines > 0 && a->fmt == FMT_CSV) {
    sb_puts(o, ",\"names\":[");
    put_names(a, o, json_string);
    sb_putc(o, ']');
  }
  sb_puts(o, "}\n");
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
  for (int64_t i = 0; i < n; i++) {
    if (a->o.keys) {
      key_text(a, b, i, &k);
      csv_field(o, k.p, k.n);
      sb_putc(o, ',');
    }
    for (size_t c = 0; c < a->nfields; c++) {
      if (c) sb_putc(o, ',');
      put_value(o, tfq_tuple_get(b, c), i, csv_field, 0);
    }
    sb_putc(o, '\n');
  }
  free(k.p);
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
  size_t ncol = a->nfields + (a->o.keys ? 1 : 0);
  char ***cells = xcalloc(ncol, sizeof *cells);
  size_t **cw = xcalloc(ncol, sizeof *cw);
  size_t *width = xcalloc(ncol, sizeof *width);
  int *right = xcalloc(ncol, sizeof *right);
  const char **head = xcalloc(ncol, sizeof *head);
  sbuf k = {0};
  for (size_t c = 0; c < ncol; c++) {
    int is_key = a->o.keys && c == 0;
    size_t fc = a->o.keys ? c - 1 : c;
    const tfq_tensor *t = tfq_tuple_get(b, is_key ? a->nfields : fc);
    head[c] = is_key ? "key" : a->names[fc];
    sbuf hb = {0};
    width[c] = table_string(&hb, head[c], strlen(head[c]));
    free(hb.p);
    right[c] = is_key ? 2 : tfq_tensor_dtype(t) != TFQ_STRING; /* 2: key, left aligned */
    cells[c] = xcalloc((size_t)n, sizeof **cells);
    cw[c] = xcalloc((size_t)n, sizeof **cw);
    for (int64_t i = 0; i < n; i++) {
      sbuf s = {0};
      if (is_key) {
        key_text(a, b, i, &k);
        cw[c][i] = table_string(&s, k.p, k.n);
      } else if (tfq_tensor_dtype(t) == TFQ_STRING) {
        size_t len;
        const char *v = tfq_tensor_string(t, i, &len);
        cw[c][i] = table_string(&s, v, len);
      } else {
        put_number(&s, t, i, 0);
        cw[c][i] = s.n;
      }
      if (!s.p) sb_add(&s, "", 0);
      cells[c][i] = s.p;
      if (cw[c][i] > width[c]) width[c] = cw[c][i];
    }
  }
  /* Fit 80 columns: shrink the widest text column while it is wider than 12. */
  for (;;) {
    size_t total = 0, widest = SIZE_MAX;
    for (size_t c = 0; c < ncol; c++) {
      total += width[c] + (c ? 2 : 0);
      if (right[c] != 1 && width[c] > 12 && (widest == SIZE_MAX || width[c] > width[widest]))
        widest = c;
    }
    if (total <= 80 || widest == SIZE_MAX) break;
    size_t over = total - 80;
    width[widest] = width[widest] - over < 12 ? 12 : width[widest] - over;
  }
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
