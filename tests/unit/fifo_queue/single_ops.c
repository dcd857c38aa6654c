/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Single enqueue and dequeue, construction
 * (names, capacities, specs) and handle lifetime. */
#include "fifo_util.h"

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
  tfq_spec *s = spec2(TFQ_INT32, 0, NULL, TFQ_FLOAT, 0, NULL);
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
  tfq_spec *s = spec2(TFQ_FLOAT, 1, two, TFQ_INT32, TFQ_UNKNOWN_RANK, NULL);
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
