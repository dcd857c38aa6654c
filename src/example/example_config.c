/* The Example parser's configuration: TF's `features` dict, checked with the texts of TF's
 * Python layer (parsing_config.py) and compiled into the parser's key table. */
#include <stdarg.h>
#include <string.h>

#include "example_internal.h"

/* ---- small helpers ------------------------------------------------------------------------ */

const char *tfq__ex_py_dtype(tfq_dtype dt) {
  switch (dt) {
    case TFQ_FLOAT: return "float32";
    case TFQ_DOUBLE: return "float64";
    case TFQ_HALF: return "float16";
    default: return tfq_dtype_name(dt);
  }
}

static int key_cmp(const char *a, size_t an, const char *b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int dtype_allowed(tfq_dtype dt) {
  return dt == TFQ_FLOAT || dt == TFQ_INT64 || dt == TFQ_STRING;
}

static tfq_code bad(tfq_status *st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static tfq_code bad(tfq_status *st, const char *fmt, ...) {
  char msg[TFQ__MSG_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", msg);
}

/* Python's repr of a str (keys are bytes here; bytes >= 0x80 pass through). */
static void py_repr(tfq__buf *b, const char *s) {
  char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
  tfq__buf_printf(b, "%c", q);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\\' || *p == (unsigned char)q)
      tfq__buf_printf(b, "\\%c", *p);
    else if (*p == '\n')
      tfq__buf_printf(b, "\\n");
    else if (*p == '\r')
      tfq__buf_printf(b, "\\r");
    else if (*p == '\t')
      tfq__buf_printf(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f)
      tfq__buf_printf(b, "\\x%02x", *p);
    else
      tfq__buf_printf(b, "%c", *p);
  }
  tfq__buf_printf(b, "%c", q);
}

/* Python's str of a shape list: "[2, None]". */
static void py_shape(tfq__buf *b, const int64_t *dims, int rank) {
  tfq__buf_printf(b, "[");
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      tfq__buf_printf(b, "%sNone", i ? ", " : "");
    else
      tfq__buf_printf(b, "%s%lld", i ? ", " : "", (long long)dims[i]);
  }
  tfq__buf_printf(b, "]");
}

/* The repr of a SparseFeature namedtuple, as TF's Python prints it. */
static void sparse_repr(tfq__buf *b, const char *const *ik, size_t n, const char *vk, tfq_dtype dt,
                        const int64_t *size, int sorted) {
  tfq__buf_printf(b, "SparseFeature(index_key=");
  if (n == 1) {
    py_repr(b, ik[0] ? ik[0] : "");
  } else {
    tfq__buf_printf(b, "[");
    for (size_t i = 0; i < n; i++) {
      if (i) tfq__buf_printf(b, ", ");
      py_repr(b, ik[i] ? ik[i] : "");
    }
    tfq__buf_printf(b, "]");
  }
  tfq__buf_printf(b, ", value_key=");
  if (vk)
    py_repr(b, vk);
  else
    tfq__buf_printf(b, "None");
  if ((int)dt == 0)
    tfq__buf_printf(b, ", dtype=None, size=");
  else
    tfq__buf_printf(b, ", dtype=tf.%s, size=", tfq__ex_py_dtype(dt));
  if (n == 1)
    tfq__buf_printf(b, "%lld", size ? (long long)size[0] : 0LL);
  else
    py_shape(b, size, (int)n);
  tfq__buf_printf(b, ", already_sorted=%s)", sorted ? "True" : "False");
}

/* ---- life cycle ---------------------------------------------------------------------------- */

tfq_code tfq_example_config_new(tfq_example_config **out, tfq_status *st) {
  *out = tfq__calloc(1, sizeof **out);
  if (!*out) return TFQ__OOM(st);
  tfq_status_clear(st);
  return TFQ_OK;
}

static void feature_clear(tfq__ex_feature *f) {
  tfq_free(f->key);
  tfq_free(f->dims);
  tfq_tensor_free(f->def);
  for (size_t i = 0; i < f->n_index; i++) tfq_free(f->index_keys[i]);
  tfq_free(f->index_keys);
  tfq_free(f->value_key);
  tfq_free(f->index_slots);
}

static void compiled_free(tfq_example_config *c) {
  tfq_free(c->slots);
  tfq_free(c->ht_hash);
  tfq_free(c->ht_slot);
  tfq_free(c->deferred);
  c->slots = NULL;
  c->ht_hash = NULL;
  c->ht_slot = NULL;
  c->deferred = NULL;
  c->nslots = c->ndense = 0;
  c->ht_mask = 0;
}

void tfq_example_config_free(tfq_example_config *cfg) {
  if (!cfg) return;
  for (size_t i = 0; i < cfg->n; i++) feature_clear(&cfg->f[i]);
  tfq_free(cfg->f);
  compiled_free(cfg);
  tfq_free(cfg);
}

/* ---- compiling -------------------------------------------------------------------------- */

static int is_dense(const tfq__ex_feature *f) {
  return f->kind == TFQ_EXAMPLE_FIXED_LEN || f->kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
}

/* Python's sparse_keys: VarLen keys and Sparse index keys (sorted) then value key, in the order
 * of the sorted feature keys, without repeats.  Fills keys/dts (room for every key) and returns
 * the count, or -1 after writing the "Conflicting type" message into *msg. */
static long sparse_keys(const tfq_example_config *c, const char **keys, tfq_dtype *dts,
                        tfq__buf *msg) {
  long n = 0;
  for (size_t i = 0; i < c->n; i++) {
    const tfq__ex_feature *f = &c->f[i];
    const char *add[TFQ_MAX_RANK + 2];
    tfq_dtype adt[TFQ_MAX_RANK + 2];
    size_t na = 0;
    if (f->kind == TFQ_EXAMPLE_VAR_LEN) {
      add[na] = f->key;
      adt[na++] = f->dtype;
    } else if (f->kind == TFQ_EXAMPLE_SPARSE) {
      size_t first = na;
      for (size_t j = 0; j < f->n_index; j++) { /* insertion sort: sorted(index_keys) */
        size_t k = na++;
        while (k > first && strcmp(add[k - 1], f->index_keys[j]) > 0) {
          add[k] = add[k - 1];
          k--;
        }
        add[k] = f->index_keys[j];
      }
      for (size_t j = first; j < na; j++) adt[j] = TFQ_INT64;
      add[na] = f->value_key;
      adt[na++] = f->dtype;
    }
    for (size_t j = 0; j < na; j++) {
      long k = 0;
      while (k < n && strcmp(keys[k], add[j]) != 0) k++;
      if (k < n) {
        if (dts[k] != adt[j]) {
          tfq__buf_printf(msg, "Conflicting type <dtype: '%s'> vs <dtype: '%s'> for feature %s.",
                          tfq__ex_py_dtype(dts[k]), tfq__ex_py_dtype(adt[j]), add[j]);
          return -1;
        }
        continue;
      }
      keys[n] = add[j];
      dts[n++] = adt[j];
    }
  }
  return n;
}

static int str_ptr_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The "Dense and sparse keys must not intersect" text, or nothing when they do not. */
static void intersection(const tfq_example_config *c, const char **skeys, long ns, const char **tmp,
                         tfq__buf *msg) {
  size_t ni = 0;
  for (size_t i = 0; i < c->n; i++)
    if (is_dense(&c->f[i]))
      for (long k = 0; k < ns; k++)
        if (strcmp(skeys[k], c->f[i].key) == 0) tmp[ni++] = c->f[i].key;
  if (!ni) return;
  qsort(tmp, ni, sizeof *tmp, str_ptr_cmp);
  tfq__buf_printf(msg, "Dense and sparse keys must not intersect; dense_keys: [");
  int first = 1;
  for (size_t i = 0; i < c->n; i++) {
    if (!is_dense(&c->f[i])) continue;
    if (!first) tfq__buf_printf(msg, ", ");
    first = 0;
    py_repr(msg, c->f[i].key);
  }
  tfq__buf_printf(msg, "], sparse_keys: [");
  for (long k = 0; k < ns; k++) {
    if (k) tfq__buf_printf(msg, ", ");
    py_repr(msg, skeys[k]);
  }
  tfq__buf_printf(msg, "], intersection: {");
  for (size_t i = 0; i < ni; i++) {
    if (i) tfq__buf_printf(msg, ", ");
    py_repr(msg, tmp[i]);
  }
  tfq__buf_printf(msg, "}");
}

tfq_code tfq__ex_compile(tfq_example_config *c) {
  size_t maxkeys = 0;
  for (size_t i = 0; i < c->n; i++)
    maxkeys += c->f[i].kind == TFQ_EXAMPLE_SPARSE ? c->f[i].n_index + 1 : 1;
  const char **skeys = tfq_malloc((maxkeys + 1) * 2 * sizeof *skeys);
  tfq_dtype *sdts = tfq_malloc((maxkeys + 1) * sizeof *sdts);
  char *msgbuf = tfq_malloc(TFQ__MSG_CAP);
  size_t buckets = 8;
  while (buckets < 2 * (maxkeys + 1)) buckets *= 2;
  tfq__ex_slot *slots = tfq__calloc(maxkeys + 1, sizeof *slots);
  uint64_t *hh = tfq__calloc(buckets, sizeof *hh);
  int32_t *hs = tfq__calloc(buckets, sizeof *hs);
  char *deferred = NULL;
  tfq__buf msg = {msgbuf, TFQ__MSG_CAP, 0};
  if (msgbuf) msgbuf[0] = '\0';
  long ns = skeys && sdts && msgbuf ? sparse_keys(c, skeys, sdts, &msg) : 0;
  if (ns >= 0 && skeys && msgbuf) intersection(c, skeys, ns, skeys + maxkeys + 1, &msg);
  if (msgbuf && msg.len) deferred = tfq__strdup(msgbuf);
  if (!skeys || !sdts || !msgbuf || !slots || !hh || !hs || (msg.len && !deferred)) {
    tfq_free(skeys);
    tfq_free(sdts);
    tfq_free(msgbuf);
    tfq_free(slots);
    tfq_free(hh);
    tfq_free(hs);
    tfq_free(deferred);
    return TFQ_RESOURCE_EXHAUSTED;
  }
  compiled_free(c);
  c->deferred = deferred;
  size_t n = 0;
  for (size_t i = 0; i < c->n; i++) {
    tfq__ex_feature *f = &c->f[i];
    if (!is_dense(f)) continue;
    slots[n] = (tfq__ex_slot){
        f->key,   f->key_len, f->kind == TFQ_EXAMPLE_FIXED_LEN ? TFQ__SLOT_FIXED : TFQ__SLOT_SEQ,
        f->dtype, f->stride,  i,
        f->def};
    f->slot = (int32_t)n++;
  }
  c->ndense = n;
  if (!deferred) {
    for (long k = 0; k < ns; k++)
      slots[n++] =
          (tfq__ex_slot){skeys[k], strlen(skeys[k]), TFQ__SLOT_VARLEN, sdts[k], 1, 0, NULL};
  }
  c->nslots = n;
  c->slots = slots;
  c->ht_hash = hh;
  c->ht_slot = hs;
  c->ht_mask = buckets - 1;
  for (size_t s = 0; s < n; s++) {
    uint64_t h = tfq__ex_hash((const uint8_t *)slots[s].key, slots[s].key_len);
    size_t b = (size_t)h & c->ht_mask;
    while (hs[b]) b = (b + 1) & c->ht_mask;
    hh[b] = h;
    hs[b] = (int32_t)s + 1;
  }
  for (size_t i = 0; i < c->n && !deferred; i++) {
    tfq__ex_feature *f = &c->f[i];
    if (f->kind == TFQ_EXAMPLE_VAR_LEN) {
      f->slot = tfq__ex_lookup(c, (const uint8_t *)f->key, f->key_len);
    } else if (f->kind == TFQ_EXAMPLE_SPARSE) {
      for (size_t j = 0; j < f->n_index; j++)
        f->index_slots[j] =
            tfq__ex_lookup(c, (const uint8_t *)f->index_keys[j], strlen(f->index_keys[j]));
      f->value_slot = tfq__ex_lookup(c, (const uint8_t *)f->value_key, strlen(f->value_key));
    }
  }
  tfq_free(skeys);
  tfq_free(sdts);
  tfq_free(msgbuf);
  return TFQ_OK;
}

/* ---- adding features ----------------------------------------------------------------------- */

/* Checks the key and finds its place; returns the insertion index or -1 (status set). */
static long find_place(const tfq_example_config *c, const char *key, tfq_status *st) {
  if (!key) {
    (void)bad(st, "feature key is NULL");
    return -1;
  }
  size_t kl = strlen(key), lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = key_cmp(c->f[mid].key, c->f[mid].key_len, key, kl);
    if (r == 0) {
      (void)bad(st, "Duplicate feature key: %s", key);
      return -1;
    }
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (long)lo;
}

static tfq_code check_dtype(const char *key, tfq_dtype dt, const char *param, tfq_status *st) {
  if ((int)dt == 0) return bad(st, "Missing type for feature %s.", key);
  if (!dtype_allowed(dt))
    return bad(st,
               "Value passed to parameter '%s' has DataType %s not in list of allowed values: "
               "float32, int64, string",
               param, tfq__ex_py_dtype(dt));
  return TFQ_OK;
}

/* Inserts *f at `at` (taking its allocations) and recompiles; on failure frees *f's
 * allocations and leaves the config as it was. */
static tfq_code insert(tfq_example_config *c, long at, tfq__ex_feature *f, tfq_status *st) {
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 8;
    tfq__ex_feature *nf = tfq_realloc(c->f, cap * sizeof *nf);
    if (!nf) {
      feature_clear(f);
      return TFQ__OOM(st);
    }
    c->f = nf;
    c->cap = cap;
  }
  memmove(&c->f[at + 1], &c->f[at], (c->n - (size_t)at) * sizeof *c->f);
  c->f[at] = *f;
  c->n++;
  if (tfq__ex_compile(c) != TFQ_OK) {
    feature_clear(&c->f[at]);
    memmove(&c->f[at], &c->f[at + 1], (c->n - (size_t)at - 1) * sizeof *c->f);
    c->n--;
    return TFQ__OOM(st);
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

/* Copies a key; 0 when out of memory. */
static int set_key(tfq__ex_feature *f, const char *key) {
  f->key = tfq__strdup(key);
  f->key_len = f->key ? strlen(key) : 0;
  return f->key != NULL;
}

/* A copy of `src`'s elements in a new tensor of dtype/dims (element counts equal). */
static tfq_code copy_reshaped(const tfq_tensor *src, tfq_dtype dt, const int64_t *dims, int rank,
                              tfq_tensor **out) {
  tfq_code rc = tfq__tensor_alloc(dt, dims, rank, 0, out, NULL);
  if (rc) return rc;
  if (dt == TFQ_STRING) {
    for (int64_t i = 0; i < (*out)->nelems; i++) tfq__strs(*out)[i] = tfq__strs(src)[i];
    rc = tfq__ex_own_strings(*out);
  } else if ((*out)->nbytes) {
    memcpy((*out)->data, src->data, (*out)->nbytes);
  }
  if (rc) {
    tfq_tensor_free(*out);
    *out = NULL;
  }
  return rc;
}

/* Number of dense features whose key sorts before `key` (TF's index d in dense_shapes[d]). */
static size_t dense_index(const tfq_example_config *c, long at) {
  size_t d = 0;
  for (long i = 0; i < at; i++) d += is_dense(&c->f[i]);
  return d;
}

tfq_code tfq_example_config_add_fixed_len(tfq_example_config *cfg, const char *key, tfq_dtype dtype,
                                          const int64_t *dims, int rank, const tfq_tensor *def,
                                          tfq_status *st) {
  long at = find_place(cfg, key, st);
  if (at < 0) return TFQ_INVALID_ARGUMENT;
  if ((int)dtype == 0) return bad(st, "Missing type for feature %s.", key);
  if (rank == TFQ_UNKNOWN_RANK) return bad(st, "Missing shape for feature %s.", key);
  if (rank < 0 || rank > TFQ_MAX_RANK - 1 || (rank && !dims)) /* [B] + shape must fit */
    return bad(st, "Invalid shape for feature %s: rank %d", key, rank);
  if (rank > 0 && dims[0] < 0)
    return bad(st,
               "First dimension of shape for feature %s unknown. Consider using "
               "FixedLenSequenceFeature.",
               key);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      char tmp[512];
      tfq__buf b = {tmp, sizeof tmp, 0};
      py_shape(&b, dims, rank);
      return bad(st, "All dimensions of shape for feature %s need to be known but received %s.",
                 key, tmp);
    }
    if (dims[i] && n > INT64_MAX / dims[i]) return bad(st, "Shape has too many elements");
    n *= dims[i];
  }
  if (def && tfq_tensor_dtype(def) != dtype)
    return dtype_allowed(tfq_tensor_dtype(def))
               ? bad(st, "Default value of feature %s has dtype %s, not %s (tfq converts no types)",
                     key, tfq__ex_py_dtype(tfq_tensor_dtype(def)), tfq__ex_py_dtype(dtype))
               : check_dtype(key, tfq_tensor_dtype(def), "dense_defaults", st);
  if (def && tfq_tensor_num_elements(def) != n) {
    char tmp[512];
    tfq__buf b = {tmp, sizeof tmp, 0};
    tfq__buf_shape(&b, dims, rank);
    return bad(st, "Cannot reshape a tensor with %lld elements to shape %s (%lld elements)",
               (long long)tfq_tensor_num_elements(def), tmp, (long long)n);
  }
  tfq_code rc = check_dtype(key, dtype, "dense_defaults", st);
  if (rc) return rc;
  tfq__ex_feature f = {0};
  f.kind = TFQ_EXAMPLE_FIXED_LEN;
  f.dtype = dtype;
  f.rank = rank;
  f.stride = n;
  if (!set_key(&f, key) || (rank && !(f.dims = tfq_malloc((size_t)rank * sizeof *f.dims))) ||
      (def && n > 0 && copy_reshaped(def, dtype, dims, rank, &f.def))) {
    feature_clear(&f);
    return TFQ__OOM(st);
  }
  if (rank) memcpy(f.dims, dims, (size_t)rank * sizeof *dims);
  return insert(cfg, at, &f, st);
}

