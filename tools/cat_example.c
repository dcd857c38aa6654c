/* tfq-cat's tf.train.Example input: --features, detection and inference of the features, the
 * columns and the record queue's components (see cat_example.h). */
#include "cat_example.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the columns ------------------------------------------------------------------------ */

static ex_col *add_col(cat_example *ex) {
  ex->cols = xrealloc(ex->cols, (ex->ncols + 1) * sizeof *ex->cols);
  ex_col *c = &ex->cols[ex->ncols++];
  memset(c, 0, sizeof *c);
  return c;
}

void example_free(cat_example *ex) {
  if (!ex) return;
  for (size_t i = 0; i < ex->ncols; i++) {
    free(ex->cols[i].name);
    free(ex->cols[i].dims);
    tfq_tensor_free(ex->cols[i].dflt);
  }
  free(ex->cols);
  tfq_example_config_free(ex->cfg);
  tfq_example_config_free(ex->seq);
  free(ex);
}

/* Adds column c to `cfg` (the library's message in `st` when it refuses). */
static tfq_code config_add(tfq_example_config *cfg, const ex_col *c, tfq_status *st) {
  switch (c->kind) {
    case TFQ_EXAMPLE_FIXED_LEN:
      return tfq_example_config_add_fixed_len(cfg, c->name, c->dtype, c->dims, c->rank, c->dflt,
                                              st);
    case TFQ_EXAMPLE_VAR_LEN: return tfq_example_config_add_var_len(cfg, c->name, c->dtype, st);
    default:
      return tfq_example_config_add_fixed_len_sequence(cfg, c->name, c->dtype, c->dims, c->rank, 1,
                                                       NULL, st);
  }
}

/* Builds the parse configs and the app's columns from a->ex->cols; a config the library
 * refuses is a usage error naming --features (`what`). */
static void finish_columns(app *a, const char *what) {
  cat_example *ex = a->ex;
  tfq_status *st = tfq_status_new();
  if (!st || tfq_example_config_new(&ex->cfg, st)) die_oom();
  int any_seq = 0;
  for (size_t i = 0; i < ex->ncols; i++) {
    if (config_add(ex->cfg, &ex->cols[i], st)) usage_error("%s: %s", what, tfq_status_message(st));
    any_seq |= ex->cols[i].kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
  }
  if (tfq_example_config_check(ex->cfg, st)) usage_error("%s: %s", what, tfq_status_message(st));
  if (any_seq) {
    if (tfq_example_config_new(&ex->seq, st)) die_oom();
    for (size_t i = 0; i < ex->ncols; i++)
      if (ex->cols[i].kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE &&
          config_add(ex->seq, &ex->cols[i], st))
        usage_error("%s: %s", what, tfq_status_message(st));
  }
  a->nfields = ex->ncols;
  a->fields = xcalloc(ex->ncols, sizeof *a->fields);
  a->names = xcalloc(ex->ncols, sizeof *a->names);
  for (size_t i = 0; i < ex->ncols; i++) {
    ex_col *c = &ex->cols[i];
    c->out = (size_t)tfq_example_config_find(ex->cfg, c->name);
    if (ex->seq && c->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE)
      c->seq_out = (size_t)tfq_example_config_find(ex->seq, c->name);
    a->fields[i].dtype = c->kind == TFQ_EXAMPLE_FIXED_LEN ? c->dtype : TFQ_STRING;
    a->fields[i].required = 1;
    a->names[i] = xstrdup(c->name);
  }
  tfq_status_free(st);
}

void example_spec(const app *a, tfq_spec *spec) {
  for (size_t i = 0; i < a->ex->ncols; i++) {
    const ex_col *c = &a->ex->cols[i];
    tfq_code rc = c->kind == TFQ_EXAMPLE_FIXED_LEN
                      ? tfq_spec_add(spec, c->dtype, c->dims, c->rank, NULL, NULL)
                      : tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, NULL);
    if (rc) die_oom();
  }
}

