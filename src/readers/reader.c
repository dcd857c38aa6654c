/* ReaderBase (TF core/framework/reader_base.cc, paraphrased in spec/tf1-readers-csv.md §1):
 * work units from a queue, read / read_up_to, counters, reset, serialize/restore; the options;
 * string batches built in place; IdentityReader and WholeFileReader. */
#include <assert.h>
#include <string.h>

#include "readers_internal.h"

static void lock(pthread_mutex_t *m) {
  if (pthread_mutex_lock(m) != 0) abort();
}
static void unlock(pthread_mutex_t *m) {
  if (pthread_mutex_unlock(m) != 0) abort();
}

tfq_compression tfq_compression_from_string(const char *s) {
  if (s && strcmp(s, "ZLIB") == 0) return TFQ_COMPRESSION_ZLIB;
  if (s && strcmp(s, "GZIP") == 0) return TFQ_COMPRESSION_GZIP;
  return TFQ_COMPRESSION_NONE;
}

/* ---- string batches ---- */

tfq_code tfq__strbatch_init(tfq__strbatch *b, int64_t cap) {
  if (cap < 1) cap = 1;
  b->n = 0;
  return tfq__tensor_alloc(TFQ_STRING, &cap, 1, 0, &b->t, NULL);
}

/* Moves the strings and the arena of `from` into `to` (a new tensor of at least b->n slots). */
static void move_strings(tfq_tensor *to, tfq_tensor *from, int64_t n) {
  memcpy(to->data, from->data, (size_t)n * sizeof(tfq__str));
  to->arena = from->arena;
  from->arena = NULL;
}

tfq_code tfq__strbatch_reserve(tfq__strbatch *b, int64_t cap) {
  if (cap <= b->t->dims[0]) return TFQ_OK;
  tfq_tensor *t;
  if (tfq__tensor_alloc(TFQ_STRING, &cap, 1, 0, &t, NULL)) return TFQ_RESOURCE_EXHAUSTED;
  move_strings(t, b->t, b->n);
  tfq_tensor_free(b->t);
  b->t = t;
  return TFQ_OK;
}

tfq_code tfq__strbatch_push(tfq__strbatch *b, const char *p, size_t len) {
  if (b->n == b->t->dims[0] && tfq__strbatch_reserve(b, b->n * 2)) return TFQ_RESOURCE_EXHAUSTED;
  if (tfq__tensor_put_string(b->t, b->n, p, len)) return TFQ_RESOURCE_EXHAUSTED;
  b->n++;
  return TFQ_OK;
}

tfq_code tfq__strbatch_finish(tfq__strbatch *b, int scalar, tfq_tensor **out) {
  if (scalar) {
    assert(b->n == 1);
    tfq_tensor *t;
    if (tfq__tensor_alloc(TFQ_STRING, NULL, 0, 0, &t, NULL)) return TFQ_RESOURCE_EXHAUSTED;
    move_strings(t, b->t, 1);
    tfq_tensor_free(b->t);
    b->t = NULL;
    *out = t;
    return TFQ_OK;
  }
  /* Shrink the visible shape; the unused slots stay allocated until the tensor goes. */
  b->t->dims[0] = b->n;
  b->t->nelems = b->n;
  *out = b->t;
  b->t = NULL;
  return TFQ_OK;
}

void tfq__strbatch_free(tfq__strbatch *b) {
  tfq_tensor_free(b->t);
  b->t = NULL;
}

/* ---- options ---- */

