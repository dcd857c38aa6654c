/* parse_example (TF's FastParseExample, the batch path) and parse_single_example
 * (FastParseSingleExample, the single path): spec/tf1-example.md §2.3-§5.
 *
 * One pass per example: tfq__ex_scan() collects the requested map entries (key lookups in the
 * config's hash table; unrequested values are never read), then the entries are visited from
 * last to first, the first one per key winning.  FixedLen values are written in place into the
 * preallocated [B] + shape output; VarLen and FixedLenSequence values are appended to per-key
 * buffers with per-example ends and merged into the outputs at the end (example_result.c).
 * String values stay slices of the input until the outputs are built, then are copied once.
 * Single-threaded: TF's minibatches are reproduced only where they show (the count in the
 * FixedLenSequence stride message). */
#include <stdarg.h>
#include <string.h>

#include "example_internal.h"

typedef struct ctx {
  const tfq_example_config *cfg;
  int single;
  const char *const *names; /* batch names, or NULL */
  const size_t *name_lens;
  tfq_tensor **fixed; /* by slot: FixedLen outputs */
  tfq__ex_buf *bufs;  /* by slot: FixedLenSequence and VarLen buffers */
  int64_t *taken;     /* by slot: the last example that took the key */
  size_t *mb_base;    /* by slot: buffer size at the start of the current minibatch */
  tfq__ex_entries ents;
} ctx;

static const char *const list_name[] = {"", "bytes_list", "float_list", "int64_list"};
static const char *const value_name[] = {"", "bytes", "float", "int64"};
static const char *const kind_dtype[] = {"", "string", "float", "int64"};

static int kind_of(tfq_dtype dt) {
  return dt == TFQ_STRING ? TFQ__KIND_BYTES : dt == TFQ_FLOAT ? TFQ__KIND_FLOAT : TFQ__KIND_INT64;
}

/* Sets an example error: "Name: <n>, Key: <k>, Index: <e>.  <suffix>" in the batch path,
 * "Key: <k>.  <suffix>" in the single path. */
