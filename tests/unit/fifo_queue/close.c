/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Close (queue.h, tfq_queue_close): what a
 * plain and a cancelling close do to queued elements and to blocked and later operations. */
#include "fifo_util.h"

/* [20] */
Test(fifo, dequeue_from_closed_queue_serves_the_rest_then_out_of_range) {
  tfq_queue *q = fq(10);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  for (int i = 0; i < 4; i++) cr_assert_eq(deq_f(q), v[i]);
  tfq_status *st = tfq_status_new();
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(contains(tfq_status_message(st), "is closed and has insufficient"));
  char want[256];
  snprintf(want, sizeof want,
           "FIFOQueue '%s' is closed and has insufficient elements (requested 1, current size 0)",
           tfq_queue_name(q));
  cr_assert_str_eq(tfq_status_message(st), want);
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* [21] */
Test(fifo, blocking_dequeue_from_closed_empty_queue_gets_out_of_range) {
  tfq_queue *q = fq(10);
  bg b = {0};
  bg_start(&b, q, BG_DEQ);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  cr_assert(contains(b.msg, "is closed and has insufficient"));
  tfq_queue_free(q);
}

/* [22] */
Test(fifo, blocking_dequeue_many_from_closed_queue_gets_out_of_range) {
  tfq_queue *q = fq(10);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 4, &t, NULL, NOTIMEOUT, NULL));
  for (int i = 0; i < 4; i++) cr_assert_eq(f32_at(t, 0, i), v[i]);
  tfq_tuple_free(t);
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
}

/* [23] */
Test(fifo, blocking_dequeue_many_but_not_all_from_closed_queue) {
  tfq_queue *q = fq(10);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 3, &t, NULL, NOTIMEOUT, NULL));
  for (int i = 0; i < 3; i++) cr_assert_eq(f32_at(t, 0, i), v[i]);
  tfq_tuple_free(t);
  bg b = {.n = 3};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_queue_size(q), 1, "the partial batch went back");
  cr_assert_eq(deq_f(q), 40);
  tfq_queue_free(q);
}

