/* CSV columns inferred from a sample, with tfq-cat's rules (docs/tfq-cat.md, "Type inference"),
 * so that a tfq_pipeline without columns and tfq-cat infer the same: the header line and up to
 * PL_INFER_ROWS records of the first file (fewer for wide rows: PL_INFER_VALUES values, but at
 * least PL_INFER_MIN_ROWS records), read through a TextLine reader; per column int64 when every
 * non-empty value is an int64 for decode_csv's own parser, else float64 when every one is a
 * float64, else string (a column with no value: string); defaults 0, 0.0 and "".  The columns
 * become a spec string in tfq-cat's -d syntax (runs of 3 or more identical entries as N*TYPE),
 * which the pipeline then uses as a given one.  Also here: the names from the header line (split
 * as tfq-cat splits it) and the spec string of given columns (tfq_pipeline_columns_spec()). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define TFQ_EXPERIMENTAL /* decode_csv's number parsers, for the probe */
#include <tfq/experimental.h>

#include "pipeline_internal.h"

/* tfq-cat's INFER_ROWS, INFER_VALUES and INFER_MIN_ROWS (tools/cat_app.h). */
#define PL_INFER_ROWS 100
#define PL_INFER_VALUES (1 << 17)
#define PL_INFER_MIN_ROWS 10

/* ---- the spec string ---- */

static const char *type_name(tfq_dtype t) {
  switch (t) {
    case TFQ_FLOAT: return "float32";
    case TFQ_DOUBLE: return "float64";
    case TFQ_INT32: return "int32";
    case TFQ_INT64: return "int64";
    default: return "string";
  }
}

/* Do columns a and b print the same spec entry? */
static int same_entry(const pl_colspec *a, const pl_colspec *b) {
  if (a->dtype != b->dtype || a->required != b->required) return 0;
  return a->required || (a->deflen == b->deflen && memcmp(a->def, b->def, a->deflen) == 0);
}

tfq_code tfq__pl_format_columns(const pl_colspec *c, size_t n, char **out, tfq_status *st) {
  pl_text b = {0};
  text_add(&b, "", 0);
  for (size_t i = 0, run; i < n; i += run) {
    for (run = 1; i + run < n && same_entry(&c[i], &c[i + run]); run++)
      ;
    if (run < 3) run = 1;
    if (i) text_putc(&b, ',');
    if (run > 1) {
      char r[32];
      snprintf(r, sizeof r, "%zu*", run);
      text_puts(&b, r);
    }
    text_puts(&b, type_name(c[i].dtype));
    if (c[i].required) continue;
    text_putc(&b, ':');
    const char *d = c[i].def ? c[i].def : "";
    size_t dl = c[i].def ? c[i].deflen : 0;
    if (c[i].dtype == TFQ_STRING && (memchr(d, ',', dl) || memchr(d, '"', dl))) {
      text_putc(&b, '"');
      for (size_t k = 0; k < dl; k++) {
        if (d[k] == '"') text_putc(&b, '"');
        text_putc(&b, d[k]);
      }
      text_putc(&b, '"');
    } else {
      text_add(&b, d, dl);
    }
  }
  if (b.oom) {
    tfq_free(b.p);
    return TFQ__OOM(st);
  }
  *out = b.p;
  return TFQ_OK;
}

const char *tfq_pipeline_columns_spec(const tfq_pipeline *p) {
  if (!p || p->o.format != TFQ_FORMAT_CSV || p->o.csv) return NULL;
  return p->o.columns;
}

/* ---- the sample ---- */

/* Records read from the sample source, pointing into the value tensors of the reads. */
typedef struct pl_sample {
  tfq_tensor **blocks;
  size_t nblocks;
  const char **recs;
  size_t *lens;
  size_t n, cap;
  const char *header; /* the header line (o->header), or NULL */
  size_t header_len;
} pl_sample;

static void sample_free(pl_sample *s) {
  for (size_t i = 0; i < s->nblocks; i++) tfq_tensor_free(s->blocks[i]);
  tfq_free(s->blocks);
  tfq_free(s->recs);
  tfq_free(s->lens);
}

/* Lines skipped at the start of each file (as the pipeline's reader skips them). */
static int64_t skip_lines(const tfq_pipeline_options *o) {
  int64_t skip = o->skip_header_lines >= 0 ? o->skip_header_lines : 0;
  return o->header && skip < 1 ? 1 : skip;
}

