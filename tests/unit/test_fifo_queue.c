/* FIFOQueue: the FIFOQueue cases of spec tf1-queues §9 (numbers in brackets), TF's engine rules
 * of §1.5–§1.9, and the port-defined cases S2–S4.  Python-only cases become the equivalent C
 * argument checks; case 50 (QueueBase.from_list) has no C meaning. */
#include <stdlib.h>

#include "helpers.h"

static const int64_t SCALAR[1] = {0};

static tfq_queue *fq(int64_t cap) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, SCALAR);
  tfq_queue *q = fifo(s, cap);
  tfq_spec_free(s);
  return q;
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* [1] */
Test(fifo, dequeue_returns_elements_in_enqueue_order) {
  tfq_queue *q = fq(10);
  OK(enq_f(q, 10, NULL));
  OK(enq_f(q, 20, NULL));
  OK(enq_f(q, 30, NULL));
  cr_assert_eq(deq_f(q), 10);
  cr_assert_eq(deq_f(q), 20);
  cr_assert_eq(deq_f(q), 30);
  tfq_queue_free(q);
}

/* [2] */
Test(fifo, multi_component_elements_come_out_intact_and_in_order) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  tfq_queue *q = fifo(s, 10);
  for (int i = 1; i <= 3; i++) {
    tfq_tuple *t = tup(2, i32_scalar(5 * i), f32_scalar(10.0f * i));
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  for (int i = 1; i <= 3; i++) {
    tfq_tuple *t;
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(i32_at(t, 0, 0), 5 * i);
    cr_assert_eq(f32_at(t, 1, 0), 10.0f * i);
    cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(t, 0)), 0);
    tfq_tuple_free(t);
  }
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [3] [4] */
Test(fifo, size_is_zero_when_new_and_tracks_enqueue_and_dequeue) {
  tfq_queue *q = fq(10);
  cr_assert_eq(tfq_queue_size(q), 0);
  OK(enq_f(q, 1, NULL));
  cr_assert_eq(tfq_queue_size(q), 1);
  deq_f(q);
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_queue_free(q);
}

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
  tfq_spec *s;
  int64_t two[1] = {2};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, two, 1, NULL, NULL));
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
  tfq_spec *s;
  int64_t two[1] = {2};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, two, 1, NULL, NULL));
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

/* [15] */
Test(fifo, high_dimension_elements_round_trip_identically) {
  int64_t d[4] = {4, 4, 4, 4}, bd[5] = {10, 4, 4, 4, 4};
  tfq_spec *s = spec1(TFQ_INT32, 4, d);
  tfq_queue *q = fifo(s, 10);
  tfq_tensor *x = tensor(TFQ_INT32, 5, bd);
  int32_t *p = tfq_tensor_data(x);
  srand(3);
  for (int i = 0; i < 2560; i++) p[i] = rand();
  tfq_tuple *t = tup(1, x, NULL);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 10, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(memcmp(tfq_tensor_cdata(tfq_tuple_get(o, 0)), p, 2560 * 4), 0);
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(o, 0)), 5);
  tfq_tuple_free(o);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

static tfq_spec *two_comp_spec(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  tfq_spec *s;
  int64_t da[2] = {a0, a1}, db[2] = {b0, b1};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, da, a0 < 0 ? 0 : (a1 < 0 ? 1 : 2), NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, db, b0 < 0 ? 0 : (b1 < 0 ? 1 : 2), NULL, NULL));
  return s;
}

