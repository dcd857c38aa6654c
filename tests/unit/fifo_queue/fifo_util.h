/* FIFOQueue: the FIFOQueue cases of spec tf1-queues §9 (numbers in brackets), TF's engine rules
 * of §1.5–§1.9, and the port-defined cases S2–S4.  Python-only cases become the equivalent C
 * argument checks; case 50 (QueueBase.from_list) has no C meaning.
 *
 * One Criterion executable, test_fifo_queue (suite "fifo", meson test "fifo_queue"), built from
 * the files of this directory, one per behaviour: single_ops.c, elements.c, batches.c,
 * blocking.c, close.c, cancel.c, deadlines.c, concurrency.c, fast_path.c.  This header holds
 * what they share beyond ../helpers.h. */
#ifndef TFQ_TEST_FIFO_UTIL_H
#define TFQ_TEST_FIFO_UTIL_H

#include <stdlib.h>

#include "../helpers.h"

/* dims of a scalar component */
__attribute__((unused)) static const int64_t SCALAR[1] = {0};

/* A FIFOQueue of float scalars. */
static inline tfq_queue *fq(int64_t cap) { return scalar_fifo(TFQ_FLOAT, cap); }

#endif