/* The number of fields decode_csv finds in s[0..n) when it splits it well (count_fields of
 * tfq-cat), without copying them. */
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

/* The records sampled for rows of `nf` fields: PL_INFER_VALUES values, but at least
 * PL_INFER_MIN_ROWS and at most PL_INFER_ROWS records. */
static int64_t sample_rows(size_t nf) {
  size_t r = nf ? PL_INFER_VALUES / nf : PL_INFER_ROWS;
  return r < PL_INFER_MIN_ROWS ? PL_INFER_MIN_ROWS : r > PL_INFER_ROWS ? PL_INFER_ROWS : (int64_t)r;
}

static int sample_push(pl_sample *s, const char *rec, size_t len) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    const char **r = tfq_realloc(s->recs, cap * sizeof *r);
    if (!r) return -1;
    s->recs = r;
    size_t *l = tfq_realloc(s->lens, cap * sizeof *l);
    if (!l) return -1;
    s->lens = l;
    s->cap = cap;
  }
  s->recs[s->n] = rec;
  s->lens[s->n++] = len;
  return 0;
}

/* Reads the sample: the header line (o->header) and, with `rows` != 0, the records after the
 * skipped lines: `rows` of them (> 0), or (rows < 0) as many as sample_rows() of the first
 * record's field count.  The source is the sample file (a prefix of a stream: its compressed
 * stream may end cut short, silently, as tfq-cat reads a standard-input prefix) or the first
 * input file, with the pipeline's compression.  A read error ends the sample (the pipeline
 * reports it when it reads the file); only a sample file that cannot be opened is an error. */
static tfq_code read_sample(tfq_pipeline *p, int64_t rows, pl_sample *s, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  memset(s, 0, sizeof *s);
  tfq_reader *r = NULL;
  tfq_queue *unit = NULL;
  tfq_code rc = tfq__pl_sample_reader(p, TFQ_READER_TEXT_LINE, &r, &unit, st);
  int64_t skip = skip_lines(o), got = 0;
  int64_t want = rows ? skip + 1 : (o->header ? 1 : 0);
  while (!rc && got < want) {
    tfq_tensor *keys = NULL, *values = NULL;
    tfq_status rs;
    tfq__status_ok(&rs);
    if (tfq_reader_read_up_to(r, unit, want - got, &keys, &values, NULL, &rs)) {
      /* a read error ends the sample (the pipeline reports it); running out of memory does not */
      if (tfq__pl_oom(&rs)) rc = TFQ__OOM(st);
      break;
    }
    tfq_tensor_free(keys);
    tfq_tensor **b = tfq_realloc(s->blocks, (s->nblocks + 1) * sizeof *b);
    if (!b) {
      tfq_tensor_free(values);
      rc = TFQ__OOM(st);
      break;
    }
    s->blocks = b;
    s->blocks[s->nblocks++] = values;
    int64_t k = tfq_tensor_num_elements(values);
    for (int64_t i = 0; !rc && i < k; i++, got++) {
      size_t len;
      const char *v = tfq_tensor_string(values, i, &len);
      if (got == 0 && o->header) {
        s->header = v;
        s->header_len = len;
      } else if (got >= skip) {
        size_t bom = tfq__pl_bom(o, got, v, len); /* a BOM that decoding drops */
        if (sample_push(s, v + bom, len - bom)) rc = TFQ__OOM(st);
        if (s->n == 1)
          want =
              skip + (rows > 0 ? rows : sample_rows(count_fields(v, len, o->delim, !o->no_quote)));
      }
    }
  }
  tfq_queue_free(unit);
  tfq_reader_free(r);
  if (rc) sample_free(s);
  return rc;
}

/* ---- the types ---- */

/* One value of the sample: p[0..n), the field's bytes as decode_csv gives them (unquoted). */
typedef struct pl_sval {
  const char *p;
  size_t n;
} pl_sval;

/* Do all `count` values v[k][0..n[k]) parse as `dt` (int64 or float64) with decode_csv's own
 * number rules?  Each value is judged as decode_csv judges a record of one field without quoting
 * and with '\x01' as the delimiter (tfq-cat's probe decode_csv'd such records): a '\n', '\r' or
 * '\x01' in it fails; the rest is the parser decode_csv applies to a field. */
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

