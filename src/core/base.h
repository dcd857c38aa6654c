/* The library-private base (never installed): what src/core offers every module of the library
 * (status, tensors, tuples, specs, allocation, text, time, random numbers).  Every module may
 * include it (and src/core/sync.h, the thread-sync helpers); src/core includes nothing from the
 * modules above it.  Symbols here are tfq__* and hidden. */
#ifndef TFQ_CORE_BASE_H
#define TFQ_CORE_BASE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <tfq/alloc.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#include <tfq/version.h>

#define TFQ__ALIGN 64

/* ---- status ---- */
#define TFQ__MSG_CAP 1024
#define TFQ__FILE_CAP 1024
/* The location fields are data about where an error happened (tfq_status_file(), ...); every
 * tfq_status_set() clears them, the failing layer fills in what it knows. */
struct tfq_status {
  tfq_code code;
  char msg[TFQ__MSG_CAP];
  size_t reason; /* msg + reason is the message without its location prefix */
  int named;     /* the message itself names the file */
  int64_t offset, line, record;
  char file[TFQ__FILE_CAP];
};
/* tfq_status_clear() inline, for fast paths: OK, no message, no location. */
static inline void tfq__status_ok(tfq_status *st) {
  st->code = TFQ_OK;
  st->msg[0] = '\0';
  st->reason = 0;
  st->named = 0;
  st->offset = st->line = st->record = -1;
  st->file[0] = '\0';
}
/* Location setters (a field < 0 / NULL file leaves that field as it is). */
void tfq__status_set_record(tfq_status *st, int64_t record);
/* Marks the message as naming the file already (readers' open and truncation messages). */
void tfq__status_names_file(tfq_status *st);
/* Prefixes the message with printf-formatted text and remembers where the original message (the
 * reason) starts.  No-op without a message or when a prefix was added already. */
