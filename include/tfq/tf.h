/* The TensorFlow bridge (libtfq_tf): feeds TensorFlow sessions and TensorFlow clusters from tfq.
 *
 * Built only when the meson feature `tensorflow` finds the tensorflow-cpu wheel; it links the
 * wheel's C API libraries (libtensorflow_cc.so.2, libtensorflow_framework.so.2) and libtfq.
 * libtfq itself never depends on TensorFlow.  Include this header with the wheel's
 * `tensorflow/include` directory on the include path (pkg/meson: the tfq_tf dependency).
 *
 * Three layers:
 *  - Conversions: tfq_code <-> TF_Code and tfq_dtype <-> TF_DataType (same numbers), tfq tensors
 *    <-> TF_Tensor.  Numeric tensors are lent to TensorFlow without a copy: the TF_Tensor holds a
 *    reference to the tfq tensor, and TensorFlow's deallocator drops it exactly once (also when
 *    TF_NewTensor fails).  String tensors are copied into TF_TString arrays.
 *  - Feed mode A (tfq_tf_feed): the TF_Output / TF_Tensor arrays of TF_SessionRun for a tfq batch
 *    and a list of named placeholders; for parsed tf.train.Examples (0.2), sparse outputs go to
 *    TF1 sparse_placeholders by name (tfq_tf_feed_new_example).
 *  - Feed mode B (tfq_tf_queue, tfq_tf_feeder): a TensorFlow queue, found or created by shared
 *    name on a device of a cluster ("/job:ps/task:0" over "grpc://host:port"), fed with
 *    QueueEnqueueManyV2 (one element per row) or QueueEnqueueV2 (one element per batch, 0.2),
 *    and closed at end of data; a QueueRunner step that moves batches from a tfq queue into it,
 *    so a whole tfq pipeline feeds TensorFlow workers.
 *  - Distributed feeding (0.2): the cluster description (TF_CONFIG, or "job=h:p,...;...") and the
 *    done set shared by several feeder units (distributed-feeding.md 1.3, 4.4).
 *
 * Codes: TensorFlow errors keep their code (the numbering is shared) and message.
 * Since: 0.1 */
#ifndef TFQ_TF_H
#define TFQ_TF_H

#include <stddef.h>
#include <stdint.h>
#include <tensorflow/c/c_api.h>
#include <tfq/alloc.h>
#include <tfq/coord.h>
#include <tfq/example.h>
#include <tfq/export.h>
#include <tfq/pipeline.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* ---- codes, dtypes, versions ---------------------------------------------------------------- */

/* TF_Code -> tfq_code and back: the identity on the 17 shared codes; a value outside them maps to
 * TFQ_UNKNOWN / TF_UNKNOWN.  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_code_from_tf(TF_Code code);
TFQ_API TF_Code tfq_tf_code_to_tf(tfq_code code);

/* Copies the code and message of `src` into `dst` (NULL allowed) and returns the code.
 * Ownership: both borrowed.  Thread-safety: as tfq_status.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_status_copy(const TF_Status *src, tfq_status *dst);

/* tfq_dtype -> TF_DataType (identity for every tfq dtype).  Since: 0.1 */
TFQ_API TF_DataType tfq_tf_dtype_to_tf(tfq_dtype dt);

/* TF_DataType -> tfq_dtype.  @return TFQ_OK, or TFQ_UNIMPLEMENTED for a TensorFlow dtype tfq does
 * not have (half, bfloat16, quantized, resource, variant, ...).  Since: 0.1 */
TFQ_API tfq_code tfq_tf_dtype_from_tf(TF_DataType dt, tfq_dtype *out,
                                      tfq_status *st) TFQ_WARN_UNUSED;

/* TF_Version() of the linked TensorFlow, e.g. "2.21.0".  Static, never NULL.  Since: 0.1 */
TFQ_API const char *tfq_tf_version(void);

/* ---- tensors ----------------------------------------------------------------------------------
 */

/* Makes a TF_Tensor with the dtype, shape and contents of `t`.
 * Numeric dtypes: no copy.  The TF_Tensor adopts `t`'s buffer and holds one new reference to `t`,
 * dropped exactly once by TensorFlow's deallocator (when the TF_Tensor and every TensorFlow
 * tensor sharing its buffer are gone; possibly on a TensorFlow thread).  `t` must then stay
 * unmodified (tensor.h's "immutable once shared").  A buffer that is not 64-byte aligned (a
 * wrapped tensor) is copied by TensorFlow, which then drops the reference at once.
 * Strings: copied into a TF_STRING tensor of TF_TString (TF_DeleteTensor frees them).
 * @return TFQ_OK                *out set.
 *         TFQ_INVALID_ARGUMENT  TensorFlow refused the tensor (the reference is already dropped).
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: `t` borrowed (a reference is taken, see above); *out (NULL on failure) is the
 * caller's, released with TF_DeleteTensor().  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_tensor_to_tf(tfq_tensor *t, TF_Tensor **out,
                                     tfq_status *st) TFQ_WARN_UNUSED;

/* Makes a tfq tensor with a copy of `t`'s contents.
 * @return TFQ_OK, TFQ_UNIMPLEMENTED (dtype tfq lacks), TFQ_INVALID_ARGUMENT (rank above
 *         TFQ_MAX_RANK, short buffer), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `t` borrowed for the call; *out (NULL on failure) released with tfq_tensor_free().
 * Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_tensor_from_tf(const TF_Tensor *t, tfq_tensor **out,
                                       tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_tf_tensor_from_tf() but takes `t`: numeric tensors are wrapped without a copy and
 * TF_DeleteTensor(t) runs when the tfq tensor's last reference goes; strings are copied and `t`
 * deleted at once.  On failure `t` is deleted too ("regardless of success or failure").
 * Ownership: takes `t`; *out as above.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_tensor_from_tf_take(TF_Tensor *t, tfq_tensor **out,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* Counters of numeric buffers lent to TensorFlow by this process: *lent counts the
 * TF_Tensors made zero-copy, *returned the deallocator runs (each drops one tfq reference).
 * lent - returned is the number of buffers TensorFlow still holds.  Either pointer may be NULL.
 * Thread-safety: any (a snapshot).  Since: 0.1 */
