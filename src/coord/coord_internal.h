/* Private declarations of src/coord. */
#ifndef TFQ_COORD_INTERNAL_H
#define TFQ_COORD_INTERNAL_H

#include <pthread.h>
#include <tfq/coord.h>
#include <tfq/ops.h>
#include <tfq/producer.h>

#include "../core/base.h"
#include "../core/sync.h"

/* Whether `code` is one of the coordinator's clean-stop codes. */
int tfq__coord_is_clean(tfq_coord *c, tfq_code code);

/* Registers a running thread (TF's register_thread), for the runner, which creates its threads
 * itself: tfq_coord_join() joins it, so the caller must not.  `name` (copied; NULL:
 * "Thread-<n>") is used in the straggler message.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__coord_register_thread(tfq_coord *c, pthread_t thread, const char *name,
                                    tfq_status *st);

/* What the coordinator and the runner wait with: `mu`, `cv` on CLOCK_MONOTONIC and a cancel token
 * of their own in *cancel.  All or nothing: on TFQ_RESOURCE_EXHAUSTED nothing is left to free. */
tfq_code tfq__coord_sync_init(pthread_mutex_t *mu, pthread_cond_t *cv, tfq_cancel **cancel);
/* Releases what tfq__coord_sync_init() made. */
void tfq__coord_sync_destroy(pthread_mutex_t *mu, pthread_cond_t *cv, tfq_cancel *cancel);

/* ---- the read-decode op (ops.c) ---- */
/* The steps of `op` that decoded their lines where they lie in the reader's buffer (span_step),
 * for tests.  Thread-safety: any. */
int64_t tfq__read_decode_op_span_steps(tfq_read_decode_op *op);
/* Of those, the steps decoded straight into the target FIFO's ring (ops_ring.c), for tests.
 * Thread-safety: any. */
int64_t tfq__read_decode_op_ring_steps(tfq_read_decode_op *op);

/* ---- producers (producer.c) ---- */
/* The input producers' shared builder: a FIFOQueue for the rows of `rows` named after `what`
 * (TF's kernel names) and the producer filling it (not started). */
tfq_code tfq__producer_build(const tfq_tuple *rows, const tfq_producer_options *o, const char *what,
                             tfq_queue **queue, tfq_producer **producer, tfq_status *st);

#endif
