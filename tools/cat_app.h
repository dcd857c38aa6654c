/* tfq-cat's private header (tools/ only, never installed; public tfq headers only): the state
 * its files share, the helpers they all use, and the pipeline calls of tfq-cat.c that the others
 * need.  The files:
 *   tfq-cat.c     main, the input files, the pipeline (reader ops, work units, keys), signals,
 *                 progress
 *   cat_stdin.c   standard input: the prefix for inference, the memfd, the pump thread
 *   cat_infer.c   CSV columns: the sample, type inference, names, the decode_csv options
 *   cat_example.c tf.train.Example input: --features, detection and inference, the columns
 *   cat_example_op.c  the reader op that parses Examples (parse_example) and enqueues rows
 *   cat_output.c  printing batches: table, jsonl, csv
 *   cat_util.c    the helpers below (messages, exits, allocation that never fails)
 *   tfq_cat_args.c  the option parser (see tfq_cat_args.h)
 * Thread-safety: the main thread only, unless a function says otherwise. */
#ifndef TFQ_TOOLS_CAT_APP_H
#define TFQ_TOOLS_CAT_APP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <tfq/producer.h>
#include <tfq/tfq.h>

#include "tfq_cat_args.h"

/* Records read from the first file to infer the CSV types (and the Example features). */
#define INFER_ROWS 100
/* CSV: fewer for wide rows, INFER_VALUES values (the first record's fields times the records),
 * but never fewer than INFER_MIN_ROWS records.  Rows of up to 1310 fields keep all INFER_ROWS;
 * for wider ones inference (a split and a parse of each value, and a decode_csv of the sample
 * unless it is plain: cat_infer.c) stays a few per cent of decoding a file of such rows. */
#define INFER_VALUES (1 << 17)
#define INFER_MIN_ROWS 10

/* Exit codes: 0 done, 1 a data or I/O error, 2 a usage error (docs/tfq-cat.md, "Errors and exit
 * codes"). */
enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

/* ---- helpers (cat_util.c) ---- */

/* The tool's name for messages ("tfq-cat", "tfq-feed"); each main sets it first. */
extern const char *g_prog;

/* "tfq-cat: <message>\n" on standard error. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, then the --help hint; exits with EXIT_USAGE. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "out of memory"; exits with EXIT_DATA. */
_Noreturn void die_oom(void);
/* malloc, calloc, realloc, strndup and strdup that never return NULL (they call die_oom). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrndup(const char *s, size_t n);
char *xstrdup(const char *s);
/* Writes all n bytes (retrying on EINTR); 0, or -1 with errno set.  Thread-safe. */
int write_all(int fd, const char *p, size_t n);
/* CLOCK_MONOTONIC in seconds.  Thread-safe. */
double now_s(void);

#include "sbuf.h"

/* ---- the state ---- */

typedef struct {
  const char *display; /* the operand as given ("-" for standard input) */
  char *path;          /* what the readers open (the operand, or /dev/fd/N for stdin) */
  tfq_compression comp;
  int is_stdin;
  char *sample_path; /* what inference reads (a memfd holding the stdin prefix), or NULL */
  int sample_truncated;
  int is_pipe; /* read_up_to blocks until it has n records: read a batch at a time */
} input_file;

typedef struct worker worker;           /* one reader op (cat_pipeline.c) */
typedef struct cat_example cat_example; /* tf.train.Example input (cat_example.h) */

