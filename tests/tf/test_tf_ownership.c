/* Ownership of lent buffers: numeric tensors handed to TensorFlow without a copy are released by
 * TensorFlow's deallocator exactly once per tensor, on the success paths (mode A into a local
 * session, mode B enqueue over gRPC) and on the error paths (TF_SessionRun refusing a shape, a
 * misaligned buffer that TF_NewTensor copies).  The test counts the runs of its own deallocator:
 * every buffer is wrapped with tfq_tensor_wrap() and the test drops its own references, so the
 * buffer is freed exactly when TensorFlow's deallocator drops the last one.  Under ASan
 * (build-asan) LeakSanitizer also checks that nothing of ours leaks; lsan.supp silences
 * TensorFlow's own process-lifetime allocations. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tf_test_util.h"

#define N 200
#define B 64

static atomic_long g_freed;

/* arg: the allocation to free (the buffer may start inside it). */
static void count_free(void *data, size_t len, void *arg) {
  (void)data;
  (void)len;
  atomic_fetch_add(&g_freed, 1);
  free(arg);
}

/* A wrapped numeric tensor; `misalign` != 0 starts the buffer 8 bytes past a 64-byte boundary,
 * so TensorFlow copies it and runs the deallocator inside TF_NewTensor. */
static tfq_tensor *wrapped(tfq_dtype dt, const int64_t *dims, int rank, int misalign) {
  size_t n = tfq_dtype_size(dt);
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  unsigned char *base = aligned_alloc(64, (n + 64 + 63) / 64 * 64);
  CHECK(base, "alloc");
  unsigned char *p = base + (misalign ? 8 : 0);
  memset(p, 0, n);
  tfq_tensor *t;
  tfq_status *st = tfq_status_new();
  CHECK_OK(tfq_tensor_wrap(dt, dims, rank, p, n, count_free, base, &t, st), st);
  tfq_status_free(st);
  return t;
}

/* A batch (x float [B,cols], k int64 [B], s string [B]); the test keeps no reference. */
static tfq_tuple *make_batch(int cols, int misalign) {
  int64_t dx[2] = {B, cols}, dk[1] = {B};
  tfq_tuple *b;
  tfq_tensor *s;
  CHECK(tfq_tuple_new(3, &b, NULL) == TFQ_OK, "tuple");
  /* cols == 5 marks the refused batch: an int32 x where the graph wants float. */
  tfq_tensor *x = wrapped(cols == 5 ? TFQ_INT32 : TFQ_FLOAT, dx, 2, misalign);
  tfq_tensor *k = wrapped(TFQ_INT64, dk, 1, misalign);
  float *px = tfq_tensor_data(x);
  int64_t *pk = tfq_tensor_data(k);
  for (int i = 0; i < B * cols && cols != 5; i++) px[i] = (float)i;
  for (int i = 0; i < B; i++) pk[i] = i;
  CHECK(tfq_tensor_new(TFQ_STRING, dk, 1, &s, NULL) == TFQ_OK, "s");
  for (int i = 0; i < B; i++)
    CHECK(tfq_tensor_set_string(s, i, "a string long enough for the heap", 33, NULL) == TFQ_OK,
          "set");
  tfq_tuple_set_take(b, 0, x);
  tfq_tuple_set_take(b, 1, k);
  tfq_tuple_set_take(b, 2, s);
  return b;
}

static void expect_freed(long want, const char *what) {
  long got = atomic_load(&g_freed);
  int64_t lent, ret;
  tfq_tf_lent_counts(&lent, &ret);
  printf(
      "ownership: %-44s deallocator ran %ld times (expected %ld); bridge lent %lld, "
      "returned %lld\n",
      what, got, want, (long long)lent, (long long)ret);
  CHECK(got == want && lent == ret, "%s", what);
}

