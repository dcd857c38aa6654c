/* tfq_pipeline on TFRecord files of tf.train.Example without given features (tfq/pipeline.h,
 * set_features): detection (TFQ_FORMAT_TFRECORD_AUTO), inference with tfq-cat's rules, the
 * features' SPEC (tfq_pipeline_features_spec) against tfq-cat's own line and against an
 * expectation written from the files' known content, and every value against the generator.
 * The Examples are encoded here by hand (packed and unpacked lists), so the oracle is the
 * generator, not tfq's earlier output. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static char g_dir[64];

static void setup_dir(void) {
  strcpy(g_dir, "/tmp/tfq_pipeline_ex_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
}
static void teardown_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(pipeline_examples, .init = setup_dir, .fini = teardown_dir, .timeout = 60);

/* ---- a protobuf encoder for Examples ---- */

typedef struct {
  unsigned char *p;
  size_t n, cap;
} pb;

static void pb_put(pb *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  if (n) memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void pb_varint(pb *b, uint64_t v) {
  unsigned char c;
  do {
    c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    pb_put(b, &c, 1);
  } while (v);
}
static void pb_ld(pb *b, int field, const void *d, size_t n) { /* a length-delimited field */
  pb_varint(b, (uint64_t)(field << 3 | 2));
  pb_varint(b, n);
  pb_put(b, d, n);
}
static void pb_free(pb *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Feature bytes: an int64_list (packed or one tag per value), a float_list, a bytes_list. */
static void feat_int64(pb *f, const int64_t *v, size_t n, int packed) {
  pb list = {0}, vals = {0};
  for (size_t i = 0; i < n; i++) {
    if (!packed) pb_varint(&list, 0x08);
    pb_varint(packed ? &vals : &list, (uint64_t)v[i]);
  }
  if (packed && n) pb_ld(&list, 1, vals.p, vals.n);
  pb_ld(f, 3, list.p, list.n);
  pb_free(&list);
  pb_free(&vals);
}
static void feat_float(pb *f, const float *v, size_t n, int packed) {
  pb list = {0};
  if (packed && n) pb_ld(&list, 1, v, 4 * n);
  for (size_t i = 0; !packed && i < n; i++) {
    pb_varint(&list, 0x0D);
    pb_put(&list, &v[i], 4);
  }
  pb_ld(f, 2, list.p, list.n);
  pb_free(&list);
}
static void feat_bytes(pb *f, char **v, size_t n) {
  pb list = {0};
  for (size_t i = 0; i < n; i++) pb_ld(&list, 1, v[i], strlen(v[i]));
  pb_ld(f, 1, list.p, list.n);
  pb_free(&list);
}
/* A map entry key -> feature (klen bytes of key: a key may hold a NUL) into `features`; the
 * feature's bytes are consumed. */
static void entry(pb *features, const char *key, size_t klen, pb *feature) {
  pb e = {0};
  pb_ld(&e, 1, key, klen);
  pb_ld(&e, 2, feature->p, feature->n);
  pb_ld(features, 1, e.p, e.n);
  pb_free(&e);
  pb_free(feature);
}
static void put_int64(pb *features, const char *key, int64_t v) {
  pb f = {0};
  feat_int64(&f, &v, 1, 1);
  entry(features, key, strlen(key), &f);
}

/* A TFRecord file of the n records recs[i] (the Example: the Features message, wrapped here). */
static char *write_records(const char *name, tfq_compression comp, pb *recs, size_t n, int wrap) {
  char *path = malloc(strlen(g_dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", g_dir, name);
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(path, comp, &w, NULL));
  for (size_t i = 0; i < n; i++) {
    pb ex = {0};
    if (wrap) pb_ld(&ex, 1, recs[i].p, recs[i].n);
    const pb *r = wrap ? &ex : &recs[i];
    OK(tfq_tfrecord_writer_write(w, r->p ? (const char *)r->p : "", r->n, NULL));
    pb_free(&ex);
    pb_free(&recs[i]);
  }
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  return path;
}

/* ---- the data sets ----
 * "mixed", record i: id int64 [10 i - 20] (FixedLen []); x float [i / 2, -i] ([2]); big int64
 * [i, i + 1, i + 2] unpacked ([3]); name bytes ["n<i>"] ([]); "q:k" float [1.5 i] ([]); zeros an
 * empty int64_list ([0]); tags bytes t0 .. t<i % 3 - 1> (VarLen); w float 0.25 (i % 2 + 1
 * times, VarLen); opt int64 [7 i] in even records only (VarLen); "sp ace" bytes s<i>_0 ..
 * (i % 2 + 1 values, VarLen); empty an empty Feature (VarLen string).  Written in an unsorted
 * order. */
#define MIXED_SPEC                                                                           \
  "big:int64[3], empty:string[*], id:int64, name:string, opt:int64[*], \"q:k\":float32, sp " \
  "ace:string[*], tags:string[*], w:float32[*], x:float32[2], zeros:int64[0]"

static void mixed_features(pb *fs, int64_t i) {
  pb f = {0};
  float x[2] = {(float)i * 0.5f, -(float)i};
  feat_float(&f, x, 2, 1);
  entry(fs, "x", 1, &f);
  char s[3][32], *sv[3] = {s[0], s[1], s[2]};
  for (int64_t j = 0; j < i % 3; j++) sprintf(s[j], "t%lld", (long long)j);
  feat_bytes(&f, sv, (size_t)(i % 3));
  entry(fs, "tags", 4, &f);
  put_int64(fs, "id", i * 10 - 20);
  int64_t big[3] = {i, i + 1, i + 2};
  feat_int64(&f, big, 3, 0);
  entry(fs, "big", 3, &f);
  entry(fs, "empty", 5, &f); /* f is empty: an empty Feature */
  float w[2] = {0.25f, 0.25f};
  feat_float(&f, w, (size_t)(i % 2 + 1), 1);
  entry(fs, "w", 1, &f);
  if (i % 2 == 0) put_int64(fs, "opt", 7 * i);
  float q = 1.5f * (float)i;
  feat_float(&f, &q, 1, i % 2);
  entry(fs, "q:k", 3, &f);
  for (int64_t j = 0; j < i % 2 + 1; j++) sprintf(s[j], "s%lld_%lld", (long long)i, (long long)j);
  feat_bytes(&f, sv, (size_t)(i % 2 + 1));
  entry(fs, "sp ace", 6, &f);
  sprintf(s[0], "n%lld", (long long)i);
  feat_bytes(&f, sv, 1);
  entry(fs, "name", 4, &f);
  feat_int64(&f, NULL, 0, 1);
  entry(fs, "zeros", 5, &f);
}

static char *write_mixed(const char *name, tfq_compression comp, int64_t n) {
  pb *r = calloc((size_t)n, sizeof *r);
  for (int64_t i = 0; i < n; i++) mixed_features(&r[i], i);
  char *path = write_records(name, comp, r, (size_t)n, 1);
  free(r);
  return path;
}

/* tests/cli/run_cli_tests.py's EXS: record i holds id [10 i - 20], x [i / 2, -i], name "n<i>",
 * tags t0 .. t<i % 3 - 1> and w 0.25 (i % 2 + 1 times), in that order. */
#define EXS_SPEC "id:int64, name:string, tags:string[*], w:float32[*], x:float32[2]"
static void exs_features(pb *fs, int64_t i) {
  pb f = {0};
  put_int64(fs, "id", i * 10 - 20);
  float x[2] = {(float)i * 0.5f, -(float)i};
  feat_float(&f, x, 2, 1);
  entry(fs, "x", 1, &f);
  char s[3][32], *sv[3] = {s[0], s[1], s[2]};
  sprintf(s[0], "n%lld", (long long)i);
  feat_bytes(&f, sv, 1);
  entry(fs, "name", 4, &f);
  for (int64_t j = 0; j < i % 3; j++) sprintf(s[j], "t%lld", (long long)j);
  feat_bytes(&f, sv, (size_t)(i % 3));
  entry(fs, "tags", 4, &f);
  float w[2] = {0.25f, 0.25f};
  feat_float(&f, w, (size_t)(i % 2 + 1), 1);
  entry(fs, "w", 1, &f);
}

/* EXS' first `n` records, then `extra` records of raw bytes (not Examples) when given. */
static char *write_exs(const char *name, int64_t n, const char *extra) {
  pb *r = calloc((size_t)n + 1, sizeof *r);
  for (int64_t i = 0; i < n; i++) {
    pb fs = {0};
    exs_features(&fs, i);
    pb_ld(&r[i], 1, fs.p, fs.n);
    pb_free(&fs);
  }
  if (extra) pb_put(&r[n], extra, strlen(extra));
  char *path = write_records(name, TFQ_COMPRESSION_NONE, r, (size_t)n + (extra != NULL), 0);
  free(r);
  return path;
}

/* A TFRecord file of text lines "line <i>" (not Examples: 'l' is a group tag). */
static char *write_lines(const char *name, int64_t n) {
  pb *r = calloc((size_t)n, sizeof *r);
  char s[32];
  for (int64_t i = 0; i < n; i++) pb_put(&r[i], s, (size_t)sprintf(s, "line %lld", (long long)i));
  char *path = write_records(name, TFQ_COMPRESSION_NONE, r, (size_t)n, 0);
  free(r);
  return path;
}

/* ---- running ---- */

static tfq_pipeline_options *opts(const char *path, tfq_format fmt, int64_t batch) {
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, path, NULL));
  tfq_pipeline_options_set_format(o, fmt);
  tfq_pipeline_options_set_batch_size(o, batch);
  tfq_pipeline_options_set_shuffle(o, 0);
  return o;
}

static tfq_pipeline *make(const tfq_pipeline_options *o) {
  tfq_pipeline *p = NULL;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_pipeline_new(o, &p, st);
  cr_assert_eq(c, TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return p;
}

static void expect_new_error(const tfq_pipeline_options *o, tfq_code code, const char *text) {
  tfq_pipeline *p = NULL;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_new(o, &p, st), code, "%s", tfq_status_message(st));
  cr_assert_null(p);
  cr_assert(strstr(tfq_status_message(st), text), "message '%s' lacks '%s'", tfq_status_message(st),
            text);
  tfq_status_free(st);
}

/* The features' SPEC of a pipeline made from `o` (NULL for raw records), format in *fmt. */
static char *spec_of(const tfq_pipeline_options *o, tfq_format *fmt) {
  tfq_pipeline *p = make(o);
  const char *s = tfq_pipeline_features_spec(p);
  char *r = s ? strdup(s) : NULL;
  if (fmt) *fmt = tfq_pipeline_format(p);
  tfq_pipeline_free(p);
  return r;
}

/* The tfq-cat built beside this suite (tools/); missing is a failure, never a skip. */
static void tfq_cat_path(char *exe, size_t cap) {
  ssize_t k = readlink("/proc/self/exe", exe, cap - 32);
  cr_assert(k > 0);
  exe[k] = '\0';
  char *slash = strrchr(exe, '/');
  cr_assert_not_null(slash);
  strcpy(slash, "/../../tools/tfq-cat");
  cr_assert_eq(access(exe, X_OK), 0, "tfq-cat is not built beside this suite (%s)", exe);
}

/* What tfq-cat prints as its inferred --features for `path` (NULL when it prints none: the
 * records are not Examples for it). */
static char *tfq_cat_spec(const char *path, const char *args) {
  char exe[1024], cmd[4096], line[65536];
  tfq_cat_path(exe, sizeof exe);
  snprintf(cmd, sizeof cmd, "'%s' -f tfrecord -n 1 -o none --no-shuffle %s '%s' 2>&1 >/dev/null",
           exe, args, path);
  FILE *f = popen(cmd, "r");
  cr_assert_not_null(f);
  char *spec = NULL;
  const char *tag = "tfq-cat: inferred --features '";
  while (fgets(line, sizeof line, f))
    if (!spec && strncmp(line, tag, strlen(tag)) == 0) {
      spec = strdup(line + strlen(tag));
      char *end = strrchr(spec, '\'');
      cr_assert_not_null(end, "%s", line);
      *end = '\0';
    }
  pclose(f);
  return spec;
}

/* The pipeline's SPEC for `path` (TFQ_FORMAT_TFRECORD_AUTO, infer_rows `rows`) equals both
 * tfq-cat's and `want` (NULL: raw records for both). */
static void expect_both(const char *path, const char *want) {
  char *cat = tfq_cat_spec(path, "");
  if (want)
    cr_assert(cat && strcmp(cat, want) == 0, "%s: tfq-cat printed '%s', the file holds '%s'", path,
              cat ? cat : "(nothing)", want);
  else
    cr_assert_null(cat, "%s: tfq-cat inferred '%s' from raw records", path, cat);
  tfq_pipeline_options *o = opts(path, TFQ_FORMAT_TFRECORD_AUTO, 4);
  tfq_format fmt;
  char *mine = spec_of(o, &fmt);
  if (want) {
    cr_assert(mine && strcmp(mine, want) == 0, "%s: the pipeline's '%s', tfq-cat's '%s'", path,
              mine ? mine : "(NULL)", want);
    cr_assert_eq(fmt, TFQ_FORMAT_EXAMPLES);
  } else {
    cr_assert_null(mine, "%s: '%s' from raw records", path, mine);
    cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
  }
  tfq_pipeline_options_free(o);
  free(mine);
  free(cat);
}

static size_t col(const tfq_pipeline *p, const char *name) {
  for (size_t i = 0; i < tfq_pipeline_num_columns(p); i++)
    if (strcmp(tfq_pipeline_column_name(p, i), name) == 0) return i;
  cr_assert_fail("no column %s", name);
  return 0;
}

static void expect_str(const tfq_tensor *t, int64_t k, const char *want, const char *what,
                       int64_t i) {
  size_t len;
  const char *s = tfq_tensor_string(t, k, &len);
  cr_assert(len == strlen(want) && memcmp(s, want, len) == 0, "record %lld %s: '%.*s', want %s",
            (long long)i, what, (int)len, s, want);
}

/* A sparse column of a batch of records first .. first + n - 1 against the generator: record i
 * holds count(i) values, value j checked by check(i, j, values, k). */
typedef int64_t (*count_fn)(int64_t i);
typedef void (*value_fn)(int64_t i, int64_t j, const tfq_tensor *values, int64_t k);
static void check_sparse(const tfq_pipeline *p, const tfq_tuple *b, const char *name, int64_t first,
                         int64_t n, count_fn count, value_fn check) {
  size_t c = col(p, name), s = tfq_pipeline_column_slot(p, c);
  cr_assert(tfq_pipeline_column_is_sparse(p, c), "%s is not sparse", name);
  const int64_t *ix = tfq_tensor_cdata(tfq_tuple_get(b, s));
  const tfq_tensor *vals = tfq_tuple_get(b, s + 1);
  const int64_t *shape = tfq_tensor_cdata(tfq_tuple_get(b, s + 2));
  int64_t k = 0, longest = 0;
  for (int64_t r = 0; r < n; r++) {
    int64_t m = count(first + r);
    for (int64_t j = 0; j < m; j++, k++) {
      cr_assert(ix[2 * k] == r && ix[2 * k + 1] == j, "%s: index of record %lld", name,
                (long long)(first + r));
      check(first + r, j, vals, k);
    }
    if (m > longest) longest = m;
  }
  cr_assert_eq(tfq_tensor_dim(vals, 0), k, "%s: %lld values, want %lld", name,
               (long long)tfq_tensor_dim(vals, 0), (long long)k);
  cr_assert(shape[0] == n && shape[1] == longest, "%s: dense_shape [%lld, %lld]", name,
            (long long)shape[0], (long long)shape[1]);
}

static int64_t n_tags(int64_t i) { return i % 3; }
static int64_t n_two(int64_t i) { return i % 2 + 1; }
static int64_t n_opt(int64_t i) { return i % 2 == 0; }
static int64_t n_none(int64_t i) { return (void)i, 0; }
static void v_tags(int64_t i, int64_t j, const tfq_tensor *v, int64_t k) {
  char want[32];
  sprintf(want, "t%lld", (long long)j);
  expect_str(v, k, want, "tags", i);
}
static void v_w(int64_t i, int64_t j, const tfq_tensor *v, int64_t k) {
  cr_assert_eq(((const float *)tfq_tensor_cdata(v))[k], 0.25f, "record %lld w %lld", (long long)i,
               (long long)j);
}
static void v_opt(int64_t i, int64_t j, const tfq_tensor *v, int64_t k) {
  cr_assert_eq(((const int64_t *)tfq_tensor_cdata(v))[k], 7 * i, "record %lld opt %lld",
               (long long)i, (long long)j);
}
static void v_space(int64_t i, int64_t j, const tfq_tensor *v, int64_t k) {
  char want[32];
  sprintf(want, "s%lld_%lld", (long long)i, (long long)j);
  expect_str(v, k, want, "sp ace", i);
}
static void v_none(int64_t i, int64_t j, const tfq_tensor *v, int64_t k) {
  (void)j, (void)v, (void)k;
  cr_assert_fail("record %lld: a value in an empty Feature", (long long)i);
}

/* A batch of "mixed" records first .. first + n - 1, unshuffled. */
static void check_mixed(const tfq_pipeline *p, const tfq_tuple *b, int64_t first, int64_t n) {
  const int64_t *id = tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "id"))));
  const tfq_tensor *xt = tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "x")));
  const float *x = tfq_tensor_cdata(xt);
  const int64_t *big =
      tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "big"))));
  const float *q = tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "q:k"))));
  const tfq_tensor *name = tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "name")));
  const tfq_tensor *zeros = tfq_tuple_get(b, tfq_pipeline_column_slot(p, col(p, "zeros")));
  cr_assert(tfq_tensor_rank(xt) == 2 && tfq_tensor_dim(xt, 0) == n && tfq_tensor_dim(xt, 1) == 2);
  cr_assert(tfq_tensor_rank(zeros) == 2 && tfq_tensor_dim(zeros, 0) == n &&
            tfq_tensor_dim(zeros, 1) == 0);
  for (int64_t r = 0; r < n; r++) {
    int64_t i = first + r;
    cr_assert_eq(id[r], 10 * i - 20, "record %lld id %lld", (long long)i, (long long)id[r]);
    cr_assert(x[2 * r] == (float)i * 0.5f && x[2 * r + 1] == -(float)i, "record %lld x",
              (long long)i);
    cr_assert(big[3 * r] == i && big[3 * r + 1] == i + 1 && big[3 * r + 2] == i + 2,
              "record %lld big", (long long)i);
    cr_assert_eq(q[r], 1.5f * (float)i, "record %lld q:k", (long long)i);
    char want[32];
    sprintf(want, "n%lld", (long long)i);
    expect_str(name, r, want, "name", i);
  }
  check_sparse(p, b, "tags", first, n, n_tags, v_tags);
  check_sparse(p, b, "w", first, n, n_two, v_w);
  check_sparse(p, b, "opt", first, n, n_opt, v_opt);
  check_sparse(p, b, "sp ace", first, n, n_two, v_space);
  check_sparse(p, b, "empty", first, n, n_none, v_none);
}

