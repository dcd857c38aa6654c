/* tfq-cat's record tools and the options that go with them (tools/ only): --count, --index,
 * --write-index, --use-index, --shard.  Their options are taken out of argv before the shared
 * parser (tfq_cat_args.c) sees the rest (cat_args_b.c); counting and indexing are the library's
 * tfq_record_count and tfq_tfrecord_scan (tfq/reader.h), called by cat_count.c.
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

/* Adds --use-index and --shard to the pipeline's options (usage error on a bad pair). */
void catb_pipeline_options(const cat_b_opts *b, tfq_pipeline_options *po);

#endif
