/* Coordinator, LooperThread, QueueRunner and batchers: cases 90–133 (numbers in brackets,
 * docs/conformance.md, "Case numbers") and the rules coord.h and producer.h write down. Python-only
 * cases (graph errors, dicts, sessions) become the equivalent C checks. */
#include <stdlib.h>

#include "helpers.h"

/* ---- an op like count_up_to: yields 0, 1, ... limit-1, then OUT_OF_RANGE ---- */
typedef struct counter {
  pthread_mutex_t mu;
  int64_t next, limit;
  tfq_queue *q; /* enqueue target for counter_enqueue_step */
  atomic_int runs;
} counter;

static void counter_init(counter *c, int64_t limit, tfq_queue *q) {
  pthread_mutex_init(&c->mu, NULL);
  c->next = 0;
  c->limit = limit;
  c->q = q;
  atomic_init(&c->runs, 0);
}

static tfq_code counter_take(counter *c, int64_t *v, tfq_status *st) {
  pthread_mutex_lock(&c->mu);
  tfq_code code = TFQ_OK;
  if (c->next >= c->limit)
    code = tfq_status_set(st, TFQ_OUT_OF_RANGE, "Reached limit of %lld", (long long)c->limit);
  else
    *v = c->next++;
  pthread_mutex_unlock(&c->mu);
  return code;
}

static tfq_code counter_enqueue_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  counter *c = ctx;
  atomic_fetch_add(&c->runs, 1);
  int64_t v = 0;
  tfq_code code = counter_take(c, &v, st);
  if (code) return code;
  tfq_tuple *t = tup(1, i64_scalar(v), NULL);
  code = tfq_queue_enqueue(c->q, t, cancel, NOTIMEOUT, st);
  tfq_tuple_free(t);
  return code;
}

static tfq_code counter_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  int64_t v = 0;
  tfq_code code = counter_take(ctx, &v, st);
  if (!code) *out = tup(1, i64_scalar(v), NULL);
  return code;
}

static tfq_queue *i64_fifo(int64_t cap) { return scalar_fifo(TFQ_INT64, cap); }

static tfq_coord *coord(void) {
  tfq_coord *c;
  OK(tfq_coord_new(&c, NULL));
  return c;
}

/* ==== Coordinator ==== */

/* [90] */
Test(coordinator, stop_api_sets_should_stop_and_wait_for_stop) {
  tfq_coord *c = coord();
  cr_assert_eq(tfq_coord_should_stop(c), 0);
  cr_assert_eq(tfq_coord_wait_for_stop(c, 10000), 0);
  cr_assert_eq(tfq_coord_wait_for_stop(c, 0), 0);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  cr_assert_eq(tfq_coord_should_stop(c), 1);
  cr_assert_eq(tfq_coord_wait_for_stop(c, 10000), 1);
  cr_assert(tfq_cancel_is_triggered(tfq_coord_cancel(c)), "a stop triggers the cancel token");
  tfq_coord_free(c);
}

static void *stop_later(void *p) {
  sleep_ms(30);
  /* A clean stop returns TFQ_OK: the thread's result says whether it did. */
  return tfq_coord_request_stop(p, TFQ_OK, NULL) == TFQ_OK ? p : NULL;
}

/* [91] */
Test(coordinator, stop_requested_from_another_thread_wakes_wait_for_stop) {
  tfq_coord *c = coord();
  pthread_t th;
  pthread_create(&th, NULL, stop_later, c);
  cr_assert_eq(tfq_coord_wait_for_stop(c, -1), 1);
  void *stopped;
  pthread_join(th, &stopped);
  cr_assert_eq(stopped, c, "request_stop from the other thread returned TFQ_OK");
  tfq_coord_free(c);
}

static atomic_int g_finished;
static void *short_worker(void *p) {
  sleep_ms(20);
  atomic_fetch_add(&g_finished, 1);
  return p;
}

