/* Part of test_queues (see queues_util.h): RandomShuffleQueue: min_after_dequeue, seeds, shuffle
 * quality (chi-square) and TF-exact order against sequences recorded from the tensorflow-cpu 2.21
 * wheel. */
#include <math.h>

#include "queues_util.h"

static tfq_queue *rsq_f(int64_t cap, int64_t mad, int64_t seed, int64_t seed2) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, cap, mad, seed, seed2, 0);
  tfq_spec_free(s);
  return q;
}

static void sort_floats(float *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      float t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

/* [55] */
Test(random_shuffle_queue, min_after_dequeue_does_not_block_enqueue) {
  tfq_queue *q = rsq_f(10, 5, 1, 2);
  cr_assert_eq(tfq_queue_size(q), 0);
  OK(enq_f(q, 1, NULL));
  cr_assert_eq(tfq_queue_size(q), 1);
  cr_assert_str_eq(tfq_queue_kind_name(tfq_queue_get_kind(q)), "RandomShuffleQueue");
  tfq_queue_free(q);
}

/* [56] */
Test(random_shuffle_queue, scalar_and_vector_components_stay_paired) {
  int64_t one[1] = {1};
  tfq_spec *s = spec2(TFQ_INT32, 0, NULL, TFQ_INT32, 1, one);
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, 10, 0, 7, 8, 0);
  int32_t a[4] = {1, 2, 3, 4};
  int64_t d2[2] = {4, 1};
  tfq_tensor *b = tensor(TFQ_INT32, 2, d2);
  for (int i = 0; i < 4; i++) ((int32_t *)tfq_tensor_data(b))[i] = 10 * a[i];
  tfq_tuple *t = tup(2, i32_vec(4, a), b);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  int32_t five = 50;
  t = tup(2, i32_scalar(5), i32_vec(1, &five));
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  int seen[6] = {0};
  for (int i = 0; i < 2; i++) {
    OK(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(i32_at(t, 1, 0), 10 * i32_at(t, 0, 0));
    seen[i32_at(t, 0, 0)]++;
    tfq_tuple_free(t);
  }
  OK(tfq_queue_dequeue_many(q, 3, &t, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 1), 1), 1);
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(i32_at(t, 1, i), 10 * i32_at(t, 0, i));
    seen[i32_at(t, 0, i)]++;
  }
  tfq_tuple_free(t);
  for (int i = 1; i <= 5; i++) cr_assert_eq(seen[i], 1);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [57] */
Test(random_shuffle_queue, closed_queue_drains_below_min_after_dequeue_then_out_of_range) {
  tfq_queue *q = rsq_f(10, 2, 3, 4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  float got[4];
  for (int i = 0; i < 4; i++) got[i] = deq_f(q);
  sort_floats(got, 4);
  for (int i = 0; i < 4; i++) cr_assert_eq(got[i], v[i]);
  tfq_tuple *t;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(contains(tfq_status_message(st), "RandomShuffleQueue '"));
  cr_assert(contains(tfq_status_message(st), "is closed and has insufficient"));
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* [58] */
Test(random_shuffle_queue, dequeue_blocks_at_min_after_dequeue_until_close) {
  tfq_queue *q = rsq_f(10, 2, 3, 4);
  float v[4] = {10, 20, 30, 40};
  OK(enq_many_f(q, 4, v, NULL));
  deq_f(q);
  deq_f(q);
  bg b = {0};
  bg_start(&b, q, BG_DEQ);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  tfq_tuple_free(b.out);
  deq_f(q);
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue(q, &t, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
}

/* [61] and testBlockingDequeueUpToSmallerThanMinAfterDequeue */
Test(random_shuffle_queue, dequeue_up_to_returns_the_remainder_after_close) {
  for (int mad = 0; mad <= 2; mad += 2) {
    tfq_queue *q = rsq_f(10, mad, 5, 6);
    float v[4] = {1, 2, 3, 4};
    OK(enq_many_f(q, 4, v, NULL));
    tfq_tuple *t;
    if (mad == 0) {
      OK(tfq_queue_dequeue_up_to(q, 3, &t, NULL, NOTIMEOUT, NULL));
      cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 3);
      tfq_tuple_free(t);
      OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
    } else {
      bg b = {.n = 3};
      bg_start(&b, q, BG_DEQ_UP_TO);
      bg_assert_blocked(&b); /* took 2, needs 1 more, min_after_dequeue holds the rest */
      OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
      bg_join(&b);
      cr_assert_eq(b.code, TFQ_OK);
      cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b.out, 0), 0), 3);
      tfq_tuple_free(b.out);
    }
    OK(tfq_queue_dequeue_up_to(q, 3, &t, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(t, 0), 0), 1);
    tfq_tuple_free(t);
    tfq_queue_free(q);
  }
}

