/* Acceptance: "nothing lost on a bad record" (tfq/pipeline.h, "Bad records").
 *
 * For each input kind, plain and gzip where it makes sense:
 *   CSV       "float32:0,int64:0,string:"; a bad record is a line whose int64 field is "x"
 *             (a decode error: the line alone is bad).
 *   text      gzip only: a plain text file has no bad record at the decode level (every line is
 *             a good record), so the bad record is a read error: the file's gzip stream cut in
 *             the middle (at a sync-flush point, so that exactly the lines before the cut are
 *             readable); the rest of the file is lost.
 *   TFRecord  plain: one payload byte of record k flipped (its CRC fails); gzip: the compressed
 *             stream cut after record k-1 (a sync-flush point).  Read errors: the rest of the
 *             file is lost.
 *   Examples  TFRecord files of tf.train.Example{x: int64}, a FixedLen int64 feature "x" of
 *             shape []; a bad record is the payload "\xff\xff\xff" (a parse error).
 * Every good record carries its own id (file * 1000000 + index) and its values are checked
 * against the generator's model, never against tfq's own output.
 *
 * Case 1 (budget 0): one bad record at a seeded random global position k (1..5000 of ~6000
 * records in 3 files), `runs` runs each, unshuffled with 1 and 2 reader threads and shuffled:
 * exactly the k records before it are delivered (in input order unshuffled; shuffled, as a
 * multiset equal to the records before it in one of the file orders), the same count every
 * run, then the error (file:line for CSV, the file for the others, tfq_status_file() the file),
 * and the same error again on the next call.
 * Case 2 (budget N): N bad records spread over 4 files: every good record once, each bad one
 * reported once, in input order, through the bad-record callback with its 'where', stats
 * bad_records == N, then End of sequence; with N+1 bad records the (N+1)-th stops the run as in
 * case 1.  A read error skips the rest of its file.
 *
 *   bad_records [runs]     (default 20; TFQ_TEST_SEED overrides the generator's seed) */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "pipeline_util.h"

/* snprintf for diagnostics, where truncation is fine (and gcc's truncation analysis is not). */
static void sfmt(char *dst, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, cap, fmt, ap);
  va_end(ap);
}

enum { K_CSV, K_TEXT, K_TFR, K_EX };
#define MAXF 4
#define MAXPERM 24 /* 4! */
#define BATCH 64
#define WHERE_CAP 400

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static int rnd_below(int n) { return (int)(rnd() % (uint64_t)n); }

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    printf("Bail out! out of memory\n");
    exit(1);
  }
  return p;
}

static void *xrealloc(void *p, size_t size) {
  p = realloc(p, size ? size : 1);
  if (!p) {
    printf("Bail out! out of memory\n");
    exit(1);
  }
  return p;
}

static tfq_status *g_st;
static tfq_example_config *g_cfg;
static char g_root[256];

/* ---- the model ------------------------------------------------------------------------------ */

typedef struct fmodel {
  char path[320];
  int n;              /* records written */
  unsigned char *bad; /* per record: an undecodable record (CSV, Examples) */
  int readerr;        /* -1, or the records readable before a read error (text, TFRecord) */
  int64_t *off;       /* TFRecord, Examples: each record's offset in the decompressed stream */
} fmodel;

typedef struct dataset {
  int kind, gz, nfiles;
  char dir[300];
  fmodel f[MAXF];
} dataset;

static int64_t rec_id(int f, int i) { return (int64_t)f * 1000000 + i; }

static int csv_line(char *b, size_t cap, int f, int i, int bad) {
  if (bad) return snprintf(b, cap, "%.1f,x,s%lld", (i + 1) * 0.5, (long long)rec_id(f, i));
  return snprintf(b, cap, "%.1f,%lld,s%lld", (i + 1) * 0.5, (long long)rec_id(f, i),
                  (long long)rec_id(f, i));
}

static int text_line(char *b, size_t cap, int f, int i) {
  return snprintf(b, cap, "t%lld %.*s", (long long)rec_id(f, i), i % 9, "abcdefghi");
}

static int tfr_payload(char *b, size_t cap, int f, int i) {
  return snprintf(b, cap, "r%lld:%.*s", (long long)rec_id(f, i), i % 11, "qqqqqqqqqqq");
}

static size_t put_varint(unsigned char *b, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  b[n++] = (unsigned char)v;
  return n;
}

