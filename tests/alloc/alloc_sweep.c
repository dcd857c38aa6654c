/* Allocation-failure sweep (docs/reliability.md), printing TAP.  Public headers only.
 *
 * A counting allocator is installed with tfq_set_allocator().  For each scenario (a constructor
 * family, the queue operations of one queue kind, one reader path, decode_csv on one tokenizer,
 * a threaded pipeline) the scenario first runs with no failure, counting its allocations (N);
 * then, for k = 1, 2, ..., it runs again from scratch with the k-th allocation (malloc or
 * realloc) failing, until a run makes fewer than k allocations (k = N + 1 in a deterministic
 * scenario).  Every run must end with TFQ_OK, or with TFQ_RESOURCE_EXHAUSTED and a non-empty
 * message; never another code, a crash, a hang (SIGALRM watchdog) or a leak: every allocation
 * made through the allocator during the run must have been freed when the run returns (a live
 * counter), and LeakSanitizer checks the rest at exit.
 *
 * Figures printed per scenario: N, how many k gave RESOURCE_EXHAUSTED, how many were absorbed
 * (the failure was recovered from, the run succeeded), and the number of distinct allocation
 * call paths that were failed (the return addresses of the 4 frames above the hook, taken with
 * backtrace() at each failing allocation); a total is printed at the end.
 *
 * Replay: alloc_sweep --list | --scenario NAME [--k K [--stack]] (K 0 = the clean run; --stack
 * prints the failing allocation's backtrace on stderr, for addr2line).  A failing line
 * prints the scenario, k and the message. */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tfq.h>
#include <unistd.h>

#define TFQ_EXPERIMENTAL /* tfq_spec_from_tuple, tfq_registry_size */
#include <tfq/experimental.h>
#include <zlib.h>

/* ---- the counting allocator ------------------------------------------------------------- */

static atomic_long g_count;   /* allocations made while armed */
static atomic_long g_fail_at; /* 0: never fail; else the 1-based allocation index to fail */
static atomic_long g_live;    /* allocations not yet freed (all, armed or not) */
static atomic_int g_armed;
static int g_print_stack;

#define MAX_SITES 4096
static uintptr_t g_sites[MAX_SITES];
static size_t g_nsites;
static uintptr_t g_last_site;

static uintptr_t site_of_caller(void) {
  void *fr[6];
  int n = backtrace(fr, 6);
  uintptr_t h = 1469598103934665603u;
  for (int i = 2; i < n; i++) h = (h ^ (uintptr_t)fr[i]) * 1099511628211u;
  return h;
}

static int should_fail(void) {
  if (!atomic_load(&g_armed)) return 0;
  long n = atomic_fetch_add(&g_count, 1) + 1;
  if (n == atomic_load(&g_fail_at)) {
    g_last_site = site_of_caller();
    if (g_print_stack) { /* --k K --stack: where the failing allocation is made */
      void *fr[16];
      backtrace_symbols_fd(fr, backtrace(fr, 16), 2);
    }
    return 1;
  }
  return 0;
}

static void *hook_malloc(size_t n) {
  if (should_fail()) return NULL;
  void *p = malloc(n);
  if (p) atomic_fetch_add(&g_live, 1);
  return p;
}

static void *hook_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  void *q = realloc(p, n);
  if (q && !p) atomic_fetch_add(&g_live, 1);
  return q;
}

static void hook_free(void *p) {
  if (p) atomic_fetch_sub(&g_live, 1);
  free(p);
}

static void note_site(uintptr_t s) {
  for (size_t i = 0; i < g_nsites; i++)
    if (g_sites[i] == s) return;
  if (g_nsites < MAX_SITES) g_sites[g_nsites++] = s;
}

/* ---- helpers -------------------------------------------------------------------------------- */

#define TMO ((int64_t)10 * 1000 * 1000) /* 10 s: a hang shows as DEADLINE_EXCEEDED */
#define CK(e)                           \
  do {                                  \
    if ((rc = (e)) != TFQ_OK) goto out; \
  } while (0)
/* An unexpected code in the clean path: reported as INTERNAL so the sweep flags it. */
#define EXPECT(e, want)                                                                            \
  do {                                                                                             \
    rc = (e);                                                                                      \
    if (rc == TFQ_RESOURCE_EXHAUSTED) goto out;                                                    \
    if (rc != (want)) {                                                                            \
      rc = tfq_status_set(st, TFQ_INTERNAL, "line %d: %s gave %s, expected %s (%s)", __LINE__, #e, \
                          tfq_code_name(rc), tfq_code_name(want), tfq_status_message(st));         \
      goto out;                                                                                    \
    }                                                                                              \
    rc = TFQ_OK;                                                                                   \
  } while (0)
#define FAILIF(cond, ...)                                 \
  do {                                                    \
    if (cond) {                                           \
      rc = tfq_status_set(st, TFQ_INTERNAL, __VA_ARGS__); \
      goto out;                                           \
    }                                                     \
  } while (0)

/* Made before the sweep: the test's own bookkeeping must not take part in it. */
static tfq_status *g_js;

static char g_dir[256];
static char p_csv[300], p_csv_gz[300], p_csv2[300], p_rec[3][300], p_fixed[300], p_fixed_gz[300],
    p_wout[300], p_missing[300];

static tfq_code str_tensor(const char *const *s, size_t n, int rank, tfq_tensor **out,
                           tfq_status *st) {
  int64_t d = (int64_t)n;
  tfq_code rc = tfq_tensor_new(TFQ_STRING, &d, rank, out, st);
  for (size_t i = 0; rc == TFQ_OK && i < n; i++)
    rc = tfq_tensor_set_string(*out, (int64_t)i, s[i], strlen(s[i]), st);
  if (rc) {
    tfq_tensor_free(*out);
    *out = NULL;
  }
  return rc;
}

static tfq_code f32_tensor(const int64_t *dims, int rank, float base, tfq_tensor **out,
                           tfq_status *st) {
  tfq_code rc = tfq_tensor_new(TFQ_FLOAT, dims, rank, out, st);
  if (rc) return rc;
  float *f = tfq_tensor_data(*out);
  for (int64_t i = 0; i < tfq_tensor_num_elements(*out); i++) f[i] = base + (float)i;
  return TFQ_OK;
}

/* A string work queue holding `files`, closed. */
static tfq_code work_queue(const char *const *files, size_t n, tfq_queue **out, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_tuple *b = NULL;
  tfq_tensor *t = NULL;
  tfq_code rc;
  *out = NULL;
  CK(tfq_spec_new(&spec, st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st));
  CK(tfq_fifo_queue_new(spec, -1, "work", out, st));
  CK(tfq_tuple_new(1, &b, st));
  CK(str_tensor(files, n, 1, &t, st));
  tfq_tuple_set_take(b, 0, t);
  CK(tfq_queue_enqueue_many(*out, b, NULL, TMO, st));
  CK(tfq_queue_close(*out, 0, NULL, TMO, st));
out:
  tfq_tuple_free(b);
  tfq_spec_free(spec);
  if (rc) {
    tfq_queue_free(*out);
    *out = NULL;
  }
  return rc;
}

/* ---- scenarios: constructors ---------------------------------------------------------------- */

static int g_wrap_freed;
static void wrap_dealloc(void *data, size_t len, void *arg) {
  (void)len;
  (void)arg;
  free(data);
  g_wrap_freed++;
}

static tfq_code scen_tensors(tfq_status *st) {
  tfq_tensor *a = NULL, *s = NULL, *w = NULL;
  tfq_tuple *t = NULL;
  tfq_spec *spec = NULL, *spec2 = NULL;
  tfq_status *st2 = NULL;
  tfq_cancel *cn = NULL;
  tfq_code rc;
  int64_t dims[2] = {3, 4};
  CK(tfq_tensor_new(TFQ_DOUBLE, dims, 2, &a, st));
  const char *strs[] = {"alpha", "", "a much longer string that needs its own arena block"};
  CK(str_tensor(strs, 3, 1, &s, st));
  CK(tfq_tensor_set_string(s, 1, "x\0y", 3, st)); /* replace: arena growth */
  int64_t wd = 8;
  void *mem = malloc(8 * sizeof(int32_t));
  FAILIF(!mem, "malloc");
  g_wrap_freed = 0;
  rc = tfq_tensor_wrap(TFQ_INT32, &wd, 1, mem, 8 * sizeof(int32_t), wrap_dealloc, NULL, &w, st);
  if (rc) {
    FAILIF(g_wrap_freed != 1, "tensor_wrap failed (%s) without calling the deallocator",
           tfq_code_name(rc));
    goto out;
  }
  CK(tfq_tuple_new(3, &t, st));
  tfq_tuple_set_take(t, 0, tfq_tensor_ref(a));
  tfq_tuple_set_take(t, 1, tfq_tensor_ref(s));
  tfq_tuple_set_take(t, 2, tfq_tensor_ref(w));
  CK(tfq_spec_new(&spec, st));
  int64_t sd[2] = {TFQ_UNKNOWN_DIM, 2};
  CK(tfq_spec_add(spec, TFQ_FLOAT, sd, 2, "features", st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, TFQ_UNKNOWN_RANK, "label", st));
  CK(tfq_spec_add(spec, TFQ_INT64, NULL, 0, NULL, st));
  CK(tfq_spec_from_tuple(t, &spec2, st));
  FAILIF(tfq_spec_size(spec2) != 3, "spec_from_tuple size");
  st2 = tfq_status_new();
  if (!st2) {
    rc = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "tfq_status_new returned NULL");
    goto out;
  }
  CK(tfq_cancel_new(&cn, st));
