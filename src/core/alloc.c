#include <string.h>

#include "base.h"

/* The installed allocator.  Written only while no tfq object is alive (documented REQUIRES), so
 * plain loads are enough; relaxed atomics keep TSan quiet when tests swap allocators between
 * phases. */
static _Atomic(tfq_malloc_fn) g_malloc = malloc;
static _Atomic(tfq_realloc_fn) g_realloc = realloc;
static _Atomic(tfq_free_fn) g_free = free;

tfq_code tfq_set_allocator(tfq_malloc_fn m, tfq_realloc_fn r, tfq_free_fn f) {
  if (!m && !r && !f) {
    m = malloc;
    r = realloc;
    f = free;
  } else if (!m || !r || !f) {
    return TFQ_INVALID_ARGUMENT;
  }
  atomic_store_explicit(&g_malloc, m, memory_order_relaxed);
  atomic_store_explicit(&g_realloc, r, memory_order_relaxed);
  atomic_store_explicit(&g_free, f, memory_order_relaxed);
  return TFQ_OK;
}

void *tfq_malloc(size_t size) {
  return atomic_load_explicit(&g_malloc, memory_order_relaxed)(size ? size : 1);
}

void *tfq_realloc(void *ptr, size_t size) {
  return atomic_load_explicit(&g_realloc, memory_order_relaxed)(ptr, size ? size : 1);
}

void tfq_free(void *ptr) {
  if (ptr) atomic_load_explicit(&g_free, memory_order_relaxed)(ptr);
}

void *tfq__calloc(size_t n, size_t size) {
  size_t total;
  if (!tfq__mul_ok(n, size, &total)) return NULL;
  void *p = tfq_malloc(total);
  if (p) memset(p, 0, total);
  return p;
}

char *tfq__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = tfq_malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}