/* Example{features{feature{key:"x" value{int64_list{value:x}}}}}, hand-encoded. */
static size_t example_bytes(unsigned char *out, int64_t x) {
  unsigned char il[16], ft[24], en[40], fs[48];
  size_t nil = 0, nft = 0, nen = 0, nfs = 0, n = 0;
  il[nil++] = 0x08; /* Int64List.value, varint */
  nil += put_varint(il + nil, (uint64_t)x);
  ft[nft++] = 0x1a; /* Feature.int64_list */
  ft[nft++] = (unsigned char)nil;
  memcpy(ft + nft, il, nil);
  nft += nil;
  en[nen++] = 0x0a; /* map entry: key */
  en[nen++] = 1;
  en[nen++] = 'x';
  en[nen++] = 0x12; /* value */
  en[nen++] = (unsigned char)nft;
  memcpy(en + nen, ft, nft);
  nen += nft;
  fs[nfs++] = 0x0a; /* Features.feature */
  fs[nfs++] = (unsigned char)nen;
  memcpy(fs + nfs, en, nen);
  nfs += nen;
  out[n++] = 0x0a; /* Example.features */
  out[n++] = (unsigned char)nfs;
  memcpy(out + n, fs, nfs);
  return n + nfs;
}

/* ---- writing the files ---------------------------------------------------------------------- */

/* Writes `data` gzip-compressed to `path`; with cut_in <= len, the stream gets a sync flush after
 * cut_in input bytes and the file is then truncated there (the gzip cut in the middle). */
static void write_gz(const char *path, char *data, size_t len, size_t cut_in) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    printf("Bail out! deflateInit2\n");
    exit(1);
  }
  size_t cap = deflateBound(&z, (uLong)len) + 4096;
  unsigned char *out = xcalloc(cap, 1);
  z.next_out = out;
  z.avail_out = (uInt)cap;
  size_t cut_out = 0;
  int cut = cut_in <= len;
  z.next_in = (Bytef *)data;
  if (cut) {
    z.avail_in = (uInt)cut_in;
    if (deflate(&z, Z_SYNC_FLUSH) != Z_OK || z.avail_in != 0) {
      printf("Bail out! deflate (sync flush)\n");
      exit(1);
    }
    cut_out = z.total_out;
    z.avail_in = (uInt)(len - cut_in);
  } else {
    z.avail_in = (uInt)len;
  }
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
    printf("Bail out! deflate (finish)\n");
    exit(1);
  }
  size_t total = z.total_out;
  deflateEnd(&z);
  FILE *fp = fopen(path, "wb");
  if (!fp || fwrite(out, 1, total, fp) != total || fclose(fp) != 0) {
    printf("Bail out! cannot write %s\n", path);
    exit(1);
  }
  free(out);
  if (cut && truncate(path, (off_t)cut_out) != 0) {
    printf("Bail out! truncate %s\n", path);
    exit(1);
  }
}

/* CSV and text: lines, plain or gzip (text: gzip only, cut after line readerr). */
static void write_lines(const dataset *d, const fmodel *m, int f) {
  size_t cap = (size_t)m->n * 64 + 64, len = 0, cut = (size_t)-1;
  char *data = xcalloc(cap, 1);
  for (int i = 0; i < m->n; i++) {
    if (i == m->readerr) cut = len;
    int w = d->kind == K_CSV ? csv_line(data + len, cap - len, f, i, m->bad[i])
                             : text_line(data + len, cap - len, f, i);
    len += (size_t)w;
    data[len++] = '\n';
  }
  if (d->gz) {
    write_gz(m->path, data, len, cut);
  } else {
    FILE *fp = fopen(m->path, "wb");
    if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0) {
      printf("Bail out! cannot write %s\n", m->path);
      exit(1);
    }
  }
  free(data);
}

/* TFRecord and Examples through tfq's writer; a read error at record readerr: plain, a payload
 * byte of it flipped; gzip, the stream cut at a flush after record readerr - 1. */
static void write_records(const dataset *d, fmodel *m, int f) {
  tfq_tfrecord_writer *w;
  die_on(tfq_tfrecord_writer_new(m->path, d->gz ? TFQ_COMPRESSION_GZIP : TFQ_COMPRESSION_NONE, &w,
                                 g_st),
         g_st, "tfrecord writer");
  int64_t off = 0, cut = -1, flip = -1;
  for (int i = 0; i < m->n; i++) {
    char b[96];
    size_t len;
    if (i == m->readerr && d->gz) {
      struct stat sb;
      die_on(tfq_tfrecord_writer_flush(w, g_st), g_st, "flush");
      if (stat(m->path, &sb) != 0) {
        printf("Bail out! stat %s\n", m->path);
        exit(1);
      }
      cut = (int64_t)sb.st_size;
    }
    if (d->kind == K_TFR) {
      len = (size_t)tfr_payload(b, sizeof b, f, i);
    } else if (m->bad[i]) {
      memcpy(b, "\xff\xff\xff", 3);
      len = 3;
    } else {
      len = example_bytes((unsigned char *)b, rec_id(f, i));
    }
    if (i == m->readerr && !d->gz) flip = off + 12 + (int64_t)len / 2;
    m->off[i] = off;
    off += 16 + (int64_t)len;
    die_on(tfq_tfrecord_writer_write(w, b, len, g_st), g_st, "write");
  }
  die_on(tfq_tfrecord_writer_close(w, g_st), g_st, "close");
  tfq_tfrecord_writer_free(w);
  if (cut >= 0 && truncate(m->path, (off_t)cut) != 0) {
    printf("Bail out! truncate %s\n", m->path);
    exit(1);
  }
  if (flip >= 0) {
    FILE *fp = fopen(m->path, "r+b");
    int c;
    if (!fp || fseek(fp, (long)flip, SEEK_SET) != 0 || (c = fgetc(fp)) == EOF ||
        fseek(fp, (long)flip, SEEK_SET) != 0 || fputc(c ^ 0x5a, fp) == EOF || fclose(fp) != 0) {
      printf("Bail out! cannot corrupt %s\n", m->path);
      exit(1);
    }
  }
}