out:
  tfq_cancel_free(cn);
  tfq_status_free(st2);
  tfq_spec_free(spec2);
  tfq_spec_free(spec);
  tfq_tuple_free(t);
  tfq_tensor_free(w);
  tfq_tensor_free(s);
  tfq_tensor_free(a);
  return rc;
}

/* Every queue kind with options, a private and a shared (registry) open, a matching reopen, a
 * mismatching reopen, clear. */
static tfq_code scen_queue_ctors(tfq_status *st) {
  tfq_registry *reg = NULL;
  tfq_spec *spec = NULL;
  tfq_queue_options *o = NULL;
  tfq_queue *q[4] = {0}, *shared[4] = {0}, *again = NULL, *bad = NULL, *fq = NULL, *dq = NULL;
  tfq_code rc;
  CK(tfq_registry_new(&reg, st));
  CK(tfq_spec_new(&spec, st));
  int64_t d2 = 2;
  CK(tfq_spec_add(spec, TFQ_FLOAT, &d2, 1, "x", st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st));
  for (int k = 0; k < 4; k++) {
    CK(tfq_queue_options_new(&o, st));
    tfq_queue_options_set_capacity(o, 10);
    CK(tfq_queue_options_set_name(o, "my_queue", st));
    CK(tfq_queue_options_set_container(o, "box", st));
    if (k == TFQ_QUEUE_RANDOM_SHUFFLE) {
      tfq_queue_options_set_min_after_dequeue(o, 2);
      tfq_queue_options_set_seeds(o, 87654321, 12);
      tfq_queue_options_set_tf_exact_order(o, 1);
    }
    CK(tfq_queue_new((tfq_queue_kind)k, spec, o, &q[k], st));
    char sn[32];
    snprintf(sn, sizeof sn, "shared_instance_q%d", k);
    CK(tfq_queue_options_set_shared_name(o, sn, st));
    CK(tfq_queue_open(reg, (tfq_queue_kind)k, spec, o, &shared[k], st));
    tfq_queue_options_free(o);
    o = NULL;
  }
  CK(tfq_queue_options_new(&o, st));
  tfq_queue_options_set_capacity(o, 10);
  CK(tfq_queue_options_set_container(o, "box", st));
  CK(tfq_queue_options_set_shared_name(o, "shared_instance_q0", st));
  CK(tfq_queue_open(reg, TFQ_QUEUE_FIFO, spec, o, &again, st));
  FAILIF(again != shared[0], "reopen gave another queue");
  tfq_queue_options_set_capacity(o, 15);
  EXPECT(tfq_queue_open(reg, TFQ_QUEUE_FIFO, spec, o, &bad, st), TFQ_INVALID_ARGUMENT);
  CK(tfq_fifo_queue_new(spec, 5, NULL, &fq, st));
  FAILIF(tfq_registry_size(reg) != 4, "registry size %zu", tfq_registry_size(reg));
  tfq_registry_clear(reg, "box");
  /* the process-wide registry, emptied again below */
  CK(tfq_queue_options_set_container(o, "", st));
  CK(tfq_queue_options_set_shared_name(o, "default_registry_q", st));
  CK(tfq_queue_open(NULL, TFQ_QUEUE_PADDING_FIFO, spec, o, &dq, st));
out:
  tfq_registry_clear(NULL, NULL);
  tfq_queue_free(dq);
  tfq_queue_free(fq);
  tfq_queue_free(bad);
  tfq_queue_free(again);
  for (int k = 0; k < 4; k++) {
    tfq_queue_free(q[k]);
    tfq_queue_free(shared[k]);
  }
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  tfq_registry_free(reg);
  return rc;
}

/* ---- scenarios: queue operations --------------------------------------------------------------
 */

/* A batch of B elements (float x, string s; Priority: int64 priority first) for `kind`. */
static tfq_code make_batch(tfq_queue_kind kind, int64_t B, int64_t xlen, int single,
                           tfq_tuple **out, tfq_status *st) {
  int prio = kind == TFQ_QUEUE_PRIORITY;
  tfq_tensor *p = NULL, *x = NULL, *s = NULL;
  tfq_code rc;
  *out = NULL;
  CK(tfq_tuple_new(prio ? 3 : 2, out, st));
  int64_t xd[2] = {B, xlen};
  CK(f32_tensor(single ? xd + 1 : xd, single ? 1 : 2, (float)B, &x, st));
  const char *strs[] = {"one", "two", "a string well past any small-string size, to the arena",
                        "four", "five"};
  if (single) {
    int64_t none = 0;
    CK(tfq_tensor_new(TFQ_STRING, &none, 0, &s, st));
    CK(tfq_tensor_set_string(s, 0, strs[2], strlen(strs[2]), st));
  } else {
    CK(str_tensor(strs, (size_t)B, 1, &s, st));
  }
  if (prio) {
    CK(tfq_tensor_new(TFQ_INT64, &B, single ? 0 : 1, &p, st));
    int64_t *pv = tfq_tensor_data(p);
    for (int64_t i = 0; i < (single ? 1 : B); i++) pv[i] = (7 * i) % 5;
    tfq_tuple_set_take(*out, 0, p);
    p = NULL;
  }
  tfq_tuple_set_take(*out, prio ? 1 : 0, x);
  tfq_tuple_set_take(*out, prio ? 2 : 1, s);
  x = s = NULL;
out:
  tfq_tensor_free(p);
  tfq_tensor_free(x);
  tfq_tensor_free(s);
  if (rc) {
    tfq_tuple_free(*out);
    *out = NULL;
  }
  return rc;
}

static tfq_code queue_ops(tfq_queue_kind kind, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_queue_options *o = NULL;
  tfq_queue *q = NULL;
  tfq_tuple *b = NULL, *e = NULL, *d = NULL, *into = NULL, *many = NULL, *up = NULL, *end = NULL;
  tfq_code rc;
  int pad = kind == TFQ_QUEUE_PADDING_FIFO;
  CK(tfq_spec_new(&spec, st));
  int64_t xd = pad ? TFQ_UNKNOWN_DIM : 2;
  CK(tfq_spec_add(spec, TFQ_FLOAT, &xd, 1, "x", st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st));
  CK(tfq_queue_options_new(&o, st));
  tfq_queue_options_set_capacity(o, 8);
  if (kind == TFQ_QUEUE_RANDOM_SHUFFLE) {
    tfq_queue_options_set_min_after_dequeue(o, 1);
    tfq_queue_options_set_seeds(o, 1, 2);
  }
  CK(tfq_queue_new(kind, spec, o, &q, st));
  CK(make_batch(kind, 5, pad ? 3 : 2, 0, &b, st));
  CK(make_batch(kind, 1, pad ? 1 : 2, 1, &e, st));
  CK(tfq_queue_enqueue_many(q, b, NULL, TMO, st));
  CK(tfq_queue_enqueue(q, e, NULL, TMO, st));
  FAILIF(tfq_queue_size(q) != 6, "size %lld after enqueues", (long long)tfq_queue_size(q));
  CK(tfq_queue_dequeue(q, &d, NULL, TMO, st));
  CK(tfq_tuple_new(kind == TFQ_QUEUE_PRIORITY ? 3 : 2, &into, st));
  CK(tfq_queue_dequeue_into(q, into, NULL, TMO, st));
  CK(tfq_queue_dequeue_into(q, into, NULL, TMO, st)); /* in place the second time */
  CK(tfq_queue_dequeue_many(q, 2, &many, NULL, TMO, st));
  CK(tfq_queue_close(q, 0, NULL, TMO, st));
  CK(tfq_queue_dequeue_up_to(q, 5, &up, NULL, TMO, st));
  FAILIF(tfq_tensor_dim(tfq_tuple_get(up, 0), 0) != 1, "dequeue_up_to took %lld, expected 1",
         (long long)tfq_tensor_dim(tfq_tuple_get(up, 0), 0));
  EXPECT(tfq_queue_dequeue_up_to(q, 5, &end, NULL, TMO, st), TFQ_OUT_OF_RANGE);
out:
  tfq_tuple_free(end);
  tfq_tuple_free(up);
  tfq_tuple_free(many);
  tfq_tuple_free(into);
  tfq_tuple_free(d);
  tfq_tuple_free(e);
  tfq_tuple_free(b);
  tfq_queue_free(q);
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  return rc;
}

static tfq_code scen_ops_fifo(tfq_status *st) { return queue_ops(TFQ_QUEUE_FIFO, st); }
static tfq_code scen_ops_shuffle(tfq_status *st) { return queue_ops(TFQ_QUEUE_RANDOM_SHUFFLE, st); }
static tfq_code scen_ops_padding(tfq_status *st) { return queue_ops(TFQ_QUEUE_PADDING_FIFO, st); }
static tfq_code scen_ops_priority(tfq_status *st) { return queue_ops(TFQ_QUEUE_PRIORITY, st); }

/* A producer thread blocked in enqueue_many on a capacity-2 queue while the main thread's
 * dequeue_many calls wait with partial batches; then a close. */
typedef struct feeder {
  tfq_queue *q;
  tfq_tuple *b;
  tfq_code rc;
  char msg[256];
} feeder;