/* Splits record s[0..n) as decode_csv splits a well-formed one ('\n' and '\r' skipped where a
 * field starts; with quoting on, a field starting with '"' ends at the next lone '"' and holds
 * '""' as '"'; a trailing delimiter makes one more, empty, field) and stores field sel[j] (every
 * field, without select_cols) in out[j * stride] for j < ncols.  Fields not found stay empty.  A
 * quoted field holding '""' is unescaped into a new block appended to *owned; every other value
 * points into s.  A malformed record gives some values: decode_csv judges the sample after. */
static int split_views(const char *s, size_t n, char delim, int quote, const int64_t *sel,
                       size_t ncols, pl_sval *out, size_t stride, char ***owned, size_t *nowned) {
  size_t i = 0, f = 0, j = 0;
  if (n == 0) return 0;
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
        char *u = tfq_malloc(vn ? vn : 1), *w = u;
        size_t no = *nowned; /* doubling, as source.c's add_column: room for 8, 16, 32, ... */
        char **ow = *owned;
        if (u && (no < 8 ? no == 0 : (no & (no - 1)) == 0))
          ow = tfq_realloc(*owned, (no < 8 ? 8 : 2 * no) * sizeof *ow);
        if (!u || !ow) {
          tfq_free(u);
          return -1;
        }
        for (size_t k = 0; k < vn; k++) {
          *w++ = vp[k];
          if (vp[k] == '"') k++;
        }
        *owned = ow;
        (*owned)[(*nowned)++] = u;
        vp = u;
        vn = (size_t)(w - u);
      }
    }
    const char *d = i < n ? memchr(s + i, delim, n - i) : NULL;
    if (!quoted) vn = (d ? (size_t)(d - s) : n) - i;
    if (!sel || (int64_t)f == sel[j]) out[j++ * stride] = (pl_sval){vp, vn};
    if (!d) break;
    i = (size_t)(d - s) + 1;
    if (i == n) { /* a trailing delimiter: an empty last field */
      if (j < ncols && (!sel || (int64_t)(f + 1) == sel[j])) out[j * stride] = (pl_sval){s + n, 0};
      break;
    }
  }
  return 0;
}

/* Does decode_csv certainly split record s[0..n) into the `ncols` fields wanted (select_cols
 * sel[0..ncols), else every field)?  Yes when it holds no '\n' or '\r', no '"' with quoting on,
 * and enough fields: then no field's splitting can be rejected. */
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

/* decode_csv options for the columns cs[0..ncols), as the pipeline will decode them (its
 * delimiter and select_cols). */
static tfq_code sample_csv(const tfq_pipeline *p, const pl_colspec *cs, size_t ncols,
                           tfq_csv_options **out, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  return tfq__pl_csv_from_spec(cs, ncols, o, out, st);
}

/* The sample as decode_csv splits it into strings (for a delimiter that is also the quote, whose
 * splitting split_views does not mirror): the records before the first it rejects, their count
 * in *good and their values in vals as split_views stores them (*strs holds them). */
static tfq_code decode_strings(const tfq_pipeline *p, const pl_sample *s, size_t ncols,
                               pl_sval *vals, tfq_tuple **strs, size_t *good, tfq_status *st) {
  pl_colspec *all = tfq__calloc(ncols, sizeof *all);
  if (!all) return TFQ__OOM(st);
  for (size_t c = 0; c < ncols; c++) all[c] = (pl_colspec){.dtype = TFQ_STRING, .def = ""};
  tfq_csv_options *o;
  tfq_code rc = sample_csv(p, all, ncols, &o, st);
  tfq_free(all);
  if (rc) return rc;
  tfq_status ds;
  tfq__status_ok(&ds);
  size_t g = s->n;
  *strs = NULL;
  if (g && tfq_decode_csv_lines(o, s->recs, s->lens, g, strs, &ds)) {
    if (tfq_status_code(&ds) == TFQ_RESOURCE_EXHAUSTED) rc = TFQ__OOM(st);
    int64_t bad = tfq_status_record(&ds);
    g = bad >= 0 && (size_t)bad < s->n ? (size_t)bad : 0;
    tfq_tuple_free(*strs);
    *strs = NULL;
    if (!rc && g && tfq_decode_csv_lines(o, s->recs, s->lens, g, strs, &ds)) g = 0;
  }
  tfq_csv_options_free(o);
  for (size_t c = 0; !rc && g && c < ncols; c++)
    for (size_t r = 0; r < g; r++)
      vals[c * s->n + r].p =
          tfq_tensor_string(tfq_tuple_get(*strs, c), (int64_t)r, &vals[c * s->n + r].n);
  *good = g;
  return rc;
}

