/* A small producer/consumer pipeline over a FIFOQueue, in the shape of the TF1 seed program:
 * two producer threads enqueue_many batches of (features float32[2], label int32) rows, a
 * closer closes the queue when both are done, and the main thread dequeue_up_to(4)s until
 * OUT_OF_RANGE, printing each minibatch.
 *
 *   ./build/examples/fifo_pipeline [rows_per_producer]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <tfq/tfq.h>

typedef struct {
  tfq_queue *q;
  int id, rows;
} producer;

static void die(const char *what, tfq_status *st) {
  fprintf(stderr, "%s: %s: %s\n", what, tfq_code_name(tfq_status_code(st)), tfq_status_message(st));
  exit(1);
}

static void *produce(void *arg) {
  producer *p = arg;
  tfq_status *st = tfq_status_new();
  if (!st) return NULL;
  for (int start = 0; start < p->rows; start += 3) {
    int64_t b = p->rows - start < 3 ? p->rows - start : 3;
    int64_t fdims[2] = {b, 2}, ldims[1] = {b};
    tfq_tuple *t;
    tfq_tensor *f, *l;
    if (tfq_tuple_new(2, &t, st) || tfq_tensor_new(TFQ_FLOAT, fdims, 2, &f, st) ||
        tfq_tensor_new(TFQ_INT32, ldims, 1, &l, st))
      die("alloc", st);
    float *fx = tfq_tensor_data(f);
    int32_t *lx = tfq_tensor_data(l);
    for (int64_t i = 0; i < b; i++) {
      int row = p->id * 1000 + start + (int)i;
      fx[2 * i] = (float)row;
      fx[2 * i + 1] = (float)row / 10.0f;
      lx[i] = row % 2;
    }
    tfq_tuple_set_take(t, 0, f);
    tfq_tuple_set_take(t, 1, l);
    if (tfq_queue_enqueue_many(p->q, t, NULL, TFQ_NO_TIMEOUT, st)) die("enqueue_many", st);
    tfq_tuple_free(t);
  }
  tfq_status_free(st);
  return NULL;
}

static pthread_t th[2];

typedef struct {
  tfq_queue *q;
  pthread_t *producers;
} closer;

/* Joins the producers, then closes the queue.  The consumer keeps draining meanwhile, so the
 * producers' blocked enqueue_many calls (capacity 10 < rows) can finish. */
static void *close_when_done(void *arg) {
  closer *c = arg;
  for (int i = 0; i < 2; i++) pthread_join(c->producers[i], NULL);
  tfq_status *st = tfq_status_new();
  if (!st || tfq_queue_close(c->q, 0, NULL, TFQ_NO_TIMEOUT, st)) die("close", st);
  tfq_status_free(st);
  return NULL;
}

int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 7;
  tfq_status *st = tfq_status_new();
  tfq_spec *spec;
  int64_t two[1] = {2};
  if (!st || tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_FLOAT, two, 1, "features", st) ||
      tfq_spec_add(spec, TFQ_INT32, NULL, 0, "target", st))
    die("spec", st);
  tfq_queue *q;
  if (tfq_fifo_queue_new(spec, 10, "instance_q", &q, st)) die("queue", st);
  printf("tfq %s: FIFOQueue '%s' (capacity %lld)\n", tfq_version_string(), tfq_queue_name(q),
         (long long)tfq_queue_capacity(q));

  producer p[2] = {{q, 0, rows}, {q, 1, rows}};
  closer cl = {q, th};
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, produce, &p[i]);
  pthread_t closer_th;
  pthread_create(&closer_th, NULL, close_when_done, &cl);

  int total = 0;
  for (;;) {
    tfq_tuple *batch;
    tfq_code c = tfq_queue_dequeue_up_to(q, 4, &batch, NULL, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    if (c) die("dequeue_up_to", st);
    tfq_tensor *f = tfq_tuple_get(batch, 0), *l = tfq_tuple_get(batch, 1);
    const float *fx = tfq_tensor_cdata(f);
    const int32_t *lx = tfq_tensor_cdata(l);
    printf("batch of %lld:", (long long)tfq_tensor_dim(f, 0));
    for (int64_t i = 0; i < tfq_tensor_dim(f, 0); i++)
      printf(" ([%g, %g], %d)", fx[2 * i], fx[2 * i + 1], lx[i]);
    printf("\n");
    total += (int)tfq_tensor_dim(f, 0);
    tfq_tuple_free(batch);
  }
  pthread_join(closer_th, NULL);
  printf("%d rows. No more training instances\n", total);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  tfq_status_free(st);
  return total == 2 * rows ? 0 : 1;
}