int example_col_list(const app *a, size_t c, tfq_dtype *dtype, int *rank, const int64_t **dims) {
  if (!a->ex || c >= a->ex->ncols || a->ex->cols[c].kind == TFQ_EXAMPLE_FIXED_LEN) return 0;
  const ex_col *col = &a->ex->cols[c];
  *dtype = col->dtype;
  *rank = col->kind == TFQ_EXAMPLE_VAR_LEN ? 0 : col->rank;
  *dims = col->kind == TFQ_EXAMPLE_VAR_LEN ? NULL : col->dims;
  return 1;
}

size_t example_list_decode(const char *s, size_t n, tfq_dtype dtype, const char ***sp, size_t **sn,
                           size_t *cap) {
  if (dtype != TFQ_STRING) return n / tfq_dtype_size(dtype);
  size_t k = 0, i = 0;
  while (i + sizeof(uint64_t) <= n) {
    uint64_t len;
    memcpy(&len, s + i, sizeof len);
    i += sizeof len;
    if (len > n - i) break; /* cannot happen: the op wrote it */
    if (k == *cap) {
      *cap = *cap ? 2 * *cap : 16;
      *sp = xrealloc(*sp, *cap * sizeof **sp);
      *sn = xrealloc(*sn, *cap * sizeof **sn);
    }
    (*sp)[k] = s + i;
    (*sn)[k++] = (size_t)len;
    i += (size_t)len;
  }
  return k;
}

/* ---- --features SPEC ---------------------------------------------------------------------- */

static const char *skip_sp(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* A double-quoted token at *pp ('""' stands for '"'), unquoted into b; usage error if it does
 * not end. */
static void quoted(const char **pp, sbuf *b, const char *spec) {
  const char *p = *pp + 1;
  sb_add(b, "", 0);
  for (;;) {
    if (!*p) usage_error("unterminated quote in --features '%s'", spec);
    if (*p == '"') {
      if (p[1] != '"') break;
      p++;
    }
    sb_putc(b, *p++);
  }
  *pp = p + 1;
}

/* The entry starting at s, up to its ',' (for messages). */
static int entry_len(const char *s) {
  size_t n = 0;
  int depth = 0;
  while (s[n] && (depth || s[n] != ',')) depth += s[n] == '[' ? 1 : s[n] == ']' ? -1 : 0, n++;
  return (int)n;
}

static int parse_type(const char *s, size_t n, tfq_dtype *out) {
  static const struct {
    const char *name;
    tfq_dtype dt;
  } types[] = {{"float32", TFQ_FLOAT}, {"float", TFQ_FLOAT},   {"int64", TFQ_INT64},
               {"long", TFQ_INT64},    {"string", TFQ_STRING}, {"bytes", TFQ_STRING},
               {"str", TFQ_STRING}};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++)
    if (strlen(types[i].name) == n && memcmp(types[i].name, s, n) == 0) {
      *out = types[i].dt;
      return 1;
    }
  return 0;
}

/* SHAPE at *pp ('[' ... ']'): sets the kind, rank and dims of c. */
static void parse_shape(const char **pp, ex_col *c) {
  const char *start = *pp, *p = *pp + 1, *close = strchr(p, ']');
  int n = close ? (int)(close - start + 1) : (int)strlen(start);
  if (!close) p = close = start;
  p = skip_sp(p);
  c->kind = TFQ_EXAMPLE_FIXED_LEN;
  if (p == start) {
    /* no ']' */
  } else if (*p == '*' && skip_sp(p + 1) == close) {
    c->kind = TFQ_EXAMPLE_VAR_LEN;
    p = close;
  } else if (*p == '?') {
    c->kind = TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
    p = skip_sp(p + 1);
    if (*p == ',' && skip_sp(p + 1) != close)
      p++;
    else if (p != close)
      p = start; /* not "[?]" nor "[?," and a dim */
  }
  while (p != start && p != close) {
    p = skip_sp(p);
    char *end;
    errno = 0;
    long long d = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : -1;
    if (d < 0 || errno || c->rank >= TFQ_MAX_RANK) {
      p = start;
      break;
    }
    c->dims = xrealloc(c->dims, (size_t)(c->rank + 1) * sizeof *c->dims);
    c->dims[c->rank++] = d;
    p = skip_sp(end);
    if (*p == ',' && skip_sp(p + 1) != close)
      p++;
    else if (p != close)
      p = start;
  }
  if (p == start)
    usage_error(
        "invalid shape '%.*s' for feature '%s' in --features (expected [d1,d2,...] for "
        "FixedLen, [*] for VarLen or [?,d2,...] for FixedLenSequence)",
        n, start, c->name);
  *pp = close + 1;
}

