/* tfq-cat: preview the shuffled minibatches a TF1 input pipeline would feed a model.
 *
 * It runs the real tfq pipeline:
 *
 *   string_input_producer(files, num_epochs)            filename queue (FIFO), its QueueRunner
 *     -> N reader threads (QueueRunner ops, the library's tfq_read_decode_step, one reader each):
 *        read_up_to -> decode_csv -> enqueue_many
 *        (tf.train.Example: read_up_to -> parse_example -> enqueue_many, cat_example_op.c)
 *     -> RandomShuffleQueue (capacity, min_after_dequeue, seed)   (FIFO with --no-shuffle)
 *     -> main thread: dequeue_up_to(batch) (dequeue_many with --drop-remainder) -> print
 *
 * and stops the coordinator as soon as it has printed what was asked, so previewing a few
 * batches of a huge file reads little more than the shuffle buffer.
 *
 * Each file's compression is found when it is opened (TFQ_COMPRESSION_AUTO) unless -z names one;
 * errors come from the op with their file, line and record as data (status.h), which this tool
 * prints with the file as the user named it.
 *
 * Public headers only.  The other parts of the tool: cat_stdin.c (standard input), cat_infer.c
 * (CSV columns), cat_example.c and cat_example_op.c (tf.train.Example), cat_output.c (printing),
 * cat_util.c (helpers), tfq_cat_args.c (options); see cat_app.h.  See tools/tfq-cat.1 and
 * docs/tfq-cat.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cat_app.h"
#include "cat_example.h"
#include "cat_output.h"

/* ---- progress ------------------------------------------------------------------------------ */

typedef struct {
  app *a;
  double t0;
} progress_ctx;

static tfq_code progress_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  (void)st;
  progress_ctx *p = ctx;
  app *a = p->a;
  double dt = now_s() - p->t0;
  long long in = records_in(a);
  fprintf(stderr, "\r\033[K" PROG ": %lld records read, %.0f/s, queue %" PRId64 "/%" PRId64, in,
          dt > 0 ? (double)in / dt : 0.0, tfq_queue_size(a->q), a->capacity);
  return TFQ_OK;
}

/* ---- allocation count (--stats) ------------------------------------------------------------
 * With --stats the library allocates through these (tfq_set_allocator, installed before any tfq
 * object exists), which count its malloc and realloc calls; the figure printed is the steady
 * state: calls from the first batch's delivery to the last's, per record delivered after the
 * first batch. */

static atomic_llong g_allocs;

static void *count_malloc(size_t n) {
  atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
  return malloc(n);
}

static void *count_realloc(void *p, size_t n) {
  atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
  return realloc(p, n);
}

static long long allocs_now(void) { return atomic_load_explicit(&g_allocs, memory_order_relaxed); }

/* ---- main ------------------------------------------------------------------------------------ */

/* Reports a failed cat_parse_options / cat_resolve as tfq-cat always has, and exits. */
static _Noreturn void args_failed(cat_args_status as, char *msg) {
  switch (as) {
    case CAT_ARGS_HELP: fputs(cat_usage_text, stdout); exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_VERSION:
      printf(PROG " (tfq) %s\n", tfq_version_string());
      exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_USAGE: usage_error("%s", msg);
    default: die_oom();
  }
}