int main(void) {
  tfq_status *st = tfq_status_new();

  /* Mode A into a local session: x -> Sum, k -> Sum, s -> StringLength -> Sum. */
  TF_Graph *g = TF_NewGraph();
  int64_t shx[2] = {-1, 4}, sh1[1] = {-1};
  TF_Operation *px = tft_placeholder(g, "x", TF_FLOAT, shx, 2);
  TF_Operation *pk = tft_placeholder(g, "k", TF_INT64, sh1, 1);
  TF_Operation *ps = tft_placeholder(g, "s", TF_STRING, sh1, 1);
  TF_Output fetch[3] = {
      {tft_sum0(g, "sx", (TF_Output){px, 0}), 0},
      {tft_sum0(g, "sk", (TF_Output){pk, 0}), 0},
      {tft_sum0(g, "ss", (TF_Output){tft_unary(g, "StringLength", "l", (TF_Output){ps, 0}), 0}),
       0}};
  TF_Status *s = TF_NewStatus();
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteSessionOptions(so);
  const char *names[3] = {"x", "k", "s"};
  tfq_tf_feed *feed;
  CHECK_OK(tfq_tf_feed_new(g, names, 3, &feed, st), st);

  long want = 0;
  for (int i = 0; i < N; i++) {
    tfq_tuple *b = make_batch(4, 0);
    TF_Tensor *out[3];
    CHECK_OK(tfq_tf_feed_set(feed, b, st), st);
    CHECK(TF_TensorData(tfq_tf_feed_values(feed)[0]) == tfq_tensor_data(tfq_tuple_get(b, 0)),
          "numeric component was copied");
    tfq_tuple_free(b); /* TensorFlow now holds the only references */
    TF_SessionRun(sess, NULL, tfq_tf_feed_inputs(feed), tfq_tf_feed_values(feed),
                  tfq_tf_feed_count(feed), fetch, out, 3, NULL, 0, NULL, s);
    CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
    for (int j = 0; j < 3; j++) TF_DeleteTensor(out[j]);
    CHECK(atomic_load(&g_freed) == want, "freed while TensorFlow still held the buffers");
    tfq_tf_feed_clear(feed);
    want += 2;
    CHECK(atomic_load(&g_freed) == want, "batch %d: %ld freed, want %ld", i, atomic_load(&g_freed),
          want);
  }
  expect_freed(want, "mode A, 200 batches, local session:");

  /* Error path: an int32 x fed to a float placeholder; TF_SessionRun fails. */
  for (int i = 0; i < N; i++) {
    tfq_tuple *b = make_batch(5, 0);
    TF_Tensor *out[3] = {NULL, NULL, NULL};
    tfq_code c = tfq_tf_feed_run(feed, sess, b, fetch, out, 3, NULL, 0, st);
    CHECK(c == TFQ_INVALID_ARGUMENT, "dtype error expected, got %s", tfq_code_name(c));
    if (i == 0)
      printf("ownership: refused feed -> %s \"%.90s\"\n", tfq_code_name(c), tfq_status_message(st));
    tfq_tuple_free(b);
    want += 2;
  }
  expect_freed(want, "mode A, 200 refused batches (dtype error):");

  /* Misaligned buffers: TF_NewTensor copies and runs the deallocator at once. */
  for (int i = 0; i < N; i++) {
    tfq_tuple *b = make_batch(4, 1);
    TF_Tensor *out[3];
    CHECK_OK(tfq_tf_feed_run(feed, sess, b, fetch, out, 3, NULL, 0, st), st);
    for (int j = 0; j < 3; j++) TF_DeleteTensor(out[j]);
    tfq_tuple_free(b);
    want += 2;
  }
  expect_freed(want, "mode A, 200 misaligned batches (copied):");
  tfq_tf_feed_free(feed);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteGraph(g);

  /* Mode B over gRPC: enqueue_many into a queue on an in-process server, drained by size. */
  char cluster[64];
  snprintf(cluster, sizeof cluster, "local=127.0.0.1:%d", tft_free_port());
  tfq_tf_server *srv;
  CHECK_OK(tfq_tf_server_new(cluster, "local", 0, &srv, st), st);
  tfq_spec *spec;
  int64_t d4[1] = {4};
  CHECK_OK(tfq_spec_new(&spec, st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_FLOAT, d4, 1, "x", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_INT64, NULL, 0, "k", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st), st);
  tfq_tf_queue_options *o;
  CHECK_OK(tfq_tf_queue_options_new(&o, st), st);
  CHECK_OK(tfq_tf_queue_options_set_target(o, tfq_tf_server_target(srv), st), st);
  CHECK_OK(tfq_tf_queue_options_set_device(o, "/job:local/task:0", st), st);
  CHECK_OK(tfq_tf_queue_options_set_shared_name(o, "own_q", st), st);
  tfq_tf_queue *q;
  CHECK_OK(tfq_tf_queue_open(spec, o, &q, st), st);
  tfq_tf_queue_options_free(o);
  for (int i = 0; i < N; i++) {
    tfq_tuple *b = make_batch(4, 0);
    CHECK_OK(tfq_tf_queue_enqueue_many(q, b, st), st);
    tfq_tuple_free(b);
    want += 2;
  }
  int64_t size;
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == (int64_t)N * B, "size %lld", (long long)size);
  CHECK_OK(tfq_tf_queue_close(q, 0, st), st);
  /* After close: enqueues fail, buffers still released once. */
  for (int i = 0; i < N; i++) {
    tfq_tuple *b = make_batch(4, 0);
    CHECK(tfq_tf_queue_enqueue_many(q, b, st) == TFQ_CANCELLED, "closed");
    tfq_tuple_free(b);
    want += 2;
  }
  tfq_tf_queue_free(q);
  expect_freed(want, "mode B, 200 + 200 refused batches over gRPC:");
  tfq_spec_free(spec);
  tfq_tf_server_free(srv);
  TF_DeleteStatus(s);
  tfq_status_free(st);
  printf("ownership: PASS (%ld deallocator runs, each buffer exactly once)\n", want);
  return 0;
}
