/* Data types, shapes, tensors, tuples (elements and batches) and component specs.
 *
 * A tensor is a dtype, a shape and a reference-counted buffer.  Numeric buffers are contiguous,
 * row-major and 64-byte aligned, so they can be lent to TensorFlow without a copy.  String tensors
 * hold one (pointer, length) pair per element over an internal arena; bytes may contain NUL.
 *
 * A tuple is an ordered list of component tensors: an *element* of a queue, or a *batch* (the same
 * tuple with a leading batch dimension on every component).
 *
 * Tensors are immutable once shared: write a tensor's data only while you hold the only reference
 * (tfq_tensor_refcount() == 1), before handing it to a queue. */
#ifndef TFQ_TENSOR_H
#define TFQ_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/export.h>
#include <tfq/status.h>

TFQ_EXTERN_C_BEGIN

/* Numbered exactly like TF_DataType, so the TensorFlow bridge maps them one to one. */
typedef enum tfq_dtype {
  TFQ_FLOAT = 1, /* float32, TF name "float" */
  TFQ_DOUBLE = 2,
  TFQ_INT32 = 3,
  TFQ_UINT8 = 4,
  TFQ_INT16 = 5,
  TFQ_INT8 = 6,
  TFQ_STRING = 7,
  TFQ_COMPLEX64 = 8, /* two float32: real, imaginary */
  TFQ_INT64 = 9,
  TFQ_BOOL = 10,     /* one byte, 0 or 1 */
  TFQ_BFLOAT16 = 14, /* 16 bits: the top half of a float32 (TF name "bfloat16") */
  TFQ_UINT16 = 17,
  TFQ_COMPLEX128 = 18, /* two float64 */
  TFQ_HALF = 19        /* IEEE 754 binary16, float16 (TF name "half") */
} tfq_dtype;

/* Largest rank a tensor or spec may have (TensorFlow's limit is 254). */
#define TFQ_MAX_RANK 32
/* An unknown dimension in a shape (printed "?"). */
#define TFQ_UNKNOWN_DIM ((int64_t)-1)
/* A rank of -1 passed with a shape means "shape unspecified" (any rank). */
#define TFQ_UNKNOWN_RANK (-1)

/* TensorFlow's spelling of `dt` ("float", "double", "int32", "string", "bool", ...);
 * "invalid" for a value outside the enum.  Static, never NULL.  Thread-safety: any.  Since: 0.1 */
TFQ_API const char *tfq_dtype_name(tfq_dtype dt);

/* Bytes per element (4 for TFQ_FLOAT, 1 for TFQ_BOOL); 0 for TFQ_STRING and invalid values.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API size_t tfq_dtype_size(tfq_dtype dt);

/* Nonzero when `dt` is one of the enumerators above, else 0.  Thread-safety: any.  Since: 0.1 */
TFQ_API int tfq_dtype_valid(tfq_dtype dt);

/* ---- tensors ---------------------------------------------------------------------------- */

/* Opaque, reference counted.  Thread-safety: reading and ref/unref from any thread
 * concurrently; writing data only while the caller holds the only reference. */
typedef struct tfq_tensor tfq_tensor;

