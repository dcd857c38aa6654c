/* tfq_sparse_map (sparse.h): TF's add_sparse_to_tensors_map, add_many_sparse_to_tensors_map and
 * take_many_sparse_from_tensors_map.  Expected values and texts are those of the TF 2.21 wheel
 * (tf.raw_ops in graph mode, checked by hand: see the cases' comments).  Public headers only. */
#include <pthread.h>
#include <stdlib.h>
#include <tfq/sparse.h>

#include "helpers.h"

static tfq_tensor *i64_mat(int64_t rows, int64_t cols, const int64_t *v) {
  int64_t d[2] = {rows, cols};
  tfq_tensor *t = tensor(TFQ_INT64, 2, d);
  if (rows * cols != 0) memcpy(tfq_tensor_data(t), v, (size_t)(rows * cols) * sizeof(int64_t));
  return t;
}

static tfq_tensor *i64_vec(int64_t n, const int64_t *v) {
  tfq_tensor *t = tensor(TFQ_INT64, 1, &n);
  if (n) memcpy(tfq_tensor_data(t), v, (size_t)n * sizeof(int64_t));
  return t;
}

/* A sparse tensor of float values: indices [n, r], values [n], dense_shape [r]. */
static tfq_sparse_tensor sp_f(int64_t n, int64_t r, const int64_t *ix, const float *vals,
                              const int64_t *shape) {
  tfq_sparse_tensor s = {i64_mat(n, r, ix), f32_vec(n, vals), i64_vec(r, shape)};
  return s;
}

static int64_t add1(tfq_sparse_map *m, tfq_sparse_tensor *sp) {
  tfq_tensor *h;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_sparse_map_add(m, sp, &h, st), TFQ_OK, "%s", tfq_status_message(st));
  cr_assert_eq(tfq_tensor_rank(h), 0);
  int64_t v = *(const int64_t *)tfq_tensor_cdata(h);
  tfq_tensor_free(h);
  tfq_status_free(st);
  tfq_sparse_tensor_release(sp);
  return v;
}

static void assert_i64(const tfq_tensor *t, int64_t n, const int64_t *want) {
  cr_assert_eq(tfq_tensor_num_elements(t), n);
  const int64_t *v = tfq_tensor_cdata(t);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(v[i], want[i], "element %lld", (long long)i);
}

/* take_many of `n` handles; returns the code, the message in `msg`. */
static tfq_code take(tfq_sparse_map *m, int64_t n, const int64_t *h, tfq_dtype dt,
                     tfq_sparse_tensor *out, char *msg) {
  tfq_status *st = tfq_status_new();
  tfq_tensor *ht = i64_vec(n, h);
  tfq_code c = tfq_sparse_map_take_many(m, ht, dt, out, st);
  snprintf(msg, 1024, "%s", tfq_status_message(st));
  tfq_tensor_free(ht);
  tfq_status_free(st);
  return c;
}

static tfq_sparse_map *map(const char *name) {
  tfq_sparse_map *m;
  OK(tfq_sparse_map_new(name, &m, NULL));
  return m;
}

