/* Queues with TensorFlow 1.x semantics: FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue and
 * PriorityQueue, and the shared-name registry.
 *
 * A queue stores elements (tuples of component tensors, see tensor.h) and reproduces the
 * observable rules of TensorFlow's queue kernels (core/kernels/queue_base.cc):
 *
 *  - Pending enqueue attempts (enqueue, enqueue_many, and non-cancelling close) and pending
 *    dequeue attempts (dequeue, dequeue_many, dequeue_up_to) are each served in arrival order:
 *    only the head attempt of each side touches the storage.  A blocked large enqueue_many keeps
 *    a later small enqueue waiting even when there is room for it; the elements of one
 *    enqueue_many are therefore contiguous.
 *  - enqueue_many inserts as many slices as fit and resumes when room appears (B > capacity
 *    works).  dequeue_many / dequeue_up_to take every available element into a private partial
 *    batch while they wait (size() reads 0 meanwhile) and complete when they hold n.  (Not
 *    PriorityQueue: its dequeue_many waits until n elements are stored, as TF's.)
 *  - A plain close waits behind pending enqueues; close with cancel_pending_enqueues acts at once
 *    and fails the pending enqueues with CANCELLED.
 *  - Pending dequeues are never cancelled by close: they finish from what is left or fail with
 *    OUT_OF_RANGE, a partial batch going back into the queue (FIFO/Padding: to the front in
 *    order; RandomShuffle: appended, last-taken first; Priority: into the heap).
 *  - A deadline gives DEADLINE_EXCEEDED "Timed out waiting for notification" and leaves the
 *    queue usable; a triggered tfq_cancel gives CANCELLED "Enqueue/Dequeue operation was
 *    cancelled".  No data is lost: elements a timed-out or cancelled dequeue_many had taken go
 *    back as on close (TensorFlow drops them; see README "Deviations").
 *
 * The kinds:
 *  FIFOQueue           first in, first out.  Components all fully shaped, or none shaped (then
 *                      dequeue_many/up_to are refused, as TF).
 *  RandomShuffleQueue  dequeue takes a uniformly random element (swap-with-last, as TF); while
 *                      open, a dequeue waits until the queue holds more than min_after_dequeue;
 *                      once closed everything drains.  Shapes as FIFOQueue.
 *  PaddingFIFOQueue    FIFO whose shapes may have unknown dims (TFQ_UNKNOWN_DIM, rank known).
 *                      dequeue returns elements unpadded; dequeue_many/up_to pad every unknown
 *                      dim to the largest in that batch with 0 / "" / false.
 *  PriorityQueue       the spec lists the value components; the queue prepends an int64 scalar
 *                      priority as component 0 (tfq_queue_spec() shows it).  Smallest priority
 *                      first; ties in no particular order.
 *
 * Error messages are TensorFlow's, with <Kind> the kind name above (except that, as in TF, a
 * PaddingFIFOQueue's enqueue and single-dequeue messages say "FIFOQueue") and <name> the queue's
 * kernel name:
 *   CANCELLED         "<Kind> '<name>' is closed."
 *   OUT_OF_RANGE      "<Kind> '<name>' is closed and has insufficient elements (requested r,
 *                      current size s)"  (r is the count still needed and s the size before a
 *                      partial batch went back, as TF prints them)
 *   CANCELLED         "Queue '<name>' is already closed."  (non-cancelling close, closed queue)
 *   INVALID_ARGUMENT  "Shape mismatch in tuple component 1. Expected [3,3], got [3,4]", ...
 *
 * Storage is contiguous and grows geometrically up to the capacity for components with fully
 * defined numeric shapes; other components are kept as one tensor per element.  Batches move
 * under one lock acquisition and wake at most one sleeping thread per side; a blocked call spins
 * briefly before it sleeps, less (down to not at all) on a queue whose waits keep outlasting the
 * spin.
 *
 * Thread-safety: every tfq_queue_* call may be made from any thread, concurrently with any other
 * call on the same queue, except tfq_queue_free() of the last reference. */
#ifndef TFQ_QUEUE_H
#define TFQ_QUEUE_H

#include <stdint.h>
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* No deadline: wait until the call can complete, the queue closes, or a cancel triggers. */
#define TFQ_NO_TIMEOUT ((int64_t)-1)
/* TensorFlow's "unbounded" capacity: any negative capacity is stored as this value. */
#define TFQ_UNBOUNDED_CAPACITY ((int64_t)2147483647)

