/* RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue and the shared-name registry: the cases of
 * spec tf1-queues §9 (numbers in brackets) plus §2–§5 rules, shuffle quality, and TF-exact order
 * against sequences recorded from the tensorflow-cpu 2.21 wheel. */
#include <math.h>
#include <stdlib.h>

#include "helpers.h"

static tfq_queue *make(tfq_queue_kind kind, tfq_spec *s, int64_t cap, int64_t mad, int64_t seed,
                       int64_t seed2, int exact) {
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_queue_options_set_capacity(o, cap);
  tfq_queue_options_set_min_after_dequeue(o, mad);
  tfq_queue_options_set_seeds(o, seed, seed2);
  tfq_queue_options_set_tf_exact_order(o, exact);
  tfq_queue *q;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_new(kind, s, o, &q, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_queue_options_free(o);
  return q;
}

static tfq_queue *rsq_f(int64_t cap, int64_t mad, int64_t seed, int64_t seed2) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, cap, mad, seed, seed2, 0);
  tfq_spec_free(s);
  return q;
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void sort_floats(float *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      float t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

/* ==== RandomShuffleQueue ==== */

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
  tfq_spec *s;
  int64_t one[1] = {1};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, one, 1, NULL, NULL));
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

typedef struct {
  tfq_queue *q;
  int64_t n;
  tfq_tuple *out;
} upto_arg;
static void *upto_main(void *p) {
  upto_arg *a = p;
  if (tfq_queue_dequeue_up_to(a->q, a->n, &a->out, NULL, NOTIMEOUT, NULL)) a->out = NULL;
  return NULL;
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
  pthread_t th[10];
  upto_arg a[10];
  for (int i = 0; i < 10; i++) {
    a[i] = (upto_arg){q, sizes[i], NULL};
    pthread_create(&th[i], NULL, upto_main, &a[i]);
  }
  int *seen = calloc((size_t)total, sizeof(int));
  for (int i = 0; i < 10; i++) {
    pthread_join(th[i], NULL);
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

/* ==== PaddingFIFOQueue ==== */

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
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_STRING, sdim, 1, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, idim, 2, NULL, NULL));
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
  tfq_spec *s;
  int64_t a[2] = {2, 2}, b[2] = {-1, 3};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, a, 2, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, b, 2, NULL, NULL));
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
  tfq_spec *s;
  int64_t unk[1] = {-1};
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_FLOAT, NULL, 0, NULL, NULL));
  OK(tfq_spec_add(s, TFQ_INT32, unk, 1, NULL, NULL));
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

/* ==== PriorityQueue ==== */

static tfq_queue *prioq(int64_t cap, int shaped) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_STRING, NULL, shaped ? 0 : TFQ_UNKNOWN_RANK, NULL, NULL));
  tfq_queue *q = make(TFQ_QUEUE_PRIORITY, s, cap, 0, 0, 0, 0);
  tfq_spec_free(s);
  return q;
}

static tfq_tensor *i64_scalar(int64_t v) {
  tfq_tensor *t = tensor(TFQ_INT64, 0, NULL);
  *(int64_t *)tfq_tensor_data(t) = v;
  return t;
}

static tfq_tensor *str_scalar(const char *s) {
  tfq_tensor *t = tensor(TFQ_STRING, 0, NULL);
  OK(tfq_tensor_set_string(t, 0, s, strlen(s), NULL));
  return t;
}

static void check_sorted_pairs(tfq_tuple *o, int64_t n) {
  const int64_t *p = tfq_tensor_cdata(tfq_tuple_get(o, 0));
  for (int64_t i = 0; i < n; i++) {
    if (i) cr_assert_leq(p[i - 1], p[i], "row %lld", (long long)i);
    size_t len;
    const char *sv = tfq_tensor_string(tfq_tuple_get(o, 1), i, &len);
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)p[i]);
    cr_assert(len == strlen(buf) && memcmp(sv, buf, len) == 0, "side value belongs to priority");
  }
}

