/* tfq-cat's columns: CSV splitting (for the header and the field count), type inference, the
 * decode_csv options (see cat_infer.h). */
#include "cat_infer.h"

#include <stdlib.h>
#include <string.h>

/* Formats a spec back into -d syntax. */
static void spec_to_string(sbuf *b, const field_spec *fs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) sb_putc(b, ',');
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

/* Does `v` parse as a single field of `dt` with decode_csv's own number rules? */
static int probe_number(tfq_dtype dt, const char *v, size_t n) {
  static tfq_csv_options *probes[2];
  int i = dt == TFQ_INT64 ? 0 : 1;
  if (!probes[i]) {
    if (tfq_csv_options_new(&probes[i], NULL)) die_oom();
    tfq_csv_options_set_use_quote_delim(probes[i], 0);
    char d = '\x01'; /* a byte unlikely in the value: a split means "not a number" */
    if (tfq_csv_options_set_field_delim(probes[i], &d, 1, NULL) ||
        tfq_csv_options_add_required(probes[i], dt, NULL))
      die_oom();
  }
  if (memchr(v, '\x01', n) || memchr(v, '\n', n) || memchr(v, '\r', n)) return 0;
  tfq_tuple *t = NULL;
  tfq_code c = tfq_decode_csv_record(probes[i], v, n, &t, NULL);
  tfq_tuple_free(t);
  return c == TFQ_OK;
}

/* Reads the header line and up to INFER_ROWS records of the first file (a TextLine reader that
 * skips nothing and, for a standard-input prefix, ends a truncated stream silently). */
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
  int64_t want = a->o.skip_header_lines + INFER_ROWS, got = 0;
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

static void infer_fields(app *a, sbuf *rows, size_t nrows) {
  size_t ncols;
  if (a->o.nselect) {
    ncols = a->o.nselect;
  } else {
    sbuf *fs;
    ncols =
        nrows ? split_record(rows[0].p, rows[0].n, a->o.field_delim, !a->o.no_quote_delim, &fs) : 0;
    if (nrows) free_fields(fs, ncols);
  }
  if (ncols == 0) ncols = 1;
  field_spec *all_str = xcalloc(ncols, sizeof *all_str);
  for (size_t i = 0; i < ncols; i++) {
    all_str[i].dtype = TFQ_STRING;
    all_str[i].def = xstrdup("");
  }
  tfq_csv_options *o;
  if (build_csv_options(a, all_str, ncols, &o, NULL)) die_oom();
  int *is_int = xcalloc(ncols, sizeof *is_int), *is_num = xcalloc(ncols, sizeof *is_num);
  size_t *nonempty = xcalloc(ncols, sizeof *nonempty);
  for (size_t c = 0; c < ncols; c++) is_int[c] = is_num[c] = 1;
  for (size_t r = 0; r < nrows; r++) {
    tfq_tuple *t = NULL;
    if (tfq_decode_csv_record(o, rows[r].p, rows[r].n, &t, NULL)) {
      tfq_tuple_free(t);
      break; /* the pipeline will report this record */
    }
    for (size_t c = 0; c < ncols; c++) {
      size_t len;
      const char *v = tfq_tensor_string(tfq_tuple_get(t, c), 0, &len);
      if (!len) continue;
      nonempty[c]++;
      if (is_int[c] && !probe_number(TFQ_INT64, v, len)) is_int[c] = 0;
      if (!is_int[c] && is_num[c] && !probe_number(TFQ_DOUBLE, v, len)) is_num[c] = 0;
    }
    tfq_tuple_free(t);
  }
  tfq_csv_options_free(o);
  a->fields = all_str;
  a->nfields = ncols;
  for (size_t c = 0; c < ncols; c++) {
    field_spec *f = &a->fields[c];
    free(f->def);
    if (nonempty[c] && is_int[c]) {
      f->dtype = TFQ_INT64;
      f->def = xstrdup("0");
    } else if (nonempty[c] && is_num[c]) {
      f->dtype = TFQ_DOUBLE;
      f->def = xstrdup("0.0");
    } else {
      f->dtype = TFQ_STRING;
      f->def = xstrdup("");
    }
    f->deflen = strlen(f->def);
    (void)parse_default_number(f);
  }
  free(is_int);
  free(is_num);
  free(nonempty);
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
      sbuf b = {0};
      sb_printf(&b, "c%zu", i);
      a->names[i] = b.p;
    }
  }
  if (hf) free_fields(hf, nh);
}

int setup_columns(app *a, int need_sample, tfq_status *st) {
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
      spec_to_string(&b, a->fields, a->nfields);
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
