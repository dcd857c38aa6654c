/* tfq_pipeline: the reader threads, the hand-off of decoded steps in sequence order, and the
 * consumer: the shuffle buffer, the draws, bad records and the batches (tfq/pipeline.h). */
#include <string.h>

#include "pipeline_internal.h"

/* ---- creation ---- */

static tfq_code copy_options(tfq_pipeline_options *d, const tfq_pipeline_options *o,
                             tfq_status *st) {
  *d = *o;
  d->files = NULL;
  d->columns = NULL;
  d->select_cols = NULL;
  d->sample_file = NULL;
  d->na_value = NULL;
  d->nfiles = d->files_cap = 0;
  for (size_t i = 0; i < o->nfiles; i++) {
    tfq_code rc = tfq_pipeline_options_add_file(d, o->files[i], st);
    if (rc) return rc;
  }
  if (o->columns && !(d->columns = tfq__strdup(o->columns))) return TFQ__OOM(st);
  if (o->sample_file && !(d->sample_file = tfq__strdup(o->sample_file))) return TFQ__OOM(st);
  if (o->na_value && !(d->na_value = tfq__strdup(o->na_value))) return TFQ__OOM(st);
  if (o->nselect) {
    if (!(d->select_cols = tfq_malloc(o->nselect * sizeof *d->select_cols))) return TFQ__OOM(st);
    memcpy(d->select_cols, o->select_cols, o->nselect * sizeof *d->select_cols);
  }
  return TFQ_OK;
}

static tfq_code check_options(tfq_pipeline *p, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  if (o->batch_size <= 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch_size must be > 0, not %lld",
                          (long long)o->batch_size);
  if (o->threads < 0 || o->threads > 1024)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "num_threads must be in [0, 1024], not %d",
                          o->threads);
  if (o->step <= 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "step must be > 0, not %lld",
                          (long long)o->step);
  if (o->num_epochs < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "num_epochs must be >= 0, not %lld",
                          (long long)o->num_epochs);
  if (o->shard_n < 1 || o->shard_i < 0 || o->shard_i >= o->shard_n)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "shard index must be in [0, count): index %lld, count %lld",
                          (long long)o->shard_i, (long long)o->shard_n);
  if (o->max_bad < -1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "max_bad_records must be >= -1, not %lld",
                          (long long)o->max_bad);
  p->batch = o->batch_size;
  p->step = o->step;
  if (!o->shuffle) {
    p->mad = 0;
    p->capacity = p->batch;
    return TFQ_OK;
  }
  p->mad = o->mad >= 0 ? o->mad : 1000;
  if (o->capacity >= 0) {
    p->capacity = o->capacity;
  } else if (p->mad > INT64_MAX / 4 - 3 * p->batch || p->batch > INT64_MAX / 8) {
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "min_after_dequeue or batch_size too large");
  } else {
    p->capacity = p->mad + 3 * p->batch;
  }
  if (p->capacity > ((int64_t)1 << 31))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "capacity must be at most 2^31, not %lld",
                          (long long)p->capacity);
  if (p->capacity < p->batch || p->capacity - p->batch < p->mad)
    return tfq_status_set(
        st, TFQ_INVALID_ARGUMENT,
        "capacity (%lld) must be at least min_after_dequeue + batch_size (%lld + %lld)",
        (long long)p->capacity, (long long)p->mad, (long long)p->batch);
  return TFQ_OK;
}

tfq_code tfq_pipeline_new(const tfq_pipeline_options *o, tfq_pipeline **out, tfq_status *st) {
  if (!o || !out) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "options and out are required");
  *out = NULL;
  tfq_pipeline *p = tfq__calloc(1, sizeof *p);
  if (!p) return TFQ__OOM(st);
  tfq_code rc = copy_options(&p->o, o, st);
  if (tfq__mutex_init(&p->src_mu) || tfq__mutex_init(&p->mu) || tfq__mutex_init(&p->pool_mu)) {
    tfq_free(p);
    return TFQ__OOM(st);
  }
  pthread_cond_init(&p->cv_cons, NULL);
  pthread_cond_init(&p->cv_work, NULL);
  p->not_example = -1;
  atomic_init(&p->stopped, 0);
  atomic_init(&p->records_read, 0);
  atomic_init(&p->bytes_read, 0);
  if (!rc) rc = check_options(p, st);
  p->seed = o->seed_set ? o->seed : tfq__random64() & (((uint64_t)1 << 63) - 1);
  if (!rc) rc = tfq_cancel_new(&p->cancel, st);
  if (!rc) rc = tfq__pl_setup(p, st);
  p->window = 2 * (uint64_t)(p->o.threads > 0 ? p->o.threads : 1) + 2;
  if (!rc && (!(p->slots = tfq__calloc((size_t)p->capacity, sizeof *p->slots)) ||
              !(p->ready = tfq__calloc((size_t)p->window, sizeof *p->ready))))
    rc = TFQ__OOM(st);
  if (!rc && p->o.shuffle) rc = tfq__pl_ring_new(p, st);
  if (rc) {
    tfq_pipeline_free(p);
    return rc;
  }
  /* (seed, 87654321): the RandomShuffleQueue seeds tfq-cat gave its record queue, so that a
   * deterministic pipeline repeats tfq-cat's seeded orders */
  tfq__pcg32_seed(&p->rng, p->seed, 87654321);
  tfq__pl_fingerprint(p);
  *out = p;
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- reader threads ---- */

