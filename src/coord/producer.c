/* Input producers (producer.h; TF's input.py): epochs of the rows of some tensors into a FIFOQueue,
 * each epoch a fresh PCG32 permutation when shuffling, then a close. */
#include <string.h>

#include "coord_internal.h"

struct tfq_producer_options {
  int64_t num_epochs, capacity;
  int shuffle, has_seed, tf_exact;
  uint64_t seed;
  int64_t tf_seed, tf_seed2;
};

tfq_code tfq_producer_options_new(tfq_producer_options **out, tfq_status *st) {
  tfq_producer_options *o = tfq__calloc(1, sizeof *o);
  *out = o;
  if (!o) return TFQ__OOM(st);
  o->num_epochs = TFQ_EPOCHS_UNLIMITED;
  o->capacity = 32;
  o->shuffle = 1;
  tfq_status_clear(st);
  return TFQ_OK;
}
void tfq_producer_options_free(tfq_producer_options *o) { tfq_free(o); }
void tfq_producer_options_set_num_epochs(tfq_producer_options *o, int64_t n) { o->num_epochs = n; }
void tfq_producer_options_set_shuffle(tfq_producer_options *o, int shuffle) {
  o->shuffle = shuffle != 0;
}
void tfq_producer_options_set_seed(tfq_producer_options *o, uint64_t seed) {
  o->seed = seed;
  o->has_seed = 1;
}
void tfq_producer_options_set_tf_seeds(tfq_producer_options *o, int64_t seed, int64_t seed2) {
  o->tf_exact = 1;
  o->tf_seed = seed;
  o->tf_seed2 = seed2;
}
void tfq_producer_options_set_capacity(tfq_producer_options *o, int64_t c) { o->capacity = c; }

struct tfq_producer {
  pthread_mutex_t mu;
  tfq_queue *q;
  tfq_tuple *rows; /* our references to the input tensors */
  int64_t nrows, epochs_done;
  tfq_producer_options o;
  tfq__pcg32 rng;
  tfq__philox tf_gen; /* with tf_exact: the RandomShuffle op's GuardedPhiloxRandom */
  int64_t *perm;
  tfq_cancel *cancel;
  const char *what; /* for the empty-input message */
};

static const tfq_producer_options default_opts = {TFQ_EPOCHS_UNLIMITED, 32, 1, 0, 0, 0, 0, 0};

static tfq_code check_rows(tfq_queue *q, const tfq_tuple *rows, tfq_status *st) {
  const tfq_spec *s = tfq_queue_spec(q);
  size_t n = tfq_tuple_size(rows);
  if (tfq_spec_size(s) != n)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "the queue has %zu components but the input has %zu", tfq_spec_size(s),
                          n);
  int64_t d0 = -1;
  for (size_t i = 0; i < n; i++) {
    const tfq_tensor *t = tfq_tuple_get(rows, i);
    if (!t)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Either `input_tensor` must have a fully defined shape or "
                            "`element_shape` must be specified");
    if (tfq_tensor_rank(t) < 1) /* TF's shape check of a known scalar shape */
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Shape () must have rank at least 1");
    if (tfq_tensor_dtype(t) != tfq_spec_dtype(s, i))
      return tfq_status_set(
          st, TFQ_INVALID_ARGUMENT, "Type mismatch in component %zu. Expected %s, got %s", i,
          tfq_dtype_name(tfq_spec_dtype(s, i)), tfq_dtype_name(tfq_tensor_dtype(t)));
    if (d0 >= 0 && tfq_tensor_dim(t, 0) != d0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "all input tensors must have the same dimension 0: component %zu "
                            "has %lld, expected %lld",
                            i, (long long)tfq_tensor_dim(t, 0), (long long)d0);
    d0 = tfq_tensor_dim(t, 0);
    int sr = tfq_spec_rank(s, i);
    if (sr != TFQ_UNKNOWN_RANK &&
        (sr != tfq_tensor_rank(t) - 1 ||
         (sr && memcmp(tfq_spec_dims(s, i), tfq_tensor_dims(t) + 1, (size_t)sr * 8) != 0)))
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Shape mismatch in component %zu between the input rows and the queue",
                            i);
  }
  return TFQ_OK;
}

