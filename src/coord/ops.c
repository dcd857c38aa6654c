/* Ready-made runner ops: read → decode_csv → enqueue_many, and queue → queue transfer. */
#include <string.h>

#include "../readers/readers_internal.h"
#include "coord_internal.h"

typedef struct mapping {
  size_t *cols;
  size_t n;
  int stack;
} mapping;

struct tfq_read_decode_op {
  tfq_reader *reader;
  tfq_queue *work, *target;
  const tfq_csv_options *csv;
  int64_t batch;
  mapping *map;
  size_t nmap, cap;
};

tfq_code tfq_read_decode_op_new(tfq_reader *reader, tfq_queue *work, const tfq_csv_options *csv,
                                int64_t batch, tfq_queue *target, tfq_read_decode_op **out,
                                tfq_status *st) {
  *out = NULL;
  if (batch < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch must be >= 1, got %lld",
                          (long long)batch);
  tfq_read_decode_op *op = tfq__calloc(1, sizeof *op);
  if (!op) return TFQ__OOM(st);
  op->reader = reader;
  op->work = tfq_queue_ref(work);
  op->target = tfq_queue_ref(target);
  op->csv = csv;
  op->batch = batch;
  *out = op;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_read_decode_op_free(tfq_read_decode_op *op) {
  if (!op) return;
  for (size_t i = 0; i < op->nmap; i++) tfq_free(op->map[i].cols);
  tfq_free(op->map);
  tfq_queue_free(op->work);
  tfq_queue_free(op->target);
  tfq_free(op);
}

tfq_code tfq_read_decode_op_add_component(tfq_read_decode_op *op, const size_t *cols, size_t n,
                                          int stack, tfq_status *st) {
  if (n == 0) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a component needs a column");
  if (n > 1 && !stack)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "several columns make one component only when stacked");
  if (op->nmap == op->cap) {
    size_t cap = op->cap ? 2 * op->cap : 4;
    mapping *m = tfq_realloc(op->map, cap * sizeof *m);
    if (!m) return TFQ__OOM(st);
    op->map = m;
    op->cap = cap;
  }
  size_t *c = tfq_malloc(n * sizeof *c);
  if (!c) return TFQ__OOM(st);
  memcpy(c, cols, n * sizeof *c);
  op->map[op->nmap++] = (mapping){c, n, stack != 0};
  tfq_status_clear(st);
  return TFQ_OK;
}

/* tf.stack of [B] columns into one [B, n] tensor. */
static tfq_code stack_columns(tfq_tuple *cols, const mapping *m, tfq_tensor **out, tfq_status *st) {
  const tfq_tensor *first = cols->c[m->cols[0]];
  int64_t b = first->nelems;
  for (size_t k = 1; k < m->n; k++)
    if (cols->c[m->cols[k]]->dtype != first->dtype)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "cannot stack columns of dtypes %s and %s",
                            tfq_dtype_name(first->dtype),
                            tfq_dtype_name(cols->c[m->cols[k]]->dtype));
  int64_t dims[2] = {b, (int64_t)m->n};
  tfq_code c = tfq__tensor_alloc(first->dtype, dims, 2, 0, out, st);
  if (c) return c;
  size_t esz = tfq_dtype_size(first->dtype);
  for (size_t k = 0; k < m->n; k++) {
    const tfq_tensor *col = cols->c[m->cols[k]];
    for (int64_t r = 0; r < b; r++) {
      if (first->dtype == TFQ_STRING) {
        const tfq__str *s = &tfq__strs(col)[r];
        if (tfq__tensor_put_string(*out, r * (int64_t)m->n + (int64_t)k, s->p, s->len)) {
          tfq_tensor_free(*out);
          *out = NULL;
          return TFQ__OOM(st);
        }
      } else {
        memcpy((char *)(*out)->data + ((size_t)r * m->n + k) * esz,
               (const char *)col->data + (size_t)r * esz, esz);
      }
    }
  }
  return TFQ_OK;
}

/* Which record a decode error names ("... in record 6 ..."), or -1. */
static int64_t failing_record(const char *msg) {
  const char *p = strstr(msg, "in record ");
  if (!p) return -1;
  return strtoll(p + 10, NULL, 10);
}

