/* tfq-feed: feed a TensorFlow cluster's queues from a tfq_pipeline, from any number of machines.
 *
 * This file parses the arguments, builds a tfq_pipeline (tfq/pipeline.h: the files, the format,
 * the columns given with -d or inferred, shuffle, batch, threads, shard, bad records, the
 * deterministic mode, a restored checkpoint) and hands it to libtfq_tf's tfq_tf_dispatch
 * (tfq/tf.h), which takes its batches on one thread and enqueues them with one sender per TF
 * queue:
 *
 *   --to workers (default)   one queue per worker task, NAME_w<i> on /job:worker/task:i: the ps
 *                            carries no data.  A batch goes to whichever queue has room first
 *                            (the least full), by backpressure, with no extra RPC.
 *   --to ps                  one queue NAME on /job:ps/task:0 (TF1's shared queue).
 *   --elements batches       an element is a whole batch ([b] per column, no shapes in the
 *                            queue): workers dequeue() one batch per step.
 *   --elements rows          an element is a row: workers dequeue_many(n) (TF1's usual code).
 *
 * When the input ends, the feeder's unit is marked in a done set on the cluster (a
 * MutableHashTable NAME_done on /job:ps/task:0, or /job:worker/task:0 without a ps); whoever
 * completes it (--feeders units) closes every queue, so workers drain and stop on OutOfRange
 * exactly once, however the feeders start, finish or are retried (a lone feeder marks its unit
 * too).  A feeder that fails or is stopped closes nothing: it marks its unit in NAME_failed
 * (fail_unit), which the workers turn into an error.  --acks (feed_acks.c) keys, keeps and re-sends
 * batches, and with --checkpoint persists the pipeline's state once every batch before it is
 * acknowledged.  Standard input (Spark's RDD.pipe) is passed to the pipeline through a pipe by a
 * pump thread (feed_stdin below).  The cluster comes from --cluster or TF_CONFIG.  Public headers
 * only; see tools/tfq-feed.1 and docs/tf-bridge.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tfq/tf.h>
#include <unistd.h>

#include "feed.h"
#include "feed_serve.h"
#include "tfq_feed_args.h"

/* The limit of a close (and of its probe), ms. */
#define CLOSE_MS 1000

const char *g_prog = "tfq-feed";

_Noreturn void config_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_USAGE);
}

_Noreturn void leave(int rc) {
  fflush(stdout);
  fflush(stderr);
  _exit(rc);
}