/* [92] */
Test(coordinator, join_waits_for_every_registered_thread) {
  tfq_coord *c = coord();
  atomic_store(&g_finished, 0);
  for (int i = 0; i < 3; i++) OK(tfq_coord_start_thread(c, NULL, short_worker, NULL, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL)); /* no stop: waits however long it takes */
  cr_assert_eq(atomic_load(&g_finished), 3);
  cr_assert_eq(tfq_coord_joined(c), 1);
  tfq_coord_free(c);
}

static void *instant_worker(void *p) { return p; }

static atomic_int g_release;
static void *long_worker(void *p) {
  for (int i = 0; i < 1000 && !atomic_load(&g_release); i++) sleep_ms(10);
  return p;
}

/* [93] [94] */
Test(coordinator, join_grace_expiry_names_the_threads_still_running) {
  atomic_store(&g_release, 0);
  tfq_coord *c = coord();
  tfq_status *st = tfq_status_new();
  OK(tfq_coord_start_thread(c, "fast", instant_worker, NULL, NULL));
  OK(tfq_coord_start_thread(c, "slow", long_worker, NULL, NULL));
  sleep_ms(20); /* "fast" has stopped */
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  cr_assert_eq(tfq_coord_join(c, 2000, 0, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Coordinator stopped with threads still running: slow");
  OK(tfq_coord_start_thread(c, "slow2", long_worker, NULL, NULL));
  cr_assert_eq(tfq_coord_join(c, 2000, 1, st), TFQ_OK, "ignore_live_threads");
  atomic_store(&g_release, 1);
  sleep_ms(30);
  tfq_status_free(st);
  tfq_coord_free(c);
}

/* [96] [97] */
Test(coordinator, clean_stop_codes_are_not_recorded) {
  tfq_coord *c = coord();
  OK(tfq_coord_request_stop(c, TFQ_OUT_OF_RANGE, "Reached limit of 3"));
  OK(tfq_coord_join(c, 0, 0, NULL));
  tfq_coord_free(c);
  c = coord();
  tfq_coord_add_clean_code(c, TFQ_INVALID_ARGUMENT);
  OK(tfq_coord_request_stop(c, TFQ_INVALID_ARGUMENT, "my clean error"));
  OK(tfq_coord_join(c, 0, 0, NULL));
  tfq_coord_free(c);
}

Test(coordinator, first_error_wins_and_is_returned_by_join) {
  tfq_coord *c = coord();
  tfq_status *st = tfq_status_new();
  OK(tfq_coord_request_stop(c, TFQ_INVALID_ARGUMENT, "First"));
  OK(tfq_coord_request_stop(c, TFQ_NOT_FOUND, "Too late"));
  cr_assert_eq(tfq_coord_join(c, 0, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "First");
  /* testRequestStopRaisesIfJoined */
  cr_assert_eq(tfq_coord_request_stop(c, TFQ_ABORTED, "after join"), TFQ_ABORTED);
  cr_assert_eq(tfq_coord_error(c, st), TFQ_INVALID_ARGUMENT);
  /* testClearStopClearsExceptionToo */
  tfq_coord_clear_stop(c);
  cr_assert_eq(tfq_coord_should_stop(c), 0);
  cr_assert_eq(tfq_coord_joined(c), 0);
  cr_assert_eq(tfq_coord_error(c, st), TFQ_OK);
  cr_assert(!tfq_cancel_is_triggered(tfq_coord_cancel(c)));
  tfq_status_free(st);
  tfq_coord_free(c);
}

static tfq_code stop_after_3(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  int *n = ctx;
  if (++*n == 3) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "done");
  return TFQ_OK;
}

/* [100] */
Test(looper, target_runs_until_it_stops_the_coordinator) {
  tfq_coord *c = coord();
  int n = 0;
  OK(tfq_coord_loop(c, 0, stop_after_3, &n, "looper", NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  cr_assert_eq(n, 3);
  cr_assert_eq(tfq_coord_should_stop(c), 1);
  tfq_coord_free(c);
}

Test(looper, timer_interval_spaces_the_calls) {
  tfq_coord *c = coord();
  int n = 0;
  int64_t t0 = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = ts.tv_sec * 1000000000LL + ts.tv_nsec;
  OK(tfq_coord_loop(c, 20000, stop_after_3, &n, "looper", NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t el = ts.tv_sec * 1000000000LL + ts.tv_nsec - t0;
  cr_assert_eq(n, 3);
  cr_assert_geq(el, 40 * 1000000LL, "first call immediate, then two 20 ms intervals");
  tfq_coord_free(c);
}

/* ==== QueueRunner ==== */

/* [101] */
Test(queue_runner, count_up_to_fills_the_queue_then_closes_it) {
  tfq_queue *q = i64_fifo(10);
  counter cnt;
  counter_init(&cnt, 3, q);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "CountUpTo", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  OK(tfq_runner_join(r, NULL));
  cr_assert_eq(cnt.next, 3);
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  cr_assert_eq(tfq_queue_is_closed(q), 1);
  cr_assert_eq(tfq_queue_size(q), 3);
  tfq_runner_free(r);
  tfq_queue_free(q);
}

/* [102] */
Test(queue_runner, two_ops_reach_their_limits_independently) {
  tfq_queue *q = i64_fifo(100);
  counter a, b;
  counter_init(&a, 3, q);
  counter_init(&b, 30, q);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &a, "a", NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &b, "b", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  OK(tfq_runner_join(r, NULL));
  cr_assert_eq(a.next, 3);
  cr_assert_eq(b.next, 30);
  cr_assert_eq(tfq_queue_size(q), 33);
  cr_assert_eq(tfq_queue_is_closed(q), 1, "closed only when the last thread is done");
  tfq_runner_free(r);
  tfq_queue_free(q);
}

static tfq_code bad_op(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  return tfq_status_set(st, TFQ_NOT_FOUND, "Operation not in the graph");
}

/* [103] [109] */
Test(queue_runner, errors_are_captured_and_reset_on_restart) {
  tfq_queue *q = i64_fifo(10);
  tfq_runner *r;
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, bad_op, NULL, "bad1", NULL));
  OK(tfq_runner_add_op(r, bad_op, NULL, "bad2", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  cr_assert_eq(tfq_runner_join(r, st), TFQ_NOT_FOUND);
  cr_assert(contains(tfq_status_message(st), "Operation not in the graph"));
  cr_assert_eq(tfq_runner_num_errors(r), 2);
  cr_assert_eq(tfq_queue_is_closed(q), 0, "a thread dying of an error never closes the queue");
  tfq_runner_free(r);
  counter cnt;
  counter_init(&cnt, 2, q);
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "good", NULL));
  OK(tfq_runner_add_op(r, bad_op, NULL, "bad", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  cr_assert_eq(tfq_runner_join(r, st), TFQ_NOT_FOUND);
  cr_assert_eq(tfq_runner_num_errors(r), 1);
  OK(tfq_runner_start(r, NULL, 0, NULL)); /* again, after they finished */
  cr_assert_eq(tfq_runner_join(r, st), TFQ_NOT_FOUND);
  cr_assert_eq(tfq_runner_num_errors(r), 1, "reset to 1, not 2");
  tfq_runner_free(r);
  tfq_status_free(st);
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *from, *to;
} transfer;

static tfq_code transfer_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  transfer *t = ctx;
  tfq_tuple *e;
  tfq_code c = tfq_queue_dequeue(t->from, &e, cancel, NOTIMEOUT, st);
  if (c) return c;
  c = tfq_queue_enqueue(t->to, e, cancel, NOTIMEOUT, st);
  tfq_tuple_free(e);
  return c;
}

/* [104] */
Test(queue_runner, dequeue_enqueue_transfer_ends_cleanly_when_the_source_closes) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue *q0 = fifo(s, 3), *q1 = fifo(s, 30);
  transfer t = {q0, q1};
  tfq_runner *r;
  OK(tfq_runner_new(q1, &r, NULL));
  OK(tfq_runner_add_op(r, transfer_step, &t, "transfer", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  OK(enq_f(q0, 10, NULL));
  OK(enq_f(q0, 10, NULL));
  OK(tfq_queue_close(q0, 0, NULL, NOTIMEOUT, NULL));
  OK(tfq_runner_join(r, NULL));
  cr_assert_eq(deq_f(q1), 10);
  cr_assert_eq(deq_f(q1), 10);
  tfq_tuple *e;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue(q1, &e, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(contains(tfq_status_message(st), "is closed"));
  tfq_status_free(st);
  tfq_runner_free(r);
  tfq_queue_free(q0);
  tfq_queue_free(q1);
  tfq_spec_free(s);
}

/* [105] */
Test(queue_runner, a_coordinator_stopped_before_start_runs_no_op) {
  tfq_queue *q = i64_fifo(10);
  counter cnt;
  counter_init(&cnt, 3, q);
  tfq_coord *c = coord();
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "CountUpTo", NULL));
  OK(tfq_runner_start(r, c, 0, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  cr_assert_eq(atomic_load(&cnt.runs), 0);
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_queue_free(q);
}

/* [106] */
Test(queue_runner, an_op_error_stops_the_coordinator_and_join_returns_it) {
  tfq_queue *q = i64_fifo(10);
  tfq_coord *c = coord();
  tfq_runner *r;
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, bad_op, NULL, "bad", NULL));
  OK(tfq_runner_start(r, c, 0, NULL));
  cr_assert_eq(tfq_coord_join(c, 1000000, 0, st), TFQ_NOT_FOUND);
  cr_assert_str_eq(tfq_status_message(st), "Operation not in the graph");
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_queue_free(q);
  tfq_status_free(st);
}

/* [108] */
Test(queue_runner, a_second_start_while_running_starts_nothing) {
  tfq_queue *q = i64_fifo(1);
  counter cnt;
  counter_init(&cnt, 1000, q);
  tfq_coord *c = coord();
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "CountUpTo", NULL));
  OK(tfq_runner_start(r, c, 0, NULL));
  sleep_ms(20);
  cr_assert_eq(tfq_runner_running(r), 1);
  OK(tfq_runner_start(r, c, 0, NULL));
  cr_assert_eq(tfq_runner_running(r), 1);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL)); /* the stop-time CANCELLED is not an error */
  OK(tfq_runner_join(r, NULL));
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_queue_free(q);
}

/* [111]: TF's C++ runner reports a failing close op; Python's ignores it.  tfq ignores the one
 * failure a C close op can have without a stop — the queue being already closed — because the
 * queue is then in the state the close op wanted. */
Test(queue_runner, closing_an_already_closed_queue_is_not_an_error) {
  tfq_queue *q = i64_fifo(10);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  counter cnt;
  counter_init(&cnt, 0, q);
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "CountUpTo", NULL));
  OK(tfq_runner_start(r, NULL, 0, NULL));
  OK(tfq_runner_join(r, NULL));
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  tfq_runner_free(r);
  tfq_queue_free(q);
}

