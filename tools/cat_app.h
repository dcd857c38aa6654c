/* tfq-cat's private header (tools/ only, never installed; public tfq headers only): the state
 * its files share and the helpers they all use (tfq-feed shares the helpers).  tfq-cat runs the
 * library's tfq_pipeline (tfq/pipeline.h); its files only parse the arguments and print:
 *   tfq-cat.c     main: the input files, the pipeline's options, the batches, signals, progress,
 *                 stats
 *   cat_stdin.c   standard input: the prefix for inference (a memfd), the pump thread
 *   cat_example.c --features SPEC, parsed into a tfq_example_config
 *   cat_output.c  printing batches: table, jsonl, csv
 *   cat_hint.c    the -d that reads a file after a late type error
 *   cat_args_a.c  --header, --no-header, --infer-rows (and their --help section)
 *   cat_util.c    the helpers below (messages, exits, allocation that never fails)
 *   tfq_cat_args.c  the option parser (see tfq_cat_args.h)
 * Thread-safety: the main thread only, unless a function says otherwise. */
#ifndef TFQ_TOOLS_CAT_APP_H
#define TFQ_TOOLS_CAT_APP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <tfq/pipeline.h>
#include <tfq/tfq.h>

#include "tfq_cat_args.h"

/* Records the pipeline samples from the first file to infer the CSV types (and the Example
 * features): standard input keeps at least that many lines aside for it (cat_stdin.c). */
#define INFER_ROWS 100

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
  char *path;          /* what the pipeline opens (the operand, or /dev/fd/N for stdin) */
  tfq_compression comp;
  int is_stdin;
  char *sample_path; /* what inference reads (a memfd holding the stdin prefix), or NULL */
  int sample_truncated;
  int is_pipe; /* a pipe: read a batch at a time (a step waits for its records) */
} input_file;

typedef struct app {
  options o;
  in_format fmt;
  input_file *files;
  size_t nfiles;
  tfq_pipeline *p;
  /* the columns printed, in order: pipeline column col[c] named names[c] (Example features in
   * the --features order; the pipeline's are sorted by key) */
  size_t ncols;
  size_t *col;
  const char **names;
  size_t key_col; /* --keys: the pipeline's "key" column */
  int examples;   /* the columns are tf.train.Example features */
  int64_t capacity, mad;
  /* output */
  int64_t batches_out, records_out;
  double fullness_sum;
  int64_t fullness_n;
  int header_done;
  sbuf out;
  int out_error;          /* errno of a failed write to stdout */
  const char *stdin_path; /* to print keys as "-:N" */
} app;

/* Appends the reader key k[0..n) ("<path>:<n>") with the file as the user named it. */
void display_key(const app *a, const char *k, size_t n, sbuf *out);

#endif
