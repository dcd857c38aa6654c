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
 *    and a list of named placeholders.
 *  - Feed mode B (tfq_tf_queue, tfq_tf_feeder): a TensorFlow queue, found or created by shared
 *    name on a device of a cluster ("/job:ps/task:0" over "grpc://host:port"), fed with
 *    QueueEnqueueManyV2 and closed at end of data; a QueueRunner step that moves batches from a
 *    tfq queue into it, so a whole tfq pipeline feeds TensorFlow workers.
 *
 * Codes: TensorFlow errors keep their code (the numbering is shared) and message.
 * Since: 0.1 */
#ifndef TFQ_TF_H
#define TFQ_TF_H

#include <stddef.h>
#include <stdint.h>
#include <tensorflow/c/c_api.h>
#include <tfq/coord.h>
#include <tfq/export.h>
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
/* ConfigProto.operation_timeout_in_ms (session creation and every run; 0: none).  Since: 0.1 */
TFQ_API void tfq_tf_queue_options_set_timeout_ms(tfq_tf_queue_options *o, int64_t ms);

/* A client of one TensorFlow queue: a graph (queue op, one placeholder per component,
 * QueueEnqueueManyV2, QueueCloseV2 twice, QueueSizeV2) and a session on the target.
 * Thread-safety: any thread, concurrently (TF sessions are); free from one thread. */
typedef struct tfq_tf_queue tfq_tf_queue;

/* Opens the queue named by the options' shared name on their device, creating it there if
 * nobody has: components `spec` (every shape fully defined, or none), the options' capacity,
 * kind and seeds.  The session is created at once (over grpc:// this contacts the master).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (unsupported kind, partial shapes, a mismatch with an
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

/* Enqueues the rows of `batch` (dim 0 of every component; B == 0: OK at once) with one
 * QueueEnqueueManyV2 run.  Numeric components travel without a copy on the tfq side.
 * Blocks while the TF queue is full.  Wakes when: the rows are in (OK); the queue is closed
 * (CANCELLED "FIFOQueue '<name>' is closed."); a cancelling close
 * (CANCELLED "Enqueue operation was cancelled"); the options' timeout (DEADLINE_EXCEEDED).
 * @return those, INVALID_ARGUMENT (dtype/shape mismatch, wrong component count), UNAVAILABLE
 *         (the server went away), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `batch` borrowed.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_enqueue_many(tfq_tf_queue *q, const tfq_tuple *batch,
                                           tfq_status *st) TFQ_WARN_UNUSED;

/* Closes the TF queue (QueueCloseV2).  cancel_pending_enqueues == 0: waits behind pending
 * enqueues, consumers drain what is queued then get OUT_OF_RANGE; != 0: fails pending enqueues
 * with CANCELLED at once.  A queue already closed gives TF's CANCELLED "Queue '<name>' is already
 * closed." for a plain close, OK for a cancelling one.
 * @return TFQ_OK or TensorFlow's code.  Thread-safety: any, concurrently (a cancelling close
 * from another thread is how a blocked enqueue is woken).  Since: 0.1 */
TFQ_API tfq_code tfq_tf_queue_close(tfq_tf_queue *q, int cancel_pending_enqueues,
                                    tfq_status *st) TFQ_WARN_UNUSED;

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
 * (enqueue_many).  `nthreads` is the number of runner threads that will run its step: when that
 * many steps have seen `src` closed and empty, the last one closes `dst` (plain close) before
 * returning OUT_OF_RANGE, so TF consumers drain and stop; pass 0 to never close `dst`.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (batch_size < 1, nthreads < 0), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: a reference to `src` is taken; `dst` borrowed until the feeder is freed; *out freed
 * with tfq_tf_feeder_free().  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feeder_new(tfq_queue *src, int64_t batch_size, tfq_tf_queue *dst,
                                   int nthreads, tfq_tf_feeder **out,
                                   tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API void tfq_tf_feeder_free(tfq_tf_feeder *f);

/* A tfq_step_fn (ctx = the feeder): one dequeue_up_to on the source (waiting with `cancel`),
 * one enqueue_many into the TF queue.
 * @return TFQ_OK (call again); TFQ_OUT_OF_RANGE when the source is closed and empty (the last
 *         such thread closes the TF queue first, and returns the close's error if it fails);
 *         TFQ_CANCELLED (stop); TensorFlow's errors (reported to the coordinator by the runner).
 * Thread-safety: any, concurrently.  No tfq lock is held.  Since: 0.1 */
TFQ_API tfq_code tfq_tf_feeder_step(void *ctx, tfq_cancel *cancel, tfq_status *st);

/* Rows and batches the feeder pushed so far.  Since: 0.1 */
TFQ_API int64_t tfq_tf_feeder_rows(const tfq_tf_feeder *f);
TFQ_API int64_t tfq_tf_feeder_batches(const tfq_tf_feeder *f);

TFQ_EXTERN_C_END

#endif
