#define TFQ_EXPERIMENTAL /* defines tfq_spec_from_tuple */
#include <assert.h>
#include <string.h>
#include <tfq/experimental.h>

#include "base.h"

/* ---- dtypes ---- */

const char *tfq_dtype_name(tfq_dtype dt) {
  switch (dt) {
    case TFQ_FLOAT: return "float";
    case TFQ_DOUBLE: return "double";
    case TFQ_INT32: return "int32";
    case TFQ_UINT8: return "uint8";
    case TFQ_INT16: return "int16";
    case TFQ_INT8: return "int8";
    case TFQ_STRING: return "string";
    case TFQ_COMPLEX64: return "complex64";
    case TFQ_INT64: return "int64";
    case TFQ_BOOL: return "bool";
    case TFQ_UINT16: return "uint16";
    case TFQ_COMPLEX128: return "complex128";
    case TFQ_BFLOAT16: return "bfloat16";
    case TFQ_HALF: return "half";
  }
  return "invalid";
}

size_t tfq_dtype_size(tfq_dtype dt) {
  switch (dt) {
    case TFQ_FLOAT: return 4;
    case TFQ_DOUBLE: return 8;
    case TFQ_INT32: return 4;
    case TFQ_UINT8: return 1;
    case TFQ_INT16: return 2;
    case TFQ_INT8: return 1;
    case TFQ_STRING: return 0;
    case TFQ_COMPLEX64: return 8;
    case TFQ_INT64: return 8;
    case TFQ_BOOL: return 1;
    case TFQ_UINT16: return 2;
    case TFQ_COMPLEX128: return 16;
    case TFQ_BFLOAT16: return 2;
    case TFQ_HALF: return 2;
  }
  return 0;
}

int tfq_dtype_valid(tfq_dtype dt) { return dt == TFQ_STRING || tfq_dtype_size(dt) != 0; }

/* ---- tensors ---- */

struct tfq__arena_chunk {
  tfq__arena_chunk *next;
  size_t used, cap;
  char bytes[];
};

#define ARENA_MIN 4096

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

size_t tfq__tensor_arena_bytes(const tfq_tensor *t) {
  size_t n = 0;
  for (const tfq__arena_chunk *c = t->arena; c; c = c->next) n += c->used;
  return n;
}

static tfq_code check_shape(tfq_dtype dtype, const int64_t *dims, int rank, int64_t *nelems,
                            tfq_status *st) {
  if (!tfq_dtype_valid(dtype))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  if (rank < 0 || rank > TFQ_MAX_RANK)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "rank %d is outside [0, %d]", rank,
                          TFQ_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Dimension %d has negative size %lld", i,
                            (long long)dims[i]);
    if (dims[i] != 0 && n > INT64_MAX / dims[i])
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Shape has too many elements");
    n *= dims[i];
  }
  size_t bytes;
  size_t esz = dtype == TFQ_STRING ? sizeof(tfq__str) : tfq_dtype_size(dtype);
  if ((uint64_t)n > SIZE_MAX || !tfq__mul_ok((size_t)n, esz, &bytes) || bytes > SIZE_MAX / 2)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Shape has too many elements");
  *nelems = n;
  return TFQ_OK;
}

/* One block: header + dims, padded to the alignment, then the data. */
tfq_code tfq__tensor_alloc(tfq_dtype dtype, const int64_t *dims, int rank, int zero,
                           tfq_tensor **out, tfq_status *st) {
  *out = NULL;
  int64_t n;
  tfq_code c = check_shape(dtype, dims, rank, &n, st);
  if (c) return c;
  size_t esz = dtype == TFQ_STRING ? sizeof(tfq__str) : tfq_dtype_size(dtype);
  size_t data_bytes = (size_t)n * esz;
  size_t head = round_up(sizeof(tfq_tensor) + (size_t)rank * sizeof(int64_t), TFQ__ALIGN);
  size_t total = head + data_bytes + TFQ__ALIGN;
  char *block = tfq_malloc(total);
  if (!block) return TFQ__OOM(st);
  tfq_tensor *t = (tfq_tensor *)block;
  atomic_init(&t->refs, 1);
  t->dtype = dtype;
  t->rank = rank;
  t->nelems = n;
  t->nbytes = dtype == TFQ_STRING ? 0 : data_bytes;
  uintptr_t d = ((uintptr_t)block + head + TFQ__ALIGN - 1) & ~(uintptr_t)(TFQ__ALIGN - 1);
  t->data = (void *)d;
  t->dealloc = NULL;
  t->dealloc_arg = NULL;
  t->wrapped_len = 0;
  t->arena = NULL;
  t->keep = NULL;
  if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
  if (dtype == TFQ_STRING) {
    tfq__str *s = t->data;
    for (int64_t i = 0; i < n; i++) {
      s[i].p = "";
      s[i].len = 0;
    }
  } else if (zero && data_bytes) {
    memset(t->data, 0, data_bytes);
  }
  *out = t;
  return TFQ_OK;
}

