/* conformance_coord, part 2: the batchers and the producers (see conformance_coord.c).
 *
 *   batcher <id> <kind 0-3> <bs> <cap> <min_after> <seed> <seed2> <enqueue_many> <dynamic_pad>
 *           <small> <keep> <shared> <comps> <nsources>
 *       then per source "src <n>" and n lines of one tensor token per component.  keep: none,
 *       even (component 0 even), flag:<0|1 per source> (a switch the main thread sets before
 *       feeding each source), pat:<T|F per row> (enqueue_many).  comps: "int32/_;string/?".
 *       Source 0 is fed and closed before the start; source i+1 once source i has ended.  Then
 *       the batch queue is awaited closed, and batches are taken until the first error (tag B).
 *   producer <id> <kind> <via> <epochs> <shuffle> <seed> <cap> <take> <many> <ntensors> <tensor>...
 *            (<seed> "s1:s2": the RandomShuffle op's seed/seed2, for TF's exact shuffle order)
 *       kind string|range|slice|input; via thread (tfq_*_input_producer), runner (a QueueRunner
 *       running tfq_producer_step under a Coordinator; strings: tfq_string_input_producer_start)
 *       or step (tfq_producer_step called by hand, as TF's limit_epochs).  take: dequeues (-1:
 *       until the first error), each a dequeue_many(many) when many > 1 (tag P). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/coord.h>
#include <tfq/producer.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

#include "conformance_coord.h"
#include "conformance_io.h"

#define MAX_SRC 4

typedef struct bsource {
  tfq_queue *q;
  atomic_int ended;
} bsource;

static atomic_int g_flag; /* keep "flag": the switch */
static char g_pat[80];    /* keep "pat" */

static tfq_code source_fn(void *ctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  bsource *s = ctx;
  tfq_code c = tfq_queue_dequeue(s->q, out, cancel, TFQ_NO_TIMEOUT, st);
  if (c != TFQ_OK) atomic_store(&s->ended, 1);
  return c;
}

static int64_t int_at(const tfq_tensor *t, int64_t i) {
  return tfq_tensor_dtype(t) == TFQ_INT64 ? ((const int64_t *)tfq_tensor_cdata(t))[i]
                                          : ((const int32_t *)tfq_tensor_cdata(t))[i];
}

static int keep_even(void *ctx, const tfq_tuple *elem, int64_t row) {
  (void)ctx;
  return int_at(tfq_tuple_get(elem, 0), row < 0 ? 0 : row) % 2 == 0;
}
static int keep_flag(void *ctx, const tfq_tuple *elem, int64_t row) {
  (void)ctx, (void)elem, (void)row;
  return atomic_load(&g_flag);
}
static int keep_pat(void *ctx, const tfq_tuple *elem, int64_t row) {
  (void)ctx, (void)elem;
  return row >= 0 && row < (int64_t)strlen(g_pat) && g_pat[row] == 'T';
}

/* Feeds the `n` elements that follow in `in` into q (an element per line), then closes q. */
static void feed(FILE *in, tfq_queue *q, long n) {
  tfq_status *st = tfq_status_new();
  for (long i = 0; i < n; i++) {
    static char *tok[64];
    int k = split(read_line(in), tok, 64);
    tfq_tuple *t;
    if (tfq_tuple_new((size_t)k, &t, st) != TFQ_OK) die("tuple");
    for (int j = 0; j < k; j++) tfq_tuple_set_take(t, (size_t)j, parse_tensor(tok[j]));
    if (tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st) != TFQ_OK) die("feed source");
    tfq_tuple_free(t);
  }
  if (tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st) != TFQ_OK) die("close source");
  tfq_status_free(st);
}

static long src_count(FILE *in) {
  char *l = read_line(in);
  if (!l || strncmp(l, "src ", 4) != 0) die("expected src");
  return atol(l + 4);
}

