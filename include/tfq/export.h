/* Export and attribute macros shared by every tfq header.
 *
 * TFQ_API marks the library's public entry points.  The library is built with hidden visibility,
 * so only TFQ_API symbols are exported (a test checks `nm -D`).  Define TFQ_API yourself before
 * including any tfq header to override it. */
#ifndef TFQ_EXPORT_H
#define TFQ_EXPORT_H

#ifndef TFQ_API
#if defined(_WIN32)
#if defined(TFQ_BUILDING)
#define TFQ_API __declspec(dllexport)
#else
#define TFQ_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TFQ_API __attribute__((visibility("default")))
#else
#define TFQ_API
#endif
#endif

/* TFQ_WARN_UNUSED (gcc/clang warn_unused_result) marks a call whose result must be looked at:
 * the calls that create, read, write, enqueue, dequeue, join or flush, where ignoring a failure
 * loses data or uses an object that was never made.  gcc does not let a `(void)` cast silence it,
 * so it is left off the calls whose result callers routinely and rightly ignore, the stop and
 * close calls of a shutdown path (Since: 0.3):
 *   tfq_coord_request_stop()   fails only when the coordinator was already joined;
 *   tfq_queue_close()          a cancelling close is always OK, a plain one fails on a queue that
 *                              someone else closed already (CANCELLED), which is what was wanted;
 *   tfq_tf_queue_close()       the same for a TensorFlow queue.
 * Their result still says what happened (see each declaration); check it where it matters.  A
 * new call gets TFQ_WARN_UNUSED unless it belongs to this list. */
#if defined(__GNUC__) || defined(__clang__)
#define TFQ_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define TFQ_WARN_UNUSED
#endif

#ifdef __cplusplus
#define TFQ_EXTERN_C_BEGIN extern "C" {
#define TFQ_EXTERN_C_END }
#else
#define TFQ_EXTERN_C_BEGIN
#define TFQ_EXTERN_C_END
#endif

#endif
