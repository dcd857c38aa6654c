/* The read → parse_example → enqueue_many op of ops.h (tfq_read_parse_op): its element spec,
 * every record delivered with its dense values, its VarLen values through the sparse map and its
 * key; a parse error delivering the records before the bad one and naming the bad one as data;
 * the batcher-source form; argument checks.  Public headers only (plus the tests' Example
 * builder). */
#include "example_ref.h"
#include "helpers.h"
#include "readers_util.h"

TestSuite(parse_op, .init = tmp_setup, .fini = tmp_teardown);

/* Example `id`: id (int64), tags (id % 3 strings "<id>:<k>"); bad != 0: id as a float_list. */
static wb example(int64_t id, int bad) {
  wb fs = {0};
  float f = (float)id;
  wb idf = bad ? feat_floats(&f, 1, 1) : feat_ints(&id, 1, 1);
  ex_entry(&fs, "id", 2, &idf);
  char t[3][32];
  const char *tp[3];
  for (int k = 0; k < id % 3; k++) {
    snprintf(t[k], sizeof t[k], "%lld:%d", (long long)id, k);
    tp[k] = t[k];
  }
  wb tags = feat_bytes(tp, NULL, (size_t)(id % 3));
  ex_entry(&fs, "tags", 4, &tags);
  wb x = ex_wrap(&fs);
  wb_free(&fs);
  wb_free(&idf);
  wb_free(&tags);
  return x;
}

/* A TFRecord file of examples 0..n-1 (example `bad` malformed, -1: none); offsets[i] = the
 * byte offset of record i. */
static const char *write_examples(const char *name, int n, int bad, int64_t *offsets) {
  const char *p = path_of(name);
  tfq_tfrecord_writer *w;
  cr_assert_eq(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL), TFQ_OK);
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    wb x = example(i, i == bad);
    if (offsets) offsets[i] = off;
    off += 16 + (int64_t)x.n;
    OK(tfq_tfrecord_writer_write(w, x.p, x.n, NULL));
    wb_free(&x);
  }
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  return p;
}

