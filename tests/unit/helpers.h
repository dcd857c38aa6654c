/* Small builders shared by the Criterion suites (tests only). */
#ifndef TFQ_TEST_HELPERS_H
#define TFQ_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <tfq/tfq.h>
#include <time.h>

#define OK(expr) cr_assert_eq((expr), TFQ_OK, "%s failed", #expr)
#define NOTIMEOUT TFQ_NO_TIMEOUT

static inline void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Spec with one component per (dtype, rank, dims...) triple; rank -1 = unshaped. */
static inline tfq_spec *spec1(tfq_dtype dt, int rank, const int64_t *dims) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, dt, dims, rank, NULL, NULL));
  return s;
}

/* Spec with two components, each a (dtype, rank, dims) triple; rank -1 = unshaped. */
static inline tfq_spec *spec2(tfq_dtype dt0, int rank0, const int64_t *dims0, tfq_dtype dt1,
                              int rank1, const int64_t *dims1) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, dt0, dims0, rank0, NULL, NULL));
  OK(tfq_spec_add(s, dt1, dims1, rank1, NULL, NULL));
  return s;
}

static inline tfq_queue *fifo(tfq_spec *s, int64_t cap) {
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_fifo_queue_new(s, cap, NULL, &q, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return q;
}

/* A FIFOQueue of scalars of type dt. */
static inline tfq_queue *scalar_fifo(tfq_dtype dt, int64_t cap) {
  tfq_spec *s = spec1(dt, 0, NULL);
  tfq_queue *q = fifo(s, cap);
  tfq_spec_free(s);
  return q;
}

/* 1 if `needle` occurs in `hay` (status messages). */
static inline int contains(const char *hay, const char *needle) {
  return strstr(hay, needle) != NULL;
}

static inline tfq_tensor *tensor(tfq_dtype dt, int rank, const int64_t *dims) {
  tfq_tensor *t;
  OK(tfq_tensor_new(dt, dims, rank, &t, NULL));
  return t;
}

static inline tfq_tensor *f32_vec(int64_t n, const float *v) {
  tfq_tensor *t = tensor(TFQ_FLOAT, 1, &n);
  if (n) memcpy(tfq_tensor_data(t), v, (size_t)n * sizeof(float));
  return t;
}

static inline tfq_tensor *f32_scalar(float v) {
  tfq_tensor *t = tensor(TFQ_FLOAT, 0, NULL);
  *(float *)tfq_tensor_data(t) = v;
  return t;
}

static inline tfq_tensor *i32_scalar(int32_t v) {
  tfq_tensor *t = tensor(TFQ_INT32, 0, NULL);
  *(int32_t *)tfq_tensor_data(t) = v;
  return t;
}

static inline tfq_tensor *i64_scalar(int64_t v) {
  tfq_tensor *t = tensor(TFQ_INT64, 0, NULL);
  *(int64_t *)tfq_tensor_data(t) = v;
  return t;
}

static inline tfq_tensor *i32_vec(int64_t n, const int32_t *v) {
  tfq_tensor *t = tensor(TFQ_INT32, 1, &n);
  if (n) memcpy(tfq_tensor_data(t), v, (size_t)n * sizeof(int32_t));
  return t;
}

/* A tuple from tensors (takes them). */
static inline tfq_tuple *tup(size_t n, tfq_tensor *a, tfq_tensor *b) {
  tfq_tuple *t;
  OK(tfq_tuple_new(n, &t, NULL));
  tfq_tuple_set_take(t, 0, a);
  if (n > 1) tfq_tuple_set_take(t, 1, b);
  return t;
}

static inline float f32_at(const tfq_tuple *t, size_t comp, int64_t i) {
  return ((const float *)tfq_tensor_cdata(tfq_tuple_get(t, comp)))[i];
}
static inline int32_t i32_at(const tfq_tuple *t, size_t comp, int64_t i) {
  return ((const int32_t *)tfq_tensor_cdata(tfq_tuple_get(t, comp)))[i];
}

/* Enqueue a float scalar (takes nothing). */
static inline tfq_code enq_f(tfq_queue *q, float v, tfq_status *st) {
  tfq_tuple *t = tup(1, f32_scalar(v), NULL);
  tfq_code c = tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

static inline tfq_code enq_many_f(tfq_queue *q, int64_t n, const float *v, tfq_status *st) {
  tfq_tuple *t = tup(1, f32_vec(n, v), NULL);
  tfq_code c = tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

/* Dequeue one float scalar; fails the test on error. */
static inline float deq_f(tfq_queue *q) {
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  float v = f32_at(t, 0, 0);
  tfq_tuple_free(t);
  return v;
}

/* A background call and its outcome. */
typedef struct bg {
  pthread_t th;
  tfq_queue *q;
  int op; /* see run_bg */
  int64_t n;
  float vals[64];
  tfq_cancel *cancel;
  int64_t timeout_us;
  tfq_tuple *out;
  tfq_code code;
  char msg[512];
  atomic_int done;
} bg;

enum { BG_ENQ, BG_ENQ_MANY, BG_DEQ, BG_DEQ_MANY, BG_DEQ_UP_TO, BG_CLOSE, BG_CLOSE_CANCEL };

static void *bg_main(void *arg) {
  bg *b = arg;
  tfq_status *st = tfq_status_new();
  tfq_tuple *t = NULL;
  switch (b->op) {
    case BG_ENQ:
      t = tup(1, f32_scalar(b->vals[0]), NULL);
      b->code = tfq_queue_enqueue(b->q, t, b->cancel, b->timeout_us, st);
      break;
    case BG_ENQ_MANY:
      t = tup(1, f32_vec(b->n, b->vals), NULL);
      b->code = tfq_queue_enqueue_many(b->q, t, b->cancel, b->timeout_us, st);
      break;
    case BG_DEQ: b->code = tfq_queue_dequeue(b->q, &b->out, b->cancel, b->timeout_us, st); break;
    case BG_DEQ_MANY:
      b->code = tfq_queue_dequeue_many(b->q, b->n, &b->out, b->cancel, b->timeout_us, st);
      break;
    case BG_DEQ_UP_TO:
      b->code = tfq_queue_dequeue_up_to(b->q, b->n, &b->out, b->cancel, b->timeout_us, st);
      break;
    case BG_CLOSE: b->code = tfq_queue_close(b->q, 0, b->cancel, b->timeout_us, st); break;
    case BG_CLOSE_CANCEL: b->code = tfq_queue_close(b->q, 1, b->cancel, b->timeout_us, st); break;
  }
  tfq_tuple_free(t);
  snprintf(b->msg, sizeof b->msg, "%s", tfq_status_message(st));
  tfq_status_free(st);
  atomic_store(&b->done, 1);
  return NULL;
}

static inline void bg_start(bg *b, tfq_queue *q, int op) {
  b->q = q;
  b->op = op;
  if (!b->timeout_us) b->timeout_us = NOTIMEOUT;
  atomic_init(&b->done, 0);
  cr_assert_eq(pthread_create(&b->th, NULL, bg_main, b), 0);
}

/* Asserts the background call is still blocked after a short while. */
static inline void bg_assert_blocked(bg *b) {
  sleep_ms(60);
  cr_assert_eq(atomic_load(&b->done), 0, "background op %d completed but should block", b->op);
}

static inline void bg_join(bg *b) { pthread_join(b->th, NULL); }

#endif
