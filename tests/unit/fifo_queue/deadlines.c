/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Deadlines: a timed-out operation is
 * DEADLINE_EXCEEDED and leaves the queue usable. */
#include "fifo_util.h"

/* [45] and testReusableAfterTimeout */
Test(fifo, dequeue_with_timeout_is_deadline_exceeded_and_queue_stays_usable) {
  tfq_queue *q = fq(10);
  tfq_status *st = tfq_status_new();
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, 20000, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Timed out waiting for notification");
  cr_assert_null(t);
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, 0, st), TFQ_DEADLINE_EXCEEDED);
  OK(enq_f(q, 37, NULL));
  cr_assert_eq(deq_f(q), 37, "the later enqueue is not swallowed by the dead attempt");
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(fifo, enqueue_with_timeout_on_full_queue_is_deadline_exceeded) {
  tfq_queue *q = fq(1);
  OK(enq_f(q, 1, NULL));
  tfq_tuple *t = tup(1, f32_scalar(2), NULL);
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, 10000, NULL), TFQ_DEADLINE_EXCEEDED);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_queue_size(q), 1);
  cr_assert_eq(deq_f(q), 1);
  tfq_queue_free(q);
}

/* S4: TF drops a timed-out/cancelled dequeue_many's partial batch; tfq puts it back in order. */
Test(fifo, timed_out_dequeue_many_puts_its_partial_batch_back_in_order) {
  tfq_queue *q = fq(10);
  float v[3] = {1, 2, 3};
  OK(enq_many_f(q, 3, v, NULL));
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue_many(q, 5, &t, NULL, 30000, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Timed out waiting for notification");
  cr_assert_eq(tfq_queue_size(q), 3);
  for (int i = 0; i < 3; i++) cr_assert_eq(deq_f(q), v[i]);
  tfq_status_free(st);
  tfq_queue_free(q);
}
