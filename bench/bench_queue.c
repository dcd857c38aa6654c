/* Queue microbenchmark (W3 of bench/README.md): items/s and bytes/s of the four tfq queue kinds
 * (FIFO, RandomShuffle with min_after_dequeue 1,000 and 10,000, PaddingFIFO, Priority) with 8 B,
 * 1 KiB and 64 KiB elements, single and batched ops, 1P1C and 2P2C, against a naive
 * mutex+condvar ring (the baseline) and a lock-free SPSC ring (the 8 B ceiling), with voluntary
 * and involuntary context switches per 1,000 items, and a memcpy bandwidth probe, in one run.
 *
 *   build-release/bench/bench_queue [--quick] [--runs N] [--seconds S] [--capacity C] [--no-pin]
 *                                   [--filter LIST] [--quiet]
 *
 * The benchmark is a table of configurations (implementation, queue kind, element size, op mode,
 * batch, thread layout, capacity, min_after_dequeue); every configuration is calibrated once
 * (also the warm-up), then measured --runs times, the configurations taking turns round-robin so
 * that background load hits all of them alike; a memcpy probe (512 MiB in 64 KiB chunks) runs
 * once per round.  A run moves a fixed number of items sized to take about --seconds.
 *
 * Items are an int64 id (seq << 8 | producer) plus, above 8 B, a uint8 payload with check marks;
 * consumers check the count, the sum against what the producers sent, the payload marks and
 * per-producer FIFO order (not for RandomShuffleQueue, whose prefilled items are drained and
 * counted after the timed part).  A row whose check fails is flagged.
 *
 * It prints figures; it never passes or fails on a clock.  Output: a readable table, one
 * `ROW {json}` line per configuration, an `ENV {json}` line, and `TARGET` lines with the ratios
 * of the acceptance targets.  Exit status is nonzero only for a failed check or setup. */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <tfq/tfq.h>
#include <time.h>

#include "bench_util.h"

#define MAX_RUNS 50
#define MAX_THREADS 16
#define MAX_PRODUCERS 8

/* ---- configurations ------------------------------------------------------------------------ */

typedef enum { IMPL_TFQ, IMPL_NAIVE, IMPL_SPSC } impl_id;
typedef enum { MODE_SINGLE, MODE_BATCH } op_mode;

typedef struct {
  impl_id impl;
  tfq_queue_kind kind; /* IMPL_TFQ only */
  int elem_bytes;      /* 8: one int64 id; more: the id + a uint8 [elem_bytes - 8] payload */
  op_mode mode;
  int batch; /* items per call in MODE_BATCH */
  int producers, consumers;
  int64_t capacity; /* 0: the --capacity option (default 1024) */
  int mad;          /* RandomShuffleQueue: min_after_dequeue (prefilled before timing) */
} bench_cfg;

#define KIB 1024
#define B64K (64 * KIB)
/* 64 KiB elements: batches of 16 (1 MiB per call) in a queue of 256 (16 MiB). */
#define CAP64K 256
/* The four layouts of one (implementation, kind, size): single 1P1C, single 2P2C, batch 1P1C,
 * batch 2P2C. */
#define ROWS4(impl, kind, eb, b, cap, mad)               \
  {impl, kind, eb, MODE_SINGLE, 1, 1, 1, cap, mad},      \
      {impl, kind, eb, MODE_SINGLE, 1, 2, 2, cap, mad},  \
      {impl, kind, eb, MODE_BATCH, b, 1, 1, cap, mad}, { \
    impl, kind, eb, MODE_BATCH, b, 2, 2, cap, mad        \
  }
#define ROWS_SIZES(impl, kind) \
  ROWS4(impl, kind, KIB, 128, 0, 0), ROWS4(impl, kind, B64K, 16, CAP64K, 0)

/* A row's ratio is taken against the naive single-op ring of the same element size and thread
 * layout (and capacity when there is one).  PriorityQueue elements carry the 8 B priority (equal
 * to the id) besides elem_bytes; PaddingFIFOQueue payloads have an unknown dim and vary in length
 * around elem_bytes - 8 (-32..+24 bytes for 1 KiB / 64 KiB, 0..7 bytes for 8 B). */
static const bench_cfg k_cfgs[] = {
    /* the original 8 B rows */
    {IMPL_NAIVE, TFQ_QUEUE_FIFO, 8, MODE_SINGLE, 1, 1, 1, 0, 0},
    {IMPL_NAIVE, TFQ_QUEUE_FIFO, 8, MODE_SINGLE, 1, 2, 2, 0, 0},
    {IMPL_NAIVE, TFQ_QUEUE_FIFO, 8, MODE_BATCH, 128, 1, 1, 0, 0},
    {IMPL_NAIVE, TFQ_QUEUE_FIFO, 8, MODE_BATCH, 128, 2, 2, 0, 0},
    {IMPL_SPSC, TFQ_QUEUE_FIFO, 8, MODE_SINGLE, 1, 1, 1, 0, 0},
    {IMPL_TFQ, TFQ_QUEUE_FIFO, 8, MODE_SINGLE, 1, 1, 1, 0, 0},
    {IMPL_TFQ, TFQ_QUEUE_FIFO, 8, MODE_SINGLE, 1, 2, 2, 0, 0},
    {IMPL_TFQ, TFQ_QUEUE_FIFO, 8, MODE_BATCH, 128, 1, 1, 0, 0},
    {IMPL_TFQ, TFQ_QUEUE_FIFO, 8, MODE_BATCH, 128, 2, 2, 0, 0},
    /* 1 KiB and 64 KiB: naive ring and FIFO */
    ROWS_SIZES(IMPL_NAIVE, TFQ_QUEUE_FIFO),
    ROWS_SIZES(IMPL_TFQ, TFQ_QUEUE_FIFO),
    /* PaddingFIFOQueue and PriorityQueue, all sizes */
    ROWS4(IMPL_TFQ, TFQ_QUEUE_PADDING_FIFO, 8, 128, 0, 0),
    ROWS_SIZES(IMPL_TFQ, TFQ_QUEUE_PADDING_FIFO),
    ROWS4(IMPL_TFQ, TFQ_QUEUE_PRIORITY, 8, 128, 0, 0),
    ROWS_SIZES(IMPL_TFQ, TFQ_QUEUE_PRIORITY),
    /* RandomShuffleQueue, capacity min_after_dequeue + 1024 */
    ROWS4(IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, 8, 128, 1000 + 1024, 1000),
    ROWS4(IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, KIB, 128, 1000 + 1024, 1000),
    ROWS4(IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, B64K, 16, 1000 + 1024, 1000),
    ROWS4(IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, 8, 128, 10000 + 1024, 10000),
    ROWS4(IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, KIB, 128, 10000 + 1024, 10000),
    /* 64 KiB with 10,000 prefilled elements holds 655 MB: one row */
    {IMPL_TFQ, TFQ_QUEUE_RANDOM_SHUFFLE, B64K, MODE_BATCH, 16, 1, 1, 10000 + 1024, 10000},
};
#define NCFG (sizeof k_cfgs / sizeof k_cfgs[0])

