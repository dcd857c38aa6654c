/* conformance_coord: the tfq half of the coordination-layer families (coord_conformance.py
 * generates the scenarios and runs the same ones through TF).  Public headers only.
 *
 * Tokens: conformance_io.h.  Output lines: "<tag> <id> <result>", one per step, in step order.
 *
 * Commands:
 *   cbegin <id> <clean codes "a,b" or ->   a Coordinator script (tag X), then "cop ..." lines:
 *     stop <code> <xmsg> | should | wait <us> | clear | joined | error | join <grace_us> <ignore>
 *     | thread <name> poll | thread <name> stopper <delay_ms> <code> <xmsg>
 *     | thread <name> sleeper <ms> | looper <name> <interval_us> <n> <code> <xmsg>
 *     | count <name> | sleep <ms>
 *   cend
 *   runner <id> <variant>                   a QueueRunner scenario (tag Y): close_at_end,
 *                                           cancel_on_stop, failing_op, failing_op_nocoord,
 *                                           stopped_before_start
 *   batcher ... / producer ...              conformance_batch.c (tags B, P)
 *
 * Threads that outlive their scenario (stragglers on purpose) only sleep; every coordinator is
 * freed at the end, after all the driver's threads have ended. */
#include "conformance_coord.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/coord.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>
#include <time.h>

#include "conformance_io.h"

static atomic_int g_live; /* driver threads still running */

void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void wait_size(tfq_queue *q, int64_t n, int64_t ms) {
  for (int64_t i = 0; i < ms && tfq_queue_size(q) < n; i++) sleep_ms(1);
}

int wait_closed(tfq_queue *q, int64_t ms) {
  for (int64_t i = 0; i < ms && !tfq_queue_is_closed(q); i++) sleep_ms(1);
  return tfq_queue_is_closed(q);
}

tfq_spec *parse_spec(const char *comps_tok, tfq_status *st) {
  tfq_spec *spec;
  if (tfq_spec_new(&spec, st) != TFQ_OK) die("spec_new");
  char buf[MAX_TOK];
  snprintf(buf, sizeof buf, "%s", comps_tok); /* "int32/_;string/2x?" */
  char *save = NULL;
  for (char *c = strtok_r(buf, ";", &save); c; c = strtok_r(NULL, ";", &save)) {
    const char *sl = strchr(c, '/');
    if (!sl) die("bad component token");
    int64_t dims[TFQ_MAX_RANK];
    int rank = parse_dims(sl + 1, strlen(sl + 1), dims);
    if (tfq_spec_add(spec, parse_dtype(c, (size_t)(sl - c)), dims, rank, NULL, st) != TFQ_OK)
      die("spec_add");
  }
  return spec;
}

tfq_queue *make_queue(tfq_queue_kind kind, const char *comps_tok, int64_t cap, const char *name,
                      int shared, tfq_status *st) {
  tfq_spec *spec = parse_spec(comps_tok, st);
  tfq_queue_options *o;
  if (tfq_queue_options_new(&o, st) != TFQ_OK) die("queue_options_new");
  tfq_queue_options_set_capacity(o, cap);
  tfq_code c = shared ? tfq_queue_options_set_shared_name(o, name, st)
                      : tfq_queue_options_set_name(o, name, st);
  if (c != TFQ_OK) die("queue name");
  tfq_queue *q = NULL;
  if (tfq_queue_new(kind, spec, o, &q, st) != TFQ_OK) die(tfq_status_message(st));
  tfq_queue_options_free(o);
  tfq_spec_free(spec);
  return q;
}

void print_result(const char *tag, const char *id, tfq_code c, const tfq_tuple *out,
                  tfq_status *st) {
  printf("%s %s ", tag, id);
  if (c != TFQ_OK) {
    print_err(stdout, st);
  } else {
    printf("OK");
    if (out) print_tuple(stdout, out);
  }
  putchar('\n');
}

/* ---- Coordinator scripts ----------------------------------------------------------------- */

typedef struct cthread {
  tfq_coord *c;
  int kind; /* 0 poll, 1 stopper, 2 sleeper, 3 looper */
  int64_t ms, n, count;
  tfq_code code;
  char name[64], msg[512];
  struct cthread *next;
} cthread;

static cthread *g_threads; /* every thread context, freed at the end */
#define MAX_COORDS 256
static tfq_coord *g_coords[MAX_COORDS];
static int g_ncoords;

