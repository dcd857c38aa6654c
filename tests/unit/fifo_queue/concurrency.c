/* FIFOQueue, part of test_fifo_queue (see fifo_util.h): Many threads on one queue: parallel and
 * mixed enqueues and dequeues. */
#include "fifo_util.h"

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