/* =DEFAULT (after the '='): a scalar of c's dtype, repeated to fill c's shape. */
static void parse_default(const char **pp, ex_col *c, const char *spec) {
  const char *p = skip_sp(*pp);
  sbuf d = {0};
  if (*p == '"') {
    quoted(&p, &d, spec);
  } else {
    const char *s = p;
    while (*p && *p != ',') p++;
    const char *e = p;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    sb_add(&d, s, (size_t)(e - s));
  }
  *pp = p;
  if (c->kind != TFQ_EXAMPLE_FIXED_LEN)
    usage_error(
        "feature '%s' in --features: a default applies to FixedLen features only "
        "(not to [*] or [?])",
        c->name);
  float f = 0;
  long long i = 0;
  char *end = d.p;
  errno = 0;
  if (c->dtype == TFQ_FLOAT) f = strtof(d.p, &end);
  if (c->dtype == TFQ_INT64) i = strtoll(d.p, &end, 10);
  if (c->dtype != TFQ_STRING && (!d.n || *end || errno == ERANGE))
    usage_error("invalid default '%s' for feature '%s' (%s) in --features", d.p, c->name,
                c->dtype == TFQ_FLOAT ? "float32" : "int64");
  if (tfq_tensor_new(c->dtype, c->dims, c->rank, &c->dflt, NULL)) die_oom();
  int64_t n = tfq_tensor_num_elements(c->dflt);
  for (int64_t k = 0; k < n; k++) {
    if (c->dtype == TFQ_FLOAT) ((float *)tfq_tensor_data(c->dflt))[k] = f;
    if (c->dtype == TFQ_INT64) ((int64_t *)tfq_tensor_data(c->dflt))[k] = (int64_t)i;
    if (c->dtype == TFQ_STRING && tfq_tensor_set_string(c->dflt, k, d.p, d.n, NULL)) die_oom();
  }
  free(d.p);
}

void example_features(app *a, const char *spec) {
  cat_example *ex = a->ex = xcalloc(1, sizeof *ex);
  const char *p = skip_sp(spec);
  if (!*p) usage_error("empty --features");
  for (;;) {
    p = skip_sp(p);
    const char *entry = p;
    sbuf name = {0};
    if (*p == '"') {
      quoted(&p, &name, spec);
    } else {
      const char *s = p;
      while (*p && *p != ':' && *p != ',') p++;
      const char *e = p;
      while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
      sb_add(&name, s, (size_t)(e - s));
    }
    p = skip_sp(p);
    if (*p != ':' || !name.n) {
      if (!*entry || *entry == ',') usage_error("empty entry in --features '%s'", spec);
      usage_error("invalid --features entry '%.*s' (expected NAME:TYPE[SHAPE][=DEFAULT])",
                  entry_len(entry), entry);
    }
    ex_col *c = add_col(ex);
    c->name = name.p;
    c->kind = TFQ_EXAMPLE_FIXED_LEN;
    p = skip_sp(p + 1);
    const char *t = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z')) p++;
    if (!parse_type(t, (size_t)(p - t), &c->dtype))
      usage_error(
          "unknown type '%.*s' for feature '%s' in --features (expected float32, int64 or "
          "string, or the aliases float, long, bytes, str)",
          (int)(p - t), t, c->name);
    p = skip_sp(p);
    if (*p == '[') parse_shape(&p, c);
    p = skip_sp(p);
    if (*p == '=') {
      p++;
      parse_default(&p, c, spec);
    }
    p = skip_sp(p);
    if (*p && *p != ',')
      usage_error("invalid --features entry '%.*s' (expected NAME:TYPE[SHAPE][=DEFAULT])",
                  entry_len(entry), entry);
    if (!*p) break;
    p++;
  }
  finish_columns(a, "--features");
}

