/* Building a batch: the shuffle buffer's ring of dense values, and the gathers of the drawn
 * records into a batch's tensors (dense, strings as views, VarLen as TF's SparseTensor,
 * FixedLenSequence padded). */
#include <string.h>

#include "pipeline_internal.h"

/* Bytes of one record of dense column c in the ring, or 0 (no ring for it). */
size_t tfq__pl_ring_bytes(const tfq_pipeline *p, size_t c) {
  const pl_column *col = &p->cols[c];
  if (PL_RAGGED(col)) return 0;
  /* a string column's ring holds its (pointer, length) pairs into the parts, which the slots
   * keep alive */
  return (size_t)col->width *
         (col->dtype == TFQ_STRING ? sizeof(tfq__str) : tfq_dtype_size(col->dtype));
}

tfq_code tfq__pl_ring_new(tfq_pipeline *p, tfq_status *st) {
  if (!(p->ring = tfq__calloc(p->ncols, sizeof *p->ring))) return TFQ__OOM(st);
  for (size_t c = 0; c < p->ncols; c++) {
    size_t rb = tfq__pl_ring_bytes(p, c), bytes;
    if (rb && (!tfq__mul_ok(rb, (size_t)p->capacity, &bytes) || !(p->ring[c] = tfq_malloc(bytes))))
      return TFQ__OOM(st);
  }
  return TFQ_OK;
}

void tfq__pl_ring_reload(tfq_pipeline *p) {
  for (size_t c = 0; p->ring && c < p->ncols; c++) {
    size_t rb = tfq__pl_ring_bytes(p, c);
    for (int64_t i = 0; rb && i < p->size; i++)
      memcpy(p->ring[c] + (size_t)i * rb,
             (const char *)p->slots[i].part->cols[c]->data + (size_t)p->slots[i].row * rb, rb);
  }
}

/* ---- batches ---- */

/* Rows of `rb` bytes of column c of the picked slots into dst: the common sizes as fixed-size
 * copies the compiler inlines (a drawn batch's rows are scattered). */
#define GATHER(RB)                 \
  for (int64_t i = 0; i < n; i++)  \
    memcpy(dst + (size_t)i * (RB), \
           (const char *)pick[i].part->cols[c]->data + (size_t)pick[i].row * (RB), (RB));
static void gather_rows(char *dst, const pl_slot *pick, int64_t n, size_t c, size_t rb) {
  switch (rb) {
    case 1: GATHER(1); break;
    case 4: GATHER(4); break;
    case 8: GATHER(8); break;
    default: GATHER(rb); break;
  }
}
#undef GATHER

/* The runs of consecutive rows of a part among the n slots of `pick` (rows in input order): their
 * starts in at[0..k), at[k] = n.  Returns k, or -1 when there are more than `max` runs. */
static int64_t find_runs(const pl_slot *pick, int64_t n, int64_t *at, int64_t max) {
  int64_t k = 0;
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && pick[j].part == pick[i].part && pick[j].row == pick[i].row + (j - i)) j++;
    if (k == max) return -1;
    at[k++] = i;
    i = j;
  }
  at[k] = n;
  return k;
}

/* The same for rows in input order: one copy per run (find_runs(), found once for all the
 * columns: finding them again for each column was 5% of tfq-cat's instructions on 60-column
 * rows). */
static void gather_runs(char *dst, const pl_slot *pick, const int64_t *at, int64_t k, size_t c,
                        size_t rb) {
  for (int64_t r = 0; r < k; r++) {
    const pl_slot *s = &pick[at[r]];
    memcpy(dst + (size_t)at[r] * rb, (const char *)s->part->cols[c]->data + (size_t)s->row * rb,
           (size_t)(at[r + 1] - at[r]) * rb);
  }
}

/* Points the strings of `o` (n records of w elements) at column c of the picked slots' parts,
 * and makes `o` keep one reference to each distinct column it points into (a part counted once
 * by its stamp, consumer thread only).  Rows in input order come as the k runs of find_runs()
 * (runs != NULL, nruns of them): one copy and one stamp check a run instead of one a row. */
