/* Private declarations of the Example module (src/example): the compiled configuration, the wire
 * readers and the per-call parse state.  Depends on src/core only. */
#ifndef TFQ_EXAMPLE_INTERNAL_H
#define TFQ_EXAMPLE_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <tfq/example.h>

#include "../core/base.h"

/* ---- the configuration ------------------------------------------------------------------- */

/* How the parser treats one requested key. */
typedef enum tfq__ex_slot_type {
  TFQ__SLOT_FIXED = 0, /* FixedLen: written in place at e * stride */
  TFQ__SLOT_SEQ = 1,   /* FixedLenSequence: buffered, rows of `stride` values */
  TFQ__SLOT_VARLEN = 2 /* VarLen (a VarLen feature, or an index/value key of a Sparse one) */
} tfq__ex_slot_type;

/* One key the parser looks up (TF: one entry of config.dense or config.sparse). */
typedef struct tfq__ex_slot {
  const char *key; /* borrowed from the feature that owns it */
  size_t key_len;
  tfq__ex_slot_type type;
  tfq_dtype dtype;
  int64_t stride;        /* FIXED: values per example; SEQ: values per row; VARLEN: 1 */
  size_t feature;        /* FIXED/SEQ: the feature (output) index */
  const tfq_tensor *def; /* FIXED: default reshaped to the shape (NULL: required); SEQ: padding */
} tfq__ex_slot;

/* One feature (one output), kept sorted by key. */
typedef struct tfq__ex_feature {
  char *key;
  size_t key_len;
  tfq_example_kind kind;
  tfq_dtype dtype;
  int rank;        /* the static per-example shape of the output (see the accessors) */
  int64_t *dims;   /* rank dims, NULL for rank 0 */
  int64_t stride;  /* FixedLen: prod(shape); FixedLenSequence: prod(row shape); else 1 */
  tfq_tensor *def; /* FixedLen: default of shape `dims` or NULL; FixedLenSequence: padding */
  /* Sparse features */
  size_t n_index;
  char **index_keys;
  char *value_key;
  int already_sorted;
  /* compiled */
  int32_t slot;         /* FixedLen, FixedLenSequence, VarLen: its slot */
  int32_t *index_slots; /* Sparse: n_index slots */
  int32_t value_slot;   /* Sparse */
} tfq__ex_feature;

struct tfq_example_config {
  size_t n, cap;
  tfq__ex_feature *f; /* sorted by key (bytes) */
  /* compiled by tfq__ex_compile() after every change */
  size_t nslots, ndense; /* slots [0, ndense) are dense, in key order; then the VarLen keys */
  tfq__ex_slot *slots;
  uint64_t *ht_hash; /* open addressing, ht_mask + 1 buckets */
  int32_t *ht_slot;  /* slot + 1, 0 = empty */
  size_t ht_mask;
  char *deferred; /* the whole-dict error (TF's text), or NULL */
};

/* Rebuilds slots, hash table and the deferred whole-dict error.  On failure (out of memory)
 * the config keeps its previous compiled state and the caller undoes its change. */
tfq_code tfq__ex_compile(tfq_example_config *cfg);

/* The key hash used by the table (inline: the parser hashes every feature name it meets). */
static inline uint64_t tfq__ex_hash(const uint8_t *p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15u ^ (n * 0xFF51AFD7ED558CCDu);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xC2B2AE3D27D4EB4Fu;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
  h = (h ^ w) * 0x165667B19E3779F9u;
  h ^= h >> 32;
  return h;
}

static inline int tfq__ex_eq8(const uint8_t *a, const uint8_t *b) {
  uint64_t x, y;
  memcpy(&x, a, 8);
  memcpy(&y, b, 8);
  return x == y;
}

static inline int tfq__ex_eq4(const uint8_t *a, const uint8_t *b) {
  uint32_t x, y;
  memcpy(&x, a, 4);
  memcpy(&y, b, 4);
  return x == y;
}

/* Whether the n bytes at a and b are equal; feature names are short, so up to 16 bytes take two
 * overlapping fixed-size loads of each (inside both ranges) instead of a memcmp call. */
static inline int tfq__ex_key_eq(const uint8_t *a, const uint8_t *b, size_t n) {
  if (n > 16) return memcmp(a, b, n) == 0;
  if (n >= 8) return tfq__ex_eq8(a, b) && tfq__ex_eq8(a + n - 8, b + n - 8);
  if (n >= 4) return tfq__ex_eq4(a, b) && tfq__ex_eq4(a + n - 4, b + n - 4);
  if (n >= 2) {
    uint16_t x, y, u, v;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    memcpy(&u, a + n - 2, 2);
    memcpy(&v, b + n - 2, 2);
    return x == y && u == v;
  }
  return n == 0 || a[0] == b[0];
}