tfq_code tfq_producer_new(tfq_queue *q, const tfq_tuple *rows, const tfq_producer_options *o,
                          tfq_producer **out, tfq_status *st) {
  *out = NULL;
  if (!o) o = &default_opts;
  if (o->num_epochs != TFQ_EPOCHS_UNLIMITED && o->num_epochs <= 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "num_epochs must be > 0 not %lld.",
                          (long long)o->num_epochs);
  tfq_code c = check_rows(q, rows, st);
  if (c) return c;
  size_t n = tfq_tuple_size(rows);
  tfq_producer *p = tfq__calloc(1, sizeof *p);
  if (!p) return TFQ__OOM(st);
  p->o = *o;
  p->what = "input_producer";
  p->nrows = tfq_tensor_dim(tfq_tuple_get(rows, 0), 0);
  if (tfq_tuple_new(n, &p->rows, NULL) || tfq_cancel_new(&p->cancel, NULL) ||
      (p->nrows && !(p->perm = tfq_malloc((size_t)p->nrows * sizeof(int64_t)))) ||
      tfq__mutex_init(&p->mu) != TFQ_OK) {
    tfq_tuple_free(p->rows);
    tfq_cancel_free(p->cancel);
    tfq_free(p->perm);
    tfq_free(p);
    return TFQ__OOM(st);
  }
  for (size_t i = 0; i < n; i++)
    tfq_tuple_set_take(p->rows, i, tfq_tensor_ref(tfq_tuple_get(rows, i)));
  uint64_t seed = o->has_seed ? o->seed : (uint64_t)tfq__now_ns() ^ (uint64_t)(uintptr_t)p;
  tfq__pcg32_seed(&p->rng, seed, 0x5851f42d4c957f2dULL);
  if (o->tf_exact) { /* GuardedPhiloxRandom::Init: (0, 0) means random seeds */
    uint64_t s1 = (uint64_t)o->tf_seed, s2 = (uint64_t)o->tf_seed2;
    if (s1 == 0 && s2 == 0) {
      s1 = tfq__random64();
      s2 = tfq__random64();
    }
    tfq__philox_seed(&p->tf_gen, s1, s2);
  }
  p->q = tfq_queue_ref(q);
  *out = p;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_producer_free(tfq_producer *p) {
  if (!p) return;
  pthread_mutex_destroy(&p->mu);
  tfq_queue_free(p->q);
  tfq_tuple_free(p->rows);
  tfq_cancel_free(p->cancel);
  tfq_free(p->perm);
  tfq_free(p);
}

void tfq_producer_cancel(tfq_producer *p) { tfq_cancel_trigger(p->cancel); }

/* Rows of `src` in the order perm[0..n) as a new tensor. */
static tfq_code gather(const tfq_tensor *src, const int64_t *perm, int64_t n, tfq_tensor **out) {
  tfq_code c = tfq__tensor_alloc(src->dtype, src->dims, src->rank, 0, out, NULL);
  if (c) return c;
  int64_t per_row = n ? src->nelems / n : 0;
  if (src->dtype == TFQ_STRING) {
    const tfq__str *s = tfq__strs(src);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < per_row; j++) {
        const tfq__str *e = &s[perm[i] * per_row + j];
        if (tfq__tensor_put_string(*out, i * per_row + j, e->p, e->len)) {
          tfq_tensor_free(*out);
          *out = NULL;
          return TFQ_RESOURCE_EXHAUSTED;
        }
      }
  } else {
    size_t rb = (size_t)per_row * tfq_dtype_size(src->dtype);
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)(*out)->data + (size_t)i * rb, (const char *)src->data + (size_t)perm[i] * rb,
             rb);
  }
  return TFQ_OK;
}

/* TF's RandomShuffle kernel on n rows (kernels/shuffle_common.h): nothing for n <= 1; else
 * ReserveSamples32(n - 1) -- a copy of the generator starting a fresh block, the generator
 * skipped ahead by ceil((n - 1) / 4) blocks -- and, through a SingleSampleAdapter, for i in
 * 0 .. n - 2, swap(i, i + draw % (n - i)).  (Rows counted in 32 bits, as TF for n < 2^32.) */
