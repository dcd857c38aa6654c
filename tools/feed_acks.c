/* tfq-feed --acks: acknowledgements, liveness probes and failover (see feed.h).
 *
 * Every batch sent stays here (its columns referenced) until a worker's training step has put its
 * acknowledgement in the ack table: `outstanding` in send order.  A worker that misses three probes
 * in a row is dead: its outstanding batches move to `resend`, which every live target's op takes
 * from before new input.  Once the input is done, nothing waits to be re-sent and a worker holds
 * none of the unit's unacknowledged batches, it is no longer probed (acks_probe_step).  An op ends
 * when the input is exhausted and nothing is outstanding or waiting to be re-sent (or when its
 * worker is dead). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feed.h"

typedef struct entry {
  int64_t key, rows;
  size_t target;
  tfq_tuple *cols;
  struct entry *next;
} entry;

typedef struct list {
  entry *head, *tail;
  size_t n;
} list;

/* --checkpoint: a state kept until every batch before it is acknowledged. */
typedef struct kept {
  int64_t batches;
  char *state;
  size_t len;
  struct kept *next;
} kept;

struct acks {
  pthread_mutex_t mu;
  int64_t slot;
  list out, resend;
  int input_done;
  int64_t sent, resent, acked, acked_rows;
  int64_t *resent_keys, *resent_rows;
  size_t nresent, capresent;
  tfq_tf_done *table;
  int *tasks; /* the worker tasks' indices: ack keys are (key << 6) | task */
  int ntasks;
  /* --checkpoint: acked[b - base] for batch b (base: the batch the unit resumed at); low: the
   * first batch not acknowledged; the states kept, oldest first; the states written */
  unsigned char *acked_map;
  int64_t base, low, mapcap, checkpoints;
  kept *states, *states_tail;
  pthread_mutex_t write_mu; /* one writer of the state file */
};

static void mark_acked(acks *k, int64_t b);

static void lock(acks *k) {
  if (pthread_mutex_lock(&k->mu) != 0) abort();
}
static void unlock(acks *k) {
  if (pthread_mutex_unlock(&k->mu) != 0) abort();
}

static void push(list *l, entry *e) {
  e->next = NULL;
  if (l->tail)
    l->tail->next = e;
  else
    l->head = e;
  l->tail = e;
  l->n++;
}

static entry *pop(list *l) {
  entry *e = l->head;
  if (e) {
    l->head = e->next;
    if (!l->head) l->tail = NULL;
    l->n--;
  }
  return e;
}

static void free_entry(entry *e) {
  tfq_tuple_free(e->cols);
  free(e);
}

int64_t acks_slot(int64_t unit, int64_t attempt) { return ((unit << 8) | attempt) + 1; }

tfq_code acks_new(feed *f, const char *session_target, const char *device, int64_t slot,
                  tfq_status *st) {
  acks *k = xcalloc(1, sizeof *k);
  if (pthread_mutex_init(&k->mu, NULL) != 0 || pthread_mutex_init(&k->write_mu, NULL) != 0)
    die_oom();
  k->slot = slot;
  k->base = k->low = f->resumed;
  k->ntasks = tfq_tf_cluster_num_tasks(f->cluster, "worker");
  k->tasks = xcalloc((size_t)(k->ntasks > 0 ? k->ntasks : 1), sizeof *k->tasks);
  for (int i = 0; i < k->ntasks; i++)
    k->tasks[i] = tfq_tf_cluster_task_index(f->cluster, "worker", i);
  f->ak = k;
  char name[300];
  snprintf(name, sizeof name, "%s_acked", f->o->queue);
  tfq_code c = tfq_tf_done_open(session_target, device, name, f->o->timeout_ms, &k->table, st);
  if (c) return c;
  for (size_t i = 0; i < f->nt; i++) {
    target *t = &f->t[i];
    if (t->dead) continue; /* lost at start (open_targets): never probed */
    tfq_tf_queue_options *qo;
    if (tfq_tf_queue_options_new(&qo, st)) die_oom();
    if (tfq_tf_queue_options_set_target(qo, t->session, st) ||
        tfq_tf_queue_options_set_device(qo, t->device, st) ||
        tfq_tf_queue_options_set_shared_name(qo, t->name, st))
      die_oom();
    tfq_tf_queue_options_set_capacity(qo, f->o->rows ? 8 * f->o->batch_size : 8);
    if (f->o->queue_capacity) tfq_tf_queue_options_set_capacity(qo, f->o->queue_capacity);
    tfq_tf_queue_options_set_element(qo, TFQ_TF_ELEMENT_BATCH);
    tfq_tf_queue_options_set_unbatched(qo, 1);
    tfq_tf_queue_options_set_timeout_ms(qo, 2000);
    tfq_spec *es = NULL;
    c = tfq_spec_new(&es, st);
    if (!c) c = tfq_spec_add(es, TFQ_INT64, NULL, 0, "key", st);
    for (size_t j = 0; !c && j < tfq_spec_size(f->spec); j++)
      c = tfq_spec_add(es, tfq_spec_dtype(f->spec, j), tfq_spec_dims(f->spec, j),
                       tfq_spec_rank(f->spec, j), NULL, st);
    if (!c) c = tfq_tf_queue_open(es, qo, &t->probe, st);
    tfq_spec_free(es);
    tfq_tf_queue_options_free(qo);
    if (c) return name_task(t, c, st);
  }
  return TFQ_OK;
}

