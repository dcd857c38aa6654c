/* Building the outputs of a parse from its buffers (TF's merge step), SparseFeature's
 * sparse_merge, and the result object. */
#include <string.h>

#include "example_internal.h"

tfq_code tfq__ex_own_strings(tfq_tensor *t) {
  tfq__str *s = tfq__strs(t);
  size_t total = 0;
  for (int64_t i = 0; i < t->nelems; i++) total += s[i].len;
  if (total == 0) return TFQ_OK;
  char *a = tfq__tensor_arena_alloc(t, total);
  if (!a) return TFQ_RESOURCE_EXHAUSTED;
  for (int64_t i = 0; i < t->nelems; i++) {
    if (!s[i].len) continue;
    memcpy(a, s[i].p, s[i].len);
    s[i].p = a;
    a += s[i].len;
  }
  return TFQ_OK;
}

static size_t esize(tfq_dtype dt) {
  return dt == TFQ_STRING ? sizeof(tfq__str) : dt == TFQ_FLOAT ? 4 : 8;
}

/* A new tensor; a NULL-status OOM or shape error becomes the status. */
static tfq_code alloc(tfq_dtype dt, const int64_t *dims, int rank, tfq_tensor **out,
                      tfq_status *st) {
  tfq_code rc = tfq__tensor_alloc(dt, dims, rank, 0, out, st);
  return rc;
}

/* values [n] of dt from a buffer slice (strings copied into the tensor). */
static tfq_code values_tensor(tfq_dtype dt, const void *v, size_t n, const size_t *perm,
                              tfq_tensor **out, tfq_status *st) {
  int64_t dim = (int64_t)n;
  tfq_code rc = alloc(dt, &dim, 1, out, st);
  if (rc) return rc;
  size_t es = esize(dt);
  char *dst = dt == TFQ_STRING ? (char *)tfq__strs(*out) : (char *)(*out)->data;
  if (perm) {
    for (size_t i = 0; i < n; i++) memcpy(dst + i * es, (const char *)v + perm[i] * es, es);
  } else if (n) {
    memcpy(dst, v, n * es);
  }
  if (dt == TFQ_STRING && tfq__ex_own_strings(*out)) {
    tfq_tensor_free(*out);
    *out = NULL;
    return TFQ__OOM(st);
  }
  return TFQ_OK;
}

static tfq_code shape_tensor(const int64_t *v, int n, tfq_tensor **out, tfq_status *st) {
  int64_t dim = n;
  tfq_code rc = alloc(TFQ_INT64, &dim, 1, out, st);
  if (rc == TFQ_OK && n) memcpy((*out)->data, v, (size_t)n * sizeof *v);
  return rc;
}

static void sparse_free(tfq_sparse_tensor *sp) {
  tfq_tensor_free(sp->indices);
  tfq_tensor_free(sp->values);
  tfq_tensor_free(sp->dense_shape);
  sp->indices = sp->values = sp->dense_shape = NULL;
}

/* FixedLenSequence: [B, max rows] + row shape padded, or [rows] + row shape (single). */
static tfq_code build_seq(const tfq__ex_feature *f, const tfq__ex_buf *b, int64_t B, int single,
                          tfq_tensor **out, tfq_status *st) {
  int64_t stride = f->stride, maxrows = 0, prev = 0;
  for (int64_t e = 0; e < B; e++) {
    int64_t rows = (b->ends[e] - prev) / stride;
    if (rows > maxrows) maxrows = rows;
    prev = b->ends[e];
  }
  int64_t dims[TFQ_MAX_RANK + 1];
  int rank = 0;
  if (!single) dims[rank++] = B;
  dims[rank++] = maxrows;
  for (int i = 1; i < f->rank; i++) dims[rank++] = f->dims[i];
  tfq_code rc = alloc(f->dtype, dims, rank, out, st);
  if (rc) return rc;
  tfq_tensor *t = *out;
  size_t es = esize(f->dtype), per = (size_t)(maxrows * stride);
  char *data = f->dtype == TFQ_STRING ? (char *)tfq__strs(t) : (char *)t->data;
  const char *pad = f->dtype == TFQ_STRING ? (const char *)tfq__strs(f->def) : f->def->data;
  prev = 0;
  for (int64_t e = 0; e < B; e++) {
    size_t have = (size_t)(b->ends[e] - prev);
    char *row = data + (size_t)e * per * es;
    if (have) memcpy(row, (const char *)b->v + (size_t)prev * es, have * es);
    for (size_t i = have; i < per; i++) memcpy(row + i * es, pad, es);
    prev = b->ends[e];
  }
  if (f->dtype == TFQ_STRING && tfq__ex_own_strings(t)) {
    tfq_tensor_free(t);
    *out = NULL;
    return TFQ__OOM(st);
  }
  return TFQ_OK;
}

