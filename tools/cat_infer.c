/* tfq-cat's columns: CSV splitting (for the header and the field count), type inference, the
 * decode_csv options (see cat_infer.h). */
#include "cat_infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TFQ_EXPERIMENTAL /* decode_csv's number parsers, for the probe */
#include <tfq/experimental.h>

#include "cat_example.h"

/* Do fields a and b print the same -d entry? */
static int same_entry(const field_spec *a, const field_spec *b) {
  if (a->dtype != b->dtype || a->required != b->required) return 0;
  return a->required || (a->deflen == b->deflen && memcmp(a->def, b->def, a->deflen) == 0);
}

/* Formats a spec back into -d syntax; `repeat`: runs of 3 or more identical entries as
 * N*TYPE[:DEFAULT] (a 20,000-column line then fits in one argument). */
static void spec_to_string(sbuf *b, const field_spec *fs, size_t n, int repeat) {
  for (size_t i = 0, run; i < n; i += run) {
    for (run = 1; repeat && i + run < n && same_entry(&fs[i], &fs[i + run]); run++)
      ;
    if (run < 3) run = 1;
    if (i) sb_putc(b, ',');
    if (run > 1) sb_printf(b, "%zu*", run);
    sb_puts(b, spec_type_name(fs[i].dtype));
    if (fs[i].required) continue;
    sb_putc(b, ':');
    if (fs[i].dtype == TFQ_STRING) {
      int q = memchr(fs[i].def, ',', fs[i].deflen) || memchr(fs[i].def, '"', fs[i].deflen);
      if (q) {
        sb_putc(b, '"');
        for (size_t k = 0; k < fs[i].deflen; k++) {
          if (fs[i].def[k] == '"') sb_putc(b, '"');
          sb_putc(b, fs[i].def[k]);
        }
        sb_putc(b, '"');
      } else {
        sb_add(b, fs[i].def, fs[i].deflen);
      }
    } else {
      sb_puts(b, fs[i].def);
    }
  }
}

/* Splits one record with decode_csv's field rules into fields (unquoted). */
static size_t split_record(const char *s, size_t n, char delim, int quote, sbuf **fields_out) {
  size_t nf = 0, cap = 8;
  sbuf *fs = xcalloc(cap, sizeof *fs);
  size_t i = 0;
  if (n == 0) {
    *fields_out = fs;
    return 0;
  }
  for (;;) {
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    if (nf == cap) {
      cap *= 2;
      fs = xrealloc(fs, cap * sizeof *fs);
      memset(fs + nf, 0, (cap - nf) * sizeof *fs);
    }
    sbuf *f = &fs[nf++];
    sb_add(f, "", 0);
    if (quote && i < n && s[i] == '"') {
      i++;
      while (i < n) {
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            sb_putc(f, '"');
            i += 2;
            continue;
          }
          i++;
          break;
        }
        sb_putc(f, s[i++]);
      }
      while (i < n && s[i] != delim) i++;
    } else {
      size_t st = i;
      while (i < n && s[i] != delim) i++;
      sb_add(f, s + st, i - st);
    }
    if (i >= n) break;
    i++; /* the delimiter: a field follows, possibly empty */
    if (i == n) {
      if (nf == cap) {
        cap++;
        fs = xrealloc(fs, cap * sizeof *fs);
      }
      memset(&fs[nf], 0, sizeof fs[nf]);
      sb_add(&fs[nf++], "", 0);
      break;
    }
  }
  *fields_out = fs;
  return nf;
}

/* The number of fields split_record finds in s[0..n), without copying them. */
static size_t count_fields(const char *s, size_t n, char delim, int quote) {
  size_t nf = 0, i = 0;
  if (n == 0) return 0;
  for (;;) {
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    nf++;
    if (quote && i < n && s[i] == '"') {
      for (i++; i < n; i++)
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            i++;
            continue;
          }
          i++;
          break;
        }
    }
    const char *d = i < n ? memchr(s + i, delim, n - i) : NULL;
    if (!d) break;
    i = (size_t)(d - s) + 1;
    if (i == n) return nf + 1; /* a trailing delimiter: an empty last field */
  }
  return nf;
}