static void *thread_main(void *p) {
  cthread *t = p;
  if (t->kind == 0) {
    while (!tfq_coord_should_stop(t->c)) sleep_ms(1);
  } else if (t->kind == 1) {
    sleep_ms(t->ms);
    tfq_code c = tfq_coord_request_stop(t->c, t->code, t->code ? t->msg : NULL);
    (void)c; /* TF: the thread's request_stop cannot raise before join */
  } else {
    sleep_ms(t->ms);
  }
  atomic_fetch_sub(&g_live, 1);
  return NULL;
}

/* LooperThread target: counts; at call n stops cleanly (code 0) or fails with the error. */
static tfq_code looper_fn(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  cthread *t = ctx;
  if (++t->count == t->n) {
    if (t->code != TFQ_OK) return tfq_status_set(st, t->code, "%s", t->msg);
    if (tfq_coord_request_stop(t->c, TFQ_OK, NULL) != TFQ_OK) die("looper stop");
  }
  return TFQ_OK;
}

static void set_msg(char *dst, size_t cap, const char *xhex) {
  size_t l;
  char *m = unhex(xhex, &l);
  snprintf(dst, cap, "%s", m);
  free(m);
}

static void cop(tfq_coord *c, const char *id, char **tok) {
  const char *op = tok[1];
  tfq_status *st = tfq_status_new();
  printf("X %s ", id);
  if (strcmp(op, "stop") == 0) {
    char msg[512];
    set_msg(msg, sizeof msg, tok[3]);
    tfq_code code = (tfq_code)atoi(tok[2]);
    tfq_code r = tfq_coord_request_stop(c, code, code ? msg : NULL);
    if (r != TFQ_OK) {
      printf("ERR %d ", (int)r);
      puthex(stdout, msg, strlen(msg));
    } else {
      printf("OK");
    }
  } else if (strcmp(op, "should") == 0) {
    printf("B %d", tfq_coord_should_stop(c) != 0);
  } else if (strcmp(op, "wait") == 0) {
    printf("B %d", tfq_coord_wait_for_stop(c, strtoll(tok[2], NULL, 10)) != 0);
  } else if (strcmp(op, "clear") == 0) {
    tfq_coord_clear_stop(c);
    printf("OK");
  } else if (strcmp(op, "joined") == 0) {
    printf("B %d", tfq_coord_joined(c) != 0);
  } else if (strcmp(op, "error") == 0 || strcmp(op, "join") == 0) {
    tfq_code r = op[1] == 'r' ? tfq_coord_error(c, st)
                              : tfq_coord_join(c, strtoll(tok[2], NULL, 10), atoi(tok[3]), st);
    if (r != TFQ_OK)
      print_err(stdout, st);
    else
      printf("OK");
  } else if (strcmp(op, "thread") == 0 || strcmp(op, "looper") == 0) {
    cthread *t = calloc(1, sizeof *t);
    if (!t) die("oom");
    t->c = c;
    t->next = g_threads;
    g_threads = t;
    snprintf(t->name, sizeof t->name, "%s", tok[2]);
    tfq_code r;
    if (op[0] == 'l') {
      t->kind = 3;
      t->n = strtoll(tok[4], NULL, 10);
      t->code = (tfq_code)atoi(tok[5]);
      set_msg(t->msg, sizeof t->msg, tok[6]);
      r = tfq_coord_loop(c, strtoll(tok[3], NULL, 10), looper_fn, t, t->name, st);
    } else {
      const char *kind = tok[3];
      t->kind = strcmp(kind, "poll") == 0 ? 0 : strcmp(kind, "stopper") == 0 ? 1 : 2;
      if (t->kind) t->ms = strtoll(tok[4], NULL, 10);
      if (t->kind == 1) {
        t->code = (tfq_code)atoi(tok[5]);
        set_msg(t->msg, sizeof t->msg, tok[6]);
      }
      atomic_fetch_add(&g_live, 1);
      r = tfq_coord_start_thread(c, t->name, thread_main, t, st);
      if (r != TFQ_OK) atomic_fetch_sub(&g_live, 1);
    }
    if (r != TFQ_OK)
      print_err(stdout, st);
    else
      printf("OK");
  } else if (strcmp(op, "count") == 0) {
    int64_t v = -1;
    for (cthread *t = g_threads; t; t = t->next)
      if (t->c == c && strcmp(t->name, tok[2]) == 0) v = t->count;
    printf("COUNT %lld", (long long)v);
  } else if (strcmp(op, "sleep") == 0) {
    sleep_ms(strtoll(tok[2], NULL, 10));
    printf("OK");
  } else {
    die("bad cop");
  }
  putchar('\n');
  fflush(stdout);
  tfq_status_free(st);
}