TFQ_API void tfq_tf_lent_counts(int64_t *lent, int64_t *returned);

/* ---- feed mode A: TF_SessionRun inputs --------------------------------------------------------
 */

/* The input side of TF_SessionRun for a fixed list of placeholders: parallel arrays of TF_Output
 * (resolved once from names) and TF_Tensor (rebuilt for each batch).
 * Thread-safety: one thread at a time (may migrate); make one per feeding thread. */
typedef struct tfq_tf_feed tfq_tf_feed;

/* Resolves `n` operation names in `graph` ("x" means output 0 of op x, "x:1" output 1).
 * Component i of the batches given to tfq_tf_feed_set() feeds names[i].
 * @return TFQ_OK, TFQ_NOT_FOUND ("No operation named 'x' in the graph"), TFQ_INVALID_ARGUMENT
 *         (n == 0, bad output index), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `graph` borrowed until the feed is freed; `names` copied; *out freed with
 * tfq_tf_feed_free().  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feed_new(TF_Graph *graph, const char *const *names, size_t n,
                                 tfq_tf_feed **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the feed and deletes its tensors (tfq_tf_feed_clear()).  NULL: no-op.  Since: 0.1 */
TFQ_API void tfq_tf_feed_free(tfq_tf_feed *f);

/* Replaces the feed's tensors with TF_Tensors of `batch`'s components (tfq_tf_tensor_to_tf():
 * numeric zero-copy).  On failure the feed holds no tensors.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT ("Expected k components, got m"; a NULL component);
 *         the codes of tfq_tf_tensor_to_tf().
 * Ownership: `batch` borrowed (its numeric tensors get one more reference each until the feed is
 * cleared and TensorFlow is done with them).  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feed_set(tfq_tf_feed *f, const tfq_tuple *batch,
                                 tfq_status *st) TFQ_WARN_UNUSED;

/* TF_DeleteTensor()s the current tensors (TF_SessionRun leaves its inputs to the caller). */
TFQ_API void tfq_tf_feed_clear(tfq_tf_feed *f);

/* The arrays to pass as TF_SessionRun's inputs / input_values / ninputs.  Borrowed, valid until
 * the next set, clear or free.  Since: 0.1 */
TFQ_API const TF_Output *tfq_tf_feed_inputs(const tfq_tf_feed *f);
TFQ_API TF_Tensor *const *tfq_tf_feed_values(const tfq_tf_feed *f);
TFQ_API int tfq_tf_feed_count(const tfq_tf_feed *f);

/* Convenience: tfq_tf_feed_set(batch), TF_SessionRun(session, run_options NULL, the feed, the
 * `nfetch` fetches into `fetch_values`, the `ntargets` targets), then tfq_tf_feed_clear().
 * @return TFQ_OK (fetch_values[i] are the caller's, TF_DeleteTensor them), or the set's codes,
 *         or TensorFlow's error code and message.
 * Ownership: `session`, `fetches`, `targets` borrowed.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feed_run(tfq_tf_feed *f, TF_Session *session, const tfq_tuple *batch,
                                 const TF_Output *fetches, TF_Tensor **fetch_values, int nfetch,
                                 const TF_Operation *const *targets, int ntargets,
                                 tfq_status *st) TFQ_WARN_UNUSED;

/* Mode A for parsed tf.train.Examples: a feed for the tuples tfq_example_result_to_tuple() makes
 * from results parsed with `cfg` (tfq_parse_example(), tfq_parse_example_strings(); the batch
 * path).  Such a tuple holds one component per dense output and three per sparse output
 * (indices, values, dense_shape), in the config's output order (the byte order of the keys).
 * Output i feeds the graph operations named by names[i]; `names` NULL (or names[i] NULL) uses
 * the feature's key:
 *  - a dense output (FixedLen, FixedLenSequence) feeds names[i] as tfq_tf_feed_new() reads it
 *    ("x", "x:1");
 *  - a sparse output (VarLen, Sparse) feeds the three placeholders TF1's
 *    tf.compat.v1.sparse_placeholder(dtype, shape, name=N) makes: "N/indices", "N/values" and
 *    "N/shape" (a PlaceholderWithDefault when `shape` was given; it is fed all the same).
 * Each input is checked against its component before anything runs, since TF_SessionRun checks
 * dtypes only at run time and static shapes never: its dtype (int64 for indices and dense_shape,
 * the feature's dtype otherwise) and, where the graph knows them, its rank and dims against the
 * batch's static shape ([?] + the feature's shape for a dense output; [?, 1 + rank], [?] and
 * [1 + rank] for a sparse one, rank = tfq_example_config_rank(); unknown dims match anything).
 * So a `names` array in another order than the config's (e.g. the order the features were
 * added in) is refused here rather than fed to the wrong placeholders.
 * @return TFQ_OK; TFQ_NOT_FOUND ("No operation named 'tags/indices' in the graph", for a sparse
 *         output followed by "(sparse feature 'tags' feeds a tf.compat.v1.sparse_placeholder
 *         named 'tags': tags/indices, tags/values, tags/shape)"); TFQ_INVALID_ARGUMENT (an empty
 *         config; a bad output index; "Feature 'id' (int64 [?]) cannot feed 'xy' (float)";
 *         "Feature 'xy' (float [?,2]) cannot feed 'xy' of shape [?,3]"); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `graph` borrowed until the feed is freed; `cfg` and `names` borrowed for the call
 * (names copied); *out (NULL on failure) is a feed as tfq_tf_feed_new() makes (set, run, clear,
 * inputs), freed with tfq_tf_feed_free().  Thread-safety: any (`cfg` is read; `graph` must not
 * lose operations meanwhile); the feed as tfq_tf_feed.  Since: 0.2 */
