/* Queue semantics and latency (W3 of bench/README.md, the parts bench_queue.c does not
 * measure), for tfq's four queue kinds (FIFOQueue, PaddingFIFOQueue, PriorityQueue,
 * RandomShuffleQueue with min_after_dequeue 0), 8-byte items (one int64 scalar), against a naive
 * mutex + condvar ring (one mutex, two condvars, signal on every op, close = flag + broadcast):
 *
 *  pingpong  round-trip time over two queues with one element bounced between two threads on
 *            different CPUs (p50 / p99 / mean ns, voluntary context switches per round trip);
 *            the limit is a cache-line ping-pong (two atomics, busy-wait).
 *  close     time from close() to the last of W blocked threads returning: W dequeuers blocked on
 *            an empty queue woken by close() (OUT_OF_RANGE) and by close(cancel_pending_enqueues)
 *            (OUT_OF_RANGE), and W enqueuers blocked on a full queue woken by
 *            close(cancel_pending_enqueues) (CANCELLED); median and max over --reps.
 *  layout    items/s of single enqueue/dequeue with capacities 1 and 10,000 in the 1P1C, 1P2C and
 *            2P1C layouts, with voluntary context switches per 1,000 items.
 *
 *   bench_queue_lat [--quick] [--seconds S] [--runs N] [--reps N] [--waiters W] [--no-pin]
 *                   [--only pingpong,close,layout]
 *
 * Checks: ping-pong values come back unchanged; every close wakes every waiter with the expected
 * code; layout runs deliver every item once (count and sum) and, for FIFO, PaddingFIFO and the
 * naive ring, in per-producer order.  Output: a readable table plus one `ROW {json}` per figure
 * (bench/report.py reads them).  Exit status is nonzero only for a failed check or setup. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_RUNS 50
#define MAX_WAITERS 16
#define MAX_RTT 400000

static struct {
  double seconds;
  int runs, reps, waiters, pin;
  const char *only;
} g_opt = {0.3, 3, 15, 4, 1, NULL};

static int g_cpus[64], g_ncpus;
static int g_failed;

static _Noreturn void die(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_queue_lat: %s%s%s\n", what, st ? ": " : "",
          st ? tfq_status_message(st) : "");
  exit(2);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* q-quantile of v[0..n) (sorts v). */
static double quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)(q * (n - 1) + 0.5);
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void pin_self(int slot) {
  if (!g_opt.pin || g_ncpus < 2) return;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(g_cpus[slot % g_ncpus], &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static long vcsw_self(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw;
}

/* ---- naive ring: one mutex, two condvars, signal on every op, close = flag + broadcast ---- */

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t not_full, not_empty;
  int64_t *buf, cap, head, count;
  int closed;
} naive_ring;

static naive_ring *naive_new(int64_t cap) {
  naive_ring *r = calloc(1, sizeof *r);
  if (!r || !(r->buf = malloc((size_t)cap * sizeof *r->buf))) die("out of memory", NULL);
  r->cap = cap;
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->not_full, NULL);
  pthread_cond_init(&r->not_empty, NULL);
  return r;
}

static void naive_free(naive_ring *r) {
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->not_full);
  pthread_cond_destroy(&r->not_empty);
  free(r->buf);
  free(r);
}

/* 0, or -1 when the ring is closed (a blocked push fails, as after a cancelling close). */
static int naive_push(naive_ring *r, int64_t v) {
  pthread_mutex_lock(&r->mu);
  while (r->count == r->cap && !r->closed) pthread_cond_wait(&r->not_full, &r->mu);
  if (r->closed) {
    pthread_mutex_unlock(&r->mu);
    return -1;
  }
  int64_t i = r->head + r->count;
  r->buf[i >= r->cap ? i - r->cap : i] = v;
  r->count++;
  pthread_cond_signal(&r->not_empty);
  pthread_mutex_unlock(&r->mu);
  return 0;
}