static const char *ext_of(const dataset *d) {
  static const char *e[4][2] = {
      {".csv", ".csv.gz"}, {".txt", ".txt.gz"}, {".tfrecord", ".tfrecord.gz"}, {".ex", ".ex.gz"}};
  return e[d->kind][d->gz];
}

/* A dataset of `nfiles` files of `sizes[f]` records, no bad record yet. */
static void dataset_init(dataset *d, int kind, int gz, int nfiles, const int *sizes) {
  static int serial;
  memset(d, 0, sizeof *d);
  d->kind = kind;
  d->gz = gz;
  d->nfiles = nfiles;
  snprintf(d->dir, sizeof d->dir, "%s/d%03d", g_root, serial++);
  if (mkdir(d->dir, 0700) != 0) {
    printf("Bail out! mkdir %s\n", d->dir);
    exit(1);
  }
  for (int f = 0; f < nfiles; f++) {
    fmodel *m = &d->f[f];
    snprintf(m->path, sizeof m->path, "%s/part-%d%s", d->dir, f, ext_of(d));
    m->n = sizes[f];
    m->bad = xcalloc((size_t)m->n, 1);
    m->off = xcalloc((size_t)m->n, sizeof *m->off);
    m->readerr = -1;
  }
}

static void dataset_write(dataset *d) {
  for (int f = 0; f < d->nfiles; f++) {
    if (d->kind == K_CSV || d->kind == K_TEXT)
      write_lines(d, &d->f[f], f);
    else
      write_records(d, &d->f[f], f);
  }
}

static void dataset_free(dataset *d) {
  for (int f = 0; f < d->nfiles; f++) {
    unlink(d->f[f].path);
    free(d->f[f].bad);
    free(d->f[f].off);
  }
  rmdir(d->dir);
}

static int is_read_kind(int kind) { return kind == K_TEXT || kind == K_TFR; }

/* Marks the record at global position g (files in the given order) bad. */
static void mark_bad(dataset *d, int64_t g) {
  for (int f = 0; f < d->nfiles; f++) {
    if (g < d->f[f].n) {
      if (is_read_kind(d->kind))
        d->f[f].readerr = (int)g;
      else
        d->f[f].bad[g] = 1;
      return;
    }
    g -= d->f[f].n;
  }
  printf("Bail out! position beyond the input\n");
  exit(1);
}

/* ---- what must come out ---------------------------------------------------------------------- */

typedef struct expect {
  int perm[MAXF];
  int64_t *ids; /* good records delivered, in input order */
  size_t nids;
  int64_t *sorted;
  char (*where)[WHERE_CAP]; /* skipped bad records, in input order */
  size_t nwhere;
  int stop;          /* a bad record past the budget stops the run */
  int ef, ei, eread; /* that record: file, index, a read error */
} expect;