static void *feed_main(void *arg) {
  feeder *f = arg;
  tfq_status *fs = tfq_status_new();
  f->rc = fs ? tfq_queue_enqueue_many(f->q, f->b, NULL, TMO, fs)
             : TFQ_RESOURCE_EXHAUSTED; /* tfq_status_new is part of the sweep */
  snprintf(f->msg, sizeof f->msg, "%s", fs ? tfq_status_message(fs) : "tfq_status_new failed");
  /* the end of input: a plain close once everything is in (or a cancelling one on failure) */
  if (f->rc == TFQ_OK) f->rc = tfq_queue_close(f->q, 0, NULL, TMO, fs);
  if (f->rc != TFQ_OK) {
    if (fs) snprintf(f->msg, sizeof f->msg, "%s", tfq_status_message(fs));
    if (tfq_queue_close(f->q, 1, NULL, TMO, NULL)) { /* always OK */
    }
  }
  tfq_status_free(fs);
  return NULL;
}

static tfq_code blocking_ops(tfq_queue_kind kind, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_queue_options *o = NULL;
  tfq_queue *q = NULL;
  tfq_tuple *got = NULL;
  feeder f = {0};
  int started = 0;
  tfq_code rc;
  int64_t total = 0;
  CK(tfq_spec_new(&spec, st));
  int64_t xd = kind == TFQ_QUEUE_PADDING_FIFO ? TFQ_UNKNOWN_DIM : 2;
  CK(tfq_spec_add(spec, TFQ_FLOAT, &xd, 1, "x", st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st));
  CK(tfq_queue_options_new(&o, st));
  tfq_queue_options_set_capacity(o, 2);
  CK(tfq_queue_new(kind, spec, o, &q, st));
  CK(make_batch(kind, 5, 2, 0, &f.b, st));
  f.q = q;
  pthread_t th;
  FAILIF(pthread_create(&th, NULL, feed_main, &f) != 0, "pthread_create");
  started = 1;
  for (;;) {
    rc = tfq_queue_dequeue_many(q, 3, &got, NULL, TMO, st);
    if (rc == TFQ_OUT_OF_RANGE) rc = tfq_queue_dequeue_up_to(q, 3, &got, NULL, TMO, st);
    if (rc) break;
    total += tfq_tensor_dim(tfq_tuple_get(got, 0), 0);
    tfq_tuple_free(got);
    got = NULL;
  }
  if (rc != TFQ_OUT_OF_RANGE)
    if (tfq_queue_close(q, 1, NULL, TMO, NULL)) { /* unblock the feeder; always OK */
    }
  pthread_join(th, NULL);
  started = 0;
  /* The feeder's error wins, except the CANCELLED that the main thread's own close after a
   * failure causes. */
  if (f.rc != TFQ_OK && (rc == TFQ_OUT_OF_RANGE || f.rc != TFQ_CANCELLED)) {
    rc = tfq_status_set(st, f.rc, "feeder: %s", f.msg);
    goto out;
  }
  if (rc != TFQ_OUT_OF_RANGE) goto out;
  rc = TFQ_OK;
  FAILIF(total != 5, "dequeued %lld of 5", (long long)total);
out:
  if (started) pthread_join(th, NULL);
  tfq_tuple_free(got);
  tfq_tuple_free(f.b);
  tfq_queue_free(q);
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  return rc;
}

static tfq_code scen_blocking_fifo(tfq_status *st) { return blocking_ops(TFQ_QUEUE_FIFO, st); }
static tfq_code scen_blocking_padding(tfq_status *st) {
  return blocking_ops(TFQ_QUEUE_PADDING_FIFO, st);
}

/* ---- scenarios: readers --------------------------------------------------------------------- */

typedef struct reader_case {
  tfq_reader_kind kind;
  tfq_compression comp;
  const char *files[3];
  size_t nfiles;
  int64_t expect; /* records */
  int missing;    /* work units that cannot be opened (NOT_FOUND, then the next one) */
} reader_case;

static tfq_code read_all(const reader_case *rcse, size_t bufsize, tfq_status *st) {
  tfq_reader_options *o = NULL;
  tfq_reader *r = NULL;
  tfq_queue *work = NULL;
  tfq_tensor *k = NULL, *v = NULL;
  char *state = NULL;
  tfq_code rc;
  CK(tfq_reader_options_new(&o, st));
  CK(tfq_reader_options_set_name(o, "the_reader", st));
  tfq_reader_options_set_compression(o, rcse->comp);
  tfq_reader_options_set_buffer_bytes(o, bufsize);
  if (rcse->kind == TFQ_READER_TEXT_LINE) tfq_reader_options_set_skip_header_lines(o, 1);
  if (rcse->kind == TFQ_READER_FIXED_LENGTH) {
    tfq_reader_options_set_header_bytes(o, 4);
    tfq_reader_options_set_record_bytes(o, 6);
    tfq_reader_options_set_footer_bytes(o, 2);
  }
  CK(tfq_reader_new(rcse->kind, o, &r, st));
  CK(work_queue(rcse->files, rcse->nfiles, &work, st));
  int64_t got = 0;
  int missing = 0;
  CK(tfq_reader_read(r, work, &k, &v, NULL, st));
  got++;
  if (rcse->kind == TFQ_READER_WHOLE_FILE || rcse->kind == TFQ_READER_IDENTITY) {
    size_t len;
    CK(tfq_reader_serialize_state(r, &state, &len, st));
    CK(tfq_reader_restore_state(r, state, len, st));
  }
  for (;;) {
    tfq_tensor_free(k);
    tfq_tensor_free(v);
    k = v = NULL;
    rc = tfq_reader_read_up_to(r, work, 3, &k, &v, NULL, st);
    if (rc == TFQ_OUT_OF_RANGE) break;
    if (rc == TFQ_NOT_FOUND && missing++ < rcse->missing) continue;
    if (rc) goto out;
    got += tfq_tensor_num_elements(k);
  }
  rc = TFQ_OK;
  FAILIF(got != rcse->expect || missing != rcse->missing,
         "read %lld records, expected %lld; %d missing files, expected %d", (long long)got,
         (long long)rcse->expect, missing, rcse->missing);
out:
  tfq_free(state);
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  tfq_queue_free(work);
  tfq_reader_free(r);
  tfq_reader_options_free(o);
  return rc;
}

#define CSV_LINES 12 /* data lines per CSV file (plus a header) */

static tfq_code scen_textline(tfq_status *st) {
  reader_case c = {
      TFQ_READER_TEXT_LINE, TFQ_COMPRESSION_NONE, {p_csv, p_missing, p_csv2}, 3, 2 * CSV_LINES, 1};
  return read_all(&c, 64, st); /* a 64-byte buffer: long lines grow it */
}
static tfq_code scen_textline_gzip(tfq_status *st) {
  reader_case c = {TFQ_READER_TEXT_LINE, TFQ_COMPRESSION_GZIP, {p_csv_gz, NULL}, 1, CSV_LINES, 0};
  return read_all(&c, 64, st);
}
static tfq_code scen_tfrecord(tfq_status *st) {
  reader_case c = {TFQ_READER_TFRECORD, TFQ_COMPRESSION_NONE, {p_rec[0], NULL}, 1, 5, 0};
  return read_all(&c, 64, st);
}
static tfq_code scen_tfrecord_zlib(tfq_status *st) {
  reader_case c = {TFQ_READER_TFRECORD, TFQ_COMPRESSION_ZLIB, {p_rec[1], NULL}, 1, 5, 0};
  return read_all(&c, 64, st);
}
static tfq_code scen_tfrecord_gzip(tfq_status *st) {
  reader_case c = {TFQ_READER_TFRECORD, TFQ_COMPRESSION_GZIP, {p_rec[2], NULL}, 1, 5, 0};
  return read_all(&c, TFQ_DEFAULT_READ_BUFFER_BYTES, st);
}
static tfq_code scen_fixedlen(tfq_status *st) {
  reader_case c = {TFQ_READER_FIXED_LENGTH, TFQ_COMPRESSION_NONE, {p_fixed, NULL}, 1, 5, 0};
  return read_all(&c, 64, st);
}
static tfq_code scen_fixedlen_gzip(tfq_status *st) {
  reader_case c = {TFQ_READER_FIXED_LENGTH, TFQ_COMPRESSION_GZIP, {p_fixed_gz, NULL}, 1, 5, 0};
  return read_all(&c, 64, st);
}
static tfq_code scen_wholefile_identity(tfq_status *st) {
  reader_case c = {TFQ_READER_WHOLE_FILE, TFQ_COMPRESSION_NONE, {p_csv, p_fixed}, 2, 2, 0};
  tfq_code rc = read_all(&c, 64, st);
  if (rc) return rc;
  reader_case i = {TFQ_READER_IDENTITY, TFQ_COMPRESSION_NONE, {"unit-a", "unit-b"}, 2, 2, 0};
  return read_all(&i, 64, st);
}

static tfq_code write_records(const char *path, tfq_compression c, tfq_status *st) {
  tfq_tfrecord_writer *w = NULL;
  tfq_code rc;
  char big[300];
  memset(big, 'r', sizeof big);
  CK(tfq_tfrecord_writer_new(path, c, &w, st));
  CK(tfq_tfrecord_writer_write(w, "first", 5, st));
  CK(tfq_tfrecord_writer_write(w, big, sizeof big, st));
  CK(tfq_tfrecord_writer_flush(w, st));
  CK(tfq_tfrecord_writer_write(w, "", 0, st));
  CK(tfq_tfrecord_writer_write(w, big, 100, st));
  CK(tfq_tfrecord_writer_write(w, "last", 4, st));
  CK(tfq_tfrecord_writer_close(w, st));
out:
  tfq_tfrecord_writer_free(w);
  return rc;
}

