/* The queue engine: the ring and the kinds' storage disciplines, the attempt lists E and D with
 * their flush, the owner's spin-then-sleep wait, the single-element fast paths and the enqueue,
 * dequeue and close calls.  This file holds the whole locking protocol (with the cancel token's
 * half in cancel.c), the one tests/model/queue.pml mirrors.  See queue_internal.h for the memory
 * model and include/tfq/queue.h for the contract; construction is in queue_new.c, the element
 * tuples at the engine's edge in queue_tuple.c. */
#include <assert.h>
#include <string.h>

#include "../core/cpu_relax.h"
#include "queue_internal.h"
#include "queues_shared.h"

/* A blocked call spins lock-free for up to SPIN_NS before it sleeps on its condition variable.  A
 * cross-vCPU wake-up costs ~45 us on the development VM, so a few microseconds of spinning for the
 * other side to act is far cheaper than sleeping; spinning much longer only burns the CPU that the
 * completing thread may need (4 threads on 2 cores, or any background load).  The bound is in
 * time, not iterations: PAUSE costs ~25 ns on Zen 3 and Skylake+ but ~1-4 ns on older cores.
 *
 * The budget adapts, per queue and side (q->spin_ns): a wait that outlasts the spin and then
 * ends more than SPIN_NS after it began halves the budget (down to nothing), since spinning did
 * not pay and a pipeline whose consumer waits a whole read step each time would otherwise burn
 * SPIN_NS of a core per batch that its producers need; a wait that ends within SPIN_NS (the
 * completer stamps the time when it wakes a sleeper) restores the full budget.  So a consumer
 * that keeps pace spins as before, and one that mostly waits sleeps at once. */
#define SPIN_NS 8000     /* spin budget before sleeping: ~1/5 of a cross-vCPU wake-up */
#define SPIN_MIN_NS 500  /* a budget halved below this is none */
#define INITIAL_ALLOC 64 /* rows of the first ring allocation (at most the capacity) */

#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define NOINLINE
#define PREFETCH(p) ((void)(p))
#endif

/* Copies a string's n >= 1 bytes, the short ones (most feature values) without a memcpy call:
 * two overlapping fixed-size moves that stay inside [src, src + n). */
static inline void copy_string(char *dst, const char *src, size_t n) {
  if (n > 16) {
    memcpy(dst, src, n);
  } else if (n >= 8) {
    memcpy(dst, src, 8);
    memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(dst, src, 4);
    memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

/* Copies n bytes; the common 4- and 8-byte rows (scalars) become single moves instead of a
 * memcpy call on the single-element hot path. */
static inline void copy_bytes(void *dst, const void *src, size_t n) {
  if (n == 8)
    memcpy(dst, src, 8);
  else if (n == 16) /* one string view */
    memcpy(dst, src, 16);
  else if (n == 4)
    memcpy(dst, src, 4);
  else
    memcpy(dst, src, n);
}

/* The clock half of a spin bounded in time: called every so many PAUSEs, it starts the budget
 * of `budget_ns` at its first call (*end == 0) and returns 1 once the budget is spent. */
static inline int spin_expired(int64_t *end, int64_t budget_ns) {
  int64_t now = tfq__now_ns();
  if (!*end) {
    *end = now + budget_ns;
    return 0;
  }
  return now >= *end;
}

/* ---- ring storage ---- */

/* `count` is written under the mutex only, but a single enqueue that finds the queue full polls
 * it without the lock (wait_for_room), so every write is a relaxed atomic store (a plain store
 * on common CPUs).  Reads under the mutex stay plain. */
static inline void set_count(tfq_queue *q, int64_t v) {
  __atomic_store_n(&q->count, v, __ATOMIC_RELAXED);
}

static inline int64_t ring_idx(const tfq_queue *q, int64_t logical) {
  int64_t i = q->head + logical;
  return i >= q->alloc ? i - q->alloc : i;
}

/* Copies the `count` rows from `head` of a ring of `alloc` rows of `rb` bytes to the start of
 * `to` (a fresh linear layout). */
static void relayout(const tfq_queue *q, const char *from, char *to, size_t rb) {
  if (!q->count || !rb) return;
  int64_t first = q->alloc - q->head < q->count ? q->alloc - q->head : q->count;
  memcpy(to, from + (size_t)q->head * rb, (size_t)first * rb);
  memcpy(to + (size_t)first * rb, from, (size_t)(q->count - first) * rb);
}

/* Makes room for `need` stored rows.  Rows are copied to a fresh linear layout. */
static int ring_reserve(tfq_queue *q, int64_t need) {
  if (need <= q->alloc) return 0;
  int64_t na = q->alloc ? q->alloc * 2 : INITIAL_ALLOC;
  int64_t cap_room = q->capacity + q->held;
  if (na > cap_room) na = cap_room;
  if (na < need) na = need;
  size_t ncomp = q->spec->n;
  /* Allocate all new buffers first so a failure leaves the queue unchanged: per component, the
   * rows (dense, str) and the tensors (str, boxed). */
  void **nb = tfq__calloc(2 * ncomp, sizeof(void *));
  if (!nb) return -1;
  for (size_t c = 0; c < ncomp; c++) {
    const tfq__store *s = &q->st[c];
    size_t bytes, refs;
    int fail = 0;
    if (s->dense || s->str)
      fail |= !tfq__mul_ok((size_t)na, s->row_bytes ? s->row_bytes : 1, &bytes) ||
              !(nb[2 * c] = tfq_malloc(bytes));
    if (!s->dense && !fail)
      fail |= !tfq__mul_ok((size_t)na, sizeof(tfq_tensor *), &refs) ||
              !(nb[2 * c + 1] = tfq_malloc(refs));
    if (fail) {
      for (size_t k = 0; k <= 2 * c + 1; k++) tfq_free(nb[k]);
      tfq_free(nb);
      return -1;
    }
  }
  for (size_t c = 0; c < ncomp; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense || s->str) {
      relayout(q, s->bytes, nb[2 * c], s->row_bytes);
      tfq_free(s->bytes);
      s->bytes = nb[2 * c];
    }
    if (!s->dense) {
      relayout(q, (const char *)s->refs, nb[2 * c + 1], sizeof(tfq_tensor *));
      tfq_free(s->refs);
      s->refs = nb[2 * c + 1];
    }
  }
  tfq_free(nb);
  q->head = 0;
  q->alloc = na;
  return 0;
}

/* String views of ring slot `slot` of a str store. */
static inline tfq__str *sv_row(const tfq__store *s, int64_t slot) {
  return (tfq__str *)s->bytes + (size_t)slot * (size_t)s->per;
}

/* String views of row `row` of string tensor `t` laid out as [rows] + element shape. */
static inline tfq__str *sv_of(const tfq_tensor *t, const tfq__store *s, int64_t row) {
  return tfq__strs(t) + (size_t)row * (size_t)s->per;
}

/* Puts `k` rows into str store `s` at `slot` from row `row` of the attempt's source: sliced rows
 * move in (boxed_src), or the rows of the enqueued tensor are shared (k references). */
static void str_fill(tfq__store *s, size_t c, int64_t slot, const tfq__attempt *a, int64_t row,
                     int64_t k) {
  tfq_tensor **bs = a->boxed_src ? &a->boxed_src[c * (size_t)a->stride + (size_t)row] : NULL;
  if (bs && bs[0]) {
    for (int64_t r = 0; r < k; r++) {
      memcpy(sv_row(s, slot + r), tfq__strs(bs[r]), s->row_bytes);
      s->refs[slot + r] = bs[r];
      bs[r] = NULL;
    }
    return;
  }
  tfq_tensor *t = a->src->c[c];
  memcpy(sv_row(s, slot), sv_of(t, s, row), (size_t)k * s->row_bytes);
  for (int64_t r = 0; r < k; r++) s->refs[slot + r] = t;
  atomic_fetch_add_explicit(&t->refs, k, memory_order_relaxed);
}

int tfq__ring_init(tfq_queue *q) {
  q->spin_ns[0] = q->spin_ns[1] = SPIN_NS;
  int64_t first = q->capacity < INITIAL_ALLOC ? q->capacity : INITIAL_ALLOC;
  return first > 0 ? ring_reserve(q, first) : 0;
}

void tfq__ring_free(tfq_queue *q) {
  if (!q->st) return;
  for (int64_t i = 0; i < q->count; i++) {
    int64_t slot = ring_idx(q, i);
    for (size_t c = 0; c < q->spec->n; c++)
      if (!q->st[c].dense && q->st[c].refs) tfq_tensor_free(q->st[c].refs[slot]);
  }
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq_free(q->st[c].bytes);
    tfq_free(q->st[c].refs);
  }
  tfq_free(q->st);
  q->st = NULL;
}

