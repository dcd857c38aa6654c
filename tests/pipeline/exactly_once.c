/* Acceptance: "a 1-epoch pipeline over 16 files with 4 reader threads yields every file:line key
 * once; with a random stop, at most once; with a seed and one reader thread, two runs give the
 * same order".
 *
 * Pipeline: a filename producer op (num_epochs 1) on its own runner over a FIFO filename queue;
 * N read ops, each with its own TextLineReader, whose step calls tfq_reader_read_up_to and
 * enqueue_many's (key, value) into a target queue (FIFOQueue or RandomShuffleQueue) of two
 * scalar strings; a consumer dequeues until OUT_OF_RANGE and checks the keys against every
 * "<file>:<line>" of the generated files.
 *
 *   exactly_once [stop-trials]     (default 20) */
#include "pipeline_util.h"

#define NFILES 16

static int lines_of(int i) { return 5 + 3 * i; }

/* ---- the read op: read_up_to -> enqueue_many (key, value) --------------------------------- */
typedef struct read_op {
  tfq_reader *reader;
  tfq_queue *work, *target;
  int64_t batch;
} read_op;

static tfq_code read_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  read_op *op = ctx;
  tfq_tensor *keys, *values;
  tfq_code c = tfq_reader_read_up_to(op->reader, op->work, op->batch, &keys, &values, cancel, st);
  if (c) return c;
  tfq_tuple *t;
  c = tfq_tuple_new(2, &t, st);
  if (c) {
    tfq_tensor_free(keys);
    tfq_tensor_free(values);
    return c;
  }
  tfq_tuple_set_take(t, 0, keys);
  tfq_tuple_set_take(t, 1, values);
  c = tfq_queue_enqueue_many(op->target, t, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

/* ---- expected keys ----------------------------------------------------------------------- */
typedef struct keyset {
  char **keys; /* sorted */
  size_t n;
  int *count;
} keyset;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void keyset_make(keyset *k, const csv_dir *d) {
  k->n = 0;
  for (int i = 0; i < d->nfiles; i++) k->n += (size_t)lines_of(i);
  k->keys = calloc(k->n, sizeof *k->keys);
  k->count = calloc(k->n, sizeof *k->count);
  if (!k->keys || !k->count) exit(1);
  size_t m = 0;
  for (int i = 0; i < d->nfiles; i++)
    for (int j = 1; j <= lines_of(i); j++) {
      char buf[400];
      snprintf(buf, sizeof buf, "%s:%d", d->paths[i], j);
      k->keys[m++] = strdup(buf);
    }
  qsort(k->keys, k->n, sizeof *k->keys, cmp_str);
}

static void keyset_free(keyset *k) {
  for (size_t i = 0; i < k->n; i++) free(k->keys[i]);
  free(k->keys);
  free(k->count);
}

/* ---- one run ------------------------------------------------------------------------------ */
typedef struct run_cfg {
  int nreaders;
  int shuffle_target; /* RandomShuffleQueue target (else FIFO) */
  int tf_exact;       /* RandomShuffleQueue draws tf-exact Philox */
  int64_t target_cap; /* target capacity */
  int64_t min_after;  /* RandomShuffleQueue min_after_dequeue */
  uint64_t prod_seed; /* 0: unseeded producer */
  int64_t q_seed;     /* RandomShuffleQueue seed (seed2 = q_seed + 1) */
  int64_t stop_after; /* request_stop after this many dequeues (-1: never) */
  int only_when_full; /* dequeue only when the target is full or closed */
  int64_t batch;      /* read_up_to batch */
} run_cfg;

typedef struct run_out {
  char **order; /* keys in consumption order (dequeued, then drained after a stop) */
  size_t n, cap;
  size_t before_stop; /* keys dequeued before the stop */
  int bad;            /* unexpected value / key / code */
} run_out;

static void out_push(run_out *o, const char *s, size_t len) {
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 256;
    o->order = realloc(o->order, o->cap * sizeof *o->order);
    if (!o->order) exit(1);
  }
  char *k = malloc(len + 1);
  if (!k) exit(1);
  memcpy(k, s, len);
  k[len] = '\0';
  o->order[o->n++] = k;
}

