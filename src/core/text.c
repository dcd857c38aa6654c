#define TFQ_EXPERIMENTAL /* defines tfq_shape_format */
#include <stdarg.h>
#include <string.h>
#include <tfq/experimental.h>

#include "base.h"

void tfq__buf_printf(tfq__buf *b, const char *fmt, ...) {
  if (b->cap == 0) return;
  if (b->len >= b->cap) b->len = b->cap - 1;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
  if (b->len >= b->cap) b->len = b->cap - 1;
}

void tfq__buf_shape(tfq__buf *b, const int64_t *dims, int rank) {
  if (rank < 0) {
    tfq__buf_printf(b, "<unknown>");
    return;
  }
  tfq__buf_printf(b, "[");
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      tfq__buf_printf(b, "%s?", i ? "," : "");
    else
      tfq__buf_printf(b, "%s%lld", i ? "," : "", (long long)dims[i]);
  }
  tfq__buf_printf(b, "]");
}

void tfq__buf_spec_shapes(tfq__buf *b, const tfq_spec *s) {
  tfq__buf_printf(b, "[");
  int first = 1;
  for (size_t i = 0; i < s->n; i++) {
    if (s->c[i].rank == TFQ_UNKNOWN_RANK) continue;
    if (!first) tfq__buf_printf(b, ", ");
    first = 0;
    tfq__buf_shape(b, s->c[i].dims, s->c[i].rank);
  }
  tfq__buf_printf(b, "]");
}

void tfq__buf_spec_dtypes(tfq__buf *b, const tfq_spec *s) {
  for (size_t i = 0; i < s->n; i++)
    tfq__buf_printf(b, "%s%s", i ? ", " : "", tfq_dtype_name(s->c[i].dtype));
}

size_t tfq_shape_format(const int64_t *dims, int rank, char *buf, size_t cap) {
  char tmp[TFQ_MAX_RANK * 22 + 16];
  tfq__buf b = {tmp, sizeof tmp, 0};
  tfq__buf_shape(&b, dims, rank);
  if (cap) {
    size_t n = b.len < cap - 1 ? b.len : cap - 1;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
  }
  return b.len;
}