static void tf_shuffle(tfq__philox *gen, int64_t *perm, int64_t n) {
  if (n <= 1) return;
  tfq__philox local = *gen;
  local.used = 4;
  uint64_t blocks = ((uint64_t)n - 1 + 3) / 4;
  uint64_t lo = ((uint64_t)gen->ctr[1] << 32 | gen->ctr[0]) + blocks;
  int carry = lo < blocks;
  gen->ctr[0] = (uint32_t)lo;
  gen->ctr[1] = (uint32_t)(lo >> 32);
  if (carry) {
    uint64_t hi = ((uint64_t)gen->ctr[3] << 32 | gen->ctr[2]) + 1;
    gen->ctr[2] = (uint32_t)hi;
    gen->ctr[3] = (uint32_t)(hi >> 32);
  }
  for (int64_t i = 0; i + 1 < n; i++) {
    uint32_t m = (uint32_t)(n - i);
    int64_t j = i + (int64_t)(tfq__philox_next(&local) % m);
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

tfq_code tfq_producer_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel; /* a runner's close-on-stop cancel of the queue wakes a blocked enqueue */
  tfq_producer *p = ctx;
  tfq__lock(&p->mu);
  tfq_code c = TFQ_OK;
  tfq_tuple *batch = NULL;
  if (p->o.num_epochs != TFQ_EPOCHS_UNLIMITED && p->epochs_done >= p->o.num_epochs) {
    c = tfq_status_set(st, TFQ_OUT_OF_RANGE, "Reached limit of %lld", (long long)p->o.num_epochs);
    goto out;
  }
  if (p->nrows == 0 && strcmp(p->what, "string_input_producer") == 0) {
    /* Only string_input_producer asserts (a tf.Assert op: its message is wrapped); the other
     * producers enqueue empty epochs, as TF's do. */
    c = tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                       "assertion failed: [string_input_producer requires a non-null input "
                       "tensor]");
    goto out;
  }
  p->epochs_done++;
  if (p->o.shuffle) {
    for (int64_t i = 0; i < p->nrows; i++) p->perm[i] = i;
    if (p->o.tf_exact) {
      tf_shuffle(&p->tf_gen, p->perm, p->nrows);
    } else {
      for (int64_t i = p->nrows - 1; i > 0; i--) {
        int64_t j = (int64_t)tfq__pcg32_bounded64(&p->rng, (uint64_t)i + 1);
        int64_t t = p->perm[i];
        p->perm[i] = p->perm[j];
        p->perm[j] = t;
      }
    }
    size_t n = tfq_tuple_size(p->rows);
    if (tfq_tuple_new(n, &batch, NULL)) {
      c = TFQ__OOM(st);
      goto out;
    }
    for (size_t i = 0; i < n; i++) {
      tfq_tensor *t;
      if (gather(tfq_tuple_get(p->rows, i), p->perm, p->nrows, &t)) {
        c = TFQ__OOM(st);
        goto out;
      }
      tfq_tuple_set_take(batch, i, t);
    }
  }
  /* The epoch counts once started, as TF's count_up_to does. */
  c = tfq_queue_enqueue_many(p->q, batch ? batch : p->rows, p->cancel, TFQ_NO_TIMEOUT, st);
out:
  tfq_tuple_free(batch);
  tfq__unlock(&p->mu);
  if (!c) tfq_status_clear(st);
  return c;
}

/* A cancelling close always succeeds (queue.h). */
static void close_now(tfq_queue *q) {
  if (tfq_queue_close(q, 1, NULL, TFQ_NO_TIMEOUT, NULL) != TFQ_OK) abort();
}

tfq_code tfq_producer_run(tfq_producer *p, tfq_status *st) {
  tfq_code c;
  while ((c = tfq_producer_step(p, NULL, st)) == TFQ_OK) {
  }
  if (c == TFQ_OUT_OF_RANGE) {
    c = tfq_queue_close(p->q, 0, p->cancel, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_CANCELLED && tfq_queue_is_closed(p->q)) c = TFQ_OK; /* closed by someone else */
    if (!c) tfq_status_clear(st);
    return c;
  }
  close_now(p->q);
  return c;
}

/* ---- convenience ---- */