typedef enum tfq_queue_kind {
  TFQ_QUEUE_FIFO = 0,
  TFQ_QUEUE_RANDOM_SHUFFLE = 1,
  TFQ_QUEUE_PADDING_FIFO = 2,
  TFQ_QUEUE_PRIORITY = 3
} tfq_queue_kind;

/* "FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue" (TF's kernel names);
 * "UnknownQueue" otherwise.  Ownership: static, never NULL.  Thread-safety: any.  Since: 0.1 */
TFQ_API const char *tfq_queue_kind_name(tfq_queue_kind kind);

/* ---- cancellation ----------------------------------------------------------------------------
 * A tfq_cancel plays the part of a TensorFlow step's cancellation manager: blocking calls given
 * the same tfq_cancel all fail with CANCELLED ("Enqueue operation was cancelled" / "Dequeue
 * operation was cancelled") once it is triggered, and calls started after the trigger fail at
 * once.  Thread-safety: any thread, concurrently. */
typedef struct tfq_cancel tfq_cancel;

/* Creates an untriggered cancel.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).  Ownership: *out freed with
 * tfq_cancel_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_cancel_new(tfq_cancel **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Triggers the cancel: every call blocked with it is marked cancelled and woken before this
 * returns (each then returns CANCELLED from its own thread); later calls given it fail at once.
 * Idempotent.  Ownership: nothing is taken.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API void tfq_cancel_trigger(tfq_cancel *c);

/* Nonzero once triggered (until reset), else 0.  Ownership: nothing is taken.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API int tfq_cancel_is_triggered(const tfq_cancel *c);

/* Re-arms a triggered cancel for reuse.  REQUIRES: no call is using it.
 * Ownership: nothing is taken.  Thread-safety: any thread, under the REQUIRES.  Since: 0.1 */
TFQ_API void tfq_cancel_reset(tfq_cancel *c);

/* Frees it.  NULL does nothing.  REQUIRES: no call is using it.  Ownership: takes `c`.
 * Thread-safety: one thread, after every other call on `c`.  Since: 0.1 */
TFQ_API void tfq_cancel_free(tfq_cancel *c);

/* ---- options ----------------------------------------------------------------------------------
 */

/* Construction options.  Opaque.  Thread-safety: one thread at a time.  Values are checked by
 * tfq_queue_new() / tfq_queue_open(), not by the setters. */
typedef struct tfq_queue_options tfq_queue_options;

/* Defaults: capacity unbounded, name "<kind op name>" (fifo_queue, ...), no shared name,
 * container "", min_after_dequeue 0, seed 0, seed2 0.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: *out freed with tfq_queue_options_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_options_new(tfq_queue_options **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `o`.  NULL does nothing.  Ownership: takes `o`.  Thread-safety: as tfq_queue_options.
 * Since: 0.1 */
TFQ_API void tfq_queue_options_free(tfq_queue_options *o);

/* Any negative capacity means unbounded (stored and printed as 2147483647, as in TF); capacity 0
 * is accepted and every enqueue then blocks, as in TF.  Ownership: nothing is taken.
 * Thread-safety: as tfq_queue_options.  Since: 0.1 */
TFQ_API void tfq_queue_options_set_capacity(tfq_queue_options *o, int64_t capacity);

/* The op name.  Without a shared name the kernel name used in messages is "_<N>_<name>" with a
 * process-wide counter N, as in TF.  NULL restores the default.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (options unchanged).  Ownership: `name` copied.
 * Thread-safety: as tfq_queue_options.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_options_set_name(tfq_queue_options *o, const char *name,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* TF's shared_name: becomes the kernel name used in messages (NULL: none).
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (options unchanged).  Ownership: `shared_name` copied.
 * Thread-safety: as tfq_queue_options.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_options_set_shared_name(tfq_queue_options *o, const char *shared_name,
                                                   tfq_status *st) TFQ_WARN_UNUSED;

/* TF's container (NULL or "": the default, "localhost").
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (options unchanged).  Ownership: `container` copied.
 * Thread-safety: as tfq_queue_options.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_options_set_container(tfq_queue_options *o, const char *container,
                                                 tfq_status *st) TFQ_WARN_UNUSED;

/* RandomShuffleQueue: dequeues wait while the queue is open and holds no more than `m`
 * elements (0 <= m < capacity, checked at creation).  Ownership: nothing is taken.  Thread-safety:
 * as tfq_queue_options.  Since: 0.1 */