/* [83] */
Test(priority_queue, round_trip_of_random_priorities_reads_out_sorted) {
  tfq_queue *q = prioq(100, 1);
  cr_assert_eq(tfq_spec_size(tfq_queue_spec(q)), 2, "int64 priority prepended");
  cr_assert_eq(tfq_spec_dtype(tfq_queue_spec(q), 0), TFQ_INT64);
  srand(83);
  int hist[10] = {0};
  for (int i = 0; i < 100; i++) {
    int64_t pr = rand() % 10 - 5;
    hist[pr + 5]++;
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)pr);
    tfq_tuple *t = tup(2, i64_scalar(pr), str_scalar(buf));
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 100, &o, NULL, NOTIMEOUT, NULL));
  check_sorted_pairs(o, 100);
  const int64_t *p = tfq_tensor_cdata(tfq_tuple_get(o, 0));
  for (int i = 0; i < 100; i++) hist[p[i] + 5]--;
  for (int i = 0; i < 10; i++) cr_assert_eq(hist[i], 0, "none missing");
  tfq_tuple_free(o);
  tfq_queue_free(q);
}

/* [85] */
Test(priority_queue, enqueue_many_once_then_dequeue_many_repeatedly_is_ascending) {
  tfq_queue *q = prioq(1000, 1);
  int64_t n = 1000;
  tfq_tensor *pr = tensor(TFQ_INT64, 1, &n), *sv = tensor(TFQ_STRING, 1, &n);
  srand(85);
  for (int i = 0; i < 1000; i++) {
    int64_t v = rand() % 2000 - 1000;
    ((int64_t *)tfq_tensor_data(pr))[i] = v;
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    OK(tfq_tensor_set_string(sv, i, buf, strlen(buf), NULL));
  }
  tfq_tuple *t = tup(2, pr, sv);
  OK(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(t);
  int64_t last = INT64_MIN;
  for (int k = 0; k < 10; k++) {
    tfq_tuple *o;
    OK(tfq_queue_dequeue_many(q, 100, &o, NULL, NOTIMEOUT, NULL));
    check_sorted_pairs(o, 100);
    const int64_t *p = tfq_tensor_cdata(tfq_tuple_get(o, 0));
    cr_assert_geq(p[0], last);
    last = p[99];
    tfq_tuple_free(o);
  }
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *q;
  int64_t base, count;
  int many;
  int bad;
} pq_arg;

static void *pq_enq(void *p) {
  pq_arg *a = p;
  if (a->many) {
    int64_t n = a->count;
    tfq_tensor *pr = tensor(TFQ_INT64, 1, &n), *sv = tensor(TFQ_STRING, 1, &n);
    for (int64_t i = 0; i < n; i++) {
      int64_t v = a->base + i;
      ((int64_t *)tfq_tensor_data(pr))[i] = v;
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)v);
      a->bad |= tfq_tensor_set_string(sv, i, buf, strlen(buf), NULL) != TFQ_OK;
    }
    tfq_tuple *t = tup(2, pr, sv);
    a->bad |= tfq_queue_enqueue_many(a->q, t, NULL, NOTIMEOUT, NULL) != TFQ_OK;
    tfq_tuple_free(t);
  } else {
    for (int64_t i = 0; i < a->count; i++) {
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)(a->base + i));
      tfq_tuple *t = tup(2, i64_scalar(a->base + i), str_scalar(buf));
      a->bad |= tfq_queue_enqueue(a->q, t, NULL, NOTIMEOUT, NULL) != TFQ_OK;
      tfq_tuple_free(t);
    }
  }
  return NULL;
}

/* [86] */
Test(priority_queue, concurrent_enqueues_then_one_dequeue_many_is_fully_sorted) {
  tfq_queue *q = prioq(100, 1);
  pthread_t th[10];
  pq_arg a[10];
  for (int i = 0; i < 10; i++) {
    a[i] = (pq_arg){q, (9 - i) * 10, 10, 0, 0};
    pthread_create(&th[i], NULL, pq_enq, &a[i]);
  }
  for (int i = 0; i < 10; i++) pthread_join(th[i], NULL);
  tfq_tuple *o;
  OK(tfq_queue_dequeue_many(q, 100, &o, NULL, NOTIMEOUT, NULL));
  check_sorted_pairs(o, 100);
  const int64_t *p = tfq_tensor_cdata(tfq_tuple_get(o, 0));
  for (int i = 0; i < 100; i++) cr_assert_eq(p[i], i);
  tfq_tuple_free(o);
  tfq_queue_free(q);
}