static void deliver(tfq_pipeline *p, pl_chunk *c) {
  tfq__lock(&p->mu);
  p->ready[c->seq % p->window] = c;
  p->in_flight--;
  if (c->tail && c->tail->kind == PART_END) p->workers_done = 1;
  if (p->cons_waiting) pthread_cond_signal(&p->cv_cons); /* one consumer thread waits */
  tfq__unlock(&p->mu);
}

/* Reads and decodes one step into a new chunk (a ticket taken); never fails: a failure becomes a
 * fatal bad part. */
static pl_chunk *produce(tfq_pipeline *p) {
  pl_chunk *c = tfq__calloc(1, sizeof *c);
  tfq_status s;
  tfq__status_ok(&s);
  if (!c) return NULL;
  tfq_code rc = tfq__pl_produce(p, c, &s);
  if (rc) {
    pl_part *q = tfq__pl_part_bad(&s, "", 1);
    if (q) {
      if (c->tail)
        c->tail->next = q;
      else
        c->head = q;
      c->tail = q;
    }
  }
  return c;
}

static void *worker_main(void *arg) {
  tfq_pipeline *p = arg;
  for (;;) {
    tfq__lock(&p->mu);
    while (!p->stopping && !p->workers_done &&
           (p->paused || p->issued >= p->cons_seq + p->window)) {
      p->work_waiting++;
      pthread_cond_wait(&p->cv_work, &p->mu);
      p->work_waiting--;
    }
    if (p->stopping || p->workers_done) {
      tfq__unlock(&p->mu);
      return NULL;
    }
    p->issued++;
    p->in_flight++;
    tfq__unlock(&p->mu);
    pl_chunk *c = produce(p);
    if (!c) { /* out of memory for the chunk itself: stop, the consumer reports it */
      tfq__lock(&p->mu);
      p->in_flight--;
      p->stopping = 1;
      pthread_cond_broadcast(&p->cv_cons);
      tfq__unlock(&p->mu);
      return NULL;
    }
    deliver(p, c);
  }
}

tfq_code tfq_pipeline_start(tfq_pipeline *p, tfq_status *st) {
  if (p->started) return TFQ_OK;
  p->started = 1;
  int n = p->o.threads;
  if (n == 0) return TFQ_OK;
  if (!(p->threads = tfq__calloc((size_t)n, sizeof *p->threads))) return TFQ__OOM(st);
  for (int i = 0; i < n; i++) {
    if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) {
      tfq_pipeline_stop(p);
      return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "could not start a reader thread");
    }
    p->nthreads++;
  }
  return TFQ_OK;
}

/* ---- the consumer's stream ---- */

void tfq__pl_stream_append(tfq_pipeline *p, pl_part *head) {
  for (pl_part *q = head; q;) {
    pl_part *next = q->next;
    q->next = NULL;
    if (p->stream_tail)
      p->stream_tail->next = q;
    else
      p->stream = q;
    p->stream_tail = q;
    q = next;
  }
}

static void unref(tfq_pipeline *p, pl_part *q, int64_t n) {
  q->refs -= n;
  if (q->refs == 0) tfq__pl_part_recycle(p, q);
}

/* unref() for the parts of n slots, one call per run of slots of the same part (a batch of file
 * order is a few runs: one decrement a row was ~4% of tfq-cat on 14-byte rows). */
static void unref_slots(tfq_pipeline *p, const pl_slot *s, int64_t n) {
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    while (j < n && s[j].part == s[i].part) j++;
    unref(p, s[i].part, j - i);
    i = j;
  }
}

static pl_part *stream_pop(tfq_pipeline *p) {
  pl_part *q = p->stream;
  p->stream = q->next;
  if (!p->stream) p->stream_tail = NULL;
  q->next = NULL;
  return q;
}

