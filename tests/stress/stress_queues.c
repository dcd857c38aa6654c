/* stress_queues: many short randomised trials of 4 producers x 4 consumers on one queue of
 * capacity 8, with exact per-producer accounting, for each of the four queue kinds (FIFOQueue,
 * RandomShuffleQueue, PaddingFIFOQueue, PriorityQueue; see "queue kinds" below).  Plain C11 +
 * pthreads, TAP on stdout (Criterion cannot run under ThreadSanitizer).
 *
 * Usage: stress_queues [--trials N] [--seed S] [--trial T] [--trial-timeout SECONDS]
 *                      [--hang-pause]
 *   --trials N          trials per queue kind (meson passes 10000 * stress_scale, or
 *                       500 * stress_scale under TSan).  TFQ_STRESS_TRIALS overrides it.
 *   --seed S            base seed (decimal or 0x...); default: from the clock.  TFQ_STRESS_SEED
 *                       overrides it.  Every trial's parameters (item counts, batch sizes, op
 *                       mixes, close and cancel schedule, per-thread RNG streams) derive from
 *                       (S, kind, trial index), so `--seed S --trial T` replays trial T's schedule
 *                       (the thread interleaving still varies from run to run).
 *   --trial T           run only trial T of the seed.
 *   --trial-timeout S   the watchdog's limit per trial (default 30 s).
 *   --hang-pause        when the watchdog fires, print the state and wait for a debugger
 *                       (gdb -p PID) instead of bailing out.
 *
 * One trial (the work is kept small so that 10,000 trials of a kind take well under a minute on
 * an idle machine; per-trial cost is mostly thread start-up, so the item counts of the kinds
 * after FIFOQueue are halved):
 *  - a fresh queue with components (int64 key [], float payload [2]); key = producer << 32 | seq,
 *    payload = a hash of the key, so a dequeued row whose components were mixed up is detected
 *    (PaddingFIFOQueue: payload float [?] of 1 + key % 3 values; PriorityQueue: the queue
 *    prepends the int64 priority, which is a function of the key with many ties);
 *  - 4 producers, each offering 0..64 items (1 trial in 32: 400..1000; halved for the kinds
 *    other than FIFOQueue), by a random mix of enqueue and enqueue_many with B in 0..k (k in
 *    1..10, so B > capacity happens); FIFOQueue's producers write a quarter of their batches in
 *    place where they can (tfq__queue_reserve of what room there is, up to B, maybe a yield,
 *    then tfq__queue_commit: the read-decode op's way into a FIFO's ring), the rest of the batch
 *    being the next call;
 *  - 4 consumers mixing dequeue, dequeue_many(n) and dequeue_up_to(n), n in 0..k (PriorityQueue:
 *    n <= 8, the capacity, since its batch dequeues wait for n *stored* elements);
 *  - a seeded schedule: a closer thread closes at a random moment (counted in completed calls)
 *    with cancel_pending_enqueues = 0 (maybe itself with the cancel token or a deadline) or = 1
 *    (then consumers may also quit early, leaving items for the drain); a canceller thread
 *    triggers a tfq_cancel that a random subset of calls carry -- in half of those trials the
 *    token is a Coordinator's and the canceller calls tfq_coord_request_stop (without an error,
 *    with the clean OUT_OF_RANGE, or with an error code; checked: should_stop, the recorded
 *    error, the token triggered); some trials give calls small timeouts (0..200 us);
 *  - main joins the producers and the schedule threads, closes (plain or cancelling), joins the
 *    consumers, drains with dequeue_up_to until OUT_OF_RANGE, then checks.
 *
 * What is checked (one TAP line each, per queue kind, aggregated over all trials):
 *  - codes: every call returns a code allowed at that point, with TF's message: CANCELLED
 *    "<Kind> '<name>' is closed." only once closed; CANCELLED "Enqueue/Dequeue operation was
 *    cancelled" only with a triggered token (or, for enqueues, a cancelling close);
 *    OUT_OF_RANGE only once closed, with consistent "(requested r, current size s)";
 *    DEADLINE_EXCEEDED only with a deadline; dequeue_up_to returns fewer than n only once closed;
 *  - pairing: dtypes and shapes of every result, and each payload still matches its key;
 *  - duplicates: no item dequeued twice, nor one that no enqueue call ever offered;
 *  - loss: every item of an enqueue call that returned OK is dequeued (by a consumer or by the
 *    drain).  This also proves that a dequeue_many / dequeue_up_to that failed (closed, timed out,
 *    cancelled) put its partial batch back;
 *  - prefix: of an enqueue_many that failed, only a prefix of its slices was delivered (TF keeps
 *    the slices already inserted); a failed single enqueue left nothing;
 *  - order, per kind:
 *      FIFOQueue, PaddingFIFOQueue: within one consumer's received sequence (and within the
 *      drain), each producer's items appear in increasing seq;
 *      RandomShuffleQueue: no order; over all trials (when >= 2000 items) some producer's items
 *      must have come out of order, i.e. the queue shuffles at all;
 *      PriorityQueue: every dequeue_many / dequeue_up_to batch ascends by priority, and the
 *      single-threaded drain after close ascends across all its calls (in most trials with a
 *      cancelling close the consumers stop early, so that this drain has up to 8 elements);
 *  - padding (PaddingFIFOQueue, part of the pairing check): each row is its key's values, then
 *    the producer's fill (an enqueue_many batch is rectangular), then zeros, and a batch is
 *    exactly as wide as its longest element; a single dequeue is unpadded;
 *  - drain: the final drain ends with OUT_OF_RANGE on a closed queue of size 0.
 * A watchdog thread bails out (printing the seed, trial and thread states) when one trial takes
 * longer than --trial-timeout seconds (default 30). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/coord.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#include <time.h>
#include <unistd.h>

#include "../../src/queues/queues_shared.h" /* rows written in place (FIFOQueue) */

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#define NPROD 4
#define NCONS 4
#define CAPACITY 8
#define MAX_K 10             /* batch sizes and n are drawn from 0..k, k in 1..MAX_K */
#define SMALL_ITEMS 64       /* items per producer in a normal trial: 0..SMALL_ITEMS */
#define LONG_ITEMS_MIN 400   /* 1 trial in 32 is long: LONG_ITEMS_MIN..MAX_ITEMS per producer */
#define MAX_ITEMS 1000       /* items per producer, at most */
#define MAX_TIMEOUT_US 200   /* per-call deadlines are drawn from 0..MAX_TIMEOUT_US */
#define MAX_DIAG_PER_CHECK 5 /* diagnostics printed per failing check */
#define BITWORDS ((MAX_ITEMS + 63) / 64)

/* ---- queue kinds ---------------------------------------------------------------------------
 * One row per queue kind under test; each kind gets its own block of TAP lines (CHK_COUNT each).
 *  FIFOQueue           (key, payload float[2]); per-producer order per consumer.
 *  RandomShuffleQueue  same components; seeded (PCG32 or, in half of the trials, TF-exact
 *                      Philox), min_after_dequeue 0..3 (< capacity 8).  No order property: the
 *                      order check instead requires that shuffling is seen at all (aggregate).
 *  PaddingFIFOQueue    (key, payload float[?]) with 1 + key % 3 values; dequeue_many/up_to pad to
 *                      the batch maximum with zeros (checked exactly); FIFO order as FIFOQueue.
 *  PriorityQueue       (priority, key, payload float[2]), priority = prio_of(key) with ties;
 *                      every batch ascending, and the single-threaded drain after close
 *                      ascending across all its calls.  Its dequeue_many/up_to wait until n
 *                      elements are *stored*, and only the head dequeue touches the storage, so
 *                      an n > capacity would block every consumer until a close that (with all
 *                      producers blocked on a full queue) never comes: consumers keep n <= 8. */
typedef enum order_rule { ORDER_FIFO, ORDER_SHUFFLED, ORDER_PRIORITY } order_rule;
typedef enum layout { LAYOUT_FIXED, LAYOUT_PADDED, LAYOUT_PRIORITY } layout;

struct trial_params;

typedef struct kind_desc {
  tfq_queue_kind kind;
  order_rule order;
  layout lay;
  int max_n;    /* consumers' dequeue_many / up_to n is capped at this (0: no cap) */
  int work_pct; /* items per producer, in percent of the FIFO figures */
  /* Fills kind-specific options (capacity and name are set by the caller). */
  void (*options)(tfq_queue_options *o, const struct trial_params *p);
  const char *pairing_title, *order_title; /* NULL: the common title */
} kind_desc;

static void no_options(tfq_queue_options *o, const struct trial_params *p);
static void shuffle_options(tfq_queue_options *o, const struct trial_params *p);

