/* Ready-made QueueRunner ops: step functions (tfq_step_fn, coord.h) with their contexts, for
 * tfq_runner_add_op().  TF1 builds the same pipelines from graph ops run by a QueueRunner:
 *
 *   read → decode → enqueue_many   reader.read_up_to(queue, n) → tf.decode_csv → q.enqueue_many
 *   read → parse → enqueue_many    reader.read_up_to(queue, n) → tf.parse_example →
 *                                  q.enqueue_many (or shuffle_batch(..., enqueue_many=True))
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
#include <tfq/example.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/sparse.h>
#include <tfq/status.h>

TFQ_EXTERN_C_BEGIN

/* ---- read → decode → enqueue_many -------------------------------------------------------------
 * Each run of the step reads up to `batch` records of one file with tfq_reader_read_up_to() from
 * work queue `work`, decodes them with decode_csv (or, without csv options, takes the records
 * themselves as one string component), and enqueue_many's the result into `target`.
 * With a TextLineReader, csv options, no keys and no sharding, a step decodes `batch` whole lines
 * where they lie in the reader's buffer, under the reader's lock (no copy of them, no scan for
 * their ends of its own), or fewer when the buffer cannot hold `batch` of them (long lines: the
 * steps from then on ask for an eighth fewer than the buffer held, and a quarter more a step
 * again, up to `batch`, while the buffer holds more than they take); a file's last lines, a
 * decode error and a reader several threads take lines from go through a copy of the lines
 * decoded outside the lock.  The records, values, errors and their locations are the same
 * either way.
 * Thread-safety: several runner threads may share one op (the reader serialises itself; decoding
 * and enqueueing run in parallel: from the moment a second thread takes lines from the reader,
 * no step decodes under its lock); the setters before the op runs, from one thread.
 * Memory: between steps the op keeps its last step's lines and decoded columns to refill them.
 * A string column's rows stay shared with `target` (the strings are not copied), so in ops of up
 * to TFQ_READ_DECODE_DIRECT_MAX columns the op also keeps up to 32 such columns per string column
 * (and per stacked string component), refilling one once nothing else references it: a steady step
 * then allocates no column.  All of it is freed with the op.
 * Steps decoded in the reader's buffer for a FIFOQueue or PaddingFIFOQueue target, or for a
 * RandomShuffleQueue whose capacity holds at most 1 MiB of lines, store a plain (unquoted,
 * non-default) string field as a view into that buffer rather than a copy: each read buffer
 * (tfq_reader_options_set_buffer_bytes) then stays allocated until the last row pointing into it
 * has been dequeued and the batch holding it freed or refilled; the reader reads on into a new
 * buffer meanwhile.  Larger shuffle pools and PriorityQueue targets copy the strings (a pool's
 * rows keep their buffers for long: about ten times the pool's own line bytes).
 * Such a step for a FIFOQueue or PaddingFIFOQueue whose components are the op's columns as they
 * are or stacked (each column once, shapes [] or [k]) is decoded straight into the queue's own
 * storage: it reserves the room its rows need at the tail (up to the ring's wrap), decodes into
 * it and commits the rows that decoded, with no column tensors and no copy of the rows in
 * between.  The queue sees one enqueue_many that arrived at the reservation: until the commit its
 * rows are not counted and other enqueues and closes wait behind it (dequeues do not).  When the
 * room is not there at once (the queue holds more than its capacity less a step), the step takes
 * the ordinary way and blocks in enqueue_many as before, so a target with room for two steps
 * (tfq-cat without shuffling) takes most steps in place.  The owners of copied string bytes
 * (up to 8 kept for reuse) follow the Memory rule above. */
typedef struct tfq_read_decode_op tfq_read_decode_op;

/* The widest op (columns, and components) whose stacked components are decoded straight into
 * their rows and whose decoded columns are parked for reuse (the "Cost" of
 * tfq_read_decode_op_add_component and "Memory" above).  Since: 0.1 */
