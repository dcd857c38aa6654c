/* tfq-cat's helpers: messages, exits, allocation that never fails (see cat_app.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cat_app.h"

static void vwarnx(const char *fmt, va_list ap) {
  fprintf(stderr, "%s: ", g_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void warnx_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwarnx(fmt, ap);
  va_end(ap);
}

_Noreturn void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwarnx(fmt, ap);
  va_end(ap);
  fprintf(stderr, "Try '%s --help' for more information.\n", g_prog);
  exit(EXIT_USAGE);
}

_Noreturn void die_oom(void) {
  fprintf(stderr, "%s: out of memory\n", g_prog);
  exit(EXIT_DATA);
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die_oom();
  return p;
}
void *xcalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) die_oom();
  return p;
}
void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) die_oom();
  return p;
}
char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}
char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
