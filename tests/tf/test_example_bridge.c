/* Parsed tf.train.Examples into TensorFlow through the bridge (issue #17, "Bridge").
 *
 * argv[1] is the GraphDef written by test_example_bridge.py: dense placeholders xy float [?,2]
 * and id int64 [?], tf.compat.v1.sparse_placeholder()s tags (int64, shape [None, None]: its
 * dense_shape is a PlaceholderWithDefault) and words (string, no shape), a `serialized` string
 * [?] placeholder, ops computing on all of them, and TF's own tf.io.parse_example of
 * `serialized`.
 *
 *  - tfq_tf_feed_new_example: the inputs it resolves equal tfq_tf_feed_new's with the eight
 *    names written out; explicit and partly NULL names; names in the wrong order, a missing
 *    sparse placeholder, a wrong static shape (dense and sparse) and an empty config are refused.
 *  - Mode A: batches of 5, 1, 0, 17, 8 and 33 Examples built here are parsed with
 *    tfq_parse_example_strings (xy FixedLen float [2] with a default, id FixedLen int64 [],
 *    tags VarLen int64, words VarLen string), turned into 8-component tuples with
 *    tfq_example_result_to_tuple and fed to a local session together with the serialized
 *    records.  Element by element, what TF computes from the fed tensors (sparse.to_dense,
 *    sparse.reduce_sum per row, sums of indices/values/shape, string lengths, dense sums,
 *    -xy, id + 1) equals what tfq parsed, and TF's own parse of the same records equals it too.
 *    Every numeric buffer lent to TF comes back.
 *  - Mode B: the dense features (id, xy) of the same batches go into a FIFOQueue by shared name
 *    on an in-process server (tfq_tf_queue_open + tfq_tf_queue_enqueue_many); a second session
 *    (C API: FIFOQueueV2 + QueueDequeueUpToV2) dequeues all 64 rows in order, then OUT_OF_RANGE.
 */
#include <string.h>
#include <tensorflow/c/tf_tstring.h>

#include "../unit/example_ref.h"
#include "tf_test_util.h"

static const int64_t SIZES[] = {5, 1, 0, 17, 8, 33};
#define NBATCH ((int)(sizeof SIZES / sizeof SIZES[0]))
#define NEX 64 /* sum of SIZES */

/* ---- the Examples -------------------------------------------------------------------------- */

static int64_t ex_id(int64_t g) { return g * 1000003 - 40000000; }

/* Example g: id always; xy except when g % 4 == 3 (the default then); tags (g % 5 values) except
 * when g % 7 == 6; words ((3g) % 4 values, an empty one and embedded NULs among them). */
static wb make_example(int64_t g) {
  wb fs = {0}, f;
  int64_t id = ex_id(g);
  f = feat_ints(&id, 1, (int)(g % 2));
  ex_entry(&fs, "id", 2, &f);
  wb_free(&f);
  if (g % 4 != 3) {
    float xy[2] = {(float)g * 0.5f, -(float)g * 0.25f - 3.0f};
    f = feat_floats(xy, 2, g % 3 == 0);
    ex_entry(&fs, "xy", 2, &f);
    wb_free(&f);
  }
  if (g % 7 != 6) {
    int64_t t[4];
    size_t nt = (size_t)(g % 5);
    for (size_t k = 0; k < nt; k++) t[k] = g * 100 + (int64_t)(k * k) - 250;
    f = feat_ints(t, nt, g % 2 == 0);
    ex_entry(&fs, "tags", 4, &f);
    wb_free(&f);
  }
  char buf[4][32];
  const char *wp[4];
  size_t wl[4], nw = (size_t)((g * 3) % 4);
  for (size_t k = 0; k < nw; k++) {
    int n = snprintf(buf[k], sizeof buf[k], "w%lld_%zu", (long long)g, k);
    if (k == 2) buf[k][1] = '\0'; /* an embedded NUL */
    wp[k] = buf[k];
    wl[k] = k == 1 && g % 5 == 0 ? 0 : (size_t)n;
  }
  f = feat_bytes(wp, wl, nw);
  ex_entry(&fs, "words", 5, &f);
  wb_free(&f);
  wb x = ex_wrap(&fs);
  wb_free(&fs);
  return x;
}

