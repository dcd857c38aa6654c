/* The ready-made read → parse_example → enqueue_many op (ops.h), also usable as a batcher
 * source: TF1's reader.read_up_to → tf.parse_example → q.enqueue_many / shuffle_batch(...,
 * enqueue_many=True), with sparse outputs stored in a tfq_sparse_map as TF1's batchers store them
 * (sparse.h). */
#include <stdatomic.h>
#include <string.h>
#include <tfq/ops.h>

#include "coord_internal.h"

struct tfq_read_parse_op {
  tfq_reader *reader;
  tfq_queue *work, *target; /* target NULL: a batcher source only */
  const tfq_example_config *cfg;
  tfq_sparse_map *map;
  int64_t batch;
  size_t nout;
  int keys;
  _Atomic int64_t records;
  pthread_mutex_t mu; /* guards the pending error of the source form */
  int pending;
  tfq_status perr;
};

tfq_code tfq_read_parse_op_new(tfq_reader *reader, tfq_queue *work, const tfq_example_config *cfg,
                               tfq_sparse_map *map, int64_t batch, tfq_queue *target,
                               tfq_read_parse_op **out, tfq_status *st) {
  *out = NULL;
  if (batch < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch must be >= 1, got %lld",
                          (long long)batch);
  tfq_code c = tfq_example_config_check(cfg, st);
  if (c) return c;
  size_t n = tfq_example_config_size(cfg);
  for (size_t i = 0; i < n && !map; i++)
    if (tfq_example_config_is_sparse(cfg, i))
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "a sparse feature needs a tfq_sparse_map (feature %s)",
                            tfq_example_config_key(cfg, i));
  tfq_read_parse_op *op = tfq__calloc(1, sizeof *op);
  if (!op) return TFQ__OOM(st);
  if (tfq__mutex_init(&op->mu)) {
    tfq_free(op);
    return TFQ__OOM(st);
  }
  op->reader = reader;
  op->work = tfq_queue_ref(work);
  op->target = target ? tfq_queue_ref(target) : NULL;
  op->cfg = cfg;
  op->map = map;
  op->batch = batch;
  op->nout = n;
  atomic_init(&op->records, 0);
  *out = op;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_read_parse_op_free(tfq_read_parse_op *op) {
  if (!op) return;
  pthread_mutex_destroy(&op->mu);
  tfq_queue_free(op->work);
  tfq_queue_free(op->target);
  tfq_free(op);
}

void tfq_read_parse_op_set_keys(tfq_read_parse_op *op, int on) { op->keys = on != 0; }

int64_t tfq_read_parse_op_records(const tfq_read_parse_op *op) { return atomic_load(&op->records); }

tfq_code tfq_read_parse_op_spec(const tfq_read_parse_op *op, tfq_spec **out, tfq_status *st) {
  tfq_spec *s;
  tfq_code c = tfq_spec_new(&s, st);
  *out = NULL;
  for (size_t i = 0; !c && i < op->nout; i++) {
    const char *key = tfq_example_config_key(op->cfg, i);
    if (tfq_example_config_is_sparse(op->cfg, i))
      c = tfq_spec_add(s, TFQ_INT64, NULL, 0, key, st);
    else
      c = tfq_spec_add(s, tfq_example_config_dtype(op->cfg, i), tfq_example_config_dims(op->cfg, i),
                       tfq_example_config_rank(op->cfg, i), key, st);
  }
  if (!c && op->keys) c = tfq_spec_add(s, TFQ_STRING, NULL, 0, NULL, st);
  if (c) {
    tfq_spec_free(s);
    return c;
  }
  *out = s;
  return TFQ_OK;
}

/* Takes stored elements back out of the map (their rows were not delivered). */
static void drop_handles(tfq_sparse_map *map, const tfq_tensor *handles) {
  tfq_sparse_tensor sp;
  if (handles && handles->nelems && !tfq_sparse_map_take_many(map, handles, 0, &sp, NULL))
    tfq_sparse_tensor_release(&sp);
}

/* parse_example of the first `n` records → the element components (sparse outputs stored). */
static tfq_code components(tfq_read_parse_op *op, tfq_tensor *keys, tfq_tensor *values, int64_t n,
                           tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  const char **ptrs = tfq_malloc((size_t)n * (sizeof(char *) + sizeof(size_t)) + 1);
  if (!ptrs) return TFQ__OOM(st);
  size_t *lens = (size_t *)(ptrs + n);
  const tfq__str *v = tfq__strs(values);
  for (int64_t i = 0; i < n; i++) {
    ptrs[i] = v[i].p;
    lens[i] = v[i].len;
  }
  tfq_example_result *res = NULL;
  tfq_code c = tfq_parse_example_strings(op->cfg, ptrs, lens, n, NULL, NULL, &res, st);
  tfq_free(ptrs);
  if (c) return c;
  tfq_tuple *t = NULL;
  c = tfq_tuple_new(op->nout + (op->keys != 0), &t, st);
  for (size_t i = 0; !c && i < op->nout; i++) {
    const tfq_sparse_tensor *sp = tfq_example_result_sparse(res, i);
    if (sp)
      c = tfq_sparse_map_add_many(op->map, sp, &t->c[i], st);
    else
      t->c[i] = tfq_tensor_ref(tfq_example_result_dense(res, i));
  }
  tfq_example_result_free(res);
  if (!c && op->keys) {
    keys->dims[0] = keys->nelems = n;
    t->c[op->nout] = tfq_tensor_ref(keys);
  }
  if (c && t) {
    for (size_t i = 0; i < op->nout; i++)
      if (tfq_example_config_is_sparse(op->cfg, i)) drop_handles(op->map, t->c[i]);
    tfq_tuple_free(t);
    t = NULL;
  }
  *out = t;
  return c;
}

