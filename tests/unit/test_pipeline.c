/* tfq_pipeline (tfq/pipeline.h): inputs, columns, order, determinism, epochs, shards, the final
 * batch, options errors, save and restore.  Inputs are CSV files written here whose row i is
 * "i,<i/2>,s<i>" (an id, a float64 and a string), so every value is checked against the row's id
 * (the oracle is the generator, not tfq's earlier output). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/inputs.h"
#include "helpers.h"

static char g_dir[64];

static void setup_dir(void) {
  strcpy(g_dir, "/tmp/tfq_pipeline_XXXXXX");
  cr_assert_not_null(mkdtemp(g_dir));
}
static void teardown_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  cr_assert_eq(system(cmd), 0);
}

/* Writes file `name` with rows [lo, hi) (and a header line "id,half,name" when header). */
static char *write_rows(const char *name, int64_t lo, int64_t hi, int header) {
  char *path = malloc(strlen(g_dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  if (header) fprintf(f, "id,half,name\n");
  for (int64_t i = lo; i < hi; i++)
    fprintf(f, "%lld,%.1f,s%lld\n", (long long)i, i / 2.0, (long long)i);
  cr_assert_eq(fclose(f), 0);
  return path;
}

static tfq_pipeline_options *csv_opts(char **files, size_t n, int64_t batch) {
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  for (size_t i = 0; i < n; i++) OK(tfq_pipeline_options_add_file(o, files[i], NULL));
  OK(tfq_pipeline_options_set_columns(o, "int64:0,float64:0,string:", NULL));
  tfq_pipeline_options_set_batch_size(o, batch);
  return o;
}

/* Runs `p` to its end; returns the ids in output order (*n of them), checking every row's values
 * and every batch's size against `batch`. */
static int64_t *drain(tfq_pipeline *p, int64_t batch, int64_t *n, tfq_code *end) {
  int64_t cap = 1024, k = 0;
  int64_t *ids = malloc((size_t)cap * sizeof *ids);
  tfq_status *st = tfq_status_new();
  tfq_tuple *b;
  tfq_code c;
  int64_t last = batch;
  while ((c = tfq_pipeline_next(p, &b, st)) == TFQ_OK) {
    cr_assert_eq(last, batch, "a batch of %lld came before the last", (long long)last);
    tfq_tensor *id = tfq_tuple_get(b, 0), *half = tfq_tuple_get(b, 1), *name = tfq_tuple_get(b, 2);
    int64_t m = tfq_tensor_dim(id, 0);
    cr_assert(m >= 1 && m <= batch);
    last = m;
    const int64_t *iv = tfq_tensor_cdata(id);
    const double *hv = tfq_tensor_cdata(half);
    for (int64_t i = 0; i < m; i++) {
      cr_assert_eq(hv[i], iv[i] / 2.0, "row %lld: half %g", (long long)iv[i], hv[i]);
      char want[32];
      snprintf(want, sizeof want, "s%lld", (long long)iv[i]);
      size_t len;
      const char *s = tfq_tensor_string(name, i, &len);
      cr_assert(len == strlen(want) && memcmp(s, want, len) == 0, "row %lld: name %.*s",
                (long long)iv[i], (int)len, s);
      if (k == cap) ids = realloc(ids, (size_t)(cap *= 2) * sizeof *ids);
      ids[k++] = iv[i];
    }
    tfq_tuple_free(b);
  }
  *end = c;
  *n = k;
  tfq_status_free(st);
  return ids;
}

static tfq_pipeline *make(tfq_pipeline_options *o) {
  tfq_pipeline *p;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_pipeline_new(o, &p, st);
  cr_assert_eq(c, TFQ_OK, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return p;
}

/* Every id in [0, n) exactly once. */
static void assert_permutation(const int64_t *ids, int64_t k, int64_t n) {
  cr_assert_eq(k, n, "%lld records, want %lld", (long long)k, (long long)n);
  char *seen = calloc((size_t)n, 1);
  for (int64_t i = 0; i < k; i++) {
    cr_assert(ids[i] >= 0 && ids[i] < n && !seen[ids[i]], "id %lld twice or out of range",
              (long long)ids[i]);
    seen[ids[i]] = 1;
  }
  free(seen);
}

TestSuite(pipeline, .init = setup_dir, .fini = teardown_dir, .timeout = 60);

Test(pipeline, unshuffled_rows_come_in_input_order_with_any_thread_count) {
  char *f[3] = {write_rows("a.csv", 0, 1000, 0), write_rows("b.csv", 1000, 1001, 0),
                write_rows("c.csv", 1001, 5000, 0)};
  for (int threads = 0; threads <= 4; threads++) {
    tfq_pipeline_options *o = csv_opts(f, 3, 64);
    tfq_pipeline_options_set_shuffle(o, 0);
    tfq_pipeline_options_set_num_threads(o, threads);
    tfq_pipeline_options_set_step(o, 100 + threads * 77);
    tfq_pipeline *p = make(o);
    int64_t n;
    tfq_code end;
    int64_t *ids = drain(p, 64, &n, &end);
    cr_assert_eq(end, TFQ_OUT_OF_RANGE);
    cr_assert_eq(n, 5000);
    for (int64_t i = 0; i < n; i++)
      cr_assert_eq(ids[i], i, "threads %d: position %lld", threads, (long long)i);
    free(ids);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  for (int i = 0; i < 3; i++) free(f[i]);
}

Test(pipeline, a_shuffled_epoch_is_a_permutation_and_a_second_epoch_another) {
  char *f[2] = {write_rows("a.csv", 0, 3000, 0), write_rows("b.csv", 3000, 4000, 0)};
  tfq_pipeline_options *o = csv_opts(f, 2, 100);
  tfq_pipeline_options_set_num_epochs(o, 2);
  tfq_pipeline_options_set_num_threads(o, 2);
  tfq_pipeline_options_set_min_after_dequeue(o, 500);
  tfq_pipeline *p = make(o);
  int64_t n;
  tfq_code end;
  int64_t *ids = drain(p, 100, &n, &end);
  cr_assert_eq(end, TFQ_OUT_OF_RANGE);
  cr_assert_eq(n, 8000);
  int64_t *count = calloc(4000, sizeof *count), inorder = 0;
  for (int64_t i = 0; i < n; i++) count[ids[i]]++;
  for (int64_t i = 0; i < 4000; i++)
    cr_assert_eq(count[i], 2, "id %lld %lld times", (long long)i, (long long)count[i]);
  for (int64_t i = 1; i < n; i++) inorder += ids[i] == ids[i - 1] + 1;
  cr_assert_lt(inorder, n / 10, "%lld of %lld neighbours in order: not shuffled",
               (long long)inorder, (long long)n);
  tfq_pipeline_stats s = {.size = sizeof s};
  OK(tfq_pipeline_get_stats(p, &s, NULL));
  cr_assert_eq(s.records_out, 8000);
  cr_assert_eq(s.records_read, 8000);
  cr_assert_eq(s.batches_out, 80);
  cr_assert_eq(s.files, 2);
  free(count);
  free(ids);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
  free(f[1]);
}

/* The batches of a deterministic pipeline as one array of ids. */
static int64_t *det_run(char **f, size_t nf, int threads, int64_t step, int64_t *n) {
  tfq_pipeline_options *o = csv_opts(f, nf, 32);
  tfq_pipeline_options_set_deterministic(o, 1);
  tfq_pipeline_options_set_seed(o, 7);
  tfq_pipeline_options_set_capacity(o, 300);
  tfq_pipeline_options_set_min_after_dequeue(o, 100);
  tfq_pipeline_options_set_num_epochs(o, 2);
  tfq_pipeline_options_set_num_threads(o, threads);
  tfq_pipeline_options_set_step(o, step);
  tfq_pipeline *p = make(o);
  tfq_code end;
  int64_t *ids = drain(p, 32, n, &end);
  cr_assert_eq(end, TFQ_OUT_OF_RANGE);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  return ids;
}

Test(pipeline, deterministic_batches_do_not_depend_on_threads_or_step) {
  char *f[3] = {write_rows("a.csv", 0, 700, 0), write_rows("b.csv", 700, 1500, 0),
                write_rows("c.csv", 1500, 2000, 0)};
  int64_t n0;
  int64_t *ref = det_run(f, 3, 0, 2048, &n0);
  cr_assert_eq(n0, 4000);
  const int threads[] = {1, 2, 4, 2, 3};
  const int64_t steps[] = {2048, 2048, 13, 1, 500};
  for (int k = 0; k < 5; k++) {
    int64_t n;
    int64_t *ids = det_run(f, 3, threads[k], steps[k], &n);
    cr_assert_eq(n, n0);
    cr_assert_eq(memcmp(ids, ref, (size_t)n * sizeof *ids), 0, "threads %d step %lld differ",
                 threads[k], (long long)steps[k]);
    free(ids);
  }
  free(ref);
  for (int i = 0; i < 3; i++) free(f[i]);
}

Test(pipeline, header_names_the_columns_and_is_skipped) {
  char *f[1] = {write_rows("h.csv", 0, 10, 1)};
  tfq_pipeline_options *o = csv_opts(f, 1, 4);
  tfq_pipeline_options_set_header(o, 1);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline *p = make(o);
  cr_assert_eq(tfq_pipeline_num_columns(p), 3);
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "id");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 1), "half");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 2), "name");
  cr_assert_eq(tfq_pipeline_column_dtype(p, 1), TFQ_DOUBLE);
  int64_t n;
  tfq_code end;
  int64_t *ids = drain(p, 4, &n, &end);
  cr_assert_eq(n, 10);
  cr_assert_eq(ids[0], 0);
  free(ids);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