TFQ_API void tfq_queue_options_set_min_after_dequeue(tfq_queue_options *o, int64_t m);

/* RandomShuffleQueue: TF's op seeds.  (0, 0) (the default) seeds from the OS, so the order is
 * not reproducible, as in TF.  Ownership: nothing is taken.  Thread-safety: as tfq_queue_options.
 * Since: 0.1 */
TFQ_API void tfq_queue_options_set_seeds(tfq_queue_options *o, int64_t seed, int64_t seed2);

/* RandomShuffleQueue: nonzero draws positions with Philox4x32-10 laid out as TensorFlow does
 * (`word % size`, one 32-bit word per draw), so that for the same seeds and the same
 * single-threaded sequence of operations tfq yields the same order as TensorFlow.  The default
 * (0) draws with PCG32 and unbiased bounded draws.  Ownership: nothing is taken.  Thread-safety: as
 * tfq_queue_options.  Since: 0.1 */
TFQ_API void tfq_queue_options_set_tf_exact_order(tfq_queue_options *o, int on);

/* ---- queues -------------------------------------------------------------------------------- */

/* A queue.  Opaque, reference counted.  Thread-safety: see the top of this file. */
typedef struct tfq_queue tfq_queue;

/* Creates a private queue of `kind` with components `spec` and options `opts` (NULL: defaults;
 * a shared name given here only names the queue: use tfq_queue_open() to share it).
 * FIFO/RandomShuffle/Priority: every component must have a fully defined shape, or none may
 * have a shape.  Padding: every component needs a known rank.
 * @return TFQ_OK
 *         TFQ_INVALID_ARGUMENT  empty spec or unknown kind; some components shaped and others not
 *                               ("Different number of component types.  Types: ..., Shapes:
 *                               ..."); a partial shape ("All shapes must be fully defined:
 *                               [...]"); Padding: "shape <unknown> must have known rank.";
 *                               RandomShuffle: "min_after_dequeue M must be >= 0",
 *                               "min_after_dequeue M must be < capacity C".
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: `spec` and `opts` are copied (borrowed for the call); *out (NULL on failure) has one
 * reference, released with tfq_queue_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_new(tfq_queue_kind kind, const tfq_spec *spec,
                               const tfq_queue_options *opts, tfq_queue **out,
                               tfq_status *st) TFQ_WARN_UNUSED;

/* Convenience: tfq_queue_new(TFQ_QUEUE_FIFO, ...) with `capacity` and op name `name` (NULL:
 * "fifo_queue").  @return as tfq_queue_new().  Ownership: `spec` and `name` copied; *out as
 * tfq_queue_new().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_fifo_queue_new(const tfq_spec *spec, int64_t capacity, const char *name,
                                    tfq_queue **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Adds a reference and returns `q`.  Ownership: the caller owns the new reference, released
 * with tfq_queue_free().  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_queue *tfq_queue_ref(tfq_queue *q);

/* Drops one reference; the last frees the queue and the elements still in it.  NULL does
 * nothing.  REQUIRES: when dropping the last reference, no call on `q` is in progress (close the
 * queue and join your threads first).  Ownership: takes one reference.
 * Thread-safety: any, concurrently, except for the last reference (see REQUIRES).  Since: 0.1 */
TFQ_API void tfq_queue_free(tfq_queue *q);

/* Accessors.  Borrowed strings, valid while `q` lives.  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_queue_kind tfq_queue_get_kind(const tfq_queue *q);
/* Kernel name used in messages (shared name, or "_<N>_<name>"). */
TFQ_API const char *tfq_queue_name(const tfq_queue *q);
TFQ_API int64_t tfq_queue_capacity(const tfq_queue *q);
/* Borrowed spec of the components, valid while `q` lives. */
TFQ_API const tfq_spec *tfq_queue_spec(const tfq_queue *q);

/* Elements stored now (not counting a pending dequeue_many's partial batch nor the
 * not-yet-inserted tail of a pending enqueue_many), as TF's size().  Ownership: nothing is
 * taken.  Thread-safety: any, concurrently (a snapshot).  Since: 0.1 */
TFQ_API int64_t tfq_queue_size(tfq_queue *q);

