/* tf.train.Example input without features, and TFRecord input that may hold Examples, with
 * tfq-cat's rules (docs/tfq-cat.md, "tf.train.Example"; tools/cat_example.c), so that a
 * tfq_pipeline and tfq-cat detect and infer the same:
 *
 *   - the sample: the first PL_EXAMPLE_ROWS records (or infer_rows) of the first input file
 *     (after sharding by file; or the sample file), through a TFRecord reader with the
 *     pipeline's compression; a read error ends it;
 *   - detection (TFQ_FORMAT_TFRECORD_AUTO): the records are Examples when every sampled record
 *     scans as one (by the structural rules of TF's fast parser) and at least one names a
 *     feature; otherwise they are raw records;
 *   - inference: a key with the same value count k in every sampled Example is FixedLen, shape
 *     [] for k = 1 else [k], required (no default); any other key (also one that only ever has
 *     an empty Feature) VarLen; the dtype from its first non-empty list (string when none); keys
 *     holding a NUL byte, which cannot be requested, are left out.
 *
 * Also here: the features as a --features SPEC (tfq_pipeline_features_spec()), byte for byte the
 * line tfq-cat prints for inferred features. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline_internal.h"

/* tfq-cat's INFER_ROWS (tools/cat_app.h): the records the Example rules look at. */
#define PL_EXAMPLE_ROWS 100

/* ---- a scanner of serialized Examples -------------------------------------------------------
 * TF's fast parser's structural rules (spec tf1-example.md §2.2), enough to list the keys, their
 * list kinds and value counts, as tools/cat_example.c scans them.  Parsing proper is
 * tfq_parse_example's: a record this scanner misjudges fails there with TF's message. */

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

struct pl_sample;
static int on_entry(struct pl_sample *s, const unsigned char *k, size_t n, int kind, int64_t count);

/* Calls on_entry for each map entry of the serialized Example e[0..n), in wire order; returns 0
 * when the bytes are not an Example (by TF's structural rules) or a Feature does not parse, -1
 * out of memory, else 1. */