/* Runs `p` (unshuffled "mixed" data of `total` records in batches of `batch`) to its end. */
static void drain_mixed(tfq_pipeline *p, int64_t batch, int64_t total) {
  tfq_tuple *b;
  tfq_code c;
  int64_t seen = 0;
  tfq_status *st = tfq_status_new();
  while ((c = tfq_pipeline_next(p, &b, st)) == TFQ_OK) {
    int64_t n = tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
    cr_assert(n == batch || seen + n == total, "a batch of %lld", (long long)n);
    check_mixed(p, b, seen, n);
    seen += n;
    tfq_tuple_free(b);
  }
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
  cr_assert_eq(seen, total);
  tfq_status_free(st);
}

/* ---- inference ---- */

Test(pipeline_examples, features_are_inferred_sorted_and_parsed_as_the_generator_wrote_them) {
  char *path = write_mixed("mixed.tfrecord", TFQ_COMPRESSION_NONE, 30);
  tfq_pipeline_options *o = opts(path, TFQ_FORMAT_EXAMPLES, 7);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), MIXED_SPEC);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
  cr_assert_null(tfq_pipeline_columns_spec(p));
  /* the columns: sorted by key; FixedLen [] / [k] dense, the others sparse */
  static const struct {
    const char *name;
    tfq_dtype dt;
    int sparse, rank;
    int64_t dim;
  } want[] = {{"big", TFQ_INT64, 0, 1, 3},      {"empty", TFQ_STRING, 1, 1, -1},
              {"id", TFQ_INT64, 0, 0, 0},       {"name", TFQ_STRING, 0, 0, 0},
              {"opt", TFQ_INT64, 1, 1, -1},     {"q:k", TFQ_FLOAT, 0, 0, 0},
              {"sp ace", TFQ_STRING, 1, 1, -1}, {"tags", TFQ_STRING, 1, 1, -1},
              {"w", TFQ_FLOAT, 1, 1, -1},       {"x", TFQ_FLOAT, 0, 1, 2},
              {"zeros", TFQ_INT64, 0, 1, 0}};
  size_t nw = sizeof want / sizeof want[0];
  cr_assert_eq(tfq_pipeline_num_columns(p), nw);
  cr_assert_eq(tfq_pipeline_num_slots(p), nw + 2 * 5);
  for (size_t i = 0; i < nw; i++) {
    cr_assert_str_eq(tfq_pipeline_column_name(p, i), want[i].name);
    cr_assert_eq(tfq_pipeline_column_dtype(p, i), want[i].dt, "%s", want[i].name);
    cr_assert_eq(tfq_pipeline_column_is_sparse(p, i), want[i].sparse, "%s", want[i].name);
    cr_assert_eq(tfq_pipeline_column_rank(p, i), want[i].rank, "%s", want[i].name);
    if (want[i].rank)
      cr_assert_eq(tfq_pipeline_column_dims(p, i)[0], want[i].dim, "%s", want[i].name);
  }
  drain_mixed(p, 7, 30);
  tfq_pipeline_free(p);
  /* two reader threads and small steps: the same records */
  tfq_pipeline_options_set_num_threads(o, 2);
  tfq_pipeline_options_set_step(o, 3);
  p = make(o);
  drain_mixed(p, 7, 30);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline_examples, the_spec_equals_what_tfq_cat_prints_and_what_the_files_hold) {
  char *f;
  expect_both(f = write_mixed("mixed.tfrecord", TFQ_COMPRESSION_NONE, 30), MIXED_SPEC);
  free(f);
  expect_both(f = write_mixed("mixed.tfrecord.gz", TFQ_COMPRESSION_GZIP, 30), MIXED_SPEC);
  free(f);
  /* the CLI's golden ex_infer_jsonl.err, on the same records */
  expect_both(f = write_exs("examples.tfrecord", 7, NULL), EXS_SPEC);
  free(f);
  /* golden ex_odd_wire.err: an empty Feature, a key twice in a record (the last wins), a second
   * Features field, unpacked lists */
  pb r[3] = {{0}};
  pb fs = {0}, feat = {0};
  entry(&fs, "a", 1, &feat);
  put_int64(&fs, "b", 1);
  pb_ld(&r[0], 1, fs.p, fs.n);
  pb_free(&fs);
  put_int64(&fs, "b", 2);
  put_int64(&fs, "b", 3);
  pb_ld(&r[1], 1, fs.p, fs.n);
  pb_free(&fs);
  entry(&fs, "a", 1, &feat);
  pb_ld(&r[1], 1, fs.p, fs.n);
  pb_free(&fs);
  int64_t four = 4;
  float two_half = 2.5f;
  feat_int64(&feat, &four, 1, 0);
  entry(&fs, "b", 1, &feat);
  feat_float(&feat, &two_half, 1, 0);
  entry(&fs, "a", 1, &feat);
  pb_ld(&r[2], 1, fs.p, fs.n);
  pb_free(&fs);
  expect_both(f = write_records("odd.tfrecord", TFQ_COMPRESSION_NONE, r, 3, 0),
              "a:float32[*], b:int64");
  free(f);
  /* 150 records: "late" has 1 value in the first 100 (the sample) and 2 after */
  pb many[150] = {{0}};
  for (int64_t i = 0; i < 150; i++) {
    put_int64(&many[i], "id", i);
    int64_t v[2] = {i, i};
    feat_int64(&feat, v, i < 100 ? 1 : 2, 1);
    entry(&many[i], "late", 4, &feat);
  }
  expect_both(f = write_records("late.tfrecord", TFQ_COMPRESSION_NONE, many, 150, 1),
              "id:int64, late:int64");
  free(f);
  /* names the SPEC quotes; a key holding a NUL byte is left out */
  pb q[2] = {{0}};
  for (int i = 0; i < 2; i++) {
    put_int64(&q[i], "", i);
    put_int64(&q[i], "a,b", i);
    put_int64(&q[i], "c\"d", i);
    put_int64(&q[i], " lead", i);
    put_int64(&q[i], "x=y", i);
    int64_t v = i;
    feat_int64(&feat, &v, 1, 1);
    entry(&q[i], "nul\0key", 7, &feat);
  }
  expect_both(f = write_records("quoted.tfrecord", TFQ_COMPRESSION_NONE, q, 2, 1),
              "\"\":int64, \" lead\":int64, \"a,b\":int64, \"c\"\"d\":int64, \"x=y\":int64");
  free(f);
  /* not Examples: raw records for both */
  expect_both(f = write_lines("lines.tfrecord", 5), NULL);
  free(f);
  expect_both(f = write_exs("partial.tfrecord", 2, "\n\x05\x01"), NULL);
  free(f);
}