static void where_of(const dataset *d, int f, int i, int read, char *out) {
  const fmodel *m = &d->f[f];
  if (read && d->kind == K_TEXT) /* the line that could not be read */
    snprintf(out, WHERE_CAP, "%s:%d", m->path, i + 1);
  else if (read)
    snprintf(out, WHERE_CAP, "%s", m->path);
  else if (d->kind == K_CSV)
    snprintf(out, WHERE_CAP, "%s:%d", m->path, i + 1);
  else /* Examples: "<file>:<the record's number in the file, from 0>" (its byte offset m->off[i]
        * is the status's offset) */
    snprintf(out, WHERE_CAP, "%s:%d", m->path, i);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void expect_build(const dataset *d, const int *perm, int64_t budget, expect *e) {
  size_t total = 0;
  int nbad = 0;
  for (int f = 0; f < d->nfiles; f++) total += (size_t)d->f[f].n;
  memset(e, 0, sizeof *e);
  memcpy(e->perm, perm, sizeof e->perm);
  e->ids = xcalloc(total, sizeof *e->ids);
  e->sorted = xcalloc(total, sizeof *e->sorted);
  e->where = xcalloc(total + 1, sizeof *e->where);
  for (int pi = 0; pi < d->nfiles && !e->stop; pi++) {
    int f = perm[pi];
    const fmodel *m = &d->f[f];
    int lim = m->readerr >= 0 ? m->readerr : m->n;
    for (int i = 0; i <= lim && !e->stop; i++) {
      int read = i == lim && m->readerr >= 0;
      if (i == lim && !read) break;
      if (!read && !m->bad[i]) {
        e->ids[e->nids++] = rec_id(f, i);
        continue;
      }
      if (budget < 0 || nbad < budget) {
        where_of(d, f, i, read, e->where[e->nwhere++]);
        nbad++;
      } else {
        e->stop = 1;
        e->ef = f;
        e->ei = i;
        e->eread = read;
      }
    }
  }
  memcpy(e->sorted, e->ids, e->nids * sizeof *e->ids);
  qsort(e->sorted, e->nids, sizeof *e->sorted, cmp_i64);
}

static void expect_free(expect *e) {
  free(e->ids);
  free(e->sorted);
  free(e->where);
}

/* Every file order (shuffled), or the given one. */
static int expect_all(const dataset *d, int shuffled, int64_t budget, expect *out) {
  int perm[MAXF], n = 0;
  for (int i = 0; i < MAXF; i++) perm[i] = i;
  if (!shuffled) {
    expect_build(d, perm, budget, &out[0]);
    return 1;
  }
  /* lexicographic permutations of 0..nfiles-1 */
  for (;;) {
    expect_build(d, perm, budget, &out[n++]);
    int i = d->nfiles - 2;
    while (i >= 0 && perm[i] > perm[i + 1]) i--;
    if (i < 0) break;
    int j = d->nfiles - 1;
    while (perm[j] < perm[i]) j--;
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    for (int a = i + 1, b = d->nfiles - 1; a < b; a++, b--) {
      t = perm[a];
      perm[a] = perm[b];
      perm[b] = t;
    }
  }
  return n;
}

/* ---- running a pipeline ------------------------------------------------------------------- */

typedef struct mode {
  const char *name;
  int shuffle, threads;
  int64_t step; /* 0: the default */
} mode;

typedef struct result {
  int64_t *ids;
  size_t nids, cap;
  char (*where)[WHERE_CAP];
  size_t nwhere, wcap;
  char value_err[512]; /* the first record whose values are not the model's */
  int64_t batches, partial_not_last;
  tfq_code code, code2;
  char msg[1100], msg2[1100], file[1100], file2[1100];
  int64_t line, offset;
  int out2_null;
  tfq_pipeline_stats stats;
} result;

static void on_bad(void *ctx, const char *where, const char *reason) {
  result *r = ctx;
  (void)reason;
  if (r->nwhere == r->wcap) {
    r->wcap = r->wcap ? 2 * r->wcap : 16;
    r->where = xrealloc(r->where, r->wcap * sizeof *r->where);
  }
  snprintf(r->where[r->nwhere++], WHERE_CAP, "%s", where);
}

/* The id of row `row` after checking every column against the model; -1 (value_err set) if
 * they do not match a good record. */
static int64_t row_id(const dataset *d, tfq_tuple *t, int64_t row, result *r) {
  char why[300] = "", want[128];
  int64_t id = -1;
  size_t len;
  const char *s;
  if (d->kind == K_CSV) {
    float v = ((const float *)tfq_tensor_cdata(tfq_tuple_get(t, 0)))[row];
    id = ((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(t, 1)))[row];
    s = tfq_tensor_string(tfq_tuple_get(t, 2), row, &len);
    int f = (int)(id / 1000000), i = (int)(id % 1000000);
    if (id < 0 || f >= d->nfiles || i >= d->f[f].n || d->f[f].bad[i]) {
      snprintf(why, sizeof why, "int64 %lld is no good record", (long long)id);
    } else {
      snprintf(want, sizeof want, "s%lld", (long long)id);
      if (v != (float)((i + 1) * 0.5) || len != strlen(want) || memcmp(s, want, len) != 0)
        snprintf(why, sizeof why, "record %lld: (%g, '%.*s'), not (%g, '%s')", (long long)id,
                 (double)v, (int)len, s, (i + 1) * 0.5, want);
    }
  } else if (d->kind == K_EX) {
    id = ((const int64_t *)tfq_tensor_cdata(tfq_tuple_get(t, 0)))[row];
    int f = (int)(id / 1000000), i = (int)(id % 1000000);
    if (id < 0 || f >= d->nfiles || i >= d->f[f].n || d->f[f].bad[i])
      snprintf(why, sizeof why, "x = %lld is no good record", (long long)id);
  } else {
    s = tfq_tensor_string(tfq_tuple_get(t, 0), row, &len);
    long long v = -1;
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%.*s", (int)(len < 100 ? len : 100), s);
    if (sscanf(tmp + 1, "%lld", &v) != 1) v = -1;
    id = v;
    int f = (int)(id / 1000000), i = (int)(id % 1000000);
    if (id < 0 || f >= d->nfiles || i >= d->f[f].n) {
      snprintf(why, sizeof why, "'%s' is no record", tmp);
    } else {
      if (d->kind == K_TEXT)
        text_line(want, sizeof want, f, i);
      else
        tfr_payload(want, sizeof want, f, i);
      if (len != strlen(want) || memcmp(s, want, len) != 0)
        snprintf(why, sizeof why, "'%s' is not '%s'", tmp, want);
    }
  }
  if (!*why) return id;
  if (!*r->value_err) snprintf(r->value_err, sizeof r->value_err, "%s", why);
  return -1;
}

static void run_pipeline(const dataset *d, const mode *md, int64_t budget, uint64_t seed,
                         result *r) {
  tfq_status *st = g_st;
  tfq_pipeline_options *o;
  tfq_pipeline *p;
  memset(r, 0, sizeof *r);
  die_on(tfq_pipeline_options_new(&o, st), st, "options");
  for (int f = 0; f < d->nfiles; f++)
    die_on(tfq_pipeline_options_add_file(o, d->f[f].path, st), st, "add_file");
  static const tfq_format fmt[4] = {TFQ_FORMAT_CSV, TFQ_FORMAT_TEXT, TFQ_FORMAT_TFRECORD,
                                    TFQ_FORMAT_EXAMPLES};
  tfq_pipeline_options_set_format(o, fmt[d->kind]);
  if (d->kind == K_CSV)
    die_on(tfq_pipeline_options_set_columns(o, "float32:0,int64:0,string:", st), st, "columns");
  if (d->kind == K_EX) tfq_pipeline_options_set_features(o, g_cfg);
  tfq_pipeline_options_set_batch_size(o, BATCH);
  tfq_pipeline_options_set_shuffle(o, md->shuffle);
  tfq_pipeline_options_set_num_threads(o, md->threads);
  if (md->step > 0) tfq_pipeline_options_set_step(o, md->step);
  tfq_pipeline_options_set_max_bad_records(o, budget);
  tfq_pipeline_options_set_bad_record_fn(o, on_bad, r);
  tfq_pipeline_options_set_seed(o, seed);
  die_on(tfq_pipeline_new(o, &p, st), st, "tfq_pipeline_new");
  tfq_pipeline_options_free(o);
  tfq_code c;
  tfq_tuple *t;
  int64_t last_n = BATCH;
  while ((c = tfq_pipeline_next(p, &t, st)) == TFQ_OK) {
    int64_t n = tfq_tensor_dim(tfq_tuple_get(t, 0), 0);
    if (last_n < BATCH) r->partial_not_last++;
    last_n = n;
    r->batches++;
    if (r->nids + (size_t)n > r->cap) {
      r->cap = 2 * (r->nids + (size_t)n);
      r->ids = xrealloc(r->ids, r->cap * sizeof *r->ids);
    }
    for (int64_t i = 0; i < n; i++) r->ids[r->nids++] = row_id(d, t, i, r);
    tfq_tuple_free(t);
    if (r->batches > 100000) break; /* never ends: fails below */
  }
  r->code = c;
  snprintf(r->msg, sizeof r->msg, "%s", tfq_status_message(st));
  snprintf(r->file, sizeof r->file, "%s", tfq_status_file(st));
  r->line = tfq_status_line(st);
  r->offset = tfq_status_offset(st);
  tfq_tuple *const sentinel = (tfq_tuple *)(void *)r; /* *out must be set to NULL */
  t = sentinel;
  r->code2 = tfq_pipeline_next(p, &t, st);
  r->out2_null = t == NULL;
  if (t && t != sentinel) tfq_tuple_free(t);
  snprintf(r->msg2, sizeof r->msg2, "%s", tfq_status_message(st));
  snprintf(r->file2, sizeof r->file2, "%s", tfq_status_file(st));
  r->stats.size = sizeof r->stats;
  die_on(tfq_pipeline_get_stats(p, &r->stats, st), st, "stats");
  tfq_pipeline_free(p);
}

static void result_free(result *r) {
  free(r->ids);
  free(r->where);
}

/* ---- checking a run against the model ------------------------------------------------------ */

/* Sets why (a diagnostic) and returns 0. */
static int fail(char *why, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return 0;
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether the records and the bad-record reports of `r` are those of `e` (unshuffled: in order;
 * shuffled: the records as a multiset); why set otherwise. */
static int records_match(const result *r, const expect *e, int shuffled, const int64_t *sorted,
                         char *why, size_t cap) {
  if (*r->value_err) return fail(why, cap, "a record is not the model's: %s", r->value_err);
  if (r->nids != e->nids)
    return fail(why, cap, "%zu records delivered, expected %zu", r->nids, e->nids);
  const int64_t *got = shuffled ? sorted : r->ids, *want = shuffled ? e->sorted : e->ids;
  for (size_t i = 0; i < e->nids; i++)
    if (got[i] != want[i])
      return fail(why, cap, "%s record %zu is %lld, expected %lld",
                  shuffled ? "sorted" : "delivered", i, (long long)got[i], (long long)want[i]);
  if (r->nwhere != e->nwhere)
    return fail(why, cap, "%zu bad records reported, expected %zu", r->nwhere, e->nwhere);
  for (size_t i = 0; i < e->nwhere; i++)
    if (strcmp(r->where[i], e->where[i]) != 0)
      return fail(why, cap, "bad record %zu reported at '%s', expected '%s'", i, r->where[i],
                  e->where[i]);
  if (r->partial_not_last)
    return fail(why, cap, "a batch smaller than %d before the last one", BATCH);
  return 1;
}

/* Whether the run ended as `e` says: the stopping error (code, message naming the file and, for
 * CSV, the line; tfq_status_file; tfq_status_line for CSV) or End of sequence. */
static int end_matches(const dataset *d, const result *r, const expect *e, char *why, size_t cap) {
  if (!e->stop) {
    if (r->code != TFQ_OUT_OF_RANGE)
      return fail(why, cap, "ended with %s '%s', expected OUT_OF_RANGE", tfq_code_name(r->code),
                  r->msg);
    return 1;
  }
  const fmodel *m = &d->f[e->ef];
  tfq_code want = e->eread ? TFQ_DATA_LOSS : TFQ_INVALID_ARGUMENT;
  char prefix[WHERE_CAP + 4];
  where_of(d, e->ef, e->ei, e->eread, prefix);
  strcat(prefix, e->eread && d->kind != K_TEXT ? "" : ": ");
  if (r->code != want)
    return fail(why, cap, "ended with %s '%s', expected %s", tfq_code_name(r->code), r->msg,
                tfq_code_name(want));
  if (!starts_with(r->msg, prefix))
    return fail(why, cap, "message '%s' does not start with '%s'", r->msg, prefix);
  if (strcmp(r->file, m->path) != 0)
    return fail(why, cap, "tfq_status_file '%s', expected '%s'", r->file, m->path);
  if ((d->kind == K_CSV || d->kind == K_TEXT) && r->line != e->ei + 1)
    return fail(why, cap, "tfq_status_line %lld, expected %d", (long long)r->line, e->ei + 1);
  if (d->kind == K_EX && !e->eread && r->offset != m->off[e->ei])
    return fail(why, cap, "tfq_status_offset %lld, expected the record's byte offset %lld",
                (long long)r->offset, (long long)m->off[e->ei]);
  return 1;
}

/* ---- the cases ----------------------------------------------------------------------------- */

typedef struct tally {
  int records, end, again, stats, same_count;
  int64_t first_count;
  char why[4][700];
  char first_msg[1100];
} tally;

static void note(char *slot, int run, const char *why) {
  if (!*slot) sfmt(slot, 700, "run %d: %s", run, why);
}

/* Runs `runs` pipelines over `d` and tallies the checks against the model. */
static void run_case(const dataset *d, const mode *md, int64_t budget, uint64_t seed, int runs,
                     tally *ty) {
  static expect ex[MAXPERM];
  int nexp = expect_all(d, md->shuffle, budget, ex);
  memset(ty, 0, sizeof *ty);
  ty->first_count = -1;
  for (int run = 0; run < runs; run++) {
    result r;
    run_pipeline(d, md, budget, seed, &r);
    int64_t *sorted = xcalloc(r.nids, sizeof *sorted);
    memcpy(sorted, r.ids, r.nids * sizeof *sorted);
    qsort(sorted, r.nids, sizeof *sorted, cmp_i64);
    char why[700] = "", endwhy[700] = "", w2[700];
    const expect *hit = NULL; /* a file order whose records and end this run matches */
    int rec_ok = 0;
    for (int k = 0; k < nexp && !hit; k++) {
      if (!records_match(&r, &ex[k], md->shuffle, sorted, w2, sizeof w2)) {
        if (!*why) sfmt(why, sizeof why, "%s", w2);
        continue;
      }
      rec_ok = 1;
      if (end_matches(d, &r, &ex[k], w2, sizeof w2))
        hit = &ex[k];
      else if (!*endwhy)
        sfmt(endwhy, sizeof endwhy, "%s", w2);
    }
    if (!rec_ok) {
      ty->records++;
      note(ty->why[0], run, why);
      if (!end_matches(d, &r, &ex[0], endwhy, sizeof endwhy)) {
        ty->end++;
        note(ty->why[1], run, endwhy);
      }
    } else if (!hit) {
      ty->end++;
      note(ty->why[1], run, endwhy);
    }
    if (run == 0) sfmt(ty->first_msg, sizeof ty->first_msg, "%s %s", tfq_code_name(r.code), r.msg);
    if (r.code2 != r.code || strcmp(r.msg2, r.msg) != 0 || strcmp(r.file2, r.file) != 0 ||
        !r.out2_null) {
      ty->again++;
      sfmt(w2, sizeof w2, "next call: %s '%s' (file '%s'%s), first %s '%s' (file '%s')",
           tfq_code_name(r.code2), r.msg2, r.file2, r.out2_null ? "" : ", *out not NULL",
           tfq_code_name(r.code), r.msg, r.file);
      note(ty->why[2], run, w2);
    }
    if (r.stats.records_out != (int64_t)r.nids || r.stats.bad_records != (int64_t)r.nwhere ||
        (hit && r.stats.bad_records != (int64_t)hit->nwhere) || r.stats.batches_out != r.batches) {
      ty->stats++;
      sfmt(w2, sizeof w2,
           "stats records_out %lld bad_records %lld batches_out %lld; delivered "
           "%zu, reported %zu, batches %lld",
           (long long)r.stats.records_out, (long long)r.stats.bad_records,
           (long long)r.stats.batches_out, r.nids, r.nwhere, (long long)r.batches);
      note(ty->why[3], run, w2);
    }
    if (ty->first_count < 0) ty->first_count = (int64_t)r.nids;
    if ((int64_t)r.nids != ty->first_count) ty->same_count++;
    free(sorted);
    result_free(&r);
  }
  for (int k = 0; k < nexp; k++) expect_free(&ex[k]);
}

static void diag(int failed, const char *why) {
  if (failed && *why) printf("#   first failure: %s\n", why);
}

static const char *kind_name(const dataset *d) {
  static const char *n[4][2] = {{"CSV", "CSV gzip"},
                                {"text", "text gzip"},
                                {"TFRecord", "TFRecord gzip"},
                                {"Examples", "Examples gzip"}};
  return n[d->kind][d->gz];
}

static const char *bad_name(const dataset *d) {
  switch (d->kind) {
    case K_CSV: return "int field 'x'";
    case K_TEXT: return "gzip cut";
    case K_TFR: return d->gz ? "gzip cut" : "payload byte flipped";
    default: return "payload not an Example";
  }
}

/* Case 1: one bad record at global position k, budget 0. */
static void case_one(int kind, int gz, const mode *md, int runs, uint64_t seed) {
  dataset d;
  int sizes[3];
  for (int f = 0; f < 3; f++) sizes[f] = 1800 + rnd_below(400);
  dataset_init(&d, kind, gz, 3, sizes);
  int64_t k = 1 + rnd_below(5000);
  mark_bad(&d, k);
  dataset_write(&d);
  tally ty;
  run_case(&d, md, 0, seed, runs, &ty);
  const char *kn = kind_name(&d);
  printf("# %s, %s: bad record (%s) at position %lld of %d; first run ended with %s\n", kn,
         md->name, bad_name(&d), (long long)k, sizes[0] + sizes[1] + sizes[2], ty.first_msg);
  tap(!ty.records,
      "%s, %s, budget 0: %d runs delivered exactly the good records before the bad "
      "one at %lld (%s), values as generated, then the error",
      kn, md->name, runs, (long long)k,
      md->shuffle ? "as a multiset, for one file order" : "in input order");
  diag(ty.records, ty.why[0]);
  tap(!ty.end, "%s, %s, budget 0: the error is %s naming %s, tfq_status_file() the file", kn,
      md->name, is_read_kind(kind) ? "DATA_LOSS" : "INVALID_ARGUMENT",
      kind == K_CSV || kind == K_TEXT ? "<file>:<line>"
      : kind == K_EX                  ? "<file>:<record>"
                                      : "the file");
  diag(ty.end, ty.why[1]);
  tap(!ty.same_count, "%s, %s, budget 0: the same count every run (%lld records)", kn, md->name,
      (long long)ty.first_count);
  tap(!ty.again, "%s, %s, budget 0: the call after the error returns the same error", kn, md->name);
  diag(ty.again, ty.why[2]);
  tap(!ty.stats, "%s, %s, budget 0: stats records_out, batches_out, bad_records == 0", kn,
      md->name);
  diag(ty.stats, ty.why[3]);
  dataset_free(&d);
}

/* Case 2: N bad records within a budget of N, then N+1 over it. */
static void case_budget(int kind, int gz, const mode *md, int runs, uint64_t seed) {
  for (int over = 0; over <= 1; over++) {
    dataset d;
    int sizes[4];
    for (int f = 0; f < 4; f++) sizes[f] = 1300 + rnd_below(400);
    dataset_init(&d, kind, gz, 4, sizes);
    int64_t budget;
    if (is_read_kind(kind)) {
      /* one read error per file: files 1 and 3 (and 0, at its first record, when over) */
      budget = 2;
      d.f[1].readerr = 1 + rnd_below(sizes[1] - 1);
      d.f[3].readerr = 1 + rnd_below(sizes[3] - 1);
      if (over) d.f[0].readerr = 0;
    } else {
      /* the first record of file 1, the last of file 2, two adjacent ones, one more (and one
       * more when over) */
      budget = 5;
      d.f[1].bad[0] = 1;
      d.f[2].bad[sizes[2] - 1] = 1;
      int a = 1 + rnd_below(sizes[0] - 3);
      d.f[0].bad[a] = d.f[0].bad[a + 1] = 1;
      int placed = 4;
      while (placed < 5 + over) {
        int f = rnd_below(4), i = rnd_below(sizes[f]);
        if (!d.f[f].bad[i]) d.f[f].bad[i] = 1, placed++;
      }
    }
    dataset_write(&d);
    tally ty;
    run_case(&d, md, budget, seed, runs, &ty);
    const char *kn = kind_name(&d);
    printf("# %s, %s: %lld bad records (%s), budget %lld; first run ended with %s\n", kn, md->name,
           (long long)budget + over, bad_name(&d), (long long)budget, ty.first_msg);
    if (!over) {
      tap(!ty.records && !ty.end,
          "%s, %s, budget %lld: %d runs delivered every good record exactly once (%s%s), each bad "
          "one reported once with its place (%s), then End of sequence",
          kn, md->name, (long long)budget, runs, md->shuffle ? "as a multiset" : "in input order",
          is_read_kind(kind) ? ", a read error losing the rest of its file" : "",
          kind == K_CSV || kind == K_TEXT ? "<file>:<line>"
          : kind == K_EX                  ? "<file>:<record>"
                                          : "<file>");
      diag(ty.records, ty.why[0]);
      diag(ty.end, ty.why[1]);
      tap(!ty.stats, "%s, %s, budget %lld: stats.bad_records == %lld, records_out == delivered", kn,
          md->name, (long long)budget, (long long)budget);
      diag(ty.stats, ty.why[3]);
      tap(!ty.again, "%s, %s, budget %lld: End of sequence again on the next call", kn, md->name,
          (long long)budget);
      diag(ty.again, ty.why[2]);
    } else {
      tap(!ty.records,
          "%s, %s, budget %lld, %lld bad: %d runs: the first %lld reported once, every good "
          "record before the last one delivered once (%s), then it stops the run",
          kn, md->name, (long long)budget, (long long)budget + 1, runs, (long long)budget,
          md->shuffle ? "as a multiset" : "in input order");
      diag(ty.records, ty.why[0]);
      tap(!ty.end, "%s, %s, budget %lld, %lld bad: the error names the bad record's place", kn,
          md->name, (long long)budget, (long long)budget + 1);
      diag(ty.end, ty.why[1]);
      tap(!ty.again && !ty.stats && !ty.same_count,
          "%s, %s, budget %lld, %lld bad: the same error again, the same count every run, stats "
          "bad_records == %lld",
          kn, md->name, (long long)budget, (long long)budget + 1, (long long)budget);
      diag(ty.again, ty.why[2]);
      diag(ty.stats, ty.why[3]);
    }
    dataset_free(&d);
  }
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 20;
  if (runs < 1) runs = 1;
  uint64_t seed = 0x6261645f72656373ULL;
  if (getenv("TFQ_TEST_SEED")) seed = strtoull(getenv("TFQ_TEST_SEED"), NULL, 0);
  rng_state = seed;
  printf("# seed %llu (TFQ_TEST_SEED), %d runs per case\n", (unsigned long long)seed, runs);
  g_st = tfq_status_new();
  if (!g_st) return 1;
  die_on(tfq_example_config_new(&g_cfg, g_st), g_st, "example config");
  die_on(tfq_example_config_add_fixed_len(g_cfg, "x", TFQ_INT64, NULL, 0, NULL, g_st), g_st,
         "fixed_len x");
  snprintf(g_root, sizeof g_root, "%s/tfq_bad_records_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(g_root)) {
    printf("Bail out! mkdtemp %s\n", g_root);
    return 1;
  }
  static const mode modes[] = {
      {"unshuffled, 1 thread", 0, 1, 0},
      {"unshuffled, 2 threads, step 100", 0, 2, 100},
      {"unshuffled, 0 threads, step 500", 0, 0, 500},
      {"shuffled, 1 thread", 1, 1, 0},
      {"shuffled, 2 threads, step 300", 1, 2, 300},
  };
  static const int kinds[][2] = {{K_CSV, 0}, {K_CSV, 1}, {K_TEXT, 1}, {K_TFR, 0},
                                 {K_TFR, 1}, {K_EX, 0},  {K_EX, 1}};
  int64_t t0 = now_ns();
  uint64_t pseed = 1;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
      case_one(kinds[k][0], kinds[k][1], &modes[m], runs, pseed++);
      case_budget(kinds[k][0], kinds[k][1], &modes[m], runs, pseed++);
    }
  rmdir(g_root);
  tfq_example_config_free(g_cfg);
  tfq_status_free(g_st);
  printf("# %.1f s\n", (double)(now_ns() - t0) / 1e9);
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}
