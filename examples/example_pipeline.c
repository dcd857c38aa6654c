/* A TFRecord-of-Examples pipeline in C, in the shape of the TF1 program:
 *
 *   files = tf.train.string_input_producer(paths, num_epochs=1)                      # (1)
 *   reader = tf.TFRecordReader()                                                     # (2)
 *   _, serialized = reader.read_up_to(files, 64)
 *   features = tf.parse_example(serialized, {                                        # (3)
 *       "id": tf.FixedLenFeature([], tf.int64),
 *       "tags": tf.VarLenFeature(tf.string),
 *       "xy": tf.FixedLenFeature([2], tf.float32)})
 *   batch = tf.train.shuffle_batch(features, batch_size=16, capacity=256,             # (4)
 *                                  min_after_dequeue=64, num_threads=2,
 *                                  enqueue_many=True, allow_smaller_final_batch=True)
 *   coord = tf.train.Coordinator(); threads = tf.train.start_queue_runners(coord=coord)
 *   while True:                                                                      # (5)
 *     try: print(sess.run(batch))    # batch["tags"] is one SparseTensor of the batch
 *     except tf.errors.OutOfRangeError: break
 *
 *   ./build/examples/example_pipeline --write DIR [FILES [PER_FILE]]   writes demo data
 *   ./build/examples/example_pipeline FILE...                          runs the pipeline
 *
 * --write makes DIR/part-NN.tfrecord (default 4 files of 250 Examples).  Example `id` (file f,
 * record j: id = f * PER_FILE + j) has xy = [id / 4, -id] and id % 4 tags "t<id>.<k>"; when
 * id % 8 == 0 the tags key is missing and when id % 8 == 4 it holds an empty list (both parse to
 * no tags).  The pipeline prints "batch of N tags_shape [N,M]" per minibatch and one line
 * "id x y tag,tag,..." per Example, its tags put back together from the batch's SparseTensor
 * (indices [n, 2] of (row in the batch, position)).  Exit status 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>

#define READ_BATCH 64

static tfq_status *st;

static void check(tfq_code c, const char *what) {
  if (c == TFQ_OK) return;
  fprintf(stderr, "example_pipeline: %s: %s: %s\n", what, tfq_code_name(c), tfq_status_message(st));
  exit(1);
}

/* ---- a tiny tf.train.Example encoder (protobuf wire format) ---- */

typedef struct buf {
  unsigned char b[512];
  size_t n;
} buf;

static void put(buf *b, const void *p, size_t n) {
  if (b->n + n > sizeof b->b) abort();
  memcpy(b->b + b->n, p, n);
  b->n += n;
}

