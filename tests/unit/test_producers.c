/* Producers: TF's input.py cases 115-122 (docs/conformance.md, "Case numbers"), in tfq's C form. */
#include <pthread.h>

#include "readers_util.h"

static tfq_tensor *strings(const char *const *s, int n) {
  int64_t d = n;
  tfq_tensor *t;
  cr_assert_eq(tfq_tensor_new(TFQ_STRING, &d, 1, &t, NULL), TFQ_OK);
  for (int i = 0; i < n; i++)
    cr_assert_eq(tfq_tensor_set_string(t, i, s[i], strlen(s[i]), NULL), TFQ_OK);
  return t;
}

static tfq_producer_options *popts(int64_t epochs, int shuffle) {
  tfq_producer_options *o;
  cr_assert_eq(tfq_producer_options_new(&o, NULL), TFQ_OK);
  tfq_producer_options_set_num_epochs(o, epochs);
  tfq_producer_options_set_shuffle(o, shuffle);
  return o;
}

/* 115: limit_epochs("Love Me", 2): the step succeeds twice, the third is "Reached limit of 2". */
Test(producers, c115_limit_epochs_as_a_step) {
  const char *s[1] = {"Love Me"};
  tfq_tensor *t = strings(s, 1);
  tfq_tuple *rows;
  cr_assert_eq(tfq_tuple_new(1, &rows, NULL), TFQ_OK);
  tfq_tuple_set_take(rows, 0, t);
  tfq_queue *q = string_queue(10);
  tfq_producer_options *o = popts(2, 0);
  tfq_producer *p;
  cr_assert_eq(tfq_producer_new(q, rows, o, &p, NULL), TFQ_OK);
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_producer_step(p, NULL, st), TFQ_OK);
  cr_assert_eq(tfq_producer_step(p, NULL, st), TFQ_OK);
  cr_assert_eq(tfq_producer_step(p, NULL, st), TFQ_OUT_OF_RANGE);
  cr_assert_str_eq(tfq_status_message(st), "Reached limit of 2");
  cr_assert_eq(tfq_queue_size(q), 2);
  tfq_producer_options_set_num_epochs(o, 0);
  tfq_producer *p2;
  cr_assert_eq(tfq_producer_new(q, rows, o, &p2, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "num_epochs must be > 0 not 0.");
  tfq_status_free(st);
  tfq_producer_free(p);
  tfq_producer_options_free(o);
  tfq_tuple_free(rows);
  tfq_queue_free(q);
}

/* 116: 3 rows, 2 epochs, no shuffle → dequeue_many(6) gives the rows twice; then OUT_OF_RANGE. */
Test(producers, c116_input_producer_no_shuffle) {
  int64_t d[2] = {3, 2};
  tfq_tensor *t;
  cr_assert_eq(tfq_tensor_new(TFQ_INT32, d, 2, &t, NULL), TFQ_OK);
  int32_t *v = tfq_tensor_data(t);
  for (int i = 0; i < 6; i++) v[i] = i;
  tfq_tuple *rows;
  cr_assert_eq(tfq_tuple_new(1, &rows, NULL), TFQ_OK);
  tfq_tuple_set_take(rows, 0, t);
  tfq_producer_options *o = popts(2, 0);
  tfq_queue *q;
  tfq_producer_thread *th;
  cr_assert_eq(tfq_input_producer(rows, o, &q, &th, NULL), TFQ_OK);
  cr_assert_eq(tfq_queue_capacity(q), 32);
  tfq_tuple *out;
  cr_assert_eq(tfq_queue_dequeue_many(q, 6, &out, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
  const int32_t *x = tfq_tensor_cdata(tfq_tuple_get(out, 0));
  for (int i = 0; i < 12; i++) cr_assert_eq(x[i], i % 6);
  tfq_tuple_free(out);
  tfq_tuple *one;
  cr_assert_eq(tfq_queue_dequeue(q, &one, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_OK);
  tfq_producer_options_free(o);
  tfq_tuple_free(rows);
  tfq_queue_free(q);
}

/* 117: no fully defined element shape.  In C every tensor has a shape; a scalar input has no
 * dimension 0 to slice, which is the same error. */
Test(producers, c117_input_producer_shape_error) {
  tfq_tensor *t;
  cr_assert_eq(tfq_tensor_new(TFQ_FLOAT, NULL, 0, &t, NULL), TFQ_OK);
  tfq_tuple *rows;
  cr_assert_eq(tfq_tuple_new(1, &rows, NULL), TFQ_OK);
  tfq_tuple_set_take(rows, 0, t);
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_input_producer(rows, NULL, &q, &th, st), TFQ_INVALID_ARGUMENT);
  /* a known scalar shape: TF 2.21's own check (the conformance suite compares it live) */
  cr_assert_str_eq(tfq_status_message(st), "Shape () must have rank at least 1");
  cr_assert_null(q);
  tfq_status_free(st);
  tfq_tuple_free(rows);
}

/* 118: 6 strings × 3 epochs in order, then OUT_OF_RANGE; with a bounded capacity smaller than
 * the data (the producer blocks while the consumer drains). */
Test(producers, c118_string_input_producer_no_shuffle) {
  const char *s[6] = {"to", "be", "or", "not", "to", "be"};
  tfq_tensor *t = strings(s, 6);
  tfq_producer_options *o = popts(3, 0);
  tfq_producer_options_set_capacity(o, 4);
  tfq_queue *q;
  tfq_producer_thread *th;
  cr_assert_eq(tfq_string_input_producer(t, o, &q, &th, NULL), TFQ_OK);
  for (int i = 0; i < 18; i++) {
    tfq_tuple *e;
    cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
    cr_assert_str_eq(S(tfq_tuple_get(e, 0), 0), s[i % 6]);
    tfq_tuple_free(e);
  }
  tfq_tuple *e;
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_OK);
  tfq_producer_options_free(o);
  tfq_tensor_free(t);
  tfq_queue_free(q);
}

/* 120: no input → INVALID_ARGUMENT; an empty tensor → the consumer sees OUT_OF_RANGE and the
 * join reports the producer's INVALID_ARGUMENT. */
Test(producers, c120_string_input_producer_null_and_empty) {
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_string_input_producer(NULL, NULL, &q, &th, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "string_input_producer requires a non-null input tensor");
  tfq_tensor *t = strings(NULL, 0);
  cr_assert_eq(tfq_string_input_producer(t, NULL, &q, &th, st), TFQ_OK);
  tfq_tuple *e;
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_producer_thread_join(th, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "assertion failed: [string_input_producer requires a non-null input tensor]");
  tfq_status_free(st);
  tfq_tensor_free(t);
  tfq_queue_free(q);
}

static void drain_ints(tfq_queue *q, int32_t *out, int n) {
  for (int i = 0; i < n; i++) {
    tfq_tuple *e;
    cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
    out[i] = *(const int32_t *)tfq_tensor_cdata(tfq_tuple_get(e, 0));
    tfq_tuple_free(e);
  }
  tfq_tuple *e;
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OUT_OF_RANGE);
}