/* [62] */
Test(random_shuffle_queue, dequeue_many_without_shapes_is_invalid_argument) {
  tfq_spec *s = spec1(TFQ_FLOAT, TFQ_UNKNOWN_RANK, NULL);
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, 10, 0, 1, 1, 0);
  OK(enq_f(q, 1, NULL));
  tfq_status *st = tfq_status_new();
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue_many(q, 0, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "RandomShuffleQueue's DequeueMany and DequeueUpTo require the components to "
                   "have specified shapes.");
  cr_assert_eq(tfq_queue_dequeue_up_to(q, 0, &t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* [63] */
Test(random_shuffle_queue, element_blocked_on_a_full_queue_is_never_dequeued_first) {
  for (int seed = 1; seed <= 20; seed++) {
    tfq_queue *q = rsq_f(4, 0, seed, 99);
    float v[4] = {10, 20, 30, 40};
    OK(enq_many_f(q, 4, v, NULL));
    bg b = {.vals = {50}};
    bg_start(&b, q, BG_ENQ);
    bg_assert_blocked(&b);
    float got[5];
    got[0] = deq_f(q);
    bg_join(&b);
    for (int i = 1; i < 5; i++) got[i] = deq_f(q);
    cr_assert_neq(got[0], 50);
    sort_floats(got, 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(got[i], 10 * (i + 1));
    tfq_queue_free(q);
  }
}

/* [64] */
Test(random_shuffle_queue, enqueue_many_blocked_on_a_full_queue_keeps_its_tail_out) {
  for (int seed = 1; seed <= 20; seed++) {
    tfq_queue *q = rsq_f(4, 0, seed, 7);
    float v[4] = {10, 20, 30, 40};
    OK(enq_many_f(q, 4, v, NULL));
    bg b = {.n = 2, .vals = {50, 60}};
    bg_start(&b, q, BG_ENQ_MANY);
    bg_assert_blocked(&b);
    float first = deq_f(q);
    cr_assert(first != 50 && first != 60);
    sleep_ms(20); /* 50 goes in */
    float second = deq_f(q);
    cr_assert_neq(second, 60);
    bg_join(&b);
    for (int i = 0; i < 4; i++) deq_f(q);
    tfq_queue_free(q);
  }
}

static void order_of(int64_t seed2, int mode, float out[10]) {
  tfq_queue *q = rsq_f(10, 5, 87654321, seed2);
  float v[5] = {1, 2, 3, 4, 5};
  OK(enq_many_f(q, 5, v, NULL));
  OK(enq_many_f(q, 5, v, NULL));
  for (int half = 0; half < 2; half++) {
    if (half == 1) OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
    if (mode == 0) {
      for (int i = 0; i < 5; i++) out[half * 5 + i] = deq_f(q);
    } else {
      tfq_tuple *t;
      OK(mode == 1 ? tfq_queue_dequeue_many(q, 5, &t, NULL, NOTIMEOUT, NULL)
                   : tfq_queue_dequeue_up_to(q, 5, &t, NULL, NOTIMEOUT, NULL));
      for (int i = 0; i < 5; i++) out[half * 5 + i] = f32_at(t, 0, i);
      tfq_tuple_free(t);
    }
  }
  tfq_queue_free(q);
}

/* [70] testDequeueInDifferentOrders / Many / UpTo */
Test(random_shuffle_queue, different_seeds_give_pairwise_different_orders) {
  for (int mode = 0; mode < 3; mode++) {
    float a[10], b[10];
    order_of(1729, mode, a);
    order_of(87539319, mode, b);
    const float *seqs[4] = {a, a + 5, b, b + 5};
    for (int i = 0; i < 4; i++)
      for (int j = i + 1; j < 4; j++)
        cr_assert_neq(memcmp(seqs[i], seqs[j], 5 * sizeof(float)), 0, "mode %d: %d vs %d", mode, i,
                      j);
  }
}

Test(random_shuffle_queue, same_seeds_give_the_same_order) {
  float a[10], b[10];
  order_of(4242, 0, a);
  order_of(4242, 0, b);
  cr_assert_eq(memcmp(a, b, sizeof a), 0);
}

/* [71] */
Test(random_shuffle_queue, parallel_dequeue_up_to_of_a_random_partition_delivers_everything) {
  srand(71);
  int64_t sizes[10], total = 0;
  for (int i = 0; i < 10; i++) total += sizes[i] = 1 + rand() % 20;
  tfq_queue *q = rsq_f(total, 0, 11, 12);
  float *v = malloc((size_t)total * sizeof(float));
  for (int64_t i = 0; i < total; i++) v[i] = (float)i;
  OK(enq_many_f(q, total, v, NULL));
  bg a[10] = {{0}};
  for (int i = 0; i < 10; i++) {
    a[i].n = sizes[i];
    bg_start(&a[i], q, BG_DEQ_UP_TO);
  }
  int *seen = calloc((size_t)total, sizeof(int));
  for (int i = 0; i < 10; i++) {
    bg_join(&a[i]);
    cr_assert_not_null(a[i].out);
    cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(a[i].out, 0), 0), sizes[i]);
    for (int64_t k = 0; k < sizes[i]; k++) seen[(int)f32_at(a[i].out, 0, k)]++;
    tfq_tuple_free(a[i].out);
  }
  for (int64_t i = 0; i < total; i++) cr_assert_eq(seen[i], 1);
  free(seen);
  free(v);
  tfq_queue_free(q);
}

/* [72] */
Test(random_shuffle_queue, big_dequeue_many_larger_than_capacity_completes) {
  tfq_queue *q = rsq_f(2, 0, 1, 2);
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  for (int i = 0; i < 4; i++) OK(enq_f(q, (float)i, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OK);
  float got[4];
  for (int i = 0; i < 4; i++) got[i] = f32_at(b.out, 0, i);
  sort_floats(got, 4);
  for (int i = 0; i < 4; i++) cr_assert_eq(got[i], i);
  tfq_tuple_free(b.out);
  tfq_queue_free(q);
}

/* [73] */
Test(random_shuffle_queue, big_enqueue_many_blocks_at_capacity_until_dequeues) {
  tfq_queue *q = rsq_f(5, 0, 1, 2);
  bg b = {.n = 10, .vals = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  bg_start(&b, q, BG_ENQ_MANY);
  bg_assert_blocked(&b);
  cr_assert_eq(tfq_queue_size(q), 5);
  float got[10];
  for (int i = 0; i < 10; i++) got[i] = deq_f(q);
  bg_join(&b);
  sort_floats(got, 10);
  for (int i = 0; i < 10; i++) cr_assert_eq(got[i], i);
  tfq_queue_free(q);
}

Test(random_shuffle_queue, bad_min_after_dequeue_uses_tf_messages) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  tfq_queue_options_set_capacity(o, 10);
  tfq_queue_options_set_min_after_dequeue(o, -1);
  cr_assert_eq(tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, s, o, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "min_after_dequeue -1 must be >= 0");
  tfq_queue_options_set_min_after_dequeue(o, 10);
  cr_assert_eq(tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, s, o, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "min_after_dequeue 10 must be < capacity 10");
  tfq_status_free(st);
  tfq_queue_options_free(o);
  tfq_spec_free(s);
}

Test(random_shuffle_queue, closed_short_dequeue_many_restores_its_partial_batch) {
  tfq_queue *q = rsq_f(10, 0, 1, 2);
  float v[3] = {1, 2, 3};
  OK(enq_many_f(q, 3, v, NULL));
  bg b = {.n = 4};
  bg_start(&b, q, BG_DEQ_MANY);
  bg_assert_blocked(&b);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  bg_join(&b);
  cr_assert_eq(b.code, TFQ_OUT_OF_RANGE);
  cr_assert(contains(b.msg, "(requested 1, current size 0)"), "%s", b.msg);
  cr_assert_eq(tfq_queue_size(q), 3);
  tfq_queue_free(q);
}

Test(random_shuffle_queue, timed_out_dequeue_many_puts_its_elements_back) {
  tfq_queue *q = rsq_f(10, 0, 1, 2);
  float v[3] = {1, 2, 3};
  OK(enq_many_f(q, 3, v, NULL));
  tfq_tuple *t;
  cr_assert_eq(tfq_queue_dequeue_many(q, 4, &t, NULL, 20000, NULL), TFQ_DEADLINE_EXCEEDED);
  cr_assert_eq(tfq_queue_size(q), 3);
  tfq_queue_free(q);
}

/* Issue acceptance 2: position-by-value table of 100,000 seeded shuffles of 10 elements. */
Test(random_shuffle_queue, shuffle_is_uniform_by_chi_square_over_100000_trials) {
  static long table[10][10];
  memset(table, 0, sizeof table);
  tfq_spec *s = spec1(TFQ_INT32, 0, NULL);
  int32_t v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  tfq_tuple *in = tup(1, i32_vec(10, v), NULL);
  const int trials = 100000;
  for (int t = 0; t < trials; t++) {
    tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, 10, 0, 1000003 + t, t, 0);
    OK(tfq_queue_enqueue_many(q, in, NULL, NOTIMEOUT, NULL));
    OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
    for (int pos = 0; pos < 10; pos++) {
      tfq_tuple *o;
      OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
      table[pos][i32_at(o, 0, 0)]++;
      tfq_tuple_free(o);
    }
    tfq_queue_free(q);
  }
  double expect = trials / 10.0, chi2 = 0;
  for (int p = 0; p < 10; p++)
    for (int x = 0; x < 10; x++) chi2 += pow((double)table[p][x] - expect, 2) / expect;
  /* 81 degrees of freedom (9 x 9); the p = 0.001 critical value is 126.1 (Wilson-Hilferty). */
  cr_log_info("chi-square = %.2f (df 81, p=0.001 critical 126.1)", chi2);
  cr_assert_lt(chi2, 126.1, "chi-square %.2f", chi2);
  tfq_tuple_free(in);
  tfq_spec_free(s);
}

/* TF-exact order: sequences recorded by running the tensorflow-cpu 2.21 wheel (raw ops
 * RandomShuffleQueueV2 with these seed/seed2, QueueEnqueueManyV2 of range(n), then the script). */
static void exact_script(int64_t seed, int64_t seed2, int64_t cap, int64_t mad, int n,
                         const char *const *script, const int *want, int nwant) {
  tfq_spec *s = spec1(TFQ_INT32, 0, NULL);
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, cap, mad, seed, seed2, 1);
  int32_t *v = malloc((size_t)n * sizeof(int32_t));
  for (int i = 0; i < n; i++) v[i] = i;
  tfq_tuple *in = tup(1, i32_vec(n, v), NULL);
  OK(tfq_queue_enqueue_many(q, in, NULL, NOTIMEOUT, NULL));
  int got = 0;
  for (const char *const *op = script; *op; op++) {
    tfq_tuple *o;
    if (strcmp(*op, "close") == 0) {
      OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
      continue;
    }
    int k = atoi(*op + 1);
    if ((*op)[0] == 'd')
      OK(tfq_queue_dequeue(q, &o, NULL, NOTIMEOUT, NULL));
    else if ((*op)[0] == 'm')
      OK(tfq_queue_dequeue_many(q, k, &o, NULL, NOTIMEOUT, NULL));
    else
      OK(tfq_queue_dequeue_up_to(q, k, &o, NULL, NOTIMEOUT, NULL));
    int64_t rows = tfq_tensor_num_elements(tfq_tuple_get(o, 0));
    for (int64_t r = 0; r < rows; r++, got++) {
      cr_assert_lt(got, nwant);
      cr_assert_eq(i32_at(o, 0, r), want[got], "element %d", got);
    }
    tfq_tuple_free(o);
  }
  cr_assert_eq(got, nwant);
  tfq_tuple_free(in);
  free(v);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(random_shuffle_queue, tf_exact_order_matches_tensorflow_for_single_dequeues) {
  const char *script[] = {"d", "d", "d", "d", "d", "d", "d", "d", "d", "d", NULL};
  const int want[] = {1, 3, 6, 7, 9, 0, 8, 4, 2, 5};
  exact_script(87654321, 1729, 10, 0, 10, script, want, 10);
}

Test(random_shuffle_queue, tf_exact_order_matches_tensorflow_with_min_after_dequeue_and_close) {
  const char *script[] = {"m5", "m5", "close", "u20", NULL};
  const int want[] = {19, 7, 6, 1, 3, 16, 14, 11, 5, 13, 4, 2, 8, 18, 9, 15, 0, 17, 10, 12};
  exact_script(1, 2, 20, 5, 20, script, want, 20);
}

Test(random_shuffle_queue, tf_exact_order_matches_tensorflow_for_a_mixed_script) {
  const char *script[] = {"m7", "d", "d", "u30", "close", "u100", NULL};
  const int want[] = {45, 27, 55, 63, 73, 42, 77, 90, 49, 7,  31, 51, 6,  52, 25, 16, 24,
                      53, 23, 26, 44, 21, 48, 95, 37, 81, 92, 60, 40, 29, 35, 39, 59, 96,
                      10, 33, 50, 30, 85, 12, 71, 89, 99, 93, 38, 87, 36, 83, 86, 56, 78,
                      3,  98, 74, 68, 62, 15, 58, 84, 34, 14, 32, 18, 17, 1,  28, 72, 64,
                      97, 76, 70, 0,  46, 65, 11, 43, 82, 80, 13, 61, 57, 5,  19, 88, 66,
                      75, 54, 9,  41, 79, 20, 67, 8,  22, 4,  69, 47, 2,  91, 94};
  exact_script(12345, 0, 100, 0, 100, script, want, 100);
}