static tfq_code starved(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_tuple *t;
  tfq_code c = tfq_queue_dequeue(ctx, &t, cancel, NOTIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

/* [112] */
Test(queue_runner, no_ops_is_invalid_and_a_starved_start_times_out) {
  tfq_queue *q = i64_fifo(10), *empty = i64_fifo(10);
  tfq_runner *r;
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_new(q, &r, NULL));
  cr_assert_eq(tfq_runner_start(r, NULL, 0, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Empty enqueue ops to run.");
  OK(tfq_runner_add_op(r, starved, empty, "starved", NULL));
  tfq_coord *c = coord();
  cr_assert_eq(tfq_runner_start(r, c, 1000, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_str_eq(tfq_status_message(st), "Queues not fed before the timeout");
  /* a stop wakes the blocked op through the coordinator's cancel token */
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, st));
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_queue_free(empty);
}

/* [114] (the C++ status rules) */
Test(queue_runner, coordinator_returns_the_first_non_clean_status) {
  tfq_queue *q = i64_fifo(10);
  tfq_coord *c = coord();
  tfq_coord_add_clean_code(c, TFQ_CANCELLED);
  tfq_runner *r;
  tfq_status *st = tfq_status_new();
  OK(tfq_runner_new(q, &r, NULL));
  OK(tfq_runner_add_op(r, bad_op, NULL, "bad", NULL));
  OK(tfq_runner_start(r, c, 0, NULL));
  cr_assert_eq(tfq_coord_join(c, 1000000, 0, st), TFQ_NOT_FOUND);
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_status_free(st);
  tfq_queue_free(q);
}

Test(queue_runner, stop_cancels_enqueues_blocked_on_a_full_queue_without_reporting_them) {
  tfq_queue *q = i64_fifo(2);
  counter cnt;
  counter_init(&cnt, 1000000, q);
  tfq_coord *c = coord();
  tfq_runner *r;
  OK(tfq_runner_new(q, &r, NULL));
  for (int i = 0; i < 3; i++) OK(tfq_runner_add_op(r, counter_enqueue_step, &cnt, "e", NULL));
  OK(tfq_runner_start(r, c, 0, NULL));
  sleep_ms(30);
  cr_assert_eq(tfq_queue_size(q), 2);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 2000000, 0, NULL));
  cr_assert_eq(tfq_runner_num_errors(r), 0);
  cr_assert_eq(tfq_queue_is_closed(q), 1, "the close-on-stop thread cancelled the enqueues");
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_queue_free(q);
}

/* ==== batchers ==== */

static tfq_spec *i64_spec(void) { return spec1(TFQ_INT64, 0, NULL); }

static tfq_batcher *batcher(tfq_batcher_kind kind, int64_t batch, counter *src, size_t nsrc,
                            tfq_batch_options *o, tfq_coord *c) {
  tfq_spec *s = i64_spec();
  tfq_source_fn fns[4] = {counter_source, counter_source, counter_source, counter_source};
  void *ctxs[4] = {&src[0], nsrc > 1 ? &src[1] : NULL, NULL, NULL};
  tfq_batcher *b;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_new(kind, s, batch, fns, ctxs, nsrc, o, c, &b, st), TFQ_OK, "%s",
               tfq_status_message(st));
  tfq_status_free(st);
  tfq_spec_free(s);
  return b;
}