#define TFQ_READ_DECODE_DIRECT_MAX 64

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
 * Cost: with text lines and at most TFQ_READ_DECODE_DIRECT_MAX columns and components, a stacked
 * component whose columns no other component uses is decoded straight into its rows, numbers and
 * strings alike (a string row's bytes then lie together); otherwise the columns are decoded and
 * then copied into it, strings included.  A lone column (stack == 0) is shared with the queue, not
 * copied.
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

/* ---- read → parse_example → enqueue_many ------------------------------------------------------
 * Each run reads up to `batch` records of one file with tfq_reader_read_up_to() (TFRecord files
 * of tf.train.Example, typically), parses them with the batch path (tfq_parse_example_strings(),
 * example.h) and enqueue_many's the rows into `target`; or, as a batcher source
 * (tfq_read_parse_source), hands the rows to tf.train.batch / shuffle_batch (coord.h).
 *
 * The element: component i is output i of `cfg` (features in sorted key order):
 *   - a dense feature (FixedLen, FixedLenSequence): its tensor, shape = the single path's shape
 *     (tfq_example_config_dims; FixedLenSequence [?] + row shape, padded per read batch);
 *   - a sparse feature (VarLen, Sparse): an int64 scalar handle into `map`, stored as TF1's
 *     batchers store a SparseTensor (tfq_sparse_map_add_many(), sparse.h: each row's element has
 *     the read batch's dense_shape[1:]).  After the batch dequeue, tfq_sparse_map_take_many() of
 *     the handle component gives the batch's SparseTensor (indices [n, 2] of (batch position,
 *     value position) for VarLen, dense_shape [B, max]).
 *   - with tfq_read_parse_op_set_keys(), a last string scalar component: the record's key.
 * tfq_read_parse_op_spec() returns that spec, for the target queue or the batcher.
 *
 *   tfq_read_parse_op_new(reader, files, cfg, map, 256, NULL, &op, st);   // a batcher source
 *   tfq_read_parse_op_spec(op, &spec, st);
 *   tfq_batch_options_set_enqueue_many(bo, 1);
 *   tfq_source_fn src = tfq_read_parse_source;
 *   void *ctx = op;
 *   tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, 32, &src, &ctx, 1, bo, coord, &b, st);
 *   ... tfq_batcher_next(b, &batch, st);
 *       tfq_sparse_map_take_many(map, tfq_tuple_get(batch, tags), TFQ_STRING, &sp, st); ...
 *
 * Thread-safety: several runner threads may share one op (the reader serialises itself; parsing
 * and enqueueing run in parallel); the setters before the op runs, from one thread. */
typedef struct tfq_read_parse_op tfq_read_parse_op;

/* `target` NULL: the op is only used as a batcher source (tfq_read_parse_step then fails).
 * `map` is required when `cfg` has a sparse feature (NULL otherwise).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (batch < 1; `cfg` fails tfq_example_config_check(), with
 *         its text; "a sparse feature needs a tfq_sparse_map" with a NULL map);
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `reader`, `cfg` and `map` borrowed — they must outlive the op (`cfg` unchanged);
 * `work` and `target` gain a reference held until the op is freed.  *out freed with
 * tfq_read_parse_op_free().  Thread-safety: any.  Since: 0.2 */
TFQ_API tfq_code tfq_read_parse_op_new(tfq_reader *reader, tfq_queue *work,
                                       const tfq_example_config *cfg, tfq_sparse_map *map,
                                       int64_t batch, tfq_queue *target, tfq_read_parse_op **out,
                                       tfq_status *st) TFQ_WARN_UNUSED;

/* on != 0: the records' keys ([B] strings, "<file>:<byte offset>" for TFRecordReader) follow
 * the other components as a last one.  Default off.  Ownership: nothing is taken.
 * Thread-safety: one thread, before the op runs.  Since: 0.2 */
TFQ_API void tfq_read_parse_op_set_keys(tfq_read_parse_op *op, int on);

/* The spec of one element (above): names are the feature keys (the keys component: no name).
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Ownership: *out (NULL on failure) freed with
 * tfq_spec_free().  Thread-safety: any, after the setters.  Since: 0.2 */
TFQ_API tfq_code tfq_read_parse_op_spec(const tfq_read_parse_op *op, tfq_spec **out,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* The step: read_up_to → parse_example → enqueue_many into the target.
 * @return what read_up_to, parse_example or enqueue_many returned (TFQ_OUT_OF_RANGE once the
 * work queue is closed and drained; TFQ_CANCELLED on a stop); TFQ_FAILED_PRECONDITION without
 * a target.  A parse error: the records of the batch before the failing one are enqueued first
 * and those after it dropped (TF drops the whole batch); the message is TF's (its Index is the
 * record's index in the batch read), prefixed with the record's key ("a.tfrecord:1234: Name:
 * <unknown>, Key: x, Index: 3.  ..."); as data, the status holds the file, the record's byte
 * offset (TFRecordReader; the line for TextLineReader) and its index in the batch read
 * (tfq_status_file/_offset/_line/_record).
 * A reader error is reported as by tfq_read_decode_step().
 * Ownership: `op` is a tfq_read_parse_op*, borrowed.  `st` may be NULL.
 * Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API tfq_code tfq_read_parse_step(void *op, tfq_cancel *cancel, tfq_status *st);

/* The same as a batcher source (tfq_source_fn, coord.h; the batcher needs enqueue_many on): one
 * read batch's rows per call in *out.  A parse error after k good records: this call returns
 * those k rows and the next call (of any thread) returns the error.
 * @return TFQ_OK (*out new, freed by the batcher), or as tfq_read_parse_step().
 * Ownership: `op` borrowed.  Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API tfq_code tfq_read_parse_source(void *op, tfq_tuple **out, tfq_cancel *cancel,
                                       tfq_status *st);

/* Records delivered (enqueued into the target, or handed to the batcher) so far by every thread
 * running the op.  Ownership: nothing is taken.  Thread-safety: any (a snapshot).  Since: 0.2 */
TFQ_API int64_t tfq_read_parse_op_records(const tfq_read_parse_op *op);

/* Frees the op and drops its queue references.  NULL: no-op.  REQUIRES: no runner or batcher is
 * running it.  Ownership: takes `op`.  Thread-safety: one thread, after every call on `op`.
 * Since: 0.2 */
TFQ_API void tfq_read_parse_op_free(tfq_read_parse_op *op);

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
