/* The done set (distributed-feeding.md 4.4): a MutableHashTableV2 by shared name on the ps of an
 * in-process server, marked from several handles and threads.
 *  - sequential marks of units 0..3 from 4 handles see 1, 2, 3, 4: exactly one sees U = 4;
 *  - concurrent marks (4 handles, 2 threads each, both threads of handle h marking unit h): every
 *    mark sees a size in [1, 4], at least one sees 4, the count is 4;
 *  - a re-mark of unit 2 (a retried unit) sees 4 and leaves the count at 4; the list is 0..3;
 *  - a late handle (opened after the marks) sees the same table; a fresh name starts empty;
 *  - refusals: a negative unit, an empty name, a table of that name with other dtypes;
 *  - the failed set: a second mark of a unit replaces its message, read back by a graph of the
 *    test's own (LookupTableExportV2); a negative unit and a table of other dtypes refused. */
#include <pthread.h>
#include <string.h>

#include "tf_test_util.h"

#define U 4

static const char *g_target;
static const char *const g_device = "/job:ps/task:0";

static tfq_tf_done *open_done(const char *name, tfq_status *st) {
  tfq_tf_done *d = NULL;
  CHECK_OK(tfq_tf_done_open(g_target, g_device, name, 30000, &d, st), st);
  return d;
}

static void check_list(tfq_tf_done *d, tfq_status *st) {
  int64_t *units = NULL, n = -1;
  CHECK_OK(tfq_tf_done_list(d, &units, &n, st), st);
  CHECK(n == U, "list has %lld units", (long long)n);
  for (int64_t i = 0; i < n; i++) CHECK(units[i] == i, "unit %lld", (long long)units[i]);
  tfq_free(units);
}

static void test_sequential(void) {
  tfq_status *st = tfq_status_new();
  tfq_tf_done *h[U];
  for (int i = 0; i < U; i++) h[i] = open_done("tfq_done_seq", st);
  int64_t n = -1;
  CHECK_OK(tfq_tf_done_count(h[0], &n, st), st);
  CHECK(n == 0, "fresh set has %lld", (long long)n);
  int saw_all = 0;
  for (int u = 0; u < U; u++) {
    int64_t nd = -1;
    CHECK_OK(tfq_tf_done_mark(h[(u + 1) % U], u, &nd, st), st);
    CHECK(nd == u + 1, "mark %d saw %lld", u, (long long)nd);
    saw_all += nd == U;
  }
  CHECK(saw_all == 1, "%d sequential marks saw U", saw_all);
  int64_t nd = -1;
  CHECK_OK(tfq_tf_done_mark(h[3], 2, &nd, st), st); /* a retried unit 2 */
  CHECK(nd == U, "re-mark saw %lld", (long long)nd);
  CHECK_OK(tfq_tf_done_count(h[1], &n, st), st);
  CHECK(n == U, "count %lld after the re-mark", (long long)n);
  check_list(h[2], st);
  for (int i = 0; i < U; i++) tfq_tf_done_free(h[i]);

  /* A late handle sees the same table. */
  tfq_tf_done *late = open_done("tfq_done_seq", st);
  CHECK_OK(tfq_tf_done_count(late, &n, st), st);
  CHECK(n == U, "late handle: %lld", (long long)n);
  tfq_tf_done_free(late);
  printf("done: sequential: marks saw 1..4, exactly one saw 4; re-mark of unit 2 saw 4\n");
  tfq_status_free(st);
}

typedef struct marker {
  tfq_tf_done *d;
  int64_t unit, saw;
  tfq_code code;
  pthread_barrier_t *go;
} marker;

static void *mark_main(void *arg) {
  marker *m = arg;
  tfq_status *st = tfq_status_new();
  pthread_barrier_wait(m->go);
  m->code = tfq_tf_done_mark(m->d, m->unit, &m->saw, st);
  if (m->code) fprintf(stderr, "mark %lld: %s\n", (long long)m->unit, tfq_status_message(st));
  tfq_status_free(st);
  return NULL;
}