static tfq_code key_err(const ctx *c, int64_t e, const tfq__ex_slot *s, tfq_status *st,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static tfq_code key_err(const ctx *c, int64_t e, const tfq__ex_slot *s, tfq_status *st,
                        const char *fmt, ...) {
  char suffix[TFQ__MSG_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(suffix, sizeof suffix, fmt, ap);
  va_end(ap);
  if (c->single) {
    tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Key: %s.  %s", s->key, suffix);
  } else {
    int nl = c->names ? (int)c->name_lens[e] : 9;
    const char *n = c->names ? c->names[e] : "<unknown>";
    tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Name: %.*s, Key: %s, Index: %lld.  %s", nl, n, s->key,
                   (long long)e, suffix);
  }
  tfq__status_set_record(st, e);
  return TFQ_INVALID_ARGUMENT;
}

/* "Could not parse example input, value: '<raw bytes>'", the bytes copied verbatim. */
static tfq_code could_not_parse(const uint8_t *p, size_t len, int64_t e, tfq_status *st) {
  static const char head[] = "Could not parse example input, value: '";
  tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", head);
  if (st) {
    size_t at = sizeof head - 1, room = sizeof st->msg - 1 - at;
    size_t n = len < room ? len : room;
    if (n) memcpy(st->msg + at, p, n);
    at += n;
    if (at < sizeof st->msg - 1) st->msg[at++] = '\'';
    st->msg[at] = '\0';
  }
  tfq__status_set_record(st, e);
  return TFQ_INVALID_ARGUMENT;
}

/* Makes room for `more` values in a buffer of `esz`-byte values. */
static int buf_reserve(tfq__ex_buf *b, size_t more, size_t esz) {
  if (b->cap - b->n >= more) return 1;
  size_t cap = b->cap ? b->cap : 64;
  while (cap - b->n < more) {
    if (cap > SIZE_MAX / 2 / esz) return 0;
    cap *= 2;
  }
  void *nv = tfq_realloc(b->v, cap * esz);
  if (!nv) return 0;
  b->v = nv;
  b->cap = cap;
  return 1;
}

static size_t esize(tfq_dtype dt) {
  return dt == TFQ_STRING ? sizeof(tfq__str) : dt == TFQ_FLOAT ? 4 : 8;
}

/* Parses one FixedLen entry into slot e of its output. */
static tfq_code parse_fixed(ctx *c, const tfq__ex_slot *s, int kind, const uint8_t *p,
                            const uint8_t *end, int64_t e, tfq_status *st) {
  tfq_tensor *t = c->fixed[s - c->cfg->slots];
  size_t stride = (size_t)s->stride, off = c->single ? 0 : (size_t)e * stride;
  int64_t n;
  if (kind == TFQ__KIND_FLOAT)
    n = tfq__ex_float_list(p, end, (float *)t->data + off, stride, 1);
  else if (kind == TFQ__KIND_INT64)
    n = tfq__ex_int64_list(p, end, (int64_t *)t->data + off, stride);
  else
    n = tfq__ex_bytes_list(p, end, tfq__strs(t) + off, stride);
  if (n < 0)
    return c->single ? key_err(c, e, s, st, "Can't parse serialized Example: Parsing %s failed.",
                               list_name[kind])
                     : key_err(c, e, s, st, "Can't parse serialized Example.");
  if ((size_t)n != stride) {
    if (c->single)
      return key_err(c, e, s, st, "Can't parse serialized Example: Some %s slice was not parsed.",
                     list_name[kind]);
    const tfq__ex_feature *f = &c->cfg->f[s->feature];
    char shape[512];
    tfq__buf b = {shape, sizeof shape, 0};
    tfq__buf_shape(&b, f->dims, f->rank);
    return key_err(c, e, s, st,
                   "Number of %s values != expected.  Values size: %lld but output shape: %s",
                   value_name[kind], (long long)n, shape);
  }
  return TFQ_OK;
}

/* Appends one VarLen or FixedLenSequence entry to its buffer. */
static tfq_code parse_buffered(ctx *c, const tfq__ex_slot *s, int kind, const uint8_t *p,
                               const uint8_t *end, int64_t e, tfq_status *st) {
  size_t sl = (size_t)(s - c->cfg->slots);
  tfq__ex_buf *b = &c->bufs[sl];
  size_t bound = tfq__ex_bound(kind, (size_t)(end - p));
  if (!buf_reserve(b, bound, esize(s->dtype))) return TFQ__OOM(st);
  int64_t n;
  /* where the values go (no buffer yet when the list is empty: no offset from NULL) */
  char *to = b->v ? (char *)b->v + (size_t)b->n * esize(s->dtype) : NULL;
  if (kind == TFQ__KIND_FLOAT)
    n = tfq__ex_float_list(p, end, (float *)(void *)to, bound, 0);
  else if (kind == TFQ__KIND_INT64)
    n = tfq__ex_int64_list(p, end, (int64_t *)(void *)to, bound);
  else
    n = tfq__ex_bytes_list(p, end, (tfq__str *)(void *)to, bound);
  if (n < 0) {
    if (!c->single) return key_err(c, e, s, st, "Can't parse serialized Example.");
    if (kind == TFQ__KIND_BYTES)
      return key_err(c, e, s, st,
                     "Can't parse serialized Example: Could not get num elements in bytes_list.");
    return key_err(c, e, s, st, "Can't parse serialized Example: Parsing %s failed.",
                   list_name[kind]);
  }
  b->n += (size_t)n;
  if (s->type == TFQ__SLOT_SEQ) {
    if (c->single && n % s->stride) {
      tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                     "Error while parsing feature with key %s: number of elements should be "
                     "divisible by %lld, found %lld instead",
                     s->key, (long long)s->stride, (long long)n);
      tfq__status_set_record(st, e);
      return TFQ_INVALID_ARGUMENT;
    }
    size_t seen = b->n - c->mb_base[sl]; /* TF counts the whole minibatch's buffer */
    if (!c->single && seen % (size_t)s->stride) {
      const tfq__ex_feature *f = &c->cfg->f[s->feature];
      char shape[512];
      tfq__buf sb = {shape, sizeof shape, 0};
      tfq__buf_shape(&sb, f->dims, f->rank);
      return key_err(c, e, s, st,
                     "Number of %s values is not a multiple of stride length. Saw %zu values but "
                     "output shape is: %s",
                     value_name[kind], seen, shape);
    }
  }
  return TFQ_OK;
}

/* A FixedLen scalar (stride 1) float or int64 in its common wire form, written in place: a
 * float list of one packed 4-byte chunk (kind byte, 06 0a 04, the value), an int64 list of one
 * packed varint filling its chunk (kind byte, len-2, 0a, len-4, the varint).  Returns 0 for any
 * other form, which parse_fixed reads (to the same value where this one applies). */
