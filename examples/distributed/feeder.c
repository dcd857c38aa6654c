/* The tfq feeder of examples/distributed: reads a CSV file of "id,x0,...,x{D-1},y" records with
 * tfq's TextLineReader (read_up_to), decodes them with tfq_decode_csv, shuffles them through a
 * tfq RandomShuffleQueue, and pushes
 * batches into a TensorFlow FIFOQueue found by shared name on /job:ps/task:0 of a cluster, with
 * QueueRunner threads running tfq_tf_feeder_step.  At end of data it closes the TF queue, so the
 * TensorFlow workers drain it and stop on OutOfRangeError.
 *
 *   tfq_distributed_feeder --csv FILE --target grpc://127.0.0.1:PORT [--device /job:ps/task:0]
 *       [--shared-name tfq_feed] [--capacity 2000] [--batch 500] [--dim 4] [--threads 2]
 *       [--min-after-dequeue 5000] [--seed 0] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/coord.h>
#include <tfq/csv.h>
#include <tfq/queue.h>
#include <tfq/reader.h>
#include <tfq/tf.h>
#include <time.h>

#define CHUNK 1000

typedef struct args {
  const char *csv, *target, *device, *shared_name;
  int64_t capacity, batch, min_after_dequeue, seed;
  int dim, threads;
} args;

static void usage(void) {
  fprintf(stderr,
          "usage: tfq_distributed_feeder --csv FILE --target grpc://HOST:PORT [--device D]\n"
          "       [--shared-name N] [--capacity C] [--batch B] [--dim D] [--threads T]\n"
          "       [--min-after-dequeue M] [--seed S]\n");
  exit(2);
}

static void parse(int argc, char **argv, args *a) {
  *a = (args){NULL, NULL, "/job:ps/task:0", "tfq_feed", 2000, 500, 5000, 0, 4, 2};
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage();
    const char *k = argv[i], *v = argv[++i];
    if (!strcmp(k, "--csv"))
      a->csv = v;
    else if (!strcmp(k, "--target"))
      a->target = v;
    else if (!strcmp(k, "--device"))
      a->device = v;
    else if (!strcmp(k, "--shared-name"))
      a->shared_name = v;
    else if (!strcmp(k, "--capacity"))
      a->capacity = atoll(v);
    else if (!strcmp(k, "--batch"))
      a->batch = atoll(v);
    else if (!strcmp(k, "--dim"))
      a->dim = atoi(v);
    else if (!strcmp(k, "--threads"))
      a->threads = atoi(v);
    else if (!strcmp(k, "--min-after-dequeue"))
      a->min_after_dequeue = atoll(v);
    else if (!strcmp(k, "--seed"))
      a->seed = atoll(v);
    else
      usage();
  }
  if (!a->csv || !a->target || a->dim < 1 || a->dim > 1024 || a->threads < 1 || a->batch < 1)
    usage();
}

static int fail(const char *what, tfq_status *st) {
  fprintf(stderr, "feeder: %s: %s %s\n", what, tfq_code_name(tfq_status_code(st)),
          tfq_status_message(st));
  return 1;
}

/* Reports an error of the reading stage to the Coordinator.  Before tfq_coord_join() the request
 * returns TFQ_OK and the Coordinator keeps the error (coord.h); any other answer means nobody else
 * will report it, so it is printed here. */
static void stop(tfq_coord *coord, tfq_code c, const char *message) {
  if (tfq_coord_request_stop(coord, c, message) != TFQ_OK) fprintf(stderr, "feeder: %s\n", message);
}

