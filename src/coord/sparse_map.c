/* TF's SparseTensorsMap (sparse.h): add_sparse_to_tensors_map, add_many_sparse_to_tensors_map
 * and take_many_sparse_from_tensors_map, for SparseTensors through queues and batchers.
 *
 * An element is a view: rows [first, first + n) of an indices tensor (skipping `skip` leading
 * columns: 1 for the batch column of add_many) and of a values tensor, plus its dense_shape
 * tensor, each held by reference.  The map is an open-addressing hash table from handle to
 * element (linear probing, backward-shift deletion) under one mutex. */
#include <string.h>
#include <tfq/sparse.h>

#include "coord_internal.h"

typedef struct element {
  int64_t handle; /* -1: empty slot */
  tfq_tensor *indices, *values, *shape;
  int64_t first, n;
  int skip;
} element;

struct tfq_sparse_map {
  pthread_mutex_t mu;
  char *name;
  int64_t next; /* the next handle */
  element *slot;
  size_t cap, count; /* cap a power of two (or 0) */
};

static size_t home(const tfq_sparse_map *m, int64_t h) {
  return (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ULL) >> 17) & (m->cap - 1);
}

static void element_release(element *e) {
  tfq_tensor_free(e->indices);
  tfq_tensor_free(e->values);
  tfq_tensor_free(e->shape);
}

/* Room for `more` elements (load factor <= 1/2).  Under the lock. */
static int reserve(tfq_sparse_map *m, size_t more) {
  if (2 * (m->count + more) <= m->cap) return 1;
  size_t cap = m->cap ? m->cap : 64;
  while (2 * (m->count + more) > cap) cap *= 2;
  element *s = tfq_malloc(cap * sizeof *s);
  if (!s) return 0;
  for (size_t i = 0; i < cap; i++) s[i].handle = -1;
  element *old = m->slot;
  size_t ocap = m->cap;
  m->slot = s;
  m->cap = cap;
  for (size_t i = 0; i < ocap; i++) {
    if (old[i].handle < 0) continue;
    size_t j = home(m, old[i].handle);
    while (s[j].handle >= 0) j = (j + 1) & (cap - 1);
    s[j] = old[i];
  }
  tfq_free(old);
  return 1;
}

/* Stores `e` (its references move into the map) under the next handle.  Under the lock, after
 * reserve(). */
static int64_t insert(tfq_sparse_map *m, element e) {
  e.handle = m->next++;
  size_t j = home(m, e.handle);
  while (m->slot[j].handle >= 0) j = (j + 1) & (m->cap - 1);
  m->slot[j] = e;
  m->count++;
  return e.handle;
}

/* Takes the element of handle `h` out of the map into *out; 0 when there is none.  Under the
 * lock. */
static int take(tfq_sparse_map *m, int64_t h, element *out) {
  if (!m->cap || h < 0) return 0;
  size_t mask = m->cap - 1, j = home(m, h);
  while (m->slot[j].handle != h) {
    if (m->slot[j].handle < 0) return 0;
    j = (j + 1) & mask;
  }
  *out = m->slot[j];
  m->count--;
  /* backward-shift deletion: pull later members of the probe run into the hole */
  for (size_t k = (j + 1) & mask;; k = (k + 1) & mask) {
    if (m->slot[k].handle < 0) break;
    size_t want = home(m, m->slot[k].handle);
    /* k's element may move to j when j lies cyclically in [want, k) */
    if (((k - want) & mask) >= ((k - j) & mask)) {
      m->slot[j] = m->slot[k];
      j = k;
    }
  }
  m->slot[j].handle = -1;
  return 1;
}

tfq_code tfq_sparse_map_new(const char *name, tfq_sparse_map **out, tfq_status *st) {
  *out = NULL;
  tfq_sparse_map *m = tfq__calloc(1, sizeof *m);
  if (!m) return TFQ__OOM(st);
  if (!(m->name = tfq__strdup(name ? name : "SparseTensorsMap")) || tfq__mutex_init(&m->mu)) {
    tfq_free(m->name);
    tfq_free(m);
    return TFQ__OOM(st);
  }
  *out = m;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_sparse_map_free(tfq_sparse_map *m) {
  if (!m) return;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slot[i].handle >= 0) element_release(&m->slot[i]);
  tfq_free(m->slot);
  pthread_mutex_destroy(&m->mu);
  tfq_free(m->name);
  tfq_free(m);
}

const char *tfq_sparse_map_name(const tfq_sparse_map *m) { return m->name; }

