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

/* Every fallible call returns a tfq_code that must be looked at. */
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