static tfq_example_config *make_config(tfq_status *st) {
  tfq_example_config *cfg;
  CHECK_OK(tfq_example_config_new(&cfg, st), st);
  int64_t two = 2;
  tfq_tensor *def;
  CHECK_OK(tfq_tensor_new(TFQ_FLOAT, &two, 1, &def, st), st);
  ((float *)tfq_tensor_data(def))[0] = -1.5f;
  ((float *)tfq_tensor_data(def))[1] = 2.25f;
  /* Added in another order than the outputs' (id, tags, words, xy). */
  CHECK_OK(tfq_example_config_add_fixed_len(cfg, "xy", TFQ_FLOAT, &two, 1, def, st), st);
  CHECK_OK(tfq_example_config_add_fixed_len(cfg, "id", TFQ_INT64, NULL, 0, NULL, st), st);
  CHECK_OK(tfq_example_config_add_var_len(cfg, "tags", TFQ_INT64, st), st);
  CHECK_OK(tfq_example_config_add_var_len(cfg, "words", TFQ_STRING, st), st);
  tfq_tensor_free(def);
  return cfg;
}

/* ---- the graph ----------------------------------------------------------------------------- */

static TF_Graph *import_graph(const char *path) {
  FILE *fp = fopen(path, "rb");
  CHECK(fp != NULL, "cannot open %s", path);
  CHECK(fseek(fp, 0, SEEK_END) == 0, "seek");
  long len = ftell(fp);
  CHECK(len > 0, "empty GraphDef %s", path);
  rewind(fp);
  char *data = malloc((size_t)len);
  CHECK(data && fread(data, 1, (size_t)len, fp) == (size_t)len, "read %s", path);
  fclose(fp);
  TF_Buffer *buf = TF_NewBufferFromString(data, (size_t)len);
  free(data);
  TF_Graph *g = TF_NewGraph();
  TF_ImportGraphDefOptions *o = TF_NewImportGraphDefOptions();
  TF_Status *s = TF_NewStatus();
  TF_GraphImportGraphDef(g, buf, o, s);
  CHECK(TF_GetCode(s) == TF_OK, "import: %s", TF_Message(s));
  TF_DeleteStatus(s);
  TF_DeleteImportGraphDefOptions(o);
  TF_DeleteBuffer(buf);
  return g;
}

static TF_Output out0(TF_Graph *g, const char *name) {
  TF_Operation *op = TF_GraphOperationByName(g, name);
  CHECK(op != NULL, "no op %s in the GraphDef", name);
  return (TF_Output){op, 0};
}

/* ---- tfq_tf_feed_new_example: resolution and refusals ------------------------------------- */

static void expect_refused(TF_Graph *g, const tfq_example_config *cfg, const char *const *names,
                           tfq_code want, const char *msg, tfq_status *st) {
  tfq_tf_feed *f = (tfq_tf_feed *)1;
  tfq_code c = tfq_tf_feed_new_example(g, cfg, names, &f, st);
  CHECK(c == want && f == NULL, "got %s, want %s: %s", tfq_code_name(c), tfq_code_name(want),
        tfq_status_message(st));
  CHECK(strcmp(tfq_status_message(st), msg) == 0, "message\n  got  %s\n  want %s",
        tfq_status_message(st), msg);
  printf("example_bridge: refused (%s) %s\n", tfq_code_name(c), msg);
}