/* Copies row `row` of the source into ring slot `slot`.  For boxed components the attempt's
 * pre-made element tensors (or, for a single enqueue, a new reference to the component) move in. */
static void slot_fill(tfq_queue *q, int64_t slot, const tfq__attempt *a, int64_t row) {
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      const char *src = a->src_rows ? (const char *)a->src_rows[c]
                                    : (const char *)a->src->c[c]->data + (size_t)row * s->row_bytes;
      copy_bytes(s->bytes + (size_t)slot * s->row_bytes, src, s->row_bytes);
    } else if (s->str) {
      str_fill(s, c, slot, a, a->many ? row : 0, 1);
    } else if (a->boxed_src) {
      tfq_tensor **bs = &a->boxed_src[c * (size_t)a->stride + (size_t)row];
      s->refs[slot] = *bs;
      *bs = NULL;
    } else {
      s->refs[slot] = tfq_tensor_ref(a->src->c[c]);
    }
  }
}

/* Moves ring slot `slot` into row `row` of the attempt's destination. */
static void slot_take(tfq_queue *q, int64_t slot, tfq__attempt *a, int64_t row) {
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      copy_bytes((char *)a->dst->c[c]->data + (size_t)row * s->row_bytes,
                 s->bytes + (size_t)slot * s->row_bytes, s->row_bytes);
      continue;
    }
    if (s->str) copy_bytes(sv_of(a->dst->c[c], s, row), sv_row(s, slot), s->row_bytes);
    a->boxed_dst[c * (size_t)a->stride + (size_t)row] = s->refs[slot];
  }
}

/* Writes row `row` of the attempt's destination back into ring slot `slot` (restores). */
static void slot_restore(tfq_queue *q, int64_t slot, tfq__attempt *a, int64_t row) {
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      copy_bytes(s->bytes + (size_t)slot * s->row_bytes,
                 (char *)a->dst->c[c]->data + (size_t)row * s->row_bytes, s->row_bytes);
    } else {
      if (s->str) memcpy(sv_row(s, slot), sv_of(a->dst->c[c], s, row), s->row_bytes);
      tfq_tensor **b = &a->boxed_dst[c * (size_t)a->stride + (size_t)row];
      s->refs[slot] = *b;
      *b = NULL;
    }
  }
}

/* ---- per-kind storage disciplines ---- */

/* PriorityQueue: component 0 is the int64 scalar priority. */
static int64_t prio_key(const tfq_queue *q, int64_t logical) {
  int64_t slot = ring_idx(q, logical);
  const tfq__store *s = &q->st[0];
  int64_t v;
  if (s->dense)
    memcpy(&v, s->bytes + (size_t)slot * 8, 8);
  else
    memcpy(&v, s->refs[slot]->data, 8);
  return v;
}

static void swap_slots(tfq_queue *q, int64_t la, int64_t lb) {
  int64_t a = ring_idx(q, la), b = ring_idx(q, lb);
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      char *pa = s->bytes + (size_t)a * s->row_bytes, *pb = s->bytes + (size_t)b * s->row_bytes;
      memcpy(q->swap_tmp, pa, s->row_bytes);
      memcpy(pa, pb, s->row_bytes);
      memcpy(pb, q->swap_tmp, s->row_bytes);
    } else {
      if (s->str) {
        memcpy(q->swap_tmp, sv_row(s, a), s->row_bytes);
        memcpy(sv_row(s, a), sv_row(s, b), s->row_bytes);
        memcpy(sv_row(s, b), q->swap_tmp, s->row_bytes);
      }
      tfq_tensor *t = s->refs[a];
      s->refs[a] = s->refs[b];
      s->refs[b] = t;
    }
  }
}

/* Moves logical element `from` into logical slot `to` (the old `to` was taken). */
static void move_slot(tfq_queue *q, int64_t from, int64_t to) {
  if (from == to) return;
  int64_t a = ring_idx(q, from), b = ring_idx(q, to);
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense || s->str)
      copy_bytes(s->bytes + (size_t)b * s->row_bytes, s->bytes + (size_t)a * s->row_bytes,
                 s->row_bytes);
    if (!s->dense) s->refs[b] = s->refs[a];
  }
}

static void heap_up(tfq_queue *q, int64_t i) {
  while (i > 0) {
    int64_t p = (i - 1) / 2;
    if (prio_key(q, i) >= prio_key(q, p)) return;
    swap_slots(q, i, p);
    i = p;
  }
}

static void heap_down(tfq_queue *q, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < q->count && prio_key(q, l) < prio_key(q, m)) m = l;
    if (r < q->count && prio_key(q, r) < prio_key(q, m)) m = r;
    if (m == i) return;
    swap_slots(q, i, m);
    i = m;
  }
}

/* Appends a row at the back (the storage discipline's insert).  Room must exist. */
static void push_back_row(tfq_queue *q, const tfq__attempt *a, int64_t row, int restoring) {
  int64_t slot = ring_idx(q, q->count);
  if (restoring)
    slot_restore(q, slot, (tfq__attempt *)a, row);
  else
    slot_fill(q, slot, a, row);
  set_count(q, q->count + 1);
  if (q->kind == TFQ_QUEUE_PRIORITY) heap_up(q, q->count - 1);
}

/* A random index of the pool: TF's `word % size` in TF-exact mode, an unbiased PCG32 draw
 * otherwise. */
static int64_t rsq_index_of(tfq_queue *q, int64_t count) {
  if (q->tf_exact) return (int64_t)(tfq__philox_next(&q->philox) % (uint32_t)count);
  return (int64_t)tfq__pcg32_bounded(&q->pcg, (uint32_t)count);
}

static int64_t rsq_index(tfq_queue *q) { return rsq_index_of(q, q->count); }

/* The storage discipline's remove, in two halves: pick_row() chooses the logical element to
 * take (RandomShuffle: a random one; Priority: the heap top; FIFO kinds: the head), the caller
 * copies it out of its slot, and drop_row() closes the gap. */
static inline int64_t pick_row(tfq_queue *q) {
  return q->kind == TFQ_QUEUE_RANDOM_SHUFFLE ? rsq_index(q) : 0;
}

static inline void drop_row(tfq_queue *q, int64_t i) {
  switch (q->kind) {
    case TFQ_QUEUE_RANDOM_SHUFFLE:
      move_slot(q, q->count - 1, i); /* swap-with-last, as TF */
      set_count(q, q->count - 1);
      break;
    case TFQ_QUEUE_PRIORITY:
      move_slot(q, q->count - 1, 0);
      set_count(q, q->count - 1);
      if (q->count > 1) heap_down(q, 0);
      break;
    default:
      q->head = q->head + 1 == q->alloc ? 0 : q->head + 1;
      set_count(q, q->count - 1);
      break;
  }
}

/* Takes one element into row `row` of the attempt (the storage discipline's remove). */
static void take_row(tfq_queue *q, tfq__attempt *a, int64_t row) {
  int64_t i = pick_row(q);
  slot_take(q, ring_idx(q, i), a, row);
  drop_row(q, i);
}

/* RandomShuffleQueue: takes k (>= 1, at most count) random elements into the attempt's next rows
 * -- the same draws and swap-with-last moves as k take_row() calls, but the draws made first and
 * then applied one component at a time, so that each component's loop copies fixed-size rows
 * without a per-row dispatch over the components. */
/* RandomShuffleQueue's gather of one component: row j of dst[] takes slot[j], whose place the
 * ring's last row last[j] fills (TF's removal).  The common row sizes get fixed-size copies the
 * compiler inlines, instead of a memcpy call for each row. */
#define GATHER(RB)                                                                \
  for (int64_t j = 0; j < m; j++) {                                               \
    memcpy(dst + (size_t)j * (RB), ring + (size_t)slot[j] * (RB), (RB));          \
    if (slot[j] != last[j])                                                       \
      memcpy(ring + (size_t)slot[j] * (RB), ring + (size_t)last[j] * (RB), (RB)); \
  }