Test(pipeline, shards_split_by_file_or_by_record_and_cover_the_input_once) {
  char *f[3] = {write_rows("a.csv", 0, 100, 0), write_rows("b.csv", 100, 250, 0),
                write_rows("c.csv", 250, 300, 0)};
  for (int nfiles = 1; nfiles <= 3; nfiles += 2) { /* 1 file < 3 shards: records; 3: files */
    int64_t total = nfiles == 1 ? 100 : 300;
    int *seen = calloc((size_t)total, sizeof *seen);
    for (int64_t i = 0; i < 3; i++) {
      tfq_pipeline_options *o = csv_opts(f, (size_t)nfiles, 7);
      tfq_pipeline_options_set_shard(o, i, 3);
      tfq_pipeline_options_set_shuffle(o, 0);
      tfq_pipeline *p = make(o);
      int64_t n;
      tfq_code end;
      int64_t *ids = drain(p, 7, &n, &end);
      cr_assert_eq(end, TFQ_OUT_OF_RANGE);
      for (int64_t k = 0; k < n; k++) {
        if (nfiles == 1)
          cr_assert_eq(ids[k] % 3, i, "record %lld in shard %lld", (long long)ids[k], (long long)i);
        seen[ids[k]]++;
      }
      free(ids);
      tfq_pipeline_free(p);
      tfq_pipeline_options_free(o);
    }
    for (int64_t k = 0; k < total; k++)
      cr_assert_eq(seen[k], 1, "record %lld seen %d times", (long long)k, seen[k]);
    free(seen);
  }
  for (int i = 0; i < 3; i++) free(f[i]);
}

Test(pipeline, drop_remainder_drops_and_counts_the_last_short_batch) {
  char *f[1] = {write_rows("a.csv", 0, 103, 0)};
  tfq_pipeline_options *o = csv_opts(f, 1, 10);
  tfq_pipeline_options_set_drop_remainder(o, 1);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline *p = make(o);
  int64_t n;
  tfq_code end;
  int64_t *ids = drain(p, 10, &n, &end);
  cr_assert_eq(n, 100);
  tfq_pipeline_stats s = {.size = sizeof s};
  OK(tfq_pipeline_get_stats(p, &s, NULL));
  cr_assert_eq(s.records_dropped, 3);
  free(ids);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

static void expect_new_error(tfq_pipeline_options *o, tfq_code code, const char *text) {
  tfq_pipeline *p = NULL;
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_new(o, &p, st), code, "%s", tfq_status_message(st));
  cr_assert_null(p);
  cr_assert(strstr(tfq_status_message(st), text), "message '%s' lacks '%s'", tfq_status_message(st),
            text);
  tfq_status_free(st);
}

Test(pipeline, bad_options_and_inputs_are_refused_with_clear_messages) {
  char *f[1] = {write_rows("a.csv", 0, 10, 0)};
  tfq_pipeline_options *o = csv_opts(f, 1, 0);
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "batch_size must be > 0");
  tfq_pipeline_options_set_batch_size(o, 8);
  tfq_pipeline_options_set_capacity(o, 20);
  tfq_pipeline_options_set_min_after_dequeue(o, 15);
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "capacity (20) must be at least min_after_dequeue");
  tfq_pipeline_options_set_capacity(o, 100);
  tfq_pipeline_options_set_shard(o, 3, 3);
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "shard index");
  tfq_pipeline_options_set_shard(o, 0, 1);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/none.csv", g_dir);
  OK(tfq_pipeline_options_add_file(o, missing, NULL));
  expect_new_error(o, TFQ_NOT_FOUND, "none.csv; No such file or directory");
  tfq_pipeline_options_free(o);
  OK(tfq_pipeline_options_new(&o, NULL));
  snprintf(missing, sizeof missing, "%s/*.tsv", g_dir);
  OK(tfq_pipeline_options_add_file(o, missing, NULL));
  expect_new_error(o, TFQ_NOT_FOUND, "no file matches");
  tfq_pipeline_options_free(o);
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, f[0], NULL));
  tfq_pipeline_options_set_infer_rows(o, 0); /* no columns: inferred, from at least 1 record */
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "infer_rows must be >= 1");
  tfq_pipeline_options_set_infer_rows(o, -1);
  snprintf(missing, sizeof missing, "%s/none.csv", g_dir);
  OK(tfq_pipeline_options_set_sample_file(o, missing, NULL));
  expect_new_error(o, TFQ_NOT_FOUND, "sample file");
  OK(tfq_pipeline_options_set_sample_file(o, NULL, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_options_set_columns(o, "int64,decimal:1", st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "unknown type 'decimal'"), "%s", tfq_status_message(st));
  cr_assert_eq(tfq_pipeline_options_set_columns(o, "int32:x", st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "invalid default 'x'"), "%s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

Test(pipeline, globs_expand_sorted_and_text_input_gives_lines) {
  char *f[2] = {write_rows("p2.csv", 5, 10, 0), write_rows("p1.csv", 0, 5, 0)};
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  char pat[128];
  snprintf(pat, sizeof pat, "%s/p*.csv", g_dir);
  OK(tfq_pipeline_options_add_file(o, pat, NULL));
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_TEXT);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline_options_set_keys(o, 1);
  tfq_pipeline_options_set_batch_size(o, 100);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "line");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 1), "key");
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 10);
  for (int64_t i = 0; i < 10; i++) {
    char want[64];
    snprintf(want, sizeof want, "%lld,%.1f,s%lld", (long long)i, i / 2.0, (long long)i);
    size_t len;
    const char *s = tfq_tensor_string(tfq_tuple_get(b, 0), i, &len);
    cr_assert(len == strlen(want) && !memcmp(s, want, len), "line %lld: %.*s", (long long)i,
              (int)len, s);
    snprintf(want, sizeof want, "%s:%lld", i < 5 ? f[1] : f[0], (long long)(i % 5 + 1));
    s = tfq_tensor_string(tfq_tuple_get(b, 1), i, &len);
    cr_assert(len == strlen(want) && !memcmp(s, want, len), "key %lld: %.*s", (long long)i,
              (int)len, s);
  }
  tfq_tuple_free(b);
  cr_assert_eq(tfq_pipeline_next(p, &b, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_pipeline_next(p, &b, NULL), TFQ_OUT_OF_RANGE);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
  free(f[1]);
}

/* Deterministic run of `o`: k batches, save, then the rest; a new pipeline restored from the
 * state gives the same rest. */
Test(pipeline, a_restored_deterministic_pipeline_continues_with_the_same_batches) {
  char *f[2] = {write_rows("a.csv", 0, 2500, 0), write_rows("b.csv", 2500, 4000, 0)};
  for (int k = 0; k <= 130; k += 13) {
    tfq_pipeline_options *o = csv_opts(f, 2, 50);
    tfq_pipeline_options_set_deterministic(o, 1);
    tfq_pipeline_options_set_seed(o, 99);
    tfq_pipeline_options_set_num_threads(o, 2);
    tfq_pipeline_options_set_num_epochs(o, 2);
    tfq_pipeline_options_set_step(o, 333);
    tfq_pipeline *p = make(o);
    tfq_tuple *b;
    for (int i = 0; i < k; i++) {
      OK(tfq_pipeline_next(p, &b, NULL));
      tfq_tuple_free(b);
    }
    char *state;
    size_t len;
    OK(tfq_pipeline_save(p, &state, &len, NULL));
    int64_t n1, n2;
    tfq_code e1, e2;
    int64_t *rest = drain(p, 50, &n1, &e1);
    tfq_pipeline_free(p);
    tfq_pipeline_options_set_num_threads(o, k % 3); /* threads may differ */
    p = make(o);
    tfq_status *st = tfq_status_new();
    cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_OK, "%s", tfq_status_message(st));
    int64_t *again = drain(p, 50, &n2, &e2);
    cr_assert_eq(n1, 8000 - 50 * k);
    cr_assert_eq(n2, n1);
    cr_assert_eq(memcmp(rest, again, (size_t)n1 * sizeof *rest), 0, "after %d batches", k);
    cr_assert_eq(e2, TFQ_OUT_OF_RANGE);
    tfq_status_free(st);
    tfq_free(state);
    free(rest);
    free(again);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  free(f[0]);
  free(f[1]);
}