static void test_resolution(TF_Graph *g, const tfq_example_config *cfg) {
  tfq_status *st = tfq_status_new();
  const char *by_hand[8] = {
      "id",           "tags/indices", "tags/values", "tags/shape", "words/indices",
      "words/values", "words/shape",  "xy"};
  tfq_tf_feed *ref;
  CHECK_OK(tfq_tf_feed_new(g, by_hand, 8, &ref, st), st);
  const char *explicit_names[4] = {"id", "tags", "words", "xy"};
  const char *some_null[4] = {NULL, "tags", NULL, NULL};
  const char *const *variants[3] = {NULL, explicit_names, some_null};
  for (int v = 0; v < 3; v++) {
    tfq_tf_feed *f;
    CHECK_OK(tfq_tf_feed_new_example(g, cfg, variants[v], &f, st), st);
    const TF_Output *a = tfq_tf_feed_inputs(f), *b = tfq_tf_feed_inputs(ref);
    for (int i = 0; i < 8; i++)
      CHECK(a[i].oper == b[i].oper && a[i].index == b[i].index, "variant %d input %d (%s)", v, i,
            by_hand[i]);
    CHECK(tfq_tf_feed_count(f) == 0, "no tensors before a set");
    tfq_tf_feed_free(f);
  }
  tfq_tf_feed_free(ref);
  printf(
      "example_bridge: the feed resolves id, tags/{indices,values,shape}, "
      "words/{indices,values,shape}, xy (names NULL, explicit, partly NULL)\n");

  const char *add_order[4] = {"xy", "id", "tags", "words"};
  expect_refused(g, cfg, add_order, TFQ_INVALID_ARGUMENT,
                 "Feature 'id' (int64 [?]) cannot feed 'xy' (float)", st);
  const char *swapped[4] = {"id", "words", "tags", "xy"};
  expect_refused(g, cfg, swapped, TFQ_INVALID_ARGUMENT,
                 "Feature 'tags' values (int64 [?]) cannot feed 'words/values' (string)", st);
  const char *missing[4] = {"id", "nope", "words", "xy"};
  expect_refused(g, cfg, missing, TFQ_NOT_FOUND,
                 "No operation named 'nope/indices' in the graph (sparse feature 'tags' feeds a "
                 "tf.compat.v1.sparse_placeholder named 'nope': nope/indices, nope/values, "
                 "nope/shape)",
                 st);
  const char *dense_missing[4] = {"ids", NULL, NULL, NULL};
  expect_refused(g, cfg, dense_missing, TFQ_NOT_FOUND, "No operation named 'ids' in the graph", st);

  /* Static shapes: xy as FixedLen [3]; tags as a SparseFeature of rank 2 (indices [?,3]); a
   * FixedLen int64 [2] fed to the int64 [?] placeholder id. */
  tfq_example_config *bad;
  int64_t three = 3, two = 2, size[2] = {4, 5};
  const char *ik[2] = {"i0", "i1"};
  CHECK_OK(tfq_example_config_new(&bad, st), st);
  CHECK_OK(tfq_example_config_add_fixed_len(bad, "xy", TFQ_FLOAT, &three, 1, NULL, st), st);
  expect_refused(g, bad, NULL, TFQ_INVALID_ARGUMENT,
                 "Feature 'xy' (float [?,3]) cannot feed 'xy' of shape [?,2]", st);
  tfq_example_config_free(bad);
  CHECK_OK(tfq_example_config_new(&bad, st), st);
  CHECK_OK(tfq_example_config_add_sparse(bad, "tags", ik, 2, "v", TFQ_INT64, size, 0, st), st);
  expect_refused(g, bad, NULL, TFQ_INVALID_ARGUMENT,
                 "Feature 'tags' indices (int64 [?,3]) cannot feed 'tags/indices' of shape [?,2]",
                 st);
  tfq_example_config_free(bad);
  CHECK_OK(tfq_example_config_new(&bad, st), st);
  CHECK_OK(tfq_example_config_add_fixed_len(bad, "id", TFQ_INT64, &two, 1, NULL, st), st);
  expect_refused(g, bad, NULL, TFQ_INVALID_ARGUMENT,
                 "Feature 'id' (int64 [?,2]) cannot feed 'id' of shape [?]", st);
  tfq_example_config_free(bad);
  CHECK_OK(tfq_example_config_new(&bad, st), st);
  expect_refused(g, bad, NULL, TFQ_INVALID_ARGUMENT,
                 "A feed for parsed Examples needs a config with at least one feature", st);
  tfq_example_config_free(bad);
  tfq_status_free(st);
}

/* ---- mode A -------------------------------------------------------------------------------- */

enum {
  XY_SUM,
  XY_NEG,
  ID_SUM,
  ID_PLUS1,
  TAGS_DENSE,
  TAGS_ROW_SUM,
  TAGS_IX_SUM,
  TAGS_VAL_SUM,
  TAGS_SHAPE,
  WORDS_DENSE,
  WORDS_LEN_SUM,
  WORDS_SHAPE,
  REF_XY,
  REF_ID,
  REF_TAGS_DENSE,
  REF_WORDS_DENSE,
  REF_TAGS_SHAPE,
  REF_WORDS_SHAPE,
  NFETCH
};
static const char *const FETCH_NAMES[NFETCH] = {
    "xy_sum",          "xy_neg",          "id_sum",         "id_plus1",       "tags_dense",
    "tags_row_sum",    "tags_ix_sum",     "tags_val_sum",   "tags_shape_out", "words_dense",
    "words_len_sum",   "words_shape_out", "ref_xy",         "ref_id",         "ref_tags_dense",
    "ref_words_dense", "ref_tags_shape",  "ref_words_shape"};

static void check_shape(TF_Tensor *t, const char *what, int rank, int64_t d0, int64_t d1) {
  CHECK(TF_NumDims(t) == rank, "%s: rank %d, want %d", what, TF_NumDims(t), rank);
  if (rank > 0)
    CHECK(TF_Dim(t, 0) == d0, "%s: dim 0 %lld, want %lld", what, (long long)TF_Dim(t, 0),
          (long long)d0);
  if (rank > 1)
    CHECK(TF_Dim(t, 1) == d1, "%s: dim 1 %lld, want %lld", what, (long long)TF_Dim(t, 1),
          (long long)d1);
}