static tfq_code view_strings(tfq_pipeline *p, tfq_tensor *o, const pl_slot *pick, int64_t n,
                             const int64_t *runs, int64_t nruns, size_t c, int64_t w, int from_ring,
                             tfq_status *st) {
  tfq_tensor *owners_s[64], **owners = owners_s;
  size_t nown = 0, cap = 64;
  tfq__str *d = tfq__strs(o);
  const uint64_t stamp = ++p->stamp;
  const int64_t steps = runs ? nruns : n;
  for (int64_t r = 0; r < steps; r++) {
    const int64_t i = runs ? runs[r] : r, rows = runs ? runs[r + 1] - i : 1;
    pl_part *q = pick[i].part;
    if (!from_ring) /* (from the ring: gather() fills them once nothing can fail) */
      memcpy(d + i * w, tfq__strs(q->cols[c]) + pick[i].row * w, (size_t)(rows * w) * sizeof *d);
    if (q->stamp == stamp) continue;
    q->stamp = stamp;
    if (nown == cap) {
      tfq_tensor **g = tfq_malloc(2 * cap * sizeof *g);
      if (!g) goto oom;
      memcpy(g, owners, nown * sizeof *g);
      if (owners != owners_s) tfq_free(owners);
      owners = g;
      cap *= 2;
    }
    owners[nown++] = q->cols[c];
  }
  if (tfq__tensor_keep_reserve(o, nown)) goto oom;
  for (size_t k = 0; k < nown; k++) tfq_tensor_ref(owners[k]);
  tfq__tensor_keep_take(o, owners, nown);
  if (owners != owners_s) tfq_free(owners);
  return TFQ_OK;
oom:
  for (int64_t i = 0; i < n * w; i++) d[i] = (tfq__str){"", 0};
  if (owners != owners_s) tfq_free(owners);
  return TFQ__OOM(st);
}

/* A VarLen column of the picked records as TF batches it: a SparseTensor in slots slot ..
 * slot + 2, indices int64 [N, 2] (record, position), values [N], dense_shape int64 [2] = [n,
 * the longest list]. */
static tfq_code gather_sparse(const pl_column *col, const pl_slot *pick, int64_t n, size_t c,
                              tfq_tuple *t, tfq_status *st) {
  int64_t total = 0, longest = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *sp = pick[i].part->splits[c] + pick[i].row;
    int64_t len = sp[1] - sp[0];
    total += len;
    if (len > longest) longest = len;
  }
  int64_t idims[2] = {total, 2}, two = 2;
  tfq_tensor *ind, *val, *shape;
  tfq_code rc = tfq__tensor_alloc(TFQ_INT64, idims, 2, 0, &ind, st);
  if (rc) return rc;
  tfq_tuple_set_take(t, col->slot, ind);
  if ((rc = tfq__tensor_alloc(col->dtype, &total, 1, 0, &val, st))) return rc;
  tfq_tuple_set_take(t, col->slot + 1, val);
  if ((rc = tfq__tensor_alloc(TFQ_INT64, &two, 1, 0, &shape, st))) return rc;
  tfq_tuple_set_take(t, col->slot + 2, shape);
  int64_t *sh = shape->data, *id = ind->data, k = 0;
  sh[0] = n;
  sh[1] = longest;
  size_t es = col->dtype == TFQ_STRING ? 0 : tfq_dtype_size(col->dtype);
  for (int64_t i = 0; i < n; i++) {
    const pl_part *q = pick[i].part;
    const int64_t *sp = q->splits[c] + pick[i].row;
    for (int64_t j = sp[0]; j < sp[1]; j++, k++) {
      id[2 * k] = i;
      id[2 * k + 1] = j - sp[0];
      if (es) {
        memcpy((char *)val->data + (size_t)k * es, (const char *)q->cols[c]->data + (size_t)j * es,
               es);
      } else {
        const tfq__str *s = tfq__strs(q->cols[c]) + j;
        if (tfq__tensor_put_string(val, k, s->p, s->len)) return TFQ__OOM(st);
      }
    }
  }
  return TFQ_OK;
}

/* A FixedLenSequence column of the picked records as TF batches it: dense [n, the most rows,
 * row shape], each record's rows then the padding. */