Test(pipeline, a_corrupted_or_foreign_state_is_refused) {
  char *f[1] = {write_rows("a.csv", 0, 500, 0)};
  tfq_pipeline_options *o = csv_opts(f, 1, 10);
  tfq_pipeline_options_set_seed(o, 5);
  tfq_pipeline *p = make(o);
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  tfq_tuple_free(b);
  char *state;
  size_t len;
  OK(tfq_pipeline_save(p, &state, &len, NULL));
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_FAILED_PRECONDITION);
  tfq_pipeline_free(p);
  /* a flipped byte in the body */
  state[len / 2] ^= 0x10;
  p = make(o);
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_DATA_LOSS);
  cr_assert(strstr(tfq_status_message(st), "pipeline state is corrupted (checksum mismatch)"), "%s",
            tfq_status_message(st));
  state[len / 2] ^= 0x10;
  cr_assert_eq(tfq_pipeline_restore(p, state, len - 1, st), TFQ_DATA_LOSS);
  cr_assert_eq(tfq_pipeline_restore(p, "nonsense", 8, st), TFQ_DATA_LOSS);
  tfq_pipeline_free(p);
  /* other options, another seed, other files */
  tfq_pipeline_options_set_batch_size(o, 11);
  p = make(o);
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "from other options or files (the options differ"), "%s",
            tfq_status_message(st));
  tfq_pipeline_free(p);
  tfq_pipeline_options_set_batch_size(o, 10);
  tfq_pipeline_options_set_seed(o, 6);
  p = make(o);
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "the seed differs"), "%s", tfq_status_message(st));
  tfq_pipeline_free(p);
  tfq_pipeline_options_set_seed(o, 5);
  free(write_rows("a.csv", 0, 501, 0)); /* the file grew */
  p = make(o);
  cr_assert_eq(tfq_pipeline_restore(p, state, len, st), TFQ_INVALID_ARGUMENT);
  cr_assert(strstr(tfq_status_message(st), "the input files differ"), "%s", tfq_status_message(st));
  tfq_pipeline_free(p);
  tfq_status_free(st);
  tfq_free(state);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

static void *stop_later(void *arg) {
  sleep_ms(100);
  tfq_pipeline_stop(arg);
  return NULL;
}

Test(pipeline, stop_from_another_thread_cancels_a_blocked_next) {
  char fifo_path[128];
  snprintf(fifo_path, sizeof fifo_path, "%s/fifo", g_dir);
  cr_assert_eq(mkfifo(fifo_path, 0600), 0);
  int fd = open(fifo_path, O_RDWR); /* keeps the pipe open: the reader blocks */
  cr_assert(fd >= 0);
  char *files[1] = {fifo_path};
  tfq_pipeline_options *o = csv_opts(files, 1, 10);
  tfq_pipeline_options_set_compression(o, TFQ_COMPRESSION_NONE);
  tfq_pipeline *p = make(o);
  pthread_t th;
  pthread_create(&th, NULL, stop_later, p);
  tfq_tuple *b;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_pipeline_next(p, &b, st);
  cr_assert_eq(c, TFQ_CANCELLED, "%s", tfq_status_message(st));
  tfq_status_free(st);
  pthread_join(th, NULL);
  close(fd); /* a read() blocked on a pipe ends at its end (free joins the reader) */
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
}

Test(pipeline, free_running_readers_deliver_each_record_once_in_small_buffers) {
  char *f[4] = {write_rows("a.csv", 0, 900, 0), write_rows("b.csv", 900, 1000, 0),
                write_rows("c.csv", 1000, 2999, 0), write_rows("d.csv", 2999, 3000, 0)};
  for (int threads = 1; threads <= 3; threads++) {
    tfq_pipeline_options *o = csv_opts(f, 4, 5);
    tfq_pipeline_options_set_shuffle_batch(o, 5, threads, 12, 7);
    tfq_pipeline_options_set_step(o, 64);
    tfq_pipeline *p = make(o);
    int64_t n;
    tfq_code end;
    int64_t *ids = drain(p, 5, &n, &end);
    cr_assert_eq(end, TFQ_OUT_OF_RANGE);
    assert_permutation(ids, n, 3000);
    free(ids);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  for (int i = 0; i < 4; i++) free(f[i]);
}

/* ---- CSV columns inferred (infer.c): tfq-cat's rules ----
 * The expected specs are written from each file's known content with the rules of
 * docs/tfq-cat.md ("Type inference") and decode_csv's number rules (tfq/csv.h): not from tfq's
 * own earlier output. */

/* Writes len bytes of `text` to file `name` in the test directory; returns its path. */
static char *write_bytes(const char *name, const void *text, size_t len) {
  char *path = malloc(strlen(g_dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(text, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
  return path;
}
static char *write_text(const char *name, const char *text) {
  return write_bytes(name, text, strlen(text));
}

/* Options for `path` without columns, unshuffled, batches of 1000. */
static tfq_pipeline_options *infer_opts(const char *path) {
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, path, NULL));
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline_options_set_batch_size(o, 1000);
  return o;
}

/* The spec a pipeline made from `o` has (a copy). */
static char *spec_of(const tfq_pipeline_options *o) {
  tfq_pipeline *p = make((tfq_pipeline_options *)o);
  const char *s = tfq_pipeline_columns_spec(p);
  cr_assert_not_null(s);
  char *c = strdup(s);
  tfq_pipeline_free(p);
  return c;
}
static void expect_spec(const tfq_pipeline_options *o, const char *want) {
  char *s = spec_of(o);
  cr_assert_str_eq(s, want);
  free(s);
}
/* The spec inferred for file `name` holding `text` (no header, ',' delimiter). */
static void expect_inferred(const char *name, const char *text, const char *want) {
  char *path = write_text(name, text);
  tfq_pipeline_options *o = infer_opts(path);
  expect_spec(o, want);
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, columns_without_a_spec_are_inferred_int64_float64_and_string) {
  char *f[1] = {write_rows("a.csv", 0, 300, 0)}; /* "i,<i/2>,s<i>" */
  tfq_pipeline_options *o = infer_opts(f[0]);
  tfq_pipeline_options_set_batch_size(o, 64);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:");
  cr_assert_eq(tfq_pipeline_num_columns(p), 3);
  const tfq_dtype want[3] = {TFQ_INT64, TFQ_DOUBLE, TFQ_STRING};
  for (size_t i = 0; i < 3; i++) {
    char nm[8];
    snprintf(nm, sizeof nm, "c%zu", i);
    cr_assert_eq(tfq_pipeline_column_dtype(p, i), want[i]);
    cr_assert_str_eq(tfq_pipeline_column_name(p, i), nm);
  }
  int64_t n;
  tfq_code end;
  int64_t *ids = drain(p, 64, &n, &end); /* checks every value against the row's id */
  cr_assert_eq(end, TFQ_OUT_OF_RANGE);
  cr_assert_eq(n, 300);
  for (int64_t i = 0; i < n; i++) cr_assert_eq(ids[i], i);
  free(ids);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

Test(pipeline, a_column_empty_in_some_rows_keeps_its_type_and_one_never_filled_is_a_string) {
  char *path = write_text("e.csv", "1,,x,\n,2.5,,\n3,4,y,\n");
  tfq_pipeline_options *o = infer_opts(path);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:,string:");
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  const int64_t *c0 = tfq_tensor_cdata(tfq_tuple_get(b, 0));
  const double *c1 = tfq_tensor_cdata(tfq_tuple_get(b, 1));
  cr_assert(c0[0] == 1 && c0[1] == 0 && c0[2] == 3, "the empty int64 takes the default 0");
  cr_assert(c1[0] == 0.0 && c1[1] == 2.5 && c1[2] == 4.0, "the empty float64 takes 0.0");
  tfq_tuple_free(b);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, inference_follows_decode_csv_number_rules) {
  /* c0 blanks and signs around integers: int64; c1 a hex float (the int parser is decimal
   * only): float64; c2 nan, infinities and an overflow to inf: float64; c3 one past int64's
   * range: float64; c4 "1_0" is no number: string; c5 a quoted integer (the quotes removed by
   * decode_csv): int64; c6 "1." and ".5": float64; c7 blanks only: string */
  expect_inferred("n.csv",
                  " 12 ,0x1A,nan,9223372036854775808,1_0,\"12\",1.,  \n"
                  "+7,1,-Infinity,1,2,3,.5, \n"
                  "-3,2,1e400,5,3,4,7,\n",
                  "int64:0,3*float64:0.0,string:,int64:0,float64:0.0,string:");
}

Test(pipeline, a_header_line_names_the_inferred_columns_as_tfq_cat_splits_it) {
  char *f[1] = {write_rows("h.csv", 0, 20, 1)}; /* "id,half,name" */
  tfq_pipeline_options *o = infer_opts(f[0]);
  tfq_pipeline_options_set_header(o, 1);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "id");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 1), "half");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 2), "name");
  int64_t n;
  tfq_code end;
  int64_t *ids = drain(p, 1000, &n, &end); /* the header is no record */
  cr_assert_eq(n, 20);
  free(ids);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  /* a quoted field ends at its closing quote (the rest up to the delimiter dropped), "" is a
   * quote, an unquoted field is taken as it is, a trailing delimiter makes an empty name; with
   * two skipped lines the first names the columns */
  char *q = write_text("q.csv", "id,\"a,b\",c\"\"d,\"e\"\"f\"g,\"h\",\nskip me\n1,2,3,4,5,6\n");
  o = infer_opts(q);
  tfq_pipeline_options_set_header(o, 1);
  tfq_pipeline_options_set_skip_header_lines(o, 2);
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "6*int64:0");
  const char *want[6] = {"id", "a,b", "c\"\"d", "e\"f", "h", ""};
  for (size_t i = 0; i < 6; i++) cr_assert_str_eq(tfq_pipeline_column_name(p, i), want[i]);
  tfq_pipeline_free(p);
  /* select_cols: the kept fields' names and types */
  const int64_t sel[2] = {1, 3};
  OK(tfq_pipeline_options_set_select_cols(o, sel, 2, NULL));
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,int64:0");
  cr_assert_eq(tfq_pipeline_num_columns(p), 2);
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "a,b");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 1), "e\"f");
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(q);
  free(f[0]);
}

