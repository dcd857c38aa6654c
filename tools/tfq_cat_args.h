/* tfq-cat's command line: option parsing and the checks that need no input file, separated from
 * the job so that they can be called (and fuzzed: tests/fuzz/fuzz_cli_args.c) without running
 * anything.  Private to tools/ (static-linked into tfq-cat and the fuzz target), not part of
 * libtfq.
 *
 * Errors are returned, never exited on: a usage error gives CAT_ARGS_USAGE and a malloc'ed
 * message without the "tfq-cat: " prefix (the caller prints it, then the --help hint).
 * Thread-safety: none (getopt_long's globals); call from one thread at a time. */
#ifndef TFQ_CAT_ARGS_H
#define TFQ_CAT_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/tfq.h>

#define PROG "tfq-cat"

/* FMT_EXAMPLE (-f example) is only ever an option: cat_resolve() turns it into FMT_TFRECORD with
 * cat_plan.examples = EX_FORCE. */
typedef enum {
  FMT_AUTO = -1,
  FMT_CSV = 0,
  FMT_TEXT,
  FMT_TFRECORD,
  FMT_FIXED,
  FMT_EXAMPLE
} in_format;
/* TFRecord records as tf.train.Example: never, when the first records are Examples, always. */
typedef enum { EX_NONE = 0, EX_DETECT, EX_FORCE } ex_mode;
typedef enum { OUT_TABLE = 0, OUT_JSONL, OUT_CSV, OUT_NONE } out_format;
typedef enum { COMP_AUTO = -1 } comp_auto;

/* One -d entry. */
typedef struct {
  tfq_dtype dtype;
  int required;
  char *def; /* default text (strings: unquoted bytes) */
  size_t deflen;
  union {
    float f;
    double d;
    int32_t i32;
    int64_t i64;
  } v;
} field_spec;

/* The options as given (strings borrowed from argv; select_cols owned, see cat_options_free). */
typedef struct {
  in_format format;
  int compression; /* COMP_AUTO or tfq_compression */
  int64_t skip_header_lines;
  int64_t record_bytes, header_bytes, footer_bytes, hop_bytes;
  const char *record_defaults;
  char field_delim;
  int field_delim_set;
  int no_quote_delim;
  const char *na_value;
  int64_t *select_cols;
  size_t nselect;
  int64_t batch_size, batches;
  int shuffle;
  int64_t capacity, min_after_dequeue; /* -1: default */
  int seed_set;
  uint64_t seed;
  int64_t num_epochs;
  int64_t threads;
  int threads_set;
  int drop_remainder;
  out_format output;
  int keys;
  int stats;
  int quiet;
  /* tfq-cat only (zero for tfq-feed) */
  int examples_ok;         /* tf.train.Example input may be decoded (tfq-cat's parser sets it) */
  const char *features;    /* --features SPEC, or NULL (parsed by tools/cat_example.c) */
  int raw;                 /* --raw */
  int64_t max_bad_records; /* --max-bad-records (tfq-feed has its own, tfq_feed_args.h) */
  int header;              /* csv: -1 detect (tfq-cat's default), 0 --no-header, 1 --header */
  int64_t infer_rows;      /* --infer-rows, -1: the pipeline's default */
  /* tfq-feed only (tools/tfq_feed_args.c); zero for tfq-cat */
  const char *cluster;      /* --cluster, or NULL: $TF_CONFIG */
  int to_ps;                /* --to ps (default workers) */
  int rows;                 /* --elements rows (default batches) */
  const char *queue;        /* --queue prefix */
  int64_t queue_capacity;   /* --queue-capacity, 0: default */
  int64_t shard_i, shard_n; /* --shard I/N (0/1: everything) */
  int64_t feeders;          /* --feeders, 0: shard_n */
  int64_t unit;             /* --unit, -1: shard_i */
  int unit_set;
  int64_t timeout_ms;
  int acks;        /* --acks */
  int64_t attempt; /* --attempt */
} options;