/* The records the sample holds for rows of `nf` fields: INFER_VALUES values, but at least
 * INFER_MIN_ROWS and at most INFER_ROWS records. */
static int64_t sample_rows(size_t nf) {
  size_t r = nf ? INFER_VALUES / nf : INFER_ROWS;
  return r < INFER_MIN_ROWS ? INFER_MIN_ROWS : r > INFER_ROWS ? INFER_ROWS : (int64_t)r;
}

static void free_fields(sbuf *fs, size_t n) {
  for (size_t i = 0; i < n; i++) free(fs[i].p);
  free(fs);
}

static tfq_code build_csv_options(const app *a, const field_spec *fs, size_t n,
                                  tfq_csv_options **out, tfq_status *st) {
  tfq_csv_options *o;
  tfq_code c = tfq_csv_options_new(&o, st);
  if (c) return c;
  char d = a->o.field_delim;
  if ((c = tfq_csv_options_set_field_delim(o, &d, 1, st))) goto fail;
  tfq_csv_options_set_use_quote_delim(o, !a->o.no_quote_delim);
  if (a->o.na_value &&
      (c = tfq_csv_options_set_na_value(o, a->o.na_value, strlen(a->o.na_value), st)))
    goto fail;
  if (a->o.nselect && (c = tfq_csv_options_set_select_cols(o, a->o.select_cols, a->o.nselect, st)))
    goto fail;
  for (size_t i = 0; i < n; i++) {
    const field_spec *f = &fs[i];
    if (f->required)
      c = tfq_csv_options_add_required(o, f->dtype, st);
    else if (f->dtype == TFQ_FLOAT)
      c = tfq_csv_options_add_default_float(o, f->v.f, st);
    else if (f->dtype == TFQ_DOUBLE)
      c = tfq_csv_options_add_default_double(o, f->v.d, st);
    else if (f->dtype == TFQ_INT32)
      c = tfq_csv_options_add_default_int32(o, f->v.i32, st);
    else if (f->dtype == TFQ_INT64)
      c = tfq_csv_options_add_default_int64(o, f->v.i64, st);
    else
      c = tfq_csv_options_add_default_string(o, f->def, f->deflen, st);
    if (c) goto fail;
  }
  *out = o;
  return TFQ_OK;
fail:
  tfq_csv_options_free(o);
  return c;
}

/* Do all `count` values v[k][0..n[k]) parse as `dt` (int64 or float64) with decode_csv's own
 * number rules?  Each value is judged as decode_csv judges a record of one field without quoting
 * and with '\x01' as the delimiter (the probe decode_csv'd such records before): a '\n', '\r'
 * or '\x01' in it fails; the rest is the parser decode_csv applies to a field
 * (tfq/experimental.h), called directly, without a tensor per column. */
static int probe_column(tfq_dtype dt, const char *const *v, const size_t *n, size_t count) {
  for (size_t k = 0; k < count; k++) {
    if (memchr(v[k], '\x01', n[k]) || memchr(v[k], '\n', n[k]) || memchr(v[k], '\r', n[k]))
      return 0;
    int64_t i;
    double d;
    if (dt == TFQ_INT64 ? !tfq_experimental_parse_i64(v[k], n[k], &i)
                        : !tfq_experimental_parse_f64(v[k], n[k], &d))
      return 0;
  }
  return 1;
}

/* Reads the header line and up to INFER_ROWS records of the first file (a TextLine reader that
 * skips nothing and, for a standard-input prefix, ends a truncated stream silently): fewer for
 * wide rows, as many as sample_rows() of the first record's field count. */