static void gather_rows(char *dst, char *ring, size_t rb, const int64_t *slot, const int64_t *last,
                        int64_t m) {
  switch (rb) {
    case 4: GATHER(4); break;
    case 8: GATHER(8); break;
    case 12: GATHER(12); break;
    case 16: GATHER(16); break;
    case 24: GATHER(24); break;
    case 32: GATHER(32); break;
    default: GATHER(rb); break;
  }
}
#undef GATHER

static void take_random(tfq_queue *q, tfq__attempt *a, int64_t k) {
  enum { RUN = 64 };
  int64_t slot[RUN], last[RUN];
  while (k > 0) {
    int64_t m = k < RUN ? k : RUN, cnt = q->count, row0 = a->done_rows;
    for (int64_t j = 0; j < m; j++) {
      slot[j] = ring_idx(q, rsq_index_of(q, cnt - j));
      last[j] = ring_idx(q, cnt - j - 1);
    }
    /* The drawn rows are scattered and were mostly written by a producer on another core: ask
     * for all their lines at once rather than one miss after another in the copies below. */
    for (size_t c = 0; c < q->spec->n; c++) {
      const tfq__store *s = &q->st[c];
      if (!s->dense && !s->str) continue;
      for (int64_t j = 0; j < m; j++) PREFETCH(s->bytes + (size_t)slot[j] * s->row_bytes);
    }
    for (size_t c = 0; c < q->spec->n; c++) {
      tfq__store *s = &q->st[c];
      if (s->dense || s->str) {
        char *dst = s->dense ? (char *)a->dst->c[c]->data + (size_t)row0 * s->row_bytes
                             : (char *)sv_of(a->dst->c[c], s, row0);
        gather_rows(dst, s->bytes, s->row_bytes, slot, last, m);
      }
      if (s->dense) continue;
      tfq_tensor **out = &a->boxed_dst[c * (size_t)a->stride + (size_t)row0];
      for (int64_t j = 0; j < m; j++) {
        out[j] = s->refs[slot[j]];
        s->refs[slot[j]] = s->refs[last[j]];
      }
    }
    set_count(q, cnt - m);
    q->held += m;
    a->done_rows += m;
    k -= m;
  }
}

/* Puts a pending dequeue's partial batch back.  FIFO/Padding: to the front in the original
 * order (TF's close rule).  RandomShuffle: appended, last-taken first (TF).  Priority: back into
 * the heap.  tfq also applies this to cancelled and timed-out dequeues so nothing is lost.
 * Room is guaranteed: `held` rows are always reserved. */
static void restore_partial(tfq_queue *q, tfq__attempt *a) {
  if (q->kind == TFQ_QUEUE_FIFO || q->kind == TFQ_QUEUE_PADDING_FIFO) {
    for (int64_t r = a->done_rows - 1; r >= 0; r--) {
      q->head = q->head == 0 ? q->alloc - 1 : q->head - 1;
      slot_restore(q, q->head, a, r);
      set_count(q, q->count + 1);
    }
  } else {
    for (int64_t r = a->done_rows - 1; r >= 0; r--) push_back_row(q, a, r, 1);
  }
  q->held -= a->done_rows;
  a->done_rows = 0;
}

/* Whether the head dequeue may take an element now. */
static int can_take(const tfq_queue *q) {
  if (q->kind == TFQ_QUEUE_RANDOM_SHUFFLE)
    return q->count > 0 && (q->closed || q->count > q->min_after_dequeue);
  return q->count > 0;
}

/* ---- attempt lists ---- */

static void list_append(tfq__attempt **head, tfq__attempt **tail, tfq__attempt *a) {
  a->next = NULL;
  a->prev = *tail;
  if (*tail)
    (*tail)->next = a;
  else
    *head = a;
  *tail = a;
  a->linked = 1;
}

static void list_remove(tfq__attempt **head, tfq__attempt **tail, tfq__attempt *a) {
  if (a->prev)
    a->prev->next = a->next;
  else
    *head = a->next;
  if (a->next)
    a->next->prev = a->prev;
  else
    *tail = a->prev;
  a->linked = 0;
}

static void unlink_attempt(tfq_queue *q, tfq__attempt *a) {
  if (!a->linked) return;
  if (a->kind == ATT_DEQUEUE)
    list_remove(&q->d_head, &q->d_tail, a);
  else
    list_remove(&q->e_head, &q->e_tail, a);
}

/* Completes `a` (queue mutex held): unlink, wake the owner if it sleeps, publish.  Nothing may
 * touch `a` after the final store. */
static void complete(tfq_queue *q, tfq__attempt *a, tfq__result res) {
  unlink_attempt(q, a);
  a->res = res;
  if (a->sleeping) {
    a->done_ns = tfq__now_ns();
    if (pthread_cond_signal(&a->cv)) abort();
  }
  atomic_store_explicit(&a->state, 1, memory_order_release);
}

enum { STEP_NONE, STEP_PROGRESS, STEP_COMPLETE };

/* Copies the attempt's next rows into the free slots after the tail, as many as fit contiguously
 * (capacity, allocated room outside the rows reserved by `held`, the ring's wrap).  Returns how
 * many (>= 1; room must exist).  The caller adds them to count and done_rows. */
static int64_t fill_rows(tfq_queue *q, tfq__attempt *a) {
  int64_t slot = ring_idx(q, q->count), row = a->done_rows, k = a->total - row;
  if (k > q->capacity - q->count) k = q->capacity - q->count;
  if (k > q->alloc - q->count - q->held) k = q->alloc - q->count - q->held;
  if (k > q->alloc - slot) k = q->alloc - slot;
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      const char *src = a->src_rows ? (const char *)a->src_rows[c] /* one row: k == 1 */
                                    : (const char *)a->src->c[c]->data + (size_t)row * s->row_bytes;
      copy_bytes(s->bytes + (size_t)slot * s->row_bytes, src, (size_t)k * s->row_bytes);
    } else if (s->str) {
      str_fill(s, c, slot, a, a->many ? row : 0, k);
    } else if (a->boxed_src) {
      tfq_tensor **bs = &a->boxed_src[c * (size_t)a->stride + (size_t)row];
      memcpy(&s->refs[slot], bs, (size_t)k * sizeof *bs);
      memset(bs, 0, (size_t)k * sizeof *bs);
    } else {
      for (int64_t r = 0; r < k; r++) s->refs[slot + r] = tfq_tensor_ref(a->src->c[c]);
    }
  }
  return k;
}

/* FIFO kinds: moves a contiguous run of rows from the head into the attempt's destination (up to
 * the rows it still needs, the stored rows and the ring's wrap).  Returns how many (>= 1); the
 * caller adds them to held and done_rows. */
static int64_t take_rows(tfq_queue *q, tfq__attempt *a) {
  int64_t row = a->done_rows, k = a->total - row;
  if (k > q->count) k = q->count;
  if (k > q->alloc - q->head) k = q->alloc - q->head;
  for (size_t c = 0; c < q->spec->n; c++) {
    tfq__store *s = &q->st[c];
    if (s->dense) {
      copy_bytes((char *)a->dst->c[c]->data + (size_t)row * s->row_bytes,
                 s->bytes + (size_t)q->head * s->row_bytes, (size_t)k * s->row_bytes);
      continue;
    }
    if (s->str) memcpy(sv_of(a->dst->c[c], s, row), sv_row(s, q->head), (size_t)k * s->row_bytes);
    memcpy(&a->boxed_dst[c * (size_t)a->stride + (size_t)row], &s->refs[q->head],
           (size_t)k * sizeof(tfq_tensor *));
  }
  q->head = q->head + k == q->alloc ? 0 : q->head + k;
  set_count(q, q->count - k);
  return k;
}

static int step_enqueue(tfq_queue *q, tfq__attempt *a) {
  if (q->closed) {
    complete(q, a, RES_CLOSED);
    return STEP_COMPLETE;
  }
  if (q->resv) return STEP_NONE; /* behind the open reservation (tfq__queue_commit flushes) */
  int64_t before = a->done_rows;
  while (a->done_rows < a->total && q->count < q->capacity) {
    if (q->count + q->held >= q->alloc && ring_reserve(q, q->count + q->held + 1)) {
      complete(q, a, RES_OOM);
      return STEP_COMPLETE;
    }
    if (q->kind == TFQ_QUEUE_PRIORITY) {
      push_back_row(q, a, a->done_rows, 0);
      a->done_rows++;
    } else { /* append a contiguous run of rows at once */
      int64_t k = fill_rows(q, a);
      set_count(q, q->count + k);
      a->done_rows += k;
    }
  }
  if (a->done_rows == a->total) {
    complete(q, a, RES_OK);
    return STEP_COMPLETE;
  }
  return a->done_rows > before ? STEP_PROGRESS : STEP_NONE;
}