/* ---- detection ---- */

/* Runs a raw-record pipeline of write_lines(n) to its end, checking every record. */
static void drain_lines(tfq_pipeline *p, int64_t n) {
  cr_assert_eq(tfq_pipeline_num_columns(p), 1);
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "record");
  cr_assert_eq(tfq_pipeline_column_dtype(p, 0), TFQ_STRING);
  cr_assert_null(tfq_pipeline_features_spec(p));
  tfq_tuple *b;
  int64_t k = 0;
  while (tfq_pipeline_next(p, &b, NULL) == TFQ_OK) {
    const tfq_tensor *t = tfq_tuple_get(b, 0);
    for (int64_t r = 0; r < tfq_tensor_dim(t, 0); r++, k++) {
      char want[32];
      sprintf(want, "line %lld", (long long)k);
      expect_str(t, r, want, "record", k);
    }
    tfq_tuple_free(b);
  }
  cr_assert_eq(k, n);
}

Test(pipeline_examples, tfrecord_auto_parses_examples_and_keeps_other_records_raw) {
  char *ex = write_mixed("mixed.tfrecord", TFQ_COMPRESSION_NONE, 12);
  tfq_pipeline_options *o = opts(ex, TFQ_FORMAT_TFRECORD_AUTO, 5);
  tfq_pipeline *p = make(o);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), MIXED_SPEC);
  drain_mixed(p, 5, 12);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  /* text payloads */
  char *lines = write_lines("lines.tfrecord", 9);
  o = opts(lines, TFQ_FORMAT_TFRECORD_AUTO, 4);
  p = make(o);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_TFRECORD);
  drain_lines(p, 9);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  /* the other formats say what they were set to */
  o = opts(lines, TFQ_FORMAT_TFRECORD, 4);
  p = make(o);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_TFRECORD);
  cr_assert_null(tfq_pipeline_features_spec(p));
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  /* two Examples, then a record that is not one: raw records (tfq-cat's ex_detect_partial) */
  char *partial = write_exs("partial.tfrecord", 2, "\n\x05\x01");
  o = opts(partial, TFQ_FORMAT_TFRECORD_AUTO, 4);
  tfq_format fmt;
  cr_assert_null(spec_of(o, &fmt));
  cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
  tfq_pipeline_options_free(o);
  /* an empty file, and records that are Examples without a feature: raw */
  pb none[3] = {{0}};
  char *empty = write_records("empty.tfrecord", TFQ_COMPRESSION_NONE, none, 0, 0);
  char *bare = write_records("bare.tfrecord", TFQ_COMPRESSION_NONE, none, 3, 0);
  const char *raw[2] = {empty, bare};
  for (int i = 0; i < 2; i++) {
    o = opts(raw[i], TFQ_FORMAT_TFRECORD_AUTO, 4);
    cr_assert_null(spec_of(o, &fmt), "%s", raw[i]);
    cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
    cr_assert_null(tfq_cat_spec(raw[i], ""), "%s", raw[i]);
    /* as Examples: nothing to infer from */
    tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
    expect_new_error(o, TFQ_INVALID_ARGUMENT, "no features to infer from the first records of");
    tfq_pipeline_options_free(o);
  }
  /* only the sample decides: a non-Example record 120 of 150 is past it, unless infer_rows
   * takes it in */
  pb many[150] = {{0}};
  for (int64_t i = 0; i < 150; i++) {
    pb fs = {0};
    if (i == 120) {
      pb_put(&many[i], "\n\x05\x01", 3);
      continue;
    }
    put_int64(&fs, "id", i);
    pb_ld(&many[i], 1, fs.p, fs.n);
    pb_free(&fs);
  }
  char *late = write_records("late.tfrecord", TFQ_COMPRESSION_NONE, many, 150, 0);
  o = opts(late, TFQ_FORMAT_TFRECORD_AUTO, 4);
  char *s = spec_of(o, &fmt);
  cr_assert(s && strcmp(s, "id:int64") == 0 && fmt == TFQ_FORMAT_EXAMPLES);
  free(s);
  tfq_pipeline_options_set_infer_rows(o, 121);
  cr_assert_null(spec_of(o, &fmt));
  cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
  tfq_pipeline_options_set_infer_rows(o, 0);
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "infer_rows must be >= 1");
  tfq_pipeline_options_free(o);
  free(late);
  free(empty);
  free(bare);
  free(partial);
  free(lines);
  free(ex);
}