void one_line(const char *in, char *out, size_t cap) {
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

/* ---- signals: SIGINT, SIGTERM, SIGHUP stop the feed (exit 128+N) ---- */

static tfq_tf_dispatch *_Atomic g_dispatch;
static atomic_int g_signal;

static void *signal_main(void *arg) {
  sigset_t *set = arg;
  int sig;
  while (sigwait(set, &sig) != 0) {
  }
  atomic_store(&g_signal, sig);
  tfq_tf_dispatch *d = atomic_load(&g_dispatch);
  if (!d) leave(128 + sig); /* nothing was sent yet */
  if (tfq_coord_request_stop(tfq_tf_dispatch_coord(d), TFQ_CANCELLED, "stopped by a signal")) {
    /* stopped already */
  }
  return NULL;
}

static void start_signals(void) {
  static sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  pthread_t th;
  if (pthread_create(&th, NULL, signal_main, &set)) die_oom();
  pthread_detach(th);
}

/* ---- the pipeline ---- */

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

/* The pipeline's options from the command line (standard input set up as it comes). */
static tfq_pipeline_options *pipeline_options(options *o, const feed_more *m, int argc, char **argv,
                                              tfq_status *st) {
  const char *first = optind < argc ? argv[optind] : "-";
  cat_plan plan;
  char *msg;
  cat_args_status as = cat_resolve(o, first, &plan, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  cat_fields_free(plan.fields, plan.nfields);
  tfq_pipeline_options *po;
  if (tfq_pipeline_options_new(&po, st)) die_oom();
  static const tfq_format fmts[] = {[FMT_CSV] = TFQ_FORMAT_CSV,
                                    [FMT_TEXT] = TFQ_FORMAT_TEXT,
                                    [FMT_TFRECORD] = TFQ_FORMAT_TFRECORD,
                                    [FMT_FIXED] = TFQ_FORMAT_FIXED_LENGTH};
  tfq_pipeline_options_set_format(po, fmts[plan.fmt]);
  if (o->compression != COMP_AUTO)
    tfq_pipeline_options_set_compression(po, (tfq_compression)o->compression);
  int nstdin = 0;
  for (int i = optind; i < argc || (i == optind && optind >= argc); i++) {
    if (i >= argc || strcmp(argv[i], "-") == 0) {
      if (++nstdin > 1) usage_error("standard input ('-') may be named only once");
      if (m->checkpoint)
        usage_error("--checkpoint needs files: standard input cannot be read again");
      setup_stdin(o, po, st);
      if (i >= argc) break;
      continue;
    }
    if (tfq_pipeline_options_add_file(po, argv[i], st)) die_oom();
  }
  if (plan.fmt == FMT_CSV) {
    if (o->record_defaults && tfq_pipeline_options_set_columns(po, o->record_defaults, st))
      usage_error("-d: %s", tfq_status_message(st));
    if (o->field_delim) tfq_pipeline_options_set_field_delim(po, o->field_delim);
    tfq_pipeline_options_set_use_quote_delim(po, !o->no_quote_delim);
    if (o->na_value && tfq_pipeline_options_set_na_value(po, o->na_value, st)) die_oom();
    if (o->nselect && tfq_pipeline_options_set_select_cols(po, o->select_cols, o->nselect, st))
      die_oom();
  }
  if (plan.fmt == FMT_FIXED)
    tfq_pipeline_options_set_fixed_length(po, o->record_bytes, o->header_bytes, o->footer_bytes,
                                          o->hop_bytes);
  tfq_pipeline_options_set_skip_header_lines(po, o->skip_header_lines);
  tfq_pipeline_options_set_batch_size(po, o->batch_size);
  tfq_pipeline_options_set_shuffle(po, o->shuffle);
  if (o->shuffle) {
    tfq_pipeline_options_set_capacity(po, plan.capacity);
    tfq_pipeline_options_set_min_after_dequeue(po, plan.mad);
  }
  if (o->seed_set) tfq_pipeline_options_set_seed(po, o->seed);
  tfq_pipeline_options_set_num_epochs(po, o->num_epochs);
  tfq_pipeline_options_set_num_threads(po, (int)o->threads);
  if (o->shard_n > 1) tfq_pipeline_options_set_shard(po, o->shard_i, o->shard_n);
  tfq_pipeline_options_set_max_bad_records(po, m->max_bad_records);
  tfq_pipeline_options_set_deterministic(po, m->deterministic);
  return po;
}

/* The columns of the pipeline's batches as the spec of a TF queue's components. */
static tfq_spec *pipeline_spec(const tfq_pipeline *p, tfq_status *st) {
  tfq_spec *s;
  if (tfq_spec_new(&s, st)) die_oom();
  for (size_t i = 0; i < tfq_pipeline_num_columns(p); i++)
    if (tfq_spec_add(s, tfq_pipeline_column_dtype(p, i), tfq_pipeline_column_dims(p, i),
                     tfq_pipeline_column_rank(p, i), tfq_pipeline_column_name(p, i), st))
      die_oom();
  return s;
}

/* --checkpoint DIR: the state file of this unit. */
static void checkpoint_path(const options *o, const feed_more *m, char *out, size_t cap) {
  snprintf(out, cap, "%s/%s-unit%" PRId64 "-of%" PRId64 ".tfqstate", m->checkpoint, o->queue,
           o->unit, o->feeders);
}

/* ---- the cluster ---- */

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
  const options *o = f->o;
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
  const options *o = f->o;
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
    tfq_spec *es = f->spec;
    if (o->acks) { /* the key (an int64 scalar per element) first */
      tfq_tf_queue_options_set_unbatched(qo, 1);
      es = NULL;
      c = tfq_spec_new(&es, st);
      if (!c) c = tfq_spec_add(es, TFQ_INT64, NULL, 0, "key", st);
      for (size_t j = 0; !c && j < tfq_spec_size(f->spec); j++)
        c = tfq_spec_add(es, tfq_spec_dtype(f->spec, j), tfq_spec_dims(f->spec, j),
                         tfq_spec_rank(f->spec, j), NULL, st);
      if (c) die_oom();
    }
    c = tfq_tf_queue_open(es, qo, &t->q, st);
    /* the close's handle: a short limit (close_targets) */
    tfq_tf_queue_options_set_timeout_ms(qo, o->timeout_ms > CLOSE_MS ? CLOSE_MS : o->timeout_ms);
    if (!c) c = tfq_tf_queue_open(es, qo, &t->closer, st);
    if (es != f->spec) tfq_spec_free(es);
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

/* A plain close of one queue, on its own thread (close_targets): workers drain what is queued,
 * then OutOfRange.  Through the short-limit handle: a worker that drains its closed queue and
 * exits at once (every TF1 worker script does on OutOfRange) can be gone before the close's reply
 * comes, and a call to a gone task waits its whole limit.  No answer within the limit: a probe
 * (QueueSize, same limit) tells a gone worker (it counts as closed: nobody waits on its queue,
 * and every row sent to it was enqueued) from a slow one (closed again with --timeout-ms).  A
 * queue closed already (by another feeder) counts as closed: TF's CANCELLED "Queue '...' is
 * already closed.". */
static void *close_main(void *arg) {
  target *t = arg;
  tfq_status *st = tfq_status_new();
  if (!st) {
    t->close_code = TFQ_RESOURCE_EXHAUSTED;
    return NULL;
  }
  tfq_code c = tfq_tf_queue_close(t->closer, 0, st);
  if (c == TFQ_DEADLINE_EXCEEDED || c == TFQ_UNAVAILABLE) {
    int64_t n;
    if (tfq_tf_queue_size(t->closer, &n, st) == TFQ_OK) {
      c = tfq_tf_queue_close(t->q, 0, st); /* alive and slow: the full limit */
    } else {
      t->gone = 1;
      c = TFQ_OK;
    }
  }
  if (c == TFQ_CANCELLED) c = TFQ_OK;
  if (c) name_task(t, c, st);
  t->close_code = c;
  if (c) snprintf(t->close_msg, sizeof t->close_msg, "%s", tfq_status_message(st));
  tfq_status_free(st);
  return NULL;
}

/* Closes every queue at once, each on its own thread, so that no queue waits for another. */
static tfq_code close_targets(feed *f, tfq_status *st) {
  pthread_t *th = xcalloc(f->nt, sizeof *th);
  char *started = xcalloc(f->nt, 1);
  for (size_t i = 0; i < f->nt; i++) {
    if (f->t[i].dead) continue; /* --acks: a lost worker's queue went with it */
    if (pthread_create(&th[i], NULL, close_main, &f->t[i]) == 0)
      started[i] = 1;
    else
      close_main(&f->t[i]);
  }
  tfq_code c = TFQ_OK;
  for (size_t i = 0; i < f->nt; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    if (f->t[i].gone && !f->o->quiet)
      warnx_("%s: no answer to the close: the worker is gone (its queue counts as closed)",
             f->t[i].label);
    if (f->t[i].close_code && !c) {
      c = f->t[i].close_code;
      tfq_status_set(st, c, "%s", f->t[i].close_msg);
    }
  }
  free(th);
  free(started);
  if (!c) tfq_status_clear(st);
  return c;
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

/* The end of this unit's input: mark it in the done set (a lone feeder too: a worker waiting
 * for the retry of a failed unit sees it complete there); close the queues when the set is full.
 * *closed tells whether this feeder closed them. */
static tfq_code finish_unit(feed *f, int *closed, int64_t *ndone, tfq_status *st) {
  const options *o = f->o;
  *closed = 0;
  *ndone = 1;
  {
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

/* A stop (an error, a signal) before the end of the input: the unit is marked failed in
 * "<queue>_failed" (int64 unit -> string message, beside the done set) and the queues stay open,
 * so no worker sees a clean OutOfRange with rows missing: tfq_feed_worker's guard turns the mark
 * into an error, or waits for a retry of the unit that completes it.  A SIGKILL leaves no mark:
 * the unit is simply never done, so nobody closes the queues. */
static void fail_unit(feed *f, tfq_coord *coord, int sig, tfq_status *st) {
  const options *o = f->o;
  char device[64], name[280], msg[1400], why[1200];
  if (sig)
    snprintf(why, sizeof why, "stopped by signal %d (%s)", sig, strsignal(sig));
  else if (tfq_coord_error(coord, st) != TFQ_OK)
    one_line(tfq_status_message(st), why, sizeof why);
  else
    snprintf(why, sizeof why, "stopped before the end of its input");
  snprintf(msg, sizeof msg, "tfq-feed unit %" PRId64 " (attempt %" PRId64 "): %s", o->unit,
           o->attempt, why);
  const char *session = state_task(f, device, sizeof device);
  snprintf(name, sizeof name, "%s_failed", o->queue);
  if (tfq_tf_done_fail(session, device, name, o->unit, msg,
                       o->timeout_ms > 0 && o->timeout_ms < 10000 ? o->timeout_ms : 10000,
                       st) != TFQ_OK)
    warnx_("could not mark unit %" PRId64 " failed on %s: %s", o->unit, device,
           tfq_status_message(st));
}

static int64_t rows_pushed(feed *f) {
  int64_t n = 0;
  for (size_t i = 0; i < f->nt; i++) n += tfq_tf_dispatch_rows(f->d, i);
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

int main(int argc, char **argv) {
  /* the resident mode: returns in a forked unit only, with the unit's arguments */
  if (argc >= 2 && strcmp(argv[1], "--serve") == 0) feed_serve(&argc, &argv);
  signal(SIGPIPE, SIG_IGN);
  static options O;
  static feed F;
  feed *f = &F;
  options *o = &O;
  f->o = o;
  int first_operand;
  char *msg;
  cat_args_status as = feed_parse_options(argc, argv, o, &first_operand, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  const feed_more *m = feed_more_options();
  f->m = m;
  if (optind >= argc && isatty(STDIN_FILENO))
    usage_error("no input: name a FILE, or pipe data into standard input");
  start_signals();
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  tfq_pipeline_options *po = pipeline_options(o, m, argc, argv, st);
  f->cluster = load_cluster(o, st);
  plan_targets(f);

  tfq_code c = tfq_pipeline_new(po, &f->p, st);
  if (c) {
    warnx_("%s", tfq_status_message(st));
    leave(c == TFQ_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_DATA);
  }
  tfq_pipeline_stats ps = {.size = sizeof ps};
  if (!o->quiet && tfq_pipeline_columns_spec(f->p) && !o->record_defaults)
    warnx_("inferred -d '%s'", tfq_pipeline_columns_spec(f->p));
  if (m->checkpoint) {
    checkpoint_path(o, m, f->ckpt, sizeof f->ckpt);
    if (access(f->ckpt, F_OK) == 0) {
      if ((c = tfq_pipeline_restore_file(f->p, f->ckpt, st))) {
        warnx_("--checkpoint: %s", tfq_status_message(st));
        leave(EXIT_DATA);
      }
      if (tfq_pipeline_get_stats(f->p, &ps, st) == TFQ_OK) f->resumed = ps.batches_out;
      if (!o->quiet)
        warnx_("resumed from %s: batch %" PRId64 " (%" PRId64 " records sent before)", f->ckpt,
               ps.batches_out, ps.records_out);
    }
  }
  if (tfq_pipeline_get_stats(f->p, &ps, st) == TFQ_OK && o->shuffle && !o->seed_set && !o->quiet)
    warnx_("seed %" PRIu64 " (--seed=%" PRIu64 " --deterministic repeats the batches)", ps.seed,
           ps.seed);
  f->spec = pipeline_spec(f->p, st);
  if ((c = open_targets(f, st))) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  tfq_tf_queue **qs = xcalloc(f->nt, sizeof *qs);
  for (size_t i = 0; i < f->nt; i++) qs[i] = f->t[i].q;
  if (tfq_tf_dispatch_new(f->p, qs, f->nt, &f->d, st)) die_oom();
  tfq_coord *coord = tfq_tf_dispatch_coord(f->d);
  for (size_t i = 0; i < f->nt; i++)
    if (tfq_tf_dispatch_set_label(f->d, i, f->t[i].label, st)) die_oom();
  if (o->acks) {
    char device[64];
    const char *session = state_task(f, device, sizeof device);
    if ((c = acks_new(f, session, device, acks_slot(o->unit, o->attempt), st))) {
      warnx_("%s", tfq_status_message(st));
      leave(EXIT_DATA);
    }
    tfq_tf_dispatch_set_send_fn(f->d, acks_step, f);
    if (m->checkpoint) tfq_tf_dispatch_set_state_fn(f->d, m->checkpoint_every, acks_state, f);
  }
  /* A stop (an error, a signal) does not close the queues, lone feeder or not: it marks the
   * unit failed (fail_unit); only a full done set closes them. */
  atomic_store(&g_dispatch, f->d);
  if (atomic_load(&g_signal)) leave(128 + atomic_load(&g_signal));
  f->t0 = now_s();
  if ((c = tfq_tf_dispatch_start(f->d, st))) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  if (!o->quiet && isatty(STDERR_FILENO) &&
      tfq_coord_loop(coord, 500000, progress_step, f, "progress", NULL) != TFQ_OK)
    warnx_("no progress line: cannot start its thread");
  /* --checkpoint: a state is written once the poll sees its batches acknowledged, so the poll
   * runs every 50 ms (the batches acknowledged since the last state written are re-sent by a
   * retry); else every 250 ms */
  if (o->acks &&
      (tfq_coord_loop(coord, m->checkpoint ? 50000 : 250000, acks_poll_step, f, "acks", st) ||
       tfq_coord_loop(coord, 500000, acks_probe_step, f, "probe", st))) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }

  /* Until every sender has pushed the end of the input (or a stop). */
  while (tfq_tf_dispatch_running(f->d) > 0 && !tfq_coord_wait_for_stop(coord, 100000)) {
  }
  int stopped = tfq_coord_should_stop(coord);
  const char *cut = stopped ? NULL : stdin_trailer_error();
  if (cut && tfq_coord_request_stop(coord, TFQ_DATA_LOSS, cut) != TFQ_OK) stopped = 1;
  stopped |= cut != NULL;
  if (!stopped && o->acks && !acks_all_acked(f, st) &&
      tfq_coord_request_stop(coord, TFQ_DEADLINE_EXCEEDED,
                             "batches sent were never acknowledged (do the workers ack?)") !=
          TFQ_OK)
    stopped = 1;
  stopped |= tfq_coord_should_stop(coord) && tfq_coord_error(coord, NULL) != TFQ_OK;
  if (!stopped && o->acks && m->checkpoint) acks_checkpoint_final(f);
  double dt = now_s() - f->t0;
  int closed = 0;
  int64_t ndone = 0;
  int failed = stopped;
  if (!stopped && (c = finish_unit(f, &closed, &ndone, st)) != TFQ_OK) {
    failed = 1;
    if (tfq_coord_request_stop(coord, c, tfq_status_message(st)) != TFQ_OK) stopped = 1;
  }
  if (!tfq_coord_should_stop(coord) && tfq_coord_request_stop(coord, TFQ_OUT_OF_RANGE, "done")) {
    /* stopped meanwhile */
  }
  if (failed || atomic_load(&g_signal)) fail_unit(f, coord, atomic_load(&g_signal), st);
  /* a failed unit's senders may wait on full queues that nobody closes: a short join */
  tfq_code jc = tfq_tf_dispatch_join(f->d, failed ? 1000000 : 10000000, st);
  if (!o->quiet && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
  int sig = atomic_load(&g_signal);
  if (sig) leave(128 + sig);
  if (jc != TFQ_OK && jc != TFQ_CANCELLED && jc != TFQ_OUT_OF_RANGE) {
    warnx_("%s", tfq_status_message(st));
    leave(EXIT_DATA);
  }
  if (stopped) leave(EXIT_DATA);
  int64_t rows = rows_pushed(f);
  if (tfq_pipeline_get_stats(f->p, &ps, st) != TFQ_OK) memset(&ps, 0, sizeof ps);
  if (o->stats) {
    fprintf(stderr,
            "%s: stats: unit %" PRId64 " of %" PRId64 ", rows %" PRId64 ", records read %" PRId64
            ", bad records %" PRId64 ", time %.3f s, %.0f rows/s, %s; queues closed %s\n",
            g_prog, o->unit, o->feeders, rows, ps.records_read, ps.bad_records, dt,
            dt > 0 ? (double)rows / dt : 0.0, o->rows ? "row elements" : "batch elements",
            closed ? "by this feeder" : "by the last feeder");
    for (size_t i = 0; i < f->nt; i++)
      fprintf(stderr, "%s: stats:   %s queue '%s': %" PRId64 " rows in %" PRId64 " enqueues\n",
              g_prog, f->t[i].label, f->t[i].name, tfq_tf_dispatch_rows(f->d, i),
              tfq_tf_dispatch_batches(f->d, i));
  }
  if (o->acks) {
    acks_stats k;
    if (acks_count(f, o->unit, o->attempt, &k, st) != TFQ_OK)
      warnx_("acknowledgement counts: %s", tfq_status_message(st));
    else if (o->stats)
      fprintf(stderr,
              "%s: stats: acks: sent %" PRId64 ", re-sent %" PRId64 ", acknowledged %" PRId64
              " (%" PRId64 " records), duplicates %" PRId64 " records (%" PRId64
              " from earlier attempts), workers lost %" PRId64 ", resumed at batch %" PRId64
              ", checkpoints %" PRId64 "\n",
              g_prog, k.sent, k.resent, k.acked, k.acked_rows, k.dup_records, k.prior_rows,
              k.dead_workers, f->resumed, k.checkpoints);
  }
  if (!o->quiet && o->feeders > 1 && !closed)
    warnx_("unit %" PRId64 " done (%" PRId64 " of %" PRId64
           " units); the last feeder closes the queues",
           o->unit, ndone, o->feeders);

  /* Done.  Nothing is freed: closing a TF session to a worker that has already stopped (after
   * its OutOfRange) retries until --timeout-ms, and the process ends here anyway. */
  leave(EXIT_OK);
}