typedef struct {
  tfq_queue *q;
  int64_t n;
  tfq_tuple *out;
} pq_deq_arg;
static void *pq_deq(void *p) {
  pq_deq_arg *a = p;
  if (tfq_queue_dequeue_many(a->q, a->n, &a->out, NULL, NOTIMEOUT, NULL)) a->out = NULL;
  return NULL;
}

/* [87] */
Test(priority_queue, filling_capacity_with_many_threads_delivers_every_value) {
  tfq_queue *q = prioq(10, 1);
  srand(87);
  pthread_t te[40], td[40];
  pq_arg ea[40];
  pq_deq_arg da[40];
  int64_t base = 0;
  for (int i = 0; i < 40; i++) {
    int64_t c = 1 + rand() % 9;
    ea[i] = (pq_arg){q, base, c, 1, 0};
    da[i] = (pq_deq_arg){q, c, NULL};
    base += c;
  }
  for (int i = 0; i < 40; i++) {
    pthread_create(&te[i], NULL, pq_enq, &ea[i]);
    pthread_create(&td[i], NULL, pq_deq, &da[i]);
  }
  char *seen = calloc((size_t)base, 1);
  for (int i = 0; i < 40; i++) {
    pthread_join(te[i], NULL);
    pthread_join(td[i], NULL);
    cr_assert_eq(ea[i].bad, 0);
    cr_assert_not_null(da[i].out);
    check_sorted_pairs(da[i].out, da[i].n);
    const int64_t *p = tfq_tensor_cdata(tfq_tuple_get(da[i].out, 0));
    for (int64_t k = 0; k < da[i].n; k++) seen[p[k]]++;
    tfq_tuple_free(da[i].out);
  }
  for (int64_t i = 0; i < base; i++) cr_assert_eq(seen[i], 1, "value %lld", (long long)i);
  free(seen);
  tfq_queue_free(q);
}