/* The first non-Example record behind a raw TFRECORD_AUTO outcome, and the NUL keys left out:
 * against the files as written, and against tfq-cat's notes for the same files. */
static int tfq_cat_says(const char *path, const char *text) {
  char exe[1024], cmd[4096], line[4096];
  tfq_cat_path(exe, sizeof exe);
  snprintf(cmd, sizeof cmd, "'%s' -f tfrecord -n 1 -o none --no-shuffle '%s' 2>&1 >/dev/null", exe,
           path);
  FILE *f = popen(cmd, "r");
  cr_assert_not_null(f);
  int found = 0;
  while (fgets(line, sizeof line, f)) found |= strstr(line, text) != NULL;
  pclose(f);
  return found;
}

static tfq_pipeline *auto_of(const char *path) {
  tfq_pipeline_options *o = opts(path, TFQ_FORMAT_TFRECORD_AUTO, 4);
  tfq_pipeline *p = make(o);
  tfq_pipeline_options_free(o);
  return p;
}

Test(pipeline_examples, the_first_non_example_and_nul_keys_are_told_as_tfq_cat_tells_them) {
  /* records 0 .. 4 Examples, record 5 raw bytes: raw records, record 5 named */
  char *f = write_exs("partial5.tfrecord", 5, "\n\x05\x01");
  tfq_pipeline *p = auto_of(f);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_TFRECORD);
  cr_assert_eq(tfq_pipeline_first_non_example(p), 5);
  cr_assert_eq(tfq_pipeline_features_nul_keys(p), 0);
  cr_assert(tfq_cat_says(f, "record 5 is not a tf.train.Example"));
  tfq_pipeline_free(p);
  free(f);
  /* Examples throughout, and records naming no feature: -1 */
  p = auto_of(f = write_exs("whole.tfrecord", 6, NULL));
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
  cr_assert_eq(tfq_pipeline_first_non_example(p), -1);
  tfq_pipeline_free(p);
  free(f);
  p = auto_of(f = write_lines("lines6.tfrecord", 6));
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_TFRECORD);
  cr_assert_eq(tfq_pipeline_first_non_example(p), -1);
  cr_assert(!tfq_cat_says(f, "is not a tf.train.Example"));
  tfq_pipeline_free(p);
  free(f);
  /* a key holding a NUL byte beside an ordinary one */
  pb q[2] = {{0}};
  for (int i = 0; i < 2; i++) {
    put_int64(&q[i], "ok", i);
    pb feat = {0};
    int64_t v = i;
    feat_int64(&feat, &v, 1, 1);
    entry(&q[i], "nul\0key", 7, &feat);
  }
  p = auto_of(f = write_records("nulkey.tfrecord", TFQ_COMPRESSION_NONE, q, 2, 1));
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
  cr_assert_eq(tfq_pipeline_features_nul_keys(p), 1);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), "ok:int64");
  cr_assert(tfq_cat_says(f, "feature keys holding a NUL byte cannot be requested"));
  tfq_pipeline_free(p);
  free(f);
  cr_assert_eq(tfq_pipeline_first_non_example(NULL), -1);
  cr_assert_eq(tfq_pipeline_features_nul_keys(NULL), 0);
}