/* Takes chunk cons_seq into the stream.  1: taken; 0: not ready (block == 0); TFQ_CANCELLED
 * and TFQ_RESOURCE_EXHAUSTED negated. */
static int take_chunk(tfq_pipeline *p, int block) {
  tfq__lock(&p->mu);
  for (;;) {
    if (atomic_load(&p->stopped)) break; /* what a stop cut short is not the end of the input */
    uint64_t i = p->cons_seq % p->window;
    pl_chunk *c = p->ready[i];
    if (c && c->seq == p->cons_seq) {
      p->ready[i] = NULL;
      p->cons_seq++;
      if (p->work_waiting) pthread_cond_signal(&p->cv_work); /* room for one more step */
      tfq__unlock(&p->mu);
      tfq__pl_stream_append(p, c->head);
      tfq_free(c);
      return 1;
    }
    if (p->o.threads == 0) { /* read on this thread */
      p->issued++;
      p->in_flight++;
      tfq__unlock(&p->mu);
      pl_chunk *nc = produce(p);
      if (!nc) return -(int)TFQ_RESOURCE_EXHAUSTED;
      deliver(p, nc);
      tfq__lock(&p->mu);
      continue;
    }
    if (!block) {
      tfq__unlock(&p->mu);
      return 0;
    }
    if (p->stopping && p->in_flight == 0) { /* the readers quit: out of memory */
      tfq__unlock(&p->mu);
      return -(int)TFQ_RESOURCE_EXHAUSTED;
    }
    p->cons_waiting = 1;
    pthread_cond_wait(&p->cv_cons, &p->mu);
    p->cons_waiting = 0;
  }
  tfq__unlock(&p->mu);
  return -(int)TFQ_CANCELLED;
}

static void report_bad(tfq_pipeline *p, const pl_part *q) {
  if (p->o.bad_fn) {
    p->o.bad_fn(p->o.bad_ctx, q->where, q->reason);
    return;
  }
  fprintf(stderr, "tfq: skipped bad record %s: %s\n", q->where, q->reason);
}

/* The head of the stream with records to take: 1; 0 nothing ready (block == 0); -1 the stream
 * stopped (p->ended or p->error set); a negated code. */
static int head(tfq_pipeline *p, int block) {
  for (;;) {
    pl_part *q = p->stream;
    if (!q) {
      int r = take_chunk(p, block);
      if (r <= 0) return r;
      continue;
    }
    if (q->kind == PART_RECORDS) {
      if (q->taken < q->n) return 1;
      unref(p, stream_pop(p), 1);
      continue;
    }
    if (q->kind == PART_END) {
      p->ended = 1;
      return -1;
    }
    /* a bad record */
    if (!q->fatal && (p->o.max_bad < 0 || p->bad_records < p->o.max_bad)) {
      report_bad(p, q);
      p->bad_records++;
      unref(p, stream_pop(p), 1);
      continue;
    }
    p->error = stream_pop(p);
    tfq__lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cv_work);
    tfq__unlock(&p->mu);
    tfq_cancel_trigger(p->cancel);
    return -1;
  }
}

/* Moves records from the stream into the slots until `target` are there or the stream stops;
 * waits for records while fewer than `min_wait` are there. */
static tfq_code fill(tfq_pipeline *p, int64_t target, int64_t min_wait, tfq_status *st) {
  while (p->size < target && !p->ended && !p->error) {
    int r = head(p, p->size < min_wait);
    if (r < -1) {
      tfq_code c = (tfq_code)-r;
      return tfq_status_set(st, c,
                            c == TFQ_CANCELLED ? "the pipeline was stopped" : "out of memory");
    }
    if (r <= 0) break;
    pl_part *q = p->stream;
    int64_t m = q->n - q->taken, room = target - p->size;
    if (m > room) m = room;
    for (int64_t i = 0; i < m; i++) p->slots[p->size + i] = (pl_slot){q, q->taken + i};
    for (size_t c = 0; p->ring && c < p->ncols; c++) {
      size_t rb = tfq__pl_ring_bytes(p, c);
      if (rb)
        memcpy(p->ring[c] + (size_t)p->size * rb,
               (const char *)q->cols[c]->data + (size_t)q->taken * rb, (size_t)m * rb);
    }
    p->size += m;
    q->taken += m;
    q->refs += m;
  }
  return TFQ_OK;
}

