/* Queue construction: the kinds' names, the spec checks with TF's messages, tfq_queue_new and
 * the kind constructors, reference counting and the fixed attributes.  The engine (queue.c)
 * owns the ring: tfq__ring_init() makes its first allocation, tfq__ring_free() releases it. */
#include <assert.h>
#include <string.h>

#include "queue_internal.h"

/* ---- names ---- */

const char *tfq_queue_kind_name(tfq_queue_kind kind) {
  switch (kind) {
    case TFQ_QUEUE_FIFO: return "FIFOQueue";
    case TFQ_QUEUE_RANDOM_SHUFFLE: return "RandomShuffleQueue";
    case TFQ_QUEUE_PADDING_FIFO: return "PaddingFIFOQueue";
    case TFQ_QUEUE_PRIORITY: return "PriorityQueue";
  }
  return "UnknownQueue";
}

static const char *kind_op_name(tfq_queue_kind kind) {
  switch (kind) {
    case TFQ_QUEUE_FIFO: return "fifo_queue";
    case TFQ_QUEUE_RANDOM_SHUFFLE: return "random_shuffle_queue";
    case TFQ_QUEUE_PADDING_FIFO: return "padding_fifo_queue";
    case TFQ_QUEUE_PRIORITY: return "priority_queue";
  }
  return "queue";
}

/* ---- construction ---- */

static atomic_long g_queue_counter;

static void queue_destroy(tfq_queue *q) {
  tfq__ring_free(q);
  tfq_spec_free(q->spec);
  tfq_free(q->name);
  tfq_free(q->swap_tmp);
  tfq_free(q->container);
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->resv_cv);
  tfq_free(q);
}

/* Checks the spec for `kind` with TF's messages; for PriorityQueue builds the full spec with the
 * int64 priority prepended.  On success *full is a new spec. */
tfq_code tfq__queue_full_spec(tfq_queue_kind kind, const tfq_spec *spec, tfq_spec **full,
                              tfq_status *st) {
  *full = NULL;
  if (!spec || spec->n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a queue needs at least one component");
  size_t nshaped = 0;
  for (size_t i = 0; i < spec->n; i++) nshaped += spec->c[i].rank != TFQ_UNKNOWN_RANK;
  char text[TFQ__MSG_CAP];
  tfq__buf b = {text, sizeof text, 0};
  if (kind == TFQ_QUEUE_PADDING_FIFO) {
    for (size_t i = 0; i < spec->n; i++)
      if (spec->c[i].rank == TFQ_UNKNOWN_RANK)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "shape <unknown> must have known rank.");
  } else {
    if (nshaped != 0 && nshaped != spec->n) {
      tfq__buf_printf(&b, "Different number of component types.  Types: ");
      tfq__buf_spec_dtypes(&b, spec);
      tfq__buf_printf(&b, ", Shapes: ");
      tfq__buf_spec_shapes(&b, spec);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", text);
    }
    for (size_t i = 0; i < spec->n; i++)
      if (nshaped && !tfq__comp_fully_defined(&spec->c[i])) {
        tfq__buf_printf(&b, "All shapes must be fully defined: ");
        tfq__buf_spec_shapes(&b, spec);
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s", text);
      }
  }
  tfq_spec *s;
  tfq_code c = tfq_spec_new(&s, st);
  if (c) return c;
  if (kind == TFQ_QUEUE_PRIORITY)
    c = tfq_spec_add(s, TFQ_INT64, NULL, nshaped ? 0 : TFQ_UNKNOWN_RANK, NULL, st);
  for (size_t i = 0; !c && i < spec->n; i++)
    c = tfq_spec_add(s, spec->c[i].dtype, spec->c[i].dims, spec->c[i].rank, spec->c[i].name, st);
  if (c) {
    tfq_spec_free(s);
    return c;
  }
  *full = s;
  return TFQ_OK;
}

