/* Feed mode B: a TensorFlow queue found or created by shared name (rows or batch elements), and
 * the QueueRunner step that moves batches from a tfq queue into it.  The server, the protocol
 * buffer encoder and the session helpers are in tf_session.c. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_internal.h"

static tfq_code tf_error(TF_Status *s, tfq_status *st) { return tfq_tf_status_copy(s, st); }

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tfq_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- queue options ----------------------------------------------------------------------------
 */

#define MAX_FILTERS 16

struct tfq_tf_queue_options {
  char *target, *device, *shared_name, *container;
  char *filters[MAX_FILTERS];
  int nfilters;
  tfq_queue_kind kind;
  int64_t capacity, min_after_dequeue, seed, seed2, timeout_ms;
  tfq_tf_element element;
  uint64_t unbatched;
};

tfq_code tfq_tf_queue_options_new(tfq_tf_queue_options **out, tfq_status *st) {
  tfq_tf_queue_options *o = tfq_malloc(sizeof *o);
  *out = o;
  if (!o) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  memset(o, 0, sizeof *o);
  o->kind = TFQ_QUEUE_FIFO;
  o->capacity = -1;
  return TFQ_OK;
}

void tfq_tf_queue_options_free(tfq_tf_queue_options *o) {
  if (!o) return;
  tfq_free(o->target);
  tfq_free(o->device);
  tfq_free(o->shared_name);
  tfq_free(o->container);
  for (int i = 0; i < o->nfilters; i++) tfq_free(o->filters[i]);
  tfq_free(o);
}

static tfq_code set_str(char **slot, const char *v, tfq_status *st) {
  char *d = NULL;
  if (v && !(d = dup_str(v))) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  tfq_free(*slot);
  *slot = d;
  return TFQ_OK;
}

tfq_code tfq_tf_queue_options_set_target(tfq_tf_queue_options *o, const char *v, tfq_status *st) {
  return set_str(&o->target, v, st);
}
tfq_code tfq_tf_queue_options_set_device(tfq_tf_queue_options *o, const char *v, tfq_status *st) {
  return set_str(&o->device, v, st);
}
tfq_code tfq_tf_queue_options_set_shared_name(tfq_tf_queue_options *o, const char *v,
                                              tfq_status *st) {
  return set_str(&o->shared_name, v, st);
}
tfq_code tfq_tf_queue_options_set_container(tfq_tf_queue_options *o, const char *v,
                                            tfq_status *st) {
  return set_str(&o->container, v, st);
}
tfq_code tfq_tf_queue_options_add_device_filter(tfq_tf_queue_options *o, const char *filter,
                                                tfq_status *st) {
  if (o->nfilters == MAX_FILTERS)
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "at most %d device filters", MAX_FILTERS);
  char *d = dup_str(filter);
  if (!d) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  o->filters[o->nfilters++] = d;
  return TFQ_OK;
}
void tfq_tf_queue_options_set_kind(tfq_tf_queue_options *o, tfq_queue_kind kind) { o->kind = kind; }
void tfq_tf_queue_options_set_capacity(tfq_tf_queue_options *o, int64_t capacity) {
  o->capacity = capacity < 0 ? -1 : capacity;
}
void tfq_tf_queue_options_set_min_after_dequeue(tfq_tf_queue_options *o, int64_t m) {
  o->min_after_dequeue = m;
}
void tfq_tf_queue_options_set_seeds(tfq_tf_queue_options *o, int64_t seed, int64_t seed2) {
  o->seed = seed;
  o->seed2 = seed2;
}
void tfq_tf_queue_options_set_timeout_ms(tfq_tf_queue_options *o, int64_t ms) {
  o->timeout_ms = ms < 0 ? 0 : ms;
}
void tfq_tf_queue_options_set_element(tfq_tf_queue_options *o, tfq_tf_element e) { o->element = e; }
void tfq_tf_queue_options_set_unbatched(tfq_tf_queue_options *o, uint64_t mask) {
  o->unbatched = mask;
}

