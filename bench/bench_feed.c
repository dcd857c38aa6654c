/* The tfq side of bench_feed.py: pushes --records rows of (id int64, x float[D], y float) into a
 * TensorFlow FIFOQueue by shared name on a cluster's ps, the way the distributed example does
 * (a tfq queue of ready batches -> QueueRunner threads running tfq_tf_feeder_step ->
 * QueueEnqueueManyV2 over gRPC), and prints one line "tfq_feeder records=N seconds=T rate=R".
 *
 *   bench_feed --target grpc://127.0.0.1:PORT [--device /job:ps/task:0] [--shared-name q]
 *              [--records 200000] [--batch 1000] [--dim 4] [--threads 2]
 *   bench_feed --host-port PORT ...   hosts /job:ps/task:0 itself (TF_NewServer, topology B of
 *                                     docs/tf-bridge.md) and feeds its own in-process queue */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/coord.h>
#include <tfq/queue.h>
#include <tfq/tf.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_feed: %s: %s\n", what, tfq_status_message(st));
  return 1;
}

int main(int argc, char **argv) {
  const char *target = NULL, *device = "/job:ps/task:0", *name = "bench_tfq";
  int host_port = 0;
  int64_t records = 200000, batch = 1000;
  int dim = 4, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--target"))
      target = argv[i + 1];
    else if (!strcmp(argv[i], "--device"))
      device = argv[i + 1];
    else if (!strcmp(argv[i], "--shared-name"))
      name = argv[i + 1];
    else if (!strcmp(argv[i], "--records"))
      records = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--batch"))
      batch = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--dim"))
      dim = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--host-port"))
      host_port = atoi(argv[i + 1]);
  }
  tfq_status *st = tfq_status_new();
  tfq_tf_server *srv = NULL;
  if (host_port > 0) {
    char cluster[64];
    snprintf(cluster, sizeof cluster, "ps=127.0.0.1:%d", host_port);
    if (tfq_tf_server_new(cluster, "ps", 0, &srv, st)) return die("server", st);
    target = tfq_tf_server_target(srv);
  }
  if (!target || batch < 1 || records < 1 || dim < 1 || threads < 1) {
    fprintf(stderr, "usage: bench_feed --target grpc://HOST:PORT [options]\n");
    return 2;
  }
  tfq_spec *spec;
  int64_t d1[1] = {dim};
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, d1, 1, "x", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "y", st))
    return die("spec", st);

  /* The source: every row already in a tfq queue (so the figure is the push rate). */
  tfq_queue *src;
  if (tfq_fifo_queue_new(spec, -1, "bench_src", &src, st)) return die("queue", st);
  for (int64_t off = 0; off < records; off += batch) {
    int64_t n = records - off < batch ? records - off : batch;
    int64_t dn[1] = {n}, dx[2] = {n, dim};
    tfq_tuple *b;
    tfq_tensor *id, *x, *y;
    if (tfq_tuple_new(3, &b, st) || tfq_tensor_new(TFQ_INT64, dn, 1, &id, st) ||
        tfq_tensor_new(TFQ_FLOAT, dx, 2, &x, st) || tfq_tensor_new(TFQ_FLOAT, dn, 1, &y, st))
      return die("tensors", st);
    int64_t *pid = tfq_tensor_data(id);
    float *px = tfq_tensor_data(x), *py = tfq_tensor_data(y);
    for (int64_t i = 0; i < n; i++) {
      pid[i] = off + i;
      for (int j = 0; j < dim; j++) px[i * dim + j] = (float)((off + i + j) % 1000) / 500.0f - 1;
      py[i] = px[i * dim];
    }
    tfq_tuple_set_take(b, 0, id);
    tfq_tuple_set_take(b, 1, x);
    tfq_tuple_set_take(b, 2, y);
    if (tfq_queue_enqueue_many(src, b, NULL, TFQ_NO_TIMEOUT, st)) return die("fill", st);
    tfq_tuple_free(b);
  }
  if (tfq_queue_close(src, 0, NULL, TFQ_NO_TIMEOUT, st)) return die("close", st);

  tfq_tf_queue_options *o;
  tfq_tf_queue *q;
  if (tfq_tf_queue_options_new(&o, st) || tfq_tf_queue_options_set_target(o, target, st) ||
      tfq_tf_queue_options_set_device(o, device, st) ||
      tfq_tf_queue_options_set_shared_name(o, name, st) || tfq_tf_queue_open(spec, o, &q, st))
    return die("open the TensorFlow queue", st);
  tfq_tf_queue_options_free(o);
  /* Warm-up: the first run builds the ps-side graph. */
  int64_t size;
  if (tfq_tf_queue_size(q, &size, st)) return die("size", st);

  tfq_coord *coord;
  tfq_runner *runner;
  tfq_tf_feeder *f;
  if (tfq_coord_new(&coord, st) || tfq_runner_new(src, &runner, st) ||
      tfq_tf_feeder_new(src, batch, q, threads, &f, st))
    return die("runner", st);
  for (int i = 0; i < threads; i++)
    if (tfq_runner_add_op(runner, tfq_tf_feeder_step, f, "push", st)) return die("op", st);
  double t0 = now();
  if (tfq_runner_start(runner, coord, 0, st)) return die("start", st);
  tfq_code c = tfq_coord_join(coord, 10000000, 0, st);
  double dt = now() - t0;
  if (c) return die("join", st);
  if (tfq_tf_queue_size(q, &size, st)) return die("size", st);
  if (size != records) {
    fprintf(stderr, "bench_feed: TF queue holds %lld rows, expected %lld\n", (long long)size,
            (long long)records);
    return 1;
  }
  printf("tfq_feeder records=%lld seconds=%.4f rate=%.0f\n", (long long)records, dt,
         (double)records / dt);
  tfq_runner_free(runner);
  tfq_tf_feeder_free(f);
  tfq_tf_queue_free(q);
  tfq_coord_free(coord);
  tfq_queue_free(src);
  tfq_spec_free(spec);
  tfq_tf_server_free(srv);
  tfq_status_free(st);
  return 0;
}