Test(sparse_map, add_counts_handles_from_zero_and_take_many_batches_them) {
  tfq_sparse_map *m = map("m");
  cr_assert_str_eq(tfq_sparse_map_name(m), "m");
  /* TF: y = [[2,0]] shape [4,1], x = [[0,1],[1,0]] shape [2,3]; take [y, x] gives indices
   * [[0,2,0],[1,0,1],[1,1,0]], values [3,1,2], dense_shape [2,4,3] */
  int64_t xi[] = {0, 1, 1, 0}, xs[] = {2, 3}, yi[] = {2, 0}, ys[] = {4, 1};
  float xv[] = {1, 2}, yv[] = {3};
  tfq_sparse_tensor x = sp_f(2, 2, xi, xv, xs), y = sp_f(1, 2, yi, yv, ys);
  cr_assert_eq(add1(m, &x), 0);
  cr_assert_eq(add1(m, &y), 1);
  cr_assert_eq(tfq_sparse_map_size(m), 2);
  tfq_sparse_tensor out;
  char msg[1024];
  int64_t h[] = {1, 0};
  cr_assert_eq(take(m, 2, h, TFQ_FLOAT, &out, msg), TFQ_OK, "%s", msg);
  int64_t wi[] = {0, 2, 0, 1, 0, 1, 1, 1, 0}, ws[] = {2, 4, 3};
  cr_assert_eq(tfq_tensor_dim(out.indices, 0), 3);
  cr_assert_eq(tfq_tensor_dim(out.indices, 1), 3);
  assert_i64(out.indices, 9, wi);
  assert_i64(out.dense_shape, 3, ws);
  const float *v = tfq_tensor_cdata(out.values);
  cr_assert(v[0] == 3 && v[1] == 1 && v[2] == 2);
  tfq_sparse_tensor_release(&out);
  cr_assert_null(out.indices);
  cr_assert_eq(tfq_sparse_map_size(m), 0);
  /* an element is taken once */
  cr_assert_eq(take(m, 1, h + 1, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg, "Unable to find SparseTensor: 0 in map: m");
  cr_assert_null(out.values);
  tfq_sparse_map_free(m);
}

Test(sparse_map, add_checks_its_inputs_with_tf_texts) {
  tfq_sparse_map *m = map(NULL);
  cr_assert_str_eq(tfq_sparse_map_name(m), "SparseTensorsMap");
  tfq_status *st = tfq_status_new();
  tfq_tensor *h = (tfq_tensor *)1;
  int64_t two[] = {0, 1}, five = 5, six = 6, neg = -3;
  float fv[] = {1, 2, 3};
  struct {
    tfq_sparse_tensor sp;
    const char *want;
  } cases[] = {
      {{i64_vec(2, two), f32_vec(2, fv), i64_vec(1, &five)},
       "Input indices should be a matrix but received shape [2]"},
      {{i64_mat(2, 1, two), f32_scalar(1), i64_vec(1, &five)},
       "Input values should be a vector but received shape []"},
      {{i64_mat(2, 1, two), f32_vec(2, fv), i64_vec(0, NULL)}, NULL}, /* rank mismatch below */
      {{i64_mat(1, 1, two), f32_vec(1, fv), i64_vec(1, &neg)}, "Dimension -3 must be >= 0"},
      {{i64_mat(2, 1, two), f32_vec(3, fv), i64_vec(1, &six)},
       "indices and values rows (indexing dimension) must match. (indices = 2, values = 3)"},
  };
  cases[2].want = "Order length must be SparseTensor rank.";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cr_assert_eq(tfq_sparse_map_add(m, &cases[i].sp, &h, st), TFQ_INVALID_ARGUMENT);
    cr_assert_null(h);
    cr_assert_str_eq(tfq_status_message(st), cases[i].want);
    tfq_sparse_tensor_release(&cases[i].sp);
  }
  tfq_tensor *s0 = tensor(TFQ_INT64, 0, NULL);
  tfq_sparse_tensor bad = {i64_mat(1, 1, two), f32_vec(1, fv), s0};
  cr_assert_eq(tfq_sparse_map_add(m, &bad, &h, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st), "Input shape should be a vector but received shape []");
  tfq_sparse_tensor_release(&bad);
  /* out-of-bounds and unordered indices are accepted by add (TF: handles 2 and 3) */
  int64_t oob[] = {3, 7}, sh = 5;
  tfq_sparse_tensor ok = {i64_mat(2, 1, oob), f32_vec(2, fv), i64_vec(1, &sh)};
  cr_assert_eq(add1(m, &ok), 0);
  cr_assert_eq(tfq_sparse_map_size(m), 1);
  tfq_status_free(st);
  tfq_sparse_map_free(m); /* frees the element left in it */
}