tfq_code tfq_tensor_new(tfq_dtype dtype, const int64_t *dims, int rank, tfq_tensor **out,
                        tfq_status *st) {
  tfq_code c = tfq__tensor_alloc(dtype, dims, rank, 1, out, st);
  if (c == TFQ_OK) tfq_status_clear(st);
  return c;
}

tfq_code tfq_tensor_wrap(tfq_dtype dtype, const int64_t *dims, int rank, void *data, size_t len,
                         void (*deallocator)(void *, size_t, void *), void *arg, tfq_tensor **out,
                         tfq_status *st) {
  *out = NULL;
  if (dtype == TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "cannot wrap memory as a string tensor");
  int64_t n;
  tfq_code c = check_shape(dtype, dims, rank, &n, st);
  if (c) return c;
  size_t need = (size_t)n * tfq_dtype_size(dtype);
  if (len < need || (!data && need))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "buffer of %zu bytes is too small for %zu bytes of tensor data", len,
                          need);
  tfq_tensor *t = tfq_malloc(sizeof(tfq_tensor) + (size_t)rank * sizeof(int64_t));
  if (!t) {
    if (deallocator) deallocator(data, len, arg);
    return TFQ__OOM(st);
  }
  atomic_init(&t->refs, 1);
  t->dtype = dtype;
  t->rank = rank;
  t->nelems = n;
  t->nbytes = need;
  t->data = data;
  t->dealloc = deallocator;
  t->dealloc_arg = arg;
  t->wrapped_len = len;
  t->arena = NULL;
  t->keep = NULL;
  if (rank) memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
  *out = t;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_tensor *tfq_tensor_ref(tfq_tensor *t) {
  atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  return t;
}

static void keep_drop(tfq_tensor *t) {
  if (t->keep && t->keep->n) {
    tfq__tensors_release(t->keep->t, t->keep->n);
    t->keep->n = 0;
  }
}

static void destroy(tfq_tensor *t) {
  if (t->keep) {
    keep_drop(t);
    tfq_free(t->keep);
  }
  tfq__arena_chunk *a = t->arena;
  while (a) {
    tfq__arena_chunk *next = a->next;
    tfq_free(a);
    a = next;
  }
  if (t->dealloc) t->dealloc(t->data, t->wrapped_len, t->dealloc_arg);
  tfq_free(t);
}

void tfq_tensor_free(tfq_tensor *t) {
  if (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) destroy(t);
}

void tfq__tensor_release(tfq_tensor *t, int64_t k) {
  if (t && atomic_fetch_sub_explicit(&t->refs, (long)k, memory_order_acq_rel) == (long)k)
    destroy(t);
}

int64_t tfq_tensor_refcount(const tfq_tensor *t) {
  /* acquire: a caller that sees 1 and then writes the tensor (decode_csv_into, the _into
   * dequeues, the read-decode op's recycling) must order after the other owners' last reads,
   * which their tfq_tensor_free released. */
  return atomic_load_explicit(&((tfq_tensor *)t)->refs, memory_order_acquire);
}

