/* The queue → queue transfer runner op (ops.h). */
#include <tfq/ops.h>

#include "coord_internal.h"

struct tfq_transfer_op {
  tfq_queue *from, *to;
  int64_t batch;
};

tfq_code tfq_transfer_op_new(tfq_queue *from, tfq_queue *to, int64_t batch, tfq_transfer_op **out,
                             tfq_status *st) {
  *out = NULL;
  if (batch < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch must be >= 1, got %lld",
                          (long long)batch);
  tfq_transfer_op *op = tfq_malloc(sizeof *op);
  if (!op) return TFQ__OOM(st);
  *op = (tfq_transfer_op){tfq_queue_ref(from), tfq_queue_ref(to), batch};
  *out = op;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_transfer_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_transfer_op *op = ctx;
  tfq_tuple *t;
  tfq_code c = op->batch == 1
                   ? tfq_queue_dequeue(op->from, &t, cancel, TFQ_NO_TIMEOUT, st)
                   : tfq_queue_dequeue_up_to(op->from, op->batch, &t, cancel, TFQ_NO_TIMEOUT, st);
  if (c) return c;
  c = op->batch == 1 ? tfq_queue_enqueue(op->to, t, cancel, TFQ_NO_TIMEOUT, st)
                     : tfq_queue_enqueue_many(op->to, t, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

void tfq_transfer_op_free(tfq_transfer_op *op) {
  if (!op) return;
  tfq_queue_free(op->from);
  tfq_queue_free(op->to);
  tfq_free(op);
}