/* VarLen: indices [N,2] of (example, position) and dense_shape [B, max]; single: [N,1], [N]. */
static tfq_code build_varlen(const tfq__ex_feature *f, const tfq__ex_buf *b, int64_t B, int single,
                             tfq_sparse_tensor *sp, tfq_status *st) {
  int64_t n = (int64_t)b->n, idims[2] = {n, single ? 1 : 2}, shape[2] = {B, 0};
  tfq_code rc = alloc(TFQ_INT64, idims, 2, &sp->indices, st);
  if (rc) return rc;
  int64_t *ix = sp->indices->data, prev = 0;
  if (single) {
    for (int64_t j = 0; j < n; j++) ix[j] = j;
    shape[0] = n;
  } else {
    for (int64_t e = 0; e < B; e++) {
      int64_t cnt = b->ends[e] - prev;
      if (cnt > shape[1]) shape[1] = cnt;
      for (int64_t j = 0; j < cnt; j++) {
        *ix++ = e;
        *ix++ = j;
      }
      prev = b->ends[e];
    }
  }
  if ((rc = values_tensor(f->dtype, b->v, b->n, NULL, &sp->values, st)) ||
      (rc = shape_tensor(shape, single ? 1 : 2, &sp->dense_shape, st)))
    return rc;
  return TFQ_OK;
}

static int row_cmp(const int64_t *rows, size_t ncol, size_t a, size_t b) {
  const int64_t *x = rows + a * ncol, *y = rows + b * ncol;
  for (size_t i = 0; i < ncol; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* A stable bottom-up merge sort of perm[0..n) by row. */
static void sort_rows(const int64_t *rows, size_t ncol, size_t *perm, size_t *tmp, size_t n) {
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = row_cmp(rows, ncol, perm[j], perm[i]) < 0 ? perm[j++] : perm[i++];
      while (i < mid) tmp[k++] = perm[i++];
      while (j < hi) tmp[k++] = perm[j++];
    }
    memcpy(perm, tmp, n * sizeof *perm);
  }
}

/* SparseFeature: TF's sparse_merge of the index lists and the value list. */
static tfq_code build_sparse(const tfq__ex_feature *f, const tfq__ex_buf *bufs, int64_t B,
                             int single, tfq_sparse_tensor *sp, tfq_status *st) {
  const tfq__ex_buf *b0 = &bufs[f->index_slots[0]], *bv = &bufs[f->value_slot];
  size_t n = b0->n, nidx = f->n_index, ncol = nidx + (single ? 0 : 1);
  for (size_t k = 1; k < nidx; k++) {
    size_t nk = bufs[f->index_slots[k]].n;
    if (nk != n)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "ConcatOp : Dimension 0 in both shapes must be equal: shape[0] = "
                            "[%zu,%d] vs. shape[%zu] = [%zu,1]",
                            n, single ? 0 : 1, k + 1, nk);
  }
  if (!f->already_sorted && bv->n != n)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Number of elements in indices (%zu) and values (%zu) do not match", n,
                          bv->n);
  int64_t idims[2] = {(int64_t)n, (int64_t)ncol};
  tfq_code rc = alloc(TFQ_INT64, idims, 2, &sp->indices, st);
  if (rc) return rc;
  size_t rows_n = n * ncol > 0 ? n * ncol : 1, perm_n = n ? n : 1;
  int64_t *rows = tfq_malloc(rows_n * sizeof *rows);
  size_t *perm = f->already_sorted ? NULL : tfq_malloc(2 * perm_n * sizeof *perm);
  if (!rows || (!f->already_sorted && !perm)) {
    tfq_free(rows);
    tfq_free(perm);
    return TFQ__OOM(st);
  }
  if (!single) { /* column 0: the example of each value of the first index list */
    int64_t e = 0;
    for (size_t r = 0; r < n; r++) {
      while (e < B && b0->ends[e] <= (int64_t)r) e++;
      rows[r * ncol] = e;
    }
  }
  for (size_t k = 0; k < nidx; k++) {
    const int64_t *v = bufs[f->index_slots[k]].v;
    for (size_t r = 0; r < n; r++) rows[r * ncol + (ncol - nidx) + k] = v[r];
  }
  int64_t *ix = sp->indices->data;
  if (perm) {
    for (size_t r = 0; r < n; r++) perm[r] = r;
    sort_rows(rows, ncol, perm, perm + perm_n, n);
    for (size_t r = 0; r < n; r++) memcpy(ix + r * ncol, rows + perm[r] * ncol, ncol * sizeof *ix);
  } else if (n * ncol > 0) {
    memcpy(ix, rows, n * ncol * sizeof *ix);
  }
  tfq_free(rows);
  int64_t shape[TFQ_MAX_RANK + 1];
  int sr = 0;
  if (!single) shape[sr++] = B;
  for (size_t k = 0; k < nidx; k++) shape[sr++] = f->dims[k];
  rc = values_tensor(f->dtype, bv->v, bv->n, perm, &sp->values, st);
  tfq_free(perm);
  if (rc == TFQ_OK) rc = shape_tensor(shape, sr, &sp->dense_shape, st);
  return rc;
}

