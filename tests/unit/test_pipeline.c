/* tfq_pipeline (tfq/pipeline.h): inputs, columns, order, determinism, epochs, shards, the final
 * batch, options errors, save and restore.  Inputs are CSV files written here whose row i is
 * "i,<i/2>,s<i>" (an id, a float64 and a string), so every value is checked against the row's id
 * (the oracle is the generator, not tfq's earlier output). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
  expect_new_error(o, TFQ_INVALID_ARGUMENT, "columns are required for CSV input");
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