/* 121: range 5 × 3 epochs in order; range 2 × 200 shuffled epochs → "01" and "10" each within
 * ±40% of 100. */
Test(producers, c121_range_input_producer) {
  tfq_producer_options *o = popts(3, 0);
  tfq_queue *q;
  tfq_producer_thread *th;
  cr_assert_eq(tfq_range_input_producer(5, o, &q, &th, NULL), TFQ_OK);
  int32_t v[400];
  drain_ints(q, v, 15);
  for (int i = 0; i < 15; i++) cr_assert_eq(v[i], i % 5);
  cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_OK);
  tfq_queue_free(q);
  tfq_producer_options_free(o);
  o = popts(200, 1);
  tfq_producer_options_set_seed(o, 12345);
  cr_assert_eq(tfq_range_input_producer(2, o, &q, &th, NULL), TFQ_OK);
  drain_ints(q, v, 400);
  int c01 = 0;
  for (int e = 0; e < 200; e++) {
    cr_assert_eq(v[2 * e] + v[2 * e + 1], 1); /* shuffling stays within an epoch */
    c01 += v[2 * e] == 0;
  }
  cr_assert(c01 >= 60 && c01 <= 140, "%d", c01);
  cr_assert(200 - c01 >= 60 && 200 - c01 <= 140);
  cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_OK);
  tfq_queue_free(q);
  tfq_producer_options_free(o);
}

/* 122: (strings, ints) slices stay paired; 24 permutations over 1200 shuffled epochs are each
 * within ±40% of 50. */
