/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): The copy-free calls: tfq_queue_dequeue_into
 * (tensors reused in place) and tfq_queue_enqueue_from (an element from caller memory). */
#include "fifo_util.h"

Test(fifo, dequeue_into_reuses_the_callers_tensors_in_place) {
  tfq_queue *q = fq(10);
  for (int i = 0; i < 3; i++) OK(enq_f(q, (float)i, NULL));
  tfq_tuple *dst;
  OK(tfq_tuple_new(1, &dst, NULL));
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL));
  tfq_tensor *first = tfq_tuple_get(dst, 0);
  cr_assert_eq(f32_at(dst, 0, 0), 0);
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tuple_get(dst, 0), first, "the same tensor is overwritten in place");
  cr_assert_eq(f32_at(dst, 0, 0), 1);
  tfq_tensor *shared = tfq_tensor_ref(first); /* now shared: must not be overwritten */
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_neq(tfq_tuple_get(dst, 0), first);
  cr_assert_eq(f32_at(dst, 0, 0), 2);
  cr_assert_eq(((const float *)tfq_tensor_cdata(shared))[0], 1, "the shared value is intact");
  tfq_tensor_free(shared);
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue_into(q, dst, NULL, 0, st), TFQ_DEADLINE_EXCEEDED);
  tfq_tuple *wrong;
  OK(tfq_tuple_new(2, &wrong, NULL));
  cr_assert_eq(tfq_queue_dequeue_into(q, wrong, NULL, 0, st), TFQ_INVALID_ARGUMENT);
  tfq_tuple_free(wrong);
  tfq_status_free(st);
  tfq_tuple_free(dst);
  tfq_queue_free(q);
}

Test(fifo, dequeue_into_replaces_string_components) {
  tfq_spec *s = spec1(TFQ_STRING, 0, SCALAR);
  tfq_queue *q = fifo(s, 10);
  tfq_tensor *x = tensor(TFQ_STRING, 0, NULL);
  OK(tfq_tensor_set_string(x, 0, "abc", 3, NULL));
  tfq_tuple *t = tup(1, x, NULL);
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple *dst;
  OK(tfq_tuple_new(1, &dst, NULL));
  tfq_tuple_set_take(dst, 0, f32_scalar(1)); /* a wrong-typed leftover is replaced */
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL));
  size_t len;
  const char *p = tfq_tensor_string(tfq_tuple_get(dst, 0), 0, &len);
  cr_assert(len == 3 && memcmp(p, "abc", 3) == 0);
  tfq_tuple_free(dst);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* ---- tfq_queue_enqueue_from: an element from caller memory ---- */

static tfq_queue *pair_queue(int64_t cap) { /* (int32 scalar, float [2]) */
  int64_t two = 2;
  tfq_spec *s = spec2(TFQ_INT32, 0, NULL, TFQ_FLOAT, 1, &two);
  tfq_queue *q = fifo(s, cap);
  tfq_spec_free(s);
  return q;
}

static tfq_code enq_pair(tfq_queue *q, int32_t a, float b0, tfq_cancel *c, int64_t timeout,
                         tfq_status *st) {
  float b[2] = {b0, b0 + 0.5f};
  const void *rows[2] = {&a, b};
  return tfq_queue_enqueue_from(q, rows, 2, c, timeout, st);
}

Test(fifo, enqueue_from_copies_caller_rows_and_keeps_fifo_order_with_enqueue) {
  tfq_queue *q = pair_queue(10);
  OK(enq_pair(q, 1, 10, NULL, NOTIMEOUT, NULL));
  float b[2] = {20, 20.5f};
  tfq_tuple *t = tup(2, i32_scalar(2), f32_vec(2, b));
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  OK(enq_pair(q, 3, 30, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_queue_size(q), 3);
  for (int i = 1; i <= 3; i++) {
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(i32_at(t, 0, 0), i);
    cr_assert_eq(f32_at(t, 1, 0), 10.0f * i);
    cr_assert_eq(f32_at(t, 1, 1), 10.0f * i + 0.5f);
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 0), 2);
    tfq_tuple_free(t);
  }
  tfq_queue_free(q);
}