static tfq_code stopped_error(tfq_pipeline *p, tfq_status *st) {
  if (p->error) {
    pl_part *q = p->error;
    p->sticky = q->code;
    tfq_status_set(st, q->code, "%s%s%s", q->where, *q->where ? ": " : "", q->reason);
    tfq_status_set_location(st, *q->file ? q->file : NULL, strlen(q->file), q->offset, q->line);
    return q->code;
  }
  p->sticky = TFQ_OUT_OF_RANGE;
  return tfq_status_set(st, TFQ_OUT_OF_RANGE, "End of sequence");
}

void tfq__pl_publish(tfq_pipeline *p) {
  int64_t v[5] = {p->records_out, p->batches_out, p->bad_records, p->dropped, p->size};
  for (int i = 0; i < 5; i++) atomic_store_explicit(&p->pub[i], v[i], memory_order_relaxed);
}

/* next() into `dst` (next_into), or into a new tuple *out (next). */
static tfq_code next_batch(tfq_pipeline *p, tfq_tuple *dst, tfq_tuple **out, tfq_status *st) {
  if (atomic_load(&p->stopped))
    return tfq_status_set(st, TFQ_CANCELLED, "the pipeline was stopped");
  if (p->sticky != TFQ_OK) return stopped_error(p, st);
  tfq_code rc = tfq_pipeline_start(p, st);
  if (rc) return rc;
  const int shuffle = p->o.shuffle;
  int64_t target = shuffle ? p->capacity : p->batch;
  int64_t min_wait = shuffle && !p->o.deterministic ? p->mad + p->batch : target;
  if ((rc = fill(p, target, min_wait, st))) return rc;
  if (atomic_load(&p->stopped))
    return tfq_status_set(st, TFQ_CANCELLED, "the pipeline was stopped");
  int64_t n = p->size < p->batch ? p->size : p->batch;
  int done = p->ended || p->error;
  if (n == 0 || (done && n < p->batch && p->o.drop_remainder)) {
    unref_slots(p, p->slots, p->size);
    p->dropped += p->size;
    p->size = 0;
    tfq__pl_publish(p);
    return stopped_error(p, st);
  }
  tfq_tuple *t = dst;
  if (!t && (rc = tfq_tuple_new(p->nslots, &t, st))) return rc;
  pl_slot *pick = p->slots; /* unshuffled: the slots in order */
  pl_slot local[256];
  int64_t js_s[256], ls_s[256], *js = NULL, *ls = NULL;
  if (shuffle) {
    int big = n > 256;
    pick = big ? tfq_malloc((size_t)n * sizeof *pick) : local;
    js = big ? tfq_malloc((size_t)n * sizeof *js) : js_s;
    ls = big ? tfq_malloc((size_t)n * sizeof *ls) : ls_s;
    if (!pick || !js || !ls) {
      if (big) tfq_free(pick), tfq_free(js), tfq_free(ls);
      if (!dst) tfq_tuple_free(t);
      return TFQ__OOM(st);
    }
    for (int64_t i = 0; i < n; i++) { /* RandomShuffleQueue's draw: swap-with-last */
      uint32_t j = tfq__pcg32_bounded(&p->rng, (uint32_t)p->size);
      js[i] = j;
      ls[i] = --p->size;
      pick[i] = p->slots[j];
      p->slots[j] = p->slots[p->size];
    }
  }
  rc = tfq__pl_gather(p, pick, n, !shuffle, t, js, ls, st);
  if (shuffle && js != js_s) tfq_free(js), tfq_free(ls);
  if (rc) { /* out of memory: the drawn rows go back into the buffer, nothing is lost */
    if (shuffle) {
      for (int64_t i = 0; i < n; i++) p->slots[p->size++] = pick[i];
      tfq__pl_ring_reload(p); /* the ring was not touched: it follows the slots again */
    }
    if (shuffle && pick != local) tfq_free(pick);
    if (!dst) tfq_tuple_free(t);
    return rc;
  }
  if (!dst) *out = t;
  unref_slots(p, pick, n);
  if (!shuffle) {
    memmove(p->slots, p->slots + n, (size_t)(p->size - n) * sizeof *p->slots);
    p->size -= n;
  } else if (pick != local) {
    tfq_free(pick);
  }
  p->records_out += n;
  p->batches_out++;
  tfq__pl_publish(p);
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_pipeline_next(tfq_pipeline *p, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  return next_batch(p, NULL, out, st);
}

tfq_code tfq_pipeline_next_into(tfq_pipeline *p, tfq_tuple *dst, tfq_status *st) {
  if (!dst || tfq_tuple_size(dst) != p->nslots)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "the output tuple has %zu slots for %zu (tfq_pipeline_num_slots)",
                          dst ? tfq_tuple_size(dst) : 0, p->nslots);
  return next_batch(p, dst, NULL, st);
}

