/* Coordinator and LooperThread (their rules: coord.h). */
#include <string.h>

#include "coord_internal.h"

#define MAX_CLEAN 16

typedef struct creg {
  struct creg *next;
  pthread_t th;
  char *name;
} creg;

struct tfq_coord {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stopped, joined;
  tfq_code err;
  char msg[TFQ__MSG_CAP];
  tfq_code clean[MAX_CLEAN];
  int nclean;
  tfq_cancel *cancel;
  creg *threads;
  long counter;
};

tfq_code tfq__coord_sync_init(pthread_mutex_t *mu, pthread_cond_t *cv, tfq_cancel **cancel) {
  if (tfq_cancel_new(cancel, NULL)) return TFQ_RESOURCE_EXHAUSTED;
  if (tfq__mutex_init(mu)) {
    tfq_cancel_free(*cancel);
    *cancel = NULL;
    return TFQ_RESOURCE_EXHAUSTED;
  }
  tfq__cond_init_monotonic(cv);
  return TFQ_OK;
}

void tfq__coord_sync_destroy(pthread_mutex_t *mu, pthread_cond_t *cv, tfq_cancel *cancel) {
  tfq_cancel_free(cancel);
  pthread_cond_destroy(cv);
  pthread_mutex_destroy(mu);
}