void acks_free(feed *f) {
  acks *k = f->ak;
  if (!k) return;
  entry *e;
  while ((e = pop(&k->out))) free_entry(e);
  while ((e = pop(&k->resend))) free_entry(e);
  for (size_t i = 0; i < f->nt; i++) tfq_tf_queue_free(f->t[i].probe);
  tfq_tf_done_free(k->table);
  for (kept *q = k->states, *nx; q; q = nx) {
    nx = q->next;
    tfq_free(q->state);
    free(q);
  }
  free(k->acked_map);
  pthread_mutex_destroy(&k->write_mu);
  pthread_mutex_destroy(&k->mu);
  free(k->resent_keys);
  free(k->resent_rows);
  free(k->tasks);
  free(k);
  f->ak = NULL;
}

/* The element: the key as an int64 scalar, then the columns (references). */
static tfq_code element(const entry *e, tfq_tuple **out, tfq_status *st) {
  size_t n = tfq_tuple_size(e->cols);
  tfq_tensor *key;
  tfq_code c = tfq_tensor_new(TFQ_INT64, NULL, 0, &key, st);
  if (c) return c;
  *(int64_t *)tfq_tensor_data(key) = e->key;
  if ((c = tfq_tuple_new(n + 1, out, st))) {
    tfq_tensor_free(key);
    return c;
  }
  tfq_tuple_set_take(*out, 0, key);
  for (size_t i = 0; i < n; i++)
    tfq_tuple_set_take(*out, i + 1, tfq_tensor_ref(tfq_tuple_get(e->cols, i)));
  return TFQ_OK;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

tfq_code acks_step(void *ctx, size_t i, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  feed *f = ctx;
  target *t = &f->t[i];
  acks *k = f->ak;
  lock(k);
  int dead = t->dead;
  entry *e = dead ? NULL : pop(&k->resend);
  int input_done = k->input_done, idle = !k->out.n && !k->resend.n;
  unlock(k);
  if (dead) return TFQ_OUT_OF_RANGE;
  if (!e) {
    if (input_done) {
      if (idle) return TFQ_OUT_OF_RANGE; /* everything sent was acknowledged */
      nap_ms(20);
      return TFQ_OK;
    }
    tfq_tuple *b = NULL;
    int64_t seq = 0;
    tfq_code c = tfq_tf_dispatch_take(f->d, 100000, &b, &seq, st);
    if (c == TFQ_OUT_OF_RANGE || c == TFQ_DEADLINE_EXCEEDED) {
      if (c == TFQ_OUT_OF_RANGE) {
        lock(k);
        k->input_done = 1;
        unlock(k);
      }
      tfq_status_clear(st);
      return TFQ_OK;
    }
    if (c) return c;
    int64_t rows = tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
    if (rows == 0) {
      tfq_tuple_free(b);
      return TFQ_OK;
    }
    e = xcalloc(1, sizeof *e);
    e->cols = b;
    e->rows = rows;
    lock(k);
    if (seq >= ((int64_t)1 << 24)) {
      unlock(k);
      free_entry(e);
      return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED,
                            "--acks: more than 2^24 batches in one unit: use a larger -b");
    }
    e->key = k->slot << 24 | seq;
    k->sent++;
    unlock(k);
  }
  tfq_tuple *el;
  tfq_code c = element(e, &el, st);
  if (c) {
    free_entry(e);
    return c;
  }
  lock(k); /* kept before it is sent: a failover re-sends it if no acknowledgement comes */
  e->target = (size_t)(t - f->t);
  push(&k->out, e);
  int64_t rows = e->rows;
  unlock(k);
  for (;;) {
    c = tfq_tf_queue_enqueue_batch(t->q, el, st);
    if (c == TFQ_OK) {
      lock(k);
      t->rows += rows;
      t->batches++;
      tfq_tf_dispatch_count(f->d, i, rows);
      unlock(k);
      break;
    }
    lock(k);
    dead = t->dead;
    unlock(k);
    if (dead) break;                          /* the probe moved the batch to `resend` */
    if (c == TFQ_DEADLINE_EXCEEDED) continue; /* a full queue of a live worker: wait more */
    tfq_tuple_free(el);
    return name_task(t, c, st);
  }
  tfq_tuple_free(el);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* Rows acknowledged for each key (summed over the workers' acknowledgements), one RunStep for
 * n keys; counts[i] (if given): how many workers acknowledged keys[i]. */
static tfq_code lookup(acks *k, const int64_t *keys, size_t n, int64_t *rows, int64_t *counts,
                       tfq_status *st) {
  size_t w = (size_t)k->ntasks, m = n * w;
  if (m == 0) return TFQ_OK;
  int64_t *ak = xcalloc(m, sizeof *ak), *v = xcalloc(m, sizeof *v);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < w; j++) ak[i * w + j] = keys[i] << 6 | (int64_t)k->tasks[j];
  tfq_code c = tfq_tf_done_find(k->table, ak, (int64_t)m, v, st);
  for (size_t i = 0; !c && i < n; i++) {
    rows[i] = 0;
    if (counts) counts[i] = 0;
    for (size_t j = 0; j < w; j++) {
      rows[i] += v[i * w + j];
      if (counts && v[i * w + j]) counts[i]++;
    }
  }
  free(ak);
  free(v);
  return c;
}

/* One poll: drops the acknowledged batches of `outstanding` (and of `resend`, whose ack may come
 * late from a worker that finished it just before it died). */
static tfq_code poll_once(acks *k, tfq_status *st) {
  lock(k);
  size_t n = k->out.n + k->resend.n, i = 0;
  int64_t *keys = xcalloc(n ? n : 1, sizeof *keys), *rows = xcalloc(n ? n : 1, sizeof *rows);
  for (entry *e = k->out.head; e; e = e->next) keys[i++] = e->key;
  for (entry *e = k->resend.head; e; e = e->next) keys[i++] = e->key;
  unlock(k);
  tfq_code c = lookup(k, keys, n, rows, NULL, st);
  if (!c) {
    lock(k);
    list *ls[2] = {&k->out, &k->resend};
    for (int li = 0; li < 2; li++) { /* keep the order of what stays */
      list keep = {NULL, NULL, 0};
      entry *e;
      while ((e = pop(ls[li]))) {
        int64_t r = 0;
        for (size_t j = 0; j < n; j++)
          if (keys[j] == e->key) r = rows[j];
        if (r > 0) {
          k->acked++;
          k->acked_rows += e->rows;
          mark_acked(k, e->key & (((int64_t)1 << 24) - 1));
          free_entry(e);
        } else {
          push(&keep, e);
        }
      }
      *ls[li] = keep;
    }
    unlock(k);
  }
  free(keys);
  free(rows);
  return c;
}

/* ---- --checkpoint ---- */

/* Batch `b` acknowledged (under k->mu): advances `low` over acknowledged batches. */
static void mark_acked(acks *k, int64_t b) {
  if (b < k->base) return;
  int64_t i = b - k->base;
  if (i >= k->mapcap) {
    int64_t cap = k->mapcap ? k->mapcap : 1024;
    while (cap <= i) cap *= 2;
    k->acked_map = xrealloc(k->acked_map, (size_t)cap);
    memset(k->acked_map + k->mapcap, 0, (size_t)(cap - k->mapcap));
    k->mapcap = cap;
  }
  k->acked_map[i] = 1;
  while (k->low - k->base < k->mapcap && k->acked_map[k->low - k->base]) k->low++;
}

tfq_code acks_state(void *ctx, int64_t batches, char *state, size_t len, tfq_status *st) {
  (void)st;
  feed *f = ctx;
  acks *k = f->ak;
  kept *q = xcalloc(1, sizeof *q);
  q->batches = batches;
  q->state = state;
  q->len = len;
  lock(k);
  if (k->states_tail)
    k->states_tail->next = q;
  else
    k->states = q;
  k->states_tail = q;
  unlock(k);
  return TFQ_OK;
}

/* Writes the newest kept state whose earlier batches are all acknowledged, and drops the
 * states before it.  The consumer keeps adding states meanwhile (at the tail). */
static tfq_code persist(feed *f, tfq_status *st) {
  acks *k = f->ak;
  if (!f->m->checkpoint) return TFQ_OK;
  if (pthread_mutex_lock(&k->write_mu) != 0) abort();
  lock(k);
  kept *best = NULL;
  while (k->states && k->states->batches <= k->low) {
    kept *q = k->states;
    k->states = q->next;
    if (!k->states) k->states_tail = NULL;
    if (best) {
      tfq_free(best->state);
      free(best);
    }
    best = q;
  }
  unlock(k);
  tfq_code c = TFQ_OK;
  if (best) {
    c = tfq_pipeline_state_write_file(f->ckpt, best->state, best->len, st);
    if (c == TFQ_OK) {
      lock(k);
      k->checkpoints++;
      unlock(k);
    } else {
      char msg[1200];
      snprintf(msg, sizeof msg, "--checkpoint: %s", tfq_status_message(st));
      tfq_status_set(st, c, "%s", msg);
    }
    tfq_free(best->state);
    free(best);
  }
  if (pthread_mutex_unlock(&k->write_mu) != 0) abort();
  return c;
}

void acks_checkpoint_final(feed *f) {
  tfq_status *st = tfq_status_new();
  if (st && persist(f, st) != TFQ_OK) warnx_("%s", tfq_status_message(st));
  tfq_status_free(st);
}

tfq_code acks_poll_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  feed *f = ctx;
  if (poll_once(f->ak, st) != TFQ_OK) tfq_status_clear(st); /* the next poll retries */
  return persist(f, st);
}

