/* TextLineReader (spec/tf1-readers-csv.md §2): lines split at '\n', one trailing '\r' removed,
 * a non-empty final fragment is a line, header lines skipped per file, keys "<file>:<line>". */
#include <string.h>

#include "readers_internal.h"

static tfq_code too_long(tfq_reader *r, tfq_status *st) {
  r->scanned = 0;
  return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED,
                        "line %lld of %s is longer than max_line_bytes (%zu) at offset %llu",
                        (long long)r->index + 1, r->work, r->o.max_line_bytes,
                        (unsigned long long)tfq__instream_pos(r->in));
}

/* Finds the next line.  *line and *len receive it (terminator removed), *consume the bytes to drop
 * after use; *eof is set (and nothing else) at the end of the file. */
static tfq_code next_line(tfq_reader *r, const char **line, size_t *len, size_t *consume, int *eof,
                          tfq_status *st) {
  size_t avail;
  const char *p = tfq__instream_peek(r->in, &avail);
  for (;;) {
    const char *nl = r->scanned < avail ? memchr(p + r->scanned, '\n', avail - r->scanned) : NULL;
    if (nl) {
      size_t n = (size_t)(nl - p);
      *consume = n + 1;
      if (n && p[n - 1] == '\r') n--;
      if (n > r->o.max_line_bytes) return too_long(r, st);
      *line = p;
      *len = n;
      *eof = 0;
      r->scanned = 0;
      return TFQ_OK;
    }
    r->scanned = avail;
    if (avail > r->o.max_line_bytes + 1) /* + 1: the line's '\r' */
      return too_long(r, st);
    size_t got;
    tfq_code c = tfq__instream_ensure(r->in, avail + 1, &p, &got, st);
    if (c) return c;
    if (got == avail) { /* end of file: the fragment is a line if non-empty after '\r' */
      size_t n = avail;
      if (n && p[n - 1] == '\r') n--;
      r->scanned = 0;
      if (n == 0) {
        *eof = 1;
        return TFQ_OK;
      }
      if (n > r->o.max_line_bytes) return too_long(r, st);
      *line = p;
      *len = n;
      *consume = avail;
      *eof = 0;
      return TFQ_OK;
    }
    avail = got;
  }
}

static tfq_code textline_start(tfq_reader *r, tfq_status *st) {
  tfq_code c = tfq__reader_open(r, st);
  if (c) return c;
  for (int64_t i = 0; i < r->o.skip_header_lines; i++) {
    const char *line;
    size_t len, consume;
    int eof;
    c = next_line(r, &line, &len, &consume, &eof, st);
    if (c) return c;
    if (eof) break; /* EOF inside the header is not an error: the file yields nothing */
    tfq__instream_consume(r->in, consume);
    r->index++;
  }
  return TFQ_OK;
}

static tfq_code textline_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                              tfq_status *st) {
  const char *line;
  size_t len, consume;
  int eof;
  tfq_code c = next_line(r, &line, &len, &consume, &eof, st);
  if (c) return c;
  if (eof) {
    *at_end = 1;
    return TFQ_OK;
  }
  c = tfq__reader_emit_num(r, out, (uint64_t)r->index + 1, line, len, st);
  if (c) return c;
  r->index++;
  tfq__instream_consume(r->in, consume);
  if (consume > r->o.buffer_bytes) tfq__instream_trim(r->in);
  *produced = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__textline_ops = {"TextLineReader", "TextLineReaderV2", 0,
                                           textline_start,   textline_next,      NULL};