static int str_eq(const TF_TString *t, const char *p, size_t n) {
  return TF_StringGetSize(t) == n && (n == 0 || memcmp(TF_StringGetDataPointer(t), p, n) == 0);
}

/* One batch: parse, feed (plus the serialized records), compare.  Returns the numeric buffers
 * that should have been lent (non-empty numeric components). */
static int64_t run_batch(TF_Session *sess, tfq_tf_feed *feed, const tfq_example_config *cfg,
                         const TF_Output *fetch, TF_Output serialized_in, const char *const *ptrs,
                         const size_t *lens, int64_t n, int bi, tfq_status *st) {
  tfq_example_result *res;
  CHECK_OK(tfq_parse_example_strings(cfg, ptrs, lens, n, NULL, NULL, &res, st), st);
  tfq_tuple *tup;
  CHECK_OK(tfq_example_result_to_tuple(res, &tup, st), st);
  CHECK(tfq_tuple_size(tup) == 8, "tuple of %zu components", tfq_tuple_size(tup));
  int64_t lend = 0;
  for (size_t i = 0; i < 8; i++) {
    tfq_tensor *t = tfq_tuple_get(tup, i);
    if (tfq_tensor_dtype(t) != TFQ_STRING && tfq_tensor_num_elements(t) > 0) lend++;
  }

  /* The serialized records, for TF's own parse. */
  tfq_tensor *ser;
  CHECK_OK(tfq_tensor_new(TFQ_STRING, &n, 1, &ser, st), st);
  for (int64_t i = 0; i < n; i++) CHECK_OK(tfq_tensor_set_string(ser, i, ptrs[i], lens[i], st), st);
  TF_Tensor *ser_tf;
  CHECK_OK(tfq_tf_tensor_to_tf(ser, &ser_tf, st), st);
  tfq_tensor_free(ser);

  /* The feed's arrays plus one input: tfq_tf_feed_set / TF_SessionRun / tfq_tf_feed_clear. */
  CHECK_OK(tfq_tf_feed_set(feed, tup, st), st);
  int nin = tfq_tf_feed_count(feed);
  CHECK(nin == 8, "feed count %d", nin);
  TF_Output in[9];
  TF_Tensor *vals[9];
  memcpy(in, tfq_tf_feed_inputs(feed), 8 * sizeof in[0]);
  memcpy(vals, tfq_tf_feed_values(feed), 8 * sizeof vals[0]);
  in[8] = serialized_in;
  vals[8] = ser_tf;
  TF_Tensor *o[NFETCH];
  TF_Status *s = TF_NewStatus();
  TF_SessionRun(sess, NULL, in, vals, 9, fetch, o, NFETCH, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_OK, "batch %d: run: %s", bi, TF_Message(s));
  TF_DeleteStatus(s);
  tfq_tf_feed_clear(feed);
  TF_DeleteTensor(ser_tf);

  /* tfq's outputs. */
  const int64_t *id = tfq_tensor_cdata(tfq_example_result_dense(res, 0));
  const float *xy = tfq_tensor_cdata(tfq_example_result_dense(res, 3));
  const tfq_sparse_tensor *tags = tfq_example_result_sparse(res, 1);
  const tfq_sparse_tensor *words = tfq_example_result_sparse(res, 2);
  CHECK(strcmp(tfq_example_result_key(res, 0), "id") == 0 &&
            strcmp(tfq_example_result_key(res, 3), "xy") == 0 && tags && words,
        "output order");
  const int64_t *tsh = tfq_tensor_cdata(tags->dense_shape);
  const int64_t *tix = tfq_tensor_cdata(tags->indices);
  const int64_t *tv = tfq_tensor_cdata(tags->values);
  const int64_t *wsh = tfq_tensor_cdata(words->dense_shape);
  const int64_t *wix = tfq_tensor_cdata(words->indices);
  int64_t nt = tfq_tensor_dim(tags->values, 0), nw = tfq_tensor_dim(words->values, 0);
  CHECK(tsh[0] == n && wsh[0] == n, "dense_shape[0]");
  int64_t tw = tsh[1], ww = wsh[1];

  /* Dense: -xy and id + 1 element by element, the sums; TF's parse equals tfq's. */
  check_shape(o[XY_NEG], "xy_neg", 2, n, 2);
  check_shape(o[REF_XY], "ref_xy", 2, n, 2);
  check_shape(o[ID_PLUS1], "id_plus1", 1, n, 0);
  check_shape(o[REF_ID], "ref_id", 1, n, 0);
  const float *xneg = TF_TensorData(o[XY_NEG]), *rxy = TF_TensorData(o[REF_XY]);
  const int64_t *idp = TF_TensorData(o[ID_PLUS1]), *rid = TF_TensorData(o[REF_ID]);
  float sx[2] = {0, 0};
  int64_t sid = 0;
  for (int64_t i = 0; i < n; i++) {
    for (int j = 0; j < 2; j++) {
      CHECK(xneg[2 * i + j] == -xy[2 * i + j], "batch %d xy[%lld][%d]: TF %g, tfq %g", bi,
            (long long)i, j, -xneg[2 * i + j], xy[2 * i + j]);
      CHECK(rxy[2 * i + j] == xy[2 * i + j], "batch %d xy[%lld][%d]: TF's parse %g, tfq %g", bi,
            (long long)i, j, rxy[2 * i + j], xy[2 * i + j]);
      sx[j] += xy[2 * i + j];
    }
    CHECK(idp[i] == id[i] + 1, "batch %d id[%lld]", bi, (long long)i);
    CHECK(rid[i] == id[i], "batch %d id[%lld]: TF's parse %lld, tfq %lld", bi, (long long)i,
          (long long)rid[i], (long long)id[i]);
    sid += id[i];
  }
  check_shape(o[XY_SUM], "xy_sum", 1, 2, 0);
  check_shape(o[ID_SUM], "id_sum", 0, 0, 0);
  const float *txs = TF_TensorData(o[XY_SUM]);
  CHECK(txs[0] == sx[0] && txs[1] == sx[1], "batch %d xy sums: TF %g %g, tfq %g %g", bi, txs[0],
        txs[1], sx[0], sx[1]);
  CHECK(*(const int64_t *)TF_TensorData(o[ID_SUM]) == sid, "batch %d id sum", bi);

  /* tags: to_dense element by element (tfq's and TF's parse), row sums, index/value/shape sums. */
  check_shape(o[TAGS_SHAPE], "tags_shape", 1, 2, 0);
  check_shape(o[REF_TAGS_SHAPE], "ref_tags_shape", 1, 2, 0);
  const int64_t *tfsh = TF_TensorData(o[TAGS_SHAPE]), *rtsh = TF_TensorData(o[REF_TAGS_SHAPE]);
  CHECK(tfsh[0] == n && tfsh[1] == tw && rtsh[0] == n && rtsh[1] == tw,
        "batch %d tags dense_shape: fed [%lld,%lld] TF's parse [%lld,%lld] tfq [%lld,%lld]", bi,
        (long long)tfsh[0], (long long)tfsh[1], (long long)rtsh[0], (long long)rtsh[1],
        (long long)n, (long long)tw);
  int64_t *dense = malloc((size_t)(n * tw + 1) * sizeof *dense);
  int64_t *rows = calloc((size_t)n + 1, sizeof *rows);
  CHECK(dense && rows, "oom");
  for (int64_t i = 0; i < n * tw; i++) dense[i] = -7;
  int64_t six[2] = {0, 0}, sv = 0;
  for (int64_t k = 0; k < nt; k++) {
    dense[tix[2 * k] * tw + tix[2 * k + 1]] = tv[k];
    rows[tix[2 * k]] += tv[k];
    six[0] += tix[2 * k];
    six[1] += tix[2 * k + 1];
    sv += tv[k];
  }
  check_shape(o[TAGS_DENSE], "tags_dense", 2, n, tw);
  check_shape(o[REF_TAGS_DENSE], "ref_tags_dense", 2, n, tw);
  const int64_t *td = TF_TensorData(o[TAGS_DENSE]), *rtd = TF_TensorData(o[REF_TAGS_DENSE]);
  for (int64_t i = 0; i < n * tw; i++) {
    CHECK(td[i] == dense[i], "batch %d tags[%lld][%lld]: TF %lld, tfq %lld", bi,
          (long long)(i / tw), (long long)(i % tw), (long long)td[i], (long long)dense[i]);
    CHECK(rtd[i] == dense[i], "batch %d tags[%lld][%lld]: TF's parse %lld, tfq %lld", bi,
          (long long)(i / tw), (long long)(i % tw), (long long)rtd[i], (long long)dense[i]);
  }
  check_shape(o[TAGS_ROW_SUM], "tags_row_sum", 1, n, 0);
  const int64_t *trs = TF_TensorData(o[TAGS_ROW_SUM]);
  for (int64_t i = 0; i < n; i++)
    CHECK(trs[i] == rows[i], "batch %d tags row %lld sum: TF %lld, tfq %lld", bi, (long long)i,
          (long long)trs[i], (long long)rows[i]);
  const int64_t *tixs = TF_TensorData(o[TAGS_IX_SUM]);
  CHECK(tixs[0] == six[0] && tixs[1] == six[1], "batch %d tags index sums", bi);
  CHECK(*(const int64_t *)TF_TensorData(o[TAGS_VAL_SUM]) == sv, "batch %d tags value sum", bi);
  free(dense);
  free(rows);

  /* words: to_dense element by element (tfq's and TF's parse), string lengths, shape. */
  check_shape(o[WORDS_SHAPE], "words_shape", 1, 2, 0);
  check_shape(o[REF_WORDS_SHAPE], "ref_words_shape", 1, 2, 0);
  const int64_t *wfsh = TF_TensorData(o[WORDS_SHAPE]), *rwsh = TF_TensorData(o[REF_WORDS_SHAPE]);
  CHECK(wfsh[0] == n && wfsh[1] == ww && rwsh[0] == n && rwsh[1] == ww,
        "batch %d words dense_shape", bi);
  int64_t *at = malloc((size_t)(n * ww + 1) * sizeof *at); /* value index or -1 */
  CHECK(at != NULL, "oom");
  for (int64_t i = 0; i < n * ww; i++) at[i] = -1;
  int64_t slen = 0;
  for (int64_t k = 0; k < nw; k++) {
    size_t l;
    (void)tfq_tensor_string(words->values, k, &l);
    at[wix[2 * k] * ww + wix[2 * k + 1]] = k;
    slen += (int64_t)l;
  }
  check_shape(o[WORDS_DENSE], "words_dense", 2, n, ww);
  check_shape(o[REF_WORDS_DENSE], "ref_words_dense", 2, n, ww);
  const TF_TString *wd = TF_TensorData(o[WORDS_DENSE]), *rwd = TF_TensorData(o[REF_WORDS_DENSE]);
  for (int64_t i = 0; i < n * ww; i++) {
    size_t l = 6;
    const char *p = "<none>";
    if (at[i] >= 0) p = tfq_tensor_string(words->values, at[i], &l);
    CHECK(str_eq(&wd[i], p, l), "batch %d words[%lld][%lld]: TF '%.*s', tfq '%.*s'", bi,
          (long long)(i / ww), (long long)(i % ww), (int)TF_StringGetSize(&wd[i]),
          TF_StringGetDataPointer(&wd[i]), (int)l, p);
    CHECK(str_eq(&rwd[i], p, l), "batch %d words[%lld][%lld]: TF's parse differs from tfq", bi,
          (long long)(i / ww), (long long)(i % ww));
  }
  CHECK(*(const int32_t *)TF_TensorData(o[WORDS_LEN_SUM]) == (int32_t)slen,
        "batch %d words length sum: TF %d, tfq %lld", bi,
        (int)*(const int32_t *)TF_TensorData(o[WORDS_LEN_SUM]), (long long)slen);
  free(at);

  printf(
      "example_bridge: mode A batch %d: %lld examples, tags %lld values [%lld,%lld], words "
      "%lld values [%lld,%lld]: TF's view equals tfq's parse and TF's own parse\n",
      bi, (long long)n, (long long)nt, (long long)n, (long long)tw, (long long)nw, (long long)n,
      (long long)ww);
  for (int i = 0; i < NFETCH; i++) TF_DeleteTensor(o[i]);
  tfq_tuple_free(tup);
  tfq_example_result_free(res);
  return lend;
}