/* A worker declared dead: its outstanding batches go to `resend`, in order. */
static void fail_over(feed *f, target *t) {
  acks *k = f->ak;
  tfq_status *st = tfq_status_new();
  if (st && poll_once(k, st) != TFQ_OK) tfq_status_clear(st);
  tfq_status_free(st);
  lock(k);
  t->dead = 1;
  list keep = {NULL, NULL, 0};
  entry *e;
  int64_t moved = 0;
  size_t ti = (size_t)(t - f->t);
  while ((e = pop(&k->out))) {
    if (e->target != ti) {
      push(&keep, e);
      continue;
    }
    push(&k->resend, e);
    moved++;
    k->resent++;
    if (k->nresent == k->capresent) {
      k->capresent = k->capresent ? 2 * k->capresent : 64;
      k->resent_keys = xrealloc(k->resent_keys, k->capresent * sizeof *k->resent_keys);
      k->resent_rows = xrealloc(k->resent_rows, k->capresent * sizeof *k->resent_rows);
    }
    k->resent_keys[k->nresent] = e->key;
    k->resent_rows[k->nresent++] = e->rows;
  }
  k->out = keep;
  int live = 0;
  for (size_t i = 0; i < f->nt; i++) live += !f->t[i].dead;
  unlock(k);
  if (!f->o->quiet)
    warnx_("%s: no answer to three probes: the worker is lost; %" PRId64
           " unacknowledged batches go to the %d live workers",
           t->label, moved, live);
  if (!live &&
      tfq_coord_request_stop(tfq_tf_dispatch_coord(f->d), TFQ_UNAVAILABLE,
                             "every worker of the job is lost: nothing left to feed") != TFQ_OK) {
    /* a stop was requested already; nothing more to do */
  }
}