static void out_free(run_out *o) {
  for (size_t i = 0; i < o->n; i++) free(o->order[i]);
  free(o->order);
  memset(o, 0, sizeof *o);
}

/* Checks that the value "<i>,<j>" matches the key "<dir>/f<i>.csv:<j>". */
static int value_matches(const char *key, const char *val, size_t vlen) {
  const char *f = strrchr(key, '/');
  int fi, fj, vi, vj;
  if (!f || sscanf(f, "/f%d.csv:%d", &fi, &fj) != 2) return 0;
  char buf[64];
  if (vlen >= sizeof buf) return 0;
  memcpy(buf, val, vlen);
  buf[vlen] = '\0';
  return sscanf(buf, "%d,%d", &vi, &vj) == 2 && vi == fi && vj == fj;
}

static void take(run_out *o, tfq_tuple *t) {
  size_t kl, vl;
  const char *k = tfq_tensor_string(tfq_tuple_get(t, 0), 0, &kl);
  const char *v = tfq_tensor_string(tfq_tuple_get(t, 1), 0, &vl);
  out_push(o, k, kl);
  if (!value_matches(o->order[o->n - 1], v, vl)) {
    printf("# key %s has value %.*s\n", o->order[o->n - 1], (int)vl, v);
    o->bad = 1;
  }
}

static void run(const csv_dir *d, const run_cfg *cfg, run_out *o, tfq_status *st) {
  memset(o, 0, sizeof *o);
  tfq_spec *fspec = scalar_spec(TFQ_STRING, 1, st);
  tfq_spec *kvspec = scalar_spec(TFQ_STRING, 2, st);
  tfq_queue *files, *target;
  die_on(tfq_fifo_queue_new(fspec, 32, "input_producer", &files, st), st, "filename queue");
  tfq_queue_options *qo;
  die_on(tfq_queue_options_new(&qo, st), st, "queue options");
  tfq_queue_options_set_capacity(qo, cfg->target_cap);
  if (cfg->shuffle_target) {
    tfq_queue_options_set_min_after_dequeue(qo, cfg->min_after);
    if (cfg->q_seed) tfq_queue_options_set_seeds(qo, cfg->q_seed, cfg->q_seed + 1);
    tfq_queue_options_set_tf_exact_order(qo, cfg->tf_exact);
  }
  die_on(tfq_queue_new(cfg->shuffle_target ? TFQ_QUEUE_RANDOM_SHUFFLE : TFQ_QUEUE_FIFO, kvspec, qo,
                       &target, st),
         st, "target queue");

  tfq_tuple *rows;
  die_on(tfq_tuple_new(1, &rows, st), st, "tuple");
  tfq_tuple_set_take(rows, 0, filenames_tensor(d, st));
  tfq_producer_options *po;
  die_on(tfq_producer_options_new(&po, st), st, "producer options");
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_producer_options_set_shuffle(po, 1);
  if (cfg->prod_seed) tfq_producer_options_set_seed(po, cfg->prod_seed);
  tfq_producer *prod;
  die_on(tfq_producer_new(files, rows, po, &prod, st), st, "producer");

  tfq_runner *rp, *rr;
  die_on(tfq_runner_new(files, &rp, st), st, "producer runner");
  die_on(tfq_runner_new(target, &rr, st), st, "reader runner");
  die_on(tfq_runner_add_op(rp, tfq_producer_step, prod, "producer", st), st, "add op");
  read_op *ops = calloc((size_t)cfg->nreaders, sizeof *ops);
  if (!ops) exit(1);
  for (int i = 0; i < cfg->nreaders; i++) {
    die_on(tfq_reader_new(TFQ_READER_TEXT_LINE, NULL, &ops[i].reader, st), st, "reader");
    ops[i].work = files;
    ops[i].target = target;
    ops[i].batch = cfg->batch;
    die_on(tfq_runner_add_op(rr, read_step, &ops[i], "read", st), st, "add op");
  }

  tfq_coord *coord;
  die_on(tfq_coord_new(&coord, st), st, "coordinator");
  die_on(tfq_runner_start(rp, coord, 0, st), st, "start producer");
  die_on(tfq_runner_start(rr, coord, 0, st), st, "start readers");

  int64_t deadline = now_ns() + 60 * 1000000000LL;
  int stopped = 0;
  for (;;) {
    if (cfg->stop_after >= 0 && (int64_t)o->n == cfg->stop_after) {
      die_on(tfq_coord_request_stop(coord, TFQ_OK, NULL), st, "request_stop");
      stopped = 1;
      break;
    }
    if (cfg->only_when_full) {
      while (tfq_queue_size(target) < cfg->target_cap && !tfq_queue_is_closed(target) &&
             now_ns() < deadline)
        sleep_us(50);
      if (now_ns() >= deadline) {
        printf("# consumer timed out waiting for a full or closed queue\n");
        o->bad = 1;
        break;
      }
    }
    tfq_tuple *t;
    tfq_code c = tfq_queue_dequeue(target, &t, tfq_coord_cancel(coord), 60 * 1000000LL, st);
    if (c == TFQ_OUT_OF_RANGE) break;
    if (c) {
      printf("# dequeue: %s: %s\n", tfq_code_name(c), tfq_status_message(st));
      o->bad = 1;
      break;
    }
    take(o, t);
    tfq_tuple_free(t);
  }
  o->before_stop = o->n;
  if (!stopped) die_on(tfq_coord_request_stop(coord, TFQ_OK, NULL), st, "request_stop");
  tfq_code jc = tfq_coord_join(coord, 10 * 1000000LL, 0, st);
  if (jc) {
    printf("# join: %s: %s\n", tfq_code_name(jc), tfq_status_message(st));
    o->bad = 1;
  }
  if (stopped) {
    /* The runner cancelled the target's pending enqueues (the queue is closed): drain what the
     * readers had enqueued before the stop; it counts towards "at most once". */
    if (!tfq_queue_is_closed(target)) {
      printf("# target queue not closed after the stop\n");
      o->bad = 1;
    }
    for (;;) {
      tfq_tuple *t;
      tfq_code c = tfq_queue_dequeue(target, &t, NULL, 0, st);
      if (c) {
        if (c != TFQ_OUT_OF_RANGE) {
          printf("# drain: %s: %s\n", tfq_code_name(c), tfq_status_message(st));
          o->bad = 1;
        }
        break;
      }
      take(o, t);
      tfq_tuple_free(t);
    }
  }

  tfq_runner_free(rp);
  tfq_runner_free(rr);
  for (int i = 0; i < cfg->nreaders; i++) tfq_reader_free(ops[i].reader);
  free(ops);
  tfq_coord_free(coord);
  tfq_producer_free(prod);
  tfq_producer_options_free(po);
  tfq_tuple_free(rows);
  tfq_queue_options_free(qo);
  tfq_queue_free(files);
  tfq_queue_free(target);
  tfq_spec_free(fspec);
  tfq_spec_free(kvspec);
}

