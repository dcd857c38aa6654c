/* tfq_pipeline_get_stats()'s epoch, read without the source's lock (a lone reader holds it while
 * it decodes a step, and a progress thread or a per-batch caller such as tfq-cat --stats must not
 * wait for that): 2 CSV files of 50 lines, 3 epochs, in input order, batches of 10.  Oracle: the
 * input's arithmetic -- batch k holds records 10k .. 10k+9 of the 300, so the source has at least
 * reached the epoch of its last record (k / 10) when the batch is returned; the epoch never goes
 * back, never passes 3, and is 3 (every epoch read) at the end.  A second thread reads the stats
 * all along (thread-safety: any thread).  TAP. */
#include <pthread.h>
#include <stdatomic.h>
#include <tfq/pipeline.h>

#include "pipeline_util.h"

static int lines_of(int i) {
  (void)i;
  return 50;
}

static atomic_int g_done;
static atomic_int g_bad_epoch;

static void *poll_main(void *arg) {
  tfq_pipeline *p = arg;
  tfq_status *st = tfq_status_new();
  int64_t last = 0;
  while (!atomic_load(&g_done)) {
    tfq_pipeline_stats s = {.size = sizeof s};
    if (tfq_pipeline_get_stats(p, &s, st) != TFQ_OK || s.epoch < last || s.epoch > 3)
      atomic_store(&g_bad_epoch, 1);
    last = s.epoch;
  }
  tfq_status_free(st);
  return NULL;
}

int main(void) {
  tfq_status *st = tfq_status_new();
  csv_dir d;
  csv_dir_make(&d, 2, lines_of);
  for (int threads = 0; threads <= 2; threads++) {
    tfq_pipeline_options *o;
    die_on(tfq_pipeline_options_new(&o, st), st, "options");
    for (int i = 0; i < d.nfiles; i++)
      die_on(tfq_pipeline_options_add_file(o, d.paths[i], st), st, "add_file");
    die_on(tfq_pipeline_options_set_columns(o, "int64,int64", st), st, "columns");
    tfq_pipeline_options_set_shuffle(o, 0);
    tfq_pipeline_options_set_batch_size(o, 10);
    tfq_pipeline_options_set_step(o, 10);
    tfq_pipeline_options_set_num_epochs(o, 3);
    tfq_pipeline_options_set_num_threads(o, threads);
    tfq_pipeline *p;
    die_on(tfq_pipeline_new(o, &p, st), st, "new");
    tfq_pipeline_options_free(o);
    tfq_pipeline_stats s = {.size = sizeof s};
    die_on(tfq_pipeline_get_stats(p, &s, st), st, "stats");
    tap(s.epoch == 0, "threads %d: epoch 0 before the first batch (got %lld)", threads,
        (long long)s.epoch);
    atomic_store(&g_done, 0);
    atomic_store(&g_bad_epoch, 0);
    pthread_t th;
    int polling = threads > 0 && pthread_create(&th, NULL, poll_main, p) == 0;
    int64_t k = 0, last = 0, ok = 1, rows = 0;
    tfq_tuple *b = NULL;
    tfq_code c;
    while ((c = tfq_pipeline_next(p, &b, st)) == TFQ_OK) {
      rows += tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
      tfq_tuple_free(b);
      die_on(tfq_pipeline_get_stats(p, &s, st), st, "stats");
      int64_t want = (10 * k + 9) / 100; /* the epoch of the batch's last record */
      if (s.epoch < want || s.epoch < last || s.epoch > 3) {
        ok = 0;
        printf("# batch %lld: epoch %lld (at least %lld, last %lld)\n", (long long)k,
               (long long)s.epoch, (long long)want, (long long)last);
      }
      last = s.epoch;
      k++;
    }
    if (polling) {
      atomic_store(&g_done, 1);
      pthread_join(th, NULL);
    }
    tap(c == TFQ_OUT_OF_RANGE && rows == 300 && k == 30, "threads %d: 30 batches, 300 rows (%s)",
        threads, tfq_code_name(c));
    tap(ok, "threads %d: each batch's epoch is at least its last record's, never goes back",
        threads);
    die_on(tfq_pipeline_get_stats(p, &s, st), st, "stats");
    tap(s.epoch == 3, "threads %d: epoch 3 once every epoch is read (got %lld)", threads,
        (long long)s.epoch);
    tap(!atomic_load(&g_bad_epoch), "threads %d: a polling thread saw a monotone epoch in [0, 3]",
        threads);
    tfq_pipeline_free(p);
  }
  csv_dir_remove(&d);
  tfq_status_free(st);
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