/* A file of `rows` rows of `cols` fields "1", except "x" at (bad_row, bad_col). */
static char *write_wide(const char *name, int cols, int rows, int bad_row, int bad_col) {
  size_t cap = (size_t)cols * 2 * (size_t)rows + 16, n = 0;
  char *t = malloc(cap);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      t[n++] = r == bad_row && c == bad_col ? 'x' : '1';
      t[n++] = c + 1 < cols ? ',' : '\n';
    }
  char *path = write_bytes(name, t, n);
  free(t);
  return path;
}
static void expect_wide(int cols, int rows, int bad_row, const char *want) {
  char *path = write_wide("w.csv", cols, rows, bad_row, 7);
  tfq_pipeline_options *o = infer_opts(path);
  char *s = spec_of(o);
  cr_assert_str_eq(s, want, "%d columns, 'x' in record %d: %s", cols, bad_row, s);
  free(s);
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, wide_rows_are_sampled_by_values_within_tfq_cats_bounds) {
  /* 2^17 values' worth of records, at most 100 and at least 10: 1310 fields keep 100 records,
   * 1311 fields 99, 20000 fields 10 */
  expect_wide(1310, 101, 99, "7*int64:0,string:,1302*int64:0");
  expect_wide(1310, 101, 100, "1310*int64:0");
  expect_wide(1311, 101, 98, "7*int64:0,string:,1303*int64:0");
  expect_wide(1311, 101, 99, "1311*int64:0");
  expect_wide(20000, 11, 9, "7*int64:0,string:,19992*int64:0");
  expect_wide(20000, 11, 10, "20000*int64:0");
}

Test(pipeline, infer_rows_sets_the_sample_size) {
  char *path = write_wide("r.csv", 8, 300, 150, 7);
  tfq_pipeline_options *o = infer_opts(path);
  expect_spec(o, "8*int64:0"); /* the default: 100 records */
  tfq_pipeline_options_set_infer_rows(o, 151);
  expect_spec(o, "7*int64:0,string:");
  tfq_pipeline_options_set_infer_rows(o, 150);
  expect_spec(o, "8*int64:0");
  tfq_pipeline_options_free(o);
  free(path);
  /* wide rows: exactly the records asked for, not fewer */
  path = write_wide("r2.csv", 20000, 12, 11, 7);
  o = infer_opts(path);
  expect_spec(o, "20000*int64:0");
  tfq_pipeline_options_set_infer_rows(o, 12);
  expect_spec(o, "7*int64:0,string:,19992*int64:0");
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, gzip_input_is_inferred_through_the_reader) {
  char text[4096];
  size_t n = 0;
  n += (size_t)snprintf(text + n, sizeof text - n, "k,v,w\n");
  for (int i = 0; i < 150; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d.25,%s\n", i, i, i % 2 ? "a" : "");
  size_t zn;
  unsigned char *z = test_deflate(text, n, 31, &zn);
  cr_assert_not_null(z);
  char *path = write_bytes("g.csv.gz", z, zn);
  free(z);
  tfq_pipeline_options *o = infer_opts(path); /* compression AUTO */
  tfq_pipeline_options_set_header(o, 1);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 2), "w");
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 150);
  cr_assert_eq(((const double *)tfq_tensor_cdata(tfq_tuple_get(b, 1)))[149], 149.25);
  tfq_tuple_free(b);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, a_record_decode_csv_rejects_ends_the_sample) {
  /* record 2 has one field of 2: the sample is records 0 and 1 ("x" after it is not seen) */
  expect_inferred("bad.csv", "1,a\n2,b\nbad\nx,c\n", "int64:0,string:");
  /* record 1's quote inside an unquoted field: the sample is record 0 */
  expect_inferred("quote.csv", "1,2\n3,x\"y\nz,4\n", "int64:0,int64:0");
  /* quoted fields holding the delimiter and quotes split as decode_csv splits them */
  expect_inferred("quoted.csv", "\"1\",\"a,b\"\n\"2\",\"c\"\"d\"\n", "int64:0,string:");
}

Test(pipeline, an_empty_file_infers_one_string_column) {
  expect_inferred("empty.csv", "", "string:");
  char *path = write_text("empty2.csv", "");
  tfq_pipeline_options *o = infer_opts(path);
  tfq_pipeline_options_set_header(o, 1); /* no header line: c0 */
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "string:");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "c0");
  tfq_tuple *b;
  cr_assert_eq(tfq_pipeline_next(p, &b, NULL), TFQ_OUT_OF_RANGE);
  tfq_pipeline_free(p);
  const int64_t sel[3] = {0, 2, 5};
  OK(tfq_pipeline_options_set_select_cols(o, sel, 3, NULL));
  expect_spec(o, "3*string:");
  tfq_pipeline_options_free(o);
  free(path);
}

Test(pipeline, the_sample_file_stands_in_for_the_first_input) {
  char *f[1] = {write_rows("in.csv", 0, 400, 1)};
  /* a prefix saved aside, as a tool saves standard input's, with its own header line */
  char prefix[2048];
  size_t n = (size_t)snprintf(prefix, sizeof prefix, "sa,sb,sc\n");
  for (int i = 0; i < 30; i++)
    n += (size_t)snprintf(prefix + n, sizeof prefix - n, "%d,%d.5,s\n", i, i);
  char *sample = write_bytes("prefix", prefix, n);
  tfq_pipeline_options *o = infer_opts(f[0]);
  tfq_pipeline_options_set_header(o, 1);
  OK(tfq_pipeline_options_set_sample_file(o, sample, NULL));
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "sa");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 2), "sc");
  int64_t k;
  tfq_code end;
  int64_t *ids = drain(p, 1000, &k, &end); /* the input itself is read */
  cr_assert_eq(k, 400);
  free(ids);
  tfq_pipeline_free(p);
  /* a gzip prefix cut short: the sample ends there, silently */
  size_t zn;
  unsigned char *z = test_deflate(prefix, n, 31, &zn);
  char *cut = write_bytes("prefix.gz", z, zn / 2);
  free(z);
  OK(tfq_pipeline_options_set_sample_file(o, cut, NULL));
  p = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(p), "int64:0,float64:0.0,string:");
  cr_assert_str_eq(tfq_pipeline_column_name(p, 1), "sb");
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(cut);
  free(sample);
  free(f[0]);
}

/* Whether tuples a and b hold the same columns, element for element. */
static void assert_same_batch(tfq_tuple *a, tfq_tuple *b) {
  cr_assert_eq(tfq_tuple_size(a), tfq_tuple_size(b));
  for (size_t c = 0; c < tfq_tuple_size(a); c++) {
    tfq_tensor *x = tfq_tuple_get(a, c), *y = tfq_tuple_get(b, c);
    cr_assert_eq(tfq_tensor_dtype(x), tfq_tensor_dtype(y), "column %zu", c);
    int64_t n = tfq_tensor_num_elements(x);
    cr_assert_eq(n, tfq_tensor_num_elements(y), "column %zu", c);
    if (tfq_tensor_dtype(x) != TFQ_STRING) {
      size_t bytes = (size_t)n * tfq_dtype_size(tfq_tensor_dtype(x));
      cr_assert_eq(memcmp(tfq_tensor_cdata(x), tfq_tensor_cdata(y), bytes), 0, "column %zu", c);
      continue;
    }
    for (int64_t i = 0; i < n; i++) {
      size_t lx, ly;
      const char *sx = tfq_tensor_string(x, i, &lx), *sy = tfq_tensor_string(y, i, &ly);
      cr_assert(lx == ly && !memcmp(sx, sy, lx), "column %zu row %lld", c, (long long)i);
    }
  }
}

/* Runs `o` with and without the spec of its first pipeline: the same batches. */
static void assert_round_trip(tfq_pipeline_options *o, const char *want) {
  tfq_pipeline *p = make(o);
  const char *spec = tfq_pipeline_columns_spec(p);
  cr_assert_str_eq(spec, want);
  OK(tfq_pipeline_options_set_columns(o, spec, NULL));
  tfq_pipeline *q = make(o);
  cr_assert_str_eq(tfq_pipeline_columns_spec(q), spec);
  tfq_tuple *a, *b;
  tfq_code ca, cb;
  int batches = 0;
  while ((ca = tfq_pipeline_next(p, &a, NULL)) == TFQ_OK) {
    cr_assert_eq(cb = tfq_pipeline_next(q, &b, NULL), TFQ_OK);
    assert_same_batch(a, b);
    tfq_tuple_free(a);
    tfq_tuple_free(b);
    batches++;
  }
  cr_assert_eq(ca, TFQ_OUT_OF_RANGE);
  cr_assert_eq(tfq_pipeline_next(q, &b, NULL), TFQ_OUT_OF_RANGE);
  cr_assert_gt(batches, 1);
  tfq_pipeline_free(q);
  tfq_pipeline_free(p);
}