Test(producers, c122_slice_input_producer) {
  const char *s[4] = {"A", "B", "C", "D"};
  tfq_tensor *ts = strings(s, 4), *ti;
  int64_t d = 4;
  cr_assert_eq(tfq_tensor_new(TFQ_INT32, &d, 1, &ti, NULL), TFQ_OK);
  int32_t *iv = tfq_tensor_data(ti);
  for (int i = 0; i < 4; i++) iv[i] = i;
  tfq_tuple *tu;
  cr_assert_eq(tfq_tuple_new(2, &tu, NULL), TFQ_OK);
  tfq_tuple_set_take(tu, 0, ts);
  tfq_tuple_set_take(tu, 1, ti);
  tfq_producer_options *o = popts(1200, 1);
  tfq_producer_options_set_seed(o, 7);
  tfq_queue *q;
  tfq_producer_thread *th;
  cr_assert_eq(tfq_slice_input_producer(tu, o, &q, &th, NULL), TFQ_OK);
  int counts[256] = {0};
  for (int e = 0; e < 1200; e++) {
    int code = 0, seen = 0;
    for (int j = 0; j < 4; j++) {
      tfq_tuple *el;
      cr_assert_eq(tfq_queue_dequeue(q, &el, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
      int idx = *(const int32_t *)tfq_tensor_cdata(tfq_tuple_get(el, 1));
      cr_assert_eq(S(tfq_tuple_get(el, 0), 0)[0], 'A' + idx); /* still paired */
      seen |= 1 << idx;
      code = code * 4 + idx;
      tfq_tuple_free(el);
    }
    cr_assert_eq(seen, 15);
    counts[code]++;
  }
  tfq_tuple *el;
  cr_assert_eq(tfq_queue_dequeue(q, &el, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OUT_OF_RANGE);
  int perms = 0;
  for (int c = 0; c < 256; c++)
    if (counts[c]) {
      perms++;
      cr_assert(counts[c] >= 30 && counts[c] <= 70, "permutation %d seen %d times", c, counts[c]);
    }
  cr_assert_eq(perms, 24);
  cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_OK);
  tfq_status *st = tfq_status_new();
  tfq_producer_thread *th2;
  tfq_queue *q2;
  cr_assert_eq(tfq_slice_input_producer(NULL, o, &q2, &th2, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "Expected at least one tensor in slice_input_producer().");
  tfq_status_free(st);
  tfq_producer_options_free(o);
  tfq_tuple_free(tu);
  tfq_queue_free(q);
}

Test(producers, same_seed_same_order_and_stop_unblocks_an_unlimited_producer) {
  tfq_producer_options *o = popts(TFQ_EPOCHS_UNLIMITED, 1);
  tfq_producer_options_set_seed(o, 99);
  tfq_producer_options_set_capacity(o, 8);
  int32_t a[8], b[8];
  for (int run = 0; run < 2; run++) {
    tfq_queue *q;
    tfq_producer_thread *th;
    cr_assert_eq(tfq_range_input_producer(8, o, &q, &th, NULL), TFQ_OK);
    int32_t *dst = run ? b : a;
    for (int i = 0; i < 8; i++) {
      tfq_tuple *e;
      cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, NULL), TFQ_OK);
      dst[i] = *(const int32_t *)tfq_tensor_cdata(tfq_tuple_get(e, 0));
      tfq_tuple_free(e);
    }
    tfq_producer_thread_stop(th);
    cr_assert_eq(tfq_producer_thread_join(th, NULL), TFQ_CANCELLED);
    tfq_queue_free(q);
  }
  cr_assert(memcmp(a, b, sizeof a) == 0);
  tfq_producer_options_free(o);
}

/* The producer runs on the caller's thread too, feeding a reader (the seed pipeline's shape). */
typedef struct {
  tfq_producer *p;
  tfq_code code;
} run_arg;
static void *run_main(void *arg) {
  run_arg *a = arg;
  a->code = tfq_producer_run(a->p, NULL);
  return NULL;
}

Test(producers, run_on_a_thread_feeds_a_text_line_reader) {
  tmp_setup();
  const char *f[2] = {strdup(write_file("p0.txt", "a\nb\n", 4)),
                      strdup(write_file("p1.txt", "c\n", 2))};
  tfq_tensor *t = strings(f, 2);
  tfq_tuple *rows;
  cr_assert_eq(tfq_tuple_new(1, &rows, NULL), TFQ_OK);
  tfq_tuple_set_take(rows, 0, t);
  tfq_queue *q = string_queue(1);
  tfq_producer_options *o = popts(5, 1);
  run_arg a;
  cr_assert_eq(tfq_producer_new(q, rows, o, &a.p, NULL), TFQ_OK);
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, run_main, &a), 0);
  tfq_reader *r = new_reader(TFQ_READER_TEXT_LINE, NULL);
  int lines = 0;
  tfq_tensor *k, *v;
  while (tfq_reader_read(r, q, &k, &v, NULL, NULL) == TFQ_OK) {
    lines++;
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  cr_assert_eq(lines, 15);
  cr_assert_eq(pthread_join(th, NULL), 0);
  cr_assert_eq(a.code, TFQ_OK);
  tfq_reader_free(r);
  tfq_producer_free(a.p);
  tfq_producer_options_free(o);
  tfq_tuple_free(rows);
  tfq_queue_free(q);
  free((void *)f[0]);
  free((void *)f[1]);
  tmp_teardown();
}

/* TF 2.21: only string_input_producer asserts on an empty input; range_input_producer(0) and
 * input_producer of 0 rows enqueue empty epochs, so the consumer meets the end of input and
 * the producer ends cleanly (the conformance suite's producers family compares it live). */
Test(producers, range_input_producer_of_zero_gives_empty_epochs_and_ends_cleanly) {
  tfq_producer_options *o = popts(2, 0);
  tfq_queue *q;
  tfq_producer_thread *th;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_range_input_producer(0, o, &q, &th, st), TFQ_OK);
  tfq_tuple *e;
  cr_assert_eq(tfq_queue_dequeue(q, &e, NULL, TFQ_NO_TIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_producer_thread_join(th, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_producer_options_free(o);
  tfq_queue_free(q);
  tfq_status_free(st);
}