static const char *impl_name(const bench_cfg *c) {
  switch (c->impl) {
    case IMPL_TFQ: return tfq_queue_kind_name(c->kind);
    case IMPL_NAIVE: return "naive-ring";
    case IMPL_SPSC: return "spsc-ring";
  }
  return "?";
}

static void cfg_label(const bench_cfg *c, char *buf, size_t cap) {
  char mad[24] = "";
  if (c->mad) snprintf(mad, sizeof mad, "(mad%d)", c->mad);
  snprintf(buf, cap, "%s%s/%dB/%s/%dP%dC", impl_name(c), mad, c->elem_bytes,
           c->mode == MODE_SINGLE ? "single" : "batch", c->producers, c->consumers);
}

/* ---- options ------------------------------------------------------------------------------- */

static struct {
  int runs;
  double seconds;
  int64_t capacity;
  int pin;
  const char *filter;
  int quiet;
  int64_t memcpy_mib; /* bytes copied by one memcpy probe */
} g_opt = {5, 0.2, 1024, 1, NULL, 0, 512};

static int64_t cfg_capacity(const bench_cfg *c) {
  return c->capacity ? c->capacity : g_opt.capacity;
}

static int g_cpus[MAX_THREADS];
static int g_ncpus;

/* ---- small helpers ------------------------------------------------------------------------- */

static _Noreturn void die_st(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_queue: %s: %s: %s\n", what, tfq_code_name(tfq_status_code(st)),
          tfq_status_message(st));
  exit(2);
}

static _Noreturn void die(const char *what) {
  fprintf(stderr, "bench_queue: %s\n", what);
  exit(2);
}

static double ts_sec(const struct timespec *t) { return (double)t->tv_sec + 1e-9 * t->tv_nsec; }
static double tv_sec(const struct timeval *t) { return (double)t->tv_sec + 1e-6 * t->tv_usec; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
  double s[MAX_RUNS];
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- element layout ------------------------------------------------------------------------
 * An item is an int64 id (seq << 8 | producer) and, above 8 B, a uint8 payload whose first and last
 * bytes are marks derived from seq (the consumers check them). */

#define PREFILL_ID (MAX_PRODUCERS - 1) /* producer id of RandomShuffleQueue's prefilled items */

static int is_kind(const bench_cfg *c, tfq_queue_kind k) {
  return c->impl == IMPL_TFQ && c->kind == k;
}

/* Payload length of item `seq` (uniform within one enqueue_many). */
static int64_t plen(const bench_cfg *c, int64_t seq) {
  int64_t p = c->elem_bytes - 8;
  if (!is_kind(c, TFQ_QUEUE_PADDING_FIFO)) return p;
  int64_t j = (seq / (c->mode == MODE_BATCH ? c->batch : 1)) % 8;
  return p >= 64 ? p - 32 + 8 * j : j;
}

static inline uint8_t mark0(int64_t seq) { return (uint8_t)(seq * 31 + 1); }
static inline uint8_t mark1(int64_t seq) { return (uint8_t)(seq * 17 + 5); }

/* A one-byte payload holds mark1 only. */
static inline void put_marks(uint8_t *p, int64_t len, int64_t seq) {
  if (len > 0) {
    p[0] = mark0(seq);
    p[len - 1] = mark1(seq);
  }
}

static inline int marks_ok(const uint8_t *p, int64_t len, int64_t seq) {
  return len <= 0 || (p[len - 1] == mark1(seq) && (len == 1 || p[0] == mark0(seq)));
}

/* ---- naive baseline: bounded ring, one mutex, two condvars, signal on every op ------------- */

typedef struct {
  pthread_mutex_t mu; /* default (non-adaptive) mutex */
  pthread_cond_t not_full, not_empty;
  uint8_t *buf;
  int64_t cap, head, count;
  size_t esz; /* bytes per slot (= elem_bytes) */
} naive_ring;

static naive_ring *naive_new(int64_t cap, size_t esz) {
  naive_ring *r = calloc(1, sizeof *r);
  if (!r || !(r->buf = malloc((size_t)cap * esz))) die("out of memory");
  r->cap = cap;
  r->esz = esz;
  if (pthread_mutex_init(&r->mu, NULL) || pthread_cond_init(&r->not_full, NULL) ||
      pthread_cond_init(&r->not_empty, NULL))
    die("naive ring init");
  return r;
}

static void naive_free(naive_ring *r) {
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->not_full);
  pthread_cond_destroy(&r->not_empty);
  free(r->buf);
  free(r);
}

static inline void slot_copy(void *dst, const void *src, size_t esz) {
  if (esz == 8)
    memcpy(dst, src, 8); /* the 8 B case compiles to a move */
  else
    memcpy(dst, src, esz);
}

/* One item per lock acquisition. */
static void naive_push(naive_ring *r, const void *v) {
  pthread_mutex_lock(&r->mu);
  while (r->count == r->cap) pthread_cond_wait(&r->not_full, &r->mu);
  int64_t i = r->head + r->count;
  slot_copy(r->buf + (size_t)(i >= r->cap ? i - r->cap : i) * r->esz, v, r->esz);
  r->count++;
  pthread_cond_signal(&r->not_empty);
  pthread_mutex_unlock(&r->mu);
}

static void naive_pop(naive_ring *r, void *v) {
  pthread_mutex_lock(&r->mu);
  while (r->count == 0) pthread_cond_wait(&r->not_empty, &r->mu);
  slot_copy(v, r->buf + (size_t)r->head * r->esz, r->esz);
  r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
  r->count--;
  pthread_cond_signal(&r->not_full);
  pthread_mutex_unlock(&r->mu);
}

/* Batched variant (informational): moves as many items as fit per lock hold.  Signals are
 * chained (a waker passes the signal on while room or items remain) so no waiter is stranded
 * when one call moves many items. */
static void naive_push_n(naive_ring *r, const uint8_t *v, int64_t n) {
  pthread_mutex_lock(&r->mu);
  while (n > 0) {
    while (r->count == r->cap) pthread_cond_wait(&r->not_full, &r->mu);
    int64_t k = r->cap - r->count < n ? r->cap - r->count : n;
    for (int64_t j = 0; j < k; j++) {
      int64_t i = r->head + r->count + j;
      slot_copy(r->buf + (size_t)(i >= r->cap ? i - r->cap : i) * r->esz, v, r->esz);
      v += r->esz;
    }
    r->count += k;
    n -= k;
    pthread_cond_signal(&r->not_empty);
  }
  if (r->count < r->cap) pthread_cond_signal(&r->not_full);
  pthread_mutex_unlock(&r->mu);
}

static void naive_pop_n(naive_ring *r, uint8_t *v, int64_t n) {
  pthread_mutex_lock(&r->mu);
  while (n > 0) {
    while (r->count == 0) pthread_cond_wait(&r->not_empty, &r->mu);
    int64_t k = r->count < n ? r->count : n;
    for (int64_t j = 0; j < k; j++) {
      slot_copy(v, r->buf + (size_t)r->head * r->esz, r->esz);
      v += r->esz;
      r->head = r->head + 1 == r->cap ? 0 : r->head + 1;
    }
    r->count -= k;
    n -= k;
    pthread_cond_signal(&r->not_full);
  }
  if (r->count > 0) pthread_cond_signal(&r->not_empty);
  pthread_mutex_unlock(&r->mu);
}