static void test_concurrent(void) {
  tfq_status *st = tfq_status_new();
  tfq_tf_done *h[U];
  for (int i = 0; i < U; i++) h[i] = open_done("tfq_done_conc", st);
  int64_t n = -1;
  CHECK_OK(tfq_tf_done_count(h[0], &n, st), st); /* creates the table before the race */
  marker m[2 * U];
  pthread_t th[2 * U];
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, 2 * U);
  for (int i = 0; i < 2 * U; i++) {
    m[i] = (marker){.d = h[i / 2], .unit = i / 2, .saw = -1, .go = &go};
    CHECK(pthread_create(&th[i], NULL, mark_main, &m[i]) == 0, "thread");
  }
  int saw_all = 0;
  for (int i = 0; i < 2 * U; i++) {
    pthread_join(th[i], NULL);
    CHECK(m[i].code == TFQ_OK, "mark %d failed", i);
    CHECK(m[i].saw >= 1 && m[i].saw <= U, "mark %d saw %lld", i, (long long)m[i].saw);
    saw_all += m[i].saw == U;
  }
  pthread_barrier_destroy(&go);
  CHECK(saw_all >= 1, "no concurrent mark saw U");
  CHECK_OK(tfq_tf_done_count(h[3], &n, st), st);
  CHECK(n == U, "count %lld", (long long)n);
  int64_t nd = -1;
  CHECK_OK(tfq_tf_done_mark(h[0], 2, &nd, st), st);
  CHECK(nd == U, "re-mark saw %lld", (long long)nd);
  CHECK_OK(tfq_tf_done_count(h[1], &n, st), st);
  CHECK(n == U, "count %lld after the re-mark", (long long)n);
  check_list(h[2], st);
  printf("done: concurrent: 8 marks of 4 units from 4 handles, %d saw 4; count 4\n", saw_all);
  for (int i = 0; i < U; i++) tfq_tf_done_free(h[i]);
  tfq_status_free(st);
}

