/* The probe of tf-c-api.md 4.8, kept as a test: TF_Version, an in-process gRPC server, sessions on
 * a local and a grpc:// target, a shared-name queue seen by two handles, and the mapping of
 * TensorFlow's errors to tfq codes. */
#include <string.h>

#include "tf_test_util.h"

static tfq_spec *spec_f2(void) {
  tfq_spec *sp;
  int64_t d[1] = {2};
  CHECK(tfq_spec_new(&sp, NULL) == TFQ_OK, "spec");
  CHECK(tfq_spec_add(sp, TFQ_FLOAT, d, 1, "x", NULL) == TFQ_OK, "spec x");
  CHECK(tfq_spec_add(sp, TFQ_STRING, NULL, 0, "s", NULL) == TFQ_OK, "spec s");
  return sp;
}

static tfq_tuple *batch_f2(int64_t n) {
  tfq_tuple *b;
  tfq_tensor *x, *s;
  int64_t dx[2] = {n, 2}, ds[1] = {n};
  CHECK(tfq_tuple_new(2, &b, NULL) == TFQ_OK, "tuple");
  CHECK(tfq_tensor_new(TFQ_FLOAT, dx, 2, &x, NULL) == TFQ_OK, "x");
  CHECK(tfq_tensor_new(TFQ_STRING, ds, 1, &s, NULL) == TFQ_OK, "s");
  float *p = tfq_tensor_data(x);
  for (int64_t i = 0; i < 2 * n; i++) p[i] = (float)i;
  for (int64_t i = 0; i < n; i++)
    CHECK(tfq_tensor_set_string(s, i, "a string longer than twenty-two bytes", 37, NULL) == TFQ_OK,
          "set_string");
  tfq_tuple_set_take(b, 0, x);
  tfq_tuple_set_take(b, 1, s);
  return b;
}

static tfq_tf_queue *open_q(const char *target, const char *device, const char *name,
                            int64_t capacity, int64_t timeout_ms, tfq_code *code, tfq_status *st) {
  tfq_tf_queue_options *o;
  CHECK(tfq_tf_queue_options_new(&o, NULL) == TFQ_OK, "options");
  CHECK(tfq_tf_queue_options_set_target(o, target, NULL) == TFQ_OK, "target");
  CHECK(tfq_tf_queue_options_set_device(o, device, NULL) == TFQ_OK, "device");
  CHECK(tfq_tf_queue_options_set_shared_name(o, name, NULL) == TFQ_OK, "name");
  tfq_tf_queue_options_set_capacity(o, capacity);
  tfq_tf_queue_options_set_timeout_ms(o, timeout_ms);
  tfq_spec *sp = spec_f2();
  tfq_tf_queue *q = NULL;
  *code = tfq_tf_queue_open(sp, o, &q, st);
  tfq_spec_free(sp);
  tfq_tf_queue_options_free(o);
  return q;
}

static void exercise(const char *what, const char *target, const char *device) {
  tfq_status *st = tfq_status_new();
  tfq_code c;
  tfq_tf_queue *q = open_q(target, device, "probe_q", 100, 0, &c, st);
  printf("probe: session on %s (%s): %s %s\n", what, target ? target : "in-process",
         tfq_code_name(c), tfq_status_message(st));
  CHECK(c == TFQ_OK, "open on %s", what);
  tfq_tuple *b = batch_f2(7);
  CHECK_OK(tfq_tf_queue_enqueue_many(q, b, st), st);
  int64_t size;
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == 7, "size %lld", (long long)size);

  /* A second handle on the same shared name sees the same queue (direct sessions each have
   * their own devices and resources, so only over a server). */
  tfq_tf_queue *q2 = target ? open_q(target, device, "probe_q", 100, 0, &c, st) : q;
  CHECK(c == TFQ_OK, "second open: %s", tfq_status_message(st));
  CHECK_OK(tfq_tf_queue_size(q2, &size, st), st);
  CHECK(size == 7, "shared size %lld", (long long)size);

  /* Capacity mismatch: TF's message, mapped to INVALID_ARGUMENT. */
  if (target) {
    tfq_tf_queue *q3 = open_q(target, device, "probe_q", 50, 0, &c, st);
    CHECK(c == TFQ_OK, "third open: %s", tfq_status_message(st));
    c = tfq_tf_queue_size(q3, &size, st);
    printf("probe: capacity mismatch -> %s \"%s\"\n", tfq_code_name(c), tfq_status_message(st));
    CHECK(c == TFQ_INVALID_ARGUMENT && strstr(tfq_status_message(st), "capacity"), "mismatch");
    tfq_tf_queue_free(q3);
  }

  CHECK_OK(tfq_tf_queue_close(q2, 0, st), st);
  c = tfq_tf_queue_enqueue_many(q, b, st);
  printf("probe: enqueue after close -> %s \"%s\"\n", tfq_code_name(c), tfq_status_message(st));
  CHECK(c == TFQ_CANCELLED && strstr(tfq_status_message(st), "is closed"), "closed");
  c = tfq_tf_queue_close(q, 0, st);
  CHECK(c == TFQ_CANCELLED && strstr(tfq_status_message(st), "already closed"), "twice: %s",
        tfq_status_message(st));
  CHECK_OK(tfq_tf_queue_close(q, 1, st), st); /* cancelling close of a closed queue: OK */
  tfq_tuple_free(b);
  if (q2 != q) tfq_tf_queue_free(q2);
  tfq_tf_queue_free(q);
  tfq_status_free(st);
}

int main(void) {
  printf("probe: TF_Version %s\n", tfq_tf_version());
  exercise("a direct session", NULL, NULL);

  tfq_status *st = tfq_status_new();
  char cluster[64];
  int port = tft_free_port();
  snprintf(cluster, sizeof cluster, "local=127.0.0.1:%d", port);
  tfq_tf_server *srv;
  CHECK_OK(tfq_tf_server_new(cluster, "local", 0, &srv, st), st);
  printf("probe: TF_NewServer + TF_ServerStart: OK, target %s\n", tfq_tf_server_target(srv));
  exercise("the in-process server (GrpcSession)", tfq_tf_server_target(srv), "/job:local/task:0");

  /* Bad cluster strings. */
  tfq_tf_server *bad;
  CHECK(tfq_tf_server_new("local", "local", 0, &bad, st) == TFQ_INVALID_ARGUMENT, "syntax");
  CHECK(tfq_tf_server_new(cluster, "ps", 0, &bad, st) == TFQ_INVALID_ARGUMENT, "job");

  /* A target where nobody listens: a TensorFlow error mapped to a tfq code, in bounded time. */
  char dead[64];
  snprintf(dead, sizeof dead, "grpc://127.0.0.1:%d", tft_free_port());
  tfq_code c;
  tfq_tf_queue *q = open_q(dead, "/job:ps/task:0", "q", 10, 2000, &c, st);
  if (c == TFQ_OK) {
    tfq_tuple *b = batch_f2(1);
    c = tfq_tf_queue_enqueue_many(q, b, st);
    tfq_tuple_free(b);
  }
  printf("probe: dead target -> %s \"%.120s\"\n", tfq_code_name(c), tfq_status_message(st));
  CHECK(c != TFQ_OK, "dead target accepted");
  tfq_tf_queue_free(q);
  tfq_tf_server_free(srv);
  tfq_status_free(st);
  printf("probe: PASS\n");
  return 0;
}
