/* tfq_tf_dispatch: a tfq_pipeline's batches into a cluster's TF queues (tfq/tf.h).
 *
 * One consumer thread calls tfq_pipeline_next() (the pipeline has one consumer) and puts each
 * batch in a one-batch hand-off; one sender thread per TF queue takes from it and enqueues.  A
 * sender blocked on a full TF queue takes nothing, so the next batch goes to the sender whose
 * queue has room first: the least full, by backpressure.  Every thread is registered with the
 * dispatch's coordinator; a stop wakes the consumer (tfq_pipeline_stop) and the senders (the
 * hand-off's condition variable; a TF enqueue returns within the queue's timeout). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/pipeline.h>
#include <time.h>

#include "tf_internal.h"

typedef struct sender {
  tfq_tf_dispatch *d;
  size_t i;
  tfq_tf_queue *q;
  char *label;
  atomic_llong rows, batches;
} sender;

struct tfq_tf_dispatch {
  tfq_pipeline *p;
  tfq_coord *coord;
  sender *s;
  size_t n;
  tfq_tf_send_fn send;
  void *send_ctx;
  tfq_tf_state_fn state;
  void *state_ctx;
  int64_t every;
  pthread_mutex_t mu;
  pthread_cond_t cv;  /* the hand-off changed, or a stop */
  tfq_tuple *slot;    /* the batch waiting for a sender (under mu) */
  int64_t slot_seq;   /* its sequence number */
  int input_done;     /* the pipeline returned OUT_OF_RANGE and the slot was taken (under mu) */
  int consumer_done;  /* the consumer thread ended (under mu) */
  atomic_int running; /* senders still running */
  atomic_llong taken; /* batches taken from the pipeline */
  int started;
};

/* Requests a stop with an error (a stop requested already keeps its own). */
static void stop_with(tfq_coord *c, tfq_code code, const char *msg) {
  if (tfq_coord_request_stop(c, code, msg) != TFQ_OK) {
    /* stopped already */
  }
}

static tfq_code oom(tfq_status *st) {
  return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
}

tfq_code tfq_tf_dispatch_new(tfq_pipeline *p, tfq_tf_queue *const *queues, size_t n,
                             tfq_tf_dispatch **out, tfq_status *st) {
  *out = NULL;
  if (!p || n == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a dispatch needs a pipeline and a queue");
  tfq_tf_dispatch *d = tfq_malloc(sizeof *d);
  if (!d) return oom(st);
  memset(d, 0, sizeof *d);
  d->s = tfq_malloc(n * sizeof *d->s);
  if (!d->s || tfq_coord_new(&d->coord, st) != TFQ_OK) {
    tfq_free(d->s);
    tfq_free(d);
    return oom(st);
  }
  memset(d->s, 0, n * sizeof *d->s);
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  d->p = p;
  d->n = n;
  for (size_t i = 0; i < n; i++) {
    d->s[i].d = d;
    d->s[i].i = i;
    d->s[i].q = queues ? queues[i] : NULL;
    atomic_init(&d->s[i].rows, 0);
    atomic_init(&d->s[i].batches, 0);
  }
  atomic_init(&d->running, 0);
  atomic_init(&d->taken, 0);
  *out = d;
  return TFQ_OK;
}

void tfq_tf_dispatch_free(tfq_tf_dispatch *d) {
  if (!d) return;
  tfq_tuple_free(d->slot);
  for (size_t i = 0; i < d->n; i++) tfq_free(d->s[i].label);
  tfq_free(d->s);
  tfq_coord_free(d->coord);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->mu);
  tfq_free(d);
}

tfq_code tfq_tf_dispatch_set_label(tfq_tf_dispatch *d, size_t i, const char *label,
                                   tfq_status *st) {
  if (i >= d->n) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "no sender %zu", i);
  char *l = NULL;
  if (label) {
    size_t len = strlen(label);
    if (!(l = tfq_malloc(len + 1))) return oom(st);
    memcpy(l, label, len + 1);
  }
  tfq_free(d->s[i].label);
  d->s[i].label = l;
  return TFQ_OK;
}

void tfq_tf_dispatch_set_send_fn(tfq_tf_dispatch *d, tfq_tf_send_fn fn, void *ctx) {
  d->send = fn;
  d->send_ctx = ctx;
}

void tfq_tf_dispatch_set_state_fn(tfq_tf_dispatch *d, int64_t every, tfq_tf_state_fn fn,
                                  void *ctx) {
  d->every = every > 0 ? every : 1;
  d->state = fn;
  d->state_ctx = ctx;
}