/* A MutableHashTableV2 int64 -> `value` by shared name on the ps, made by the test itself. */
static TF_Operation *table_op(TF_Graph *g, const char *name, TF_DataType value, TF_Status *s) {
  TF_OperationDescription *od = TF_NewOperation(g, "MutableHashTableV2", "t");
  TF_SetDevice(od, g_device);
  TF_SetAttrString(od, "shared_name", name, strlen(name));
  TF_SetAttrType(od, "key_dtype", TF_INT64);
  TF_SetAttrType(od, "value_dtype", value);
  TF_Operation *t = TF_FinishOperation(od, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  return t;
}

static void test_refusals(void) {
  tfq_status *st = tfq_status_new();
  tfq_tf_done *d = (tfq_tf_done *)st;
  CHECK(tfq_tf_done_open(g_target, g_device, "", 0, &d, st) == TFQ_INVALID_ARGUMENT && !d,
        "empty name");
  d = open_done("tfq_done_other", st);
  int64_t n = -1;
  CHECK(tfq_tf_done_mark(d, -1, &n, st) == TFQ_INVALID_ARGUMENT, "negative unit");
  CHECK_OK(tfq_tf_done_count(d, &n, st), st);
  CHECK(n == 0, "a fresh name starts empty (%lld)", (long long)n);
  tfq_tf_done_free(d);

  /* A table of the same name with other dtypes (int64 -> float), made by someone else. */
  TF_Graph *g = TF_NewGraph();
  TF_Status *s = TF_NewStatus();
  TF_Operation *t = table_op(g, "tfq_done_typed", TF_FLOAT, s);
  TF_OperationDescription *od = TF_NewOperation(g, "LookupTableSizeV2", "n");
  TF_SetDevice(od, g_device);
  TF_AddInput(od, (TF_Output){t, 0});
  TF_Operation *sz = TF_FinishOperation(od, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_SetTarget(so, g_target);
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_Output out = {sz, 0};
  TF_Tensor *r = NULL;
  TF_SessionRun(sess, NULL, NULL, NULL, 0, &out, &r, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteTensor(r);
  d = open_done("tfq_done_typed", st);
  tfq_code c = tfq_tf_done_mark(d, 0, &n, st);
  printf("done: a float-valued table of that name -> %s \"%.100s\"\n", tfq_code_name(c),
         tfq_status_message(st));
  CHECK(c == TFQ_INVALID_ARGUMENT, "dtype mismatch not reported: %s", tfq_code_name(c));
  tfq_tf_done_free(d);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteSessionOptions(so);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
  tfq_status_free(st);
}

/* The failed set (tfq_tf_done_fail): unit -> message, read back here with LookupTableExportV2
 * through a graph of the test's own, as a worker reads it. */
static void read_failed(const char *name, int64_t *units, char msgs[][64], int64_t *n) {
  TF_Graph *g = TF_NewGraph();
  TF_Status *s = TF_NewStatus();
  TF_Operation *t = table_op(g, name, TF_STRING, s);
  TF_OperationDescription *od = TF_NewOperation(g, "LookupTableExportV2", "x");
  TF_SetDevice(od, g_device);
  TF_AddInput(od, (TF_Output){t, 0});
  TF_SetAttrType(od, "Tkeys", TF_INT64);
  TF_SetAttrType(od, "Tvalues", TF_STRING);
  TF_Operation *x = TF_FinishOperation(od, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_SetTarget(so, g_target);
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_Output outs[2] = {{x, 0}, {x, 1}};
  TF_Tensor *r[2] = {NULL, NULL};
  TF_SessionRun(sess, NULL, NULL, NULL, 0, outs, r, 2, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  *n = TF_Dim(r[0], 0);
  const TF_TString *v = TF_TensorData(r[1]);
  for (int64_t i = 0; i < *n && i < 4; i++) {
    units[i] = ((const int64_t *)TF_TensorData(r[0]))[i];
    snprintf(msgs[i], 64, "%.*s", (int)TF_StringGetSize(&v[i]), TF_StringGetDataPointer(&v[i]));
  }
  TF_DeleteTensor(r[0]);
  TF_DeleteTensor(r[1]);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteSessionOptions(so);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

static void test_failed(void) {
  tfq_status *st = tfq_status_new();
  CHECK_OK(tfq_tf_done_fail(g_target, g_device, "tfq_failed", 3, "first", 30000, st), st);
  CHECK_OK(tfq_tf_done_fail(g_target, g_device, "tfq_failed", 3, "unit 3: a, b", 30000, st), st);
  int64_t units[4], n = -1;
  char msgs[4][64];
  read_failed("tfq_failed", units, msgs, &n);
  CHECK(n == 1 && units[0] == 3 && strcmp(msgs[0], "unit 3: a, b") == 0,
        "failed set: %lld entries, unit %lld '%s'", (long long)n, (long long)units[0], msgs[0]);
  CHECK(tfq_tf_done_fail(g_target, g_device, "tfq_failed", -1, "x", 0, st) == TFQ_INVALID_ARGUMENT,
        "negative unit");
  /* the done set's int64 table under that name: TF's dtype conflict */
  tfq_code c = tfq_tf_done_fail(g_target, g_device, "tfq_done_typed", 0, "x", 30000, st);
  CHECK(c == TFQ_INVALID_ARGUMENT, "dtype mismatch not reported: %s", tfq_code_name(c));
  printf("done: failed set holds unit 3 -> '%s'; a float-valued table -> %s\n", msgs[0],
         tfq_code_name(c));
  tfq_status_free(st);
}

int main(void) {
  tfq_status *st = tfq_status_new();
  char cluster[64];
  snprintf(cluster, sizeof cluster, "ps=127.0.0.1:%d", tft_free_port());
  tfq_tf_server *srv;
  CHECK_OK(tfq_tf_server_new(cluster, "ps", 0, &srv, st), st);
  g_target = tfq_tf_server_target(srv);
  test_sequential();
  test_concurrent();
  test_refusals();
  test_failed();
  tfq_tf_server_free(srv);
  tfq_status_free(st);
  printf("done: PASS\n");
  return 0;
}