/* Sets cs[c] from the values of column c in records [0, good). */
static tfq_code column_types(const pl_sval *vals, size_t nrows, size_t good, size_t ncols,
                             const char *na, pl_colspec *cs, const char **pv, size_t *pn,
                             tfq_status *st) {
  size_t nalen = na ? strlen(na) : 0; /* a field equal to na_value takes the default too */
  for (size_t c = 0; c < ncols; c++) {
    size_t k = 0;
    for (size_t r = 0; r < good; r++) {
      const pl_sval *v = &vals[c * nrows + r];
      if (!v->n || (nalen && v->n == nalen && memcmp(v->p, na, nalen) == 0))
        continue; /* decode_csv gives the default: not a value */
      pv[k] = v->p;
      pn[k++] = v->n;
    }
    pl_colspec *f = &cs[c];
    tfq_free(f->def);
    const char *def = "";
    f->dtype = TFQ_STRING;
    if (k && probe_column(TFQ_INT64, pv, pn, k)) {
      f->dtype = TFQ_INT64;
      def = "0";
    } else if (k && probe_column(TFQ_DOUBLE, pv, pn, k)) {
      f->dtype = TFQ_DOUBLE;
      def = "0.0";
    }
    f->required = 0;
    f->deflen = strlen(def);
    if (!(f->def = tfq__strdup(def))) return TFQ__OOM(st);
  }
  return TFQ_OK;
}

/* The columns of the sample (tfq-cat's infer_fields): each row split once into views
 * (split_views; with '"' as both the delimiter and the quote, decode_strings), each column
 * probed (column_types).  Unless every record is plain (plain_record), decode_csv then decodes
 * the sample with the types found: it fails only on a record it cannot split, and then the
 * types are found again from the records before it (the pipeline reports that record). */
static tfq_code infer_types(const tfq_pipeline *p, const pl_sample *s, pl_colspec **out,
                            size_t *nout, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  size_t nrows = s->n, ncols = o->nselect, rows1 = nrows ? nrows : 1, cells;
  if (!ncols && nrows) ncols = count_fields(s->recs[0], s->lens[0], o->delim, !o->no_quote);
  if (ncols == 0) ncols = 1;
  if (!tfq__mul_ok(ncols, rows1, &cells) || !tfq__mul_ok(cells, sizeof(pl_sval), &cells))
    return TFQ__OOM(st);
  const int64_t *sel = o->nselect ? o->select_cols : NULL;
  char delim = o->delim, **owned = NULL;
  int quote = !o->no_quote, plain = 1;
  size_t nowned = 0, good = nrows;
  tfq_tuple *strs = NULL;
  pl_sval *vals = tfq__calloc(ncols * rows1, sizeof *vals);
  pl_colspec *cs = tfq__calloc(ncols, sizeof *cs);
  const char **pv = tfq__calloc(rows1, sizeof *pv);
  size_t *pn = tfq__calloc(rows1, sizeof *pn);
  tfq_code rc = vals && cs && pv && pn ? TFQ_OK : TFQ__OOM(st);
  if (!rc && quote && delim == '"') {
    rc = decode_strings(p, s, ncols, vals, &strs, &good, st); /* decode_csv's values */
  } else {
    for (size_t r = 0; !rc && r < nrows; r++) {
      if (split_views(s->recs[r], s->lens[r], delim, quote, sel, ncols, vals + r, nrows, &owned,
                      &nowned))
        rc = TFQ__OOM(st);
      plain = plain && plain_record(s->recs[r], s->lens[r], delim, quote, sel, ncols);
    }
  }
  while (!rc) {
    if ((rc = column_types(vals, nrows, good, ncols, o->na_value, cs, pv, pn, st)) || !good ||
        plain)
      break;
    tfq_csv_options *co;
    tfq_tuple *t = NULL;
    if ((rc = sample_csv(p, cs, ncols, &co, st))) break;
    tfq_status ds;
    tfq__status_ok(&ds);
    tfq_code c = tfq_decode_csv_lines(co, s->recs, s->lens, good, &t, &ds);
    tfq_tuple_free(t);
    tfq_csv_options_free(co);
    if (!c) break;
    if (c == TFQ_RESOURCE_EXHAUSTED) rc = TFQ__OOM(st);
    int64_t bad = tfq_status_record(&ds);
    good = bad >= 0 && (size_t)bad < good ? (size_t)bad : 0;
  }
  tfq_tuple_free(strs);
  for (size_t i = 0; i < nowned; i++) tfq_free(owned[i]);
  tfq_free(owned);
  tfq_free(vals);
  tfq_free(pv);
  tfq_free(pn);
  if (rc) {
    tfq__pl_colspec_free(cs, cs ? ncols : 0);
    return rc;
  }
  *out = cs;
  *nout = ncols;
  return TFQ_OK;
}