static int64_t i64_at(const tfq_tuple *t, int64_t i) {
  return ((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(t, 0)))[i];
}

/* [123] */
Test(batch, one_thread_yields_consecutive_batches_then_out_of_range) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 30, NULL);
  tfq_batcher *b = batcher(TFQ_BATCHER_BATCH, 10, &src, 1, NULL, c);
  cr_assert_str_eq(tfq_batcher_summary_name(b), "batch/fraction_of_32_full");
  for (int k = 0; k < 3; k++) {
    tfq_tuple *t;
    OK(tfq_batcher_next(b, &t, NULL));
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 10);
    for (int i = 0; i < 10; i++) cr_assert_eq(i64_at(t, i), 10 * k + i);
    tfq_tuple_free(t);
  }
  tfq_tuple *t;
  cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_coord_free(c);
}

/* testOneThreadSmallerBatch, [125] testManyThreadsSmallerBatch */
Test(batch, many_threads_with_a_smaller_final_batch_deliver_the_whole_multiset) {
  for (int threads = 1; threads <= 4; threads += 3) {
    tfq_coord *c = coord();
    counter src;
    counter_init(&src, 35, NULL);
    tfq_batch_options *o;
    OK(tfq_batch_options_new(&o, NULL));
    tfq_batch_options_set_num_threads(o, threads);
    tfq_batch_options_set_allow_smaller_final_batch(o, 1);
    tfq_batcher *b = batcher(TFQ_BATCHER_BATCH, 10, &src, 1, o, c);
    int seen[35] = {0}, sizes[4];
    for (int k = 0; k < 4; k++) {
      tfq_tuple *t;
      OK(tfq_batcher_next(b, &t, NULL));
      sizes[k] = (int)tfq_tensor_dim(tfq_tuple_get(t, 0), 0);
      for (int i = 0; i < sizes[k]; i++) seen[i64_at(t, i)]++;
      tfq_tuple_free(t);
    }
    cr_assert(sizes[0] == 10 && sizes[1] == 10 && sizes[2] == 10 && sizes[3] == 5);
    for (int i = 0; i < 35; i++) cr_assert_eq(seen[i], 1);
    tfq_tuple *t;
    cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
    OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
    OK(tfq_coord_join(c, 1000000, 0, NULL));
    tfq_batcher_free(b);
    tfq_batch_options_free(o);
    tfq_coord_free(c);
  }
}

