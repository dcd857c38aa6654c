/* Experimental tfq calls: conveniences for tests, tools and benchmarks, with no promise that they
 * stay (as zstd's ZSTD_STATIC_LINKING_ONLY section and TensorFlow's c_api_experimental.h).
 *
 * Define TFQ_EXPERIMENTAL before including this header to acknowledge that its calls may change
 * or go in any release:
 *
 *   #define TFQ_EXPERIMENTAL
 *   #include <tfq/experimental.h>
 *
 * Everything in the other headers of include/tfq/ is the stable API (0.x: stable within a minor
 * version).  Since: 0.2 */
#ifndef TFQ_EXPERIMENTAL_H
#define TFQ_EXPERIMENTAL_H

#ifndef TFQ_EXPERIMENTAL
#error \
    "tfq/experimental.h holds calls that may change: #define TFQ_EXPERIMENTAL before including it"
#endif

#include <stddef.h>
#include <stdint.h>
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* ---- decode_csv's number parsers ----------------------------------------------------------------
 * The exact parsers decode_csv applies to one field (TF 2.x's acceptance rules, correctly rounded
 * floats, range-checked integers), for benchmarks that measure a split + parse ceiling.
 * @return 1 and *out set when `s[0..n)` is a valid number of the type, else 0.
 * Ownership: `s` borrowed.  Thread-safety: any.  Since: 0.2 */
TFQ_API int tfq_experimental_parse_f32(const char *s, size_t n, float *out);
TFQ_API int tfq_experimental_parse_f64(const char *s, size_t n, double *out);
TFQ_API int tfq_experimental_parse_i32(const char *s, size_t n, int32_t *out);
TFQ_API int tfq_experimental_parse_i64(const char *s, size_t n, int64_t *out);

/* ---- conveniences for tests and tools ----------------------------------------------------------
 * Moved here from the stable headers in 0.2 (tensor.h, queue.h), with their names. */

/* tfq_registry (queue.h), by its struct tag, so that this header does not need queue.h. */
struct tfq_registry;

/* Builds a spec from the dtypes and shapes of an existing tuple (every component set).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT (an unset component); TFQ_RESOURCE_EXHAUSTED (*out NULL
 *         on failure).
 * Ownership: `t` borrowed for the call; *out new, freed with tfq_spec_free().
 * Thread-safety: any (as a read of `t`).  Since: 0.1 (here since 0.2) */
TFQ_API tfq_code tfq_spec_from_tuple(const tfq_tuple *t, tfq_spec **out,
                                     tfq_status *st) TFQ_WARN_UNUSED;

/* Writes TensorFlow's text for the shape dims[0..rank), e.g. "[3,4]" or "[]" ("<unknown>" for
 * TFQ_UNKNOWN_RANK, "?" for TFQ_UNKNOWN_DIM), into buf (always NUL-terminated when cap > 0);
 * returns the length it needed, like snprintf.  Ownership: `dims` borrowed for the call.
 * Thread-safety: any.  Since: 0.1 (here since 0.2) */
TFQ_API size_t tfq_shape_format(const int64_t *dims, int rank, char *buf, size_t cap);

/* Number of shared queues the registry holds (`r` NULL: the default registry).
 * Ownership: nothing is taken.  Thread-safety: any, concurrently (a snapshot).
 * Since: 0.1 (here since 0.2) */
TFQ_API size_t tfq_registry_size(struct tfq_registry *r);

TFQ_EXTERN_C_END

#endif
