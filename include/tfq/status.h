/* Status codes and the status object.
 *
 * Every fallible tfq call returns a tfq_code and accepts an optional trailing `tfq_status *`
 * (NULL allowed) that receives the code and a message.  Codes are numbered exactly like
 * TensorFlow's TF_Code, so they map one to one; messages reuse TensorFlow's wording wherever tfq
 * reproduces a TensorFlow behaviour ("FIFOQueue '_0_q' is closed.", ...). */
#ifndef TFQ_STATUS_H
#define TFQ_STATUS_H

#include <tfq/export.h>

TFQ_EXTERN_C_BEGIN

/* Numbered exactly like TF_Code (tensorflow/c/tf_status.h). */
typedef enum tfq_code {
  TFQ_OK = 0,
  TFQ_CANCELLED = 1,
  TFQ_UNKNOWN = 2,
  TFQ_INVALID_ARGUMENT = 3,
  TFQ_DEADLINE_EXCEEDED = 4,
  TFQ_NOT_FOUND = 5,
  TFQ_ALREADY_EXISTS = 6,
  TFQ_PERMISSION_DENIED = 7,
  TFQ_RESOURCE_EXHAUSTED = 8,
  TFQ_FAILED_PRECONDITION = 9,
  TFQ_ABORTED = 10,
  TFQ_OUT_OF_RANGE = 11,
  TFQ_UNIMPLEMENTED = 12,
  TFQ_INTERNAL = 13,
  TFQ_UNAVAILABLE = 14,
  TFQ_DATA_LOSS = 15,
  TFQ_UNAUTHENTICATED = 16
} tfq_code;

/* A code and a message.  Opaque.
 * Thread-safety: one thread at a time (may migrate between threads). */
typedef struct tfq_status tfq_status;

/* Creates a status holding TFQ_OK and an empty message.
 * @return a new status, or NULL when memory is exhausted.
 * Ownership: the caller frees it with tfq_status_free().
 * Thread-safety: any thread.  Since: 0.1 */
TFQ_API tfq_status *tfq_status_new(void);

/* Frees `st`; NULL does nothing.  Ownership: takes `st`.  Since: 0.1 */
TFQ_API void tfq_status_free(tfq_status *st);

/* The code held by `st` (TFQ_OK for NULL).  Thread-safety: not concurrently with a call that
 * writes `st`.  Since: 0.1 */
TFQ_API tfq_code tfq_status_code(const tfq_status *st);

/* The message held by `st`: "" when the code is TFQ_OK or `st` is NULL; never NULL.
 * Messages longer than 1023 bytes are truncated.
 * Ownership: borrowed; valid until `st` is next written or freed.  Since: 0.1 */
TFQ_API const char *tfq_status_message(const tfq_status *st);

/* Stores `code` and a printf-style message in `st` (no-op for NULL) and returns `code`, so that
 * callbacks and user step functions can write `return tfq_status_set(st, TFQ_..., "...")`.
 * TFQ_OK clears the message.  Thread-safety: as tfq_status.  Since: 0.1 */
TFQ_API tfq_code tfq_status_set(tfq_status *st, tfq_code code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Resets `st` to TFQ_OK with an empty message (no-op for NULL).  Since: 0.1 */
TFQ_API void tfq_status_clear(tfq_status *st);

/* "OK", "CANCELLED", ... "UNAUTHENTICATED" (TensorFlow's enum spellings); "UNKNOWN_CODE" for a
 * value outside the enum.  Ownership: static string, never NULL.  Thread-safety: any.  Since: 0.1
 */
TFQ_API const char *tfq_code_name(tfq_code code);

/* A short English description of `code` ("out of range", ...).  Static, never NULL.  Since: 0.1 */
TFQ_API const char *tfq_strerror(tfq_code code);

TFQ_EXTERN_C_END

#endif