Test(batch, next_into_refills_one_tuple_and_gives_the_smaller_final_batch) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 25, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_allow_smaller_final_batch(o, 1);
  tfq_batcher *b = batcher(TFQ_BATCHER_BATCH, 10, &src, 1, o, c);
  tfq_tuple *t;
  OK(tfq_tuple_new(1, &t, NULL));
  OK(tfq_batcher_next_into(b, t, NULL));
  tfq_tensor *first = tfq_tuple_get(t, 0);
  for (int k = 0; k < 3; k++) {
    if (k) OK(tfq_batcher_next_into(b, t, NULL));
    int64_t n = tfq_tensor_dim(tfq_tuple_get(t, 0), 0);
    cr_assert_eq(n, k < 2 ? 10 : 5);
    if (k == 1) cr_assert_eq(tfq_tuple_get(t, 0), first, "the full batch refilled in place");
    for (int i = 0; i < n; i++) cr_assert_eq(i64_at(t, i), 10 * k + i);
  }
  tfq_tuple *wrong;
  OK(tfq_tuple_new(2, &wrong, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_next_into(b, wrong, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Wrong number of components in tuple. Expected 1, got 2");
  cr_assert_eq(tfq_batcher_next_into(b, t, st), TFQ_OUT_OF_RANGE);
  tfq_status_free(st);
  tfq_tuple_free(wrong);
  tfq_tuple_free(t);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_coord_free(c);
}

static tfq_code vec_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  atomic_int *n = ctx;
  if (atomic_fetch_add(n, 1) >= 20) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "done");
  int32_t v[2] = {12, 12};
  *out = tup(1, i32_vec(2, v), NULL);
  return TFQ_OK;
}