/* [16] */
Test(fifo, enqueue_of_wrong_shape_is_rejected_before_queuing) {
  tfq_spec *s = two_comp_spec(-1, -1, 2, -1); /* shapes ((), (2,)) */
  tfq_queue *q = fifo(s, 10);
  int32_t v[2] = {1, 2};
  tfq_tuple *t = tup(2, i32_vec(2, v), i32_vec(2, v));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 0. Expected [], got [2]");
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_status_free(st);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [17] */
Test(fifo, enqueue_many_with_mismatched_batch_sizes_is_rejected) {
  tfq_status *st = tfq_status_new();
  /* shaped queue: component 1 must be [3] */
  tfq_spec *s = two_comp_spec(-1, -1, -1, -1);
  tfq_queue *q = fifo(s, 10);
  int32_t v[3] = {1, 2, 3};
  tfq_tuple *t = tup(2, i32_vec(3, v), i32_vec(2, v));
  cr_assert_eq(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 1. Expected [3], got [2]");
  tfq_queue_free(q);
  tfq_spec_free(s);
  /* unshaped queue: TF's dim-0 message */
  tfq_spec *u;
  OK(tfq_spec_new(&u, NULL));
  OK(tfq_spec_add(u, TFQ_INT32, NULL, TFQ_UNKNOWN_RANK, NULL, NULL));
  OK(tfq_spec_add(u, TFQ_INT32, NULL, TFQ_UNKNOWN_RANK, NULL, NULL));
  q = fifo(u, 10);
  cr_assert_eq(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "All input tensors must have the same size in the 0th dimension. Component 1 "
                   "has 2, and should have 3");
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(u);
  tfq_status_free(st);
}

/* [18] */
Test(fifo, enqueue_of_wrong_shape_at_runtime_names_expected_and_actual_shapes) {
  tfq_spec *s = two_comp_spec(2, 2, 3, 3);
  tfq_queue *q = fifo(s, 10);
  int64_t a[2] = {2, 2}, b[2] = {3, 4};
  tfq_tuple *t = tup(2, tensor(TFQ_INT32, 2, a), tensor(TFQ_INT32, 2, b));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 1. Expected [3,3], got [3,4]");
  tfq_status_free(st);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [19] */
Test(fifo, enqueue_many_of_wrong_shape_names_the_batched_shapes) {
  tfq_spec *s = two_comp_spec(2, 2, 3, 3);
  tfq_queue *q = fifo(s, 10);
  int64_t a[3] = {2, 2, 2}, b[3] = {2, 3, 4};
  tfq_tuple *t = tup(2, tensor(TFQ_INT32, 3, a), tensor(TFQ_INT32, 3, b));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 1. Expected [2,3,3], got [2,3,4]");
  tfq_status_free(st);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(fifo, wrong_arity_and_wrong_dtype_use_tf_messages) {
  tfq_queue *q = fq(10);
  tfq_status *st = tfq_status_new();
  tfq_tuple *t = tup(2, f32_scalar(1), f32_scalar(2));
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Wrong number of components in tuple. Expected 1, got 2");
  tfq_tuple_free(t);
  t = tup(1, i32_scalar(1), NULL);
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Type mismatch in tuple component 0. Expected float, got int32");
  tfq_tuple_free(t);
  tfq_status_free(st);
  tfq_queue_free(q);
}

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

/* [37] [38] */
Test(fifo, parallel_enqueue_and_parallel_dequeue_keep_the_multiset) {
  tfq_queue *q = fq(10);
  bg e[10] = {{0}};
  for (int i = 0; i < 10; i++) {
    e[i].vals[0] = (float)(i * 10);
    bg_start(&e[i], q, BG_ENQ);
  }
  for (int i = 0; i < 10; i++) {
    bg_join(&e[i]);
    cr_assert_eq(e[i].code, TFQ_OK);
  }
  bg d[10] = {{0}};
  for (int i = 0; i < 10; i++) bg_start(&d[i], q, BG_DEQ);
  int seen[10] = {0};
  for (int i = 0; i < 10; i++) {
    bg_join(&d[i]);
    cr_assert_eq(d[i].code, TFQ_OK);
    int v = (int)f32_at(d[i].out, 0, 0) / 10;
    cr_assert(v >= 0 && v < 10);
    seen[v]++;
    tfq_tuple_free(d[i].out);
  }
  for (int i = 0; i < 10; i++) cr_assert_eq(seen[i], 1);
  tfq_queue_free(q);
}

/* [39] */
Test(fifo, parallel_dequeue_up_to_delivers_every_element_exactly_once) {
  tfq_queue *q = fq(1000);
  float v[1000];
  for (int i = 0; i < 1000; i++) v[i] = (float)i;
  OK(enq_many_f(q, 1000, v, NULL));
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg d[10] = {{0}};
  for (int i = 0; i < 10; i++) {
    d[i].n = 101;
    bg_start(&d[i], q, BG_DEQ_UP_TO);
  }
  static int seen[1000];
  memset(seen, 0, sizeof seen);
  int total = 0;
  for (int i = 0; i < 10; i++) {
    bg_join(&d[i]);
    cr_assert_eq(d[i].code, TFQ_OK, "thread %d: %s", i, d[i].msg);
    int64_t n = tfq_tensor_dim(tfq_tuple_get(d[i].out, 0), 0);
    for (int64_t k = 0; k < n; k++) seen[(int)f32_at(d[i].out, 0, k)]++;
    total += (int)n;
    tfq_tuple_free(d[i].out);
  }
  cr_assert_eq(total, 1000);
  for (int i = 0; i < 1000; i++) cr_assert_eq(seen[i], 1);
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *q;
  int ops;
  int bad;
} pe_arg;

static void *pe_enq(void *p) {
  pe_arg *a = p;
  for (int i = 0; i < a->ops; i++) a->bad |= enq_f(a->q, 10, NULL) != TFQ_OK;
  return NULL;
}
static void *pe_deq(void *p) {
  pe_arg *a = p;
  for (int i = 0; i < a->ops; i++) {
    tfq_tuple *t;
    if (tfq_queue_dequeue(a->q, &t, NULL, NOTIMEOUT, NULL)) {
      a->bad = 1;
      continue;
    }
    float v = f32_at(t, 0, 0);
    a->bad |= v != 10 && v != 20;
    tfq_tuple_free(t);
  }
  return NULL;
}

/* [40] */
Test(fifo, parallel_enqueue_and_dequeue_do_not_deadlock) {
  tfq_queue *q = fq(50);
  for (int i = 0; i < 49; i++) OK(enq_f(q, 20, NULL));
  pthread_t th[20];
  pe_arg a[20];
  for (int i = 0; i < 20; i++) {
    a[i] = (pe_arg){q, 100, 0};
    pthread_create(&th[i], NULL, i < 10 ? pe_enq : pe_deq, &a[i]);
  }
  for (int i = 0; i < 20; i++) {
    pthread_join(th[i], NULL);
    cr_assert_eq(a[i].bad, 0);
  }
  cr_assert_eq(tfq_queue_size(q), 49);
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *q;
  int n;
  int bad;
} mix_arg;

static void *mix_consumer(void *p) {
  mix_arg *a = p;
  for (int i = 0; i < a->n; i++) a->bad |= deq_f(a->q) != i;
  return NULL;
}

/* [41] */
Test(fifo, mixture_of_enqueue_and_enqueue_many_is_seen_in_order) {
  tfq_queue *q = fq(10);
  mix_arg a = {q, 250, 0};
  pthread_t th;
  pthread_create(&th, NULL, mix_consumer, &a);
  srand(41);
  int next = 0;
  while (next < 250) {
    if (rand() % 2) {
      OK(enq_f(q, (float)next++, NULL));
    } else {
      int k = rand() % 21;
      if (k > 250 - next) k = 250 - next;
      float v[20];
      for (int i = 0; i < k; i++) v[i] = (float)(next + i);
      OK(enq_many_f(q, k, v, NULL));
      next += k;
    }
  }
  pthread_join(th, NULL);
  cr_assert_eq(a.bad, 0);
  tfq_queue_free(q);
}

static void *enq_250(void *p) {
  tfq_queue *q = p;
  float v[250];
  for (int i = 0; i < 250; i++) v[i] = (float)i;
  if (enq_many_f(q, 250, v, NULL)) abort();
  return NULL;
}

/* [42] */
Test(fifo, mixture_of_dequeue_and_dequeue_many_is_contiguous_and_in_order) {
  tfq_queue *q = fq(10);
  pthread_t th;
  pthread_create(&th, NULL, enq_250, q);
  srand(42);
  int next = 0;
  while (next < 250) {
    if (rand() % 2) {
      cr_assert_eq(deq_f(q), next++);
    } else {
      int k = rand() % 20;
      if (k > 250 - next) k = 250 - next;
      tfq_tuple *t;
      OK(tfq_queue_dequeue_many(q, k, &t, NULL, NOTIMEOUT, NULL));
      cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), k);
      for (int i = 0; i < k; i++) cr_assert_eq(f32_at(t, 0, i), next + i);
      next += k;
      tfq_tuple_free(t);
    }
  }
  pthread_join(th, NULL);
  tfq_queue_free(q);
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

/* [49] */
Test(fifo, queues_without_shared_name_do_not_share) {
  tfq_queue *a = fq(10), *b = fq(10);
  OK(enq_f(a, 1, NULL));
  cr_assert_eq(tfq_queue_size(a), 1);
  cr_assert_eq(tfq_queue_size(b), 0);
  cr_assert_str_neq(tfq_queue_name(a), tfq_queue_name(b));
  tfq_queue_free(a);
  tfq_queue_free(b);
}

/* [51] */
Test(fifo, every_dtype_round_trips_through_enqueue_many_and_dequeue_many) {
  tfq_dtype dts[] = {TFQ_FLOAT, TFQ_DOUBLE, TFQ_INT32, TFQ_UINT8,     TFQ_INT16,     TFQ_INT8,
                     TFQ_INT64, TFQ_UINT16, TFQ_BOOL,  TFQ_COMPLEX64, TFQ_COMPLEX128};
  int64_t shape[2] = {4, 128}, bshape[3] = {32, 4, 128};
  srand(51);
  for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
    tfq_spec *s = spec1(dts[k], 2, shape);
    tfq_queue *q = fifo(s, 32);
    tfq_tensor *x = tensor(dts[k], 3, bshape);
    unsigned char *p = tfq_tensor_data(x);
    for (size_t i = 0; i < tfq_tensor_byte_size(x); i++)
      p[i] = dts[k] == TFQ_BOOL ? (unsigned char)(rand() & 1) : (unsigned char)rand();
    tfq_tuple *t = tup(1, x, NULL);
    OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple *o;
    OK(tfq_queue_dequeue_many(q, 32, &o, NULL, NOTIMEOUT, NULL));
    tfq_tensor *y = tfq_tuple_get(o, 0);
    cr_assert_eq(tfq_tensor_dtype(y), dts[k]);
    cr_assert_eq(tfq_tensor_byte_size(y), tfq_tensor_byte_size(x));
    cr_assert_eq(memcmp(tfq_tensor_cdata(y), p, tfq_tensor_byte_size(x)), 0, "dtype %s",
                 tfq_dtype_name(dts[k]));
    tfq_tuple_free(o);
    tfq_tuple_free(t);
    tfq_queue_free(q);
    tfq_spec_free(s);
  }
}

Test(fifo, string_elements_round_trip_with_nul_bytes_singly_and_in_batches) {
  int64_t two[1] = {2};
  tfq_spec *s = spec1(TFQ_STRING, 1, two);
  tfq_queue *q = fifo(s, 10);
  int64_t bd[2] = {3, 2};
  tfq_tensor *x = tensor(TFQ_STRING, 2, bd);
  const char *vals[6] = {"a", "", "b\0c", "dd", "eee", "f"};
  size_t lens[6] = {1, 0, 3, 2, 3, 1};
  for (int i = 0; i < 6; i++) OK(tfq_tensor_set_string(x, i, vals[i], lens[i], NULL));
  tfq_tuple *t = tup(1, x, NULL);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  tfq_tuple *o;
  OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
  size_t len;
  const char *p = tfq_tensor_string(tfq_tuple_get(o, 0), 0, &len);
  cr_assert_eq(len, 1);
  cr_assert_eq(p[0], 'a');
  tfq_tuple_free(o);
  OK(tfq_queue_dequeue_many(q, 2, &o, NULL, NOTIMEOUT, NULL));
  tfq_tensor *y = tfq_tuple_get(o, 0);
  cr_assert_eq(tfq_tensor_dim(y, 0), 2);
  for (int i = 0; i < 4; i++) {
    p = tfq_tensor_string(y, i, &len);
    cr_assert_eq(len, lens[2 + i]);
    cr_assert_eq(memcmp(p, vals[2 + i], len), 0);
  }
  tfq_tuple_free(o);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(fifo, unshaped_queue_accepts_elements_of_any_shape) {
  tfq_spec *s = spec1(TFQ_INT32, TFQ_UNKNOWN_RANK, NULL);
  tfq_queue *q = fifo(s, 10);
  int32_t v[3] = {1, 2, 3};
  tfq_tuple *a = tup(1, i32_vec(3, v), NULL), *b = tup(1, i32_scalar(9), NULL);
  OK(tfq_queue_enqueue(q, a, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_enqueue(q, b, NULL, NOTIMEOUT, NULL));
  int64_t d[2] = {2, 2};
  tfq_tuple *m = tup(1, tensor(TFQ_INT32, 2, d), NULL);
  OK(tfq_queue_enqueue_many(q, m, NULL, NOTIMEOUT, NULL));
  tfq_tuple *o;
  OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 0), 3);
  cr_assert_eq(i32_at(o, 0, 2), 3);
  tfq_tuple_free(o);
  OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(o, 0)), 0);
  tfq_tuple_free(o);
  OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(o, 0)), 1, "enqueue_many slices along dim 0");
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 0), 2);
  tfq_tuple_free(o);
  tfq_tuple_free(a);
  tfq_tuple_free(b);
  tfq_tuple_free(m);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [52] (names → C argument checks) and [54] */
