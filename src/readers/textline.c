/* TextLineReader (docs/readers.md): lines split at '\n', one trailing '\r' removed,
 * a non-empty final fragment is a line, header lines skipped per file, keys "<file>:<line>". */
#include <string.h>

#include "readers_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static tfq_code too_long(tfq_reader *r, tfq_status *st) {
  r->scanned = 0;
  tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED,
                 "line %lld of %s is longer than max_line_bytes (%zu) at offset %llu",
                 (long long)r->index + 1, r->work, r->o.max_line_bytes,
                 (unsigned long long)tfq__instream_pos(r->in));
  tfq__status_names_file(st);
  return TFQ_RESOURCE_EXHAUSTED;
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

/* ---- the batch path (read_up_to) ----
 * Lines wholly inside the buffered bytes are found with memchr straight over the buffer; a run of
 * m of them (the "span") then costs one arena allocation and one memcpy for the values, one
 * allocation for the keys, and per line a 32-byte-block copy of "<work>:<digits>" whose decimal
 * line number is incremented in place.  Anything else (a line that crosses the buffer end, the
 * last fragment, end of file, a line over max_line_bytes or longer than buffer_bytes, errors)
 * goes through textline_next one line at a time, so the rules live in one place. */

#if defined(__SSE2__)
/* Bit i set: p[i] == '\n', for the 64 bytes at p. */
static inline uint64_t newline_mask64(const char *p) {
  const __m128i nl = _mm_set1_epi8('\n');
  uint64_t m = 0;
  for (int k = 0; k < 4; k++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
    m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
  }
  return m;
}
#endif

/* Scans up to `limit` complete, ordinary lines at the start of buf[0, avail) into vs[] (pointers
 * into buf).  *span: bytes they cover; *tail: set when the scan stopped because buf[*span, avail)
 * holds no '\n'.  The '\n's are found 64 bytes at a time as a bit mask (SSE2), one memchr call
 * a line only in the last 63 bytes: lines of a feature file are ~100 bytes, too short for a
 * memchr call per line to pay its set-up and its mispredicted exit. */
static int64_t scan_lines(const tfq_reader *r, const char *buf, size_t avail, tfq__str *vs,
                          int64_t limit, size_t *span, int *tail) {
  const char *q = buf, *end = buf + avail;
  const char *next = buf, *base = buf; /* next: the first byte no mask has covered */
  uint64_t mask = 0;                   /* the '\n's of base[0, 64) not yet taken */
  size_t max_len = r->o.max_line_bytes, max_consume = r->o.buffer_bytes;
  int64_t m = 0;
  *tail = 0;
  while (m < limit) {
    const char *nl;
    if (mask) {
      nl = base + __builtin_ctzll(mask);
      mask &= mask - 1;
    } else {
#if defined(__SSE2__)
      if ((size_t)(end - next) >= 64) {
        base = next;
        mask = newline_mask64(base);
        next += 64;
        continue;
      }
#endif
      nl = memchr(next, '\n', (size_t)(end - next));
      if (!nl) {
        *tail = 1;
        break;
      }
      next = nl + 1;
    }
    size_t len = (size_t)(nl - q);
    if (len >= max_consume) break; /* consume > buffer_bytes: textline_next trims */
    if (len && nl[-1] == '\r') len--;
    if (len > max_len) break; /* textline_next reports it */
    vs[m].p = q;
    vs[m].len = len;
    m++;
    q = nl + 1;
  }
  *span = (size_t)(q - buf);
  return m;
}