Test(sparse_map, add_many_splits_a_batch_as_tf) {
  tfq_sparse_map *m = map("m");
  /* TF: indices [[0,0],[0,1],[2,0]], shape [4,5] -> handles [0, 2, 1, 3] (non-empty entries
   * first, then the empty ones); each element has dense_shape [5] */
  int64_t ix[] = {0, 0, 0, 1, 2, 0}, shape[] = {4, 5};
  float v[] = {1, 2, 3};
  tfq_sparse_tensor b = sp_f(3, 2, ix, v, shape);
  tfq_tensor *h;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_sparse_map_add_many(m, &b, &h, st), TFQ_OK, "%s", tfq_status_message(st));
  tfq_sparse_tensor_release(&b); /* the map holds its own references */
  int64_t wh[] = {0, 2, 1, 3};
  cr_assert_eq(tfq_tensor_rank(h), 1);
  assert_i64(h, 4, wh);
  cr_assert_eq(tfq_sparse_map_size(m), 4);
  /* one element alone keeps the batch's dense_shape[1:] (TF: [1, 5], not [1, 1]) */
  tfq_sparse_tensor out;
  char msg[1024];
  int64_t h2 = 1; /* entry 2: one value */
  cr_assert_eq(take(m, 1, &h2, TFQ_FLOAT, &out, msg), TFQ_OK, "%s", msg);
  int64_t wi[] = {0, 0}, ws[] = {1, 5};
  assert_i64(out.indices, 2, wi);
  assert_i64(out.dense_shape, 2, ws);
  cr_assert_eq(*(const float *)tfq_tensor_cdata(out.values), 3);
  tfq_sparse_tensor_release(&out);
  /* the rest, as a [B, 1] batch component: entries 3 (empty), 0 and 1 (empty) */
  int64_t d[2] = {3, 1}, rest[] = {3, 0, 2};
  tfq_tensor *hb = tensor(TFQ_INT64, 2, d);
  memcpy(tfq_tensor_data(hb), rest, sizeof rest);
  cr_assert_eq(tfq_sparse_map_take_many(m, hb, 0, &out, st), TFQ_OK, "%s", tfq_status_message(st));
  int64_t wi2[] = {1, 0, 1, 1}, ws2[] = {3, 5};
  cr_assert_eq(tfq_tensor_dim(out.indices, 0), 2);
  assert_i64(out.indices, 4, wi2);
  assert_i64(out.dense_shape, 2, ws2);
  const float *ov = tfq_tensor_cdata(out.values);
  cr_assert(ov[0] == 1 && ov[1] == 2);
  tfq_sparse_tensor_release(&out);
  cr_assert_eq(tfq_sparse_map_size(m), 0);
  tfq_tensor_free(hb);
  tfq_tensor_free(h);
  tfq_status_free(st);
  tfq_sparse_map_free(m);
}

Test(sparse_map, add_many_checks_its_inputs_with_tf_texts) {
  tfq_sparse_map *m = map("m");
  tfq_status *st = tfq_status_new();
  float v[] = {1, 2};
  struct {
    int64_t n, r;
    int64_t ix[6];
    int64_t nv, rank;
    int64_t shape[3];
    const char *want;
  } cases[] = {
      {1, 1, {0}, 1, 1, {4}, "Rank of input SparseTensor should be > 1, but saw rank: 1"},
      {1, 2, {5, 0}, 1, 2, {4, 5}, "indices[0] = [5,0] is out of bounds: need 0 <= index < [4,5]"},
      {1,
       2,
       {-1, 0},
       1,
       2,
       {4, 5},
       "indices[0] = [-1,0] is out of bounds: need 0 <= index < [4,5]"},
      {2,
       2,
       {2, 0, 0, 0},
       2,
       2,
       {4, 5},
       "indices[1] = [0,0] is out of order. Many sparse ops require sorted indices.\n    Use "
       "`tf.sparse.reorder` to create a correctly ordered copy.\n\n"},
      {2, 3, {0, 0, 1, 0, 0, 0}, 2, 3, {4, 5, 5}, NULL},
      {2, 2, {0, 0, 0, 0}, 2, 2, {4, 5}, "indices[1] = [0,0] is repeated"},
      {1,
       2,
       {0, 0},
       2,
       2,
       {4, 5},
       "Number of values must match first dimension of indices. Got 2 values, indices shape: "
       "[1,2]"},
      {1,
       2,
       {0, 0},
       1,
       3,
       {4, 5, 6},
       "Number of dimensions must match second dimension of indices. Got 3 dimensions, indices "
       "shape: [1,2]"},
      {1, 2, {0, 0}, 1, 2, {4, -5}, "Expected shape dimensions to be non-negative, got -5"},
  };
  cases[4].want =
      "indices[1] = [0,0,0] is out of order. Many sparse ops require sorted indices.\n    Use "
      "`tf.sparse.reorder` to create a correctly ordered copy.\n\n";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tfq_sparse_tensor sp = {i64_mat(cases[i].n, cases[i].r, cases[i].ix), f32_vec(cases[i].nv, v),
                            i64_vec(cases[i].rank, cases[i].shape)};
    tfq_tensor *h = (tfq_tensor *)1;
    cr_assert_eq(tfq_sparse_map_add_many(m, &sp, &h, st), TFQ_INVALID_ARGUMENT, "case %zu", i);
    cr_assert_null(h);
    cr_assert_str_eq(tfq_status_message(st), cases[i].want, "case %zu", i);
    tfq_sparse_tensor_release(&sp);
  }
  cr_assert_eq(tfq_sparse_map_size(m), 0); /* nothing stored by a failing call */
  /* N = 0: no handles */
  int64_t shape0[] = {0, 5};
  tfq_sparse_tensor e = {i64_mat(0, 2, NULL), f32_vec(0, v), i64_vec(2, shape0)};
  tfq_tensor *h;
  OK(tfq_sparse_map_add_many(m, &e, &h, st));
  cr_assert_eq(tfq_tensor_num_elements(h), 0);
  tfq_tensor_free(h);
  tfq_sparse_tensor_release(&e);
  tfq_status_free(st);
  tfq_sparse_map_free(m);
}

