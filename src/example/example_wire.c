/* Reading the wire format exactly as TF's fast parser (example_proto_fast_parsing.cc, over
 * protobuf's CodedInputStream) does: see spec/tf1-example.md §2.2.
 *
 * Every read is bounded by the end of its scope: a length-delimited scope (Features, map entry,
 * list, packed chunk) ends at its declared end or at the end of the enclosing scope, whichever
 * comes first (CodedInputStream::PushLimit keeps the old limit for a longer or a negative
 * length).  Varints are at most 10 bytes; 32-bit reads keep the low 32 bits. */
#include "example_internal.h"

/* A varint of at most 10 bytes ending before `end`; bits beyond 64 are dropped. */
static inline int rd_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  const uint8_t *p = *pp;
  if (p < end && *p < 0x80) {
    *v = *p;
    *pp = p + 1;
    return 1;
  }
  uint64_t r = 0;
  for (int i = 0; i < 10; i++) {
    if (p >= end) return 0;
    uint8_t b = *p++;
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *pp = p;
      *v = r;
      return 1;
    }
  }
  return 0;
}

/* The end of a scope of `len` bytes starting at p inside [p, end): PushLimit's rule. */
static inline const uint8_t *scope_end(const uint8_t *p, const uint8_t *end, uint32_t len) {
  return (int32_t)len >= 0 && (size_t)len < (size_t)(end - p) ? p + len : end;
}

/* A length-delimited string (a key or a Feature): all of it inside [p, end). */
static inline int rd_string(const uint8_t **pp, const uint8_t *end, const uint8_t **s, size_t *n) {
  uint64_t v;
  if (!rd_varint(pp, end, &v)) return 0;
  uint32_t len = (uint32_t)v;
  if (len > (size_t)(end - *pp)) return 0;
  *s = *pp;
  *n = len;
  *pp += len;
  return 1;
}

/* Doubles the entry array (out of line: rare). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
grow_entries(tfq__ex_entries *out) {
  size_t cap = out->cap ? 2 * out->cap : 16;
  tfq__ex_entry *ne =
      out->heap ? tfq_realloc(out->e, cap * sizeof *ne) : tfq_malloc(cap * sizeof *ne);
  if (!ne) return 0;
  if (!out->heap && out->n) memcpy(ne, out->e, out->n * sizeof *ne);
  out->heap = 1;
  out->e = ne;
  out->cap = cap;
  return 1;
}

static inline int push_entry(tfq__ex_entries *out, int32_t slot, const uint8_t *val, size_t len) {
  if (out->n == out->cap && !grow_entries(out)) return 0;
  out->e[out->n++] = (tfq__ex_entry){slot, val, len};
  return 1;
}

/* The slot of a key its prediction missed, learnt as the prediction (out of line: rare). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int32_t
lookup_learn(const tfq_example_config *cfg, tfq__ex_entries *out, const uint8_t *key, size_t klen) {
  int32_t slot = tfq__ex_lookup(cfg, key, klen);
  if (slot >= 0) out->follow[out->prev + 1] = slot;
  return slot;
}

/* A map entry read: its slot (predicted, else looked up) and, when requested, its entry. */
static inline int found(const tfq_example_config *cfg, tfq__ex_entries *out, const uint8_t *key,
                        size_t klen, const uint8_t *val, size_t vlen) {
  int32_t slot;
  if (out->follow) {
    int32_t f = out->follow[out->prev + 1];
    if (f >= 0 && cfg->slots[f].key_len == klen &&
        tfq__ex_key_eq((const uint8_t *)cfg->slots[f].key, key, klen))
      slot = f;
    else
      slot = lookup_learn(cfg, out, key, klen);
    if (slot >= 0) out->prev = slot;
  } else {
    slot = tfq__ex_lookup(cfg, key, klen);
  }
  if (slot >= 0 && !push_entry(out, slot, val, vlen)) return -1;
  return 1;
}

/* One map entry: exactly two fields, each a key (tag 1) or a value (tag 2), the later one
 * winning; a missing key is "" and a missing value is an empty Feature.  1, 0 (broken), -1. */
static int rd_entry(const tfq_example_config *cfg, const uint8_t **pp, const uint8_t *lim,
                    tfq__ex_entries *out) {
  uint64_t v;
  if (!rd_varint(pp, lim, &v)) return 0;
  const uint8_t *p = *pp, *end = scope_end(p, lim, (uint32_t)v);
  const uint8_t *key = NULL, *val = NULL;
  size_t klen = 0, vlen = 0;
  /* The common form: key (tag 1) then value (tag 2), both lengths one-byte varints and the
   * value ending the entry, read at once; anything else takes the general loop below, which
   * reads these bytes to the same key and value. */
  if (end - p >= 4 && p[0] == 0x0a && p[1] < 0x80 && (size_t)p[1] + 4 <= (size_t)(end - p)) {
    const uint8_t *q = p + 2 + p[1];
    if (q[0] == 0x12 && q[1] < 0x80 && (size_t)q[1] == (size_t)(end - q - 2)) {
      key = p + 2;
      klen = p[1];
      val = q + 2;
      vlen = q[1];
      *pp = end;
      return found(cfg, out, key, klen, val, vlen);
    }
  }
  for (int n = 0; n < 2; n++) {
    uint64_t tag;
    if (p >= end || !rd_varint(&p, end, &tag)) return 0;
    if ((uint32_t)tag == 0x0a) {
      if (!rd_string(&p, end, &key, &klen)) return 0;
    } else if ((uint32_t)tag == 0x12) {
      if (!rd_string(&p, end, &val, &vlen)) return 0;
    } else {
      return 0;
    }
  }
  if (p != end) return 0;
  *pp = p;
  return found(cfg, out, key, klen, val, vlen);
}