TFQ_API tfq_code tfq_tf_feed_new_example(TF_Graph *graph, const tfq_example_config *cfg,
                                         const char *const *names, tfq_tf_feed **out,
                                         tfq_status *st) TFQ_WARN_UNUSED;

/* ---- in-process TensorFlow server --------------------------------------------------------------
 */

/* A TensorFlow gRPC server (TF_NewServer) hosting one task of a cluster in this process.
 * Thread-safety: any thread; free from one thread. */
typedef struct tfq_tf_server tfq_tf_server;

/* Starts task (`job`, `task`) of `cluster`, written "job=host:port,host:port;job2=host:port"
 * (task i of a job is its i-th address), e.g. "ps=127.0.0.1:2222;worker=127.0.0.1:2223".
 * The server listens on every interface at its own port (TensorFlow's behaviour).
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (cluster syntax, unknown job or task), TensorFlow's code
 *         (e.g. UNKNOWN "Could not start gRPC server" for a busy port), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: strings borrowed; *out freed with tfq_tf_server_free().  Since: 0.1 */
TFQ_API tfq_code tfq_tf_server_new(const char *cluster, const char *job, int task,
                                   tfq_tf_server **out, tfq_status *st) TFQ_WARN_UNUSED;

/* "grpc://host:port" of the server's task.  Borrowed, valid while `s` lives.  Since: 0.1 */
TFQ_API const char *tfq_tf_server_target(const tfq_tf_server *s);

/* Stops (TensorFlow 2.21 cannot stop a gRPC server cleanly: the port stays bound until the
 * process exits) and frees.  NULL: no-op.  Since: 0.1 */
TFQ_API void tfq_tf_server_free(tfq_tf_server *s);

/* ---- feed mode B: a TensorFlow queue by shared name ------------------------------------------ */

/* Options of tfq_tf_queue_open().  Thread-safety: one thread at a time. */
typedef struct tfq_tf_queue_options tfq_tf_queue_options;

/* Defaults: target "" (an in-process direct session), device "" (none), kind TFQ_QUEUE_FIFO,
 * capacity unbounded, shared name "" (must be set for sharing), container "", seeds (0, 0),
 * min_after_dequeue 0, no device filters (a device set and no filter: the filter is the device),
 * session-creation timeout none.
 * Ownership: *out freed with tfq_tf_queue_options_free().  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_options_new(tfq_tf_queue_options **out,
                                          tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API void tfq_tf_queue_options_free(tfq_tf_queue_options *o);

/* String setters: copied; NULL restores the default.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * target     session target, "grpc://127.0.0.1:2222" (the task hosting the queue is best).
 * device     where the queue and its ops are placed, "/job:ps/task:0".
 * shared_name, container: as TF's queue attributes; both must match the other users'.
 * Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_options_set_target(tfq_tf_queue_options *o, const char *target,
                                                 tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_tf_queue_options_set_device(tfq_tf_queue_options *o, const char *device,
                                                 tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_tf_queue_options_set_shared_name(tfq_tf_queue_options *o, const char *name,
                                                      tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_tf_queue_options_set_container(tfq_tf_queue_options *o, const char *container,
                                                    tfq_status *st) TFQ_WARN_UNUSED;
/* Adds a session device filter (ConfigProto.device_filters), e.g. "/job:ps", so that creating
 * the session does not wait for every task of the cluster.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_options_add_device_filter(tfq_tf_queue_options *o, const char *filter,
                                                        tfq_status *st) TFQ_WARN_UNUSED;
/* TFQ_QUEUE_FIFO (FIFOQueueV2), TFQ_QUEUE_RANDOM_SHUFFLE (RandomShuffleQueueV2) or
 * TFQ_QUEUE_PADDING_FIFO (PaddingFIFOQueueV2); others are refused by open.  Since: 0.1 */
TFQ_API void tfq_tf_queue_options_set_kind(tfq_tf_queue_options *o, tfq_queue_kind kind);
/* Negative: unbounded (TF's -1).  Since: 0.1 */
TFQ_API void tfq_tf_queue_options_set_capacity(tfq_tf_queue_options *o, int64_t capacity);
/* RandomShuffle only.  Since: 0.1 */
TFQ_API void tfq_tf_queue_options_set_min_after_dequeue(tfq_tf_queue_options *o, int64_t m);
TFQ_API void tfq_tf_queue_options_set_seeds(tfq_tf_queue_options *o, int64_t seed, int64_t seed2);
/* The time limit of session creation and of every run of the handle: enqueue (both element
 * modes), close, size.  Sent twice, as ConfigProto.operation_timeout_in_ms and as
 * RunOptions.timeout_in_ms of each TF_SessionRun, so it holds on direct and grpc:// sessions
 * alike: an enqueue blocked on a full queue, or on a cluster that stopped answering, returns
 * DEADLINE_EXCEEDED after about `ms`.  0 (the default) or negative: no limit, a run on a dead
 * cluster may block forever.  Since: 0.1 (every run: 0.2) */
TFQ_API void tfq_tf_queue_options_set_timeout_ms(tfq_tf_queue_options *o, int64_t ms);

