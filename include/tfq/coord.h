/* Coordinator, QueueRunner, LooperThread and the batchers of TF1's `tf.train`.
 *
 * The Coordinator (tf.train.Coordinator) collects a stop request and the first real error,
 * joins the threads registered with it with a grace period, and owns a tfq_cancel that it
 * triggers on a stop, so that every blocking queue call made with tfq_coord_cancel() returns
 * CANCELLED when the pipeline stops (TF gets the same effect from closing the session).
 *
 * A QueueRunner (tf.train.QueueRunner) runs "ops" — step functions — on threads, one thread per
 * op added (add the same op n times for n threads).  When every thread has hit a queue-closed
 * code (OUT_OF_RANGE by default) it closes its queue; when the coordinator stops it cancels the
 * queue's pending enqueues; any other error is reported to the coordinator.  The CANCELLED that
 * its own stop-time cancel causes is not reported.
 *
 * Batchers (tf.train.batch, shuffle_batch, batch_join, shuffle_batch_join, maybe_batch) build a
 * queue and a runner over "sources" — functions that produce one element (or one batch with
 * enqueue_many) per call and OUT_OF_RANGE at the end — and hand out batches.  A SparseTensor
 * goes through a batcher as in TF1: the source stores it in a tfq_sparse_map and puts the int64
 * handle in its place, and the batch of handles becomes one batched SparseTensor again after
 * tfq_batcher_next() (sparse.h; ops.h's tfq_read_parse_source does the storing itself). */
#ifndef TFQ_COORD_H
#define TFQ_COORD_H

#include <stdint.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* ---- Coordinator ----------------------------------------------------------------------------
 * Thread-safety: every call from any thread, concurrently, except tfq_coord_free(). */
typedef struct tfq_coord tfq_coord;

/* Creates a coordinator whose clean-stop codes are {OUT_OF_RANGE} (TF's default).
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: *out freed with tfq_coord_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_coord_new(tfq_coord **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees it.  Threads registered but never joined are detached.  NULL: no-op.
 * REQUIRES: no registered thread still running (join first) and no other call on `c` in
 * progress or to come.  Ownership: takes `c`.  Thread-safety: one thread, after every other
 * call on `c`.  Since: 0.1 */
TFQ_API void tfq_coord_free(tfq_coord *c);

/* Adds a clean-stop code (TF's clean_stop_exception_types): an error with this code counts as a
 * clean stop and is not recorded.  Adding a code twice changes nothing; at most 16 codes are
 * kept (OUT_OF_RANGE included), later ones are ignored.  Ownership: nothing is taken.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API void tfq_coord_add_clean_code(tfq_coord *c, tfq_code code);

/* Requests a stop, optionally reporting an error (`code` != TFQ_OK, `message` may be NULL: the
 * code's tfq_strerror() text).  Clean-stop codes are treated as TFQ_OK.  The first request wins:
 * later ones change nothing (their errors are dropped), as in TF.  Triggers tfq_coord_cancel(c).
 * @return TFQ_OK; or, when tfq_coord_join() has already run and this call carries a non-clean
 *         error, that error (TF raises it at once in the caller): the stop state is then left
 *         unchanged, so the caller is the only one who can act on it.
 * Ownership: `message` copied (truncated to 1023 bytes).  Thread-safety: any, concurrently
 * (also from the coordinator's own threads and from step functions).  Since: 0.1 */
TFQ_API tfq_code tfq_coord_request_stop(tfq_coord *c, tfq_code code, const char *message);

/* Nonzero once a stop was requested (until tfq_coord_clear_stop()), else 0.
 * Ownership: nothing is taken.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API int tfq_coord_should_stop(tfq_coord *c);

/* Waits up to `timeout_us` (negative: forever; 0: no wait) for a stop.  Returns nonzero if
 * stopped, 0 on timeout.  Ownership: nothing is taken.  Thread-safety: any, concurrently.
 * Since: 0.1 */
TFQ_API int tfq_coord_wait_for_stop(tfq_coord *c, int64_t timeout_us);

/* Clears the stop, the recorded error and the joined flag, and re-arms the cancel token.
 * REQUIRES: no blocking call is using tfq_coord_cancel(c).  Ownership: nothing is taken.
 * Thread-safety: any thread, under the REQUIRES above.  Since: 0.1 */