tfq_code tfq_queue_new(tfq_queue_kind kind, const tfq_spec *spec, const tfq_queue_options *opts,
                       tfq_queue **out, tfq_status *st) {
  *out = NULL;
  if (strcmp(tfq_queue_kind_name(kind), "UnknownQueue") == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown queue kind %d", (int)kind);
  int64_t cap = opts ? opts->capacity : -1;
  cap = cap < 0 ? TFQ_UNBOUNDED_CAPACITY : cap;
  int64_t mad = opts ? opts->min_after_dequeue : 0;
  if (kind == TFQ_QUEUE_RANDOM_SHUFFLE) {
    if (mad < 0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "min_after_dequeue %lld must be >= 0",
                            (long long)mad);
    if (mad >= cap)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "min_after_dequeue %lld must be < capacity %lld", (long long)mad,
                            (long long)cap);
  }
  tfq_spec *full;
  tfq_code c = tfq__queue_full_spec(kind, spec, &full, st);
  if (c) return c;

  tfq_queue *q = tfq__calloc(1, sizeof *q);
  if (!q) {
    tfq_spec_free(full);
    return TFQ__OOM(st);
  }
  q->spec = full;
  if (tfq__mutex_init(&q->mu)) {
    tfq_spec_free(full);
    tfq_free(q);
    return TFQ__OOM(st);
  }
  tfq__cond_init_monotonic(&q->resv_cv);
  atomic_init(&q->refs, 1);
  q->kind = kind;
  q->capacity = cap;
  q->shaped = 1;
  for (size_t i = 0; i < full->n; i++) q->shaped &= full->c[i].rank != TFQ_UNKNOWN_RANK;
  if (kind == TFQ_QUEUE_RANDOM_SHUFFLE) {
    q->min_after_dequeue = mad;
    q->seed = opts ? opts->seed : 0;
    q->seed2 = opts ? opts->seed2 : 0;
    q->tf_exact = opts ? opts->tf_exact : 0;
    uint64_t s1 = (uint64_t)q->seed, s2 = (uint64_t)q->seed2;
    if (s1 == 0 && s2 == 0) { /* TF: nondeterministic */
      s1 = tfq__random64();
      s2 = tfq__random64();
    }
    tfq__pcg32_seed(&q->pcg, s1, s2);
    tfq__philox_seed(&q->philox, s1, s2);
  }
  if (opts && opts->shared_name) {
    q->name = tfq__strdup(opts->shared_name);
  } else {
    const char *op = opts && opts->name ? opts->name : kind_op_name(kind);
    long n = atomic_fetch_add(&g_queue_counter, 1);
    size_t len = strlen(op) + 32;
    q->name = tfq_malloc(len);
    if (q->name) snprintf(q->name, len, "_%ld_%s", n, op);
  }
  q->st = tfq__calloc(full->n, sizeof(tfq__store));
  if (!q->name || !q->st) {
    queue_destroy(q);
    return TFQ__OOM(st);
  }
  size_t widest = 8;
  for (size_t i = 0; i < full->n; i++) {
    const tfq__comp *k = &full->c[i];
    if (tfq__comp_fully_defined(k) && k->dtype != TFQ_STRING) {
      size_t n = tfq_dtype_size(k->dtype);
      for (int d = 0; d < k->rank; d++) n *= (size_t)k->dims[d];
      q->st[i].dense = 1;
      q->st[i].row_bytes = n;
      if (n > widest) widest = n;
    } else if (tfq__comp_fully_defined(k)) {
      int64_t per = 1;
      for (int d = 0; d < k->rank; d++) per *= k->dims[d];
      size_t n;
      if (!tfq__mul_ok((size_t)per, sizeof(tfq__str), &n)) {
        queue_destroy(q);
        return TFQ__OOM(st);
      }
      q->st[i].str = 1;
      q->st[i].per = per;
      q->st[i].row_bytes = n;
      if (n > widest) widest = n;
    }
  }
  q->all_dense = 1;
  for (size_t i = 0; i < full->n; i++) q->all_dense &= q->st[i].dense;
  if (kind == TFQ_QUEUE_PRIORITY && !(q->swap_tmp = tfq_malloc(widest))) {
    queue_destroy(q);
    return TFQ__OOM(st);
  }
  if (tfq__ring_init(q)) {
    queue_destroy(q);
    return TFQ__OOM(st);
  }
  *out = q;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_fifo_queue_new(const tfq_spec *spec, int64_t capacity, const char *name,
                            tfq_queue **out, tfq_status *st) {
  tfq_queue_options o = {.capacity = capacity, .name = (char *)name};
  return tfq_queue_new(TFQ_QUEUE_FIFO, spec, &o, out, st);
}

tfq_queue *tfq_queue_ref(tfq_queue *q) {
  atomic_fetch_add_explicit(&q->refs, 1, memory_order_relaxed);
  return q;
}

void tfq_queue_free(tfq_queue *q) {
  if (!q) return;
  if (atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel) != 1) return;
  assert(!q->e_head && !q->d_head);
  queue_destroy(q);
}

tfq_queue_kind tfq_queue_get_kind(const tfq_queue *q) { return q->kind; }
const char *tfq_queue_name(const tfq_queue *q) { return q->name; }
int64_t tfq_queue_capacity(const tfq_queue *q) { return q->capacity; }
const tfq_spec *tfq_queue_spec(const tfq_queue *q) { return q->spec; }
