/* tfq-cat's record tools and the options that go with them (tools/ only): --count, --index,
 * --write-index, --use-index, --shard (cat_count.c), --sample and --schema (cat_sample.c),
 * --select-cols by name (cat_select.c), --progress, and the format by content (cat_sniff.c).
 * Their options are taken out of argv before the shared parser (tfq_cat_args.c) sees the rest
 * (cat_args_b.c); counting and indexing are the library's tfq_record_count and
 * tfq_tfrecord_scan (tfq/reader.h).
 * Thread-safety: the main thread only. */
#ifndef TFQ_TOOLS_CAT_B_H
#define TFQ_TOOLS_CAT_B_H

#include <stdint.h>
#include <tfq/pipeline.h>

#include "tfq_cat_args.h"

typedef struct {
  int count;       /* --count: records per file and in all, nothing decoded */
  int index;       /* --index: the one input's DALI index on standard output */
  int write_index; /* --write-index: FILE.idx beside each input */
  int use_index;   /* --use-index: TFRecord files are read through FILE.idx */
  int shard_set;   /* --shard I/N */
  int64_t shard_i, shard_n;
  int64_t sample;           /* --sample N: N > 0 */
  int progress;             /* --progress 1, --no-progress -1, else 0 (a terminal's default) */
  int schema;               /* --schema */
  const char *select_names; /* --select-cols with a name in it (else the shared parser's) */
} cat_b_opts;

/* The --help lines of these options. */
extern const char catb_usage_text[];

/* Takes these options (spelled in full: "--count", "--shard I/N" or "--shard=I/N") out of
 * argv[1..*argc) before "--", keeping the others in order; values of the shared parser's options
 * that take one are stepped over.  On CAT_ARGS_USAGE *msg is a malloc'ed message. */
cat_args_status catb_take_options(int *argc, char **argv, cat_b_opts *b, char **msg);

/* --count, --index, --write-index over argv[first..argc) (standard input when none): prints,
 * returns the exit status (0, 1 a data or I/O error; usage errors exit 2). */
int catb_run(const cat_b_opts *b, const options *o, int argc, char **argv, int first);

/* Without -f (and nothing that implies a format), the first input's format by its content
 * (cat_sniff.c): TFRecord by its framing over any name, CSV on standard input or a name that
 * says nothing when the first lines split alike at , TAB ; | or SPACE; with -f csv or a .csv
 * name, a delimiter other than ',' that splits them.  Notes on standard error (not with -q);
 * a binary file read as lines gets a "binary file?" hint.  Updates o->format, o->field_delim,
 * o->field_delim_set.  Standard input's bytes are peeked (stdin_peek), not consumed. */
void sniff_format(options *o, const char *first);

/* --sample N (cat_sample.c): a reservoir of N records over the whole input, seeded. */
struct app;
typedef struct cat_sample cat_sample;
/* A reservoir for p's batches (a usage error for a column of varying length lists). */
cat_sample *sample_new(const tfq_pipeline *p, int64_t n, uint64_t seed);
/* Offers the batch's `rows` records, in input order. */
void sample_add(cat_sample *s, const tfq_tuple *b, int64_t rows);
/* Prints the sample as one batch (emit_batch), in reservoir order. */
void sample_emit(struct app *a, cat_sample *s);
void sample_free(cat_sample *s);
/* --schema: "NAME<TAB>DTYPE[SHAPE]" per printed column (SHAPE: none for a scalar, [d,...] with
 * ? for a sequence's rows, [*] for a list of any length), then the -d or --features line to
 * paste.  Returns the exit status. */
int print_schema(const struct app *a);

/* --select-cols NAMES (cat_select.c): o->select_cols from the names (or numbers) in `names`,
 * looked up among the columns a pipeline over a->files[0]'s sample gives; exits on an unknown
 * name (usage, listing the columns) or an unreadable sample. */
void select_by_name(struct app *a, const char *names);

/* Adds --use-index and --shard to the pipeline's options (usage error on a bad pair). */
void catb_pipeline_options(const cat_b_opts *b, tfq_pipeline_options *po);

#endif