tfq_code tfq__pl_infer_columns(tfq_pipeline *p, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  if (o->infer_rows == 0 || o->infer_rows < -1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "infer_rows must be >= 1 (or -1, the default), not %lld",
                          (long long)o->infer_rows);
  pl_sample s;
  tfq_code rc = read_sample(p, o->infer_rows > 0 ? o->infer_rows : -1, &s, st);
  if (rc) return rc;
  pl_colspec *cs = NULL;
  size_t n = 0;
  char *spec = NULL;
  rc = infer_types(p, &s, &cs, &n, st);
  sample_free(&s);
  if (!rc) rc = tfq__pl_format_columns(cs, n, &spec, st);
  tfq__pl_colspec_free(cs, n);
  if (rc) return rc;
  tfq_free(p->o.columns);
  p->o.columns = spec;
  return TFQ_OK;
}

/* ---- the names ---- */

/* Names the columns after the fields of header line s[0..n), split as tfq-cat splits it (a field
 * starting with '"' ends at the next lone '"', what follows it up to the delimiter dropped, '""'
 * is '"'; '\n' and '\r' skipped where a field starts; a trailing delimiter makes an empty last
 * field): column j after field sel[j] (select_cols) or field j.  Columns without a field keep
 * their names. */
static tfq_code name_columns(tfq_pipeline *p, size_t ncols, const char *s, size_t n,
                             tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  char delim = o->delim;
  char *buf = tfq_malloc(n + 1);
  if (!buf) return TFQ__OOM(st);
  size_t i = 0, f = 0, j = 0;
  tfq_code rc = TFQ_OK;
  for (int last = n == 0; !last && !rc && j < ncols; f++) {
    size_t bl = 0;
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    if (!o->no_quote && i < n && s[i] == '"') {
      for (i++; i < n; i++) {
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            buf[bl++] = s[i++];
            continue;
          }
          i++;
          break;
        }
        buf[bl++] = s[i];
      }
      while (i < n && s[i] != delim) i++;
    } else {
      for (; i < n && s[i] != delim; i++) buf[bl++] = s[i];
    }
    /* past the delimiter; a trailing one leaves i == n with a field (empty) still to come */
    last = i >= n;
    if (!last) i++;
    int keep = o->nselect ? (int64_t)f == o->select_cols[j] : 1;
    if (!keep) continue;
    char *name = tfq_malloc(bl + 1);
    if (!name) {
      rc = TFQ__OOM(st);
      break;
    }
    size_t bom = f == 0 && bl >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0; /* a BOM */
    memcpy(name, buf + bom, bl - bom);
    name[bl - bom] = '\0';
    tfq_free(p->cols[j].name);
    p->cols[j++].name = name;
  }
  tfq_free(buf);
  return rc;
}

tfq_code tfq__pl_header_names(tfq_pipeline *p, size_t ncols, tfq_status *st) {
  pl_sample s;
  tfq_code rc = read_sample(p, 0, &s, st);
  if (rc) return rc;
  if (s.header) rc = name_columns(p, ncols, s.header, s.header_len, st);
  sample_free(&s);
  return rc;
}

/* ---- the header line, detected (set_header -1) ---- */

/* Is field h[0..n) a number of type dt for decode_csv? */
static int is_number(tfq_dtype dt, const char *h, size_t n) {
  const char *v = h;
  return n && probe_column(dt, &v, &n, 1);
}

