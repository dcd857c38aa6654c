/* tfq-cat's --count, --index, --write-index, --use-index and --shard (see cat_b.h), parsed apart
 * from the shared option table (tfq_cat_args.c, which tfq-feed and the fuzz target share). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat_b.h"

const char catb_usage_text[] =
    "\nRecords and indexes (nothing is decoded):\n"
    "      --count              print the records of each FILE and in all: CSV and text lines as\n"
    "                           TextLineReader counts them (less --skip-header-lines), TFRecord\n"
    "                           records with both CRCs verified; the kind is sniffed from the\n"
    "                           content unless -f names it\n"
    "      --index              print the TFRecord index of the one FILE: \"OFFSET SIZE\" per "
    "record\n"
    "                           (DALI's tfrecord2idx format; a gzip/zlib FILE: offsets into its\n"
    "                           decompressed stream)\n"
    "      --write-index        write that index to FILE.idx beside each FILE\n"
    "      --use-index          read each TFRecord FILE through FILE.idx: --shard then splits "
    "every\n"
    "                           file's records into N contiguous ranges, seeking to its range\n"
    "      --shard I/N          read shard I of N (0 <= I < N): with at least N files every N-th\n"
    "                           file, otherwise every N-th record of each file (with --use-index\n"
    "                           the I-th of N contiguous ranges)\n"
    "\nSchema, sample, progress:\n"
    "      --schema             print the columns (name, type, shape) and the -d or --features\n"
    "                           line to paste, then exit; nothing else is read\n"
    "      --sample N           print N records drawn uniformly from the whole input (reservoir\n"
    "                           sampling, repeatable with --seed), as one batch\n"
    "      --progress, --no-progress\n"
    "                           the progress line on standard error (default: on a terminal,\n"
    "                           after 2 s, when standard output is not one or -o none)\n";

static char *fmt_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_msg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *m = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!m) return NULL;
  va_start(ap, fmt);
  vsnprintf(m, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return m;
}

/* Options of the shared parser whose value may be the next argument. */
static int takes_value(const char *a) {
  static const char *const longs[] = {"format",
                                      "compression",
                                      "skip-header-lines",
                                      "record-bytes",
                                      "header-bytes",
                                      "footer-bytes",
                                      "hop-bytes",
                                      "record-defaults",
                                      "field-delim",
                                      "na-value",
                                      "select-cols",
                                      "batch-size",
                                      "batches",
                                      "capacity",
                                      "min-after-dequeue",
                                      "seed",
                                      "num-epochs",
                                      "threads",
                                      "output",
                                      "features",
                                      "max-bad-records",
                                      "infer-rows",
                                      NULL};
  if (a[0] != '-' || !a[1]) return 0;
  if (a[1] == '-') {
    if (strchr(a, '=')) return 0;
    for (const char *const *l = longs; *l; l++)
      if (strcmp(a + 2, *l) == 0) return 1;
    return 0;
  }
  /* a cluster of short options: the first that takes a value takes the rest, or the next */
  for (const char *p = a + 1; *p; p++)
    if (strchr("fzdbnjo", *p)) return p[1] == '\0';
  return 0;
}

/* A --select-cols value with an entry that is not an integer (a name).  Integers, negative ones
 * included, and empty entries stay with the numeric parser, whose errors are TF's ("select_cols
 * contains negative values."). */
static int has_name(const char *v) {
  for (const char *s = v;;) {
    size_t len = strcspn(s, ","), sign = len > 0 && (*s == '-' || *s == '+');
    size_t digits = strspn(s + sign, "0123456789");
    if (len > 0 && (digits == 0 || sign + digits != len)) return 1;
    if (!s[len]) return 0;
    s += len + 1;
  }
}

static int parse_shard(const char *s, cat_b_opts *b) {
  char *e;
  errno = 0;
  long long i = strtoll(s, &e, 10);
  if (errno || e == s || *e != '/' || i < 0) return 0;
  const char *t = e + 1;
  long long n = strtoll(t, &e, 10);
  if (errno || e == t || *e || n < 1 || i >= n) return 0;
  b->shard_i = i;
  b->shard_n = n;
  b->shard_set = 1;
  return 1;
}

cat_args_status catb_take_options(int *argc, char **argv, cat_b_opts *b, char **msg) {
  memset(b, 0, sizeof *b);
  b->shard_n = 1;
  int out = 1, n = *argc, i = 1;
  for (; i < n; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) break;
    int *flag = strcmp(a, "--count") == 0         ? &b->count
                : strcmp(a, "--index") == 0       ? &b->index
                : strcmp(a, "--write-index") == 0 ? &b->write_index
                : strcmp(a, "--use-index") == 0   ? &b->use_index
                                                  : NULL;
    if (flag) {
      *flag = 1;
      continue;
    }
    if (strcmp(a, "--progress") == 0 || strcmp(a, "--no-progress") == 0) {
      b->progress = a[2] == 'n' ? -1 : 1;
      continue;
    }
    if ((strcmp(a, "--select-cols") == 0 && i + 1 < n && has_name(argv[i + 1])) ||
        (strncmp(a, "--select-cols=", 14) == 0 && has_name(a + 14))) {
      b->select_names = a[13] == '=' ? a + 14 : argv[++i];
      continue;
    }
    if (strcmp(a, "--schema") == 0) {
      b->schema = 1;
      continue;
    }
    if (strcmp(a, "--sample") == 0 || strncmp(a, "--sample=", 9) == 0) {
      const char *v = a[8] == '=' ? a + 9 : (i + 1 < n ? argv[++i] : NULL);
      char *e;
      errno = 0;
      long long k = v ? strtoll(v, &e, 10) : 0;
      if (!v || errno || e == v || *e || k < 1) {
        *msg = fmt_msg("invalid --sample '%s' (expected a count N >= 1)", v ? v : "");
        return *msg ? CAT_ARGS_USAGE : CAT_ARGS_NOMEM;
      }
      b->sample = k;
      continue;
    }
    if (strcmp(a, "--shard") == 0 || strncmp(a, "--shard=", 8) == 0) {
      const char *v = a[7] == '=' ? a + 8 : (i + 1 < n ? argv[++i] : NULL);
      if (!v) {
        *msg = fmt_msg("option '--shard' requires an argument");
        return *msg ? CAT_ARGS_USAGE : CAT_ARGS_NOMEM;
      }
      if (!parse_shard(v, b)) {
        *msg = fmt_msg("invalid --shard '%s' (expected I/N with 0 <= I < N)", v);
        return *msg ? CAT_ARGS_USAGE : CAT_ARGS_NOMEM;
      }
      continue;
    }
    argv[out++] = argv[i];
    if (takes_value(a) && i + 1 < n) argv[out++] = argv[++i];
  }
  for (; i < n; i++) argv[out++] = argv[i];
  argv[out] = NULL;
  *argc = out;
  int modes = b->count + b->index + b->write_index;
  if (modes > 1) {
    *msg = fmt_msg("--count, --index and --write-index go one at a time");
    return *msg ? CAT_ARGS_USAGE : CAT_ARGS_NOMEM;
  }
  if (modes && (b->use_index || b->shard_set || b->sample || b->schema)) {
    *msg = fmt_msg(
        "--use-index, --shard, --sample and --schema read records: not with --count, "
        "--index or --write-index");
    return *msg ? CAT_ARGS_USAGE : CAT_ARGS_NOMEM;
  }
  return CAT_ARGS_OK;
}