/* [127] (C analogue of the single-element dict: a [2] component batches to [8,2]) */
Test(batch, element_shapes_gain_a_leading_batch_dimension) {
  tfq_coord *c = coord();
  int64_t two[1] = {2};
  tfq_spec *s = spec1(TFQ_INT32, 1, two);
  atomic_int n;
  atomic_init(&n, 0);
  tfq_source_fn fn = vec_source;
  void *ctx = &n;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 8, &fn, &ctx, 1, NULL, c, &b, NULL));
  tfq_tuple *t;
  OK(tfq_batcher_next(b, &t, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 8);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 1), 2);
  cr_assert_eq(i32_at(t, 0, 15), 12);
  tfq_tuple_free(t);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

static int keep_even(void *ctx, const tfq_tuple *e, int64_t row) {
  return (((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(e, 0)))[row < 0 ? 0 : row] % 2) == 0;
}

/* [128] maybe_batch */
Test(batch, maybe_batch_keeps_only_the_accepted_examples) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 40, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_keep(o, keep_even, NULL);
  tfq_batcher *b = batcher(TFQ_BATCHER_BATCH, 5, &src, 1, o, c);
  for (int k = 0; k < 4; k++) {
    tfq_tuple *t;
    OK(tfq_batcher_next(b, &t, NULL));
    for (int i = 0; i < 5; i++) cr_assert_eq(i64_at(t, i) % 2, 0);
    tfq_tuple_free(t);
  }
  tfq_tuple *t;
  cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_coord_free(c);
}