/* 0, or -1 when the ring is closed and empty. */
static int naive_pop(naive_ring *r, int64_t *v) {
  pthread_mutex_lock(&r->mu);
  while (r->count == 0 && !r->closed) pthread_cond_wait(&r->not_empty, &r->mu);
  if (r->count == 0) {
    pthread_mutex_unlock(&r->mu);
    return -1;
  }
  *v = r->buf[r->head];
  r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
  r->count--;
  pthread_cond_signal(&r->not_full);
  pthread_mutex_unlock(&r->mu);
  return 0;
}

static void naive_close(naive_ring *r) {
  pthread_mutex_lock(&r->mu);
  r->closed = 1;
  pthread_cond_broadcast(&r->not_empty);
  pthread_cond_broadcast(&r->not_full);
  pthread_mutex_unlock(&r->mu);
}

/* ---- one queue of either implementation -------------------------------------------------- */

typedef enum { IMPL_TFQ, IMPL_NAIVE, IMPL_SPIN } impl_id;

typedef struct {
  impl_id impl;
  tfq_queue_kind kind;
} qkind;

static const qkind k_kinds[] = {{IMPL_TFQ, TFQ_QUEUE_FIFO},
                                {IMPL_TFQ, TFQ_QUEUE_PADDING_FIFO},
                                {IMPL_TFQ, TFQ_QUEUE_PRIORITY},
                                {IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE},
                                {IMPL_NAIVE, TFQ_QUEUE_FIFO}};
#define NKINDS (sizeof k_kinds / sizeof k_kinds[0])

static const char *impl_str(impl_id i) {
  return i == IMPL_TFQ ? "tfq" : i == IMPL_NAIVE ? "naive_ring" : "spin";
}
static const char *kind_str(const qkind *k) {
  return k->impl == IMPL_TFQ     ? tfq_queue_kind_name(k->kind)
         : k->impl == IMPL_NAIVE ? "naive-ring"
                                 : "cache-line";
}
/* Per-producer order is a property of the kind. */
static int ordered(const qkind *k) {
  return k->impl == IMPL_NAIVE || k->kind == TFQ_QUEUE_FIFO || k->kind == TFQ_QUEUE_PADDING_FIFO;
}

typedef struct {
  qkind k;
  tfq_queue *tq;
  naive_ring *nr;
} lq;

static void lq_init(lq *q, const qkind *k, int64_t cap) {
  q->k = *k;
  q->tq = NULL;
  q->nr = NULL;
  if (k->impl == IMPL_NAIVE) {
    q->nr = naive_new(cap);
    return;
  }
  tfq_status *st = tfq_status_new();
  tfq_spec *spec;
  tfq_queue_options *o;
  if (!st || tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "x", st) ||
      tfq_queue_options_new(&o, st))
    die("queue setup", st);
  tfq_queue_options_set_capacity(o, cap);
  if (tfq_queue_new(k->kind, spec, o, &q->tq, st)) die("tfq_queue_new", st);
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  tfq_status_free(st);
}

static void lq_free(lq *q) {
  if (q->tq) tfq_queue_free(q->tq);
  if (q->nr) naive_free(q->nr);
}

/* A thread's scratch for tfq calls: a status and a reusable output tuple. */
typedef struct {
  tfq_status *st;
  tfq_tuple *out;
} scratch;

static void scratch_init(scratch *s, const lq *q) {
  if (!(s->st = tfq_status_new())) die("out of memory", NULL);
  s->out = NULL;
  if (q->tq && tfq_tuple_new(tfq_spec_size(tfq_queue_spec(q->tq)), &s->out, s->st))
    die("tuple", s->st);
}

static void scratch_free(scratch *s) {
  tfq_tuple_free(s->out);
  tfq_status_free(s->st);
}

