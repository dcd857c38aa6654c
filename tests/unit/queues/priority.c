/* Part of test_queues (see queues_util.h): PriorityQueue: an int64 priority prepended, elements out
 * in priority order. */
#include "queues_util.h"

static tfq_queue *prioq(int64_t cap, int shaped) {
  tfq_spec *s;
  OK(tfq_spec_new(&s, NULL));
  OK(tfq_spec_add(s, TFQ_STRING, NULL, shaped ? 0 : TFQ_UNKNOWN_RANK, NULL, NULL));
  tfq_queue *q = make(TFQ_QUEUE_PRIORITY, s, cap, 0, 0, 0, 0);
  tfq_spec_free(s);
  return q;
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

/* [87] */
Test(priority_queue, filling_capacity_with_many_threads_delivers_every_value) {
  tfq_queue *q = prioq(10, 1);
  srand(87);
  pthread_t te[40];
  pq_arg ea[40];
  bg da[40] = {{0}}; /* dequeue_many of each producer's count */
  int64_t base = 0;
  for (int i = 0; i < 40; i++) {
    int64_t c = 1 + rand() % 9;
    ea[i] = (pq_arg){q, base, c, 1, 0};
    da[i].n = c;
    base += c;
  }
  for (int i = 0; i < 40; i++) {
    pthread_create(&te[i], NULL, pq_enq, &ea[i]);
    bg_start(&da[i], q, BG_DEQ_MANY);
  }
  char *seen = calloc((size_t)base, 1);
  for (int i = 0; i < 40; i++) {
    pthread_join(te[i], NULL);
    bg_join(&da[i]);
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