static int step_close(tfq_queue *q, tfq__attempt *a) {
  if (q->resv) return STEP_NONE; /* the reservation's rows go in first */
  if (q->closed) {
    complete(q, a, RES_ALREADY_CLOSED);
  } else {
    q->closed = 1;
    complete(q, a, RES_OK);
  }
  return STEP_COMPLETE;
}

static int step_dequeue(tfq_queue *q, tfq__attempt *a) {
  int64_t remaining = a->total - a->done_rows;
  if (q->closed && q->count < remaining) {
    int64_t size_before = q->count;
    restore_partial(q, a);
    if (a->up_to && q->count > 0) {
      /* Completes below in this same step.  PriorityQueue: TF loses these elements; tfq
       * returns them as a short batch, like the other kinds. */
      a->total = q->count;
    } else {
      a->res_requested = q->kind == TFQ_QUEUE_PRIORITY ? a->total : remaining;
      a->res_size = size_before; /* TF reports the size before the restore */
      complete(q, a, RES_INSUFFICIENT);
      return STEP_COMPLETE;
    }
  }
  /* PriorityQueue's dequeue_many is not incremental: it waits for all n at once. */
  if (q->kind == TFQ_QUEUE_PRIORITY && q->count < a->total - a->done_rows) return STEP_NONE;
  int64_t before = a->done_rows;
  if (q->kind == TFQ_QUEUE_RANDOM_SHUFFLE && a->done_rows < a->total && can_take(q)) {
    /* as many as may be taken now: all of the pool once closed, else down to min_after_dequeue */
    int64_t room = q->closed ? q->count : q->count - q->min_after_dequeue;
    int64_t want = a->total - a->done_rows;
    take_random(q, a, want < room ? want : room);
  }
  while (a->done_rows < a->total && can_take(q)) {
    int64_t k = 1;
    if (q->kind == TFQ_QUEUE_RANDOM_SHUFFLE || q->kind == TFQ_QUEUE_PRIORITY)
      take_row(q, a, a->done_rows);
    else
      k = take_rows(q, a); /* FIFO order: a contiguous run from the head at once */
    q->held += k;
    a->done_rows += k;
  }
  if (a->done_rows == a->total) {
    q->held -= a->done_rows;
    complete(q, a, RES_OK);
    return STEP_COMPLETE;
  }
  return a->done_rows > before ? STEP_PROGRESS : STEP_NONE;
}

static int run_side(tfq_queue *q, int enq_side) {
  int progress = 0;
  for (;;) {
    tfq__attempt *a = enq_side ? q->e_head : q->d_head;
    if (!a) return progress;
    int r = a->kind == ATT_ENQUEUE ? step_enqueue(q, a)
            : a->kind == ATT_CLOSE ? step_close(q, a)
                                   : step_dequeue(q, a);
    if (r == STEP_COMPLETE) {
      progress = 1;
      continue;
    }
    return progress | (r == STEP_PROGRESS);
  }
}

/* Not inlined: the single-element fast paths call it only when the other side has pending
 * attempts, and keep a small frame without it. */
static NOINLINE void flush(tfq_queue *q) {
  for (;;) {
    int p = run_side(q, 1);
    p |= run_side(q, 0);
    if (!p) return;
  }
}

/* Cancels a pending attempt (mutex held): its partial batch goes back, it completes with `why`,
 * and the queue is flushed so the attempts behind it can run. */
static void cancel_attempt_locked(tfq_queue *q, tfq__attempt *a, tfq__result why) {
  if (a->kind == ATT_DEQUEUE) restore_partial(q, a);
  complete(q, a, why);
  flush(q);
}

void tfq__queue_cancel_attempt(tfq_queue *q, tfq__attempt *a) {
  tfq__lock(&q->mu);
  if (!atomic_load_explicit(&a->state, memory_order_relaxed))
    cancel_attempt_locked(q, a, a->kind == ATT_DEQUEUE ? RES_DEQ_CANCELLED : RES_ENQ_CANCELLED);
  tfq__unlock(&q->mu);
}

/* ---- running an attempt from its owner's thread ---- */

/* Field by field: the condition variable and the cancel registration are set up only when
 * used, so the hot path does not clear them. */
static void attempt_init(tfq__attempt *a, tfq__att_kind kind) {
  a->prev = a->next = NULL;
  a->kind = kind;
  a->many = a->up_to = a->linked = 0;
  a->src = NULL;
  a->src_rows = NULL;
  a->boxed_src = NULL;
  a->dst = NULL;
  a->boxed_dst = NULL;
  a->total = a->stride = a->done_rows = 0;
  a->res = RES_OK;
  a->res_requested = a->res_size = 0;
  a->sleeping = 0;
  atomic_init(&a->state, 0);
}

/* Runs `a` with q->mu held and returns with it released: appends `a`, flushes, and waits for
 * completion (spin, then sleep), honouring the deadline (counted from `start_ns`, or from now
 * when it is -1).  The caller has registered `a` with its cancel, if any. */
static void run_locked(tfq_queue *q, tfq__attempt *a, int64_t timeout_us, int64_t start_ns) {
  int is_deq = a->kind == ATT_DEQUEUE;
  if (is_deq ? !q->d_head : !q->e_head) {
    /* Nothing waits ahead on this side: run the step as the head would, and link the attempt
     * only if it has to wait (the common uncontended case costs no list work and no flush). */
    int r = is_deq                   ? step_dequeue(q, a)
            : a->kind == ATT_ENQUEUE ? step_enqueue(q, a)
                                     : step_close(q, a);
    if (r != STEP_COMPLETE) {
      if (is_deq)
        list_append(&q->d_head, &q->d_tail, a);
      else
        list_append(&q->e_head, &q->e_tail, a);
    }
    if (q->e_head || q->d_head) flush(q);
  } else {
    if (is_deq)
      list_append(&q->d_head, &q->d_tail, a);
    else
      list_append(&q->e_head, &q->e_tail, a);
    flush(q);
  }
  if (atomic_load_explicit(&a->state, memory_order_relaxed)) {
    tfq__unlock(&q->mu);
    return;
  }
  if (timeout_us == 0) {
    cancel_attempt_locked(q, a, RES_DEADLINE);
    tfq__unlock(&q->mu);
    return;
  }
  tfq__unlock(&q->mu);
  int64_t deadline = tfq__deadline_ns(timeout_us, start_ns);
  int *budget = &q->spin_ns[is_deq];
  int spin = __atomic_load_n(budget, __ATOMIC_RELAXED);
  int64_t began = tfq__now_ns();
  for (int64_t i = 1, spin_end = began + spin; spin > 0; i++) {
    if (atomic_load_explicit(&a->state, memory_order_acquire)) return;
    CPU_RELAX();
    if ((i & 31) == 0 && tfq__now_ns() >= spin_end) break; /* clock every 32 PAUSEs */
  }
  tfq__lock(&q->mu);
  if (!atomic_load_explicit(&a->state, memory_order_relaxed)) {
    tfq__cond_init_monotonic(&a->cv);
    a->sleeping = 1;
    a->done_ns = -1;
    while (!atomic_load_explicit(&a->state, memory_order_relaxed)) {
      if (tfq__cond_wait_until(&a->cv, &q->mu, deadline) &&
          !atomic_load_explicit(&a->state, memory_order_relaxed)) {
        a->sleeping = 0;
        cancel_attempt_locked(q, a, RES_DEADLINE);
      }
    }
    if (a->done_ns >= 0) { /* completed by another thread while asleep: adapt the budget */
      int next = a->done_ns - began <= SPIN_NS ? SPIN_NS : spin / 2 < SPIN_MIN_NS ? 0 : spin / 2;
      if (next != spin) __atomic_store_n(budget, next, __ATOMIC_RELAXED);
    }
    a->sleeping = 0;
    pthread_cond_destroy(&a->cv);
  }
  tfq__unlock(&q->mu);
}