/* ---- ceiling: lock-free SPSC ring, cached indices, busy-wait ------------------------------- */

typedef struct {
  _Alignas(64) _Atomic int64_t tail; /* written by the producer */
  int64_t head_cache;                /* producer's copy of head */
  _Alignas(64) _Atomic int64_t head; /* written by the consumer */
  int64_t tail_cache;                /* consumer's copy of tail */
  _Alignas(64) int64_t *buf;
  int64_t mask;
} spsc_ring;

static spsc_ring *spsc_new(int64_t cap) {
  int64_t c = 1;
  while (c < cap) c <<= 1;
  spsc_ring *r = aligned_alloc(64, sizeof(spsc_ring));
  if (!r) die("out of memory");
  memset(r, 0, sizeof *r);
  size_t bytes = ((size_t)c * sizeof(int64_t) + 63) & ~(size_t)63; /* aligned_alloc: a multiple */
  if (!(r->buf = aligned_alloc(64, bytes))) die("out of memory");
  r->mask = c - 1;
  atomic_init(&r->tail, 0);
  atomic_init(&r->head, 0);
  return r;
}

static void spsc_free(spsc_ring *r) {
  free(r->buf);
  free(r);
}

static void spsc_push(spsc_ring *r, int64_t v) {
  int64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  while (t - r->head_cache > r->mask) {
    r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
    if (t - r->head_cache > r->mask) CPU_RELAX();
  }
  r->buf[t & r->mask] = v;
  atomic_store_explicit(&r->tail, t + 1, memory_order_release);
}

static int64_t spsc_pop(spsc_ring *r) {
  int64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
  while (h == r->tail_cache) {
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (h == r->tail_cache) CPU_RELAX();
  }
  int64_t v = r->buf[h & r->mask];
  atomic_store_explicit(&r->head, h + 1, memory_order_release);
  return v;
}

/* ---- one run ------------------------------------------------------------------------------- */

typedef struct run_ctx run_ctx;

typedef struct {
  run_ctx *rc;
  int producer; /* 1 producer, 0 consumer */
  int id;       /* index within its role (< MAX_PRODUCERS for producers) */
  int cpu;      /* -1: not pinned */
  int64_t items;
  /* results */
  int64_t sum, count, order_errors;
  struct timespec t0, t1;
  struct rusage ru0, ru1;
  pthread_t th;
} worker;

struct run_ctx {
  const bench_cfg *cfg;
  pthread_barrier_t start;
  tfq_queue *tq;
  naive_ring *nr;
  spsc_ring *sr;
};

static inline int64_t item_value(int64_t seq, int producer) {
  return (int64_t)((uint64_t)seq << 8) | producer;
}

/* Consumer-side check: per producer, values arrive in increasing order (not checked for
 * RandomShuffleQueue, whose order is random by design). */
static inline void take(worker *w, int64_t *last, int64_t v) {
  int p = (int)(v & 0xff);
  if (p >= MAX_PRODUCERS)
    w->order_errors++;
  else if (!is_kind(w->rc->cfg, TFQ_QUEUE_RANDOM_SHUFFLE)) {
    if (v <= last[p])
      w->order_errors++;
    else
      last[p] = v;
  }
  w->sum += v;
  w->count++;
}

/* Builds the tuples given to enqueue / enqueue_many: [priority,] x [, payload].  Tensors are
 * reused while the producer holds their only reference and their shape fits; otherwise (the
 * queue kept a reference, or a PaddingFIFOQueue length changed) a new one is made. */
typedef struct {
  tfq_tuple *t;
  int xi, ncomp; /* index of x (1 for PriorityQueue, whose priority is component 0) */
  int64_t rows;  /* 0: single element */
  int64_t allocs;
  tfq_status *st;
} tbuilder;

static void tb_init(tbuilder *b, const bench_cfg *c, int64_t rows) {
  b->xi = is_kind(c, TFQ_QUEUE_PRIORITY);
  b->ncomp = b->xi + 1 + (c->elem_bytes > 8 || is_kind(c, TFQ_QUEUE_PADDING_FIFO) ? 1 : 0);
  b->rows = rows;
  b->allocs = 0;
  if (!(b->st = tfq_status_new()) || tfq_tuple_new((size_t)b->ncomp, &b->t, b->st))
    die_st("tuple setup", b->st);
}

static void tb_free(tbuilder *b) {
  tfq_tuple_free(b->t);
  tfq_status_free(b->st);
}

/* Fills rows seq0.. of producer `id`, adding their values to *sum. */
static void tb_fill(tbuilder *b, const bench_cfg *c, int64_t seq0, int id, int64_t *sum) {
  int many = b->rows > 0;
  int64_t n = many ? b->rows : 1, len = plen(c, seq0);
  for (int k = 0; k < b->ncomp; k++) {
    int payload = k > b->xi;
    tfq_tensor *x = tfq_tuple_get(b->t, (size_t)k);
    int64_t dims[2] = {n, len};
    int rank = many + payload;
    const int64_t *d = many ? dims : dims + 1;
    if (!x || tfq_tensor_refcount(x) != 1 || (payload && tfq_tensor_dim(x, rank - 1) != len)) {
      if (tfq_tensor_new(payload ? TFQ_UINT8 : TFQ_INT64, d, rank, &x, b->st))
        die_st("tensor", b->st);
      tfq_tuple_set_take(b->t, (size_t)k, x);
      b->allocs++;
    }
    if (!payload) {
      int64_t *v = tfq_tensor_data(x);
      for (int64_t j = 0; j < n; j++) v[j] = item_value(seq0 + j, id);
    } else {
      uint8_t *p = tfq_tensor_data(x);
      for (int64_t j = 0; j < n; j++) put_marks(p + j * len, len, seq0 + j);
    }
  }
  for (int64_t j = 0; j < n; j++) *sum += item_value(seq0 + j, id);
}