static int scan_example(const unsigned char *e, size_t n, struct pl_sample *s) {
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
        if (on_entry(s, k, kl, kind, count)) return -1;
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

/* ---- the sample ---- */

/* What the sample says about one key. */
typedef struct pl_kstat {
  char *key;
  size_t klen;
  int kind;          /* the first list kind seen (K_NONE: only empty Features) */
  int64_t k, seen;   /* the value count of its first record; records holding values */
  int64_t present;   /* Example records that name it (also with an empty Feature) */
  int same;          /* every record holding it held k values */
  int64_t last;      /* the last record that had it, and what it had there: */
  int rec_kind;      /*   the kind (K_NONE: empty, absent for a dense feature) */
  int64_t rec_count; /*   the value count */
} pl_kstat;

typedef struct pl_sample {
  pl_kstat *keys; /* in order of first appearance */
  size_t nkeys, kcap;
  size_t *slots; /* open addressing over keys: index + 1, 0 empty; cap a power of two */
  size_t cap;
  size_t *touched; /* the keys of the current record */
  size_t ntouched, tcap;
  int64_t rec;  /* records added (1-based number of the current one) */
  int64_t read; /* records read */
  int64_t ok;   /* of them Examples */
  int64_t bad;  /* the number (from 0) of the first that is not an Example, or -1 */
  int nul_key;  /* a key holding a NUL byte was left out */
} pl_sample;

static void sample_free(pl_sample *s) {
  for (size_t i = 0; i < s->nkeys; i++) tfq_free(s->keys[i].key);
  tfq_free(s->keys);
  tfq_free(s->slots);
  tfq_free(s->touched);
}

static uint64_t hash(const unsigned char *k, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 1099511628211ULL;
  return h;
}

static size_t slot_of(const pl_sample *s, const unsigned char *k, size_t n) {
  size_t j = hash(k, n) & (s->cap - 1);
  for (; s->slots[j]; j = (j + 1) & (s->cap - 1)) {
    const pl_kstat *e = &s->keys[s->slots[j] - 1];
    if (e->klen == n && memcmp(e->key, k, n) == 0) break;
  }
  return j;
}

/* The index of key k[0..n) in *out, added if new; -1 out of memory. */
static int lookup(pl_sample *s, const unsigned char *k, size_t n, size_t *out) {
  if (2 * (s->nkeys + 1) > s->cap) { /* at most half full */
    size_t cap = s->cap ? 2 * s->cap : 64;
    size_t *slots = tfq__calloc(cap, sizeof *slots);
    if (!slots) return -1;
    tfq_free(s->slots);
    s->slots = slots;
    s->cap = cap;
    for (size_t i = 0; i < s->nkeys; i++)
      s->slots[slot_of(s, (unsigned char *)s->keys[i].key, s->keys[i].klen)] = i + 1;
  }
  size_t j = slot_of(s, k, n);
  if (s->slots[j]) {
    *out = s->slots[j] - 1;
    return 0;
  }
  if (s->nkeys == s->kcap) {
    size_t kcap = s->kcap ? 2 * s->kcap : 64;
    pl_kstat *keys = tfq_realloc(s->keys, kcap * sizeof *keys);
    if (!keys) return -1;
    s->keys = keys;
    s->kcap = kcap;
  }
  pl_kstat *e = &s->keys[s->nkeys];
  memset(e, 0, sizeof *e);
  if (!(e->key = tfq_malloc(n + 1))) return -1;
  memcpy(e->key, k, n);
  e->key[n] = '\0';
  e->klen = n;
  e->last = -1;
  s->slots[j] = ++s->nkeys;
  *out = s->nkeys - 1;
  return 0;
}

/* One map entry of the current record; -1 out of memory. */
static int on_entry(pl_sample *s, const unsigned char *k, size_t n, int kind, int64_t count) {
  if (memchr(k, 0, n)) { /* cannot be requested: left out */
    s->nul_key = 1;
    return 0;
  }
  size_t i;
  if (lookup(s, k, n, &i)) return -1;
  pl_kstat *e = &s->keys[i];
  if (e->last != s->rec) {
    if (s->ntouched == s->tcap) {
      size_t tcap = s->tcap ? 2 * s->tcap : 64;
      size_t *t = tfq_realloc(s->touched, tcap * sizeof *t);
      if (!t) return -1;
      s->touched = t;
      s->tcap = tcap;
    }
    e->last = s->rec;
    e->rec_kind = kind;
    e->rec_count = count;
    s->touched[s->ntouched++] = i;
  } else if (kind != K_NONE) { /* the last non-empty entry wins (dense keys, spec §2.3) */
    e->rec_kind = kind;
    e->rec_count = count;
  }
  return 0;
}

/* Adds record r[0..n) to the sample (nothing is counted when it is not an Example); -1 out of
 * memory. */
static int sample_record(pl_sample *s, const char *r, size_t n) {
  s->ntouched = 0;
  s->rec++;
  s->read++;
  int ok = scan_example((const unsigned char *)r, n, s);
  if (ok == 0 && s->bad < 0) s->bad = s->rec - 1;
  if (ok <= 0) return ok;
  s->ok++;
  for (size_t i = 0; i < s->ntouched; i++) {
    pl_kstat *e = &s->keys[s->touched[i]];
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
  return 0;
}

/* Reads up to `rows` records of the sample source (the sample file, a prefix of a stream whose
 * compressed stream may end cut short, silently; else the first input file) into s.  A read
 * error ends the sample (the pipeline reports it when it reads the file): its status goes to
 * *rerr.  Only a sample file that cannot be found is an error here. */
static tfq_code read_sample(tfq_pipeline *p, int64_t rows, pl_sample *s, tfq_status *rerr,
                            tfq_status *st) {
  tfq_reader *r = NULL;
  tfq_queue *unit = NULL;
  tfq_code rc = tfq__pl_sample_reader(p, TFQ_READER_TFRECORD, &r, &unit, st);
  while (!rc && s->read < rows) {
    tfq_tensor *keys = NULL, *values = NULL;
    if (tfq_reader_read_up_to(r, unit, rows - s->read, &keys, &values, NULL, rerr)) {
      if (tfq__pl_oom(rerr)) rc = TFQ__OOM(st); /* not the end of the sample */
      break;
    }
    for (int64_t i = 0; !rc && i < tfq_tensor_num_elements(values); i++) {
      size_t len;
      const char *v = tfq_tensor_string(values, i, &len);
      if (sample_record(s, v, len)) rc = TFQ__OOM(st);
    }
    tfq_tensor_free(keys);
    tfq_tensor_free(values);
  }
  tfq_queue_free(unit);
  tfq_reader_free(r);
  return rc;
}

/* ---- inference ---- */

static int kstat_cmp(const void *x, const void *y) {
  const pl_kstat *a = *(const pl_kstat *const *)x, *b = *(const pl_kstat *const *)y;
  int c = memcmp(a->key, b->key, a->klen < b->klen ? a->klen : b->klen);
  return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

/* The features of the keys named in the sample, sorted by key, into a new config. */
static tfq_code infer_config(const pl_sample *s, tfq_example_config **out, tfq_status *st) {
  pl_kstat **use = tfq__calloc(s->nkeys ? s->nkeys : 1, sizeof *use);
  if (!use) return TFQ__OOM(st);
  size_t nuse = 0;
  for (size_t i = 0; i < s->nkeys; i++)
    if (s->keys[i].present) use[nuse++] = &s->keys[i];
  qsort(use, nuse, sizeof *use, kstat_cmp);
  tfq_example_config *cfg = NULL;
  tfq_code rc = tfq_example_config_new(&cfg, st);
  for (size_t i = 0; !rc && i < nuse; i++) {
    const pl_kstat *k = use[i];
    tfq_dtype dt = k->kind == K_FLOAT ? TFQ_FLOAT : k->kind == K_INT64 ? TFQ_INT64 : TFQ_STRING;
    if (k->kind != K_NONE && k->seen == s->ok && k->same)
      rc = tfq_example_config_add_fixed_len(cfg, k->key, dt, &k->k, k->k != 1, NULL, st);
    else
      rc = tfq_example_config_add_var_len(cfg, k->key, dt, st);
  }
  tfq_free(use);
  if (rc) {
    tfq_example_config_free(cfg);
    return rc;
  }
  *out = cfg;
  return TFQ_OK;
}

/* Keys named by the sample's Examples (the features there are to infer). */
static size_t keys_named(const pl_sample *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->nkeys; i++) n += s->keys[i].present > 0;
  return n;
}

tfq_code tfq__pl_infer_features(tfq_pipeline *p, tfq_status *st) {
  tfq_pipeline_options *o = &p->o;
  if (o->infer_rows == 0 || o->infer_rows < -1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "infer_rows must be >= 1 (or -1, the default), not %lld",
                          (long long)o->infer_rows);
  pl_sample s;
  memset(&s, 0, sizeof s);
  s.bad = -1;
  tfq_status rerr;
  tfq__status_ok(&rerr);
  tfq_code rc = read_sample(p, o->infer_rows > 0 ? o->infer_rows : PL_EXAMPLE_ROWS, &s, &rerr, st);
  size_t named = keys_named(&s);
  if (!rc && o->format == TFQ_FORMAT_TFRECORD_AUTO) {
    /* tfq-cat's detection: every sampled record an Example, and a feature named */
    o->format = s.ok == s.read && named ? TFQ_FORMAT_EXAMPLES : TFQ_FORMAT_TFRECORD;
    if (o->format == TFQ_FORMAT_TFRECORD && named) p->not_example = s.bad; /* tfq-cat's note */
    if (o->format == TFQ_FORMAT_TFRECORD || o->features) { /* raw records, or features given */
      sample_free(&s);
      return TFQ_OK;
    }
  }
  if (!rc && !named) {
    const char *path = p->files[0].path;
    if (tfq_status_code(&rerr) != TFQ_OK && tfq_status_code(&rerr) != TFQ_OUT_OF_RANGE)
      rc = tfq_status_set(st, tfq_status_code(&rerr), "cannot infer the features of %s: %s", path,
                          tfq_status_message(&rerr));
    else
      rc = tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "no features to infer from the first records of %s: give the "
                          "features (tfq_pipeline_options_set_features)",
                          path);
  }
  if (!rc) rc = infer_config(&s, &p->features_cfg, st);
  if (!rc) o->features = p->features_cfg;
  if (!rc) p->nul_keys = s.nul_key;
  sample_free(&s);
  return rc;
}

/* ---- the features as a --features SPEC ---- */

/* s[0..n) as is, or in double quotes ('"' doubled) when it holds a character of the SPEC syntax
 * `special`, or `empty_q` and it is empty, or it starts or ends with a blank (tfq-cat's
 * put_name; the same rule for string defaults, whose special characters are ',' and '"'). */
static void put_token(pl_text *b, const char *s, size_t n, const char *special, int empty_q) {
  int q = n ? s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t' : empty_q;
  for (size_t i = 0; !q && i < n; i++) q = strchr(special, s[i]) != NULL;
  if (!q) {
    text_add(b, s, n);
    return;
  }
  text_add(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') text_add(b, "\"", 1);
    text_add(b, s + i, 1);
  }
  text_add(b, "\"", 1);
}

/* "=DEFAULT" for a FixedLen default: one value (the syntax repeats it to fill the shape); a
 * default whose values differ, which the syntax cannot write, gives its first one. */
static void put_default(pl_text *b, const tfq_tensor *d) {
  if (!d || tfq_tensor_num_elements(d) == 0) return; /* required */
  char num[64];
  text_add(b, "=", 1);
  switch (tfq_tensor_dtype(d)) {
    case TFQ_FLOAT:
      snprintf(num, sizeof num, "%.9g", ((const float *)tfq_tensor_cdata(d))[0]);
      break;
    case TFQ_INT64:
      snprintf(num, sizeof num, "%" PRId64, ((const int64_t *)tfq_tensor_cdata(d))[0]);
      break;
    default: {
      size_t len;
      const char *s = tfq_tensor_string(d, 0, &len);
      const char *nul = memchr(s, '\0', len); /* a C string: cut at a NUL byte */
      put_token(b, s, nul ? (size_t)(nul - s) : len, ",\"", 1);
      return;
    }
  }
  text_puts(b, num);
}

tfq_code tfq__pl_features_spec(tfq_pipeline *p, tfq_status *st) {
  const tfq_example_config *cfg = p->o.features;
  pl_text b = {0};
  char num[32];
  text_add(&b, "", 0);
  for (size_t i = 0; i < tfq_example_config_size(cfg); i++) {
    const char *key = tfq_example_config_key(cfg, i);
    tfq_dtype dt = tfq_example_config_dtype(cfg, i);
    tfq_example_kind kind = tfq_example_config_kind(cfg, i);
    int rank = tfq_example_config_rank(cfg, i);
    const int64_t *dims = tfq_example_config_dims(cfg, i);
    if (i) text_puts(&b, ", ");
    put_token(&b, key, strlen(key), ",:[]=\"", 1);
    text_puts(&b, dt == TFQ_FLOAT ? ":float32" : dt == TFQ_INT64 ? ":int64" : ":string");
    if (kind == TFQ_EXAMPLE_VAR_LEN) text_puts(&b, "[*]");
    if (kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) text_puts(&b, "[?");
    for (int d = kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE; kind != TFQ_EXAMPLE_VAR_LEN && d < rank;
         d++) {
      snprintf(num, sizeof num, "%s%" PRId64, d ? "," : "[", dims[d]);
      text_puts(&b, num);
    }
    if (kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE || (kind == TFQ_EXAMPLE_FIXED_LEN && rank > 0))
      text_puts(&b, "]");
    if (kind == TFQ_EXAMPLE_FIXED_LEN) put_default(&b, tfq_example_config_default(cfg, i));
  }
  if (b.oom) {
    tfq_free(b.p);
    return TFQ__OOM(st);
  }
  tfq_free(p->o.columns);
  p->o.columns = b.p;
  return TFQ_OK;
}

/* ---- accessors ---- */

tfq_format tfq_pipeline_format(const tfq_pipeline *p) { return p->o.format; }

const char *tfq_pipeline_features_spec(const tfq_pipeline *p) {
  if (!p || p->o.format != TFQ_FORMAT_EXAMPLES) return NULL;
  return p->o.columns;
}

int64_t tfq_pipeline_first_non_example(const tfq_pipeline *p) { return p ? p->not_example : -1; }

int tfq_pipeline_features_nul_keys(const tfq_pipeline *p) { return p ? p->nul_keys : 0; }
