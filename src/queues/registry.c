/* The shared-name registry: (container, shared_name) → queue, as TF's ResourceMgr does for queue
 * kernels (queue.h, "the shared-name registry").  All kinds share one namespace per container. */
#define TFQ_EXPERIMENTAL /* defines tfq_registry_size */
#include <string.h>
#include <tfq/experimental.h>

#include "queue_internal.h"

typedef struct entry {
  struct entry *next;
  char *container;
  tfq_queue *q; /* the registry's reference */
} entry;

struct tfq_registry {
  pthread_mutex_t mu;
  entry *head;
};

static tfq_registry g_default = {PTHREAD_MUTEX_INITIALIZER, NULL};

tfq_registry *tfq_registry_default(void) { return &g_default; }

tfq_code tfq_registry_new(tfq_registry **out, tfq_status *st) {
  tfq_registry *r = tfq__calloc(1, sizeof *r);
  *out = NULL;
  if (!r) return TFQ__OOM(st);
  if (tfq__mutex_init(&r->mu)) {
    tfq_free(r);
    return TFQ__OOM(st);
  }
  *out = r;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_registry_clear(tfq_registry *r, const char *container) {
  if (!r) r = &g_default;
  if (container && !*container) container = "localhost";
  entry *drop = NULL;
  tfq__lock(&r->mu);
  for (entry **pe = &r->head; *pe;) {
    entry *e = *pe;
    if (!container || strcmp(e->container, container) == 0) {
      *pe = e->next;
      e->next = drop;
      drop = e;
    } else {
      pe = &e->next;
    }
  }
  tfq__unlock(&r->mu);
  while (drop) { /* queues are freed outside the registry lock */
    entry *next = drop->next;
    tfq_queue_free(drop->q);
    tfq_free(drop->container);
    tfq_free(drop);
    drop = next;
  }
}

size_t tfq_registry_size(tfq_registry *r) {
  if (!r) r = &g_default;
  size_t n = 0;
  tfq__lock(&r->mu);
  for (entry *e = r->head; e; e = e->next) n++;
  tfq__unlock(&r->mu);
  return n;
}

void tfq_registry_free(tfq_registry *r) {
  if (!r || r == &g_default) return;
  tfq_registry_clear(r, NULL);
  pthread_mutex_destroy(&r->mu);
  tfq_free(r);
}

static int valid_container(const char *c, char *bad) {
  for (size_t i = 0; c[i]; i++) {
    char ch = c[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '.' || (i > 0 && (ch == '_' || ch == '-' || ch == '/'));
    if (!ok) {
      *bad = ch;
      return 0;
    }
  }
  return 1;
}

static int shapes_match(const tfq_queue *q, const tfq_spec *a, const tfq_spec *b) {
  for (size_t i = 0; i < a->n; i++) {
    const tfq__comp *x = &a->c[i], *y = &b->c[i];
    if (x->rank != y->rank) return 0;
    for (int d = 0; d < x->rank; d++) {
      if (q->kind == TFQ_QUEUE_PADDING_FIFO && (x->dims[d] < 0 || y->dims[d] < 0))
        continue; /* TF compares Padding shapes for compatibility */
      if (x->dims[d] != y->dims[d]) return 0;
    }
  }
  return 1;
}

/* The checks of TF's queue kernels, first failure wins: kind, capacity, RandomShuffle's
 * min_after_dequeue and seeds, dtypes, shapes. */
static tfq_code verify(const tfq_queue *q, tfq_queue_kind kind, const tfq_spec *full,
                       const tfq_queue_options *o, tfq_status *st) {
  const char *name = q->name;
  if (q->kind != kind)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Expected %s, found %sV2",
                          tfq_queue_kind_name(q->kind), tfq_queue_kind_name(kind));
  int64_t cap = o->capacity < 0 ? TFQ_UNBOUNDED_CAPACITY : o->capacity;
  if (q->capacity != cap)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Shared queue '%s' has capacity %lld but requested capacity was %lld",
                          name, (long long)q->capacity, (long long)cap);
  if (kind == TFQ_QUEUE_RANDOM_SHUFFLE) {
    if (q->min_after_dequeue != o->min_after_dequeue)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Shared queue '%s' has min_after_dequeue %lld but requested "
                            "min_after_dequeue was %lld.",
                            name, (long long)q->min_after_dequeue, (long long)o->min_after_dequeue);
    if ((o->seed != 0 || o->seed2 != 0) && (o->seed != q->seed || o->seed2 != q->seed2))
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Shared queue '%s' has random seeds (%lld, %lld) but requested seeds "
                            "are (%lld, %lld).",
                            name, (long long)q->seed, (long long)q->seed2, (long long)o->seed,
                            (long long)o->seed2);
  }
  char have[TFQ__MSG_CAP / 2], want[TFQ__MSG_CAP / 2];
  tfq__buf bh = {have, sizeof have, 0}, bw = {want, sizeof want, 0};
  int same = q->spec->n == full->n;
  for (size_t i = 0; same && i < full->n; i++) same = q->spec->c[i].dtype == full->c[i].dtype;
  if (!same) {
    tfq__buf_spec_dtypes(&bh, q->spec);
    tfq__buf_spec_dtypes(&bw, full);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Shared queue '%s' has component types %s but requested component "
                          "types were %s",
                          name, have, want);
  }
  if (!shapes_match(q, q->spec, full)) {
    tfq__buf_spec_shapes(&bh, q->spec);
    tfq__buf_spec_shapes(&bw, full);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Shared queue '%s' has component shapes %s but requested component "
                          "shapes were %s",
                          name, have, want);
  }
  return TFQ_OK;
}

tfq_code tfq_queue_open(tfq_registry *r, tfq_queue_kind kind, const tfq_spec *spec,
                        const tfq_queue_options *opts, tfq_queue **out, tfq_status *st) {
  *out = NULL;
  if (!opts || !opts->shared_name || !*opts->shared_name)
    return tfq_queue_new(kind, spec, opts, out, st); /* private: never shared */
  if (!r) r = &g_default;
  const char *name = opts->shared_name;
  if (name[0] == '_')
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "shared_name cannot start with '_':%s", name);
  const char *container = opts->container && *opts->container ? opts->container : "localhost";
  char bad;
  if (!valid_container(container, &bad))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "container contains invalid characters: %c",
                          bad);
  tfq__lock(&r->mu);
  for (entry *e = r->head; e; e = e->next) {
    if (strcmp(e->container, container) || strcmp(e->q->name, name)) continue;
    tfq_spec *full;
    tfq_code c = tfq__queue_full_spec(kind, spec, &full, st);
    if (!c) {
      c = verify(e->q, kind, full, opts, st);
      tfq_spec_free(full);
    }
    if (!c) *out = tfq_queue_ref(e->q);
    tfq__unlock(&r->mu);
    if (!c) tfq_status_clear(st);
    return c;
  }
  entry *e = tfq__calloc(1, sizeof *e);
  tfq_code c = e && (e->container = tfq__strdup(container)) ? TFQ_OK : TFQ__OOM(st);
  if (!c) c = tfq_queue_new(kind, spec, opts, &e->q, st);
  if (c) {
    tfq__unlock(&r->mu);
    if (e) tfq_free(e->container);
    tfq_free(e);
    return c;
  }
  e->next = r->head;
  r->head = e;
  *out = tfq_queue_ref(e->q);
  tfq__unlock(&r->mu);
  return TFQ_OK;
}
