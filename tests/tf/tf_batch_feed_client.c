/* The C side of tests/tf/tf_batch_feed.py: reads TF_CONFIG (its task is the worker it serves,
 * distributed-feeding.md 1.3), opens the batch-element queue `--name` on that worker's task
 * (/job:worker/task:i over grpc://), enqueues batches of the given row counts (id int64 [b],
 * x float32 [b,4] = id + j/4, s string [b] = "row<id>"; ids consecutive from 0; a 0 is a
 * zero-row batch, which is not sent), closes the queue, then marks `--unit` in the done set
 * "tfq_done" on /job:ps/task:0.  Prints one summary line; exit 0 on success, 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tf.h>

#define DIE(...)                             \
  do {                                       \
    fprintf(stderr, "client: " __VA_ARGS__); \
    fprintf(stderr, "\n");                   \
    exit(1);                                 \
  } while (0)
#define OK_OR_DIE(call, st)                                                     \
  do {                                                                          \
    tfq_code c_ = (call);                                                       \
    if (c_) DIE("%s: %s %s", #call, tfq_code_name(c_), tfq_status_message(st)); \
  } while (0)

static tfq_tuple *make_batch(int64_t first, int64_t b, tfq_status *st) {
  tfq_tuple *t;
  tfq_tensor *id, *x, *s;
  int64_t d1[1] = {b}, d2[2] = {b, 4};
  OK_OR_DIE(tfq_tuple_new(3, &t, st), st);
  OK_OR_DIE(tfq_tensor_new(TFQ_INT64, d1, 1, &id, st), st);
  OK_OR_DIE(tfq_tensor_new(TFQ_FLOAT, d2, 2, &x, st), st);
  OK_OR_DIE(tfq_tensor_new(TFQ_STRING, d1, 1, &s, st), st);
  for (int64_t i = 0; i < b; i++) {
    ((int64_t *)tfq_tensor_data(id))[i] = first + i;
    for (int j = 0; j < 4; j++)
      ((float *)tfq_tensor_data(x))[4 * i + j] = (float)(first + i) + j * .25f;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "row%lld", (long long)(first + i));
    OK_OR_DIE(tfq_tensor_set_string(s, i, buf, (size_t)n, st), st);
  }
  tfq_tuple_set_take(t, 0, id);
  tfq_tuple_set_take(t, 1, x);
  tfq_tuple_set_take(t, 2, s);
  return t;
}

int main(int argc, char **argv) {
  const char *name = "tfq_feed_w0", *sizes = "5";
  int64_t capacity = 2, unit = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--name") == 0)
      name = argv[i + 1];
    else if (strcmp(argv[i], "--capacity") == 0)
      capacity = atoll(argv[i + 1]);
    else if (strcmp(argv[i], "--sizes") == 0)
      sizes = argv[i + 1];
    else if (strcmp(argv[i], "--unit") == 0)
      unit = atoll(argv[i + 1]);
    else
      DIE("unknown flag %s", argv[i]);
  }
  tfq_status *st = tfq_status_new();
  tfq_tf_cluster *cl;
  OK_OR_DIE(tfq_tf_cluster_from_tf_config(NULL, &cl, st), st);
  const char *type, *spec;
  int index;
  tfq_tf_cluster_task(cl, &type, &index);
  if (!type || strcmp(type, "worker") != 0) DIE("TF_CONFIG names no worker task");
  OK_OR_DIE(tfq_tf_cluster_spec_string(cl, &spec, st), st);
  char device[64];
  snprintf(device, sizeof device, "/job:worker/task:%d", index);
  const char *target = tfq_tf_cluster_target(cl, "worker", index);
  printf("client: cluster %s, serving %s at %s\n", spec, device, target);

  tfq_spec *sp;
  int64_t d4[1] = {4};
  OK_OR_DIE(tfq_spec_new(&sp, st), st);
  OK_OR_DIE(tfq_spec_add(sp, TFQ_INT64, NULL, 0, "id", st), st);
  OK_OR_DIE(tfq_spec_add(sp, TFQ_FLOAT, d4, 1, "x", st), st);
  OK_OR_DIE(tfq_spec_add(sp, TFQ_STRING, NULL, 0, "s", st), st);
  tfq_tf_queue_options *o;
  OK_OR_DIE(tfq_tf_queue_options_new(&o, st), st);
  OK_OR_DIE(tfq_tf_queue_options_set_target(o, target, st), st);
  OK_OR_DIE(tfq_tf_queue_options_set_device(o, device, st), st);
  OK_OR_DIE(tfq_tf_queue_options_set_shared_name(o, name, st), st);
  tfq_tf_queue_options_set_element(o, TFQ_TF_ELEMENT_BATCH);
  tfq_tf_queue_options_set_capacity(o, capacity);
  tfq_tf_queue_options_set_timeout_ms(o, 60000);
  tfq_tf_queue *q;
  OK_OR_DIE(tfq_tf_queue_open(sp, o, &q, st), st);

  int64_t first = 0, sent = 0;
  for (const char *p = sizes; *p;) {
    char *end;
    int64_t b = strtoll(p, &end, 10);
    if (end == p || b < 0) DIE("bad --sizes %s", sizes);
    tfq_tuple *t = make_batch(first, b, st);
    OK_OR_DIE(tfq_tf_queue_enqueue_batch(q, t, st), st);
    tfq_tuple_free(t);
    first += b;
    sent += b > 0;
    p = *end == ',' ? end + 1 : end;
  }
  OK_OR_DIE(tfq_tf_queue_close(q, 0, st), st);

  tfq_tf_done *done;
  int64_t ndone = -1;
  OK_OR_DIE(tfq_tf_done_open(tfq_tf_cluster_target(cl, "ps", 0), "/job:ps/task:0", "tfq_done",
                             60000, &done, st),
            st);
  OK_OR_DIE(tfq_tf_done_mark(done, unit, &ndone, st), st);
  printf("client: sent %lld batches, %lld rows, closed '%s'; done set size %lld\n", (long long)sent,
         (long long)first, name, (long long)ndone);
  tfq_tf_done_free(done);
  tfq_tf_queue_free(q);
  tfq_tf_queue_options_free(o);
  tfq_spec_free(sp);
  tfq_tf_cluster_free(cl);
  tfq_status_free(st);
  return 0;
}
