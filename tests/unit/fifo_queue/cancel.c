/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Cancel tokens: a triggered token fails
 * blocked operations with "was cancelled". */
#include "fifo_util.h"

/* [44] session.close() → tfq_cancel: every blocked op fails with "was cancelled". */
Test(fifo, cancel_fails_every_blocked_operation_with_was_cancelled) {
  tfq_queue *empty = fq(10), *full = fq(1);
  OK(enq_f(full, 1, NULL));
  tfq_cancel *c;
  OK(tfq_cancel_new(&c, NULL));
  bg b[4] = {{.cancel = c}, {.cancel = c, .n = 3}, {.cancel = c}, {.cancel = c, .n = 2}};
  bg_start(&b[0], empty, BG_DEQ);
  bg_start(&b[1], empty, BG_DEQ_MANY);
  bg_start(&b[2], full, BG_ENQ);
  bg_start(&b[3], full, BG_ENQ_MANY);
  bg_assert_blocked(&b[3]);
  tfq_cancel_trigger(c);
  for (int i = 0; i < 4; i++) {
    bg_join(&b[i]);
    cr_assert_eq(b[i].code, TFQ_CANCELLED, "op %d", i);
    cr_assert(contains(b[i].msg, "was cancelled"), "op %d: %s", i, b[i].msg);
  }
  cr_assert_str_eq(b[0].msg, "Dequeue operation was cancelled");
  cr_assert_str_eq(b[2].msg, "Enqueue operation was cancelled");
  /* calls started after the trigger fail at once */
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(full, &t, c, NOTIMEOUT, NULL), TFQ_CANCELLED);
  tfq_cancel_reset(c);
  OK(tfq_queue_dequeue(full, &t, c, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  cr_assert_eq(tfq_queue_size(full), 0);
  tfq_cancel_free(c);
  tfq_queue_free(empty);
  tfq_queue_free(full);
}

Test(fifo, cancelled_dequeue_many_puts_its_partial_batch_back_before_newer_elements) {
  tfq_queue *q = fq(10);
  float v[2] = {1, 2};
  OK(enq_many_f(q, 2, v, NULL));
  tfq_cancel *c;
  OK(tfq_cancel_new(&c, NULL));
  bg b = {.n = 4, .cancel = c};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  OK(enq_f(q, 3, NULL)); /* taken by the pending dequeue_many too */
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_cancel_trigger(c);
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_CANCELLED);
  cr_assert_str_eq(b.msg, "Dequeue operation was cancelled");
  OK(enq_f(q, 4, NULL));
  for (int i = 1; i <= 4; i++) cr_assert_eq(deq_f(q), i);
  tfq_cancel_free(c);
  tfq_queue_free(q);
}

/* [53]: an op failing beside a blocked dequeue cancels it through the shared token (no hang). */
typedef struct {
  tfq_cancel *c;
} fail_arg;
static void *failing_sibling(void *p) {
  sleep_ms(30);
  tfq_cancel_trigger(((fail_arg *)p)->c);
  return NULL;
}
Test(fifo, failing_sibling_op_cancels_a_blocked_dequeue_of_the_same_step) {
  tfq_queue *q = fq(10);
  tfq_cancel *c;
  OK(tfq_cancel_new(&c, NULL));
  fail_arg a = {c};
  pthread_t th;
  pthread_create(&th, NULL, failing_sibling, &a);
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, c, NOTIMEOUT, NULL), TFQ_CANCELLED);
  pthread_join(th, NULL);
  tfq_cancel_free(c);
  tfq_queue_free(q);
}
