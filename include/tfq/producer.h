/* Input producers with TensorFlow 1.x semantics (tf.train.input_producer and friends).
 *
 * A producer fills a FIFOQueue with the rows (slices along dimension 0) of its input tensors,
 * once per epoch, each epoch a fresh permutation when shuffling (PCG32 seeded from `seed`, or
 * TF's own order with tfq_producer_options_set_tf_seeds()), and
 * closes the queue after `num_epochs` epochs, so consumers see OUT_OF_RANGE once the queue is
 * drained.  Three ways to run one:
 *
 *  - tfq_producer_step(): one epoch per call, TFQ_OUT_OF_RANGE "Reached limit of <n>" after
 *    num_epochs (TF's limit_epochs); a tfq_step_fn (coord.h) that a QueueRunner runs on its
 *    threads (it closes the queue when every thread hit OUT_OF_RANGE);
 *  - tfq_string_input_producer_start(): what TF1's string_input_producer + start_queue_runners
 *    do — the queue, the producer and a QueueRunner started under a Coordinator, in one call;
 *  - tfq_producer_run(): every epoch then close, on the calling thread (blocking: works with a
 *    bounded capacity while consumers run on other threads);
 *  - tfq_string_input_producer() and friends: create the queue (capacity 32 by default, as TF)
 *    and start one thread running tfq_producer_run(), with a join/stop handle.
 *
 * Deviations: TF's slice_input_producer queues indices and gathers at dequeue time; tfq queues
 * the row tuples themselves (same pairing and order), and checks that every tensor has the same
 * dimension 0 (TF does not).  seed unset (the default) draws a seed from the clock, like TF's
 * seed=None. */
#ifndef TFQ_PRODUCER_H
#define TFQ_PRODUCER_H

#include <stdint.h>
#include <tfq/coord.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* num_epochs value meaning "no limit" (TF's num_epochs=None). */
#define TFQ_EPOCHS_UNLIMITED ((int64_t)-1)

/* Options.  Opaque.  Thread-safety: one thread at a time.
 * Defaults: num_epochs TFQ_EPOCHS_UNLIMITED, shuffle 1, seed unset, capacity 32. */
typedef struct tfq_producer_options tfq_producer_options;

/* @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).  Ownership: *out freed with
 * tfq_producer_options_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_producer_options_new(tfq_producer_options **out,
                                          tfq_status *st) TFQ_WARN_UNUSED;
/* Frees `o`.  NULL does nothing.  Ownership: takes `o`.  Thread-safety: as tfq_producer_options.
 * Since: 0.1 */
TFQ_API void tfq_producer_options_free(tfq_producer_options *o);
/* > 0, or TFQ_EPOCHS_UNLIMITED; other values are refused when the producer is created
 * ("num_epochs must be > 0 not 0.").  Ownership: nothing is taken.  Thread-safety: as
 * tfq_producer_options. Since: 0.1 */
TFQ_API void tfq_producer_options_set_num_epochs(tfq_producer_options *o, int64_t n);
/* Nonzero (the default): each epoch is a fresh permutation of the rows; 0: the rows in order.
 * Ownership: nothing is taken.  Thread-safety: as tfq_producer_options.  Since: 0.1 */
TFQ_API void tfq_producer_options_set_shuffle(tfq_producer_options *o, int shuffle);
/* Seeds the shuffling PCG32 (unset: a seed drawn from the clock, like TF's seed=None).
 * Ownership: nothing is taken.  Thread-safety: as tfq_producer_options.  Since: 0.1 */
TFQ_API void tfq_producer_options_set_seed(tfq_producer_options *o, uint64_t seed);
/* Shuffles in TensorFlow's exact order instead: each epoch is what TF's RandomShuffle op gives
 * with attributes seed / seed2 (Philox4x32-10 through GuardedPhiloxRandom, size - 1 draws per
 * epoch, j = i + draw % (size - i)), so string_input_producer(shuffle=True, seed=s) delivers the
 * same files in the same order as TF1.  seed/seed2 are the op's attributes: TF's
 * random_seed.get_seed(s), i.e. (graph seed, s), or (87654321, s) when the graph has no seed.
 * Both 0 means TF's "no seed": random seeds.  Overrides tfq_producer_options_set_seed().
 * Ownership: nothing is taken.  Thread-safety: as tfq_producer_options.  Since: 0.2 */