static void read_sample(app *a, char **header, size_t *header_len, sbuf **rows, size_t *nrows) {
  const input_file *f = &a->files[0];
  const char *path = f->sample_path ? f->sample_path : f->path;
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  tfq_reader *r = NULL;
  tfq_queue *q = NULL;
  *header = NULL;
  *rows = xcalloc(INFER_ROWS, sizeof **rows);
  *nrows = 0;
  /* The header lines and the first record, then as many records as its width allows. */
  int64_t want = a->o.skip_header_lines + 1, got = 0;
  if (new_reader(a, f->comp, 1, f->sample_truncated, &r, st) ||
      unit_queue(path, strlen(path), &q, st))
    goto done;
  while (got < want) {
    tfq_tensor *keys = NULL, *values = NULL;
    tfq_code c =
        tfq_reader_read_up_to(r, q, want - got, &keys, &values, tfq_coord_cancel(a->coord), st);
    if (c) break; /* end of file, or an error the pipeline reports properly */
    int64_t k = tfq_tensor_num_elements(values);
    for (int64_t i = 0; i < k; i++, got++) {
      size_t len;
      const char *v = tfq_tensor_string(values, i, &len);
      if (got == 0 && a->o.skip_header_lines > 0) {
        *header = xstrndup(v, len);
        *header_len = len;
      } else if (got >= a->o.skip_header_lines) {
        sb_add(&(*rows)[(*nrows)++], v, len);
        if (*nrows == 1)
          want = a->o.skip_header_lines +
                 sample_rows(count_fields(v, len, a->o.field_delim, !a->o.no_quote_delim));
      }
    }
    tfq_tensor_free(keys);
    tfq_tensor_free(values);
  }
done:
  tfq_reader_free(r);
  tfq_queue_free(q);
  tfq_status_free(st);
}

/* One value of the sample: p[0..n), the field's bytes as decode_csv gives them (unquoted). */
typedef struct {
  const char *p;
  size_t n;
} sval;

/* Splits record s[0..n) as decode_csv splits a well-formed one (see csv_scan.c: '\n' and '\r'
 * skipped where a field starts; with quoting on, a field starting with '"' ends at the next
 * lone '"' and holds '""' as '"'; a trailing delimiter makes one more, empty, field) and stores
 * field sel[j] (every field, without select_cols) in out[j * stride] for j < ncols.  Fields not
 * found are left empty.  A quoted field holding '""' is unescaped into a new block appended to
 * *owned (freed by the caller); every other value points into s.  A malformed record gives some
 * values: decode_csv's verdict on the sample comes after (infer_fields). */
static void split_views(const char *s, size_t n, char delim, int quote, const int64_t *sel,
                        size_t ncols, sval *out, size_t stride, char ***owned, size_t *nowned) {
  size_t i = 0, f = 0, j = 0;
  if (n == 0) return;
  for (; j < ncols; f++) {
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    const char *vp = s + i;
    size_t vn = 0;
    int quoted = quote && i < n && s[i] == '"';
    if (quoted) {
      size_t st = ++i, esc = 0;
      for (; i < n; i++)
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            esc = 1;
            i++;
            continue;
          }
          break;
        }
      vp = s + st;
      vn = (i < n ? i : n) - st;
      if (esc) { /* '""' -> '"' */
        char *u = xmalloc(vn), *w = u;
        for (size_t k = 0; k < vn; k++) {
          *w++ = vp[k];
          if (vp[k] == '"') k++;
        }
        *owned = xrealloc(*owned, (*nowned + 1) * sizeof **owned);
        (*owned)[(*nowned)++] = u;
        vp = u;
        vn = (size_t)(w - u);
      }
    }
    const char *d = i < n ? memchr(s + i, delim, n - i) : NULL;
    if (!quoted) vn = (d ? (size_t)(d - s) : n) - i;
    if (!sel || (int64_t)f == sel[j]) out[j++ * stride] = (sval){vp, vn};
    if (!d) break;
    i = (size_t)(d - s) + 1;
    if (i == n) { /* a trailing delimiter: an empty last field */
      if (j < ncols && (!sel || (int64_t)(f + 1) == sel[j])) out[j * stride] = (sval){s + n, 0};
      break;
    }
  }
}

/* The sample as decode_csv splits it into strings (the way for a delimiter that is also the
 * quote, whose splitting split_views does not mirror): the records before the first it rejects,
 * their count returned and their values stored as split_views does.  *strs holds the values
 * (free it after them). */