/* The slot of key [p, p+n), or -1. */
static inline int32_t tfq__ex_lookup(const tfq_example_config *cfg, const uint8_t *p, size_t n) {
  if (!cfg->ht_slot) return -1;
  uint64_t h = tfq__ex_hash(p, n);
  for (size_t i = (size_t)h & cfg->ht_mask;; i = (i + 1) & cfg->ht_mask) {
    int32_t s = cfg->ht_slot[i];
    if (s == 0) return -1;
    const tfq__ex_slot *sl = &cfg->slots[s - 1];
    if (cfg->ht_hash[i] == h && sl->key_len == n && tfq__ex_key_eq((const uint8_t *)sl->key, p, n))
      return s - 1;
  }
}

/* TF's Python name of a dtype ("float32", "float64", "float16", ...). */
const char *tfq__ex_py_dtype(tfq_dtype dt);

/* ---- the wire ---------------------------------------------------------------------------- */

/* The kinds of a Feature (its first byte). */
enum { TFQ__KIND_NONE = 0, TFQ__KIND_BYTES = 1, TFQ__KIND_FLOAT = 2, TFQ__KIND_INT64 = 3 };

/* A requested map entry: its slot and its Feature value bytes. */
typedef struct tfq__ex_entry {
  int32_t slot;
  const uint8_t *val;
  size_t len;
} tfq__ex_entry;

/* A growable array of requested entries (reused across the examples of a call); starts in
 * caller storage (`heap` 0) and moves to the heap when it grows.
 *
 * `follow` (NULL: none) predicts keys: follow[s + 1] is the slot whose key came right after a key
 * of slot s (s = -1: first in the Example) the last time, or -1.  The examples of a batch mostly
 * repeat one key order, so a key that equals its predicted slot's key skips the hash lookup
 * (slot keys are unique, so the answer is the lookup's).  `prev` is the slot of the previous
 * requested key of the current Example (-1 at its start); the caller sets it. */
typedef struct tfq__ex_entries {
  tfq__ex_entry *e;
  size_t n, cap;
  int heap;
  int32_t prev;
  int32_t *follow;
} tfq__ex_entries;

/* Scans a serialized Example the way TF's fast parser does and appends the entries whose key
 * is requested, in wire order.  Returns 1, 0 when the structure is broken (TF: "Could not parse
 * example input"), -1 when out of memory. */
int tfq__ex_scan(const tfq_example_config *cfg, const uint8_t *p, size_t len, tfq__ex_entries *out);

/* List decoders over a Feature's value bytes *after* its kind byte: [p, end).  Each returns the
 * number of values in the list (TF's count) or -1 for a list failure, and stores the first
 * min(count, cap) values at dst.  A FixedLen slot passes cap = stride (TF's LimitedArraySlice:
 * tfq__ex_bytes_list fails when a value beyond `cap` starts; a packed float chunk copies
 * min(count, cap) values, `limited` != 0); a growable buffer passes a cap of at least
 * tfq__ex_bound() and `limited` 0 (every value must then be present). */
int64_t tfq__ex_float_list(const uint8_t *p, const uint8_t *end, float *dst, size_t cap,
                           int limited);
int64_t tfq__ex_int64_list(const uint8_t *p, const uint8_t *end, int64_t *dst, size_t cap);
int64_t tfq__ex_bytes_list(const uint8_t *p, const uint8_t *end, tfq__str *dst, size_t cap);
/* An upper bound of the number of values a list of `len` bytes can give (kind: TFQ__KIND_*). */
static inline size_t tfq__ex_bound(int kind, size_t len) {
  return kind == TFQ__KIND_FLOAT ? len / 4 : kind == TFQ__KIND_BYTES ? len / 2 : len;
}

/* ---- results ----------------------------------------------------------------------------- */

typedef struct tfq__ex_out {
  int is_sparse;
  tfq_tensor *dense;
  tfq_sparse_tensor sp;
  const char *key; /* into the result's key block */
} tfq__ex_out;

struct tfq_example_result {
  size_t n;
  tfq__ex_out *o;
  char *keys;
};

/* A result with n empty outputs whose keys are the config's.  NULL when out of memory. */
tfq_example_result *tfq__ex_result_new(const tfq_example_config *cfg);

/* ---- per-call buffers (VarLen and FixedLenSequence slots) --------------------------------- */

typedef struct tfq__ex_buf {
  void *v; /* float, int64_t or tfq__str values */
  size_t n, cap;
  int64_t *ends; /* ends[e]: the value count after example e */
} tfq__ex_buf;

/* Builds the outputs of `cfg` into `r` from the parsed state: `fixed` holds the FixedLen output
 * tensors by slot (their strings owned already; each is moved into `r` and its slot set to
 * NULL), `bufs` the buffers by slot, B the number of examples; `single` strips the batch
 * dimension.  Copies string bytes into the outputs.  Returns TFQ_OK, TFQ_INVALID_ARGUMENT (a
 * SparseFeature's index/value lengths) or TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__ex_build(const tfq_example_config *cfg, tfq_tensor **fixed, tfq__ex_buf *bufs,
                       int64_t B, int single, tfq_example_result *r, tfq_status *st);

/* Copies the bytes of every string element of `t` (which may point anywhere) into its own
 * arena.  Returns TFQ_OK or TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__ex_own_strings(tfq_tensor *t);

#endif