/* Registers `a` with `cancel`, then runs it (run_locked). */
static void run_attempt(tfq_queue *q, tfq__attempt *a, tfq_cancel *cancel, int64_t timeout_us) {
  if (cancel && tfq__cancel_register(cancel, q, a)) {
    a->res = a->kind == ATT_DEQUEUE ? RES_DEQ_CANCELLED : RES_ENQ_CANCELLED;
    return;
  }
  int64_t start = timeout_us > 0 ? tfq__now_ns() : -1;
  tfq__lock(&q->mu);
  /* The cancel may have fired between the registration and this lock: it then completed the
   * attempt before it was linked, so it must not be linked now. */
  if (atomic_load_explicit(&a->state, memory_order_relaxed))
    tfq__unlock(&q->mu);
  else
    run_locked(q, a, timeout_us, start);
  /* Every path here either held q->mu or read `state` with acquire: the result is visible. */
  if (cancel) tfq__cancel_unregister(cancel, a);
}

/* The kind TF names in a message.  PaddingFIFOQueue inherits FIFOQueue's enqueue and single
 * dequeue, whose messages say "FIFOQueue"; its own dequeue_many/up_to say "PaddingFIFOQueue"
 * (checked against the 2.21 wheel by the conformance suite). */
static const char *msg_kind(const tfq_queue *q, int many) {
  if (q->kind == TFQ_QUEUE_PADDING_FIFO && !many) return "FIFOQueue";
  return tfq_queue_kind_name(q->kind);
}

static tfq_code result_status(tfq_queue *q, const tfq__attempt *a, const char *op_dequeue,
                              tfq_status *st) {
  switch (a->res) {
    case RES_OK: tfq_status_clear(st); return TFQ_OK;
    case RES_CLOSED:
      return tfq_status_set(st, TFQ_CANCELLED, "%s '%s' is closed.", msg_kind(q, 0), q->name);
    case RES_ALREADY_CLOSED:
      return tfq_status_set(st, TFQ_CANCELLED, "Queue '%s' is already closed.", q->name);
    case RES_ENQ_CANCELLED:
      return tfq_status_set(st, TFQ_CANCELLED, "Enqueue operation was cancelled");
    case RES_DEQ_CANCELLED:
      return tfq_status_set(st, TFQ_CANCELLED, "Dequeue operation was cancelled");
    case RES_INSUFFICIENT:
      return tfq_status_set(st, TFQ_OUT_OF_RANGE,
                            "%s '%s' is closed and has insufficient elements (requested %lld, "
                            "current size %lld)",
                            msg_kind(q, a->many), q->name, (long long)a->res_requested,
                            (long long)a->res_size);
    case RES_DEADLINE:
      return tfq_status_set(st, TFQ_DEADLINE_EXCEEDED, "Timed out waiting for notification");
    case RES_OOM:
      return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory in %s '%s'%s",
                            tfq_queue_kind_name(q->kind), q->name, op_dequeue);
  }
  return tfq_status_set(st, TFQ_INTERNAL, "unknown queue result");
}

int64_t tfq_queue_size(tfq_queue *q) { return tfq__locked_i64(&q->mu, &q->count); }

int tfq_queue_is_closed(tfq_queue *q) { return tfq__locked_int(&q->mu, &q->closed); }

/* ---- single-element fast paths ----
 * For queues whose components are all fixed-size numeric rows (q->all_dense).  When a single
 * enqueue or dequeue can complete at once and nothing is pending ahead of it on its side, it does
 * exactly what the head attempt's step would do (same discipline, same room rules) without an
 * attempt, a cancel registration or list work, and flushes only when the other side has pending
 * attempts (the only way it can wake anybody).  Otherwise it becomes an ordinary attempt; without
 * a cancel that happens under the same lock acquisition. */

#define FAST_MAX_COMPS 16 /* more components: the general path */

/* Whether `x` is a tensor of dense component `k`'s dtype and shape (no message: when it is not,
 * the general path's check gives TF's). */
static inline int dense_ok(const tfq_tensor *x, const tfq__comp *k) {
  if (!x || x->dtype != k->dtype || x->rank != k->rank) return 0;
  for (int d = 0; d < k->rank; d++)
    if (x->dims[d] != k->dims[d]) return 0;
  return 1;
}

static inline void status_ok(tfq_status *st) {
  if (st) tfq__status_ok(st);
}

/* Mutex held.  Returns 1 when the element went in. */
static inline int fast_enqueue_locked(tfq_queue *q, const void *const *rows) {
  if (q->e_head || q->closed || q->resv || q->count >= q->capacity ||
      q->count + q->held >= q->alloc)
    return 0;
  int64_t slot = ring_idx(q, q->count);
  const tfq__store *s = q->st;
  size_t c = 0, n = q->spec->n;
  do copy_bytes(s[c].bytes + (size_t)slot * s[c].row_bytes, rows[c], s[c].row_bytes);
  while (++c < n);
  set_count(q, q->count + 1);
  if (q->kind == TFQ_QUEUE_PRIORITY) heap_up(q, q->count - 1);
  if (q->d_head) flush(q);
  return 1;
}

/* Mutex held.  Returns 1 when an element was taken into `rows`. */
static inline int fast_dequeue_locked(tfq_queue *q, void *const *rows) {
  if (q->d_head || !can_take(q)) return 0;
  int64_t i = pick_row(q), slot = ring_idx(q, i);
  const tfq__store *s = q->st;
  size_t c = 0, n = q->spec->n;
  do copy_bytes(rows[c], s[c].bytes + (size_t)slot * s[c].row_bytes, s[c].row_bytes);
  while (++c < n);
  drop_row(q, i);
  if (q->e_head) flush(q);
  return 1;
}

/* The single-element paths that must wait (or are cancelled): an ordinary attempt.  `locked`:
 * the caller holds q->mu (then `cancel` is NULL) and the attempt runs under that acquisition. */
static NOINLINE tfq_code single_slow(tfq_queue *q, tfq__att_kind kind, const void *const *src_rows,
                                     tfq_tuple *dst, tfq_cancel *cancel, int64_t timeout_us,
                                     int locked, tfq_status *st) {
  tfq__attempt a;
  attempt_init(&a, kind);
  a.src_rows = src_rows;
  a.dst = dst;
  a.total = a.stride = 1;
  if (locked)
    run_locked(q, &a, timeout_us, -1);
  else
    run_attempt(q, &a, cancel, timeout_us);
  return result_status(q, &a, "", st);
}

/* A single enqueue that found the queue full with no enqueue pending ahead of it, before it
 * queues up as a pending attempt: once pending, every dequeue would hand it exactly one slot, a
 * cross-core round trip per element in which the consumer also does the producer's copy, so a
 * fast producer and a slower consumer would run in lockstep.  Instead it waits, outside the
 * lock and for at most ROOM_SPIN_NS, until a run of slots is free (or the queue is no longer
 * full when the run is 1), then retries; both sides then run lock-only single operations most of
 * the time.  Until it queues up the call has not arrived (TF's arrival order is the order in
 * which calls queue up), so no rule changes: this only moves its arrival a few microseconds
 * later, as a slower caller would.  Returns with q->mu held again. */
#define ROOM_SPIN_NS 4000
static NOINLINE void wait_for_room(tfq_queue *q) {
  int64_t run = q->capacity / 16;
  run = run < 1 ? 1 : run > 64 ? 64 : run;
  int64_t level = q->capacity - run; /* retry once count <= level */
  tfq__unlock(&q->mu);
  int64_t end = 0;
  for (int i = 1;; i++) {
    CPU_RELAX();
    if ((i & 7) == 0 && __atomic_load_n(&q->count, __ATOMIC_RELAXED) <= level) break;
    if ((i & 63) == 0 && spin_expired(&end, ROOM_SPIN_NS)) break;
  }
  tfq__lock(&q->mu);
}