/* Nonzero once a close has *executed* (a non-cancelling close waiting behind enqueues has not
 * executed yet), else 0.  Ownership: nothing is taken.  Thread-safety: any, concurrently.
 * Since: 0.1 */
TFQ_API int tfq_queue_is_closed(tfq_queue *q);

/* The common blocking-call parameters:
 *   cancel      NULL, or a tfq_cancel whose trigger fails the call with CANCELLED.
 *   timeout_us  TFQ_NO_TIMEOUT, or microseconds after which a call that has not completed fails
 *               with DEADLINE_EXCEEDED "Timed out waiting for notification" (0 = do not wait).
 * A call that fails with CANCELLED or DEADLINE_EXCEEDED leaves the queue as if it had never been
 * made, except for the slices an enqueue_many already inserted (they stay, as in TF).
 * Every blocking call below may be made from any thread, concurrently with any other call on the
 * same queue. */

/* Enqueues one element.  `elem` must have one component per spec entry, of the spec's dtype and
 * (if declared) shape.
 * Wakes when: room appears (OK); the queue closes (CANCELLED "<Kind> '<name>' is closed."); a
 * cancelling close or `cancel` (CANCELLED "Enqueue operation was cancelled"); timeout
 * (DEADLINE_EXCEEDED).
 * @return those, or TFQ_INVALID_ARGUMENT without queuing: "Wrong number of components in tuple.
 *         Expected k, got m", "Type mismatch in tuple component i. Expected float, got int32",
 *         "Shape mismatch in tuple component i. Expected [3,3], got [3,4]".
 * Ownership: `elem` borrowed; its tensors are copied or referenced (never modify them after).
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_enqueue(tfq_queue *q, const tfq_tuple *elem, tfq_cancel *cancel,
                                   int64_t timeout_us, tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_queue_enqueue(), but the element is given as caller memory: `comps[i]` points to
 * component i's bytes (its spec dtype and fully defined shape, row-major; for a PriorityQueue
 * component 0 is the int64 priority, as tfq_queue_spec() shows), so a producer needs no tuple or
 * tensor.  Every TF rule of tfq_queue_enqueue() holds: arrival order behind pending enqueues,
 * close, cancel and deadline, with the same codes and messages.  The bytes are copied before the
 * call returns OK (on a failure nothing was copied); the call does not keep `comps`.
 * @return those of tfq_queue_enqueue(), or TFQ_INVALID_ARGUMENT without queuing: "Wrong number
 *         of components in tuple. Expected k, got m" (`ncomp` differs; `comps` NULL), "tuple
 *         component i is not set" (comps[i] NULL), "enqueue_from needs fixed-size numeric
 *         components; component i is string []" (a string component, or a shape that is not
 *         fully defined, e.g. a PaddingFIFOQueue's unknown dim: use tfq_queue_enqueue()).
 * Ownership: `comps` and the bytes borrowed for the call.  Thread-safety: as tfq_queue_enqueue().
 * Since: 0.1 */