tfq_dtype tfq_tensor_dtype(const tfq_tensor *t) { return t->dtype; }
int tfq_tensor_rank(const tfq_tensor *t) { return t->rank; }
int64_t tfq_tensor_dim(const tfq_tensor *t, int i) {
  assert(i >= 0 && i < t->rank);
  return t->dims[i];
}
const int64_t *tfq_tensor_dims(const tfq_tensor *t) { return t->dims; }
int64_t tfq_tensor_num_elements(const tfq_tensor *t) { return t->nelems; }
size_t tfq_tensor_byte_size(const tfq_tensor *t) { return t->nbytes; }
void *tfq_tensor_data(tfq_tensor *t) { return t->dtype == TFQ_STRING ? NULL : t->data; }
const void *tfq_tensor_cdata(const tfq_tensor *t) {
  return t->dtype == TFQ_STRING ? NULL : t->data;
}

const char *tfq_tensor_string(const tfq_tensor *t, int64_t i, size_t *len) {
  assert(t->dtype == TFQ_STRING && i >= 0 && i < t->nelems);
  const tfq__str *s = &tfq__strs(t)[i];
  if (len) *len = s->len;
  return s->p;
}

tfq_code tfq__tensor_put_string(tfq_tensor *t, int64_t i, const char *p, size_t len) {
  return tfq__tensor_put_string_at(t, &tfq__strs(t)[i], p, len);
}

tfq_code tfq__tensor_put_string_at(tfq_tensor *t, tfq__str *s, const char *p, size_t len) {
  if (len == 0) {
    s->p = "";
    s->len = 0;
    return TFQ_OK;
  }
  tfq__arena_chunk *a = t->arena;
  if (!a || a->cap - a->used < len) {
    size_t cap = len > ARENA_MIN ? len : ARENA_MIN;
    /* grow geometrically (from put_string's own chunks, not a small tfq__tensor_arena_alloc one) */
    if (a && len <= ARENA_MIN && a->cap >= ARENA_MIN && a->cap < 1u << 20) cap = a->cap * 2;
    tfq__arena_chunk *na = tfq_malloc(sizeof *na + cap);
    if (!na) return TFQ_RESOURCE_EXHAUSTED;
    na->used = 0;
    na->cap = cap;
    if (a && len > ARENA_MIN && a->cap - a->used >= ARENA_MIN / 4) {
      /* A big string gets its own chunk behind the current one, keeping the current open. */
      na->next = a->next;
      a->next = na;
    } else {
      na->next = a;
      t->arena = na;
    }
    a = na;
  }
  char *dst = a->bytes + a->used;
  memcpy(dst, p, len);
  a->used += len;
  s->p = dst;
  s->len = len;
  return TFQ_OK;
}

char *tfq__tensor_arena_alloc(tfq_tensor *t, size_t len) {
  if (len > SIZE_MAX - sizeof(tfq__arena_chunk)) return NULL;
  tfq__arena_chunk *na = tfq_malloc(sizeof *na + len);
  if (!na) return NULL;
  na->used = na->cap = len; /* full: put_string never writes into it */
  if (t->arena) {           /* behind the current chunk, which put_string keeps filling */
    na->next = t->arena->next;
    t->arena->next = na;
  } else {
    na->next = NULL;
    t->arena = na;
  }
  return na->bytes;
}

char *tfq__tensor_arena_take(tfq_tensor *t, size_t len) {
  tfq__arena_chunk *a = t->arena;
  if (a && a->cap - a->used >= len) {
    char *p = a->bytes + a->used;
    a->used += len;
    return p;
  }
  size_t cap = len < ARENA_MIN ? ARENA_MIN : len;
  if (a && a->cap <= (SIZE_MAX - sizeof *a) / 2 && cap < 2 * a->cap) cap = 2 * a->cap;
  if (cap > SIZE_MAX - sizeof *a) return NULL;
  tfq__arena_chunk *na = tfq_malloc(sizeof *na + cap);
  if (!na) return NULL;
  na->used = len;
  na->cap = cap;
  na->next = a;
  t->arena = na;
  return na->bytes;
}

int tfq__tensor_arena_reserve(tfq_tensor *t, size_t cap) {
  if (t->arena || cap == 0) return 0;
  if (cap > SIZE_MAX - sizeof(tfq__arena_chunk)) return -1;
  tfq__arena_chunk *na = tfq_malloc(sizeof *na + cap);
  if (!na) return -1;
  na->used = 0;
  na->cap = cap;
  na->next = NULL;
  t->arena = na;
  return 0;
}