static tfq_code scen_tfrecord_writer(tfq_status *st) {
  tfq_code rc;
  for (int c = 0; c < 3; c++)
    if ((rc = write_records(p_wout, (tfq_compression)c, st)) != TFQ_OK) return rc;
  return TFQ_OK;
}

/* ---- scenarios: decode_csv ------------------------------------------------------------------ */

static tfq_code csv_opts(tfq_csv_options **o, tfq_status *st) {
  tfq_code rc;
  tfq_tensor *dt = NULL;
  CK(tfq_csv_options_new(o, st));
  CK(tfq_csv_options_set_field_delim(*o, ",", 1, st));
  CK(tfq_csv_options_set_na_value(*o, "NA", 2, st));
  CK(tfq_csv_options_add_default_float(*o, -1.f, st));
  CK(tfq_csv_options_add_default_double(*o, -2.0, st));
  CK(tfq_csv_options_add_default_int32(*o, -3, st));
  CK(tfq_csv_options_add_default_int64(*o, -4, st));
  CK(tfq_csv_options_add_default_string(*o, "dflt", 4, st));
  CK(tfq_csv_options_add_required(*o, TFQ_STRING, st));
  const char *dv[] = {"tensor default"};
  CK(str_tensor(dv, 1, 1, &dt, st));
  CK(tfq_csv_options_add_default_tensor(*o, dt, st));
out:
  tfq_tensor_free(dt);
  if (rc) {
    tfq_csv_options_free(*o);
    *o = NULL;
  }
  return rc;
}

static tfq_code decode(const char *const *lines, size_t n, tfq_status *st) {
  tfq_csv_options *o = NULL, *sel = NULL;
  tfq_tuple *out = NULL;
  tfq_tensor *recs = NULL;
  char *buf = NULL;
  tfq_code rc;
  size_t lens[8];
  for (size_t i = 0; i < n; i++) lens[i] = strlen(lines[i]);
  CK(csv_opts(&o, st));
  CK(tfq_decode_csv_lines(o, lines, lens, n, &out, st));
  FAILIF(tfq_tuple_size(out) != 7, "decode_csv_lines gave %zu columns", tfq_tuple_size(out));
  tfq_tuple_free(out);
  out = NULL;
  int64_t d2[2] = {2, 2};
  CK(tfq_tensor_new(TFQ_STRING, d2, 2, &recs, st));
  for (int64_t i = 0; i < 4; i++)
    CK(tfq_tensor_set_string(recs, i, lines[i % (int64_t)n], lens[i % (int64_t)n], st));
  CK(tfq_decode_csv(o, recs, &out, st));
  tfq_tuple_free(out);
  out = NULL;
  CK(tfq_decode_csv_record(o, lines[0], lens[0], &out, st));
  tfq_tuple_free(out);
  out = NULL;
  size_t tot = 0;
  for (size_t i = 0; i < n; i++) tot += lens[i] + 2;
  buf = malloc(tot + 1);
  FAILIF(!buf, "malloc");
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    memcpy(buf + at, lines[i], lens[i]);
    at += lens[i];
    memcpy(buf + at, i % 2 ? "\r\n" : "\n", i % 2 ? 2 : 1);
    at += i % 2 ? 2 : 1;
  }
  CK(tfq_decode_csv_buffer(o, buf, at, &out, st));
  tfq_tuple_free(out);
  out = NULL;
  /* select_cols: columns 1, 4 and 5 */
  CK(tfq_csv_options_new(&sel, st));
  int64_t cols[3] = {1, 4, 5};
  CK(tfq_csv_options_set_select_cols(sel, cols, 3, st));
  CK(tfq_csv_options_set_na_value(sel, "NA", 2, st));
  CK(tfq_csv_options_add_default_double(sel, 0, st));
  CK(tfq_csv_options_add_default_string(sel, "z", 1, st));
  CK(tfq_csv_options_add_required(sel, TFQ_STRING, st));
  CK(tfq_decode_csv_lines(sel, lines, lens, n, &out, st));
  FAILIF(tfq_tuple_size(out) != 3, "select_cols gave %zu columns", tfq_tuple_size(out));
out:
  free(buf);
  tfq_tuple_free(out);
  tfq_tensor_free(recs);
  tfq_csv_options_free(sel);
  tfq_csv_options_free(o);
  return rc;
}

static tfq_code scen_csv_fast(tfq_status *st) {
  const char *lines[] = {"1.5,2.25,3,4,abc,req,x", ",NA,,,,r2,",
                         "1e3,0x1p3,-7,9000000000,a somewhat longer string field value,r3,t",
                         " 4.5 ,inf,+2,-9,NA,r4,"};
  return decode(lines, 4, st);
}

static tfq_code scen_csv_libcsv(tfq_status *st) {
  const char *lines[] = {"\"1.5\",2.25,\"3\",4,\"a,\"\"b\"\"\",\"req\",x",
                         "\"\",NA,,\"\",\"\",\"r2\",",
                         "1e3,\"0x1p3\",-7,9000000000,\"a longer, quoted string field value\",r3,t",
                         "4.5,inf,2,-9,\"NA\",\"r4 \"\"q\"\"\",\"\""};
  return decode(lines, 4, st);
}

/* ---- scenarios: tf.train.Example parsing ------------------------------------------------- */

/* Appends a varint / a length-delimited field to b (no allocation: fixed buffers). */
static size_t ex_varint(uint8_t *b, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b[n++] = (uint8_t)v;
  return n;
}
static size_t ex_ld(uint8_t *b, uint8_t tag, const void *s, size_t len) {
  b[0] = tag;
  size_t n = 1 + ex_varint(b + 1, len);
  memcpy(b + n, s, len);
  return n + len;
}
/* An Example holding entries (key, Feature bytes). */
static size_t ex_build(uint8_t *out, const char *const *keys, const uint8_t *const *feats,
                       const size_t *flens, size_t n) {
  uint8_t fs[1024], e[512];
  size_t fl = 0;
  for (size_t i = 0; i < n; i++) {
    size_t el = ex_ld(e, 0x0a, keys[i], strlen(keys[i]));
    el += ex_ld(e + el, 0x12, feats[i], flens[i]);
    fl += ex_ld(fs + fl, 0x0a, e, el);
  }
  return ex_ld(out, 0x0a, fs, fl);
}

static tfq_code scen_example(tfq_status *st) {
  tfq_code rc;
  tfq_example_config *c = NULL;
  tfq_example_result *res = NULL;
  tfq_tuple *tup = NULL;
  tfq_tensor *def = NULL, *sdef = NULL, *pad = NULL, *ser = NULL, *names = NULL, *raw = NULL;
  /* Feature bytes: float [1.5, 2.5] packed, int64 [3, -1, 7] unpacked, bytes ["x", "yz"], and
   * a long string (its own arena block) */
  static const uint8_t f_float[] = {0x12, 0x0a, 0x0a, 0x08, 0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0x40};
  static const uint8_t f_ints[] = {0x1a, 0x0f, 0x08, 0x03, 0x08, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x08, 0x07};
  static const uint8_t f_idx[] = {0x1a, 0x04, 0x0a, 0x02, 0x02, 0x01};
  static const uint8_t f_strs[] = {0x0a, 0x09, 0x0a, 0x01, 'x', 0x0a, 0x02, 'y', 'z', 0x0a, 0x00};
  uint8_t f_long[300];
  size_t ll = 0;
  {
    uint8_t list[290], item[280];
    memset(item, 'L', sizeof item);
    size_t il = ex_ld(list, 0x0a, item, sizeof item);
    ll = ex_ld(f_long, 0x0a, list, il);
  }
  const char *keys[] = {"f", "i", "s", "q", "ix", "iy", "v", "w"};
  const uint8_t *feats[] = {f_float, f_ints, f_long, f_ints, f_idx, f_idx, f_float, f_strs};
  size_t flens[] = {sizeof f_float, sizeof f_ints,  ll,           sizeof f_ints, sizeof f_idx,
                    sizeof f_idx,   sizeof f_float, sizeof f_strs};
  uint8_t e0[2048], e1[2048];
  size_t l0 = ex_build(e0, keys, feats, flens, 8),
         l1 = ex_build(e1, keys + 2, feats + 2, flens + 2, 1);
  CK(tfq_example_config_new(&c, st));
  int64_t two = 2, dims[2] = {1, 2}, size[2] = {4, 4};
  CK(tfq_tensor_new(TFQ_FLOAT, &two, 1, &def, st));
  CK(tfq_example_config_add_fixed_len(c, "f", TFQ_FLOAT, &two, 1, def, st));
  const char *sd[] = {"a default string long enough to need an arena of its own, surely"};
  CK(str_tensor(sd, 1, 0, &sdef, st));
  CK(tfq_example_config_add_fixed_len(c, "zz", TFQ_STRING, NULL, 0, sdef, st));
  CK(tfq_example_config_add_var_len(c, "s", TFQ_STRING, st));
  CK(tfq_tensor_new(TFQ_INT64, NULL, 0, &pad, st));
  CK(tfq_example_config_add_fixed_len_sequence(c, "q", TFQ_INT64, dims + 1, 0, 1, pad, st));
  CK(tfq_example_config_add_fixed_len_sequence(c, "i", TFQ_INT64, &dims[0], 1, 1, NULL, st));
  const char *ik[] = {"ix", "iy"};
  CK(tfq_example_config_add_sparse(c, "sp", ik, 2, "v", TFQ_FLOAT, size, 0, st));
  CK(tfq_example_config_check(c, st));
  const char *ptrs[3] = {(const char *)e0, "\x0a\x05\x01", (const char *)e0};
  size_t lens[3] = {l0, 3, l0};
  const char *nm[] = {"first", "second", "third"};
  size_t nl[] = {5, 6, 5};
  EXPECT(tfq_parse_example_strings(c, ptrs, lens, 3, nm, nl, &res, st), TFQ_INVALID_ARGUMENT);
  lens[1] = l1; /* only "s": the others take defaults, padding, or nothing */
  ptrs[1] = (const char *)e1;
  CK(tfq_parse_example_strings(c, ptrs, lens, 3, nm, nl, &res, st));
  FAILIF(tfq_example_result_size(res) != 6, "%zu outputs", tfq_example_result_size(res));
  CK(tfq_example_result_to_tuple(res, &tup, st));
  tfq_example_result_free(res);
  res = NULL;
  CK(tfq_parse_single_example(c, (const char *)e0, l0, &res, st));
  tfq_example_result_free(res);
  res = NULL;
  int64_t three = 3;
  CK(tfq_tensor_new(TFQ_STRING, &three, 1, &ser, st));
  for (int64_t i = 0; i < 3; i++) CK(tfq_tensor_set_string(ser, i, ptrs[i], lens[i], st));
  CK(str_tensor(nm, 3, 1, &names, st));
  CK(tfq_parse_example(c, ser, names, &res, st));
  tfq_example_result_free(res);
  res = NULL;
  EXPECT(tfq_parse_single_example(c, "\x0a\x05\x01", 3, &res, st), TFQ_INVALID_ARGUMENT);
  CK(tfq_decode_raw(names, TFQ_UINT8, 1, &raw, st) == TFQ_INVALID_ARGUMENT ? TFQ_OK : TFQ_INTERNAL);
  CK(tfq_decode_raw(sdef, TFQ_INT16, 0, &raw, st));
out:
  tfq_tensor_free(raw);
  tfq_tensor_free(names);
  tfq_tensor_free(ser);
  tfq_tuple_free(tup);
  tfq_example_result_free(res);
  tfq_tensor_free(pad);
  tfq_tensor_free(sdef);
  tfq_tensor_free(def);
  tfq_example_config_free(c);
  return rc;
}

