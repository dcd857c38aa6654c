/* Part of test_queues (see queues_util.h): the shared-name registry (queue.h): opens of one name
 * share a queue, incompatible opens fail with TF's messages, containers. */
#define TFQ_EXPERIMENTAL /* tfq_registry_size */
#include <tfq/experimental.h>

#include "queues_util.h"

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
