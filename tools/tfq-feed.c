/* tfq-feed: feed a TensorFlow cluster's queues from a TF1 input pipeline, from any number of
 * machines.
 *
 * The pipeline is tfq-cat's (cat_pipeline.c): string_input_producer -> reader threads running
 * the library's read-decode op -> a local RandomShuffleQueue of rows.  Instead of printing,
 * one QueueRunner op per TF queue (tfq_tf_feeder_step) dequeues up to --batch-size rows and
 * pushes them into its queue on the cluster:
 *
 *   --to workers (default)   one queue per worker task, NAME_w<i> on /job:worker/task:i: the ps
 *                            carries no data.  Every queue has its own op, all drawing from the
 *                            one local queue, so a batch goes to whichever queue has room first
 *                            (the least full), by backpressure, with no extra RPC.
 *   --to ps                  one queue NAME on /job:ps/task:0 (TF1's shared queue).
 *   --elements batches       an element is a whole batch ([b] per column, no shapes in the
 *                            queue): workers dequeue() one batch per step.
 *   --elements rows          an element is a row: workers dequeue_many(n) (TF1's usual code).
 *
 * When the input ends, the feeder's unit is marked in a done set on the cluster (a
 * MutableHashTable NAME_done on /job:ps/task:0, or /job:worker/task:0 without a ps); whoever
 * completes it (--feeders units) closes every queue, so workers drain and stop on OutOfRange
 * exactly once, however the feeders start, finish or are retried.  With one feeder the queues are
 * closed at once.  The cluster comes from --cluster or TF_CONFIG.  Public headers only; see
 * tools/tfq-feed.1 and docs/tf-bridge.md. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/tf.h>
#include <unistd.h>

#include "cat_app.h"
#include "cat_stdin.h"
#include "feed.h"
#include "tfq_feed_args.h"

const char *g_prog = "tfq-feed";

/* Exits with the usage status after a one-line message (no --help hint: the cause is named). */
static _Noreturn void config_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void config_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_USAGE);
}

/* TensorFlow's message on one line: a remote error comes as "From /job:...:\n<message>\n\t
 * [[{{node q}}]]"; the node annotations go, and line breaks and tabs become single spaces. */
static void one_line(const char *in, char *out, size_t cap) {
  size_t k = 0;
  int space = 0;
  for (const char *p = in; *p && k + 1 < cap; p++) {
    if (p[0] == '[' && strncmp(p, "[[{{node", 8) == 0) {
      const char *e = strstr(p, "}}]]");
      if (e) {
        p = e + 3;
        continue;
      }
    }
    if (*p == '\n' || *p == '\t' || *p == '\r' || *p == ' ') {
      space = k > 0;
      continue;
    }
    if (space && k + 2 < cap) out[k++] = ' ';
    space = 0;
    out[k++] = *p;
  }
  out[k] = '\0';
}

tfq_code name_task(const target *t, tfq_code c, tfq_status *st) {
  char msg[1200];
  one_line(tfq_status_message(st), msg, sizeof msg);
  return tfq_status_set(st, c, "%s: %s", t->label, msg);
}

/* The op of one target: tfq_tf_feeder_step, with the task named in its errors. */
static tfq_code target_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  target *t = ctx;
  tfq_code c = tfq_tf_feeder_step(t->f, cancel, st);
  if (c != TFQ_OK && c != TFQ_OUT_OF_RANGE && c != TFQ_CANCELLED) return name_task(t, c, st);
  return c;
}

static tfq_tf_cluster *load_cluster(const options *o, tfq_status *st) {
  tfq_tf_cluster *c = NULL;
  if (o->cluster) {
    if (tfq_tf_cluster_from_spec_string(o->cluster, &c, st))
      config_error("--cluster: %s", tfq_status_message(st));
  } else if (getenv("TF_CONFIG")) {
    if (tfq_tf_cluster_from_tf_config(NULL, &c, st)) config_error("%s", tfq_status_message(st));
  } else {
    usage_error("no cluster: give --cluster='ps=host:port;worker=host:port,...' or set TF_CONFIG");
  }
  return c;
}

