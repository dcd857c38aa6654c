/* tfq-cat: preview the shuffled minibatches a TF1 input pipeline would feed a model.
 *
 * It runs the library's tfq_pipeline (tfq/pipeline.h): the files (or standard input), the format
 * (CSV, text lines, fixed-length, TFRecord, TFRecord of tf.train.Example, detected), the columns
 * (-d, else inferred; Example features from --features, else inferred), shuffle (capacity,
 * min_after_dequeue, seed; deterministic with --seed) or not, reader threads, bad records
 * (--max-bad-records), and prints each batch tfq_pipeline_next() returns, stopping the pipeline
 * as soon as it has printed what was asked, so previewing a few batches of a huge file reads
 * little more than the shuffle buffer.  Errors come from the pipeline with their file, line and
 * record, after every good record before them was printed.
 *
 * This file builds the pipeline's options from the command line and runs the batches, the
 * signals, the progress line and the stats; the other parts: cat_stdin.c (standard input),
 * cat_example.c (--features), cat_output.c (printing), cat_util.c (helpers), tfq_cat_args.c
 * (options); see cat_app.h.  Public headers only.  See tools/tfq-cat.1 and docs/tfq-cat.md. */
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
#include "cat_args_a.h"
#include "cat_b.h"
#include "cat_example.h"
#include "cat_hint.h"
#include "cat_output.h"
#include "cat_stdin.h"

/* Records a read step takes (tfq_pipeline_options_set_step): READ_CHUNK_MAX, within
 * [READ_CHUNK_MIN, ...] of the room the shuffle buffer keeps for its readers (capacity -
 * min_after_dequeue); longer steps for narrow lines: about STEP_BYTES of them, up to
 * READ_CHUNK_NARROW records (size_steps), from the mean line length in the first
 * STEP_SAMPLE_BYTES of the first file (a step costs the consumer a wake-up whatever its size:
 * docs/performance.md, thirteenth pass); about READ_VALUES values at most for wide rows (a
 * step of 2,048 rows of thousands of fields would take tens of MB). */
#define READ_CHUNK_MIN 256
#define READ_CHUNK_MAX 2048
#define READ_CHUNK_NARROW 16384
#define STEP_BYTES ((int64_t)160 << 10)
#define STEP_SAMPLE_BYTES ((size_t)64 << 10)
#define READ_VALUES (1 << 20)

/* --count, --index, --use-index, --shard (cat_args_b.c) */
static cat_b_opts g_b;

/* ---- signals: SIGINT, SIGTERM, SIGHUP stop the pipeline (exit 128+N) ---------------------- */

static atomic_int g_signal;
static _Atomic(tfq_pipeline *) g_pipeline;

static void *signal_main(void *arg) {
  sigset_t *set = arg;
  int sig;
  for (;;) {
    if (sigwait(set, &sig)) continue;
    atomic_store(&g_signal, sig);
    tfq_pipeline *p = atomic_load(&g_pipeline);
    if (!p) _exit(128 + sig);
    tfq_pipeline_stop(p); /* the consumer's tfq_pipeline_next() returns TFQ_CANCELLED */
    pump_detach_reader(); /* a reader blocked on the stdin pump's pipe sees its end */
    /* A clean stop takes milliseconds; do not hang on a stuck input. */
    struct timespec ts = {5, 0};
    nanosleep(&ts, NULL);
    _exit(128 + sig);
  }
  return NULL;
}

static void start_signals(void) {
  /* One thread sigwaits; every other thread has them blocked. */
  static sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  pthread_t th;
  if (pthread_create(&th, NULL, signal_main, &sigs) == 0) pthread_detach(th);
}

/* ---- progress (--stats on a terminal) -------------------------------------------------------- */

typedef struct {
  app *a;
  double t0;
  atomic_int done;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  double delay; /* seconds before the first line (the terminal's default: 2) */
  int shown;
} progress_ctx;

