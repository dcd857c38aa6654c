/* Feed mode B: an in-process gRPC server, a TensorFlow queue found or created by shared name,
 * and the QueueRunner step that moves batches from a tfq queue into it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_internal.h"

/* ---- protocol buffer encoding ---------------------------------------------------------------- */

static void pb_reserve(tfq__pb *b, size_t more) {
  if (b->oom || b->n + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + more) cap *= 2;
  unsigned char *p = tfq_realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return;
  }
  b->p = p;
  b->cap = cap;
}

void tfq__pb_varint(tfq__pb *b, uint64_t v) {
  pb_reserve(b, 10);
  if (b->oom) return;
  do {
    unsigned char byte = v & 0x7f;
    v >>= 7;
    b->p[b->n++] = byte | (v ? 0x80 : 0);
  } while (v);
}

void tfq__pb_uint(tfq__pb *b, int field, uint64_t v) {
  tfq__pb_varint(b, (uint64_t)field << 3);
  tfq__pb_varint(b, v);
}

void tfq__pb_bytes(tfq__pb *b, int field, const void *data, size_t len) {
  tfq__pb_varint(b, (uint64_t)field << 3 | 2);
  tfq__pb_varint(b, len);
  pb_reserve(b, len);
  if (b->oom) return;
  if (len) memcpy(b->p + b->n, data, len);
  b->n += len;
}

void tfq__pb_free(tfq__pb *b) {
  tfq_free(b->p);
  memset(b, 0, sizeof *b);
}

static tfq_code tf_error(TF_Status *s, tfq_status *st) { return tfq_tf_status_copy(s, st); }

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tfq_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- server ------------------------------------------------------------------------------- */

struct tfq_tf_server {
  TF_Server *server;
  char *target;
};

/* Encodes ServerDef{cluster, job_name, task_index, protocol "grpc"} from "job=a,b;job2=c". */
static tfq_code encode_server_def(const char *cluster, const char *job, int task, tfq__pb *out,
                                  tfq_status *st) {
  tfq__pb cl = {0};
  int found = 0;
  const char *p = cluster;
  while (*p) {
    const char *end = strchr(p, ';');
    if (!end) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (!eq || eq == p) {
      tfq__pb_free(&cl);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Bad cluster '%s': expected job=host:port,...;job=...", cluster);
    }
    tfq__pb jd = {0};
    tfq__pb_bytes(&jd, 1, p, (size_t)(eq - p));
    int is_job = strlen(job) == (size_t)(eq - p) && memcmp(job, p, (size_t)(eq - p)) == 0;
    const char *a = eq + 1;
    int idx = 0;
    while (a < end) {
      const char *comma = memchr(a, ',', (size_t)(end - a));
      if (!comma) comma = end;
      tfq__pb entry = {0};
      tfq__pb_uint(&entry, 1, (uint64_t)idx);
      tfq__pb_bytes(&entry, 2, a, (size_t)(comma - a));
      tfq__pb_bytes(&jd, 2, entry.p, entry.n);
      cl.oom |= entry.oom;
      tfq__pb_free(&entry);
      if (is_job && idx == task) found = 1;
      idx++;
      a = comma + (comma < end);
    }
    tfq__pb_bytes(&cl, 1, jd.p, jd.n);
    cl.oom |= jd.oom;
    tfq__pb_free(&jd);
    p = *end ? end + 1 : end;
  }
  if (!found) {
    tfq__pb_free(&cl);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Task %s:%d is not in cluster '%s'", job, task,
                          cluster);
  }
  tfq__pb_bytes(out, 1, cl.p, cl.n);
  out->oom |= cl.oom;
  tfq__pb_free(&cl);
  tfq__pb_bytes(out, 2, job, strlen(job));
  tfq__pb_uint(out, 3, (uint64_t)task);
  tfq__pb_bytes(out, 5, "grpc", 4);
  if (out->oom) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  return TFQ_OK;
}

tfq_code tfq_tf_server_new(const char *cluster, const char *job, int task, tfq_tf_server **out,
                           tfq_status *st) {
  *out = NULL;
  tfq__pb def = {0};
  tfq_code c = encode_server_def(cluster, job, task, &def, st);
  if (c) {
    tfq__pb_free(&def);
    return c;
  }
  TF_Status *s = TF_NewStatus();
  TF_Server *srv = TF_NewServer(def.p, def.n, s);
  tfq__pb_free(&def);
  if (srv) TF_ServerStart(srv, s);
  if (TF_GetCode(s) != TF_OK) {
    c = tf_error(s, st);
    TF_DeleteStatus(s);
    /* A server that failed to start can be deleted; a started one cannot (see free). */
    if (srv) TF_DeleteServer(srv);
    return c;
  }
  TF_DeleteStatus(s);
  tfq_tf_server *r = tfq_malloc(sizeof *r);
  char *target = dup_str(TF_ServerTarget(srv));
  if (!r || !target) {
    tfq_free(r);
    tfq_free(target);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory"); /* srv kept, see free */
  }
  r->server = srv;
  r->target = target;
  *out = r;
  return TFQ_OK;
}