Test(pipeline, the_columns_spec_round_trips_through_set_columns) {
  char text[16384];
  size_t n = 0;
  for (int i = 0; i < 200; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%d,%d,%d,%s,%g,%d.5,-%d,\"s,%d\",%s,\n", i,
                          -i, i * 3, i % 7 ? "1e3" : "nan", i / 4.0, i, i, i, i % 3 ? "" : "t");
  char *path = write_bytes("rt.csv", text, n);
  tfq_pipeline_options *o = infer_opts(path);
  tfq_pipeline_options_set_batch_size(o, 64);
  tfq_pipeline_options_set_seed(o, 3);
  tfq_pipeline_options_set_shuffle(o, 1);
  tfq_pipeline_options_set_deterministic(o, 1); /* the same shuffled batches twice */
  tfq_pipeline_options_set_num_threads(o, 0);
  assert_round_trip(o, "3*int64:0,3*float64:0.0,int64:0,3*string:");
  /* given columns come back in the same form: canonical names, runs, defaults as given */
  OK(tfq_pipeline_options_set_columns(
      o, "int,long,long,double:-1.5,double:-1.5,float,str:\"a,\"\"b\",str:x,string:x,str:x", NULL));
  assert_round_trip(o,
                    "int32,int64,int64,float64:-1.5,float64:-1.5,float32,string:\"a,\"\"b\","
                    "3*string:x");
  tfq_pipeline_options_free(o);
  free(path);
}

/* The specs tfq-cat's golden tests hold (tests/cli/run_cli_tests.py), on the same files. */
Test(pipeline, inferred_specs_equal_tfq_cats_golden_ones) {
  /* infer_mixed (tests/cli/golden/infer_mixed.err) */
  expect_inferred("mixed.csv", "1,1.5,x,,7\n2,2,y,,\n-3,1e3,z,,8\n",
                  "int64:0,float64:0.0,string:,string:,int64:0");
  /* inferred_spec and select_cols_infer: the iris data's first lines */
  const char *iris =
      "sepal_length,sepal_width,petal_length,petal_width,species\n"
      "5.1,3.5,1.4,0.2,setosa\n4.9,3.0,1.4,0.2,setosa\n7.0,3.2,4.7,1.4,versicolor\n"
      "6.3,3.3,6.0,2.5,virginica\n";
  char *path = write_text("iris.csv", iris);
  tfq_pipeline_options *o = infer_opts(path);
  tfq_pipeline_options_set_header(o, 1);
  expect_spec(o, "4*float64:0.0,string:");
  const int64_t sel[2] = {0, 4};
  OK(tfq_pipeline_options_set_select_cols(o, sel, 2, NULL));
  expect_spec(o, "float64:0.0,string:");
  tfq_pipeline_options_free(o);
  free(path);
  /* infer_repeat_spec: _wide_mixed(), 20 rows of 3 int, 2 string, 3000 float, 1 string, 2 int,
   * 1 float and 1500 string columns */
  const char *kinds = "iiissfsiifs";
  const int counts[] = {1, 1, 1, 1, 1, 3000, 1, 1, 1, 1, 1500};
  char *text = malloc(20 * 4509 * 12 + 1);
  size_t n = 0;
  for (int r = 0; r < 20; r++) {
    int c = 0;
    for (int k = 0; k < 11; k++)
      for (int j = 0; j < counts[k]; j++, c++) {
        if (c) text[n++] = ',';
        if (kinds[k] == 'i')
          n += (size_t)sprintf(text + n, "%d", r * 7 - c);
        else if (kinds[k] == 'f')
          n += (size_t)sprintf(text + n, "%d.%02d", c - r, (r * 13 + c) % 100);
        else if ((r + c) % 5)
          n += (size_t)sprintf(text + n, "w%d", r + c);
      }
    text[n++] = '\n';
  }
  text[n] = '\0';
  expect_inferred("wide_mixed.csv", text,
                  "3*int64:0,string:,string:,3000*float64:0.0,string:,int64:0,int64:0,"
                  "float64:0.0,1500*string:");
  free(text);
}

/* The spec tfq-cat (built beside this suite) prints for `path` with extra options, or NULL when
 * there is no tfq-cat here. */
static char *tfq_cat_spec(const char *path, const char *args) {
  char exe[1024], cmd[4096], line[65536];
  ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 32);
  if (k <= 0) return NULL;
  exe[k] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  strcpy(slash, "/../../tools/tfq-cat");
  if (access(exe, X_OK) != 0) return NULL;
  snprintf(cmd, sizeof cmd, "'%s' -f csv -n 1 -o none --no-shuffle %s '%s' 2>&1 >/dev/null", exe,
           args, path);
  FILE *f = popen(cmd, "r");
  cr_assert_not_null(f);
  char *spec = NULL;
  const char *tag = "tfq-cat: inferred -d '";
  while (fgets(line, sizeof line, f))
    if (!spec && strncmp(line, tag, strlen(tag)) == 0) {
      spec = strdup(line + strlen(tag));
      char *end = strrchr(spec, '\'');
      cr_assert_not_null(end, "%s", line);
      *end = '\0';
    }
  pclose(f);
  cr_assert_not_null(spec, "tfq-cat printed no inferred -d for %s", path);
  return spec;
}

Test(pipeline, inferred_specs_equal_what_tfq_cat_prints) {
  struct {
    const char *text, *args;
    int header;
  } cases[] = {
      {"1,1.5,x,,7\n2,2,y,,\n-3,1e3,z,,8\n", "", 0},
      {" 12 ,0x1A,nan,\"3\",1_0\n+7,1,inf,4,2\n", "", 0},
      {"a,b,c,d\n1,\"x,y\",2.5,\n3,\"p\"\"q\",4,\nbad\n5,6,7,8\n", "--skip-header-lines=1", 1},
      {"a;b;c\n1;2;3\n4;x;6\n", "--skip-header-lines=1 --field-delim=';'", 1},
      {"1,2,3,4,5,6\n7,8,9,x,y,z\n", "--select-cols=1,3,4", 0},
      /* NA takes the default: both columns stay int64 */
      {"a,b\nNA,1\n2,NA\n3,4\n", "--skip-header-lines=1 --na-value=NA", 1},
      /* without quoting, '"1"' is not a number: a string column */
      {"\"1\",2\n\"3\",4\n", "--no-quote-delim", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "cat%zu.csv", i);
    char *path = write_text(name, cases[i].text);
    char *want = tfq_cat_spec(path, cases[i].args);
    /* tfq-cat is always built beside this suite (tools/): missing is a failure, never a skip */
    cr_assert_not_null(want, "tfq-cat is not built beside this suite (%s)", path);
    tfq_pipeline_options *o = infer_opts(path);
    tfq_pipeline_options_set_header(o, cases[i].header);
    if (strstr(cases[i].args, "';'")) tfq_pipeline_options_set_field_delim(o, ';');
    if (strstr(cases[i].args, "select")) {
      const int64_t sel[3] = {1, 3, 4};
      OK(tfq_pipeline_options_set_select_cols(o, sel, 3, NULL));
    }
    if (strstr(cases[i].args, "--na-value=NA")) {
      OK(tfq_pipeline_options_set_na_value(o, "NA", NULL));
      cr_assert_str_eq(want, "int64:0,int64:0", "tfq-cat inferred %s", want); /* the rule */
    }
    if (strstr(cases[i].args, "--no-quote-delim")) {
      tfq_pipeline_options_set_use_quote_delim(o, 0);
      cr_assert_str_eq(want, "string:,int64:0", "tfq-cat inferred %s", want);
    }
    expect_spec(o, want);
    free(want);
    tfq_pipeline_options_free(o);
    free(path);
  }
}

/* ---- Example input with VarLen and FixedLenSequence features ----
 * Record i: "id" int64 = i (FixedLen []), "tags" bytes = t<i>_0 .. t<i>_<i%4 - 1> (VarLen),
 * "w" float = i + 0.5, i + 1.5, .. (i % 3 values, VarLen), "xy" float rows of [2], row k =
 * (i + k, -(i + k)) for k < i % 5 (FixedLenSequence, padding -1), hand-encoded as protobuf. */

typedef struct {
  unsigned char *p;
  size_t n, cap;
} pb;

static void pb_put(pb *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, d, n);
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
static void pb_len(pb *b, int field, const pb *inner) { /* a length-delimited field */
  pb_varint(b, (uint64_t)(field << 3 | 2));
  pb_varint(b, inner->n);
  pb_put(b, inner->p, inner->n);
}
/* A features map entry: key -> Feature{kind: list}. */
static void pb_feature(pb *features, const char *key, int kind, const pb *list) {
  pb feat = {0}, entry = {0}, k = {0};
  pb_len(&feat, kind, list);
  pb_put(&k, key, strlen(key));
  pb_len(&entry, 1, &k);
  pb_len(&entry, 2, &feat);
  pb_len(features, 1, &entry);
  free(feat.p);
  free(entry.p);
  free(k.p);
}