static void test_mode_a(TF_Graph *g, const tfq_example_config *cfg, const char *const *ptrs,
                        const size_t *lens) {
  tfq_status *st = tfq_status_new();
  TF_Status *s = TF_NewStatus();
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteSessionOptions(so);
  TF_Output fetch[NFETCH];
  for (int i = 0; i < NFETCH; i++) fetch[i] = out0(g, FETCH_NAMES[i]);
  tfq_tf_feed *feed;
  CHECK_OK(tfq_tf_feed_new_example(g, cfg, NULL, &feed, st), st);

  int64_t lent0, ret0, lent1, ret1, want = 0, off = 0;
  tfq_tf_lent_counts(&lent0, &ret0);
  for (int b = 0; b < NBATCH; b++) {
    want += run_batch(sess, feed, cfg, fetch, out0(g, "serialized"), ptrs + off, lens + off,
                      SIZES[b], b, st);
    off += SIZES[b];
  }
  tfq_tf_feed_free(feed);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteStatus(s);
  tfq_tf_lent_counts(&lent1, &ret1);
  printf("example_bridge: mode A: %lld numeric buffers lent without a copy, %lld returned\n",
         (long long)(lent1 - lent0), (long long)(ret1 - ret0));
  CHECK(lent1 - lent0 == want && ret1 - ret0 == want, "lent %lld returned %lld, want %lld",
        (long long)(lent1 - lent0), (long long)(ret1 - ret0), (long long)want);
  tfq_status_free(st);
}

