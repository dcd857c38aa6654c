/* Part of test_queues (see queues_util.h): PaddingFIFOQueue: unknown dims, padding per batch, TF's
 * messages. */
#include "queues_util.h"

static tfq_queue *padq(tfq_spec *s, int64_t cap) {
  return make(TFQ_QUEUE_PADDING_FIFO, s, cap, 0, 0, 0, 0);
}

/* [74] [75] */
Test(padding_fifo_queue, accepts_unknown_dims_and_requires_a_known_rank) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec1(TFQ_INT32, 1, unk);
  tfq_queue *q = padq(s, 10);
  cr_assert_eq(tfq_spec_dims(tfq_queue_spec(q), 0)[0], -1);
  cr_assert_str_eq(tfq_queue_kind_name(tfq_queue_get_kind(q)), "PaddingFIFOQueue");
  tfq_queue_free(q);
  tfq_spec_free(s);
  s = spec1(TFQ_INT32, TFQ_UNKNOWN_RANK, NULL);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_new(TFQ_QUEUE_PADDING_FIFO, s, o, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "shape <unknown> must have known rank.");
  tfq_status_free(st);
  tfq_queue_options_free(o);
  tfq_spec_free(s);
}

static tfq_tuple *str_int_elem(int len, int base) {
  int64_t sd[1] = {len}, idims[2] = {1, len};
  tfq_tensor *sv = tensor(TFQ_STRING, 1, sd), *iv = tensor(TFQ_INT32, 2, idims);
  static const char *words[3] = {"abc", "d", "e"};
  for (int i = 0; i < len; i++) {
    const char *w = len == 1 ? (base == 1 ? "a" : base == 2 ? "ab" : "abc") : words[i];
    OK(tfq_tensor_set_string(sv, i, w, strlen(w), NULL));
    ((int32_t *)tfq_tensor_data(iv))[i] = base;
  }
  return tup(2, sv, iv);
}

static void check_padded_batch(int up_to) {
  int64_t sdim[1] = {-1}, idim[2] = {1, -1};
  tfq_spec *s = spec2(TFQ_STRING, 1, sdim, TFQ_INT32, 2, idim);
  tfq_queue *q = padq(s, 10);
  int lens[5] = {1, 1, 1, 2, 3};
  for (int i = 0; i < 5; i++) {
    tfq_tuple *t = str_int_elem(lens[i], i + 1);
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *o;
  OK(up_to ? tfq_queue_dequeue_up_to(q, 5, &o, NULL, NOTIMEOUT, NULL)
           : tfq_queue_dequeue_many(q, 5, &o, NULL, NOTIMEOUT, NULL));
  tfq_tensor *sv = tfq_tuple_get(o, 0), *iv = tfq_tuple_get(o, 1);
  cr_assert_eq(tfq_tensor_dim(sv, 0), 5);
  cr_assert_eq(tfq_tensor_dim(sv, 1), 3, "padded to the batch maximum");
  cr_assert_eq(tfq_tensor_rank(iv), 3);
  cr_assert_eq(tfq_tensor_dim(iv, 1), 1);
  cr_assert_eq(tfq_tensor_dim(iv, 2), 3);
  const char *want_s[5][3] = {
      {"a", "", ""}, {"ab", "", ""}, {"abc", "", ""}, {"abc", "d", ""}, {"abc", "d", "e"}};
  for (int r = 0; r < 5; r++)
    for (int c = 0; c < 3; c++) {
      size_t len;
      const char *p = tfq_tensor_string(sv, r * 3 + c, &len);
      cr_assert_eq(len, strlen(want_s[r][c]), "row %d col %d", r, c);
      cr_assert_eq(memcmp(p, want_s[r][c], len), 0);
      int32_t want_i = c < lens[r] ? r + 1 : 0;
      cr_assert_eq(((const int32_t *)tfq_tensor_cdata(iv))[r * 3 + c], want_i);
    }
  tfq_tuple_free(o);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [76] testMultiDequeueManyWithPartiallyKnownShapesAndVariableSizeInput */
Test(padding_fifo_queue, dequeue_many_pads_each_component_to_the_batch_maximum) {
  check_padded_batch(0);
}
/* [77] */
Test(padding_fifo_queue, dequeue_up_to_on_open_queue_pads_identically) { check_padded_batch(1); }

/* [78] */
Test(padding_fifo_queue, empty_dequeue_many_with_dynamic_shape_has_zero_sized_dims) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec1(TFQ_INT32, 1, unk);
  tfq_queue *q = padq(s, 10);
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 0, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(o, 0)), 2);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 0), 0);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 1), 0);
  tfq_tuple_free(o);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [79] and testEnqueueDequeueManyWrongPartiallyKnownShape */