/* The same as a ragged column: the records' rows back to back [total, row shape] in slot, and
 * int64 row splits [n + 1] in slot + 1 (record r's rows are splits[r] .. splits[r + 1]), as
 * tf.RaggedTensor.from_row_splits takes them. */
static tfq_code gather_ragged(const pl_column *col, const pl_slot *pick, int64_t n, size_t c,
                              tfq_tuple *t, tfq_status *st) {
  int64_t w = col->width, total = 0, np1 = n + 1;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *sp = pick[i].part->splits[c] + pick[i].row;
    total += sp[1] - sp[0];
  }
  int64_t dims[9];
  dims[0] = total;
  memcpy(dims + 1, col->dims + 1, (size_t)(col->rank - 1) * sizeof *dims);
  tfq_tensor *o, *splits;
  tfq_code rc = tfq__tensor_alloc(col->dtype, dims, col->rank, 0, &o, st);
  if (rc) return rc;
  tfq_tuple_set_take(t, col->slot, o);
  if ((rc = tfq__tensor_alloc(TFQ_INT64, &np1, 1, 0, &splits, st))) return rc;
  tfq_tuple_set_take(t, col->slot + 1, splits);
  int64_t *rs = splits->data, at = 0;
  size_t es = col->dtype == TFQ_STRING ? 0 : tfq_dtype_size(col->dtype);
  rs[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    const pl_part *q = pick[i].part;
    const int64_t *sp = q->splits[c] + pick[i].row;
    int64_t k = (sp[1] - sp[0]) * w;
    if (es) {
      memcpy((char *)o->data + (size_t)at * es,
             (const char *)q->cols[c]->data + (size_t)(sp[0] * w) * es, (size_t)k * es);
    } else {
      const tfq__str *s = tfq__strs(q->cols[c]) + sp[0] * w;
      for (int64_t e = 0; e < k; e++)
        if (tfq__tensor_put_string(o, at + e, s[e].p, s[e].len)) return TFQ__OOM(st);
    }
    at += k;
    rs[i + 1] = rs[i] + (sp[1] - sp[0]);
  }
  return TFQ_OK;
}

static tfq_code gather_seq(const pl_column *col, const pl_slot *pick, int64_t n, size_t c,
                           tfq_tuple *t, tfq_status *st) {
  int64_t most = 0, w = col->width;
  for (int64_t i = 0; i < n; i++) {
    const int64_t *sp = pick[i].part->splits[c] + pick[i].row;
    if (sp[1] - sp[0] > most) most = sp[1] - sp[0];
  }
  int64_t dims[9];
  dims[0] = n;
  dims[1] = most;
  memcpy(dims + 2, col->dims + 1, (size_t)(col->rank - 1) * sizeof *dims);
  tfq_tensor *o;
  tfq_code rc = tfq__tensor_alloc(col->dtype, dims, col->rank + 1, 0, &o, st);
  if (rc) return rc;
  tfq_tuple_set_take(t, col->slot, o);
  size_t es = col->dtype == TFQ_STRING ? 0 : tfq_dtype_size(col->dtype);
  size_t pl = 0;
  const char *ps = col->pad && !es ? tfq_tensor_string(col->pad, 0, &pl) : "";
  for (int64_t i = 0; i < n; i++) {
    const pl_part *q = pick[i].part;
    const int64_t *sp = q->splits[c] + pick[i].row;
    int64_t have = (sp[1] - sp[0]) * w, all = most * w, at = i * all;
    if (es) {
      char *d = (char *)o->data + (size_t)at * es;
      memcpy(d, (const char *)q->cols[c]->data + (size_t)(sp[0] * w) * es, (size_t)have * es);
      for (int64_t e = have; e < all; e++) /* the padding: default_value, else 0 */
        if (col->pad)
          memcpy(d + (size_t)e * es, tfq_tensor_cdata(col->pad), es);
        else
          memset(d + (size_t)e * es, 0, es);
      continue;
    }
    const tfq__str *s = tfq__strs(q->cols[c]) + sp[0] * w;
    for (int64_t e = 0; e < all; e++)
      if (tfq__tensor_put_string(o, at + e, e < have ? s[e].p : ps, e < have ? s[e].len : pl))
        return TFQ__OOM(st);
  }
  return TFQ_OK;
}