/* A single enqueue of an all-dense queue from one row per component. */
static inline tfq_code enqueue_rows(tfq_queue *q, const void *const *rows, tfq_cancel *cancel,
                                    int64_t timeout_us, tfq_status *st) {
  if (cancel && tfq__cancel_triggered(cancel))
    return single_slow(q, ATT_ENQUEUE, rows, NULL, cancel, timeout_us, 0, st);
  tfq__lock(&q->mu);
  if (fast_enqueue_locked(q, rows)) {
    tfq__unlock(&q->mu);
    status_ok(st);
    return TFQ_OK;
  }
  if (timeout_us < 0 && !q->e_head && !q->closed && q->count >= q->capacity && q->capacity > 0) {
    wait_for_room(q);
    if ((!cancel || !tfq__cancel_triggered(cancel)) && fast_enqueue_locked(q, rows)) {
      tfq__unlock(&q->mu);
      status_ok(st);
      return TFQ_OK;
    }
  }
  if (!cancel) return single_slow(q, ATT_ENQUEUE, rows, NULL, NULL, timeout_us, 1, st);
  tfq__unlock(&q->mu); /* the cancel registration comes before the queue lock */
  return single_slow(q, ATT_ENQUEUE, rows, NULL, cancel, timeout_us, 0, st);
}

/* A single dequeue of an all-dense queue into `dst`, whose tensors hold the rows `rows`. */
static inline tfq_code dequeue_rows(tfq_queue *q, void *const *rows, tfq_tuple *dst,
                                    tfq_cancel *cancel, int64_t timeout_us, tfq_status *st) {
  if (cancel && tfq__cancel_triggered(cancel))
    return single_slow(q, ATT_DEQUEUE, NULL, dst, cancel, timeout_us, 0, st);
  tfq__lock(&q->mu);
  if (fast_dequeue_locked(q, rows)) {
    tfq__unlock(&q->mu);
    status_ok(st);
    return TFQ_OK;
  }
  if (!cancel) return single_slow(q, ATT_DEQUEUE, NULL, dst, NULL, timeout_us, 1, st);
  tfq__unlock(&q->mu);
  return single_slow(q, ATT_DEQUEUE, NULL, dst, cancel, timeout_us, 0, st);
}

/* ---- enqueue ---- */

/* Whether the rows of string batch `t` average more than STR_SHARE_MAX bytes: they are then
 * sliced into a tensor each, so that a row left in a shuffle pool does not keep the bytes of its
 * whole batch alive; shorter rows share the batch tensor. */
#define STR_SHARE_MAX 4096
static int long_strings(const tfq_tensor *t, int64_t rows) {
  const tfq__str *v = tfq__strs(t);
  size_t bytes = 0, limit = (size_t)rows * STR_SHARE_MAX;
  /* The usual batch, at no walk over its strings: its arena holds no more than the limit, and
   * the arena is what a row left in the pool would keep alive (strings point into it, or at a
   * static ""). */
  if (tfq__tensor_arena_bytes(t) <= limit) return 0;
  for (int64_t i = 0; i < t->nelems; i++)
    if ((bytes += v[i].len) > limit) return 1;
  return 0;
}

/* A tuple as `t`, but each string component that views bytes of several other tensors (a batch
 * dequeued "_into": tfq__tensor_keeps_several) replaced by a copy that owns them, so that rows
 * held by this queue keep alive their own bytes, not every tensor the batch borrowed from; NULL
 * in *out when no component does.  A component that borrows from one tensor (a decode step's
 * strings in its read buffer, a FIFO batch from one enqueued batch) is queued as it is: its rows
 * keep that one alive. */
static tfq_code owned_strings(const tfq_tuple *t, tfq_tuple **out, tfq_status *st) {
  *out = NULL;
  for (size_t i = 0; i < t->n; i++) {
    if (t->c[i]->dtype != TFQ_STRING || !tfq__tensor_keeps_several(t->c[i])) continue;
    tfq_code c;
    if (!*out) {
      if ((c = tfq_tuple_new(t->n, out, st))) return c;
      for (size_t j = 0; j < t->n; j++) (*out)->c[j] = tfq_tensor_ref(t->c[j]);
    }
    tfq_tensor *own;
    if ((c = tfq__strings_owned(t->c[i], &own, st))) {
      tfq_tuple_free(*out);
      *out = NULL;
      return c;
    }
    tfq_tuple_set_take(*out, i, own);
  }
  return TFQ_OK;
}

static tfq_code do_enqueue(tfq_queue *q, const tfq_tuple *t, int many, tfq_cancel *cancel,
                           int64_t timeout_us, tfq_status *st) {
  tfq_code c = tfq__queue_validate_tuple(q, t, many, st);
  if (c) return c;
  tfq_tuple *own;
  if ((c = owned_strings(t, &own, st))) return c;
  if (own) {
    c = do_enqueue(q, own, many, cancel, timeout_us, st);
    tfq_tuple_free(own);
    return c;
  }
  tfq__attempt a;
  attempt_init(&a, ATT_ENQUEUE);
  a.src = t;
  a.many = many;
  a.total = many ? t->c[0]->dims[0] : 1;
  a.stride = a.total;
  if (many && a.total == 0) { /* TF: succeeds without looking at the queue, even when closed */
    tfq_status_clear(st);
    return TFQ_OK;
  }
  size_t ncomp = q->spec->n;
  /* Components to split into element tensors now, outside the lock: boxed ones, and string
   * batches of long rows (long_strings); boxed_src is made at the first of them. */
  size_t n = 0;
  for (size_t i = 0; i < ncomp && many; i++) {
    if (q->st[i].dense || (q->st[i].str && !long_strings(t->c[i], a.total))) continue;
    if (!a.boxed_src && (!tfq__mul_ok(ncomp, (size_t)a.total, &n) ||
                         !(a.boxed_src = tfq__calloc(n, sizeof(tfq_tensor *)))))
      return TFQ__OOM(st);
    for (int64_t r = 0; r < a.total; r++) {
      c = tfq__slice_row(t->c[i], r, &a.boxed_src[i * (size_t)a.stride + (size_t)r], st);
      if (c) {
        tfq__free_boxed(a.boxed_src, n);
        return c;
      }
    }
  }
  run_attempt(q, &a, cancel, timeout_us);
  if (a.boxed_src) tfq__free_boxed(a.boxed_src, ncomp * (size_t)a.stride); /* rows not inserted */
  return result_status(q, &a, "", st);
}

tfq_code tfq_queue_enqueue(tfq_queue *q, const tfq_tuple *elem, tfq_cancel *cancel,
                           int64_t timeout_us, tfq_status *st) {
  size_t n = q->spec->n;
  if (q->all_dense && elem && elem->n == n && n <= FAST_MAX_COMPS) {
    const void *rows[FAST_MAX_COMPS];
    size_t i = 0;
    for (; i < n && dense_ok(elem->c[i], &q->spec->c[i]); i++) rows[i] = elem->c[i]->data;
    if (i == n) return enqueue_rows(q, rows, cancel, timeout_us, st);
  }
  return do_enqueue(q, elem, 0, cancel, timeout_us, st);
}

tfq_code tfq_queue_enqueue_from(tfq_queue *q, const void *const *comps, size_t ncomp,
                                tfq_cancel *cancel, int64_t timeout_us, tfq_status *st) {
  const tfq_spec *s = q->spec;
  if (ncomp != s->n || (ncomp && !comps))
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Wrong number of components in tuple. Expected %zu, got %zu", s->n,
                          comps ? ncomp : (size_t)0);
  for (size_t i = 0; i < ncomp; i++) {
    if (!q->st[i].dense) {
      char sh[TFQ__MSG_CAP / 2];
      tfq__buf b = {sh, sizeof sh, 0};
      if (s->c[i].rank == TFQ_UNKNOWN_RANK)
        tfq__buf_printf(&b, "<unknown>");
      else
        tfq__buf_shape(&b, s->c[i].dims, s->c[i].rank);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "enqueue_from needs fixed-size numeric components; component %zu is "
                            "%s %s",
                            i, tfq_dtype_name(s->c[i].dtype), sh);
    }
    if (!comps[i])
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "tuple component %zu is not set", i);
  }
  return enqueue_rows(q, comps, cancel, timeout_us, st);
}

tfq_code tfq_queue_enqueue_many(tfq_queue *q, const tfq_tuple *batch, tfq_cancel *cancel,
                                int64_t timeout_us, tfq_status *st) {
  return do_enqueue(q, batch, 1, cancel, timeout_us, st);
}

/* ---- dequeue ---- */

#define BOXED_SMALL 1024 /* owner slots of a dequeue kept on the stack (8 KiB) */

/* Points every string of `t` at "". */
static void str_clear(tfq_tensor *t) {
  tfq__str *v = tfq__strs(t);
  for (int64_t i = 0; i < t->nelems; i++) v[i] = (tfq__str){"", 0};
}