static inline int scalar_fast(ctx *c, int32_t slot, int kind, const uint8_t *v, size_t len,
                              int64_t e) {
  void *data = c->fixed[slot]->data;
  size_t off = c->single ? 0 : (size_t)e;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
  if (kind == TFQ__KIND_FLOAT) {
    if (len != 8 || v[1] != 6 || v[2] != 0x0a || v[3] != 4) return 0;
    memcpy((float *)data + off, v + 4, 4);
    return 1;
  }
#endif
  if (kind != TFQ__KIND_INT64 || len < 5 || len > 14 || v[1] != len - 2 || v[2] != 0x0a ||
      v[3] != len - 4)
    return 0;
  const uint8_t *p = v + 4, *end = v + len;
  uint64_t r = 0;
  for (int i = 0; p < end; i++) {
    uint8_t b = *p++;
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      if (p != end) return 0; /* more values: parse_fixed reports the count */
      ((int64_t *)data)[off] = (int64_t)r;
      return 1;
    }
  }
  return 0;
}

static tfq_code parse_one(ctx *c, const uint8_t *p, size_t len, int64_t e, tfq_status *st) {
  const tfq_example_config *cfg = c->cfg;
  c->ents.n = 0;
  c->ents.prev = -1;
  int r = tfq__ex_scan(cfg, p, len, &c->ents);
  if (r < 0) return TFQ__OOM(st);
  if (r == 0) return could_not_parse(p, len, e, st);
  for (size_t i = c->ents.n; i-- > 0;) {
    const tfq__ex_entry *en = &c->ents.e[i];
    const tfq__ex_slot *s = &cfg->slots[en->slot];
    int kind = TFQ__KIND_NONE;
    if (en->len) {
      switch (en->val[0]) {
        case 0x0a: kind = TFQ__KIND_BYTES; break;
        case 0x12: kind = TFQ__KIND_FLOAT; break;
        case 0x1a: kind = TFQ__KIND_INT64; break;
        default:
          tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Unsupported datatype.");
          tfq__status_set_record(st, e);
          return TFQ_INVALID_ARGUMENT;
      }
    }
    /* an empty Feature is absent, except for a VarLen key in the batch path */
    if (kind == TFQ__KIND_NONE && (s->type != TFQ__SLOT_VARLEN || c->single)) continue;
    if (c->taken[en->slot] == e) continue; /* an earlier duplicate: the last entry won */
    c->taken[en->slot] = e;
    int want = kind_of(s->dtype);
    if (kind != TFQ__KIND_NONE && kind != want) {
      if (s->type == TFQ__SLOT_VARLEN)
        return key_err(c, e, s, st, "Data types don't match. Expected type: %s, Actual type: %s",
                       tfq_dtype_name(s->dtype), kind_dtype[kind]);
      return key_err(c, e, s, st, "Data types don't match. Data type: %s but expected type: %s",
                     kind_dtype[kind], tfq_dtype_name(s->dtype));
    }
    if (kind == TFQ__KIND_NONE) continue;
    if (s->type == TFQ__SLOT_FIXED && s->stride == 1 &&
        scalar_fast(c, en->slot, kind, en->val, en->len, e))
      continue;
    tfq_code rc = s->type == TFQ__SLOT_FIXED
                      ? parse_fixed(c, s, kind, en->val + 1, en->val + en->len, e, st)
                      : parse_buffered(c, s, kind, en->val + 1, en->val + en->len, e, st);
    if (rc) return rc;
  }
  for (size_t sl = 0; sl < cfg->nslots; sl++) {
    const tfq__ex_slot *s = &cfg->slots[sl];
    if (s->type != TFQ__SLOT_FIXED) {
      c->bufs[sl].ends[c->single ? 0 : e] = (int64_t)c->bufs[sl].n;
      continue;
    }
    if (c->taken[sl] == e) continue;
    const tfq__ex_feature *f = &cfg->f[s->feature];
    if (!s->def) {
      if (c->single)
        tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                       "Feature: %s (data type: %s) is required but could not be found.", s->key,
                       tfq_dtype_name(s->dtype));
      else
        tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                       "Name: %.*s, Feature: %s (data type: %s) is required but could not be "
                       "found.",
                       c->names ? (int)c->name_lens[e] : 9, c->names ? c->names[e] : "<unknown>",
                       s->key, tfq_dtype_name(s->dtype));
      tfq__status_set_record(st, e);
      return TFQ_INVALID_ARGUMENT;
    }
    tfq_tensor *t = c->fixed[sl];
    size_t stride = (size_t)f->stride, off = c->single ? 0 : (size_t)e * stride;
    if (s->dtype == TFQ_STRING)
      memcpy(tfq__strs(t) + off, tfq__strs(s->def), stride * sizeof(tfq__str));
    else
      memcpy((char *)t->data + off * esize(s->dtype), s->def->data, stride * esize(s->dtype));
  }
  return TFQ_OK;
}

