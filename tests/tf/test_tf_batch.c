/* Batch elements (distributed-feeding.md 4.2) and the run timeout of tfq_tf_queue:
 *  - the bridge's checks of a batch element (component count, NULL, dtype, rank 0, dim 0 shared,
 *    row shapes), each an INVALID_ARGUMENT naming the component; enqueue_many refused
 *    (FAILED_PRECONDITION) on a batch queue; the open-time refusals;
 *  - a zero-row batch is not sent; the queue counts batches, not rows;
 *  - what a TensorFlow client dequeues (QueueDequeueV2 on a second session through an in-process
 *    server): the whole batch as one element, every value in order, also for an unbatched scalar
 *    component and a short last batch;
 *  - the QueueRunner step in batch mode (a short last element, the TF queue closed at the end);
 *  - the options' timeout applies to enqueue runs: a full queue gives DEADLINE_EXCEEDED after
 *    about timeout_ms, in both element modes, over gRPC. */
#include <string.h>
#include <tensorflow/c/tf_tstring.h>
#include <time.h>

#include "tf_test_util.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spec of the rows: id int64 [], x float [4], s string []; `slot` prepends an int32 component. */
static tfq_spec *row_spec(int slot) {
  tfq_spec *sp;
  int64_t d4[1] = {4};
  CHECK(tfq_spec_new(&sp, NULL) == TFQ_OK, "spec");
  if (slot) CHECK(tfq_spec_add(sp, TFQ_INT32, NULL, 0, "slot", NULL) == TFQ_OK, "slot");
  CHECK(tfq_spec_add(sp, TFQ_INT64, NULL, 0, "id", NULL) == TFQ_OK, "id");
  CHECK(tfq_spec_add(sp, TFQ_FLOAT, d4, 1, "x", NULL) == TFQ_OK, "x");
  CHECK(tfq_spec_add(sp, TFQ_STRING, NULL, 0, "s", NULL) == TFQ_OK, "s");
  return sp;
}

static tfq_tensor *new_tensor(tfq_dtype dt, const int64_t *dims, int rank) {
  tfq_tensor *t;
  CHECK(tfq_tensor_new(dt, dims, rank, &t, NULL) == TFQ_OK, "tensor");
  return t;
}

/* Rows first..first+b-1: id = i, x = (i, i+.25, i+.5, i+.75), s = "row<i>"; with `slot` an int32
 * scalar 7 in front. */
static tfq_tuple *rows(int64_t first, int64_t b, int slot) {
  tfq_tuple *t;
  size_t k = slot ? 4 : 3, c = 0;
  CHECK(tfq_tuple_new(k, &t, NULL) == TFQ_OK, "tuple");
  if (slot) {
    tfq_tensor *sl = new_tensor(TFQ_INT32, NULL, 0);
    *(int32_t *)tfq_tensor_data(sl) = 7;
    tfq_tuple_set_take(t, c++, sl);
  }
  int64_t d1[1] = {b}, d2[2] = {b, 4};
  tfq_tensor *id = new_tensor(TFQ_INT64, d1, 1), *x = new_tensor(TFQ_FLOAT, d2, 2),
             *s = new_tensor(TFQ_STRING, d1, 1);
  for (int64_t i = 0; i < b; i++) {
    ((int64_t *)tfq_tensor_data(id))[i] = first + i;
    for (int j = 0; j < 4; j++)
      ((float *)tfq_tensor_data(x))[4 * i + j] = (float)(first + i) + j * .25f;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "row%lld", (long long)(first + i));
    CHECK(tfq_tensor_set_string(s, i, buf, (size_t)n, NULL) == TFQ_OK, "set_string");
  }
  tfq_tuple_set_take(t, c++, id);
  tfq_tuple_set_take(t, c++, x);
  tfq_tuple_set_take(t, c, s);
  return t;
}