int tfq__ex_scan(const tfq_example_config *cfg, const uint8_t *p, size_t len,
                 tfq__ex_entries *out) {
  const uint8_t *end = p + len;
  while (p < end) {
    uint64_t v;
    if (*p == 0x0a) { /* Example.features (only this exact tag byte) */
      p++;
      if (!rd_varint(&p, end, &v)) return 0;
      const uint8_t *fend = scope_end(p, end, (uint32_t)v);
      while (p < fend) {
        if (*p++ != 0x0a) return 0; /* anything but a map entry inside Features */
        int r = rd_entry(cfg, &p, fend, out);
        if (r <= 0) return r;
      }
      continue;
    }
    uint64_t tag; /* an unknown field: skipped by wire type */
    if (!rd_varint(&p, end, &tag)) return 0;
    switch (tag & 7) {
      case 0:
        if (!rd_varint(&p, end, &v)) return 0;
        break;
      case 1:
        if (end - p < 8) return 0;
        p += 8;
        break;
      case 2: { /* a skip past the end stops at the end; a negative length skips nothing */
        if (!rd_varint(&p, end, &v)) return 0;
        uint32_t n = (uint32_t)v;
        if ((int32_t)n >= 0) p += (size_t)n < (size_t)(end - p) ? n : (size_t)(end - p);
        break;
      }
      case 5:
        if (end - p < 4) return 0;
        p += 4;
        break;
      default: return 0; /* groups and wire types 6, 7 */
    }
  }
  return 1;
}

/* ---- lists -------------------------------------------------------------------------------- */

/* Reads the list's length; returns its end, or NULL. */
static inline const uint8_t *list_scope(const uint8_t **pp, const uint8_t *end) {
  uint64_t v;
  if (!rd_varint(pp, end, &v)) return NULL;
  return scope_end(*pp, end, (uint32_t)v);
}

int64_t tfq__ex_float_list(const uint8_t *p, const uint8_t *end, float *dst, size_t cap,
                           int limited) {
  const uint8_t *lend = list_scope(&p, end);
  if (!lend) return -1;
  if (p == lend) return 0;
  if (*p == 0x0a) { /* one packed chunk; spare bytes and whatever follows are ignored */
    p++;
    uint64_t v;
    if (!rd_varint(&p, lend, &v)) return -1;
    uint32_t plen = (uint32_t)v;
    const uint8_t *pend = scope_end(p, lend, plen);
    size_t n = plen / 4, c = n < cap ? n : cap;
    if ((!limited && c < n) || c * 4 > (size_t)(pend - p)) return -1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t i = 0; i < c; i++) {
      uint32_t w = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                   (uint32_t)p[4 * i + 3] << 24;
      memcpy(&dst[i], &w, 4);
    }
#else
    if (c == 1)
      memcpy(dst, p, 4); /* a scalar: an inline move, not a call */
    else if (c)
      memcpy(dst, p, c * 4);
#endif
    return (int64_t)n;
  }
  if (*p != 0x0d) return -1;
  size_t i = 0; /* unpacked: every item 0d + 4 bytes up to the list's end */
  while (p < lend) {
    if (*p != 0x0d || lend - p < 5) return -1;
    if (i < cap) {
      uint32_t w =
          (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 | (uint32_t)p[4] << 24;
      memcpy(&dst[i], &w, 4);
    }
    p += 5;
    i++;
  }
  return (int64_t)i;
}

int64_t tfq__ex_int64_list(const uint8_t *p, const uint8_t *end, int64_t *dst, size_t cap) {
  const uint8_t *lend = list_scope(&p, end);
  if (!lend) return -1;
  if (p == lend) return 0;
  size_t i = 0;
  uint64_t v;
  if (*p == 0x0a) { /* one packed chunk of varints */
    p++;
    if (!rd_varint(&p, lend, &v)) return -1;
    const uint8_t *pend = scope_end(p, lend, (uint32_t)v);
    while (p < pend) {
      if (!rd_varint(&p, pend, &v)) return -1;
      if (i < cap) dst[i] = (int64_t)v;
      i++;
    }
    return (int64_t)i;
  }
  if (*p != 0x08) return -1;
  while (p < lend) {
    if (*p++ != 0x08 || !rd_varint(&p, lend, &v)) return -1;
    if (i < cap) dst[i] = (int64_t)v;
    i++;
  }
  return (int64_t)i;
}

int64_t tfq__ex_bytes_list(const uint8_t *p, const uint8_t *end, tfq__str *dst, size_t cap) {
  const uint8_t *lend = list_scope(&p, end);
  if (!lend) return -1;
  size_t i = 0;
  while (p < lend) {
    uint64_t v;
    if (*p++ != 0x0a || !rd_varint(&p, lend, &v)) return -1;
    uint32_t n = (uint32_t)v;
    if (i >= cap || n > (size_t)(lend - p)) return -1;
    dst[i].p = (const char *)p;
    dst[i].len = n;
    p += n;
    i++;
  }
  return (int64_t)i;
}