tfq_code tfq_example_config_add_var_len(tfq_example_config *cfg, const char *key, tfq_dtype dtype,
                                        tfq_status *st) {
  long at = find_place(cfg, key, st);
  if (at < 0) return TFQ_INVALID_ARGUMENT;
  tfq_code rc = check_dtype(key, dtype, "sparse_types", st);
  if (rc) return rc;
  tfq__ex_feature f = {0};
  f.kind = TFQ_EXAMPLE_VAR_LEN;
  f.dtype = dtype;
  f.rank = 1;
  f.stride = 1;
  if (!set_key(&f, key) || !(f.dims = tfq_malloc(sizeof *f.dims))) {
    feature_clear(&f);
    return TFQ__OOM(st);
  }
  f.dims[0] = TFQ_UNKNOWN_DIM;
  return insert(cfg, at, &f, st);
}

tfq_code tfq_example_config_add_fixed_len_sequence(tfq_example_config *cfg, const char *key,
                                                   tfq_dtype dtype, const int64_t *dims, int rank,
                                                   int allow_missing, const tfq_tensor *pad,
                                                   tfq_status *st) {
  long at = find_place(cfg, key, st);
  if (at < 0) return TFQ_INVALID_ARGUMENT;
  if (!allow_missing)
    return bad(st, "Unsupported: FixedLenSequenceFeature requires allow_missing to be True.");
  if ((int)dtype == 0) return bad(st, "Missing type for feature %s.", key);
  if (rank == TFQ_UNKNOWN_RANK) return bad(st, "Missing shape for feature %s.", key);
  if (rank < 0 || rank > TFQ_MAX_RANK - 2 || (rank && !dims)) /* [B, rows] + shape must fit */
    return bad(st, "Invalid shape for feature %s: rank %d", key, rank);
  if (pad && tfq_tensor_dtype(pad) != dtype)
    return dtype_allowed(tfq_tensor_dtype(pad))
               ? bad(st, "Default value of feature %s has dtype %s, not %s (tfq converts no types)",
                     key, tfq__ex_py_dtype(tfq_tensor_dtype(pad)), tfq__ex_py_dtype(dtype))
               : check_dtype(key, tfq_tensor_dtype(pad), "dense_defaults", st);
  if (pad && tfq_tensor_num_elements(pad) != 1)
    return bad(st, "Cannot reshape a tensor with %lld elements to shape [] (1 elements)",
               (long long)tfq_tensor_num_elements(pad));
  tfq_code rc = check_dtype(key, dtype, "dense_defaults", st);
  if (rc) return rc;
  int64_t full[TFQ_MAX_RANK];
  full[0] = TFQ_UNKNOWN_DIM;
  int64_t n = 1;
  int unknown = 0, zero = 0;
  for (int i = 0; i < rank; i++) {
    full[i + 1] = dims[i];
    if (dims[i] < 0)
      unknown = 1;
    else if (dims[i] == 0)
      zero = 1;
    else if (n > INT64_MAX / dims[i])
      return bad(st, "Shape has too many elements");
    else
      n *= dims[i];
  }
  if (unknown || zero) {
    char tmp[512];
    tfq__buf b = {tmp, sizeof tmp, 0};
    tfq__buf_shape(&b, full, rank + 1);
    return bad(st, "dense_shapes[%zu] has %s: %s", dense_index(cfg, at),
               unknown ? "unknown rank or unknown inner dimensions" : "a zero inner dimension",
               tmp);
  }
  tfq__ex_feature f = {0};
  f.kind = TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
  f.dtype = dtype;
  f.rank = rank + 1;
  f.stride = n;
  if (!set_key(&f, key) || !(f.dims = tfq_malloc((size_t)(rank + 1) * sizeof *f.dims)) ||
      (pad ? copy_reshaped(pad, dtype, NULL, 0, &f.def)
           : tfq_tensor_new(dtype, NULL, 0, &f.def, NULL))) {
    feature_clear(&f);
    return TFQ__OOM(st);
  }
  memcpy(f.dims, full, (size_t)(rank + 1) * sizeof *full);
  return insert(cfg, at, &f, st);
}