static size_t decode_strings(const app *a, const char *const *recs, const size_t *lens,
                             size_t nrows, size_t ncols, sval *vals, tfq_tuple **strs) {
  field_spec *all_str = xcalloc(ncols, sizeof *all_str);
  for (size_t c = 0; c < ncols; c++) all_str[c] = (field_spec){.dtype = TFQ_STRING, .def = ""};
  tfq_csv_options *o;
  if (build_csv_options(a, all_str, ncols, &o, NULL)) die_oom();
  free(all_str);
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  size_t good = nrows;
  *strs = NULL;
  if (good && tfq_decode_csv_lines(o, recs, lens, good, strs, st)) {
    int64_t bad = tfq_status_record(st);
    good = bad >= 0 && (size_t)bad < nrows ? (size_t)bad : 0;
    tfq_tuple_free(*strs);
    *strs = NULL;
    if (good && tfq_decode_csv_lines(o, recs, lens, good, strs, NULL)) good = 0;
  }
  tfq_status_free(st);
  tfq_csv_options_free(o);
  for (size_t c = 0; good && c < ncols; c++)
    for (size_t r = 0; r < good; r++)
      vals[c * nrows + r].p =
          tfq_tensor_string(tfq_tuple_get(*strs, c), (int64_t)r, &vals[c * nrows + r].n);
  return good;
}

/* Does decode_csv certainly split record s[0..n) into the `ncols` fields wanted (select_cols
 * sel[0..ncols), else every field)?  Yes when it holds no '\n' or '\r', no '"' with quoting on,
 * and enough fields: then it has no field decode_csv could reject the splitting of. */
static int plain_record(const char *s, size_t n, char delim, int quote, const int64_t *sel,
                        size_t ncols) {
  size_t nf = 1;
  if (n == 0) return 0; /* no field at all */
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == delim)
      nf++;
    else if (c == '\n' || c == '\r' || (quote && c == '"'))
      return 0;
  }
  return sel ? nf > (size_t)sel[ncols - 1] : nf == ncols;
}

/* Sets a->fields / a->nfields from the sample rows[0..nrows): per column, int64 when every
 * non-empty value parses as int64 with decode_csv's own rules, else float64 when every one parses
 * as float64, else string (a column without a value: string).  The sample is the records before
 * the first that decode_csv rejects (the pipeline reports that one).
 *
 * Each row is split once into views (split_views: no copy, no allocation per value; with '"' as
 * both the delimiter and the quote, decode_strings), and each column probed with decode_csv's
 * parsers (probe_column).  Unless every record is plain
 * (plain_record), decode_csv then decodes the sample with the types found: it fails only on a
 * record it cannot split (types found from all the values never reject one), and then the types
 * are found again from the records before it.
 * Decoding the sample as strings first would cost a tensor with its own string arena per column:
 * for 20,000 columns, most of the time inference took. */