int64_t tfq_sparse_map_size(tfq_sparse_map *m) {
  tfq__lock(&m->mu);
  int64_t n = (int64_t)m->count;
  tfq__unlock(&m->mu);
  return n;
}

void tfq_sparse_tensor_release(tfq_sparse_tensor *sp) {
  if (!sp) return;
  tfq_tensor_free(sp->indices);
  tfq_tensor_free(sp->values);
  tfq_tensor_free(sp->dense_shape);
  sp->indices = sp->values = sp->dense_shape = NULL;
}

static const char *shape_str(const tfq_tensor *t, char *b, size_t cap) {
  tfq__buf buf = {b, cap, 0};
  b[0] = '\0';
  tfq__buf_shape(&buf, t->dims, t->rank);
  return b;
}

/* The checks common to both add ops: non-NULL tensors, int64 indices and shape, and the ranks. */
static tfq_code check_inputs(const tfq_sparse_tensor *sp, tfq_status *st) {
  char b[128];
  if (!sp || !sp->indices || !sp->values || !sp->dense_shape)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a sparse tensor needs its three tensors");
  if (sp->indices->dtype != TFQ_INT64 || sp->dense_shape->dtype != TFQ_INT64)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "sparse indices and dense_shape must be int64");
  if (sp->indices->rank != 2)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Input indices should be a matrix but received shape %s",
                          shape_str(sp->indices, b, sizeof b));
  if (sp->values->rank != 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Input values should be a vector but received shape %s",
                          shape_str(sp->values, b, sizeof b));
  if (sp->dense_shape->rank != 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Input shape should be a vector but received shape %s",
                          shape_str(sp->dense_shape, b, sizeof b));
  return TFQ_OK;
}

static tfq_code new_scalar_handles(int64_t n, int vector, tfq_tensor **out, tfq_status *st) {
  return tfq__tensor_alloc(TFQ_INT64, &n, vector ? 1 : 0, 0, out, st);
}

