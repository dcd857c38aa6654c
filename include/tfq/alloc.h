/* The pluggable allocator.  Every allocation tfq makes goes through these three functions
 * (tensors, queues, readers, and libcsv's buffers), which lets embedders account memory and lets
 * the test suite fail the k-th allocation.  A failed allocation surfaces as
 * TFQ_RESOURCE_EXHAUSTED, never as a crash. */
#ifndef TFQ_ALLOC_H
#define TFQ_ALLOC_H

#include <stddef.h>
#include <tfq/export.h>
#include <tfq/status.h>

TFQ_EXTERN_C_BEGIN

typedef void *(*tfq_malloc_fn)(size_t size);
typedef void *(*tfq_realloc_fn)(void *ptr, size_t size);
typedef void (*tfq_free_fn)(void *ptr);

/* Installs the allocator used from now on; NULL for all three restores malloc/realloc/free.
 * The three must be given together (all NULL or none NULL), else TFQ_INVALID_ARGUMENT.
 * @return TFQ_OK, TFQ_INVALID_ARGUMENT (the allocator is unchanged).  Ownership: the function
 * pointers are kept until the next call.
 * REQUIRES: no tfq object is alive (memory must be freed by the allocator that made it).
 * Thread-safety: not concurrently with any other tfq call.  Since: 0.1 */
TFQ_API tfq_code tfq_set_allocator(tfq_malloc_fn m, tfq_realloc_fn r,
                                   tfq_free_fn f) TFQ_WARN_UNUSED;

/* Allocates through the installed allocator; NULL on failure (and for size 0 only if the
 * installed allocator returns NULL).  Ownership: free with tfq_free(); tfq_realloc() takes
 * `ptr` when it succeeds; tfq_free() takes `ptr` (NULL does nothing).  Thread-safety: any, as
 * the installed allocator.  Since: 0.1 */
TFQ_API void *tfq_malloc(size_t size);
TFQ_API void *tfq_realloc(void *ptr, size_t size);
TFQ_API void tfq_free(void *ptr);

TFQ_EXTERN_C_END

#endif