static tfq_example_config *config(void) {
  tfq_example_config *c;
  OK(tfq_example_config_new(&c, NULL));
  OK(tfq_example_config_add_fixed_len(c, "id", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_var_len(c, "tags", TFQ_STRING, NULL));
  return c;
}

typedef struct fx {
  tfq_example_config *cfg;
  tfq_sparse_map *map;
  tfq_reader *reader;
  tfq_queue *work, *target;
  tfq_read_parse_op *op;
  tfq_status *st;
} fx;

/* The op over `path`, reading `batch` records per run; with_target: a FIFOQueue of its spec. */
static fx setup(const char *path, int64_t batch, int keys, int with_target) {
  fx f;
  f.cfg = config();
  f.st = tfq_status_new();
  OK(tfq_sparse_map_new("m", &f.map, NULL));
  f.reader = new_reader(TFQ_READER_TFRECORD, NULL);
  f.work = work_of(&path, 1);
  f.target = NULL;
  tfq_read_parse_op *probe;
  OK(tfq_read_parse_op_new(f.reader, f.work, f.cfg, f.map, batch, NULL, &probe, NULL));
  tfq_read_parse_op_set_keys(probe, keys);
  tfq_spec *spec;
  OK(tfq_read_parse_op_spec(probe, &spec, NULL));
  tfq_read_parse_op_free(probe);
  if (with_target) f.target = fifo(spec, 100);
  tfq_spec_free(spec);
  OK(tfq_read_parse_op_new(f.reader, f.work, f.cfg, f.map, batch, f.target, &f.op, NULL));
  tfq_read_parse_op_set_keys(f.op, keys);
  return f;
}

static void teardown(fx *f) {
  tfq_read_parse_op_free(f->op);
  tfq_queue_free(f->target);
  tfq_queue_free(f->work);
  tfq_reader_free(f->reader);
  tfq_sparse_map_free(f->map);
  tfq_example_config_free(f->cfg);
  tfq_status_free(f->st);
}

/* Checks rows of a batch (id, handle[, key]): ids first..first+n-1, their tags through the map. */
static void check_rows(fx *f, const tfq_tuple *t, int64_t first, const char *path,
                       const int64_t *offsets) {
  const tfq_tensor *ids = tfq_tuple_get(t, 0);
  int64_t n = tfq_tensor_dim(ids, 0);
  const int64_t *id = tfq_tensor_cdata(ids);
  tfq_sparse_tensor sp;
  cr_assert_eq(tfq_sparse_map_take_many(f->map, tfq_tuple_get(t, 1), TFQ_STRING, &sp, f->st),
               TFQ_OK, "%s", tfq_status_message(f->st));
  const int64_t *ix = tfq_tensor_cdata(sp.indices);
  int64_t at = 0;
  for (int64_t r = 0; r < n; r++) {
    cr_assert_eq(id[r], first + r);
    for (int k = 0; k < id[r] % 3; k++, at++) {
      char want[32];
      snprintf(want, sizeof want, "%lld:%d", (long long)id[r], k);
      cr_assert(ix[2 * at] == r && ix[2 * at + 1] == k);
      cr_assert_str_eq(S(sp.values, at), want);
    }
    if (tfq_tuple_size(t) > 2) {
      char key[600];
      snprintf(key, sizeof key, "%s:%lld", path, (long long)offsets[id[r]]);
      cr_assert_str_eq(S(tfq_tuple_get(t, 2), r), key);
    }
  }
  cr_assert_eq(tfq_tensor_num_elements(sp.values), at);
  tfq_sparse_tensor_release(&sp);
}

Test(parse_op, the_spec_is_one_component_per_feature_plus_the_key) {
  const char *p = write_examples("a.tfrecord", 1, -1, NULL);
  fx f = setup(p, 4, 1, 0);
  tfq_spec *s;
  OK(tfq_read_parse_op_spec(f.op, &s, NULL));
  cr_assert_eq(tfq_spec_size(s), 3);
  cr_assert_str_eq(tfq_spec_name(s, 0), "id");
  cr_assert_eq(tfq_spec_dtype(s, 0), TFQ_INT64);
  cr_assert_eq(tfq_spec_rank(s, 0), 0);
  cr_assert_str_eq(tfq_spec_name(s, 1), "tags");
  cr_assert_eq(tfq_spec_dtype(s, 1), TFQ_INT64); /* the handle */
  cr_assert_eq(tfq_spec_rank(s, 1), 0);
  cr_assert_eq(tfq_spec_dtype(s, 2), TFQ_STRING);
  cr_assert_null(tfq_spec_name(s, 2));
  tfq_spec_free(s);
  /* without a target the step refuses to run */
  cr_assert_eq(tfq_read_parse_step(f.op, NULL, f.st), TFQ_FAILED_PRECONDITION);
  teardown(&f);
}

Test(parse_op, the_step_delivers_every_record_with_its_sparse_values_and_key) {
  int64_t off[10];
  const char *p = write_examples("a.tfrecord", 10, -1, off);
  fx f = setup(p, 4, 1, 1);
  tfq_code c;
  int runs = 0;
  while ((c = tfq_read_parse_step(f.op, NULL, f.st)) == TFQ_OK) runs++;
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(f.st));
  cr_assert_eq(runs, 3); /* 4 + 4 + 2 */
  cr_assert_eq(tfq_read_parse_op_records(f.op), 10);
  cr_assert_eq(tfq_sparse_map_size(f.map), 10);
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 10, &t, NULL, NOTIMEOUT, NULL));
  check_rows(&f, t, 0, p, off);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_sparse_map_size(f.map), 0);
  teardown(&f);
}