/* TF's minibatch count: ~50 kB of serialized input each, at least min(8, B), at most 64. */
static int64_t num_minibatches(const size_t *lens, int64_t B) {
  int64_t r = 0;
  size_t bytes = 0;
  for (int64_t i = 0; i < B; i++) {
    if (bytes == 0) r++;
    bytes += lens[i] + 1;
    if (bytes > 50000) bytes = 0;
  }
  int64_t lo = B < 8 ? B : 8, hi = r < 64 ? r : 64;
  return lo > hi ? lo : hi;
}

static void ctx_free(ctx *c) {
  const tfq_example_config *cfg = c->cfg;
  for (size_t sl = 0; c->fixed && sl < cfg->nslots; sl++) {
    tfq_tensor_free(c->fixed[sl]);
    tfq_free(c->bufs[sl].v);
    tfq_free(c->bufs[sl].ends);
  }
  tfq_free(c->fixed);
  if (c->ents.heap) tfq_free(c->ents.e);
}

static tfq_code ctx_init(ctx *c, int64_t B, tfq_status *st) {
  const tfq_example_config *cfg = c->cfg;
  size_t ns = cfg->nslots ? cfg->nslots : 1;
  /* one block: fixed[ns], bufs[ns], taken[ns], mb_base[ns], then follow[ns + 1] */
  size_t per = sizeof *c->fixed + sizeof *c->bufs + sizeof *c->taken + sizeof *c->mb_base;
  char *blk = tfq__calloc(1, ns * per + (ns + 1) * sizeof(int32_t));
  if (!blk) return TFQ__OOM(st);
  c->fixed = (tfq_tensor **)blk;
  c->bufs = (tfq__ex_buf *)(blk + ns * sizeof *c->fixed);
  c->taken = (int64_t *)(blk + ns * (sizeof *c->fixed + sizeof *c->bufs));
  c->mb_base = (size_t *)(blk + ns * (sizeof *c->fixed + sizeof *c->bufs + sizeof *c->taken));
  c->ents.follow = (int32_t *)(blk + ns * per); /* key prediction (example_internal.h) */
  for (size_t i = 0; i <= ns; i++) c->ents.follow[i] = -1;
  int64_t nends = B > 0 ? B : 1;
  for (size_t sl = 0; sl < cfg->nslots; sl++) {
    const tfq__ex_slot *s = &cfg->slots[sl];
    c->taken[sl] = -1;
    if (s->type != TFQ__SLOT_FIXED) {
      if (!(c->bufs[sl].ends = tfq_malloc((size_t)nends * sizeof(int64_t)))) return TFQ__OOM(st);
      continue;
    }
    const tfq__ex_feature *f = &cfg->f[s->feature];
    int64_t dims[TFQ_MAX_RANK + 1];
    dims[0] = B;
    if (f->rank) memcpy(dims + 1, f->dims, (size_t)f->rank * sizeof *dims);
    tfq_code rc = c->single ? tfq__tensor_alloc(s->dtype, f->dims, f->rank, 0, &c->fixed[sl], st)
                            : tfq__tensor_alloc(s->dtype, dims, f->rank + 1, 0, &c->fixed[sl], st);
    if (rc) return rc;
  }
  return TFQ_OK;
}