/* ---- scenarios: coordination ---------------------------------------------------------------- */

static void *wait_stop(void *arg) {
  tfq_coord_wait_for_stop(arg, -1);
  return NULL;
}

static tfq_code loop_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  (void)st;
  atomic_fetch_add((atomic_int *)ctx, 1);
  return TFQ_OK;
}

/* The outcome of a threaded scenario: the coordinator's error wins (a step that failed in a
 * thread makes the main thread's calls fail with CANCELLED), else the main thread's code. */
static tfq_code finish(tfq_coord *c, tfq_code main_rc, tfq_code main_ok, tfq_status *st) {
  tfq_code src = tfq_coord_request_stop(c, TFQ_OK, NULL); /* a clean stop: TFQ_OK */
  tfq_code jrc = tfq_coord_join(c, TMO, 0, g_js);
  if (jrc != TFQ_OK) return tfq_status_set(st, jrc, "%s", tfq_status_message(g_js));
  if (src != TFQ_OK) return tfq_status_set(st, src, "request_stop returned %s", tfq_code_name(src));
  if (main_rc == main_ok) return TFQ_OK;
  return main_rc;
}

static tfq_code scen_coord(tfq_status *st) {
  tfq_coord *c = NULL;
  tfq_code rc;
  atomic_int steps = 0;
  CK(tfq_coord_new(&c, st));
  tfq_coord_add_clean_code(c, TFQ_CANCELLED);
  rc = tfq_coord_start_thread(c, "waiter", wait_stop, c, st);
  if (!rc) rc = tfq_coord_loop(c, 100, loop_step, &steps, "looper", st);
  rc = finish(c, rc, TFQ_OK, st);
out:
  tfq_coord_free(c);
  return rc;
}

/* queue -> queue transfer under a QueueRunner with two threads and a Coordinator. */
static tfq_code scen_runner(tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_queue *src = NULL, *dst = NULL;
  tfq_transfer_op *op = NULL;
  tfq_runner *r = NULL;
  tfq_coord *c = NULL;
  tfq_tuple *b = NULL, *got = NULL;
  tfq_tensor *t = NULL;
  tfq_code rc;
  int64_t n = 20, total = 0;
  CK(tfq_spec_new(&spec, st));
  CK(tfq_spec_add(spec, TFQ_INT32, NULL, 0, NULL, st));
  CK(tfq_fifo_queue_new(spec, -1, "src", &src, st));
  CK(tfq_fifo_queue_new(spec, 4, "dst", &dst, st));
  CK(tfq_tuple_new(1, &b, st));
  CK(tfq_tensor_new(TFQ_INT32, &n, 1, &t, st));
  tfq_tuple_set_take(b, 0, t);
  t = NULL;
  CK(tfq_queue_enqueue_many(src, b, NULL, TMO, st));
  CK(tfq_queue_close(src, 0, NULL, TMO, st));
  CK(tfq_transfer_op_new(src, dst, 3, &op, st));
  CK(tfq_runner_new(dst, &r, st));
  CK(tfq_runner_add_op(r, tfq_transfer_step, op, "a", st));
  CK(tfq_runner_add_op(r, tfq_transfer_step, op, "b", st));
  CK(tfq_coord_new(&c, st));
  rc = tfq_runner_start(r, c, 0, st);
  while (!rc) {
    rc = tfq_queue_dequeue_up_to(dst, 5, &got, tfq_coord_cancel(c), TMO, st);
    if (!rc) total += tfq_tensor_dim(tfq_tuple_get(got, 0), 0);
    tfq_tuple_free(got);
    got = NULL;
  }
  rc = finish(c, rc, TFQ_OUT_OF_RANGE, st);
  FAILIF(!rc && total != n, "transferred %lld of %lld", (long long)total, (long long)n);
out:
  tfq_runner_free(r);
  tfq_coord_free(c);
  tfq_transfer_op_free(op);
  tfq_tensor_free(t);
  tfq_tuple_free(b);
  tfq_queue_free(src);
  tfq_queue_free(dst);
  tfq_spec_free(spec);
  return rc;
}

/* A QueueRunner without a Coordinator, start waiting for the first runs, tfq_runner_join. */
static tfq_code scen_runner_nocoord(tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_queue *src = NULL, *dst = NULL;
  tfq_transfer_op *op = NULL;
  tfq_runner *r = NULL;
  tfq_tuple *b = NULL, *got = NULL;
  tfq_tensor *t = NULL;
  tfq_code rc;
  int64_t n = 7, total = 0;
  CK(tfq_spec_new(&spec, st));
  CK(tfq_spec_add(spec, TFQ_INT64, NULL, 0, NULL, st));
  CK(tfq_fifo_queue_new(spec, -1, "src", &src, st));
  CK(tfq_fifo_queue_new(spec, -1, "dst", &dst, st));
  CK(tfq_tuple_new(1, &b, st));
  CK(tfq_tensor_new(TFQ_INT64, &n, 1, &t, st));
  tfq_tuple_set_take(b, 0, t);
  t = NULL;
  CK(tfq_queue_enqueue_many(src, b, NULL, TMO, st));
  CK(tfq_queue_close(src, 0, NULL, TMO, st));
  CK(tfq_transfer_op_new(src, dst, 2, &op, st));
  CK(tfq_runner_new(dst, &r, st));
  CK(tfq_runner_add_op(r, tfq_transfer_step, op, NULL, st));
  tfq_runner_add_closed_code(r, TFQ_CANCELLED);
  rc = tfq_runner_start(r, NULL, TMO, st);
  tfq_code jrc = tfq_runner_join(r, g_js); /* the ops end on OUT_OF_RANGE and close dst */
  if (jrc) {
    rc = tfq_status_set(st, jrc, "runner: %s", tfq_status_message(g_js));
    goto out;
  }
  if (rc) goto out;
  while ((rc = tfq_queue_dequeue_up_to(dst, 5, &got, NULL, TMO, st)) == TFQ_OK) {
    total += tfq_tensor_dim(tfq_tuple_get(got, 0), 0);
    tfq_tuple_free(got);
    got = NULL;
  }
  if (rc != TFQ_OUT_OF_RANGE) goto out;
  rc = TFQ_OK;
  FAILIF(total != n, "transferred %lld of %lld", (long long)total, (long long)n);
out:
  tfq_runner_free(r);
  tfq_transfer_op_free(op);
  tfq_tensor_free(t);
  tfq_tuple_free(b);
  tfq_queue_free(src);
  tfq_queue_free(dst);
  tfq_spec_free(spec);
  return rc;
}

/* The seed pipeline: a filename producer op on one runner, two read -> decode_csv ->
 * enqueue_many ops on another, a shared RandomShuffleQueue, dequeue_up_to(2) to the end. */