tfq_coord *tfq_tf_dispatch_coord(tfq_tf_dispatch *d) { return d->coord; }

static void lock(tfq_tf_dispatch *d) {
  if (pthread_mutex_lock(&d->mu) != 0) abort();
}
static void unlock(tfq_tf_dispatch *d) {
  if (pthread_mutex_unlock(&d->mu) != 0) abort();
}

/* Waits on the condition variable until `deadline` (CLOCK_REALTIME). */
static int timed_wait(tfq_tf_dispatch *d, const struct timespec *deadline) {
  return pthread_cond_timedwait(&d->cv, &d->mu, deadline);
}

static struct timespec deadline_in(int64_t us) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += (time_t)(us / 1000000);
  ts.tv_nsec += (long)(us % 1000000) * 1000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  return ts;
}

tfq_code tfq_tf_dispatch_take(tfq_tf_dispatch *d, int64_t timeout_us, tfq_tuple **batch,
                              int64_t *seq, tfq_status *st) {
  *batch = NULL;
  struct timespec dl = deadline_in(timeout_us > 0 ? timeout_us : 0);
  lock(d);
  for (;;) {
    if (d->slot) {
      *batch = d->slot;
      if (seq) *seq = d->slot_seq;
      d->slot = NULL;
      pthread_cond_broadcast(&d->cv);
      unlock(d);
      return TFQ_OK;
    }
    if (tfq_coord_should_stop(d->coord)) {
      unlock(d);
      return tfq_status_set(st, TFQ_CANCELLED, "the dispatch was stopped");
    }
    if (d->input_done) {
      unlock(d);
      return tfq_status_set(st, TFQ_OUT_OF_RANGE, "End of sequence");
    }
    if (timeout_us >= 0 && timed_wait(d, &dl) != 0) {
      unlock(d);
      return tfq_status_set(st, TFQ_DEADLINE_EXCEEDED, "no batch within the time limit");
    }
    if (timeout_us < 0) pthread_cond_wait(&d->cv, &d->mu);
  }
}