/* The common driver: B records (B == 1 and `single` for the single path). */
static tfq_code run(const tfq_example_config *cfg, const char *const *ptrs, const size_t *lens,
                    int64_t B, const char *const *names, const size_t *name_lens, int single,
                    int py_single, tfq_example_result **out, tfq_status *st) {
  *out = NULL;
  if (cfg->n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s",
                          py_single ? "Invalid argument: features cannot be empty."
                                    : "Argument `features` cannot be None or falsy. Got {}");
  if (cfg->deferred) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", cfg->deferred);
  ctx c = {0};
  tfq__ex_entry inline_ents[64];
  c.ents.e = inline_ents;
  c.ents.cap = sizeof inline_ents / sizeof *inline_ents;
  c.cfg = cfg;
  c.single = single;
  c.names = names;
  c.name_lens = name_lens;
  tfq_code rc = ctx_init(&c, B, st);
  int64_t nmb = single ? 1 : num_minibatches(lens, B);
  for (int64_t m = 0; rc == TFQ_OK && m < nmb; m++) {
    int64_t first = B * m / nmb, last = B * (m + 1) / nmb;
    for (size_t sl = 0; sl < cfg->nslots; sl++) c.mb_base[sl] = c.bufs[sl].n;
    for (int64_t e = first; rc == TFQ_OK && e < last; e++)
      rc = parse_one(&c, (const uint8_t *)ptrs[e], lens[e], e, st);
  }
  tfq_example_result *r = NULL;
  if (rc == TFQ_OK && !(r = tfq__ex_result_new(cfg))) rc = TFQ__OOM(st);
  for (size_t sl = 0; rc == TFQ_OK && sl < cfg->nslots; sl++)
    if (c.fixed[sl] && c.fixed[sl]->dtype == TFQ_STRING && tfq__ex_own_strings(c.fixed[sl]))
      rc = TFQ__OOM(st);
  if (rc == TFQ_OK) rc = tfq__ex_build(cfg, c.fixed, c.bufs, B, single, r, st);
  ctx_free(&c);
  if (rc) {
    tfq_example_result_free(r);
    return rc;
  }
  *out = r;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_parse_example_strings(const tfq_example_config *cfg, const char *const *ptrs,
                                   const size_t *lens, int64_t n, const char *const *names,
                                   const size_t *name_lens, tfq_example_result **out,
                                   tfq_status *st) {
  *out = NULL;
  if (n < 0 || (n > 0 && (!ptrs || !lens)) || (names && !name_lens))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "invalid record arrays (n = %lld)",
                          (long long)n);
  return run(cfg, ptrs, lens, n, n ? names : NULL, name_lens, 0, 0, out, st);
}

tfq_code tfq_parse_single_example(const tfq_example_config *cfg, const char *bytes, size_t len,
                                  tfq_example_result **out, tfq_status *st) {
  *out = NULL;
  const char *p = bytes ? bytes : "";
  return run(cfg, &p, &len, 1, NULL, NULL, 1, 1, out, st);
}

static int same_shape(const tfq_tensor *a, const tfq_tensor *b) {
  if (a->rank != b->rank) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

tfq_code tfq_parse_example(const tfq_example_config *cfg, const tfq_tensor *serialized,
                           const tfq_tensor *names, tfq_example_result **out, tfq_status *st) {
  *out = NULL;
  if (serialized->dtype != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "serialized must be a string tensor, not %s",
                          tfq_dtype_name(serialized->dtype));
  if (names && names->dtype != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "names must be a string tensor, not %s",
                          tfq_dtype_name(names->dtype));
  char a[512], b[512];
  tfq__buf ba = {a, sizeof a, 0}, bb = {b, sizeof b, 0};
  tfq__buf_shape(&bb, serialized->dims, serialized->rank);
  if (serialized->rank > 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected serialized to be a scalar or vector, got shape: %s", b);
  if (names && names->nelems > 0 && !same_shape(names, serialized)) {
    tfq__buf_shape(&ba, names->dims, names->rank);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected names have the same shape as serialized: name.shape=%s, "
                          "serialized.shape=%s",
                          a, b);
  }
  int64_t n = serialized->nelems;
  const tfq__str *s = tfq__strs(serialized);
  const char **ptrs = tfq_malloc((size_t)(n ? n : 1) * sizeof *ptrs);
  size_t *lens = tfq_malloc((size_t)(n ? n : 1) * sizeof *lens);
  int with_names = names && names->nelems > 0 && serialized->rank == 1;
  const char **nptrs = with_names ? tfq_malloc((size_t)n * sizeof *nptrs) : NULL;
  size_t *nlens = with_names ? tfq_malloc((size_t)n * sizeof *nlens) : NULL;
  tfq_code rc;
  if (!ptrs || !lens || (with_names && (!nptrs || !nlens))) {
    rc = TFQ__OOM(st);
  } else {
    for (int64_t i = 0; i < n; i++) {
      ptrs[i] = s[i].p;
      lens[i] = s[i].len;
      if (with_names) {
        nptrs[i] = tfq__strs(names)[i].p;
        nlens[i] = tfq__strs(names)[i].len;
      }
    }
    rc = serialized->rank == 0 ? run(cfg, ptrs, lens, 1, NULL, NULL, 1, 0, out, st)
                               : run(cfg, ptrs, lens, n, nptrs, nlens, 0, 0, out, st);
  }
  tfq_free(ptrs);
  tfq_free(lens);
  tfq_free(nptrs);
  tfq_free(nlens);
  return rc;
}