TFQ_API void tfq_producer_options_set_tf_seeds(tfq_producer_options *o, int64_t seed,
                                               int64_t seed2);
/* Capacity of the queue the convenience functions create (negative: unbounded).
 * Ownership: nothing is taken.  Thread-safety: as tfq_producer_options.  Since: 0.1 */
TFQ_API void tfq_producer_options_set_capacity(tfq_producer_options *o, int64_t capacity);

/* ---- the step object ------------------------------------------------------------------------ */

/* Opaque.  Thread-safety: tfq_producer_step may be called from several threads at once
 * (internally serialised per epoch); the others one thread at a time. */
typedef struct tfq_producer tfq_producer;

/* A producer of the rows of `rows` (one component per queue component: same dtypes, each of
 * rank >= 1, shapes[1:] equal to the queue's shapes, all with the same dimension 0) into `q`.
 * @return TFQ_OK
 *         TFQ_INVALID_ARGUMENT "num_epochs must be > 0 not <n>."; a scalar input ("Either
 *                              `input_tensor` must have a fully defined shape or
 *                              `element_shape` must be specified"); dtype/shape/count mismatch
 *                              with the queue; differing dimension 0.
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: `q` and the tensors of `rows` gain a reference held until tfq_producer_free();
 * `rows` and `o` (NULL: defaults) are borrowed for the call; *out (NULL on failure) freed with
 * tfq_producer_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_producer_new(tfq_queue *q, const tfq_tuple *rows,
                                  const tfq_producer_options *o, tfq_producer **out,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the producer and drops its references.  NULL does nothing.  REQUIRES: no call on it in
 * progress.  Ownership: takes `p`.  Thread-safety: one thread, after every other call on `p`.
 * Since: 0.1 */
TFQ_API void tfq_producer_free(tfq_producer *p);

/* Enqueues one epoch (enqueue_many of every row, permuted if shuffling).  A tfq_step_fn: `ctx`
 * is a tfq_producer*; `cancel` is not used (a QueueRunner's close-on-stop cancels the queue's
 * pending enqueues, which wakes the step; tfq_producer_cancel() does too), may be NULL.
 * Blocks while the queue is full.
 * @return TFQ_OK               one epoch enqueued.
 *         TFQ_OUT_OF_RANGE     "Reached limit of <num_epochs>": nothing enqueued.
 *         TFQ_INVALID_ARGUMENT zero rows: "<what> requires a non-null input tensor" (TF's Assert
 *                              in string_input_producer).
 *         TFQ_CANCELLED        the queue was closed, or the producer's cancel triggered (see
 *                              tfq_producer_cancel), while enqueuing.
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: `ctx` borrowed for the call.  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_producer_step(void *ctx, tfq_cancel *cancel, tfq_status *st);

/* Runs steps until OUT_OF_RANGE, then closes the queue (a plain close) and returns TFQ_OK.  On
 * any other error closes the queue with cancel_pending_enqueues (consumers then drain what was
 * queued and see OUT_OF_RANGE, as a Coordinator would arrange in TF) and returns the error.
 * With TFQ_EPOCHS_UNLIMITED it runs until the queue is closed or the producer cancelled.
 * Ownership: nothing is taken.  Thread-safety: any, one run at a time.  Since: 0.1 */
TFQ_API tfq_code tfq_producer_run(tfq_producer *p, tfq_status *st) TFQ_WARN_UNUSED;

/* Makes a blocked or future step fail with CANCELLED.  Ownership: nothing is taken.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API void tfq_producer_cancel(tfq_producer *p);

/* ---- convenience: queue + thread ------------------------------------------------------------ */

/* A producer running tfq_producer_run() on its own thread.  Opaque.
 * Thread-safety: one thread at a time. */
typedef struct tfq_producer_thread tfq_producer_thread;

/* TF's input_producer: a FIFOQueue(capacity, dtypes and shapes[1:] of `rows`) named
 * "input_producer" filled by a new thread.
 * @return TFQ_OK (*queue has one reference for the caller, *thread must be joined),
 *         the codes of tfq_producer_new, TFQ_RESOURCE_EXHAUSTED (also when no thread can start).
 * Ownership: `rows`, `o` borrowed (the rows' tensors gain references held by the producer);
 * *queue freed with tfq_queue_free() after the join; *thread freed by
 * tfq_producer_thread_join().  Both NULL on failure.  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_input_producer(const tfq_tuple *rows, const tfq_producer_options *o,
                                    tfq_queue **queue, tfq_producer_thread **thread,
                                    tfq_status *st) TFQ_WARN_UNUSED;

/* TF's string_input_producer over a 1-D string tensor.  NULL: INVALID_ARGUMENT
 * "string_input_producer requires a non-null input tensor"; not a 1-D string tensor:
 * INVALID_ARGUMENT.  An empty tensor starts a thread whose step fails (INVALID_ARGUMENT, which
 * join reports) after closing the queue, so consumers see OUT_OF_RANGE (TF's testNullString).
 * @return, Ownership and Thread-safety as tfq_input_producer().  Since: 0.1 */