static tfq_code scen_seed_pipeline(tfq_status *st) {
  tfq_spec *wspec = NULL, *spec = NULL;
  tfq_queue *work = NULL, *target = NULL;
  tfq_registry *reg = NULL;
  tfq_queue_options *qo = NULL;
  tfq_producer_options *po = NULL;
  tfq_producer *prod = NULL;
  tfq_tuple *files = NULL, *got = NULL;
  tfq_tensor *ft = NULL;
  tfq_reader_options *ro = NULL;
  tfq_reader *reader = NULL;
  tfq_csv_options *csv = NULL;
  tfq_read_decode_op *op = NULL;
  tfq_runner *r1 = NULL, *r2 = NULL;
  tfq_coord *c = NULL;
  tfq_code rc;
  int64_t total = 0;
  CK(tfq_spec_new(&wspec, st));
  CK(tfq_spec_add(wspec, TFQ_STRING, NULL, 0, NULL, st));
  CK(tfq_fifo_queue_new(wspec, 32, "input_producer", &work, st));
  CK(tfq_tuple_new(1, &files, st));
  const char *fn[] = {p_csv, p_csv2};
  CK(str_tensor(fn, 2, 1, &ft, st));
  tfq_tuple_set_take(files, 0, ft);
  ft = NULL;
  CK(tfq_producer_options_new(&po, st));
  tfq_producer_options_set_num_epochs(po, 1);
  tfq_producer_options_set_seed(po, 5);
  CK(tfq_producer_new(work, files, po, &prod, st));
  CK(tfq_registry_new(&reg, st));
  CK(tfq_spec_new(&spec, st));
  int64_t two = 2;
  CK(tfq_spec_add(spec, TFQ_FLOAT, &two, 1, "features", st));
  CK(tfq_spec_add(spec, TFQ_INT32, NULL, 0, "target", st));
  CK(tfq_queue_options_new(&qo, st));
  tfq_queue_options_set_capacity(qo, 10);
  tfq_queue_options_set_min_after_dequeue(qo, 2);
  CK(tfq_queue_options_set_shared_name(qo, "shared_instance_q", st));
  CK(tfq_queue_open(reg, TFQ_QUEUE_RANDOM_SHUFFLE, spec, qo, &target, st));
  CK(tfq_reader_options_new(&ro, st));
  tfq_reader_options_set_skip_header_lines(ro, 1);
  CK(tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &reader, st));
  CK(tfq_csv_options_new(&csv, st));
  CK(tfq_csv_options_add_default_float(csv, -1, st));
  CK(tfq_csv_options_add_default_float(csv, -1, st));
  CK(tfq_csv_options_add_default_int32(csv, -1, st));
  CK(tfq_csv_options_set_select_cols(csv, (const int64_t[]){0, 1, 2}, 3, st));
  CK(tfq_read_decode_op_new(reader, work, csv, 4, target, &op, st));
  CK(tfq_read_decode_op_add_component(op, (const size_t[]){0, 1}, 2, 1, st));
  CK(tfq_read_decode_op_add_component(op, (const size_t[]){2}, 1, 0, st));
  CK(tfq_runner_new(work, &r1, st));
  CK(tfq_runner_add_op(r1, tfq_producer_step, prod, "producer", st));
  CK(tfq_runner_new(target, &r2, st));
  CK(tfq_runner_add_op(r2, tfq_read_decode_step, op, "read0", st));
  CK(tfq_runner_add_op(r2, tfq_read_decode_step, op, "read1", st));
  CK(tfq_coord_new(&c, st));
  rc = tfq_runner_start(r1, c, 0, st);
  if (!rc) rc = tfq_runner_start(r2, c, 0, st);
  while (!rc) {
    rc = tfq_queue_dequeue_up_to(target, 2, &got, tfq_coord_cancel(c), TMO, st);
    if (!rc) total += tfq_tensor_dim(tfq_tuple_get(got, 0), 0);
    tfq_tuple_free(got);
    got = NULL;
  }
  rc = finish(c, rc, TFQ_OUT_OF_RANGE, st);
  FAILIF(!rc && total != 2 * CSV_LINES, "pipeline delivered %lld of %d lines", (long long)total,
         2 * CSV_LINES);
out:
  tfq_runner_free(r1);
  tfq_runner_free(r2);
  tfq_coord_free(c);
  tfq_read_decode_op_free(op);
  tfq_csv_options_free(csv);
  tfq_reader_free(reader);
  tfq_reader_options_free(ro);
  tfq_queue_options_free(qo);
  tfq_queue_free(target);
  tfq_registry_free(reg);
  tfq_spec_free(spec);
  tfq_producer_free(prod);
  tfq_producer_options_free(po);
  tfq_tensor_free(ft);
  tfq_tuple_free(files);
  tfq_queue_free(work);
  tfq_spec_free(wspec);
  return rc;
}

/* Drains `q` then joins the producer thread: the thread's error wins. */
static tfq_code drain_join(tfq_queue *q, tfq_producer_thread *th, int64_t expect, tfq_status *st) {
  tfq_code rc;
  tfq_tuple *t = NULL;
  int64_t got = 0;
  for (;;) {
    rc = tfq_queue_dequeue(q, &t, NULL, TMO, st);
    tfq_tuple_free(t);
    t = NULL;
    if (rc) break;
    got++;
  }
  if (rc != TFQ_OUT_OF_RANGE) tfq_producer_thread_stop(th);
  tfq_code jrc = tfq_producer_thread_join(th, g_js);
  if (jrc != TFQ_OK && !(jrc == TFQ_CANCELLED && rc != TFQ_OUT_OF_RANGE))
    return tfq_status_set(st, jrc, "%s", tfq_status_message(g_js));
  if (rc != TFQ_OUT_OF_RANGE) return rc;
  if (got != expect)
    return tfq_status_set(st, TFQ_INTERNAL, "producer delivered %lld, expected %lld",
                          (long long)got, (long long)expect);
  return TFQ_OK;
}

static tfq_code scen_producers(tfq_status *st) {
  tfq_producer_options *o = NULL;
  tfq_queue *q = NULL;
  tfq_producer_thread *th = NULL;
  tfq_tensor *s = NULL, *f = NULL;
  tfq_tuple *rows = NULL;
  tfq_code rc;
  CK(tfq_producer_options_new(&o, st));
  tfq_producer_options_set_num_epochs(o, 2);
  tfq_producer_options_set_seed(o, 7);
  tfq_producer_options_set_capacity(o, 4);
  const char *strs[] = {"a.csv", "b.csv", "c.csv"};
  CK(str_tensor(strs, 3, 1, &s, st));
  CK(tfq_string_input_producer(s, o, &q, &th, st));
  rc = drain_join(q, th, 6, st);
  tfq_queue_free(q);
  q = NULL;
  if (rc) goto out;
  CK(tfq_range_input_producer(5, o, &q, &th, st));
  rc = drain_join(q, th, 10, st);
  tfq_queue_free(q);
  q = NULL;
  if (rc) goto out;
  int64_t fd[2] = {3, 2};
  CK(f32_tensor(fd, 2, 0, &f, st));
  CK(tfq_tuple_new(2, &rows, st));
  tfq_tuple_set_take(rows, 0, tfq_tensor_ref(f));
  tfq_tuple_set_take(rows, 1, tfq_tensor_ref(s));
  CK(tfq_slice_input_producer(rows, o, &q, &th, st));
  rc = drain_join(q, th, 6, st);
  tfq_queue_free(q);
  q = NULL;
  if (rc) goto out;
  tfq_producer_options_set_shuffle(o, 0);
  CK(tfq_input_producer(rows, o, &q, &th, st));
  rc = drain_join(q, th, 6, st);
  tfq_queue_free(q);
  q = NULL;
out:
  tfq_queue_free(q);
  tfq_tuple_free(rows);
  tfq_tensor_free(f);
  tfq_tensor_free(s);
  tfq_producer_options_free(o);
  return rc;
}

/* Batchers: sources produce `limit` rows (one element, or batches of 3 with enqueue_many). */
typedef struct src_ctx {
  atomic_int next;
  int limit, many, pad;
} src_ctx;

static tfq_code source(void *vctx, tfq_tuple **out, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  src_ctx *c = vctx;
  int rows = c->many ? 3 : 1;
  int at = atomic_fetch_add(&c->next, rows);
  if (at >= c->limit) return tfq_status_set(st, TFQ_OUT_OF_RANGE, "source exhausted");
  if (at + rows > c->limit) rows = c->limit - at;
  tfq_tensor *x = NULL, *s = NULL;
  tfq_code rc;
  *out = NULL;
  CK(tfq_tuple_new(2, out, st));
  int64_t xd[2] = {rows, c->pad ? 1 + at % 3 : 2};
  CK(f32_tensor(c->many ? xd : xd + 1, c->many ? 2 : 1, (float)at, &x, st));
  int64_t sd = rows;
  CK(tfq_tensor_new(TFQ_STRING, &sd, c->many ? 1 : 0, &s, st));
  CK(tfq_tensor_set_string(s, 0, "row", 3, st));
  tfq_tuple_set_take(*out, 0, x);
  tfq_tuple_set_take(*out, 1, s);
  x = s = NULL;
out:
  tfq_tensor_free(x);
  tfq_tensor_free(s);
  if (rc) {
    tfq_tuple_free(*out);
    *out = NULL;
  }
  return rc;
}

/* Keeps the even rows of each source batch: 2 + 2 + 2 + 1 of the 10 rows. */
static int keep_even(void *ctx, const tfq_tuple *elem, int64_t row) {
  (void)ctx;
  (void)elem;
  return row % 2 == 0;
}