TFQ_API void tfq_coord_clear_stop(tfq_coord *c);

/* The cancel token triggered by a stop: pass it to blocking queue and reader calls.
 * Ownership: borrowed, valid while `c` lives (do not free or reset it).
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_cancel *tfq_coord_cancel(tfq_coord *c);

/* Starts `fn(arg)` on a new thread registered with `c`: TF's register_thread for a thread the
 * coordinator starts (tfq exposes no thread handle, so a thread is registered by starting it
 * here).  tfq_coord_join() joins it; nothing else may, and `fn`'s return value is dropped.
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (out of memory, or the thread could not be created:
 *         then `fn` never runs).
 * Ownership: `name` (NULL: "Thread-<n>") copied, used in the straggler message; `arg` borrowed
 * by the thread until it returns.  Thread-safety: any, concurrently (also from a registered
 * thread).  Since: 0.1 */
TFQ_API tfq_code tfq_coord_start_thread(tfq_coord *c, const char *name, void *(*fn)(void *),
                                        void *arg, tfq_status *st) TFQ_WARN_UNUSED;

/* Joins the registered threads (those registered when join is called).  Until a stop is
 * requested it waits for them however long they take; once a stop is requested it gives them
 * `grace_us` more (TF's stop_grace_period_secs; default 120 s in TF) and then stops waiting.
 * Threads still running are detached.  The registered set is cleared and joined is set.
 * @return the recorded error (code and message) if any — it takes priority; else
 *         TFQ_DEADLINE_EXCEEDED "Coordinator stopped with threads still running: A B" if some
 *         threads outlived the grace period and `ignore_live_threads` is 0; else TFQ_OK.
 * Ownership: nothing is taken; the message goes to `st`.  Thread-safety: any thread that is not
 * registered with `c` (a thread cannot join itself); one join at a time (a concurrent second
 * join finds no thread to wait for).  Since: 0.1 */
TFQ_API tfq_code tfq_coord_join(tfq_coord *c, int64_t grace_us, int ignore_live_threads,
                                tfq_status *st) TFQ_WARN_UNUSED;

/* Nonzero once tfq_coord_join() has run (until tfq_coord_clear_stop()), else 0.
 * Ownership: nothing is taken.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API int tfq_coord_joined(tfq_coord *c);

/* The recorded error (TF's raise_requested_exception): its code, with its message in `st`;
 * TFQ_OK (and `st` cleared) if none.  Ownership: nothing is taken.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_coord_error(tfq_coord *c, tfq_status *st);

/* A step function: one run of an "op".  Returns TFQ_OK to be called again; a queue-closed code
 * (OUT_OF_RANGE) at the end of its input; anything else is an error.  `cancel` is the
 * coordinator's cancel token (or the runner's own when there is no coordinator): pass it to
 * every blocking call so that a stop wakes the step.  Called from runner threads, possibly
 * several at once for the same ctx when the op was added several times.  No tfq lock is held. */
typedef tfq_code (*tfq_step_fn)(void *ctx, tfq_cancel *cancel, tfq_status *st);

/* Starts a LooperThread: calls `fn(ctx, cancel, st)` every `interval_us` on fixed boundaries
 * (negative: back to back) until the coordinator stops; a non-clean error from fn requests a
 * stop with that error.  The thread is registered with `c`.
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (out of memory, or the thread could not be created:
 *         then `fn` never runs).
 * Ownership: `name` (NULL: "LooperThread") copied; `ctx` borrowed until `c` is joined.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_coord_loop(tfq_coord *c, int64_t interval_us, tfq_step_fn fn, void *ctx,
                                const char *name, tfq_status *st) TFQ_WARN_UNUSED;

/* ---- QueueRunner ----------------------------------------------------------------------------
 * Thread-safety: configure (add_op, add_closed_code) from one thread before start; start, join
 * and free from one thread at a time; tfq_runner_num_errors() and tfq_runner_running() from any
 * thread. */
typedef struct tfq_runner tfq_runner;

