/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): enqueue_many, dequeue_many and
 * dequeue_up_to on an open queue: slices in order, empty batches, batch shapes. */
#include "fifo_util.h"

/* [5] */
Test(fifo, enqueue_many_twice_then_single_dequeues_in_order) {
  tfq_queue *q = fq(10);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  OK(enq_many_f(q, 4, v, NULL));
  for (int i = 0; i < 8; i++) cr_assert_eq(deq_f(q), v[i % 4]);
  tfq_queue_free(q);
}

/* [6] and S2 */
Test(fifo, empty_enqueue_many_succeeds_even_on_a_closed_queue) {
  int64_t d[2] = {2, 3};
  tfq_spec *s = spec1(TFQ_INT32, 2, d);
  tfq_queue *q = fifo(s, 10);
  int64_t e[3] = {0, 2, 3};
  tfq_tuple *t = tup(1, tensor(TFQ_INT32, 3, e), NULL);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_queue_size(q), 0);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL)); /* S2 */
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

static void check_empty_dequeue(int up_to) {
  int64_t d[1] = {2};
  tfq_spec *s = spec1(TFQ_INT32, 1, d);
  tfq_queue *q = fifo(s, 10);
  for (int round = 0; round < 2; round++) {
    tfq_tuple *t;
    OK(up_to ? tfq_queue_dequeue_up_to(q, 0, &t, NULL, NOTIMEOUT, NULL)
             : tfq_queue_dequeue_many(q, 0, &t, NULL, NOTIMEOUT, NULL));
    tfq_tensor *x = tfq_tuple_get(t, 0);
    cr_assert_eq(tfq_tensor_rank(x), 2);
    cr_assert_eq(tfq_tensor_dim(x, 0), 0);
    cr_assert_eq(tfq_tensor_dim(x, 1), 2);
    tfq_tuple_free(t);
    int32_t v[2] = {10, 10};
    tfq_tuple *e = tup(1, i32_vec(2, v), NULL);
    if (round == 0) OK(tfq_queue_enqueue(q, e, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(e);
  }
  cr_assert_eq(tfq_queue_size(q), 1, "dequeue of 0 must not consume");
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 0, &t, NULL, NOTIMEOUT, NULL)); /* closed: still OK */
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [7] */
Test(fifo, dequeue_many_zero_returns_empty_batch_without_consuming) { check_empty_dequeue(0); }
/* [8] */
Test(fifo, dequeue_up_to_zero_returns_empty_batch_without_consuming) { check_empty_dequeue(1); }

/* [9] */
Test(fifo, dequeue_many_without_shapes_is_invalid_argument_even_for_zero) {
  tfq_spec *s = spec1(TFQ_FLOAT, TFQ_UNKNOWN_RANK, NULL);
  tfq_queue *q = fifo(s, 10);
  tfq_status *st = tfq_status_new();
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue_many(q, 0, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "FIFOQueue's DequeueMany and DequeueUpTo require the components to have "
                   "specified shapes.");
  cr_assert_null(t);
  cr_assert_eq(tfq_queue_dequeue_up_to(q, 3, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "specified shapes"));
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [10] */
Test(fifo, multi_enqueue_many_keeps_slices_paired_and_in_order) {
  int64_t two[1] = {2};
  tfq_spec *s = spec2(TFQ_FLOAT, 0, NULL, TFQ_INT32, 1, two);
  tfq_queue *q = fifo(s, 10);
  float f[4] = {10, 20, 30, 40};
  int32_t iv[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t d2[2] = {4, 2};
  for (int rep = 0; rep < 2; rep++) {
    tfq_tensor *it = tensor(TFQ_INT32, 2, d2);
    memcpy(tfq_tensor_data(it), iv, sizeof iv);
    tfq_tuple *t = tup(2, f32_vec(4, f), it);
    OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  for (int i = 0; i < 8; i++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(f32_at(t, 0, 0), f[i % 4]);
    cr_assert_eq(i32_at(t, 1, 0), iv[2 * (i % 4)]);
    cr_assert_eq(i32_at(t, 1, 1), iv[2 * (i % 4) + 1]);
    tfq_tuple_free(t);
  }
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [11] [12] */
Test(fifo, dequeue_many_and_up_to_return_consecutive_slices) {
  tfq_queue *q = fq(20);
  float v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  OK(enq_many_f(q, 10, v, NULL));
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 4, &t, NULL, NOTIMEOUT, NULL));
  for (int i = 0; i < 4; i++) cr_assert_eq(f32_at(t, 0, i), i);
  tfq_tuple_free(t);
  OK(tfq_queue_dequeue_up_to(q, 4, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 4);
  for (int i = 0; i < 4; i++) cr_assert_eq(f32_at(t, 0, i), 4 + i);
  tfq_tuple_free(t);
  tfq_queue_free(q);
}

/* [13] [14] */
Test(fifo, multi_dequeue_many_shapes_have_a_leading_batch_dimension) {
  int64_t two[1] = {2};
  tfq_spec *s = spec2(TFQ_FLOAT, 0, NULL, TFQ_INT32, 1, two);
  tfq_queue *q = fifo(s, 10);
  for (int i = 0; i < 10; i++) {
    int32_t iv[2] = {i, -i};
    tfq_tuple *t = tup(2, f32_scalar((float)i), i32_vec(2, iv));
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 4, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 0)), 1);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 4);
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 1)), 2);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 0), 4);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 1), 2);
  cr_assert_eq(i32_at(t, 1, 7), -3);
  tfq_tuple_free(t);
  OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 0)), 0);
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 1)), 1);
  cr_assert_eq(f32_at(t, 0, 0), 4);
  tfq_tuple_free(t);
  OK(tfq_queue_dequeue_up_to(q, 5, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 0), 5);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 1), 2);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [43] */
Test(fifo, dequeue_many_with_n_taken_from_another_queue) {
  tfq_queue *q = fq(100);
  tfq_spec *s = spec1(TFQ_INT32, 0, SCALAR);
  tfq_queue *nq = fifo(s, 10);
  float v[50];
  for (int i = 0; i < 50; i++) v[i] = (float)i;
  OK(enq_many_f(q, 50, v, NULL));
  int32_t ns[5] = {1, 4, 10, 15, 20};
  tfq_tuple *nt = tup(1, i32_vec(5, ns), NULL);
  OK(tfq_queue_enqueue_many(nq, nt, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(nt);
  int next = 0;
  for (int r = 0; r < 5; r++) {
    tfq_tuple *n, *t;
    OK(tfq_queue_dequeue(nq, &n, NULL, NOTIMEOUT, NULL));
    int32_t k = i32_at(n, 0, 0);
    OK(tfq_queue_dequeue_many(q, k, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), k);
    for (int i = 0; i < k; i++) cr_assert_eq(f32_at(t, 0, i), next++);
    tfq_tuple_free(t);
    tfq_tuple_free(n);
  }
  cr_assert_eq(next, 50);
  tfq_queue_free(nq);
  tfq_queue_free(q);
  tfq_spec_free(s);
}