/* ---- queue -------------------------------------------------------------------------------- */

struct tfq_tf_queue {
  TF_Graph *graph;
  TF_Session *session;
  TF_Buffer *run_options; /* RunOptions.timeout_in_ms, or NULL */
  size_t k;
  TF_Output *placeholders;
  TF_Operation *enqueue, *close, *close_cancel;
  TF_Output size;
  atomic_int closed;
  tfq_tf_element element;
  uint64_t unbatched;
  /* Batch mode: the spec, for the checks TF does not do (dtypes, row shapes, dim 0). */
  tfq_spec *spec;
  char *shared_name;
};

static const char *queue_op_type(tfq_queue_kind kind) {
  switch (kind) {
    case TFQ_QUEUE_FIFO: return "FIFOQueueV2";
    case TFQ_QUEUE_RANDOM_SHUFFLE: return "RandomShuffleQueueV2";
    case TFQ_QUEUE_PADDING_FIFO: return "PaddingFIFOQueueV2";
    default: return NULL;
  }
}

static void set_device(TF_OperationDescription *d, const tfq_tf_queue_options *o) {
  if (o->device && *o->device) TF_SetDevice(d, o->device);
}

static tfq_code build_graph(tfq_tf_queue *q, const tfq_spec *spec, const tfq_tf_queue_options *o,
                            TF_Status *s, tfq_status *st) {
  size_t k = q->k;
  TF_DataType types[64];
  const int64_t *dims[64];
  int ranks[64];
  int shaped = 0;
  for (size_t i = 0; i < k; i++) {
    types[i] = (TF_DataType)tfq_spec_dtype(spec, i);
    ranks[i] = tfq_spec_rank(spec, i);
    dims[i] = tfq_spec_dims(spec, i);
    if (ranks[i] != TFQ_UNKNOWN_RANK) shaped++;
  }
  int batch = q->element == TFQ_TF_ELEMENT_BATCH;
  if (!batch && shaped != 0 && (size_t)shaped != k)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Every component needs a shape, or none may have one");
  if (batch) shaped = 0; /* batch elements: dtypes and no shapes (distributed-feeding.md 4.2) */
  TF_OperationDescription *d = TF_NewOperation(q->graph, queue_op_type(o->kind), "tfq_queue");
  set_device(d, o);
  TF_SetAttrTypeList(d, "component_types", types, (int)k);
  TF_SetAttrShapeList(d, "shapes", shaped ? dims : NULL, shaped ? ranks : NULL,
                      shaped ? (int)k : 0);
  TF_SetAttrInt(d, "capacity", o->capacity);
  const char *container = o->container ? o->container : "";
  const char *shared = o->shared_name ? o->shared_name : "";
  TF_SetAttrString(d, "container", container, strlen(container));
  TF_SetAttrString(d, "shared_name", shared, strlen(shared));
  if (o->kind == TFQ_QUEUE_RANDOM_SHUFFLE) {
    TF_SetAttrInt(d, "min_after_dequeue", o->min_after_dequeue);
    TF_SetAttrInt(d, "seed", o->seed);
    TF_SetAttrInt(d, "seed2", o->seed2);
  }
  TF_Operation *qop = TF_FinishOperation(d, s);
  if (!qop) return tf_error(s, st);
  TF_Output handle = {qop, 0};

  for (size_t i = 0; i < k; i++) {
    char name[32];
    snprintf(name, sizeof name, "tfq_feed_%zu", i);
    d = TF_NewOperation(q->graph, "Placeholder", name);
    set_device(d, o);
    TF_SetAttrType(d, "dtype", types[i]);
    if (!batch && ranks[i] != TFQ_UNKNOWN_RANK) {
      int64_t shape[TFQ_MAX_RANK + 1];
      shape[0] = -1;
      for (int j = 0; j < ranks[i]; j++) shape[j + 1] = dims[i][j];
      TF_SetAttrShape(d, "shape", shape, ranks[i] + 1);
    }
    TF_Operation *ph = TF_FinishOperation(d, s);
    if (!ph) return tf_error(s, st);
    q->placeholders[i].oper = ph;
    q->placeholders[i].index = 0;
  }

  /* Rows: QueueEnqueueManyV2 splits dim 0 into elements; batch: QueueEnqueueV2, one element. */
  d = TF_NewOperation(q->graph, batch ? "QueueEnqueueV2" : "QueueEnqueueManyV2",
                      batch ? "tfq_enqueue" : "tfq_enqueue_many");
  set_device(d, o);
  TF_AddInput(d, handle);
  TF_AddInputList(d, q->placeholders, (int)k);
  if (!(q->enqueue = TF_FinishOperation(d, s))) return tf_error(s, st);

  for (int cancel = 0; cancel < 2; cancel++) {
    d = TF_NewOperation(q->graph, "QueueCloseV2", cancel ? "tfq_close_cancel" : "tfq_close");
    set_device(d, o);
    TF_AddInput(d, handle);
    TF_SetAttrBool(d, "cancel_pending_enqueues", (unsigned char)cancel);
    TF_Operation *op = TF_FinishOperation(d, s);
    if (!op) return tf_error(s, st);
    if (cancel)
      q->close_cancel = op;
    else
      q->close = op;
  }

  d = TF_NewOperation(q->graph, "QueueSizeV2", "tfq_size");
  set_device(d, o);
  TF_AddInput(d, handle);
  TF_Operation *sz = TF_FinishOperation(d, s);
  if (!sz) return tf_error(s, st);
  q->size.oper = sz;
  q->size.index = 0;
  return TFQ_OK;
}

