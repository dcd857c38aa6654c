/* Private declarations of the queue engine (src/queues).  The engine reproduces TensorFlow's
 * QueueBase: two ordered lists of pending attempts (E: enqueue, enqueue_many, non-cancelling
 * close; D: the dequeue family) served head-of-line, flushed after every change.
 *
 * Memory model: an attempt lives on its owner's stack.  It is linked into E or D under the queue
 * mutex; whoever completes it (the owner, or another thread's flush, or a cancel trigger) unlinks
 * it, signals its condition variable if the owner sleeps, and then publishes `state` with a
 * release store, after which it never touches the attempt again.  The owner may therefore spin on
 * `state` without the lock and return as soon as it reads DONE. */
#ifndef TFQ_QUEUE_INTERNAL_H
#define TFQ_QUEUE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <tfq/queue.h>

#include "../core/base.h"
#include "../core/sync.h"

typedef enum { ATT_ENQUEUE, ATT_CLOSE, ATT_DEQUEUE } tfq__att_kind;

/* Why an attempt completed, formatted by its owner into its own status. */
typedef enum {
  RES_OK = 0,
  RES_CLOSED,         /* CANCELLED "<Kind> '<name>' is closed." */
  RES_ALREADY_CLOSED, /* CANCELLED "Queue '<name>' is already closed." */
  RES_ENQ_CANCELLED,  /* CANCELLED "Enqueue operation was cancelled" */
  RES_DEQ_CANCELLED,  /* CANCELLED "Dequeue operation was cancelled" */
  RES_INSUFFICIENT,   /* OUT_OF_RANGE "... insufficient elements (requested r, current size s)" */
  RES_DEADLINE,       /* DEADLINE_EXCEEDED "Timed out waiting for notification" */
  RES_OOM             /* RESOURCE_EXHAUSTED */
} tfq__result;

typedef struct tfq__attempt tfq__attempt;
typedef struct tfq__cancel_reg tfq__cancel_reg;

struct tfq__cancel_reg {
  tfq__cancel_reg *prev, *next;
  tfq_queue *q;
  tfq__attempt *att;
};

struct tfq__attempt {
  tfq__attempt *prev, *next;
  tfq__att_kind kind;
  int many;   /* dequeue_many/up_to or enqueue_many: rows along dim 0 */
  int up_to;  /* dequeue_up_to */
  int linked; /* in E or D */
  /* enqueue: source rows (a tuple; for boxed components of an enqueue_many, pre-split element
   * tensors in `boxed_src`). */
  const tfq_tuple *src;
  const void *const *src_rows; /* single enqueue of an all-dense queue: one row per component
                                * (tfq_queue_enqueue_from, or the tuple's data); used before src */
  tfq_tensor **boxed_src;      /* [ncomp][total] row-major by component, or NULL */
  /* dequeue: destination.  Dense components write rows of `dst` tensors; boxed components fill
   * boxed_dst[c * total + row] with element tensors. */
  tfq_tuple *dst;
  tfq_tensor **boxed_dst;
  int64_t total;     /* rows wanted (1 for single ops); up_to may lower it at close */
  int64_t stride;    /* rows the boxed_src/boxed_dst arrays were made for */
  int64_t done_rows; /* rows inserted / taken so far */
  /* result */
  tfq__result res;
  int64_t res_requested, res_size;
  int sleeping;
  int64_t done_ns; /* when a sleeping owner's attempt completed (its spin budget's feedback) */
  pthread_cond_t cv;
  atomic_int state; /* 0 pending, 1 done */
  tfq__cancel_reg reg;
};

/* Per component storage on the ring, one of three layouts:
 *  - dense (fixed-size numeric rows): `bytes` holds the rows, copied in and out;
 *  - str (strings of a fully defined shape, `per` strings a row): `bytes` holds each row's
 *    string views (tfq__str, `per` a row) and `refs` the tensor owning the bytes they point at,
 *    one reference a row.  The owner is the enqueued tensor itself (a batch shares one tensor
 *    among its rows: no allocation and no copy on the way in) or, for a batch of long strings,
 *    a row sliced off it (so that one row left in a shuffle pool does not pin a whole batch).
 *    A dequeue copies the bytes into its result once, outside the lock, then drops the refs;
 *    a dequeue into a batch refilled in place (_into) copies none: the batch keeps the refs
 *    (tfq__tensor_keep_take) until its next refill, and an enqueue of such a borrowing tensor
 *    copies its strings first (owned_strings);
 *  - boxed (any other shape): `refs` holds one element tensor a row. */
typedef struct tfq__store {
  int dense;         /* fixed-size numeric rows copied in and out */
  int str;           /* strings of a fully defined shape (not dense) */
  int64_t per;       /* str: strings a row */
  size_t row_bytes;  /* dense: bytes per element; str: per * sizeof(tfq__str) */
  char *bytes;       /* dense, str: alloc * row_bytes */
  tfq_tensor **refs; /* boxed: alloc element tensors; str: alloc owners */
} tfq__store;

