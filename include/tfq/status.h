/* Status codes and the status object.
 *
 * Every fallible tfq call returns a tfq_code and accepts an optional trailing `tfq_status *`
 * (NULL allowed) that receives the code and a message.  Codes are numbered exactly like
 * TensorFlow's TF_Code, so they map one to one; messages reuse TensorFlow's wording wherever tfq
 * reproduces a TensorFlow behaviour ("FIFOQueue '_0_q' is closed.", ...). */
#ifndef TFQ_STATUS_H
#define TFQ_STATUS_H

#include <stddef.h>
#include <stdint.h>
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

/* Frees `st`; NULL does nothing.  Ownership: takes `st`.  Thread-safety: as tfq_status.
 * Since: 0.1 */
TFQ_API void tfq_status_free(tfq_status *st);

/* The code held by `st` (TFQ_OK for NULL).  Ownership: nothing is taken.  Thread-safety: not
 * concurrently with a call that writes `st`.  Since: 0.1 */
TFQ_API tfq_code tfq_status_code(const tfq_status *st);

/* The message held by `st`: "" when the code is TFQ_OK or `st` is NULL; never NULL.
 * Messages longer than 1023 bytes are truncated.
 * Ownership: borrowed; valid until `st` is next written or freed.  Thread-safety: as
 * tfq_status_code().  Since: 0.1 */
TFQ_API const char *tfq_status_message(const tfq_status *st);

/* Stores `code` and a printf-style message in `st` (no-op for NULL) and returns `code`, so that
 * callbacks and user step functions can write `return tfq_status_set(st, TFQ_..., "...")`.
 * TFQ_OK clears the message.  Ownership: `fmt` and the arguments borrowed for the call; the
 * message is copied (truncated to 1023 bytes).  Thread-safety: as tfq_status.  Since: 0.1 */
TFQ_API tfq_code tfq_status_set(tfq_status *st, tfq_code code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Resets `st` to TFQ_OK with an empty message and no location (no-op for NULL).
 * Ownership: nothing is taken.  Thread-safety: as tfq_status.  Since: 0.1 */
TFQ_API void tfq_status_clear(tfq_status *st);

/* ---- where an error happened, as data ---------------------------------------------------------
 * Besides its message, a status can say where an error happened: the file (work unit) a reader
 * was reading, the byte offset in it, the line (TextLineReader: the 1-based line number of the
 * record that failed, as in its keys), and the index of the failing record within the input of
 * the call (decode_csv: the record of `records`).  Every tfq_status_set() and tfq_status_clear()
 * clears them; the layer that fails fills in what it knows, and the layers above add theirs
 * (tfq_read_decode_step: file, line and record).  Read them instead of parsing messages.
 * Ownership: strings borrowed, valid until `st` is next written or freed.
 * Thread-safety: as tfq_status.  Since: 0.2 */

/* The file, "" when unknown (or `st` NULL).  Truncated to 1023 bytes. */
TFQ_API const char *tfq_status_file(const tfq_status *st);
/* Byte offset in the (decompressed) file, -1 when unknown. */
TFQ_API int64_t tfq_status_offset(const tfq_status *st);
/* Line number (1-based), -1 when unknown. */
TFQ_API int64_t tfq_status_line(const tfq_status *st);
/* Index of the failing record within the call's input (0-based), -1 when unknown. */
TFQ_API int64_t tfq_status_record(const tfq_status *st);
/* The message without the location prefix that tfq adds to some messages ("<file>:<line>: "):
 * TensorFlow's own wording, e.g. "Field 1 in record 0 is not a valid float: x".  Equal to
 * tfq_status_message() when no prefix was added. */
TFQ_API const char *tfq_status_reason(const tfq_status *st);
/* Sets the file (`file_len` bytes, NULL: unchanged), offset and line (negative: unchanged), for
 * user step functions that want to report a location the same way.  The message is not
 * changed.  Call after tfq_status_set() (which clears the location).  No-op for NULL `st`.
 * Ownership: `file` copied (truncated to 1023 bytes). */
TFQ_API void tfq_status_set_location(tfq_status *st, const char *file, size_t file_len,
                                     int64_t offset, int64_t line);

/* "OK", "CANCELLED", ... "UNAUTHENTICATED" (TensorFlow's enum spellings); "UNKNOWN_CODE" for a
 * value outside the enum.  Ownership: static string, never NULL.  Thread-safety: any.  Since: 0.1
 */
TFQ_API const char *tfq_code_name(tfq_code code);

/* A short English description of `code` ("out of range", ...).  Ownership: static, never NULL.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API const char *tfq_strerror(tfq_code code);

TFQ_EXTERN_C_END

#endif