static tfq_code many_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  counter *c = ctx;
  int64_t v = 0;
  tfq_code code = counter_take(c, &v, st);
  if (code) return code;
  int64_t n = 3;
  tfq_tensor *x = tensor(TFQ_INT64, 1, &n);
  for (int i = 0; i < 3; i++) ((int64_t *)tfq_tensor_data(x))[i] = 3 * v + i;
  *out = tup(1, x, NULL);
  return TFQ_OK;
}

Test(batch, enqueue_many_sources_with_a_per_example_keep_filter) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 10, NULL); /* 30 examples */
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_enqueue_many(o, 1);
  tfq_batch_options_set_keep(o, keep_even, NULL);
  tfq_spec *s = i64_spec();
  tfq_source_fn fn = many_source;
  void *ctx = &src;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 5, &fn, &ctx, 1, o, c, &b, NULL));
  for (int k = 0; k < 3; k++) {
    tfq_tuple *t;
    OK(tfq_batcher_next(b, &t, NULL));
    for (int i = 0; i < 5; i++) cr_assert_eq(i64_at(t, i), 10 * k + 2 * i);
    tfq_tuple_free(t);
  }
  tfq_tuple *t;
  cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

typedef struct {
  pthread_mutex_t mu;
  int next, limit, tag;
} tagged;

static tfq_code tagged_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  tagged *t = ctx;
  pthread_mutex_lock(&t->mu);
  int v = t->next < t->limit ? t->next++ : -1;
  pthread_mutex_unlock(&t->mu);
  if (v < 0) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "done");
  tfq_tensor *s = tensor(TFQ_STRING, 0, NULL);
  const char *tag = t->tag ? "b" : "a";
  OK(tfq_tensor_set_string(s, 0, tag, 1, NULL));
  *out = tup(2, i64_scalar(t->tag ? 99 : v), s);
  return TFQ_OK;
}

/* [130] */
Test(batch_join, two_sources_keep_their_own_order_and_close_after_both_end) {
  tfq_coord *c = coord();
  tfq_spec *s = spec2(TFQ_INT64, 0, NULL, TFQ_STRING, 0, NULL);
  tagged a = {PTHREAD_MUTEX_INITIALIZER, 0, 70, 0}, bb = {PTHREAD_MUTEX_INITIALIZER, 0, 90, 1};
  tfq_source_fn fns[2] = {tagged_source, tagged_source};
  void *ctxs[2] = {&a, &bb};
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH_JOIN, s, 5, fns, ctxs, 2, NULL, c, &b, NULL));
  int next_a = 0, nb = 0;
  for (int k = 0; k < 32; k++) {
    tfq_tuple *t;
    OK(tfq_batcher_next(b, &t, NULL));
    for (int i = 0; i < 5; i++) {
      size_t len;
      const char *tag = tfq_tensor_string(tfq_tuple_get(t, 1), i, &len);
      if (tag[0] == 'a') {
        cr_assert_eq(i64_at(t, i), next_a++, "source a keeps its order");
      } else {
        cr_assert_eq(i64_at(t, i), 99);
        nb++;
      }
    }
    tfq_tuple_free(t);
  }
  cr_assert_eq(next_a, 70);
  cr_assert_eq(nb, 90);
  tfq_tuple *t;
  cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_spec_free(s);
  tfq_coord_free(c);
}

