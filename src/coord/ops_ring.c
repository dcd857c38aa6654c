/* The read-decode op's steps decoded straight into a FIFO's ring (tfq__queue_reserve): the
 * step's rows are written where the queue keeps them, so that neither column tensors nor the
 * enqueue_many's copy of their rows into the ring are needed (docs/performance.md, twelfth
 * pass).  String fields are views into the reader's buffer or bytes in an owner tensor of the
 * step; the ring's rows keep that owner. */
#include <string.h>

#include "../queues/queues_shared.h"
#include "ops_internal.h"

#define NOWNERS (sizeof((tfq_read_decode_op *)0)->owners / sizeof(_Atomic(tfq_tensor *)))

/* Component i's columns: the mapping's (*cols), or column i itself for an op without mappings
 * (*cols NULL).  Returns how many. */
static size_t comp_cols(const tfq_read_decode_op *op, size_t i, const size_t **cols, int *stack) {
  *cols = op->nmap ? op->map[i].cols : NULL;
  *stack = op->nmap ? op->map[i].stack : 0;
  return op->nmap ? op->map[i].n : 1;
}

void tfq__op_ring_plan(tfq_read_decode_op *op) {
  op->ring = 0;
  tfq_queue_kind kind = tfq_queue_get_kind(op->target);
  if (!op->csv || (kind != TFQ_QUEUE_FIFO && kind != TFQ_QUEUE_PADDING_FIFO)) return;
  const tfq_spec *spec = tfq_queue_spec(op->target);
  size_t ncol = tfq_csv_options_num_columns(op->csv), ncomp = op->nmap ? op->nmap : ncol;
  if (ncol > TFQ_READ_DECODE_DIRECT_MAX || spec->n != ncomp || ncomp > TFQ_READ_DECODE_DIRECT_MAX)
    return;
  unsigned char used[TFQ_READ_DECODE_DIRECT_MAX] = {0};
  for (size_t i = 0; i < ncomp; i++) {
    const size_t *cols;
    int stack;
    size_t n = comp_cols(op, i, &cols, &stack);
    const tfq__comp *k = &spec->c[i];
    if (stack ? k->rank != 1 || k->dims[0] != (int64_t)n : k->rank != 0 || n != 1) return;
    for (size_t j = 0; j < n; j++) {
      size_t c = cols ? cols[j] : i;
      if (c >= ncol || used[c] || tfq__csv_column_dtype(op->csv, c) != k->dtype) return;
      used[c] = 1;
    }
  }
  op->ring = 1;
}

/* An owner for a step's strings that nothing else holds, reset (its bytes and the buffers it
 * kept let go), from the op's parked ones or new; NULL out of memory.  Every parked owner
 * nothing holds any more is reset on the way, so that it keeps no reader buffer alive. */
static tfq_tensor *owner_take(tfq_read_decode_op *op) {
  tfq_tensor *mine = NULL;
  for (size_t i = 0; i < NOWNERS; i++) {
    tfq_tensor *t = atomic_exchange(&op->owners[i], NULL);
    if (!t) continue;
    if (tfq_tensor_refcount(t) == 1) {
      tfq__tensor_arena_reset(t);
      if (!mine) {
        mine = t;
        continue;
      }
    }
    tfq_tensor_free(atomic_exchange(&op->owners[i], t));
  }
  if (mine) return mine;
  int64_t zero = 0;
  return tfq__tensor_alloc(TFQ_STRING, &zero, 1, 0, &mine, NULL) ? NULL : mine;
}

/* Parks `t` (the op's reference) for a later step: in an empty place, else in place of the
 * oldest, which the queue then frees with its last row. */
static void owner_park(tfq_read_decode_op *op, tfq_tensor *t) {
  size_t i = 0;
  while (i < NOWNERS && atomic_load_explicit(&op->owners[i], memory_order_relaxed)) i++;
  if (i == NOWNERS)
    i = atomic_fetch_add_explicit(&op->owner_next, 1, memory_order_relaxed) % NOWNERS;
  tfq_tensor_free(atomic_exchange(&op->owners[i], t));
}

int64_t tfq__op_ring_begin(tfq_read_decode_op *op, int64_t want, tfq__csv_out *outs,
                           tfq_tensor **owner) {
  *owner = NULL;
  if (op->ring != 1) return 0;
  size_t ncol = tfq_csv_options_num_columns(op->csv), ncomp = op->nmap ? op->nmap : ncol;
  int strings = 0;
  for (size_t c = 0; c < ncol; c++) strings |= tfq__csv_column_dtype(op->csv, c) == TFQ_STRING;
  if (strings && !(*owner = owner_take(op))) return 0;
  char *bases[TFQ_READ_DECODE_DIRECT_MAX];
  /* a run after the ring's wrap shorter than an eighth of a step: the ordinary path copies it */
  int64_t k = tfq__queue_reserve(op->target, want, want / 8 + 1, bases);
  if (!k) {
    if (*owner) owner_park(op, *owner);
    *owner = NULL;
    return 0;
  }
  memset(outs, 0, ncol * sizeof *outs);
  for (size_t i = 0; i < ncomp; i++) {
    const size_t *cols;
    int stack;
    size_t n = comp_cols(op, i, &cols, &stack);
    for (size_t j = 0; j < n; j++) {
      size_t c = cols ? cols[j] : i;
      int str = tfq__csv_column_dtype(op->csv, c) == TFQ_STRING;
      size_t esz = str ? sizeof(tfq__str) : tfq_dtype_size(tfq__csv_column_dtype(op->csv, c));
      outs[c] = (tfq__csv_out){bases[i] + j * esz, n * esz, str ? *owner : NULL};
    }
  }
  return k;
}

void tfq__op_ring_end(tfq_read_decode_op *op, int64_t rows, tfq_tensor *owner) {
  tfq__queue_commit(op->target, rows, owner);
  if (owner) owner_park(op, owner);
}