/* A runner for queue `q`: close op = tfq_queue_close(q, 0), cancel op = tfq_queue_close(q, 1),
 * queue-closed codes {OUT_OF_RANGE}.
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: `q` gains a reference held until tfq_runner_free(); *out freed with
 * tfq_runner_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_runner_new(tfq_queue *q, tfq_runner **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Joins (see tfq_runner_join; without a coordinator it first cancels the ops' blocking calls),
 * drops the error, drops the queue reference and frees.  NULL: no-op.
 * Ownership: takes `r`.  Thread-safety: one thread, no other call on `r` in progress; not from
 * one of the runner's own ops.  Since: 0.1 */
TFQ_API void tfq_runner_free(tfq_runner *r);

/* Adds an op: one thread will run `step(ctx, ...)` in a loop.
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (the op is not added).
 * Ownership: `name` (may be NULL: "op") copied, names the thread
 * "QueueRunnerThread-<queue>-<name>"; `ctx` borrowed until the runner is joined.
 * Thread-safety: before tfq_runner_start, from the configuring thread.  Since: 0.1 */
TFQ_API tfq_code tfq_runner_add_op(tfq_runner *r, tfq_step_fn step, void *ctx, const char *name,
                                   tfq_status *st) TFQ_WARN_UNUSED;

/* Adds a queue-closed code (TF's queue_closed_exception_types; OUT_OF_RANGE is always one): a
 * step returning it ends its op cleanly instead of reporting an error.  Any of TFQ_CANCELLED ..
 * TFQ_UNAUTHENTICATED may be added, each any number of times; TFQ_OK and values that are not a
 * tfq_code are ignored (TFQ_OK from a step always means "run again").
 * Ownership: nothing is taken.  Thread-safety: before tfq_runner_start, from the configuring
 * thread.  Since: 0.1 */
TFQ_API void tfq_runner_add_closed_code(tfq_runner *r, tfq_code code);

/* Starts the threads, registered with `coord` if given (plus a close-on-stop thread that cancels
 * the queue's pending enqueues when the coordinator stops).  If the coordinator is already
 * stopped, no op runs.  `wait_us` > 0 waits until every op has finished its first run.
 * @return TFQ_OK (also when the runner's threads are already running: nothing new starts,
 *         as TF's create_threads returns []); TFQ_INVALID_ARGUMENT "Empty enqueue ops to run.";
 *         TFQ_DEADLINE_EXCEEDED "Queues not fed before the timeout"; else the first error of
 *         a first run; TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `coord` (may be NULL) borrowed until the runner is joined.
 * Thread-safety: one thread at a time with tfq_runner_join() and tfq_runner_free().  Since: 0.1 */
TFQ_API tfq_code tfq_runner_start(tfq_runner *r, tfq_coord *coord, int64_t wait_us,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* Waits for the runner's threads (when they are registered with a coordinator, prefer
 * tfq_coord_join(), which joins them) and returns the first error recorded: a step error, or
 * the close op's error.  Queue-closed codes and the stop-time CANCELLED are not errors.
 * @return TFQ_OK, or that error's code (message in `st`).  It waits until every op has ended
 *         (its input closed and drained, or a stop of the coordinator).
 * Ownership: nothing is taken.  Thread-safety: one thread at a time with tfq_runner_start()
 * and tfq_runner_free(); not from one of the runner's own ops.  Since: 0.1 */
TFQ_API tfq_code tfq_runner_join(tfq_runner *r, tfq_status *st) TFQ_WARN_UNUSED;

/* Number of errors recorded by the last start (TF's len(exceptions_raised)): an op's error counts
 * only when the runner has no coordinator (with one, the error goes to the coordinator, and TF's
 * runner does not append it); a failed close of the queue always counts.
 * Ownership: nothing is taken.  Thread-safety: any, concurrently (a snapshot).  Since: 0.1 */
TFQ_API int tfq_runner_num_errors(tfq_runner *r);

/* Number of the runner's op threads still running (0 when not started or joined): a program
 * without a coordinator stop waits on it for its ops to finish.  Ownership: nothing is taken.
 * Thread-safety: any, concurrently (a snapshot).  Since: 0.1 */
TFQ_API int tfq_runner_running(tfq_runner *r);

/* ---- batchers -------------------------------------------------------------------------------- */