Test(fifo, enqueue_from_rejects_wrong_arity_null_rows_and_non_fixed_components) {
  tfq_queue *q = pair_queue(10);
  tfq_status *st = tfq_status_new();
  int32_t a = 1;
  const void *one[1] = {&a};
  cr_assert_eq(tfq_queue_enqueue_from(q, one, 1, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Wrong number of components in tuple. Expected 2, got 1");
  const void *holes[2] = {&a, NULL};
  cr_assert_eq(tfq_queue_enqueue_from(q, holes, 2, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "tuple component 1 is not set");
  cr_assert_eq(tfq_queue_enqueue_from(q, NULL, 2, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_eq(tfq_queue_size(q), 0, "nothing was queued");
  tfq_queue_free(q);
  tfq_spec *s = spec1(TFQ_STRING, 0, SCALAR);
  q = fifo(s, 10);
  const char *str = "x";
  const void *srow[1] = {str};
  cr_assert_eq(tfq_queue_enqueue_from(q, srow, 1, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "component 0 is string []"), "%s",
            tfq_status_message(st));
  tfq_queue_free(q);
  tfq_spec_free(s);
  s = spec1(TFQ_FLOAT, -1, NULL); /* unshaped queue: rows have no fixed size */
  q = fifo(s, 10);
  float f = 1;
  const void *frow[1] = {&f};
  cr_assert_eq(tfq_queue_enqueue_from(q, frow, 1, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "component 0 is float <unknown>"), "%s",
            tfq_status_message(st));
  tfq_queue_free(q);
  tfq_spec_free(s);
  tfq_status_free(st);
}

Test(fifo, enqueue_from_on_closed_queue_is_cancelled_with_tf_message) {
  tfq_queue *q = pair_queue(10);
  tfq_status *st = tfq_status_new();
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(enq_pair(q, 1, 1, NULL, NOTIMEOUT, st), TFQ_CANCELLED);
  char want[128];
  snprintf(want, sizeof want, "FIFOQueue '%s' is closed.", tfq_queue_name(q));
  cr_assert_str_eq(tfq_status_message(st), want);
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(fifo, enqueue_from_on_full_queue_times_out_and_is_cancelled_by_a_triggered_cancel) {
  tfq_queue *q = pair_queue(1);
  tfq_status *st = tfq_status_new();
  OK(enq_pair(q, 1, 1, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(enq_pair(q, 2, 2, NULL, 0, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Timed out waiting for notification");
  cr_assert_eq(enq_pair(q, 2, 2, NULL, 20000, st), TFQ_DEADLINE_EXCEEDED);
  tfq_cancel *c;
  OK(tfq_cancel_new(&c, NULL));
  tfq_cancel_trigger(c);
  cr_assert_eq(enq_pair(q, 2, 2, c, NOTIMEOUT, st), TFQ_CANCELLED);
  cr_assert_str_eq(tfq_status_message(st), "Enqueue operation was cancelled");
  tfq_cancel_reset(c);
  /* a triggered cancel also fails a call that could complete at once, as TF's */
  tfq_tuple *t;
  OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  tfq_cancel_trigger(c);
  cr_assert_eq(enq_pair(q, 3, 3, c, NOTIMEOUT, st), TFQ_CANCELLED);
  cr_assert_eq(tfq_queue_size(q), 0, "the failed calls left the queue unchanged");
  tfq_cancel_free(c);
  tfq_status_free(st);
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *q;
  int32_t v;
  tfq_cancel *c;
  tfq_code rc;
  atomic_int done;
} from_arg;

static void *enq_from_thread(void *p) {
  from_arg *a = p;
  a->rc = enq_pair(a->q, a->v, (float)a->v, a->c, NOTIMEOUT, NULL);
  atomic_store(&a->done, 1);
  return NULL;
}

Test(fifo, blocked_enqueue_from_waits_its_turn_behind_an_earlier_blocked_enqueue) {
  tfq_queue *q = pair_queue(1);
  OK(enq_pair(q, 1, 1, NULL, NOTIMEOUT, NULL));
  from_arg a = {q, 2, NULL, -1, 0}, b = {q, 3, NULL, -1, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, enq_from_thread, &a);
  sleep_ms(50); /* a is pending before b arrives */
  pthread_create(&tb, NULL, enq_from_thread, &b);
  sleep_ms(50);
  cr_assert(!atomic_load(&a.done) && !atomic_load(&b.done), "both wait on the full queue");
  for (int want = 1; want <= 3; want++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(i32_at(t, 0, 0), want, "arrival order is kept");
    tfq_tuple_free(t);
  }
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  OK(a.rc);
  OK(b.rc);
  tfq_queue_free(q);
}

Test(fifo, blocked_enqueue_from_is_served_before_a_plain_close_and_fails_on_cancel) {
  tfq_queue *q = pair_queue(1);
  OK(enq_pair(q, 1, 1, NULL, NOTIMEOUT, NULL));
  tfq_cancel *c;
  OK(tfq_cancel_new(&c, NULL));
  from_arg a = {q, 2, NULL, -1, 0}, b = {q, 3, c, -1, 0};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, enq_from_thread, &a);
  sleep_ms(50);
  tfq_cancel_trigger(c); /* b starts cancelled: fails at once */
  pthread_create(&tb, NULL, enq_from_thread, &b);
  pthread_join(tb, NULL);
  cr_assert_eq(b.rc, TFQ_CANCELLED);
  tfq_tuple *t;
  OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL)); /* room: a goes in at once */
  tfq_tuple_free(t);
  pthread_join(ta, NULL);
  OK(a.rc);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(i32_at(t, 0, 0), 2);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_cancel_free(c);
  tfq_queue_free(q);
}

Test(fifo, enqueue_from_feeds_a_pending_dequeue_into_directly) {
  tfq_queue *q = pair_queue(4);
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(enq_pair(q, 7, 7, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL)); /* allocates the slots */
  tfq_tensor *x0 = tfq_tuple_get(dst, 0), *x1 = tfq_tuple_get(dst, 1);
  cr_assert_eq(i32_at(dst, 0, 0), 7);
  from_arg a = {q, 8, NULL, -1, 0};
  pthread_t ta;
  pthread_create(&ta, NULL, enq_from_thread, &a);
  OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL)); /* may wait for the producer */
  pthread_join(ta, NULL);
  OK(a.rc);
  cr_assert(tfq_tuple_get(dst, 0) == x0 && tfq_tuple_get(dst, 1) == x1, "overwritten in place");
  cr_assert_eq(i32_at(dst, 0, 0), 8);
  cr_assert_eq(f32_at(dst, 1, 1), 8.5f);
  tfq_tuple_free(dst);
  tfq_queue_free(q);
}

Test(fifo, enqueue_from_works_for_priority_and_random_shuffle_queues) {
  tfq_spec *s = spec1(TFQ_INT32, 0, SCALAR);
  tfq_queue *pq;
  OK(tfq_queue_new(TFQ_QUEUE_PRIORITY, s, NULL, &pq, NULL));
  int64_t pri[3] = {30, 10, 20};
  for (int i = 0; i < 3; i++) {
    int32_t v = (int32_t)pri[i] + 1;
    const void *rows[2] = {&pri[i], &v};
    OK(tfq_queue_enqueue_from(pq, rows, 2, NULL, NOTIMEOUT, NULL));
  }
  for (int want = 10; want <= 30; want += 10) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(pq, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(t, 0)))[0], want);
    cr_assert_eq(i32_at(t, 1, 0), want + 1);
    tfq_tuple_free(t);
  }
  tfq_queue_free(pq);
  tfq_queue *rq;
  OK(tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, s, NULL, &rq, NULL));
  int sum = 0;
  for (int32_t v = 1; v <= 5; v++) {
    const void *rows[1] = {&v};
    OK(tfq_queue_enqueue_from(rq, rows, 1, NULL, NOTIMEOUT, NULL));
  }
  for (int i = 0; i < 5; i++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(rq, &t, NULL, NOTIMEOUT, NULL));
    sum += i32_at(t, 0, 0);
    tfq_tuple_free(t);
  }
  cr_assert_eq(sum, 15, "every element came out once");
  tfq_queue_free(rq);
  tfq_spec_free(s);
}