/* Whether slot tensor `o` can be refilled in place as a [n, dims] tensor of `col`. */
static int refillable(const tfq_tensor *o, const pl_column *col, int64_t n) {
  if (!o || !tfq__tensor_sole(o) || o->dtype != col->dtype || o->rank != col->rank + 1 ||
      o->dims[0] != n)
    return 0;
  for (int d = 0; d < col->rank; d++)
    if (o->dims[d + 1] != col->dims[d]) return 0;
  return 1;
}

/* The picked rows into the tuple `t` of ncols slots: a slot tensor only `t` holds, of the
 * batch's dtype and shape, is refilled in place (next_into); any other gets a new tensor. */
/* The ring's part of a draw of n records: row i of dst takes ring row js[i], whose place the
 * ring's last row ls[i] fills (the removal the draws made in the slots). */
#define RING(RB)                                                                                \
  for (int64_t i = 0; i < n; i++) {                                                             \
    memcpy(dst + (size_t)i * (RB), ring + (size_t)js[i] * (RB), (RB));                          \
    if (js[i] != ls[i]) memcpy(ring + (size_t)js[i] * (RB), ring + (size_t)ls[i] * (RB), (RB)); \
  }
static void ring_gather(char *dst, char *ring, size_t rb, const int64_t *js, const int64_t *ls,
                        int64_t n) {
  switch (rb) {
    case 4: RING(4); break;
    case 8: RING(8); break;
    case 16: RING(16); break; /* a string: (pointer, length) */
    default: RING(rb); break;
  }
}
#undef RING

tfq_code tfq__pl_gather(tfq_pipeline *p, const pl_slot *pick, int64_t n, int in_order, tfq_tuple *t,
                        const int64_t *js, const int64_t *ls, tfq_status *st) {
  tfq_code rc = TFQ_OK;
  int64_t runs[65], nruns = in_order ? find_runs(pick, n, runs, 64) : -1;
  for (size_t c = 0; c < p->ncols; c++) {
    const pl_column *col = &p->cols[c];
    if (col->sparse) {
      if ((rc = gather_sparse(col, pick, n, c, t, st))) break;
      continue;
    }
    if (col->seq) {
      rc = p->o.ragged ? gather_ragged(col, pick, n, c, t, st) : gather_seq(col, pick, n, c, t, st);
      if (rc) break;
      continue;
    }
    tfq_tensor *o = t->c[col->slot];
    if (refillable(o, col, n)) {
      if (o->dtype == TFQ_STRING) tfq__tensor_arena_reset(o); /* drops the kept columns */
    } else {
      int64_t dims[9];
      dims[0] = n;
      memcpy(dims + 1, col->dims, (size_t)col->rank * sizeof *dims);
      if ((rc = tfq__tensor_alloc(col->dtype, dims, col->rank + 1, 0, &o, st))) break;
      tfq_tuple_set_take(t, col->slot, o);
    }
    int64_t w = col->width;
    if (col->dtype != TFQ_STRING) {
      size_t rb = (size_t)w * tfq_dtype_size(col->dtype);
      if (js && p->ring[c]) continue; /* from the ring, once nothing can fail (below) */
      if (nruns >= 0)
        gather_runs(o->data, pick, runs, nruns, c, rb);
      else
        gather_rows(o->data, pick, n, c, rb);
      continue;
    }
    /* strings: views of the parts' bytes, the batch keeping a reference to each column it
     * borrows from (no copy; the parts' storage lives as long as the batch) */
    if ((rc = view_strings(p, o, pick, n, nruns >= 0 ? runs : NULL, nruns, c, w, js && p->ring[c],
                           st)))
      break;
  }
  for (size_t c = 0; !rc && js && c < p->ncols; c++)
    if (p->ring[c])
      ring_gather(t->c[p->cols[c].slot]->data, p->ring[c], tfq__pl_ring_bytes(p, c), js, ls, n);
  return rc;
}