/* ---- detection and inference ---------------------------------------------------------------
 * A small scanner of serialized Examples with TF's fast parser's rules (spec tf1-example.md
 * §2.2), enough to list the keys, their list kinds and value counts.  Parsing proper is the
 * library's (tfq_parse_example): a record this scanner misjudges fails there with TF's message. */

enum { K_NONE = 0, K_BYTES, K_FLOAT, K_INT64 };

static int varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
  uint64_t r = 0;
  for (int i = 0; i < 10 && *p < end; i++) {
    unsigned b = *(*p)++;
    r |= (uint64_t)(b & 0x7F) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return 1;
    }
  }
  return 0;
}

/* A length then that many bytes, all present before `end`: *blk, *blen; 0 if not. */
static int block(const unsigned char **p, const unsigned char *end, const unsigned char **blk,
                 size_t *blen) {
  uint64_t len;
  if (!varint(p, end, &len)) return 0;
  len = (uint32_t)len;
  if (len > (uint64_t)(end - *p)) return 0;
  *blk = *p;
  *blen = (size_t)len;
  *p += len;
  return 1;
}

/* The end of a scope of declared length `len` at p: that, or the end of the buffer. */
static const unsigned char *scope_end(const unsigned char *p, const unsigned char *end,
                                      uint64_t len) {
  len = (uint32_t)len;
  return len < (uint64_t)(end - p) ? p + len : end;
}

/* A Feature's bytes v[0..n): its kind and value count; 0 when it does not parse. */
static int scan_feature(const unsigned char *v, size_t n, int *kind, int64_t *count) {
  const unsigned char *p = v, *end = v + n, *lend, *b;
  size_t bl;
  uint64_t len, x;
  *count = 0;
  *kind = K_NONE;
  if (!n) return 1;
  if (*p != 0x0A && *p != 0x12 && *p != 0x1A) return 0; /* "Unsupported datatype." */
  *kind = *p == 0x0A ? K_BYTES : *p == 0x12 ? K_FLOAT : K_INT64;
  p++;
  if (!varint(&p, end, &len)) return 0;
  lend = scope_end(p, end, len);
  if (p == lend) return 1;
  if (*kind == K_BYTES) {
    for (; p < lend; ++*count)
      if (*p++ != 0x0A || !block(&p, lend, &b, &bl)) return 0;
  } else if (*p == 0x0A) { /* packed: the first chunk only */
    p++;
    if (!varint(&p, lend, &len)) return 0;
    if (*kind == K_FLOAT) {
      *count = (int64_t)((uint32_t)len / 4);
      return (uint64_t)*count * 4 <= (uint64_t)(lend - p);
    }
    for (const unsigned char *cend = scope_end(p, lend, len); p < cend; ++*count)
      if (!varint(&p, cend, &x)) return 0;
  } else {
    unsigned tag = *kind == K_FLOAT ? 0x0D : 0x08;
    for (; p < lend; ++*count) {
      if (*p++ != tag) return 0;
      if (tag == 0x0D ? lend - p < 4 : !varint(&p, lend, &x)) return 0;
      if (tag == 0x0D) p += 4;
    }
  }
  return 1;
}

typedef void (*entry_fn)(void *ctx, const unsigned char *key, size_t klen, int kind, int64_t count);

/* Calls fn for each map entry of the serialized Example e[0..n), in wire order; returns 0 when
 * the bytes are not an Example (by TF's structural rules) or a Feature does not parse. */