/* TFQ_OK, or the failing code (naive ring: TFQ_CANCELLED when closed). */
static tfq_code lq_put(lq *q, int64_t v, scratch *s) {
  if (q->nr) return naive_push(q->nr, v) ? TFQ_CANCELLED : TFQ_OK;
  const void *comps[2] = {&v, &v}; /* PriorityQueue: priority = value */
  size_t n = q->k.kind == TFQ_QUEUE_PRIORITY ? 2 : 1;
  return tfq_queue_enqueue_from(q->tq, comps, n, NULL, TFQ_NO_TIMEOUT, s->st);
}

static tfq_code lq_get(lq *q, int64_t *v, scratch *s) {
  if (q->nr) return naive_pop(q->nr, v) ? TFQ_OUT_OF_RANGE : TFQ_OK;
  tfq_code c = tfq_queue_dequeue_into(q->tq, s->out, NULL, TFQ_NO_TIMEOUT, s->st);
  if (c == TFQ_OK)
    *v = *(const int64_t *)tfq_tensor_cdata(
        tfq_tuple_get(s->out, q->k.kind == TFQ_QUEUE_PRIORITY ? 1 : 0));
  return c;
}

static void lq_close(lq *q, int cancel_pending) {
  if (q->nr) {
    naive_close(q->nr);
    return;
  }
  tfq_status *st = tfq_status_new();
  if (!st || tfq_queue_close(q->tq, cancel_pending, NULL, TFQ_NO_TIMEOUT, st)) die("close", st);
  tfq_status_free(st);
}

static int selected(const char *test) {
  if (!g_opt.only) return 1;
  const char *p = strstr(g_opt.only, test);
  return p != NULL;
}

/* ---- ping-pong ---------------------------------------------------------------------------- */

typedef struct {
  _Alignas(64) _Atomic int64_t ping;
  _Alignas(64) _Atomic int64_t pong;
} spin_pair;

typedef struct {
  const qkind *k;
  lq q1, q2;     /* A -> B on q1, B -> A on q2 */
  spin_pair *sp; /* IMPL_SPIN */
  int64_t rounds;
  _Atomic int64_t stop_after; /* set by A: how many round trips B serves */
  long vcsw;
  int bad;
} pp_ctx;

static void *pp_echo(void *arg) {
  pp_ctx *c = arg;
  pin_self(1);
  long v0 = vcsw_self();
  scratch s;
  if (c->sp) {
    for (int64_t i = 1;; i++) {
      while (atomic_load_explicit(&c->sp->ping, memory_order_acquire) != i) CPU_RELAX();
      atomic_store_explicit(&c->sp->pong, i, memory_order_release);
      if (i == atomic_load_explicit(&c->stop_after, memory_order_relaxed)) break;
    }
  } else {
    scratch_init(&s, &c->q1);
    for (;;) {
      int64_t v;
      if (lq_get(&c->q1, &v, &s) != TFQ_OK) die("ping-pong dequeue", s.st);
      if (v < 0) break; /* the stop element */
      if (lq_put(&c->q2, v, &s) != TFQ_OK) die("ping-pong enqueue", s.st);
    }
    scratch_free(&s);
  }
  c->vcsw = vcsw_self() - v0;
  return NULL;
}