Test(pipeline_examples, gzip_files_are_detected_and_inferred_through_the_reader) {
  char *gz = write_mixed("mixed.tfrecord.gz", TFQ_COMPRESSION_GZIP, 23);
  /* the file is gzip indeed */
  FILE *f = fopen(gz, "rb");
  unsigned char m[2] = {0};
  cr_assert_eq(fread(m, 1, 2, f), 2u);
  fclose(f);
  cr_assert(m[0] == 0x1f && m[1] == 0x8b);
  const tfq_compression comps[2] = {TFQ_COMPRESSION_AUTO, TFQ_COMPRESSION_GZIP};
  const tfq_format fmts[2] = {TFQ_FORMAT_TFRECORD_AUTO, TFQ_FORMAT_EXAMPLES};
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 2; k++) {
      tfq_pipeline_options *o = opts(gz, fmts[k], 6);
      tfq_pipeline_options_set_compression(o, comps[c]);
      tfq_pipeline *p = make(o);
      cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
      cr_assert_str_eq(tfq_pipeline_features_spec(p), MIXED_SPEC);
      drain_mixed(p, 6, 23);
      tfq_pipeline_free(p);
      tfq_pipeline_options_free(o);
    }
  free(gz);
}

/* ---- given features, samples, shards ---- */