static tfq_code copy_spec(const tfq_spec *spec, tfq_spec **out, tfq_status *st) {
  tfq_code c = tfq_spec_new(out, st);
  for (size_t i = 0; c == TFQ_OK && i < tfq_spec_size(spec); i++)
    c = tfq_spec_add(*out, tfq_spec_dtype(spec, i), tfq_spec_dims(spec, i), tfq_spec_rank(spec, i),
                     tfq_spec_name(spec, i), st);
  return c;
}

tfq_code tfq_tf_queue_open(const tfq_spec *spec, const tfq_tf_queue_options *o, tfq_tf_queue **out,
                           tfq_status *st) {
  *out = NULL;
  size_t k = tfq_spec_size(spec);
  if (k == 0 || k > 64)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "A queue needs 1 to 64 components, got %zu", k);
  if (!queue_op_type(o->kind))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "TensorFlow queue kind %s is not supported",
                          tfq_queue_kind_name(o->kind));
  if (o->element != TFQ_TF_ELEMENT_ROWS && o->element != TFQ_TF_ELEMENT_BATCH)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Unknown element mode %d", (int)o->element);
  if (o->element == TFQ_TF_ELEMENT_BATCH && o->kind == TFQ_QUEUE_PADDING_FIFO)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "A PaddingFIFOQueue needs shapes: batch elements have none");
  if (o->unbatched && o->element != TFQ_TF_ELEMENT_BATCH)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Unbatched components exist only with batch elements");
  uint64_t all = k == 64 ? ~(uint64_t)0 : ((uint64_t)1 << k) - 1;
  if (o->unbatched & ~all)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Unbatched mask 0x%llx names components beyond the %zu of the spec",
                          (unsigned long long)o->unbatched, k);
  if (o->unbatched == all)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Batch elements need at least one batched component");
  tfq_tf_queue *q = tfq_malloc(sizeof *q);
  if (!q) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  memset(q, 0, sizeof *q);
  q->k = k;
  q->element = o->element;
  q->unbatched = o->unbatched;
  q->placeholders = tfq_malloc(k * sizeof *q->placeholders);
  q->graph = TF_NewGraph();
  q->shared_name = dup_str(o->shared_name ? o->shared_name : "");
  int ro_oom = 0;
  q->run_options = tfq__tf_run_options(o->timeout_ms, &ro_oom);
  TF_Status *s = TF_NewStatus();
  tfq_code c = TFQ_OK;
  if (!q->placeholders || !q->graph || !s || !q->shared_name || ro_oom)
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  else if (q->element == TFQ_TF_ELEMENT_BATCH)
    c = copy_spec(spec, &q->spec, st);
  if (c == TFQ_OK && (c = build_graph(q, spec, o, s, st)) == TFQ_OK)
    c = tfq__tf_new_session(q->graph, o->target, o->device, o->filters, o->nfilters, o->timeout_ms,
                            &q->session, st);
  if (s) TF_DeleteStatus(s);
  if (c) {
    tfq_tf_queue_free(q);
    return c;
  }
  *out = q;
  return TFQ_OK;
}