tfq_code tfq_example_config_add_sparse(tfq_example_config *cfg, const char *key,
                                       const char *const *index_keys, size_t n_index,
                                       const char *value_key, tfq_dtype dtype, const int64_t *size,
                                       int already_sorted, tfq_status *st) {
  long at = find_place(cfg, key, st);
  if (at < 0) return TFQ_INVALID_ARGUMENT;
  if (n_index > TFQ_MAX_RANK - 1) return bad(st, "Too many index keys for feature %s", key);
  int missing_index = n_index == 0 || (n_index == 1 && (!index_keys[0] || !index_keys[0][0]));
  for (size_t i = 0; i < n_index; i++)
    if (!index_keys[i]) missing_index = 1;
  if (missing_index || !value_key || !value_key[0]) {
    char tmp[TFQ__MSG_CAP];
    tfq__buf b = {tmp, sizeof tmp, 0};
    tmp[0] = '\0';
    sparse_repr(&b, index_keys, n_index, value_key, dtype, size, already_sorted);
    return bad(st, "Missing %s for SparseFeature %s.", missing_index ? "index_key" : "value_key",
               tmp);
  }
  tfq_code rc = check_dtype(key, dtype, "sparse_types", st);
  if (rc) return rc;
  if (!size) return bad(st, "SparseFeature %s has no size", key);
  tfq__ex_feature f = {0};
  f.kind = TFQ_EXAMPLE_SPARSE;
  f.dtype = dtype;
  f.rank = (int)n_index;
  f.stride = 1;
  f.already_sorted = already_sorted != 0;
  f.n_index = 0;
  int ok = set_key(&f, key) && (f.dims = tfq_malloc(n_index * sizeof *f.dims)) &&
           (f.index_keys = tfq__calloc(n_index, sizeof *f.index_keys)) &&
           (f.index_slots = tfq__calloc(n_index, sizeof *f.index_slots)) &&
           (f.value_key = tfq__strdup(value_key));
  for (size_t i = 0; ok && i < n_index; i++) {
    ok = (f.index_keys[i] = tfq__strdup(index_keys[i])) != NULL;
    f.n_index += ok;
  }
  if (!ok) {
    feature_clear(&f);
    return TFQ__OOM(st);
  }
  memcpy(f.dims, size, n_index * sizeof *size);
  return insert(cfg, at, &f, st);
}