Test(pipeline_examples, given_features_are_used_and_written_in_tfq_cats_syntax) {
  char *exs = write_exs("examples.tfrecord", 7, NULL), *lines = write_lines("lines.tfrecord", 3);
  tfq_example_config *cfg;
  OK(tfq_example_config_new(&cfg, NULL));
  const int64_t x21[2] = {2, 1}, two = 2;
  OK(tfq_example_config_add_fixed_len(cfg, "id", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_fixed_len(cfg, "x", TFQ_FLOAT, x21, 2, NULL, NULL));
  OK(tfq_example_config_add_var_len(cfg, "tags", TFQ_STRING, NULL));
  OK(tfq_example_config_add_fixed_len_sequence(cfg, "w", TFQ_FLOAT, NULL, 0, 1, NULL, NULL));
  tfq_tensor *d, *s, *e, *fl, *q;
  OK(tfq_tensor_new(TFQ_INT64, &two, 1, &d, NULL));
  ((int64_t *)tfq_tensor_data(d))[0] = ((int64_t *)tfq_tensor_data(d))[1] = 7;
  OK(tfq_example_config_add_fixed_len(cfg, "d", TFQ_INT64, &two, 1, d, NULL));
  OK(tfq_tensor_new(TFQ_STRING, NULL, 0, &s, NULL));
  OK(tfq_tensor_set_string(s, 0, "a,b", 3, NULL));
  OK(tfq_example_config_add_fixed_len(cfg, "s", TFQ_STRING, NULL, 0, s, NULL));
  OK(tfq_tensor_new(TFQ_STRING, NULL, 0, &e, NULL));
  OK(tfq_example_config_add_fixed_len(cfg, "e", TFQ_STRING, NULL, 0, e, NULL));
  OK(tfq_tensor_new(TFQ_FLOAT, NULL, 0, &fl, NULL));
  *(float *)tfq_tensor_data(fl) = -0.5f;
  OK(tfq_example_config_add_fixed_len(cfg, "f", TFQ_FLOAT, NULL, 0, fl, NULL));
  OK(tfq_tensor_new(TFQ_FLOAT, NULL, 0, &q, NULL));
  *(float *)tfq_tensor_data(q) = 0.1f;
  OK(tfq_example_config_add_fixed_len(cfg, "q", TFQ_FLOAT, NULL, 0, q, NULL));
  const char *want =
      "d:int64[2]=7, e:string=\"\", f:float32=-0.5, id:int64, q:float32=0.100000001, "
      "s:string=\"a,b\", tags:string[*], w:float32[?], x:float32[2,1]";
  const tfq_format fmts[2] = {TFQ_FORMAT_EXAMPLES, TFQ_FORMAT_TFRECORD_AUTO};
  for (int k = 0; k < 2; k++) {
    tfq_pipeline_options *o = opts(exs, fmts[k], 7);
    tfq_pipeline_options_set_features(o, cfg);
    tfq_pipeline *p = make(o);
    cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_EXAMPLES);
    cr_assert_str_eq(tfq_pipeline_features_spec(p), want);
    tfq_tuple *b;
    OK(tfq_pipeline_next(p, &b, NULL));
    const int64_t *dv = tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, 0)));
    const float *qv = tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, 4)));
    const int64_t *id = tfq_tensor_cdata(tfq_tuple_get(b, tfq_pipeline_column_slot(p, 3)));
    for (int64_t r = 0; r < 7; r++) {
      cr_assert(dv[2 * r] == 7 && dv[2 * r + 1] == 7 && qv[r] == 0.1f);
      cr_assert_eq(id[r], 10 * r - 20);
    }
    expect_str(tfq_tuple_get(b, tfq_pipeline_column_slot(p, 5)), 3, "a,b", "s", 3);
    tfq_tuple_free(b);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  /* tfq-cat takes the SPEC back */
  char exe[1024], cmd[4096];
  tfq_cat_path(exe, sizeof exe);
  snprintf(cmd, sizeof cmd, "'%s' -q --no-shuffle -o none --features '%s' '%s'", exe, want, exs);
  int rc = system(cmd);
  cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "tfq-cat refused --features '%s'", want);
  /* TFRECORD_AUTO with features on records that are not Examples: raw */
  tfq_pipeline_options *o = opts(lines, TFQ_FORMAT_TFRECORD_AUTO, 2);
  tfq_pipeline_options_set_features(o, cfg);
  tfq_pipeline *p = make(o);
  cr_assert_eq(tfq_pipeline_format(p), TFQ_FORMAT_TFRECORD);
  drain_lines(p, 3);
  tfq_pipeline_free(p);
  /* an empty config is refused */
  tfq_example_config *none;
  OK(tfq_example_config_new(&none, NULL));
  tfq_pipeline_options_set_features(o, none);
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "features given for Example input are empty");
  tfq_example_config_free(none);
  tfq_pipeline_options_free(o);
  tfq_example_config_free(cfg);
  tfq_tensor_free(d);
  tfq_tensor_free(s);
  tfq_tensor_free(e);
  tfq_tensor_free(fl);
  tfq_tensor_free(q);
  free(exs);
  free(lines);
}

