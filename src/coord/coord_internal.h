/* Private declarations of src/coord. */
#ifndef TFQ_COORD_INTERNAL_H
#define TFQ_COORD_INTERNAL_H

#include <tfq/coord.h>

#include "../queues/queue_internal.h"

/* A condition variable on CLOCK_MONOTONIC; aborts on failure (R11). */
void tfq__cond_init_monotonic(pthread_cond_t *cv);
/* Waits until `deadline_ns` (monotonic; negative: forever).  Returns nonzero on timeout. */
int tfq__cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns);
/* Whether `code` is one of the coordinator's clean-stop codes. */
int tfq__coord_is_clean(tfq_coord *c, tfq_code code);

#endif
