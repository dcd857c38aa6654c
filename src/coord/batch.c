/* Batchers of TF's input.py (coord.h): a queue, a QueueRunner over sources, and batches out.
 */
#include <string.h>

#include "coord_internal.h"

struct tfq_batch_options {
  int num_threads;
  int64_t capacity, min_after_dequeue, seed, seed2;
  int enqueue_many, dynamic_pad, allow_smaller;
  tfq_keep_fn keep;
  void *keep_ctx;
  char *shared_name;
};

tfq_code tfq_batch_options_new(tfq_batch_options **out, tfq_status *st) {
  tfq_batch_options *o = tfq__calloc(1, sizeof *o);
  *out = o;
  if (!o) return TFQ__OOM(st);
  o->num_threads = 1;
  o->capacity = 32;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_batch_options_free(tfq_batch_options *o) {
  if (!o) return;
  tfq_free(o->shared_name);
  tfq_free(o);
}

void tfq_batch_options_set_num_threads(tfq_batch_options *o, int n) { o->num_threads = n; }
void tfq_batch_options_set_capacity(tfq_batch_options *o, int64_t c) { o->capacity = c; }
void tfq_batch_options_set_min_after_dequeue(tfq_batch_options *o, int64_t m) {
  o->min_after_dequeue = m;
}
void tfq_batch_options_set_seeds(tfq_batch_options *o, int64_t seed, int64_t seed2) {
  o->seed = seed;
  o->seed2 = seed2;
}
void tfq_batch_options_set_enqueue_many(tfq_batch_options *o, int on) { o->enqueue_many = on; }
void tfq_batch_options_set_dynamic_pad(tfq_batch_options *o, int on) { o->dynamic_pad = on; }
void tfq_batch_options_set_allow_smaller_final_batch(tfq_batch_options *o, int on) {
  o->allow_smaller = on;
}
void tfq_batch_options_set_keep(tfq_batch_options *o, tfq_keep_fn keep, void *ctx) {
  o->keep = keep;
  o->keep_ctx = ctx;
}
tfq_code tfq_batch_options_set_shared_name(tfq_batch_options *o, const char *name, tfq_status *st) {
  char *c = NULL;
  if (name && !(c = tfq__strdup(name))) return TFQ__OOM(st);
  tfq_free(o->shared_name);
  o->shared_name = c;
  tfq_status_clear(st);
  return TFQ_OK;
}

typedef struct source {
  struct tfq_batcher *b;
  tfq_source_fn fn;
  void *ctx;
} source;

struct tfq_batcher {
  tfq_batcher_kind kind;
  tfq_queue *q;
  tfq_runner *runner;
  tfq_coord *coord;
  int64_t batch_size, capacity, min_after_dequeue;
  int enqueue_many, allow_smaller;
  tfq_keep_fn keep;
  void *keep_ctx;
  source *sources;
  size_t nsources;
  char summary[128];
};

/* Keeps the rows of `t` that keep() accepts: a new tuple (or NULL when none). */
static tfq_code filter_rows(tfq_batcher *b, tfq_tuple *t, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  int64_t n = t->c[0]->dims[0], kept = 0;
  char *mask = tfq_malloc((size_t)n + 1);
  if (!mask) return TFQ__OOM(st);
  for (int64_t r = 0; r < n; r++) kept += mask[r] = b->keep(b->keep_ctx, t, r) != 0;
  tfq_code c = kept ? tfq_tuple_new(t->n, out, st) : TFQ_OK;
  for (size_t i = 0; kept && !c && i < t->n; i++) {
    const tfq_tensor *x = t->c[i];
    int64_t dims[TFQ_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    dims[0] = kept;
    c = tfq__tensor_alloc(x->dtype, dims, x->rank, 0, &(*out)->c[i], st);
    if (c) break;
    int64_t per = n ? x->nelems / n : 0, w = 0;
    for (int64_t r = 0; r < n && !c; r++) {
      if (!mask[r]) continue;
      if (x->dtype == TFQ_STRING) {
        for (int64_t k = 0; k < per && !c; k++) {
          const tfq__str *s = &tfq__strs(x)[r * per + k];
          if (tfq__tensor_put_string((*out)->c[i], w * per + k, s->p, s->len)) c = TFQ__OOM(st);
        }
      } else {
        size_t rb = (size_t)per * tfq_dtype_size(x->dtype);
        memcpy((char *)(*out)->c[i]->data + (size_t)w * rb, (const char *)x->data + (size_t)r * rb,
               rb);
      }
      w++;
    }
  }
  tfq_free(mask);
  if (c) {
    tfq_tuple_free(*out);
    *out = NULL;
  }
  return c;
}

/* The enqueue op: one source call, then enqueue (or enqueue_many). */
static tfq_code enqueue_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  source *s = ctx;
  tfq_batcher *b = s->b;
  tfq_tuple *t = NULL;
  tfq_code c = s->fn(s->ctx, &t, cancel, st);
  if (c) {
    tfq_tuple_free(t);
    return c;
  }
  if (!t) return tfq_status_set(st, TFQ_INTERNAL, "a batch source returned OK without a tuple");
  if (b->keep) {
    if (!b->enqueue_many) {
      if (!b->keep(b->keep_ctx, t, -1)) {
        tfq_tuple_free(t);
        return TFQ_OK;
      }
    } else {
      tfq_tuple *f;
      if (t->n == 0 || !t->c[0] || t->c[0]->rank < 1) {
        tfq_tuple_free(t);
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "enqueue_many needs a batch dimension");
      }
      c = filter_rows(b, t, &f, st);
      tfq_tuple_free(t);
      if (c || !f) return c;
      t = f;
    }
  }
  c = b->enqueue_many ? tfq_queue_enqueue_many(b->q, t, cancel, TFQ_NO_TIMEOUT, st)
                      : tfq_queue_enqueue(b->q, t, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(t);
  /* An enqueue into a queue closed by a cancelling close is the end of this op's input. */
  return c;
}

void tfq_batcher_free(tfq_batcher *b) {
  if (!b) return;
  tfq_runner_free(b->runner);
  tfq_queue_free(b->q);
  tfq_free(b->sources);
  tfq_free(b);
}

tfq_code tfq_batcher_new(tfq_batcher_kind kind, const tfq_spec *spec, int64_t batch_size,
                         const tfq_source_fn *sources, void *const *ctxs, size_t nsources,
                         const tfq_batch_options *opts, tfq_coord *coord, tfq_batcher **out,
                         tfq_status *st) {
  *out = NULL;
  int shuffle = kind == TFQ_BATCHER_SHUFFLE_BATCH || kind == TFQ_BATCHER_SHUFFLE_BATCH_JOIN;
  int join = kind == TFQ_BATCHER_BATCH_JOIN || kind == TFQ_BATCHER_SHUFFLE_BATCH_JOIN;
  if (!coord) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a batcher needs a coordinator");
  if (batch_size < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch_size must be >= 1, got %lld",
                          (long long)batch_size);
  if (nsources == 0 || (!join && nsources != 1))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s takes %s source, got %zu",
                          join ? "a *_join batcher" : "batch",
                          join ? "at least one" : "exactly one", nsources);
  tfq_batch_options defaults = {.num_threads = 1, .capacity = 32};
  const tfq_batch_options *o = opts ? opts : &defaults;
  if (shuffle && o->capacity <= o->min_after_dequeue)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "capacity %lld must be bigger than "
                          "min_after_dequeue %lld.",
                          (long long)o->capacity, (long long)o->min_after_dequeue);
  if (o->num_threads < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "num_threads must be >= 1");
  tfq_batcher *b = tfq__calloc(1, sizeof *b);
  if (!b) return TFQ__OOM(st);
  b->kind = kind;
  b->coord = coord;
  b->batch_size = batch_size;
  b->capacity = o->capacity;
  b->min_after_dequeue = o->min_after_dequeue;
  b->enqueue_many = o->enqueue_many;
  b->allow_smaller = o->allow_smaller;
  b->keep = o->keep;
  b->keep_ctx = o->keep_ctx;
  const char *scope =
      shuffle ? (join ? "shuffle_batch_join" : "shuffle_batch") : (join ? "batch_join" : "batch");
  if (shuffle)
    snprintf(b->summary, sizeof b->summary, "%s/fraction_over_%lld_of_%lld_full", scope,
             (long long)o->min_after_dequeue, (long long)(o->capacity - o->min_after_dequeue));
  else
    snprintf(b->summary, sizeof b->summary, "%s/fraction_of_%lld_full", scope,
             (long long)o->capacity);
  tfq_queue_kind qk = shuffle          ? TFQ_QUEUE_RANDOM_SHUFFLE
                      : o->dynamic_pad ? TFQ_QUEUE_PADDING_FIFO
                                       : TFQ_QUEUE_FIFO;
  char qname[160];
  snprintf(qname, sizeof qname, "%s/%s", scope,
           shuffle          ? "random_shuffle_queue"
           : o->dynamic_pad ? "padding_fifo_queue"
                            : "fifo_queue");
  tfq_queue_options *qo;
  tfq_code c = tfq_queue_options_new(&qo, st);
  if (!c) {
    tfq_queue_options_set_capacity(qo, o->capacity);
    tfq_queue_options_set_min_after_dequeue(qo, shuffle ? o->min_after_dequeue : 0);
    tfq_queue_options_set_seeds(qo, o->seed, o->seed2);
    c = tfq_queue_options_set_name(qo, qname, st);
    if (!c) c = tfq_queue_options_set_shared_name(qo, o->shared_name, st);
    if (!c) c = tfq_queue_open(NULL, qk, spec, qo, &b->q, st);
    tfq_queue_options_free(qo);
  }
  if (!c) c = tfq_runner_new(b->q, &b->runner, st);
  if (!c && !(b->sources = tfq__calloc(nsources, sizeof(source)))) c = TFQ__OOM(st);
  if (c) {
    tfq_batcher_free(b);
    return c;
  }
  b->nsources = nsources;
  for (size_t i = 0; i < nsources && !c; i++) {
    b->sources[i] = (source){b, sources[i], ctxs ? ctxs[i] : NULL};
    int copies = join ? 1 : o->num_threads; /* TF: the same enqueue op num_threads times */
    for (int k = 0; k < copies && !c; k++) {
      char name[64];
      snprintf(name, sizeof name, "%s_enqueue_%zu", scope, i);
      c = tfq_runner_add_op(b->runner, enqueue_step, &b->sources[i], name, st);
    }
  }
  if (!c) c = tfq_runner_start(b->runner, coord, 0, st);
  if (c) {
    tfq_batcher_free(b);
    return c;
  }
  *out = b;
  return TFQ_OK;
}