struct tfq_producer_runner {
  tfq_runner *runner;
  tfq_producer *p;
};

struct tfq_producer_thread {
  pthread_t th;
  tfq_producer *p;
  tfq_code code;
  tfq_status *st;
};

static void *thread_main(void *arg) {
  tfq_producer_thread *t = arg;
  t->code = tfq_producer_run(t->p, t->st);
  return NULL;
}

static tfq_code start(tfq_producer *p, tfq_producer_thread **thread, tfq_status *st) {
  tfq_producer_thread *t = tfq__calloc(1, sizeof *t);
  if (!t || !(t->st = tfq_status_new())) {
    tfq_free(t);
    return TFQ__OOM(st);
  }
  t->p = p;
  if (pthread_create(&t->th, NULL, thread_main, t) != 0) {
    tfq_status_free(t->st);
    tfq_free(t);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "cannot start a producer thread");
  }
  *thread = t;
  return TFQ_OK;
}

tfq_code tfq__producer_build(const tfq_tuple *rows, const tfq_producer_options *o, const char *what,
                             tfq_queue **queue, tfq_producer **producer, tfq_status *st) {
  *queue = NULL;
  *producer = NULL;
  if (!o) o = &default_opts;
  tfq_spec *spec;
  tfq_code c = tfq_spec_new(&spec, st);
  if (c) return c;
  for (size_t i = 0; i < tfq_tuple_size(rows) && !c; i++) {
    const tfq_tensor *t = tfq_tuple_get(rows, i);
    if (!t)
      c = tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                         "Either `input_tensor` must have a fully defined shape or "
                         "`element_shape` must be specified");
    else if (tfq_tensor_rank(t) < 1) /* TF's shape check of a known scalar shape */
      c = tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Shape () must have rank at least 1");
    else
      c = tfq_spec_add(spec, tfq_tensor_dtype(t), tfq_tensor_dims(t) + 1, tfq_tensor_rank(t) - 1,
                       NULL, st);
  }
  tfq_queue *q = NULL;
  /* TF's kernel names: input_producer's queue op is "input_producer/FIFOQueueV2", and
   * slice_input_producer's "input_producer/input_producer" (the conformance suite checks). */
  const char *qname = strcmp(what, "input_producer") == 0         ? "input_producer/FIFOQueueV2"
                      : strcmp(what, "slice_input_producer") == 0 ? "input_producer/input_producer"
                                                                  : "input_producer";
  if (!c) c = tfq_fifo_queue_new(spec, o->capacity, qname, &q, st);
  tfq_spec_free(spec);
  tfq_producer *p = NULL;
  if (!c) c = tfq_producer_new(q, rows, o, &p, st);
  if (c) {
    tfq_queue_free(q);
    return c;
  }
  p->what = what;
  *queue = q;
  *producer = p;
  return TFQ_OK;
}

/* With a thread (coord NULL) or under a coordinator's QueueRunner. */
static tfq_code producer_named(const tfq_tuple *rows, const tfq_producer_options *o,
                               const char *what, tfq_coord *coord, tfq_queue **queue,
                               tfq_producer_thread **thread, tfq_producer_runner **runner,
                               tfq_status *st) {
  if (thread) *thread = NULL;
  if (runner) *runner = NULL;
  tfq_queue *q;
  tfq_producer *p;
  tfq_code c = tfq__producer_build(rows, o, what, &q, &p, st);
  if (c) return c;
  if (coord) {
    tfq_producer_runner *h = tfq__calloc(1, sizeof *h);
    if (!h) c = TFQ__OOM(st);
    if (!c) c = tfq_runner_new(q, &h->runner, st);
    if (!c) c = tfq_runner_add_op(h->runner, tfq_producer_step, p, what, st);
    if (!c) c = tfq_runner_start(h->runner, coord, 0, st);
    if (!c) {
      h->p = p;
      *runner = h;
    } else if (h) {
      tfq_runner_free(h->runner);
      tfq_free(h);
    }
  } else {
    c = start(p, thread, st);
  }
  if (c) {
    tfq_producer_free(p);
    tfq_queue_free(q);
    return c;
  }
  *queue = q;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_input_producer(const tfq_tuple *rows, const tfq_producer_options *o, tfq_queue **queue,
                            tfq_producer_thread **thread, tfq_status *st) {
  *queue = NULL;
  return producer_named(rows, o, "input_producer", NULL, queue, thread, NULL, st);
}

/* A 1-D string tensor as the one-component rows of string_input_producer. */
static tfq_code string_rows(const tfq_tensor *strings, tfq_tuple **rows, tfq_status *st) {
  if (!strings)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "string_input_producer requires a non-null input tensor");
  if (tfq_tensor_dtype(strings) != TFQ_STRING || tfq_tensor_rank(strings) != 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "string_input_producer expects a 1-D string tensor");
  tfq_code c = tfq_tuple_new(1, rows, st);
  if (c) return c;
  tfq_tuple_set_take(*rows, 0, tfq_tensor_ref((tfq_tensor *)strings));
  return TFQ_OK;
}