void tfq__status_prefix(tfq_status *st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Shorthand used everywhere: set `st` and return the code. */
#define TFQ__OOM(st) tfq_status_set((st), TFQ_RESOURCE_EXHAUSTED, "out of memory")

/* ---- allocation ---- */
/* Overflow-checked a*b; returns 0 (and sets *out to 0) when it overflows. */
static inline int tfq__mul_ok(size_t a, size_t b, size_t *out) {
  if (a != 0 && b > SIZE_MAX / a) {
    *out = 0;
    return 0;
  }
  *out = a * b;
  return 1;
}
void *tfq__calloc(size_t n, size_t size);
char *tfq__strdup(const char *s);

/* ---- tensors ---- */
typedef struct tfq__str {
  const char *p;
  size_t len;
} tfq__str;

typedef struct tfq__arena_chunk tfq__arena_chunk;
/* A string tensor's kept references (tfq__tensor_keep_reserve). */
typedef struct tfq__keep {
  size_t n, cap;
  struct tfq_tensor *t[];
} tfq__keep;

struct tfq_tensor {
  atomic_long refs;
  tfq_dtype dtype;
  int rank;
  int64_t nelems;
  size_t nbytes; /* numeric: nelems * dtype size; strings: 0 */
  void *data;    /* numeric buffer, or tfq__str[nelems] for strings */
  void (*dealloc)(void *, size_t, void *);
  void *dealloc_arg;
  size_t wrapped_len;
  tfq__arena_chunk *arena; /* string bytes */
  tfq__keep *keep;         /* tensors whose string bytes this one's strings view (borrowed) */
  int64_t dims[];
};

static inline tfq__str *tfq__strs(const tfq_tensor *t) { return (tfq__str *)t->data; }

/* Allocates a tensor whose numeric data is NOT zero-filled (callers overwrite all of it).
 * Strings are empty. */
tfq_code tfq__tensor_alloc(tfq_dtype dtype, const int64_t *dims, int rank, int zero,
                           tfq_tensor **out, tfq_status *st);
/* Copies bytes into string element i of a tensor the caller owns alone. */
tfq_code tfq__tensor_put_string(tfq_tensor *t, int64_t i, const char *p, size_t len);
/* tfq__tensor_put_string() into the element `s` of t (a pointer into t's elements), for a builder
 * that walks the elements by address (decode_csv's stacked string outputs). */
tfq_code tfq__tensor_put_string_at(tfq_tensor *t, tfq__str *s, const char *p, size_t len);
/* Adds `len` bytes of storage to the string arena of a tensor the caller owns alone and returns
 * them (uninitialised) for the caller to fill and point string elements into; NULL when out of
 * memory.  The bytes live as long as the tensor (for bulk builders: one copy per batch). */
char *tfq__tensor_arena_alloc(tfq_tensor *t, size_t len);
/* As tfq__tensor_arena_alloc(), but from the room left in the newest chunk when it has enough
 * (a new chunk of at least twice the newest's size otherwise): for a tensor refilled in place
 * after tfq__tensor_strings_reset(). */
char *tfq__tensor_arena_take(tfq_tensor *t, size_t len);
/* The bytes a string tensor's arena holds (its chunks' used bytes): at least the total length
 * of its strings that point into it.  Thread-safety: as reading the tensor. */
size_t tfq__tensor_arena_bytes(const tfq_tensor *t);
/* Gives a string tensor without byte storage yet an empty first chunk of `cap` bytes, which
 * tfq__tensor_put_string then fills (a builder that can estimate its bytes saves the chunks of
 * geometric growth).  0, or -1 out of memory (the tensor unchanged). */
int tfq__tensor_arena_reserve(tfq_tensor *t, size_t cap);
/* Whether the caller, holding one reference, may overwrite `t` in place: nothing else references
 * it (an acquire load, ordered after the other owners' last accesses) and it wraps no caller
 * memory.  The check of every refill-in-place path (_into dequeues, decode_csv_into). */
static inline int tfq__tensor_sole(const tfq_tensor *t) {
  return !t->dealloc && atomic_load_explicit(&((tfq_tensor *)t)->refs, memory_order_acquire) == 1;
}
/* Drops `k` >= 1 references to `t` at once (tfq_tensor_free called k times, one atomic step):
 * for the queue's batches of rows that share an owner.  Thread-safe as tfq_tensor_free. */
void tfq__tensor_release(tfq_tensor *t, int64_t k);
/* Points every string of a string tensor the caller owns alone at "" and frees its byte storage
 * but the newest chunk, which is kept, emptied, for the next fill. */
void tfq__tensor_strings_reset(tfq_tensor *t);
/* tfq__tensor_strings_reset() without pointing the strings at "": for a refill that writes every
 * element before anything reads one (a decode step, a dequeue's gather), which spares a store of
 * every element.  Until then the elements may point into the freed chunks: the caller must write
 * them all, or point them at "" (as a failed dequeue does), before the tensor is read or shared. */
void tfq__tensor_arena_reset(tfq_tensor *t);
/* Borrowed string bytes.  A string tensor's elements may point into the string bytes of other
 * tensors instead of its own arena (a batch dequeued "_into" views the bytes of the rows' owners
 * rather than copying them); it then keeps a reference to each of them, its keep list, which
 * holds those bytes alive and unchanged (an owner is refilled only when it is the sole holder of
 * its references) until the strings are reset or the tensor is freed.
 *
 * tfq__tensor_keep_reserve() makes room for `n` more kept references (0, or -1 out of memory);
 * tfq__tensor_keep_take() moves `n` references (NULL entries skipped) from `owners` into the keep
 * list, NULLing them there, within room reserved before; tfq__tensor_borrows() says whether any
 * is kept.  tfq__tensor_arena_reset(), tfq__tensor_strings_reset() and the tensor's destruction
 * drop them (the list's storage stays for the next fill).  All for a tensor the caller owns
 * alone. */
int tfq__tensor_keep_reserve(tfq_tensor *t, size_t n);
void tfq__tensor_keep_take(tfq_tensor *t, tfq_tensor **owners, size_t n);
static inline int tfq__tensor_borrows(const tfq_tensor *t) { return t->keep && t->keep->n; }
/* Whether t keeps references to more than one distinct tensor (a batch that borrows from its
 * rows' several owners, as against a decode step's strings that point into one read buffer). */
int tfq__tensor_keeps_several(const tfq_tensor *t);
/* Drops one reference for each non-NULL entry of b[0..n), with one atomic step for each run of
 * equal entries (rows of one owner): tfq_tensor_free() of each.  Thread-safety: as
 * tfq_tensor_free. */
void tfq__tensors_release(tfq_tensor **b, size_t n);

struct tfq_tuple {
  size_t n;
  tfq_tensor *c[];
};

/* ---- specs ---- */
typedef struct tfq__comp {
  tfq_dtype dtype;
  int rank; /* TFQ_UNKNOWN_RANK: unspecified */
  int64_t dims[TFQ_MAX_RANK];
  char *name;
} tfq__comp;

struct tfq_spec {
  size_t n, cap;
  tfq__comp *c;
};

tfq_code tfq__spec_copy(const tfq_spec *src, tfq_spec **out, tfq_status *st);
/* 1 when every dim is known (rank known, no -1). */
int tfq__comp_fully_defined(const tfq__comp *c);

/* ---- text ---- */
/* Appends to a bounded buffer; never overflows; always NUL-terminated. */
typedef struct tfq__buf {
  char *p;
  size_t cap, len;
} tfq__buf;
void tfq__buf_printf(tfq__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* "[3,4]", "[]", "[?,3]", "<unknown>" for an unknown rank. */
void tfq__buf_shape(tfq__buf *b, const int64_t *dims, int rank);
/* TF's list of a spec's shapes: "[[1,2], [3]]". */
void tfq__buf_spec_shapes(tfq__buf *b, const tfq_spec *s);
/* TF's list of a spec's dtypes: "float, int32". */
void tfq__buf_spec_dtypes(tfq__buf *b, const tfq_spec *s);

/* ---- time ---- */
/* CLOCK_MONOTONIC in nanoseconds (sync.c). */
int64_t tfq__now_ns(void);

/* ---- PCG32 (O'Neill, pcg-random.org: PCG-XSH-RR 64/32) ---- */
typedef struct tfq__pcg32 {
  uint64_t state;
  uint64_t inc;
} tfq__pcg32;
void tfq__pcg32_seed(tfq__pcg32 *r, uint64_t initstate, uint64_t initseq);
uint32_t tfq__pcg32_next(tfq__pcg32 *r);
/* Uniform in [0, bound) without modulo bias (bound > 0). */
uint32_t tfq__pcg32_bounded(tfq__pcg32 *r, uint32_t bound);
/* Uniform 64-bit draw in [0, bound), unbiased (bound > 0). */
uint64_t tfq__pcg32_bounded64(tfq__pcg32 *r, uint64_t bound);

/* ---- Philox4x32-10 with TensorFlow's layout (see philox.c) ---- */
typedef struct tfq__philox {
  uint32_t key[2], ctr[4], out[4];
  int used;
} tfq__philox;
void tfq__philox_block(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
void tfq__philox_seed(tfq__philox *p, uint64_t seed, uint64_t seed2);
uint32_t tfq__philox_next(tfq__philox *p);

/* 64 bits from the OS (getrandom), falling back to the clock. */
uint64_t tfq__random64(void);

/* ---- string batches built in place ---- */
typedef struct tfq__strbatch {
  tfq_tensor *t; /* rank 1, capacity = t->dims[0] */
  int64_t n;
} tfq__strbatch;
tfq_code tfq__strbatch_init(tfq__strbatch *b, int64_t cap);
tfq_code tfq__strbatch_push(tfq__strbatch *b, const char *p, size_t len);
/* Gives the batch room for at least `cap` strings (RESOURCE_EXHAUSTED on failure, `b` intact). */
tfq_code tfq__strbatch_reserve(tfq__strbatch *b, int64_t cap);
/* Hands out the tensor: [n] strings, or a scalar when `scalar` (REQUIRES n == 1). */
tfq_code tfq__strbatch_finish(tfq__strbatch *b, int scalar, tfq_tensor **out);
void tfq__strbatch_free(tfq__strbatch *b);

#endif