tfq_code tfq_batcher_next(tfq_batcher *b, tfq_tuple **out, tfq_status *st) {
  tfq_cancel *cancel = tfq_coord_cancel(b->coord);
  return b->allow_smaller
             ? tfq_queue_dequeue_up_to(b->q, b->batch_size, out, cancel, TFQ_NO_TIMEOUT, st)
             : tfq_queue_dequeue_many(b->q, b->batch_size, out, cancel, TFQ_NO_TIMEOUT, st);
}

tfq_code tfq_batcher_next_into(tfq_batcher *b, tfq_tuple *dst, tfq_status *st) {
  tfq_cancel *cancel = tfq_coord_cancel(b->coord);
  return b->allow_smaller
             ? tfq_queue_dequeue_up_to_into(b->q, b->batch_size, dst, cancel, TFQ_NO_TIMEOUT, st)
             : tfq_queue_dequeue_many_into(b->q, b->batch_size, dst, cancel, TFQ_NO_TIMEOUT, st);
}

tfq_queue *tfq_batcher_queue(tfq_batcher *b) { return b->q; }

double tfq_batcher_fraction_full(tfq_batcher *b) {
  double size = (double)tfq_queue_size(b->q);
  if (b->kind == TFQ_BATCHER_SHUFFLE_BATCH || b->kind == TFQ_BATCHER_SHUFFLE_BATCH_JOIN) {
    double over = size - (double)b->min_after_dequeue;
    return (over > 0 ? over : 0) / (double)(b->capacity - b->min_after_dequeue);
  }
  return b->capacity > 0 ? size / (double)b->capacity : 0;
}

const char *tfq_batcher_summary_name(tfq_batcher *b) { return b->summary; }
