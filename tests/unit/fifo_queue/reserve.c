/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): rows written in place
 * (src/queues/queues_shared.h, tfq__queue_reserve / tfq__queue_commit), the read-decode op's way
 * into a FIFO's ring.  A reservation is an enqueue_many that has arrived: its rows stay out of
 * sight until the commit, other enqueues and closes wait behind it, dequeues go on. */
#include "fifo_util.h"
#include "queues/queues_shared.h"

/* Reserves up to `want` rows of float queue q and writes v0, v0 + 1, ... into them. */
static int64_t reserve_f(tfq_queue *q, int64_t want, int64_t min, float v0) {
  char *base[1];
  int64_t k = tfq__queue_reserve(q, want, min, base);
  for (int64_t i = 0; i < k; i++) ((float *)base[0])[i] = v0 + (float)i;
  return k;
}

Test(fifo, reserved_rows_join_the_queue_only_at_the_commit_in_order) {
  tfq_queue *q = fq(10);
  OK(enq_f(q, 1, NULL));
  cr_assert_eq(reserve_f(q, 4, 1, 10), 4);
  cr_assert_eq(tfq_queue_size(q), 1, "reserved rows are not counted");
  cr_assert_eq(deq_f(q), 1);
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, 0, NULL), TFQ_DEADLINE_EXCEEDED,
               "reserved rows cannot be dequeued");
  tfq__queue_commit(q, 3, NULL); /* the fourth row is dropped unread */
  cr_assert_eq(tfq_queue_size(q), 3);
  for (int i = 0; i < 3; i++) cr_assert_eq(deq_f(q), 10 + i);
  tfq_queue_free(q);
}

Test(fifo, a_commit_of_no_rows_leaves_the_queue_as_it_was) {
  tfq_queue *q = fq(4);
  cr_assert_eq(reserve_f(q, 4, 4, 0), 4);
  tfq__queue_commit(q, 0, NULL);
  cr_assert_eq(tfq_queue_size(q), 0);
  cr_assert_eq(reserve_f(q, 4, 4, 5), 4, "the rows may be reserved again");
  tfq__queue_commit(q, 4, NULL);
  for (int i = 0; i < 4; i++) cr_assert_eq(deq_f(q), 5 + i);
  tfq_queue_free(q);
}

Test(fifo, a_reservation_takes_no_more_than_the_capacity_leaves_and_at_least_min) {
  tfq_queue *q = fq(6);
  float v[4] = {1, 2, 3, 4};
  OK(enq_many_f(q, 4, v, NULL));
  cr_assert_eq(reserve_f(q, 5, 3, 0), 0, "2 rows of room, 3 asked at least");
  cr_assert_eq(reserve_f(q, 5, 2, 5), 2);
  tfq__queue_commit(q, 2, NULL);
  cr_assert_eq(tfq_queue_size(q), 6);
  cr_assert_eq(reserve_f(q, 1, 1, 0), 0, "full");
  tfq_queue_free(q);
}

Test(fifo, reserved_rows_are_contiguous_up_to_the_rings_wrap) {
  tfq_queue *q = fq(8);
  float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  OK(enq_many_f(q, 8, v, NULL)); /* the ring is 8 rows: rows 0..7 */
  for (int i = 0; i < 6; i++) cr_assert_eq(deq_f(q), i);
  /* 2 rows stored in slots 6, 7: the next free slots are 0..5, after the wrap */
  cr_assert_eq(reserve_f(q, 6, 1, 8), 6);
  tfq__queue_commit(q, 6, NULL);
  for (int i = 6; i < 14; i++) cr_assert_eq(deq_f(q), i);
  /* empty, its head at slot 6: two slots before the wrap */
  cr_assert_eq(reserve_f(q, 6, 3, 20), 0, "2 contiguous slots, 3 asked at least");
  cr_assert_eq(reserve_f(q, 6, 1, 20), 2, "up to the wrap");
  tfq__queue_commit(q, 2, NULL);
  cr_assert_eq(reserve_f(q, 8, 1, 30), 6, "then from slot 0, up to the capacity");
  tfq__queue_commit(q, 6, NULL);
  for (int i = 0; i < 2; i++) cr_assert_eq(deq_f(q), 20 + i);
  for (int i = 0; i < 6; i++) cr_assert_eq(deq_f(q), 30 + i);
  tfq_queue_free(q);
}

Test(fifo, no_reservation_where_rows_are_not_stored_in_place) {
  char *base[2];
  tfq_queue *q = fq(10);
  cr_assert_eq(reserve_f(q, 2, 1, 0), 2);
  cr_assert_eq(tfq__queue_reserve(q, 2, 1, base), 0, "one open reservation at a time");
  tfq__queue_commit(q, 0, NULL);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq__queue_reserve(q, 2, 1, base), 0, "closed");
  tfq_queue_free(q);
  /* other kinds, and a component of an unknown dim (stored as element tensors) */
  tfq_spec *sp = spec1(TFQ_FLOAT, 0, SCALAR);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_queue_options_set_capacity(o, 10);
  tfq_queue_kind kinds[2] = {TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_QUEUE_PRIORITY};
  for (int k = 0; k < 2; k++) {
    OK(tfq_queue_new(kinds[k], sp, o, &q, NULL));
    cr_assert_eq(tfq__queue_reserve(q, 2, 1, base), 0, "%s", tfq_queue_kind_name(kinds[k]));
    tfq_queue_free(q);
  }
  tfq_spec_free(sp);
  int64_t unknown = -1;
  sp = spec1(TFQ_FLOAT, 1, &unknown);
  OK(tfq_queue_new(TFQ_QUEUE_PADDING_FIFO, sp, o, &q, NULL));
  cr_assert_eq(tfq__queue_reserve(q, 2, 1, base), 0, "padded component");
  tfq_queue_free(q);
  tfq_spec_free(sp);
  int64_t three = 3;
  sp = spec1(TFQ_FLOAT, 1, &three);
  OK(tfq_queue_new(TFQ_QUEUE_PADDING_FIFO, sp, o, &q, NULL));
  cr_assert_eq(tfq__queue_reserve(q, 2, 1, base), 2, "a PaddingFIFOQueue of known shapes");
  tfq__queue_commit(q, 0, NULL);
  tfq_queue_free(q);
  tfq_spec_free(sp);
  tfq_queue_options_free(o);
}