static void pingpong(const qkind *k) {
  static double rtt[MAX_RTT];
  pp_ctx c = {.k = k};
  atomic_init(&c.stop_after, -1);
  scratch s = {0};
  if (k->impl == IMPL_SPIN) {
    c.sp = aligned_alloc(64, sizeof *c.sp);
    if (!c.sp) die("out of memory", NULL);
    atomic_init(&c.sp->ping, 0);
    atomic_init(&c.sp->pong, 0);
  } else {
    lq_init(&c.q1, k, 1);
    lq_init(&c.q2, k, 1);
    scratch_init(&s, &c.q2);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, pp_echo, &c)) die("pthread_create", NULL);
  pin_self(0);
  long v0 = vcsw_self();
  int64_t n = 0, warm = 200;
  double end = 0, t_all0 = 0;
  for (int64_t i = 1; n < MAX_RTT; i++) {
    if (i == warm + 1) {
      t_all0 = now();
      end = t_all0 + g_opt.seconds;
      v0 = vcsw_self();
    }
    double t0 = now();
    if (c.sp) {
      if (i > warm && t0 > end) atomic_store(&c.stop_after, i);
      atomic_store_explicit(&c.sp->ping, i, memory_order_release);
      while (atomic_load_explicit(&c.sp->pong, memory_order_acquire) != i) CPU_RELAX();
    } else {
      int64_t v = -1;
      if (lq_put(&c.q1, i, &s) != TFQ_OK || lq_get(&c.q2, &v, &s) != TFQ_OK) die("ping-pong", s.st);
      if (v != i) c.bad = 1;
    }
    double t1 = now();
    if (i > warm) rtt[n++] = t1 - t0;
    if (c.sp && atomic_load(&c.stop_after) == i) break;
    if (i > warm && t1 > end) break;
  }
  double wall = now() - t_all0;
  long va = vcsw_self() - v0;
  if (!c.sp) {
    if (lq_put(&c.q1, -1, &s) != TFQ_OK) die("ping-pong stop", s.st);
  } else if (atomic_load(&c.stop_after) < 0) { /* MAX_RTT reached first */
    int64_t i = (int64_t)n + warm + 1;
    atomic_store(&c.stop_after, i);
    atomic_store_explicit(&c.sp->ping, i, memory_order_release);
  }
  pthread_join(th, NULL);
  if (c.sp) {
    free(c.sp);
  } else {
    scratch_free(&s);
    lq_free(&c.q1);
    lq_free(&c.q2);
  }
  double mean = wall / (double)n;
  double p50 = quantile(rtt, (int)n, 0.5), p99 = quantile(rtt, (int)n, 0.99);
  double vpr = (double)(va + c.vcsw) / (double)n;
  if (c.bad) g_failed = 1;
  printf(
      "pingpong %-10s %-19s %8lld round trips  p50 %9.0f ns  p99 %9.0f ns  mean %9.0f ns  "
      "%.3f vcsw/rt%s\n",
      impl_str(k->impl), kind_str(k), (long long)n, p50 * 1e9, p99 * 1e9, mean * 1e9, vpr,
      c.bad ? "  CHECK FAILED" : "");
  printf(
      "ROW {\"bench\":\"queue_lat\",\"test\":\"pingpong\",\"impl\":\"%s\",\"kind\":\"%s\","
      "\"rounds\":%lld,\"rtt_ns_p50\":%.0f,\"rtt_ns_p99\":%.0f,\"rtt_ns_mean\":%.0f,"
      "\"vcsw_per_rt\":%.4f,\"check_ok\":%s}\n",
      impl_str(k->impl), kind_str(k), (long long)n, p50 * 1e9, p99 * 1e9, mean * 1e9, vpr,
      c.bad ? "false" : "true");
  fflush(stdout);
}

/* ---- close latency ------------------------------------------------------------------------ */

typedef enum { SC_DEQ_CLOSE, SC_DEQ_CANCEL_CLOSE, SC_ENQ_CANCEL_CLOSE } scenario;
static const char *const k_scen[] = {"dequeuers+close", "dequeuers+cancel_close",
                                     "enqueuers+cancel_close"};

typedef struct {
  lq *q;
  scenario sc;
  _Atomic int *started;
  double t_ret;
  tfq_code code;
} cl_waiter;

static void *cl_wait(void *arg) {
  cl_waiter *w = arg;
  scratch s;
  scratch_init(&s, w->q);
  atomic_fetch_add(w->started, 1);
  int64_t v = 0;
  w->code = w->sc == SC_ENQ_CANCEL_CLOSE ? lq_put(w->q, 7, &s) : lq_get(w->q, &v, &s);
  w->t_ret = now();
  scratch_free(&s);
  return NULL;
}