tfq_code tfq_sparse_map_add(tfq_sparse_map *m, const tfq_sparse_tensor *sp, tfq_tensor **handle,
                            tfq_status *st) {
  *handle = NULL;
  tfq_code c = check_inputs(sp, st);
  if (c) return c;
  const int64_t *dims = sp->dense_shape->data;
  for (int64_t d = 0; d < sp->dense_shape->nelems; d++)
    if (dims[d] < 0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Dimension %lld must be >= 0",
                            (long long)dims[d]);
  int64_t rows = sp->indices->dims[0];
  if (rows != sp->values->dims[0])
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "indices and values rows (indexing dimension) must match. "
                          "(indices = %lld, values = %lld)",
                          (long long)rows, (long long)sp->values->dims[0]);
  if (sp->indices->dims[1] != sp->dense_shape->nelems)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Order length must be SparseTensor rank.");
  if ((c = new_scalar_handles(1, 0, handle, st))) return c;
  element e = {0,
               tfq_tensor_ref(sp->indices),
               tfq_tensor_ref(sp->values),
               tfq_tensor_ref(sp->dense_shape),
               0,
               rows,
               0};
  tfq__lock(&m->mu);
  int ok = reserve(m, 1);
  if (ok) *(int64_t *)(*handle)->data = insert(m, e);
  tfq__unlock(&m->mu);
  if (!ok) {
    element_release(&e);
    tfq_tensor_free(*handle);
    *handle = NULL;
    return TFQ__OOM(st);
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

/* TF's SparseTensor::IndicesValid for `rows` index rows of `r` columns under `shape`. */
static tfq_code indices_valid(const int64_t *ix, int64_t rows, int64_t r, const int64_t *shape,
                              tfq_status *st) {
  for (int64_t n = 0; n < rows; n++) {
    const int64_t *row = ix + n * r, *prev = row - r;
    int valid = 1, different = n == 0, increasing = 1;
    for (int64_t d = 0; d < r; d++) {
      if (row[d] < 0 || row[d] >= shape[d]) valid = 0;
      if (n == 0) continue;
      int64_t diff = row[d] - prev[d];
      if (diff > 0) different = 1;
      if (!different && diff < 0) increasing = 0;
    }
    if (valid && increasing && different) continue;
    char b[TFQ__MSG_CAP];
    tfq__buf buf = {b, sizeof b, 0};
    b[0] = '\0';
    tfq__buf_printf(&buf, "indices[%lld] = [", (long long)n);
    for (int64_t d = 0; d < r; d++)
      tfq__buf_printf(&buf, "%lld%s", (long long)row[d], d < r - 1 ? "," : "]");
    if (!valid) {
      tfq__buf_printf(&buf, " is out of bounds: need 0 <= index < [");
      for (int64_t d = 0; d < r; d++)
        tfq__buf_printf(&buf, "%lld%s", (long long)shape[d], d < r - 1 ? "," : "]");
    } else if (!increasing) {
      tfq__buf_printf(&buf,
                      " is out of order. Many sparse ops require sorted indices.\n    Use "
                      "`tf.sparse.reorder` to create a correctly ordered copy.\n\n");
    } else {
      tfq__buf_printf(&buf, " is repeated");
    }
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", b);
  }
  return TFQ_OK;
}

tfq_code tfq_sparse_map_add_many(tfq_sparse_map *m, const tfq_sparse_tensor *sp,
                                 tfq_tensor **handles, tfq_status *st) {
  *handles = NULL;
  tfq_code c = check_inputs(sp, st);
  if (c) return c;
  char b[128];
  const tfq_tensor *ix = sp->indices;
  int64_t rows = ix->dims[0], r = ix->dims[1], rank = sp->dense_shape->nelems;
  if (sp->values->dims[0] != rows)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Number of values must match first dimension of indices. Got %lld "
                          "values, indices shape: %s",
                          (long long)sp->values->dims[0], shape_str(ix, b, sizeof b));
  if (rank != r)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Number of dimensions must match second dimension of indices. Got %lld "
                          "dimensions, indices shape: %s",
                          (long long)rank, shape_str(ix, b, sizeof b));
  if (rank <= 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Rank of input SparseTensor should be > 1, but saw rank: %lld",
                          (long long)rank);
  const int64_t *shape = sp->dense_shape->data, *idx = ix->data;
  for (int64_t d = 0; d < rank; d++)
    if (shape[d] < 0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Expected shape dimensions to be non-negative, got %lld",
                            (long long)shape[d]);
  if ((c = indices_valid(idx, rows, r, shape, st))) return c;
  int64_t n = shape[0], edims = rank - 1;
  tfq_tensor *eshape = NULL;
  if ((c = tfq__tensor_alloc(TFQ_INT64, &edims, 1, 0, &eshape, st))) return c;
  memcpy(eshape->data, shape + 1, (size_t)edims * sizeof(int64_t));
  if ((c = new_scalar_handles(n, 1, handles, st))) {
    tfq_tensor_free(eshape);
    return c;
  }
  int64_t *h = (*handles)->data;
  tfq__lock(&m->mu);
  int ok = reserve(m, (size_t)n);
  if (ok) {
    /* the non-empty entries in row order (the indices are sorted), then the empty ones */
    for (int64_t i = 0; i < n; i++) h[i] = -1;
    for (int64_t s = 0; s < rows;) {
      int64_t e = s + 1, row = idx[s * r];
      while (e < rows && idx[e * r] == row) e++;
      element el = {0,
                    tfq_tensor_ref(sp->indices),
                    tfq_tensor_ref(sp->values),
                    tfq_tensor_ref(eshape),
                    s,
                    e - s,
                    1};
      h[row] = insert(m, el);
      s = e;
    }
    for (int64_t i = 0; i < n; i++)
      if (h[i] < 0)
        h[i] = insert(m, (element){0, tfq_tensor_ref(sp->indices), tfq_tensor_ref(sp->values),
                                   tfq_tensor_ref(eshape), 0, 0, 1});
  }
  tfq__unlock(&m->mu);
  tfq_tensor_free(eshape);
  if (!ok) {
    tfq_tensor_free(*handles);
    *handles = NULL;
    return TFQ__OOM(st);
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

/* Copies the values of the taken elements into `out` (string bytes into one arena block). */
static tfq_code gather_values(const element *e, int64_t b, tfq_tensor *out, tfq_status *st) {
  if (out->dtype != TFQ_STRING) {
    size_t esz = tfq_dtype_size(out->dtype), w = 0;
    for (int64_t i = 0; i < b; i++) {
      size_t nb = (size_t)e[i].n * esz;
      if (nb) memcpy((char *)out->data + w, (const char *)e[i].values->data + e[i].first * esz, nb);
      w += nb;
    }
    return TFQ_OK;
  }
  size_t bytes = 0;
  for (int64_t i = 0; i < b; i++)
    for (int64_t k = 0; k < e[i].n; k++) bytes += tfq__strs(e[i].values)[e[i].first + k].len;
  char *arena = bytes ? tfq__tensor_arena_alloc(out, bytes) : NULL;
  if (bytes && !arena) return TFQ__OOM(st);
  tfq__str *o = tfq__strs(out);
  for (int64_t i = 0; i < b; i++)
    for (int64_t k = 0; k < e[i].n; k++) {
      const tfq__str *s = &tfq__strs(e[i].values)[e[i].first + k];
      if (s->len) memcpy(arena, s->p, s->len);
      o->p = s->len ? arena : "";
      o->len = s->len;
      arena += s->len;
      o++;
    }
  return TFQ_OK;
}

/* The batched SparseTensor of the taken elements e[0..b) (see sparse.h). */
static tfq_code assemble(const element *e, int64_t b, tfq_dtype dtype, tfq_sparse_tensor *out,
                         tfq_status *st) {
  if (!dtype) dtype = e[0].values->dtype;
  for (int64_t i = 0; i < b; i++)
    if (e[i].values->dtype != dtype)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Requested SparseTensor of type %s but SparseTensor[%lld]"
                            ".values.dtype() == %s",
                            tfq_dtype_name(dtype), (long long)i,
                            tfq_dtype_name(e[i].values->dtype));
  int64_t r = e[0].shape->nelems, total = 0;
  for (int64_t i = 0; i < b; i++) {
    if (e[i].shape->nelems != r)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Inconsistent rank across SparseTensors: rank prior to "
                            "SparseTensor[%lld] was: %lld but rank of SparseTensor[%lld] is: %lld",
                            (long long)i, (long long)r + 1, (long long)i,
                            (long long)e[i].shape->nelems + 1);
    total += e[i].n;
  }
  int64_t idims[2] = {total, r + 1}, sdim = r + 1;
  tfq_code c = tfq__tensor_alloc(TFQ_INT64, idims, 2, 0, &out->indices, st);
  if (!c) c = tfq__tensor_alloc(dtype, &total, 1, 0, &out->values, st);
  if (!c) c = tfq__tensor_alloc(TFQ_INT64, &sdim, 1, 0, &out->dense_shape, st);
  if (!c) c = gather_values(e, b, out->values, st);
  if (c) {
    tfq_sparse_tensor_release(out);
    return c;
  }
  int64_t *oi = out->indices->data, *os = out->dense_shape->data;
  os[0] = b;
  for (int64_t d = 0; d < r; d++) os[d + 1] = 0;
  for (int64_t i = 0; i < b; i++) {
    const int64_t *es = e[i].shape->data;
    for (int64_t d = 0; d < r; d++)
      if (es[d] > os[d + 1]) os[d + 1] = es[d];
    int64_t cols = e[i].indices->dims[1];
    const int64_t *src = (const int64_t *)e[i].indices->data + e[i].first * cols + e[i].skip;
    for (int64_t k = 0; k < e[i].n; k++, src += cols) {
      *oi++ = i;
      memcpy(oi, src, (size_t)r * sizeof(int64_t));
      oi += r;
    }
  }
  return TFQ_OK;
}