static int scan_example(const unsigned char *e, size_t n, entry_fn fn, void *ctx) {
  const unsigned char *p = e, *end = e + n;
  uint64_t tag, len;
  while (p < end) {
    if (!varint(&p, end, &tag)) return 0;
    if (tag == 0x0A) { /* Features: its entries are appended */
      if (!varint(&p, end, &len)) return 0;
      const unsigned char *fend = scope_end(p, end, len);
      while (p < fend) {
        if (*p++ != 0x0A || !varint(&p, end, &len)) return 0;
        const unsigned char *eend = scope_end(p, end, len), *k = NULL, *v = NULL;
        size_t kl = 0, vl = 0;
        for (int f = 0; f < 2; f++) {
          if (p >= eend || (*p != 0x0A && *p != 0x12)) return 0;
          int is_key = *p++ == 0x0A;
          if (!block(&p, end, is_key ? &k : &v, is_key ? &kl : &vl)) return 0;
        }
        int kind;
        int64_t count;
        if (p != eend || !k || !v || !scan_feature(v, vl, &kind, &count)) return 0;
        fn(ctx, k, kl, kind, count);
      }
      continue;
    }
    switch (tag & 7) {
      case 0:
        if (!varint(&p, end, &len)) return 0;
        break;
      case 1:
      case 5:
        if ((size_t)(end - p) < ((tag & 7) == 1 ? 8u : 4u)) return 0;
        p += (tag & 7) == 1 ? 8 : 4;
        break;
      case 2:
        if (!varint(&p, end, &len)) return 0;
        p = scope_end(p, end, len);
        break;
      default: return 0;
    }
  }
  return 1;
}

/* What the sample says about one key. */
typedef struct {
  char *key;
  size_t klen;
  int kind;          /* the first list kind seen (K_NONE: only empty Features) */
  int64_t k, seen;   /* the value count of its first record; records holding values */
  int64_t present;   /* Example records that name it (also with an empty Feature) */
  int same;          /* every record holding it held k values */
  int64_t last;      /* the last record that had it, and what it had there: */
  int rec_kind;      /*   the kind (K_NONE: empty, absent for a dense feature) */
  int64_t rec_count; /*   the value count */
} kstat;

typedef struct {
  kstat *keys; /* in order of first appearance */
  size_t nkeys, kcap;
  size_t *slots; /* open addressing over keys: index + 1, 0 empty; cap a power of two */
  size_t cap;
  size_t *touched; /* the keys of the current record */
  size_t ntouched;
  int64_t rec; /* records added (1-based number of the current one) */
  int64_t bad; /* the index of the first record that is not an Example, or -1 */
  int nul_key;
} sample;

static uint64_t hash(const unsigned char *k, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 1099511628211ULL;
  return h;
}

static size_t slot_of(const sample *s, const unsigned char *k, size_t n) {
  size_t j = hash(k, n) & (s->cap - 1);
  for (; s->slots[j]; j = (j + 1) & (s->cap - 1)) {
    const kstat *e = &s->keys[s->slots[j] - 1];
    if (e->klen == n && memcmp(e->key, k, n) == 0) break;
  }
  return j;
}

/* The index of key k[0..n), added if new. */
static size_t lookup(sample *s, const unsigned char *k, size_t n) {
  if (2 * (s->nkeys + 1) > s->cap) { /* at most half full */
    free(s->slots);
    s->cap = s->cap ? 2 * s->cap : 64;
    s->slots = xcalloc(s->cap, sizeof *s->slots);
    for (size_t i = 0; i < s->nkeys; i++)
      s->slots[slot_of(s, (unsigned char *)s->keys[i].key, s->keys[i].klen)] = i + 1;
  }
  size_t j = slot_of(s, k, n);
  if (s->slots[j]) return s->slots[j] - 1;
  if (s->nkeys == s->kcap) {
    s->kcap = s->kcap ? 2 * s->kcap : 64;
    s->keys = xrealloc(s->keys, s->kcap * sizeof *s->keys);
  }
  kstat *e = &s->keys[s->nkeys];
  memset(e, 0, sizeof *e);
  e->key = xstrndup((const char *)k, n);
  e->klen = n;
  e->last = -1;
  s->slots[j] = ++s->nkeys;
  return s->nkeys - 1;
}