/* Counts the keys of `o` against `k`; returns the number of unknown keys, sets *dups and
 * *missing. */
static size_t count_keys(keyset *k, const run_out *o, size_t *dups, size_t *missing) {
  memset(k->count, 0, k->n * sizeof *k->count);
  size_t unknown = 0;
  *dups = *missing = 0;
  for (size_t i = 0; i < o->n; i++) {
    char **hit = bsearch(&o->order[i], k->keys, k->n, sizeof *k->keys, cmp_str);
    if (!hit) {
      if (unknown++ < 3) printf("# unknown key %s\n", o->order[i]);
      continue;
    }
    if (++k->count[hit - k->keys] == 2 && (*dups)++ < 3) printf("# duplicate key %s\n", *hit);
  }
  for (size_t i = 0; i < k->n; i++)
    if (k->count[i] == 0) ++*missing;
  return unknown;
}

static uint64_t rng_state;
static uint64_t rng_next(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int main(int argc, char **argv) {
  int trials = argc > 1 ? atoi(argv[1]) : 20;
  if (trials < 1) trials = 1;
  tfq_status *st = tfq_status_new();
  if (!st) return 1;
  csv_dir d;
  csv_dir_make(&d, NFILES, lines_of);
  keyset k;
  keyset_make(&k, &d);
  printf("1..6\n");
  printf("# %d files, %zu lines in %s\n", NFILES, k.n, d.dir);

  size_t dups, missing, unknown;
  run_out o;

  /* 1-2: one epoch, 4 readers, FIFO and RandomShuffle targets: every key exactly once. */
  for (int shuffle = 0; shuffle <= 1; shuffle++) {
    run_cfg cfg = {.nreaders = 4,
                   .shuffle_target = shuffle,
                   .target_cap = 16,
                   .min_after = 4,
                   .stop_after = -1,
                   .batch = 3};
    run(&d, &cfg, &o, st);
    unknown = count_keys(&k, &o, &dups, &missing);
    tap(!o.bad && !unknown && !dups && !missing && o.n == k.n,
        "1 epoch, 16 files, 4 readers, %s target: every file:line key exactly once (%zu keys, "
        "%zu duplicated, %zu missing, %zu unknown)",
        shuffle ? "RandomShuffleQueue" : "FIFOQueue", o.n, dups, missing, unknown);
    out_free(&o);
  }

  /* 3: seeded random stops: no key twice (dequeued before the stop + drained after it). */
  rng_state = 20240601;
  int stop_ok = 1;
  size_t min_seen = (size_t)-1, max_seen = 0;
  for (int t = 0; t < trials; t++) {
    run_cfg cfg = {.nreaders = 4,
                   .shuffle_target = (int)(rng_next() & 1),
                   .target_cap = 16,
                   .min_after = 4,
                   .prod_seed = rng_next() | 1,
                   .q_seed = (int64_t)(t + 1),
                   .stop_after = (int64_t)(rng_next() % k.n),
                   .batch = 1 + (int64_t)(rng_next() % 4)};
    run(&d, &cfg, &o, st);
    unknown = count_keys(&k, &o, &dups, &missing);
    if (o.bad || unknown || dups || o.before_stop != (size_t)cfg.stop_after) {
      printf(
          "# stop trial %d (stop after %lld): bad %d, %zu duplicated, %zu unknown, %zu "
          "dequeued\n",
          t, (long long)cfg.stop_after, o.bad, dups, unknown, o.before_stop);
      stop_ok = 0;
    }
    if (o.n < min_seen) min_seen = o.n;
    if (o.n > max_seen) max_seen = o.n;
    out_free(&o);
  }
  tap(stop_ok,
      "%d seeded random stops: every key at most once (%zu..%zu keys seen incl. the "
      "drain)",
      trials, min_seen, max_seen);

  /* 4-6: seeds + one reader + dequeue only when full or closed: two runs, same order. */
  for (int tf_exact = 0; tf_exact <= 1; tf_exact++) {
    run_cfg cfg = {.nreaders = 1,
                   .shuffle_target = 1,
                   .tf_exact = tf_exact,
                   .target_cap = 8,
                   .min_after = 2,
                   .prod_seed = 87654321,
                   .q_seed = 42,
                   .stop_after = -1,
                   .only_when_full = 1,
                   .batch = 3};
    run_out a, b;
    run(&d, &cfg, &a, st);
    run(&d, &cfg, &b, st);
    int same = a.n == b.n;
    size_t first_diff = 0;
    for (size_t i = 0; same && i < a.n; i++)
      if (strcmp(a.order[i], b.order[i])) {
        same = 0;
        first_diff = i;
      }
    if (!same && a.n == b.n)
      printf("# first difference at %zu: %s vs %s\n", first_diff, a.order[first_diff],
             b.order[first_diff]);
    unknown = count_keys(&k, &a, &dups, &missing);
    int complete = !a.bad && !b.bad && !unknown && !dups && !missing;
    tap(same && complete,
        "seeded (%s), 1 reader: two runs give the same order (%zu vs %zu keys, complete %d)",
        tf_exact ? "tf-exact Philox" : "PCG", a.n, b.n, complete);
    if (tf_exact) {
      /* The order must actually be shuffled, not the file order. */
      run_cfg c2 = cfg;
      c2.q_seed = 43;
      run_out c;
      run(&d, &c2, &c, st);
      int differs = c.n != a.n;
      for (size_t i = 0; !differs && i < a.n; i++) differs = strcmp(a.order[i], c.order[i]) != 0;
      tap(differs, "another queue seed gives another order");
      out_free(&c);
    }
    out_free(&a);
    out_free(&b);
  }

  keyset_free(&k);
  csv_dir_remove(&d);
  tfq_status_free(st);
  return tap_failed ? 1 : 0;
}