Test(pipeline_examples, the_sample_is_the_first_file_after_sharding_or_the_sample_file) {
  char *lines = write_lines("a.tfrecord", 4),
       *ex = write_mixed("b.tfrecord", TFQ_COMPRESSION_NONE, 6);
  tfq_pipeline_options *o = opts(lines, TFQ_FORMAT_TFRECORD_AUTO, 4);
  OK(tfq_pipeline_options_add_file(o, ex, NULL));
  tfq_format fmt;
  cr_assert_null(spec_of(o, &fmt)); /* a.tfrecord first: raw */
  cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
  tfq_pipeline_options_set_shard(o, 1, 2); /* b.tfrecord alone */
  char *s = spec_of(o, &fmt);
  cr_assert(s && strcmp(s, MIXED_SPEC) == 0 && fmt == TFQ_FORMAT_EXAMPLES, "%s", s);
  free(s);
  tfq_pipeline_options_free(o);
  /* the sample file stands in for the first input: EXS' features, parsed from "mixed" */
  char *exs = write_exs("exs.tfrecord", 3, NULL);
  o = opts(ex, TFQ_FORMAT_EXAMPLES, 6);
  OK(tfq_pipeline_options_set_sample_file(o, exs, NULL));
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), EXS_SPEC);
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  const int64_t *id = tfq_tensor_cdata(tfq_tuple_get(b, 0));
  for (int64_t r = 0; r < 6; r++) cr_assert_eq(id[r], 10 * r - 20);
  tfq_tuple_free(b);
  tfq_pipeline_free(p);
  /* ... and decides detection */
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_TFRECORD_AUTO);
  OK(tfq_pipeline_options_set_sample_file(o, lines, NULL));
  cr_assert_null(spec_of(o, &fmt));
  cr_assert_eq(fmt, TFQ_FORMAT_TFRECORD);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/none.tfrecord", g_dir);
  OK(tfq_pipeline_options_set_sample_file(o, missing, NULL));
  expect_new_error(o, TFQ_NOT_FOUND, "sample file");
  tfq_pipeline_options_free(o);
  free(exs);
  free(lines);
  free(ex);
}