/* Creates a tensor of `dtype` and shape dims[0..rank) (rank 0 = scalar; every dim >= 0).
 * Numeric data is zero-filled; string elements are empty.
 * @return TFQ_OK                 *out is a new tensor with one reference.
 *         TFQ_INVALID_ARGUMENT   bad dtype, rank < 0 or > TFQ_MAX_RANK, a negative dim, or an
 *                                element count that overflows.
 *         TFQ_RESOURCE_EXHAUSTED out of memory.
 * Ownership: `dims` borrowed for the call; *out (NULL on failure) is released with
 * tfq_tensor_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tensor_new(tfq_dtype dtype, const int64_t *dims, int rank, tfq_tensor **out,
                                tfq_status *st) TFQ_WARN_UNUSED;

/* Wraps caller memory as a numeric tensor without copying.  `data` must hold the whole tensor
 * (`len` >= element count * dtype size) and stay valid until `deallocator(data, len, arg)` is
 * called, exactly once, when the last reference goes (also when this call fails, unless it fails
 * with TFQ_INVALID_ARGUMENT before taking `data`: then the deallocator is not called).
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (string dtype, short buffer, bad shape),
 *         TFQ_RESOURCE_EXHAUSTED (deallocator already called).
 * Ownership: takes `data` through the deallocator (NULL deallocator: caller keeps it and must
 * outlive the tensor).  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tensor_wrap(tfq_dtype dtype, const int64_t *dims, int rank, void *data,
                                 size_t len, void (*deallocator)(void *data, size_t len, void *arg),
                                 void *arg, tfq_tensor **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Adds a reference and returns `t`.  Ownership: the caller owns the new reference, released
 * with tfq_tensor_free().  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API tfq_tensor *tfq_tensor_ref(tfq_tensor *t);

/* Drops one reference; the last one frees the tensor.  NULL does nothing.
 * Ownership: takes one reference.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API void tfq_tensor_free(tfq_tensor *t);

/* Current reference count (a snapshot).  A count of 1 read here also orders after every access
 * made through the references dropped before it (an acquire load), so the sole owner may then
 * write the tensor.  Ownership: nothing is taken.  Thread-safety: any, concurrently.  Since: 0.1 */
TFQ_API int64_t tfq_tensor_refcount(const tfq_tensor *t);

/* Accessors.  REQUIRES: t != NULL, 0 <= i < rank.  Ownership: nothing is taken (tfq_tensor_dims:
 * see below).  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_dtype tfq_tensor_dtype(const tfq_tensor *t);
TFQ_API int tfq_tensor_rank(const tfq_tensor *t);
TFQ_API int64_t tfq_tensor_dim(const tfq_tensor *t, int i);
/* Borrowed array of `rank` dims, valid while `t` lives. */
TFQ_API const int64_t *tfq_tensor_dims(const tfq_tensor *t);
/* Product of the dims (1 for a scalar). */
TFQ_API int64_t tfq_tensor_num_elements(const tfq_tensor *t);
/* Numeric tensors: element count * dtype size.  String tensors: 0. */
TFQ_API size_t tfq_tensor_byte_size(const tfq_tensor *t);

/* The numeric buffer (64-byte aligned unless wrapped), row-major; NULL for string tensors.
 * Ownership: borrowed, valid while `t` lives.  Write only while you hold the only reference.
 * Thread-safety: any for reading (see tfq_tensor).  Since: 0.1 */
TFQ_API void *tfq_tensor_data(tfq_tensor *t);
TFQ_API const void *tfq_tensor_cdata(const tfq_tensor *t);

/* String element `i` (flat row-major index): returns its bytes (not NUL-terminated; may contain
 * NUL) and stores its length in *len.  REQUIRES: string dtype, 0 <= i < num_elements.
 * Ownership: borrowed, valid while `t` lives and element i is not set again.
 * Thread-safety: any for reading (see tfq_tensor).  Since: 0.1 */
TFQ_API const char *tfq_tensor_string(const tfq_tensor *t, int64_t i, size_t *len);

/* Copies `len` bytes into string element `i`.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (not a string tensor, i out of range),
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `bytes` borrowed for the call.  Thread-safety: only while the caller holds the only
 * reference.  Since: 0.1 */
TFQ_API tfq_code tfq_tensor_set_string(tfq_tensor *t, int64_t i, const char *bytes, size_t len,
                                       tfq_status *st) TFQ_WARN_UNUSED;

/* ---- tuples ------------------------------------------------------------------------------ */

/* An ordered list of `n` component tensors (an element, or a batch).  Opaque.
 * Thread-safety: one thread at a time while being filled; read-only use from any thread. */