/* Makes the result `*t` of str component `c` own its bytes, outside the lock: its views point
 * into the owners the rows held (`owners`, freed by the caller).  A single element whose owner is
 * an element tensor of its own becomes the result as it is; otherwise the bytes are copied into
 * one block of the result.  TFQ_RESOURCE_EXHAUSTED when that block cannot be had. */
static tfq_code str_settle(tfq_queue *q, size_t c, tfq_tensor **t, tfq_tensor **owners, int many) {
  const tfq__comp *k = &q->spec->c[c];
  if (!many && owners[0]->rank == k->rank && owners[0]->nelems == q->st[c].per &&
      (q->st[c].per == 0 || tfq__strs(owners[0])[0].p == tfq__strs(*t)[0].p)) {
    tfq_tensor_free(*t);
    *t = owners[0];
    owners[0] = NULL;
    return TFQ_OK;
  }
  tfq__str *v = tfq__strs(*t);
  size_t total = 0;
  for (int64_t i = 0; i < (*t)->nelems; i++) total += v[i].len;
  if (!total) {
    str_clear(*t);
    return TFQ_OK;
  }
  char *p = tfq__tensor_arena_take(*t, total);
  if (!p) return TFQ_RESOURCE_EXHAUSTED;
  int64_t n = (*t)->nelems;
  if (q->kind == TFQ_QUEUE_RANDOM_SHUFFLE || q->kind == TFQ_QUEUE_PRIORITY) {
    for (int64_t i = 0; i < n; i++) { /* rows drawn from all over: no runs to look for */
      if (!v[i].len) {
        v[i].p = "";
        continue;
      }
      copy_string(p, v[i].p, v[i].len);
      v[i].p = p;
      p += v[i].len;
    }
    return TFQ_OK;
  }
  for (int64_t i = 0; i < n;) {
    if (!v[i].len) {
      v[i++].p = "";
      continue;
    }
    /* Strings that lie back to back where they are (a FIFO batch's rows of one enqueued tensor:
     * its arena holds them in row order) are copied as one block. */
    const char *s0 = v[i].p, *e = s0 + v[i].len;
    int64_t j = i + 1;
    while (j < n && v[j].len && v[j].p == e) e += v[j++].len;
    if (j == i + 1) {
      copy_string(p, s0, v[i].len);
      v[i++].p = p;
      p += e - s0;
      continue;
    }
    memcpy(p, s0, (size_t)(e - s0));
    for (; i < j; i++) v[i].p = p + (v[i].p - s0);
    p += e - s0;
  }
  return TFQ_OK;
}

/* Whether `t` can take an element of component `k` in place (a batch of n elements: many). */
static inline int reusable_as(const tfq_tensor *t, const tfq__comp *k, int many, int64_t n) {
  if (!t || t->dtype != k->dtype || t->rank != k->rank + many || !tfq__tensor_sole(t)) return 0;
  if (many && t->dims[0] != n) return 0;
  for (int d = 0; d < k->rank; d++)
    if (t->dims[d + many] != k->dims[d]) return 0;
  return 1;
}

static inline int reusable(const tfq_tensor *t, const tfq__comp *k) {
  return reusable_as(t, k, 0, 1);
}

/* A dequeue that fails: the string components of dst's first `upto` point at "" again, as their
 * views may point into freed chunks (a reused batch emptied by tfq__tensor_arena_reset before the
 * take) or into the owners the take held, freed on the way out. */
static void clear_reused(tfq_queue *q, tfq_tuple *dst, size_t upto) {
  for (size_t i = 0; i < upto; i++)
    if (q->st[i].str && dst->c[i]) str_clear(dst->c[i]);
}

static tfq_code do_dequeue(tfq_queue *q, int64_t n, int many, int up_to, tfq_tuple **out,
                           tfq_cancel *cancel, int64_t timeout_us, tfq_tuple *reuse,
                           tfq_status *st) {
  *out = NULL;
  const char *opname = up_to ? "DequeueUpToOp" : "DequeueManyOp";
  if (many) {
    if (n < 0)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "%s requested %lld < 0 elements", opname,
                            (long long)n);
    if (!q->shaped)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            q->kind == TFQ_QUEUE_PRIORITY
                                ? "%s's DequeueMany requires the components to have specified "
                                  "shapes."
                                : "%s's DequeueMany and DequeueUpTo require the components to "
                                  "have specified shapes.",
                            tfq_queue_kind_name(q->kind));
  } else {
    n = 1;
  }
  size_t ncomp = q->spec->n;
  tfq_tuple *dst = reuse;
  tfq_code c = TFQ_OK;
  if (reuse && reuse->n != ncomp)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "Wrong number of components in tuple. Expected %zu, got %zu", ncomp,
                          reuse->n);
  if (!reuse && (c = tfq_tuple_new(ncomp, &dst, st))) return c;
  int any_boxed = 0;
  /* Dense destinations are allocated now, outside the lock, with n rows (or reused). */
  for (size_t i = 0; i < ncomp; i++) {
    if (!q->st[i].dense) {
      any_boxed = 1; /* str components take their owners through boxed_dst */
      if (!q->st[i].str) continue;
    }
    const tfq__comp *k = &q->spec->c[i];
    if (reuse && reusable_as(dst->c[i], k, many, n)) {
      /* its strings are all rewritten by the take (rows and str_settle), or set to "" by
       * str_clear when the dequeue fails; the owners it kept are dropped */
      if (q->st[i].str) tfq__tensor_arena_reset(dst->c[i]);
      continue;
    }
    if (reuse) {
      tfq_tensor_free(dst->c[i]);
      dst->c[i] = NULL;
    }
    int64_t dims[TFQ_MAX_RANK + 1];
    int r = 0;
    if (many) dims[r++] = n;
    for (int d = 0; d < k->rank; d++) dims[r++] = k->dims[d];
    c = tfq__tensor_alloc(k->dtype, dims, r, 0, &dst->c[i], st);
    if (c) {
      if (!reuse)
        tfq_tuple_free(dst);
      else
        clear_reused(q, dst, i);
      return c;
    }
  }
  /* A batch kept across calls borrows its strings instead of copying them (below): room for the
   * owners its string components will keep. */
  const int borrow = reuse && many;
  for (size_t i = 0; borrow && i < ncomp; i++)
    if (q->st[i].str && tfq__tensor_keep_reserve(dst->c[i], (size_t)n)) {
      clear_reused(q, dst, ncomp);
      return TFQ__OOM(st);
    }
  if (!many && q->all_dense && ncomp <= FAST_MAX_COMPS) {
    void *rows[FAST_MAX_COMPS];
    for (size_t i = 0; i < ncomp; i++) rows[i] = dst->c[i]->data;
    if ((c = dequeue_rows(q, rows, dst, cancel, timeout_us, st))) {
      if (!reuse) tfq_tuple_free(dst);
      return c;
    }
    *out = dst;
    return TFQ_OK;
  }
  if (many && n == 0) { /* TF: empty [0]+shape tensors at once, closed or not */
    for (size_t i = 0; i < ncomp; i++) {
      if (reuse && !q->st[i].dense && !q->st[i].str) {
        tfq_tensor_free(dst->c[i]);
        dst->c[i] = NULL;
      }
      if (!dst->c[i] && (c = tfq__queue_assemble_boxed(q, i, NULL, 0, 1, &dst->c[i], st))) {
        if (!reuse) tfq_tuple_free(dst);
        return c;
      }
    }
    *out = dst;
    tfq_status_clear(st);
    return TFQ_OK;
  }
  tfq__attempt a;
  attempt_init(&a, ATT_DEQUEUE);
  a.many = many;
  a.up_to = up_to;
  a.total = n;
  a.stride = n;
  a.dst = dst;
  size_t nb = 0;
  tfq_tensor *boxed_small[BOXED_SMALL]; /* a batch's owners without an allocation */
  if (any_boxed && tfq__mul_ok(ncomp, (size_t)n, &nb) && nb <= BOXED_SMALL) {
    memset(boxed_small, 0, nb * sizeof *boxed_small);
    a.boxed_dst = boxed_small;
  } else if (any_boxed) {
    /* Only the non-dense components' owner ranges are written, cleared and released: a batch
     * of many dense columns does not clear (and scan) n slots per dense column. */
    if (!tfq__mul_ok(ncomp, (size_t)n, &nb) ||
        !(a.boxed_dst = tfq_malloc((nb ? nb : 1) * sizeof(tfq_tensor *)))) {
      if (!reuse)
        tfq_tuple_free(dst);
      else
        clear_reused(q, dst, ncomp);
      return TFQ__OOM(st);
    }
    for (size_t i = 0; i < ncomp; i++)
      if (!q->st[i].dense) memset(a.boxed_dst + i * (size_t)n, 0, (size_t)n * sizeof(tfq_tensor *));
  }
  run_attempt(q, &a, cancel, timeout_us);
  c = result_status(q, &a, "", st);
  if (c == TFQ_OK) {
    int64_t rows = a.total; /* dequeue_up_to on a closed queue may deliver fewer than n */
    for (size_t i = 0; i < ncomp; i++) {
      if (q->st[i].dense || q->st[i].str) {
        if (many && rows != n) {
          tfq_tensor *t = dst->c[i];
          t->dims[0] = rows;
          t->nelems = rows * (n ? t->nelems / n : 0);
          t->nbytes = q->st[i].dense ? (size_t)t->nelems * tfq_dtype_size(t->dtype) : 0;
        }
        if (q->st[i].str && borrow) {
          /* A batch kept across calls views its strings where the rows' owners hold them and
           * keeps those owners (room reserved above) until its next refill: no copy. */
          tfq__tensor_keep_take(dst->c[i], a.boxed_dst + i * (size_t)n, (size_t)rows);
        } else if (q->st[i].str &&
                   str_settle(q, i, &dst->c[i], a.boxed_dst + i * (size_t)n, many)) {
          c = TFQ__OOM(st); /* out of memory after the elements left the queue */
          break;
        }
      } else {
        if (reuse) {
          tfq_tensor_free(dst->c[i]);
          dst->c[i] = NULL;
        }
        c = tfq__queue_assemble_boxed(q, i, a.boxed_dst + i * (size_t)n, rows, many, &dst->c[i],
                                      st);
        if (c) break; /* out of memory after the elements left the queue */
      }
    }
  }
  if (c) clear_reused(q, dst, ncomp); /* no view may outlive the owners freed below */
  if (a.boxed_dst) {
    for (size_t i = 0; i < ncomp; i++) /* the dense components' owner slots are never used */
      if (!q->st[i].dense) tfq__tensors_release(a.boxed_dst + i * (size_t)n, (size_t)n);
    if (a.boxed_dst != boxed_small) tfq_free(a.boxed_dst);
  }
  if (c) {
    if (!reuse) tfq_tuple_free(dst);
    return c;
  }
  *out = dst;
  return TFQ_OK;
}

