/* String batches built in place: a rank-1 string tensor filled one string at a time and handed
 * out at its final size (readers' keys and values). */
#include <assert.h>
#include <string.h>

#include "base.h"

tfq_code tfq__strbatch_init(tfq__strbatch *b, int64_t cap) {
  if (cap < 1) cap = 1;
  b->n = 0;
  return tfq__tensor_alloc(TFQ_STRING, &cap, 1, 0, &b->t, NULL);
}

/* Moves the strings and the arena of `from` into `to` (a new tensor of at least b->n slots). */
static void move_strings(tfq_tensor *to, tfq_tensor *from, int64_t n) {
  memcpy(to->data, from->data, (size_t)n * sizeof(tfq__str));
  to->arena = from->arena;
  from->arena = NULL;
}

tfq_code tfq__strbatch_reserve(tfq__strbatch *b, int64_t cap) {
  if (cap <= b->t->dims[0]) return TFQ_OK;
  tfq_tensor *t;
  if (tfq__tensor_alloc(TFQ_STRING, &cap, 1, 0, &t, NULL)) return TFQ_RESOURCE_EXHAUSTED;
  move_strings(t, b->t, b->n);
  tfq_tensor_free(b->t);
  b->t = t;
  return TFQ_OK;
}

tfq_code tfq__strbatch_push(tfq__strbatch *b, const char *p, size_t len) {
  if (b->n == b->t->dims[0] && tfq__strbatch_reserve(b, b->n * 2)) return TFQ_RESOURCE_EXHAUSTED;
  if (tfq__tensor_put_string(b->t, b->n, p, len)) return TFQ_RESOURCE_EXHAUSTED;
  b->n++;
  return TFQ_OK;
}

tfq_code tfq__strbatch_finish(tfq__strbatch *b, int scalar, tfq_tensor **out) {
  if (scalar) {
    assert(b->n == 1);
    tfq_tensor *t;
    if (tfq__tensor_alloc(TFQ_STRING, NULL, 0, 0, &t, NULL)) return TFQ_RESOURCE_EXHAUSTED;
    move_strings(t, b->t, 1);
    tfq_tensor_free(b->t);
    b->t = NULL;
    *out = t;
    return TFQ_OK;
  }
  /* Shrink the visible shape; the unused slots stay allocated until the tensor goes. */
  b->t->dims[0] = b->n;
  b->t->nelems = b->n;
  *out = b->t;
  b->t = NULL;
  return TFQ_OK;
}

void tfq__strbatch_free(tfq__strbatch *b) {
  tfq_tensor_free(b->t);
  b->t = NULL;
}