tfq_code tfq_example_config_check(const tfq_example_config *cfg, tfq_status *st) {
  if (cfg->n == 0) return bad(st, "Argument `features` cannot be None or falsy. Got {}");
  if (cfg->deferred) return bad(st, "%s", cfg->deferred);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- accessors ----------------------------------------------------------------------------- */

size_t tfq_example_config_size(const tfq_example_config *cfg) { return cfg->n; }
const char *tfq_example_config_key(const tfq_example_config *cfg, size_t i) {
  return cfg->f[i].key;
}
tfq_example_kind tfq_example_config_kind(const tfq_example_config *cfg, size_t i) {
  return cfg->f[i].kind;
}
int tfq_example_config_is_sparse(const tfq_example_config *cfg, size_t i) {
  return !is_dense(&cfg->f[i]);
}
tfq_dtype tfq_example_config_dtype(const tfq_example_config *cfg, size_t i) {
  return cfg->f[i].dtype;
}
int tfq_example_config_rank(const tfq_example_config *cfg, size_t i) { return cfg->f[i].rank; }
const tfq_tensor *tfq_example_config_default(const tfq_example_config *cfg, size_t i) {
  return cfg->f[i].def;
}
const int64_t *tfq_example_config_dims(const tfq_example_config *cfg, size_t i) {
  return cfg->f[i].rank ? cfg->f[i].dims : NULL;
}
int64_t tfq_example_config_find(const tfq_example_config *cfg, const char *key) {
  size_t kl = strlen(key), lo = 0, hi = cfg->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = key_cmp(cfg->f[mid].key, cfg->f[mid].key_len, key, kl);
    if (r == 0) return (int64_t)mid;
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}