void batcher_cmd(FILE *in, char **tok, int n) {
  if (n < 15) die("batcher: too few tokens");
  char id[64], keep[80], shared[128], comps[1024];
  snprintf(id, sizeof id, "%s", tok[1]);
  snprintf(keep, sizeof keep, "%s", tok[11]);
  snprintf(shared, sizeof shared, "%s", tok[12]);
  snprintf(comps, sizeof comps, "%s", tok[13]);
  tfq_batcher_kind kind = (tfq_batcher_kind)atoi(tok[2]);
  int64_t bs = strtoll(tok[3], NULL, 10), cap = strtoll(tok[4], NULL, 10);
  int64_t min_after = strtoll(tok[5], NULL, 10), seed = strtoll(tok[6], NULL, 10);
  int64_t seed2 = strtoll(tok[7], NULL, 10);
  int many = atoi(tok[8]), pad = atoi(tok[9]), small = atoi(tok[10]);
  int nsrc = atoi(tok[14]);
  if (nsrc < 1 || nsrc > MAX_SRC) die("batcher: sources");
  int shuffle = kind == TFQ_BATCHER_SHUFFLE_BATCH || kind == TFQ_BATCHER_SHUFFLE_BATCH_JOIN;
  tfq_status *st = tfq_status_new();
  /* the sources: unshaped FIFO queues */
  char unshaped[1024] = "", cbuf[1024];
  snprintf(cbuf, sizeof cbuf, "%s", comps);
  char *save = NULL;
  for (char *p = strtok_r(cbuf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
    size_t l = strlen(unshaped);
    snprintf(unshaped + l, sizeof unshaped - l, "%s%.*s/*", l ? ";" : "", (int)(strchr(p, '/') - p),
             p);
  }
  bsource src[MAX_SRC];
  tfq_source_fn fns[MAX_SRC];
  void *ctxs[MAX_SRC];
  for (int i = 0; i < nsrc; i++) {
    src[i].q = make_queue(TFQ_QUEUE_FIFO, unshaped, -1, "source", 0, st);
    atomic_init(&src[i].ended, 0);
    fns[i] = source_fn;
    ctxs[i] = &src[i];
  }
  tfq_batch_options *o;
  if (tfq_batch_options_new(&o, st) != TFQ_OK) die("batch options");
  tfq_batch_options_set_capacity(o, cap);
  tfq_batch_options_set_min_after_dequeue(o, min_after);
  tfq_batch_options_set_seeds(o, seed, seed2);
  tfq_batch_options_set_enqueue_many(o, many);
  tfq_batch_options_set_dynamic_pad(o, pad);
  tfq_batch_options_set_allow_smaller_final_batch(o, small);
  if (tfq_batch_options_set_shared_name(o, shared, st) != TFQ_OK) die("shared name");
  const char *flags = "";
  if (strcmp(keep, "even") == 0) {
    tfq_batch_options_set_keep(o, keep_even, NULL);
  } else if (strncmp(keep, "flag:", 5) == 0) {
    flags = keep + 5;
    atomic_store(&g_flag, flags[0] == '1');
    tfq_batch_options_set_keep(o, keep_flag, NULL);
  } else if (strncmp(keep, "pat:", 4) == 0) {
    snprintf(g_pat, sizeof g_pat, "%s", keep + 4);
    tfq_batch_options_set_keep(o, keep_pat, NULL);
  }
  /* Shuffle kinds: tfq_batch_options has no TF-exact switch, so the RandomShuffleQueue is opened
   * here first (shared name, TF-exact order) and the batcher opens the same shared queue. */
  tfq_queue *exact = NULL;
  tfq_spec *spec = parse_spec(comps, st);
  if (shuffle && cap > min_after) {
    tfq_queue_options *qo;
    if (tfq_queue_options_new(&qo, st) != TFQ_OK) die("queue options");
    tfq_queue_options_set_capacity(qo, cap);
    tfq_queue_options_set_min_after_dequeue(qo, min_after);
    tfq_queue_options_set_seeds(qo, seed, seed2);
    tfq_queue_options_set_tf_exact_order(qo, 1);
    if (tfq_queue_options_set_shared_name(qo, shared, st) != TFQ_OK) die("shared name");
    if (tfq_queue_open(NULL, TFQ_QUEUE_RANDOM_SHUFFLE, spec, qo, &exact, st) != TFQ_OK)
      die(tfq_status_message(st));
    tfq_queue_options_free(qo);
  }
  tfq_coord *coord;
  if (tfq_coord_new(&coord, st) != TFQ_OK) die("coord");
  long n0 = src_count(in);
  feed(in, src[0].q, n0);
  tfq_batcher *b = NULL;
  tfq_code c = tfq_batcher_new(kind, spec, bs, fns, ctxs, (size_t)nsrc, o, coord, &b, st);
  print_result("B", id, c, NULL, st);
  for (int i = 1; i < nsrc; i++) {
    long ni = src_count(in);
    if (c != TFQ_OK) { /* skip the lines */
      for (long j = 0; j < ni; j++) read_line(in);
      continue;
    }
    for (int k = 0; k < 10000 && !atomic_load(&src[i - 1].ended); k++) sleep_ms(1);
    if (flags[0]) atomic_store(&g_flag, flags[i] == '1');
    feed(in, src[i].q, ni);
  }
  if (c == TFQ_OK) {
    tfq_queue *bq = tfq_batcher_queue(b);
    printf("B %s B %d\n", id, wait_closed(bq, 10000));
    printf("B %s SIZE %lld\n", id, (long long)tfq_queue_size(bq));
    float frac = (float)tfq_batcher_fraction_full(b);
    uint32_t bits;
    memcpy(&bits, &frac, 4);
    printf("B %s SUM %s %08x\n", id, tfq_batcher_summary_name(b), bits);
    for (int guard = 0; guard < 1000; guard++) {
      tfq_tuple *out = NULL;
      tfq_code r = tfq_batcher_next(b, &out, st);
      print_result("B", id, r, out, st);
      tfq_tuple_free(out);
      if (r != TFQ_OK) break;
    }
    print_result("B", id, tfq_coord_request_stop(coord, TFQ_OK, NULL), NULL, st);
    print_result("B", id, tfq_coord_join(coord, 10000000, 0, st), NULL, st);
  }
  tfq_batcher_free(b);
  tfq_coord_free(coord);
  tfq_queue_free(exact);
  tfq_spec_free(spec);
  tfq_batch_options_free(o);
  for (int i = 0; i < nsrc; i++) tfq_queue_free(src[i].q);
  tfq_status_free(st);
}

/* ---- producers ------------------------------------------------------------------------------ */

/* The rows tuple of a producer: range -> int32 0..limit-1; else the tensors. */
static tfq_tuple *rows_of(const char *kind, tfq_tensor **ts, int nt) {
  tfq_tuple *rows;
  if (tfq_tuple_new(strcmp(kind, "range") == 0 ? 1 : (size_t)nt, &rows, NULL) != TFQ_OK)
    die("tuple");
  if (strcmp(kind, "range") == 0) {
    int32_t limit = *(const int32_t *)tfq_tensor_cdata(ts[0]);
    int64_t d = limit < 0 ? 0 : limit;
    tfq_tensor *r;
    if (tfq_tensor_new(TFQ_INT32, &d, 1, &r, NULL) != TFQ_OK) die("tensor");
    for (int32_t i = 0; i < d; i++) ((int32_t *)tfq_tensor_data(r))[i] = i;
    tfq_tuple_set_take(rows, 0, r);
  } else {
    for (int i = 0; i < nt; i++) tfq_tuple_set_take(rows, (size_t)i, tfq_tensor_ref(ts[i]));
  }
  return rows;
}

/* A FIFO queue for the rows (dtypes and shapes[1:]), with TF's kernel name for `kind`. */
static tfq_queue *rows_queue(const char *kind, const tfq_tuple *rows, int64_t cap, tfq_status *st) {
  char comps[1024] = "";
  for (size_t i = 0; i < tfq_tuple_size(rows); i++) {
    const tfq_tensor *t = tfq_tuple_get(rows, i);
    size_t l = strlen(comps);
    snprintf(comps + l, sizeof comps - l, "%s%s/", i ? ";" : "",
             tfq_dtype_name(tfq_tensor_dtype(t)));
    if (tfq_tensor_rank(t) <= 1) strcat(comps, "_");
    for (int d = 1; d < tfq_tensor_rank(t); d++) {
      l = strlen(comps);
      snprintf(comps + l, sizeof comps - l, "%s%lld", d > 1 ? "x" : "",
               (long long)tfq_tensor_dim(t, d));
    }
  }
  const char *name = strcmp(kind, "input") == 0   ? "input_producer/FIFOQueueV2"
                     : strcmp(kind, "slice") == 0 ? "input_producer/input_producer"
                                                  : "input_producer";
  return make_queue(TFQ_QUEUE_FIFO, comps, cap, name, 0, st);
}

void producer_cmd(char **tok, int n) {
  const char *id = tok[1], *kind = tok[2], *via = tok[3];
  int64_t epochs = strtoll(tok[4], NULL, 10), cap = strtoll(tok[7], NULL, 10);
  int64_t take = strtoll(tok[8], NULL, 10), many = strtoll(tok[9], NULL, 10);
  int nt = atoi(tok[10]);
  if (nt > 8 || n < 11 + nt) die("producer: tensors");
  tfq_tensor *ts[8];
  for (int i = 0; i < nt; i++) ts[i] = parse_tensor(tok[11 + i]);
  tfq_status *st = tfq_status_new();
  tfq_producer_options *o;
  if (tfq_producer_options_new(&o, st) != TFQ_OK) die("producer options");
  tfq_producer_options_set_num_epochs(o, epochs);
  tfq_producer_options_set_shuffle(o, atoi(tok[5]));
  if (strchr(tok[6], ':')) /* "seed:seed2": TF's RandomShuffle attributes, TF's exact order */
    tfq_producer_options_set_tf_seeds(o, strtoll(tok[6], NULL, 10),
                                      strtoll(strchr(tok[6], ':') + 1, NULL, 10));
  else
    tfq_producer_options_set_seed(o, strtoull(tok[6], NULL, 10));
  tfq_producer_options_set_capacity(o, cap);
  tfq_queue *q = NULL;
  tfq_producer_thread *th = NULL;
  tfq_producer_runner *pr = NULL;
  tfq_producer *p = NULL;
  tfq_runner *r = NULL;
  tfq_coord *coord = NULL;
  tfq_tuple *rows = NULL;
  tfq_code c = TFQ_OK;
  int is_string = strcmp(kind, "string") == 0;
  if (strcmp(via, "thread") == 0) {
    if (is_string) {
      c = tfq_string_input_producer(nt ? ts[0] : NULL, o, &q, &th, st);
    } else if (strcmp(kind, "range") == 0) {
      c = tfq_range_input_producer(*(const int32_t *)tfq_tensor_cdata(ts[0]), o, &q, &th, st);
    } else {
      rows = rows_of(kind, ts, nt);
      c = strcmp(kind, "slice") == 0 ? tfq_slice_input_producer(nt ? rows : NULL, o, &q, &th, st)
                                     : tfq_input_producer(rows, o, &q, &th, st);
    }
  } else {
    if (tfq_coord_new(&coord, st) != TFQ_OK) die("coord");
    if (is_string && strcmp(via, "runner") == 0) {
      c = tfq_string_input_producer_start(nt ? ts[0] : NULL, o, coord, &q, &pr, st);
    } else {
      rows = rows_of(kind, ts, nt);
      q = rows_queue(kind, rows, strcmp(via, "step") == 0 ? -1 : cap, st);
      c = tfq_producer_new(q, rows, o, &p, st);
      if (c == TFQ_OK && strcmp(via, "runner") == 0) {
        if (tfq_runner_new(q, &r, st) != TFQ_OK ||
            tfq_runner_add_op(r, tfq_producer_step, p, "input_producer", st) != TFQ_OK)
          die("runner");
        c = tfq_runner_start(r, coord, 0, st);
      }
    }
  }
  print_result("P", id, c, NULL, st);
  if (c == TFQ_OK && strcmp(via, "step") == 0) {
    for (int64_t i = 0; i <= epochs; i++) { /* TF's limit_epochs evaluated epochs+1 times */
      tfq_code sc = tfq_producer_step(p, NULL, st);
      tfq_tuple *out = NULL;
      if (sc == TFQ_OK) sc = tfq_queue_dequeue(q, &out, NULL, 1000000, st);
      print_result("P", id, sc, out, st);
      tfq_tuple_free(out);
    }
  } else if (c == TFQ_OK) {
    for (int i = 0; i < 10000 && !tfq_queue_is_closed(q) && tfq_queue_size(q) < cap; i++)
      sleep_ms(1);
    printf("P %s B %d\nP %s SIZE %lld\n", id, tfq_queue_is_closed(q), id,
           (long long)tfq_queue_size(q));
    for (int64_t i = 0; take < 0 || i < take; i++) {
      tfq_tuple *out = NULL;
      tfq_code dc = many > 1 ? tfq_queue_dequeue_many(q, many, &out, NULL, 10000000, st)
                             : tfq_queue_dequeue(q, &out, NULL, 10000000, st);
      print_result("P", id, dc, out, st);
      tfq_tuple_free(out);
      if (dc != TFQ_OK) break;
    }
    if (th) {
      print_result("P", id, tfq_producer_thread_join(th, st), NULL, st);
    } else {
      print_result("P", id, tfq_coord_request_stop(coord, TFQ_OK, NULL), NULL, st);
      print_result("P", id, tfq_coord_join(coord, 10000000, 0, st), NULL, st);
    }
  }
  tfq_producer_runner_free(pr);
  tfq_runner_free(r);
  tfq_producer_free(p);
  tfq_coord_free(coord);
  tfq_queue_free(q);
  tfq_tuple_free(rows);
  tfq_producer_options_free(o);
  for (int i = 0; i < nt; i++) tfq_tensor_free(ts[i]);
  tfq_status_free(st);
}
