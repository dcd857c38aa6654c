/* tfq-cat --count, --index and --write-index (see cat_b.h): the library's tfq_record_count and
 * tfq_tfrecord_scan over each input, and what they found printed.  No record is decoded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat_app.h"
#include "cat_b.h"

/* The reader kind -f names, or -1 (sniffed by content). */
static tfq_reader_kind kind_of(const options *o) {
  switch (o->format) {
    case FMT_CSV:
    case FMT_TEXT: return TFQ_READER_TEXT_LINE;
    case FMT_TFRECORD:
    case FMT_EXAMPLE: return TFQ_READER_TFRECORD;
    case FMT_FIXED: usage_error("--count, --index: not for fixed-length records");
    default: return (tfq_reader_kind)-1;
  }
}

/* What the library opens for operand `name` ("-": standard input). */
static const char *open_path(const char *name) {
  return strcmp(name, "-") == 0 ? "/dev/stdin" : name;
}

static tfq_compression comp_of(const options *o) {
  return o->compression == COMP_AUTO ? TFQ_COMPRESSION_AUTO : (tfq_compression)o->compression;
}

/* Standard input's messages say "-", not /dev/stdin. */
static void report(const char *name, const tfq_status *st, int64_t good, const char *what) {
  const char *m = tfq_status_message(st);
  if (strncmp(m, "/dev/stdin", 10) == 0 && strcmp(name, "-") == 0) m += 10;
  warnx_("%s: %s (after %" PRId64 " good %s)", name, m, good, what);
}

static int run_count(const options *o, int nops, char **ops) {
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  int rc = EXIT_OK;
  int64_t total = 0;
  tfq_reader_kind want = kind_of(o);
  /* --header skips line 1 as --skip-header-lines=1 does; a detected header is not looked for */
  int64_t skip = o->header > 0 && o->skip_header_lines < 1 ? 1 : o->skip_header_lines;
  for (int i = 0; i < nops; i++) {
    int64_t n = 0;
    tfq_reader_kind got = want;
    tfq_code c = tfq_record_count(open_path(ops[i]), comp_of(o), want, skip, &n, &got, st);
    if (c) {
      report(ops[i], st, n, got == TFQ_READER_TFRECORD ? "records" : "lines");
      rc = EXIT_DATA;
    }
    total += n;
    printf("%s: %" PRId64 " records\n", ops[i], n);
  }
  if (nops > 1) printf("total: %" PRId64 " records\n", total);
  tfq_status_free(st);
  return fflush(stdout) ? EXIT_DATA : rc;
}

/* ---- indexes ---- */

static int index_line(void *ctx, uint64_t off, uint64_t size) {
  return fprintf((FILE *)ctx, "%" PRIu64 " %" PRIu64 "\n", off, size) < 0;
}

/* The index of ops[i] into FILE.idx (through FILE.idx.tmp, renamed when complete). */
static int write_index(const options *o, const char *name, tfq_status *st) {
  if (strcmp(name, "-") == 0) usage_error("--write-index: standard input has no FILE.idx");
  size_t n = strlen(name);
  char *idx = xmalloc(n + 9);
  snprintf(idx, n + 9, "%s.idx.tmp", name);
  FILE *f = fopen(idx, "we");
  int rc = EXIT_OK;
  if (!f) {
    warnx_("%s: %s", idx, strerror(errno));
    free(idx);
    return EXIT_DATA;
  }
  int64_t k = 0;
  tfq_code c = tfq_tfrecord_scan(name, comp_of(o), index_line, f, &k, st);
  int werr = ferror(f);
  if (fclose(f) || werr) {
    warnx_("%s: write error: %s", idx, strerror(errno));
    rc = EXIT_DATA;
  } else if (c) {
    report(name, st, k, "records");
    rc = EXIT_DATA;
  }
  if (rc) {
    unlink(idx);
  } else {
    char *final = xstrndup(idx, n + 4);
    if (rename(idx, final)) {
      warnx_("%s: %s", final, strerror(errno));
      unlink(idx);
      rc = EXIT_DATA;
    } else {
      printf("%s: %" PRId64 " records\n", final, k);
    }
    free(final);
  }
  free(idx);
  return rc;
}

static int run_index(const cat_b_opts *b, const options *o, int nops, char **ops) {
  if (o->format != FMT_AUTO && kind_of(o) != TFQ_READER_TFRECORD)
    usage_error("--index, --write-index: TFRecord files only");
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  int rc = EXIT_OK;
  if (b->index) {
    if (nops != 1) usage_error("--index prints the index of one FILE (--write-index: of each)");
    int64_t k = 0;
    if (tfq_tfrecord_scan(open_path(ops[0]), comp_of(o), index_line, stdout, &k, st) &&
        tfq_status_code(st) != TFQ_CANCELLED) {
      report(ops[0], st, k, "records");
      rc = EXIT_DATA;
    }
    if (fflush(stdout) || ferror(stdout)) rc = errno == EPIPE ? rc : EXIT_DATA;
  } else {
    for (int i = 0; i < nops; i++)
      if (write_index(o, ops[i], st)) rc = EXIT_DATA;
    if (fflush(stdout)) rc = EXIT_DATA;
  }
  tfq_status_free(st);
  return rc;
}

int catb_run(const cat_b_opts *b, const options *o, int argc, char **argv, int first) {
  static char dash[] = "-";
  static char *stdin_op[] = {dash, NULL};
  int nops = argc - first;
  char **ops = nops > 0 ? argv + first : stdin_op;
  if (nops <= 0) nops = 1;
  return b->count ? run_count(o, nops, ops) : run_index(b, o, nops, ops);
}

void catb_pipeline_options(const cat_b_opts *b, tfq_pipeline_options *po) {
  if (b->shard_set) tfq_pipeline_options_set_shard(po, b->shard_i, b->shard_n);
  if (b->use_index) {
    tfq_status *st = tfq_status_new();
    if (!st || tfq_pipeline_options_set_index_suffix(po, ".idx", st)) die_oom();
    tfq_status_free(st);
  }
}