/* The consumer: tfq_pipeline_next() into the hand-off, a state every `every` batches. */
static void *consumer_main(void *arg) {
  tfq_tf_dispatch *d = arg;
  tfq_status *st = tfq_status_new();
  if (!st) {
    stop_with(d->coord, TFQ_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  tfq_pipeline_stats ps = {.size = sizeof ps};
  int64_t seq = tfq_pipeline_get_stats(d->p, &ps, st) == TFQ_OK ? ps.batches_out : 0;
  int64_t first = seq;
  for (;;) {
    if (d->state && seq > first && (seq - first) % d->every == 0) {
      char *s = NULL;
      size_t len = 0;
      tfq_code c = tfq_pipeline_save(d->p, &s, &len, st);
      if (!c) c = d->state(d->state_ctx, seq, s, len, st); /* takes s */
      if (c) {
        stop_with(d->coord, c, tfq_status_message(st));
        break;
      }
    }
    tfq_tuple *b = NULL;
    tfq_code c = tfq_pipeline_next(d->p, &b, st);
    lock(d);
    if (c == TFQ_OK) {
      while (d->slot && !tfq_coord_should_stop(d->coord)) {
        struct timespec dl = deadline_in(100000);
        (void)timed_wait(d, &dl);
      }
      if (tfq_coord_should_stop(d->coord)) {
        unlock(d);
        tfq_tuple_free(b);
        break;
      }
      d->slot = b;
      d->slot_seq = seq++;
      atomic_store(&d->taken, seq);
      pthread_cond_broadcast(&d->cv);
      unlock(d);
      continue;
    }
    if (c == TFQ_OUT_OF_RANGE) {
      while (d->slot && !tfq_coord_should_stop(d->coord)) {
        struct timespec dl = deadline_in(100000);
        (void)timed_wait(d, &dl);
      }
      d->input_done = 1;
      pthread_cond_broadcast(&d->cv);
      unlock(d);
      break;
    }
    unlock(d);
    if (c != TFQ_CANCELLED || !tfq_coord_should_stop(d->coord))
      stop_with(d->coord, c, tfq_status_message(st));
    break;
  }
  lock(d);
  d->consumer_done = 1;
  pthread_cond_broadcast(&d->cv);
  unlock(d);
  tfq_status_free(st);
  return NULL;
}

/* The default send: take a batch, enqueue it into sender i's queue. */
static tfq_code plain_send(tfq_tf_dispatch *d, sender *s, tfq_status *st) {
  tfq_tuple *b;
  tfq_code c = tfq_tf_dispatch_take(d, 100000, &b, NULL, st);
  if (c == TFQ_DEADLINE_EXCEEDED) return TFQ_OK;
  if (c) return c;
  tfq_tensor *t0 = tfq_tuple_get(b, 0);
  int64_t rows = t0 && tfq_tensor_rank(t0) > 0 ? tfq_tensor_dim(t0, 0) : 0;
  c = tfq_tf_queue_enqueue_batch(s->q, b, st);
  tfq_tuple_free(b);
  if (c == TFQ_OK) tfq_tf_dispatch_count(d, s->i, rows);
  return c;
}

static void *sender_main(void *arg) {
  sender *s = arg;
  tfq_tf_dispatch *d = s->d;
  tfq_status *st = tfq_status_new();
  tfq_code c = st ? TFQ_OK : TFQ_RESOURCE_EXHAUSTED;
  while (!c && !tfq_coord_should_stop(d->coord))
    c = d->send ? d->send(d->send_ctx, s->i, tfq_coord_cancel(d->coord), st) : plain_send(d, s, st);
  if (c && c != TFQ_OUT_OF_RANGE && !(c == TFQ_CANCELLED && tfq_coord_should_stop(d->coord))) {
    if (s->label) {
      const char *m = st ? tfq_status_message(st) : "out of memory";
      size_t len = strlen(s->label) + strlen(m) + 3;
      char *msg = tfq_malloc(len);
      if (msg) snprintf(msg, len, "%s: %s", s->label, m);
      stop_with(d->coord, c, msg ? msg : m);
      tfq_free(msg);
    } else {
      stop_with(d->coord, c, st ? tfq_status_message(st) : "out of memory");
    }
  }
  atomic_fetch_sub(&d->running, 1);
  tfq_status_free(st);
  return NULL;
}

/* Wakes the consumer (blocked in the pipeline) and the senders once the coordinator stops. */
static void *watch_main(void *arg) {
  tfq_tf_dispatch *d = arg;
  for (;;) {
    if (tfq_coord_wait_for_stop(d->coord, 100000)) break;
    lock(d);
    int done = d->consumer_done && atomic_load(&d->running) == 0;
    unlock(d);
    if (done) return NULL;
  }
  tfq_pipeline_stop(d->p);
  lock(d);
  pthread_cond_broadcast(&d->cv);
  unlock(d);
  return NULL;
}

tfq_code tfq_tf_dispatch_start(tfq_tf_dispatch *d, tfq_status *st) {
  if (d->started) return tfq_status_set(st, TFQ_FAILED_PRECONDITION, "started already");
  d->started = 1;
  tfq_code c = tfq_coord_start_thread(d->coord, "tfq_tf_dispatch_watch", watch_main, d, st);
  if (!c) c = tfq_coord_start_thread(d->coord, "tfq_tf_dispatch_consumer", consumer_main, d, st);
  for (size_t i = 0; !c && i < d->n; i++) {
    if (!d->send && !d->s[i].q) continue; /* no queue: no sender */
    atomic_fetch_add(&d->running, 1);
    c = tfq_coord_start_thread(d->coord, "tfq_tf_dispatch_sender", sender_main, &d->s[i], st);
    if (c) atomic_fetch_sub(&d->running, 1);
  }
  if (c) stop_with(d->coord, c, tfq_status_message(st));
  return c;
}

int tfq_tf_dispatch_running(tfq_tf_dispatch *d) { return atomic_load(&d->running); }

tfq_code tfq_tf_dispatch_join(tfq_tf_dispatch *d, int64_t grace_us, tfq_status *st) {
  return tfq_coord_join(d->coord, grace_us, 1, st);
}

void tfq_tf_dispatch_count(tfq_tf_dispatch *d, size_t i, int64_t rows) {
  if (i >= d->n) return;
  atomic_fetch_add(&d->s[i].rows, rows);
  atomic_fetch_add(&d->s[i].batches, 1);
}

int64_t tfq_tf_dispatch_rows(tfq_tf_dispatch *d, size_t i) {
  return i < d->n ? (int64_t)atomic_load(&d->s[i].rows) : 0;
}
int64_t tfq_tf_dispatch_batches(tfq_tf_dispatch *d, size_t i) {
  return i < d->n ? (int64_t)atomic_load(&d->s[i].batches) : 0;
}
int64_t tfq_tf_dispatch_taken(tfq_tf_dispatch *d) { return (int64_t)atomic_load(&d->taken); }