void tfq_tf_queue_free(tfq_tf_queue *q) {
  if (!q) return;
  TF_Status *s = TF_NewStatus();
  if (q->session) {
    TF_CloseSession(q->session, s);
    TF_DeleteSession(q->session, s);
  }
  if (s) TF_DeleteStatus(s);
  if (q->graph) TF_DeleteGraph(q->graph);
  if (q->run_options) TF_DeleteBuffer(q->run_options);
  tfq_spec_free(q->spec);
  tfq_free(q->shared_name);
  tfq_free(q->placeholders);
  tfq_free(q);
}

/* Every run of the handle carries the options' timeout as RunOptions.timeout_in_ms. */
static tfq_code run(tfq_tf_queue *q, const TF_Output *in, TF_Tensor *const *vals, int nin,
                    const TF_Output *fetch, TF_Tensor **fetched, int nfetch, TF_Operation *target,
                    tfq_status *st) {
  const TF_Operation *targets[1] = {target};
  return tfq__tf_run(q->session, q->run_options, in, vals, nin, fetch, fetched, nfetch,
                     target ? targets : NULL, target ? 1 : 0, st);
}

/* Converts `batch` and runs the enqueue op (either mode). */
static tfq_code run_enqueue(tfq_tf_queue *q, const tfq_tuple *batch, tfq_status *st) {
  TF_Tensor *small[8];
  TF_Tensor **vals = q->k <= 8 ? small : tfq_malloc(q->k * sizeof *vals);
  if (!vals) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  tfq_code c = tfq__tf_tuple_to_tf(batch, q->k, vals, st);
  if (c == TFQ_OK) {
    c = run(q, q->placeholders, vals, (int)q->k, NULL, NULL, 0, q->enqueue, st);
    tfq__tf_delete_tensors(vals, q->k);
  }
  if (vals != small) tfq_free(vals);
  return c;
}

tfq_code tfq_tf_queue_enqueue_many(tfq_tf_queue *q, const tfq_tuple *batch, tfq_status *st) {
  if (q->element != TFQ_TF_ELEMENT_ROWS)
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION,
                          "TensorFlow queue '%s' holds batch elements: use "
                          "tfq_tf_queue_enqueue_batch",
                          q->shared_name);
  if (tfq_tuple_size(batch) == q->k) {
    tfq_tensor *t0 = tfq_tuple_get(batch, 0);
    if (t0 && tfq_tensor_rank(t0) > 0 && tfq_tensor_dim(t0, 0) == 0) {
      tfq_status_clear(st);
      return TFQ_OK;
    }
  }
  return run_enqueue(q, batch, st);
}

/* "component 2 ('y')" or "component 2". */
static void component_label(const tfq_spec *spec, size_t i, char *buf, size_t n) {
  const char *name = tfq_spec_name(spec, i);
  if (name)
    snprintf(buf, n, "component %zu ('%s')", i, name);
  else
    snprintf(buf, n, "component %zu", i);
}

