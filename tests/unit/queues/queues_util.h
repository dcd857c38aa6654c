/* RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue and the shared-name registry: the numbered
 * cases (numbers in brackets, docs/conformance.md, "Case numbers") plus the rules queue.h gives
 * each kind and the registry, shuffle quality, and TF-exact order against sequences recorded from
 * the tensorflow-cpu 2.21 wheel.
 *
 * One Criterion executable, test_queues (meson test "queues"), built from the files of this
 * directory, one per kind: random_shuffle.c, padding_fifo.c, priority.c, shared_name.c.  This
 * header holds what they share beyond ../helpers.h. */
#ifndef TFQ_TEST_QUEUES_UTIL_H
#define TFQ_TEST_QUEUES_UTIL_H

#include <stdlib.h>

#include "../helpers.h"

/* A queue of `kind` with the given options (fails the test on error); `s` borrowed. */
static inline tfq_queue *make(tfq_queue_kind kind, tfq_spec *s, int64_t cap, int64_t mad,
                              int64_t seed, int64_t seed2, int exact) {
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_queue_options_set_capacity(o, cap);
  tfq_queue_options_set_min_after_dequeue(o, mad);
  tfq_queue_options_set_seeds(o, seed, seed2);
  tfq_queue_options_set_tf_exact_order(o, exact);
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_new(kind, s, o, &q, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_queue_options_free(o);
  return q;
}

#endif