static tfq_code run_batcher(tfq_batcher_kind kind, int many, int pad, int keep, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_batch_options *o = NULL;
  tfq_coord *c = NULL;
  tfq_batcher *b = NULL;
  tfq_tuple *got = NULL;
  tfq_code rc;
  int join = kind == TFQ_BATCHER_BATCH_JOIN || kind == TFQ_BATCHER_SHUFFLE_BATCH_JOIN;
  src_ctx ctx[2];
  for (int i = 0; i < 2; i++) {
    atomic_init(&ctx[i].next, 0);
    ctx[i].limit = 10;
    ctx[i].many = many;
    ctx[i].pad = pad;
  }
  tfq_source_fn fns[2] = {source, source};
  void *ctxs[2] = {&ctx[0], &ctx[1]};
  int64_t total = 0;
  CK(tfq_spec_new(&spec, st));
  int64_t xd = pad ? TFQ_UNKNOWN_DIM : 2;
  CK(tfq_spec_add(spec, TFQ_FLOAT, &xd, 1, "x", st));
  CK(tfq_spec_add(spec, TFQ_STRING, NULL, 0, "s", st));
  CK(tfq_batch_options_new(&o, st));
  tfq_batch_options_set_num_threads(o, 2);
  tfq_batch_options_set_capacity(o, 16);
  tfq_batch_options_set_min_after_dequeue(o, kind == TFQ_BATCHER_SHUFFLE_BATCH ? 2 : 0);
  tfq_batch_options_set_seeds(o, 3, 4);
  tfq_batch_options_set_enqueue_many(o, many);
  tfq_batch_options_set_dynamic_pad(o, pad);
  tfq_batch_options_set_allow_smaller_final_batch(o, 1);
  if (keep) { /* maybe_batch, through the process-wide registry */
    tfq_batch_options_set_keep(o, keep_even, NULL);
    CK(tfq_batch_options_set_shared_name(o, "maybe_batch_q", st));
  }
  CK(tfq_coord_new(&c, st));
  rc = tfq_batcher_new(kind, spec, 4, fns, ctxs, join ? 2 : 1, o, c, &b, st);
  while (!rc) {
    rc = tfq_batcher_next(b, &got, st);
    if (!rc) total += tfq_tensor_dim(tfq_tuple_get(got, 0), 0);
    tfq_tuple_free(got);
    got = NULL;
  }
  rc = finish(c, rc, TFQ_OUT_OF_RANGE, st);
  FAILIF(!rc && total != (keep ? 7 : join ? 20 : 10), "batched %lld rows", (long long)total);
out:
  if (keep) tfq_registry_clear(NULL, NULL);
  tfq_batcher_free(b);
  tfq_coord_free(c);
  tfq_batch_options_free(o);
  tfq_spec_free(spec);
  return rc;
}

static tfq_code scen_batch(tfq_status *st) { return run_batcher(TFQ_BATCHER_BATCH, 0, 0, 0, st); }
static tfq_code scen_batch_pad_many(tfq_status *st) {
  return run_batcher(TFQ_BATCHER_BATCH, 1, 1, 0, st);
}
static tfq_code scen_maybe_batch(tfq_status *st) {
  return run_batcher(TFQ_BATCHER_BATCH, 1, 0, 1, st);
}
static tfq_code scen_shuffle_batch(tfq_status *st) {
  return run_batcher(TFQ_BATCHER_SHUFFLE_BATCH, 0, 0, 0, st);
}
static tfq_code scen_batch_join(tfq_status *st) {
  return run_batcher(TFQ_BATCHER_BATCH_JOIN, 1, 0, 0, st);
}
static tfq_code scen_shuffle_batch_join(tfq_status *st) {
  return run_batcher(TFQ_BATCHER_SHUFFLE_BATCH_JOIN, 0, 0, 0, st);
}

/* ---- tfq_pipeline: inference, decode, shuffle, save, restore, next_into ---------------------- */

static tfq_code run_pipeline(int threads, tfq_status *st) {
  tfq_pipeline_options *o = NULL;
  tfq_pipeline *p = NULL, *q = NULL;
  tfq_tuple *b = NULL, *t = NULL;
  char *state = NULL;
  size_t len = 0;
  tfq_code rc = tfq_pipeline_options_new(&o, st);
  if (!rc) rc = tfq_pipeline_options_add_file(o, p_csv, st);
  if (!rc) rc = tfq_pipeline_options_add_file(o, p_csv_gz, st);
  if (!rc) { /* no columns: inferred from the header and the first records */
    tfq_pipeline_options_set_header(o, 1);
    tfq_pipeline_options_set_deterministic(o, 1);
    tfq_pipeline_options_set_seed(o, 5);
    tfq_pipeline_options_set_capacity(o, 12);
    tfq_pipeline_options_set_min_after_dequeue(o, 4);
    tfq_pipeline_options_set_batch_size(o, 4);
    tfq_pipeline_options_set_num_threads(o, threads);
    tfq_pipeline_options_set_step(o, 5);
    tfq_pipeline_options_set_num_epochs(o, 2);
    rc = tfq_pipeline_new(o, &p, st);
  }
  for (int i = 0; !rc && i < 3; i++) {
    rc = tfq_pipeline_next(p, &b, st);
    tfq_tuple_free(b);
    b = NULL;
  }
  if (!rc) rc = tfq_pipeline_save(p, &state, &len, st);
  if (!rc) rc = tfq_pipeline_new(o, &q, st);
  if (!rc) rc = tfq_pipeline_restore(q, state, len, st);
  if (!rc) rc = tfq_tuple_new(tfq_pipeline_num_slots(q), &t, st);
  while (!rc) rc = tfq_pipeline_next_into(q, t, st);
  if (rc == TFQ_OUT_OF_RANGE) rc = TFQ_OK;
  tfq_tuple_free(t);
  tfq_free(state);
  tfq_pipeline_free(q);
  tfq_pipeline_free(p);
  tfq_pipeline_options_free(o);
  return rc;
}
static tfq_code scen_pipeline(tfq_status *st) { return run_pipeline(0, st); }
static tfq_code scen_pipeline_threads(tfq_status *st) { return run_pipeline(2, st); }

/* ---- the sweep --------------------------------------------------------------------------------
 */

typedef struct scenario {
  const char *name, *what;
  tfq_code (*fn)(tfq_status *);
  int threaded; /* swept THREADED_REPS times: allocation order varies between runs */
} scenario;

#define THREADED_REPS 5

static const scenario scenarios[] = {
    {"tensors", "tensors, tuples, specs, wrap, status, cancel", scen_tensors, 0},
    {"queue_ctors", "the four queue kinds with options, shared-name registry open",
     scen_queue_ctors, 0},
    {"ops_fifo", "FIFOQueue enqueue(_many), dequeue(_into/_many/_up_to)", scen_ops_fifo, 0},
    {"ops_shuffle", "RandomShuffleQueue enqueue(_many), dequeue(_into/_many/_up_to)",
     scen_ops_shuffle, 0},
    {"ops_padding", "PaddingFIFOQueue enqueue(_many), dequeue(_into/_many/_up_to)",
     scen_ops_padding, 0},
    {"ops_priority", "PriorityQueue enqueue(_many), dequeue(_into/_many/_up_to)", scen_ops_priority,
     0},
    {"blocking_fifo", "FIFOQueue blocked enqueue_many and waiting dequeue_many, threads",
     scen_blocking_fifo, 1},
    {"blocking_padding", "PaddingFIFOQueue blocked enqueue_many, waiting dequeue_many",
     scen_blocking_padding, 1},
    {"textline", "TextLineReader open/read/read_up_to", scen_textline, 0},
    {"textline_gzip", "TextLineReader GZIP inflate", scen_textline_gzip, 0},
    {"tfrecord", "TFRecordReader", scen_tfrecord, 0},
    {"tfrecord_zlib", "TFRecordReader ZLIB inflate", scen_tfrecord_zlib, 0},
    {"tfrecord_gzip", "TFRecordReader GZIP inflate", scen_tfrecord_gzip, 0},
    {"tfrecord_writer", "TFRecord writer NONE/ZLIB/GZIP", scen_tfrecord_writer, 0},
    {"fixedlen", "FixedLengthRecordReader", scen_fixedlen, 0},
    {"fixedlen_gzip", "FixedLengthRecordReader GZIP inflate", scen_fixedlen_gzip, 0},
    {"wholefile_identity", "WholeFile and Identity readers, state save/restore",
     scen_wholefile_identity, 0},
    {"csv_fast", "decode_csv options and the quote-free fast path", scen_csv_fast, 0},
    {"csv_libcsv", "decode_csv on the libcsv path (quoted fields)", scen_csv_libcsv, 0},
    {"example", "Example parsing with every feature kind, both paths; decode_raw", scen_example, 0},
    {"coord", "Coordinator threads and LooperThread", scen_coord, 1},
    {"runner", "QueueRunner with a transfer op", scen_runner, 1},
    {"runner_nocoord", "QueueRunner without a Coordinator, wait for first runs",
     scen_runner_nocoord, 1},
    {"seed_pipeline", "producer op, read_decode ops, shared RandomShuffleQueue", scen_seed_pipeline,
     1},
    {"producers", "string/range/slice/input producers", scen_producers, 1},
    {"batch", "tf.train.batch", scen_batch, 1},
    {"batch_pad_many", "tf.train.batch dynamic_pad enqueue_many", scen_batch_pad_many, 1},
    {"maybe_batch", "maybe_batch: keep filter, enqueue_many, shared name", scen_maybe_batch, 1},
    {"shuffle_batch", "tf.train.shuffle_batch", scen_shuffle_batch, 1},
    {"batch_join", "tf.train.batch_join enqueue_many", scen_batch_join, 1},
    {"shuffle_batch_join", "tf.train.shuffle_batch_join", scen_shuffle_batch_join, 1},
    {"pipeline",
     "tfq_pipeline: inferred CSV columns, plain and gzip, deterministic shuffle, save, "
     "restore, next_into",
     scen_pipeline, 0},
    {"pipeline_threads", "tfq_pipeline with 2 reader threads", scen_pipeline_threads, 1},
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

static const char *volatile g_cur_name = "";
static volatile long g_cur_k;

static void on_alarm(int sig) {
  (void)sig;
  char msg[256];
  int n = snprintf(msg, sizeof msg, "Bail out! scenario %s hung with allocation %ld failing\n",
                   g_cur_name, g_cur_k);
  if (n > 0) (void)!write(1, msg, (size_t)n);
  _exit(1);
}

typedef struct run_result {
  tfq_code code;
  long allocs;
  long leaked;
  int injected;
  char msg[512];
} run_result;

static run_result run_once(const scenario *s, long k) {
  run_result r;
  tfq_status *st = tfq_status_new();
  if (!st) abort();
  g_cur_name = s->name;
  g_cur_k = k;
  long live0 = atomic_load(&g_live);
  atomic_store(&g_count, 0);
  atomic_store(&g_fail_at, k);
  g_last_site = 0;
  alarm(30);
  atomic_store(&g_armed, 1);
  r.code = s->fn(st);
  atomic_store(&g_armed, 0);
  alarm(0);
  r.allocs = atomic_load(&g_count);
  r.injected = k > 0 && r.allocs >= k;
  r.leaked = atomic_load(&g_live) - live0;
  snprintf(r.msg, sizeof r.msg, "%s", tfq_status_message(st));
  if (r.injected && g_last_site) note_site(g_last_site);
  tfq_status_free(st);
  return r;
}

/* 0 if the outcome is acceptable, else prints a diagnostic. */
static int judge(const scenario *s, long k, const run_result *r) {
  if (r->leaked) {
    printf("#   %s k=%ld: %ld allocation(s) not freed (code %s: %s)\n", s->name, k, r->leaked,
           tfq_code_name(r->code), r->msg);
    return 1;
  }
  if (r->code == TFQ_OK) return 0;
  if (r->code == TFQ_RESOURCE_EXHAUSTED && r->injected) {
    if (r->msg[0]) return 0;
    printf("#   %s k=%ld: RESOURCE_EXHAUSTED without a message\n", s->name, k);
    return 1;
  }
  printf("#   %s k=%ld: %s: %s%s\n", s->name, k, tfq_code_name(r->code), r->msg,
         r->injected ? "" : " (no allocation was failed)");
  return 1;
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
    printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
    exit(1);
  }
}

