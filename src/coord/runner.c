/* QueueRunner (coord.h): Python's thread rules with the C++ runner's status keeping. */
#include <string.h>

#include "coord_internal.h"

typedef struct op {
  tfq_step_fn fn;
  void *ctx;
  char *name;
} op;

typedef struct thread_arg {
  tfq_runner *r;
  size_t op; /* index, or SIZE_MAX for the close-on-stop thread */
} thread_arg;

struct tfq_runner {
  tfq_queue *q;
  op *ops;
  size_t nops, cap;
  uint32_t closed; /* bit c set: code c ends an op cleanly (queue_closed_exception_types) */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  tfq_coord *coord;
  tfq_cancel *own_cancel;
  pthread_t *threads;
  thread_arg *args;
  size_t nthreads;
  int started;    /* threads exist and were not joined */
  int live;       /* op threads not yet exited */
  int exited;     /* threads (op and close-on-stop) past their last access to the runner */
  int first_runs; /* op threads that finished their first run */
  tfq_code first_err;
  char first_msg[TFQ__MSG_CAP];
  tfq_code err;
  char msg[TFQ__MSG_CAP];
  int nerrors;
};

tfq_code tfq_runner_new(tfq_queue *q, tfq_runner **out, tfq_status *st) {
  *out = NULL;
  tfq_runner *r = tfq__calloc(1, sizeof *r);
  if (!r) return TFQ__OOM(st);
  if (tfq__coord_sync_init(&r->mu, &r->cv, &r->own_cancel)) {
    tfq_free(r);
    return TFQ__OOM(st);
  }
  r->q = tfq_queue_ref(q);
  r->closed = 1u << TFQ_OUT_OF_RANGE;
  *out = r;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_runner_add_op(tfq_runner *r, tfq_step_fn step, void *ctx, const char *name,
                           tfq_status *st) {
  if (r->nops == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 4;
    op *n = tfq_realloc(r->ops, cap * sizeof *n);
    if (!n) return TFQ__OOM(st);
    r->ops = n;
    r->cap = cap;
  }
  char *nm = tfq__strdup(name ? name : "op");
  if (!nm) return TFQ__OOM(st);
  r->ops[r->nops++] = (op){step, ctx, nm};
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_runner_add_closed_code(tfq_runner *r, tfq_code code) {
  if (code > TFQ_OK && code <= TFQ_UNAUTHENTICATED) r->closed |= 1u << code;
}

static int is_closed_code(const tfq_runner *r, tfq_code c) {
  return c > TFQ_OK && c <= TFQ_UNAUTHENTICATED && (r->closed >> c & 1u);
}

/* Keeps the first error for tfq_runner_join(); counts it in tfq_runner_num_errors() when
 * `counted` (TF's exceptions_raised: only errors raised without a coordinator). */
static void record(tfq_runner *r, tfq_code code, const char *msg, int counted) { /* r->mu held */
  if (counted) r->nerrors++;
  if (r->err == TFQ_OK) {
    r->err = code;
    snprintf(r->msg, sizeof r->msg, "%s", msg);
  }
}

static void thread_exit(tfq_runner *r) { /* the thread's last touch of the runner */
  tfq__lock(&r->mu);
  r->exited++;
  if (pthread_cond_broadcast(&r->cv)) abort();
  tfq__unlock(&r->mu);
}

static void *op_main(void *arg) {
  thread_arg *ta = arg;
  tfq_runner *r = ta->r;
  const op *o = &r->ops[ta->op];
  tfq_cancel *cancel = r->coord ? tfq_coord_cancel(r->coord) : r->own_cancel;
  struct tfq_status st;
  tfq_status_clear(&st);
  tfq_code code = TFQ_OK;
  int first = 1;
  for (;;) {
    if (r->coord && tfq_coord_should_stop(r->coord)) {
      code = TFQ_OK;
      break;
    }
    code = o->fn(o->ctx, cancel, &st);
    if (first) {
      first = 0;
      tfq__lock(&r->mu);
      r->first_runs++;
      if (code && !is_closed_code(r, code) && r->first_err == TFQ_OK) {
        r->first_err = code;
        snprintf(r->first_msg, sizeof r->first_msg, "%s", st.msg);
      }
      if (pthread_cond_broadcast(&r->cv)) abort();
      tfq__unlock(&r->mu);
    }
    if (code != TFQ_OK) break;
  }
  int closed = code != TFQ_OK && is_closed_code(r, code);
  int stop_cancel = code == TFQ_CANCELLED && r->coord && tfq_coord_should_stop(r->coord);
  int error = code != TFQ_OK && !closed && !stop_cancel;
  /* The error reaches the coordinator before this thread leaves the live count, as in TF (its
   * runner calls request_stop(e) before the finally block that counts the thread out).  The
   * other order lost records: the last thread out closed the queue, the consumer saw the end of
   * input and requested a clean stop, and this error, arriving after that stop, was dropped. */
  if (error && r->coord && tfq_coord_request_stop(r->coord, code, st.msg) != TFQ_OK) {
    /* The coordinator was already joined (TF raises the error in this thread): the error is not
     * lost, record() below keeps it for tfq_runner_join(). */
  }
  tfq__lock(&r->mu);
  int last = --r->live == 0;
  if (error) record(r, code, st.msg, !r->coord); /* TF appends to exceptions_raised only then */
  tfq__unlock(&r->mu);
  if (closed && last) {
    /* The last thread out closes the queue (behind any pending enqueue, as TF's close_op). */
    struct tfq_status cst;
    tfq_status_clear(&cst);
    tfq_code c = tfq_queue_close(r->q, 0, cancel, TFQ_NO_TIMEOUT, &cst);
    /* A queue someone else already closed is what the close op wanted (Python's runner ignores
     * every close_op error; the C++ runner reports them: tfq reports the others). */
    int already = c == TFQ_CANCELLED && strstr(cst.msg, "is already closed") != NULL;
    if (c && !already && !(c == TFQ_CANCELLED && r->coord && tfq_coord_should_stop(r->coord))) {
      tfq__lock(&r->mu);
      record(r, c, cst.msg, 1);
      tfq__unlock(&r->mu);
    }
  }
  thread_exit(r);
  return NULL;
}

/* Waits for the coordinator's stop (or for every op thread to have exited), then cancels the
 * queue's pending enqueues. */
static void *close_on_stop_main(void *arg) {
  tfq_runner *r = ((thread_arg *)arg)->r;
  for (;;) {
    if (tfq_coord_wait_for_stop(r->coord, 20000)) {
      struct tfq_status st;
      tfq_status_clear(&st);
      tfq_queue_close(r->q, 1, NULL, TFQ_NO_TIMEOUT, &st); /* always OK, as TF's */
      break;
    }
    tfq__lock(&r->mu);
    int done = r->live == 0;
    tfq__unlock(&r->mu);
    if (done) break;
  }
  thread_exit(r);
  return NULL;
}

tfq_code tfq_runner_start(tfq_runner *r, tfq_coord *coord, int64_t wait_us, tfq_status *st) {
  if (r->nops == 0) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Empty enqueue ops to run.");
  tfq__lock(&r->mu);
  int running = r->started;
  tfq__unlock(&r->mu);
  if (running) {
    tfq_status_clear(st);
    return TFQ_OK;
  }
  size_t n = r->nops + (coord ? 1 : 0);
  tfq_free(r->threads);
  tfq_free(r->args);
  r->threads = tfq__calloc(n, sizeof(pthread_t));
  r->args = tfq__calloc(n, sizeof(thread_arg));
  if (!r->threads || !r->args) return TFQ__OOM(st);
  r->coord = coord;
  r->live = (int)r->nops;
  r->exited = 0;
  r->first_runs = 0;
  r->first_err = TFQ_OK;
  r->err = TFQ_OK;
  r->msg[0] = '\0';
  r->nerrors = 0;
  tfq_cancel_reset(r->own_cancel);
  r->nthreads = 0;
  r->started = 1;
  tfq_code code = TFQ_OK;
  for (size_t i = 0; i < n; i++) {
    int is_op = i < r->nops;
    r->args[i] = (thread_arg){r, is_op ? i : SIZE_MAX};
    if (pthread_create(&r->threads[i], NULL, is_op ? op_main : close_on_stop_main, &r->args[i])) {
      code = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "cannot create a QueueRunner thread");
      tfq__lock(&r->mu);
      if (is_op) r->live -= (int)(r->nops - i); /* these ops never start */
      tfq__unlock(&r->mu);
      break;
    }
    r->nthreads++;
    if (coord) {
      char name[256];
      snprintf(name, sizeof name, "QueueRunnerThread-%s-%s", tfq_queue_name(r->q),
               is_op ? r->ops[i].name : "close_on_stop");
      struct tfq_status rst;
      tfq_status_clear(&rst);
      if (tfq__coord_register_thread(coord, r->threads[i], name, &rst)) {
        /* The coordinator cannot join it: stop and join it here. */
        if (tfq_coord_request_stop(coord, TFQ_RESOURCE_EXHAUSTED, rst.msg) != TFQ_OK) {
          /* A coordinator already joined records no stop and hands the error back: this call
           * returns it to its caller below anyway. */
        }
        pthread_join(r->threads[i], NULL);
        code = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "%s", rst.msg);
        tfq__lock(&r->mu);
        if (is_op) r->live -= (int)(r->nops - i - 1); /* the ops after i never start */
        tfq__unlock(&r->mu);
        break;
      }
    }
  }
  if (code) return code;
  if (wait_us > 0) {
    int64_t deadline = tfq__deadline_ns(wait_us, -1);
    tfq__lock(&r->mu);
    int timed_out = 0;
    while (r->first_runs < (int)r->nops && !timed_out)
      timed_out = tfq__cond_wait_until(&r->cv, &r->mu, deadline);
    if (r->first_runs < (int)r->nops) {
      tfq__unlock(&r->mu);
      return tfq_status_set(st, TFQ_DEADLINE_EXCEEDED, "Queues not fed before the timeout");
    }
    if (r->first_err) {
      code = tfq_status_set(st, r->first_err, "%s", r->first_msg);
      tfq__unlock(&r->mu);
      return code;
    }
    code = r->err;
    if (code) tfq_status_set(st, code, "%s", r->msg);
    tfq__unlock(&r->mu);
    if (code) return code;
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_runner_join(tfq_runner *r, tfq_status *st) {
  tfq__lock(&r->mu);
  if (r->started) {
    while (r->exited < (int)r->nthreads) tfq__cond_wait_until(&r->cv, &r->mu, -1);
    if (!r->coord) /* registered threads are joined by the coordinator */
      for (size_t i = 0; i < r->nthreads; i++) pthread_join(r->threads[i], NULL);
    r->started = 0;
  }
  tfq_code code = r->err;
  if (code)
    tfq_status_set(st, code, "%s", r->msg);
  else
    tfq_status_clear(st);
  tfq__unlock(&r->mu);
  return code;
}

int tfq_runner_num_errors(tfq_runner *r) { return tfq__locked_int(&r->mu, &r->nerrors); }

int tfq_runner_running(tfq_runner *r) {
  tfq__lock(&r->mu);
  int n = r->started ? r->live : 0;
  tfq__unlock(&r->mu);
  return n;
}

void tfq_runner_free(tfq_runner *r) {
  if (!r) return;
  if (r->started && !r->coord) tfq_cancel_trigger(r->own_cancel); /* unblock, then join */
  struct tfq_status st;
  tfq_status_clear(&st);
  if (tfq_runner_join(r, &st) != TFQ_OK) {
    /* Freeing drops the runner's error: a caller who wants it calls tfq_runner_join() first. */
  }
  for (size_t i = 0; i < r->nops; i++) tfq_free(r->ops[i].name);
  tfq_free(r->ops);
  tfq_free(r->threads);
  tfq_free(r->args);
  tfq_queue_free(r->q);
  tfq__coord_sync_destroy(&r->mu, &r->cv, r->own_cancel);
  tfq_free(r);
}