/* A source: produces one element (or, with enqueue_many, one batch with a leading dimension) per
 * call in *out (a new tuple the batcher frees), or returns OUT_OF_RANGE at the end of its input.
 * With num_threads > 1 it is called concurrently from several threads. */
typedef tfq_code (*tfq_source_fn)(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st);

/* maybe_batch's keep_input: called for each example (row `row` of `elem`, or the element itself
 * with row -1 when enqueue_many is off); nonzero keeps it.  Called from the runner threads,
 * concurrently when there are several; `elem` is borrowed for the call. */
typedef int (*tfq_keep_fn)(void *ctx, const tfq_tuple *elem, int64_t row);

/* Batcher options.  Opaque.  Thread-safety: one thread at a time; read-only (shareable) once
 * passed to tfq_batcher_new(), which copies what it needs.  Values are checked by
 * tfq_batcher_new(), not by the setters. */
typedef struct tfq_batch_options tfq_batch_options;

/* Defaults as input.py: num_threads 1, capacity 32, min_after_dequeue 0, seed (0, 0),
 * enqueue_many off, dynamic_pad off, allow_smaller_final_batch off, no keep function, no shared
 * name.
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: *out freed with tfq_batch_options_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_batch_options_new(tfq_batch_options **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `o`.  NULL: no-op.  Ownership: takes `o`.  Thread-safety: one thread, no other call on
 * `o` in progress.  Since: 0.1 */
TFQ_API void tfq_batch_options_free(tfq_batch_options *o);

/* batch and shuffle_batch: the number of threads running the source (>= 1, checked by
 * tfq_batcher_new(): "num_threads must be >= 1"); the *_join kinds run one thread per source.
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_num_threads(tfq_batch_options *o, int n);

/* The queue's capacity (given to tfq_queue_options_set_capacity()).
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_capacity(tfq_batch_options *o, int64_t capacity);

/* Shuffle batchers only: the RandomShuffleQueue's min_after_dequeue (capacity must be bigger).
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_min_after_dequeue(tfq_batch_options *o, int64_t m);

/* Shuffle batchers only: the RandomShuffleQueue's seeds ((0, 0): seeded from the OS, as
 * tfq_queue_options_set_seeds()).  Ownership: nothing is taken.
 * Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_seeds(tfq_batch_options *o, int64_t seed, int64_t seed2);

/* Nonzero: each source call returns a batch (a leading dimension) enqueued with enqueue_many.
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_enqueue_many(tfq_batch_options *o, int on);

/* batch/batch_join only: a PaddingFIFOQueue pads unknown dims per batch.
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_dynamic_pad(tfq_batch_options *o, int on);

/* Hand out a final short batch (dequeue_up_to) instead of dropping it.
 * Ownership: nothing is taken.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_allow_smaller_final_batch(tfq_batch_options *o, int on);

/* maybe_batch: examples for which `keep` returns 0 are dropped before the queue (NULL: keep
 * all).  Ownership: `ctx` borrowed until the batcher built with these options is freed.
 * Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API void tfq_batch_options_set_keep(tfq_batch_options *o, tfq_keep_fn keep, void *ctx);

/* TF's shared_name for the batcher's queue (NULL: none).
 * @return TFQ_OK; TFQ_RESOURCE_EXHAUSTED (options unchanged).
 * Ownership: `name` copied.  Thread-safety: as tfq_batch_options.  Since: 0.1 */
TFQ_API tfq_code tfq_batch_options_set_shared_name(tfq_batch_options *o, const char *name,
                                                   tfq_status *st) TFQ_WARN_UNUSED;

/* A running batcher: its queue, its QueueRunner and the batch size.  Opaque.
 * Thread-safety: tfq_batcher_next() and the accessors from any thread, concurrently;
 * tfq_batcher_free() from one thread, after every other call. */
typedef struct tfq_batcher tfq_batcher;

typedef enum tfq_batcher_kind {
  TFQ_BATCHER_BATCH = 0,             /* tf.train.batch: one source, num_threads threads */
  TFQ_BATCHER_SHUFFLE_BATCH = 1,     /* tf.train.shuffle_batch */
  TFQ_BATCHER_BATCH_JOIN = 2,        /* tf.train.batch_join: one thread per source */
  TFQ_BATCHER_SHUFFLE_BATCH_JOIN = 3 /* tf.train.shuffle_batch_join */
} tfq_batcher_kind;