static tfq_tf_queue_options *options(const char *target, const char *device, const char *name,
                                     tfq_tf_element e, int64_t capacity, int64_t timeout_ms) {
  tfq_tf_queue_options *o;
  CHECK(tfq_tf_queue_options_new(&o, NULL) == TFQ_OK, "options");
  CHECK(tfq_tf_queue_options_set_target(o, target, NULL) == TFQ_OK, "target");
  CHECK(tfq_tf_queue_options_set_device(o, device, NULL) == TFQ_OK, "device");
  CHECK(tfq_tf_queue_options_set_shared_name(o, name, NULL) == TFQ_OK, "name");
  tfq_tf_queue_options_set_element(o, e);
  tfq_tf_queue_options_set_capacity(o, capacity);
  tfq_tf_queue_options_set_timeout_ms(o, timeout_ms);
  return o;
}

static tfq_tf_queue *open_q(tfq_tf_queue_options *o, const tfq_spec *sp, tfq_status *st) {
  tfq_tf_queue *q = NULL;
  CHECK_OK(tfq_tf_queue_open(sp, o, &q, st), st);
  tfq_tf_queue_options_free(o);
  return q;
}

/* Expects INVALID_ARGUMENT from a batch enqueue, with `want` in the message. */
static void enqueue_bad(tfq_tf_queue *q, tfq_tuple *b, const char *want, tfq_status *st) {
  tfq_code c = tfq_tf_queue_enqueue_batch(q, b, st);
  printf("batch: refused -> %s \"%s\"\n", tfq_code_name(c), tfq_status_message(st));
  CHECK(c == TFQ_INVALID_ARGUMENT && strstr(tfq_status_message(st), want), "want '%s'", want);
  tfq_tuple_free(b);
}