static void close_latency(const qkind *k, scenario sc) {
  double lat[MAX_RUNS * 4], close_call[MAX_RUNS * 4];
  int reps = g_opt.reps, nw = g_opt.waiters, ok = 1;
  tfq_code want = sc == SC_ENQ_CANCEL_CLOSE ? TFQ_CANCELLED : TFQ_OUT_OF_RANGE;
  for (int r = 0; r < reps; r++) {
    lq q;
    lq_init(&q, k, 1);
    if (sc == SC_ENQ_CANCEL_CLOSE) { /* full: the enqueuers block */
      scratch s;
      scratch_init(&s, &q);
      if (lq_put(&q, 1, &s) != TFQ_OK) die("fill", s.st);
      scratch_free(&s);
    }
    _Atomic int started = 0;
    cl_waiter w[MAX_WAITERS];
    pthread_t th[MAX_WAITERS];
    for (int i = 0; i < nw; i++) {
      w[i] = (cl_waiter){&q, sc, &started, 0, TFQ_OK};
      if (pthread_create(&th[i], NULL, cl_wait, &w[i])) die("pthread_create", NULL);
    }
    while (atomic_load(&started) < nw) sched_yield();
    /* Long enough for every waiter to be past its spin and asleep. */
    struct timespec settle = {0, 20 * 1000 * 1000};
    nanosleep(&settle, NULL);
    double t0 = now();
    lq_close(&q, sc != SC_DEQ_CLOSE);
    close_call[r] = now() - t0;
    double last = t0;
    for (int i = 0; i < nw; i++) {
      pthread_join(th[i], NULL);
      if (w[i].code != want) ok = 0;
      if (w[i].t_ret > last) last = w[i].t_ret;
    }
    lat[r] = last - t0;
    lq_free(&q);
  }
  if (!ok) g_failed = 1;
  double mx = 0;
  for (int r = 0; r < reps; r++) mx = lat[r] > mx ? lat[r] : mx;
  double med = quantile(lat, reps, 0.5), cmed = quantile(close_call, reps, 0.5);
  printf(
      "close    %-10s %-19s %-23s %d waiters  all returned after %8.1f us median, %8.1f "
      "max (close call %.1f us)%s\n",
      impl_str(k->impl), kind_str(k), k_scen[sc], nw, med * 1e6, mx * 1e6, cmed * 1e6,
      ok ? "" : "  CHECK FAILED (a waiter returned the wrong code)");
  printf(
      "ROW {\"bench\":\"queue_lat\",\"test\":\"close\",\"scenario\":\"%s\",\"impl\":\"%s\","
      "\"kind\":\"%s\",\"waiters\":%d,\"reps\":%d,\"lat_us_median\":%.2f,\"lat_us_max\":%.2f,"
      "\"close_call_us_median\":%.2f,\"check_ok\":%s}\n",
      k_scen[sc], impl_str(k->impl), kind_str(k), nw, reps, med * 1e6, mx * 1e6, cmed * 1e6,
      ok ? "true" : "false");
  fflush(stdout);
}

/* ---- layouts and capacities ---------------------------------------------------------------- */

#define MAX_SIDE 4

typedef struct {
  lq *q;
  int producer, id, slot;
  int64_t items, sum, count, errors;
  long vcsw;
  pthread_barrier_t *start;
  double t0, t1;
} lw;

static void *lw_main(void *arg) {
  lw *w = arg;
  pin_self(w->slot);
  scratch s;
  scratch_init(&s, w->q);
  int64_t last[MAX_SIDE];
  for (int p = 0; p < MAX_SIDE; p++) last[p] = -1;
  pthread_barrier_wait(w->start);
  long v0 = vcsw_self();
  w->t0 = now();
  for (int64_t i = 0; i < w->items; i++) {
    if (w->producer) {
      int64_t v = (i << 8) | w->id;
      if (lq_put(w->q, v, &s) != TFQ_OK) die("enqueue", s.st);
      w->sum += v;
    } else {
      int64_t v;
      if (lq_get(w->q, &v, &s) != TFQ_OK) die("dequeue", s.st);
      int p = (int)(v & 0xff);
      if (p >= MAX_SIDE)
        w->errors++;
      else if (ordered(&w->q->k)) {
        if (v <= last[p]) w->errors++;
        last[p] = v;
      }
      w->sum += v;
    }
    w->count++;
  }
  w->t1 = now();
  w->vcsw = vcsw_self() - v0;
  scratch_free(&s);
  return NULL;
}