static void *progress_main(void *arg) {
  progress_ctx *pc = arg;
  tfq_status *st = tfq_status_new();
  pthread_mutex_lock(&pc->mu);
  while (!atomic_load(&pc->done)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&pc->cv, &pc->mu, &ts);
    if (atomic_load(&pc->done)) break;
    tfq_pipeline_stats ps = {.size = sizeof ps};
    if (!st || tfq_pipeline_get_stats(pc->a->p, &ps, st) != TFQ_OK) continue;
    double dt = now_s() - pc->t0;
    if (dt < pc->delay) continue; /* the default: long runs only */
    pc->shown = 1;
    fprintf(stderr,
            "\r\033[K" PROG ": %" PRId64 " records read, %.0f/s, queue %" PRId64 "/%" PRId64,
            ps.records_read, dt > 0 ? (double)ps.records_read / dt : 0.0, ps.buffer_records,
            pc->a->capacity);
  }
  pthread_mutex_unlock(&pc->mu);
  tfq_status_free(st);
  return NULL;
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

/* /proc/self/io's rchar, or -1. */
static long long read_rchar(void) {
  FILE *f = fopen("/proc/self/io", "r");
  if (!f) return -1;
  char line[128];
  long long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "rchar:", 6) == 0) v = strtoll(line + 6, NULL, 10);
  fclose(f);
  return v;
}

/* ---- the input files ------------------------------------------------------------------------- */

/* The operands (standard input when there is none): each file must open (every failure is
 * reported, then exit 1); standard input is set up by cat_stdin.c. */
static void check_files(app *a, int argc, char **argv, int need_sample) {
  int nops = argc - optind;
  a->nfiles = nops > 0 ? (size_t)nops : 1;
  a->files = xcalloc(a->nfiles, sizeof *a->files);
  int nstdin = 0, bad = 0;
  for (size_t i = 0; i < a->nfiles; i++) {
    input_file *f = &a->files[i];
    f->display = nops > 0 ? argv[optind + (int)i] : "-";
    if (strcmp(f->display, "-") == 0) {
      f->is_stdin = 1;
      if (++nstdin > 1) usage_error("standard input ('-') may be named only once");
      continue;
    }
    int fd = open(f->display, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
      warnx_("%s: %s", f->display, strerror(errno));
      bad = 1;
      continue;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      warnx_("%s: %s", f->display, strerror(EISDIR));
      bad = 1;
    }
    close(fd);
    f->path = xstrdup(f->display);
  }
  if (bad) exit(EXIT_DATA);
  for (size_t i = 0; i < a->nfiles; i++)
    if (a->files[i].is_stdin) {
      setup_stdin(&a->files[i], &a->o, a->fmt, need_sample && i == 0);
      a->stdin_path = a->files[i].path;
    }
}

/* The number of fields of the first line of s[0..n) (split at the delimiter, quotes ignored):
 * the width of the rows for the step size when the columns are not known yet. */
static int64_t first_line_fields(const unsigned char *s, size_t n, char delim) {
  int64_t k = 1;
  for (size_t i = 0; i < n && s[i] != '\n'; i++) k += s[i] == (unsigned char)delim;
  return k;
}

/* The records a read step takes at most: READ_CHUNK_MAX; for lines (CSV, text) of a mean length
 * under 40 bytes in the first STEP_SAMPLE_BYTES of a plain first file, about STEP_BYTES of them
 * (at most READ_CHUNK_NARROW); for wide CSV rows about READ_VALUES values.  A first file shorter
 * than the sample, standard input, compressed or unreadable here keeps READ_CHUNK_MAX, and so
 * does a seeded shuffle with one reader (TF's capacity rule, widen_capacity). */
