/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Elements: every dtype, strings, unshaped
 * and high-dimension components, and the TF messages for a wrong shape, arity, dtype or count. */
#include "fifo_util.h"

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
  int64_t da[2] = {a0, a1}, db[2] = {b0, b1};
  return spec2(TFQ_INT32, a0 < 0 ? 0 : (a1 < 0 ? 1 : 2), da, TFQ_INT32,
               b0 < 0 ? 0 : (b1 < 0 ? 1 : 2), db);
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
  tfq_spec *u = spec2(TFQ_INT32, TFQ_UNKNOWN_RANK, NULL, TFQ_INT32, TFQ_UNKNOWN_RANK, NULL);
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