void tfq__tensor_strings_reset(tfq_tensor *t) {
  tfq__str *s = tfq__strs(t);
  for (int64_t i = 0; i < t->nelems; i++) s[i] = (tfq__str){"", 0};
  tfq__tensor_arena_reset(t);
}

void tfq__tensor_arena_reset(tfq_tensor *t) {
  keep_drop(t);
  tfq__arena_chunk *a = t->arena;
  if (!a) return;
  for (tfq__arena_chunk *c = a->next, *n; c; c = n) {
    n = c->next;
    tfq_free(c);
  }
  a->next = NULL;
  a->used = 0;
}

int tfq__tensor_keep_reserve(tfq_tensor *t, size_t n) {
  size_t have = t->keep ? t->keep->n : 0, cap = t->keep ? t->keep->cap : 0;
  if (n <= cap - have) return 0;
  if (n > (SIZE_MAX - sizeof(tfq__keep)) / sizeof(tfq_tensor *) / 2 - have) return -1;
  size_t want = have + n < 2 * cap ? 2 * cap : have + n;
  tfq__keep *k = tfq_realloc(t->keep, sizeof *k + want * sizeof(tfq_tensor *));
  if (!k) return -1;
  k->n = have;
  k->cap = want;
  t->keep = k;
  return 0;
}

void tfq__tensor_keep_take(tfq_tensor *t, tfq_tensor **owners, size_t n) {
  tfq__keep *k = t->keep;
  assert(n == 0 || (k && n <= k->cap - k->n));
  for (size_t i = 0; i < n; i++)
    if (owners[i]) {
      k->t[k->n++] = owners[i];
      owners[i] = NULL;
    }
}

int tfq__tensor_keeps_several(const tfq_tensor *t) {
  if (!tfq__tensor_borrows(t)) return 0;
  for (size_t i = 1; i < t->keep->n; i++)
    if (t->keep->t[i] != t->keep->t[0]) return 1;
  return 0;
}

void tfq__tensors_release(tfq_tensor **b, size_t n) {
  enum { WAYS = 16 };
  tfq_tensor *t[WAYS] = {NULL};
  int64_t k[WAYS];
  for (size_t i = 0; i < n; i++) {
    tfq_tensor *p = b[i];
    if (!p) continue;
    size_t h = (size_t)(((uintptr_t)p * UINT64_C(0x9E3779B97F4A7C15)) >> 60) % WAYS;
    if (t[h] == p) {
      k[h]++;
      continue;
    }
    if (t[h]) tfq__tensor_release(t[h], k[h]); /* another owner in its way: settled now */
    t[h] = p;
    k[h] = 1;
  }
  for (int w = 0; w < WAYS; w++)
    if (t[w]) tfq__tensor_release(t[w], k[w]);
}

tfq_code tfq_tensor_set_string(tfq_tensor *t, int64_t i, const char *bytes, size_t len,
                               tfq_status *st) {
  if (t->dtype != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "tensor of dtype %s is not a string tensor",
                          tfq_dtype_name(t->dtype));
  if (i < 0 || i >= t->nelems)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "index %lld is outside [0, %lld)", (long long)i,
                          (long long)t->nelems);
  if (tfq__tensor_put_string(t, i, bytes, len)) return TFQ__OOM(st);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- tuples ---- */