tfq_code tfq_coord_new(tfq_coord **out, tfq_status *st) {
  *out = NULL;
  tfq_coord *c = tfq__calloc(1, sizeof *c);
  if (!c) return TFQ__OOM(st);
  if (tfq__coord_sync_init(&c->mu, &c->cv, &c->cancel)) {
    tfq_free(c);
    return TFQ__OOM(st);
  }
  c->clean[c->nclean++] = TFQ_OUT_OF_RANGE;
  *out = c;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_coord_free(tfq_coord *c) {
  if (!c) return;
  for (creg *r = c->threads; r;) { /* never joined: detach so they do not leak */
    creg *n = r->next;
    pthread_detach(r->th);
    tfq_free(r->name);
    tfq_free(r);
    r = n;
  }
  tfq__coord_sync_destroy(&c->mu, &c->cv, c->cancel);
  tfq_free(c);
}

void tfq_coord_add_clean_code(tfq_coord *c, tfq_code code) {
  tfq__lock(&c->mu);
  if (c->nclean < MAX_CLEAN && !tfq__coord_is_clean(c, code)) c->clean[c->nclean++] = code;
  tfq__unlock(&c->mu);
}

int tfq__coord_is_clean(tfq_coord *c, tfq_code code) {
  for (int i = 0; i < c->nclean; i++)
    if (c->clean[i] == code) return 1;
  return 0;
}

tfq_code tfq_coord_request_stop(tfq_coord *c, tfq_code code, const char *message) {
  tfq__lock(&c->mu);
  if (tfq__coord_is_clean(c, code)) code = TFQ_OK;
  if (c->joined && code != TFQ_OK) {
    tfq__unlock(&c->mu);
    return code;
  }
  int trigger = 0;
  if (!c->stopped) {
    if (code != TFQ_OK && c->err == TFQ_OK) {
      c->err = code;
      snprintf(c->msg, sizeof c->msg, "%s", message ? message : tfq_strerror(code));
    }
    c->stopped = 1;
    trigger = 1;
    if (pthread_cond_broadcast(&c->cv)) abort();
  }
  tfq__unlock(&c->mu);
  if (trigger) tfq_cancel_trigger(c->cancel);
  return TFQ_OK;
}

int tfq_coord_should_stop(tfq_coord *c) { return tfq__locked_int(&c->mu, &c->stopped); }

int tfq_coord_wait_for_stop(tfq_coord *c, int64_t timeout_us) {
  int64_t deadline = tfq__deadline_ns(timeout_us, -1);
  tfq__lock(&c->mu);
  while (!c->stopped && timeout_us != 0)
    if (tfq__cond_wait_until(&c->cv, &c->mu, deadline)) break;
  int s = c->stopped;
  tfq__unlock(&c->mu);
  return s;
}

void tfq_coord_clear_stop(tfq_coord *c) {
  tfq__lock(&c->mu);
  c->stopped = 0;
  c->joined = 0;
  c->err = TFQ_OK;
  c->msg[0] = '\0';
  tfq__unlock(&c->mu);
  tfq_cancel_reset(c->cancel);
}

tfq_cancel *tfq_coord_cancel(tfq_coord *c) { return c->cancel; }

/* The registration record is allocated before the thread is started (a thread that waits for
 * the stop could not be joined if registering it failed afterwards), then linked. */
static creg *creg_new(tfq_coord *c, const char *name) {
  creg *r = tfq__calloc(1, sizeof *r);
  if (!r) return NULL;
  tfq__lock(&c->mu);
  long n = c->counter++;
  tfq__unlock(&c->mu);
  if (name) {
    r->name = tfq__strdup(name);
  } else if ((r->name = tfq_malloc(32))) {
    snprintf(r->name, 32, "Thread-%ld", n);
  }
  if (!r->name) {
    tfq_free(r);
    return NULL;
  }
  return r;
}

static void creg_link(tfq_coord *c, creg *r, pthread_t thread) {
  r->th = thread;
  tfq__lock(&c->mu);
  r->next = c->threads;
  c->threads = r;
  tfq__unlock(&c->mu);
}

tfq_code tfq__coord_register_thread(tfq_coord *c, pthread_t thread, const char *name,
                                    tfq_status *st) {
  creg *r = creg_new(c, name);
  if (!r) return TFQ__OOM(st);
  creg_link(c, r, thread);
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_coord_start_thread(tfq_coord *c, const char *name, void *(*fn)(void *), void *arg,
                                tfq_status *st) {
  pthread_t th;
  creg *r = creg_new(c, name);
  if (!r) return TFQ__OOM(st);
  if (pthread_create(&th, NULL, fn, arg)) {
    tfq_free(r->name);
    tfq_free(r);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "cannot create thread %s", name ? name : "");
  }
  creg_link(c, r, th);
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_coord_join(tfq_coord *c, int64_t grace_us, int ignore_live_threads, tfq_status *st) {
  tfq__lock(&c->mu);
  creg *list = c->threads; /* threads registered from now on belong to a later join */
  c->threads = NULL;
  tfq__unlock(&c->mu);
  char names[TFQ__MSG_CAP];
  tfq__buf nb = {names, sizeof names, 0};
  names[0] = '\0';
  int stragglers = 0;
  int64_t deadline = -1;
  for (creg *r = list; r;) {
    /* Phase 1: until a stop is requested, wait as long as it takes (in short slices so that a
     * stop is noticed).  Phase 2: the grace period from the moment the stop is seen. */
    int joined = 0;
    for (;;) {
      if (deadline < 0 && tfq_coord_should_stop(c))
        deadline = tfq__deadline_ns(grace_us < 0 ? 0 : grace_us, -1);
      if (deadline >= 0) {
        joined = tfq__join_until(r->th, deadline) == 0;
        break;
      }
      if (tfq__join_until(r->th, tfq__deadline_ns(20000, -1)) == 0) {
        joined = 1;
        break;
      }
    }
    if (!joined) {
      pthread_detach(r->th);
      tfq__buf_printf(&nb, "%s%s", stragglers ? " " : "", r->name);
      stragglers++;
    }
    creg *n = r->next;
    tfq_free(r->name);
    tfq_free(r);
    r = n;
  }
  tfq__lock(&c->mu);
  c->joined = 1;
  tfq_code err = c->err;
  if (err) tfq_status_set(st, err, "%s", c->msg);
  tfq__unlock(&c->mu);
  if (err) return err;
  if (stragglers && !ignore_live_threads)
    return tfq_status_set(st, TFQ_DEADLINE_EXCEEDED,
                          "Coordinator stopped with threads still running: %s", names);
  tfq_status_clear(st);
  return TFQ_OK;
}

int tfq_coord_joined(tfq_coord *c) { return tfq__locked_int(&c->mu, &c->joined); }

tfq_code tfq_coord_error(tfq_coord *c, tfq_status *st) {
  tfq__lock(&c->mu);
  tfq_code err = c->err;
  if (err)
    tfq_status_set(st, err, "%s", c->msg);
  else
    tfq_status_clear(st);
  tfq__unlock(&c->mu);
  return err;
}

/* ---- LooperThread ---- */

typedef struct looper {
  tfq_coord *c;
  int64_t interval_us;
  tfq_step_fn fn;
  void *ctx;
} looper;

static void *looper_main(void *arg) {
  looper l = *(looper *)arg;
  tfq_free(arg);
  struct tfq_status st;
  tfq_status_clear(&st);
  int64_t next = tfq__now_ns();
  for (;;) {
    if (l.interval_us < 0) {
      if (tfq_coord_should_stop(l.c)) break;
    } else {
      int64_t wait = next - tfq__now_ns();
      if (tfq_coord_wait_for_stop(l.c, wait > 0 ? wait / 1000 : 0)) break;
      next += l.interval_us * 1000; /* fixed boundaries: the schedule does not drift */
    }
    tfq_code code = l.fn(l.ctx, tfq_coord_cancel(l.c), &st);
    if (code != TFQ_OK) {
      if (tfq_coord_request_stop(l.c, code, st.msg) != TFQ_OK) {
        /* The coordinator was already joined: TF raises the error in the looper thread, which
         * then ends; this thread ends too, and nobody is left to report it to. */
      }
      break;
    }
  }
  return NULL;
}

tfq_code tfq_coord_loop(tfq_coord *c, int64_t interval_us, tfq_step_fn fn, void *ctx,
                        const char *name, tfq_status *st) {
  looper *l = tfq_malloc(sizeof *l);
  if (!l) return TFQ__OOM(st);
  *l = (looper){c, interval_us, fn, ctx};
  creg *r = creg_new(c, name ? name : "LooperThread");
  if (!r) {
    tfq_free(l);
    return TFQ__OOM(st);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, looper_main, l)) {
    tfq_free(l);
    tfq_free(r->name);
    tfq_free(r);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "cannot create a LooperThread");
  }
  creg_link(c, r, th);
  tfq_status_clear(st);
  return TFQ_OK;
}
