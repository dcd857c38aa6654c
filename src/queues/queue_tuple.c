/* The element tuples at the engine's edge, handled by the calling thread outside the queue lock:
 * enqueue-time validation against the queue's spec (TF's messages), the element tensors of an
 * enqueue_many of boxed components, and the batches that a dequeue_many / dequeue_up_to assembles
 * from boxed elements (PaddingFIFOQueue pads them). */
#include <string.h>

#include "queue_internal.h"

/* ---- validation (TF's messages) ---- */

tfq_code tfq__queue_validate_tuple(tfq_queue *q, const tfq_tuple *t, int many, tfq_status *st) {
  const tfq_spec *s = q->spec;
  if (!t || t->n != s->n)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Wrong number of components in tuple. Expected %zu, got %zu", s->n,
                          t ? t->n : (size_t)0);
  for (size_t i = 0; i < s->n; i++) {
    if (!t->c[i])
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "tuple component %zu is not set", i);
    if (t->c[i]->dtype != s->c[i].dtype)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Type mismatch in tuple component %zu. Expected %s, got %s", i,
                            tfq_dtype_name(s->c[i].dtype), tfq_dtype_name(t->c[i]->dtype));
  }
  if (many)
    for (size_t i = 0; i < s->n; i++)
      if (t->c[i]->rank < 1)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                              "Shape must be at least rank 1 but is rank 0 (component %zu of an "
                              "enqueue_many is sliced along dimension 0)",
                              i);
  int64_t batch = many ? t->c[0]->dims[0] : 0;
  for (size_t i = 0; i < s->n; i++) {
    const tfq__comp *k = &s->c[i];
    const tfq_tensor *x = t->c[i];
    if (k->rank == TFQ_UNKNOWN_RANK) {
      if (i == 0 && q->kind == TFQ_QUEUE_PRIORITY && x->rank != (many ? 1 : 0)) {
        char g[TFQ__MSG_CAP / 2];
        tfq__buf bg = {g, sizeof g, 0};
        tfq__buf_shape(&bg, x->dims + many, x->rank - many);
        return tfq_status_set(
            st, TFQ_INVALID_ARGUMENT,
            "Expected the priority element to be a scalar, but received shape: %s", g);
      }
      if (many && x->dims[0] != batch)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                              "All input tensors must have the same size in the 0th dimension. "
                              "Component %zu has %lld, and should have %lld",
                              i, (long long)x->dims[0], (long long)batch);
      continue;
    }
    int64_t want[TFQ_MAX_RANK + 1];
    int wr = 0;
    if (many) want[wr++] = batch;
    for (int d = 0; d < k->rank; d++) want[wr++] = k->dims[d];
    int same = x->rank == wr;
    for (int d = 0; same && d < wr; d++) same = want[d] < 0 || x->dims[d] == want[d];
    if (!same) {
      char e[TFQ__MSG_CAP / 2], g[TFQ__MSG_CAP / 2];
      tfq__buf be = {e, sizeof e, 0}, bg = {g, sizeof g, 0};
      tfq__buf_shape(&be, want, wr);
      tfq__buf_shape(&bg, x->dims, x->rank);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Shape mismatch in tuple component %zu. Expected %s, got %s", i, e, g);
    }
  }
  return TFQ_OK;
}

/* ---- enqueue_many: a batch into element tensors ---- */

/* Copies the `per` strings `s` into the fresh string tensor `out` (of `per` elements), their
 * bytes in one exact-size block: a general arena chunk is 4 KiB, far too much for a row. */
static tfq_code own_strings(tfq_tensor *out, const tfq__str *s, int64_t per, tfq_status *st) {
  size_t total = 0;
  for (int64_t i = 0; i < per; i++) total += s[i].len;
  char *buf = total ? tfq__tensor_arena_alloc(out, total) : NULL;
  if (total && !buf) return TFQ__OOM(st);
  tfq__str *d = tfq__strs(out);
  for (int64_t i = 0; i < per; i++) {
    if (s[i].len) {
      memcpy(buf, s[i].p, s[i].len);
      d[i].p = buf;
      d[i].len = s[i].len;
      buf += s[i].len;
    }
  }
  return TFQ_OK;
}