static void coord_script(FILE *in, char **tok) {
  char id[64];
  snprintf(id, sizeof id, "%s", tok[1]);
  tfq_coord *c;
  if (tfq_coord_new(&c, NULL) != TFQ_OK) die("coord_new");
  if (g_ncoords == MAX_COORDS) die("too many coordinators");
  g_coords[g_ncoords++] = c;
  if (strcmp(tok[2], "-") != 0) {
    char *save = NULL;
    for (char *p = strtok_r(tok[2], ",", &save); p; p = strtok_r(NULL, ",", &save))
      tfq_coord_add_clean_code(c, (tfq_code)atoi(p));
  }
  static char *t[64];
  char *line;
  while ((line = read_line(in)) != NULL) {
    int n = split(line, t, 64);
    if (n == 0) continue;
    if (strcmp(t[0], "cend") == 0) return;
    cop(c, id, t);
  }
  die("cbegin without cend");
}

/* ---- QueueRunner scenarios ------------------------------------------------------------------ */

typedef struct move_op { /* dequeue from src, enqueue into dst (dst only: a constant 7) */
  tfq_queue *src, *dst;
} move_op;

static tfq_code move_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  move_op *m = ctx;
  tfq_tuple *t = NULL;
  tfq_code c;
  if (m->src) {
    c = tfq_queue_dequeue(m->src, &t, cancel, TFQ_NO_TIMEOUT, st);
  } else {
    tfq_tensor *x;
    c = tfq_tensor_new(TFQ_INT32, NULL, 0, &x, st);
    if (c == TFQ_OK) {
      *(int32_t *)tfq_tensor_data(x) = 7;
      c = tfq_tuple_new(1, &t, st);
      if (c == TFQ_OK)
        tfq_tuple_set_take(t, 0, x);
      else
        tfq_tensor_free(x);
    }
  }
  if (c == TFQ_OK) c = tfq_queue_enqueue(m->dst, t, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(t);
  return c;
}

/* One step of a runner scenario on queue q: prints "Y <id> <result>". */
static void rdeq(const char *id, tfq_queue *q, int64_t timeout_us) {
  tfq_status *st = tfq_status_new();
  tfq_tuple *out = NULL;
  tfq_code c = tfq_queue_dequeue(q, &out, NULL, timeout_us, st);
  print_result("Y", id, c, out, st);
  tfq_tuple_free(out);
  tfq_status_free(st);
}

static void rput(const char *id, tfq_queue *q, const char *tensor_tok, int many, int close) {
  tfq_status *st = tfq_status_new();
  tfq_code c = TFQ_OK;
  if (tensor_tok) {
    tfq_tuple *t;
    if (tfq_tuple_new(1, &t, st) != TFQ_OK) die("tuple");
    tfq_tuple_set_take(t, 0, parse_tensor(tensor_tok));
    c = many ? tfq_queue_enqueue_many(q, t, NULL, 1000000, st)
             : tfq_queue_enqueue(q, t, NULL, 1000000, st);
    tfq_tuple_free(t);
  }
  if (c == TFQ_OK && close) c = tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st);
  print_result("Y", id, c, NULL, st);
  tfq_status_free(st);
}

static void wait_running(tfq_runner *r, int n) {
  for (int i = 0; i < 10000 && tfq_runner_running(r) > n; i++) sleep_ms(1);
}