/* ---- the rest ---- */

size_t tfq_pipeline_num_columns(const tfq_pipeline *p) { return p->ncols; }
size_t tfq_pipeline_num_slots(const tfq_pipeline *p) { return p->nslots; }
size_t tfq_pipeline_column_slot(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].slot : (size_t)-1;
}
int tfq_pipeline_column_is_sparse(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].sparse : 0;
}
int tfq_pipeline_column_is_ragged(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].seq && p->o.ragged : 0;
}
const char *tfq_pipeline_column_name(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].name : NULL;
}
tfq_dtype tfq_pipeline_column_dtype(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].dtype : (tfq_dtype)0;
}
int tfq_pipeline_column_rank(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].rank : -1;
}
const int64_t *tfq_pipeline_column_dims(const tfq_pipeline *p, size_t i) {
  return i < p->ncols ? p->cols[i].dims : NULL;
}

tfq_code tfq_pipeline_get_stats(tfq_pipeline *p, tfq_pipeline_stats *out, tfq_status *st) {
  if (!out || out->size == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "stats.size must be set");
  tfq_pipeline_stats s;
  memset(&s, 0, sizeof s);
  s.size = out->size < sizeof s ? out->size : sizeof s;
  s.seed = p->seed;
  s.records_read = atomic_load(&p->records_read);
  s.bytes_read = atomic_load(&p->bytes_read);
  s.records_out = atomic_load_explicit(&p->pub[0], memory_order_relaxed);
  s.batches_out = atomic_load_explicit(&p->pub[1], memory_order_relaxed);
  s.bad_records = atomic_load_explicit(&p->pub[2], memory_order_relaxed);
  s.records_dropped = atomic_load_explicit(&p->pub[3], memory_order_relaxed);
  s.buffer_records = atomic_load_explicit(&p->pub[4], memory_order_relaxed);
  s.buffer_capacity = p->capacity;
  s.epoch = atomic_load_explicit(&p->epoch_pub, memory_order_relaxed);
  s.files = (int64_t)p->nfiles;
  memcpy(out, &s, s.size);
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_pipeline_stop(tfq_pipeline *p) {
  if (!p) return;
  atomic_store(&p->stopped, 1);
  tfq__lock(&p->mu);
  p->stopping = 1;
  pthread_cond_broadcast(&p->cv_work);
  pthread_cond_broadcast(&p->cv_cons);
  tfq__unlock(&p->mu);
  if (p->cancel) tfq_cancel_trigger(p->cancel);
}

void tfq_pipeline_free(tfq_pipeline *p) {
  if (!p) return;
  tfq_pipeline_stop(p);
  for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
  tfq_free(p->threads);
  for (uint64_t i = 0; p->ready && i < p->window; i++) {
    pl_chunk *c = p->ready[i];
    if (!c) continue;
    for (pl_part *q = c->head; q;) {
      pl_part *next = q->next;
      tfq__pl_part_free(q, p->ncols);
      q = next;
    }
    tfq_free(c);
  }
  tfq_free(p->ready);
  for (int64_t i = 0; i < p->size; i++) unref(p, p->slots[i].part, 1);
  tfq_free(p->slots);
  for (size_t c = 0; p->ring && c < p->ncols; c++) tfq_free(p->ring[c]);
  tfq_free(p->ring);
  while (p->stream) unref(p, stream_pop(p), 1);
  if (p->error) tfq__pl_part_free(p->error, p->ncols);
  tfq__pl_pool_free(p);
  tfq__pl_source_free(p);
  for (size_t i = 0; i < p->ncols; i++) tfq_free(p->cols[i].name);
  tfq_free(p->cols);
  for (size_t i = 0; i < p->nfiles; i++) tfq_free(p->files[i].path);
  tfq_free(p->files);
  tfq_csv_options_free(p->csv_owned);
  tfq_example_config_free(p->seq_cfg);
  tfq_example_config_free(p->features_cfg);
  tfq_cancel_free(p->cancel);
  for (size_t i = 0; i < p->o.nfiles; i++) tfq_free(p->o.files[i]);
  tfq_free(p->o.files);
  tfq_free(p->o.columns);
  tfq_free(p->o.select_cols);
  tfq_free(p->o.sample_file);
  tfq_free(p->o.na_value);
  pthread_mutex_destroy(&p->src_mu);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->pool_mu);
  pthread_cond_destroy(&p->cv_cons);
  pthread_cond_destroy(&p->cv_work);
  tfq_free(p);
}