static void on_entry(void *ctx, const unsigned char *k, size_t n, int kind, int64_t count) {
  sample *s = ctx;
  if (memchr(k, 0, n)) { /* cannot be requested */
    s->nul_key = 1;
    return;
  }
  size_t i = lookup(s, k, n);
  kstat *e = &s->keys[i];
  if (e->last != s->rec) {
    e->last = s->rec;
    e->rec_kind = kind;
    e->rec_count = count;
    s->touched[s->ntouched++] = i;
  } else if (kind != K_NONE) { /* the last non-empty entry wins (dense keys, spec §2.3) */
    e->rec_kind = kind;
    e->rec_count = count;
  }
}

/* Adds record r[0..n) to the sample; 0 when it is not an Example (nothing is counted then). */
static int sample_record(sample *s, const char *r, size_t n) {
  s->ntouched = 0;
  s->rec++;
  /* a map entry takes at least 6 bytes: a record touches at most n / 6 keys */
  s->touched = xrealloc(s->touched, (n / 6 + 1) * sizeof *s->touched);
  if (!scan_example((const unsigned char *)r, n, on_entry, s)) {
    if (s->bad < 0) s->bad = s->rec - 1;
    return 0;
  }
  for (size_t i = 0; i < s->ntouched; i++) {
    kstat *e = &s->keys[s->touched[i]];
    e->present++;
    if (e->rec_kind == K_NONE) continue; /* an empty Feature: absent for a dense key */
    if (e->kind == K_NONE) e->kind = e->rec_kind;
    if (e->seen++ == 0) {
      e->k = e->rec_count;
      e->same = 1;
    } else if (e->rec_count != e->k) {
      e->same = 0;
    }
  }
  return 1;
}

/* Reads up to INFER_ROWS records of the first file (a TFRecord reader; a standard-input prefix
 * ends silently where it was cut) into s: *nread records, *nok of them Examples. */
static void sample_file(app *a, sample *s, int64_t *nread, int64_t *nok) {
  const input_file *f = &a->files[0];
  const char *path = f->sample_path ? f->sample_path : f->path;
  tfq_status *st = tfq_status_new();
  tfq_reader_options *ro = NULL;
  tfq_reader *r = NULL;
  tfq_queue *q = NULL;
  *nread = *nok = 0;
  if (!st || tfq_reader_options_new(&ro, st)) die_oom();
  tfq_reader_options_set_compression(ro, f->comp);
  tfq_reader_options_set_tf_compat_truncation(ro, f->sample_truncated);
  if (tfq_reader_new(TFQ_READER_TFRECORD, ro, &r, st) || unit_queue(path, strlen(path), &q, st))
    goto done; /* the pipeline reports what is wrong */
  while (*nread < INFER_ROWS) {
    tfq_tensor *keys = NULL, *values = NULL;
    if (tfq_reader_read_up_to(r, q, INFER_ROWS - *nread, &keys, &values, tfq_coord_cancel(a->coord),
                              st))
      break; /* the end, or an error the pipeline reports properly */
    for (int64_t i = 0; i < tfq_tensor_num_elements(values); i++) {
      size_t len;
      const char *v = tfq_tensor_string(values, i, &len);
      ++*nread;
      *nok += sample_record(s, v, len);
    }
    tfq_tensor_free(keys);
    tfq_tensor_free(values);
  }
done:
  tfq_queue_free(q);
  tfq_reader_free(r);
  tfq_reader_options_free(ro);
  tfq_status_free(st);
}