/* What one element of the TF queue is (distributed-feeding.md 4.2). */
typedef enum tfq_tf_element {
  /* One element per row (the default, 0.1's behaviour): the queue op gets the spec's shapes
   * (all or none), tfq_tf_queue_enqueue_many() splits a batch into rows (QueueEnqueueManyV2),
   * workers use dequeue_many.  Capacity counts rows. */
  TFQ_TF_ELEMENT_ROWS = 0,
  /* One element per batch: the queue op has the component dtypes and NO shapes (workers create
   * it with tf.queue.FIFOQueue(C, dtypes, shared_name=...) without `shapes`), capacity counts
   * batches, and tfq_tf_queue_enqueue_batch() puts a whole batch tuple in as one element
   * (QueueEnqueueV2: all or nothing, also on a timeout).  Workers dequeue() one batch per step.
   * The spec's shapes, if any, are the ROW shapes, as in rows mode (partial shapes allowed); a
   * batched component then has shape [b] + row shape.  Every batched component must have rank
   * >= 1 and the same dim 0 (b, the rows of the element); the bridge checks it (TF does not). */
  TFQ_TF_ELEMENT_BATCH = 1
} tfq_tf_element;

/* Element mode, TFQ_TF_ELEMENT_ROWS by default.  Another value makes open fail with
 * INVALID_ARGUMENT.  Since: 0.2 */
TFQ_API void tfq_tf_queue_options_set_element(tfq_tf_queue_options *o, tfq_tf_element e);

/* Batch mode only: bit i set makes component i "unbatched", carried once per element as given
 * (any shape, typically a scalar such as 4.2's int32 [] ack slot) and left out of the dim-0
 * check and of the row shapes check.  At least one component must stay batched.  Default 0.
 * Open refuses a nonzero mask in rows mode (INVALID_ARGUMENT), and tfq_tf_feeder_new() refuses a
 * queue with one (a feeder makes batched components only).  Since: 0.2 */
TFQ_API void tfq_tf_queue_options_set_unbatched(tfq_tf_queue_options *o, uint64_t mask);

/* A client of one TensorFlow queue: a graph (queue op, one placeholder per component,
 * QueueEnqueueManyV2 in rows mode or QueueEnqueueV2 in batch mode, QueueCloseV2 twice,
 * QueueSizeV2) and a session on the target.
 * Thread-safety: any thread, concurrently (TF sessions are); free from one thread. */
typedef struct tfq_tf_queue tfq_tf_queue;

/* Opens the queue named by the options' shared name on their device, creating it there if
 * nobody has: components `spec` (rows mode: every shape fully defined, or none; batch mode: see
 * TFQ_TF_ELEMENT_BATCH), the options' capacity, kind, seeds and element mode.  The session is
 * created at once (over grpc:// this contacts the master).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (unsupported kind, partial shapes in rows mode, a bad
 *         element mode or unbatched mask, batch mode with PADDING_FIFO, a mismatch with an
 *         existing queue of that name: TF's "Shared queue 'q' has capacity ..." comes from the
 *         first enqueue, close or size, when the queue op runs); TensorFlow's codes
 *         (UNAVAILABLE: no server at the target; DEADLINE_EXCEEDED); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `spec`, `o` borrowed for the call; *out freed with tfq_tf_queue_free().
 * Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_open(const tfq_spec *spec, const tfq_tf_queue_options *o,
                                   tfq_tf_queue **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Closes the session (not the queue: it lives on in its server) and frees.  REQUIRES: no call
 * on `q` in progress.  NULL: no-op.  Since: 0.1 */
TFQ_API void tfq_tf_queue_free(tfq_tf_queue *q);

/* Rows mode: enqueues the rows of `batch` (dim 0 of every component; B == 0: OK at once) with
 * one QueueEnqueueManyV2 run.  Numeric components travel without a copy on the tfq side.
 * On a queue opened in batch mode: TFQ_FAILED_PRECONDITION (use tfq_tf_queue_enqueue_batch).
 * A timed-out EnqueueMany may have inserted part of the rows (TF's kernel inserts row by row).
 * Blocks while the TF queue is full.  Wakes when: the rows are in (OK); the queue is closed
 * (CANCELLED "FIFOQueue '<name>' is closed."); a cancelling close
 * (CANCELLED "Enqueue operation was cancelled"); the options' timeout (DEADLINE_EXCEEDED).
 * @return those, INVALID_ARGUMENT (dtype/shape mismatch, wrong component count), UNAVAILABLE
 *         (the server went away), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `batch` borrowed.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_enqueue_many(tfq_tf_queue *q, const tfq_tuple *batch,
                                           tfq_status *st) TFQ_WARN_UNUSED;

/* Enqueues `batch` the way the queue's element mode says; the call of choice for code that
 * serves both modes (tfq_tf_feeder_step uses it).
 * Batch mode: one QueueEnqueueV2 run putting the whole tuple in as ONE element.  Checked first,
 *   INVALID_ARGUMENT with a one-line message naming the component: component count, a NULL
 *   component, a batched component of rank 0, batched components whose dim 0 differ
 *   ("Batch element for 'q': component 2 ('s') has 5 rows, component 0 ('id') has 6"), a
 *   batched component whose trailing dims differ from the spec's row shape, a dtype different
 *   from the spec's.  A batch of zero rows (dim 0 of the batched components) is not sent:
 *   TFQ_OK at once, nothing enqueued.  All or nothing: after an
 *   error or timeout the element is either wholly in the queue or not at all.
 * Rows mode: exactly tfq_tf_queue_enqueue_many().
 * Blocks while the TF queue is full; wakes as tfq_tf_queue_enqueue_many() (OK, CANCELLED closed
 * or cancelled, DEADLINE_EXCEEDED after the options' timeout_ms).
 * @return those, UNAVAILABLE, TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `batch` borrowed (numeric components lent zero-copy until TF is done with them).
 * Thread-safety: any, concurrently (order between concurrent calls is unspecified; keep one
 * enqueuing thread per queue for a defined element order).  Since: 0.2 */
