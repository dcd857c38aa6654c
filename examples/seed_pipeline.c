/* The reference TF1 program (docs/design.md §1; line by line in docs/migrating-from-tf1.md), in C,
 * in the same shape:
 *
 *   filename_queue = tf.train.string_input_producer(["my_test.csv"], num_epochs=1)  # (1)
 *   reader = tf.TextLineReader(skip_header_lines=1)                                 # (2) x5
 *   _, line = reader.read(filename_queue)
 *   x1, x2, target = tf.decode_csv(line, record_defaults=[[-1.], [-1.], [-1]])
 *   features = tf.stack([x1, x2])
 *   queue = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=2,               # (3)
 *                                 dtypes=[tf.float32, tf.int32], shapes=[[2], []],
 *                                 shared_name="shared_instance_q")
 *   enqueue_op = queue.enqueue([features, target])
 *   qr = tf.train.QueueRunner(queue, [enqueue_op] * 5)                              # (4)
 *   coord = tf.train.Coordinator(); threads = qr.create_threads(sess, coord, start=True)
 *   while True:                                                                     # (5)
 *     try: print(sess.run(queue.dequeue_up_to(2)))
 *     except tf.errors.OutOfRangeError: print("No more training instances"); break
 *
 *   ./build/examples/seed_pipeline [path/to/my_test.csv]
 *
 * Prints one line per example, "x1 x2 target", grouped by minibatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

#define NREADERS 5

static tfq_status *st;

static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "seed_pipeline: %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  exit(1);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "examples/data/my_test.csv";
  st = tfq_status_new();
  if (!st) return 1;

  /* (1) a FIFO queue of filenames, filled and closed */
  tfq_spec *fspec;
  check(tfq_spec_new(&fspec, st), "spec");
  check(tfq_spec_add(fspec, TFQ_STRING, NULL, 0, NULL, st), "spec");
  tfq_queue *filenames;
  check(tfq_fifo_queue_new(fspec, 32, "input_producer", &filenames, st), "filename queue");
  tfq_tensor *fname;
  check(tfq_tensor_new(TFQ_STRING, NULL, 0, &fname, st), "tensor");
  check(tfq_tensor_set_string(fname, 0, path, strlen(path), st), "tensor");
  tfq_tuple *ft;
  check(tfq_tuple_new(1, &ft, st), "tuple");
  tfq_tuple_set_take(ft, 0, fname);
  check(tfq_queue_enqueue(filenames, ft, NULL, TFQ_NO_TIMEOUT, st), "enqueue filename");
  check(tfq_queue_close(filenames, 0, NULL, TFQ_NO_TIMEOUT, st), "close filename queue");
  tfq_tuple_free(ft);

  /* (3) the shared RandomShuffleQueue of (features float32[2], target int32) */
  tfq_spec *spec;
  int64_t two[1] = {2};
  check(tfq_spec_new(&spec, st), "spec");
  check(tfq_spec_add(spec, TFQ_FLOAT, two, 1, "features", st), "spec");
  check(tfq_spec_add(spec, TFQ_INT32, NULL, 0, "target", st), "spec");
  tfq_queue_options *qo;
  check(tfq_queue_options_new(&qo, st), "options");
  tfq_queue_options_set_capacity(qo, 10);
  tfq_queue_options_set_min_after_dequeue(qo, 2);
  check(tfq_queue_options_set_shared_name(qo, "shared_instance_q", st), "options");
  tfq_queue *queue;
  check(tfq_queue_open(NULL, TFQ_QUEUE_RANDOM_SHUFFLE, spec, qo, &queue, st), "shuffle queue");

  /* decode_csv with record_defaults = [[-1.], [-1.], [-1]] */
  tfq_csv_options *csv;
  check(tfq_csv_options_new(&csv, st), "csv options");
  check(tfq_csv_options_add_default_float(csv, -1.0f, st), "record_defaults");
  check(tfq_csv_options_add_default_float(csv, -1.0f, st), "record_defaults");
  check(tfq_csv_options_add_default_int32(csv, -1, st), "record_defaults");

  /* (2) five reader "ops": TextLineReader(skip_header_lines=1) → decode_csv → stack → enqueue */
  tfq_reader_options *ro;
  check(tfq_reader_options_new(&ro, st), "reader options");
  tfq_reader_options_set_skip_header_lines(ro, 1);
  tfq_reader *readers[NREADERS];
  tfq_read_decode_op *ops[NREADERS];
  tfq_runner *runner;
  check(tfq_runner_new(queue, &runner, st), "runner");
  for (int i = 0; i < NREADERS; i++) {
    check(tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &readers[i], st), "reader");
    check(tfq_read_decode_op_new(readers[i], filenames, csv, 1, queue, &ops[i], st), "op");
    size_t xs[2] = {0, 1}, target = 2;
    check(tfq_read_decode_op_add_component(ops[i], xs, 2, 1, st), "tf.stack([x1, x2])");
    check(tfq_read_decode_op_add_component(ops[i], &target, 1, 0, st), "target");
    check(tfq_runner_add_op(runner, tfq_read_decode_step, ops[i], "enqueue", st), "add op");
  }

  /* (4) a QueueRunner under a Coordinator */
  tfq_coord *coord;
  check(tfq_coord_new(&coord, st), "coordinator");
  check(tfq_runner_start(runner, coord, 0, st), "start");

  /* (5) dequeue_up_to(2) until OUT_OF_RANGE */
  for (;;) {
    tfq_tuple *batch;
    tfq_code c =
        tfq_queue_dequeue_up_to(queue, 2, &batch, tfq_coord_cancel(coord), TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE) {
      printf("No more training instances\n");
      break;
    }
    check(c, "dequeue_up_to");
    const float *f = tfq_tensor_cdata(tfq_tuple_get(batch, 0));
    const int32_t *t = tfq_tensor_cdata(tfq_tuple_get(batch, 1));
    int64_t n = tfq_tensor_dim(tfq_tuple_get(batch, 1), 0);
    printf("batch of %lld\n", (long long)n);
    for (int64_t i = 0; i < n; i++) printf("%g %g %d\n", f[2 * i], f[2 * i + 1], t[i]);
    tfq_tuple_free(batch);
  }
  check(tfq_coord_request_stop(coord, TFQ_OK, NULL), "request_stop");
  tfq_code jc = tfq_coord_join(coord, 10 * 1000000, 0, st);
  check(jc, "join");

  tfq_runner_free(runner);
  for (int i = 0; i < NREADERS; i++) {
    tfq_read_decode_op_free(ops[i]);
    tfq_reader_free(readers[i]);
  }
  tfq_coord_free(coord);
  tfq_reader_options_free(ro);
  tfq_csv_options_free(csv);
  tfq_queue_options_free(qo);
  tfq_queue_free(queue);
  tfq_registry_clear(NULL, NULL);
  tfq_queue_free(filenames);
  tfq_spec_free(spec);
  tfq_spec_free(fspec);
  tfq_status_free(st);
  return 0;
}