typedef struct {
  double secs, vcsw;
  int ok;
} lrun;

static lrun layout_once(const qkind *k, int np, int nc, int64_t cap, int64_t items) {
  lq q;
  lq_init(&q, k, cap);
  pthread_barrier_t b;
  pthread_barrier_init(&b, NULL, (unsigned)(np + nc));
  lw w[2 * MAX_SIDE];
  pthread_t th[2 * MAX_SIDE];
  for (int i = 0; i < np + nc; i++) {
    int prod = i < np;
    w[i] = (lw){&q, prod, prod ? i : i - np, i, items / (prod ? np : nc), 0, 0, 0, 0, &b, 0, 0};
    /* producers on CPU 0, 1, ...; consumers start on the next CPU, so 1P1C crosses CPUs */
    w[i].slot = prod ? i : i - np + 1;
    if (pthread_create(&th[i], NULL, lw_main, &w[i])) die("pthread_create", NULL);
  }
  lrun r = {0, 0, 1};
  double t0 = 1e300, t1 = 0;
  int64_t sent = 0, recv = 0, nrecv = 0;
  for (int i = 0; i < np + nc; i++) {
    pthread_join(th[i], NULL);
    t0 = w[i].t0 < t0 ? w[i].t0 : t0;
    t1 = w[i].t1 > t1 ? w[i].t1 : t1;
    r.vcsw += (double)w[i].vcsw;
    if (w[i].producer) {
      sent += w[i].sum;
    } else {
      recv += w[i].sum;
      nrecv += w[i].count;
      if (w[i].errors) r.ok = 0;
    }
  }
  if (sent != recv || nrecv != items) r.ok = 0;
  pthread_barrier_destroy(&b);
  lq_free(&q);
  r.secs = t1 - t0;
  return r;
}

static void layout(const qkind *k, int np, int nc, int64_t cap) {
  int64_t unit = (int64_t)np * nc, items = 1024 * unit;
  lrun r;
  for (;;) { /* calibration, also the warm-up */
    r = layout_once(k, np, nc, cap, items);
    if (r.secs >= g_opt.seconds / 4 || items >= ((int64_t)1 << 26)) break;
    items *= 4;
  }
  double want = (double)items * g_opt.seconds / (r.secs > 1e-6 ? r.secs : 1e-6);
  items = ((int64_t)(want / (double)unit) + 1) * unit;
  double rate[MAX_RUNS], vcsw = 0;
  int ok = r.ok;
  for (int i = 0; i < g_opt.runs; i++) {
    r = layout_once(k, np, nc, cap, items);
    rate[i] = (double)items / r.secs;
    vcsw += r.vcsw;
    ok &= r.ok;
  }
  if (!ok) g_failed = 1;
  double mn = quantile(rate, g_opt.runs, 0.0), med = quantile(rate, g_opt.runs, 0.5);
  double v1k = vcsw / ((double)items * g_opt.runs) * 1000.0;
  printf("layout   %-10s %-19s cap %-6lld %dP%dC  %12.0f items/s (min %.0f)  %8.2f vcsw/1k%s\n",
         impl_str(k->impl), kind_str(k), (long long)cap, np, nc, med, mn, v1k,
         ok ? "" : "  CHECK FAILED");
  printf(
      "ROW {\"bench\":\"queue_lat\",\"test\":\"layout\",\"impl\":\"%s\",\"kind\":\"%s\","
      "\"producers\":%d,\"consumers\":%d,\"capacity\":%lld,\"items_per_s_median\":%.0f,"
      "\"items_per_s_min\":%.0f,\"vcsw_per_1k\":%.3f,\"runs\":%d,\"check_ok\":%s}\n",
      impl_str(k->impl), kind_str(k), np, nc, (long long)cap, med, mn, v1k, g_opt.runs,
      ok ? "true" : "false");
  fflush(stdout);
}