/* The checks of a batch element TF does not do; *rows gets the shared dim 0. */
static tfq_code check_batch(const tfq_tf_queue *q, const tfq_tuple *batch, int64_t *rows,
                            tfq_status *st) {
  *rows = -1;
  if (tfq_tuple_size(batch) != q->k)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Batch element for '%s': expected %zu components, got %zu",
                          q->shared_name, q->k, tfq_tuple_size(batch));
  size_t first = 0;
  char label[96], label0[96];
  for (size_t i = 0; i < q->k; i++) {
    tfq_tensor *t = tfq_tuple_get(batch, i);
    component_label(q->spec, i, label, sizeof label);
    if (!t)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Batch element for '%s': %s is not set",
                            q->shared_name, label);
    tfq_dtype want = tfq_spec_dtype(q->spec, i);
    if (tfq_tensor_dtype(t) != want)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Batch element for '%s': %s is %s, the queue's is %s", q->shared_name,
                            label, tfq_dtype_name(tfq_tensor_dtype(t)), tfq_dtype_name(want));
    if (q->unbatched >> i & 1) continue;
    int rank = tfq_tensor_rank(t);
    if (rank < 1)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Batch element for '%s': %s is a scalar; a batched component needs a "
                            "dim 0 of rows",
                            q->shared_name, label);
    int64_t b = tfq_tensor_dim(t, 0);
    if (*rows < 0) {
      *rows = b;
      first = i;
    } else if (b != *rows) {
      component_label(q->spec, first, label0, sizeof label0);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Batch element for '%s': %s has %lld rows, %s has %lld", q->shared_name,
                            label, (long long)b, label0, (long long)*rows);
    }
    int srank = tfq_spec_rank(q->spec, i);
    if (srank == TFQ_UNKNOWN_RANK) continue;
    const int64_t *sd = tfq_spec_dims(q->spec, i);
    int ok = rank == srank + 1;
    for (int j = 0; ok && j < srank; j++)
      ok = sd[j] == TFQ_UNKNOWN_DIM || sd[j] == tfq_tensor_dim(t, j + 1);
    if (!ok) {
      char got[160], want_s[160];
      size_t n = 0, m = 0;
      got[0] = want_s[0] = 0;
      for (int j = 0; j < rank && n < sizeof got; j++)
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", j ? "," : "",
                              (long long)tfq_tensor_dim(t, j));
      m += (size_t)snprintf(want_s, sizeof want_s, "?");
      for (int j = 0; j < srank && m < sizeof want_s; j++) {
        if (sd[j] == TFQ_UNKNOWN_DIM)
          m += (size_t)snprintf(want_s + m, sizeof want_s - m, ",?");
        else
          m += (size_t)snprintf(want_s + m, sizeof want_s - m, ",%lld", (long long)sd[j]);
      }
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Batch element for '%s': %s has shape [%s], expected [%s]",
                            q->shared_name, label, got, want_s);
    }
  }
  return TFQ_OK;
}

tfq_code tfq_tf_queue_enqueue_batch(tfq_tf_queue *q, const tfq_tuple *batch, tfq_status *st) {
  if (q->element == TFQ_TF_ELEMENT_ROWS) return tfq_tf_queue_enqueue_many(q, batch, st);
  int64_t rows;
  tfq_code c = check_batch(q, batch, &rows, st);
  if (c) return c;
  if (rows == 0) { /* never sent (distributed-feeding.md 4.2) */
    tfq_status_clear(st);
    return TFQ_OK;
  }
  return run_enqueue(q, batch, st);
}

tfq_tf_element tfq_tf_queue_element(const tfq_tf_queue *q) { return q->element; }

tfq_code tfq_tf_queue_close(tfq_tf_queue *q, int cancel_pending_enqueues, tfq_status *st) {
  tfq_code c = run(q, NULL, NULL, 0, NULL, NULL, 0,
                   cancel_pending_enqueues ? q->close_cancel : q->close, st);
  if (c == TFQ_OK) atomic_store(&q->closed, 1);
  return c;
}

int tfq_tf_queue_is_closed(tfq_tf_queue *q) { return atomic_load(&q->closed); }

tfq_code tfq_tf_queue_size(tfq_tf_queue *q, int64_t *out, tfq_status *st) {
  TF_Tensor *r = NULL;
  *out = 0;
  tfq_code c = run(q, NULL, NULL, 0, &q->size, &r, 1, NULL, st);
  if (c == TFQ_OK && r) *out = *(const int32_t *)TF_TensorData(r);
  if (r) TF_DeleteTensor(r);
  return c;
}