static void runner_cmd(char **tok) {
  const char *id = tok[1], *v = tok[2];
  int nocoord = strcmp(v, "failing_op_nocoord") == 0;
  int failing = strncmp(v, "failing_op", 10) == 0, at_end = strcmp(v, "close_at_end") == 0;
  int on_stop = strcmp(v, "cancel_on_stop") == 0, before = strcmp(v, "stopped_before_start") == 0;
  tfq_status *st = tfq_status_new();
  char name[64];
  snprintf(name, sizeof name, "rq_%s", id);
  tfq_queue *q1 =
      make_queue(TFQ_QUEUE_FIFO, failing ? "int32/2" : "int32/_", on_stop ? 2 : 10, name, 1, st);
  tfq_queue *qa = make_queue(TFQ_QUEUE_FIFO, failing ? "int32/*" : "int32/_", -1, "qa", 0, st);
  tfq_queue *qb = make_queue(TFQ_QUEUE_FIFO, failing ? "int32/2" : "int32/_", -1, "qb", 0, st);
  move_op ops[2] = {{on_stop || before ? NULL : qa, q1}, {qb, q1}};
  tfq_coord *coord = NULL;
  if (!nocoord && (tfq_coord_new(&coord, st) != TFQ_OK)) die("coord");
  tfq_runner *r;
  if (tfq_runner_new(q1, &r, st) != TFQ_OK) die("runner");
  for (int i = 0; i < (on_stop || before ? 1 : 2); i++)
    if (tfq_runner_add_op(r, move_step, &ops[i], i ? "B" : "A", st) != TFQ_OK) die("add_op");
  if (at_end) rput(id, qa, "int32/3/1,2,3", 1, 1);
  if (before) print_result("Y", id, tfq_coord_request_stop(coord, TFQ_OK, NULL), NULL, st);
  print_result("Y", id, tfq_runner_start(r, coord, 0, st), NULL, st);
  if (at_end) {
    wait_running(r, 1); /* A has ended (qa drained), B waits on qb */
    printf("Y %s SIZE %lld\nY %s B %d\n", id, (long long)tfq_queue_size(q1), id,
           tfq_queue_is_closed(q1));
    for (int i = 0; i < 3; i++) rdeq(id, q1, 10000000);
    rdeq(id, q1, 100000); /* open and empty: times out */
    rput(id, qb, "int32/2/4,5", 1, 1);
    printf("Y %s B %d\n", id, wait_closed(q1, 10000));
    printf("Y %s SIZE %lld\n", id, (long long)tfq_queue_size(q1));
  } else if (on_stop) {
    wait_size(q1, 2, 10000);
    sleep_ms(50);
    printf("Y %s SIZE %lld\n", id, (long long)tfq_queue_size(q1));
  } else if (failing) {
    rput(id, qb, "int32/3x2/1,2,3,4,5,6", 1, 0);
    wait_size(q1, 3, 10000);
    printf("Y %s SIZE %lld\n", id, (long long)tfq_queue_size(q1));
    rput(id, qa, "int32/3/7,8,9", 0, 0); /* a [3] element for a [2] queue: A fails */
    if (nocoord) {
      wait_running(r, 1);
      printf("Y %s COUNT %d\n", id, tfq_runner_num_errors(r));
      rput(id, qb, "int32/2x2/10,11,12,13", 1, 0); /* B goes on */
      wait_size(q1, 5, 10000);
      printf("Y %s SIZE %lld\nY %s B %d\n", id, (long long)tfq_queue_size(q1), id,
             tfq_queue_is_closed(q1));
      rput(id, qb, NULL, 0, 1);
      printf("Y %s B %d\n", id, wait_closed(q1, 10000));
    } else {
      printf("Y %s B %d\n", id, tfq_coord_wait_for_stop(coord, 10000000) != 0);
    }
  }
  if (nocoord) {
    print_result("Y", id, tfq_runner_join(r, st), NULL, st);
  } else {
    print_result("Y", id, tfq_coord_request_stop(coord, TFQ_OK, NULL), NULL, st);
    print_result("Y", id, tfq_coord_join(coord, failing ? 200000 : 10000000, 0, st), NULL, st);
    printf("Y %s B %d\nY %s SIZE %lld\n", id, wait_closed(q1, 2000), id,
           (long long)tfq_queue_size(q1));
    printf("Y %s COUNT %d\n", id, tfq_runner_num_errors(r));
  }
  if (on_stop) rput(id, q1, "int32/_/8", 0, 0);
  if (failing && !nocoord) rput(id, qb, NULL, 0, 1);
  for (int64_t i = 0, n = tfq_queue_size(q1); i <= n; i++) rdeq(id, q1, 2000000);
  tfq_runner_free(r);
  tfq_coord_free(coord);
  tfq_queue_free(q1);
  tfq_queue_free(qa);
  tfq_queue_free(qb);
  tfq_status_free(st);
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1 && !(in = fopen(argv[1], "r"))) die("cannot open the scenario file");
  static char *tok[MAX_TOK];
  char *line;
  while ((line = read_line(in)) != NULL) {
    int n = split(line, tok, MAX_TOK);
    if (n == 0 || tok[0][0] == '#') continue;
    const char *cmd = tok[0];
    if (strcmp(cmd, "cbegin") == 0)
      coord_script(in, tok);
    else if (strcmp(cmd, "runner") == 0)
      runner_cmd(tok);
    else if (strcmp(cmd, "batcher") == 0)
      batcher_cmd(in, tok, n);
    else if (strcmp(cmd, "producer") == 0)
      producer_cmd(tok, n);
    else
      die("unknown command");
    fflush(stdout);
  }
  /* Stragglers only sleep: wait for them before freeing what they might still read. */
  for (int i = 0; i < 60000 && atomic_load(&g_live) > 0; i++) sleep_ms(1);
  for (int i = 0; i < g_ncoords; i++) tfq_coord_free(g_coords[i]);
  while (g_threads) {
    cthread *t = g_threads;
    g_threads = t->next;
    free(t);
  }
  if (in != stdin) fclose(in);
  return 0;
}
