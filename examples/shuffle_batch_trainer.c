/* A shuffle_batch trainer loop, TF1 style:
 *
 *   files = tf.train.string_input_producer(["linear.csv"], num_epochs=EPOCHS)
 *   _, lines = tf.TextLineReader(skip_header_lines=1).read_up_to(files, 64)
 *   x1, x2, x3, y = tf.decode_csv(lines, [[0.], [0.], [0.], [0.]])
 *   xb, yb = tf.train.shuffle_batch([tf.stack([x1, x2, x3], 1), y], batch_size=32,
 *                                   capacity=2000, min_after_dequeue=1000, num_threads=2,
 *                                   enqueue_many=True)
 *   ... SGD on a linear model until OutOfRange ...
 *
 * The bundled examples/data/linear.csv was generated with y = 3 x1 - 2 x2 + 0.5 x3 + 1 + noise;
 * the trainer prints the learned weights, which should come out close to (3, -2, 0.5, 1).
 *
 *   ./build/examples/shuffle_batch_trainer [linear.csv] [epochs]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

static tfq_status *st;

static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "trainer: %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  exit(1);
}

typedef struct source_ctx {
  tfq_reader *reader;
  tfq_queue *files;
  tfq_csv_options *csv;
} source_ctx;

/* One batch of up to 64 lines of one file → ([k,3] features, [k] labels). */
static tfq_code read_batch(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *s) {
  source_ctx *c = ctx;
  tfq_tensor *keys, *lines;
  tfq_code code = tfq_reader_read_up_to(c->reader, c->files, 64, &keys, &lines, cancel, s);
  if (code) return code;
  tfq_tuple *cols;
  code = tfq_decode_csv(c->csv, lines, &cols, s);
  tfq_tensor_free(keys);
  tfq_tensor_free(lines);
  if (code) return code;
  int64_t k = tfq_tensor_dim(tfq_tuple_get(cols, 0), 0), d[2] = {k, 3};
  tfq_tensor *x;
  code = tfq_tensor_new(TFQ_FLOAT, d, 2, &x, s);
  if (!code) code = tfq_tuple_new(2, out, s);
  if (code) {
    tfq_tuple_free(cols);
    tfq_tensor_free(x);
    return code;
  }
  float *xp = tfq_tensor_data(x);
  for (int j = 0; j < 3; j++) {
    const float *col = tfq_tensor_cdata(tfq_tuple_get(cols, (size_t)j));
    for (int64_t i = 0; i < k; i++) xp[3 * i + j] = col[i];
  }
  tfq_tuple_set_take(*out, 0, x);
  tfq_tuple_set_take(*out, 1, tfq_tensor_ref(tfq_tuple_get(cols, 3)));
  tfq_tuple_free(cols);
  return TFQ_OK;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/data/linear.csv";
  int epochs = argc > 2 ? atoi(argv[2]) : 20;
  st = tfq_status_new();
  if (!st) return 1;
  tfq_coord *coord;
  check(tfq_coord_new(&coord, st), "coordinator");

  /* string_input_producer under the coordinator (TF1's QueueRunner) */
  int64_t one = 1;
  tfq_tensor *names;
  check(tfq_tensor_new(TFQ_STRING, &one, 1, &names, st), "names");
  check(tfq_tensor_set_string(names, 0, path, strlen(path), st), "names");
  tfq_producer_options *po;
  check(tfq_producer_options_new(&po, st), "producer options");
  tfq_producer_options_set_num_epochs(po, epochs);
  tfq_producer_options_set_seed(po, 7);
  tfq_queue *files;
  tfq_producer_runner *producer;
  check(tfq_string_input_producer_start(names, po, coord, &files, &producer, st),
        "string_input_producer");

  /* reader + decode_csv as the shuffle_batch source, two threads */
  tfq_reader_options *ro;
  check(tfq_reader_options_new(&ro, st), "reader options");
  tfq_reader_options_set_skip_header_lines(ro, 1);
  tfq_reader *reader;
  check(tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &reader, st), "reader");
  tfq_csv_options *csv;
  check(tfq_csv_options_new(&csv, st), "csv");
  for (int i = 0; i < 4; i++) check(tfq_csv_options_add_default_float(csv, 0.0f, st), "defaults");
  source_ctx sc = {reader, files, csv};

  tfq_spec *spec;
  int64_t three = 3;
  check(tfq_spec_new(&spec, st), "spec");
  check(tfq_spec_add(spec, TFQ_FLOAT, &three, 1, "x", st), "spec");
  check(tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "y", st), "spec");
  tfq_batch_options *bo;
  check(tfq_batch_options_new(&bo, st), "batch options");
  tfq_batch_options_set_capacity(bo, 2000);
  tfq_batch_options_set_min_after_dequeue(bo, 1000);
  tfq_batch_options_set_num_threads(bo, 2);
  tfq_batch_options_set_enqueue_many(bo, 1);
  tfq_batch_options_set_seeds(bo, 87654321, 42);
  tfq_source_fn fn = read_batch;
  void *ctx = &sc;
  tfq_batcher *batcher;
  check(tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, 32, &fn, &ctx, 1, bo, coord, &batcher, st),
        "shuffle_batch");

  /* SGD on y = w.x + b */
  double w[3] = {0, 0, 0}, b = 0, lr = 0.05, loss = 0;
  long steps = 0, examples = 0;
  for (;;) {
    tfq_tuple *batch;
    tfq_code c = tfq_batcher_next(batcher, &batch, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    check(c, "next batch");
    const float *x = tfq_tensor_cdata(tfq_tuple_get(batch, 0));
    const float *y = tfq_tensor_cdata(tfq_tuple_get(batch, 1));
    int64_t n = tfq_tensor_dim(tfq_tuple_get(batch, 1), 0);
    double gw[3] = {0, 0, 0}, gb = 0;
    loss = 0;
    for (int64_t i = 0; i < n; i++) {
      double err = w[0] * x[3 * i] + w[1] * x[3 * i + 1] + w[2] * x[3 * i + 2] + b - y[i];
      loss += err * err / (double)n;
      for (int j = 0; j < 3; j++) gw[j] += 2 * err * x[3 * i + j] / (double)n;
      gb += 2 * err / (double)n;
    }
    for (int j = 0; j < 3; j++) w[j] -= lr * gw[j];
    b -= lr * gb;
    steps++;
    examples += n;
    if (steps % 500 == 0) printf("step %ld: loss %.5f\n", steps, loss);
    tfq_tuple_free(batch);
  }
  printf("%ld steps, %ld examples; learned w = (%.3f, %.3f, %.3f), b = %.3f (true 3, -2, 0.5, 1)\n",
         steps, examples, w[0], w[1], w[2], b);
  check(tfq_coord_request_stop(coord, TFQ_OK, NULL), "request_stop");
  check(tfq_coord_join(coord, 10 * 1000000, 0, st), "join");
  int good = fabs(w[0] - 3) < 0.05 && fabs(w[1] + 2) < 0.05 && fabs(w[2] - 0.5) < 0.05 &&
             fabs(b - 1) < 0.05;

  tfq_batcher_free(batcher);
  tfq_producer_runner_free(producer);
  tfq_batch_options_free(bo);
  tfq_spec_free(spec);
  tfq_csv_options_free(csv);
  tfq_reader_free(reader);
  tfq_reader_options_free(ro);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
  tfq_queue_free(files);
  tfq_coord_free(coord);
  tfq_status_free(st);
  return good ? 0 : 2;
}