static void test_checks(void) {
  tfq_status *st = tfq_status_new();
  tfq_spec *sp = row_spec(0);
  tfq_tf_queue *q = open_q(options(NULL, NULL, "checks", TFQ_TF_ELEMENT_BATCH, 4, 0), sp, st);
  CHECK(tfq_tf_queue_element(q) == TFQ_TF_ELEMENT_BATCH, "element");

  /* dim 0 differs */
  tfq_tuple *b = rows(0, 3, 0);
  int64_t d1[1] = {2};
  tfq_tuple_set_take(b, 2, new_tensor(TFQ_STRING, d1, 1));
  enqueue_bad(q, b, "component 2 ('s') has 2 rows, component 0 ('id') has 3", st);
  /* rank 0 */
  b = rows(0, 3, 0);
  tfq_tuple_set_take(b, 0, new_tensor(TFQ_INT64, NULL, 0));
  enqueue_bad(q, b, "component 0 ('id') is a scalar", st);
  /* row shape */
  b = rows(0, 3, 0);
  int64_t d35[2] = {3, 5};
  tfq_tuple_set_take(b, 1, new_tensor(TFQ_FLOAT, d35, 2));
  enqueue_bad(q, b, "component 1 ('x') has shape [3,5], expected [?,4]", st);
  /* dtype */
  b = rows(0, 3, 0);
  int64_t d3[1] = {3};
  tfq_tuple_set_take(b, 0, new_tensor(TFQ_INT32, d3, 1));
  enqueue_bad(q, b, "component 0 ('id') is int32, the queue's is int64", st);
  /* count and NULL */
  tfq_tuple *two;
  CHECK(tfq_tuple_new(2, &two, NULL) == TFQ_OK, "tuple");
  enqueue_bad(q, two, "expected 3 components, got 2", st);
  tfq_tuple *holes;
  CHECK(tfq_tuple_new(3, &holes, NULL) == TFQ_OK, "tuple");
  enqueue_bad(q, holes, "component 0 ('id') is not set", st);

  /* enqueue_many is for rows. */
  b = rows(0, 3, 0);
  tfq_code c = tfq_tf_queue_enqueue_many(q, b, st);
  CHECK(c == TFQ_FAILED_PRECONDITION && strstr(tfq_status_message(st), "enqueue_batch"),
        "enqueue_many on a batch queue: %s %s", tfq_code_name(c), tfq_status_message(st));
  tfq_tuple_free(b);

  /* Zero rows: OK, nothing sent; then two real batches count as 2 elements. */
  int64_t size = -1;
  b = rows(0, 0, 0);
  CHECK_OK(tfq_tf_queue_enqueue_batch(q, b, st), st);
  tfq_tuple_free(b);
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == 0, "a zero-row batch was sent (size %lld)", (long long)size);
  for (int i = 0; i < 2; i++) {
    b = rows(10 * i, 5, 0);
    CHECK_OK(tfq_tf_queue_enqueue_batch(q, b, st), st);
    tfq_tuple_free(b);
  }
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == 2, "size %lld, want 2 batches", (long long)size);
  tfq_tf_queue_free(q);

  /* Open-time refusals. */
  struct {
    tfq_tf_element e;
    tfq_queue_kind kind;
    uint64_t mask;
    const char *want;
  } bad[] = {
      {(tfq_tf_element)7, TFQ_QUEUE_FIFO, 0, "element mode"},
      {TFQ_TF_ELEMENT_BATCH, TFQ_QUEUE_PADDING_FIFO, 0, "PaddingFIFOQueue"},
      {TFQ_TF_ELEMENT_ROWS, TFQ_QUEUE_FIFO, 1, "only with batch elements"},
      {TFQ_TF_ELEMENT_BATCH, TFQ_QUEUE_FIFO, 7, "at least one batched"},
      {TFQ_TF_ELEMENT_BATCH, TFQ_QUEUE_FIFO, 8, "beyond the 3"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tfq_tf_queue_options *o = options(NULL, NULL, "bad", bad[i].e, 4, 0);
    tfq_tf_queue_options_set_kind(o, bad[i].kind);
    tfq_tf_queue_options_set_unbatched(o, bad[i].mask);
    tfq_tf_queue *qq = (tfq_tf_queue *)st;
    c = tfq_tf_queue_open(sp, o, &qq, st);
    CHECK(c == TFQ_INVALID_ARGUMENT && qq == NULL && strstr(tfq_status_message(st), bad[i].want),
          "open %zu: %s '%s'", i, tfq_code_name(c), tfq_status_message(st));
    tfq_tf_queue_options_free(o);
  }
  /* Rows mode still refuses partial shapes; batch mode takes them. */
  tfq_spec *partial;
  int64_t dq[1] = {TFQ_UNKNOWN_DIM};
  CHECK(tfq_spec_new(&partial, NULL) == TFQ_OK, "spec");
  CHECK(tfq_spec_add(partial, TFQ_FLOAT, dq, 1, NULL, NULL) == TFQ_OK, "spec");
  tfq_tf_queue_options *o = options(NULL, NULL, "partial", TFQ_TF_ELEMENT_ROWS, 4, 0);
  tfq_tf_queue *qq = NULL;
  size = -1;
  CHECK_OK(tfq_tf_queue_open(partial, o, &qq, st), st); /* TF refuses when the queue op runs */
  c = tfq_tf_queue_size(qq, &size, st);
  printf("batch: rows mode, partial shape -> %s \"%.80s\"\n", tfq_code_name(c),
         tfq_status_message(st));
  CHECK(c == TFQ_INVALID_ARGUMENT, "rows, partial shape: %s", tfq_code_name(c));
  tfq_tf_queue_free(qq);
  tfq_tf_queue_options_set_element(o, TFQ_TF_ELEMENT_BATCH);
  CHECK_OK(tfq_tf_queue_open(partial, o, &qq, st), st);
  CHECK_OK(tfq_tf_queue_size(qq, &size, st), st);
  tfq_tf_queue_free(qq);
  tfq_tf_queue_options_free(o);
  tfq_spec_free(partial);
  tfq_spec_free(sp);
  tfq_status_free(st);
}

/* A TensorFlow client of the batch queue: the FIFOQueueV2 with the same attributes and a
 * QueueDequeueV2, on its own session. */
typedef struct consumer {
  TF_Graph *g;
  TF_Session *s;
  TF_Operation *deq;
  int k;
} consumer;