static void varint(buf *b, uint64_t v) {
  unsigned char c[10];
  size_t n = 0;
  do {
    c[n++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
  put(b, c, n);
}

/* field `f` (length-delimited) holding `n` bytes */
static void ld(buf *b, int f, const void *p, size_t n) {
  varint(b, (uint64_t)f << 3 | 2);
  varint(b, n);
  put(b, p, n);
}

/* One map entry of Features: key → Feature{kind: list}. kind 1 bytes_list, 2 float_list,
 * 3 int64_list; `list` is the encoded list message. */
static void feature(buf *features, const char *key, int kind, const buf *list) {
  buf f = {.n = 0}, e = {.n = 0};
  ld(&f, kind, list->b, list->n);
  ld(&e, 1, key, strlen(key));
  ld(&e, 2, f.b, f.n);
  ld(features, 1, e.b, e.n);
}

/* The Example of `id` (see the top comment). */
static void make_example(int64_t id, buf *out) {
  buf fs = {.n = 0}, l = {.n = 0}, packed = {.n = 0};
  varint(&packed, (uint64_t)id);
  ld(&l, 1, packed.b, packed.n);
  feature(&fs, "id", 3, &l);
  float xy[2] = {(float)id / 4, -(float)id};
  l.n = 0;
  ld(&l, 1, xy, sizeof xy); /* packed little-endian floats */
  feature(&fs, "xy", 2, &l);
  if (id % 8 != 0) {
    l.n = 0;
    for (int k = 0; k < id % 4; k++) {
      char t[32];
      int n = snprintf(t, sizeof t, "t%lld.%d", (long long)id, k);
      ld(&l, 1, t, (size_t)n);
    }
    feature(&fs, "tags", 1, &l);
  }
  out->n = 0;
  ld(out, 1, fs.b, fs.n);
}

static int write_data(const char *dir, int files, int per) {
  for (int f = 0; f < files; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/part-%02d.tfrecord", dir, f);
    tfq_tfrecord_writer *w;
    check(tfq_tfrecord_writer_new(path, TFQ_COMPRESSION_NONE, &w, st), "writer");
    for (int j = 0; j < per; j++) {
      buf ex;
      make_example((int64_t)f * per + j, &ex);
      check(tfq_tfrecord_writer_write(w, ex.b, ex.n, st), "write");
    }
    check(tfq_tfrecord_writer_close(w, st), "close");
    tfq_tfrecord_writer_free(w);
    printf("%s\n", path);
  }
  return 0;
}

/* ---- the pipeline ---- */

/* Prints one minibatch: the dense features row by row, the tags from the SparseTensor. */
static void print_batch(const tfq_tuple *batch, const tfq_sparse_tensor *tags) {
  const tfq_tensor *ids = tfq_tuple_get(batch, 0), *xy = tfq_tuple_get(batch, 2);
  int64_t n = tfq_tensor_dim(ids, 0), nv = tfq_tensor_dim(tags->values, 0);
  const int64_t *id = tfq_tensor_cdata(ids), *ix = tfq_tensor_cdata(tags->indices);
  const int64_t *shape = tfq_tensor_cdata(tags->dense_shape);
  const float *v = tfq_tensor_cdata(xy);
  printf("batch of %lld tags_shape [%lld,%lld]\n", (long long)n, (long long)shape[0],
         (long long)shape[1]);
  int64_t at = 0; /* the indices are in row order, then position order */
  for (int64_t r = 0; r < n; r++) {
    printf("%lld %g %g ", (long long)id[r], v[2 * r], v[2 * r + 1]);
    for (int64_t pos = 0; at < nv && ix[2 * at] == r; at++, pos++) {
      if (ix[2 * at + 1] != pos || pos >= shape[1]) {
        fprintf(stderr, "example_pipeline: tag %lld of row %lld at position %lld\n", (long long)at,
                (long long)r, (long long)ix[2 * at + 1]);
        exit(1);
      }
      size_t len;
      const char *s = tfq_tensor_string(tags->values, at, &len);
      printf("%s%.*s", pos ? "," : "", (int)len, s);
    }
    printf("\n");
  }
  if (at != nv) {
    fprintf(stderr, "example_pipeline: %lld tags belong to no row\n", (long long)(nv - at));
    exit(1);
  }
}

static int run_pipeline(int nfiles, char **paths) {
  tfq_coord *coord;
  check(tfq_coord_new(&coord, st), "coordinator");

  /* (1) string_input_producer(paths, num_epochs=1) under the coordinator */
  int64_t n = nfiles;
  tfq_tensor *names;
  check(tfq_tensor_new(TFQ_STRING, &n, 1, &names, st), "names");
  for (int i = 0; i < nfiles; i++)
    check(tfq_tensor_set_string(names, i, paths[i], strlen(paths[i]), st), "names");
  tfq_producer_options *po;
  check(tfq_producer_options_new(&po, st), "producer options");
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_queue *files;
  tfq_producer_runner *producer;
  check(tfq_string_input_producer_start(names, po, coord, &files, &producer, st),
        "string_input_producer");

  /* (3) the features dict; outputs in key order: id, tags, xy */
  tfq_example_config *cfg;
  check(tfq_example_config_new(&cfg, st), "config");
  int64_t two = 2;
  check(tfq_example_config_add_fixed_len(cfg, "id", TFQ_INT64, NULL, 0, NULL, st), "id");
  check(tfq_example_config_add_var_len(cfg, "tags", TFQ_STRING, st), "tags");
  check(tfq_example_config_add_fixed_len(cfg, "xy", TFQ_FLOAT, &two, 1, NULL, st), "xy");
  int64_t tags_i = tfq_example_config_find(cfg, "tags");

  /* (2) + (3) TFRecordReader.read_up_to(64) → parse_example, as the batcher's source; the
   * SparseTensor of "tags" is stored in `map`, a handle goes through the queue */
  tfq_sparse_map *map;
  check(tfq_sparse_map_new("shuffle_batch/tags", &map, st), "sparse map");
  tfq_reader *reader;
  check(tfq_reader_new(TFQ_READER_TFRECORD, NULL, &reader, st), "reader");
  tfq_read_parse_op *op;
  check(tfq_read_parse_op_new(reader, files, cfg, map, READ_BATCH, NULL, &op, st), "parse op");
  tfq_spec *spec;
  check(tfq_read_parse_op_spec(op, &spec, st), "spec");

  /* (4) shuffle_batch(batch_size=16, capacity=256, min_after_dequeue=64, num_threads=2,
   * enqueue_many=True, allow_smaller_final_batch=True) */
  tfq_batch_options *bo;
  check(tfq_batch_options_new(&bo, st), "batch options");
  tfq_batch_options_set_capacity(bo, 256);
  tfq_batch_options_set_min_after_dequeue(bo, 64);
  tfq_batch_options_set_num_threads(bo, 2);
  tfq_batch_options_set_enqueue_many(bo, 1);
  tfq_batch_options_set_allow_smaller_final_batch(bo, 1);
  tfq_source_fn source = tfq_read_parse_source;
  void *ctx = op;
  tfq_batcher *batcher;
  check(tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, 16, &source, &ctx, 1, bo, coord, &batcher,
                        st),
        "shuffle_batch");

  /* (5) minibatches until OUT_OF_RANGE; the handles of "tags" become one SparseTensor */
  int status = 0;
  for (;;) {
    tfq_tuple *batch;
    tfq_code c = tfq_batcher_next(batcher, &batch, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    if (c) {
      fprintf(stderr, "example_pipeline: batch: %s: %s\n", tfq_code_name(c),
              tfq_status_message(st));
      status = 1;
      break;
    }
    tfq_sparse_tensor tags;
    check(
        tfq_sparse_map_take_many(map, tfq_tuple_get(batch, (size_t)tags_i), TFQ_STRING, &tags, st),
        "take_many");
    print_batch(batch, &tags);
    tfq_sparse_tensor_release(&tags);
    tfq_tuple_free(batch);
  }
  printf("No more examples\n");
  check(tfq_coord_request_stop(coord, TFQ_OK, NULL), "request_stop");
  tfq_code jc = tfq_coord_join(coord, 10 * 1000000, 0, st);
  if (jc) {
    fprintf(stderr, "example_pipeline: %s: %s\n", tfq_code_name(jc), tfq_status_message(st));
    status = 1;
  }
  tfq_batcher_free(batcher);
  tfq_batch_options_free(bo);
  tfq_producer_runner_free(producer);
  tfq_read_parse_op_free(op);
  tfq_reader_free(reader);
  tfq_spec_free(spec);
  tfq_sparse_map_free(map);
  tfq_example_config_free(cfg);
  tfq_queue_free(files);
  tfq_producer_options_free(po);
  tfq_tensor_free(names);
  tfq_coord_free(coord);
  return status;
}

int main(int argc, char **argv) {
  st = tfq_status_new();
  if (!st) return 1;
  int rc;
  if (argc >= 3 && !strcmp(argv[1], "--write")) {
    rc = write_data(argv[2], argc > 3 ? atoi(argv[3]) : 4, argc > 4 ? atoi(argv[4]) : 250);
  } else if (argc >= 2 && argv[1][0] != '-') {
    rc = run_pipeline(argc - 1, argv + 1);
  } else {
    fprintf(stderr, "usage: example_pipeline --write DIR [FILES [PER_FILE]] | FILE...\n");
    rc = 2;
  }
  tfq_status_free(st);
  return rc;
}