/* The votes of the header line's fields (see set_header): for each column with a field, a
 * number column (int64 or float64 in the records) votes +1 when the field is text that is not
 * such a number and -1 when it is one; a string column -1 when the field is a number or repeats
 * one of the column's sampled values, +1 when its values (3 or more) all have one length and the
 * field another (csv.Sniffer's rule).  An empty field (or na_value) does not vote. */
static int header_votes(const tfq_pipeline *p, const pl_sample *s, const pl_colspec *cs,
                        size_t ncols, int *votes, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  const int64_t *sel = o->nselect ? o->select_cols : NULL;
  size_t nrows = s->n;
  char **owned = NULL;
  size_t nowned = 0;
  pl_sval *h = tfq__calloc(ncols, sizeof *h), *vals = tfq__calloc(ncols * nrows, sizeof *vals);
  int rc = !h || !vals;
  if (!rc)
    rc = split_views(s->header, s->header_len, o->delim, !o->no_quote, sel, ncols, h, 1, &owned,
                     &nowned);
  for (size_t r = 0; !rc && r < nrows; r++)
    rc = split_views(s->recs[r], s->lens[r], o->delim, !o->no_quote, sel, ncols, vals + r, nrows,
                     &owned, &nowned);
  size_t nalen = o->na_value ? strlen(o->na_value) : 0;
  *votes = 0;
  for (size_t c = 0; !rc && c < ncols; c++) {
    const char *hp = h[c].p;
    size_t hn = h[c].n;
    if (c == 0 && (!sel || sel[0] == 0) && hn >= 3 && memcmp(hp, "\xef\xbb\xbf", 3) == 0) {
      hp += 3; /* a BOM */
      hn -= 3;
    }
    if (!hn || (nalen && hn == nalen && memcmp(hp, o->na_value, nalen) == 0)) continue;
    if (cs[c].dtype != TFQ_STRING) {
      *votes += is_number(cs[c].dtype, hp, hn) ? -1 : 1;
      continue;
    }
    if (is_number(TFQ_DOUBLE, hp, hn)) {
      (*votes)--;
      continue;
    }
    int repeat = 0, one_len = 1;
    size_t len = 0, seen = 0;
    for (size_t r = 0; r < nrows; r++) {
      const pl_sval *v = &vals[c * nrows + r];
      if (!v->n) continue;
      repeat |= v->n == hn && memcmp(v->p, hp, hn) == 0;
      if (seen++ && v->n != len) one_len = 0;
      len = v->n;
    }
    if (repeat)
      (*votes)--;
    else if (seen >= 3 && one_len && len != hn)
      (*votes)++;
  }
  for (size_t i = 0; i < nowned; i++) tfq_free(owned[i]);
  tfq_free(owned);
  tfq_free(h);
  tfq_free(vals);
  return rc ? (int)TFQ__OOM(st) : 0;
}

tfq_code tfq__pl_detect_header(tfq_pipeline *p, tfq_status *st) {
  tfq_pipeline_options *o = &p->o;
  if (o->header >= 0) return TFQ_OK;
  o->strip_bom = o->format == TFQ_FORMAT_CSV && !o->csv;
  if (o->format != TFQ_FORMAT_CSV || o->csv || o->skip_header_lines > 0) {
    o->header = o->format == TFQ_FORMAT_CSV && !o->csv && o->skip_header_lines > 0;
    return TFQ_OK;
  }
  if (o->infer_rows == 0 || o->infer_rows < -1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "infer_rows must be >= 1 (or -1, the default), not %lld",
                          (long long)o->infer_rows);
  o->header = 1; /* the sample: line 1 apart, the records after it */
  pl_sample s;
  tfq_code rc = read_sample(p, o->infer_rows > 0 ? o->infer_rows : -1, &s, st);
  o->header = 0;
  if (rc) return rc;
  int votes = 0;
  if (s.header && s.n) {
    pl_colspec *cs = NULL;
    size_t n = 0;
    rc = infer_types(p, &s, &cs, &n, st);
    if (!rc) rc = (tfq_code)header_votes(p, &s, cs, n, &votes, st);
    tfq__pl_colspec_free(cs, n);
  }
  sample_free(&s);
  o->header = !rc && votes > 0;
  return rc;
}

int tfq_pipeline_header(const tfq_pipeline *p) {
  return p && p->o.format == TFQ_FORMAT_CSV && p->o.header > 0;
}
