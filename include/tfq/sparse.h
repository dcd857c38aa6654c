/* SparseTensors through queues and batchers: TF's SparseTensorsMap.
 *
 * A queue component is a dense tensor, so TF1 never puts a SparseTensor into a queue.
 * tf.train.batch / shuffle_batch / *_join (input.py's _store_sparse_tensors and
 * _restore_sparse_tensors) store each element's SparseTensor in a map and enqueue an int64
 * handle in its place; after the batch dequeue, the batch of handles is turned back into ONE
 * batched SparseTensor:
 *
 *   TF1 op                               tfq call                   element → handle
 *   add_sparse_to_tensors_map            tfq_sparse_map_add()       one SparseTensor → scalar
 *   add_many_sparse_to_tensors_map       tfq_sparse_map_add_many()  a batch [N, ...] → [N]
 *   take_many_sparse_from_tensors_map    tfq_sparse_map_take_many() [B] handles → [B, ...]
 *
 * Using it with a batcher (coord.h): give the sparse value a component of dtype TFQ_INT64 and
 * shape [] in the batcher's spec, store the value in the source and put the handle there (with
 * enqueue_many, tfq_sparse_map_add_many() of the source's batch gives the [N] component), and
 * after tfq_batcher_next() call tfq_sparse_map_take_many() on the batch's handle component:
 *
 *   source:  tfq_sparse_map_add(map, &tags, &h, st);       tuple component i = h
 *   batch:   tfq_batcher_next(b, &batch, st);
 *            tfq_sparse_tensor tags;
 *            tfq_sparse_map_take_many(map, tfq_tuple_get(batch, i), TFQ_STRING, &tags, st);
 *            ... indices [n, 1 + rank] (batch position first), values [n], dense_shape ...
 *            tfq_sparse_tensor_release(&tags);
 *
 * The read → parse_example → enqueue_many op of ops.h does the storing for VarLen and Sparse
 * features itself.  TF enqueues the handle with shape [1] (expand_dims) and squeezes the batch
 * back to [B]; tfq uses shape [] and take_many accepts [B] and [B, 1] alike.
 *
 * Semantics (TF 2.21's kernels, core/kernels/sparse_tensors_map_ops.cc; texts are TF's):
 *  - Handles count up from 0 in each map.  add_many stores the rows of batch entry b as an
 *    element of rank R-1 whose dense_shape is the batch's dense_shape[1:] (not the row's own
 *    extent), the non-empty rows first in row order and then the empty rows: handles[b] is the
 *    handle of entry b.
 *  - take_many removes each element from the map as it finds it (an element is taken once); on
 *    an error the elements found before it are gone too, as in TF.  Output: indices
 *    [sum n_i, R+1] whose first column is the batch position i, in batch order and, within an
 *    element, in the element's own order; values in the same order; dense_shape
 *    [B, max over the elements of each dim].  Indices are not checked against the shapes.
 *  - Elements left in a map (rows dropped by a stop, a closed queue) live until the map is freed.
 *
 * Storage is zero-copy: an element holds references to the tensors it was stored from (add_many:
 * the whole batch's indices and values, shared by its elements), so they stay alive until every
 * element of them has been taken or the map is freed.  take_many copies into new tensors.
 *
 * Thread-safety: every call on a map from any thread, concurrently, except tfq_sparse_map_free().
 */
#ifndef TFQ_SPARSE_H
#define TFQ_SPARSE_H

#include <stdint.h>
#include <tfq/example.h>
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* A SparseTensorsMap.  Opaque.  Thread-safety: see above. */
typedef struct tfq_sparse_map tfq_sparse_map;

/* Creates an empty map.  `name` (NULL: "SparseTensorsMap") is TF's shared_name, used in
 * messages ("Unable to find SparseTensor: 7 in map: <name>").
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: `name` copied; *out freed with tfq_sparse_map_free().  Thread-safety: any.
 * Since: 0.2 */