Test(fifo, an_enqueue_during_a_reservation_goes_in_after_its_rows) {
  tfq_queue *q = fq(10);
  cr_assert_eq(reserve_f(q, 3, 1, 1), 3);
  bg b = {0}, m = {0};
  b.vals[0] = 100;
  bg_start(&b, q, BG_ENQ);
  bg_assert_blocked(&b);
  cr_assert_eq(tfq_queue_size(q), 0);
  m.n = 2;
  m.vals[0] = 200;
  m.vals[1] = 201;
  bg_start(&m, q, BG_ENQ_MANY);
  bg_assert_blocked(&m);
  char *base[1];
  cr_assert_eq(tfq__queue_reserve(q, 1, 1, base), 0, "enqueues wait: no reservation ahead");
  tfq__queue_commit(q, 3, NULL);
  bg_join(&b);
  bg_join(&m);
  OK(b.code);
  OK(m.code);
  cr_assert_eq(tfq_queue_size(q), 6);
  for (int i = 1; i <= 3; i++) cr_assert_eq(deq_f(q), i);
  cr_assert_eq(deq_f(q), 100);
  cr_assert_eq(deq_f(q), 200);
  cr_assert_eq(deq_f(q), 201);
  tfq_queue_free(q);
}

Test(fifo, a_dequeue_waiting_for_rows_gets_the_committed_rows) {
  tfq_queue *q = fq(10);
  bg d = {0};
  d.n = 3;
  bg_start(&d, q, BG_DEQ_MANY);
  bg_assert_blocked(&d);
  cr_assert_eq(reserve_f(q, 4, 4, 7), 4);
  bg_assert_blocked(&d);
  tfq__queue_commit(q, 4, NULL);
  bg_join(&d);
  OK(d.code);
  for (int i = 0; i < 3; i++) cr_assert_eq(f32_at(d.out, 0, i), 7 + i);
  tfq_tuple_free(d.out);
  cr_assert_eq(deq_f(q), 10);
  tfq_queue_free(q);
}

/* A close, plain or cancelling, that comes during a reservation waits for its rows: they are an
 * enqueue that arrived before it, so they are served after the close, and a dequeue after the
 * close still finds them. */
static void close_during_reservation(int cancel_pending) {
  tfq_queue *q = fq(10);
  cr_assert_eq(reserve_f(q, 2, 1, 5), 2);
  bg c = {0};
  bg_start(&c, q, cancel_pending ? BG_CLOSE_CANCEL : BG_CLOSE);
  bg_assert_blocked(&c);
  cr_assert_eq(tfq_queue_is_closed(q), 0);
  tfq__queue_commit(q, 2, NULL);
  bg_join(&c);
  OK(c.code);
  cr_assert_eq(tfq_queue_is_closed(q), 1);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 2, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(f32_at(t, 0, 0), 5);
  cr_assert_eq(f32_at(t, 0, 1), 6);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
}

Test(fifo, a_close_during_a_reservation_waits_for_its_rows) { close_during_reservation(0); }

Test(fifo, a_cancelling_close_during_a_reservation_waits_for_its_rows) {
  close_during_reservation(1);
}

/* String rows written in place keep their owner: one reference a row and string component,
 * dropped as the rows leave. */
Test(fifo, committed_string_rows_keep_their_owner_until_dequeued) {
  int64_t two = 2;
  tfq_spec *sp = spec2(TFQ_STRING, 0, SCALAR, TFQ_STRING, 1, &two);
  tfq_queue *q = fifo(sp, 8);
  tfq_spec_free(sp);
  tfq_tensor *owner = tensor(TFQ_STRING, 1, (int64_t[]){0});
  static const char bytes[] = "abcdef";
  char *base[2];
  cr_assert_eq(tfq__queue_reserve(q, 3, 3, base), 3);
  for (int r = 0; r < 3; r++) {
    ((tfq__str *)base[0])[r] = (tfq__str){bytes + r, 1};
    ((tfq__str *)base[1])[2 * r] = (tfq__str){bytes + r, 2};
    ((tfq__str *)base[1])[2 * r + 1] = (tfq__str){bytes + r, 3};
  }
  tfq__queue_commit(q, 3, owner);
  cr_assert_eq(tfq_tensor_refcount(owner), 1 + 3 * 2);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(q, 2, &t, NULL, NOTIMEOUT, NULL));
  size_t l;
  const char *s = tfq_tensor_string(tfq_tuple_get(t, 1), 3, &l);
  cr_assert(l == 3 && memcmp(s, "bcd", 3) == 0);
  s = tfq_tensor_string(tfq_tuple_get(t, 0), 1, &l);
  cr_assert(l == 1 && s[0] == 'b');
  tfq_tuple_free(t);
  cr_assert_eq(tfq_tensor_refcount(owner), 1 + 1 * 2, "the dequeued rows let go");
  tfq_queue_free(q);
  cr_assert_eq(tfq_tensor_refcount(owner), 1, "the queue's last rows let go");
  tfq_tensor_free(owner);
}