/* The queues this feeder feeds: worker i's, or the ps's. */
static void plan_targets(feed *f) {
  const options *o = &f->a->o;
  const char *job = o->to_ps ? "ps" : "worker";
  int n = tfq_tf_cluster_num_tasks(f->cluster, job);
  if (n < 1) config_error("--to %s: the cluster has no '%s' job", o->to_ps ? "ps" : "workers", job);
  if (o->to_ps) n = 1;
  f->t = xcalloc((size_t)n, sizeof *f->t);
  for (int i = 0; i < n; i++) {
    target *t = &f->t[f->nt++];
    int task = tfq_tf_cluster_task_index(f->cluster, job, i);
    t->owner = f;
    t->task = task;
    snprintf(t->device, sizeof t->device, "/job:%s/task:%d", job, task);
    snprintf(t->label, sizeof t->label, "%s (%s)", t->device,
             tfq_tf_cluster_address(f->cluster, job, task));
    if (o->to_ps)
      snprintf(t->name, sizeof t->name, "%s", o->queue);
    else
      snprintf(t->name, sizeof t->name, "%s_w%d", o->queue, task);
    t->session = tfq_tf_cluster_target(f->cluster, job, task);
  }
}

/* Opens every queue (creating it if nobody has) and runs its queue op once (QueueSize), so that a
 * cluster that is not there or a queue of other dtypes or capacity fails here, before any data
 * is read. */
static tfq_code open_targets(feed *f, tfq_status *st) {
  const options *o = &f->a->o;
  int64_t cap = o->queue_capacity ? o->queue_capacity : o->rows ? 8 * o->batch_size : 8;
  for (size_t i = 0; i < f->nt; i++) {
    target *t = &f->t[i];
    tfq_tf_queue_options *qo;
    if (tfq_tf_queue_options_new(&qo, st)) die_oom();
    tfq_code c = tfq_tf_queue_options_set_target(qo, t->session, st);
    if (!c) c = tfq_tf_queue_options_set_device(qo, t->device, st);
    if (!c) c = tfq_tf_queue_options_set_shared_name(qo, t->name, st);
    if (c) die_oom();
    tfq_tf_queue_options_set_capacity(qo, cap);
    /* --acks: an enqueue blocked on a full queue comes back every 5 s to see whether its worker
     * is still alive (it is sent again if so: an element is all or nothing) */
    tfq_tf_queue_options_set_timeout_ms(qo, o->acks && o->timeout_ms > 5000 ? 5000 : o->timeout_ms);
    tfq_tf_queue_options_set_element(qo, o->rows ? TFQ_TF_ELEMENT_ROWS : TFQ_TF_ELEMENT_BATCH);
    tfq_spec *es = f->a->spec;
    if (o->acks) { /* the key (an int64 scalar per element) first */
      tfq_tf_queue_options_set_unbatched(qo, 1);
      es = NULL;
      c = tfq_spec_new(&es, st);
      if (!c) c = tfq_spec_add(es, TFQ_INT64, NULL, 0, "key", st);
      for (size_t j = 0; !c && j < tfq_spec_size(f->a->spec); j++)
        c = tfq_spec_add(es, tfq_spec_dtype(f->a->spec, j), tfq_spec_dims(f->a->spec, j),
                         tfq_spec_rank(f->a->spec, j), NULL, st);
      if (c) die_oom();
    }
    c = tfq_tf_queue_open(es, qo, &t->q, st);
    if (es != f->a->spec) tfq_spec_free(es);
    tfq_tf_queue_options_free(qo);
    int64_t size;
    if (!c) c = tfq_tf_queue_size(t->q, &size, st);
    if (o->acks && (c == TFQ_DEADLINE_EXCEEDED || c == TFQ_UNAVAILABLE)) {
      /* --acks: a worker that does not answer at start is a worker lost before the first batch
       * (a feeder started late, as a Spark retry is, may find one already dead): the others
       * take its share; with none left, the feed fails below. */
      if (!o->quiet)
        warnx_("%s: no answer within --timeout-ms at start: the worker is lost", t->label);
      tfq_tf_queue_free(t->q);
      t->q = NULL;
      t->dead = 1;
      tfq_status_clear(st);
      continue;
    }
    if (c == TFQ_DEADLINE_EXCEEDED || c == TFQ_UNAVAILABLE) {
      char msg[1100];
      one_line(tfq_status_message(st), msg, sizeof msg);
      tfq_status_set(st, c, "%s: no answer within --timeout-ms=%" PRId64 " (is the task running?)",
                     msg, o->timeout_ms);
    }
    if (c) return name_task(t, c, st);
    if (!o->acks && (c = tfq_tf_feeder_new(f->a->q, o->batch_size, t->q, 0, &t->f, st)))
      return name_task(t, c, st);
  }
  size_t live = 0;
  for (size_t i = 0; i < f->nt; i++) live += !f->t[i].dead;
  if (!live)
    return tfq_status_set(st, TFQ_UNAVAILABLE,
                          "no worker answered within --timeout-ms=%" PRId64
                          " (are the tasks running?)",
                          o->timeout_ms);
  return TFQ_OK;
}