/* [88] and testInsertingNonScalarFails */
Test(priority_queue, priority_must_be_an_int64_scalar) {
  tfq_status *st = tfq_status_new();
  tfq_queue *q = prioq(10, 1);
  tfq_tuple *t = tup(2, str_scalar("x"), str_scalar("y"));
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Type mismatch in tuple component 0. Expected int64, got string");
  tfq_tuple_free(t);
  int64_t two[1] = {2}, twotwo[2] = {2, 2};
  t = tup(2, tensor(TFQ_INT64, 1, two), str_scalar("y"));
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 0. Expected [], got [2]");
  tfq_tuple_free(t);
  t = tup(2, tensor(TFQ_INT64, 2, twotwo), tensor(TFQ_STRING, 1, two));
  cr_assert_eq(tfq_queue_enqueue_many(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shape mismatch in tuple component 0. Expected [2], got [2,2]");
  tfq_tuple_free(t);
  tfq_queue_free(q);
  q = prioq(10, 0); /* no shapes declared */
  t = tup(2, tensor(TFQ_INT64, 1, two), str_scalar("y"));
  cr_assert_eq(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Expected the priority element to be a scalar, but received shape: [2]");
  tfq_tuple_free(t);
  tfq_tuple *o;
  cr_assert_eq(tfq_queue_dequeue_many(q, 1, &o, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "PriorityQueue's DequeueMany requires the components to have specified shapes.");
  tfq_queue_free(q);
  tfq_status_free(st);
}

/* S5, first half: dequeue_many is not incremental, so n > capacity waits until close. */
Test(priority_queue, dequeue_many_larger_than_capacity_waits_until_close) {
  tfq_queue *q = prioq(2, 1);
  for (int i = 0; i < 2; i++) {
    tfq_tuple *t = tup(2, i64_scalar(i), str_scalar("0"));
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  tfq_tuple *o;
  cr_assert_eq(tfq_queue_dequeue_many(q, 3, &o, NULL, 50000, NULL), TFQ_DEADLINE_EXCEEDED);
  cr_assert_eq(tfq_queue_size(q), 2, "nothing taken while waiting");
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue_many(q, 3, &o, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert(contains(tfq_status_message(st), "(requested 3, current size 2)"), "%s",
            tfq_status_message(st));
  tfq_status_free(st);
  tfq_queue_free(q);
}

/* S5, second half: TF loses these elements; tfq returns them as a short batch (README). */
Test(priority_queue, dequeue_up_to_on_closed_queue_returns_a_short_sorted_batch) {
  tfq_queue *q = prioq(10, 1);
  int64_t pr[3] = {5, -2, 3};
  for (int i = 0; i < 3; i++) {
    char buf[8];
    snprintf(buf, sizeof buf, "%lld", (long long)pr[i]);
    tfq_tuple *t = tup(2, i64_scalar(pr[i]), str_scalar(buf));
    OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(t);
  }
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  tfq_tuple *o;
  OK(tfq_queue_dequeue_up_to(q, 5, &o, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(o, 0), 0), 3);
  check_sorted_pairs(o, 3);
  tfq_tuple_free(o);
  cr_assert_eq(tfq_queue_dequeue_up_to(q, 5, &o, NULL, NOTIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  tfq_queue_free(q);
}

/* ==== shared names (§5) ==== */

static tfq_code open_named(tfq_registry *r, tfq_queue_kind kind, tfq_dtype dt, int rank,
                           const int64_t *dims, int64_t cap, int64_t mad, int64_t seed,
                           int64_t seed2, const char *name, tfq_queue **q, tfq_status *st) {
  tfq_spec *s = spec1(dt, rank, dims);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  tfq_queue_options_set_capacity(o, cap);
  tfq_queue_options_set_min_after_dequeue(o, mad);
  tfq_queue_options_set_seeds(o, seed, seed2);
  OK(tfq_queue_options_set_shared_name(o, name, NULL));
  tfq_code c = tfq_queue_open(r, kind, s, o, q, st);
  tfq_queue_options_free(o);
  tfq_spec_free(s);
  return c;
}

/* [47] */
Test(shared_name, two_opens_of_one_name_share_contents_both_ways) {
  tfq_registry *r;
  OK(tfq_registry_new(&r, NULL));
  tfq_queue *a, *b;
  OK(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, 0, NULL, 1, 0, 0, 0, "shared_queue", &a, NULL));
  OK(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, 0, NULL, 1, 0, 0, 0, "shared_queue", &b, NULL));
  cr_assert_eq(a, b);
  cr_assert_str_eq(tfq_queue_name(a), "shared_queue");
  OK(enq_f(a, 10, NULL));
  cr_assert_eq(tfq_queue_size(b), 1);
  cr_assert_eq(deq_f(b), 10);
  OK(enq_f(b, 20, NULL));
  cr_assert_eq(deq_f(a), 20);
  cr_assert_eq(tfq_registry_size(r), 1);
  tfq_queue_free(a);
  tfq_queue_free(b);
  tfq_registry_free(r);
}

/* [67] testIncompatibleSharedQueueErrors (FIFO and RSQ) */
Test(shared_name, incompatible_second_open_fails_with_tf_messages) {
  tfq_registry *r;
  OK(tfq_registry_new(&r, NULL));
  tfq_status *st = tfq_status_new();
  tfq_queue *q, *x = NULL;
  int64_t shp[4] = {1, 1, 2, 3};
  OK(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, 0, NULL, 10, 0, 0, 0, "q_a", &q, NULL));
  cr_assert_eq(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, 0, NULL, 15, 0, 0, 0, "q_a", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'q_a' has capacity 10 but requested capacity was 15");
  cr_assert_null(x);
  cr_assert_eq(open_named(r, TFQ_QUEUE_FIFO, TFQ_INT32, 0, NULL, 10, 0, 0, 0, "q_a", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'q_a' has component types float but requested component types "
                   "were int32");
  tfq_queue_free(q);
  OK(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, TFQ_UNKNOWN_RANK, NULL, 10, 0, 0, 0, "q_c", &q,
                NULL));
  cr_assert_eq(open_named(r, TFQ_QUEUE_FIFO, TFQ_FLOAT, 4, shp, 10, 0, 0, 0, "q_c", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'q_c' has component shapes [] but requested component shapes "
                   "were [[1,1,2,3]]");
  cr_assert_eq(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, TFQ_UNKNOWN_RANK, NULL, 10, 0, 0,
                          0, "q_c", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Expected FIFOQueue, found RandomShuffleQueueV2");
  tfq_queue_free(q);
  OK(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, 0, NULL, 10, 0, 87654321, 12, "q_b", &q,
                NULL));
  cr_assert_eq(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, 0, NULL, 10, 5, 87654321, 12,
                          "q_b", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'q_b' has min_after_dequeue 0 but requested min_after_dequeue "
                   "was 5.");
  cr_assert_eq(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, 0, NULL, 10, 0, 87654321, 21,
                          "q_b", &x, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert(contains(tfq_status_message(st), "random seeds"));
  cr_assert_str_eq(tfq_status_message(st),
                   "Shared queue 'q_b' has random seeds (87654321, 12) but requested seeds are "
                   "(87654321, 21).");
  /* [69]: a declaration without seeds is accepted and shares contents */
  OK(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, 0, NULL, 10, 0, 0, 0, "q_b", &x, st));
  /* [68] (C equivalent): the same explicit seeds are accepted */
  tfq_queue *y;
  OK(open_named(r, TFQ_QUEUE_RANDOM_SHUFFLE, TFQ_FLOAT, 0, NULL, 10, 0, 87654321, 12, "q_b", &y,
                st));
  OK(enq_f(x, 5, NULL));
  cr_assert_eq(tfq_queue_size(y), 1);
  tfq_queue_free(x);
  tfq_queue_free(y);
  tfq_queue_free(q);
  tfq_status_free(st);
  tfq_registry_free(r);
}

Test(shared_name, padding_queue_shapes_are_compared_for_compatibility) {
  tfq_registry *r;
  OK(tfq_registry_new(&r, NULL));
  int64_t unk[1] = {-1}, five[1] = {5};
  tfq_queue *a, *b;
  OK(open_named(r, TFQ_QUEUE_PADDING_FIFO, TFQ_INT32, 1, unk, 10, 0, 0, 0, "p", &a, NULL));
  OK(open_named(r, TFQ_QUEUE_PADDING_FIFO, TFQ_INT32, 1, five, 10, 0, 0, 0, "p", &b, NULL));
  cr_assert_eq(a, b);
  tfq_queue_free(a);
  tfq_queue_free(b);
  tfq_registry_free(r);
}

Test(shared_name, names_starting_with_underscore_and_bad_containers_are_rejected) {
  tfq_status *st = tfq_status_new();
  tfq_queue *q;
  cr_assert_eq(open_named(NULL, TFQ_QUEUE_FIFO, TFQ_FLOAT, 0, NULL, 1, 0, 0, 0, "_x", &q, st),
               TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "shared_name cannot start with '_':_x");
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  OK(tfq_queue_options_set_shared_name(o, "ok", NULL));
  OK(tfq_queue_options_set_container(o, "a*b", NULL));
  cr_assert_eq(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, o, &q, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "container contains invalid characters: *");
  tfq_queue_options_free(o);
  tfq_spec_free(s);
  tfq_status_free(st);
}

Test(shared_name, containers_separate_names_and_clear_drops_the_registry_reference) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue_options *o;
  OK(tfq_queue_options_new(&o, NULL));
  OK(tfq_queue_options_set_shared_name(o, "cq", NULL));
  tfq_queue *a, *b, *c;
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, o, &a, NULL));
  OK(tfq_queue_options_set_container(o, "test", NULL));
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, o, &b, NULL));
  cr_assert_neq(a, b, "different containers");
  tfq_registry_clear(NULL, "test");
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, o, &c, NULL));
  cr_assert_neq(c, b, "a cleared container creates a fresh queue");
  OK(enq_f(b, 1, NULL)); /* the old handle still works */
  tfq_queue_free(a);
  tfq_queue_free(b);
  tfq_queue_free(c);
  tfq_registry_clear(NULL, NULL);
  cr_assert_eq(tfq_registry_size(NULL), 0);
  tfq_queue_options_free(o);
  tfq_spec_free(s);
}

/* [49] is in test_fifo_queue.c; unnamed queues opened through the registry never share. */
Test(shared_name, unnamed_opens_never_share) {
  tfq_spec *s = spec1(TFQ_FLOAT, 0, NULL);
  tfq_queue *a, *b;
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, NULL, &a, NULL));
  OK(tfq_queue_open(NULL, TFQ_QUEUE_FIFO, s, NULL, &b, NULL));
  cr_assert_neq(a, b);
  tfq_queue_free(a);
  tfq_queue_free(b);
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
