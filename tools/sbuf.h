/* A growable, always NUL-terminated byte buffer for tfq-cat and its option parser (private to
 * tools/, not installed).  The including file declares, before including this header,
 *   void *xrealloc(void *p, size_t n);   (static in tfq_cat_args.c)
 * which never returns NULL: it exits (tfq-cat, cat_util.c) or unwinds to the entry call
 * (tfq_cat_args.c).
 * A zero-initialised sbuf is empty; the owner frees `p` with free().  Not thread-safe. */
#ifndef TFQ_TOOLS_SBUF_H
#define TFQ_TOOLS_SBUF_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  char *p;
  size_t n, cap;
} sbuf;

/* Makes room for `more` bytes plus the terminating NUL. */
static inline void sb_grow(sbuf *b, size_t more) {
  if (b->n + more + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 64;
    while (c < b->n + more + 1) c *= 2;
    b->p = xrealloc(b->p, c);
    b->cap = c;
  }
}
static inline void sb_add(sbuf *b, const char *s, size_t n) {
  sb_grow(b, n);
  if (n) memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static inline void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }
static inline void sb_putc(sbuf *b, char c) { sb_add(b, &c, 1); }
static inline void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  sb_grow(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}
/* Empties the buffer, keeping its memory. */
static inline void sb_clear(sbuf *b) {
  b->n = 0;
  if (b->p) b->p[0] = 0;
}

#endif