static int64_t step_records(const app *a, const cat_plan *plan) {
  const options *o = &a->o;
  int64_t step = READ_CHUNK_MAX, nfields = (int64_t)(o->nselect ? o->nselect : plan->nfields);
  if ((a->fmt != FMT_CSV && a->fmt != FMT_TEXT) || a->nfiles == 0 || a->files[0].is_stdin)
    return step;
  int fd = open(a->files[0].path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return step;
  unsigned char *buf = xmalloc(STEP_SAMPLE_BYTES);
  ssize_t n = pread(fd, buf, STEP_SAMPLE_BYTES, 0);
  close(fd);
  tfq_compression comp =
      o->compression != COMP_AUTO
          ? (tfq_compression)o->compression
          : tfq_compression_detect(buf, n > 0 ? (size_t)n : 0, a->files[0].path, 0);
  if (n > 0 && comp == TFQ_COMPRESSION_NONE) {
    if (a->fmt == FMT_CSV && !nfields) nfields = first_line_fields(buf, (size_t)n, o->field_delim);
    int seeded_one = o->shuffle && o->seed_set && o->threads == 1;
    if (n == (ssize_t)STEP_SAMPLE_BYTES && !seeded_one) {
      int64_t lines = 0, last = -1;
      for (const unsigned char *p = buf, *e = buf + n; (p = memchr(p, '\n', (size_t)(e - p)));
           p++) {
        lines++;
        last = p - buf;
      }
      if (lines >= 16) { /* records = STEP_BYTES / mean line length */
        int64_t k = STEP_BYTES * lines / (last + 1);
        if (k >= 2 * READ_CHUNK_MAX) step = k > READ_CHUNK_NARROW ? READ_CHUNK_NARROW : k;
      }
    }
  }
  free(buf);
  if (a->fmt == FMT_CSV && nfields > READ_VALUES / READ_CHUNK_MAX) {
    step = READ_VALUES / nfields;
    if (step < 1) step = 1;
  }
  return step;
}

/* The default capacity: room for one whole read step per reader above min_after_dequeue, where
 * TF's rule (mad + (threads + 2) batches; 3 batches without shuffling) leaves less (readers
 * then hand over whole steps instead of waiting for room half-way; docs/performance.md, sixth
 * pass).  A shuffle with --seed and one reader keeps TF's rule (the deterministic mode draws
 * from a full buffer: the capacity is part of its order).  A given --capacity is kept. */
static void widen_capacity(app *a, int64_t step) {
  const options *o = &a->o;
  if (o->capacity >= 0 || (o->shuffle && o->seed_set && o->threads == 1)) return;
  int64_t readers = o->shuffle ? o->threads : 2;
  int64_t room = readers > INT64_MAX / step ? INT64_MAX : readers * step;
  int64_t base = o->shuffle ? a->mad : 0;
  if (a->capacity - base < room) a->capacity = base > INT64_MAX - room ? INT64_MAX : base + room;
}

/* ---- the pipeline ---------------------------------------------------------------------------- */

/* A skipped bad record (--max-bad-records), with the file as the user named it. */
static void bad_record(void *ctx, const char *where, const char *reason) {
  const app *a = ctx;
  size_t pl = a->stdin_path ? strlen(a->stdin_path) : 0;
  if (pl && strncmp(where, a->stdin_path, pl) == 0 && (where[pl] == ':' || !where[pl]))
    fprintf(stderr, PROG ": skipped bad record -%s: %s\n", where + pl, reason);
  else
    fprintf(stderr, PROG ": skipped bad record %s: %s\n", where, reason);
}

static tfq_pipeline_options *pipeline_options(app *a, const cat_plan *plan, cat_example *ex,
                                              tfq_status *st) {
  const options *o = &a->o;
  tfq_pipeline_options *po;
  if (tfq_pipeline_options_new(&po, st)) die_oom();
  tfq_format fmt = TFQ_FORMAT_CSV;
  switch (a->fmt) {
    case FMT_TEXT: fmt = TFQ_FORMAT_TEXT; break;
    case FMT_FIXED: fmt = TFQ_FORMAT_FIXED_LENGTH; break;
    case FMT_TFRECORD:
      fmt = plan->examples == EX_FORCE    ? TFQ_FORMAT_EXAMPLES
            : plan->examples == EX_DETECT ? TFQ_FORMAT_TFRECORD_AUTO
                                          : TFQ_FORMAT_TFRECORD;
      break;
    default: break;
  }
  tfq_pipeline_options_set_format(po, fmt);
  if (o->compression != COMP_AUTO)
    tfq_pipeline_options_set_compression(po, (tfq_compression)o->compression);
  for (size_t i = 0; i < a->nfiles; i++)
    if (tfq_pipeline_options_add_file(po, a->files[i].path, st)) die_oom();
  if (a->nfiles && a->files[0].sample_path &&
      tfq_pipeline_options_set_sample_file(po, a->files[0].sample_path, st))
    die_oom();
  if (a->fmt == FMT_CSV) {
    if (o->record_defaults && tfq_pipeline_options_set_columns(po, o->record_defaults, st))
      usage_error("-d: %s", tfq_status_message(st));
    tfq_pipeline_options_set_field_delim(po, o->field_delim);
    tfq_pipeline_options_set_use_quote_delim(po, !o->no_quote_delim);
    if (o->na_value && tfq_pipeline_options_set_na_value(po, o->na_value, st)) die_oom();
    if (o->nselect && tfq_pipeline_options_set_select_cols(po, o->select_cols, o->nselect, st))
      die_oom();
    /* the header: --header, --no-header, else detected (line 1 with --skip-header-lines) */
    tfq_pipeline_options_set_header(po, o->header < 0 && o->skip_header_lines > 0 ? 1 : o->header);
  }
  if (a->fmt == FMT_FIXED)
    tfq_pipeline_options_set_fixed_length(po, o->record_bytes, o->header_bytes, o->footer_bytes,
                                          o->hop_bytes);
  if (ex) tfq_pipeline_options_set_features(po, ex->cfg);
  if (o->infer_rows > 0) tfq_pipeline_options_set_infer_rows(po, o->infer_rows);
  /* each record's own rows; padded to the batch's longest, as TF's, when a padding is given */
  tfq_pipeline_options_set_ragged_sequences(po, !(ex && ex->padded));
  tfq_pipeline_options_set_skip_header_lines(po, o->skip_header_lines);
  tfq_pipeline_options_set_keys(po, o->keys);
  tfq_pipeline_options_set_batch_size(po, o->batch_size);
  tfq_pipeline_options_set_drop_remainder(po, o->drop_remainder);
  tfq_pipeline_options_set_shuffle(po, o->shuffle);
  tfq_pipeline_options_set_seed(po, o->seed);
  tfq_pipeline_options_set_num_epochs(po, o->num_epochs);
  tfq_pipeline_options_set_num_threads(po, (int)o->threads);
  tfq_pipeline_options_set_max_bad_records(po, o->max_bad_records);
  tfq_pipeline_options_set_bad_record_fn(po, bad_record, a);
  /* --seed: the batches are a function of the input, the options and the seed */
  int det = o->shuffle && o->seed_set;
  tfq_pipeline_options_set_deterministic(po, det);
  catb_pipeline_options(&g_b, po);
  int64_t step = step_records(a, plan);
  widen_capacity(a, step);
  if (o->shuffle) {
    tfq_pipeline_options_set_capacity(po, a->capacity);
    tfq_pipeline_options_set_min_after_dequeue(po, a->mad);
  }
  /* a step waits for its records: a pipe is read a batch at a time, so that a batch prints as
   * soon as it is in */
  if (!det) {
    int64_t room = a->capacity - (o->shuffle ? a->mad : 0);
    if (room < READ_CHUNK_MIN) room = READ_CHUNK_MIN;
    if (room < step) step = room;
  }
  for (size_t i = 0; i < a->nfiles; i++)
    if (a->files[i].is_pipe && o->batch_size < step) step = o->batch_size;
  tfq_pipeline_options_set_step(po, step);
  return po;
}

/* The records of batch b: the dim 0 of a dense column, the rows of a sparse one (its
 * dense_shape[0]) or of a ragged one (its splits, minus one). */
static int64_t batch_rows(const tfq_pipeline *p, const tfq_tuple *b) {
  size_t s = tfq_pipeline_column_slot(p, 0);
  if (tfq_pipeline_column_is_sparse(p, 0))
    return ((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(b, s + 2)))[0];
  if (tfq_pipeline_column_is_ragged(p, 0)) return tfq_tensor_dim(tfq_tuple_get(b, s + 1), 0) - 1;
  return tfq_tensor_dim(tfq_tuple_get(b, s), 0);
}

/* The pipeline's error with standard input named "-"; after a late type error in an inferred
 * column, the -d that reads it (type_error_hint). */
static void print_error(const app *a, const tfq_status *st) {
  const char *m = tfq_status_message(st);
  size_t pl = a->stdin_path ? strlen(a->stdin_path) : 0;
  if (!pl) {
    warnx_("%s", m);
  } else {
    sbuf b = {0};
    for (const char *q; (q = strstr(m, a->stdin_path)) != NULL; m = q + pl) {
      sb_add(&b, m, (size_t)(q - m));
      sb_putc(&b, '-');
    }
    sb_puts(&b, m);
    warnx_("%s", b.p);
    free(b.p);
  }
  char *hint = type_error_hint(a, tfq_status_message(st), tfq_status_line(st));
  if (hint) warnx_("%s", hint);
  free(hint);
}

/* The columns printed: Example features in the --features order, else the pipeline's, without
 * the key column. */
static void plan_columns(app *a, const cat_example *ex) {
  const tfq_pipeline *p = a->p;
  size_t n = tfq_pipeline_num_columns(p) - (a->o.keys ? 1 : 0);
  a->key_col = n;
  a->ncols = n;
  a->col = xcalloc(n ? n : 1, sizeof *a->col);
  a->names = xcalloc(n ? n : 1, sizeof *a->names);
  for (size_t c = 0; c < n; c++) {
    size_t pc = c;
    if (ex && a->examples && c < ex->ncols)
      for (size_t k = 0; k < n; k++)
        if (strcmp(tfq_pipeline_column_name(p, k), ex->cols[c].name) == 0) pc = k;
    a->col[c] = pc;
    a->names[c] = tfq_pipeline_column_name(p, pc);
  }
}

/* ---- main ------------------------------------------------------------------------------------ */

/* Reports a failed cat_parse_options / cat_resolve as tfq-cat always has, and exits. */
static _Noreturn void args_failed(cat_args_status as, char *msg) {
  switch (as) {
    case CAT_ARGS_HELP:
      cat_print_help(stdout);
      fputs(catb_usage_text, stdout);
      exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
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
    cat_args_status as = catb_take_options(&argc, argv, &g_b, &msg);
    if (as != CAT_ARGS_OK) args_failed(as, msg);
    as = cat_parse_options(argc, argv, &a->o, &first_operand, &msg);
    if (as != CAT_ARGS_OK) args_failed(as, msg);
  }
  options *o = &a->o;
  if (o->stats && tfq_set_allocator(count_malloc, count_realloc, free) != TFQ_OK) die_oom();
  if (optind >= argc && isatty(STDIN_FILENO))
    usage_error("no input: name a FILE, or pipe data into standard input");
  if (g_b.count || g_b.index || g_b.write_index) return catb_run(&g_b, o, argc, argv, optind);

  start_signals();

  /* The format: -f, else the first named file's extension; -d implies csv. */
  const char *first = optind < argc ? argv[optind] : "-";
  if (g_b.select_names && o->format == FMT_AUTO) o->format = FMT_CSV;
  sniff_format(o, first);
  if (g_b.schema) o->shuffle = 0; /* no seed note */
  if (g_b.sample) {               /* the whole input, in input order: the reservoir draws */
    o->shuffle = 0;
    o->batches = 0;
  }
  cat_plan plan;
  char *msg;
  cat_args_status as = cat_resolve(o, first, &plan, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  a->fmt = plan.fmt;
  a->mad = plan.mad;
  a->capacity = plan.capacity;
  /* usage errors before any file is read */
  cat_example *ex = o->features ? example_features(o->features) : NULL;

  int need_sample =
      a->fmt == FMT_CSV && (!o->record_defaults || o->skip_header_lines > 0 || o->header);
  if (plan.examples != EX_NONE && !ex) need_sample = 1; /* Example detection or inference */
  if (g_b.select_names) need_sample = 1;                /* the names are looked up in the sample */
  check_files(a, argc, argv, need_sample);
  if (g_b.select_names) select_by_name(a, g_b.select_names);

  if (!o->seed_set) {
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
      s = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    o->seed = s & (((uint64_t)1 << 63) - 1);
    if ((o->shuffle || g_b.sample) && !o->quiet)
      warnx_("seed %" PRIu64 " (--seed=%" PRIu64 " repeats the order with -j 1)", o->seed, o->seed);
  }

  /* The run's status: kept in a static, as it lives until the process ends (every return of
   * main below, whose exit a leak check would otherwise report). */
  static tfq_status *st;
  st = tfq_status_new();
  if (!st) die_oom();
  tfq_pipeline_options *po = pipeline_options(a, &plan, ex, st);
  cat_fields_free(plan.fields, plan.nfields);
  tfq_code c = tfq_pipeline_new(po, &a->p, st);
  tfq_pipeline_options_free(po);
  if (c) {
    const char *m = tfq_status_message(st);
    if (c == TFQ_INVALID_ARGUMENT && strncmp(m, "no features to infer", 20) == 0)
      usage_error("no features to infer from the first records of %s: give --features",
                  a->files[0].display);
    print_error(a, st);
    return c == TFQ_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_DATA;
  }
  tfq_pipeline *p = a->p;
  a->examples = tfq_pipeline_format(p) == TFQ_FORMAT_EXAMPLES;
  if (!o->quiet) {
    if (a->fmt == FMT_CSV && o->header < 0 && o->skip_header_lines == 0 && tfq_pipeline_header(p))
      warnx_("taking line 1 of %s as a header (--no-header to read it as data)",
             a->files[0].display);
    if (a->fmt == FMT_CSV && !o->record_defaults && tfq_pipeline_columns_spec(p))
      warnx_("inferred -d '%s'", tfq_pipeline_columns_spec(p));
    if (a->examples && !ex) {
      if (tfq_pipeline_features_nul_keys(p))
        warnx_("feature keys holding a NUL byte cannot be requested: left out");
      warnx_("inferred --features '%s'", tfq_pipeline_features_spec(p));
    }
    if (tfq_pipeline_first_non_example(p) >= 0)
      warnx_("%s: record %" PRId64
             " is not a tf.train.Example: printing the records' bytes (-f example parses them)",
             a->files[0].display, tfq_pipeline_first_non_example(p));
  }
  plan_columns(a, ex);
  if (g_b.schema) { /* the columns, then exit: nothing more is read */
    int rc = print_schema(a);
    tfq_pipeline_stop(p);
    pump_detach_reader();
    tfq_pipeline_free(p);
    example_free(ex);
    return rc;
  }
  cat_sample *smp = g_b.sample ? sample_new(p, g_b.sample, o->seed) : NULL;
  atomic_store(&g_pipeline, p);
  if (atomic_load(&g_signal)) return 128 + atomic_load(&g_signal);

  double t0 = now_s();
  long long rchar0 = read_rchar();
  if ((c = tfq_pipeline_start(p, st))) {
    print_error(a, st);
    return EXIT_DATA;
  }
  progress_ctx pc = {a, t0, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  pthread_t progress_th;
  int progress = 0;
  /* --stats or --progress on a terminal; by default there too, after 2 s (--no-progress: never) */
  int want_progress = g_b.progress > 0 || (g_b.progress == 0 && (o->stats || o->batches == 0));
  if (!o->stats && g_b.progress == 0) pc.delay = 2.0;
  if (want_progress && !o->quiet && isatty(STDERR_FILENO) &&
      (o->output == OUT_NONE || !isatty(STDOUT_FILENO))) {
    progress = pthread_create(&progress_th, NULL, progress_main, &pc) == 0;
    if (!progress) warnx_("no progress line: cannot start its thread");
  }

  /* Batches. */
  int epipe = 0, data_error = 0;
  double first_batch_s = -1;
  long long allocs_first = 0, allocs_last = 0;
  int64_t records_first = 0;
  /* One batch tuple for the whole run: the pipeline refills its tensors in place. */
  tfq_tuple *b = NULL;
  if (tfq_tuple_new(tfq_pipeline_num_slots(p), &b, st)) die_oom();
  /* A terminal sees each batch as it comes; asked once (isatty is a system call, ~1% of the
   * consumer's time when asked each batch). */
  const int flush_each = o->batches != 0 || isatty(STDOUT_FILENO);
  tfq_pipeline_stats ps = {.size = sizeof ps};
  while (o->batches == 0 || a->batches_out < o->batches) {
    c = tfq_pipeline_next_into(p, b, st);
    if (c == TFQ_OUT_OF_RANGE || c == TFQ_CANCELLED) break; /* the end, or a stop */
    if (c) {
      if (out_flush(a, 1) && a->out_error == EPIPE) epipe = 1;
      if (!a->out_error) print_error(a, st);
      data_error = 1;
      break;
    }
    int64_t n = batch_rows(p, b);
    if (o->stats && tfq_pipeline_get_stats(p, &ps, st) == TFQ_OK) {
      a->fullness_sum += (double)ps.buffer_records / (double)a->capacity;
      a->fullness_n++;
    }
    if (first_batch_s < 0) {
      first_batch_s = now_s() - t0;
      allocs_first = allocs_now();
      records_first = a->records_out + n;
    }
    if (smp) { /* --sample: offered to the reservoir, printed at the end */
      sample_add(smp, b, n);
      continue;
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
  if (smp && !data_error && !atomic_load(&g_signal)) sample_emit(a, smp);
  sample_free(smp);
  if (!a->out_error && out_flush(a, 1) && a->out_error == EPIPE) epipe = 1;
  /* Empty input (or every record skipped): said, not silent -- in the table, which is for
   * people; on stderr beside csv, jsonl and none, whose stdout a program reads. */
  if (!data_error && !a->out_error && !smp && !atomic_load(&g_signal) && a->records_out == 0) {
    if (o->output == OUT_TABLE) {
      if (write_all(STDOUT_FILENO, "0 records\n", 10) != 0 && errno == EPIPE) epipe = 1;
    } else if (!o->quiet) {
      warnx_("0 records");
    }
  }

  /* Stop: the readers, the stdin pump's reader; the stats before the pipeline goes. */
  tfq_pipeline_stop(p);
  pump_detach_reader();
  if (progress) {
    pthread_mutex_lock(&pc.mu);
    atomic_store(&pc.done, 1);
    pthread_cond_signal(&pc.cv);
    pthread_mutex_unlock(&pc.mu);
    pthread_join(progress_th, NULL);
  }
  if ((o->stats || pc.shown) && !o->quiet && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
  if (tfq_pipeline_get_stats(p, &ps, st) != TFQ_OK) memset(&ps, 0, sizeof ps);
  atomic_store(&g_pipeline, NULL);
  int sig = atomic_load(&g_signal);
  if (sig) _exit(128 + sig); /* the signal thread is exiting too */
  tfq_pipeline_free(p);

  int rc = EXIT_OK;
  if (epipe) {
    rc = EXIT_OK;
  } else if (a->out_error) {
    warnx_("write error: %s", strerror(a->out_error));
    rc = EXIT_DATA;
  } else if (data_error) {
    rc = EXIT_DATA;
  }
  if (o->stats) {
    double dt = now_s() - t0;
    long long rchar1 = read_rchar();
    long long bytes = rchar0 >= 0 && rchar1 >= 0 ? rchar1 - rchar0 : -1;
    fprintf(stderr,
            PROG ": stats: records %" PRId64 ", batches %" PRId64 ", records read %" PRId64
                 ", bytes read %lld, time %.3f s, first batch %.3f s, %.0f records/s, %.1f MB/s, "
                 "queue %.0f%% full at dequeue (capacity %" PRId64 ", min_after_dequeue %" PRId64
                 "), %.4f allocations per record (steady state), bad records %" PRId64 "\n",
            a->records_out, a->batches_out, ps.records_read, bytes, dt,
            first_batch_s < 0 ? 0.0 : first_batch_s, dt > 0 ? (double)a->records_out / dt : 0.0,
            dt > 0 && bytes >= 0 ? (double)bytes / dt / 1e6 : 0.0,
            a->fullness_n ? 100.0 * a->fullness_sum / (double)a->fullness_n : 0.0, a->capacity,
            o->shuffle ? a->mad : 0,
            a->records_out > records_first
                ? (double)(allocs_last - allocs_first) / (double)(a->records_out - records_first)
                : 0.0,
            ps.bad_records);
  }

  /* Teardown (everything is joined). */
  example_free(ex);
  for (size_t i = 0; i < a->nfiles; i++) {
    free(a->files[i].path);
    free(a->files[i].sample_path);
  }
  free(a->files);
  free(a->col);
  free(a->names);
  cat_options_free(o);
  free(a->out.p);
  tfq_status_free(st);
  return rc;
}