tfq_code tfq_tuple_new(size_t n, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  if (n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a tuple needs at least one component");
  if (n > SIZE_MAX / sizeof(tfq_tensor *) - 1) return TFQ__OOM(st);
  tfq_tuple *t = tfq__calloc(1, sizeof(tfq_tuple) + n * sizeof(tfq_tensor *));
  if (!t) return TFQ__OOM(st);
  t->n = n;
  *out = t;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_tuple_free(tfq_tuple *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) tfq_tensor_free(t->c[i]);
  tfq_free(t);
}

size_t tfq_tuple_size(const tfq_tuple *t) { return t->n; }

void tfq_tuple_set_take(tfq_tuple *t, size_t i, tfq_tensor *tensor) {
  assert(i < t->n);
  tfq_tensor *old = t->c[i];
  t->c[i] = tensor;
  tfq_tensor_free(old);
}

tfq_tensor *tfq_tuple_get(const tfq_tuple *t, size_t i) {
  assert(i < t->n);
  return t->c[i];
}

/* ---- specs ---- */

tfq_code tfq_spec_new(tfq_spec **out, tfq_status *st) {
  *out = tfq__calloc(1, sizeof(tfq_spec));
  if (!*out) return TFQ__OOM(st);
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_spec_free(tfq_spec *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) tfq_free(s->c[i].name);
  tfq_free(s->c);
  tfq_free(s);
}

tfq_code tfq_spec_add(tfq_spec *s, tfq_dtype dtype, const int64_t *dims, int rank, const char *name,
                      tfq_status *st) {
  if (!tfq_dtype_valid(dtype))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "invalid dtype %d", (int)dtype);
  if (rank < TFQ_UNKNOWN_RANK || rank > TFQ_MAX_RANK)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "rank %d is outside [-1, %d]", rank,
                          TFQ_MAX_RANK);
  for (int i = 0; i < rank; i++)
    if (dims[i] < -1)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Dimension %d has invalid size %lld", i,
                            (long long)dims[i]);
  if (name)
    for (size_t i = 0; i < s->n; i++)
      if (s->c[i].name && strcmp(s->c[i].name, name) == 0)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "duplicate component name '%s'", name);
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    tfq__comp *c = tfq_realloc(s->c, cap * sizeof *c);
    if (!c) return TFQ__OOM(st);
    s->c = c;
    s->cap = cap;
  }
  tfq__comp *c = &s->c[s->n];
  memset(c, 0, sizeof *c);
  c->dtype = dtype;
  c->rank = rank;
  if (rank > 0) memcpy(c->dims, dims, (size_t)rank * sizeof(int64_t));
  if (name) {
    c->name = tfq__strdup(name);
    if (!c->name) return TFQ__OOM(st);
  }
  s->n++;
  tfq_status_clear(st);
  return TFQ_OK;
}

size_t tfq_spec_size(const tfq_spec *s) { return s->n; }
tfq_dtype tfq_spec_dtype(const tfq_spec *s, size_t i) {
  assert(i < s->n);
  return s->c[i].dtype;
}
int tfq_spec_rank(const tfq_spec *s, size_t i) {
  assert(i < s->n);
  return s->c[i].rank;
}
const int64_t *tfq_spec_dims(const tfq_spec *s, size_t i) {
  assert(i < s->n);
  return s->c[i].rank > 0 ? s->c[i].dims : NULL;
}
const char *tfq_spec_name(const tfq_spec *s, size_t i) {
  assert(i < s->n);
  return s->c[i].name;
}

int tfq__comp_fully_defined(const tfq__comp *c) {
  if (c->rank < 0) return 0;
  for (int i = 0; i < c->rank; i++)
    if (c->dims[i] < 0) return 0;
  return 1;
}

tfq_code tfq__spec_copy(const tfq_spec *src, tfq_spec **out, tfq_status *st) {
  tfq_spec *s;
  tfq_code c = tfq_spec_new(&s, st);
  if (c) return c;
  for (size_t i = 0; i < src->n; i++) {
    const tfq__comp *k = &src->c[i];
    c = tfq_spec_add(s, k->dtype, k->dims, k->rank, k->name, st);
    if (c) {
      tfq_spec_free(s);
      return c;
    }
  }
  *out = s;
  return TFQ_OK;
}

tfq_code tfq_spec_from_tuple(const tfq_tuple *t, tfq_spec **out, tfq_status *st) {
  *out = NULL;
  tfq_spec *s;
  tfq_code c = tfq_spec_new(&s, st);
  if (c) return c;
  for (size_t i = 0; i < t->n; i++) {
    if (!t->c[i]) {
      tfq_spec_free(s);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "tuple component %zu is not set", i);
    }
    c = tfq_spec_add(s, t->c[i]->dtype, t->c[i]->dims, t->c[i]->rank, NULL, st);
    if (c) {
      tfq_spec_free(s);
      return c;
    }
  }
  *out = s;
  return TFQ_OK;
}