Test(parse_op, a_parse_error_delivers_the_records_before_it_and_names_the_bad_one) {
  int64_t off[6];
  const char *p = write_examples("bad.tfrecord", 6, 3, off);
  fx f = setup(p, 4, 1, 1); /* reads 0-3, then 4-5 */
  cr_assert_eq(tfq_read_parse_step(f.op, NULL, f.st), TFQ_INVALID_ARGUMENT);
  char prefix[600];
  snprintf(prefix, sizeof prefix, "%s:%lld: Name: <unknown>, Key: id, Index: 3.", p,
           (long long)off[3]);
  cr_assert(!strncmp(tfq_status_message(f.st), prefix, strlen(prefix)), "%s",
            tfq_status_message(f.st));
  cr_assert(!strncmp(tfq_status_reason(f.st), "Name: <unknown>, Key: id, Index: 3.", 35));
  cr_assert_str_eq(tfq_status_file(f.st), p);
  cr_assert_eq(tfq_status_offset(f.st), off[3]);
  cr_assert_eq(tfq_status_record(f.st), 3);
  cr_assert_eq(tfq_queue_size(f.target), 3);
  cr_assert_eq(tfq_read_parse_op_records(f.op), 3);
  cr_assert_eq(tfq_sparse_map_size(f.map), 3); /* only the delivered rows' values are stored */
  tfq_tuple *t;
  OK(tfq_queue_dequeue_many(f.target, 3, &t, NULL, NOTIMEOUT, NULL));
  check_rows(&f, t, 0, p, off);
  tfq_tuple_free(t);
  /* the reader goes on with the next batch: records 4 and 5 (the rest of a failing batch would
   * be dropped, as TF drops the whole batch) */
  OK(tfq_read_parse_step(f.op, NULL, f.st));
  cr_assert_eq(tfq_read_parse_step(f.op, NULL, f.st), TFQ_OUT_OF_RANGE);
  OK(tfq_queue_dequeue_many(f.target, 2, &t, NULL, NOTIMEOUT, NULL));
  check_rows(&f, t, 4, p, off);
  tfq_tuple_free(t);
  teardown(&f);
}

Test(parse_op, the_source_form_hands_out_the_good_rows_then_the_error) {
  int64_t off[6];
  const char *p = write_examples("bad.tfrecord", 6, 3, off);
  fx f = setup(p, 4, 0, 0);
  tfq_tuple *t = NULL;
  OK(tfq_read_parse_source(f.op, &t, NULL, f.st));
  cr_assert_eq(tfq_tuple_size(t), 2);
  check_rows(&f, t, 0, p, off);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_read_parse_source(f.op, &t, NULL, f.st), TFQ_INVALID_ARGUMENT);
  cr_assert_null(t);
  cr_assert_eq(tfq_status_record(f.st), 3);
  cr_assert_eq(tfq_status_offset(f.st), off[3]);
  OK(tfq_read_parse_source(f.op, &t, NULL, f.st));
  check_rows(&f, t, 4, p, off);
  tfq_tuple_free(t);
  cr_assert_eq(tfq_read_parse_source(f.op, &t, NULL, f.st), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_read_parse_op_records(f.op), 5);
  teardown(&f);
}