/* decode_csv of `values`, mapped to the target's components, enqueue_many'd. */
static tfq_code deliver(tfq_read_decode_op *op, tfq_tensor *values, tfq_cancel *cancel,
                        tfq_status *st) {
  tfq_tuple *cols = NULL, *comp = NULL;
  tfq_code c = tfq_decode_csv(op->csv, values, &cols, st);
  if (c) return c;
  if (op->nmap == 0) {
    comp = cols;
    cols = NULL;
  } else {
    c = tfq_tuple_new(op->nmap, &comp, st);
    for (size_t i = 0; !c && i < op->nmap; i++) {
      const mapping *m = &op->map[i];
      for (size_t k = 0; k < m->n; k++)
        if (m->cols[k] >= cols->n) {
          c = tfq_status_set(st, TFQ_INVALID_ARGUMENT, "column %zu is not decoded (%zu columns)",
                             m->cols[k], cols->n);
          break;
        }
      if (c) break;
      if (!m->stack)
        comp->c[i] = tfq_tensor_ref(cols->c[m->cols[0]]);
      else
        c = stack_columns(cols, m, &comp->c[i], st);
    }
  }
  if (!c) c = tfq_queue_enqueue_many(op->target, comp, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(cols);
  tfq_tuple_free(comp);
  return c;
}

tfq_code tfq_read_decode_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_read_decode_op *op = ctx;
  tfq_tensor *keys = NULL, *values = NULL;
  tfq_code c = tfq_reader_read_up_to(op->reader, op->work, op->batch, &keys, &values, cancel, st);
  if (c) {
    /* A reader error names its file and offset (TF's reader messages do not say which file). */
    int64_t off;
    const char *file = tfq__reader_error_where(&off);
    if (c != TFQ_OUT_OF_RANGE && c != TFQ_CANCELLED && *file &&
        !strstr(tfq_status_message(st), file)) {
      char msg[TFQ__MSG_CAP];
      if (off >= 0)
        snprintf(msg, sizeof msg, "%s at byte offset %lld: %s", file, (long long)off,
                 tfq_status_message(st));
      else
        snprintf(msg, sizeof msg, "%s: %s", file, tfq_status_message(st));
      tfq_status_set(st, c, "%s", msg);
    }
    return c;
  }
  c = deliver(op, values, cancel, st);
  int64_t r = c == TFQ_INVALID_ARGUMENT ? failing_record(tfq_status_message(st)) : -1;
  if (r >= 0 && r < keys->nelems) {
    char msg[TFQ__MSG_CAP];
    const tfq__str *k = &tfq__strs(keys)[r];
    snprintf(msg, sizeof msg, "%.*s: %s", (int)k->len, k->p, tfq_status_message(st));
    if (r > 0) {
      /* Keep the r good records before the bad one (TF drops the whole batch): they are
       * delivered, then the error is reported. */
      values->dims[0] = values->nelems = r;
      tfq_code c2 = deliver(op, values, cancel, st);
      if (c2 && c2 != TFQ_CANCELLED) { /* report why the good records were not delivered */
        c = c2;
        snprintf(msg, sizeof msg, "%s", tfq_status_message(st));
      }
    }
    tfq_status_set(st, c, "%s", msg);
  }
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  return c;
}

struct tfq_transfer_op {
  tfq_queue *from, *to;
  int64_t batch;
};

tfq_code tfq_transfer_op_new(tfq_queue *from, tfq_queue *to, int64_t batch, tfq_transfer_op **out,
                             tfq_status *st) {
  *out = NULL;
  if (batch < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch must be >= 1, got %lld",
                          (long long)batch);
  tfq_transfer_op *op = tfq_malloc(sizeof *op);
  if (!op) return TFQ__OOM(st);
  *op = (tfq_transfer_op){tfq_queue_ref(from), tfq_queue_ref(to), batch};
  *out = op;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_transfer_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_transfer_op *op = ctx;
  tfq_tuple *t;
  tfq_code c = op->batch == 1
                   ? tfq_queue_dequeue(op->from, &t, cancel, TFQ_NO_TIMEOUT, st)
                   : tfq_queue_dequeue_up_to(op->from, op->batch, &t, cancel, TFQ_NO_TIMEOUT, st);
  if (c) return c;
  c = op->batch == 1 ? tfq_queue_enqueue(op->to, t, cancel, TFQ_NO_TIMEOUT, st)
                     : tfq_queue_enqueue_many(op->to, t, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

void tfq_transfer_op_free(tfq_transfer_op *op) {
  if (!op) return;
  tfq_queue_free(op->from);
  tfq_queue_free(op->to);
  tfq_free(op);
}

tfq_code tfq_producer_op_step(void *producer, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel; /* the runner's close-on-stop cancel of the producer's queue wakes it */
  return tfq_producer_step(producer, st);
}