static void infer_fields(app *a, sbuf *rows, size_t nrows) {
  size_t ncols = a->o.nselect;
  if (!ncols && nrows)
    ncols = count_fields(rows[0].p, rows[0].n, a->o.field_delim, !a->o.no_quote_delim);
  if (ncols == 0) ncols = 1;
  /* The values, column by column: vals[c * nrows + r]. */
  sval *vals = xcalloc(ncols * (nrows ? nrows : 1), sizeof *vals);
  char **owned = NULL;
  size_t nowned = 0;
  const char **recs = xcalloc(nrows ? nrows : 1, sizeof *recs);
  size_t *lens = xcalloc(nrows ? nrows : 1, sizeof *lens);
  const int64_t *sel = a->o.nselect ? a->o.select_cols : NULL;
  char delim = a->o.field_delim;
  int quote = !a->o.no_quote_delim, plain = 1;
  for (size_t r = 0; r < nrows; r++) {
    recs[r] = rows[r].p;
    lens[r] = rows[r].n;
  }
  size_t good = nrows;
  tfq_tuple *strs = NULL;
  if (quote && delim == '"') {
    good = decode_strings(a, recs, lens, nrows, ncols, vals, &strs); /* decode_csv's values */
  } else {
    for (size_t r = 0; r < nrows; r++) {
      split_views(rows[r].p, rows[r].n, delim, quote, sel, ncols, vals + r, nrows, &owned, &nowned);
      plain = plain && plain_record(rows[r].p, rows[r].n, delim, quote, sel, ncols);
    }
  }
  const char *na = a->o.na_value;
  size_t nalen = na ? strlen(na) : 0;
  field_spec *fs = xcalloc(ncols, sizeof *fs);
  const char **pv = xcalloc(nrows ? nrows : 1, sizeof *pv);
  size_t *pn = xcalloc(nrows ? nrows : 1, sizeof *pn);
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  for (;;) {
    for (size_t c = 0; c < ncols; c++) {
      size_t k = 0;
      for (size_t r = 0; r < good; r++) {
        const sval *v = &vals[c * nrows + r];
        if (!v->n || (nalen && v->n == nalen && memcmp(v->p, na, nalen) == 0))
          continue; /* decode_csv gives the default: not a value */
        pv[k] = v->p;
        pn[k++] = v->n;
      }
      field_spec *f = &fs[c];
      free(f->def);
      if (k && probe_column(TFQ_INT64, pv, pn, k)) {
        f->dtype = TFQ_INT64;
        f->def = xstrdup("0");
      } else if (k && probe_column(TFQ_DOUBLE, pv, pn, k)) {
        f->dtype = TFQ_DOUBLE;
        f->def = xstrdup("0.0");
      } else {
        f->dtype = TFQ_STRING;
        f->def = xstrdup("");
      }
      f->deflen = strlen(f->def);
      (void)parse_default_number(f);
    }
    if (!good || plain) break;
    tfq_csv_options *o;
    tfq_tuple *t = NULL;
    if (build_csv_options(a, fs, ncols, &o, NULL)) die_oom();
    tfq_code c = tfq_decode_csv_lines(o, recs, lens, good, &t, st);
    tfq_tuple_free(t);
    tfq_csv_options_free(o);
    if (!c) break;
    int64_t bad = tfq_status_record(st);
    good = bad >= 0 && (size_t)bad < good ? (size_t)bad : 0;
  }
  tfq_status_free(st);
  tfq_tuple_free(strs);
  for (size_t i = 0; i < nowned; i++) free(owned[i]);
  free(owned);
  free(vals);
  free(pv);
  free(pn);
  free(recs);
  free(lens);
  a->fields = fs;
  a->nfields = ncols;
}

static void set_names(app *a, const char *header, size_t hlen) {
  a->names = xcalloc(a->nfields, sizeof *a->names);
  size_t nh = 0;
  sbuf *hf = NULL;
  if (header) nh = split_record(header, hlen, a->o.field_delim, !a->o.no_quote_delim, &hf);
  for (size_t i = 0; i < a->nfields; i++) {
    size_t col = a->o.nselect ? (size_t)a->o.select_cols[i] : i;
    if (header && col < nh) {
      a->names[i] = xstrndup(hf[col].p, hf[col].n);
    } else {
      char b[32];
      snprintf(b, sizeof b, "c%zu", i);
      a->names[i] = xstrdup(b);
    }
  }
  if (hf) free_fields(hf, nh);
}

int setup_columns(app *a, int need_sample, tfq_status *st) {
  if (a->examples != EX_NONE) { /* tf.train.Example input, unless detection says otherwise */
    int rc = example_columns(a, need_sample, st);
    if (rc != EXIT_OK || a->ex) return rc;
  }
  if (a->fmt != FMT_CSV) {
    a->nfields = 1;
    a->fields = xcalloc(1, sizeof *a->fields);
    a->fields[0].dtype = TFQ_STRING;
    a->names = xcalloc(1, sizeof *a->names);
    a->names[0] = xstrdup(a->fmt == FMT_TEXT ? "line" : "record");
    return EXIT_OK;
  }
  char *header = NULL;
  size_t header_len = 0;
  sbuf *rows = NULL;
  size_t nrows = 0;
  if (need_sample) read_sample(a, &header, &header_len, &rows, &nrows);
  if (!a->o.record_defaults) {
    infer_fields(a, rows, nrows);
    if (!a->o.quiet) {
      sbuf b = {0};
      spec_to_string(&b, a->fields, a->nfields, a->spec_repeat);
      warnx_("inferred -d '%s'", b.p);
      free(b.p);
    }
  }
  for (size_t i = 0; rows && i < INFER_ROWS; i++) free(rows[i].p);
  free(rows);
  if (build_csv_options(a, a->fields, a->nfields, &a->csv, st)) {
    warnx_("%s", tfq_status_message(st));
    free(header);
    return EXIT_USAGE;
  }
  set_names(a, header, header_len);
  free(header);
  return EXIT_OK;
}