Test(sparse_map, take_many_errors_and_their_erasures_follow_tf) {
  tfq_sparse_map *m = map("m");
  char msg[1024];
  tfq_sparse_tensor out;
  int64_t i1[] = {0}, i2[] = {0, 0}, s1[] = {5}, s2[] = {5, 5};
  float f[] = {1};
  tfq_status *st = tfq_status_new();
  /* shapes */
  tfq_tensor *sc = tensor(TFQ_INT64, 0, NULL);
  cr_assert_eq(tfq_sparse_map_take_many(m, sc, 0, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "sparse_handles should be a vector but received shape []");
  tfq_tensor_free(sc);
  int64_t d22[2] = {2, 2};
  tfq_tensor *m22 = tensor(TFQ_INT64, 2, d22);
  cr_assert_eq(tfq_sparse_map_take_many(m, m22, 0, &out, st), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(tfq_status_message(st),
                   "sparse_handles should be a vector but received shape [2,2]");
  tfq_tensor_free(m22);
  cr_assert_eq(take(m, 0, NULL, 0, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg,
                   "Must have at least 1 serialized SparseTensor, but input matrix has 0 rows");
  /* TF: take [0, 1, 2] with 2 missing fails, and 0 and 1 are gone too */
  tfq_sparse_tensor a = sp_f(1, 1, i1, f, s1), b = sp_f(1, 1, i1, f, s1);
  int64_t ha = add1(m, &a), hb = add1(m, &b), h3[] = {ha, hb, 99};
  cr_assert_eq(take(m, 3, h3, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg, "Unable to find SparseTensor: 99 in map: m");
  cr_assert_eq(take(m, 1, &ha, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg, "Unable to find SparseTensor: 0 in map: m");
  /* a handle twice in one call: found once */
  tfq_sparse_tensor c = sp_f(1, 1, i1, f, s1);
  int64_t hc = add1(m, &c), hcc[] = {hc, hc};
  cr_assert_eq(take(m, 2, hcc, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg, "Unable to find SparseTensor: 2 in map: m");
  /* TF: ranks 1, 1, 2, 3 -> "... SparseTensor[2] was: 2 but rank of SparseTensor[2] is: 3" */
  int64_t i3[] = {0, 0, 0}, s3[] = {5, 5, 5};
  tfq_sparse_tensor r1 = sp_f(1, 1, i1, f, s1), r1b = sp_f(1, 1, i1, f, s1),
                    r2 = sp_f(1, 2, i2, f, s2), r3 = sp_f(1, 3, i3, f, s3);
  int64_t hr[] = {add1(m, &r1), add1(m, &r1b), add1(m, &r2), add1(m, &r3)};
  cr_assert_eq(take(m, 4, hr, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg,
                   "Inconsistent rank across SparseTensors: rank prior to SparseTensor[2] was: 2 "
                   "but rank of SparseTensor[2] is: 3");
  cr_assert_eq(tfq_sparse_map_size(m), 0); /* all four taken and dropped */
  /* TF: the dtype check of every element comes before the rank check */
  tfq_sparse_tensor x = sp_f(1, 1, i1, f, s1), y = sp_f(1, 2, i2, f, s2);
  tfq_sparse_tensor z = {i64_mat(1, 1, i1), i64_vec(1, i1), i64_vec(1, s1)};
  int64_t hx[] = {add1(m, &x), add1(m, &y), add1(m, &z)};
  cr_assert_eq(take(m, 3, hx, TFQ_FLOAT, &out, msg), TFQ_INVALID_ARGUMENT);
  cr_assert_str_eq(msg,
                   "Requested SparseTensor of type float but SparseTensor[2].values.dtype() "
                   "== int64");
  cr_assert_null(out.indices);
  tfq_status_free(st);
  tfq_sparse_map_free(m);
}

Test(sparse_map, strings_and_empty_elements_round_trip) {
  tfq_sparse_map *m = map("m");
  const char *w[] = {"alpha", "", "gamma"};
  int64_t n = 3, ix[] = {0, 1, 4}, shape = 6;
  tfq_tensor *sv = tensor(TFQ_STRING, 1, &n);
  for (int i = 0; i < 3; i++) OK(tfq_tensor_set_string(sv, i, w[i], strlen(w[i]), NULL));
  tfq_sparse_tensor s = {i64_mat(3, 1, ix), sv, i64_vec(1, &shape)};
  int64_t zero = 0, two = 2;
  tfq_tensor *ev = tensor(TFQ_STRING, 1, &zero);
  tfq_sparse_tensor e = {i64_mat(0, 1, NULL), ev, i64_vec(1, &two)};
  int64_t h[] = {add1(m, &e), add1(m, &s)};
  tfq_sparse_tensor out;
  char msg[1024];
  cr_assert_eq(take(m, 2, h, TFQ_STRING, &out, msg), TFQ_OK, "%s", msg);
  int64_t wi[] = {1, 0, 1, 1, 1, 4}, ws[] = {2, 6};
  assert_i64(out.indices, 6, wi);
  assert_i64(out.dense_shape, 2, ws);
  for (int i = 0; i < 3; i++) {
    size_t len;
    const char *p = tfq_tensor_string(out.values, i, &len);
    cr_assert_eq(len, strlen(w[i]));
    cr_assert(memcmp(p, w[i], len) == 0);
  }
  tfq_sparse_tensor_release(&out);
  tfq_sparse_tensor_release(NULL); /* no-op */
  tfq_sparse_map_free(m);
}

/* ---- concurrent use, and the map's table growing and shrinking ---- */

#define NT 4
#define PER 3000

static void *churn(void *arg) {
  tfq_sparse_map *m = arg;
  int64_t pending[64];
  int np = 0;
  for (int i = 0; i < PER; i++) {
    int64_t ix = i % 7, sh = 7;
    float v = (float)i;
    tfq_sparse_tensor s = sp_f(1, 1, &ix, &v, &sh);
    pending[np++] = add1(m, &s);
    if (np == 64 || i == PER - 1) {
      tfq_sparse_tensor out;
      char msg[1024];
      cr_assert_eq(take(m, np, pending, TFQ_FLOAT, &out, msg), TFQ_OK, "%s", msg);
      cr_assert_eq(tfq_tensor_dim(out.indices, 0), np);
      tfq_sparse_tensor_release(&out);
      np = 0;
    }
  }
  return NULL;
}

Test(sparse_map, concurrent_adds_and_takes_lose_nothing) {
  tfq_sparse_map *m = map("m");
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) cr_assert_eq(pthread_create(&th[i], NULL, churn, m), 0);
  for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
  cr_assert_eq(tfq_sparse_map_size(m), 0);
  /* handles are unique: the next one is NT * PER */
  int64_t ix = 0, sh = 1;
  float v = 0;
  tfq_sparse_tensor s = sp_f(1, 1, &ix, &v, &sh);
  cr_assert_eq(add1(m, &s), NT * PER);
  tfq_sparse_map_free(m);
}

/* ---- through a batcher, as tf.train.batch of an element holding a SparseTensor ---- */

typedef struct src_ctx {
  tfq_sparse_map *map;
  int next, n;
} src_ctx;

/* Element i: (id i, tags = i values "i" at positions 0..i-1 of a [i] vector). */
static tfq_code element_source(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  src_ctx *c = ctx;
  if (c->next == c->n) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "end");
  int64_t i = c->next++, ix[8], shape = i;
  float v[8];
  for (int64_t k = 0; k < i; k++) {
    ix[k] = k;
    v[k] = (float)i;
  }
  tfq_sparse_tensor sp = sp_f(i, 1, ix, v, &shape);
  tfq_tuple *t;
  OK(tfq_tuple_new(2, &t, NULL));
  tfq_tensor *id = tensor(TFQ_INT64, 0, NULL);
  *(int64_t *)tfq_tensor_data(id) = i;
  tfq_tuple_set_take(t, 0, id);
  tfq_tensor *h;
  tfq_code code = tfq_sparse_map_add(c->map, &sp, &h, st);
  tfq_sparse_tensor_release(&sp);
  if (code) {
    tfq_tuple_free(t);
    return code;
  }
  tfq_tuple_set_take(t, 1, h);
  *out = t;
  return TFQ_OK;
}

Test(sparse_map, a_batcher_batches_sparse_elements_through_handles) {
  tfq_sparse_map *m = map("batch");
  src_ctx ctx = {m, 0, 7};
  tfq_spec *spec = spec2(TFQ_INT64, 0, NULL, TFQ_INT64, 0, NULL);
  tfq_coord *coord;
  OK(tfq_coord_new(&coord, NULL));
  tfq_batch_options *bo;
  OK(tfq_batch_options_new(&bo, NULL));
  tfq_batch_options_set_allow_smaller_final_batch(bo, 1);
  tfq_source_fn f = element_source;
  void *c = &ctx;
  tfq_batcher *b;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_batcher_new(TFQ_BATCHER_BATCH, spec, 3, &f, &c, 1, bo, coord, &b, st), TFQ_OK,
               "%s", tfq_status_message(st));
  int64_t seen = 0;
  for (;;) {
    tfq_tuple *t;
    tfq_code code = tfq_batcher_next(b, &t, st);
    if (code == TFQ_OUT_OF_RANGE) break;
    cr_assert_eq(code, TFQ_OK, "%s", tfq_status_message(st));
    const tfq_tensor *ids = tfq_tuple_get(t, 0);
    int64_t n = tfq_tensor_dim(ids, 0), maxlen = 0, total = 0;
    tfq_sparse_tensor sp;
    cr_assert_eq(tfq_sparse_map_take_many(m, tfq_tuple_get(t, 1), TFQ_FLOAT, &sp, st), TFQ_OK, "%s",
                 tfq_status_message(st));
    const int64_t *id = tfq_tensor_cdata(ids), *ix = tfq_tensor_cdata(sp.indices);
    const float *v = tfq_tensor_cdata(sp.values);
    for (int64_t r = 0; r < n; r++) {
      cr_assert_eq(id[r], seen + r); /* one thread: FIFO order */
      if (id[r] > maxlen) maxlen = id[r];
      for (int64_t k = 0; k < id[r]; k++, total++) {
        cr_assert_eq(ix[2 * total], r);
        cr_assert_eq(ix[2 * total + 1], k);
        cr_assert_eq(v[total], (float)id[r]);
      }
    }
    cr_assert_eq(tfq_tensor_num_elements(sp.values), total);
    const int64_t *ds = tfq_tensor_cdata(sp.dense_shape);
    cr_assert(ds[0] == n && ds[1] == maxlen);
    seen += n;
    tfq_sparse_tensor_release(&sp);
    tfq_tuple_free(t);
  }
  cr_assert_eq(seen, 7);
  cr_assert_eq(tfq_sparse_map_size(m), 0);
  OK(tfq_coord_request_stop(coord, TFQ_OK, NULL));
  OK(tfq_coord_join(coord, 10000000, 0, NULL));
  tfq_batcher_free(b);
  tfq_batch_options_free(bo);
  tfq_coord_free(coord);
  tfq_spec_free(spec);
  tfq_status_free(st);
  tfq_sparse_map_free(m);
}