tfq_code tfq__ex_build(const tfq_example_config *cfg, tfq_tensor **fixed, tfq__ex_buf *bufs,
                       int64_t B, int single, tfq_example_result *r, tfq_status *st) {
  for (size_t i = 0; i < cfg->n; i++) {
    const tfq__ex_feature *f = &cfg->f[i];
    tfq__ex_out *o = &r->o[i];
    tfq_code rc = TFQ_OK;
    switch (f->kind) {
      case TFQ_EXAMPLE_FIXED_LEN:
        o->dense = fixed[f->slot];
        fixed[f->slot] = NULL;
        break;
      case TFQ_EXAMPLE_FIXED_LEN_SEQUENCE:
        rc = build_seq(f, &bufs[f->slot], B, single, &o->dense, st);
        break;
      case TFQ_EXAMPLE_VAR_LEN:
        o->is_sparse = 1;
        rc = build_varlen(f, &bufs[f->slot], B, single, &o->sp, st);
        break;
      case TFQ_EXAMPLE_SPARSE:
        o->is_sparse = 1;
        rc = build_sparse(f, bufs, B, single, &o->sp, st);
        break;
    }
    if (rc) return rc;
  }
  return TFQ_OK;
}

/* ---- the result object ------------------------------------------------------------------- */

tfq_example_result *tfq__ex_result_new(const tfq_example_config *cfg) {
  size_t kb = 0; /* one block: the result, its outputs, the keys */
  for (size_t i = 0; i < cfg->n; i++) kb += cfg->f[i].key_len + 1;
  tfq_example_result *r = tfq__calloc(1, sizeof *r + cfg->n * sizeof *r->o + kb);
  if (!r) return NULL;
  r->o = (tfq__ex_out *)(r + 1);
  r->keys = (char *)(r->o + cfg->n);
  r->n = cfg->n;
  char *k = r->keys;
  for (size_t i = 0; i < cfg->n; i++) {
    memcpy(k, cfg->f[i].key, cfg->f[i].key_len + 1);
    r->o[i].key = k;
    k += cfg->f[i].key_len + 1;
  }
  return r;
}

void tfq_example_result_free(tfq_example_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    tfq_tensor_free(r->o[i].dense);
    sparse_free(&r->o[i].sp);
  }
  tfq_free(r);
}

size_t tfq_example_result_size(const tfq_example_result *r) { return r->n; }
const char *tfq_example_result_key(const tfq_example_result *r, size_t i) { return r->o[i].key; }
int tfq_example_result_is_sparse(const tfq_example_result *r, size_t i) {
  return r->o[i].is_sparse;
}
tfq_tensor *tfq_example_result_dense(const tfq_example_result *r, size_t i) {
  return r->o[i].is_sparse ? NULL : r->o[i].dense;
}
const tfq_sparse_tensor *tfq_example_result_sparse(const tfq_example_result *r, size_t i) {
  return r->o[i].is_sparse ? &r->o[i].sp : NULL;
}
int64_t tfq_example_result_find(const tfq_example_result *r, const char *key) {
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->o[i].key, key) == 0) return (int64_t)i;
  return -1;
}

tfq_code tfq_example_result_to_tuple(const tfq_example_result *r, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++) n += r->o[i].is_sparse ? 3 : 1;
  tfq_code rc = tfq_tuple_new(n ? n : 1, out, st);
  if (rc) return rc == TFQ_INVALID_ARGUMENT ? TFQ__OOM(st) : rc;
  size_t k = 0;
  for (size_t i = 0; i < r->n; i++) {
    const tfq__ex_out *o = &r->o[i];
    if (!o->is_sparse) {
      tfq_tuple_set_take(*out, k++, tfq_tensor_ref(o->dense));
      continue;
    }
    tfq_tuple_set_take(*out, k++, tfq_tensor_ref(o->sp.indices));
    tfq_tuple_set_take(*out, k++, tfq_tensor_ref(o->sp.values));
    tfq_tuple_set_take(*out, k++, tfq_tensor_ref(o->sp.dense_shape));
  }
  return TFQ_OK;
}