/* Decoded columns (id, x0..x{D-1}, y) -> the element layout (id [n], x [n,D], y [n]). */
static tfq_code pack(const tfq_tuple *cols, int dim, tfq_tuple **out, tfq_status *st) {
  tfq_tensor *id = tfq_tuple_get(cols, 0);
  int64_t n = tfq_tensor_dim(id, 0);
  int64_t dx[2] = {n, dim};
  tfq_tensor *x;
  tfq_code c = tfq_tensor_new(TFQ_FLOAT, dx, 2, &x, st);
  if (c) return c;
  float *px = tfq_tensor_data(x);
  for (int j = 0; j < dim; j++) {
    const float *col = tfq_tensor_cdata(tfq_tuple_get(cols, (size_t)j + 1));
    for (int64_t i = 0; i < n; i++) px[i * dim + j] = col[i];
  }
  if ((c = tfq_tuple_new(3, out, st))) {
    tfq_tensor_free(x);
    return c;
  }
  tfq_tuple_set_take(*out, 0, tfq_tensor_ref(id));
  tfq_tuple_set_take(*out, 1, x);
  tfq_tuple_set_take(*out, 2, tfq_tensor_ref(tfq_tuple_get(cols, (size_t)dim + 1)));
  return TFQ_OK;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  args a;
  parse(argc, argv, &a);
  tfq_status *st = tfq_status_new();
  int64_t d1[1] = {a.dim};

  tfq_csv_options *csv;
  tfq_spec *spec;
  if (tfq_csv_options_new(&csv, st) || tfq_csv_options_add_required(csv, TFQ_INT64, st))
    return fail("csv options", st);
  for (int j = 0; j <= a.dim; j++)
    if (tfq_csv_options_add_required(csv, TFQ_FLOAT, st)) return fail("csv options", st);
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, d1, 1, "x", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "y", st))
    return fail("spec", st);

  /* The shuffle stage: a tfq RandomShuffleQueue, as tf.train.shuffle_batch would build. */
  tfq_queue_options *qo;
  tfq_queue *shuffle;
  if (tfq_queue_options_new(&qo, st)) return fail("queue options", st);
  tfq_queue_options_set_capacity(qo, a.min_after_dequeue + 4 * a.batch + CHUNK);
  tfq_queue_options_set_min_after_dequeue(qo, a.min_after_dequeue);
  if (a.seed) tfq_queue_options_set_seeds(qo, a.seed, a.seed + 1);
  if (tfq_queue_new(TFQ_QUEUE_RANDOM_SHUFFLE, spec, qo, &shuffle, st))
    return fail("shuffle queue", st);
  tfq_queue_options_free(qo);

  /* The TensorFlow queue on the ps, by shared name. */
  tfq_tf_queue_options *to;
  tfq_tf_queue *tfq;
  if (tfq_tf_queue_options_new(&to, st) || tfq_tf_queue_options_set_target(to, a.target, st) ||
      tfq_tf_queue_options_set_device(to, a.device, st) ||
      tfq_tf_queue_options_set_shared_name(to, a.shared_name, st))
    return fail("tf queue options", st);
  tfq_tf_queue_options_set_capacity(to, a.capacity);
  double t0 = now();
  if (tfq_tf_queue_open(spec, to, &tfq, st)) return fail("open the TensorFlow queue", st);
  tfq_tf_queue_options_free(to);
  printf("feeder: TensorFlow %s, session on %s, queue '%s' on %s (%.2f s)\n", tfq_tf_version(),
         a.target, a.shared_name, a.device, now() - t0);
  fflush(stdout);

  /* QueueRunner: `threads` threads of tfq_tf_feeder_step under a coordinator. */
  tfq_coord *coord;
  tfq_runner *runner;
  tfq_tf_feeder *feeder;
  if (tfq_coord_new(&coord, st) || tfq_runner_new(shuffle, &runner, st) ||
      tfq_tf_feeder_new(shuffle, a.batch, tfq, a.threads, &feeder, st))
    return fail("runner", st);
  for (int i = 0; i < a.threads; i++)
    if (tfq_runner_add_op(runner, tfq_tf_feeder_step, feeder, "to_tf", st))
      return fail("runner", st);
  if (tfq_tf_queue_close_on_stop(tfq, coord, st) || tfq_runner_start(runner, coord, 0, st))
    return fail("start", st);

  /* The reading stage, on this thread: a TextLineReader over a work queue holding the file. */
  tfq_reader_options *ro;
  tfq_reader *reader;
  tfq_queue *work;
  tfq_spec *wspec;
  tfq_tensor *fname;
  tfq_tuple *unit;
  if (tfq_reader_options_new(&ro, st) || tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &reader, st) ||
      tfq_spec_new(&wspec, st) || tfq_spec_add(wspec, TFQ_STRING, NULL, 0, NULL, st) ||
      tfq_fifo_queue_new(wspec, 1, NULL, &work, st) ||
      tfq_tensor_new(TFQ_STRING, NULL, 0, &fname, st) ||
      tfq_tensor_set_string(fname, 0, a.csv, strlen(a.csv), st) || tfq_tuple_new(1, &unit, st))
    return fail("reader", st);
  tfq_tuple_set_take(unit, 0, fname);
  if (tfq_queue_enqueue(work, unit, NULL, TFQ_NO_TIMEOUT, st) ||
      tfq_queue_close(work, 0, NULL, TFQ_NO_TIMEOUT, st))
    return fail("work queue", st);
  tfq_tuple_free(unit);
  int64_t nread = 0;
  t0 = now();
  while (!tfq_coord_should_stop(coord)) {
    tfq_tensor *keys, *lines;
    tfq_code c =
        tfq_reader_read_up_to(reader, work, CHUNK, &keys, &lines, tfq_coord_cancel(coord), st);
    if (c == TFQ_OUT_OF_RANGE) break; /* the file is read, and the work queue closed */
    tfq_tuple *cols = NULL, *elem;
    if (!c) {
      nread += tfq_tensor_dim(lines, 0);
      c = tfq_decode_csv(csv, lines, &cols, st);
      tfq_tensor_free(keys);
      tfq_tensor_free(lines);
    }
    if (!c) {
      c = pack(cols, a.dim, &elem, st);
      tfq_tuple_free(cols);
    }
    if (!c) {
      c = tfq_queue_enqueue_many(shuffle, elem, tfq_coord_cancel(coord), TFQ_NO_TIMEOUT, st);
      tfq_tuple_free(elem);
    }
    if (c) {
      if (c != TFQ_CANCELLED) stop(coord, c, tfq_status_message(st)); /* e.g. NOT_FOUND */
      break;
    }
  }
  tfq_reader_free(reader);
  tfq_reader_options_free(ro);
  tfq_queue_free(work);
  tfq_spec_free(wspec);
  tfq_code c = tfq_queue_close(shuffle, 0, tfq_coord_cancel(coord), TFQ_NO_TIMEOUT, st);
  (void)c; /* CANCELLED when the pipeline already stopped: the join reports why */

  tfq_code jc = tfq_coord_join(coord, 10 * 1000000, 0, st);
  double dt = now() - t0;
  int64_t rows = tfq_tf_feeder_rows(feeder);
  printf("feeder: read %lld records, pushed %lld rows in %lld batches in %.2f s (%.0f rows/s)\n",
         (long long)nread, (long long)rows, (long long)tfq_tf_feeder_batches(feeder), dt,
         dt > 0 ? (double)rows / dt : 0.0);
  if (jc) fail("pipeline", st);
  tfq_runner_free(runner);
  tfq_tf_feeder_free(feeder);
  tfq_tf_queue_free(tfq);
  tfq_coord_free(coord);
  tfq_queue_free(shuffle);
  tfq_spec_free(spec);
  tfq_csv_options_free(csv);
  tfq_status_free(st);
  return jc == TFQ_OK && rows == nread ? 0 : 1;
}