/* ---- inferred features at parse time and in a saved state ---- */

Test(pipeline_examples, an_inferred_fixedlen_feature_is_required_as_tfq_cat_makes_it) {
  /* records 0-4 hold id; record 5 only "other": past a sample of 5, id is required */
  pb r[6] = {{0}};
  for (int64_t i = 0; i < 5; i++) put_int64(&r[i], "id", i);
  put_int64(&r[5], "other", 5);
  char *path = write_records("req.tfrecord", TFQ_COMPRESSION_NONE, r, 6, 1);
  tfq_pipeline_options *o = opts(path, TFQ_FORMAT_EXAMPLES, 10);
  tfq_pipeline_options_set_infer_rows(o, 5);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), "id:int64");
  tfq_tuple *b;
  tfq_status *st = tfq_status_new();
  OK(tfq_pipeline_next(p, &b, NULL)); /* the records before the bad one come first */
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 5);
  tfq_tuple_free(b);
  cr_assert_eq(tfq_pipeline_next(p, &b, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "req.tfrecord:5") &&
                strstr(tfq_status_message(st), "is required"),
            "%s", tfq_status_message(st));
  tfq_pipeline_free(p);
  /* the whole file sampled: id is VarLen, and every record parses */
  tfq_pipeline_options_set_infer_rows(o, -1);
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), "id:int64[*], other:int64[*]");
  OK(tfq_pipeline_next(p, &b, st));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 5); /* id's indices: records 0-4 */
  tfq_tuple_free(b);
  cr_assert_eq(tfq_pipeline_next(p, &b, st), TFQ_OUT_OF_RANGE);
  tfq_pipeline_free(p);
  /* as Examples, a sample record that is not one is left out of the inference and fails when
   * parsed, after the records before it (tfq-cat's -f example) */
  char *partial = write_exs("partial.tfrecord", 2, "\n\x05\x01");
  tfq_pipeline_options_free(o);
  o = opts(partial, TFQ_FORMAT_EXAMPLES, 10);
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), EXS_SPEC);
  OK(tfq_pipeline_next(p, &b, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 2);
  tfq_tuple_free(b);
  cr_assert_eq(tfq_pipeline_next(p, &b, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "partial.tfrecord:2"), "%s", tfq_status_message(st));
  tfq_pipeline_free(p);
  tfq_status_free(st);
  tfq_pipeline_options_free(o);
  free(partial);
  free(path);
}

Test(pipeline_examples, a_state_restores_into_the_same_inference_and_not_into_another) {
  /* v: 1 value in records 0-4, 2 after: VarLen from the whole file, FixedLen [] from 3 records
   * (a column of the same name, dtype and width: the SPEC tells them apart) */
  pb r[40] = {{0}};
  for (int64_t i = 0; i < 40; i++) {
    pb f = {0};
    int64_t v[2] = {i, i};
    feat_int64(&f, v, i < 5 ? 1 : 2, 1);
    entry(&r[i], "v", 1, &f);
  }
  char *path = write_records("v.tfrecord", TFQ_COMPRESSION_NONE, r, 40, 1);
  tfq_pipeline_options *o = opts(path, TFQ_FORMAT_TFRECORD_AUTO, 4);
  tfq_pipeline_options_set_shuffle(o, 1);
  tfq_pipeline_options_set_seed(o, 9);
  tfq_pipeline_options_set_deterministic(o, 1);
  tfq_pipeline_options_set_capacity(o, 12);
  tfq_pipeline_options_set_min_after_dequeue(o, 4);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), "v:int64[*]");
  tfq_tuple *b;
  int64_t first[40], n1 = 0, second[40], n2 = 0;
  char *state = NULL;
  size_t len = 0;
  for (int k = 0; tfq_pipeline_next(p, &b, NULL) == TFQ_OK; k++) {
    const tfq_tensor *vals = tfq_tuple_get(b, 1);
    const int64_t *ix = tfq_tensor_cdata(tfq_tuple_get(b, 0));
    const int64_t *vv = tfq_tensor_cdata(vals);
    for (int64_t j = 0; j < tfq_tensor_dim(vals, 0); j++)
      if (ix[2 * j + 1] == 0) first[n1++] = vv[j];
    tfq_tuple_free(b);
    if (k == 2) OK(tfq_pipeline_save(p, &state, &len, NULL));
    if (k == 2) memcpy(second, first, sizeof first), n2 = n1;
  }
  cr_assert_eq(n1, 40);
  tfq_pipeline_free(p);
  /* the same options: the same inference, and the run goes on as it went */
  p = make(o);
  OK(tfq_pipeline_restore(p, state, len, NULL));
  while (tfq_pipeline_next(p, &b, NULL) == TFQ_OK) {
    const tfq_tensor *vals = tfq_tuple_get(b, 1);
    const int64_t *ix = tfq_tensor_cdata(tfq_tuple_get(b, 0));
    const int64_t *vv = tfq_tensor_cdata(vals);
    for (int64_t j = 0; j < tfq_tensor_dim(vals, 0); j++)
      if (ix[2 * j + 1] == 0) second[n2++] = vv[j];
    tfq_tuple_free(b);
  }
  cr_assert_eq(n2, 40);
  cr_assert_eq(memcmp(first, second, sizeof first), 0, "the restored run differs");
  tfq_pipeline_free(p);
  /* another sample infers v:int64: the state is refused */
  tfq_pipeline_options_set_infer_rows(o, 3);
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_features_spec(p), "v:int64");
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "from other options or files"), "%s",
            tfq_status_message(st));
  tfq_status_free(st);
  tfq_pipeline_free(p);
  tfq_free(state);
  tfq_pipeline_options_free(o);
  free(path);
}