/* ---- mode B -------------------------------------------------------------------------------- */

#define QNAME "tfq_example_dense"
#define QCAP 100
#define DEQ_N 10

static void test_mode_b(const tfq_example_config *cfg, const char *const *ptrs,
                        const size_t *lens) {
  tfq_status *st = tfq_status_new();
  char cluster[64];
  snprintf(cluster, sizeof cluster, "worker=127.0.0.1:%d", tft_free_port());
  tfq_tf_server *srv;
  CHECK_OK(tfq_tf_server_new(cluster, "worker", 0, &srv, st), st);
  const char *target = tfq_tf_server_target(srv), *device = "/job:worker/task:0";

  /* The dense features, in output order: id int64 [], xy float [2]. */
  tfq_spec *spec;
  int64_t two = 2;
  CHECK_OK(tfq_spec_new(&spec, st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st), st);
  CHECK_OK(tfq_spec_add(spec, TFQ_FLOAT, &two, 1, "xy", st), st);
  tfq_tf_queue_options *o;
  CHECK_OK(tfq_tf_queue_options_new(&o, st), st);
  CHECK_OK(tfq_tf_queue_options_set_target(o, target, st), st);
  CHECK_OK(tfq_tf_queue_options_set_device(o, device, st), st);
  CHECK_OK(tfq_tf_queue_options_set_shared_name(o, QNAME, st), st);
  tfq_tf_queue_options_set_capacity(o, QCAP);
  tfq_tf_queue_options_set_timeout_ms(o, 60000);
  tfq_tf_queue *q;
  CHECK_OK(tfq_tf_queue_open(spec, o, &q, st), st);
  tfq_tf_queue_options_free(o);

  int64_t want_id[NEX], off = 0;
  float want_xy[2 * NEX];
  for (int b = 0; b < NBATCH; b++) {
    tfq_example_result *res;
    CHECK_OK(tfq_parse_example_strings(cfg, ptrs + off, lens + off, SIZES[b], NULL, NULL, &res, st),
             st);
    tfq_tensor *id = tfq_example_result_dense(res, (size_t)tfq_example_result_find(res, "id"));
    tfq_tensor *xy = tfq_example_result_dense(res, (size_t)tfq_example_result_find(res, "xy"));
    if (SIZES[b] > 0) {
      memcpy(want_id + off, tfq_tensor_cdata(id), (size_t)SIZES[b] * sizeof want_id[0]);
      memcpy(want_xy + 2 * off, tfq_tensor_cdata(xy), (size_t)SIZES[b] * 2 * sizeof want_xy[0]);
    }
    tfq_tuple *dense;
    CHECK_OK(tfq_tuple_new(2, &dense, st), st);
    tfq_tuple_set_take(dense, 0, tfq_tensor_ref(id));
    tfq_tuple_set_take(dense, 1, tfq_tensor_ref(xy));
    CHECK_OK(tfq_tf_queue_enqueue_many(q, dense, st), st);
    tfq_tuple_free(dense);
    tfq_example_result_free(res);
    off += SIZES[b];
  }
  int64_t size;
  CHECK_OK(tfq_tf_queue_size(q, &size, st), st);
  CHECK(size == NEX, "TF queue holds %lld rows, want %d", (long long)size, NEX);
  CHECK_OK(tfq_tf_queue_close(q, 0, st), st);

  /* The TensorFlow side: the same queue by shared name, QueueDequeueUpToV2(DEQ_N). */
  TF_Status *s = TF_NewStatus();
  TF_Graph *g = TF_NewGraph();
  TF_DataType types[2] = {TF_INT64, TF_FLOAT};
  const int64_t *shapes[2] = {NULL, &two};
  int ranks[2] = {0, 1};
  TF_OperationDescription *d = TF_NewOperation(g, "FIFOQueueV2", "q");
  TF_SetDevice(d, device);
  TF_SetAttrTypeList(d, "component_types", types, 2);
  TF_SetAttrShapeList(d, "shapes", shapes, ranks, 2);
  TF_SetAttrInt(d, "capacity", QCAP);
  TF_SetAttrString(d, "shared_name", QNAME, strlen(QNAME));
  TF_Operation *qop = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_Tensor *nt = TF_AllocateTensor(TF_INT32, NULL, 0, 4);
  *(int32_t *)TF_TensorData(nt) = DEQ_N;
  d = TF_NewOperation(g, "Const", "n");
  TF_SetDevice(d, device);
  TF_SetAttrTensor(d, "value", nt, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_SetAttrType(d, "dtype", TF_INT32);
  TF_Operation *nop = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteTensor(nt);
  d = TF_NewOperation(g, "QueueDequeueUpToV2", "deq");
  TF_SetDevice(d, device);
  TF_AddInput(d, (TF_Output){qop, 0});
  TF_AddInput(d, (TF_Output){nop, 0});
  TF_SetAttrTypeList(d, "component_types", types, 2);
  TF_Operation *deq = TF_FinishOperation(d, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_SetTarget(so, target);
  TF_Session *sess = TF_NewSession(g, so, s);
  CHECK(TF_GetCode(s) == TF_OK, "%s", TF_Message(s));
  TF_DeleteSessionOptions(so);

  int64_t got = 0, runs = 0;
  for (;;) {
    TF_Output outs[2] = {{deq, 0}, {deq, 1}};
    TF_Tensor *v[2];
    TF_SessionRun(sess, NULL, NULL, NULL, 0, outs, v, 2, NULL, 0, NULL, s);
    if (TF_GetCode(s) == TF_OUT_OF_RANGE) break;
    CHECK(TF_GetCode(s) == TF_OK, "dequeue: %s", TF_Message(s));
    int64_t m = TF_Dim(v[0], 0);
    CHECK(m == (NEX - got < DEQ_N ? NEX - got : DEQ_N), "dequeue %lld: %lld rows", (long long)runs,
          (long long)m);
    check_shape(v[1], "dequeued xy", 2, m, 2);
    const int64_t *id = TF_TensorData(v[0]);
    const float *xy = TF_TensorData(v[1]);
    for (int64_t i = 0; i < m; i++) {
      CHECK(id[i] == want_id[got + i], "row %lld: id TF %lld, tfq %lld", (long long)(got + i),
            (long long)id[i], (long long)want_id[got + i]);
      CHECK(id[i] == ex_id(got + i), "row %lld: id %lld is not example %lld's",
            (long long)(got + i), (long long)id[i], (long long)(got + i));
      for (int j = 0; j < 2; j++)
        CHECK(xy[2 * i + j] == want_xy[2 * (got + i) + j], "row %lld: xy[%d] TF %g, tfq %g",
              (long long)(got + i), j, xy[2 * i + j], want_xy[2 * (got + i) + j]);
    }
    got += m;
    runs++;
    TF_DeleteTensor(v[0]);
    TF_DeleteTensor(v[1]);
  }
  CHECK(got == NEX, "dequeued %lld rows, want %d", (long long)got, NEX);
  printf(
      "example_bridge: mode B: %d rows of (id, xy) from %d parsed batches enqueued into FIFOQueue "
      "'%s' on %s; a C API session dequeued them all in %lld runs, in order, then "
      "OUT_OF_RANGE\n",
      NEX, NBATCH, QNAME, device, (long long)runs);
  TF_CloseSession(sess, s);
  TF_DeleteSession(sess, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
  tfq_tf_queue_free(q);
  tfq_spec_free(spec);
  tfq_tf_server_free(srv);
  tfq_status_free(st);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s GRAPHDEF (run by test_example_bridge.py)\n", argv[0]);
    return 1;
  }
  int64_t total = 0;
  for (int b = 0; b < NBATCH; b++) total += SIZES[b];
  CHECK(total == NEX, "SIZES add up to %lld, not %d", (long long)total, NEX);
  wb recs[NEX];
  const char *ptrs[NEX];
  size_t lens[NEX];
  for (int64_t i = 0; i < NEX; i++) {
    recs[i] = make_example(i);
    ptrs[i] = (const char *)recs[i].p;
    lens[i] = recs[i].n;
  }
  tfq_status *st = tfq_status_new();
  tfq_example_config *cfg = make_config(st);
  TF_Graph *g = import_graph(argv[1]);

  test_resolution(g, cfg);
  test_mode_a(g, cfg, ptrs, lens);
  test_mode_b(cfg, ptrs, lens);

  TF_DeleteGraph(g);
  tfq_example_config_free(cfg);
  for (int i = 0; i < NEX; i++) wb_free(&recs[i]);
  tfq_status_free(st);
  printf("example_bridge: PASS\n");
  return 0;
}
