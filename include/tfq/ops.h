/* Ready-made QueueRunner ops: step functions (tfq_step_fn, coord.h) with their contexts, for
 * tfq_runner_add_op().  TF1 builds the same pipelines from graph ops run by a QueueRunner:
 *
 *   read → decode → enqueue_many   reader.read_up_to(queue, n) → tf.decode_csv → q.enqueue_many
 *   queue → queue                  q2.enqueue_many(q1.dequeue_up_to(n))
 *
 * Ops that fail say where, as data (status.h: tfq_status_file(), _line(), _record()), so
 * callers and tools format or act on errors without parsing messages.  Since: 0.2 (the calls
 * were in coord.h in 0.1) */
#ifndef TFQ_OPS_H
#define TFQ_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/coord.h>
#include <tfq/csv.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/status.h>

TFQ_EXTERN_C_BEGIN

/* ---- read → decode → enqueue_many -------------------------------------------------------------
 * Each run of the step reads up to `batch` records of one file with tfq_reader_read_up_to() from
 * work queue `work`, decodes them with decode_csv (or, without csv options, takes the records
 * themselves as one string component), and enqueue_many's the result into `target`.
 * Thread-safety: several runner threads may share one op (the reader serialises itself; decoding
 * and enqueueing run in parallel); the setters before the op runs, from one thread. */
typedef struct tfq_read_decode_op tfq_read_decode_op;

/* `csv` NULL: no decoding, the component is the [B] string tensor of records (text lines,
 * TFRecord payloads, ...).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (batch < 1); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `reader` and `csv` borrowed — they must outlive the op; `work` and `target` gain a
 * reference held until the op is freed.  *out freed with tfq_read_decode_op_free().
 * Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_read_decode_op_new(tfq_reader *reader, tfq_queue *work,
                                        const tfq_csv_options *csv, int64_t batch,
                                        tfq_queue *target, tfq_read_decode_op **out,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* Maps decoded columns to the next component of `target`.  With n == 1 and stack == 0 the
 * component is column cols[0] ([B]); with stack != 0 it is tf.stack of columns cols[0..n)
 * along a new last axis ([B, n]; the columns must share a dtype), as the seed program's
 * `tf.stack([x1, x2])`.  Without any call, component i is column i.  Call before the op runs.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (n == 0; n > 1 without stack), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `cols` copied.  Thread-safety: one thread, before the op runs.  Since: 0.1 */
TFQ_API tfq_code tfq_read_decode_op_add_component(tfq_read_decode_op *op, const size_t *cols,
                                                  size_t n, int stack,
                                                  tfq_status *st) TFQ_WARN_UNUSED;

/* on != 0: the records' keys ([B] strings, TF's "<file>:<line>" form for TextLineReader) follow
 * the other components as a last one, as `key, value = reader.read_up_to(...)` lets TF1 graphs
 * enqueue both.  Default off.  Ownership: nothing is taken.  Thread-safety: one thread, before
 * the op runs.  Since: 0.2 */
TFQ_API void tfq_read_decode_op_set_keys(tfq_read_decode_op *op, int on);

/* Shards the records: the op keeps only those of shard `index` of `count` (and skips a batch
 * left empty), so that `count` ops (in as many processes) reading the same files with the same
 * reader options deliver every record exactly once between them.  TextLineReader and
 * FixedLengthRecordReader records go round-robin by their line / record number (from the key);
 * other readers' records by a hash of their key's number (TFRecord: its byte offset) or key.
 * Default: everything (0 of 1).  Sharding whole files is the caller's business (give each op
 * its own work queue).
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (not 0 <= index < count).  Ownership: nothing is taken.
 * Thread-safety: one thread, before the op runs.  Since: 0.2 */
TFQ_API tfq_code tfq_read_decode_op_set_shard(tfq_read_decode_op *op, int64_t index, int64_t count,
                                              tfq_status *st) TFQ_WARN_UNUSED;

/* The step.  @return what read_up_to, decode_csv or enqueue_many returned (TFQ_OUT_OF_RANGE once
 * the work queue is closed and drained; TFQ_CANCELLED on a stop).
 * A decode error: the records of the batch before the failing one are enqueued first (TF drops
 * the whole batch); the message is TF's message for the failing record alone, prefixed with its
 * key ("file.csv:7: Field 1 in record 0 is not a valid float: abc"); as data, the status holds
 * the file, the line (TextLineReader) and the record's index in the batch read
 * (tfq_status_file/_line/_record; tfq_status_reason() is the message without the key).
 * A reader error: the status holds the file, the offset of the record the reader stopped at and,
 * for TextLineReader, its line; a message that does not name the file is prefixed with it
 * ("part-3.tfrecord at byte offset 620: corrupted record at 632").
 * Ownership: `op` is a tfq_read_decode_op*, borrowed.  `st` may be NULL (nothing is lost either
 * way).  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_code tfq_read_decode_step(void *op, tfq_cancel *cancel, tfq_status *st);

/* Records enqueued into the target so far by every thread running the op.
 * Ownership: nothing is taken.  Thread-safety: any (a snapshot).  Since: 0.2 */
TFQ_API int64_t tfq_read_decode_op_records(const tfq_read_decode_op *op);

/* Frees the op and drops its queue references.  NULL: no-op.  REQUIRES: no runner is running
 * it.  Ownership: takes `op`.  Thread-safety: one thread, after every call on `op`.  Since: 0.1 */
TFQ_API void tfq_read_decode_op_free(tfq_read_decode_op *op);

/* ---- queue → queue ------------------------------------------------------------------------------
 * Each run moves up to `batch` elements: dequeue_up_to from `from`, then enqueue_many into `to`
 * (batch 1: dequeue and enqueue).  Thread-safety: several runner threads may share one op. */
typedef struct tfq_transfer_op tfq_transfer_op;

/* @return TFQ_OK; TFQ_INVALID_ARGUMENT (batch < 1); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `from` and `to` gain a reference held until the op is freed; *out freed with
 * tfq_transfer_op_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_transfer_op_new(tfq_queue *from, tfq_queue *to, int64_t batch,
                                     tfq_transfer_op **out, tfq_status *st) TFQ_WARN_UNUSED;

/* The step: what the dequeue or the enqueue returned (TFQ_OUT_OF_RANGE once `from` is closed and
 * drained).  Ownership: `op` (a tfq_transfer_op*) borrowed.  Thread-safety: any, concurrently.
 * Since: 0.1 */
TFQ_API tfq_code tfq_transfer_step(void *op, tfq_cancel *cancel, tfq_status *st);

/* Frees the op and drops its queue references.  NULL: no-op.  REQUIRES: no runner is running
 * it.  Ownership: takes `op`.  Thread-safety: one thread, after every call on `op`.  Since: 0.1 */
TFQ_API void tfq_transfer_op_free(tfq_transfer_op *op);

TFQ_EXTERN_C_END

#endif