typedef struct watch_ctx {
  tfq_tf_queue *q;
  tfq_coord *coord;
} watch_ctx;

static void *watch_main(void *arg) {
  watch_ctx w = *(watch_ctx *)arg;
  tfq_free(arg);
  while (!atomic_load(&w.q->closed)) {
    if (tfq_coord_wait_for_stop(w.coord, 50000)) {
      tfq_code ignored = tfq_tf_queue_close(w.q, 1, NULL); /* OK even when already closed */
      (void)ignored;
      break;
    }
  }
  return NULL;
}

tfq_code tfq_tf_queue_close_on_stop(tfq_tf_queue *q, tfq_coord *coord, tfq_status *st) {
  watch_ctx *w = tfq_malloc(sizeof *w);
  if (!w) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  w->q = q;
  w->coord = coord;
  tfq_code c = tfq_coord_start_thread(coord, "tfq_tf_close_on_stop", watch_main, w, st);
  if (c) tfq_free(w);
  return c;
}

/* ---- the feeder step ------------------------------------------------------------------------ */

struct tfq_tf_feeder {
  tfq_queue *src;
  tfq_tf_queue *dst;
  int64_t batch_size;
  int nthreads;
  atomic_int ended;
  atomic_llong rows, batches;
};

tfq_code tfq_tf_feeder_new(tfq_queue *src, int64_t batch_size, tfq_tf_queue *dst, int nthreads,
                           tfq_tf_feeder **out, tfq_status *st) {
  *out = NULL;
  if (batch_size < 1 || nthreads < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch_size must be >= 1, nthreads >= 0");
  if (dst->unbatched)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "A feeder cannot fill TensorFlow queue '%s': it has unbatched components",
                          dst->shared_name);
  tfq_tf_feeder *f = tfq_malloc(sizeof *f);
  if (!f) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  f->src = tfq_queue_ref(src);
  f->dst = dst;
  f->batch_size = batch_size;
  f->nthreads = nthreads;
  atomic_init(&f->ended, 0);
  atomic_init(&f->rows, 0);
  atomic_init(&f->batches, 0);
  *out = f;
  return TFQ_OK;
}

void tfq_tf_feeder_free(tfq_tf_feeder *f) {
  if (!f) return;
  tfq_queue_free(f->src);
  tfq_free(f);
}

tfq_code tfq_tf_feeder_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_tf_feeder *f = ctx;
  tfq_tuple *b = NULL;
  tfq_code c = tfq_queue_dequeue_up_to(f->src, f->batch_size, &b, cancel, TFQ_NO_TIMEOUT, st);
  if (c == TFQ_OUT_OF_RANGE) {
    if (f->nthreads > 0 && atomic_fetch_add(&f->ended, 1) + 1 == f->nthreads) {
      tfq_code cc = tfq_tf_queue_close(f->dst, 0, st);
      if (cc) return cc;
      return tfq_status_set(st, TFQ_OUT_OF_RANGE, "End of input: TensorFlow queue closed");
    }
    return c;
  }
  if (c) return c;
  tfq_tensor *t0 = tfq_tuple_get(b, 0);
  int64_t rows = t0 && tfq_tensor_rank(t0) > 0 ? tfq_tensor_dim(t0, 0) : 0;
  c = tfq_tf_queue_enqueue_batch(f->dst, b, st); /* rows or one element, per the queue */
  tfq_tuple_free(b);
  if (c == TFQ_OK) {
    atomic_fetch_add(&f->rows, rows);
    atomic_fetch_add(&f->batches, 1);
  }
  return c;
}

int64_t tfq_tf_feeder_rows(const tfq_tf_feeder *f) {
  return (int64_t)atomic_load(&((tfq_tf_feeder *)f)->rows);
}
int64_t tfq_tf_feeder_batches(const tfq_tf_feeder *f) {
  return (int64_t)atomic_load(&((tfq_tf_feeder *)f)->batches);
}
