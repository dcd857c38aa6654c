/* TFRecord indexes (tfq_pipeline_options_set_index_suffix): each file's "<file><suffix>" read and
 * checked, and with a shard by record the shard's contiguous range of each file, which the
 * source (source.c) reads from its first record's offset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline_internal.h"

/* One index line "OFFSET SIZE\n" (decimal); 0 when it is not one. */
static int index_line(const char *s, uint64_t *off, uint64_t *size) {
  char *e;
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  *off = strtoull(s, &e, 10);
  if (errno || *e != ' ' || e[1] < '0' || e[1] > '9') return 0;
  *size = strtoull(e + 1, &e, 10);
  return !errno && (*e == '\n' || *e == '\0') && *size >= 16;
}

/* Reads the index of file f: *n records, *end the offset after the last; the offset of record
 * `want` in *off_want (*end when want == *n). */
static tfq_code read_index(const char *ipath, int64_t want, int64_t *n, uint64_t *end,
                           uint64_t *off_want, tfq_status *st) {
  FILE *x = fopen(ipath, "re");
  if (!x)
    return tfq_status_set(st, errno == ENOENT ? TFQ_NOT_FOUND : TFQ_UNKNOWN, "%s; %s", ipath,
                          strerror(errno));
  char line[96];
  uint64_t next = 0, off, size;
  int64_t k = 0;
  tfq_code rc = TFQ_OK;
  *off_want = 0;
  while (fgets(line, sizeof line, x)) {
    if (!index_line(line, &off, &size)) {
      rc = tfq_status_set(st, TFQ_DATA_LOSS, "%s:%lld: not an index line \"OFFSET SIZE\"", ipath,
                          (long long)k + 1);
      break;
    }
    if (off != next || size > UINT64_MAX - off) {
      rc = tfq_status_set(st, TFQ_DATA_LOSS,
                          "%s:%lld: offset %llu where the records before end at %llu", ipath,
                          (long long)k + 1, (unsigned long long)off, (unsigned long long)next);
      break;
    }
    if (k == want) *off_want = off;
    next = off + size;
    k++;
  }
  if (!rc && ferror(x)) rc = tfq_status_set(st, TFQ_UNKNOWN, "%s; %s", ipath, strerror(errno));
  fclose(x);
  if (k == want) *off_want = next;
  *n = k;
  *end = next;
  return rc;
}

/* Whether f is read plain (its compression: the option, else detected as the reader would). */
static int file_is_plain(const tfq_pipeline *p, const pl_file *f) {
  if (p->o.compression != TFQ_COMPRESSION_AUTO) return p->o.compression == TFQ_COMPRESSION_NONE;
  unsigned char m[12];
  int fd = open(f->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t k = pread(fd, m, sizeof m, 0);
  close(fd);
  return tfq_compression_detect(m, k > 0 ? (size_t)k : 0, f->path, 1) == TFQ_COMPRESSION_NONE;
}

/* See pipeline_internal.h. */
tfq_code tfq__pl_index_shard(tfq_pipeline *p, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  for (size_t k = 0; k < p->nfiles; k++) p->files[k].rec_hi = -1;
  if (!o->index_suffix[0] || p->kind != TFQ_READER_TFRECORD) return TFQ_OK;
  int by_range = o->shard_n > 1 && !p->shard_files;
  size_t sl = strlen(o->index_suffix);
  tfq_code rc = TFQ_OK;
  for (size_t k = 0; !rc && k < p->nfiles; k++) {
    pl_file *f = &p->files[k];
    size_t pl = strlen(f->path);
    char *ipath = tfq_malloc(pl + sl + 1);
    if (!ipath) return TFQ__OOM(st);
    memcpy(ipath, f->path, pl);
    memcpy(ipath + pl, o->index_suffix, sl + 1);
    /* floor(i * N / n) without overflow: N = q n + r */
    int64_t n, nn = o->shard_n, i = o->shard_i, lo = 0, hi = 0;
    uint64_t end, off_lo;
    rc = read_index(ipath, -1, &n, &end, &off_lo, st);
    if (!rc && by_range) {
      int64_t q = n / nn, r = n % nn;
      lo = i * q + i * r / nn;
      hi = (i + 1) * q + (i + 1) * r / nn;
      rc = read_index(ipath, lo, &n, &end, &off_lo, st);
    }
    if (!rc && file_is_plain(p, f) && (int64_t)end != f->size)
      rc = tfq_status_set(st, TFQ_DATA_LOSS,
                          "%s: its records end at %llu, %s has %lld bytes (an index of another "
                          "file, or stale?)",
                          ipath, (unsigned long long)end, f->path, (long long)f->size);
    if (!rc && by_range) {
      f->rec_lo = lo;
      f->rec_hi = hi;
      f->off_lo = off_lo;
    }
    tfq_free(ipath);
  }
  if (!rc && by_range) p->shard_files = 1;
  return rc;
}
