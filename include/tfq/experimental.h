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

TFQ_EXTERN_C_END

#endif
