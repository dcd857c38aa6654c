/* ReaderBaseState (TF's reader_base.proto, proto3): tfq_reader_serialize_state and
 * tfq_reader_restore_state, parsed as protobuf does in the reference wheel (docs/readers.md). */
#include <string.h>

#include "readers_internal.h"

static size_t put_varint(char *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (char)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (char)v;
  return n;
}

tfq_code tfq_reader_serialize_state(tfq_reader *r, char **state, size_t *len, tfq_status *st) {
  *state = NULL;
  *len = 0;
  if (!r->ops->serializable) return tfq_status_set(st, TFQ_UNIMPLEMENTED, "Reader SerializeState");
  tfq__lock(&r->mu);
  char *p = tfq_malloc(3 * 11 + 11 + r->work_len + 1);
  if (!p) {
    tfq__unlock(&r->mu);
    return TFQ__OOM(st);
  }
  size_t n = 0;
  int64_t f[3] = {r->work_started, r->work_finished, r->records};
  for (int i = 0; i < 3; i++)
    if (f[i]) {
      p[n++] = (char)((i + 1) << 3);
      n += put_varint(p + n, (uint64_t)f[i]);
    }
  if (r->work_len) {
    p[n++] = (char)((4 << 3) | 2);
    n += put_varint(p + n, r->work_len);
    memcpy(p + n, r->work, r->work_len);
    n += r->work_len;
  }
  tfq__unlock(&r->mu);
  *state = p;
  *len = n;
  tfq_status_clear(st);
  return TFQ_OK;
}

static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
  uint64_t x = 0;
  for (int sh = 0; sh < 70; sh += 7) {
    if (*p == end) return 0;
    unsigned char b = *(*p)++;
    x |= (uint64_t)(b & 0x7f) << sh; /* bits past 64 are dropped, as protobuf (and TF) do */
    if (!(b & 0x80)) {
      *v = x;
      return 1;
    }
  }
  return 0;
}

/* absl::CEscape: \n \r \t \" \' \\ and octal for other non-printable bytes. */
static void c_escape(tfq__buf *b, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    switch (c) {
      case '\n': tfq__buf_printf(b, "\\n"); break;
      case '\r': tfq__buf_printf(b, "\\r"); break;
      case '\t': tfq__buf_printf(b, "\\t"); break;
      case '"': tfq__buf_printf(b, "\\\""); break;
      case '\'': tfq__buf_printf(b, "\\'"); break;
      case '\\': tfq__buf_printf(b, "\\\\"); break;
      default:
        if (c < 0x20 || c >= 0x7f)
          tfq__buf_printf(b, "\\%03o", c);
        else
          tfq__buf_printf(b, "%c", c);
    }
  }
}

/* The protobuf debug string TF prints: "goo.gle/debugproto  \nwork_started: 1\n...". */
static void debug_state(tfq__buf *b, const int64_t f[3], const unsigned char *w, size_t wl) {
  static const char *names[3] = {"work_started", "work_finished", "num_records_produced"};
  tfq__buf_printf(b, "goo.gle/debugproto  \n");
  for (int i = 0; i < 3; i++)
    if (f[i]) tfq__buf_printf(b, "%s: %lld\n", names[i], (long long)f[i]);
  if (wl) {
    tfq__buf_printf(b, "current_work: \"");
    c_escape(b, w, wl);
    tfq__buf_printf(b, "\"\n");
  }
}

/* A tag as protobuf reads one: a varint of at most 5 bytes, bits past 32 dropped (the wheel
 * accepts 90 80 80 80 10 as field 2 and rejects a sixth byte).  0 on malformed input or field 0. */
static int get_tag(const unsigned char **p, const unsigned char *end, uint32_t *tag) {
  uint32_t x = 0;
  for (int i = 0; i < 5; i++) {
    if (*p == end) return 0;
    unsigned char b = *(*p)++;
    x |= (uint32_t)(b & 0x7f) << (7 * i); /* 7 * 4 = 28: the top bits shift out, as in protobuf */
    if (!(b & 0x80)) {
      *tag = x;
      return (x >> 3) != 0;
    }
  }
  return 0;
}