/* [25] */
Test(fifo, enqueue_many_larger_than_capacity_with_concurrent_dequeue_many) {
  tfq_queue *q = fq(4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 3, &t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_queue_dequeue_many(q, 3, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(deq_f(q), 40, "a failed dequeue_many leaves the elements in the queue");
  tfq_queue_free(q);
}

/* [27] [28] */
Test(fifo, blocking_dequeue_many_and_up_to_from_closed_empty_queue_get_out_of_range) {
  tfq_queue *q = fq(10);
  bg a = {.n = 4}, b = {.n = 4};
  bg_start(&a, q, BG_DEQ_MANY);
  bg_assert_blocked(&a);
  bg_start(&b, q, BG_DEQ_UP_TO);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&a);
  bg_join(&b);
  cr_assert_eq(a.code, TFQ_OUT_OF_RANGE);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  cr_assert(contains(b.msg, "is closed and has insufficient"));
  tfq_queue_free(q);
}

/* [29] [30] */
Test(fifo, enqueue_and_enqueue_many_to_closed_queue_are_cancelled) {
  tfq_queue *q = fq(10);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(enq_f(q, 1, st), TFQ_CANCELLED);
  char want[128];
  snprintf(want, sizeof want, "FIFOQueue '%s' is closed.", tfq_queue_name(q));
  cr_assert_str_eq(tfq_status_message(st), want);
  float v[2] = {1, 2};
  cr_assert_eq(enq_many_f(q, 2, v, st), TFQ_CANCELLED);
  cr_assert(contains(tfq_status_message(st), "is closed"));
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* ---- close ---- */

/* testBlockingEnqueueBeforeClose */
Test(fifo, plain_close_waits_behind_a_blocked_enqueue) {
  tfq_queue *q = fq(4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  bg e = {.vals = {50}}, c = {0};
  bg_start(&e, q, BG_ENQ);
  bg_assert_blocked(&e);
  bg_start(&c, q, BG_CLOSE);
  bg_assert_blocked(&c);
  cr_assert_eq(tfq_queue_is_closed(q), 0, "the waiting close has not executed");
  cr_assert_eq(deq_f(q), 10);
  bg_join(&e);
  bg_join(&c);
  cr_assert_eq(e.code, TFQ_OK);
  cr_assert_eq(c.code, TFQ_OK);
  cr_assert_eq(tfq_queue_is_closed(q), 1);
  for (int i = 1; i < 4; i++) cr_assert_eq(deq_f(q), v[i]);
  cr_assert_eq(deq_f(q), 50);
  tfq_queue_free(q);
}

/* testBlockingEnqueueManyBeforeClose */
Test(fifo, plain_close_waits_behind_a_blocked_enqueue_many) {
  tfq_queue *q = fq(4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  bg e = {.n = 2, .vals = {50, 60}}, c = {0};
  bg_start(&e, q, BG_ENQ_MANY);
  bg_assert_blocked(&e);
  bg_start(&c, q, BG_CLOSE);
  bg_assert_blocked(&c);
  cr_assert_eq(deq_f(q), 10);
  bg_assert_blocked(&c); /* one slice went in; the other still waits */
  cr_assert_eq(deq_f(q), 20);
  bg_join(&e);
  bg_join(&c);
  cr_assert_eq(e.code, TFQ_OK);
  cr_assert_eq(c.code, TFQ_OK);
  for (int i = 2; i < 4; i++) cr_assert_eq(deq_f(q), v[i]);
  cr_assert_eq(deq_f(q), 50);
  cr_assert_eq(deq_f(q), 60);
  tfq_queue_free(q);
}

Test(fifo, closing_a_closed_queue_is_cancelled_already_closed) {
  tfq_queue *q = fq(4);
  tfq_status *st = tfq_status_new();
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, st));
  cr_assert_eq(tfq_queue_close(q, 0, NULL, NOTIMEOUT, st), TFQ_CANCELLED);
  char want[128];
  snprintf(want, sizeof want, "Queue '%s' is already closed.", tfq_queue_name(q));
  cr_assert_str_eq(tfq_status_message(st), want);
  OK(tfq_queue_close(q, 1, NULL, NOTIMEOUT, st)); /* a cancelling close always succeeds */
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(fifo, cancelling_close_fails_pending_enqueues_and_a_waiting_close_at_once) {
  tfq_queue *q = fq(2);
  float v[2] = {1, 2};
  OK(enq_many_f(q, 2, v, NULL));
  bg e = {.n = 3, .vals = {3, 4, 5}}, c = {0};
  bg_start(&e, q, BG_ENQ_MANY);
  bg_assert_blocked(&e);
  cr_assert_eq(deq_f(q), 1); /* one slice of the enqueue_many goes in */
  bg_start(&c, q, BG_CLOSE);
  bg_assert_blocked(&c);
  OK(tfq_queue_close(q, 1, NULL, NOTIMEOUT, NULL));
  bg_join(&e);
  bg_join(&c);
  cr_assert_eq(e.code, TFQ_CANCELLED);
  cr_assert_str_eq(e.msg, "Enqueue operation was cancelled");
  cr_assert_eq(c.code, TFQ_CANCELLED, "TF cancels a waiting close too");
  cr_assert_str_eq(c.msg, "Enqueue operation was cancelled");
  cr_assert_eq(tfq_queue_is_closed(q), 1);
  cr_assert_eq(deq_f(q), 2);
  cr_assert_eq(deq_f(q), 3, "the inserted slice of a cancelled enqueue_many stays");
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
}

Test(fifo, enqueue_issued_behind_a_waiting_close_fails_once_it_runs) {
  tfq_queue *q = fq(1);
  OK(enq_f(q, 1, NULL));
  bg e1 = {.vals = {2}}, c = {0}, e2 = {.vals = {3}};
  bg_start(&e1, q, BG_ENQ);
  bg_assert_blocked(&e1);
  bg_start(&c, q, BG_CLOSE);
  bg_assert_blocked(&c);
  bg_start(&e2, q, BG_ENQ);
  bg_assert_blocked(&e2);
  cr_assert_eq(tfq_queue_is_closed(q), 0);
  cr_assert_eq(deq_f(q), 1);
  bg_join(&e1);
  bg_join(&c);
  bg_join(&e2);
  cr_assert_eq(e1.code, TFQ_OK);
  cr_assert_eq(c.code, TFQ_OK);
  cr_assert_eq(e2.code, TFQ_CANCELLED);
  cr_assert(contains(e2.msg, "is closed."));
  tfq_queue_free(q);
}

/* As TF: the numbers of DEQ_SHORT are the count still needed and the size before restore (queue.h,
 * the OUT_OF_RANGE message). */
Test(fifo, closed_short_dequeue_many_reports_remaining_and_size_before_restore) {
  tfq_queue *q = fq(4);
  float v[3] = {1, 2, 3};
  OK(enq_many_f(q, 3, v, NULL));
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  cr_assert(contains(b.msg, "(requested 1, current size 0)"), "%s", b.msg);
  cr_assert_eq(tfq_queue_size(q), 3, "the partial batch is back");
  for (int i = 0; i < 3; i++) cr_assert_eq(deq_f(q), v[i]);
  tfq_queue_free(q);
}

Test(fifo, dequeue_up_to_on_closed_queue_returns_the_remainder_including_its_partial_batch) {
  tfq_queue *q = fq(10);
  float v[2] = {1, 2};
  OK(enq_many_f(q, 2, v, NULL));
  bg b = {.n = 5};
  bg_start(&b, q, BG_DEQ_UP_TO);
  bg_assert_blocked(&b);
  OK(enq_f(q, 3, NULL));
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b.out, 0), 0), 3);
  for (int i = 0; i < 3; i++) cr_assert_eq(f32_at(b.out, 0, i), i + 1);
  tfq_tuple_free(b.out);
  tfq_queue_free(q);
}