tfq_code tfq_queue_dequeue(tfq_queue *q, tfq_tuple **out, tfq_cancel *cancel, int64_t timeout_us,
                           tfq_status *st) {
  return do_dequeue(q, 1, 0, 0, out, cancel, timeout_us, NULL, st);
}

tfq_code tfq_queue_dequeue_into(tfq_queue *q, tfq_tuple *dst, tfq_cancel *cancel,
                                int64_t timeout_us, tfq_status *st) {
  size_t n = q->spec->n;
  if (q->all_dense && dst && dst->n == n && n <= FAST_MAX_COMPS) {
    /* The steady consumer: every slot already holds a tensor it may overwrite. */
    void *rows[FAST_MAX_COMPS];
    size_t i = 0;
    for (; i < n && reusable(dst->c[i], &q->spec->c[i]); i++) rows[i] = dst->c[i]->data;
    if (i == n) return dequeue_rows(q, rows, dst, cancel, timeout_us, st);
  }
  tfq_tuple *out;
  return do_dequeue(q, 1, 0, 0, &out, cancel, timeout_us, dst, st);
}

tfq_code tfq_queue_dequeue_many(tfq_queue *q, int64_t n, tfq_tuple **out, tfq_cancel *cancel,
                                int64_t timeout_us, tfq_status *st) {
  return do_dequeue(q, n, 1, 0, out, cancel, timeout_us, NULL, st);
}

tfq_code tfq_queue_dequeue_up_to(tfq_queue *q, int64_t n, tfq_tuple **out, tfq_cancel *cancel,
                                 int64_t timeout_us, tfq_status *st) {
  return do_dequeue(q, n, 1, 1, out, cancel, timeout_us, NULL, st);
}

tfq_code tfq_queue_dequeue_many_into(tfq_queue *q, int64_t n, tfq_tuple *dst, tfq_cancel *cancel,
                                     int64_t timeout_us, tfq_status *st) {
  tfq_tuple *out;
  if (!dst) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "dst is NULL");
  return do_dequeue(q, n, 1, 0, &out, cancel, timeout_us, dst, st);
}

tfq_code tfq_queue_dequeue_up_to_into(tfq_queue *q, int64_t n, tfq_tuple *dst, tfq_cancel *cancel,
                                      int64_t timeout_us, tfq_status *st) {
  tfq_tuple *out;
  if (!dst) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "dst is NULL");
  return do_dequeue(q, n, 1, 1, &out, cancel, timeout_us, dst, st);
}

/* ---- rows written in place (queues_shared.h) ---- */

int64_t tfq__queue_reserve(tfq_queue *q, int64_t want, int64_t min, char **bases) {
  if ((q->kind != TFQ_QUEUE_FIFO && q->kind != TFQ_QUEUE_PADDING_FIFO) || want < 1 || min < 1)
    return 0;
  for (size_t c = 0; c < q->spec->n; c++)
    if (!q->st[c].dense && !q->st[c].str) return 0;
  int64_t k = 0;
  tfq__lock(&q->mu);
  if (q->closed || q->e_head || q->resv) goto out;
  k = q->capacity - q->count < want ? q->capacity - q->count : want;
  if (k < min) {
    k = 0;
    goto out;
  }
  /* room in the ring outside the rows held by pending dequeues, which a restore puts back */
  if (q->count + q->held + k > q->alloc && ring_reserve(q, q->count + q->held + k)) {
    k = 0;
    goto out;
  }
  int64_t slot = ring_idx(q, q->count);
  if (k > q->alloc - slot) k = q->alloc - slot; /* contiguous: up to the wrap */
  if (k < min) {
    k = 0;
    goto out;
  }
  q->resv = k;
  for (size_t c = 0; c < q->spec->n; c++)
    bases[c] = q->st[c].bytes + (size_t)slot * q->st[c].row_bytes;
out:
  tfq__unlock(&q->mu);
  return k;
}

void tfq__queue_commit(tfq_queue *q, int64_t rows, tfq_tensor *owner) {
  tfq__lock(&q->mu);
  assert(q->resv > 0 && rows >= 0 && rows <= q->resv && !q->closed);
  if (rows > 0) {
    int64_t slot = ring_idx(q, q->count);
    for (size_t c = 0; c < q->spec->n; c++) {
      tfq__store *s = &q->st[c];
      if (!s->str) continue;
      for (int64_t r = 0; r < rows; r++) s->refs[slot + r] = owner;
      atomic_fetch_add_explicit(&owner->refs, rows, memory_order_relaxed);
    }
    set_count(q, q->count + rows);
  }
  q->resv = 0;
  if (q->resv_waiters) pthread_cond_broadcast(&q->resv_cv);
  if (q->e_head || q->d_head) flush(q);
  tfq__unlock(&q->mu);
}

/* ---- close ---- */

tfq_code tfq_queue_close(tfq_queue *q, int cancel_pending_enqueues, tfq_cancel *cancel,
                         int64_t timeout_us, tfq_status *st) {
  if (cancel_pending_enqueues) {
    tfq__lock(&q->mu);
    while (q->resv) { /* the open reservation is an enqueue that has arrived: it goes in */
      q->resv_waiters++;
      tfq__cond_wait_until(&q->resv_cv, &q->mu, -1);
      q->resv_waiters--;
    }
    q->closed = 1;
    while (q->e_head) complete(q, q->e_head, RES_ENQ_CANCELLED);
    flush(q);
    tfq__unlock(&q->mu);
    tfq_status_clear(st);
    return TFQ_OK;
  }
  tfq__attempt a;
  attempt_init(&a, ATT_CLOSE);
  run_attempt(q, &a, cancel, timeout_us);
  return result_status(q, &a, "", st);
}
