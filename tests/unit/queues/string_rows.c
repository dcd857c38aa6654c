/* Part of test_queues (see queues_util.h): string components of a fully defined shape, stored as
 * string views into the tensors that own the bytes (queue_internal.h, "str").  What a user can
 * see of that layout: a batch of short strings is shared, not copied, while it is queued (its
 * refcount counts the rows held); long rows are sliced; every row comes out once with its bytes,
 * after the enqueuer's tensor is gone, through every kind, restore and reuse path. */
#include "queues_util.h"

/* A batch of `n` rows: component 0 string [n, 2] ("r<i>a", "r<i>b", each padded to `len` bytes
 * with '.'), component 1 int32 [n] = i + base. */
static tfq_tuple *str_batch(int64_t n, int64_t base, size_t len) {
  int64_t sd[2] = {n, 2}, idim[1] = {n};
  tfq_tensor *s = tensor(TFQ_STRING, 2, sd), *v = tensor(TFQ_INT32, 1, idim);
  char *buf = malloc(len + 32);
  for (int64_t i = 0; i < n; i++) {
    for (int j = 0; j < 2; j++) {
      int k = snprintf(buf, len + 32, "r%lld%c", (long long)(i + base), j ? 'b' : 'a');
      size_t l = (size_t)k > len ? (size_t)k : len;
      memset(buf + k, '.', l - (size_t)k);
      OK(tfq_tensor_set_string(s, 2 * i + j, buf, l, NULL));
    }
    ((int32_t *)tfq_tensor_data(v))[i] = (int32_t)(i + base);
  }
  free(buf);
  return tup(2, s, v);
}

static tfq_spec *str_spec(void) {
  int64_t two[1] = {2};
  return spec2(TFQ_STRING, 1, two, TFQ_INT32, 0, NULL);
}

/* A FIFO of capacity 100 holding str_batch(n, 0, len). */
static tfq_queue *fifo_of_rows(tfq_spec *s, int64_t n, size_t len) {
  tfq_queue *q = fifo(s, 100);
  tfq_tuple *b = str_batch(n, 0, len);
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(b);
  return q;
}

/* Checks that row r of batch `t` is element `id` (strings of at least `len` bytes). */
static void expect_row(const tfq_tuple *t, int64_t r, int id, size_t len) {
  for (int j = 0; j < 2; j++) {
    char want[64];
    int k = snprintf(want, sizeof want, "r%d%c", id, j ? 'b' : 'a');
    size_t l;
    const char *got = tfq_tensor_string(tfq_tuple_get(t, 0), 2 * r + j, &l);
    cr_assert_eq(l, (size_t)k > len ? (size_t)k : len, "row %lld: length %zu", (long long)r, l);
    cr_assert(memcmp(got, want, (size_t)k) == 0, "row %lld: %.*s", (long long)r, (int)k, got);
    for (size_t b = (size_t)k; b < l; b++) cr_assert_eq(got[b], '.');
  }
}

