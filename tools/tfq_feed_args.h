/* tfq-feed's command line (tools/tfq_feed_args.c): tfq-cat's reading options through the same
 * parser (tfq_cat_args.h), its cluster options, its --help text.  Private to tools/.
 * Thread-safety: none (getopt_long's globals). */
#ifndef TFQ_FEED_ARGS_H
#define TFQ_FEED_ARGS_H

#include <stdint.h>

#include "tfq_cat_args.h"

/* tfq-feed's options that tfq-cat's `options` lacks. */
typedef struct feed_more {
  int64_t max_bad_records;  /* --max-bad-records (default 0; -1 no limit) */
  int deterministic;        /* --deterministic */
  const char *checkpoint;   /* --checkpoint DIR, or NULL */
  int64_t checkpoint_every; /* --checkpoint-every M (default 1) */
} feed_more;

/* The values feed_parse_options() set. */
const feed_more *feed_more_options(void);

/* The --help text. */
extern const char feed_usage_text[];

/* Parses argv like cat_parse_options() with tfq-feed's options and defaults (batch size 1024,
 * min_after_dequeue 10000, queue "tfq_feed", timeout 60 s, every batch: no -n/-o/--keys/
 * --drop-remainder); --feeders defaults to N of --shard. */
cat_args_status feed_parse_options(int argc, char **argv, options *o, int *first_operand,
                                   char **msg);

#endif