/* A plain close of every queue: workers drain what is queued, then OutOfRange.  A queue closed
 * already (by another feeder that completed the done set too) counts as closed: a plain close
 * of a closed queue is TF's CANCELLED "Queue '...' is already closed.". */
static tfq_code close_targets(feed *f, tfq_status *st) {
  for (size_t i = 0; i < f->nt; i++) {
    if (f->t[i].dead) continue; /* --acks: a lost worker's queue went with it */
    tfq_code c = tfq_tf_queue_close(f->t[i].q, 0, st);
    if (f->a->o.acks && (c == TFQ_DEADLINE_EXCEEDED || c == TFQ_UNAVAILABLE)) {
      if (!f->a->o.quiet) warnx_("%s: not closed: no answer (a lost worker)", f->t[i].label);
      continue; /* lost after the last acknowledgement: another feeder saw it die */
    }
    if (c && c != TFQ_CANCELLED) return name_task(&f->t[i], c, st);
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

/* Where the job's shared state lives (the done set, the ack table): /job:ps/task:0, or
 * /job:worker/task:0 when the cluster has no ps. */
static const char *state_task(const feed *f, char *device, size_t cap) {
  int has_ps = tfq_tf_cluster_num_tasks(f->cluster, "ps") > 0;
  const char *job = has_ps ? "ps" : "worker";
  int task = tfq_tf_cluster_task_index(f->cluster, job, 0);
  snprintf(device, cap, "/job:%s/task:%d", job, task);
  return tfq_tf_cluster_target(f->cluster, job, task);
}

/* The end of this unit's input: mark it in the done set; close the queues when the set is full.
 * *closed tells whether this feeder closed them. */
static tfq_code finish_unit(feed *f, int *closed, int64_t *ndone, tfq_status *st) {
  const options *o = &f->a->o;
  *closed = 0;
  *ndone = 1;
  if (o->feeders > 1) {
    char device[64], name[280];
    const char *session = state_task(f, device, sizeof device);
    snprintf(name, sizeof name, "%s_done", o->queue);
    tfq_tf_done *d;
    tfq_code c = tfq_tf_done_open(session, device, name, o->timeout_ms, &d, st);
    if (!c) c = tfq_tf_done_mark(d, o->unit, ndone, st);
    tfq_tf_done_free(d);
    if (c) {
      char msg[1200];
      one_line(tfq_status_message(st), msg, sizeof msg);
      return tfq_status_set(st, c, "%s (done set %s): %s", device, name, msg);
    }
    if (*ndone < o->feeders) return TFQ_OK;
  }
  *closed = 1;
  return close_targets(f, st);
}

static int64_t target_rows(const target *t) { return t->f ? tfq_tf_feeder_rows(t->f) : t->rows; }
static int64_t target_batches(const target *t) {
  return t->f ? tfq_tf_feeder_batches(t->f) : t->batches;
}

static int64_t rows_pushed(const feed *f) {
  int64_t n = 0;
  for (size_t i = 0; i < f->nt; i++) n += target_rows(&f->t[i]);
  return n;
}

/* The progress line on a terminal: rows/s and how full each queue is. */
static tfq_code progress_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  feed *f = ctx;
  double dt = now_s() - f->t0;
  int64_t rows = rows_pushed(f);
  sbuf line = {0};
  sb_printf(&line, "\r\033[K%s: %" PRId64 " rows, %.0f/s, queues", g_prog, rows,
            dt > 0 ? (double)rows / dt : 0.0);
  for (size_t i = 0; i < f->nt && i < 8; i++) {
    int64_t size = -1;
    if (!f->t[i].q || tfq_tf_queue_size(f->t[i].q, &size, st) != TFQ_OK) size = -1;
    sb_printf(&line, " %" PRId64, size);
  }
  fputs(line.p, stderr);
  free(line.p);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* TensorFlow prints a note while its libraries initialise ("oneDNN custom operations are on",
 * after absl's "All log messages before absl::InitializeLog()..."), from a thread of its own,
 * that would bury tfq-feed's one-line messages.  The note goes with oneDNN's graph rewrites,
 * which do not matter here (this process only enqueues; the ops run on the cluster's tasks).
 * Unless the environment sets TF_ENABLE_ONEDNN_OPTS, tfq-feed runs itself again with it 0 (and
 * TF's C++ logging at errors) from .preinit_array: before any shared library's constructor
 * runs, so before TensorFlow has started.  The new process has the variable, so it does not
 * exec again.  If the exec fails, tfq-feed goes on, with the note. */
static void quiet_tensorflow(int argc, char **argv, char **envp) {
  (void)argc;
  /* libc is not started yet: no getenv/setenv, only envp (execve copies the strings) */
  size_t n = 0;
  int has_log = 0;
  for (; envp && envp[n]; n++) {
    if (strncmp(envp[n], "TF_ENABLE_ONEDNN_OPTS=", 22) == 0) return; /* set: nothing to do */
    has_log |= strncmp(envp[n], "TF_CPP_MIN_LOG_LEVEL=", 21) == 0;
  }
  if (n > 100000) return;
  char *env[n + 3];
  for (size_t k = 0; k < n; k++) env[k] = envp[k];
  env[n++] = (char *)"TF_ENABLE_ONEDNN_OPTS=0";
  if (!has_log) env[n++] = (char *)"TF_CPP_MIN_LOG_LEVEL=2";
  env[n] = NULL;
  execve("/proc/self/exe", argv, env);
}
__attribute__((section(".preinit_array"),
               used)) static void (*const preinit_quiet)(int, char **, char **) = quiet_tensorflow;

/* Standard input's header line "#tfq unit=U units=N" (Spark's RDD.pipe gives every task the same
 * command and environment; the partition's number comes in the data): sets --unit and
 * --feeders. */
static void read_header(options *o, int argc, char **argv) {
  int uses_stdin = optind >= argc;
  for (int i = optind; i < argc; i++) uses_stdin |= strcmp(argv[i], "-") == 0;
  char line[512];
  if (!uses_stdin || !stdin_header(line, sizeof line)) return;
  long long unit = -1, units = -1, attempt = 0;
  for (char *tok = strtok(line + 5, " \t"); tok; tok = strtok(NULL, " \t")) {
    char *end;
    if (strncmp(tok, "unit=", 5) == 0) {
      unit = strtoll(tok + 5, &end, 10);
      if (*end || end == tok + 5) unit = -2;
    } else if (strncmp(tok, "units=", 6) == 0) {
      units = strtoll(tok + 6, &end, 10);
      if (*end || end == tok + 6) units = -2;
    } else if (strncmp(tok, "attempt=", 8) == 0) {
      attempt = strtoll(tok + 8, &end, 10);
      if (*end || end == tok + 8 || attempt < 0 || attempt > 255)
        config_error("standard input's header: attempt=A needs 0 <= A <= 255");
    } else {
      config_error("standard input's header: unknown field '%s' (expected unit=U units=N)", tok);
    }
  }
  if (unit < 0 || units < 1 || unit >= units)
    config_error("standard input's header: expected '#tfq unit=U units=N' with 0 <= U < N");
  o->unit = unit;
  o->feeders = units;
  if (attempt) o->attempt = attempt;
  stdin_want_trailer();
}

static _Noreturn void args_failed(cat_args_status as, char *msg) {
  switch (as) {
    case CAT_ARGS_HELP: fputs(feed_usage_text, stdout); exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_VERSION:
      printf("tfq-feed (tfq) %s, TensorFlow %s\n", tfq_version_string(), tfq_tf_version());
      exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_USAGE: usage_error("%s", msg);
    default: die_oom();
  }
}

/* Leaves at once after an error or a signal: threads may still be blocked in TensorFlow calls
 * (until --timeout-ms), so nothing is freed and no destructor runs. */
static _Noreturn void leave(int rc) {
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  static app A;
  static feed F;
  app *a = &A;
  feed *f = &F;
  f->a = a;
  int first_operand;
  char *msg;
  cat_args_status as = feed_parse_options(argc, argv, &a->o, &first_operand, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  options *o = &a->o;
  if (optind >= argc && isatty(STDIN_FILENO))
    usage_error("no input: name a FILE, or pipe data into standard input");
  read_header(o, argc, argv);
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  f->cluster = load_cluster(o, st);
  plan_targets(f);
  pipeline_signals();

  const char *first = optind < argc ? argv[optind] : "-";
  cat_plan plan;
  as = cat_resolve(o, first, &plan, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  a->fmt = plan.fmt;
  a->fields = plan.fields;
  a->nfields = plan.nfields;
  a->mad = plan.mad;
  a->capacity = plan.capacity;

  int rc = pipeline_prepare(a, argc, argv, st);
  if (rc != EXIT_OK) leave(rc);
  tfq_code c = open_targets(f, st);
  if (c) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  if (o->acks) {
    char device[64];
    const char *session = state_task(f, device, sizeof device);
    if ((c = acks_new(f, session, device, acks_slot(o->unit, o->attempt), st))) {
      warnx_("%s", tfq_status_message(st));
      leave(EXIT_DATA);
    }
  }
  if (tfq_runner_new(a->q, &f->runner, st)) die_oom();
  for (size_t i = 0; i < f->nt; i++) {
    if (tfq_runner_add_op(f->runner, o->acks ? acks_step : target_step, &f->t[i], f->t[i].device,
                          st))
      die_oom();
    /* One feeder alone: a stop (an error, a signal) closes its queues at once, which wakes an
     * enqueue blocked on a full queue.  With several, the done set closes them. */
    if (o->feeders == 1 && f->t[i].q && tfq_tf_queue_close_on_stop(f->t[i].q, a->coord, st))
      die_oom();
  }
  f->t0 = now_s();
  if ((c = pipeline_start(a, st)) || (c = tfq_runner_start(f->runner, a->coord, 0, st))) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  if (!o->quiet && isatty(STDERR_FILENO) &&
      tfq_coord_loop(a->coord, 500000, progress_step, f, "progress", NULL) != TFQ_OK)
    warnx_("no progress line: cannot start its thread");
  if (o->acks && (tfq_coord_loop(a->coord, 250000, acks_poll_step, f, "acks", st) ||
                  tfq_coord_loop(a->coord, 500000, acks_probe_step, f, "probe", st))) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }

  /* Until every op has pushed the end of the input (or a stop). */
  while (tfq_runner_running(f->runner) > 0 && !tfq_coord_wait_for_stop(a->coord, 100000)) {
  }
  int stopped = tfq_coord_should_stop(a->coord);
  const char *cut = stopped ? NULL : stdin_trailer_error();
  if (cut && tfq_coord_request_stop(a->coord, TFQ_DATA_LOSS, cut) != TFQ_OK) stopped = 1;
  stopped |= cut != NULL;
  if (!stopped && o->acks && !acks_all_acked(f, st) &&
      tfq_coord_request_stop(a->coord, TFQ_DEADLINE_EXCEEDED,
                             "batches sent were never acknowledged (do the workers ack?)") !=
          TFQ_OK)
    stopped = 1;
  stopped |= tfq_coord_should_stop(a->coord) && tfq_coord_error(a->coord, NULL) != TFQ_OK;
  double dt = now_s() - f->t0;
  int closed = 0;
  int64_t ndone = 0;
  if (!stopped && (c = finish_unit(f, &closed, &ndone, st)) != TFQ_OK) {
    if (tfq_coord_request_stop(a->coord, c, tfq_status_message(st)) != TFQ_OK) stopped = 1;
  }
  tfq_code jc = pipeline_stop(a, st);
  if (!o->quiet && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
  int sig = pipeline_signal();
  if (jc != TFQ_OK && jc != TFQ_CANCELLED && jc != TFQ_OUT_OF_RANGE) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  if (sig) leave(128 + sig);
  if (stopped) leave(EXIT_DATA);
  int64_t rows = rows_pushed(f);
  if (o->stats) {
    fprintf(stderr,
            "%s: stats: unit %" PRId64 " of %" PRId64 ", rows %" PRId64
            ", records read %lld, "
            "time %.3f s, %.0f rows/s, %s; queues closed %s\n",
            g_prog, o->unit, o->feeders, rows, records_in(a), dt, dt > 0 ? (double)rows / dt : 0.0,
            o->rows ? "row elements" : "batch elements",
            closed ? "by this feeder" : "by the last feeder");
    for (size_t i = 0; i < f->nt; i++)
      fprintf(stderr, "%s: stats:   %s queue '%s': %" PRId64 " rows in %" PRId64 " enqueues\n",
              g_prog, f->t[i].label, f->t[i].name, target_rows(&f->t[i]), target_batches(&f->t[i]));
  }
  if (o->acks) {
    acks_stats k;
    if (acks_count(f, o->unit, o->attempt, &k, st) != TFQ_OK)
      warnx_("acknowledgement counts: %s", tfq_status_message(st));
    else if (o->stats)
      fprintf(stderr,
              "%s: stats: acks: sent %" PRId64 ", re-sent %" PRId64 ", acknowledged %" PRId64
              " (%" PRId64 " records), duplicates %" PRId64 " records (%" PRId64
              " from earlier attempts), workers lost %" PRId64 "\n",
              g_prog, k.sent, k.resent, k.acked, k.acked_rows, k.dup_records, k.prior_rows,
              k.dead_workers);
  }
  if (!o->quiet && o->feeders > 1 && !closed)
    warnx_("unit %" PRId64 " done (%" PRId64 " of %" PRId64
           " units); the last feeder closes the queues",
           o->unit, ndone, o->feeders);

  /* Done.  Nothing is freed: closing a TF session to a worker that has already stopped (after
   * its OutOfRange) retries until --timeout-ms, and the process ends here anyway. */
  leave(EXIT_OK);
}