/* Builds the queue (FIFO, PaddingFIFO with dynamic_pad, RandomShuffle for the shuffle kinds) of
 * components `spec` (element shapes, without the batch dimension) and a runner over the sources
 * (`nsources` must be 1 for TFQ_BATCHER_BATCH/TFQ_BATCHER_SHUFFLE_BATCH), and starts it under
 * `coord`.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT ("capacity C must be bigger than min_after_dequeue M.",
 *         the queue's spec errors, batch_size < 1, num_threads < 1, no source or more than one for
 * the kinds without _JOIN, no coordinator); the codes of tfq_queue_open() for a shared name;
 * TFQ_RESOURCE_EXHAUSTED. *out NULL on failure. Ownership: `spec` and `opts` (NULL: defaults)
 * copied; `sources` and `ctxs` (NULL: every ctx NULL) arrays copied, each ctx borrowed until the
 * batcher is freed; `coord` borrowed (required: it stops the threads) until the batcher is freed;
 * *out freed with tfq_batcher_free(). Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_batcher_new(tfq_batcher_kind kind, const tfq_spec *spec, int64_t batch_size,
                                 const tfq_source_fn *sources, void *const *ctxs, size_t nsources,
                                 const tfq_batch_options *opts, tfq_coord *coord, tfq_batcher **out,
                                 tfq_status *st) TFQ_WARN_UNUSED;

/* The next batch: dequeue_many(batch_size), or dequeue_up_to with allow_smaller_final_batch.
 * Waits with the coordinator's cancel token.
 * @return TFQ_OK (*out new, freed with tfq_tuple_free), TFQ_OUT_OF_RANGE at the end of input,
 *         TFQ_CANCELLED when the coordinator stopped; otherwise the codes of
 *         tfq_queue_dequeue_many() / tfq_queue_dequeue_up_to().
 * Ownership: *out new (NULL on failure).  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_batcher_next(tfq_batcher *b, tfq_tuple **out, tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_batcher_next(), into `dst`, a tuple with one slot per component that the caller keeps
 * across calls: tensors of the batch's shape that only `dst` references are refilled in place
 * (tfq_queue_dequeue_many_into() / tfq_queue_dequeue_up_to_into()), so that a steady consumer
 * allocates (almost) nothing.  Take a reference to keep a batch beyond the next call.  String
 * components point at their rows' bytes and keep the tensors holding them until the next refill
 * (see tfq_queue_dequeue_many_into()).
 * @return as tfq_batcher_next(), plus INVALID_ARGUMENT "Wrong number of components in tuple.
 *         Expected k, got m".
 * Ownership: `dst` borrowed; on failure its slots hold tensors of unspecified contents.
 * Thread-safety: any, concurrently, each thread with its own `dst`.  Since: 0.2 */
TFQ_API tfq_code tfq_batcher_next_into(tfq_batcher *b, tfq_tuple *dst,
                                       tfq_status *st) TFQ_WARN_UNUSED;

/* The batcher's queue.  Ownership: borrowed, valid while `b` lives (tfq_queue_ref() to keep it).
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_queue *tfq_batcher_queue(tfq_batcher *b);

/* TF's summary gauge: batch kinds size/capacity ("fraction_of_C_full"); shuffle kinds
 * max(0, size - min_after_dequeue) / (capacity - min_after_dequeue)
 * ("fraction_over_M_of_C-M_full").  Ownership: nothing is taken.
 * Thread-safety: any, concurrently (a snapshot).  Since: 0.1 */
TFQ_API double tfq_batcher_fraction_full(tfq_batcher *b);

/* The gauge's TF tag, e.g. "batch/fraction_of_32_full".  Ownership: borrowed, valid while `b`
 * lives.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API const char *tfq_batcher_summary_name(tfq_batcher *b);

/* Stops nothing by itself: request a stop on the coordinator and join it first.  Frees the
 * runner, the queue reference and the batcher.  NULL: no-op.  Ownership: takes `b`.
 * Thread-safety: one thread, after every other call on `b`.  Since: 0.1 */
TFQ_API void tfq_batcher_free(tfq_batcher *b);

TFQ_EXTERN_C_END

#endif
