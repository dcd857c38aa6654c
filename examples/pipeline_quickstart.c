/* The seed's reference program through tfq_pipeline (tfq/pipeline.h): as short as TF1's Python.
 *
 *   filename_queue = tf.train.string_input_producer(["my_test.csv"], num_epochs=1)
 *   reader = tf.TextLineReader(skip_header_lines=1)      # x5 reader threads
 *   x1, x2, target = tf.decode_csv(line, record_defaults=[[-1.], [-1.], [-1]])
 *   queue = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=2, ...)
 *   while True: print(sess.run(queue.dequeue_up_to(2)))  # until OutOfRange
 *
 *   ./build/examples/pipeline_quickstart [path/to/my_test.csv]
 *
 * Prints "batch of N", then one line per example, "x1 x2 target"; then "No more training
 * instances".  Errors go to standard error with exit status 1. */
#include <stdio.h>
#include <tfq/tfq.h>

/* Any error but the end of the input: say it and exit 1. */
#define CHECK(call)                                                \
  if ((call) != TFQ_OK && tfq_status_code(st) != TFQ_OUT_OF_RANGE) \
  return fprintf(stderr, "pipeline_quickstart: %s\n", tfq_status_message(st)), 1

int main(int argc, char **argv) {
  tfq_status *st = tfq_status_new();
  tfq_pipeline_options *o;
  tfq_pipeline *p;
  tfq_tuple *b;
  CHECK(tfq_pipeline_options_new(&o, st));
  CHECK(tfq_pipeline_options_add_file(o, argc > 1 ? argv[1] : "examples/data/my_test.csv", st));
  CHECK(tfq_pipeline_options_set_columns(o, "float32:-1,float32:-1,int32:-1", st));
  tfq_pipeline_options_set_header(o, 1); /* skip_header_lines=1; columns named x1, x2, target */
  tfq_pipeline_options_set_shuffle_batch(o, 2, 5, 10, 2); /* batch 2, 5 threads, 10, 2 */
  CHECK(tfq_pipeline_new(o, &p, st));
  while (tfq_pipeline_next(p, &b, st) == TFQ_OK) {
    const float *x1 = tfq_tensor_cdata(tfq_tuple_get(b, 0));
    const float *x2 = tfq_tensor_cdata(tfq_tuple_get(b, 1));
    const int32_t *target = tfq_tensor_cdata(tfq_tuple_get(b, 2));
    printf("batch of %lld\n", (long long)tfq_tensor_dim(tfq_tuple_get(b, 2), 0));
    for (int64_t i = 0; i < tfq_tensor_dim(tfq_tuple_get(b, 2), 0); i++)
      printf("%g %g %d\n", x1[i], x2[i], target[i]);
    tfq_tuple_free(b);
  }
  CHECK(tfq_status_code(st)); /* OUT_OF_RANGE: every record was returned */
  printf("No more training instances\n");
  tfq_pipeline_free(p), tfq_pipeline_options_free(o), tfq_status_free(st);
  return 0;
}