Test(parse_op, a_shuffle_batcher_over_the_source_delivers_every_example_once) {
  int64_t off[40];
  const char *p = write_examples("a.tfrecord", 40, -1, off);
  fx f = setup(p, 7, 0, 0);
  tfq_spec *spec;
  OK(tfq_read_parse_op_spec(f.op, &spec, NULL));
  tfq_coord *coord;
  OK(tfq_coord_new(&coord, NULL));
  tfq_batch_options *bo;
  OK(tfq_batch_options_new(&bo, NULL));
  tfq_batch_options_set_enqueue_many(bo, 1);
  tfq_batch_options_set_num_threads(bo, 2);
  tfq_batch_options_set_capacity(bo, 30);
  tfq_batch_options_set_min_after_dequeue(bo, 10);
  tfq_batch_options_set_allow_smaller_final_batch(bo, 1);
  tfq_source_fn src = tfq_read_parse_source;
  void *ctx = f.op;
  tfq_batcher *b;
  cr_assert_eq(
      tfq_batcher_new(TFQ_BATCHER_SHUFFLE_BATCH, spec, 8, &src, &ctx, 1, bo, coord, &b, f.st),
      TFQ_OK, "%s", tfq_status_message(f.st));
  int seen[40] = {0}, total = 0;
  tfq_tuple *t;
  while (tfq_batcher_next(b, &t, f.st) == TFQ_OK) {
    const tfq_tensor *ids = tfq_tuple_get(t, 0);
    int64_t n = tfq_tensor_dim(ids, 0);
    const int64_t *id = tfq_tensor_cdata(ids);
    tfq_sparse_tensor sp;
    OK(tfq_sparse_map_take_many(f.map, tfq_tuple_get(t, 1), TFQ_STRING, &sp, f.st));
    const int64_t *ix = tfq_tensor_cdata(sp.indices), *ds = tfq_tensor_cdata(sp.dense_shape);
    cr_assert_eq(ds[0], n);
    cr_assert_leq(ds[1], 2);
    int64_t nv = tfq_tensor_num_elements(sp.values);
    for (int64_t k = 0; k < nv; k++) {
      char want[32];
      snprintf(want, sizeof want, "%lld:%lld", (long long)id[ix[2 * k]], (long long)ix[2 * k + 1]);
      cr_assert_str_eq(S(sp.values, k), want);
    }
    int64_t want_nv = 0;
    for (int64_t r = 0; r < n; r++) {
      seen[id[r]]++;
      want_nv += id[r] % 3;
    }
    cr_assert_eq(nv, want_nv);
    total += (int)n;
    tfq_sparse_tensor_release(&sp);
    tfq_tuple_free(t);
  }
  cr_assert_eq(tfq_status_code(f.st), TFQ_OUT_OF_RANGE, "%s", tfq_status_message(f.st));
  cr_assert_eq(total, 40);
  for (int i = 0; i < 40; i++) cr_assert_eq(seen[i], 1, "example %d seen %d times", i, seen[i]);
  cr_assert_eq(tfq_sparse_map_size(f.map), 0);
  OK(tfq_coord_request_stop(coord, TFQ_OK, NULL));
  OK(tfq_coord_join(coord, 10000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(bo);
  tfq_coord_free(coord);
  tfq_spec_free(spec);
  teardown(&f);
}

Test(parse_op, new_checks_its_arguments) {
  const char *p = write_examples("a.tfrecord", 1, -1, NULL);
  tfq_example_config *cfg = config(), *empty;
  OK(tfq_example_config_new(&empty, NULL));
  tfq_reader *r = new_reader(TFQ_READER_TFRECORD, NULL);
  tfq_queue *w = work_of(&p, 1);
  tfq_sparse_map *m;
  OK(tfq_sparse_map_new(NULL, &m, NULL));
  tfq_status *st = tfq_status_new();
  tfq_read_parse_op *op = (tfq_read_parse_op *)1;
  cr_assert_eq(tfq_read_parse_op_new(r, w, cfg, m, 0, NULL, &op, st), TFQ_INVALID_ARGUMENT);
  cr_assert_null(op);
  cr_assert_str_eq(tfq_status_message(st), "batch must be >= 1, got 0");
  cr_assert_eq(tfq_read_parse_op_new(r, w, cfg, NULL, 4, NULL, &op, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "a sparse feature needs a tfq_sparse_map (feature tags)");
  cr_assert_eq(tfq_read_parse_op_new(r, w, empty, NULL, 4, NULL, &op, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Argument `features` cannot be None or falsy. Got {}");
  tfq_read_parse_op_free(NULL); /* no-op */
  tfq_status_free(st);
  tfq_sparse_map_free(m);
  tfq_queue_free(w);
  tfq_reader_free(r);
  tfq_example_config_free(empty);
  tfq_example_config_free(cfg);
}