typedef enum {
  CAT_ARGS_OK = 0,
  CAT_ARGS_USAGE,   /* *msg: the usage error (exit status 2) */
  CAT_ARGS_HELP,    /* --help seen: print cat_usage_text and exit 0 */
  CAT_ARGS_VERSION, /* --version seen: print the version and exit 0 */
  CAT_ARGS_NOMEM    /* out of memory */
} cat_args_status;

/* What cat_resolve() derives from the options and the first operand. */
typedef struct {
  in_format fmt;      /* never FMT_AUTO */
  field_spec *fields; /* from -d (owned; free with cat_fields_free), or NULL */
  size_t nfields;
  int64_t mad, capacity; /* min_after_dequeue and capacity of the record queue */
  ex_mode examples;      /* TFRecord only: decode tf.train.Example records (tfq-cat only) */
} cat_plan;

/* The --help text. */
extern const char cat_usage_text[];

/* ---- the parser for another tool (tfq-feed: tools/tfq_feed_args.c) ---------------------------
 * The same options with the same meaning, another option table, other defaults, and options of
 * its own handled by `extra` (which returns 0 for a code it does not know). */
struct option;
/* Codes of a mode's own long options start here. */
enum { OPT_EXTRA = 512 };
typedef struct args_mode {
  const char *short_opts;       /* getopt's string, with a leading ':' */
  const char *const *drop;      /* tfq-cat long options the tool does not take (NULL-ended) */
  const struct option *more;    /* the tool's own long options (codes >= OPT_EXTRA) */
  void (*defaults)(options *o); /* after the common defaults */
  int (*extra)(int c, const char *arg, options *o); /* may call args_usage_error */
} args_mode;
cat_args_status args_parse(int argc, char **argv, const args_mode *m, options *o,
                           int *first_operand, char **msg);
/* A usage error inside args_parse / cat_resolve (unwinds to the entry call). */
_Noreturn void args_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A decimal integer option value >= min, or a usage error. */
int64_t args_count(const char *opt, const char *s, int64_t min);

/* Parses argv[1..argc) with getopt_long into *o (defaults first).  On CAT_ARGS_OK *first_operand
 * is the index of the first operand (argv is permuted, operands last).  On CAT_ARGS_USAGE *msg
 * is a malloc'ed message (free it); on any status other than OK, *o holds nothing to free. */
cat_args_status cat_parse_options(int argc, char **argv, options *o, int *first_operand,
                                  char **msg);

/* The checks and defaults that follow parsing: the format (-f, else from `first`, the first
 * operand or "-"; -d implies csv; --features implies example; .tsv sets a tab delimiter), whether
 * TFRecord records are decoded as tf.train.Example (p->examples), options that do not apply,
 * -d's SPEC, --select-cols against -d, the thread count, capacity and min_after_dequeue.
 * Updates o->field_delim and o->threads.  On CAT_ARGS_OK p->fields is owned by the caller. */
cat_args_status cat_resolve(options *o, const char *first, cat_plan *p, char **msg);

/* Frees what cat_parse_options allocated in *o (select_cols).  Idempotent. */
void cat_options_free(options *o);
/* Frees n field specs and the array. */
void cat_fields_free(field_spec *fs, size_t n);

/* Parses f->def as f->dtype into f->v; returns 0 when it is not a whole valid number of that
 * type (strings: 1). */
int parse_default_number(field_spec *f);
/* "float32", "float64", "int32", "int64" or "string". */
const char *spec_type_name(tfq_dtype t);
/* Strips a compression extension (.gz, .zz, .zlib) off name[0..*n); returns the compression
 * it names, or -1. */
int strip_comp_ext(const char *name, size_t *n);
/* The format a file name implies (after a compression extension); *tsv set for .tsv. */
in_format format_from_name(const char *name, int *tsv);

#endif
