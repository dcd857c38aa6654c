/* FIFOQueue: the numbered FIFOQueue cases (numbers in brackets, docs/conformance.md, "Case
 * numbers"), TF's engine rules written at the top of queue.h (arrival order, close, partial
 * batches, deadlines, cancellation), and the port-defined cases S2–S4.  Python-only cases become
 * the equivalent C argument checks; case 50 (QueueBase.from_list) has no C meaning.
 *
 * One Criterion executable, test_fifo_queue (suite "fifo", meson test "fifo_queue"), built from
 * the files of this directory, one per behaviour: single_ops.c, elements.c, batches.c,
 * blocking.c, close.c, cancel.c, deadlines.c, concurrency.c, fast_path.c, reserve.c.  This header
 * holds what they share beyond ../helpers.h. */
#ifndef TFQ_TEST_FIFO_UTIL_H
#define TFQ_TEST_FIFO_UTIL_H

#include <stdlib.h>

#include "../helpers.h"

/* dims of a scalar component */
__attribute__((unused)) static const int64_t SCALAR[1] = {0};

/* A FIFOQueue of float scalars. */
static inline tfq_queue *fq(int64_t cap) { return scalar_fifo(TFQ_FLOAT, cap); }

#endif
