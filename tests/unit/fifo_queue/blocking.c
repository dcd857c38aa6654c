/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Blocking on a full or an empty queue, and
 * the head of line (queue.h: each side is served in arrival order). */
#include "fifo_util.h"
#include "queues/queue_internal.h"

/* [31] */
Test(fifo, blocking_enqueue_to_full_queue_completes_after_a_dequeue) {
  tfq_queue *q = fq(4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  bg b = {.vals = {50}};
  bg_start(&b, q, BG_ENQ);
  bg_assert_blocked(&b);
  for (int i = 0; i < 4; i++) cr_assert_eq(deq_f(q), v[i]);
  cr_assert_eq(deq_f(q), 50);
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  tfq_queue_free(q);
}

/* [32] */
Test(fifo, blocking_enqueue_many_to_full_queue_completes_in_order) {
  tfq_queue *q = fq(4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  bg b = {.n = 2, .vals = {50, 60}};
  bg_start(&b, q, BG_ENQ_MANY);
  bg_assert_blocked(&b);
  for (int i = 0; i < 4; i++) cr_assert_eq(deq_f(q), v[i]);
  cr_assert_eq(deq_f(q), 50);
  cr_assert_eq(deq_f(q), 60);
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  tfq_queue_free(q);
}

/* [35] */
Test(fifo, big_enqueue_many_fills_to_capacity_and_finishes_as_room_appears) {
  tfq_queue *q = fq(5);
  bg b = {.n = 10, .vals = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  bg_start(&b, q, BG_ENQ_MANY);
  bg_assert_blocked(&b);
  cr_assert_eq(tfq_queue_size(q), 5);
  for (int i = 0; i < 10; i++) cr_assert_eq(deq_f(q), i);
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  tfq_queue_free(q);
}

/* Test(fifo) BigDequeueMany: cap 2, dequeue_many(4) completes after 4 single enqueues. */
Test(fifo, big_dequeue_many_larger_than_capacity_completes) {
  tfq_queue *q = fq(2);
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  for (int i = 0; i < 4; i++) OK(enq_f(q, (float)i, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  for (int i = 0; i < 4; i++) cr_assert_eq(f32_at(b.out, 0, i), i);
  tfq_tuple_free(b.out);
  tfq_queue_free(q);
}

/* ---- head of line ---- */

Test(fifo, blocked_big_enqueue_many_keeps_a_later_small_enqueue_waiting) {
  tfq_queue *q = fq(3);
  OK(enq_f(q, 0, NULL));
  OK(enq_f(q, 1, NULL));
  bg big = {.n = 3, .vals = {10, 11, 12}}, small = {.vals = {99}};
  bg_start(&big, q, BG_ENQ_MANY);
  bg_assert_blocked(&big);
  bg_start(&small, q, BG_ENQ);
  bg_assert_blocked(&small);
  cr_assert_eq(tfq_queue_size(q), 3, "the head took the free slot");
  float want[7] = {0, 1, 10, 11, 12, 99};
  for (int i = 0; i < 6; i++) cr_assert_eq(deq_f(q), want[i], "position %d", i);
  bg_join(&big);
  bg_join(&small);
  tfq_queue_free(q);
}

/* S3 */
Test(fifo, blocked_dequeue_many_takes_what_is_there_and_size_reads_zero) {
  tfq_queue *q = fq(10);
  float v[3] = {1, 2, 3};
  OK(enq_many_f(q, 3, v, NULL));
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  cr_assert_eq(tfq_queue_size(q), 0);
  bg later = {0};
  bg_start(&later, q, BG_DEQ);
  bg_assert_blocked(&later); /* waits behind the dequeue_many */
  OK(enq_f(q, 4, NULL));
  bg_join(&b);
  for (int i = 0; i < 4; i++) cr_assert_eq(f32_at(b.out, 0, i), i + 1);
  OK(enq_f(q, 5, NULL));
  bg_join(&later);
  cr_assert_eq(f32_at(later.out, 0, 0), 5);
  tfq_tuple_free(b.out);
  tfq_tuple_free(later.out);
  tfq_queue_free(q);
}

/* ---- the spin budget (queue_internal.h: q->spin_ns, adapted in queue.c's run_locked) ---- */

static void *enqueue_after_5ms(void *arg) {
  sleep_ms(5);
  OK(enq_f(arg, 7.f, NULL));
  return NULL;
}

/* A consumer whose every dequeue waits far longer than a spin stops spinning before it sleeps:
 * its budget halves at each such wait, never grows back while they stay long, and reaches none;
 * every wait still gets its element. */
Test(fifo, a_dequeue_that_keeps_waiting_long_stops_spinning_before_it_sleeps) {
  tfq_queue *q = fq(4);
  int prev = q->spin_ns[1];
  cr_assert_gt(prev, 0, "a new queue spins");
  for (int i = 0; i < 50 && q->spin_ns[1] > 0; i++) {
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, enqueue_after_5ms, q), 0);
    cr_assert_eq(deq_f(q), 7.f);
    pthread_join(th, NULL);
    int now = __atomic_load_n(&q->spin_ns[1], __ATOMIC_RELAXED);
    cr_assert_leq(now, prev, "wait %d: the budget grew from %d to %d", i, prev, now);
    prev = now;
  }
  cr_assert_eq(q->spin_ns[1], 0, "still spinning %d ns after 50 long waits", q->spin_ns[1]);
  cr_assert_gt(q->spin_ns[0], 0, "the enqueue side keeps its own budget");
  tfq_queue_free(q);
}