static char *write_examples(const char *name, int64_t lo, int64_t hi) {
  char *path = malloc(strlen(g_dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", g_dir, name);
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(path, TFQ_COMPRESSION_NONE, &w, NULL));
  for (int64_t i = lo; i < hi; i++) {
    pb features = {0}, ex = {0}, l = {0}, packed = {0};
    pb_varint(&packed, (uint64_t)i); /* int64_list {value: [i]} (packed) */
    pb_len(&l, 1, &packed);
    pb_feature(&features, "id", 3, &l);
    l.n = 0;
    for (int64_t j = 0; j < i % 4; j++) { /* bytes_list */
      char s[32];
      pb v = {0};
      pb_put(&v, s, (size_t)snprintf(s, sizeof s, "t%lld_%lld", (long long)i, (long long)j));
      pb_len(&l, 1, &v);
      free(v.p);
    }
    pb_feature(&features, "tags", 1, &l);
    l.n = packed.n = 0;
    for (int64_t j = 0; j < i % 3; j++) {
      float f = (float)i + (float)j + 0.5f;
      pb_put(&packed, &f, 4);
    }
    if (packed.n) pb_len(&l, 1, &packed); /* float_list {value: [...]} (packed) */
    pb_feature(&features, "w", 2, &l);
    l.n = packed.n = 0;
    for (int64_t k = 0; k < i % 5; k++) {
      float xy[2] = {(float)(i + k), -(float)(i + k)};
      pb_put(&packed, xy, 8);
    }
    if (packed.n) pb_len(&l, 1, &packed);
    pb_feature(&features, "xy", 2, &l);
    pb_len(&ex, 1, &features);
    OK(tfq_tfrecord_writer_write(w, (const char *)ex.p, ex.n, NULL));
    free(features.p);
    free(ex.p);
    free(l.p);
    free(packed.p);
  }
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  return path;
}

static tfq_example_config *example_cfg(void) {
  tfq_example_config *cfg;
  OK(tfq_example_config_new(&cfg, NULL));
  OK(tfq_example_config_add_fixed_len(cfg, "id", TFQ_INT64, NULL, 0, NULL, NULL));
  OK(tfq_example_config_add_var_len(cfg, "tags", TFQ_STRING, NULL));
  OK(tfq_example_config_add_var_len(cfg, "w", TFQ_FLOAT, NULL));
  tfq_tensor *pad;
  OK(tfq_tensor_new(TFQ_FLOAT, NULL, 0, &pad, NULL));
  *(float *)tfq_tensor_data(pad) = -1.0f;
  const int64_t row = 2;
  OK(tfq_example_config_add_fixed_len_sequence(cfg, "xy", TFQ_FLOAT, &row, 1, 1, pad, NULL));
  tfq_tensor_free(pad);
  return cfg;
}

/* Checks a batch against the generator; appends its ids to ids[*k]. */
static void check_example_batch(const tfq_pipeline *p, const tfq_tuple *b, int64_t *ids,
                                int64_t *k) {
  size_t si = tfq_pipeline_column_slot(p, 0), st_ = tfq_pipeline_column_slot(p, 1),
         sw = tfq_pipeline_column_slot(p, 2);
  const tfq_tensor *id = tfq_tuple_get(b, si);
  int64_t n = tfq_tensor_dim(id, 0);
  const int64_t *iv = tfq_tensor_cdata(id);
  /* tags: a SparseTensor, rows in record order, positions from 0 */
  const int64_t *ti = tfq_tensor_cdata(tfq_tuple_get(b, st_));
  const tfq_tensor *tv = tfq_tuple_get(b, st_ + 1);
  const int64_t *ts = tfq_tensor_cdata(tfq_tuple_get(b, st_ + 2));
  const int64_t *wi = tfq_tensor_cdata(tfq_tuple_get(b, sw));
  const float *wv = tfq_tensor_cdata(tfq_tuple_get(b, sw + 1));
  int64_t tk = 0, wk = 0, tlong = 0, wlong = 0;
  for (int64_t r = 0; r < n; r++) {
    int64_t i = iv[r];
    ids[(*k)++] = i;
    for (int64_t j = 0; j < i % 4; j++, tk++) {
      cr_assert(ti[2 * tk] == r && ti[2 * tk + 1] == j, "tags index of record %lld", (long long)i);
      char want[32];
      snprintf(want, sizeof want, "t%lld_%lld", (long long)i, (long long)j);
      size_t len;
      const char *s = tfq_tensor_string(tv, tk, &len);
      cr_assert(len == strlen(want) && !memcmp(s, want, len), "record %lld tag %lld: %.*s",
                (long long)i, (long long)j, (int)len, s);
    }
    for (int64_t j = 0; j < i % 3; j++, wk++) {
      cr_assert(wi[2 * wk] == r && wi[2 * wk + 1] == j);
      cr_assert_eq(wv[wk], (float)i + (float)j + 0.5f, "record %lld w %lld", (long long)i,
                   (long long)j);
    }
    if (i % 4 > tlong) tlong = i % 4;
    if (i % 3 > wlong) wlong = i % 3;
  }
  cr_assert_eq(tk, tfq_tensor_dim(tv, 0), "tags: extra values");
  cr_assert(ts[0] == n && ts[1] == tlong, "tags dense_shape [%lld, %lld]", (long long)ts[0],
            (long long)ts[1]);
  const int64_t *ws = tfq_tensor_cdata(tfq_tuple_get(b, sw + 2));
  cr_assert(ws[0] == n && ws[1] == wlong && wk == tfq_tensor_dim(tfq_tuple_get(b, sw + 1), 0));
  /* xy: dense [n, the most rows, 2], each record's rows then the padding -1 */
  const tfq_tensor *xy = tfq_tuple_get(b, tfq_pipeline_column_slot(p, 3));
  int64_t most = 0;
  for (int64_t r = 0; r < n; r++)
    if (iv[r] % 5 > most) most = iv[r] % 5;
  cr_assert(tfq_tensor_rank(xy) == 3 && tfq_tensor_dim(xy, 0) == n &&
                tfq_tensor_dim(xy, 1) == most && tfq_tensor_dim(xy, 2) == 2,
            "xy shape");
  const float *xv = tfq_tensor_cdata(xy);
  for (int64_t r = 0; r < n; r++)
    for (int64_t row = 0; row < most; row++) {
      const float *e = xv + (r * most + row) * 2;
      int real = row < iv[r] % 5;
      float x = real ? (float)(iv[r] + row) : -1.0f, y = real ? -x : -1.0f;
      cr_assert(e[0] == x && e[1] == y, "record %lld row %lld: %g %g", (long long)iv[r],
                (long long)row, e[0], e[1]);
    }
}

Test(pipeline, varlen_and_sequence_features_come_as_tf_batches_them_and_survive_a_restore) {
  char *f[2] = {write_examples("a.tfrecord", 0, 700), write_examples("b.tfrecord", 700, 1000)};
  tfq_example_config *cfg = example_cfg();
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, f[0], NULL));
  OK(tfq_pipeline_options_add_file(o, f[1], NULL));
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
  tfq_pipeline_options_set_features(o, cfg);
  tfq_pipeline_options_set_batch_size(o, 16);
  tfq_pipeline_options_set_capacity(o, 200);
  tfq_pipeline_options_set_min_after_dequeue(o, 50);
  tfq_pipeline_options_set_deterministic(o, 1);
  tfq_pipeline_options_set_seed(o, 3);
  tfq_pipeline_options_set_num_threads(o, 2);
  tfq_pipeline_options_set_step(o, 70);
  tfq_pipeline *p = make(o);
  cr_assert_eq(tfq_pipeline_num_columns(p), 4);
  cr_assert_eq(tfq_pipeline_num_slots(p), 8);
  cr_assert(tfq_pipeline_column_rank(p, 3) == 2 && tfq_pipeline_column_dims(p, 3)[0] == -1 &&
            tfq_pipeline_column_dims(p, 3)[1] == 2);
  cr_assert(!tfq_pipeline_column_is_sparse(p, 0) && tfq_pipeline_column_is_sparse(p, 1));
  int64_t ids[1000], k = 0, ids2[1000], k2 = 0;
  tfq_tuple *b;
  char *state = NULL;
  size_t len = 0;
  int64_t at = 0;
  tfq_code c;
  while ((c = tfq_pipeline_next(p, &b, NULL)) == TFQ_OK) {
    check_example_batch(p, b, ids, &k);
    tfq_tuple_free(b);
    if (++at == 20) { /* mid-run: the buffer holds VarLen lists of both files' records */
      OK(tfq_pipeline_save(p, &state, &len, NULL));
      k2 = k;
      memcpy(ids2, ids, (size_t)k * sizeof *ids);
    }
  }
  cr_assert_eq(c, TFQ_OUT_OF_RANGE);
  assert_permutation(ids, k, 1000);
  tfq_pipeline_free(p);
  tfq_pipeline_options_set_num_threads(o, 1);
  p = make(o);
  OK(tfq_pipeline_restore(p, state, len, NULL));
  while ((c = tfq_pipeline_next(p, &b, NULL)) == TFQ_OK) {
    check_example_batch(p, b, ids2, &k2);
    tfq_tuple_free(b);
  }
  cr_assert_eq(c, TFQ_OUT_OF_RANGE);
  cr_assert_eq(k2, 1000);
  cr_assert_eq(memcmp(ids, ids2, sizeof ids), 0, "the restored run's order differs");
  tfq_free(state);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  tfq_example_config_free(cfg);
  free(f[0]);
  free(f[1]);
}

/* next_into: a kept tuple refilled in place for full batches (the same tensors, no new ones),
 * new tensors for the short last batch, every value still the generator's; unshuffled batches
 * copied in runs; a tuple of the wrong size refused. */