tfq_code tfq_string_input_producer_start(const tfq_tensor *strings, const tfq_producer_options *o,
                                         tfq_coord *coord, tfq_queue **queue,
                                         tfq_producer_runner **runner, tfq_status *st) {
  *queue = NULL;
  *runner = NULL;
  if (!coord) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a coordinator is required");
  tfq_tuple *rows;
  tfq_code c = string_rows(strings, &rows, st);
  if (c) return c;
  c = producer_named(rows, o, "string_input_producer", coord, queue, NULL, runner, st);
  tfq_tuple_free(rows);
  return c;
}

void tfq_producer_runner_free(tfq_producer_runner *r) {
  if (!r) return;
  tfq_runner_free(r->runner);
  tfq_producer_free(r->p);
  tfq_free(r);
}

tfq_code tfq_string_input_producer(const tfq_tensor *strings, const tfq_producer_options *o,
                                   tfq_queue **queue, tfq_producer_thread **thread,
                                   tfq_status *st) {
  *queue = NULL;
  *thread = NULL;
  tfq_tuple *rows;
  tfq_code c = string_rows(strings, &rows, st);
  if (c) return c;
  c = producer_named(rows, o, "string_input_producer", NULL, queue, thread, NULL, st);
  tfq_tuple_free(rows);
  return c;
}

tfq_code tfq_range_input_producer(int32_t limit, const tfq_producer_options *o, tfq_queue **queue,
                                  tfq_producer_thread **thread, tfq_status *st) {
  *queue = NULL;
  *thread = NULL;
  if (limit < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "limit must be >= 0 not %d", (int)limit);
  int64_t d = limit;
  tfq_tuple *rows;
  tfq_tensor *t;
  tfq_code c = tfq_tuple_new(1, &rows, st);
  if (c) return c;
  c = tfq_tensor_new(TFQ_INT32, &d, 1, &t, st);
  if (c) {
    tfq_tuple_free(rows);
    return c;
  }
  int32_t *v = tfq_tensor_data(t);
  for (int32_t i = 0; i < limit; i++) v[i] = i;
  tfq_tuple_set_take(rows, 0, t);
  c = producer_named(rows, o, "range_input_producer", NULL, queue, thread, NULL, st);
  tfq_tuple_free(rows);
  return c;
}

tfq_code tfq_slice_input_producer(const tfq_tuple *tensors, const tfq_producer_options *o,
                                  tfq_queue **queue, tfq_producer_thread **thread, tfq_status *st) {
  *queue = NULL;
  *thread = NULL;
  if (!tensors)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Expected at least one tensor in slice_input_producer().");
  return producer_named(tensors, o, "slice_input_producer", NULL, queue, thread, NULL, st);
}

tfq_code tfq_producer_thread_join(tfq_producer_thread *t, tfq_status *st) {
  if (!t) return TFQ_OK;
  if (pthread_join(t->th, NULL) != 0) abort();
  tfq_code c = t->code;
  if (c)
    tfq_status_set(st, c, "%s", tfq_status_message(t->st));
  else
    tfq_status_clear(st);
  tfq_status_free(t->st);
  tfq_producer_free(t->p);
  tfq_free(t);
  return c;
}

void tfq_producer_thread_stop(tfq_producer_thread *t) {
  tfq_producer_cancel(t->p);
  close_now(t->p->q);
}