Test(string_rows, a_batch_of_short_strings_is_shared_while_queued_and_outlives_its_enqueuer) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tuple *b = str_batch(5, 0, 0);
  tfq_tensor *keep = tfq_tensor_ref(tfq_tuple_get(b, 0));
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_refcount(keep), 2 + 5, "one reference a queued row");
  tfq_tuple_free(b);
  tfq_tuple *out;
  OK(tfq_queue_dequeue_many(q, 3, &out, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_refcount(keep), 1 + 2);
  for (int r = 0; r < 3; r++) expect_row(out, r, r, 0);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(out, 0), 0), 3);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(out, 0), 1), 2);
  tfq_tuple_free(out);
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue_up_to(q, 10, &out, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(out, 0), 0), 2);
  cr_assert_eq(tfq_tensor_refcount(keep), 1);
  tfq_tensor_free(keep); /* the result owns its bytes: still readable */
  expect_row(out, 0, 3, 0);
  expect_row(out, 1, 4, 0);
  tfq_tuple_free(out);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(string_rows, long_rows_are_sliced_so_one_row_does_not_pin_its_batch) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tuple *b = str_batch(4, 10, 5000);
  tfq_tensor *keep = tfq_tensor_ref(tfq_tuple_get(b, 0));
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_refcount(keep), 2, "long rows are copied out of the batch");
  tfq_tuple_free(b);
  tfq_tensor_free(keep);
  tfq_tuple *out;
  OK(tfq_queue_dequeue_many(q, 4, &out, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 4; r++) expect_row(out, r, 10 + r, 5000);
  tfq_tuple_free(out);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* Enqueues `owners` batches of `rows` rows (ids in order; every `long_every`-th batch, counting
 * from 1, of 5000-byte strings, 0: none) and keeps a reference to each batch's string tensor. */
static void enqueue_owners(tfq_queue *q, tfq_tensor **keep, int owners, int rows, int long_every) {
  for (int o = 0; o < owners; o++) {
    tfq_tuple *b =
        str_batch(rows, o * rows, long_every && o % long_every == long_every - 1 ? 5000 : 0);
    keep[o] = tfq_tensor_ref(tfq_tuple_get(b, 0));
    OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(b);
  }
}

/* Shuffled batches of `batch` rows from `owners` enqueued tensors of `rows` rows each (every
 * `long_every`-th of long strings, sliced at the enqueue so their tensor is not kept): after every
 * dequeue each owner is referenced once per row still queued, plus, when the batch is refilled in
 * place (`into`: its strings borrow), once per row of the current batch; and by nothing once
 * all is taken and the batch freed. */
static void shuffled_owner_refs(int owners, int rows, int batch, int long_every, int into) {
  tfq_spec *s = str_spec();
  tfq_queue *q = make(TFQ_QUEUE_RANDOM_SHUFFLE, s, 1000, 0, 11, 13, 0);
  tfq_tensor **keep = calloc((size_t)owners, sizeof *keep);
  int *left = calloc((size_t)owners, sizeof *left),
      *in_batch = calloc((size_t)owners, sizeof *left);
  enqueue_owners(q, keep, owners, rows, long_every);
  for (int o = 0; o < owners; o++) left[o] = rows;
  tfq_tuple *kept = NULL;
  if (into) OK(tfq_tuple_new(2, &kept, NULL));
  while (tfq_queue_size(q) > 0) {
    int64_t n = tfq_queue_size(q) < batch ? tfq_queue_size(q) : batch;
    tfq_tuple *out = kept;
    if (into)
      OK(tfq_queue_dequeue_many_into(q, n, out, NULL, NOTIMEOUT, NULL));
    else
      OK(tfq_queue_dequeue_many(q, n, &out, NULL, NOTIMEOUT, NULL));
    memset(in_batch, 0, (size_t)owners * sizeof *in_batch);
    const tfq_tensor *ids = tfq_tuple_get(out, 1);
    for (int64_t r = 0; r < tfq_tensor_dim(ids, 0); r++) {
      int id = ((const int32_t *)tfq_tensor_cdata(ids))[r], o = id / rows;
      expect_row(out, r, id, long_every && o % long_every == long_every - 1 ? 5000 : 0);
      left[o]--;
      in_batch[o]++;
    }
    if (!into) tfq_tuple_free(out);
    for (int o = 0; o < owners; o++) {
      int64_t want =
          long_every && o % long_every == long_every - 1 ? 1 : 1 + left[o] + in_batch[o] * into;
      cr_assert_eq(tfq_tensor_refcount(keep[o]), want, "owner %d", o);
    }
  }
  tfq_tuple_free(kept);
  for (int o = 0; o < owners; o++) {
    cr_assert_eq(tfq_tensor_refcount(keep[o]), 1, "owner %d", o);
    tfq_tensor_free(keep[o]);
  }
  free(keep);
  free(left);
  free(in_batch);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* More owners than the release's 16-way table holds. */
Test(string_rows, each_owner_keeps_one_reference_per_queued_row_across_shuffled_batches) {
  shuffled_owner_refs(40, 6, 70, 0, 0);
}

Test(string_rows, a_refilled_shuffled_batch_keeps_exactly_the_owners_of_its_rows) {
  shuffled_owner_refs(30, 5, 16, 7, 1);
}

/* Every kind, batches of short and long rows interleaved, taken in odd batch sizes and single
 * dequeues: each id exactly once with its own bytes. */
static void each_row_once(tfq_queue_kind kind, int into) {
  tfq_spec *s = str_spec();
  tfq_queue *q = make(kind, s, 10000, kind == TFQ_QUEUE_RANDOM_SHUFFLE ? 50 : 0, 7, 9, 0);
  enum { BATCHES = 40, ROWS = 25 };
  for (int bi = 0; bi < BATCHES; bi++) {
    tfq_tuple *b = str_batch(ROWS, bi * ROWS, bi % 5 == 4 ? 4500 : 0);
    OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(b);
  }
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  char seen[BATCHES * ROWS] = {0};
  int got = 0;
  tfq_tuple *kept = NULL; /* into: the batch refilled (its strings borrowed) across steps */
  if (into) OK(tfq_tuple_new(2, &kept, NULL));
  for (int step = 0; got < BATCHES * ROWS; step++) {
    tfq_tuple *out = kept;
    int single = step % 3 == 2;
    if (single && into)
      OK(tfq_queue_dequeue_into(q, out, NULL, NOTIMEOUT, NULL));
    else if (single)
      OK(tfq_queue_dequeue(q, &out, NULL, NOTIMEOUT, NULL));
    else if (into)
      OK(tfq_queue_dequeue_up_to_into(q, 37, out, NULL, NOTIMEOUT, NULL));
    else
      OK(tfq_queue_dequeue_up_to(q, 37, &out, NULL, NOTIMEOUT, NULL));
    int64_t rows = single ? 1 : tfq_tensor_dim(tfq_tuple_get(out, 1), 0);
    for (int64_t r = 0; r < rows; r++) {
      int id = ((const int32_t *)tfq_tensor_cdata(tfq_tuple_get(out, 1)))[r];
      cr_assert(id >= 0 && id < BATCHES * ROWS && !seen[id], "id %d twice or out of range", id);
      seen[id] = 1;
      expect_row(out, r, id, (id / ROWS) % 5 == 4 ? 4500 : 0);
    }
    got += (int)rows;
    if (!into) tfq_tuple_free(out);
  }
  tfq_tuple_free(kept);
  cr_assert_eq(tfq_queue_size(q), 0);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(string_rows, fifo_delivers_each_row_once_with_its_bytes) { each_row_once(TFQ_QUEUE_FIFO, 0); }
Test(string_rows, random_shuffle_delivers_each_row_once_with_its_bytes) {
  each_row_once(TFQ_QUEUE_RANDOM_SHUFFLE, 0);
}
Test(string_rows, padding_fifo_delivers_each_row_once_with_its_bytes) {
  each_row_once(TFQ_QUEUE_PADDING_FIFO, 0);
}

/* The same through batches refilled in place, whose strings view the rows' owners' bytes. */
Test(string_rows, fifo_delivers_each_row_once_into_a_refilled_batch) {
  each_row_once(TFQ_QUEUE_FIFO, 1);
}
Test(string_rows, random_shuffle_delivers_each_row_once_into_a_refilled_batch) {
  each_row_once(TFQ_QUEUE_RANDOM_SHUFFLE, 1);
}
Test(string_rows, padding_fifo_delivers_each_row_once_into_a_refilled_batch) {
  each_row_once(TFQ_QUEUE_PADDING_FIFO, 1);
}

Test(string_rows, priority_queue_orders_string_rows_by_priority) {
  int64_t two[1] = {2};
  tfq_spec *s = spec1(TFQ_STRING, 1, two);
  tfq_queue *q = make(TFQ_QUEUE_PRIORITY, s, 100, 0, 0, 0, 0);
  tfq_tuple *b = str_batch(6, 0, 0), *pb;
  int64_t d6[1] = {6};
  tfq_tensor *prio = tensor(TFQ_INT64, 1, d6);
  for (int i = 0; i < 6; i++) ((int64_t *)tfq_tensor_data(prio))[i] = 5 - i;
  OK(tfq_tuple_new(2, &pb, NULL));
  tfq_tuple_set_take(pb, 0, prio);
  tfq_tuple_set_take(pb, 1, tfq_tensor_ref(tfq_tuple_get(b, 0)));
  OK(tfq_queue_enqueue_many(q, pb, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(pb);
  tfq_tuple_free(b);
  tfq_tuple *out;
  OK(tfq_queue_dequeue_many(q, 6, &out, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 6; r++) {
    size_t l;
    const char *p = tfq_tensor_string(tfq_tuple_get(out, 1), 2 * r, &l);
    char want[16];
    snprintf(want, sizeof want, "r%da", 5 - r);
    cr_assert(l == strlen(want) && memcmp(p, want, l) == 0, "row %d: %.*s", r, (int)l, p);
  }
  tfq_tuple_free(out);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(string_rows, a_timed_out_dequeue_many_puts_string_rows_back_in_order) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tuple *b = str_batch(3, 0, 0), *out = NULL;
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(b);
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue_many(q, 5, &out, NULL, 20000, st), TFQ_DEADLINE_EXCEEDED);
  cr_assert_null(out);
  cr_assert_eq(tfq_queue_size(q), 3);
  OK(tfq_queue_dequeue_many(q, 3, &out, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 3; r++) expect_row(out, r, r, 0);
  tfq_tuple_free(out);
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(string_rows, a_single_element_comes_back_as_the_tensor_enqueued) {
  tfq_queue *q = scalar_fifo(TFQ_STRING, 10);
  tfq_tensor *e = tensor(TFQ_STRING, 0, NULL);
  OK(tfq_tensor_set_string(e, 0, "hello", 5, NULL));
  tfq_tuple *t = tup(1, e, NULL), *out;
  OK(tfq_queue_enqueue(q, t, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue(q, &out, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tuple_get(out, 0), e, "moved out, not copied");
  tfq_tuple_free(out);
  tfq_tuple_free(t);
  tfq_queue_free(q);
}

Test(string_rows, dequeue_into_replaces_string_components_each_time) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tuple *b = str_batch(4, 20, 0), *dst;
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(b);
  OK(tfq_tuple_new(2, &dst, NULL));
  for (int r = 0; r < 4; r++) {
    OK(tfq_queue_dequeue_into(q, dst, NULL, NOTIMEOUT, NULL));
    cr_assert_eq(tfq_tensor_rank(tfq_tuple_get(dst, 0)), 1);
    expect_row(dst, 0, 20 + r, 0);
  }
  tfq_tuple_free(dst);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

Test(string_rows, dequeue_many_into_refills_the_same_tensors_in_place) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo_of_rows(s, 10, 0);
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  tfq_tensor *s0 = tfq_tuple_get(dst, 0), *i0 = tfq_tuple_get(dst, 1);
  for (int r = 0; r < 4; r++) expect_row(dst, r, r, 0);
  OK(tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tuple_get(dst, 0), s0, "string batch refilled in place");
  cr_assert_eq(tfq_tuple_get(dst, 1), i0, "int batch refilled in place");
  for (int r = 0; r < 4; r++) expect_row(dst, r, 4 + r, 0);
  cr_assert_eq(((const int32_t *)tfq_tensor_cdata(i0))[3], 7);
  tfq_tensor *kept = tfq_tensor_ref(tfq_tuple_get(dst, 0)); /* shared: the next call allocates */
  OK(tfq_queue_close(q, 0, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_dequeue_up_to_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_neq(tfq_tuple_get(dst, 0), kept);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(dst, 0), 0), 2);
  expect_row(dst, 0, 8, 0);
  expect_row(dst, 1, 9, 0);
  size_t l;
  const char *k0 = tfq_tensor_string(kept, 0, &l);
  cr_assert(l == 3 && memcmp(k0, "r4a", 3) == 0, "the kept batch is untouched");
  tfq_tensor_free(kept);
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_queue_dequeue_up_to_into(q, 4, dst, NULL, NOTIMEOUT, st), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_queue_dequeue_many_into(q, 4, NULL, NULL, NOTIMEOUT, st), TFQ_INVALID_ARGUMENT);
  tfq_status_free(st);
  tfq_tuple_free(dst);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* A counting allocator that fails once its budget is spent (-1: never). */
static long g_budget = -1;
static void *budget_malloc(size_t n) {
  if (g_budget == 0) return NULL;
  if (g_budget > 0) g_budget--;
  return malloc(n);
}
static void *budget_realloc(void *p, size_t n) {
  if (g_budget == 0) return NULL;
  if (g_budget > 0) g_budget--;
  return realloc(p, n);
}

/* A refill in place empties a string batch's bytes without rewriting its strings first (the take
 * rewrites them all); a dequeue that fails before its take (here: the int batch, still shared,
 * needs a new tensor and the allocation fails) must leave no string pointing at the old bytes.
 * The rows stay queued and a retry takes them. */
Test(string_rows, a_dequeue_into_that_fails_before_its_take_leaves_empty_strings) {
  cr_assert_eq(tfq_set_allocator(budget_malloc, budget_realloc, free), TFQ_OK);
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo_of_rows(s, 8, 300);
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  tfq_tensor *s0 = tfq_tuple_get(dst, 0);
  tfq_tensor *kept = tfq_tensor_ref(tfq_tuple_get(dst, 1)); /* not refillable: a new one */
  tfq_status *st = tfq_status_new();
  g_budget = 0;
  tfq_code rc = tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, st);
  g_budget = -1;
  cr_assert_eq(rc, TFQ_RESOURCE_EXHAUSTED, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_tuple_get(dst, 0), s0, "the string batch is the one refilled");
  for (int64_t i = 0; i < tfq_tensor_num_elements(s0); i++) {
    size_t l = 1;
    (void)tfq_tensor_string(s0, i, &l);
    cr_assert_eq(l, 0, "string %lld still has %zu bytes after the failed dequeue", (long long)i, l);
  }
  cr_assert_eq(tfq_queue_size(q), 4, "nothing was taken");
  OK(tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 4; r++) expect_row(dst, r, 4 + r, 300);
  tfq_tensor_free(kept);
  tfq_status_free(st);
  tfq_tuple_free(dst);
  tfq_queue_free(q);
  tfq_spec_free(s);
  cr_assert_eq(tfq_set_allocator(NULL, NULL, NULL), TFQ_OK);
}

Test(string_rows, dequeue_many_into_of_zero_rows_gives_empty_batches) {
  int64_t unk[1] = {-1};
  tfq_spec *s = spec2(TFQ_STRING, 1, unk, TFQ_INT32, 0, NULL);
  tfq_queue *q = make(TFQ_QUEUE_PADDING_FIFO, s, 10, 0, 0, 0, 0);
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  int64_t d3[1] = {3};
  tfq_tuple_set_take(dst, 0, tensor(TFQ_STRING, 1, d3)); /* stale contents go */
  OK(tfq_queue_dequeue_many_into(q, 0, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_num_elements(tfq_tuple_get(dst, 0)), 0);
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(dst, 1), 0), 0);
  tfq_tuple_free(dst);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* A FIFO batch's strings lie back to back in the arena of the tensor enqueued, so a dequeue copies
 * each run of them as one block (str_settle).  Runs broken by empty strings and by the change of
 * owner between two enqueued batches, taken in batches across that change: every string comes
 * back with its own bytes and length, after both enqueued tensors are gone. */
Test(string_rows, back_to_back_strings_come_out_whole_across_empties_and_owners) {
  enum { N = 9 };
  int64_t sd[2] = {N, 2}, idim[1] = {N};
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int b = 0; b < 2; b++) {
    tfq_tensor *t = tensor(TFQ_STRING, 2, sd), *v = tensor(TFQ_INT32, 1, idim);
    for (int i = 0; i < N; i++) {
      int id = b * N + i;
      for (int j = 0; j < 2; j++) {
        size_t len = (size_t)((id * 2 + j) % 7); /* 0 (empty) to 6 bytes */
        OK(tfq_tensor_set_string(t, 2 * i + j, text + id, len, NULL));
      }
      ((int32_t *)tfq_tensor_data(v))[i] = id;
    }
    tfq_tuple *tb = tup(2, t, v);
    OK(tfq_queue_enqueue_many(q, tb, NULL, NOTIMEOUT, NULL));
    tfq_tuple_free(tb);
  }
  int next = 0;
  for (int take = 5; next < 2 * N; take = 2 * N - next < 7 ? 2 * N - next : 7) {
    tfq_tuple *out;
    OK(tfq_queue_dequeue_many(q, take, &out, NULL, NOTIMEOUT, NULL));
    for (int r = 0; r < take; r++, next++) {
      cr_assert_eq(((const int32_t *)tfq_tensor_cdata(tfq_tuple_get(out, 1)))[r], next);
      for (int j = 0; j < 2; j++) {
        size_t l, want = (size_t)((next * 2 + j) % 7);
        const char *p = tfq_tensor_string(tfq_tuple_get(out, 0), 2 * r + j, &l);
        cr_assert_eq(l, want, "id %d string %d: length %zu", next, j, l);
        cr_assert(memcmp(p, text + next, l) == 0, "id %d string %d: %.*s", next, j, (int)l, p);
      }
    }
    tfq_tuple_free(out);
  }
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* Enqueues str_batch(n, base, 0) into `q` and returns a new reference to its string tensor,
 * which the queued rows reference once each. */
static tfq_tensor *enqueue_kept(tfq_queue *q, int64_t n, int64_t base) {
  tfq_tuple *b = str_batch(n, base, 0);
  tfq_tensor *src = tfq_tensor_ref(tfq_tuple_get(b, 0));
  OK(tfq_queue_enqueue_many(q, b, NULL, NOTIMEOUT, NULL));
  tfq_tuple_free(b);
  cr_assert_eq(tfq_tensor_refcount(src), 1 + n);
  return src;
}

/* A batch refilled in place does not copy its strings: they point at the enqueued tensor's bytes,
 * and the batch holds one reference per row it took from that tensor until its next refill (which
 * drops them) or its free. */
Test(string_rows,
     a_refilled_batch_views_its_rows_bytes_and_keeps_their_owner_until_the_next_refill) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tensor *src = enqueue_kept(q, 8, 0);
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(tfq_queue_dequeue_many_into(q, 3, dst, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 3; r++) expect_row(dst, r, r, 0);
  cr_assert_eq(tfq_tensor_refcount(src), 1 + 8, "5 queued rows and the batch's 3");
  size_t l;
  cr_assert_eq(tfq_tensor_string(tfq_tuple_get(dst, 0), 3, &l), tfq_tensor_string(src, 3, &l),
               "row 1's second string is the enqueued tensor's bytes, not a copy");
  OK(tfq_queue_dequeue_many_into(q, 3, dst, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 3; r++) expect_row(dst, r, 3 + r, 0);
  cr_assert_eq(tfq_tensor_refcount(src), 1 + 2 + 3, "the first batch's 3 dropped at the refill");
  tfq_tuple_free(dst);
  cr_assert_eq(tfq_tensor_refcount(src), 1 + 2);
  tfq_tensor_free(src);
  tfq_queue_free(q);
  tfq_spec_free(s);
}

/* A refilled batch whose strings borrow from several tensors is enqueued again, as a batch and
 * as one element: the second queue's rows own copies of the strings, so they keep neither the
 * batch nor the tensors it borrowed from, and come out with the right bytes after both are gone.
 * A batch that borrows from one tensor is queued as it is (its rows keep it, and so that one). */
Test(string_rows,
     enqueueing_a_batch_borrowing_from_several_copies_its_strings_so_the_queue_pins_only_them) {
  tfq_spec *s = str_spec();
  tfq_queue *q = fifo(s, 100);
  tfq_tensor *src[2] = {enqueue_kept(q, 2, 0), enqueue_kept(q, 2, 2)};
  tfq_tuple *dst;
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(tfq_queue_dequeue_many_into(q, 4, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_refcount(src[0]), 1 + 2);
  tfq_queue *q2 = fifo(s, 100);
  OK(tfq_queue_enqueue_many(q2, dst, NULL, NOTIMEOUT, NULL));
  int64_t sd[2] = {4, 2}, id[1] = {4};
  tfq_spec *s3 = spec2(TFQ_STRING, 2, sd, TFQ_INT32, 1, id);
  tfq_queue *q3 = fifo(s3, 10);
  OK(tfq_queue_enqueue(q3, dst, NULL, NOTIMEOUT, NULL));
  tfq_tensor *batch = tfq_tensor_ref(tfq_tuple_get(dst, 0));
  tfq_tuple_free(dst);
  cr_assert_eq(tfq_tensor_refcount(batch), 1, "no queued row shares the borrowing batch");
  tfq_tensor_free(batch);
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(tfq_tensor_refcount(src[k]), 1, "nor the tensors it borrowed from");
    tfq_tensor_free(src[k]);
  }
  tfq_tuple *out;
  OK(tfq_queue_dequeue_many(q2, 4, &out, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 4; r++) expect_row(out, r, r, 0);
  tfq_tuple_free(out);
  OK(tfq_queue_dequeue(q3, &out, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(out, 0), 0), 4);
  for (int r = 0; r < 4; r++) expect_row(out, r, r, 0);
  tfq_tuple_free(out);
  /* borrowing from one tensor: shared, not copied */
  tfq_tensor *one = enqueue_kept(q, 3, 10);
  OK(tfq_tuple_new(2, &dst, NULL));
  OK(tfq_queue_dequeue_many_into(q, 3, dst, NULL, NOTIMEOUT, NULL));
  OK(tfq_queue_enqueue_many(q2, dst, NULL, NOTIMEOUT, NULL));
  cr_assert_eq(tfq_tensor_refcount(tfq_tuple_get(dst, 0)), 1 + 3, "one reference a queued row");
  tfq_tuple_free(dst);
  cr_assert_eq(tfq_tensor_refcount(one), 1 + 3, "kept through the queued batch");
  OK(tfq_queue_dequeue_many(q2, 3, &out, NULL, NOTIMEOUT, NULL));
  for (int r = 0; r < 3; r++) expect_row(out, r, 10 + r, 0);
  tfq_tuple_free(out);
  cr_assert_eq(tfq_tensor_refcount(one), 1);
  tfq_tensor_free(one);
  tfq_queue_free(q3);
  tfq_queue_free(q2);
  tfq_queue_free(q);
  tfq_spec_free(s3);
  tfq_spec_free(s);
}