const char *tfq_tf_server_target(const tfq_tf_server *s) { return s->target; }

void tfq_tf_server_free(tfq_tf_server *s) {
  if (!s) return;
  /* TF_ServerStop answers UNIMPLEMENTED ("Clean shutdown is not currently implemented") and the
   * server's destructor CHECKs that Stop succeeded: a started TF_Server is deliberately kept
   * until the process exits (TensorFlow's Python servers are never deleted either). */
  TF_Status *ts = TF_NewStatus();
  if (ts) {
    TF_ServerStop(s->server, ts);
    TF_DeleteStatus(ts);
  }
  tfq_free(s->target);
  tfq_free(s);
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

/* ---- queue -------------------------------------------------------------------------------- */

struct tfq_tf_queue {
  TF_Graph *graph;
  TF_Session *session;
  size_t k;
  TF_Output *placeholders;
  TF_Operation *enqueue, *close, *close_cancel;
  TF_Output size;
  atomic_int closed;
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
  if (shaped != 0 && (size_t)shaped != k)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Every component needs a shape, or none may have one");
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
    if (ranks[i] != TFQ_UNKNOWN_RANK) {
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

  d = TF_NewOperation(q->graph, "QueueEnqueueManyV2", "tfq_enqueue_many");
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

static tfq_code new_session(tfq_tf_queue *q, const tfq_tf_queue_options *o, TF_Status *s,
                            tfq_status *st) {
  TF_SessionOptions *so = TF_NewSessionOptions();
  if (!so) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  if (o->target && *o->target) TF_SetTarget(so, o->target);
  /* ConfigProto: device_filters = 4, operation_timeout_in_ms = 11.  Never cluster_def (14): it
   * would isolate this session's resources from the other clients' (tf-c-api.md 4.2). */
  tfq__pb cfg = {0};
  for (int i = 0; i < o->nfilters; i++)
    tfq__pb_bytes(&cfg, 4, o->filters[i], strlen(o->filters[i]));
  if (o->nfilters == 0 && o->device && *o->device)
    tfq__pb_bytes(&cfg, 4, o->device, strlen(o->device));
  if (o->timeout_ms > 0) tfq__pb_uint(&cfg, 11, (uint64_t)o->timeout_ms);
  if (cfg.oom) {
    tfq__pb_free(&cfg);
    TF_DeleteSessionOptions(so);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (cfg.n) TF_SetConfig(so, cfg.p, cfg.n, s);
  tfq__pb_free(&cfg);
  if (TF_GetCode(s) == TF_OK) q->session = TF_NewSession(q->graph, so, s);
  TF_DeleteSessionOptions(so);
  if (TF_GetCode(s) != TF_OK) return tf_error(s, st);
  return TFQ_OK;
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
  tfq_tf_queue *q = tfq_malloc(sizeof *q);
  if (!q) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  memset(q, 0, sizeof *q);
  q->k = k;
  q->placeholders = tfq_malloc(k * sizeof *q->placeholders);
  q->graph = TF_NewGraph();
  TF_Status *s = TF_NewStatus();
  tfq_code c;
  if (!q->placeholders || !q->graph || !s)
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  else if ((c = build_graph(q, spec, o, s, st)) == TFQ_OK)
    c = new_session(q, o, s, st);
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
  tfq_free(q->placeholders);
  tfq_free(q);
}

static tfq_code run(tfq_tf_queue *q, const TF_Output *in, TF_Tensor *const *vals, int nin,
                    const TF_Output *fetch, TF_Tensor **fetched, int nfetch, TF_Operation *target,
                    tfq_status *st) {
  TF_Status *s = TF_NewStatus();
  if (!s) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  const TF_Operation *targets[1] = {target};
  TF_SessionRun(q->session, NULL, in, vals, nin, fetch, fetched, nfetch, target ? targets : NULL,
                target ? 1 : 0, NULL, s);
  tfq_code c = tf_error(s, st);
  TF_DeleteStatus(s);
  return c;
}

tfq_code tfq_tf_queue_enqueue_many(tfq_tf_queue *q, const tfq_tuple *batch, tfq_status *st) {
  if (tfq_tuple_size(batch) == q->k) {
    tfq_tensor *t0 = tfq_tuple_get(batch, 0);
    if (t0 && tfq_tensor_rank(t0) > 0 && tfq_tensor_dim(t0, 0) == 0) {
      tfq_status_clear(st);
      return TFQ_OK;
    }
  }
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
  c = tfq_tf_queue_enqueue_many(f->dst, b, st);
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