static int key_cmp(const void *x, const void *y) {
  const kstat *a = *(kstat *const *)x, *b = *(kstat *const *)y;
  int c = memcmp(a->key, b->key, a->klen < b->klen ? a->klen : b->klen);
  return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

/* Appends a feature name for --features: as is, or in double quotes when it holds a character
 * of the SPEC syntax (or is empty, or starts or ends with a blank). */
static void put_name(sbuf *b, const char *s) {
  size_t n = strlen(s);
  int q = !n || strpbrk(s, ",:[]=\"") || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' ||
          s[n - 1] == '\t';
  if (!q) {
    sb_puts(b, s);
    return;
  }
  sb_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"') sb_putc(b, '"');
    sb_putc(b, *s);
  }
  sb_putc(b, '"');
}

/* The columns as a --features SPEC. */
static void features_text(const cat_example *ex, sbuf *b) {
  for (size_t i = 0; i < ex->ncols; i++) {
    const ex_col *c = &ex->cols[i];
    if (i) sb_puts(b, ", ");
    put_name(b, c->name);
    sb_puts(b, c->dtype == TFQ_FLOAT ? ":float32" : c->dtype == TFQ_INT64 ? ":int64" : ":string");
    if (c->kind == TFQ_EXAMPLE_VAR_LEN) sb_puts(b, "[*]");
    if (c->kind == TFQ_EXAMPLE_FIXED_LEN && c->rank) sb_printf(b, "[%" PRId64 "]", c->dims[0]);
  }
}

int example_columns(app *a, int need_sample, tfq_status *st) {
  (void)st;
  if (a->ex) return EXIT_OK;
  sample s;
  memset(&s, 0, sizeof s);
  s.bad = -1;
  int64_t nread = 0, nok = 0;
  if (need_sample) sample_file(a, &s, &nread, &nok);
  kstat **use = xcalloc(s.nkeys, sizeof *use);
  size_t nuse = 0;
  for (size_t i = 0; i < s.nkeys; i++)
    if (s.keys[i].present) use[nuse++] = &s.keys[i];
  int rc = EXIT_OK;
  if (a->examples == EX_DETECT && (nok < nread || !nuse)) {
    /* Not Examples: the records are printed as bytes.  Say so when some of them were. */
    if (nuse && !a->o.quiet)
      warnx_("%s: record %" PRId64
             " is not a tf.train.Example: printing the records' bytes (-f example parses "
             "them)",
             a->files[0].display, s.bad);
    a->examples = EX_NONE;
  } else if (!nuse) {
    warnx_("no features to infer from the first records of %s: give --features",
           a->files[0].display);
    fprintf(stderr, "Try '%s --help' for more information.\n", g_prog);
    rc = EXIT_USAGE;
  } else {
    a->examples = EX_FORCE;
    qsort(use, nuse, sizeof *use, key_cmp);
    cat_example *ex = a->ex = xcalloc(1, sizeof *ex);
    for (size_t i = 0; i < nuse; i++) {
      const kstat *k = use[i];
      ex_col *c = add_col(ex);
      c->name = xstrdup(k->key);
      c->dtype = k->kind == K_FLOAT ? TFQ_FLOAT : k->kind == K_INT64 ? TFQ_INT64 : TFQ_STRING;
      c->kind = TFQ_EXAMPLE_VAR_LEN;
      if (k->kind != K_NONE && k->seen == nok && k->same) {
        c->kind = TFQ_EXAMPLE_FIXED_LEN;
        if (k->k != 1) {
          c->rank = 1;
          c->dims = xmalloc(sizeof *c->dims);
          c->dims[0] = k->k;
        }
      }
    }
    finish_columns(a, "inferred features");
    if (!a->o.quiet) {
      if (s.nul_key) warnx_("feature keys holding a NUL byte cannot be requested: left out");
      sbuf b = {0};
      features_text(ex, &b);
      warnx_("inferred --features '%s'", b.p);
      free(b.p);
    }
  }
  for (size_t i = 0; i < s.nkeys; i++) free(s.keys[i].key);
  free(s.keys);
  free(s.slots);
  free(s.touched);
  free(use);
  return rc;
}