Test(fifo, constructor_reports_name_capacity_spec_and_kernel_name) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, TFQ_UNKNOWN_RANK, "x", NULL));
  tfq_queue *q;
  OK(tfq_fifo_queue_new(s, 10, "Q", &q, NULL));
  cr_assert_eq(tfq_queue_capacity(q), 10);
  cr_assert_eq(tfq_queue_get_kind(q), TFQ_QUEUE_FIFO);
  const char *n = tfq_queue_name(q);
  cr_assert(n[0] == '_' && strstr(n, "_Q") != NULL, "kernel name %s", n);
  cr_assert_eq(tfq_spec_rank(tfq_queue_spec(q), 0), TFQ_UNKNOWN_RANK);
  cr_assert_str_eq(tfq_spec_name(tfq_queue_spec(q), 0), "x");
  cr_assert_str_eq(tfq_queue_kind_name(TFQ_QUEUE_FIFO), "FIFOQueue");
  tfq_queue_free(q);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  OK(tfq_queue_options_set_shared_name(o, "shared_q", NULL));
  OK(tfq_queue_new(TFQ_QUEUE_FIFO, s, o, &q, NULL));
  cr_assert_str_eq(tfq_queue_name(q), "shared_q");
  cr_assert_eq(tfq_queue_capacity(q), TFQ_UNBOUNDED_CAPACITY, "default capacity is unbounded");
  tfq_queue_free(q);
  tfq_queue_options_free(o);
  tfq_spec_free(s);
}