static void tfq_produce(worker *w) {
  const bench_cfg *c = w->rc->cfg;
  int many = c->mode == MODE_BATCH;
  tbuilder b;
  tb_init(&b, c, many ? c->batch : 0);
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  if (!many && !is_kind(c, TFQ_QUEUE_PADDING_FIFO)) {
    /* Fixed-size components: the element goes in from caller memory (tfq_queue_enqueue_from),
     * as the naive ring's producer pushes its buffer: [priority,] x [, payload]. */
    int64_t len = c->elem_bytes - 8, v, pri;
    uint8_t *pay = len > 0 ? malloc((size_t)len) : NULL;
    if (len > 0 && !pay) die("out of memory");
    const void *rows[3];
    int n = 0;
    if (b.xi) rows[n++] = &pri;
    rows[n++] = &v;
    if (pay) rows[n++] = pay;
    for (int64_t i = 0; i < w->items; i++) {
      v = pri = item_value(i, w->id);
      w->sum += v;
      if (pay) put_marks(pay, len, i);
      if (tfq_queue_enqueue_from(w->rc->tq, rows, (size_t)n, NULL, TFQ_NO_TIMEOUT, b.st))
        die_st("enqueue_from", b.st);
    }
    free(pay);
    b.allocs = b.ncomp; /* no tensors were needed */
  } else if (!many) {
    for (int64_t i = 0; i < w->items; i++) {
      tb_fill(&b, c, i, w->id, &w->sum); /* reuse is legitimate: the queue copied the bytes */
      if (tfq_queue_enqueue(w->rc->tq, b.t, NULL, TFQ_NO_TIMEOUT, b.st)) die_st("enqueue", b.st);
    }
  } else {
    for (int64_t i = 0; i < w->items; i += c->batch) {
      tb_fill(&b, c, i, w->id, &w->sum);
      if (tfq_queue_enqueue_many(w->rc->tq, b.t, NULL, TFQ_NO_TIMEOUT, b.st))
        die_st("enqueue_many", b.st);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
  w->count = w->items;
  /* Fixed shapes: the tensors are built once and the queue must copy dense data. */
  if (!is_kind(c, TFQ_QUEUE_PADDING_FIFO) && b.allocs != b.ncomp)
    die("the queue kept a reference to a dense enqueued tensor");
  tb_free(&b);
}

/* Checks one dequeued tuple of n rows (n == 0: a single element) and takes its values. */
static void check_tuple(worker *w, int64_t *last, const tfq_tuple *out, int64_t n) {
  const bench_cfg *c = w->rc->cfg;
  int xi = is_kind(c, TFQ_QUEUE_PRIORITY);
  int has_payload = c->elem_bytes > 8 || is_kind(c, TFQ_QUEUE_PADDING_FIFO);
  int many = n > 0;
  int64_t rows = many ? n : 1;
  const tfq_tensor *x = tfq_tuple_get(out, (size_t)xi);
  if (tfq_tensor_rank(x) != many || (many && tfq_tensor_dim(x, 0) != n))
    die("dequeue returned a wrong shape");
  const int64_t *v = tfq_tensor_cdata(x);
  const int64_t *pri = xi ? tfq_tensor_cdata(tfq_tuple_get(out, 0)) : NULL;
  const uint8_t *pay = NULL;
  int64_t stride = 0;
  if (has_payload) {
    const tfq_tensor *p = tfq_tuple_get(out, (size_t)xi + 1);
    if (tfq_tensor_rank(p) != many + 1 || (many && tfq_tensor_dim(p, 0) != n))
      die("dequeue returned a wrong payload shape");
    stride = tfq_tensor_dim(p, many);
    pay = tfq_tensor_cdata(p);
  }
  for (int64_t j = 0; j < rows; j++) {
    int64_t seq = v[j] >> 8, len = plen(c, seq);
    if (pri && pri[j] != v[j]) w->order_errors++;
    if (has_payload &&
        ((many ? stride < len : stride != len) || !marks_ok(pay + j * stride, len, seq)))
      w->order_errors++;
    take(w, last, v[j]);
  }
}

static void tfq_consume(worker *w) {
  const bench_cfg *c = w->rc->cfg;
  tfq_status *st = tfq_status_new();
  if (!st) die("out of memory");
  int64_t last[MAX_PRODUCERS];
  for (int p = 0; p < MAX_PRODUCERS; p++) last[p] = -1;
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  if (c->mode == MODE_SINGLE) {
    /* A steady consumer reuses its tuple (tfq_queue_dequeue_into): fixed-size components are
     * overwritten in place, so the loop allocates nothing, like the naive ring's consumer. */
    tfq_tuple *out;
    if (tfq_tuple_new(tfq_spec_size(tfq_queue_spec(w->rc->tq)), &out, st)) die_st("tuple", st);
    for (int64_t i = 0; i < w->items; i++) {
      if (tfq_queue_dequeue_into(w->rc->tq, out, NULL, TFQ_NO_TIMEOUT, st)) die_st("dequeue", st);
      check_tuple(w, last, out, 0);
    }
    tfq_tuple_free(out);
  } else {
    for (int64_t i = 0; i < w->items; i += c->batch) {
      tfq_tuple *out;
      if (tfq_queue_dequeue_many(w->rc->tq, c->batch, &out, NULL, TFQ_NO_TIMEOUT, st))
        die_st("dequeue_many", st);
      check_tuple(w, last, out, c->batch);
      tfq_tuple_free(out);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
  tfq_status_free(st);
}

static uint8_t *naive_elems(const bench_cfg *c) {
  uint8_t *buf = malloc((size_t)c->batch * (size_t)c->elem_bytes);
  if (!buf) die("out of memory");
  return buf;
}

static inline void naive_fill(uint8_t *e, const bench_cfg *c, int64_t v) {
  memcpy(e, &v, 8);
  put_marks(e + 8, c->elem_bytes - 8, v >> 8);
}

static inline void naive_check(worker *w, int64_t *last, const uint8_t *e) {
  const bench_cfg *c = w->rc->cfg;
  int64_t v;
  memcpy(&v, e, 8);
  if (!marks_ok(e + 8, c->elem_bytes - 8, v >> 8)) w->order_errors++;
  take(w, last, v);
}

static void naive_produce(worker *w) {
  const bench_cfg *c = w->rc->cfg;
  naive_ring *r = w->rc->nr;
  uint8_t *buf = naive_elems(c);
  size_t esz = (size_t)c->elem_bytes;
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  if (c->mode == MODE_SINGLE) {
    for (int64_t i = 0; i < w->items; i++) {
      int64_t v = item_value(i, w->id);
      w->sum += v;
      naive_fill(buf, c, v);
      naive_push(r, buf);
    }
  } else {
    for (int64_t i = 0; i < w->items; i += c->batch) {
      for (int j = 0; j < c->batch; j++) {
        int64_t v = item_value(i + j, w->id);
        w->sum += v;
        naive_fill(buf + (size_t)j * esz, c, v);
      }
      naive_push_n(r, buf, c->batch);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
  w->count = w->items;
  free(buf);
}

static void naive_consume(worker *w) {
  const bench_cfg *c = w->rc->cfg;
  naive_ring *r = w->rc->nr;
  uint8_t *buf = naive_elems(c);
  size_t esz = (size_t)c->elem_bytes;
  int64_t last[MAX_PRODUCERS];
  for (int p = 0; p < MAX_PRODUCERS; p++) last[p] = -1;
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  if (c->mode == MODE_SINGLE) {
    for (int64_t i = 0; i < w->items; i++) {
      naive_pop(r, buf);
      naive_check(w, last, buf);
    }
  } else {
    for (int64_t i = 0; i < w->items; i += c->batch) {
      naive_pop_n(r, buf, c->batch);
      for (int j = 0; j < c->batch; j++) naive_check(w, last, buf + (size_t)j * esz);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
  free(buf);
}

static void spsc_produce(worker *w) {
  spsc_ring *r = w->rc->sr;
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  for (int64_t i = 0; i < w->items; i++) {
    int64_t v = item_value(i, w->id);
    w->sum += v;
    spsc_push(r, v);
  }
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
  w->count = w->items;
}

static void spsc_consume(worker *w) {
  spsc_ring *r = w->rc->sr;
  int64_t last[MAX_PRODUCERS];
  for (int p = 0; p < MAX_PRODUCERS; p++) last[p] = -1;
  pthread_barrier_wait(&w->rc->start);
  getrusage(RUSAGE_THREAD, &w->ru0);
  clock_gettime(CLOCK_MONOTONIC, &w->t0);
  for (int64_t i = 0; i < w->items; i++) take(w, last, spsc_pop(r));
  clock_gettime(CLOCK_MONOTONIC, &w->t1);
  getrusage(RUSAGE_THREAD, &w->ru1);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  if (w->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
  }
  switch (w->rc->cfg->impl) {
    case IMPL_TFQ: w->producer ? tfq_produce(w) : tfq_consume(w); break;
    case IMPL_NAIVE: w->producer ? naive_produce(w) : naive_consume(w); break;
    case IMPL_SPSC: w->producer ? spsc_produce(w) : spsc_consume(w); break;
  }
  return NULL;
}

typedef struct {
  double secs;        /* wall time from the first worker's start to the last worker's end */
  double vcsw, ivcsw; /* summed over the workers */
  double cpu;         /* user + system seconds, summed over the workers */
  int ok;             /* count, sum and order checks passed */
} run_result;

/* RandomShuffleQueue: enqueues min_after_dequeue items (producer PREFILL_ID) before timing, so
 * that dequeues can proceed from the start; returns their sum. */
static int64_t prefill(const bench_cfg *c, tfq_queue *q) {
  int64_t sum = 0, chunk = 125; /* divides 1,000 and 10,000 */
  tbuilder b;
  tb_init(&b, c, chunk);
  for (int64_t i = 0; i < c->mad; i += chunk) {
    if (c->mad - i < chunk) die("min_after_dequeue must be a multiple of 125");
    tb_fill(&b, c, i, PREFILL_ID, &sum);
    if (tfq_queue_enqueue_many(q, b.t, NULL, TFQ_NO_TIMEOUT, b.st)) die_st("prefill", b.st);
  }
  tb_free(&b);
  return sum;
}

/* After the timed part: closes the queue and drains what is left (the prefill's worth). */
static void drain(const bench_cfg *c, tfq_queue *q, int64_t *sum, int64_t *count, int *ok) {
  tfq_status *st = tfq_status_new();
  if (!st) die("out of memory");
  worker w = {0};
  run_ctx rc = {.cfg = c};
  w.rc = &rc;
  int64_t last[MAX_PRODUCERS];
  for (int p = 0; p < MAX_PRODUCERS; p++) last[p] = -1;
  if (tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st)) die_st("close", st);
  for (;;) {
    tfq_tuple *out;
    if (tfq_queue_dequeue_up_to(q, 1024, &out, NULL, TFQ_NO_TIMEOUT, st)) {
      if (tfq_status_code(st) != TFQ_OUT_OF_RANGE) die_st("drain", st);
      break;
    }
    check_tuple(&w, last, out, tfq_tensor_dim(tfq_tuple_get(out, 0), 0));
    tfq_tuple_free(out);
  }
  *sum += w.sum;
  *count += w.count;
  if (w.order_errors) *ok = 0;
  tfq_status_free(st);
}

static run_result run_once(const bench_cfg *c, int64_t items) {
  run_ctx rc = {.cfg = c};
  int nthreads = c->producers + c->consumers;
  worker w[MAX_THREADS];
  memset(w, 0, sizeof w);
  int64_t pre_sum = 0;
  if (c->impl == IMPL_TFQ) {
    tfq_status *st = tfq_status_new();
    tfq_spec *spec;
    tfq_queue_options *o;
    int64_t pd[1] = {is_kind(c, TFQ_QUEUE_PADDING_FIFO) ? TFQ_UNKNOWN_DIM : c->elem_bytes - 8};
    if (!st || tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "x", st) ||
        ((c->elem_bytes > 8 || pd[0] == TFQ_UNKNOWN_DIM) &&
         tfq_spec_add(spec, TFQ_UINT8, pd, 1, "payload", st)) ||
        tfq_queue_options_new(&o, st))
      die_st("queue setup", st);
    tfq_queue_options_set_capacity(o, cfg_capacity(c));
    if (c->mad) tfq_queue_options_set_min_after_dequeue(o, c->mad);
    if (tfq_queue_new(c->kind, spec, o, &rc.tq, st)) die_st("tfq_queue_new", st);
    tfq_queue_options_free(o);
    tfq_spec_free(spec);
    tfq_status_free(st);
    if (c->mad) pre_sum = prefill(c, rc.tq);
  } else if (c->impl == IMPL_NAIVE) {
    rc.nr = naive_new(cfg_capacity(c), (size_t)c->elem_bytes);
  } else {
    rc.sr = spsc_new(cfg_capacity(c));
  }
  if (pthread_barrier_init(&rc.start, NULL, (unsigned)nthreads)) die("barrier");
  for (int i = 0; i < nthreads; i++) {
    worker *x = &w[i];
    x->rc = &rc;
    x->producer = i < c->producers;
    x->id = x->producer ? i : i - c->producers;
    x->items = items / (x->producer ? c->producers : c->consumers);
    /* Producer i on CPU i, consumer i on CPU i+1 (mod n): 1P1C crosses CPUs; 2P2C puts one
     * producer and one consumer on each CPU. */
    x->cpu = g_opt.pin && g_ncpus > 1 ? g_cpus[(x->id + !x->producer) % g_ncpus] : -1;
    if (pthread_create(&x->th, NULL, worker_main, x)) die("pthread_create");
  }
  for (int i = 0; i < nthreads; i++) pthread_join(w[i].th, NULL);
  pthread_barrier_destroy(&rc.start);

  run_result r = {0, 0, 0, 0, 1};
  double t0 = 1e300, t1 = 0;
  int64_t sent = 0, recv = 0, nsent = 0, nrecv = 0;
  for (int i = 0; i < nthreads; i++) {
    if (ts_sec(&w[i].t0) < t0) t0 = ts_sec(&w[i].t0);
    if (ts_sec(&w[i].t1) > t1) t1 = ts_sec(&w[i].t1);
    r.vcsw += (double)(w[i].ru1.ru_nvcsw - w[i].ru0.ru_nvcsw);
    r.ivcsw += (double)(w[i].ru1.ru_nivcsw - w[i].ru0.ru_nivcsw);
    r.cpu += tv_sec(&w[i].ru1.ru_utime) - tv_sec(&w[i].ru0.ru_utime) + tv_sec(&w[i].ru1.ru_stime) -
             tv_sec(&w[i].ru0.ru_stime);
    if (w[i].producer) {
      sent += w[i].sum;
      nsent += w[i].count;
    } else {
      recv += w[i].sum;
      nrecv += w[i].count;
      if (w[i].order_errors) r.ok = 0;
    }
  }
  if (rc.tq && c->mad) { /* the consumers took some prefilled items; the drain gets the rest */
    int64_t dsum = 0, dcount = 0;
    drain(c, rc.tq, &dsum, &dcount, &r.ok);
    sent += pre_sum;
    recv += dsum;
    if (dcount != c->mad) r.ok = 0;
  }
  if (sent != recv || nsent != items || nrecv != items) r.ok = 0;
  r.secs = t1 - t0;
  if (rc.tq) {
    if (tfq_queue_size(rc.tq) != 0) r.ok = 0;
    tfq_queue_free(rc.tq);
  }
  if (rc.nr) naive_free(rc.nr);
  if (rc.sr) spsc_free(rc.sr);
  return r;
}

/* ---- the measurement loop ------------------------------------------------------------------ */

typedef struct {
  int selected;
  int64_t items; /* per run */
  double rate[MAX_RUNS];
  int nruns;
  double vcsw, ivcsw, cpu, items_total; /* summed over measured runs */
  int ok;
} cfg_result;

static cfg_result g_res[NCFG];

/* Items per run: a multiple of every thread's share of every batch. */
static int64_t round_items(const bench_cfg *c, double n) {
  int64_t unit = (int64_t)c->batch * c->producers * c->consumers;
  int64_t k = (int64_t)(n / (double)unit + 0.5);
  return (k < 1 ? 1 : k) * unit;
}

static void calibrate(size_t i) {
  const bench_cfg *c = &k_cfgs[i];
  /* start at ~256 KiB of items (32,768 items of 8 B, 4 of 64 KiB), rounded to whole batches */
  int64_t n = round_items(c, (double)(256 * KIB / c->elem_bytes));
  for (;;) {
    run_result r = run_once(c, n);
    if (!r.ok) g_res[i].ok = 0;
    if (r.secs >= 0.1 * g_opt.seconds || n > ((int64_t)1 << 40)) {
      double rate = (double)n / (r.secs > 1e-9 ? r.secs : 1e-9);
      g_res[i].items = round_items(c, rate * g_opt.seconds);
      return;
    }
    n = round_items(c, (double)n * 4);
  }
}

static void measure(size_t i) {
  const bench_cfg *c = &k_cfgs[i];
  cfg_result *g = &g_res[i];
  run_result r = run_once(c, g->items);
  if (!r.ok) g->ok = 0;
  g->rate[g->nruns++] = (double)g->items / r.secs;
  g->vcsw += r.vcsw;
  g->ivcsw += r.ivcsw;
  g->cpu += r.cpu;
  g->items_total += (double)g->items;
  if (!g_opt.quiet) {
    char label[96];
    cfg_label(c, label, sizeof label);
    fprintf(stderr, "  run %d  %-48s %8.3f M items/s %9.1f MB/s %7.3f vcsw/1k%s\n", g->nruns, label,
            g->rate[g->nruns - 1] / 1e6, g->rate[g->nruns - 1] * c->elem_bytes / 1e6,
            1000.0 * r.vcsw / (double)g->items, r.ok ? "" : "  CHECK FAILED");
  }
}

/* The naive single-op ring with the same element size and thread layout, and the same capacity
 * when one exists (RandomShuffleQueue rows, capacity min_after_dequeue + 1024, take the naive
 * ring of the default capacity). */
static int baseline_of(size_t i) {
  const bench_cfg *c = &k_cfgs[i];
  int any = -1;
  for (size_t j = 0; j < NCFG; j++) {
    const bench_cfg *b = &k_cfgs[j];
    if (g_res[j].selected && g_res[j].nruns && b->impl == IMPL_NAIVE && b->mode == MODE_SINGLE &&
        b->elem_bytes == c->elem_bytes && b->producers == c->producers &&
        b->consumers == c->consumers) {
      if (cfg_capacity(b) == cfg_capacity(c)) return (int)j;
      if (any < 0) any = (int)j;
    }
  }
  return any;
}

static int find_cfg_sz(impl_id impl, op_mode mode, int p, int cns, int elem_bytes) {
  for (size_t j = 0; j < NCFG; j++) {
    const bench_cfg *b = &k_cfgs[j];
    if (g_res[j].selected && g_res[j].nruns && b->impl == impl && b->mode == mode &&
        b->elem_bytes == elem_bytes && b->producers == p && b->consumers == cns &&
        (impl != IMPL_TFQ || b->kind == TFQ_QUEUE_FIFO))
      return (int)j;
  }
  return -1;
}

static int find_cfg(impl_id impl, op_mode mode, int p, int cns) {
  return find_cfg_sz(impl, mode, p, cns, 8);
}

/* ---- memcpy bandwidth probe: g_opt.memcpy_mib MiB copied in 64 KiB chunks between two 64 MiB
 * buffers (beyond the caches), once per round; the median is the reference of the bytes/s target.
 */

#define MEMCPY_BUF ((size_t)64 << 20)
static uint8_t *g_msrc, *g_mdst;
static double g_memcpy_bw[MAX_RUNS + 1]; /* bytes/s */
static int g_nmemcpy;

static void memcpy_probe(void) {
  if (!g_msrc) {
    g_msrc = malloc(MEMCPY_BUF);
    g_mdst = malloc(MEMCPY_BUF);
    if (!g_msrc || !g_mdst) die("out of memory");
    memset(g_msrc, 1, MEMCPY_BUF);
    memset(g_mdst, 2, MEMCPY_BUF);
  }
  size_t total = (size_t)g_opt.memcpy_mib << 20, chunk = B64K, off = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (size_t done = 0; done < total; done += chunk) {
    memcpy(g_mdst + off, g_msrc + off, chunk);
    off = off + chunk == MEMCPY_BUF ? 0 : off + chunk;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  __asm__ __volatile__("" : : "r"(g_mdst) : "memory"); /* keep the copies */
  double secs = ts_sec(&t1) - ts_sec(&t0);
  g_memcpy_bw[g_nmemcpy++] = (double)total / (secs > 1e-9 ? secs : 1e-9);
  if (!g_opt.quiet)
    fprintf(stderr, "  memcpy probe: %.2f GB/s\n", g_memcpy_bw[g_nmemcpy - 1] / 1e9);
}

static double min_of(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] < m) m = v[i];
  return m;
}

static double max_of(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] > m) m = v[i];
  return m;
}

/* The 1-minute load average: other processes on the machine make the figures noisy. */
static double loadavg1(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

static void print_env(void) {
  struct utsname u;
  char model[128] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f)) {
      char *p = strchr(line, ':');
      if (!strncmp(line, "model name", 10) && p) {
        snprintf(model, sizeof model, "%s", p + 2);
        model[strcspn(model, "\n")] = 0;
        break;
      }
    }
    fclose(f);
  }
  if (uname(&u)) strcpy(u.release, "unknown");
  printf("tfq queue benchmark: tfq %s, %s, kernel %s, %d usable CPUs, threads %s\n",
         tfq_version_string(), model, u.release, g_ncpus,
         g_opt.pin && g_ncpus > 1 ? "pinned (producer i -> cpu i, consumer i -> cpu i+1)"
                                  : "not pinned");
  printf("default capacity %" PRId64
         " (64 KiB rows: %d; RandomShuffleQueue: min_after_dequeue + 1024, prefilled to "
         "min_after_dequeue before timing and drained after); items = an int64 id (8 B) plus a "
         "uint8 payload of elem - 8 bytes (PaddingFIFOQueue: unknown dim, length varies around "
         "it; PriorityQueue: plus the 8 B priority); batch 128 (64 KiB: 16); %d runs per row of "
         "~%.2f s each (rows take turns), median reported; MB/s = items/s x elem; "
         "vcsw/ivcsw = voluntary/involuntary context switches of the worker threads per 1,000 "
         "items; cpu = worker CPU time per item; load average at start %.2f\n\n",
         g_opt.capacity, CAP64K, g_opt.runs, g_opt.seconds, loadavg1());
  printf(
      "ENV {\"bench\":\"queue\",\"tfq_version\":\"%s\",\"cpu_model\":\"%s\",\"kernel\":\"%s\","
      "\"cpus\":%d,\"pinned\":%s,\"default_capacity\":%" PRId64
      ",\"runs\":%d,\"seconds_per_run\":%.3f,\"memcpy_probe_mib\":%" PRId64
      ",\"loadavg_start\":%.2f}"
      "\n\n",
      tfq_version_string(), model, u.release, g_ncpus, g_opt.pin && g_ncpus > 1 ? "true" : "false",
      g_opt.capacity, g_opt.runs, g_opt.seconds, g_opt.memcpy_mib, loadavg1());
}

static void print_report(void) {
  printf("%-18s %5s %6s %-6s %5s %6s %6s | %9s %9s %9s | %9s | %8s %8s %8s | %8s\n", "queue", "mad",
         "elem", "mode", "batch", "layout", "cap", "Mitems/s", "min", "max", "MB/s", "vcsw/1k",
         "ivcsw/1k", "cpu-ns", "vs naive");
  printf("%.*s\n", 148,
         "------------------------------------------------------------------------------------"
         "------------------------------------------------------------------------------------");
  for (size_t i = 0; i < NCFG; i++) {
    const bench_cfg *c = &k_cfgs[i];
    const cfg_result *g = &g_res[i];
    if (!g->selected || !g->nruns) continue;
    double med = median(g->rate, g->nruns), mn = min_of(g->rate, g->nruns),
           mx = max_of(g->rate, g->nruns);
    double vk = 1000.0 * g->vcsw / g->items_total, ik = 1000.0 * g->ivcsw / g->items_total;
    double cpu_ns = 1e9 * g->cpu / g->items_total;
    int b = baseline_of(i);
    double ratio = b >= 0 ? med / median(g_res[b].rate, g_res[b].nruns) : 0;
    char layout[16], rs[16], elem[16], mad[16] = "-";
    snprintf(layout, sizeof layout, "%dP%dC", c->producers, c->consumers);
    if (c->elem_bytes % KIB == 0)
      snprintf(elem, sizeof elem, "%dKiB", c->elem_bytes / KIB);
    else
      snprintf(elem, sizeof elem, "%dB", c->elem_bytes);
    if (c->mad) snprintf(mad, sizeof mad, "%d", c->mad);
    if (b >= 0)
      snprintf(rs, sizeof rs, "%.2fx", ratio);
    else
      snprintf(rs, sizeof rs, "n/a");
    printf("%-18s %5s %6s %-6s %5d %6s %6" PRId64
           " | %9.3f %9.3f %9.3f | %9.1f | %8.3f %8.3f %8.1f | %8s%s\n",
           impl_name(c), mad, elem, c->mode == MODE_SINGLE ? "single" : "batch", c->batch, layout,
           cfg_capacity(c), med / 1e6, mn / 1e6, mx / 1e6, med * c->elem_bytes / 1e6, vk, ik,
           cpu_ns, rs, g->ok ? "" : "  CHECK FAILED");
  }
  printf("\n");
  for (size_t i = 0; i < NCFG; i++) {
    const bench_cfg *c = &k_cfgs[i];
    const cfg_result *g = &g_res[i];
    if (!g->selected || !g->nruns) continue;
    int b = baseline_of(i);
    double med = median(g->rate, g->nruns);
    printf(
        "ROW {\"bench\":\"queue\",\"impl\":\"%s\",\"kind\":\"%s\",\"elem_bytes\":%d,"
        "\"mode\":\"%s\",\"batch\":%d,\"producers\":%d,\"consumers\":%d,\"capacity\":%" PRId64
        ",\"min_after_dequeue\":%d,\"runs\":%d,\"items_per_run\":%" PRId64
        ",\"items_per_s_median\":%.0f,\"bytes_per_s_median\":%.0f,\"items_per_s_min\":%.0f,"
        "\"items_per_s_max\":%.0f,\"vcsw_per_1k\":%.4f,\"ivcsw_per_1k\":%.4f,"
        "\"cpu_ns_per_item\":%.2f,\"ratio_vs_naive\":",
        c->impl == IMPL_TFQ     ? "tfq"
        : c->impl == IMPL_NAIVE ? "naive_ring"
                                : "spsc_ring",
        impl_name(c), c->elem_bytes, c->mode == MODE_SINGLE ? "single" : "batch", c->batch,
        c->producers, c->consumers, cfg_capacity(c), c->mad, g->nruns, g->items, med,
        med * c->elem_bytes, min_of(g->rate, g->nruns), max_of(g->rate, g->nruns),
        1000.0 * g->vcsw / g->items_total, 1000.0 * g->ivcsw / g->items_total,
        1e9 * g->cpu / g->items_total);
    if (b >= 0)
      printf("%.4f", med / median(g_res[b].rate, g_res[b].nruns));
    else
      printf("null");
    printf(",\"check_ok\":%s}\n", g->ok ? "true" : "false");
  }
  printf("\n");
}

static void target_line(const char *what, double value, double bound, int at_least,
                        const char *unit, const char *extra) {
  int met = at_least ? value >= bound : value <= bound;
  printf("TARGET %-44s %8.3f%s (target %s %g%s)%s: target %s\n", what, value, unit,
         at_least ? ">=" : "<=", bound, unit, extra, met ? "met" : "missed");
}

static double med_of(int i) { return median(g_res[i].rate, g_res[i].nruns); }

static void print_targets(void) {
  int tb = find_cfg(IMPL_TFQ, MODE_BATCH, 1, 1), ts = find_cfg(IMPL_TFQ, MODE_SINGLE, 1, 1);
  int ns = find_cfg(IMPL_NAIVE, MODE_SINGLE, 1, 1), sp = find_cfg(IMPL_SPSC, MODE_SINGLE, 1, 1);
  int tb2 = find_cfg(IMPL_TFQ, MODE_BATCH, 2, 2), ts2 = find_cfg(IMPL_TFQ, MODE_SINGLE, 2, 2);
  char extra[160];
  if (g_opt.capacity < 64)
    printf("INFO   capacity %" PRId64 " < 64: the single-op target is stated for capacity >= 64\n",
           g_opt.capacity);
  if (tb >= 0 && ns >= 0) {
    const cfg_result *a = &g_res[tb], *b = &g_res[ns];
    snprintf(extra, sizeof extra, " [%.2fM vs %.2fM items/s; min-of-runs ratio %.2fx]",
             med_of(tb) / 1e6, med_of(ns) / 1e6,
             min_of(a->rate, a->nruns) / min_of(b->rate, b->nruns));
    target_line("batch(128) 1P1C tfq FIFO / naive ring 1P1C", med_of(tb) / med_of(ns), 3.0, 1, "x",
                extra);
  }
  if (ts >= 0 && ns >= 0) {
    const cfg_result *a = &g_res[ts], *b = &g_res[ns];
    snprintf(extra, sizeof extra, " [%.2fM vs %.2fM items/s; min-of-runs ratio %.2fx]",
             med_of(ts) / 1e6, med_of(ns) / 1e6,
             min_of(a->rate, a->nruns) / min_of(b->rate, b->nruns));
    target_line("single 1P1C tfq FIFO / naive ring 1P1C", med_of(ts) / med_of(ns), 1.0, 1, "x",
                extra);
  }
  if (ts >= 0)
    target_line("single 1P1C tfq FIFO vcsw per 1k items",
                1000.0 * g_res[ts].vcsw / g_res[ts].items_total, 1.0, 0, "", "");
  if (tb >= 0 && sp >= 0)
    printf("INFO   batch(128) 1P1C tfq FIFO / SPSC ceiling: %.3fx (the target asks >= 0.25)\n",
           med_of(tb) / med_of(sp));
  if (ts >= 0 && ts2 >= 0)
    printf(
        "INFO   single tfq FIFO 2P2C / 1P1C: %.2fx (4 threads on 2 cores; the target asks "
        ">= 0.5)\n",
        med_of(ts2) / med_of(ts));
  if (tb >= 0 && tb2 >= 0)
    printf("INFO   batch(128) tfq FIFO 2P2C / 1P1C: %.2fx (same check)\n",
           med_of(tb2) / med_of(tb));
  int b64 = find_cfg_sz(IMPL_TFQ, MODE_BATCH, 1, 1, B64K);
  if (b64 >= 0 && g_nmemcpy > 0) {
    double mbw = median(g_memcpy_bw, g_nmemcpy), qbw = med_of(b64) * B64K;
    snprintf(extra, sizeof extra,
             " [%.2f GB/s vs memcpy %.2f GB/s (min %.2f, max %.2f, %d probes)]", qbw / 1e9,
             mbw / 1e9, min_of(g_memcpy_bw, g_nmemcpy) / 1e9, max_of(g_memcpy_bw, g_nmemcpy) / 1e9,
             g_nmemcpy);
    target_line("64KiB batch(16) 1P1C tfq FIFO bytes/s / memcpy", qbw / mbw, 0.35, 1, "x", extra);
  }
  if (ns >= 0)
    printf(
        "INFO   naive ring 1P1C ran at %.2fM items/s (the project's reference: 8.05M on a quiet "
        "machine)%s\n",
        med_of(ns) / 1e6,
        med_of(ns) < 4e6 ? ": far below, so the machine was loaded and the figures are noisy" : "");
}

/* --filter: a comma-separated list of substrings; a row is selected when its label contains one. */
static int label_selected(const char *label) {
  if (!g_opt.filter) return 1;
  for (const char *p = g_opt.filter; *p;) {
    size_t n = strcspn(p, ",");
    if (n > 0) {
      char sub[128];
      snprintf(sub, sizeof sub, "%.*s", (int)(n < sizeof sub - 1 ? n : sizeof sub - 1), p);
      if (strstr(label, sub)) return 1;
    }
    p += n + (p[n] == ',');
  }
  return 0;
}

static _Noreturn void usage(void) {
  fprintf(
      stderr,
      "usage: bench_queue [--quick] [--runs N] [--seconds S] [--capacity C] [--no-pin] "
      "[--filter LIST] [--quiet]\n"
      "  --quick         3 runs of ~0.06 s per row and a 256 MiB memcpy probe (about a minute)\n"
      "  --runs N        measured runs per row (default 5, at most %d)\n"
      "  --seconds S     target duration of one run (default 0.2)\n"
      "  --capacity C    queue capacity, >= 64 for the targets (default 1024)\n"
      "  --no-pin        do not pin threads to CPUs\n"
      "  --filter LIST   only rows whose label (e.g. FIFOQueue/8B/batch/1P1C) contains one of the\n"
      "                  comma-separated substrings of LIST\n"
      "  --quiet         no per-run progress on stderr\n",
      MAX_RUNS);
  exit(2);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--quick")) {
      g_opt.runs = 3;
      g_opt.seconds = 0.06;
      g_opt.memcpy_mib = 256;
    } else if (!strcmp(a, "--runs") && i + 1 < argc)
      g_opt.runs = atoi(argv[++i]);
    else if (!strcmp(a, "--seconds") && i + 1 < argc)
      g_opt.seconds = atof(argv[++i]);
    else if (!strcmp(a, "--capacity") && i + 1 < argc)
      g_opt.capacity = atoll(argv[++i]);
    else if (!strcmp(a, "--no-pin"))
      g_opt.pin = 0;
    else if (!strcmp(a, "--filter") && i + 1 < argc)
      g_opt.filter = argv[++i];
    else if (!strcmp(a, "--quiet"))
      g_opt.quiet = 1;
    else
      usage();
  }
  if (g_opt.runs < 1 || g_opt.runs > MAX_RUNS || g_opt.seconds <= 0 || g_opt.capacity < 1) usage();

  cpu_set_t set;
  if (!sched_getaffinity(0, sizeof set, &set))
    for (int c = 0; c < CPU_SETSIZE && g_ncpus < MAX_THREADS; c++)
      if (CPU_ISSET(c, &set)) g_cpus[g_ncpus++] = c;
  if (g_ncpus == 0) g_cpus[g_ncpus++] = 0;

  print_env();
  for (size_t i = 0; i < NCFG; i++) {
    char label[96];
    cfg_label(&k_cfgs[i], label, sizeof label);
    g_res[i].selected = label_selected(label);
    g_res[i].ok = 1;
    if (k_cfgs[i].elem_bytes < 8 || k_cfgs[i].elem_bytes % 8 ||
        (k_cfgs[i].impl == IMPL_SPSC && k_cfgs[i].elem_bytes != 8) ||
        k_cfgs[i].producers >= PREFILL_ID ||
        k_cfgs[i].producers + k_cfgs[i].consumers > MAX_THREADS ||
        (k_cfgs[i].impl == IMPL_SPSC && (k_cfgs[i].producers != 1 || k_cfgs[i].consumers != 1)))
      die("unsupported configuration in the table");
  }
  if (!g_opt.quiet) fprintf(stderr, "calibrating (and warming up)...\n");
  for (size_t i = 0; i < NCFG; i++)
    if (g_res[i].selected) calibrate(i);
  memcpy_probe();
  for (int r = 0; r < g_opt.runs; r++) {
    memcpy_probe();
    for (size_t i = 0; i < NCFG; i++)
      if (g_res[i].selected) measure(i);
  }
  print_report();
  print_targets();
  printf("INFO   load average at end %.2f\n", loadavg1());
  int ok = 1;
  for (size_t i = 0; i < NCFG; i++)
    if (g_res[i].selected && !g_res[i].ok) ok = 0;
  if (!ok) {
    printf("CHECK FAILED: some row lost, duplicated or reordered items\n");
    return 1;
  }
  return 0;
}