static void write_gz(const char *path, const void *data, size_t len) {
  gzFile g = gzopen(path, "wb");
  if (!g || gzwrite(g, data, (unsigned)len) != (int)len || gzclose(g) != Z_OK) {
    printf("Bail out! cannot write %s\n", path);
    exit(1);
  }
}

static void make_files(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/tfq_alloc_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_dir)) {
    printf("Bail out! mkdtemp: %s\n", strerror(errno));
    exit(1);
  }
  snprintf(p_csv, sizeof p_csv, "%s/a.csv", g_dir);
  snprintf(p_csv2, sizeof p_csv2, "%s/b.csv", g_dir);
  snprintf(p_csv_gz, sizeof p_csv_gz, "%s/a.csv.gz", g_dir);
  snprintf(p_fixed, sizeof p_fixed, "%s/f.bin", g_dir);
  snprintf(p_fixed_gz, sizeof p_fixed_gz, "%s/f.bin.gz", g_dir);
  snprintf(p_wout, sizeof p_wout, "%s/out.tfrecord", g_dir);
  snprintf(p_missing, sizeof p_missing, "%s/no_such_file.csv", g_dir);
  for (int c = 0; c < 3; c++) snprintf(p_rec[c], sizeof p_rec[c], "%s/r%d.tfrecord", g_dir, c);
  char csv[4096];
  size_t n = (size_t)snprintf(csv, sizeof csv, "x1,x2,y\n");
  for (int i = 0; i < CSV_LINES; i++) {
    if (i == 5) /* a line longer than the 64-byte read buffer */
      n += (size_t)snprintf(csv + n, sizeof csv - n,
                            "%d.000000000000000000000000000000000000000000000000000000000000000000"
                            "0000000000000000000000000,%d.5,%d\n",
                            i, i, i);
    else
      n += (size_t)snprintf(csv + n, sizeof csv - n, "%d.25,%d.5,%d%s\n", i, i, i,
                            i % 4 == 3 ? "\r" : "");
  }
  write_file(p_csv, csv, n);
  write_file(p_csv2, csv, n);
  write_gz(p_csv_gz, csv, n);
  unsigned char fx[4 + 5 * 6 + 2];
  for (size_t i = 0; i < sizeof fx; i++) fx[i] = (unsigned char)(i * 7);
  write_file(p_fixed, fx, sizeof fx);
  write_gz(p_fixed_gz, fx, sizeof fx);
  for (int c = 0; c < 3; c++) {
    tfq_code rc = write_records(p_rec[c], (tfq_compression)c, NULL);
    if (rc) {
      printf("Bail out! cannot write %s: %s\n", p_rec[c], tfq_code_name(rc));
      exit(1);
    }
  }
}

static void remove_files(void) {
  const char *ps[] = {p_csv,  p_csv2,   p_csv_gz, p_fixed, p_fixed_gz,
                      p_wout, p_rec[0], p_rec[1], p_rec[2]};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) unlink(ps[i]);
  rmdir(g_dir);
}

int main(int argc, char **argv) {
  const char *only = NULL;
  long only_k = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--list")) {
      for (size_t s = 0; s < NSCEN; s++) printf("%s\t%s\n", scenarios[s].name, scenarios[s].what);
      return 0;
    } else if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
      only = argv[++i];
    } else if (!strcmp(argv[i], "--stack")) {
      g_print_stack = 1;
    } else if (!strcmp(argv[i], "--k") && i + 1 < argc) {
      only_k = atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--list] [--scenario NAME [--k K [--stack]]]\n", argv[0]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGALRM, on_alarm);
  {
    void *fr[2];
    (void)backtrace(fr, 2); /* loads libgcc_s before any counting */
  }
  if (tfq_set_allocator(hook_malloc, hook_realloc, hook_free) != TFQ_OK) {
    printf("Bail out! tfq_set_allocator failed\n");
    return 1;
  }
  make_files();
  if (!(g_js = tfq_status_new())) {
    printf("Bail out! tfq_status_new failed\n");
    return 1;
  }
  size_t nrun = 0;
  for (size_t s = 0; s < NSCEN; s++)
    if (!only || !strcmp(only, scenarios[s].name)) nrun++;
  if (nrun == 0) {
    printf("Bail out! no scenario named %s\n", only);
    return 1;
  }
  printf("1..%zu\n", nrun);
  int failed = 0;
  long total_k = 0, total_re = 0;
  size_t num = 0;
  for (size_t s = 0; s < NSCEN; s++) {
    const scenario *sc = &scenarios[s];
    if (only && strcmp(only, sc->name)) continue;
    num++;
    int bad = 0;
    size_t sites0 = g_nsites;
    run_result clean = run_once(sc, 0);
    if (clean.code != TFQ_OK || clean.leaked) {
      printf("#   %s: the run without failures gave %s (%s), %ld leaked\n", sc->name,
             tfq_code_name(clean.code), clean.msg, clean.leaked);
      bad = 1;
    }
    long n = clean.allocs, re = 0, absorbed = 0, nerr = 0, k = 0, runs = 0;
    if (only_k >= 0) {
      run_result r = run_once(sc, only_k);
      bad |= judge(sc, only_k, &r);
      printf("#   %s k=%ld: %s %s (%ld allocations)\n", sc->name, only_k, tfq_code_name(r.code),
             r.msg, r.allocs);
      k = only_k;
      runs = 1;
    } else {
      /* k = 1 .. until a run makes fewer than k allocations (N + 1 when deterministic). */
      int reps = sc->threaded ? THREADED_REPS : 1;
      for (int rep = 0; rep < reps && nerr <= 20; rep++) {
        for (k = 1; k <= 4 * n + 64; k++) {
          run_result r = run_once(sc, k);
          runs++;
          if (!r.injected) {
            if (judge(sc, k, &r)) bad = 1;
            break;
          }
          if (judge(sc, k, &r)) {
            bad = 1;
            if (++nerr > 20) break; /* enough diagnostics */
          }
          if (r.code == TFQ_RESOURCE_EXHAUSTED)
            re++;
          else if (r.code == TFQ_OK && absorbed++ < 8)
            printf("#   %s k=%ld: the failure was absorbed (the run succeeded)\n", sc->name, k);
        }
      }
    }
    total_k += runs;
    total_re += re;
    printf(
        "%s %zu - %s: each failing allocation gives RESOURCE_EXHAUSTED with a message or "
        "success, no leak (N=%ld, %ld runs up to k=%ld, %ld RESOURCE_EXHAUSTED, %ld absorbed, "
        "%zu new paths)\n",
        bad ? "not ok" : "ok", num, sc->name, n, runs, k, re, absorbed, g_nsites - sites0);
    failed |= bad;
  }
  printf(
      "# %ld failing-allocation runs, %ld RESOURCE_EXHAUSTED, %zu distinct allocation call "
      "paths failed (4 return addresses above the hook)\n",
      total_k, total_re, g_nsites);
  tfq_status_free(g_js);
  if (tfq_set_allocator(NULL, NULL, NULL) != TFQ_OK) failed = 1;
  remove_files();
  return failed;
}