TFQ_API tfq_code tfq_sparse_map_new(const char *name, tfq_sparse_map **out,
                                    tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the map and drops its references to the stored tensors.  NULL: no-op.
 * Ownership: takes `m`.  Thread-safety: one thread, after every other call on `m`.  Since: 0.2 */
TFQ_API void tfq_sparse_map_free(tfq_sparse_map *m);

/* The map's name.  Ownership: borrowed, valid while `m` lives.  Thread-safety: any.  Since: 0.2 */
TFQ_API const char *tfq_sparse_map_name(const tfq_sparse_map *m);

/* Number of elements stored and not yet taken (a snapshot).  Ownership: nothing is taken.
 * Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API int64_t tfq_sparse_map_size(tfq_sparse_map *m);

/* add_sparse_to_tensors_map: stores `sp` (indices int64 [n, R], values [n] of any dtype,
 * dense_shape int64 [R]; any R >= 0; indices need not be ordered nor in bounds) and returns
 * its handle as a new int64 scalar tensor in *handle.
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT  "Input indices should be a matrix but received shape [2]" (and
 *                               the same for "Input values should be a vector" and "Input shape
 *                               should be a vector"), "Dimension -3 must be >= 0", "indices and
 *                               values rows (indexing dimension) must match. (indices = 2,
 *                               values = 3)", "Order length must be SparseTensor rank." (columns
 *                               of indices != size of dense_shape); tfq's "sparse indices and
 *                               dense_shape must be int64" or a NULL tensor;
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `sp`'s tensors gain a reference each (held by the map until the element is taken);
 * *handle (NULL on failure) freed with tfq_tensor_free().  Thread-safety: any, concurrently.
 * Since: 0.2 */
TFQ_API tfq_code tfq_sparse_map_add(tfq_sparse_map *m, const tfq_sparse_tensor *sp,
                                    tfq_tensor **handle, tfq_status *st) TFQ_WARN_UNUSED;

/* add_many_sparse_to_tensors_map: `sp` is a batch of rank R >= 2 whose first dimension is the
 * batch (N = dense_shape[0]); stores one element of rank R-1 per batch entry (see above) and
 * returns their handles as a new int64 [N] tensor in *handles.
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT  the three "... should be a matrix/vector" texts of
 *                               tfq_sparse_map_add(), "Number of values must match first
 *                               dimension of indices. Got 2 values, indices shape: [1,2]",
 *                               "Number of dimensions must match second dimension of indices.
 *                               Got 3 dimensions, indices shape: [1,2]", "Rank of input
 *                               SparseTensor should be > 1, but saw rank: 1", "Expected shape
 *                               dimensions to be non-negative, got -5", and TF's index checks:
 *                               "indices[0] = [5,0] is out of bounds: need 0 <= index < [4,5]",
 *                               "indices[1] = [0,0] is out of order. Many sparse ops require
 *                               sorted indices.\n    Use `tf.sparse.reorder` to create a
 *                               correctly ordered copy.\n\n", "indices[1] = [0,0] is repeated";
 *                               tfq's dtype text as tfq_sparse_map_add().  Nothing is stored.
 *         TFQ_RESOURCE_EXHAUSTED (nothing is stored).
 * Ownership: `sp`'s indices and values gain references held until every element stored from
 * them is taken; *handles (NULL on failure) freed with tfq_tensor_free().
 * Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API tfq_code tfq_sparse_map_add_many(tfq_sparse_map *m, const tfq_sparse_tensor *sp,
                                         tfq_tensor **handles, tfq_status *st) TFQ_WARN_UNUSED;

/* take_many_sparse_from_tensors_map: takes the elements of `handles` (int64 [B], or [B, 1] as a
 * batcher dequeues a component stored with shape [1]) out of the map and returns them as one
 * SparseTensor in *out (see above).  `dtype` is the dtype the values must have (TF's `dtype`
 * attribute); 0 takes the first element's.
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT  "sparse_handles should be a vector but received shape []",
 *                               "Must have at least 1 serialized SparseTensor, but input matrix
 *                               has 0 rows", "Unable to find SparseTensor: 7 in map: <name>",
 *                               "Requested SparseTensor of type int64 but
 *                               SparseTensor[0].values.dtype() == float", "Inconsistent rank
 *                               across SparseTensors: rank prior to SparseTensor[1] was: 2 but
 *                               rank of SparseTensor[1] is: 3" (ranks counted with the batch
 *                               dimension); tfq's "sparse_handles must be int64";
 *         TFQ_RESOURCE_EXHAUSTED (the elements are gone, as after an error).
 * Ownership: `handles` borrowed; *out receives three new tensors (all NULL on failure), released
 * with tfq_sparse_tensor_release().  Thread-safety: any, concurrently.  Since: 0.2 */
TFQ_API tfq_code tfq_sparse_map_take_many(tfq_sparse_map *m, const tfq_tensor *handles,
                                          tfq_dtype dtype, tfq_sparse_tensor *out,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* Drops one reference of each of the three tensors of `sp` (NULL members skipped) and sets
 * them to NULL.  NULL `sp`: no-op.  For triples the caller owns (take_many's output), not for
 * those a tfq_example_result holds.  Ownership: takes the three references.
 * Thread-safety: as the tensors.  Since: 0.2 */
TFQ_API void tfq_sparse_tensor_release(tfq_sparse_tensor *sp);

TFQ_EXTERN_C_END

#endif