tfq_code tfq_reader_options_new(tfq_reader_options **out, tfq_status *st) {
  tfq_reader_options *o = tfq__calloc(1, sizeof *o);
  *out = o;
  if (!o) return TFQ__OOM(st);
  o->max_line_bytes = TFQ_DEFAULT_MAX_LINE_BYTES;
  o->buffer_bytes = TFQ_DEFAULT_READ_BUFFER_BYTES;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_reader_options_free(tfq_reader_options *o) {
  if (!o) return;
  tfq_free(o->name);
  tfq_free(o);
}

tfq_code tfq_reader_options_set_name(tfq_reader_options *o, const char *name, tfq_status *st) {
  char *n = NULL;
  if (name && !(n = tfq__strdup(name))) return TFQ__OOM(st);
  tfq_free(o->name);
  o->name = n;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_reader_options_set_skip_header_lines(tfq_reader_options *o, int64_t n) {
  o->skip_header_lines = n;
}
void tfq_reader_options_set_record_bytes(tfq_reader_options *o, int64_t n) { o->record_bytes = n; }
void tfq_reader_options_set_header_bytes(tfq_reader_options *o, int64_t n) { o->header_bytes = n; }
void tfq_reader_options_set_footer_bytes(tfq_reader_options *o, int64_t n) { o->footer_bytes = n; }
void tfq_reader_options_set_hop_bytes(tfq_reader_options *o, int64_t n) { o->hop_bytes = n; }
void tfq_reader_options_set_compression(tfq_reader_options *o, tfq_compression c) {
  o->compression = c;
}
void tfq_reader_options_set_tf_compat_truncation(tfq_reader_options *o, int on) {
  o->tf_compat_truncation = on != 0;
}
void tfq_reader_options_set_max_line_bytes(tfq_reader_options *o, size_t n) {
  o->max_line_bytes = n;
}
void tfq_reader_options_set_buffer_bytes(tfq_reader_options *o, size_t n) { o->buffer_bytes = n; }

/* ---- construction ---- */

tfq_code tfq_reader_new(tfq_reader_kind kind, const tfq_reader_options *opts, tfq_reader **out,
                        tfq_status *st) {
  *out = NULL;
  const tfq__reader_ops *ops;
  switch (kind) {
    case TFQ_READER_TEXT_LINE: ops = &tfq__textline_ops; break;
    case TFQ_READER_FIXED_LENGTH: ops = &tfq__fixedlen_ops; break;
    case TFQ_READER_TFRECORD: ops = &tfq__tfrecord_ops; break;
    case TFQ_READER_WHOLE_FILE: ops = &tfq__wholefile_ops; break;
    case TFQ_READER_IDENTITY: ops = &tfq__identity_ops; break;
    default: return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown reader kind %d", (int)kind);
  }
  tfq_reader_options def = {0};
  def.max_line_bytes = TFQ_DEFAULT_MAX_LINE_BYTES;
  def.buffer_bytes = TFQ_DEFAULT_READ_BUFFER_BYTES;
  const tfq_reader_options *o = opts ? opts : &def;
  if (kind == TFQ_READER_TEXT_LINE && o->skip_header_lines < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "skip_header_lines must be >= 0 not %lld",
                          (long long)o->skip_header_lines);
  if (kind == TFQ_READER_FIXED_LENGTH) {
    const char *names[4] = {"header_bytes", "record_bytes", "footer_bytes", "hop_bytes"};
    int64_t v[4] = {o->header_bytes, o->record_bytes, o->footer_bytes, o->hop_bytes};
    for (int i = 0; i < 4; i++)
      if (v[i] < 0)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s must be >= 0 not %lld", names[i],
                              (long long)v[i]);
  }
  if (kind == TFQ_READER_TEXT_LINE && o->max_line_bytes == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "max_line_bytes must be >= 1");
  if (o->compression != TFQ_COMPRESSION_NONE && o->compression != TFQ_COMPRESSION_ZLIB &&
      o->compression != TFQ_COMPRESSION_GZIP)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown compression %d", (int)o->compression);
  tfq_reader *r = tfq__calloc(1, sizeof *r);
  if (!r) return TFQ__OOM(st);
  r->ops = ops;
  r->o = *o;
  r->o.name = NULL;
  if (r->o.buffer_bytes < 64) r->o.buffer_bytes = 64;
  const char *name = o->name ? o->name : ops->op_name;
  size_t dl = strlen(ops->kind_name) + strlen(name) + 4;
  r->display = tfq_malloc(dl);
  r->o.name = tfq__strdup(name);
  if (!r->display || !r->o.name || pthread_mutex_init(&r->mu, NULL) != 0) {
    tfq_free(r->display);
    tfq_free(r->o.name);
    tfq_free(r);
    return TFQ__OOM(st);
  }
  snprintf(r->display, dl, "%s '%s'", ops->kind_name, name);
  *out = r;
  tfq_status_clear(st);
  return TFQ_OK;
}

static void finish_work(tfq_reader *r) {
  if (r->ops->finish) r->ops->finish(r);
  tfq__instream_close(r->in);
  r->in = NULL;
  r->index = 0;
  r->skip = 0;
  r->scanned = 0;
}

void tfq_reader_free(tfq_reader *r) {
  if (!r) return;
  finish_work(r);
  pthread_mutex_destroy(&r->mu);
  tfq_free(r->work);
  tfq_free(r->key);
  tfq_free(r->display);
  tfq_free(r->o.name);
  tfq_free(r);
}

const char *tfq_reader_name(const tfq_reader *r) { return r->display; }

/* ---- helpers for the kinds ---- */

tfq_code tfq__reader_open(tfq_reader *r, tfq_status *st) {
  return tfq__instream_open(r->work, r->o.compression, r->o.buffer_bytes, r->o.tf_compat_truncation,
                            &r->in, st);
}

static tfq_code set_work(tfq_reader *r, const char *p, size_t len) {
  if (len + 1 > r->work_cap) {
    char *w = tfq_realloc(r->work, len + 1);
    if (!w) return TFQ_RESOURCE_EXHAUSTED;
    r->work = w;
    r->work_cap = len + 1;
  }
  memcpy(r->work, p, len);
  r->work[len] = 0;
  r->work_len = len;
  /* key prefix "<work>:", in every copy */
  size_t stride = (len + 64 + 63) / 64 * 64;
  if (stride > SIZE_MAX / TFQ__KEY_COPIES) return TFQ_RESOURCE_EXHAUSTED;
  if (stride * TFQ__KEY_COPIES > r->key_cap) {
    char *k = tfq_realloc(r->key, stride * TFQ__KEY_COPIES);
    if (!k) return TFQ_RESOURCE_EXHAUSTED;
    r->key = k;
    r->key_cap = stride * TFQ__KEY_COPIES;
  }
  r->key_stride = stride;
  for (int i = 0; i < TFQ__KEY_COPIES; i++) {
    char *k = r->key + (size_t)i * stride;
    memcpy(k, p, len);
    k[len] = ':';
    memset(k + len + 1, '0', stride - len - 1);
  }
  return TFQ_OK;
}

tfq_code tfq__reader_emit_num(tfq_reader *r, tfq__sink *out, uint64_t num, const char *v,
                              size_t vlen, tfq_status *st) {
  char digits[24];
  int nd = 0;
  do {
    digits[nd++] = (char)('0' + num % 10);
    num /= 10;
  } while (num);
  char *k = r->key + r->work_len + 1;
  for (int i = 0; i < nd; i++) k[i] = digits[nd - 1 - i];
  if (tfq__strbatch_push(&out->keys, r->key, r->work_len + 1 + (size_t)nd) ||
      tfq__strbatch_push(&out->values, v, vlen))
    return TFQ__OOM(st);
  return TFQ_OK;
}

/* ---- the base algorithm ---- */

/* Dequeues the next work unit and starts it (GetNextWorkLocked + OnWorkStartedLocked). */
static tfq_code next_work(tfq_reader *r, tfq_queue *work, tfq_cancel *cancel, tfq_status *st) {
  const tfq_spec *spec = tfq_queue_spec(work);
  if (tfq_spec_size(spec) != 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Expected single component queue");
  if (tfq_spec_dtype(spec, 0) != TFQ_STRING)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Expected queue with single string component");
  tfq_tuple *t;
  tfq_code c = tfq_queue_dequeue(work, &t, cancel, TFQ_NO_TIMEOUT, st);
  if (c) return c;
  tfq_tensor *w = tfq_tuple_get(t, 0);
  if (tfq_tensor_num_elements(w) != 1) {
    tfq_tuple_free(t);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected to dequeue a one-element string tensor");
  }
  size_t len;
  const char *p = tfq_tensor_string(w, 0, &len);
  c = set_work(r, p, len);
  tfq_tuple_free(t);
  if (c) return TFQ__OOM(st);
  r->index = 0;
  r->skip = 0;
  r->scanned = 0;
  if (r->ops->start) {
    c = r->ops->start(r, st);
    if (c) {
      finish_work(r);
      return c;
    }
  }
  r->work_started++;
  return TFQ_OK;
}

static tfq_code take_pending(tfq_reader *r, tfq_status *st) {
  tfq_code c = r->pend_code;
  if (!c) return TFQ_OK;
  r->pend_code = TFQ_OK;
  return tfq_status_set(st, c, "%s", r->pend_msg);
}

static tfq_code read_locked(tfq_reader *r, tfq_queue *work, int64_t n, tfq__sink *out,
                            tfq_cancel *cancel, tfq_status *st) {
  tfq_code c = take_pending(r, st);
  if (c) return c;
  while (out->keys.n < n) {
    if (r->work_finished >= r->work_started) {
      if (out->keys.n > 0) break;
      c = next_work(r, work, cancel, st);
      if (c) return c;
    }
    int produced = 0, at_end = 0;
    if (r->ops->next_many) {
      int64_t before = out->keys.n;
      c = r->ops->next_many(r, out, n - before, &at_end, st);
      produced = out->keys.n > before;
    } else {
      c = r->ops->next(r, out, &produced, &at_end, st);
    }
    if (c) {
      out->keys.n = out->values.n; /* drop a key whose value could not be stored */
      if (out->keys.n > 0) {
        r->pend_code = c;
        snprintf(r->pend_msg, sizeof r->pend_msg, "%s", tfq_status_message(st));
        break;
      }
      return c;
    }
    if (at_end) {
      finish_work(r);
      r->work_finished = r->work_started;
      if (out->keys.n > 0) break;
    } else if (!produced) {
      return tfq_status_set(st, TFQ_INTERNAL, "%s produced no record and did not reach the end",
                            r->display);
    }
  }
  r->records += out->keys.n;
  return TFQ_OK;
}

/* Where the calling thread's last failed read stopped (tfq__reader_error_where). */
static _Thread_local char t_where_file[1024];
static _Thread_local int64_t t_where_off = -1;

static void note_where(tfq_reader *r) { /* r->mu held */
  snprintf(t_where_file, sizeof t_where_file, "%s", r->work ? r->work : "");
  t_where_off = r->in ? (int64_t)tfq__instream_pos(r->in) : -1;
}

const char *tfq__reader_error_where(int64_t *offset) {
  *offset = t_where_off;
  return t_where_file;
}

static tfq_code read_common(tfq_reader *r, tfq_queue *work, int64_t n, int scalar,
                            tfq_tensor **keys, tfq_tensor **values, tfq_cancel *cancel,
                            tfq_status *st) {
  *keys = *values = NULL;
  if (n < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "num_records must be >= 0 not %lld",
                          (long long)n);
  tfq__sink out;
  int64_t cap = n < 1024 ? n : 1024; /* read_up_to(1024) fills its tensors without regrowing */
  if (tfq__strbatch_init(&out.keys, cap)) return TFQ__OOM(st);
  if (tfq__strbatch_init(&out.values, cap)) {
    tfq__strbatch_free(&out.keys);
    return TFQ__OOM(st);
  }
  tfq_code c = TFQ_OK;
  if (n > 0) {
    lock(&r->mu);
    c = read_locked(r, work, n, &out, cancel, st);
    if (c) note_where(r);
    unlock(&r->mu);
  }
  if (!c && (tfq__strbatch_finish(&out.keys, scalar, keys) ||
             tfq__strbatch_finish(&out.values, scalar, values))) {
    tfq_tensor_free(*keys);
    *keys = NULL;
    c = TFQ__OOM(st); /* the records are counted but lost: only under memory exhaustion */
  }
  tfq__strbatch_free(&out.keys);
  tfq__strbatch_free(&out.values);
  if (!c) tfq_status_clear(st);
  return c;
}

tfq_code tfq_reader_read(tfq_reader *r, tfq_queue *work, tfq_tensor **key, tfq_tensor **value,
                         tfq_cancel *cancel, tfq_status *st) {
  return read_common(r, work, 1, 1, key, value, cancel, st);
}

tfq_code tfq_reader_read_up_to(tfq_reader *r, tfq_queue *work, int64_t n, tfq_tensor **keys,
                               tfq_tensor **values, tfq_cancel *cancel, tfq_status *st) {
  return read_common(r, work, n, 0, keys, values, cancel, st);
}

int64_t tfq_reader_num_records_produced(tfq_reader *r) {
  lock(&r->mu);
  int64_t v = r->records;
  unlock(&r->mu);
  return v;
}

int64_t tfq_reader_num_work_units_completed(tfq_reader *r) {
  lock(&r->mu);
  int64_t v = r->work_finished;
  unlock(&r->mu);
  return v;
}

static void reset_locked(tfq_reader *r) {
  finish_work(r);
  r->work_started = r->work_finished = r->records = 0;
  r->work_len = 0;
  if (r->work) r->work[0] = 0;
  r->pend_code = TFQ_OK;
}

tfq_code tfq_reader_reset(tfq_reader *r, tfq_status *st) {
  lock(&r->mu);
  reset_locked(r);
  unlock(&r->mu);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- ReaderBaseState (proto3) ---- */

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
  lock(&r->mu);
  char *p = tfq_malloc(3 * 11 + 11 + r->work_len + 1);
  if (!p) {
    unlock(&r->mu);
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
  unlock(&r->mu);
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
  finish_work(r);
  if (set_work(r, w ? (const char *)w : "", wl)) return TFQ__OOM(st);
  r->work_started = f[0];
  r->work_finished = f[1];
  r->records = f[2];
  return TFQ_OK;
}

tfq_code tfq_reader_restore_state(tfq_reader *r, const void *state, size_t len, tfq_status *st) {
  lock(&r->mu);
  tfq_code c = restore_locked(r, state, len, st);
  if (c) reset_locked(r);
  unlock(&r->mu);
  if (!c) tfq_status_clear(st);
  return c;
}

/* ---- IdentityReader ---- */

static tfq_code identity_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                              tfq_status *st) {
  if (tfq__strbatch_push(&out->keys, r->work, r->work_len) ||
      tfq__strbatch_push(&out->values, r->work, r->work_len))
    return TFQ__OOM(st);
  *produced = *at_end = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__identity_ops = {
    "IdentityReader", "IdentityReaderV2", 1, NULL, identity_next, NULL, NULL};

/* ---- WholeFileReader: opens inside the read, so an open failure is sticky (as in TF) ---- */

static tfq_code wholefile_next(tfq_reader *r, tfq__sink *out, int *produced, int *at_end,
                               tfq_status *st) {
  if (!r->in) {
    tfq_code c = tfq__reader_open(r, st);
    if (c) return c;
  }
  const char *p;
  size_t avail, want = r->o.buffer_bytes;
  for (;;) {
    tfq_code c = tfq__instream_ensure(r->in, want, &p, &avail, st);
    if (c) return c;
    if (avail < want) break;
    if (want > SIZE_MAX / 2) return TFQ__OOM(st);
    want *= 2;
  }
  if (tfq__strbatch_push(&out->keys, r->work, r->work_len) ||
      tfq__strbatch_push(&out->values, p, avail))
    return TFQ__OOM(st);
  *produced = *at_end = 1;
  return TFQ_OK;
}

const tfq__reader_ops tfq__wholefile_ops = {
    "WholeFileReader", "WholeFileReaderV2", 1, NULL, wholefile_next, NULL, NULL};
