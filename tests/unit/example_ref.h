/* A deliberately simple reference for tf.train.Example parsing (tests only), written from
 * spec/tf1-example.md in the most direct way: the Example is decoded into a list of entries by a
 * plain recursive-descent reader, every requested list is decoded into a full vector, and the
 * outputs are assembled value by value.  No speed tricks, no shared code with src/example.
 * Used by tests/unit/test_example.c (randomized comparison) and tests/fuzz/fuzz_example.c.
 *
 * Also: a builder for serialized Examples (packed or unpacked lists, raw Feature bytes). */
#ifndef TFQ_TEST_EXAMPLE_REF_H
#define TFQ_TEST_EXAMPLE_REF_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

/* ---- a byte buffer and the Example builder ------------------------------------------------ */

typedef struct wb {
  uint8_t *p;
  size_t n, cap;
} wb;

static inline void wb_put(wb *b, const void *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  if (n) memcpy(b->p + b->n, s, n);
  b->n += n;
}
static inline void wb_byte(wb *b, uint8_t c) { wb_put(b, &c, 1); }
static inline void wb_varint(wb *b, uint64_t v) {
  while (v >= 0x80) {
    wb_byte(b, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  wb_byte(b, (uint8_t)v);
}
/* tag, varint length, bytes */
static inline void wb_ld(wb *b, uint8_t tag, const void *s, size_t n) {
  wb_byte(b, tag);
  wb_varint(b, n);
  wb_put(b, s, n);
}
static inline void wb_free(wb *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* Feature bytes: float_list, int64_list (packed or not), bytes_list. */
static inline wb feat_floats(const float *v, size_t n, int packed) {
  wb list = {0}, f = {0};
  if (packed && n) {
    wb_ld(&list, 0x0a, v, 4 * n);
  } else {
    for (size_t i = 0; i < n; i++) {
      wb_byte(&list, 0x0d);
      wb_put(&list, &v[i], 4);
    }
  }
  wb_ld(&f, 0x12, list.p, list.n);
  wb_free(&list);
  return f;
}
static inline wb feat_ints(const int64_t *v, size_t n, int packed) {
  wb list = {0}, chunk = {0}, f = {0};
  for (size_t i = 0; i < n; i++) {
    if (!packed) wb_byte(&list, 0x08);
    wb_varint(packed ? &chunk : &list, (uint64_t)v[i]);
  }
  if (packed && n) wb_ld(&list, 0x0a, chunk.p, chunk.n);
  wb_ld(&f, 0x1a, list.p, list.n);
  wb_free(&list);
  wb_free(&chunk);
  return f;
}
static inline wb feat_bytes(const char *const *v, const size_t *lens, size_t n) {
  wb list = {0}, f = {0};
  for (size_t i = 0; i < n; i++) wb_ld(&list, 0x0a, v[i], lens ? lens[i] : strlen(v[i]));
  wb_ld(&f, 0x0a, list.p, list.n);
  wb_free(&list);
  return f;
}
/* Appends a map entry (key, Feature bytes) to a Features body. */
static inline void ex_entry(wb *features, const char *key, size_t klen, const wb *feature) {
  wb e = {0};
  wb_ld(&e, 0x0a, key, klen);
  wb_ld(&e, 0x12, feature->p, feature->n);
  wb_ld(features, 0x0a, e.p, e.n);
  wb_free(&e);
}
/* The Example: field 1 holding the Features body. */
static inline wb ex_wrap(const wb *features) {
  wb x = {0};
  wb_ld(&x, 0x0a, features->p, features->n);
  return x;
}

/* ---- the reference configuration -------------------------------------------------------- */

typedef struct ref_val {
  int64_t i;
  uint32_t f; /* float bits */
  const uint8_t *s;
  size_t n;
} ref_val;

typedef struct ref_feature {
  const char *key;
  tfq_example_kind kind;
  tfq_dtype dtype;
  int rank;        /* FixedLen shape, FixedLenSequence row shape, Sparse: number of index keys */
  int64_t dims[4]; /* the shape (Sparse: size) */
  int has_def;     /* FixedLen: a default of prod(shape) values; FixedLenSequence: padding */
  ref_val def[16];
  const char *index_keys[3];
  const char *value_key;
  int already_sorted;
} ref_feature;

typedef struct ref_out {
  int sparse;
  tfq_dtype dtype;
  int rank; /* dense: the output's rank and dims */
  int64_t dims[8];
  ref_val *v;
  size_t nv;
  int64_t *ix; /* sparse: rows x cols */
  size_t rows, cols;
  int64_t shape[8];
  int shape_n;
} ref_out;

typedef struct ref_result {
  int ok;
  char err[4096]; /* the error text (may hold raw input bytes) */
  size_t errlen;
  int64_t record;
  size_t n;
  ref_out out[16];
} ref_result;

/* ---- the wire, read directly from the spec -------------------------------------------------- */

typedef struct rr {
  const uint8_t *p, *end;
} rr;

/* varint: at most 10 bytes, bits beyond 64 dropped. */
static inline int rr_varint(rr *r, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 10; i++) {
    if (r->p >= r->end) return 0;
    uint8_t b = *r->p++;
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}
/* a scope of `len` bytes: ends at its declared end or the enclosing end, whichever is first */
static inline rr rr_scope(const rr *r, uint64_t len) {
  uint32_t l = (uint32_t)len;
  rr s = {r->p, (size_t)(r->end - r->p) < l ? r->end : r->p + l};
  return s;
}

typedef struct ref_entry {
  const uint8_t *key, *val;
  size_t klen, vlen;
} ref_entry;

/* Decodes the entries of an Example, in wire order; 0 if the structure is broken. */
static inline int ref_scan(const uint8_t *p, size_t len, ref_entry **out, size_t *n) {
  rr ex = {p, p + len};
  size_t cap = 0;
  *out = NULL;
  *n = 0;
  while (ex.p < ex.end) {
    uint64_t tag, v;
    if (*ex.p == 0x0a) { /* Features (this exact byte only) */
      ex.p++;
      if (!rr_varint(&ex, &v)) return 0;
      rr fs = rr_scope(&ex, v);
      while (fs.p < fs.end) {
        if (*fs.p++ != 0x0a) return 0;
        if (!rr_varint(&fs, &v)) return 0;
        rr en = rr_scope(&fs, v);
        ref_entry e = {(const uint8_t *)"", (const uint8_t *)"", 0, 0};
        for (int k = 0; k < 2; k++) { /* exactly two fields, key and/or value */
          if (!rr_varint(&en, &tag)) return 0;
          if ((uint32_t)tag != 0x0a && (uint32_t)tag != 0x12) return 0;
          if (!rr_varint(&en, &v) || (uint32_t)v > (size_t)(en.end - en.p)) return 0;
          if ((uint32_t)tag == 0x0a) {
            e.key = en.p;
            e.klen = (uint32_t)v;
          } else {
            e.val = en.p;
            e.vlen = (uint32_t)v;
          }
          en.p += (uint32_t)v;
        }
        if (en.p != en.end) return 0;
        fs.p = en.end;
        if (*n == cap) {
          cap = cap ? cap * 2 : 8;
          *out = realloc(*out, cap * sizeof **out);
        }
        (*out)[(*n)++] = e;
      }
      ex.p = fs.end;
      continue;
    }
    if (!rr_varint(&ex, &tag)) return 0; /* unknown field */
    switch (tag & 7) {
      case 0:
        if (!rr_varint(&ex, &v)) return 0;
        break;
      case 1:
      case 5: {
        size_t k = (tag & 7) == 1 ? 8 : 4;
        if ((size_t)(ex.end - ex.p) < k) return 0;
        ex.p += k;
        break;
      }
      case 2:
        if (!rr_varint(&ex, &v)) return 0;
        /* (verified on the 2.21 wheel) a length >= 2^31 skips nothing; longer than the rest
         * skips to the end */
        if ((uint32_t)v < 0x80000000u) ex.p = rr_scope(&ex, v).end;
        break;
      default: return 0;
    }
  }
  return 1;
}

/* A list decoded in full: kind 1 bytes, 2 float, 3 int64.  Returns the count or -1.
 * `fixed_cap` >= 0: TF's FixedLen reading (packed floats need only min(n, cap) values present,
 * and a bytes list fails once more than cap items start). */
static inline long ref_list(int kind, const uint8_t *p, const uint8_t *end, ref_val **out,
                            long fixed_cap) {
  rr r = {p, end};
  uint64_t v;
  if (!rr_varint(&r, &v)) return -1;
  rr l = rr_scope(&r, v);
  size_t n = 0, cap = (size_t)(end - p) + 4;
  *out = calloc(cap, sizeof **out);
  if (kind == 1) {
    while (l.p < l.end) {
      if (*l.p++ != 0x0a || !rr_varint(&l, &v)) return -1;
      if (fixed_cap >= 0 && n == (size_t)fixed_cap) return -1;
      if ((uint32_t)v > (size_t)(l.end - l.p)) return -1;
      (*out)[n].s = l.p;
      (*out)[n++].n = (uint32_t)v;
      l.p += (uint32_t)v;
    }
    return (long)n;
  }
  if (l.p == l.end) return 0;
  if (*l.p == 0x0a) { /* one packed chunk, the rest ignored */
    l.p++;
    if (!rr_varint(&l, &v)) return -1;
    rr c = rr_scope(&l, v);
    if (kind == 2) {
      size_t cnt = (uint32_t)v / 4;
      size_t need = fixed_cap >= 0 && (size_t)fixed_cap < cnt ? (size_t)fixed_cap : cnt;
      if (need * 4 > (size_t)(c.end - c.p)) return -1;
      for (size_t i = 0; i < need; i++) memcpy(&(*out)[i].f, c.p + 4 * i, 4);
      return (long)cnt;
    }
    while (c.p < c.end) {
      if (!rr_varint(&c, &v)) return -1;
      (*out)[n++].i = (int64_t)v;
    }
    return (long)n;
  }
  uint8_t item = kind == 2 ? 0x0d : 0x08;
  if (*l.p != item) return -1;
  while (l.p < l.end) {
    if (*l.p++ != item) return -1;
    if (kind == 2) {
      if ((size_t)(l.end - l.p) < 4) return -1;
      memcpy(&(*out)[n++].f, l.p, 4);
      l.p += 4;
    } else {
      if (!rr_varint(&l, &v)) return -1;
      (*out)[n++].i = (int64_t)v;
    }
  }
  return (long)n;
}

/* ---- the reference parse ------------------------------------------------------------------ */

static inline void ref_err(ref_result *r, int64_t rec, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof r->err, fmt, ap);
  va_end(ap);
  r->errlen = strlen(r->err);
  r->ok = 0;
  r->record = rec;
}

static inline int ref_kind(tfq_dtype dt) { return dt == TFQ_STRING ? 1 : dt == TFQ_FLOAT ? 2 : 3; }
static inline const char *ref_kname(int k) {
  return k == 1 ? "string" : k == 2 ? "float" : "int64";
}
static inline void ref_shape(char *b, size_t cap, const int64_t *d, int n, int unknown_first) {
  size_t at = (size_t)snprintf(b, cap, "[");
  if (unknown_first) at += (size_t)snprintf(b + at, cap - at, "?%s", n ? "," : "");
  for (int i = 0; i < n; i++)
    at += (size_t)snprintf(b + at, cap - at, "%s%lld", i ? "," : "", (long long)d[i]);
  snprintf(b + at, cap - at, "]");
}

/* One requested key: its kind of reading and, per example, its values. */
typedef struct ref_slot {
  const char *key;
  int type; /* 0 FixedLen, 1 FixedLenSequence, 2 VarLen */
  tfq_dtype dtype;
  const ref_feature *f;
  int64_t stride;
  ref_val **v; /* per example */
  size_t *n;
  int *taken;
} ref_slot;

static inline int ref_cmp_key(const void *a, const void *b) {
  return strcmp(((const ref_feature *)a)->key, ((const ref_feature *)b)->key);
}

static inline void ref_free(ref_result *r) {
  for (size_t i = 0; i < r->n; i++) {
    free(r->out[i].v);
    free(r->out[i].ix);
  }
  r->n = 0;
}

/* parse_example (single == 0, B records) or parse_single_example (single, B == 1).  `fs` is
 * sorted by key in place.  names: NULL or B strings. */
static inline void ref_parse(ref_feature *fs, size_t nf, const uint8_t *const *recs,
                             const size_t *lens, int64_t B, const char *const *names, int single,
                             ref_result *r) {
  memset(r, 0, sizeof *r);
  r->ok = 1;
  r->record = -1;
  qsort(fs, nf, sizeof *fs, ref_cmp_key);
  ref_slot sl[64];
  size_t ns = 0;
  for (size_t i = 0; i < nf; i++) /* dense keys first, in key order */
    if (fs[i].kind == TFQ_EXAMPLE_FIXED_LEN || fs[i].kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) {
      int64_t st = 1;
      for (int d = 0; d < fs[i].rank; d++) st *= fs[i].dims[d];
      sl[ns++] = (ref_slot){fs[i].key,   fs[i].kind == TFQ_EXAMPLE_FIXED_LEN ? 0 : 1,
                            fs[i].dtype, &fs[i],
                            st,          NULL,
                            NULL,        NULL};
    }
  for (size_t i = 0; i < nf; i++) { /* then every key read as VarLen, once */
    const char *keys[4];
    tfq_dtype dts[4];
    int k = 0;
    if (fs[i].kind == TFQ_EXAMPLE_VAR_LEN) {
      keys[k] = fs[i].key;
      dts[k++] = fs[i].dtype;
    } else if (fs[i].kind == TFQ_EXAMPLE_SPARSE) {
      for (int j = 0; j < fs[i].rank; j++) {
        keys[k] = fs[i].index_keys[j];
        dts[k++] = TFQ_INT64;
      }
      keys[k] = fs[i].value_key;
      dts[k++] = fs[i].dtype;
    }
    for (int j = 0; j < k; j++) {
      size_t s = 0;
      while (s < ns && strcmp(sl[s].key, keys[j]) != 0) s++;
      if (s == ns) sl[ns++] = (ref_slot){keys[j], 2, dts[j], NULL, 1, NULL, NULL, NULL};
    }
  }
  for (size_t s = 0; s < ns; s++) {
    sl[s].v = calloc((size_t)B + 1, sizeof *sl[s].v);
    sl[s].n = calloc((size_t)B + 1, sizeof *sl[s].n);
    sl[s].taken = calloc((size_t)B + 1, sizeof *sl[s].taken);
  }
  /* TF's minibatches, for the count in the FixedLenSequence stride message */
  int64_t nmb = 0, bytes = 0;
  for (int64_t e = 0; e < B; e++) {
    if (bytes == 0) nmb++;
    bytes += (int64_t)lens[e] + 1;
    if (bytes > 50000) bytes = 0;
  }
  if (nmb > 64) nmb = 64;
  if (nmb < (B < 8 ? B : 8)) nmb = B < 8 ? B : 8;
  for (int64_t e = 0; e < B && r->ok; e++) {
    int64_t mb_first = 0;
    for (int64_t m = 0; m < nmb; m++)
      if (B * m / nmb <= e) mb_first = B * m / nmb;
    char name[1024];
    snprintf(name, sizeof name, "%s", names ? names[e] : "<unknown>");
    ref_entry *en;
    size_t nen;
    if (!ref_scan(recs[e], lens[e], &en, &nen)) {
      int h = snprintf(r->err, sizeof r->err, "Could not parse example input, value: '");
      size_t c = lens[e] < sizeof r->err - (size_t)h - 2 ? lens[e] : sizeof r->err - (size_t)h - 2;
      memcpy(r->err + h, recs[e], c);
      r->err[h + c] = '\'';
      r->errlen = (size_t)h + c + 1;
      r->ok = 0;
      r->record = e;
      free(en);
      break;
    }
    char pre[1200];
    for (size_t q = nen; q-- > 0 && r->ok;) {
      size_t s = 0;
      while (s < ns &&
             (strlen(sl[s].key) != en[q].klen || memcmp(sl[s].key, en[q].key, en[q].klen)))
        s++;
      if (s == ns) continue;
      ref_slot *x = &sl[s];
      int kind = 0;
      if (en[q].vlen) {
        kind = en[q].val[0] == 0x0a ? 1 : en[q].val[0] == 0x12 ? 2 : en[q].val[0] == 0x1a ? 3 : -1;
        if (kind < 0) {
          ref_err(r, e, "Unsupported datatype.");
          break;
        }
      }
      if (kind == 0 && (x->type != 2 || single)) continue; /* empty Feature: absent */
      if (x->taken[e]) continue;                           /* the last entry won */
      x->taken[e] = 1;
      if (single)
        snprintf(pre, sizeof pre, "Key: %s.  ", x->key);
      else
        snprintf(pre, sizeof pre, "Name: %s, Key: %s, Index: %lld.  ", name, x->key, (long long)e);
      if (kind && kind != ref_kind(x->dtype)) {
        if (x->type == 2)
          ref_err(r, e, "%sData types don't match. Expected type: %s, Actual type: %s", pre,
                  ref_kname(ref_kind(x->dtype)), ref_kname(kind));
        else
          ref_err(r, e, "%sData types don't match. Data type: %s but expected type: %s", pre,
                  ref_kname(kind), ref_kname(ref_kind(x->dtype)));
        break;
      }
      if (!kind) continue;
      static const char *const ln[] = {"", "bytes_list", "float_list", "int64_list"};
      static const char *const vn[] = {"", "bytes", "float", "int64"};
      ref_val *vals = NULL;
      long cnt = ref_list(kind, en[q].val + 1, en[q].val + en[q].vlen, &vals,
                          x->type == 0 ? (long)x->stride : -1);
      if (cnt < 0) {
        free(vals);
        if (!single)
          ref_err(r, e, "%sCan't parse serialized Example.", pre);
        else if (x->type != 0 && kind == 1)
          ref_err(r, e,
                  "%sCan't parse serialized Example: Could not get num elements in bytes_list.",
                  pre);
        else
          ref_err(r, e, "%sCan't parse serialized Example: Parsing %s failed.", pre, ln[kind]);
        break;
      }
      x->v[e] = vals;
      x->n[e] = (size_t)cnt;
      if (x->type == 0 && cnt != x->stride) {
        char sh[256];
        ref_shape(sh, sizeof sh, x->f->dims, x->f->rank, 0);
        if (single)
          ref_err(r, e, "%sCan't parse serialized Example: Some %s slice was not parsed.", pre,
                  ln[kind]);
        else
          ref_err(r, e, "%sNumber of %s values != expected.  Values size: %ld but output shape: %s",
                  pre, vn[kind], cnt, sh);
        break;
      }
      if (x->type == 1) {
        if (single && cnt % x->stride) {
          ref_err(r, e,
                  "Error while parsing feature with key %s: number of elements should be "
                  "divisible by %lld, found %ld instead",
                  x->key, (long long)x->stride, cnt);
          break;
        }
        size_t seen = 0;
        for (int64_t k = mb_first; k <= e; k++) seen += x->n[k];
        if (!single && seen % (size_t)x->stride) {
          char sh[256];
          ref_shape(sh, sizeof sh, x->f->dims, x->f->rank, 1);
          ref_err(r, e,
                  "%sNumber of %s values is not a multiple of stride length. Saw %zu values "
                  "but output shape is: %s",
                  pre, vn[kind], seen, sh);
          break;
        }
      }
    }
    free(en);
    for (size_t s = 0; s < ns && r->ok; s++) { /* missing FixedLen keys, in key order */
      if (sl[s].type != 0 || sl[s].taken[e]) continue;
      if (!sl[s].f->has_def) {
        if (single)
          ref_err(r, e, "Feature: %s (data type: %s) is required but could not be found.",
                  sl[s].key, ref_kname(ref_kind(sl[s].dtype)));
        else
          ref_err(r, e, "Name: %s, Feature: %s (data type: %s) is required but could not be found.",
                  name, sl[s].key, ref_kname(ref_kind(sl[s].dtype)));
        break;
      }
      sl[s].v[e] = calloc((size_t)sl[s].stride + 1, sizeof(ref_val));
      memcpy(sl[s].v[e], sl[s].f->def, (size_t)sl[s].stride * sizeof(ref_val));
      sl[s].n[e] = (size_t)sl[s].stride;
    }
  }
  /* outputs, one per feature in key order */
  for (size_t i = 0; i < nf && r->ok; i++) {
    const ref_feature *f = &fs[i];
    ref_out *o = &r->out[r->n++];
    o->dtype = f->dtype;
    if (f->kind == TFQ_EXAMPLE_FIXED_LEN || f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) {
      size_t s = 0;
      while (strcmp(sl[s].key, f->key) != 0) s++;
      int64_t stride = sl[s].stride, maxrows = 0;
      for (int64_t e = 0; e < B && f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE; e++)
        if ((int64_t)sl[s].n[e] / stride > maxrows) maxrows = (int64_t)sl[s].n[e] / stride;
      if (!single) o->dims[o->rank++] = B;
      if (f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) o->dims[o->rank++] = maxrows;
      for (int d = 0; d < f->rank; d++) o->dims[o->rank++] = f->dims[d];
      size_t per = (size_t)(f->kind == TFQ_EXAMPLE_FIXED_LEN ? stride : maxrows * stride);
      o->nv = (size_t)B * per;
      o->v = calloc(o->nv + 1, sizeof *o->v);
      for (int64_t e = 0; e < B; e++)
        for (size_t j = 0; j < per; j++) {
          ref_val pad = {0, 0, (const uint8_t *)"", 0};
          if (f->has_def) pad = f->def[0];
          o->v[(size_t)e * per + j] = j < sl[s].n[e] ? sl[s].v[e][j] : pad;
        }
      continue;
    }
    o->sparse = 1;
    if (f->kind == TFQ_EXAMPLE_VAR_LEN) {
      size_t s = 0;
      while (strcmp(sl[s].key, f->key) != 0) s++;
      size_t total = 0, mx = 0;
      for (int64_t e = 0; e < B; e++) {
        total += sl[s].n[e];
        if (sl[s].n[e] > mx) mx = sl[s].n[e];
      }
      o->cols = single ? 1 : 2;
      o->rows = total;
      o->ix = calloc(total * 2 + 1, sizeof *o->ix);
      o->v = calloc(total + 1, sizeof *o->v);
      size_t k = 0;
      for (int64_t e = 0; e < B; e++)
        for (size_t j = 0; j < sl[s].n[e]; j++) {
          if (!single) o->ix[k * 2] = e;
          o->ix[k * o->cols + o->cols - 1] = (int64_t)j;
          o->v[k++] = sl[s].v[e][j];
        }
      o->nv = total;
      if (!single) o->shape[o->shape_n++] = B;
      o->shape[o->shape_n++] = (int64_t)(single ? total : mx);
      continue;
    }
    /* SparseFeature: sparse_merge of the index lists and the value list */
    size_t si[3], sv = 0, nidx = (size_t)f->rank, cnt[3] = {0, 0, 0}, nval = 0;
    for (size_t j = 0; j < nidx; j++) {
      si[j] = 0;
      while (strcmp(sl[si[j]].key, f->index_keys[j]) != 0) si[j]++;
      for (int64_t e = 0; e < B; e++) cnt[j] += sl[si[j]].n[e];
    }
    while (strcmp(sl[sv].key, f->value_key) != 0) sv++;
    for (int64_t e = 0; e < B; e++) nval += sl[sv].n[e];
    for (size_t j = 1; j < nidx && r->ok; j++)
      if (cnt[j] != cnt[0])
        ref_err(r, -1,
                "ConcatOp : Dimension 0 in both shapes must be equal: shape[0] = [%zu,%d] "
                "vs. shape[%zu] = [%zu,1]",
                cnt[0], single ? 0 : 1, j + 1, cnt[j]);
    if (r->ok && !f->already_sorted && nval != cnt[0])
      ref_err(r, -1, "Number of elements in indices (%zu) and values (%zu) do not match", cnt[0],
              nval);
    if (!r->ok) break;
    size_t n = cnt[0];
    o->cols = nidx + (single ? 0 : 1);
    o->rows = n;
    o->ix = calloc(n * o->cols + 1, sizeof *o->ix);
    o->v = calloc(nval + 1, sizeof *o->v);
    o->nv = nval;
    size_t k = 0;
    for (int64_t e = 0; e < B; e++)
      for (size_t j = 0; j < sl[si[0]].n[e]; j++, k++)
        if (!single) o->ix[k * o->cols] = e;
    for (size_t j = 0; j < nidx; j++) {
      k = 0;
      for (int64_t e = 0; e < B; e++)
        for (size_t q = 0; q < sl[si[j]].n[e]; q++, k++)
          o->ix[k * o->cols + o->cols - nidx + j] = sl[si[j]].v[e][q].i;
    }
    k = 0;
    for (int64_t e = 0; e < B; e++)
      for (size_t q = 0; q < sl[sv].n[e]; q++) o->v[k++] = sl[sv].v[e][q];
    if (!f->already_sorted) /* insertion sort of the rows: stable */
      for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
          int64_t *x = o->ix + (b - 1) * o->cols, *y = o->ix + b * o->cols;
          size_t c = 0;
          while (c < o->cols && x[c] == y[c]) c++;
          if (c == o->cols || x[c] < y[c]) break;
          for (c = 0; c < o->cols; c++) {
            int64_t t = x[c];
            x[c] = y[c];
            y[c] = t;
          }
          ref_val t = o->v[b - 1];
          o->v[b - 1] = o->v[b];
          o->v[b] = t;
        }
    if (!single) o->shape[o->shape_n++] = B;
    for (size_t j = 0; j < nidx; j++) o->shape[o->shape_n++] = f->dims[j];
  }
  if (!r->ok) ref_free(r);
  for (size_t s = 0; s < ns; s++) {
    for (int64_t e = 0; e < B; e++) free(sl[s].v[e]);
    free(sl[s].v);
    free(sl[s].n);
    free(sl[s].taken);
  }
}

/* ---- comparing with tfq's result ----------------------------------------------------------- */

/* Compares one value of tensor t (flat index i) with v; 1 when equal (floats bitwise). */
static inline int ref_val_eq(const tfq_tensor *t, int64_t i, const ref_val *v) {
  switch (tfq_tensor_dtype(t)) {
    case TFQ_FLOAT: {
      uint32_t b;
      memcpy(&b, (const char *)tfq_tensor_cdata(t) + 4 * i, 4);
      return b == v->f;
    }
    case TFQ_INT64: return ((const int64_t *)tfq_tensor_cdata(t))[i] == v->i;
    default: {
      size_t n;
      const char *s = tfq_tensor_string(t, i, &n);
      return n == v->n && (n == 0 || memcmp(s, v->s, n) == 0);
    }
  }
}

/* Compares tfq's outcome (rc, st, res) with the reference; writes a description of the first
 * difference into why (or "") and returns 1 when they agree. */
static inline int ref_compare(const ref_result *r, tfq_code rc, const tfq_status *st,
                              const tfq_example_result *res, char *why, size_t cap) {
  why[0] = '\0';
  if (!r->ok) {
    const char *m = tfq_status_message(st);
    size_t want = strnlen(r->err, r->errlen); /* the message is a C string: cut at a NUL */
    if (want > 1023) want = 1023;
    if (rc != TFQ_INVALID_ARGUMENT || strlen(m) != want || memcmp(m, r->err, want) != 0) {
      snprintf(why, cap, "error expected: [%.*s], got rc %d [%s]", (int)want, r->err, (int)rc, m);
      return 0;
    }
    if (tfq_status_record(st) != r->record) {
      snprintf(why, cap, "record %lld, expected %lld", (long long)tfq_status_record(st),
               (long long)r->record);
      return 0;
    }
    return 1;
  }
  if (rc != TFQ_OK) {
    snprintf(why, cap, "expected success, got rc %d [%s]", (int)rc, tfq_status_message(st));
    return 0;
  }
  if (tfq_example_result_size(res) != r->n) {
    snprintf(why, cap, "%zu outputs, expected %zu", tfq_example_result_size(res), r->n);
    return 0;
  }
  for (size_t i = 0; i < r->n; i++) {
    const ref_out *o = &r->out[i];
    const char *key = tfq_example_result_key(res, i);
    if (tfq_example_result_is_sparse(res, i) != o->sparse) {
      snprintf(why, cap, "%s: sparse %d", key, o->sparse);
      return 0;
    }
    const tfq_tensor *vals;
    if (!o->sparse) {
      vals = tfq_example_result_dense(res, i);
      if (tfq_tensor_rank(vals) != o->rank) {
        snprintf(why, cap, "%s: rank %d, expected %d", key, tfq_tensor_rank(vals), o->rank);
        return 0;
      }
      for (int d = 0; d < o->rank; d++)
        if (tfq_tensor_dim(vals, d) != o->dims[d]) {
          snprintf(why, cap, "%s: dim %d is %lld, expected %lld", key, d,
                   (long long)tfq_tensor_dim(vals, d), (long long)o->dims[d]);
          return 0;
        }
    } else {
      const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, i);
      vals = sp->values;
      if (tfq_tensor_rank(sp->indices) != 2 || tfq_tensor_dim(sp->indices, 0) != (int64_t)o->rows ||
          tfq_tensor_dim(sp->indices, 1) != (int64_t)o->cols) {
        snprintf(why, cap, "%s: indices shape, expected [%zu,%zu]", key, o->rows, o->cols);
        return 0;
      }
      if (o->rows * o->cols > 0 &&
          memcmp(tfq_tensor_cdata(sp->indices), o->ix, o->rows * o->cols * 8) != 0) {
        snprintf(why, cap, "%s: indices differ", key);
        return 0;
      }
      if (tfq_tensor_rank(sp->dense_shape) != 1 ||
          tfq_tensor_dim(sp->dense_shape, 0) != o->shape_n ||
          (o->shape_n &&
           memcmp(tfq_tensor_cdata(sp->dense_shape), o->shape, (size_t)o->shape_n * 8))) {
        snprintf(why, cap, "%s: dense_shape differs", key);
        return 0;
      }
      if (tfq_tensor_rank(vals) != 1 || tfq_tensor_dim(vals, 0) != (int64_t)o->nv) {
        snprintf(why, cap, "%s: %lld values, expected %zu", key,
                 (long long)tfq_tensor_num_elements(vals), o->nv);
        return 0;
      }
    }
    if (tfq_tensor_dtype(vals) != o->dtype || tfq_tensor_num_elements(vals) != (int64_t)o->nv) {
      snprintf(why, cap, "%s: dtype or size", key);
      return 0;
    }
    for (size_t j = 0; j < o->nv; j++)
      if (!ref_val_eq(vals, (int64_t)j, &o->v[j])) {
        snprintf(why, cap, "%s: value %zu differs", key, j);
        return 0;
      }
  }
  return 1;
}

#endif