static const kind_desc KINDS[] = {
    {TFQ_QUEUE_FIFO, ORDER_FIFO, LAYOUT_FIXED, 0, 100, no_options, NULL, NULL},
    {TFQ_QUEUE_RANDOM_SHUFFLE, ORDER_SHUFFLED, LAYOUT_FIXED, 0, 50, shuffle_options, NULL,
     "the order is shuffled: some consumer saw some producer's items out of order (aggregate)"},
    {TFQ_QUEUE_PADDING_FIFO, ORDER_FIFO, LAYOUT_PADDED, 0, 50, no_options,
     "every dequeued row has the declared dtypes/ranks, its payload prefix matches its key, and "
     "batches are zero-padded to exactly the batch maximum",
     NULL},
    {TFQ_QUEUE_PRIORITY, ORDER_PRIORITY, LAYOUT_PRIORITY, CAPACITY, 50, no_options,
     "every dequeued row has the declared dtypes/shapes, its priority and payload match its key",
     "every dequeue_many/up_to batch is in ascending priority, and so is the sequential drain "
     "after close"},
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

/* ---- checks and TAP ---------------------------------------------------------------------- */

enum check {
  CHK_FINISH,
  CHK_CODES,
  CHK_PAIRING,
  CHK_NODUP,
  CHK_NOLOSS,
  CHK_PREFIX,
  CHK_ORDER,
  CHK_DRAIN,
  CHK_COUNT
};

static const char *const CHECK_TITLES[CHK_COUNT] = {
    "every trial finished and every thread joined (watchdog)",
    "every call returned an expected code and message",
    "every dequeued row has the declared dtypes/shapes and its payload matches its key",
    "nothing duplicated, nothing dequeued that was never offered",
    "nothing lost: every item of an OK enqueue call delivered (failed dequeue_many restored)",
    "a failed enqueue_many delivered only a prefix of its slices, a failed enqueue nothing",
    "each consumer (and the drain) sees each producer's items in increasing order",
    "the final drain ends with OUT_OF_RANGE on a closed, empty queue",
};

static const char *check_title(const kind_desc *kd, int chk) {
  if (chk == CHK_PAIRING && kd->pairing_title) return kd->pairing_title;
  if (chk == CHK_ORDER && kd->order_title) return kd->order_title;
  return CHECK_TITLES[chk];
}

static pthread_mutex_t g_fail_mu = PTHREAD_MUTEX_INITIALIZER;
static long g_fail_count[CHK_COUNT];
static uint64_t g_base_seed;
static const char *g_argv0 = "stress_queues";

typedef enum close_mode { CLOSE_NONE, CLOSE_PLAIN, CLOSE_CANCELLING } close_mode;

/* Parameters of one trial, all drawn from the trial's seed. */
typedef struct trial_params {
  uint64_t seed;
  int nitems[NPROD];
  int long_trial;
  int k;                  /* batch sizes / n in 0..k */
  int prod_single_pct;    /* chance a producer call is a single enqueue */
  int cons_single_pct;    /* chance a consumer call is a single dequeue */
  int cons_upto_pct;      /* among batch dequeues, chance of dequeue_up_to */
  close_mode closer;      /* the closer thread's close */
  int closer_token;       /* the plain close carries the cancel token */
  int64_t closer_timeout; /* the plain close's deadline */
  unsigned close_at;      /* completed calls before the close */
  int use_token;          /* a canceller thread triggers a tfq_cancel */
  unsigned cancel_at;     /* completed calls before the trigger */
  int token_pct;          /* chance a call carries the token */
  int timeout_pct;        /* chance a call carries a deadline */
  int early_stop;         /* consumers quit after cons_ops[i] calls (only with CLOSE_CANCELLING) */
  int cons_ops[NCONS];
  int final_cancelling; /* main's final close has cancel_pending_enqueues = 1 */
  /* RandomShuffleQueue only */
  int min_after_dequeue; /* 0..3 */
  int tf_exact;          /* Philox, TF's layout, instead of PCG32 */
  int64_t seed1, seed2;  /* never both 0 (that would seed from the OS) */
  /* with use_token: the token is a Coordinator's, and the canceller requests a stop (code 0:
   * without an error; else an error code) instead of triggering a tfq_cancel */
  int coord_stop;
  tfq_code coord_code;
} trial_params;

static void no_options(tfq_queue_options *o, const trial_params *p) {
  (void)o;
  (void)p;
}

static void shuffle_options(tfq_queue_options *o, const trial_params *p) {
  tfq_queue_options_set_min_after_dequeue(o, p->min_after_dequeue);
  tfq_queue_options_set_seeds(o, p->seed1, p->seed2);
  tfq_queue_options_set_tf_exact_order(o, p->tf_exact);
}

typedef struct trial_id {
  size_t kind_index;
  uint64_t index;
  const trial_params *tp;
} trial_id;

static void print_params(const trial_id *id) {
  const trial_params *p = id->tp;
  printf("#   trial %" PRIu64 " (kind %s) trial seed 0x%016" PRIx64
         ": items %d/%d/%d/%d, k %d, "
         "closer %s%s%s at %u, token %s at %u (%d%% of calls), timeouts %d%%, early stop %d, "
         "final close %s\n",
         id->index, tfq_queue_kind_name(KINDS[id->kind_index].kind), p->seed, p->nitems[0],
         p->nitems[1], p->nitems[2], p->nitems[3], p->k,
         p->closer == CLOSE_NONE    ? "none"
         : p->closer == CLOSE_PLAIN ? "plain"
                                    : "cancelling",
         p->closer_token ? "+token" : "", p->closer_timeout >= 0 ? "+deadline" : "", p->close_at,
         !p->use_token   ? "no"
         : p->coord_stop ? "coordinator stop"
                         : "yes",
         p->cancel_at, p->token_pct, p->timeout_pct, p->early_stop,
         p->final_cancelling ? "cancelling" : "plain");
  if (KINDS[id->kind_index].kind == TFQ_QUEUE_RANDOM_SHUFFLE)
    printf("#   min_after_dequeue %d, seeds (%" PRId64 ", %" PRId64 "), %s\n", p->min_after_dequeue,
           p->seed1, p->seed2, p->tf_exact ? "TF-exact Philox" : "PCG32");
  printf("#   reproduce: %s --seed 0x%016" PRIx64 " --trial %" PRIu64 "\n", g_argv0, g_base_seed,
         id->index);
}

/* Records a failure of check `chk` (thread-safe); prints the first few with the seed. */
#if defined(__GNUC__) || defined(__clang__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif
static void fail(const trial_id *id, enum check chk, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void fail(const trial_id *id, enum check chk, const char *fmt, ...) {
  pthread_mutex_lock(&g_fail_mu);
  long n = ++g_fail_count[chk];
  if (n <= MAX_DIAG_PER_CHECK) {
    va_list ap;
    va_start(ap, fmt);
    printf("# FAIL [%s] ", check_title(&KINDS[id->kind_index], chk));
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    print_params(id);
    fflush(stdout);
  }
  pthread_mutex_unlock(&g_fail_mu);
}

/* ---- random numbers (seeded; splitmix64 for seeding, xorshift64* streams) ----------------- */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

typedef struct rng {
  uint64_t s;
} rng;

static rng rng_make(uint64_t seed, uint64_t stream) {
  uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ULL);
  rng r = {splitmix64(&s)};
  if (!r.s) r.s = 1;
  return r;
}

static uint64_t rng_next(rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in 0..n-1 (0 when n == 0). */
static unsigned rng_below(rng *r, unsigned n) {
  return (unsigned)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static int rng_pct(rng *r, int pct) { return (int)rng_below(r, 100) < pct; }

/* A call's deadline: none, or 0 (do not wait; 30%) or 1..MAX_TIMEOUT_US microseconds. */
static int64_t draw_timeout(rng *r, const trial_params *tp) {
  if (!rng_pct(r, tp->timeout_pct)) return TFQ_NO_TIMEOUT;
  return rng_pct(r, 30) ? 0 : 1 + (int64_t)rng_below(r, MAX_TIMEOUT_US);
}

static uint64_t trial_seed(uint64_t base, size_t kind_index, uint64_t index) {
  uint64_t s = base ^ (index * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)kind_index << 56);
  return splitmix64(&s);
}

static void draw_params(trial_params *p, uint64_t seed, const kind_desc *kd) {
  memset(p, 0, sizeof *p);
  p->seed = seed;
  rng r = rng_make(seed, 0);
  int long_trial = p->long_trial = rng_below(&r, 32) == 0;
  unsigned total = 0;
  for (int i = 0; i < NPROD; i++) {
    p->nitems[i] = long_trial ? LONG_ITEMS_MIN + (int)rng_below(&r, MAX_ITEMS - LONG_ITEMS_MIN + 1)
                              : (int)rng_below(&r, SMALL_ITEMS + 1);
    p->nitems[i] = p->nitems[i] * kd->work_pct / 100;
    total += (unsigned)p->nitems[i];
  }
  p->k = 1 + (int)rng_below(&r, MAX_K);
  p->prod_single_pct = 10 + (int)rng_below(&r, 81);
  p->cons_single_pct = 10 + (int)rng_below(&r, 81);
  p->cons_upto_pct = (int)rng_below(&r, 101);
  /* Calls per trial are roughly items (single) down to items / (k/2) (batches): aim the moments
   * anywhere in 0..total calls; a moment not reached fires when the producers are done. */
  unsigned horizon = total + 1;
  unsigned c = rng_below(&r, 8);
  p->closer = c < 3 ? CLOSE_NONE : c < 5 ? CLOSE_PLAIN : CLOSE_CANCELLING;
  p->close_at = rng_below(&r, horizon);
  p->use_token = rng_pct(&r, 30);
  p->cancel_at = rng_below(&r, horizon);
  p->token_pct = p->use_token ? 10 + (int)rng_below(&r, 91) : 0;
  p->timeout_pct = rng_pct(&r, 25) ? 5 + (int)rng_below(&r, 46) : 0;
  p->closer_token = p->closer == CLOSE_PLAIN && p->use_token && rng_pct(&r, 60);
  p->closer_timeout = TFQ_NO_TIMEOUT;
  if (p->closer == CLOSE_PLAIN && rng_pct(&r, 20))
    p->closer_timeout = rng_pct(&r, 50) ? 0 : (int64_t)rng_below(&r, 500);
  p->early_stop = p->closer == CLOSE_CANCELLING && rng_pct(&r, 50);
  for (int i = 0; i < NCONS; i++) p->cons_ops[i] = (int)rng_below(&r, total / 2 + 2);
  p->final_cancelling = rng_pct(&r, 30);
  /* Kind-specific draws come last, so that the FIFO schedule of a seed is unchanged. */
  if (kd->order == ORDER_PRIORITY && p->closer == CLOSE_CANCELLING) {
    /* Leave the sequential drain something to order: mostly stop the consumers early, after few
     * calls, so that the queue fills up (8) and the cancelling close (which fires once every
     * consumer is done) fails the blocked producers. */
    p->early_stop = rng_pct(&r, 85);
    for (int i = 0; i < NCONS; i++) p->cons_ops[i] = (int)rng_below(&r, total / 16 + 2);
  }
  p->min_after_dequeue = (int)rng_below(&r, 4);
  p->tf_exact = rng_pct(&r, 50);
  p->seed1 = (int64_t)(rng_next(&r) >> 33);
  p->seed2 = (int64_t)(rng_next(&r) >> 33) | 1;
  /* The Coordinator draws come after everything else, so that earlier schedules are unchanged. */
  p->coord_stop = p->use_token && rng_pct(&r, 50);
  static const tfq_code stop_codes[] = {TFQ_OK, TFQ_OUT_OF_RANGE, TFQ_CANCELLED, TFQ_ABORTED};
  p->coord_code = stop_codes[rng_below(&r, 4)];
}

/* ---- items ---------------------------------------------------------------------------------- */

static int64_t make_key(int producer, int seq) { return ((int64_t)producer << 32) | seq; }

static uint64_t key_hash(int64_t key) {
  uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
  return h ^ (h >> 29);
}

/* The payload paired with a key: two floats exactly representable (24-bit integers). */
static void payload_of(int64_t key, float out[2]) {
  uint64_t h = key_hash(key);
  out[0] = (float)(h & 0xFFFFFF);
  out[1] = -(float)((h >> 24) & 0xFFFFFF) - 1.0f;
}

/* PaddingFIFOQueue: the payload of a key has pad_len(key) values pad_val(key, j), all nonzero.
 * An enqueue_many batch is rectangular ([B, L] with L its longest row), so the producer fills
 * the shorter rows with PAD_FILL (nonzero, not an integer): a stored element is its values, then
 * 0..2 PAD_FILL; a dequeued row is that, then the queue's zero padding. */
#define PAD_MAX 3
#define PAD_FILL 0.5f
static int pad_len(int64_t key) { return 1 + (int)((uint64_t)key % PAD_MAX); }

static float pad_val(int64_t key, int j) {
  uint64_t h = key_hash(key ^ ((int64_t)(j + 1) << 48));
  return (float)((h & 0xFFFFF) + 1) * (j % 2 ? -1.0f : 1.0f);
}

/* PriorityQueue: the priority of a key; 16 values (many ties), spread over the int64 range so
 * that a comparison on truncated bits would show. */
static int64_t prio_of(int64_t key) {
  return ((int64_t)((key_hash(key) >> 48) % 16) - 8) * 0x100000001LL;
}

/* The components declared to the queue: key [] and payload [2] ([?] for PaddingFIFO).  For
 * PriorityQueue the queue prepends the int64 priority. */
static tfq_spec *make_spec(const kind_desc *kd) {
  tfq_spec *s = NULL;
  const int64_t two[1] = {2}, unknown[1] = {TFQ_UNKNOWN_DIM};
  if (tfq_spec_new(&s, NULL) || tfq_spec_add(s, TFQ_INT64, NULL, 0, "key", NULL) ||
      tfq_spec_add(s, TFQ_FLOAT, kd->lay == LAYOUT_PADDED ? unknown : two, 1, "payload", NULL)) {
    fprintf(stderr, "cannot build the spec\n");
    abort();
  }
  return s;
}

/* The element (many == 0, b == 1) or batch of b rows holding producer's items seq..seq+b-1. */
static tfq_tuple *make_items(const kind_desc *kd, int producer, int seq, int b, int many) {
  int prio = kd->lay == LAYOUT_PRIORITY, padded = kd->lay == LAYOUT_PADDED;
  int width = 2;
  if (padded) {
    width = 1;
    for (int i = 0; i < b; i++)
      if (pad_len(make_key(producer, seq + i)) > width)
        width = pad_len(make_key(producer, seq + i));
  }
  tfq_tuple *t = NULL;
  tfq_tensor *k = NULL, *v = NULL, *pr = NULL;
  int64_t kd1[1] = {b}, vd[2] = {b, width}, one[1] = {width};
  if (tfq_tuple_new(prio ? 3 : 2, &t, NULL) ||
      tfq_tensor_new(TFQ_INT64, many ? kd1 : NULL, many ? 1 : 0, &k, NULL) ||
      tfq_tensor_new(TFQ_FLOAT, many ? vd : one, many ? 2 : 1, &v, NULL) ||
      (prio && tfq_tensor_new(TFQ_INT64, many ? kd1 : NULL, many ? 1 : 0, &pr, NULL))) {
    fprintf(stderr, "out of memory building items\n");
    abort();
  }
  int64_t *kp = tfq_tensor_data(k), *pp = prio ? tfq_tensor_data(pr) : NULL;
  float *vp = tfq_tensor_data(v);
  for (int i = 0; i < b; i++) {
    kp[i] = make_key(producer, seq + i);
    if (pp) pp[i] = prio_of(kp[i]);
    if (padded) {
      int len = pad_len(kp[i]);
      for (int j = 0; j < width; j++) vp[width * i + j] = j < len ? pad_val(kp[i], j) : PAD_FILL;
    } else {
      payload_of(kp[i], vp + 2 * i);
    }
  }
  size_t c = 0;
  if (pr) tfq_tuple_set_take(t, c++, pr);
  tfq_tuple_set_take(t, c++, k);
  tfq_tuple_set_take(t, c, v);
  return t;
}

/* ---- trial state -------------------------------------------------------------------------- */

enum fate { FATE_NONE = 0, FATE_OK, FATE_FAILED };

typedef struct failed_call {
  int first, count, single;
  tfq_code code;
} failed_call;

/* Per-thread counters, summed into the figures after each trial. */
typedef struct counters {
  long calls, single, many, upto, batch_zero, ok_items, cancelled_closed, cancelled_token,
      cancelled_close_enq, deadline, out_of_range, short_upto, failed_many_with_prefix,
      failed_dequeue_batches,
      padded_rows,    /* PaddingFIFO: rows of a batch that carried queue padding */
      padded_batches, /* PaddingFIFO: batches of rows of different lengths */
      sorted_batches, /* Priority: batches of >= 2 rows checked ascending */
      reserved;       /* FIFO: items written in place (tfq__queue_reserve) */
} counters;

struct trial;

typedef struct producer {
  struct trial *t;
  int id;
  pthread_t th;
  atomic_int state; /* last call kind + 1, or -1 when done */
  unsigned char fate[MAX_ITEMS];
  failed_call failed[MAX_ITEMS];
  int nfailed;
  counters c;
} producer;

typedef struct consumer {
  struct trial *t;
  int id;
  pthread_t th;
  atomic_int state;
  int64_t *log; /* keys received, in order */
  int nlog, caplog;
  counters c;
} consumer;

typedef struct schedule_thread {
  struct trial *t;
  pthread_t th;
  int active;
  atomic_int state;
  tfq_code close_code;
} schedule_thread;

typedef struct trial {
  trial_id id;
  trial_params p;
  const kind_desc *kd;
  tfq_queue *q;
  tfq_cancel *token;
  tfq_coord *coord; /* the token's Coordinator, when the schedule stops one (else NULL) */
  char msg_closed[256], msg_oor[256], msg_oor_many[256], msg_already[256];
  atomic_uint progress; /* completed calls */
  atomic_int producers_done, consumers_done;
  atomic_int close_issued, cancelling_close_issued;
  producer prod[NPROD];
  consumer cons[NCONS];
  schedule_thread closer, canceller;
  int64_t *drain_log;
  int ndrain, capdrain;
  counters drain_c;
} trial;

static const char MSG_ENQ_CANCELLED[] = "Enqueue operation was cancelled";
static const char MSG_DEQ_CANCELLED[] = "Dequeue operation was cancelled";
static const char MSG_DEADLINE[] = "Timed out waiting for notification";

/* ---- watchdog ----------------------------------------------------------------------------- */

static atomic_llong g_trial_start_ns; /* 0 when no trial runs */
static atomic_int g_watchdog_stop;
static _Atomic(trial *) g_current;
static int64_t g_trial_timeout_s = 30;
static int g_hang_pause; /* --hang-pause: on a hang, wait for a debugger instead of exiting */
static int g_tap_base;   /* TAP number of the current kind's first test */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *state_name(int s) {
  static const char *const names[] = {"running",      "enqueue",       "enqueue_many", "dequeue",
                                      "dequeue_many", "dequeue_up_to", "close",        "cancel"};
  if (s < 0) return "done";
  if ((size_t)s < sizeof names / sizeof names[0]) return names[s];
  return "?";
}

enum { ST_RUN = 0, ST_ENQ, ST_ENQ_MANY, ST_DEQ, ST_DEQ_MANY, ST_DEQ_UPTO, ST_CLOSE, ST_CANCEL };

static void *watchdog_main(void *arg) {
  (void)arg;
  while (!atomic_load(&g_watchdog_stop)) {
    struct timespec d = {0, 100 * 1000 * 1000};
    nanosleep(&d, NULL);
    int64_t start = atomic_load(&g_trial_start_ns);
    if (!start || now_ns() - start < g_trial_timeout_s * 1000000000LL) continue;
    trial *t = atomic_load(&g_current);
    printf("not ok %d - %s: %s\n", g_tap_base + CHK_FINISH,
           t ? tfq_queue_kind_name(t->kd->kind) : "?", CHECK_TITLES[CHK_FINISH]);
    printf("# HANG: trial did not finish within %" PRId64 " s\n", g_trial_timeout_s);
    if (t) {
      print_params(&t->id);
      for (int i = 0; i < NPROD; i++)
        printf("#   producer %d: %s\n", i, state_name(atomic_load(&t->prod[i].state)));
      for (int i = 0; i < NCONS; i++)
        printf("#   consumer %d: %s\n", i, state_name(atomic_load(&t->cons[i].state)));
      printf("#   closer: %s, canceller: %s, progress %u calls\n",
             t->p.closer != CLOSE_NONE ? state_name(atomic_load(&t->closer.state)) : "none",
             t->p.use_token ? state_name(atomic_load(&t->canceller.state)) : "none",
             atomic_load(&t->progress));
    }
    if (g_hang_pause) {
      printf("# --hang-pause: pid %ld waits for a debugger (gdb -p %ld)\n", (long)getpid(),
             (long)getpid());
      fflush(stdout);
      for (;;) pause();
    }
    printf("Bail out! trial hung (seed 0x%016" PRIx64 ")\n", g_base_seed);
    fflush(stdout);
    _exit(1);
  }
  return NULL;
}

/* ---- code checks -------------------------------------------------------------------------- */

static void code_fail(trial *t, const char *who, int idx, const char *op, int64_t n, tfq_code code,
                      const tfq_status *st, const char *why) {
  fail(&t->id, CHK_CODES, "%s %d: %s(n=%" PRId64 ") returned %s \"%s\": %s", who, idx, op, n,
       tfq_code_name(code), tfq_status_message(st), why);
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- producers ---------------------------------------------------------------------------- */

static void *producer_main(void *arg) {
  producer *p = arg;
  trial *t = p->t;
  const trial_params *tp = &t->p;
  rng r = rng_make(tp->seed, 1 + (uint64_t)p->id);
  tfq_status *st = tfq_status_new();
  if (!st) abort();
  int n = tp->nitems[p->id];
  int seq = 0, may_token = t->token != NULL;
  while (seq < n) {
    int single = rng_pct(&r, tp->prod_single_pct);
    int b = single ? 1 : (int)rng_below(&r, (unsigned)tp->k + 1);
    if (b > n - seq) b = n - seq;
    tfq_cancel *c = may_token && rng_pct(&r, tp->token_pct) ? t->token : NULL;
    int64_t to = draw_timeout(&r, tp);
    if (!single && b > 0 && t->kd->kind == TFQ_QUEUE_FIFO && rng_pct(&r, 25)) {
      char *base[2];
      int64_t k = tfq__queue_reserve(t->q, b, 1, base);
      if (k > 0) { /* a reservation cannot fail: its rows go in at the commit */
        for (int64_t i = 0; i < k; i++) {
          ((int64_t *)base[0])[i] = make_key(p->id, seq + (int)i);
          payload_of(make_key(p->id, seq + (int)i), (float *)base[1] + 2 * i);
        }
        if (rng_pct(&r, 50)) sched_yield();
        tfq__queue_commit(t->q, k, NULL);
        atomic_fetch_add(&t->progress, 1);
        for (int64_t i = 0; i < k; i++) p->fate[seq + i] = FATE_OK;
        p->c.ok_items += (long)k;
        p->c.reserved += (long)k;
        seq += (int)k;
        continue;
      }
    }
    tfq_tuple *e = make_items(t->kd, p->id, seq, b, !single);
    atomic_store(&p->state, single ? ST_ENQ : ST_ENQ_MANY);
    tfq_code code =
        single ? tfq_queue_enqueue(t->q, e, c, to, st) : tfq_queue_enqueue_many(t->q, e, c, to, st);
    atomic_store(&p->state, ST_RUN);
    tfq_tuple_free(e);
    atomic_fetch_add(&t->progress, 1);
    p->c.calls++;
    if (single)
      p->c.single++;
    else
      p->c.many++;
    if (!single && b == 0) p->c.batch_zero++;
    const char *op = single ? "enqueue" : "enqueue_many";
    if (code == TFQ_OK) {
      for (int i = 0; i < b; i++) p->fate[seq + i] = FATE_OK;
      p->c.ok_items += b;
      seq += b;
      continue;
    }
    /* The call failed: its items may only show up as a prefix (enqueue_many) or not at all. */
    const char *msg = tfq_status_message(st);
    if (!single && b == 0) {
      code_fail(t, "producer", p->id, op, b, code, st, "an empty enqueue_many must succeed");
      break;
    }
    p->failed[p->nfailed++] = (failed_call){seq, b, single, code};
    for (int i = 0; i < b; i++) p->fate[seq + i] = FATE_FAILED;
    seq += b;
    int stop = 0;
    if (code == TFQ_DEADLINE_EXCEEDED) {
      p->c.deadline++;
      if (to < 0) code_fail(t, "producer", p->id, op, b, code, st, "no deadline was given");
      if (strcmp(msg, MSG_DEADLINE))
        code_fail(t, "producer", p->id, op, b, code, st, "wrong message");
    } else if (code == TFQ_CANCELLED && !strcmp(msg, t->msg_closed)) {
      p->c.cancelled_closed++;
      if (!tfq_queue_is_closed(t->q))
        code_fail(t, "producer", p->id, op, b, code, st, "the queue is not closed");
      stop = 1;
    } else if (code == TFQ_CANCELLED && !strcmp(msg, MSG_ENQ_CANCELLED)) {
      int by_token = c && tfq_cancel_is_triggered(c);
      int by_close = atomic_load(&t->cancelling_close_issued) && tfq_queue_is_closed(t->q);
      if (by_close)
        p->c.cancelled_close_enq++;
      else
        p->c.cancelled_token++;
      if (!by_token && !by_close)
        code_fail(t, "producer", p->id, op, b, code, st,
                  "neither a triggered token nor a cancelling close");
      if (tfq_queue_is_closed(t->q))
        stop = 1;
      else
        may_token = 0; /* like a new step: later calls run without the cancelled token */
    } else {
      code_fail(t, "producer", p->id, op, b, code, st, "unexpected code");
      stop = 1;
    }
    if (stop) break;
  }
  tfq_status_free(st);
  atomic_store(&p->state, -1);
  atomic_fetch_add(&t->producers_done, 1);
  return NULL;
}

/* ---- consumers ---------------------------------------------------------------------------- */

/* Checks the tensors of an OK dequeue result of `rows` rows and appends the keys to `log`.
 * PaddingFIFO: each row's payload is its values, then the producer's PAD_FILL, then zeros, and a
 * batch is exactly as wide as its longest stored element.  Priority: each row's priority is
 * prio_of(key), the rows ascend, and `last_prio` (the drain's; NULL for consumers) carries the
 * order across calls. */
static void take_result(trial *t, const char *who, int idx, tfq_tuple *out, int many, int64_t rows,
                        int64_t **log, int *nlog, int *caplog, counters *cnt, int64_t *last_prio) {
  const kind_desc *kd = t->kd;
  size_t kc = kd->lay == LAYOUT_PRIORITY ? 1 : 0;
  int padded = kd->lay == LAYOUT_PADDED, vrank = many ? 2 : 1;
  tfq_tensor *pr = kc ? tfq_tuple_get(out, 0) : NULL, *k = tfq_tuple_get(out, kc),
             *v = tfq_tuple_get(out, kc + 1);
  int ok = tfq_tuple_size(out) == kc + 2 && k && v && (!kc || pr) &&
           tfq_tensor_dtype(k) == TFQ_INT64 && tfq_tensor_dtype(v) == TFQ_FLOAT &&
           tfq_tensor_rank(k) == (many ? 1 : 0) && tfq_tensor_rank(v) == vrank &&
           (!kc || (tfq_tensor_dtype(pr) == TFQ_INT64 && tfq_tensor_rank(pr) == (many ? 1 : 0)));
  if (ok && many)
    ok = tfq_tensor_dim(k, 0) == rows && tfq_tensor_dim(v, 0) == rows &&
         (!kc || tfq_tensor_dim(pr, 0) == rows);
  int64_t width = ok ? tfq_tensor_dim(v, vrank - 1) : -1;
  if (ok && !padded) ok = width == 2;
  /* PaddingFIFO: an empty batch has its unknown dims 0; otherwise 1..PAD_MAX values. */
  if (ok && padded) ok = rows == 0 ? width == 0 : width >= 1 && width <= PAD_MAX;
  if (!ok) {
    fail(&t->id, CHK_PAIRING,
         "%s %d: result of %" PRId64
         " rows has wrong components, dtypes or shapes (payload "
         "width %" PRId64 ")",
         who, idx, rows, width);
    return;
  }
  const int64_t *kp = tfq_tensor_cdata(k), *pp = pr ? tfq_tensor_cdata(pr) : NULL;
  const float *vp = tfq_tensor_cdata(v);
  int64_t widest = 0; /* PaddingFIFO: the longest stored element of the batch */
  int lengths_differ = 0;
  for (int64_t i = 0; i < rows; i++) {
    int64_t key = kp[i];
    if (padded) {
      const float *row = vp + width * i;
      int len = pad_len(key);
      int64_t j = 0, stored;
      while (j < width && j < len && row[j] == pad_val(key, (int)j)) j++;
      int values_ok = j == len;
      while (j < width && row[j] == PAD_FILL) j++;
      stored = j;
      while (j < width && row[j] == 0.0f) j++;
      if (!values_ok || j < width || stored > PAD_MAX)
        fail(&t->id, CHK_PAIRING,
             "%s %d: key %" PRId64 ":%" PRId64
             " (%d values) came with a payload row of width "
             "%" PRId64 " that is not its values, fill, then zeros (row[0] %g)",
             who, idx, key >> 32, key & 0xFFFFFFFF, len, width, (double)row[0]);
      else if (!many && stored != width)
        fail(&t->id, CHK_PAIRING,
             "%s %d: dequeue of key %" PRId64 ":%" PRId64 " padded to %" PRId64 " (stored %" PRId64
             ")",
             who, idx, key >> 32, key & 0xFFFFFFFF, width, stored);
      if (i > 0 && stored != widest) lengths_differ = 1;
      if (stored > widest) widest = stored;
      if (stored < width) cnt->padded_rows++;
    } else {
      float want[2];
      const float *row = vp + 2 * i;
      payload_of(key, want);
      if (row[0] != want[0] || row[1] != want[1])
        fail(&t->id, CHK_PAIRING,
             "%s %d: key %" PRId64 ":%" PRId64 " came with payload (%g, %g), expected (%g, %g)",
             who, idx, key >> 32, key & 0xFFFFFFFF, (double)row[0], (double)row[1], (double)want[0],
             (double)want[1]);
    }
    if (pp) {
      if (pp[i] != prio_of(key))
        fail(&t->id, CHK_PAIRING,
             "%s %d: key %" PRId64 ":%" PRId64 " came with priority %" PRId64 ", expected %" PRId64,
             who, idx, key >> 32, key & 0xFFFFFFFF, pp[i], prio_of(key));
      if (i > 0 && pp[i] < pp[i - 1])
        fail(&t->id, CHK_ORDER,
             "%s %d: batch of %" PRId64 " rows not ascending: row %" PRId64 " has priority %" PRId64
             " after %" PRId64,
             who, idx, rows, i, pp[i], pp[i - 1]);
      if (last_prio) {
        if (pp[i] < *last_prio)
          fail(&t->id, CHK_ORDER,
               "%s: priority %" PRId64 " (key %" PRId64 ":%" PRId64 ") after priority %" PRId64,
               who, pp[i], key >> 32, key & 0xFFFFFFFF, *last_prio);
        *last_prio = pp[i];
      }
    }
    if (*nlog == *caplog) {
      fail(&t->id, CHK_NODUP, "%s %d: received more items than were ever offered", who, idx);
      return;
    }
    (*log)[(*nlog)++] = key;
  }
  if (padded && many && rows > 0 && width != widest)
    fail(&t->id, CHK_PAIRING,
         "%s %d: batch of %" PRId64 " rows padded to width %" PRId64
         ", its longest element has %" PRId64,
         who, idx, rows, width, widest);
  if (padded && lengths_differ) cnt->padded_batches++;
  if (pp && rows >= 2) cnt->sorted_batches++;
}

/* Checks an OUT_OF_RANGE message: "<Kind> '<name>' is closed and has insufficient elements
 * (requested r, current size s)" with 1 <= r <= n and s < r (s == 0 when exact is set).  `many`:
 * the message of dequeue_many / up_to (differs for PaddingFIFOQueue). */
static int oor_message_ok(const trial *t, const char *msg, int many, int64_t n, int exact) {
  const char *head = many ? t->msg_oor_many : t->msg_oor;
  if (!starts_with(msg, head)) return 0;
  long long r, s;
  char tail;
  if (sscanf(msg + strlen(head), "%lld, current size %lld%c", &r, &s, &tail) != 3 || tail != ')')
    return 0;
  if (r < 1 || r > n || s < 0 || s >= r) return 0;
  if (exact && (r != n || s != 0)) return 0;
  return 1;
}

static void *consumer_main(void *arg) {
  consumer *cs = arg;
  trial *t = cs->t;
  const trial_params *tp = &t->p;
  rng r = rng_make(tp->seed, 100 + (uint64_t)cs->id);
  tfq_status *st = tfq_status_new();
  if (!st) abort();
  int may_token = t->token != NULL, seen_short = 0;
  int kmax = t->kd->max_n && tp->k > t->kd->max_n ? t->kd->max_n : tp->k;
  for (int ops = 0;; ops++) {
    if (tp->early_stop && ops >= tp->cons_ops[cs->id]) break;
    int single = rng_pct(&r, tp->cons_single_pct);
    int upto = !single && rng_pct(&r, tp->cons_upto_pct);
    int64_t n = single ? 1 : (int64_t)rng_below(&r, (unsigned)kmax + 1);
    if (seen_short && !single) { /* after a short dequeue_many: finish with dequeue_up_to */
      upto = 1;
      if (n == 0) n = 1;
    }
    tfq_cancel *c = may_token && rng_pct(&r, tp->token_pct) ? t->token : NULL;
    int64_t to = draw_timeout(&r, tp);
    tfq_tuple *out = NULL;
    const char *op = single ? "dequeue" : upto ? "dequeue_up_to" : "dequeue_many";
    atomic_store(&cs->state, single ? ST_DEQ : upto ? ST_DEQ_UPTO : ST_DEQ_MANY);
    tfq_code code = single ? tfq_queue_dequeue(t->q, &out, c, to, st)
                    : upto ? tfq_queue_dequeue_up_to(t->q, n, &out, c, to, st)
                           : tfq_queue_dequeue_many(t->q, n, &out, c, to, st);
    atomic_store(&cs->state, ST_RUN);
    atomic_fetch_add(&t->progress, 1);
    cs->c.calls++;
    if (single)
      cs->c.single++;
    else if (upto)
      cs->c.upto++;
    else
      cs->c.many++;
    if (!single && n == 0) cs->c.batch_zero++;
    if (code == TFQ_OK) {
      int64_t rows = n;
      if (!out) {
        code_fail(t, "consumer", cs->id, op, n, code, st, "OK without a result");
        break;
      }
      if (!single) {
        tfq_tensor *k = tfq_tuple_get(out, 0);
        rows = k && tfq_tensor_rank(k) == 1 ? tfq_tensor_dim(k, 0) : -1;
        if (upto && rows >= 1 && rows < n) {
          cs->c.short_upto++;
          if (!tfq_queue_is_closed(t->q))
            code_fail(t, "consumer", cs->id, op, n, code, st,
                      "returned fewer rows than n on an open queue");
        } else if (rows != n) {
          fail(&t->id, CHK_PAIRING, "consumer %d: %s(%" PRId64 ") returned %" PRId64 " rows",
               cs->id, op, n, rows);
          rows = -1;
        }
      }
      if (rows >= 0)
        take_result(t, "consumer", cs->id, out, !single, rows, &cs->log, &cs->nlog, &cs->caplog,
                    &cs->c, NULL);
      if (rows > 0) cs->c.ok_items += rows;
      tfq_tuple_free(out);
      continue;
    }
    if (out) code_fail(t, "consumer", cs->id, op, n, code, st, "failed call set *out");
    tfq_tuple_free(out);
    const char *msg = tfq_status_message(st);
    if (!single && n == 0) {
      code_fail(t, "consumer", cs->id, op, n, code, st, "a batch dequeue of 0 must succeed");
      break;
    }
    if (n >= 2) cs->c.failed_dequeue_batches++;
    if (code == TFQ_OUT_OF_RANGE) {
      cs->c.out_of_range++;
      if (!tfq_queue_is_closed(t->q))
        code_fail(t, "consumer", cs->id, op, n, code, st, "the queue is not closed");
      if (!oor_message_ok(t, msg, !single, n, single || upto))
        code_fail(t, "consumer", cs->id, op, n, code, st, "wrong message");
      if (single || upto) break; /* closed and empty: nothing more will come */
      seen_short = 1;
    } else if (code == TFQ_CANCELLED && !strcmp(msg, MSG_DEQ_CANCELLED)) {
      cs->c.cancelled_token++;
      if (!c || !tfq_cancel_is_triggered(c))
        code_fail(t, "consumer", cs->id, op, n, code, st, "the call had no triggered token");
      may_token = 0;
    } else if (code == TFQ_DEADLINE_EXCEEDED) {
      cs->c.deadline++;
      if (to < 0) code_fail(t, "consumer", cs->id, op, n, code, st, "no deadline was given");
      if (strcmp(msg, MSG_DEADLINE))
        code_fail(t, "consumer", cs->id, op, n, code, st, "wrong message");
    } else {
      code_fail(t, "consumer", cs->id, op, n, code, st, "unexpected code");
      break;
    }
  }
  tfq_status_free(st);
  atomic_store(&cs->state, -1);
  atomic_fetch_add(&t->consumers_done, 1);
  return NULL;
}

/* ---- the schedule: closer and canceller --------------------------------------------------- */

/* Waits until `at` calls completed, or nothing more can happen without us. */
static void wait_moment(trial *t, unsigned at) {
  while (atomic_load(&t->progress) < at && atomic_load(&t->producers_done) < NPROD &&
         atomic_load(&t->consumers_done) < NCONS) {
    struct timespec d = {0, 20 * 1000};
    nanosleep(&d, NULL);
  }
}

static void *closer_main(void *arg) {
  schedule_thread *s = arg;
  trial *t = s->t;
  const trial_params *tp = &t->p;
  tfq_status *st = tfq_status_new();
  if (!st) abort();
  wait_moment(t, tp->close_at);
  atomic_store(&t->close_issued, 1);
  atomic_store(&s->state, ST_CLOSE);
  if (tp->closer == CLOSE_CANCELLING) {
    atomic_store(&t->cancelling_close_issued, 1);
    s->close_code = tfq_queue_close(t->q, 1, NULL, TFQ_NO_TIMEOUT, st);
    if (s->close_code != TFQ_OK)
      code_fail(t, "closer", 0, "close(cancel_pending_enqueues=1)", 0, s->close_code, st,
                "a cancelling close always succeeds");
  } else {
    tfq_cancel *c = tp->closer_token ? t->token : NULL;
    s->close_code = tfq_queue_close(t->q, 0, c, tp->closer_timeout, st);
    const char *msg = tfq_status_message(st);
    int ok = s->close_code == TFQ_OK ||
             (s->close_code == TFQ_CANCELLED && c && tfq_cancel_is_triggered(c) &&
              !strcmp(msg, MSG_ENQ_CANCELLED)) ||
             (s->close_code == TFQ_DEADLINE_EXCEEDED && tp->closer_timeout >= 0 &&
              !strcmp(msg, MSG_DEADLINE));
    if (!ok) code_fail(t, "closer", 0, "close", 0, s->close_code, st, "unexpected code");
    if (s->close_code == TFQ_OK && !tfq_queue_is_closed(t->q))
      code_fail(t, "closer", 0, "close", 0, s->close_code, st, "the queue is not closed after");
  }
  tfq_status_free(st);
  atomic_store(&s->state, -1);
  return NULL;
}

static void *canceller_main(void *arg) {
  schedule_thread *s = arg;
  trial *t = s->t;
  wait_moment(t, t->p.cancel_at);
  atomic_store(&s->state, ST_CANCEL);
  if (t->coord) {
    /* A Coordinator's stop triggers its cancel token: the same effect on the calls carrying it,
     * with the stop's code kept (OUT_OF_RANGE is clean: not an error). */
    tfq_status *st = tfq_status_new();
    if (!st) abort();
    tfq_code code = t->p.coord_code;
    if (tfq_coord_request_stop(t->coord, code, code ? "stress stop" : NULL) != TFQ_OK)
      fail(&t->id, CHK_CODES, "tfq_coord_request_stop failed");
    if (!tfq_coord_should_stop(t->coord))
      fail(&t->id, CHK_CODES, "tfq_coord_should_stop is 0 after tfq_coord_request_stop");
    tfq_code err = tfq_coord_error(t->coord, st);
    tfq_code want = code == TFQ_OUT_OF_RANGE ? TFQ_OK : code;
    if (err != want)
      fail(&t->id, CHK_CODES, "tfq_coord_error %d after a stop with code %d (expected %d)",
           (int)err, (int)code, (int)want);
    tfq_status_free(st);
  } else {
    tfq_cancel_trigger(t->token);
  }
  if (!tfq_cancel_is_triggered(t->token))
    fail(&t->id, CHK_CODES, "tfq_cancel_is_triggered is 0 after the %s",
         t->coord ? "Coordinator's stop" : "tfq_cancel_trigger");
  atomic_store(&s->state, -1);
  return NULL;
}

/* ---- one trial ------------------------------------------------------------------------------ */

typedef struct figures {
  long trials, long_trials, offered, enq_ok_items, failed_enqueue_calls, failed_with_prefix,
      prefix_items, consumed, drained, closes_plain, closes_cancelling, closer_cancelled,
      closer_deadline, token_trials, timeout_trials, early_stop_trials, inversions, drain_max,
      drains_ge2;
  counters prod, cons;
  int64_t max_trial_ns, total_ns;
} figures;

static void add_counters(counters *a, const counters *b) {
  long *x = (long *)a;
  const long *y = (const long *)b;
  for (size_t i = 0; i < sizeof *a / sizeof(long); i++) x[i] += y[i];
}

static void start_thread(pthread_t *th, void *(*fn)(void *), void *arg) {
  int rc = pthread_create(th, NULL, fn, arg);
  if (rc) {
    fprintf(stderr, "pthread_create: %s\n", strerror(rc));
    abort();
  }
}

static void join_thread(pthread_t th) {
  if (pthread_join(th, NULL)) abort();
}

/* Verifies the accounting of a finished trial (all threads joined). */
static void check_trial(trial *t, figures *fg) {
  uint64_t seen[NPROD][BITWORDS];
  memset(seen, 0, sizeof seen);
  for (int L = 0; L <= NCONS; L++) {
    const int64_t *log = L < NCONS ? t->cons[L].log : t->drain_log;
    int nlog = L < NCONS ? t->cons[L].nlog : t->ndrain;
    const char *who = L < NCONS ? "consumer" : "drain";
    int64_t last[NPROD];
    for (int i = 0; i < NPROD; i++) last[i] = -1;
    for (int i = 0; i < nlog; i++) {
      int64_t pid = log[i] >> 32, seq = log[i] & 0xFFFFFFFF;
      if (pid < 0 || pid >= NPROD || seq >= t->p.nitems[pid] ||
          t->prod[pid].fate[seq] == FATE_NONE) {
        fail(&t->id, CHK_NODUP, "%s %d received %" PRId64 ":%" PRId64 ", never offered", who, L,
             pid, seq);
        continue;
      }
      uint64_t bit = (uint64_t)1 << (seq % 64);
      if (seen[pid][seq / 64] & bit)
        fail(&t->id, CHK_NODUP, "item %" PRId64 ":%" PRId64 " dequeued twice (again by %s %d)", pid,
             seq, who, L);
      seen[pid][seq / 64] |= bit;
      if (t->kd->order == ORDER_SHUFFLED && seq <= last[pid]) fg->inversions++;
      if (t->kd->order == ORDER_FIFO && seq <= last[pid])
        fail(&t->id, CHK_ORDER, "%s %d received %" PRId64 ":%" PRId64 " after %" PRId64 ":%" PRId64,
             who, L, pid, seq, pid, last[pid]);
      last[pid] = seq;
    }
  }
#define SEEN(p, s) ((seen[p][(s) / 64] >> ((s) % 64)) & 1)
  for (int pid = 0; pid < NPROD; pid++) {
    const producer *p = &t->prod[pid];
    long lost = 0;
    int first_lost = -1;
    for (int s = 0; s < t->p.nitems[pid]; s++) {
      if (p->fate[s] != FATE_NONE) fg->offered++;
      if (p->fate[s] == FATE_OK && !SEEN(pid, s)) {
        if (!lost++) first_lost = s;
      }
    }
    if (lost)
      fail(&t->id, CHK_NOLOSS,
           "producer %d: %ld items of OK enqueue calls never dequeued (first: seq %d)", pid, lost,
           first_lost);
    for (int f = 0; f < p->nfailed; f++) {
      const failed_call *fc = &p->failed[f];
      int j = 0;
      while (j < fc->count && SEEN(pid, fc->first + j)) j++;
      int prefix = j;
      for (; j < fc->count; j++)
        if (SEEN(pid, fc->first + j)) break;
      fg->failed_enqueue_calls++;
      if (prefix > 0) {
        fg->failed_with_prefix++;
        fg->prefix_items += prefix;
      }
      if (j < fc->count || (fc->single && prefix))
        fail(&t->id, CHK_PREFIX,
             "producer %d: failed %s of seq %d..%d (%s) delivered slices that are not a prefix "
             "(prefix %d, then seq %d)",
             pid, fc->single ? "enqueue" : "enqueue_many", fc->first, fc->first + fc->count - 1,
             tfq_code_name(fc->code), prefix, fc->first + j);
    }
  }
#undef SEEN
}

static void run_trial(size_t kind_index, uint64_t index, figures *fg) {
  const kind_desc *kd = &KINDS[kind_index];
  trial *t = calloc(1, sizeof *t);
  if (!t) abort();
  draw_params(&t->p, trial_seed(g_base_seed, kind_index, index), kd);
  t->id = (trial_id){kind_index, index, &t->p};
  t->kd = kd;
  const trial_params *tp = &t->p;
  tfq_status *st = tfq_status_new();
  if (!st) abort();

  tfq_spec *spec = make_spec(kd);
  tfq_queue_options *o = NULL;
  if (tfq_queue_options_new(&o, st) || tfq_queue_options_set_name(o, "stress_queue", st)) abort();
  tfq_queue_options_set_capacity(o, CAPACITY);
  kd->options(o, tp);
  if (tfq_queue_new(kd->kind, spec, o, &t->q, st)) {
    printf("# cannot create a %s: %s %s\n", tfq_queue_kind_name(kd->kind),
           tfq_code_name(tfq_status_code(st)), tfq_status_message(st));
    fail(&t->id, CHK_CODES, "tfq_queue_new failed");
    tfq_queue_options_free(o);
    tfq_spec_free(spec);
    tfq_status_free(st);
    free(t);
    return;
  }
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  const tfq_spec *qs = tfq_queue_spec(t->q);
  size_t kc = kd->lay == LAYOUT_PRIORITY ? 1 : 0;
  if (!qs || tfq_spec_size(qs) != kc + 2 ||
      (kc && (tfq_spec_dtype(qs, 0) != TFQ_INT64 || tfq_spec_rank(qs, 0) != 0)))
    fail(&t->id, CHK_PAIRING, "tfq_queue_spec() has %zu components%s", qs ? tfq_spec_size(qs) : 0,
         kc ? " (expected the int64 [] priority, key, payload)" : "");
  const char *kname = tfq_queue_kind_name(kd->kind), *qname = tfq_queue_name(t->q);
  /* PaddingFIFOQueue inherits FIFOQueue's enqueue and single dequeue, whose messages say
   * "FIFOQueue" (as TF); its own dequeue_many/up_to say "PaddingFIFOQueue". */
  const char *kname1 = kd->kind == TFQ_QUEUE_PADDING_FIFO ? "FIFOQueue" : kname;
  snprintf(t->msg_closed, sizeof t->msg_closed, "%s '%s' is closed.", kname1, qname);
  snprintf(t->msg_oor, sizeof t->msg_oor,
           "%s '%s' is closed and has insufficient elements (requested ", kname1, qname);
  snprintf(t->msg_oor_many, sizeof t->msg_oor_many,
           "%s '%s' is closed and has insufficient elements (requested ", kname, qname);
  snprintf(t->msg_already, sizeof t->msg_already, "Queue '%s' is already closed.", qname);
  if (tp->use_token && tp->coord_stop) {
    if (tfq_coord_new(&t->coord, st)) abort();
    t->token = tfq_coord_cancel(t->coord); /* owned by the Coordinator */
  } else if (tp->use_token && tfq_cancel_new(&t->token, st)) {
    abort();
  }

  int total = 0;
  for (int i = 0; i < NPROD; i++) total += tp->nitems[i];
  for (int i = 0; i < NCONS; i++) {
    t->cons[i].caplog = total;
    t->cons[i].log = malloc(sizeof(int64_t) * (size_t)(total + 1));
    if (!t->cons[i].log) abort();
  }
  t->capdrain = total;
  t->drain_log = malloc(sizeof(int64_t) * (size_t)(total + 1));
  if (!t->drain_log) abort();

  atomic_store(&g_current, t);
  int64_t t0 = now_ns();
  atomic_store(&g_trial_start_ns, t0);

  for (int i = 0; i < NCONS; i++) {
    t->cons[i].t = t;
    t->cons[i].id = i;
    start_thread(&t->cons[i].th, consumer_main, &t->cons[i]);
  }
  for (int i = 0; i < NPROD; i++) {
    t->prod[i].t = t;
    t->prod[i].id = i;
    start_thread(&t->prod[i].th, producer_main, &t->prod[i]);
  }
  t->closer.t = t->canceller.t = t;
  if (tp->closer != CLOSE_NONE) {
    t->closer.active = 1;
    start_thread(&t->closer.th, closer_main, &t->closer);
  }
  if (t->token) {
    t->canceller.active = 1;
    start_thread(&t->canceller.th, canceller_main, &t->canceller);
  }

  for (int i = 0; i < NPROD; i++) join_thread(t->prod[i].th);
  if (t->closer.active) join_thread(t->closer.th);
  if (t->canceller.active) join_thread(t->canceller.th);

  /* Main's close.  No enqueue is pending any more, so a plain close runs at once. */
  int closed_before = tfq_queue_is_closed(t->q);
  if (t->closer.active && t->closer.close_code == TFQ_OK && !closed_before)
    fail(&t->id, CHK_CODES, "the closer's close returned OK but the queue is not closed");
  atomic_store(&t->close_issued, 1);
  if (tp->final_cancelling) atomic_store(&t->cancelling_close_issued, 1);
  tfq_code cc = tfq_queue_close(t->q, tp->final_cancelling, NULL, TFQ_NO_TIMEOUT, st);
  if (tp->final_cancelling || !closed_before) {
    if (cc != TFQ_OK) code_fail(t, "main", 0, "close", 0, cc, st, "the final close should succeed");
  } else if (cc != TFQ_CANCELLED || strcmp(tfq_status_message(st), t->msg_already)) {
    code_fail(t, "main", 0, "close", 0, cc, st, "expected CANCELLED \"... is already closed.\"");
  }

  for (int i = 0; i < NCONS; i++) join_thread(t->cons[i].th);

  /* Drain what is left (consumers that quit early, or slices of cancelled enqueue_many). */
  rng r = rng_make(tp->seed, 1000);
  tfq_code dc = TFQ_OK;
  int64_t last_n = 0, last_prio = INT64_MIN;
  for (int guard = 0; guard < 4 * MAX_ITEMS * NPROD + 8; guard++) {
    tfq_tuple *out = NULL;
    last_n = 1 + (int64_t)rng_below(&r, (unsigned)tp->k + 1);
    dc = tfq_queue_dequeue_up_to(t->q, last_n, &out, NULL, TFQ_NO_TIMEOUT, st);
    if (dc != TFQ_OK) break;
    tfq_tensor *k = tfq_tuple_get(out, 0);
    int64_t rows = k && tfq_tensor_rank(k) == 1 ? tfq_tensor_dim(k, 0) : -1;
    if (rows < 1 || rows > last_n)
      fail(&t->id, CHK_DRAIN, "drain: dequeue_up_to(%" PRId64 ") returned %" PRId64 " rows", last_n,
           rows);
    else
      take_result(t, "drain", NCONS, out, 1, rows, &t->drain_log, &t->ndrain, &t->capdrain,
                  &t->drain_c, &last_prio);
    tfq_tuple_free(out);
  }
  if (dc != TFQ_OUT_OF_RANGE || !oor_message_ok(t, tfq_status_message(st), 1, last_n, 1))
    fail(&t->id, CHK_DRAIN, "drain ended with %s \"%s\"", tfq_code_name(dc),
         tfq_status_message(st));
  if (tfq_queue_size(t->q) != 0 || !tfq_queue_is_closed(t->q))
    fail(&t->id, CHK_DRAIN, "after the drain: size %" PRId64 ", closed %d", tfq_queue_size(t->q),
         tfq_queue_is_closed(t->q));

  int64_t dt = now_ns() - t0;
  atomic_store(&g_trial_start_ns, 0);
  atomic_store(&g_current, NULL);

  check_trial(t, fg);

  fg->trials++;
  fg->long_trials += tp->long_trial;
  fg->token_trials += tp->use_token;
  fg->timeout_trials += tp->timeout_pct > 0;
  fg->early_stop_trials += tp->early_stop;
  if (tp->closer == CLOSE_PLAIN) {
    fg->closes_plain++;
    fg->closer_cancelled += t->closer.close_code == TFQ_CANCELLED;
    fg->closer_deadline += t->closer.close_code == TFQ_DEADLINE_EXCEEDED;
  }
  fg->closes_cancelling += tp->closer == CLOSE_CANCELLING;
  for (int i = 0; i < NPROD; i++) {
    add_counters(&fg->prod, &t->prod[i].c);
    fg->enq_ok_items += t->prod[i].c.ok_items;
  }
  for (int i = 0; i < NCONS; i++) {
    add_counters(&fg->cons, &t->cons[i].c);
    fg->consumed += t->cons[i].nlog;
  }
  fg->drained += t->ndrain;
  add_counters(&fg->cons, &t->drain_c);
  if (t->ndrain > fg->drain_max) fg->drain_max = t->ndrain;
  fg->drains_ge2 += t->ndrain >= 2;
  fg->total_ns += dt;
  if (dt > fg->max_trial_ns) fg->max_trial_ns = dt;

  for (int i = 0; i < NCONS; i++) free(t->cons[i].log);
  free(t->drain_log);
  tfq_queue_free(t->q);
  if (t->coord)
    tfq_coord_free(t->coord); /* frees its token */
  else
    tfq_cancel_free(t->token);
  tfq_status_free(st);
  free(t);
}

static void print_figures(const kind_desc *kd, const figures *f) {
  const char *kname = tfq_queue_kind_name(kd->kind);
  printf("# %s: %ld trials (%ld long) in %.1f s, slowest trial %.1f ms\n", kname, f->trials,
         f->long_trials, (double)f->total_ns / 1e9, (double)f->max_trial_ns / 1e6);
  printf(
      "#   schedule: %ld plain closes mid-trial (%ld cancelled by the token, %ld timed out), "
      "%ld cancelling closes, %ld trials with a token, %ld with deadlines, %ld with early "
      "consumer stop\n",
      f->closes_plain, f->closer_cancelled, f->closer_deadline, f->closes_cancelling,
      f->token_trials, f->timeout_trials, f->early_stop_trials);
  printf(
      "#   items: %ld offered, %ld from OK enqueue calls, %ld dequeued by consumers, %ld "
      "drained after close\n",
      f->offered, f->enq_ok_items, f->consumed, f->drained);
  printf(
      "#   producers: %ld calls (%ld enqueue, %ld enqueue_many, %ld of them empty); failed: "
      "%ld closed, %ld cancelled by token, %ld by cancelling close, %ld deadline\n",
      f->prod.calls, f->prod.single, f->prod.many, f->prod.batch_zero, f->prod.cancelled_closed,
      f->prod.cancelled_token, f->prod.cancelled_close_enq, f->prod.deadline);
  if (kd->kind == TFQ_QUEUE_FIFO)
    printf("#   producers wrote %ld items in place (tfq__queue_reserve / tfq__queue_commit)\n",
           f->prod.reserved);
  printf(
      "#   failed enqueue calls: %ld, of which %ld enqueue_many left a prefix (%ld items, "
      "delivered)\n",
      f->failed_enqueue_calls, f->failed_with_prefix, f->prefix_items);
  printf(
      "#   consumers: %ld calls (%ld dequeue, %ld dequeue_many, %ld dequeue_up_to, %ld with "
      "n=0); %ld short dequeue_up_to after close; failed: %ld OUT_OF_RANGE, %ld cancelled by "
      "token, %ld deadline; %ld failed batch dequeues with n>=2 (any partial batch must go "
      "back)\n",
      f->cons.calls, f->cons.single, f->cons.many, f->cons.upto, f->cons.batch_zero,
      f->cons.short_upto, f->cons.out_of_range, f->cons.cancelled_token, f->cons.deadline,
      f->cons.failed_dequeue_batches);
  if (kd->order == ORDER_SHUFFLED)
    printf(
        "#   shuffling: %ld times a consumer (or the drain) got a producer's item after a later "
        "one\n",
        f->inversions);
  if (kd->lay == LAYOUT_PADDED)
    printf("#   padding: %ld batches mixed element lengths, %ld rows carried zero padding\n",
           f->cons.padded_batches, f->cons.padded_rows);
  if (kd->order == ORDER_PRIORITY)
    printf(
        "#   priority: %ld batches of >= 2 rows checked ascending; %ld sequential drains of >= 2 "
        "items checked ascending (largest %ld items)\n",
        f->cons.sorted_batches, f->drains_ge2, f->drain_max);
}

/* ---- main ------------------------------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end) return -1;
  *out = v;
  return 0;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [--trials N] [--seed S] [--trial T] [--trial-timeout SECONDS] "
          "[--hang-pause]\n"
          "environment: TFQ_STRESS_TRIALS, TFQ_STRESS_SEED override --trials and --seed\n",
          g_argv0);
}

int main(int argc, char **argv) {
  uint64_t trials = 10000, only_trial = 0, v;
  int have_seed = 0, have_only = 0;
  g_argv0 = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(a, "--hang-pause")) {
      g_hang_pause = 1;
      continue;
    }
    if (i + 1 >= argc || parse_u64(argv[i + 1], &v)) {
      usage(stderr);
      return 2;
    }
    if (!strcmp(a, "--trials")) {
      trials = v;
    } else if (!strcmp(a, "--seed")) {
      g_base_seed = v;
      have_seed = 1;
    } else if (!strcmp(a, "--trial")) {
      only_trial = v;
      have_only = 1;
    } else if (!strcmp(a, "--trial-timeout")) {
      g_trial_timeout_s = (int64_t)v;
    } else {
      usage(stderr);
      return 2;
    }
    i++;
  }
  const char *e;
  if ((e = getenv("TFQ_STRESS_TRIALS")) && *e && !parse_u64(e, &v)) trials = v;
  if ((e = getenv("TFQ_STRESS_SEED")) && *e && !parse_u64(e, &v)) {
    g_base_seed = v;
    have_seed = 1;
  }
  if (!have_seed) {
    uint64_t s = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
    g_base_seed = splitmix64(&s);
  }
  if (have_only) trials = 1;

  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("1..%d\n", (int)(NKINDS * CHK_COUNT));
  printf("# stress_queues: %d producers x %d consumers, capacity %d, seed 0x%016" PRIx64
         ", %" PRIu64 " trials per kind%s\n",
         NPROD, NCONS, CAPACITY, g_base_seed, trials, UNDER_TSAN ? " (ThreadSanitizer build)" : "");
  if (have_only) printf("# only trial %" PRIu64 "\n", only_trial);

  pthread_t wd;
  start_thread(&wd, watchdog_main, NULL);
  int failed = 0;
  for (size_t k = 0; k < NKINDS; k++) {
    const char *kname = tfq_queue_kind_name(KINDS[k].kind);
    long before[CHK_COUNT];
    pthread_mutex_lock(&g_fail_mu);
    memcpy(before, g_fail_count, sizeof before);
    pthread_mutex_unlock(&g_fail_mu);
    g_tap_base = (int)(k * CHK_COUNT) + 1;
    figures fg;
    memset(&fg, 0, sizeof fg);
    for (uint64_t i = 0; i < trials; i++) run_trial(k, have_only ? only_trial : i, &fg);
    print_figures(&KINDS[k], &fg);
    /* RandomShuffleQueue: over enough items, a FIFO order would mean no shuffling at all. */
    if (KINDS[k].order == ORDER_SHUFFLED && fg.consumed + fg.drained >= 2000 && !fg.inversions) {
      pthread_mutex_lock(&g_fail_mu);
      g_fail_count[CHK_ORDER]++;
      pthread_mutex_unlock(&g_fail_mu);
      printf("# FAIL [%s] %ld items dequeued, every producer's in order\n",
             check_title(&KINDS[k], CHK_ORDER), fg.consumed + fg.drained);
    }
    pthread_mutex_lock(&g_fail_mu);
    for (int c = 0; c < CHK_COUNT; c++) {
      long n = g_fail_count[c] - before[c];
      if (n) {
        failed = 1;
        printf("not ok %d - %s: %s\n", g_tap_base + c, kname, check_title(&KINDS[k], c));
        printf("# %ld failures; seed 0x%016" PRIx64 "\n", n, g_base_seed);
      } else {
        printf("ok %d - %s: %s\n", g_tap_base + c, kname, check_title(&KINDS[k], c));
      }
    }
    pthread_mutex_unlock(&g_fail_mu);
  }
  atomic_store(&g_watchdog_stop, 1);
  join_thread(wd);
  return failed;
}