/* [133] */
Test(shuffle_batch, one_thread_gives_the_whole_multiset_not_in_sorted_order) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 30, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_capacity(o, 32);
  tfq_batch_options_set_min_after_dequeue(o, 16);
  tfq_batch_options_set_seeds(o, 87654321, 141421);
  tfq_batcher *b = batcher(TFQ_BATCHER_SHUFFLE_BATCH, 10, &src, 1, o, c);
  cr_assert_str_eq(tfq_batcher_summary_name(b), "shuffle_batch/fraction_over_16_of_16_full");
  int seen[30] = {0}, sorted = 1;
  int64_t prev = -1;
  for (int k = 0; k < 3; k++) {
    tfq_tuple *t;
    OK(tfq_batcher_next(b, &t, NULL));
    for (int i = 0; i < 10; i++) {
      int64_t v = i64_at(t, i);
      seen[v]++;
      sorted &= v > prev;
      prev = v;
    }
    tfq_tuple_free(t);
  }
  for (int i = 0; i < 30; i++) cr_assert_eq(seen[i], 1);
  cr_assert_eq(sorted, 0);
  tfq_tuple *t;
  cr_assert_eq(tfq_batcher_next(b, &t, NULL), TFQ_OUT_OF_RANGE);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_coord_free(c);
}

Test(shuffle_batch, capacity_must_exceed_min_after_dequeue) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 30, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_capacity(o, 16);
  tfq_batch_options_set_min_after_dequeue(o, 16);
  tfq_spec *s = i64_spec();
  tfq_source_fn fn = counter_source;
  void *ctx = &src;
  tfq_batcher *b;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, s, 4, &fn, &ctx, 1, o, c, &b, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "capacity 16 must be bigger than min_after_dequeue 16.");
  tfq_status_free(st);
  tfq_spec_free(s);
  tfq_batch_options_free(o);
  tfq_coord_free(c);
}

Test(shuffle_batch, fraction_full_gauge_counts_only_above_min_after_dequeue) {
  tfq_coord *c = coord();
  counter src;
  counter_init(&src, 24, NULL);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_capacity(o, 32);
  tfq_batch_options_set_min_after_dequeue(o, 16);
  tfq_batcher *b = batcher(TFQ_BATCHER_SHUFFLE_BATCH, 4, &src, 1, o, c);
  for (int i = 0; i < 200 && tfq_queue_size(tfq_batcher_queue(b)) < 24; i++) sleep_ms(5);
  cr_assert_eq(tfq_queue_size(tfq_batcher_queue(b)), 24);
  cr_assert_float_eq(tfq_batcher_fraction_full(b), 8.0 / 16.0, 1e-9);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_coord_free(c);
}

static tfq_code str_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  atomic_int *n = ctx;
  int i = atomic_fetch_add(n, 1);
  if (i >= 4) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "done");
  int64_t len = i + 1;
  tfq_tensor *s = tensor(TFQ_STRING, 1, &len);
  for (int k = 0; k <= i; k++) OK(tfq_tensor_set_string(s, k, "x", 1, NULL));
  *out = tup(1, s, NULL);
  return TFQ_OK;
}

/* testOneThreadDynamicPad */
Test(batch, dynamic_pad_pads_strings_with_empty_strings) {
  tfq_coord *c = coord();
  int64_t unk[1] = {-1};
  tfq_spec *s = spec1(TFQ_STRING, 1, unk);
  tfq_batch_options *o;
  OK(tfq_batch_options_new(&o, NULL));
  tfq_batch_options_set_dynamic_pad(o, 1);
  atomic_int n;
  atomic_init(&n, 0);
  tfq_source_fn fn = str_source;
  void *ctx = &n;
  tfq_batcher *b;
  OK(tfq_batcher_new(TFQ_BATCHER_BATCH, s, 4, &fn, &ctx, 1, o, c, &b, NULL));
  tfq_tuple *t;
  OK(tfq_batcher_next(b, &t, NULL));
  tfq_tensor *x = tfq_tuple_get(t, 0);
  cr_assert_eq(tfq_tensor_dim(x, 1), 4);
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < 4; k++) {
      size_t len;
      tfq_tensor_string(x, r * 4 + k, &len);
      cr_assert_eq(len, k <= r ? 1u : 0u);
    }
  tfq_tuple_free(t);
  OK(tfq_coord_request_stop(c, TFQ_OK, NULL));
  OK(tfq_coord_join(c, 1000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(o);
  tfq_spec_free(s);
  tfq_coord_free(c);
}