/* Whether target ti holds a batch not yet acknowledged (under k->mu). */
static int holds_outstanding(const acks *k, size_t ti) {
  for (const entry *e = k->out.head; e; e = e->next)
    if (e->target == ti) return 1;
  return 0;
}

/* Once the input is done and nothing is waiting to be re-sent, a worker holding none of this
 * unit's batches unacknowledged is not probed: losing it would lose nothing, and a worker that
 * ends normally (its queue closed by the last feeder, OutOfRange) stops answering while this
 * feeder is still winding down, which is not a loss. */
tfq_code acks_probe_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  feed *f = ctx;
  for (size_t i = 0; i < f->nt; i++) {
    target *t = &f->t[i];
    lock(f->ak);
    int dead = t->dead,
        settled = f->ak->input_done && !f->ak->resend.n && !holds_outstanding(f->ak, i);
    unlock(f->ak);
    if (dead || settled) {
      t->fails = 0;
      continue;
    }
    int64_t size;
    if (tfq_tf_queue_size(t->probe, &size, st) == TFQ_OK) {
      t->fails = 0;
    } else if (++t->fails >= 3) {
      fail_over(f, t);
    }
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

int acks_all_acked(feed *f, tfq_status *st) {
  acks *k = f->ak;
  for (int i = 0; i < 50; i++) { /* acknowledgements land right after the last step */
    if (poll_once(k, st) != TFQ_OK) return 0;
    lock(k);
    int done = k->input_done && !k->out.n && !k->resend.n;
    unlock(k);
    if (done) return 1;
    nap_ms(100);
  }
  return 0;
}

tfq_code acks_count(feed *f, int64_t unit, int64_t attempt, acks_stats *out, tfq_status *st) {
  acks *k = f->ak;
  memset(out, 0, sizeof *out);
  lock(k);
  out->sent = k->sent;
  out->resent = k->resent;
  out->acked = k->acked;
  out->checkpoints = k->checkpoints;
  out->acked_rows = k->acked_rows;
  for (size_t i = 0; i < f->nt; i++) out->dead_workers += f->t[i].dead;
  size_t n = k->nresent;
  int64_t *keys = xcalloc(n ? n : 1, sizeof *keys), *rows = xcalloc(n ? n : 1, sizeof *rows),
          *cnt = xcalloc(n ? n : 1, sizeof *cnt);
  if (n) memcpy(keys, k->resent_keys, n * sizeof *keys);
  unlock(k);
  /* a re-sent batch acknowledged by two workers was trained twice */
  tfq_code c = lookup(k, keys, n, rows, cnt, st);
  for (size_t i = 0; !c && i < n; i++)
    if (cnt[i] > 1) out->dup_records += (cnt[i] - 1) * k->resent_rows[i];
  /* what earlier attempts of this unit had acknowledged is sent again by this one: from the
   * batch this run resumed at (a restored state's earlier batches are not sent again) */
  for (int64_t a = 0; !c && a < attempt; a++) {
    int64_t slot = acks_slot(unit, a), win[512], r[512];
    for (int64_t seq = f->resumed; !c && seq < ((int64_t)1 << 24); seq += 512) {
      for (int j = 0; j < 512; j++) win[j] = slot << 24 | (seq + j);
      c = lookup(k, win, 512, r, NULL, st);
      int64_t hit = 0;
      for (int j = 0; !c && j < 512; j++) hit += r[j];
      out->prior_rows += hit;
      if (!hit) break;
    }
  }
  out->dup_records += out->prior_rows;
  free(keys);
  free(rows);
  free(cnt);
  return c;
}