struct tfq_queue {
  atomic_long refs;
  tfq_queue_kind kind;
  tfq_spec *spec;
  char *name;
  int64_t capacity;
  int shaped;                /* every component has a declared shape */
  int64_t min_after_dequeue; /* RandomShuffleQueue */
  int64_t seed, seed2;       /* as requested (the shared-queue check compares these) */
  int tf_exact;              /* RandomShuffleQueue draws with TF's Philox layout */
  tfq__pcg32 pcg;
  tfq__philox philox;
  char *swap_tmp;  /* PriorityQueue heap swaps: one row of the widest component */
  char *container; /* registry key (shared queues only) */
  int registered;
  int all_dense;  /* every component is a fixed-size numeric row: single ops may take the fast
                   * path (no attempt, no list work when they can complete at once) */
  int spin_ns[2]; /* spin budget of a blocked enqueue [0] / dequeue [1] before it sleeps,
                   * adapted to the waits seen (relaxed atomics: a heuristic, see queue.c) */
  /* The state every operation touches, together after the mutex so that acquiring the lock
   * brings it along (the fast path reads and writes nothing else but the rows). */
  pthread_mutex_t mu;
  int closed;
  /* ring */
  int64_t head, count, alloc;
  int64_t held;     /* rows held in pending dequeue partial batches (restore room) */
  int64_t resv;     /* rows reserved after the tail for tfq__queue_reserve's writer (0: none): no
                     * enqueue or close steps until it commits (queues_shared.h) */
  int resv_waiters; /* cancelling closes waiting on resv_cv for the commit */
  pthread_cond_t resv_cv; /* signalled by tfq__queue_commit when resv_waiters */
  /* attempt lists */
  tfq__attempt *e_head, *e_tail, *d_head, *d_tail;
  tfq__store *st;
};

struct tfq_cancel {
  pthread_mutex_t mu;
  atomic_int triggered;
  tfq__cancel_reg *regs;
};

struct tfq_queue_options {
  int64_t capacity;
  char *name, *shared_name, *container;
  int64_t min_after_dequeue, seed, seed2;
  int tf_exact;
};

/* ---- construction (queue_new.c) ---- */

/* Validates `spec` for `kind` (TF's messages) and returns the queue's full spec (PriorityQueue:
 * int64 priority prepended). */
tfq_code tfq__queue_full_spec(tfq_queue_kind kind, const tfq_spec *spec, tfq_spec **full,
                              tfq_status *st);

/* ---- the ring (queue.c) ---- */

/* First allocation of a new queue's ring (q->spec and q->st set).  0, or -1 out of memory. */
int tfq__ring_init(tfq_queue *q);
/* Releases the stored elements and the ring, and q->st.  NULL q->st: no-op. */
void tfq__ring_free(tfq_queue *q);

/* ---- cancellation (cancel.c; the engine's half in queue.c) ---- */

/* Whether `c` (not NULL) is triggered; inline for the engine's single-element paths. */
static inline int tfq__cancel_triggered(const tfq_cancel *c) {
  return atomic_load_explicit(&((tfq_cancel *)c)->triggered, memory_order_acquire);
}
/* Registers the pending attempt `a` of `q` with `c` (not NULL).  Returns 0 when registered;
 * nonzero, without registering, when `c` is already triggered. */
int tfq__cancel_register(tfq_cancel *c, tfq_queue *q, tfq__attempt *a);
/* Removes the registration of `a` (which tfq__cancel_register() made). */
void tfq__cancel_unregister(tfq_cancel *c, tfq__attempt *a);
/* The engine's half of tfq_cancel_trigger(), called with the token's mu held: under q->mu, an
 * attempt not yet done completes as cancelled (a dequeue's partial batch goes back) and the
 * queue is flushed. */
void tfq__queue_cancel_attempt(tfq_queue *q, tfq__attempt *a);

/* ---- element tuples (queue_tuple.c): the calling thread, outside the lock ---- */

/* Checks `t` against q's spec, as one element or (many) as a batch along dim 0 (TF's messages). */
tfq_code tfq__queue_validate_tuple(tfq_queue *q, const tfq_tuple *t, int many, tfq_status *st);
/* Slices row `row` of `src` (rank >= 1) into a new element tensor. */
tfq_code tfq__slice_row(const tfq_tensor *src, int64_t row, tfq_tensor **out, tfq_status *st);
/* A new string tensor of src's shape and strings that owns their bytes (src may borrow its
 * bytes: tfq__tensor_borrows). */
tfq_code tfq__strings_owned(const tfq_tensor *src, tfq_tensor **out, tfq_status *st);
/* Frees the n tensors of `b` (NULL entries allowed) and `b` itself; NULL: no-op. */
void tfq__free_boxed(tfq_tensor **b, size_t n);
/* Builds batch component `c` of `rows` rows from boxed element tensors (`many`; else moves
 * elems[0] out as the component).  A declared dim keeps its size; an unknown dim
 * (PaddingFIFOQueue) becomes the largest size in this batch (0 for an empty batch) and shorter
 * elements are padded with zeros / "". */
tfq_code tfq__queue_assemble_boxed(tfq_queue *q, size_t c, tfq_tensor **elems, int64_t rows,
                                   int many, tfq_tensor **out, tfq_status *st);

#endif