typedef struct tfq_tuple tfq_tuple;

/* Creates a tuple with `n` empty (NULL) slots, n >= 1.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (n == 0), TFQ_RESOURCE_EXHAUSTED (*out NULL on failure).
 * Ownership: *out freed with tfq_tuple_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tuple_new(size_t n, tfq_tuple **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the tuple and drops one reference of each component.  NULL does nothing.
 * Ownership: takes `t`.  Thread-safety: one thread, after every other use of `t`.  Since: 0.1 */
TFQ_API void tfq_tuple_free(tfq_tuple *t);

/* Number of components.  Ownership: nothing is taken.  Thread-safety: as tfq_tuple.
 * Since: 0.1 */
TFQ_API size_t tfq_tuple_size(const tfq_tuple *t);

/* Stores `tensor` in slot i, dropping whatever was there.
 * Ownership: takes the caller's reference to `tensor` (the "_take" rule).  REQUIRES: i < size.
 * Thread-safety: one thread at a time (filling the tuple).  Since: 0.1 */
TFQ_API void tfq_tuple_set_take(tfq_tuple *t, size_t i, tfq_tensor *tensor);

/* Component i, or NULL if unset.  Ownership: borrowed, valid while the tuple holds it.
 * REQUIRES: i < size.  Thread-safety: as tfq_tuple (any thread for read-only use).  Since: 0.1 */
TFQ_API tfq_tensor *tfq_tuple_get(const tfq_tuple *t, size_t i);

/* ---- component specs ----------------------------------------------------------------------- */

/* The dtypes, shapes and optional names of a queue's components.  Opaque.
 * Thread-safety: one thread at a time while being built; read-only use from any thread. */
typedef struct tfq_spec tfq_spec;

/* Creates an empty spec.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL).
 * Ownership: *out freed with tfq_spec_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_spec_new(tfq_spec **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees the spec.  NULL does nothing.  Ownership: takes `s`.  Thread-safety: one thread, after
 * every other use of `s`.  Since: 0.1 */
TFQ_API void tfq_spec_free(tfq_spec *s);

/* Appends a component.  rank == TFQ_UNKNOWN_RANK means no shape is declared for it (TF's
 * `shapes=None`); otherwise dims[0..rank) with TFQ_UNKNOWN_DIM for unknown dimensions.  `name`
 * may be NULL (TF's `names`; used in error messages and by the batchers).  Whether a given
 * queue kind accepts unknown dims or unspecified shapes is checked when the queue is created.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (bad dtype, rank > TFQ_MAX_RANK, dim < -1, duplicate
 *         name), TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `dims` and `name` copied.  Thread-safety: as tfq_spec (one thread while building).
 * Since: 0.1 */
TFQ_API tfq_code tfq_spec_add(tfq_spec *s, tfq_dtype dtype, const int64_t *dims, int rank,
                              const char *name, tfq_status *st) TFQ_WARN_UNUSED;

/* Accessors.  REQUIRES: i < tfq_spec_size(s).  Ownership: nothing is taken; the pointers they
 * return are borrowed, valid while `s` lives and is not changed.  Thread-safety: as tfq_spec
 * (any thread for read-only use).  Since: 0.1 */
TFQ_API size_t tfq_spec_size(const tfq_spec *s);
TFQ_API tfq_dtype tfq_spec_dtype(const tfq_spec *s, size_t i);
/* TFQ_UNKNOWN_RANK when no shape was declared. */
TFQ_API int tfq_spec_rank(const tfq_spec *s, size_t i);
/* Borrowed dims (NULL for an unknown rank or a scalar). */
TFQ_API const int64_t *tfq_spec_dims(const tfq_spec *s, size_t i);
/* Borrowed name, or NULL. */
TFQ_API const char *tfq_spec_name(const tfq_spec *s, size_t i);

TFQ_EXTERN_C_END

#endif