/* protobuf's recursion limit: the wheel accepts 100 nested groups and rejects 101. */
#define PROTO_MAX_DEPTH 100

/* Skips the value of an unknown field (tag already read) as protobuf does: varint, fixed64,
 * length-delimited, fixed32, or a group up to its END_GROUP with the same field number (nested
 * groups allowed, `depth` of them already open).  END_GROUP outside its group and wire types 6/7
 * fail.  Returns 1 when skipped, 0 on malformed input. */
static int skip_field(const unsigned char **q, const unsigned char *end, unsigned field,
                      unsigned wt, int depth) {
  uint64_t v;
  switch (wt) {
    case 0: return get_varint(q, end, &v);
    case 1:
    case 5: {
      size_t k = wt == 1 ? 8 : 4;
      if ((size_t)(end - *q) < k) return 0;
      *q += k;
      return 1;
    }
    case 2:
      if (!get_varint(q, end, &v) || v > (uint64_t)(end - *q)) return 0;
      *q += v;
      return 1;
    case 3:
      if (depth >= PROTO_MAX_DEPTH) return 0;
      for (;;) {
        uint32_t tag;
        if (!get_tag(q, end, &tag)) return 0;
        unsigned f = tag >> 3, t = tag & 7;
        if (t == 4) return f == field;
        if (!skip_field(q, end, f, t, depth + 1)) return 0;
      }
    default: return 0; /* END_GROUP without its group, or wire type 6/7 */
  }
}

static tfq_code restore_locked(tfq_reader *r, const unsigned char *p, size_t len, tfq_status *st) {
  char msg[TFQ__MSG_CAP];
  tfq__buf b = {msg, sizeof msg, 0};
  msg[0] = 0;
  if (!r->ops->serializable) return tfq_status_set(st, TFQ_UNIMPLEMENTED, "Reader RestoreState");
  int64_t f[3] = {0, 0, 0};
  const unsigned char *w = NULL, *q = p, *end = p + len;
  size_t wl = 0;
  int ok = 1;
  while (ok && q < end) {
    uint32_t tag;
    uint64_t v;
    if (!get_tag(&q, end, &tag)) {
      ok = 0;
      break;
    }
    unsigned field = tag >> 3, wt = tag & 7;
    if (wt == 0 && field >= 1 && field <= 3) {
      ok = get_varint(&q, end, &v);
      if (ok) f[field - 1] = (int64_t)v;
    } else if (wt == 2 && field == 4) {
      ok = get_varint(&q, end, &v) && v <= (uint64_t)(end - q);
      if (ok) {
        w = q;
        wl = (size_t)v;
        q += wl;
      }
    } else {
      /* A known field with another wire type is an unknown field to protobuf: skipped (TF too). */
      ok = skip_field(&q, end, field, wt, 0);
    }
  }
  if (!ok) {
    c_escape(&b, p, len);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Could not parse state for %s: %s", r->display,
                          msg);
  }
  if (f[0] < 0 || f[1] < 0 || f[2] < 0) {
    debug_state(&b, f, w, wl);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Unexpected negative value when restoring in %s: %s", r->display, msg);
  }
  if (f[0] > f[1]) {
    debug_state(&b, f, w, wl);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Inconsistent work started vs. finished when restoring in %s: %s",
                          r->display, msg);
  }
  tfq__reader_finish_work(r);
  if (tfq__reader_set_work(r, w ? (const char *)w : "", wl)) return TFQ__OOM(st);
  r->work_started = f[0];
  r->work_finished = f[1];
  r->records = f[2];
  return TFQ_OK;
}

tfq_code tfq_reader_restore_state(tfq_reader *r, const void *state, size_t len, tfq_status *st) {
  tfq__lock(&r->mu);
  tfq_code c = restore_locked(r, state, len, st);
  if (c) tfq__reader_reset_locked(r);
  tfq__unlock(&r->mu);
  if (!c) tfq_status_clear(st);
  return c;
}