typedef struct app {
  options o;
  in_format fmt;
  input_file *files;
  size_t nfiles;
  field_spec *fields;
  size_t nfields;
  char **names; /* nfields names */
  tfq_csv_options *csv;
  tfq_spec *spec; /* of the record queue: fields (+ key) */
  tfq_queue *q;   /* RandomShuffleQueue or FIFO */
  tfq_queue *filenames;
  tfq_producer_runner *producer;
  tfq_coord *coord;
  tfq_runner *runner;
  worker *workers;
  int64_t capacity, mad;
  int64_t step_records; /* records a read step takes at most (cat_pipeline.c, size_steps) */
  /* output */
  int64_t batches_out, records_out;
  double fullness_sum;
  int64_t fullness_n;
  int header_done;
  sbuf out;
  int out_error;          /* errno of a failed write to stdout */
  const char *stdin_path; /* to print keys as "-:N" */
  int shard_files;        /* --shard took whole files (else each reader op shards records) */
  /* tf.train.Example input (tfq-cat only; fmt is then FMT_TFRECORD) */
  ex_mode examples; /* from cat_plan; setup_columns() settles EX_DETECT to EX_FORCE or EX_NONE */
  cat_example *ex;  /* the features and columns once known (EX_FORCE), else NULL */
  /* tfq-cat only (tfq-cat.c sets them; tfq-feed leaves them 0: a TF cluster's queues expect one
   * tensor per column, and tfq_feed_worker.py parses the inferred -d) */
  int stack_cols;  /* runs of 2 or more adjacent columns of one dtype (CSV, text, fixed, raw
                    * TFRecord: not Example input) make one [B, k] component of the record queue */
  int spec_repeat; /* the inferred -d prints runs of 3 or more identical entries as N*TYPE */
  /* The record queue's components (pipeline_prepare): without stacking, column c is component c;
   * with it, column c is element col_idx[c] of component col_comp[c], whose per-record shape is
   * [comp_width[col_comp[c]]] (1: a scalar component).  --keys: the keys are component ncomp. */
  size_t ncomp;
  size_t *col_comp;    /* nfields entries, or NULL: column c is component c */
  int64_t *col_idx;    /* nfields entries, or NULL */
  int64_t *comp_width; /* ncomp entries, or NULL */
} app;

/* ---- the pipeline both tools run (cat_pipeline.c) ---- */

/* Compression from the first bytes m[0..n) of a file, then from its name. */
tfq_compression detect_compression(const unsigned char *m, size_t n, const char *name,
                                   in_format fmt);
/* Appends the reader key k[0..n) ("<path>:<n>") with the file as the user named it. */
void display_key(const app *a, const char *k, size_t n, sbuf *out);
/* A reader for a->fmt and `comp`; for_sample: a TextLine reader that skips nothing and, when
 * tf_compat is set, ends a truncated stream silently. */
tfq_code new_reader(const app *a, tfq_compression comp, int for_sample, int tf_compat,
                    tfq_reader **out, tfq_status *st);
/* A one-element work queue holding `path`, closed. */
tfq_code unit_queue(const char *path, size_t len, tfq_queue **out, tfq_status *st);
/* The file whose reader path is `path` (as the status of a failed read names it), or NULL. */
const input_file *find_file(const app *a, const char *path);
/* A reader op's error c (not OK, OUT_OF_RANGE or CANCELLED) named as the user named the file:
 * the message becomes "<file>:<line>: <reason>" (CSV and text, when the status holds a line)
 * or "<file>: <reason>".  Returns c.  Thread-safe. */
tfq_code name_error(const app *a, tfq_code c, tfq_status *st);

/* Starts the thread that turns SIGINT/SIGTERM/SIGHUP into a stop (128+N exit). */
void pipeline_signals(void);
/* The signal that stopped the pipeline, or 0. */
int pipeline_signal(void);
/* After the options are resolved (a->o, a->fmt, a->fields, a->mad, a->capacity): the
 * Coordinator, the input files (with --shard), standard input, the seed, the columns, the record
 * queue a->q, the filename producer (started) and the reader ops (not started).  Returns EXIT_OK
 * or the exit code to leave with (a message was printed). */
int pipeline_prepare(app *a, int argc, char **argv, tfq_status *st);
/* Starts the reader threads. */
tfq_code pipeline_start(app *a, tfq_status *st);
/* Requests a stop, detaches the stdin pump, joins the Coordinator (10 s grace): its error. */
tfq_code pipeline_stop(app *a, tfq_status *st);
/* Frees everything pipeline_prepare made and the app's arrays (everything joined). */
void pipeline_free(app *a);
/* Records enqueued into a->q by every reader thread.  Thread-safe. */
long long records_in(const app *a);
/* /proc/self/io's rchar, or -1. */
long long read_rchar(void);

#endif
