/* tf.train.Example parsing (parse_example, parse_single_example) and decode_raw.
 *
 * tfq_parse_example() and tfq_parse_single_example() reproduce TensorFlow 2.21's fast Example
 * parser (core/util/example_proto_fast_parsing.cc), the kernel behind
 * tf.compat.v1.parse_example (FastParseExample, the "batch path") and
 * tf.compat.v1.parse_single_example (FastParseSingleExample, the "single path"): the same
 * outputs, the same acceptance of malformed input, the same error texts
 * (docs: spec/tf1-example.md, §1-§7).  tfq_decode_raw() is tf.compat.v1.decode_raw (§8).
 *
 * Using it:
 *
 *   tfq_example_config *cfg;
 *   tfq_example_config_new(&cfg, st);
 *   int64_t two = 2;
 *   tfq_example_config_add_fixed_len(cfg, "xy", TFQ_FLOAT, &two, 1, NULL, st);
 *   tfq_example_config_add_var_len(cfg, "tags", TFQ_STRING, st);
 *   tfq_example_result *res;
 *   if (tfq_parse_example_strings(cfg, recs, lens, n, NULL, NULL, &res, st) == TFQ_OK) {
 *     tfq_tensor *xy = tfq_example_result_dense(res, tfq_example_result_find(res, "xy"));
 *     const tfq_sparse_tensor *tags =        // indices, values, dense_shape
 *         tfq_example_result_sparse(res, tfq_example_result_find(res, "tags"));
 *     ...
 *     tfq_example_result_free(res);
 *   }
 *   tfq_example_config_free(cfg);
 *
 * The configuration is TF's `features` dict.  Each feature has a key (the dict key) and one of
 * four kinds, as in TF1:
 *
 *   FixedLen          tf.io.FixedLenFeature(shape, dtype, default_value)
 *                     batch: dense [B] + shape; single: dense shape.  An absent key (or an entry
 *                     holding an empty Feature) takes the default; with no default (a default of
 *                     zero elements) it is required.  A present list must hold exactly
 *                     prod(shape) values (a present *empty* list is an error, even with a
 *                     default).
 *   VarLen            tf.io.VarLenFeature(dtype)
 *                     batch: sparse, indices int64 [N,2] of (example, position), values [N],
 *                     dense_shape [B, max values in one example]; single: indices [N,1],
 *                     dense_shape [N].
 *   FixedLenSequence  tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=True,
 *                     default_value)
 *                     batch: dense [B, max rows] + shape, padded with the (scalar) default;
 *                     single: dense [rows] + shape.  A row is prod(shape) values.
 *   Sparse            tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted)
 *                     batch: sparse, indices int64 [N, 1 + n_index] of (example, idx0, idx1,
 *                     ...), values [N], dense_shape [B] + size; single: indices [N, n_index],
 *                     dense_shape size.  Index keys are read as VarLen int64 and the value key
 *                     as VarLen dtype; within an example entries are sorted by index unless
 *                     already_sorted; indices are not range-checked.
 *
 * Allowed dtypes are TFQ_FLOAT (float_list), TFQ_INT64 (int64_list) and TFQ_STRING
 * (bytes_list); TF never converts between list kinds, a mismatch is an error.
 *
 * Output order: one output per feature, in the byte order of the keys (TF sorts the dict's
 * keys; the i-th output of a result is the i-th feature of its config).  Dense outputs are
 * tensors; sparse outputs are tfq_sparse_tensor triples.  The index keys and value key of a
 * Sparse feature are not outputs unless they are features themselves.
 *
 * Wire rules (what TF accepts that protobuf would not, and vice versa; spec §2): a packed list
 * contributes its first packed chunk only; an unpacked run followed by a packed chunk fails;
 * the first byte of a Feature decides its kind; for a key given several times the last entry
 * wins (empty Features are skipped, except by VarLen keys in the batch path); the value bytes of
 * keys not in the config are never looked at; unknown fields are skipped at the Example level
 * and are errors inside Features and map entries.  Where the spec is silent tfq follows the
 * 2.21 wheel (checked): only the exact byte 0a starts Example.features (a non-minimal tag is an
 * unknown field), while tags inside a map entry are read as varints; a map entry may hold two
 * keys or two values (a missing key is "", a missing value an empty Feature); an unknown
 * length-delimited field of length >= 2^31 skips nothing.
 *
 * Errors (code TFQ_INVALID_ARGUMENT, TF's kernel texts; <n> the example's name or
 * "<unknown>", <i> its index, <k> the key):
 *   "Could not parse example input, value: '<raw bytes>'"        (broken structure)
 *   "Unsupported datatype."                                       (bad first byte of a Feature)
 *   batch:  "Name: <n>, Key: <k>, Index: <i>.  Data types don't match. ..."
 *           "Name: <n>, Key: <k>, Index: <i>.  Can't parse serialized Example."
 *           "Name: <n>, Key: <k>, Index: <i>.  Number of <t> values != expected.  Values size:
 *            <c> but output shape: <shape>"
 *           "Name: <n>, Key: <k>, Index: <i>.  Number of <t> values is not a multiple of stride
 *            length. Saw <c> values but output shape is: [?,<dims>]"  (<c>, as in TF, counts
 *            the key's values from the start of TF's minibatch holding example <i>: about 50 kB
 *            of input, at least min(8, B) and at most 64 minibatches per call)
 *           "Name: <n>, Feature: <k> (data type: <dt>) is required but could not be found."
 *   single: the same without Name and Index ("Key: <k>.  ..."), with the single path's own
 *           count and list texts ("... Can't parse serialized Example: Some float_list slice
 *           was not parsed.", "Error while parsing feature with key <k>: number of elements
 *           should be divisible by <s>, found <c> instead").
 * The whole call fails on any error (no partial output); in the batch path the error of the
 * lowest-index failing example is reported, and tfq_status_record() holds that index (0 in the
 * single path).  The raw bytes in the "Could not parse" message are copied verbatim (no
 * escaping); as every tfq status message it is NUL-terminated and cut at 1023 bytes, so input
 * that holds a NUL shows up to it: use tfq_status_record() to find the record itself.
 *
 * Thread-safety: a config is built by one thread; once built it is read-only and may be shared
 * by any number of concurrent parse calls (which share no other state).  A result is owned by
 * the caller of the parse call; its tensors may be shared (tfq_tensor_ref) with any thread. */