Test(pipeline, next_into_refills_a_kept_tuple_in_place_and_checks_its_size) {
  char *f[2] = {write_rows("a.csv", 0, 250, 0), write_rows("b.csv", 250, 300, 0)};
  for (int shuffle = 0; shuffle <= 1; shuffle++) {
    tfq_pipeline_options *o = csv_opts(f, 2, 16);
    tfq_pipeline_options_set_shuffle(o, shuffle);
    tfq_pipeline_options_set_min_after_dequeue(o, 20);
    tfq_pipeline_options_set_step(o, 37);
    tfq_pipeline *p = make(o);
    tfq_status *st = tfq_status_new();
    tfq_tuple *bad, *t;
    OK(tfq_tuple_new(tfq_pipeline_num_slots(p) + 1, &bad, NULL));
    cr_assert_eq(tfq_pipeline_next_into(p, bad, st), TFQ_INVALID_ARGUMENT);
    cr_assert(strstr(tfq_status_message(st), "the output tuple has 4 slots for 3"), "%s",
              tfq_status_message(st));
    tfq_tuple_free(bad);
    OK(tfq_tuple_new(tfq_pipeline_num_slots(p), &t, NULL));
    int64_t seen[300] = {0}, n = 0, batches = 0, same = 0;
    tfq_tensor *prev = NULL;
    tfq_code c;
    while ((c = tfq_pipeline_next_into(p, t, st)) == TFQ_OK) {
      tfq_tensor *id = tfq_tuple_get(t, 0);
      same += id == prev;
      prev = id;
      const int64_t *iv = tfq_tensor_cdata(id);
      const double *hv = tfq_tensor_cdata(tfq_tuple_get(t, 1));
      for (int64_t i = 0; i < tfq_tensor_dim(id, 0); i++, n++) {
        cr_assert(iv[i] >= 0 && iv[i] < 300 && !seen[iv[i]]++);
        cr_assert_eq(hv[i], iv[i] / 2.0);
        if (!shuffle) cr_assert_eq(iv[i], n, "unshuffled: position %lld", (long long)n);
        char want[16];
        snprintf(want, sizeof want, "s%lld", (long long)iv[i]);
        size_t len;
        const char *s = tfq_tensor_string(tfq_tuple_get(t, 2), i, &len);
        cr_assert(len == strlen(want) && !memcmp(s, want, len));
      }
      batches++;
    }
    cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s", tfq_status_message(st));
    cr_assert_eq(n, 300);
    cr_assert_eq(batches, 19);
    cr_assert_eq(same, 17, "full batches refill the kept tensor: %lld of 18", (long long)same);
    tfq_tuple_free(t);
    tfq_status_free(st);
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  free(f[0]);
  free(f[1]);
}

/* Example columns of other sizes and kinds through the shuffle's ring and the batch: FixedLen
 * int64 [3] (24-byte rows), a VarLen and a FixedLenSequence of strings (padding "pad"). */
Test(pipeline, string_sequences_and_wide_fixed_features_keep_their_values_through_the_shuffle) {
  char path[96];
  snprintf(path, sizeof path, "%s/s.tfrecord", g_dir);
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(path, TFQ_COMPRESSION_GZIP, &w, NULL));
  for (int64_t i = 0; i < 300; i++) {
    pb features = {0}, ex = {0}, l = {0}, packed = {0};
    for (int k = 0; k < 3; k++) pb_varint(&packed, (uint64_t)(i * 10 + k));
    pb_len(&l, 1, &packed);
    pb_feature(&features, "v3", 3, &l);
    l.n = 0;
    for (int64_t j = 0; j < i % 3; j++) { /* seq of string rows [1]: "r<i>_<j>" */
      char s[32];
      pb v = {0};
      pb_put(&v, s, (size_t)snprintf(s, sizeof s, "r%lld_%lld", (long long)i, (long long)j));
      pb_len(&l, 1, &v);
      free(v.p);
    }
    pb_feature(&features, "words", 1, &l);
    pb_len(&ex, 1, &features);
    OK(tfq_tfrecord_writer_write(w, (const char *)ex.p, ex.n, NULL));
    free(features.p);
    free(ex.p);
    free(l.p);
    free(packed.p);
  }
  OK(tfq_tfrecord_writer_close(w, NULL));
  tfq_tfrecord_writer_free(w);
  tfq_example_config *cfg;
  OK(tfq_example_config_new(&cfg, NULL));
  const int64_t three = 3, one = 1;
  OK(tfq_example_config_add_fixed_len(cfg, "v3", TFQ_INT64, &three, 1, NULL, NULL));
  tfq_tensor *pad;
  OK(tfq_tensor_new(TFQ_STRING, NULL, 0, &pad, NULL));
  OK(tfq_tensor_set_string(pad, 0, "pad", 3, NULL));
  OK(tfq_example_config_add_fixed_len_sequence(cfg, "words", TFQ_STRING, &one, 1, 1, pad, NULL));
  tfq_tensor_free(pad);
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, path, NULL));
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
  tfq_pipeline_options_set_features(o, cfg);
  tfq_pipeline_options_set_batch_size(o, 10);
  tfq_pipeline_options_set_min_after_dequeue(o, 30);
  tfq_pipeline_options_set_num_threads(o, 2);
  tfq_pipeline_options_set_step(o, 25);
  tfq_pipeline *p = make(o);
  tfq_tuple *b;
  int64_t seen[300] = {0}, n = 0;
  while (tfq_pipeline_next(p, &b, NULL) == TFQ_OK) {
    const tfq_tensor *v3 = tfq_tuple_get(b, 0), *wd = tfq_tuple_get(b, 1);
    int64_t m = tfq_tensor_dim(v3, 0), most = tfq_tensor_dim(wd, 1);
    const int64_t *vv = tfq_tensor_cdata(v3);
    for (int64_t r = 0; r < m; r++, n++) {
      int64_t i = vv[3 * r] / 10;
      cr_assert(i >= 0 && i < 300 && !seen[i]++);
      for (int k = 0; k < 3; k++) cr_assert_eq(vv[3 * r + k], i * 10 + k);
      for (int64_t j = 0; j < most; j++) {
        char want[32];
        if (j < i % 3)
          snprintf(want, sizeof want, "r%lld_%lld", (long long)i, (long long)j);
        else
          strcpy(want, "pad");
        size_t len;
        const char *s = tfq_tensor_string(wd, r * most + j, &len);
        cr_assert(len == strlen(want) && !memcmp(s, want, len), "record %lld row %lld: %.*s",
                  (long long)i, (long long)j, (int)len, s);
      }
    }
    tfq_tuple_free(b);
  }
  cr_assert_eq(n, 300);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  tfq_example_config_free(cfg);
}

/* save_file / restore_file: a state written beside a relative and an absolute path restores and
 * continues; a missing directory, a missing file and a directory get the file's error. */