TFQ_API tfq_code tfq_queue_enqueue_from(tfq_queue *q, const void *const *comps, size_t ncomp,
                                        tfq_cancel *cancel, int64_t timeout_us,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* Enqueues the B slices along dim 0 of every component of `batch`, in order and contiguously.
 * B == 0 succeeds at once without looking at the queue, even when it is closed (as TF).
 * Inserts what fits and keeps waiting for the rest; slices already inserted stay when the call
 * later fails.  Wake conditions and codes as tfq_queue_enqueue, plus INVALID_ARGUMENT "All input
 * tensors must have the same size in the 0th dimension. Component i has a, and should have b",
 * and "Shape mismatch in tuple component i. Expected [B,3,3], got [B,3,4]".
 * Ownership: `batch` borrowed; its tensors are copied or referenced (never modify them after).
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_enqueue_many(tfq_queue *q, const tfq_tuple *batch, tfq_cancel *cancel,
                                        int64_t timeout_us, tfq_status *st) TFQ_WARN_UNUSED;

/* Dequeues one element.
 * Wakes when: an element is available (OK, *out set); the queue is closed and empty
 * (OUT_OF_RANGE "... is closed and has insufficient elements (requested 1, current size 0)");
 * `cancel` (CANCELLED "Dequeue operation was cancelled"); timeout (DEADLINE_EXCEEDED).
 * Ownership: *out is a new tuple freed with tfq_tuple_free(); NULL on failure.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_dequeue(tfq_queue *q, tfq_tuple **out, tfq_cancel *cancel,
                                   int64_t timeout_us, tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_queue_dequeue(), but into `dst`, a tuple with one slot per component that the caller
 * keeps across calls, so that a steady consumer allocates nothing: a slot holding a tensor of
 * the component's dtype and shape that only `dst` references (refcount 1, not wrapped) is
 * overwritten in place; any other slot (empty, wrong shape, shared) gets a new tensor and its
 * old reference is dropped.  Wake conditions and codes as tfq_queue_dequeue(), plus
 * INVALID_ARGUMENT "Wrong number of components in tuple. Expected k, got m".
 * Ownership: `dst` borrowed; on failure its slots hold tensors of unspecified contents.
 * Thread-safety: any, concurrently, each thread with its own `dst`.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_dequeue_into(tfq_queue *q, tfq_tuple *dst, tfq_cancel *cancel,
                                        int64_t timeout_us, tfq_status *st) TFQ_WARN_UNUSED;

/* Dequeues exactly n elements as a batch ([n] + shape per component; Padding: unknown dims
 * padded to the batch maximum; Priority: rows in ascending priority).
 * Checks first, in TF's order: n < 0 → INVALID_ARGUMENT "DequeueManyOp requested n < 0
 * elements"; components without declared shapes → INVALID_ARGUMENT "<Kind>'s DequeueMany and
 * DequeueUpTo require the components to have specified shapes." (Priority: "PriorityQueue's
 * DequeueMany requires ..."); n == 0 → OK at once with empty [0]+shape tensors (unknown dims 0).
 * Wakes when: n elements were gathered (OK); the queue closed with fewer than still needed
 * (OUT_OF_RANGE, the partial batch going back to the front in order); cancel or timeout (the
 * partial batch goes back too).
 * Ownership: *out new, freed with tfq_tuple_free(); NULL on failure.
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_dequeue_many(tfq_queue *q, int64_t n, tfq_tuple **out,
                                        tfq_cancel *cancel, int64_t timeout_us,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* As dequeue_many while the queue is open (it waits for n).  Once closed it returns between 1
 * and n elements ([k] + shape) and fails with OUT_OF_RANGE only when none is left.  Messages say
 * "DequeueUpToOp".  PriorityQueue: TF loses the elements of a closed short dequeue_up_to; tfq
 * returns them as a short batch.  @return and Ownership as tfq_queue_dequeue_many().
 * Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_dequeue_up_to(tfq_queue *q, int64_t n, tfq_tuple **out,
                                         tfq_cancel *cancel, int64_t timeout_us,
                                         tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_queue_dequeue_many() / tfq_queue_dequeue_up_to(), but into `dst`, a tuple with one slot
 * per component that the caller keeps across calls, so that a steady consumer of batches
 * allocates (almost) nothing: a slot holding a tensor of shape [n] + the component's shape and
 * its dtype that only `dst` references (refcount 1, not wrapped) is overwritten in place (a
 * string tensor keeps its byte storage); any other slot (empty, wrong shape, a short last batch
 * of up_to, shared) gets a new tensor and its old reference is dropped.  To keep a batch beyond
 * the next call, take a reference (tfq_tensor_ref) and the next call allocates anew.
 * String components of a fixed shape are not copied: their strings point at the bytes the rows
 * were enqueued with, and the batch holds a reference to each tensor those bytes belong to (at
 * most n) until its next refill or its free, so a batch kept keeps those tensors' memory too.
 * Enqueueing such a batch into a queue copies its strings first (the queue then holds only their
 * bytes).  The strings read the same either way (tfq_tensor_string).  Wake
 * conditions and codes as the calls they mirror, plus INVALID_ARGUMENT "Wrong number of
 * components in tuple. Expected k, got m".
 * Ownership: `dst` borrowed; on failure its slots hold tensors of unspecified contents.
 * Thread-safety: any, concurrently, each thread with its own `dst`.  Since: 0.2 */
TFQ_API tfq_code tfq_queue_dequeue_many_into(tfq_queue *q, int64_t n, tfq_tuple *dst,
                                             tfq_cancel *cancel, int64_t timeout_us,
                                             tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_queue_dequeue_up_to_into(tfq_queue *q, int64_t n, tfq_tuple *dst,
                                              tfq_cancel *cancel, int64_t timeout_us,
                                              tfq_status *st) TFQ_WARN_UNUSED;

/* Closes the queue.
 * cancel_pending_enqueues == 0 (TF's default): the close waits behind every pending enqueue and
 *   enqueue_many, then sets closed; later enqueues fail with CANCELLED "... is closed.".  If the
 *   queue was already closed when it runs: CANCELLED "Queue '<name>' is already closed.".  It
 *   blocks, so `cancel` and `timeout_us` apply (CANCELLED / DEADLINE_EXCEEDED; the close then
 *   does not happen).
 * cancel_pending_enqueues != 0: closes at once and fails every pending enqueue (and every waiting
 *   non-cancelling close, as TF does) with CANCELLED "Enqueue operation was cancelled".  Always
 *   OK, also on a closed queue.
 * Pending dequeues are re-evaluated and finish from what remains or fail with OUT_OF_RANGE.
 * Ownership: nothing is taken.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_queue_close(tfq_queue *q, int cancel_pending_enqueues, tfq_cancel *cancel,
                                 int64_t timeout_us, tfq_status *st);

/* ---- the shared-name registry ----------------------------------------------------------------
 * TF's resource manager for queues: (container, shared_name) names one queue, whatever its kind.
 * A second open of the same name returns the same queue (a new reference), or fails with TF's
 * InvalidArgument messages when the kind, capacity, min_after_dequeue, seeds (when the request
 * gives any), dtypes or shapes differ:
 *   "Expected FIFOQueue, found RandomShuffleQueueV2"
 *   "Shared queue 'q' has capacity 10 but requested capacity was 15"
 *   "Shared queue 'q' has min_after_dequeue 0 but requested min_after_dequeue was 5."
 *   "Shared queue 'q' has random seeds (87654321, 12) but requested seeds are (87654321, 21)."
 *   "Shared queue 'q' has component types float but requested component types were int32"
 *   "Shared queue 'q' has component shapes [] but requested component shapes were [[1,1,2,3]]"
 * (PaddingFIFOQueue compares shapes for compatibility, as TF.)  The registry holds a reference
 * to every shared queue until it is cleared, as TF keeps a shared queue until its container is
 * reset.  Thread-safety: any thread, concurrently. */
typedef struct tfq_registry tfq_registry;

/* The process-wide registry.  Ownership: borrowed, never freed (tfq_registry_free() ignores
 * it).  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_registry *tfq_registry_default(void);

/* A separate registry, e.g. one per simulated server.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).  Ownership: *out freed with
 * tfq_registry_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_registry_new(tfq_registry **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Drops the registry's references to its queues (tfq_registry_clear(r, NULL)) and frees it.
 * NULL and the default registry: no-op.  Ownership: takes `r`.  Thread-safety: one thread,
 * after every other call on `r`.  Since: 0.1 */
TFQ_API void tfq_registry_free(tfq_registry *r);

/* Drops the registry's references to the queues of `container` ("" means "localhost"; NULL
 * means every container), like tf.Session.reset(target, containers).  Queues still referenced
 * elsewhere live on.  `r` NULL means the default registry.  Ownership: `container` borrowed for
 * the call.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API void tfq_registry_clear(tfq_registry *r, const char *container);

/* Opens the queue named by the options' shared name in `container` (default "localhost") of
 * registry `r` (NULL: the default registry), creating it with `kind`, `spec` and `opts` if it does
 * not exist.  Without a shared name this is tfq_queue_new() (a private queue, never shared).
 * @return TFQ_OK (*out is a new reference), TFQ_INVALID_ARGUMENT (a mismatch above; "shared_name
 *         cannot start with '_':NAME"; "container contains invalid characters: C"; the checks of
 *         tfq_queue_new()), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `spec` and `opts` borrowed for the call (copied when the queue is created); *out
 * released with tfq_queue_free().  Thread-safety: any, concurrently (also for the same name:
 * one creates, the others open).  Since: 0.1 */
TFQ_API tfq_code tfq_queue_open(tfq_registry *r, tfq_queue_kind kind, const tfq_spec *spec,
                                const tfq_queue_options *opts, tfq_queue **out,
                                tfq_status *st) TFQ_WARN_UNUSED;

TFQ_EXTERN_C_END

#endif