TFQ_API tfq_code tfq_tf_queue_enqueue_batch(tfq_tf_queue *q, const tfq_tuple *batch,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* The element mode the queue was opened with.  Since: 0.2 */
TFQ_API tfq_tf_element tfq_tf_queue_element(const tfq_tf_queue *q);

/* Closes the TF queue (QueueCloseV2).  cancel_pending_enqueues == 0: waits behind pending
 * enqueues, consumers drain what is queued then get OUT_OF_RANGE; != 0: fails pending enqueues
 * with CANCELLED at once.  A queue already closed gives TF's CANCELLED "Queue '<name>' is already
 * closed." for a plain close, OK for a cancelling one.
 * @return TFQ_OK or TensorFlow's code.  Thread-safety: any, concurrently (a cancelling close
 * from another thread is how a blocked enqueue is woken).  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_close(tfq_tf_queue *q, int cancel_pending_enqueues, tfq_status *st);

/* Nonzero once a close through this handle succeeded.  Since: 0.1 */
TFQ_API int tfq_tf_queue_is_closed(tfq_tf_queue *q);

/* Elements in the TF queue now (QueueSizeV2).  @return TFQ_OK or TensorFlow's code.
 * Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_size(tfq_tf_queue *q, int64_t *out, tfq_status *st) TFQ_WARN_UNUSED;

/* Starts a thread registered with `coord` that closes `q` with cancel_pending_enqueues when the
 * coordinator stops (waking feeder steps blocked on a full TF queue), and ends by itself once `q`
 * was closed through this handle.  Ownership: `q` and `coord` borrowed until the coordinator is
 * joined.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_close_on_stop(tfq_tf_queue *q, tfq_coord *coord,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* ---- the QueueRunner step: tfq queue -> TF queue -----------------------------------------------
 */

/* The context of tfq_tf_feeder_step.  Thread-safety: the step may run on several threads at once;
 * free after the runner is joined. */
typedef struct tfq_tf_feeder tfq_tf_feeder;

/* A feeder moving batches of up to `batch_size` rows from `src` (dequeue_up_to) into `dst`
 * (tfq_tf_queue_enqueue_batch: rows or one batch element, per `dst`'s element mode; in batch
 * mode the last element of a source may be short, and an empty one is never sent).  `nthreads` is
 * the number of runner threads that will run its step: when that many steps have seen `src` closed
 * and empty, the last one closes `dst` (plain close) before returning OUT_OF_RANGE, so TF consumers
 * drain and stop; pass 0 to never close `dst`.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (batch_size < 1, nthreads < 0, `dst` has unbatched
 *         components), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: a reference to `src` is taken; `dst` borrowed until the feeder is freed; *out freed
 * with tfq_tf_feeder_free().  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feeder_new(tfq_queue *src, int64_t batch_size, tfq_tf_queue *dst,
                                   int nthreads, tfq_tf_feeder **out,
                                   tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API void tfq_tf_feeder_free(tfq_tf_feeder *f);

/* A tfq_step_fn (ctx = the feeder): one dequeue_up_to on the source (waiting with `cancel`),
 * one tfq_tf_queue_enqueue_batch into the TF queue.
 * @return TFQ_OK (call again); TFQ_OUT_OF_RANGE when the source is closed and empty (the last
 *         such thread closes the TF queue first, and returns the close's error if it fails);
 *         TFQ_CANCELLED (stop); TensorFlow's errors (reported to the coordinator by the runner).
 * Thread-safety: any, concurrently.  No tfq lock is held.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feeder_step(void *ctx, tfq_cancel *cancel, tfq_status *st);

/* Rows and batches the feeder pushed so far.  Since: 0.1 */
TFQ_API int64_t tfq_tf_feeder_rows(const tfq_tf_feeder *f);
TFQ_API int64_t tfq_tf_feeder_batches(const tfq_tf_feeder *f);

/* ---- cluster description: TF_CONFIG and "job=h:p,...;job2=..." ------------------------------
 */

/* A TensorFlow cluster (job name -> tasks, task index -> "host:port"), the task this process is
 * (optional), and TF_CONFIG's session_master.  Immutable once made except through
 * tfq_tf_cluster_set_task().  Thread-safety: concurrent readers are fine; set_task and free need
 * exclusive access.  Strings returned by the accessors are borrowed and live as long as the
 * cluster (set_task invalidates only what tfq_tf_cluster_task() returned). */
typedef struct tfq_tf_cluster tfq_tf_cluster;

/* Parses TF_CONFIG (distributed-feeding.md 1.1): `json`, or getenv("TF_CONFIG") when NULL.  An
 * unset, empty or blank TF_CONFIG gives an empty cluster with no task.
 * Read: "cluster" (object: job name -> list of "host:port", index = position, or sparse object
 *   {"<index>": "host:port"} with decimal string keys), "task" ({"type": string, "index": int or
 *   numeric string such as "1"; a missing index is 0; an index without a type is ignored),
 *   "rpc_layer" (only "grpc"), "session_master" (string).  Every other key, at every level, is
 *   skipped (e.g. "environment").  A JSON null value counts as absent.  Of duplicate keys the last
 *   one counts (Python's json), except within "cluster", where a repeated job is an error.
 *   Job names must be TF job names, [A-Za-z][A-Za-z0-9_]*; addresses non-empty strings without
 *   whitespace, ',', ';' or '=' (so the spec string can hold them).  Jobs keep their order of
 *   appearance; the tasks of a job are ordered by index.
 *   The parser is a strict RFC 8259 parser of its own (strings with all escapes, \u surrogate
 *   pairs to UTF-8, numbers, objects, arrays, true/false/null; nesting depth at most 64), fuzzed
 *   by tests/fuzz/fuzz_tf_config.c.
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT with a one-line message starting "TF_CONFIG: " and naming the key
 *           or the cause (input echoed with control characters shown as '?'):
 *           - malformed JSON, with the byte offset: "TF_CONFIG: malformed JSON at byte 11:
 *             expected ':'" (also a lone surrogate, \u0000, a raw control character in a string,
 *             trailing characters, nesting deeper than 64);
 *           - the top level, "cluster" or "task" not an object;
 *           - a job value neither list nor object: "TF_CONFIG: cluster.worker: a job must be a
 *             list or an object, not a string";
 *           - a bad job name, an address that is not a valid string ("cluster.worker[1]: ..."),
 *             a job given twice, a task index given twice ("1" and "01");
 *           - a non-integer index: a sparse key ("cluster.worker: task index 'x' is not an
 *             integer") or task.index (1.5, "one", true: "task.index 1.5 is not an integer");
 *           - an index out of range: a negative or >= 2^31 sparse key or task.index; a task that
 *             is not in the cluster ("task index 1 out of range: job 'worker' has no task 1");
 *             a task type that is no job of a non-empty cluster, except "evaluator";
 *           - two chiefs: "TF_CONFIG: cluster.chief: 2 chiefs, at most one is allowed";
 *           - rpc_layer other than "grpc"; session_master or task.type not a string.
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `json` borrowed for the call; *out (NULL on failure) freed with
 * tfq_tf_cluster_free().  Thread-safety: any (getenv: not concurrently with setenv).
 * Since: 0.2 */
TFQ_API tfq_code tfq_tf_cluster_from_tf_config(const char *json, tfq_tf_cluster **out,
                                               tfq_status *st) TFQ_WARN_UNUSED;

/* Parses the tfq_tf_server_new() form, "ps=h:p;worker=h:p,h:p" (task i of a job is its i-th
 * address; a trailing ';' is allowed; "" is the empty cluster), into the same object, with no
 * task and no session master.  So a `--cluster` flag and TF_CONFIG give the same thing.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT ("Cluster spec: ..." naming the job and the cause: a
 *         job without '=', a bad job name, a job given twice, an empty address or one holding
 *         whitespace, a trailing ','), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: as tfq_tf_cluster_from_tf_config().  Since: 0.2 */
TFQ_API tfq_code tfq_tf_cluster_from_spec_string(const char *spec, tfq_tf_cluster **out,
                                                 tfq_status *st) TFQ_WARN_UNUSED;

/* NULL: no-op.  Since: 0.2 */
TFQ_API void tfq_tf_cluster_free(tfq_tf_cluster *c);

/* The "job=h:p,h:p;job2=h:p" string tfq_tf_server_new() takes (jobs in order, no trailing ';';
 * "" for an empty cluster).
 * @return TFQ_OK (*out borrowed, valid while `c` lives); TFQ_INVALID_ARGUMENT for a sparse job
 *         with holes, which that form cannot express ("Job 'worker' has no task 0: a sparse job
 *         with holes has no spec string").
 * Since: 0.2 */
TFQ_API tfq_code tfq_tf_cluster_spec_string(const tfq_tf_cluster *c, const char **out,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* This process's task: *type (NULL when TF_CONFIG has no task, or a spec-string cluster) and
 * *index (-1 then).  Either pointer may be NULL.  Since: 0.2 */
TFQ_API void tfq_tf_cluster_task(const tfq_tf_cluster *c, const char **type, int *index);

/* Sets (type != NULL) or clears (type NULL) the task, as a `--task worker:1` flag would.
 * The same checks as TF_CONFIG's task: type a job of the cluster (or "evaluator"), index a task
 * of it.  @return TFQ_OK, TFQ_INVALID_ARGUMENT (cluster unchanged), TFQ_RESOURCE_EXHAUSTED.
 * Since: 0.2 */
TFQ_API tfq_code tfq_tf_cluster_set_task(tfq_tf_cluster *c, const char *type, int index,
                                         tfq_status *st) TFQ_WARN_UNUSED;

/* Jobs: their number, and the name of job i in order of appearance (NULL when out of range).
 * Since: 0.2 */
TFQ_API int tfq_tf_cluster_num_jobs(const tfq_tf_cluster *c);
TFQ_API const char *tfq_tf_cluster_job(const tfq_tf_cluster *c, int i);

/* Tasks defined in `job` (0 for an unknown job).  For a sparse job this is the number of keys,
 * not the largest index + 1.  Since: 0.2 */
TFQ_API int tfq_tf_cluster_num_tasks(const tfq_tf_cluster *c, const char *job);

/* The index of the i-th task of `job` in ascending order (i in [0, num_tasks)), -1 when out of
 * range.  The identity for a list-form job.  Since: 0.2 */
TFQ_API int tfq_tf_cluster_task_index(const tfq_tf_cluster *c, const char *job, int i);

/* "host:port" of task `index` of `job`, or NULL when there is no such task.  Since: 0.2 */
TFQ_API const char *tfq_tf_cluster_address(const tfq_tf_cluster *c, const char *job, int index);

/* "grpc://host:port" of that task (a session target), or NULL.  Since: 0.2 */
TFQ_API const char *tfq_tf_cluster_target(const tfq_tf_cluster *c, const char *job, int index);

/* TF's TFConfigClusterResolver.master(): session_master when given; "" when the cluster has no
 * job, or one job with one task, or there is no task; else the target of this task.  Never NULL.
 * Since: 0.2 */
TFQ_API const char *tfq_tf_cluster_master(const tfq_tf_cluster *c);

/* ---- the done set: which feeder units have finished (distributed-feeding.md 4.4) ------------
 */

/* A client of the done set: a TF MutableHashTableV2 (key int64 = unit id, value int64 = 1),
 * found or created by shared name on a device of the cluster, usually "/job:ps/task:0".
 * Whoever runs first creates the table (no initialisation step, so no race and no order between
 * feeders, chief and workers); marking unit u twice (a retried or speculative unit) sets the same
 * key.  A Python client reaches the same table with
 *   tf.raw_ops.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.int64,
 *                                 shared_name="tfq_done", container="")
 * placed on the same device (use_node_name_sharing false).
 * The table lives as long as the task hosting it; it is not checkpointed.
 * Thread-safety: any thread, concurrently (TF sessions are); free from one thread. */
typedef struct tfq_tf_done tfq_tf_done;

/* Opens (a graph and a session on `target`) the done set `shared_name` on `device`.  The table
 * op itself runs with the first mark, count or list.  `timeout_ms` > 0 bounds session creation
 * and every run (DEADLINE_EXCEEDED), 0: no limit.  The session's device filter is `device`.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (empty shared_name); TensorFlow's codes (UNAVAILABLE,
 *         DEADLINE_EXCEEDED); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: strings copied or borrowed for the call (device NULL or "": no placement, target
 * NULL or "": an in-process direct session, which shares nothing with other sessions); *out
 * (NULL on failure) freed with tfq_tf_done_free().  Since: 0.2 */
TFQ_API tfq_code tfq_tf_done_open(const char *target, const char *device, const char *shared_name,
                                  int64_t timeout_ms, tfq_tf_done **out,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* Closes the session (the table lives on in its server) and frees.  REQUIRES: no call in
 * progress.  NULL: no-op.  Since: 0.2 */
TFQ_API void tfq_tf_done_free(tfq_tf_done *d);

/* Marks `unit` done and reads the set's size in the same RunStep: LookupTableInsertV2([unit],
 * [1]) then, control-dependent on it, LookupTableSizeV2.  *ndone (may be NULL) is the number of
 * distinct units done at that moment, including `unit`.
 * Guarantee: every mark's size follows its own insert, and inserts and size reads are
 * serialized by the table, so when U distinct units have been marked, AT LEAST ONE of the marks
 * saw *ndone == U (the last insert's reader does).  Several may see U when marks race (a size
 * read after another unit's insert), and a re-mark of an already done unit sees the size again,
 * so "I saw U" means "all are done", not "I am the only one who knows": act idempotently (close
 * every queue, treating "already closed" as success).  When marks do not overlap in time,
 * exactly the mark completing the set sees U first.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (unit < 0; TF's errors, e.g. a table of that name with
 *         other dtypes); TensorFlow's codes (UNAVAILABLE, DEADLINE_EXCEEDED).
 * Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API tfq_code tfq_tf_done_mark(tfq_tf_done *d, int64_t unit, int64_t *ndone,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* The number of distinct units marked so far (LookupTableSizeV2; creates the empty table when
 * nobody has).  @return TFQ_OK or TensorFlow's code.  Since: 0.2 */
TFQ_API tfq_code tfq_tf_done_count(tfq_tf_done *d, int64_t *n, tfq_status *st) TFQ_WARN_UNUSED;

/* The units marked so far, ascending (LookupTableExportV2): *units (NULL when *n == 0) is the
 * caller's, freed with tfq_free().  Says which unit is missing when a job does not finish.
 * @return TFQ_OK, TensorFlow's code, TFQ_RESOURCE_EXHAUSTED.  Since: 0.2 */
TFQ_API tfq_code tfq_tf_done_list(tfq_tf_done *d, int64_t **units, int64_t *n,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* The values of `keys[0..n)` in the table: values[i] is the value stored with keys[i] (1 for a
 * unit marked by tfq_tf_done_mark()), or 0 when the key is absent (one LookupTableFindV2
 * RunStep; n == 0: OK at once).  Any int64 -> int64 MutableHashTableV2 on the cluster can be read
 * this way: tfq-feed keeps its acknowledgements in one (the workers' training steps insert
 * batch key -> rows).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (n < 0); TensorFlow's codes (DEADLINE_EXCEEDED after the
 *         open's timeout_ms); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `keys` borrowed, `values` (n entries) written.  Thread-safety: any, concurrently.
 * Since: 0.2 */
TFQ_API tfq_code tfq_tf_done_find(tfq_tf_done *d, const int64_t *keys, int64_t n, int64_t *values,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* Marks `unit` FAILED in the failed set `shared_name` (tfq-feed: "<queue>_failed", beside the
 * done set "<queue>_done"): a MutableHashTableV2 int64 unit -> string message on `device`, one
 * LookupTableInsertV2([unit], [message]) in a session of its own on `target`.  A later mark of the
 * same unit replaces the message; a unit counts as failed while it is in this set and not in the
 * done set (a retry that completes marks it done, the failed mark stays as history).  Workers
 * read it with LookupTableExportV2 (Tkeys int64, Tvalues string).  `timeout_ms` > 0 bounds the
 * session's creation and the run.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (empty shared_name, unit < 0, message NULL, or TF's error
 *         for a table of that name with other dtypes); TensorFlow's codes (UNAVAILABLE,
 *         DEADLINE_EXCEEDED); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: strings borrowed for the call.  Thread-safety: any thread, concurrently.
 * Since: 0.3 */
TFQ_API tfq_code tfq_tf_done_fail(const char *target, const char *device, const char *shared_name,
                                  int64_t unit, const char *message, int64_t timeout_ms,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* ---- feeding a cluster from a tfq_pipeline ----------------------------------------------------
 * tfq_tf_dispatch moves a tfq_pipeline's batches into TF queues on a cluster: one consumer thread
 * calls tfq_pipeline_next() (a pipeline has one consumer) and hands each batch over, one batch
 * at a time, to one sender thread per queue, which enqueues it (tfq_tf_queue_enqueue_batch: one
 * element or its rows, per the queue's element mode).  A sender blocked on a full queue takes
 * nothing, so each batch goes to the sender whose queue has room first (the least full, by
 * backpressure, with no extra RPC).  Batches are numbered 0, 1, ... in the order the pipeline
 * returns them (after a tfq_pipeline_restore(), from the restored state's batch count: the stats'
 * batches_out).  The input's end ends the senders (their queues are NOT closed: closing is the
 * caller's decision, for example when every feeder of a job is done); an error of the pipeline
 * or of a sender stops the dispatch's coordinator with that error (a sender's prefixed with its
 * label).  tfq-feed (tools/tfq-feed.c) is built on it.
 * Thread-safety: configure (set_*) before tfq_tf_dispatch_start(), from one thread; take, count,
 * the counters, running and the coordinator's stop calls from any thread.  Since: 0.3 */
typedef struct tfq_tf_dispatch tfq_tf_dispatch;

/* A dispatch of `p`'s batches into queues[0..n) (n >= 1).  A NULL queue has no sender (a queue
 * known lost before the start) unless a send function is set.  Nothing runs before start.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (p NULL, n 0); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `p` and the queues borrowed until tfq_tf_dispatch_free() (the caller frees them
 * after); *out freed with tfq_tf_dispatch_free().  Since: 0.3 */
TFQ_API tfq_code tfq_tf_dispatch_new(tfq_pipeline *p, tfq_tf_queue *const *queues, size_t n,
                                     tfq_tf_dispatch **out, tfq_status *st) TFQ_WARN_UNUSED;
/* Frees (after tfq_tf_dispatch_join(), or without a start).  NULL: no-op.  Since: 0.3 */
TFQ_API void tfq_tf_dispatch_free(tfq_tf_dispatch *d);
/* Sender i's label, prefixed to its errors ("/job:worker/task:1 (h:p): <TF's message>").
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (i >= n), TFQ_RESOURCE_EXHAUSTED.  Ownership: copied.
 * Since: 0.3 */
TFQ_API tfq_code tfq_tf_dispatch_set_label(tfq_tf_dispatch *d, size_t i, const char *label,
                                           tfq_status *st) TFQ_WARN_UNUSED;
/* One step of sender `sender`, called in a loop on that sender's thread until it returns
 * anything but TFQ_OK (OUT_OF_RANGE: the sender ends cleanly; CANCELLED after a stop: cleanly;
 * another code stops the dispatch with that error).  It takes batches with
 * tfq_tf_dispatch_take() and enqueues them itself (counting them with tfq_tf_dispatch_count()):
 * how tfq-feed --acks keys, keeps and re-sends its batches.  Default (fn NULL): take, enqueue
 * into queue `sender`, count; OUT_OF_RANGE at the end of the input. */
typedef tfq_code (*tfq_tf_send_fn)(void *ctx, size_t sender, tfq_cancel *cancel, tfq_status *st);
/* Since: 0.3 */
TFQ_API void tfq_tf_dispatch_set_send_fn(tfq_tf_dispatch *d, tfq_tf_send_fn fn, void *ctx);
/* Checkpoints: every `every` batches (>= 1) the consumer thread saves the pipeline's state at
 * the batch boundary (tfq_pipeline_save()) and calls fn(ctx, batches, state, len, st):
 * `batches` is the number of the next batch (every batch numbered below it is in the state's
 * past).  Not before the first batch nor after the end of the input.  A non-OK return stops the
 * dispatch with that error.  Ownership: `state` passes to fn (free with tfq_free()).  Called on
 * the consumer thread.  Since: 0.3 */
typedef tfq_code (*tfq_tf_state_fn)(void *ctx, int64_t batches, char *state, size_t len,
                                    tfq_status *st);
/* Since: 0.3 */
TFQ_API void tfq_tf_dispatch_set_state_fn(tfq_tf_dispatch *d, int64_t every, tfq_tf_state_fn fn,
                                          void *ctx);
/* The dispatch's coordinator: add LooperThreads to it (tfq_coord_loop), request a stop, wait
 * for one.  Ownership: borrowed from `d`.  Since: 0.3 */
TFQ_API tfq_coord *tfq_tf_dispatch_coord(tfq_tf_dispatch *d);
/* Starts the consumer and the senders (threads registered with the coordinator).
 * @return TFQ_OK; TFQ_FAILED_PRECONDITION (started already); TFQ_RESOURCE_EXHAUSTED (a stop is
 *         requested).  Since: 0.3 */
TFQ_API tfq_code tfq_tf_dispatch_start(tfq_tf_dispatch *d, tfq_status *st) TFQ_WARN_UNUSED;
/* The next batch and its number, waiting up to timeout_us (< 0: without limit).
 * @return TFQ_OK (*batch the caller's, tfq_tuple_free()); TFQ_OUT_OF_RANGE the input has ended
 *         and every batch was taken; TFQ_CANCELLED a stop; TFQ_DEADLINE_EXCEEDED the limit.
 * Thread-safety: any, concurrently (each batch goes to one caller).  Since: 0.3 */
TFQ_API tfq_code tfq_tf_dispatch_take(tfq_tf_dispatch *d, int64_t timeout_us, tfq_tuple **batch,
                                      int64_t *seq, tfq_status *st) TFQ_WARN_UNUSED;
/* Counts one batch of `rows` rows enqueued by sender i (a send function's call).  Since: 0.3 */
TFQ_API void tfq_tf_dispatch_count(tfq_tf_dispatch *d, size_t i, int64_t rows);
/* Senders still running (0 once the input was delivered, or after a stop).  Since: 0.3 */
TFQ_API int tfq_tf_dispatch_running(tfq_tf_dispatch *d);
/* Joins every thread of the coordinator (grace_us after a stop; threads still blocked in a TF
 * call then are left running) and returns the coordinator's error (TFQ_OK when none).
 * Since: 0.3 */
TFQ_API tfq_code tfq_tf_dispatch_join(tfq_tf_dispatch *d, int64_t grace_us,
                                      tfq_status *st) TFQ_WARN_UNUSED;
/* Rows and batches sender i enqueued; batches taken from the pipeline (the next batch's number).
 * Since: 0.3 */
TFQ_API int64_t tfq_tf_dispatch_rows(tfq_tf_dispatch *d, size_t i);
TFQ_API int64_t tfq_tf_dispatch_batches(tfq_tf_dispatch *d, size_t i);
TFQ_API int64_t tfq_tf_dispatch_taken(tfq_tf_dispatch *d);

TFQ_EXTERN_C_END

#endif