Test(pipeline, state_files_round_trip_and_name_what_failed) {
  char *f[1] = {write_rows("a.csv", 0, 200, 0)};
  tfq_pipeline_options *o = csv_opts(f, 1, 10);
  tfq_pipeline_options_set_deterministic(o, 1);
  tfq_pipeline_options_set_seed(o, 4);
  tfq_pipeline_options_set_min_after_dequeue(o, 30);
  tfq_status *st = tfq_status_new();
  char abs_path[128], bad[128];
  snprintf(abs_path, sizeof abs_path, "%s/state.bin", g_dir);
  snprintf(bad, sizeof bad, "%s/no/such/dir/state.bin", g_dir);
  char cwd[512];
  cr_assert_not_null(getcwd(cwd, sizeof cwd));
  cr_assert_eq(chdir(g_dir), 0);
  const char *paths[2] = {abs_path, "rel.state"};
  for (int k = 0; k < 2; k++) {
    tfq_pipeline *p = make(o);
    tfq_tuple *b;
    for (int i = 0; i < 5; i++) {
      OK(tfq_pipeline_next(p, &b, NULL));
      tfq_tuple_free(b);
    }
    cr_assert_eq(tfq_pipeline_save_file(p, paths[k], st), TFQ_OK, "%s", tfq_status_message(st));
    int64_t n1;
    tfq_code e1;
    int64_t *rest = drain(p, 10, &n1, &e1);
    tfq_pipeline_free(p);
    p = make(o);
    cr_assert_eq(tfq_pipeline_restore_file(p, paths[k], st), TFQ_OK, "%s", tfq_status_message(st));
    int64_t n2;
    tfq_code e2;
    int64_t *again = drain(p, 10, &n2, &e2);
    cr_assert(n1 == 150 && n2 == n1 && !memcmp(rest, again, (size_t)n1 * sizeof *rest));
    free(rest);
    free(again);
    cr_assert_eq(tfq_pipeline_save_file(p, bad, st), TFQ_NOT_FOUND); /* after its end: allowed */
    cr_assert(strstr(tfq_status_message(st), "no/such/dir/state.bin; No such file"), "%s",
              tfq_status_message(st));
    tfq_pipeline_free(p);
  }
  tfq_pipeline *p = make(o);
  cr_assert_eq(tfq_pipeline_restore_file(p, "missing.state", st), TFQ_NOT_FOUND);
  cr_assert(strstr(tfq_status_message(st), "missing.state; No such file"), "%s",
            tfq_status_message(st));
  cr_assert_eq(tfq_pipeline_restore_file(p, g_dir, st), TFQ_FAILED_PRECONDITION);
  cr_assert(strstr(tfq_status_message(st), "Is a directory"), "%s", tfq_status_message(st));
  tfq_pipeline_free(p);
  cr_assert_eq(chdir(cwd), 0);
  tfq_status_free(st);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

/* set_ragged_sequences: the FixedLenSequence column "xy" as its rows back to back and row splits,
 * each record's own rows (no padding), in the same order as the padded pipeline's batches. */
Test(pipeline, ragged_sequences_give_each_records_own_rows_and_row_splits) {
  char *f[1] = {write_examples("r.tfrecord", 0, 400)};
  tfq_example_config *cfg = example_cfg();
  int64_t ids[2][400], k[2] = {0, 0};
  for (int ragged = 0; ragged <= 1; ragged++) {
    tfq_pipeline_options *o;
    OK(tfq_pipeline_options_new(&o, NULL));
    OK(tfq_pipeline_options_add_file(o, f[0], NULL));
    tfq_pipeline_options_set_format(o, TFQ_FORMAT_EXAMPLES);
    tfq_pipeline_options_set_features(o, cfg);
    tfq_pipeline_options_set_batch_size(o, 9);
    tfq_pipeline_options_set_capacity(o, 60);
    tfq_pipeline_options_set_min_after_dequeue(o, 20);
    tfq_pipeline_options_set_deterministic(o, 1);
    tfq_pipeline_options_set_seed(o, 21);
    tfq_pipeline_options_set_ragged_sequences(o, ragged);
    tfq_pipeline *p = make(o);
    cr_assert_eq(tfq_pipeline_num_slots(p), ragged ? 9 : 8);
    cr_assert_eq(tfq_pipeline_column_is_ragged(p, 3), ragged);
    size_t sx = tfq_pipeline_column_slot(p, 3);
    tfq_tuple *b;
    while (tfq_pipeline_next(p, &b, NULL) == TFQ_OK) {
      const tfq_tensor *id = tfq_tuple_get(b, tfq_pipeline_column_slot(p, 0));
      const int64_t *iv = tfq_tensor_cdata(id);
      int64_t n = tfq_tensor_dim(id, 0);
      for (int64_t r = 0; r < n; r++) ids[ragged][k[ragged]++] = iv[r];
      if (!ragged) {
        tfq_tuple_free(b);
        continue;
      }
      const tfq_tensor *rows = tfq_tuple_get(b, sx), *sp = tfq_tuple_get(b, sx + 1);
      const int64_t *spv = tfq_tensor_cdata(sp);
      const float *rv = tfq_tensor_cdata(rows);
      cr_assert(tfq_tensor_rank(rows) == 2 && tfq_tensor_dim(rows, 1) == 2);
      cr_assert_eq(tfq_tensor_dim(sp, 0), n + 1);
      cr_assert_eq(spv[0], 0);
      for (int64_t r = 0; r < n; r++) {
        cr_assert_eq(spv[r + 1] - spv[r], iv[r] % 5, "record %lld: %lld rows", (long long)iv[r],
                     (long long)(spv[r + 1] - spv[r]));
        for (int64_t row = 0; row < iv[r] % 5; row++) {
          const float *e = rv + (spv[r] + row) * 2;
          cr_assert(e[0] == (float)(iv[r] + row) && e[1] == -(float)(iv[r] + row));
        }
      }
      cr_assert_eq(spv[n], tfq_tensor_dim(rows, 0));
      tfq_tuple_free(b);
    }
    tfq_pipeline_free(p);
    tfq_pipeline_options_free(o);
  }
  cr_assert(k[0] == 400 && k[1] == 400);
  cr_assert_eq(memcmp(ids[0], ids[1], sizeof ids[0]), 0, "the order differs");
  tfq_example_config_free(cfg);
  free(f[0]);
}

/* Every option tfq_pipeline_new checks, one at a time, with its message. */
Test(pipeline, each_out_of_range_option_is_refused_by_name) {
  char *f[1] = {write_rows("a.csv", 0, 10, 0)};
  struct {
    int what;
    int64_t v;
    const char *text;
  } cases[] = {
      {0, -1, "num_threads must be in [0, 1024], not -1"},
      {0, 1025, "num_threads must be in [0, 1024], not 1025"},
      {1, 0, "step must be > 0, not 0"},
      {2, -1, "num_epochs must be >= 0, not -1"},
      {3, -2, "max_bad_records must be >= -1, not -2"},
      {4, -1, "shard index must be in [0, count): index -1, count 2"},
      {5, 0, "shard index must be in [0, count): index 0, count 0"},
      {6, ((int64_t)1 << 31) + 1, "capacity must be at most 2^31"},
      {7, INT64_MAX / 2, "min_after_dequeue or batch_size too large"},
      {8, 5, "capacity (5) must be at least min_after_dequeue + batch_size"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tfq_pipeline_options *o = csv_opts(f, 1, 8);
    int64_t v = cases[i].v;
    switch (cases[i].what) {
      case 0: tfq_pipeline_options_set_num_threads(o, (int)v); break;
      case 1: tfq_pipeline_options_set_step(o, v); break;
      case 2: tfq_pipeline_options_set_num_epochs(o, v); break;
      case 3: tfq_pipeline_options_set_max_bad_records(o, v); break;
      case 4: tfq_pipeline_options_set_shard(o, v, 2); break;
      case 5: tfq_pipeline_options_set_shard(o, 0, v); break;
      case 6: tfq_pipeline_options_set_capacity(o, v); break;
      case 7: tfq_pipeline_options_set_min_after_dequeue(o, v); break;
      default:
        tfq_pipeline_options_set_capacity(o, v);
        tfq_pipeline_options_set_min_after_dequeue(o, 0);
        break;
    }
    expect_new_error(o, TFQ_INVALID_ARGUMENT, cases[i].text);
    tfq_pipeline_options_free(o);
  }
  /* and the ones that hold: no shuffle needs no capacity; an unlimited budget */
  tfq_pipeline_options *o = csv_opts(f, 1, 8);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline_options_set_capacity(o, 1);
  tfq_pipeline_options_set_max_bad_records(o, -1);
  tfq_pipeline *p = make(o);
  tfq_pipeline_stats s = {.size = sizeof s};
  OK(tfq_pipeline_get_stats(p, &s, NULL));
  cr_assert_eq(s.buffer_capacity, 8);
  s.size = 0;
  cr_assert_eq(tfq_pipeline_get_stats(p, &s, NULL), TFQ_INVALID_ARGUMENT);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  free(f[0]);
}

/* Text input with a header line: the line names the column and is skipped; an empty file has no
 * header to give.  And the setters that undo (NULL, 0), NULL frees, accessors past the end. */
Test(pipeline, a_text_header_names_the_line_column_and_resets_and_bounds_hold) {
  char *t = write_text("t.txt", "title\nfirst\nsecond\n"), *e = write_text("e.txt", "");
  tfq_pipeline_options *o;
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, t, NULL));
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_TEXT);
  tfq_pipeline_options_set_header(o, 1);
  tfq_pipeline_options_set_shuffle(o, 0);
  tfq_pipeline *p = make(o);
  cr_assert_str_eq(tfq_pipeline_column_name(p, 0), "title");
  cr_assert_null(tfq_pipeline_column_name(p, 1));
  cr_assert_eq(tfq_pipeline_column_dtype(p, 1), (tfq_dtype)0);
  cr_assert_eq(tfq_pipeline_column_rank(p, 1), -1);
  cr_assert_null(tfq_pipeline_column_dims(p, 1));
  cr_assert_eq(tfq_pipeline_column_slot(p, 1), (size_t)-1);
  cr_assert(!tfq_pipeline_column_is_sparse(p, 1) && !tfq_pipeline_column_is_ragged(p, 1));
  cr_assert_null(tfq_pipeline_columns_spec(p)); /* not CSV */
  tfq_tuple *b;
  OK(tfq_pipeline_next(p, &b, NULL));
  size_t len;
  const char *s0 = tfq_tensor_string(tfq_tuple_get(b, 0), 0, &len);
  cr_assert(len == 5 && !memcmp(s0, "first", 5));
  cr_assert_eq(tfq_tensor_dim(tfq_tuple_get(b, 0), 0), 2);
  tfq_tuple_free(b);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  OK(tfq_pipeline_options_new(&o, NULL));
  OK(tfq_pipeline_options_add_file(o, e, NULL));
  tfq_pipeline_options_set_format(o, TFQ_FORMAT_TEXT);
  tfq_pipeline_options_set_header(o, 1);
  expect_new_error(o, TFQ_OUT_OF_RANGE, "no header line (the file is empty)");
  /* setters that undo */
  tfq_status *st = tfq_status_new();
  cr_assert_eq(tfq_pipeline_options_add_file(o, NULL, st), TFQ_INVALID_ARGUMENT);
  OK(tfq_pipeline_options_set_na_value(o, "NA", NULL));
  OK(tfq_pipeline_options_set_na_value(o, NULL, NULL));
  const int64_t sel[1] = {0};
  OK(tfq_pipeline_options_set_select_cols(o, sel, 1, NULL));
  OK(tfq_pipeline_options_set_select_cols(o, NULL, 0, NULL));
  OK(tfq_pipeline_options_set_sample_file(o, t, NULL));
  OK(tfq_pipeline_options_set_sample_file(o, NULL, NULL));
  cr_assert_eq(tfq_pipeline_new(NULL, &p, st), TFQ_INVALID_ARGUMENT);
  tfq_status_free(st);
  tfq_pipeline_options_free(o);
  tfq_pipeline_options_free(NULL);
  tfq_pipeline_free(NULL);
  tfq_pipeline_stop(NULL);
  free(t);
  free(e);
}