#ifndef TFQ_EXAMPLE_H
#define TFQ_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* ---- sparse tensors ------------------------------------------------------------------------ */

/* TF's SparseTensor as three tensors: indices int64 [N, rank], values [N] and dense_shape int64
 * [rank].  A plain struct: when it comes from a result, the result holds one reference to each
 * tensor (take your own with tfq_tensor_ref()).  As a tuple, TF's component order is indices,
 * values, dense_shape (tfq_example_result_to_tuple()). */
typedef struct tfq_sparse_tensor {
  tfq_tensor *indices;
  tfq_tensor *values;
  tfq_tensor *dense_shape;
} tfq_sparse_tensor;

/* ---- the configuration (TF's `features` dict) ---------------------------------------------- */

/* Opaque.  Thread-safety: see above (built by one thread, then read-only and shareable). */
typedef struct tfq_example_config tfq_example_config;

/* The kind of a feature. */
typedef enum tfq_example_kind {
  TFQ_EXAMPLE_FIXED_LEN = 0,          /* dense output */
  TFQ_EXAMPLE_VAR_LEN = 1,            /* sparse output */
  TFQ_EXAMPLE_FIXED_LEN_SEQUENCE = 2, /* dense output */
  TFQ_EXAMPLE_SPARSE = 3              /* sparse output (SparseFeature) */
} tfq_example_kind;

/* Creates an empty configuration (parsing with it fails until a feature is added).
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * Ownership: *out (NULL on failure) is freed with tfq_example_config_free().
 * Thread-safety: any.  Since: 0.2 */
