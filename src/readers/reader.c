/* ReaderBase (TF core/framework/reader_base.cc; docs/readers.md): work units from a queue,
 * read / read_up_to, counters, reset; the options; string batches built in place.  The saved
 * state is in reader_state.c, IdentityReader and WholeFileReader in wholefile.c. */
#include <stdio.h>
#include <string.h>

#include "readers_internal.h"
#include "readers_shared.h"

tfq_compression tfq_compression_from_string(const char *s) {
  if (s && strcmp(s, "ZLIB") == 0) return TFQ_COMPRESSION_ZLIB;
  if (s && strcmp(s, "GZIP") == 0) return TFQ_COMPRESSION_GZIP;
  return TFQ_COMPRESSION_NONE;
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
      o->compression != TFQ_COMPRESSION_GZIP && o->compression != TFQ_COMPRESSION_AUTO)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown compression %d", (int)o->compression);
  tfq_reader *r = tfq__calloc(1, sizeof *r);
  if (!r) return TFQ__OOM(st);
  r->ops = ops;
  r->kind = kind;
  r->o = *o;
  r->o.name = NULL;
  if (r->o.buffer_bytes < 64) r->o.buffer_bytes = 64;
  const char *name = o->name ? o->name : ops->op_name;
  size_t dl = strlen(ops->kind_name) + strlen(name) + 4;
  r->display = tfq_malloc(dl);
  r->o.name = tfq__strdup(name);
  if (!r->display || !r->o.name || tfq__mutex_init(&r->mu) != TFQ_OK) {
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

void tfq__reader_finish_work(tfq_reader *r) {
  if (r->ops->finish) r->ops->finish(r);
  tfq__instream_close(r->in);
  r->in = NULL;
  r->index = 0;
  r->skip = 0;
  r->scanned = 0;
}

void tfq_reader_free(tfq_reader *r) {
  if (!r) return;
  tfq__reader_finish_work(r);
  pthread_mutex_destroy(&r->mu);
  tfq_free(r->work);
  tfq_free(r->key);
  tfq_free(r->display);
  tfq_free(r->o.name);
  tfq_free(r);
}

const char *tfq_reader_name(const tfq_reader *r) { return r->display; }

tfq_reader_kind tfq_reader_get_kind(const tfq_reader *r) { return r->kind; }

int tfq_reader_key_split(const char *key, size_t len, size_t *file_len, int64_t *number) {
  size_t i = len;
  while (i > 0 && key[i - 1] >= '0' && key[i - 1] <= '9') i--;
  if (i == len || i < 2 || key[i - 1] != ':' || len - i > 18) return 0;
  int64_t v = 0;
  for (size_t k = i; k < len; k++) v = v * 10 + (key[k] - '0');
  *file_len = i - 1;
  *number = v;
  return 1;
}

/* ---- helpers for the kinds ---- */

tfq_code tfq__reader_open(tfq_reader *r, tfq_status *st) {
  return tfq__instream_open(r->work, r->o.compression, r->o.buffer_bytes, r->o.tf_compat_truncation,
                            r->ops == &tfq__tfrecord_ops, &r->in, st);
}

tfq_code tfq__reader_set_work(tfq_reader *r, const char *p, size_t len) {
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

/* Gives an error of the current work unit its location as data: the file, the offset of the
 * record that could not be produced and, for TextLineReader, its line.  r->mu held. */
static void locate(tfq_reader *r, int64_t offset, int64_t line, tfq_status *st) {
  tfq_status_set_location(st, r->work ? r->work : "", r->work ? r->work_len : 0, offset, line);
}

static void locate_now(tfq_reader *r, tfq_status *st) {
  locate(r, r->in ? (int64_t)tfq__instream_pos(r->in) : -1,
         r->ops == &tfq__textline_ops ? r->index + 1 : -1, st);
}

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
  c = tfq__reader_set_work(r, p, len);
  tfq_tuple_free(t);
  if (c) return TFQ__OOM(st);
  r->index = 0;
  r->skip = 0;
  r->scanned = 0;
  if (r->ops->start) {
    c = r->ops->start(r, st);
    if (c) {
      locate_now(r, st);
      tfq__reader_finish_work(r);
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
  tfq_status_set(st, c, "%s", r->pend_msg);
  locate(r, r->pend_off, r->pend_line, st);
  if (r->pend_named) tfq__status_names_file(st);
  return c;
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
      locate_now(r, st);
      if (out->keys.n > 0) {
        r->pend_code = c;
        snprintf(r->pend_msg, sizeof r->pend_msg, "%s", tfq_status_message(st));
        r->pend_off = tfq_status_offset(st);
        r->pend_line = tfq_status_line(st);
        r->pend_named = st && st->named;
        break;
      }
      return c;
    }
    if (at_end) {
      tfq__reader_finish_work(r);
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
    tfq__lock(&r->mu);
    c = read_locked(r, work, n, &out, cancel, st);
    tfq__unlock(&r->mu);
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

/* Notes the thread taking lines (r->mu held); returns whether another thread has taken some. */
static int lines_shared(tfq_reader *r) {
  pthread_t self = pthread_self();
  if (!r->line_thread_set) {
    r->line_thread = self;
    r->line_thread_set = 1;
  } else if (!r->lines_shared && !pthread_equal(r->line_thread, self)) {
    r->lines_shared = 1;
  }
  return r->lines_shared;
}

tfq_code tfq__reader_take_lines(tfq_reader *r, tfq_tensor *vt, int64_t *m, int64_t *first,
                                const char **work, size_t *work_len, tfq_status *st) {
  *m = 0;
  tfq__lock(&r->mu);
  (void)lines_shared(r);
  if (r->ops == &tfq__textline_ops && !r->pend_code && r->work_finished < r->work_started &&
      r->in) {
    int64_t k = tfq__textline_take(r, vt, vt->nelems, first, work);
    if (k < 0) {
      tfq__unlock(&r->mu);
      return TFQ__OOM(st);
    }
    *m = k;
    *work_len = r->work_len;
    r->records += k;
  }
  tfq__unlock(&r->mu);
  tfq_status_clear(st);
  return TFQ_OK;
}

int tfq__reader_lines_begin(tfq_reader *r, size_t want, const char **buf, size_t *len, int *at_end,
                            tfq_tensor **holder) {
  tfq__lock(&r->mu);
  size_t cap = r->in ? tfq__instream_capacity(r->in) : 0;
  /* Several threads taking lines (TF's shuffle_batch(num_threads=N) over one reader): each decodes
   * its copy with the lock released, as the copying path does, rather than one at a time. */
  if (lines_shared(r)) {
    tfq__unlock(&r->mu);
    return 0;
  }
  /* Every whole line of a buffer of buffer_bytes is shorter than buffer_bytes and so, with
   * max_line_bytes >= buffer_bytes, within TextLineReader's limits: a grown buffer (a long line)
   * or a smaller max_line_bytes goes the ordinary way, which holds those rules. */
  if (r->ops != &tfq__textline_ops || r->pend_code || r->work_finished >= r->work_started ||
      !r->in || r->scanned || cap != r->o.buffer_bytes || r->o.max_line_bytes < cap) {
    tfq__unlock(&r->mu);
    return 0;
  }
  if (want > cap) want = cap; /* as many lines as the buffer holds */
  size_t avail;
  const char *b = tfq__instream_peek(r->in, &avail);
  if (avail < want) {
    tfq_status local; /* an error stays with the stream: the ordinary read meets it there */
    tfq_status_clear(&local);
    (void)tfq__instream_ensure(r->in, want, &b, &avail, &local);
  }
  const char *nl = avail ? memrchr(b, '\n', avail) : NULL;
  if (!nl) {
    tfq__unlock(&r->mu);
    return 0;
  }
  *buf = b;
  *len = (size_t)(nl + 1 - b);
  *at_end = avail < want;
  *holder = tfq__instream_holder(r->in);
  return 1;
}

int tfq__reader_take_span(tfq_reader *r, size_t want, int64_t max_lines, const char **buf,
                          size_t *len, int64_t *count, int64_t *first, tfq_tensor **holder) {
  *holder = NULL;
  tfq__lock(&r->mu);
  (void)lines_shared(r); /* a reader taken from by several threads: lines_begin refuses */
  size_t cap = r->in ? tfq__instream_capacity(r->in) : 0;
  /* the conditions of tfq__reader_lines_begin (TextLineReader's limits hold for every whole line
   * of a buffer of buffer_bytes), but for several threads: nobody holds the lock to decode */
  if (max_lines < 1 || r->ops != &tfq__textline_ops || r->pend_code ||
      r->work_finished >= r->work_started || !r->in || r->scanned || cap != r->o.buffer_bytes ||
      r->o.max_line_bytes < cap) {
    tfq__unlock(&r->mu);
    return 0;
  }
  if (want > cap) want = cap;
  size_t avail;
  const char *b = tfq__instream_peek(r->in, &avail);
  if (avail < want) {
    tfq_status local; /* an error stays with the stream: the ordinary read meets it there */
    tfq_status_clear(&local);
    (void)tfq__instream_ensure(r->in, want, &b, &avail, &local);
  }
  const char *q = b, *e = b + avail;
  int64_t k = 0;
  /* whole blocks of 256 bytes while their lines stay within max_lines: the '\n's counted 16
   * bytes at a time (GCC's and Clang's vector extension: SSE2 compares), rather than a memchr call
   * per line, under the lock that the other readers wait for (2 readers on 100-byte lines: the
   * memchr calls were 3.5% of the pipeline's CPU) */
  typedef signed char v16 __attribute__((vector_size(16)));
  const v16 nlv = {'\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n',
                   '\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n'};
  const char *blk = b;
  while (e - blk >= 256) {
    v16 acc = {0};
    for (int i = 0; i < 256; i += 16) {
      v16 x;
      memcpy(&x, blk + i, 16);
      acc -= (v16)(x == nlv); /* -1 where a byte is '\n' */
    }
    int64_t cnt = 0;
    for (int j = 0; j < 16; j++) cnt += acc[j];
    if (k + cnt >= max_lines) break;
    k += cnt;
    blk += 256;
  }
  if (k > 0) { /* just past the last '\n' counted */
    q = blk;
    while (q[-1] != '\n') q--;
  }
  for (const char *nl; k < max_lines && q < e && (nl = memchr(q, '\n', (size_t)(e - q)));) {
    q = nl + 1;
    k++;
  }
  if (k == 0) {
    tfq__unlock(&r->mu);
    return 0;
  }
  *buf = b;
  *len = (size_t)(q - b);
  *count = k;
  *first = r->index + 1;
  *holder = tfq_tensor_ref(tfq__instream_holder(r->in));
  r->index += k;
  r->records += k;
  tfq__instream_consume(r->in, *len);
  tfq__unlock(&r->mu);
  return 1;
}

void tfq__reader_lines_end(tfq_reader *r, size_t used, int64_t count, int64_t *first) {
  *first = r->index + 1;
  if (count > 0) {
    r->index += count;
    r->records += count;
    tfq__instream_consume(r->in, used);
  }
  tfq__unlock(&r->mu);
}

tfq_code tfq__reader_line_keys(const char *work, size_t work_len, int64_t first, int64_t n,
                               tfq_tensor **out, tfq_status *st) {
  int64_t dim = n;
  tfq_code c = tfq__tensor_alloc(TFQ_STRING, &dim, 1, 0, out, st);
  char *key = c ? NULL : tfq_malloc(work_len + 24);
  if (!c && !key) c = TFQ__OOM(st);
  for (int64_t i = 0; !c && i < n; i++) {
    if (work_len) memcpy(key, work, work_len);
    int k = snprintf(key + work_len, 24, ":%lld", (long long)(first + i));
    if (tfq__tensor_put_string(*out, i, key, work_len + (size_t)k)) c = TFQ__OOM(st);
  }
  tfq_free(key);
  if (c) {
    tfq_tensor_free(*out);
    *out = NULL;
  }
  return c;
}

int64_t tfq_reader_num_records_produced(tfq_reader *r) {
  return tfq__locked_i64(&r->mu, &r->records);
}

int64_t tfq_reader_num_work_units_completed(tfq_reader *r) {
  return tfq__locked_i64(&r->mu, &r->work_finished);
}

void tfq__reader_reset_locked(tfq_reader *r) {
  tfq__reader_finish_work(r);
  r->work_started = r->work_finished = r->records = 0;
  r->work_len = 0;
  if (r->work) r->work[0] = 0;
  r->pend_code = TFQ_OK;
}

void tfq__reader_start_at(tfq_reader *r, uint64_t offset) {
  tfq__lock(&r->mu);
  r->start_at = offset;
  tfq__unlock(&r->mu);
}

tfq_code tfq_reader_reset(tfq_reader *r, tfq_status *st) {
  tfq__lock(&r->mu);
  tfq__reader_reset_locked(r);
  tfq__unlock(&r->mu);
  tfq_status_clear(st);
  return TFQ_OK;
}