tfq_code tfq_sparse_map_take_many(tfq_sparse_map *m, const tfq_tensor *handles, tfq_dtype dtype,
                                  tfq_sparse_tensor *out, tfq_status *st) {
  out->indices = out->values = out->dense_shape = NULL;
  char b[128];
  if (!handles || handles->dtype != TFQ_INT64)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "sparse_handles must be int64");
  /* [B, 1] is the batch of a component of shape [1], squeezed as TF's _restore_sparse_tensors */
  if (handles->rank != 1 && !(handles->rank == 2 && handles->dims[1] == 1))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "sparse_handles should be a vector but received shape %s",
                          shape_str(handles, b, sizeof b));
  int64_t n = handles->dims[0];
  if (n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Must have at least 1 serialized SparseTensor, but input matrix has 0 "
                          "rows");
  element *e = tfq_malloc((size_t)n * sizeof *e);
  if (!e) return TFQ__OOM(st);
  const int64_t *h = handles->data;
  int64_t got = 0;
  tfq__lock(&m->mu);
  while (got < n && take(m, h[got], &e[got])) got++;
  tfq__unlock(&m->mu);
  tfq_code c = got < n ? tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                                        "Unable to find SparseTensor: %lld in map: %s",
                                        (long long)h[got], m->name)
                       : assemble(e, n, dtype, out, st);
  for (int64_t i = 0; i < got; i++) element_release(&e[i]);
  tfq_free(e);
  if (!c) tfq_status_clear(st);
  return c;
}