TFQ_API tfq_code tfq_example_config_new(tfq_example_config **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `cfg`; NULL does nothing.  Results parsed with it stay valid.  Ownership: takes `cfg`.
 * Thread-safety: one thread, after every parse call using `cfg`.  Since: 0.2 */
TFQ_API void tfq_example_config_free(tfq_example_config *cfg);

/* Common rules of the four add calls:
 *  - `key` is a NUL-terminated byte string (may be empty; a key holding a NUL byte cannot be
 *    requested) and must not be a feature of `cfg` already ("Duplicate feature key: <k>", tfq's
 *    text: a Python dict cannot hold one twice).
 *  - `dtype` must be TFQ_FLOAT, TFQ_INT64 or TFQ_STRING.  0 (no dtype) gives "Missing type for
 *    feature <k>."; another value gives TF's TypeError text "Value passed to parameter
 *    'dense_defaults' has DataType int32 not in list of allowed values: float32, int64,
 *    string" ('sparse_types' for VarLen and Sparse).
 *  - Every error is TFQ_INVALID_ARGUMENT with the text of TF's Python layer up to its first
 *    " Received" (or its first " for '{{node", for errors that name a graph node), and leaves
 *    `cfg` unchanged; TFQ_RESOURCE_EXHAUSTED when out of memory.
 *  - Two checks concern the whole dict and are made when parsing (and by
 *    tfq_example_config_check()), so that their texts list every feature as TF's do: a key that
 *    is both dense (FixedLen, FixedLenSequence) and sparse (VarLen, an index or value key of a
 *    Sparse feature) gives "Dense and sparse keys must not intersect; dense_keys: ['v'],
 *    sparse_keys: ['m', 'v'], intersection: {'v'}" (the set in sorted order), and one key read
 *    as VarLen with two dtypes gives "Conflicting type <dtype: 'float32'> vs <dtype: 'int64'>
 *    for feature ix.".
 * Ownership: all arguments borrowed for the call (copied).  Thread-safety: one thread, while
 * building `cfg`.  Since: 0.2 */

/* FixedLenFeature(shape, dtype, default_value).  The shape is dims[0..rank); rank
 * TFQ_UNKNOWN_RANK means no shape ("Missing shape for feature <k>."), and TFQ_UNKNOWN_DIM in
 * dims gives TF's "First dimension of shape for feature <k> unknown. Consider using
 * FixedLenSequenceFeature." or "All dimensions of shape for feature <k> need to be known but
 * received [2, None].".  `default_value` is NULL (required) or a tensor of `dtype` with
 * exactly prod(shape) elements, in any shape (TF reshapes it; for a shape with 0 elements a
 * default of 0 elements, which is still "required").  Errors: "Cannot reshape a tensor with
 * <n> elements to shape <shape> (<m> elements)", "Value passed to parameter 'dense_defaults'
 * has DataType int32 ..." (a default of a dtype TF does not allow), and tfq's "Default value of
 * feature <k> has dtype int64, not float32 (tfq converts no types)" (TF would silently parse
 * the key with the default's dtype). */
TFQ_API tfq_code tfq_example_config_add_fixed_len(tfq_example_config *cfg, const char *key,
                                                  tfq_dtype dtype, const int64_t *dims, int rank,
                                                  const tfq_tensor *default_value,
                                                  tfq_status *st) TFQ_WARN_UNUSED;

/* VarLenFeature(dtype). */
TFQ_API tfq_code tfq_example_config_add_var_len(tfq_example_config *cfg, const char *key,
                                                tfq_dtype dtype, tfq_status *st) TFQ_WARN_UNUSED;

/* FixedLenSequenceFeature(shape, dtype, allow_missing, default_value): shape is the shape of
 * one row, dims[0..rank) (rank TFQ_UNKNOWN_RANK: "Missing shape for feature <k>.").
 * `allow_missing` must be nonzero ("Unsupported: FixedLenSequenceFeature requires
 * allow_missing to be True.").  `padding` is NULL (0 or "") or a tensor of `dtype` with exactly
 * one element ("Cannot reshape a tensor with <n> elements to shape [] (1 elements)").
 * An unknown dim in `dims` gives TF's kernel text "dense_shapes[<d>] has unknown rank or
 * unknown inner dimensions: [?,?]"; a zero dim (which crashes TF 2.21 with SIGFPE) gives tfq's
 * "dense_shapes[<d>] has a zero inner dimension: [?,0]".  <d> is the feature's position among
 * the dense features added so far, in key order (TF's, when it is the last dense key added). */
TFQ_API tfq_code tfq_example_config_add_fixed_len_sequence(tfq_example_config *cfg, const char *key,
                                                           tfq_dtype dtype, const int64_t *dims,
                                                           int rank, int allow_missing,
                                                           const tfq_tensor *padding,
                                                           tfq_status *st) TFQ_WARN_UNUSED;

/* SparseFeature(index_key, value_key, dtype, size, already_sorted).  index_keys[0..n_index)
 * (n_index >= 1) name the int64 index lists, one per dense dimension, and size[0..n_index) the
 * dense_shape after the batch dimension.  With n_index == 1 this is TF's single-string
 * index_key form.  Errors: "Missing index_key for SparseFeature SparseFeature(...)." (n_index
 * 0, or one empty key), "Missing value_key for SparseFeature SparseFeature(...)." (NULL or
 * empty value_key), and the dtype messages above.  When parsing (TF's sparse_merge):
 *  - index lists of different total lengths (over the batch) fail with "ConcatOp : Dimension 0
 *    in both shapes must be equal: shape[0] = [<a>,1] vs. shape[<j>] = [<b>,1]" ([<a>,0] in
 *    the single path);
 *  - index and value lists of different total lengths fail with "Number of elements in indices
 *    (<a>) and values (<b>) do not match", except with already_sorted, where TF checks nothing
 *    and neither does tfq: the output then has <a> index rows and <b> values;
 *  - the i-th index row pairs with the i-th value of the batch (so per-example mismatches that
 *    even out over the batch pair values across examples, as in TF);
 *  - entries are sorted by their index rows, keeping the wire order of equal rows (TF's
 *    std::sort keeps it up to 16 entries, the only case where it is defined). */
TFQ_API tfq_code tfq_example_config_add_sparse(tfq_example_config *cfg, const char *key,
                                               const char *const *index_keys, size_t n_index,
                                               const char *value_key, tfq_dtype dtype,
                                               const int64_t *size, int already_sorted,
                                               tfq_status *st) TFQ_WARN_UNUSED;

/* The whole-dict checks described above (dense/sparse intersection, conflicting VarLen dtypes)
 * and the empty dict, as the batch path reports it ("Argument `features` cannot be None or
 * falsy. Got {}").  Parse calls run the same checks.
 * @return TFQ_OK or TFQ_INVALID_ARGUMENT.  Ownership: nothing is taken.  Thread-safety: any, as
 * a parse call.  Since: 0.2 */
TFQ_API tfq_code tfq_example_config_check(const tfq_example_config *cfg,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* Accessors: the number of features (= outputs), and feature i in output order (sorted keys).
 * REQUIRES: i < tfq_example_config_size(cfg).  Ownership: nothing is taken; returned pointers
 * are borrowed, valid until `cfg` is changed or freed.  Thread-safety: any (read-only).
 * Since: 0.2 */
TFQ_API size_t tfq_example_config_size(const tfq_example_config *cfg);
TFQ_API const char *tfq_example_config_key(const tfq_example_config *cfg, size_t i);
TFQ_API tfq_example_kind tfq_example_config_kind(const tfq_example_config *cfg, size_t i);
/* 1 for VarLen and Sparse features (sparse outputs), 0 for dense ones. */
TFQ_API int tfq_example_config_is_sparse(const tfq_example_config *cfg, size_t i);
/* The dtype of the output's values. */
TFQ_API tfq_dtype tfq_example_config_dtype(const tfq_example_config *cfg, size_t i);
/* The static shape of one example's output, TFQ_UNKNOWN_DIM for unknown dims: the single
 * path's output shape (dense) or dense_shape (sparse); the batch path prepends the batch
 * dimension.  FixedLen: shape; FixedLenSequence: [?] + row shape; VarLen: [?]; Sparse: size.
 * tfq_example_config_dims returns a borrowed array of tfq_example_config_rank() dims (NULL for
 * rank 0). */
TFQ_API int tfq_example_config_rank(const tfq_example_config *cfg, size_t i);
/* The default of feature i: a FixedLen feature's default_value (of the feature's shape), a
 * FixedLenSequence feature's padding (one element), or NULL (a required FixedLen feature, a
 * sequence padded with 0 or "", sparse features).  Borrowed from `cfg`.  Since: 0.3 */
TFQ_API const tfq_tensor *tfq_example_config_default(const tfq_example_config *cfg, size_t i);
TFQ_API const int64_t *tfq_example_config_dims(const tfq_example_config *cfg, size_t i);
/* The index of the feature named `key`, or -1. */
TFQ_API int64_t tfq_example_config_find(const tfq_example_config *cfg, const char *key);

/* ---- parsing ----------------------------------------------------------------------------- */

/* The outputs of one parse call: one per feature of the config, in the config's order.
 * Opaque.  Thread-safety: one thread at a time to free; read-only use from any thread. */
typedef struct tfq_example_result tfq_example_result;

/* tf.compat.v1.parse_example(serialized, features, example_names=names).
 * `serialized` is a string tensor of rank 1 ([B] records: the batch path) or rank 0 (one
 * record: the single path, as TF's ParseExampleV2 does with a scalar; outputs have no batch
 * dimension).  `names` is NULL or a string tensor: empty, or of the same shape as
 * `serialized` ("Expected names have the same shape as serialized: name.shape=[1],
 * serialized.shape=[2]"); names appear in batch-path messages, "<unknown>" without them.
 * B == 0 gives outputs with a leading dimension of 0 (required keys included).
 * @return TFQ_OK                 *out holds the outputs.
 *         TFQ_INVALID_ARGUMENT   a parse error (above), an empty config ("Argument `features`
 *                                cannot be None or falsy. Got {}"), a whole-dict config
 *                                error, `serialized` not a string tensor, or of rank >= 2
 *                                ("Expected serialized to be a scalar or vector, got shape:
 *                                [1,1]"), `names` not a string tensor, or non-empty names
 *                                of another shape than `serialized`.
 *         TFQ_RESOURCE_EXHAUSTED out of memory.
 * Ownership: `cfg`, `serialized`, `names` borrowed for the call; *out (NULL on failure) is
 * freed with tfq_example_result_free().  Thread-safety: any, concurrently with other parse calls
 * on the same config.  Since: 0.2 */
TFQ_API tfq_code tfq_parse_example(const tfq_example_config *cfg, const tfq_tensor *serialized,
                                   const tfq_tensor *names, tfq_example_result **out,
                                   tfq_status *st) TFQ_WARN_UNUSED;

/* The batch path over n records given as (pointer, length) pairs, e.g. the records a TFRecord
 * reader's read_up_to returned (no string tensor needed).  `names`/`name_lens` are NULL (no
 * names: "<unknown>") or n names.  ptrs/lens may be NULL when n == 0.  Outputs have a batch
 * dimension of n.
 * @return as tfq_parse_example().  Ownership: all inputs borrowed for the call; *out as
 * tfq_parse_example().  Thread-safety: as tfq_parse_example().  Since: 0.2 */
TFQ_API tfq_code tfq_parse_example_strings(const tfq_example_config *cfg, const char *const *ptrs,
                                           const size_t *lens, int64_t n, const char *const *names,
                                           const size_t *name_lens, tfq_example_result **out,
                                           tfq_status *st) TFQ_WARN_UNUSED;

/* tf.compat.v1.parse_single_example(serialized, features): the single path over `len` bytes.
 * Outputs have no batch dimension; messages carry no name and no index.  An empty config gives
 * "Invalid argument: features cannot be empty.".
 * @return as tfq_parse_example().  Ownership: `cfg` and `bytes` borrowed for the call; *out as
 * tfq_parse_example().  Thread-safety: as tfq_parse_example().  Since: 0.2 */
TFQ_API tfq_code tfq_parse_single_example(const tfq_example_config *cfg, const char *bytes,
                                          size_t len, tfq_example_result **out,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `r` and drops its references to the output tensors (tensors the caller took with
 * tfq_tensor_ref() live on).  NULL does nothing.  Ownership: takes `r`.  Thread-safety: one
 * thread, after every other use of `r`.  Since: 0.2 */
TFQ_API void tfq_example_result_free(tfq_example_result *r);

/* Accessors.  REQUIRES: i < tfq_example_result_size(r).  Ownership: nothing is taken; returned
 * pointers are borrowed, valid while `r` lives (take a tensor with tfq_tensor_ref() to keep it
 * longer).  Thread-safety: any (read-only).  Since: 0.2 */
TFQ_API size_t tfq_example_result_size(const tfq_example_result *r);
/* The feature key of output i (the config's key i). */
TFQ_API const char *tfq_example_result_key(const tfq_example_result *r, size_t i);
TFQ_API int tfq_example_result_is_sparse(const tfq_example_result *r, size_t i);
/* The dense output i, or NULL when output i is sparse. */
TFQ_API tfq_tensor *tfq_example_result_dense(const tfq_example_result *r, size_t i);
/* The sparse output i, or NULL when output i is dense. */
TFQ_API const tfq_sparse_tensor *tfq_example_result_sparse(const tfq_example_result *r, size_t i);
/* The index of the output named `key`, or -1. */
TFQ_API int64_t tfq_example_result_find(const tfq_example_result *r, const char *key);

/* The outputs as one tuple: a dense output is one component, a sparse output three (indices,
 * values, dense_shape), in output order.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `r` borrowed; *out (NULL on failure) holds its own references and is freed with
 * tfq_tuple_free().  Thread-safety: any (read-only use of `r`).  Since: 0.2 */
TFQ_API tfq_code tfq_example_result_to_tuple(const tfq_example_result *r, tfq_tuple **out,
                                             tfq_status *st) TFQ_WARN_UNUSED;

/* ---- decode_raw ---------------------------------------------------------------------------- */

/* tf.compat.v1.decode_raw(bytes, out_type, little_endian): reinterprets each string of `bytes`
 * (any shape) as an array of out_type.  The output has the shape of `bytes` plus one dimension
 * of len / sizeof(out_type).  `little_endian` == 0 byte-swaps each element (complex types: the
 * real and imaginary halves separately).
 * Allowed out_type: TFQ_HALF, TFQ_FLOAT, TFQ_DOUBLE, TFQ_INT32, TFQ_UINT16, TFQ_UINT8,
 * TFQ_INT16, TFQ_INT8, TFQ_INT64, TFQ_COMPLEX64, TFQ_COMPLEX128, TFQ_BOOL, TFQ_BFLOAT16.
 * @return TFQ_OK                 *out is the new tensor.
 *         TFQ_INVALID_ARGUMENT   TF's texts: "DecodeRaw requires input strings to all be the same
 *                                size, but element <i> has size <first> != <this>", "Input to
 *                                DecodeRaw has length <n> that is not a multiple of <s>, the
 *                                size of <dtype>"; another out_type: "Value passed to parameter
 *                                'out_type' has DataType uint32 not in list of allowed values:
 *                                float16, float32, float64, int32, uint16, uint8, int16, int8,
 *                                int64, complex64, complex128, bool, bfloat16"; `bytes` not a
 *                                string tensor.
 *         TFQ_RESOURCE_EXHAUSTED out of memory.
 * Ownership: `bytes` borrowed for the call; *out (NULL on failure) freed with
 * tfq_tensor_free().  Thread-safety: any.  Since: 0.2 */
TFQ_API tfq_code tfq_decode_raw(const tfq_tensor *bytes, tfq_dtype out_type, int little_endian,
                                tfq_tensor **out, tfq_status *st) TFQ_WARN_UNUSED;

TFQ_EXTERN_C_END

#endif