/* The rows of the first `n` records: enqueue_many'd into the target (out NULL) or handed out. */
static tfq_code deliver(tfq_read_parse_op *op, tfq_tensor *keys, tfq_tensor *values, int64_t n,
                        tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  tfq_tuple *t;
  tfq_code c = components(op, keys, values, n, &t, st);
  if (c) return c;
  if (out) {
    *out = t;
  } else {
    c = tfq_queue_enqueue_many(op->target, t, cancel, TFQ_NO_TIMEOUT, st);
    if (c)
      for (size_t i = 0; i < op->nout; i++)
        if (tfq_example_config_is_sparse(op->cfg, i)) drop_handles(op->map, t->c[i]);
    tfq_tuple_free(t);
  }
  if (!c) atomic_fetch_add(&op->records, n);
  return c;
}

/* The parse error of record r: TF's message prefixed with the record's key, and its location
 * (file; byte offset for TFRecordReader, line for TextLineReader; index r) as data. */
static void locate_record(tfq_read_parse_op *op, const tfq_tensor *keys, int64_t r,
                          tfq_status *st) {
  const tfq__str *k = &tfq__strs(keys)[r];
  size_t flen = k->len;
  int64_t num = -1;
  if (!tfq_reader_key_split(k->p, k->len, &flen, &num)) num = -1;
  tfq_reader_kind kind = tfq_reader_get_kind(op->reader);
  tfq__status_prefix(st, "%.*s: ", (int)k->len, k->p);
  tfq_status_set_location(st, k->p, flen, kind == TFQ_READER_TFRECORD ? num : -1,
                          kind == TFQ_READER_TEXT_LINE ? num : -1);
  tfq__status_set_record(st, r);
}

/* One run: read_up_to → parse → deliver (see ops.h for the error rules). */
static tfq_code run(tfq_read_parse_op *op, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  tfq_status local, scratch;
  tfq_status_clear(&local);
  tfq_status_clear(&scratch);
  if (!st) st = &local;
  tfq_tensor *keys = NULL, *values = NULL;
  tfq_code c = tfq_reader_read_up_to(op->reader, op->work, op->batch, &keys, &values, cancel, st);
  if (c) {
    /* A reader error names its file and offset (TF's reader messages do not say which file). */
    const char *file = tfq_status_file(st);
    if (c != TFQ_OUT_OF_RANGE && c != TFQ_CANCELLED && *file && !st->named) {
      if (tfq_status_offset(st) >= 0)
        tfq__status_prefix(st, "%s at byte offset %lld: ", file, (long long)tfq_status_offset(st));
      else
        tfq__status_prefix(st, "%s: ", file);
    }
    return c;
  }
  int64_t n = keys->nelems;
  c = deliver(op, keys, values, n, out, cancel, st);
  int64_t r = c == TFQ_INVALID_ARGUMENT ? tfq_status_record(st) : -1;
  if (r >= 0 && r < n) {
    /* Deliver the r good records before the bad one (TF drops the whole batch), then report. */
    tfq_code c2 = r > 0 ? deliver(op, keys, values, r, out, cancel, &scratch) : TFQ_OK;
    if (c2 && c2 != TFQ_CANCELLED) { /* report why the good records were not delivered */
      c = tfq_status_set(st, c2, "%s", tfq_status_message(&scratch));
    } else {
      locate_record(op, keys, r, st);
      if (out && *out) { /* the source form: these rows now, the error at the next call */
        tfq__lock(&op->mu);
        op->perr = *st;
        op->pending = 1;
        tfq__unlock(&op->mu);
        tfq_status_clear(st);
        c = TFQ_OK;
      }
    }
  }
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  return c;
}

tfq_code tfq_read_parse_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_read_parse_op *op = ctx;
  if (!op->target)
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION,
                          "this read-parse op has no target queue (it is a batcher source)");
  return run(op, NULL, cancel, st);
}

tfq_code tfq_read_parse_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  tfq_read_parse_op *op = ctx;
  *out = NULL;
  tfq__lock(&op->mu);
  if (op->pending) {
    op->pending = 0;
    tfq_code c = op->perr.code;
    if (st) *st = op->perr;
    tfq__unlock(&op->mu);
    return c;
  }
  tfq__unlock(&op->mu);
  return run(op, out, cancel, st);
}