/* ---- main ----------------------------------------------------------------------------------- */

static _Noreturn void usage(void) {
  fprintf(stderr,
          "usage: bench_queue_lat [--quick] [--seconds S] [--runs N] [--reps N] [--waiters W]\n"
          "                       [--no-pin] [--only pingpong,close,layout]\n"
          "  --quick      --seconds 0.1 --runs 1 --reps 5\n"
          "  --seconds S  duration of one ping-pong / layout run (default 0.3)\n"
          "  --runs N     measured layout runs after calibration, median reported (default 3)\n"
          "  --reps N     close repetitions (default 15, at most %d)\n"
          "  --waiters W  threads blocked when close() runs (default 4, at most %d)\n",
          MAX_RUNS * 4, MAX_WAITERS);
  exit(2);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick")) {
      g_opt.seconds = 0.1;
      g_opt.runs = 1;
      g_opt.reps = 5;
    } else if (!strcmp(a, "--no-pin"))
      g_opt.pin = 0;
    else if (v && !strcmp(a, "--seconds"))
      g_opt.seconds = atof(argv[++i]);
    else if (v && !strcmp(a, "--runs"))
      g_opt.runs = atoi(argv[++i]);
    else if (v && !strcmp(a, "--reps"))
      g_opt.reps = atoi(argv[++i]);
    else if (v && !strcmp(a, "--waiters"))
      g_opt.waiters = atoi(argv[++i]);
    else if (v && !strcmp(a, "--only"))
      g_opt.only = argv[++i];
    else
      usage();
  }
  if (g_opt.seconds <= 0 || g_opt.runs < 1 || g_opt.runs > MAX_RUNS || g_opt.reps < 1 ||
      g_opt.reps > MAX_RUNS * 4 || g_opt.waiters < 1 || g_opt.waiters > MAX_WAITERS)
    usage();
  cpu_set_t set;
  if (!sched_getaffinity(0, sizeof set, &set))
    for (int c = 0; c < CPU_SETSIZE && g_ncpus < 64; c++)
      if (CPU_ISSET(c, &set)) g_cpus[g_ncpus++] = c;
  double la = 0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &la) != 1) la = 0;
    fclose(f);
  }
  printf("W3 queue latency and semantics: 8 B items; %d CPUs%s; load average %.2f\n", g_ncpus,
         g_opt.pin && g_ncpus > 1 ? ", ping-pong and layout threads pinned" : "", la);
  printf("ENV {\"bench\":\"queue_lat\",\"cpus\":%d,\"pinned\":%s,\"loadavg\":%.2f}\n", g_ncpus,
         g_opt.pin && g_ncpus > 1 ? "true" : "false", la);
  static const qkind spin = {IMPL_SPIN, TFQ_QUEUE_FIFO};
  if (selected("pingpong")) {
    pingpong(&spin);
    for (size_t i = 0; i < NKINDS; i++) pingpong(&k_kinds[i]);
  }
  if (selected("close"))
    for (int sc = 0; sc < 3; sc++)
      for (size_t i = 0; i < NKINDS; i++) close_latency(&k_kinds[i], (scenario)sc);
  if (selected("layout")) {
    static const int lay[][2] = {{1, 1}, {1, 2}, {2, 1}};
    static const int64_t caps[] = {1, 10000};
    for (int c = 0; c < 2; c++)
      for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < NKINDS; i++) layout(&k_kinds[i], lay[l][0], lay[l][1], caps[c]);
  }
  if (g_failed) {
    printf("CHECK FAILED: a queue returned a wrong value or code, or lost items\n");
    return 1;
  }
  return 0;
}