Test(fifo, negative_capacity_means_unbounded_and_is_printed_as_int32_max) {
  tfq_queue *q = fq(-5);
  cr_assert_eq(tfq_queue_capacity(q), 2147483647);
  for (int i = 0; i < 5000; i++) OK(enq_f(q, (float)i, NULL));
  cr_assert_eq(tfq_queue_size(q), 5000);
  for (int i = 0; i < 5000; i++) cr_assert_eq(deq_f(q), i);
  tfq_queue_free(q);
}

Test(fifo, capacity_zero_is_accepted_and_every_enqueue_blocks) {
  tfq_queue *q = fq(0);
  tfq_tuple *t = tup(1, f32_scalar(1), NULL);
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, 20000, NULL), TFQ_DEADLINE_EXCEEDED);
  tfq_tuple_free(t);
  tfq_queue_free(q);
}

Test(fifo, queue_spec_errors_use_tf_messages) {
  tfq_status *st = tfq_status_new();
  tfq_queue *q;
  int64_t two[1] = {2}, part[1] = {-1};
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, two, 1, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, NULL, TFQ_UNKNOWN_RANK, NULL, NULL));
  cr_assert_eq(tfq_fifo_queue_new(s, 10, NULL, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Different number of component types.  Types: float, int32, Shapes: [[2]]");
  cr_assert_null(q);
  tfq_spec_free(s);
  s = spec1(TFQ_FLOAT, 1, part);
  cr_assert_eq(tfq_fifo_queue_new(s, 10, NULL, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "All shapes must be fully defined: [[?]]");
  tfq_spec_free(s);
  OK(tfq_spec_new(&s, NULL));
  cr_assert_eq(tfq_fifo_queue_new(s, 10, NULL, &q, st), TFQ_INVALID_ARGUMENT);
  tfq_spec_free(s);
  tfq_status_free(st);
}

Test(fifo, negative_n_is_invalid_argument_with_tf_message) {
  tfq_queue *q = fq(10);
  tfq_status *st = tfq_status_new();
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue_many(q, -1, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "DequeueManyOp requested -1 < 0 elements");
  cr_assert_eq(tfq_queue_dequeue_up_to(q, -3, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "DequeueUpToOp requested -3 < 0 elements");
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* ---- close (§1.7) ---- */

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
  cr_assert_eq(c.code, TFQ_CANCELLED, "TF cancels a waiting close too [S!]");
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

/* ---- head of line (§1.5) ---- */

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

/* §1.6 [S!]: the numbers of DEQ_SHORT are the count still needed and the size before restore. */
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

Test(fifo, refcounted_handles_share_one_queue) {
  tfq_queue *q = fq(10);
  tfq_queue *q2 = tfq_queue_ref(q);
  OK(enq_f(q2, 5, NULL));
  tfq_queue_free(q2);
  cr_assert_eq(deq_f(q), 5);
  tfq_queue_free(q);
  tfq_queue_free(NULL);
}

Test(fifo, freeing_a_queue_with_elements_releases_them) {
  tfq_spec *s = spec1(TFQ_STRING, TFQ_UNKNOWN_RANK, NULL);
  tfq_queue *q = fifo(s, 10);
  tfq_tensor *x = tensor(TFQ_STRING, 0, NULL);
  OK(tfq_tensor_set_string(x, 0, "hello", 5, NULL));
  tfq_tuple *t = tup(1, tfq_tensor_ref(x), NULL);
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  cr_assert_eq(tfq_tensor_refcount(x), 2, "the queue holds a reference");
  tfq_queue_free(q);
  cr_assert_eq(tfq_tensor_refcount(x), 1);
  tfq_tensor_free(x);
  tfq_spec_free(s);
}

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
  tfq_spec *s;
  int64_t two = 2;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, &two, 1, NULL, NULL));
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