const char *g_prog = PROG;

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  static app A;
  app *a = &A;
  {
    char *msg;
    int first_operand;
    cat_args_status as = cat_parse_options(argc, argv, &a->o, &first_operand, &msg);
    if (as != CAT_ARGS_OK) args_failed(as, msg);
  }
  options *o = &a->o;
  if (o->stats && tfq_set_allocator(count_malloc, count_realloc, free) != TFQ_OK) die_oom();
  if (optind >= argc && isatty(STDIN_FILENO))
    usage_error("no input: name a FILE, or pipe data into standard input");

  pipeline_signals();

  /* The format: -f, else the first named file's extension; -d implies csv. */
  const char *first = optind < argc ? argv[optind] : "-";
  cat_plan plan;
  char *msg;
  cat_args_status as = cat_resolve(o, first, &plan, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  a->fmt = plan.fmt;
  a->fields = plan.fields;
  a->nfields = plan.nfields;
  a->mad = plan.mad;
  a->capacity = plan.capacity;
  a->examples = plan.examples;
  a->stack_cols = 1;  /* one [B, k] component per run of same-dtype columns (cat_app.h) */
  a->spec_repeat = 1; /* the inferred -d with N*TYPE runs */
  if (o->features) example_features(a, o->features); /* usage errors before any file is read */

  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  int prc = pipeline_prepare(a, argc, argv, st);
  if (prc != EXIT_OK) {
    tfq_status_free(st);
    return prc;
  }
  tfq_code c;
  double t0 = now_s();
  long long rchar0 = read_rchar();
  if ((c = pipeline_start(a, st))) {
    warnx_("%s", tfq_status_message(st));
    return EXIT_DATA;
  }
  progress_ctx pc = {a, t0};
  if (o->stats && !o->quiet && isatty(STDERR_FILENO) &&
      (o->output == OUT_NONE || !isatty(STDOUT_FILENO)))
    if (tfq_coord_loop(a->coord, 100000, progress_step, &pc, "progress", NULL) != TFQ_OK)
      warnx_("no progress line: cannot start its thread");

  /* Batches. */
  int epipe = 0, dq_error = 0;
  tfq_cancel *cancel = tfq_coord_cancel(a->coord);
  double first_batch_s = -1;
  long long allocs_first = 0, allocs_last = 0;
  int64_t records_first = 0;
  /* One batch tuple for the whole run: the queue refills its tensors in place. */
  tfq_tuple *b = NULL;
  if (tfq_tuple_new(tfq_spec_size(tfq_queue_spec(a->q)), &b, st)) die_oom();
  /* A terminal sees each batch as it comes; asked once (isatty is a system call, ~1% of the
   * consumer's time when asked each batch). */
  const int flush_each = o->batches != 0 || isatty(STDOUT_FILENO);
  while (o->batches == 0 || a->batches_out < o->batches) {
    if (o->shuffle && o->seed_set) {
      /* Reproducible order: draw only from a full (or closed) queue, so that the queue's
       * contents at each dequeue do not depend on thread timing. */
      while (!tfq_queue_is_closed(a->q) && tfq_queue_size(a->q) < a->capacity &&
             !tfq_coord_wait_for_stop(a->coord, 200))
        ;
    }
    c = o->drop_remainder
            ? tfq_queue_dequeue_many_into(a->q, o->batch_size, b, cancel, TFQ_NO_TIMEOUT, st)
            : tfq_queue_dequeue_up_to_into(a->q, o->batch_size, b, cancel, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE || c == TFQ_CANCELLED) break; /* the end, or a stop */
    if (c) {
      warnx_("%s", tfq_status_message(st));
      dq_error = 1;
      break;
    }
    int64_t n = tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
    a->fullness_sum += (double)tfq_queue_size(a->q) / (double)a->capacity;
    a->fullness_n++;
    if (first_batch_s < 0) {
      first_batch_s = now_s() - t0;
      allocs_first = allocs_now();
      records_first = a->records_out + n;
    }
    emit_batch(a, b, n);
    allocs_last = allocs_now();
    a->batches_out++;
    a->records_out += n;
    if (out_flush(a, flush_each)) {
      if (a->out_error == EPIPE) epipe = 1;
      break;
    }
  }
  tfq_tuple_free(b);
  if (!a->out_error && out_flush(a, 1) && a->out_error == EPIPE) epipe = 1;

  /* Stop: request_stop (the producer's and the readers' runners cancel their queues), join. */
  tfq_code jc = pipeline_stop(a, st);
  if (o->stats && !o->quiet && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);

  int rc = EXIT_OK;
  int sig = pipeline_signal();
  if (epipe) {
    rc = EXIT_OK;
  } else if (a->out_error) {
    warnx_("write error: %s", strerror(a->out_error));
    rc = EXIT_DATA;
  } else if (jc != TFQ_OK && jc != TFQ_CANCELLED && jc != TFQ_OUT_OF_RANGE) {
    warnx_("%s", tfq_status_message(st));
    rc = EXIT_DATA;
  } else if (sig) {
    rc = 128 + sig;
  } else if (dq_error) {
    rc = EXIT_DATA;
  }
  if (o->stats) {
    double dt = now_s() - t0;
    long long rchar1 = read_rchar();
    long long bytes = rchar0 >= 0 && rchar1 >= 0 ? rchar1 - rchar0 : -1;
    fprintf(stderr,
            PROG ": stats: records %" PRId64 ", batches %" PRId64
                 ", records read %lld, "
                 "bytes read %lld, time %.3f s, first batch %.3f s, %.0f records/s, %.1f MB/s, "
                 "queue %.0f%% full at dequeue (capacity %" PRId64 ", min_after_dequeue %" PRId64
                 "), %.4f allocations per record (steady state)\n",
            a->records_out, a->batches_out, records_in(a), bytes, dt,
            first_batch_s < 0 ? 0.0 : first_batch_s, dt > 0 ? (double)a->records_out / dt : 0.0,
            dt > 0 && bytes >= 0 ? (double)bytes / dt / 1e6 : 0.0,
            a->fullness_n ? 100.0 * a->fullness_sum / (double)a->fullness_n : 0.0, a->capacity,
            o->shuffle ? a->mad : 0,
            a->records_out > records_first
                ? (double)(allocs_last - allocs_first) / (double)(a->records_out - records_first)
                : 0.0);
  }

  /* Teardown (everything is joined). */
  pipeline_free(a);
  tfq_status_free(st);
  return rc;
}