static int format_digits(char *d, uint64_t v) {
  char tmp[24];
  int nd = 0;
  do {
    tmp[nd++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < nd; i++) d[i] = tmp[nd - 1 - i];
  return nd;
}

static int count_digits(uint64_t v) {
  int nd = 1;
  while (v >= 10) {
    v /= 10;
    nd++;
  }
  return nd;
}

#define KEY_BLOCK 32
_Static_assert((TFQ__KEY_COPIES & (TFQ__KEY_COPIES - 1)) == 0 && TFQ__KEY_COPIES <= 10,
               "a power of two, at most one decimal carry per step");

/* Copies the m scanned lines (vs[] points into buf, span bytes) into the value tensor's arena,
 * writes their keys, and consumes them. */
static tfq_code commit_lines(tfq_reader *r, tfq__sink *out, const char *buf, size_t span, int64_t m,
                             tfq_status *st) {
  tfq__str *vs = tfq__strs(out->values.t) + out->values.n;
  tfq__str *ks = tfq__strs(out->keys.t) + out->keys.n;
  uint64_t first = (uint64_t)r->index + 1;
  size_t plen = r->work_len + 1; /* "<work>:" */
  size_t kmax = plen + (size_t)count_digits(first + (uint64_t)m - 1), kbytes;
  if (!tfq__mul_ok((size_t)m, kmax, &kbytes) || kbytes > SIZE_MAX - KEY_BLOCK) return TFQ__OOM(st);
  char *va = tfq__tensor_arena_alloc(out->values.t, span);
  char *ka = va ? tfq__tensor_arena_alloc(out->keys.t, kbytes + KEY_BLOCK) : NULL;
  if (!ka) return TFQ__OOM(st);
  memcpy(va, buf, span);
  /* Key copy c holds line first + c, first + c + K, ...: a copy is advanced right after use and
   * read again K lines later, so the wide loads below never wait on the byte stores of the
   * increment (a store-forwarding stall per line when one buffer was reused). */
  enum { K = TFQ__KEY_COPIES };
  size_t stride = r->key_stride;
  int nds[K];
  for (int c = 0; c < K; c++) nds[c] = format_digits(r->key + (size_t)c * stride + plen, first + c);
  for (int64_t i = 0; i < m; i++) {
    vs[i].p = va + (vs[i].p - buf);
    int c = (int)(i & (K - 1)), nd = nds[c];
    char *key = r->key + (size_t)c * stride, *d = key + plen;
    /* the key, in whole blocks: a copy is readable to work_len + 64 (>= the rounded key length)
     * and the arena has KEY_BLOCK bytes of slack; the next key overwrites the excess */
    size_t kl = plen + (size_t)nd;
    for (size_t o = 0; o < kl; o += KEY_BLOCK) memcpy(ka + o, key + o, KEY_BLOCK);
    ks[i].p = ka;
    ks[i].len = kl;
    ka += kl;
    /* line number + K, in decimal */
    int j = nd - 1, v = d[j] - '0' + K;
    if (v < 10) {
      d[j] = (char)('0' + v);
      continue;
    }
    d[j--] = (char)('0' + v - 10);
    while (j >= 0 && d[j] == '9') d[j--] = '0';
    if (j >= 0) {
      d[j]++;
    } else { /* one digit more: "1" and the digits carried */
      memmove(d + 1, d, (size_t)nd);
      d[0] = '1';
      nds[c] = nd + 1;
    }
  }
  out->values.n += m;
  out->keys.n += m;
  r->index += m;
  tfq__instream_consume(r->in, span);
  return TFQ_OK;
}

/* The read-decode op's take (readers_shared.h), r->mu held and a work unit current: up to n
 * complete lines from the buffer into `vt`, bytes copied in one block.  When the buffer cannot
 * give n complete lines (it ends in a line that crosses its end), its unconsumed bytes are moved
 * to its front and it is refilled once, as next_line would, before the lines are taken: the op
 * then keeps to this path across refills, in steps of n lines (a step of fewer would give the op
 * outputs of another shape, which it could not refill in place).  What the refill cannot settle
 * (end of file and its last fragment, a read error, a line longer than the buffer or than
 * max_line_bytes) is left to textline_next, which holds those rules.  Returns the number of
 * lines (0: none could be had this way), or -1 out of memory (nothing taken). */
int64_t tfq__textline_take(tfq_reader *r, tfq_tensor *vt, int64_t n, int64_t *first,
                           const char **work) {
  size_t avail, span = 0;
  int tail = 0;
  const char *buf = tfq__instream_peek(r->in, &avail);
  tfq__str *vs = tfq__strs(vt);
  int64_t m = r->scanned ? 0 : scan_lines(r, buf, avail, vs, n, &span, &tail);
  if (m < n && (r->scanned || tail) && avail < tfq__instream_capacity(r->in)) {
    size_t got;
    tfq_status local;
    tfq_status_clear(&local);
    /* The bytes may move even when nothing more comes (end of file, an error): scan again.  An
     * error stays with the stream: textline_next meets it again and reports it. */
    (void)tfq__instream_ensure(r->in, avail + 1, &buf, &got, &local);
    avail = got;
    r->scanned = 0;
    m = scan_lines(r, buf, avail, vs, n, &span, &tail);
  }
  if (m == 0) {
    if (tail) r->scanned = avail; /* searched already: no '\n' in the buffer */
    return 0;
  }
  char *blk = tfq__tensor_arena_take(vt, span + r->work_len);
  if (!blk) return -1;
  memcpy(blk, buf, span);
  if (r->work_len) memcpy(blk + span, r->work, r->work_len);
  for (int64_t i = 0; i < m; i++) vs[i].p = blk + (vs[i].p - buf);
  *work = blk + span;
  *first = r->index + 1;
  r->index += m;
  tfq__instream_consume(r->in, span);
  if (tail) r->scanned = avail - span; /* searched already: no '\n' in the rest */
  return m;
}

static tfq_code textline_next_many(tfq_reader *r, tfq__sink *out, int64_t want, int *at_end,
                                   tfq_status *st) {
  int64_t target = out->keys.n + want;
  while (out->keys.n < target) {
    int64_t cap = out->values.t->dims[0];
    if (out->keys.t->dims[0] < cap) cap = out->keys.t->dims[0];
    if (cap == out->values.n) { /* room for more: double, up to what is asked for */
      cap = cap * 2 < target ? cap * 2 : target;
      if (tfq__strbatch_reserve(&out->keys, cap) || tfq__strbatch_reserve(&out->values, cap))
        return TFQ__OOM(st);
    }
    if (r->scanned == 0) { /* r->scanned > 0: the current line is known to cross the buffer */
      size_t avail, span;
      int tail;
      const char *buf = tfq__instream_peek(r->in, &avail);
      int64_t limit = target - out->keys.n;
      if (limit > cap - out->values.n) limit = cap - out->values.n;
      int64_t m =
          scan_lines(r, buf, avail, tfq__strs(out->values.t) + out->values.n, limit, &span, &tail);
      if (m > 0) {
        tfq_code c = commit_lines(r, out, buf, span, m, st);
        if (c) return c;
        if (tail) r->scanned = avail - span; /* searched already: no '\n' in the rest */
        continue;
      }
      if (tail) r->scanned = avail;
    }
    int produced = 0;
    tfq_code c = textline_next(r, out, &produced, at_end, st);
    if (c || *at_end) return c;
  }
  return TFQ_OK;
}

const tfq__reader_ops tfq__textline_ops = {"TextLineReader",  "TextLineReaderV2", 0,
                                           textline_start,    textline_next,      NULL,
                                           textline_next_many};