TFQ_API tfq_code tfq_string_input_producer(const tfq_tensor *strings, const tfq_producer_options *o,
                                           tfq_queue **queue, tfq_producer_thread **thread,
                                           tfq_status *st) TFQ_WARN_UNUSED;

/* TF's range_input_producer: int32 scalars 0..limit-1 (limit >= 0, else INVALID_ARGUMENT
 * "limit must be >= 0 not <limit>").  @return, Ownership and Thread-safety as
 * tfq_input_producer().  Since: 0.1 */
TFQ_API tfq_code tfq_range_input_producer(int32_t limit, const tfq_producer_options *o,
                                          tfq_queue **queue, tfq_producer_thread **thread,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* TF's slice_input_producer: the queue holds tuples of matching rows of every tensor in
 * `tensors` (NULL: INVALID_ARGUMENT "Expected at least one tensor in slice_input_producer().").
 * @return, Ownership and Thread-safety as tfq_input_producer().  Since: 0.1 */
TFQ_API tfq_code tfq_slice_input_producer(const tfq_tuple *tensors, const tfq_producer_options *o,
                                          tfq_queue **queue, tfq_producer_thread **thread,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* ---- convenience: queue + QueueRunner under a Coordinator (TF1's usual wiring) ------------- */

/* The producer and the QueueRunner started by tfq_string_input_producer_start().  Opaque.
 * Thread-safety: one thread at a time. */
typedef struct tfq_producer_runner tfq_producer_runner;

/* TF1's `string_input_producer(strings, num_epochs, shuffle, seed, capacity)` followed by
 * `start_queue_runners(coord)`: a FIFOQueue of the strings (capacity 32 by default) filled one
 * epoch per step by a QueueRunner registered with `coord`, which closes the queue after
 * num_epochs (consumers then see OUT_OF_RANGE) and cancels its pending enqueues on a stop.
 * Errors (an empty tensor: INVALID_ARGUMENT "string_input_producer requires a non-null input
 * tensor", raised by the runner after closing the queue) reach the coordinator.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (no coordinator, NULL or not a 1-D string tensor); the
 *         codes of tfq_producer_new() and tfq_runner_start(); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `strings`, `o` borrowed for the call (the strings' tensor gains a reference);
 * `coord` borrowed until it is joined; *queue (a new reference) freed with tfq_queue_free();
 * *runner freed with tfq_producer_runner_free() after tfq_coord_join().
 * Thread-safety: any.  Since: 0.2 */
TFQ_API tfq_code tfq_string_input_producer_start(const tfq_tensor *strings,
                                                 const tfq_producer_options *o, tfq_coord *coord,
                                                 tfq_queue **queue, tfq_producer_runner **runner,
                                                 tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the runner and the producer.  REQUIRES: the coordinator was joined (or the runner's
 * threads ended).  NULL: no-op.  Ownership: takes `r`.  Thread-safety: one thread, after the
 * join.  Since: 0.2 */
TFQ_API void tfq_producer_runner_free(tfq_producer_runner *r);

/* Waits for the thread, frees the handle (and its producer) and returns the code of its
 * tfq_producer_run (message in `st`).  NULL returns TFQ_OK.  Ownership: takes `t`.
 * Thread-safety: one thread, once per handle.  Since: 0.1 */
TFQ_API tfq_code tfq_producer_thread_join(tfq_producer_thread *t, tfq_status *st) TFQ_WARN_UNUSED;

/* Asks the thread to stop: cancels its producer and closes the queue with
 * cancel_pending_enqueues.  Join afterwards (it then reports TFQ_CANCELLED unless the run had
 * finished).  Ownership: nothing is taken.  Thread-safety: any, before the join.  Since: 0.1 */
TFQ_API void tfq_producer_thread_stop(tfq_producer_thread *t);

TFQ_EXTERN_C_END

#endif