Test(padding_fifo_queue, wrong_partially_known_shape_prints_question_marks) {
  int64_t a[2] = {2, 2}, b[2] = {-1, 3};
  tfq_spec *s = spec2(TFQ_INT32, 2, a, TFQ_INT32, 2, b);
  tfq_queue *q = padq(s, 10);
  int64_t x[2] = {2, 2}, y[2] = {3, 4};
  tfq_tuple *t = tup(2, tensor(TFQ_INT32, 2, x), tensor(TFQ_INT32, 2, y));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 1. Expected [?,3], got [3,4]");
  tfq_tuple_free(t);
  int64_t mx[3] = {2, 2, 2}, my[3] = {2, 3, 4};
  t = tup(2, tensor(TFQ_INT32, 3, mx), tensor(TFQ_INT32, 3, my));
  cr_assert_eq(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 1. Expected [2,?,3], got [2,3,4]");
  tfq_tuple_free(t);
  int64_t ok_y[2] = {5, 3};
  t = tup(2, tensor(TFQ_INT32, 2, x), tensor(TFQ_INT32, 2, ok_y));
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st));
  tfq_tuple_free(t);
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [81] */
Test(padding_fifo_queue, partially_known_high_dimension_round_trips) {
  int64_t d[4] = {4, -1, 4, -1}, bd[5] = {10, 4, 3, 4, 2};
  tfq_spec *s = spec1(TFQ_INT32, 4, d);
  tfq_queue *q = padq(s, 10);
  tfq_tensor *x = tensor(TFQ_INT32, 5, bd);
  int32_t *p = tfq_tensor_data(x);
  for (int i = 0; i < 10 * 4 * 3 * 4 * 2; i++) p[i] = i * 7 + 1;
  tfq_tuple *t = tup(1, x, NULL);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 10, &o, NULL, NOTIMEOUT, NULL));
  tfq_tensor *y = tfq_tuple_get(o, 0);
  for (int i = 0; i < 5; i++) cr_assert_eq(tfq_tensor_dim(y, i), bd[i]);
  cr_assert_eq(memcmp(tfq_tensor_cdata(y), p, tfq_tensor_byte_size(x)), 0);
  tfq_tuple_free(o);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(padding_fifo_queue, pads_rank_five_components_where_tf_is_unimplemented) {
  int64_t d[5] = {-1, 1, 1, 1, 1};
  tfq_spec *s = spec1(TFQ_INT32, 5, d);
  tfq_queue *q = padq(s, 10);
  for (int len = 1; len <= 2; len++) {
    int64_t ed[5] = {len, 1, 1, 1, 1};
    tfq_tensor *x = tensor(TFQ_INT32, 5, ed);
    for (int i = 0; i < len; i++) ((int32_t *)tfq_tensor_data(x))[i] = 10 + i;
    tfq_tuple *t = tup(1, x, NULL);
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 2, &o, NULL, NOTIMEOUT, NULL));
  const int32_t *v = tfq_tensor_cdata(tfq_tuple_get(o, 0));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 1), 2);
  cr_assert(v[0] == 10 && v[1] == 0 && v[2] == 10 && v[3] == 11);
  tfq_tuple_free(o);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [82] */
Test(padding_fifo_queue, single_dequeue_returns_elements_unpadded_with_their_own_shapes) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec2(TFQ_FLOAT, 0, NULL, TFQ_INT32, 1, unk);
  tfq_queue *q = padq(s, 10);
  float f[2] = {1, 2};
  int64_t d2[2] = {2, 2}, d3[2] = {2, 3};
  for (int rep = 0; rep < 2; rep++) {
    tfq_tensor *iv = tensor(TFQ_INT32, 2, rep ? d3 : d2);
    for (int i = 0; i < (rep ? 6 : 4); i++) ((int32_t *)tfq_tensor_data(iv))[i] = i;
    tfq_tuple *t = tup(2, f32_vec(2, f), iv);
    OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  for (int i = 0; i < 4; i++) {
    tfq_tuple *o;
    OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(f32_at(o, 0, 0), f[i % 2]);
    int64_t w = i < 2 ? 2 : 3;
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 1), 0), w);
    cr_assert_eq(i32_at(o, 1, 0), (int32_t)((i % 2) * w));
    tfq_tuple_free(o);
  }
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(padding_fifo_queue, padding_is_per_batch) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec1(TFQ_INT32, 1, unk);
  tfq_queue *q = padq(s, 10);
  int lens[4] = {1, 4, 2, 2};
  int32_t v[4] = {7, 7, 7, 7};
  for (int i = 0; i < 4; i++) {
    tfq_tuple *t = tup(1, i32_vec(lens[i], v), NULL);
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *a, *b;
  OK(tfq_queue_dequeue_many(q, 2, &a, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue_many(q, 2, &b, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(a, 0), 1), 4);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 1), 2);
  tfq_tuple_free(a);
  tfq_tuple_free(b);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* TF 2.21 (conformance suite): PaddingFIFOQueue inherits FIFOQueue's enqueue and single dequeue,
 * whose messages name "FIFOQueue"; its dequeue_many/up_to name "PaddingFIFOQueue". */
Test(padding_fifo_queue, closed_messages_name_the_kind_tf_names) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec1(TFQ_INT32, 1, unk);
  tfq_queue *q = padq(s, 10);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  tfq_status *st = tfq_status_new();
  int32_t v[1] = {1};
  tfq_tuple *t = tup(1, i32_vec(1, v), NULL);
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_CANCELLED);
  cr_assert(strncmp(tfq_status_message(st), "FIFOQueue '", 11) == 0, "%s", tfq_status_message(st));
  tfq_tuple_free(t);
  tfq_tuple *o;
  cr_assert_eq(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(strncmp(tfq_status_message(st), "FIFOQueue '", 11) == 0, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_queue_dequeue_many(q, 2, &o, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(strncmp(tfq_status_message(st), "PaddingFIFOQueue '", 18) == 0, "%s",
            tfq_status_message(st));
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(s);
}