static void consumer_open(consumer *cn, const char *target, const char *device, const char *name,
                          const TF_DataType *types, int k, int64_t capacity) {
  TF_Status *s = TF_NewStatus();
  cn->g = TF_NewGraph();
  cn->k = k;
  TF_OperationDescription *d = TF_NewOperation(cn->g, "FIFOQueueV2", "q");
  TF_SetDevice(d, device);
  TF_SetAttrTypeList(d, "component_types", types, k);
  TF_SetAttrShapeList(d, "shapes", NULL, NULL, 0);
  TF_SetAttrInt(d, "capacity", capacity);
  TF_SetAttrString(d, "shared_name", name, strlen(name));
  TF_Operation *q = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  d = TF_NewOperation(cn->g, "QueueDequeueV2", "deq");
  TF_SetDevice(d, device);
  TF_AddInput(d, (TF_Output){q, 0});
  TF_SetAttrTypeList(d, "component_types", types, k);
  cn->deq = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_SetTarget(so, target);
  cn->s = TF_NewSession(cn->g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteSessionOptions(so);
  TF_DeleteStatus(s);
}

/* One dequeue(): TF_OK and out[0..k) set, or the TF code (OUT_OF_RANGE at the end). */
static TF_Code consumer_dequeue(consumer *cn, TF_Tensor **out) {
  TF_Output outs[8];
  for (int i = 0; i < cn->k; i++) outs[i] = (TF_Output){cn->deq, i};
  TF_Status *s = TF_NewStatus();
  TF_SessionRun(cn->s, NULL, NULL, NULL, 0, outs, out, cn->k, NULL, 0, NULL, s);
  TF_Code c = TF_GetCode(s);
  if (c != TF_OK) printf("batch: dequeue -> %d %.100s\n", (int)c, TF_Message(s));
  TF_DeleteStatus(s);
  return c;
}

static void consumer_close(consumer *cn) {
  TF_Status *s = TF_NewStatus();
  TF_CloseSession(cn->s, s);
  TF_DeleteSession(cn->s, s);
  TF_DeleteGraph(cn->g);
  TF_DeleteStatus(s);
}

/* Checks that `v` (id, x, s) holds rows first..first+b-1. */
static void check_rows(TF_Tensor *const *v, int64_t first, int64_t b) {
  CHECK(TF_NumDims(v[0]) == 1 && TF_Dim(v[0], 0) == b, "id shape, want [%lld]", (long long)b);
  CHECK(TF_NumDims(v[1]) == 2 && TF_Dim(v[1], 0) == b && TF_Dim(v[1], 1) == 4, "x shape");
  CHECK(TF_NumDims(v[2]) == 1 && TF_Dim(v[2], 0) == b, "s shape");
  const int64_t *id = TF_TensorData(v[0]);
  const float *x = TF_TensorData(v[1]);
  const TF_TString *s = TF_TensorData(v[2]);
  for (int64_t i = 0; i < b; i++) {
    CHECK(id[i] == first + i, "id[%lld] = %lld", (long long)i, (long long)id[i]);
    for (int j = 0; j < 4; j++) CHECK(x[4 * i + j] == (float)(first + i) + j * .25f, "x");
    char want[32];
    int n = snprintf(want, sizeof want, "row%lld", (long long)(first + i));
    CHECK(TF_StringGetSize(&s[i]) == (size_t)n &&
              memcmp(TF_StringGetDataPointer(&s[i]), want, (size_t)n) == 0,
          "s[%lld]", (long long)i);
  }
}

static void test_dequeue(const char *target, const char *device) {
  tfq_status *st = tfq_status_new();
  tfq_spec *sp = row_spec(0);
  tfq_tf_queue *q = open_q(options(target, device, "deq", TFQ_TF_ELEMENT_BATCH, 8, 0), sp, st);
  const int64_t sizes[] = {5, 0, 5, 3};
  int64_t first = 0;
  for (size_t i = 0; i < 4; i++) {
    tfq_tuple *b = rows(first, sizes[i], 0);
    CHECK_OK(tfq_tf_queue_enqueue_batch(q, b, st), st);
    tfq_tuple_free(b);
    first += sizes[i];
  }
  CHECK_OK(tfq_tf_queue_close(q, 0, st), st);
  consumer cn;
  TF_DataType types[3] = {TF_INT64, TF_FLOAT, TF_STRING};
  consumer_open(&cn, target, device, "deq", types, 3, 8);
  first = 0;
  int got = 0;
  for (size_t i = 0; i < 4; i++) {
    if (sizes[i] == 0) continue;
    TF_Tensor *v[3];
    CHECK(consumer_dequeue(&cn, v) == TF_OK, "dequeue %zu", i);
    check_rows(v, first, sizes[i]);
    for (int j = 0; j < 3; j++) TF_DeleteTensor(v[j]);
    first += sizes[i];
    got++;
  }
  TF_Tensor *v[3];
  CHECK(consumer_dequeue(&cn, v) == TF_OUT_OF_RANGE, "OUT_OF_RANGE after %d batches", got);
  printf("batch: dequeued %d batches (5, 5, 3 rows) in order, then OUT_OF_RANGE\n", got);
  consumer_close(&cn);
  tfq_tf_queue_free(q);

  /* An unbatched int32 scalar in front (4.2's ack slot). */
  tfq_spec *sp4 = row_spec(1);
  tfq_tf_queue_options *o = options(target, device, "slot", TFQ_TF_ELEMENT_BATCH, 8, 0);
  tfq_tf_queue_options_set_unbatched(o, 1);
  q = open_q(o, sp4, st);
  tfq_tuple *b = rows(100, 4, 1);
  CHECK_OK(tfq_tf_queue_enqueue_batch(q, b, st), st);
  tfq_tuple_free(b);
  b = rows(100, 4, 0); /* 3 components */
  CHECK(tfq_tf_queue_enqueue_batch(q, b, st) == TFQ_INVALID_ARGUMENT, "count");
  tfq_tuple_free(b);
  TF_DataType types4[4] = {TF_INT32, TF_INT64, TF_FLOAT, TF_STRING};
  consumer_open(&cn, target, device, "slot", types4, 4, 8);
  TF_Tensor *v4[4];
  CHECK(consumer_dequeue(&cn, v4) == TF_OK, "dequeue slot");
  CHECK(TF_NumDims(v4[0]) == 0 && *(int32_t *)TF_TensorData(v4[0]) == 7, "slot scalar");
  check_rows(v4 + 1, 100, 4);
  for (int j = 0; j < 4; j++) TF_DeleteTensor(v4[j]);
  consumer_close(&cn);
  tfq_tf_queue_free(q);

  /* The feeder step in batch mode: 10 rows, batch_size 4 -> elements of 4, 4 and 2 rows, then
   * the TF queue is closed. */
  tfq_queue *src;
  CHECK_OK(tfq_fifo_queue_new(sp, -1, "src", &src, st), st);
  b = rows(0, 10, 0);
  CHECK_OK(tfq_queue_enqueue_many(src, b, NULL, TFQ_NO_TIMEOUT, st), st);
  tfq_tuple_free(b);
  CHECK_OK(tfq_queue_close(src, 0, NULL, TFQ_NO_TIMEOUT, st), st);
  q = open_q(options(target, device, "fed", TFQ_TF_ELEMENT_BATCH, 8, 0), sp, st);
  tfq_tf_feeder *f;
  CHECK_OK(tfq_tf_feeder_new(src, 4, q, 1, &f, st), st);
  tfq_code c;
  while ((c = tfq_tf_feeder_step(f, NULL, st)) == TFQ_OK) {
  }
  CHECK(c == TFQ_OUT_OF_RANGE, "feeder end: %s %s", tfq_code_name(c), tfq_status_message(st));
  CHECK(tfq_tf_feeder_rows(f) == 10 && tfq_tf_feeder_batches(f) == 3, "feeder counts %lld %lld",
        (long long)tfq_tf_feeder_rows(f), (long long)tfq_tf_feeder_batches(f));
  CHECK(tfq_tf_queue_is_closed(q), "feeder closed the TF queue");
  consumer_open(&cn, target, device, "fed", types, 3, 8);
  const int64_t fed[] = {4, 4, 2};
  first = 0;
  for (int i = 0; i < 3; i++) {
    TF_Tensor *w[3];
    CHECK(consumer_dequeue(&cn, w) == TF_OK, "dequeue fed %d", i);
    check_rows(w, first, fed[i]);
    for (int j = 0; j < 3; j++) TF_DeleteTensor(w[j]);
    first += fed[i];
  }
  CHECK(consumer_dequeue(&cn, v) == TF_OUT_OF_RANGE, "fed: OUT_OF_RANGE");
  consumer_close(&cn);
  tfq_tf_feeder_free(f);
  tfq_queue_free(src);

  /* A queue with an unbatched component cannot be fed by a feeder. */
  o = options(target, device, "slot2", TFQ_TF_ELEMENT_BATCH, 8, 0);
  tfq_tf_queue_options_set_unbatched(o, 1);
  tfq_tf_queue *qs = open_q(o, sp4, st);
  CHECK_OK(tfq_fifo_queue_new(sp4, -1, "src4", &src, st), st);
  CHECK(tfq_tf_feeder_new(src, 4, qs, 1, &f, st) == TFQ_INVALID_ARGUMENT, "feeder, unbatched");
  tfq_queue_free(src);
  tfq_tf_queue_free(qs);
  tfq_tf_queue_free(q);
  tfq_spec_free(sp4);
  tfq_spec_free(sp);
  tfq_status_free(st);
}

/* A full queue: the second enqueue returns DEADLINE_EXCEEDED after about timeout_ms. */
static void test_timeout(const char *target, const char *device, tfq_tf_element e) {
  tfq_status *st = tfq_status_new();
  tfq_spec *sp = row_spec(0);
  const char *name = e == TFQ_TF_ELEMENT_BATCH ? "full_batch" : "full_rows";
  /* capacity 1: one batch element, or one row */
  tfq_tf_queue *q = open_q(options(target, device, name, e, 1, 400), sp, st);
  tfq_tuple *b = rows(0, 1, 0);
  CHECK_OK(tfq_tf_queue_enqueue_batch(q, b, st), st);
  double t0 = now_s();
  tfq_code c = tfq_tf_queue_enqueue_batch(q, b, st);
  double dt = now_s() - t0;
  printf("batch: enqueue into a full %s queue, timeout 400 ms -> %s after %.2f s \"%.80s\"\n",
         e == TFQ_TF_ELEMENT_BATCH ? "batch" : "rows", tfq_code_name(c), dt,
         tfq_status_message(st));
  CHECK(c == TFQ_DEADLINE_EXCEEDED, "full queue: %s", tfq_code_name(c));
  CHECK(dt >= 0.3 && dt < 20, "timed out after %.2f s", dt);
  int64_t size = -1;
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == 1, "size %lld after the timeout", (long long)size);
  tfq_tuple_free(b);
  tfq_tf_queue_free(q);
  tfq_spec_free(sp);
  tfq_status_free(st);
}

int main(void) {
  test_checks();
  printf("batch: checks OK\n");

  tfq_status *st = tfq_status_new();
  char cluster[64];
  snprintf(cluster, sizeof cluster, "worker=127.0.0.1:%d", tft_free_port());
  tfq_tf_server *srv;
  CHECK_OK(tfq_tf_server_new(cluster, "worker", 0, &srv, st), st);
  const char *target = tfq_tf_server_target(srv);
  test_dequeue(target, "/job:worker/task:0");
  test_timeout(target, "/job:worker/task:0", TFQ_TF_ELEMENT_BATCH);
  test_timeout(target, "/job:worker/task:0", TFQ_TF_ELEMENT_ROWS);
  /* And on a direct session. */
  test_timeout(NULL, NULL, TFQ_TF_ELEMENT_BATCH);
  tfq_tf_server_free(srv);
  tfq_status_free(st);
  printf("batch: PASS\n");
  return 0;
}