tfq_code tfq__slice_row(const tfq_tensor *src, int64_t row, tfq_tensor **out, tfq_status *st) {
  tfq_code c = tfq__tensor_alloc(src->dtype, src->dims + 1, src->rank - 1, 0, out, st);
  if (c) return c;
  int64_t per = (*out)->nelems;
  if (src->dtype == TFQ_STRING) {
    if ((c = own_strings(*out, tfq__strs(src) + row * per, per, st))) {
      tfq_tensor_free(*out);
      *out = NULL;
    }
    return c;
  }
  if ((*out)->nbytes)
    memcpy((*out)->data, (const char *)src->data + (size_t)row * (*out)->nbytes, (*out)->nbytes);
  return TFQ_OK;
}

tfq_code tfq__strings_owned(const tfq_tensor *src, tfq_tensor **out, tfq_status *st) {
  tfq_code c = tfq__tensor_alloc(TFQ_STRING, src->dims, src->rank, 0, out, st);
  if (!c && (c = own_strings(*out, tfq__strs(src), src->nelems, st))) {
    tfq_tensor_free(*out);
    *out = NULL;
  }
  return c;
}

void tfq__free_boxed(tfq_tensor **b, size_t n) {
  if (!b) return;
  tfq__tensors_release(b, n);
  tfq_free(b);
}

/* ---- dequeue_many: boxed elements into a batch ---- */

/* Copies element `e` into the leading corner of row `r` of `out` (rank(out) = rank(e) + 1),
 * whose other entries stay zero / empty: PaddingFIFOQueue's padding. */
static int pad_copy(tfq_tensor *out, int64_t r, const tfq_tensor *e) {
  int rank = e->rank;
  int64_t row_elems = 1;
  for (int d = 0; d < rank; d++) row_elems *= out->dims[d + 1];
  if (e->nelems == 0) return 0;
  int64_t inner = rank ? e->dims[rank - 1] : 1;
  int64_t idx[TFQ_MAX_RANK] = {0};
  size_t esz = e->dtype == TFQ_STRING ? 0 : tfq_dtype_size(e->dtype);
  for (int64_t src = 0; src < e->nelems; src += inner) {
    /* destination offset of element index (idx[0..rank-2], 0) */
    int64_t off = 0;
    for (int d = 0; d < rank; d++) off = off * out->dims[d + 1] + (d < rank - 1 ? idx[d] : 0);
    int64_t dst = r * row_elems + off;
    if (e->dtype == TFQ_STRING) {
      for (int64_t k = 0; k < inner; k++) {
        const tfq__str *sv = &tfq__strs(e)[src + k];
        if (tfq__tensor_put_string(out, dst + k, sv->p, sv->len)) return -1;
      }
    } else {
      memcpy((char *)out->data + (size_t)dst * esz, (const char *)e->data + (size_t)src * esz,
             (size_t)inner * esz);
    }
    for (int d = rank - 2; d >= 0; d--) {
      if (++idx[d] < e->dims[d]) break;
      idx[d] = 0;
    }
  }
  return 0;
}

tfq_code tfq__queue_assemble_boxed(tfq_queue *q, size_t c, tfq_tensor **elems, int64_t rows,
                                   int many, tfq_tensor **out, tfq_status *st) {
  if (!many) {
    *out = elems[0];
    elems[0] = NULL;
    return TFQ_OK;
  }
  const tfq__comp *k = &q->spec->c[c];
  int64_t dims[TFQ_MAX_RANK + 1];
  dims[0] = rows;
  int padded = 0;
  for (int d = 0; d < k->rank; d++) {
    dims[d + 1] = k->dims[d];
    if (k->dims[d] < 0) {
      padded = 1;
      dims[d + 1] = 0;
      for (int64_t r = 0; r < rows; r++)
        if (elems[r]->dims[d] > dims[d + 1]) dims[d + 1] = elems[r]->dims[d];
    }
  }
  tfq_code rc = tfq__tensor_alloc(k->dtype, dims, k->rank + 1, padded, out, st);
  if (rc) return rc;
  int64_t per = rows ? (*out)->nelems / rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    const tfq_tensor *e = elems[r];
    int fail = 0;
    if (e->nelems != per) {
      fail = pad_copy(*out, r, e);
    } else if (k->dtype == TFQ_STRING) {
      for (int64_t i = 0; i < per && !fail; i++) {
        const tfq__str *sv = &tfq__strs(e)[i];
        fail = tfq__tensor_put_string(*out, r * per + i, sv->p, sv->len) != TFQ_OK;
      }
    } else {
      memcpy((char *)(*out)->data + (size_t)r * e->nbytes, e->data, e->nbytes);
    }
    if (fail) {
      tfq_tensor_free(*out);
      *out = NULL;
      return TFQ__OOM(st);
    }
  }
  return TFQ_OK;
}
