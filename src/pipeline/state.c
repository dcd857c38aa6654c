/* The pipeline's checkpoint: tfq_pipeline_save() / tfq_pipeline_restore() (tfq/pipeline.h).
 *
 * Layout, little-endian:
 *   "TFQPIPE\0"  u32 version (1)  u32 0  u64 body length  u32 masked CRC32C of the body  body
 * body:
 *   u64 options fingerprint, u64 files fingerprint, u64 seed, u64 number of files
 *   i64 records_read, bytes_read, records_out, batches_out, bad_records, dropped
 *   source: i64 epoch, u64 fpos, u32 open, i64 file_records, i64 epoch_records, u32 ended
 *   u64 rng state, u64 rng inc
 *   u64 slots, then each slot's record
 *   u64 parts, then each part: u32 kind; records: u64 n and n records; a bad record: u32 code,
 *     u32 fatal, str where, str reason, str file, i64 line, i64 offset; the end: nothing
 *   a record: for each column, its elements: numbers as they are in memory (little-endian),
 *     strings as u64 length + bytes.
 * The parts are the records read but not yet in the buffer, in input order (the consumer's
 * stream, then the steps waiting for it), so that a restore continues from the same stream. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline_internal.h"

#define STATE_MAGIC "TFQPIPE"
#define STATE_VERSION 1u
#define STATE_HEADER 28

/* ---- fingerprints ---- */

static void fnv(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001b3ULL;
}
static void fnv_i64(uint64_t *h, int64_t v) { fnv(h, &v, sizeof v); }

void tfq__pl_fingerprint(tfq_pipeline *p) {
  const tfq_pipeline_options *o = &p->o;
  uint64_t h = 0xcbf29ce484222325ULL;
  int64_t v[] = {
      o->format,       o->compression,    o->delim,        o->header,    o->skip_header_lines,
      o->record_bytes, o->header_bytes,   o->footer_bytes, o->hop_bytes, o->keys,
      p->batch,        o->drop_remainder, o->shuffle,      p->capacity,  p->mad,
      o->num_epochs,   o->shard_i,        o->shard_n,      o->max_bad,   o->deterministic,
      o->ragged};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) fnv_i64(&h, v[i]);
  if (o->columns) fnv(&h, o->columns, strlen(o->columns));
  if (o->na_value) fnv(&h, o->na_value, strlen(o->na_value) + 1);
  fnv_i64(&h, o->no_quote);
  for (size_t i = 0; i < o->nselect; i++) fnv_i64(&h, o->select_cols[i]);
  for (size_t i = 0; i < p->ncols; i++) {
    fnv(&h, p->cols[i].name, strlen(p->cols[i].name) + 1);
    fnv_i64(&h, p->cols[i].dtype);
    fnv_i64(&h, p->cols[i].width);
  }
  p->fp_options = h;
  h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < p->nfiles; i++) {
    fnv(&h, p->files[i].path, strlen(p->files[i].path) + 1);
    fnv_i64(&h, p->files[i].size);
  }
  p->fp_files = h;
}

/* ---- writing ---- */

typedef struct wbuf {
  char *p;
  size_t n, cap;
  int oom;
} wbuf;

static void put(wbuf *b, const void *d, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    char *q = tfq_realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, d, n);
  b->n += n;
}
static void put_u64(wbuf *b, uint64_t v) {
  unsigned char x[8];
  for (int i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
  put(b, x, 8);
}
static void put_u32(wbuf *b, uint32_t v) {
  unsigned char x[4];
  for (int i = 0; i < 4; i++) x[i] = (unsigned char)(v >> (8 * i));
  put(b, x, 4);
}
static void put_str(wbuf *b, const char *s, size_t n) {
  put_u64(b, n);
  put(b, s, n);
}

static void put_record(tfq_pipeline *p, wbuf *b, const pl_part *q, int64_t row) {
  for (size_t c = 0; c < p->ncols; c++) {
    const pl_column *col = &p->cols[c];
    int64_t lo = row * col->width, hi = lo + col->width;
    if (PL_RAGGED(col)) { /* a VarLen list or a sequence: its rows, then their values */
      lo = q->splits[c][row] * col->width;
      hi = q->splits[c][row + 1] * col->width;
      put_u64(b, (uint64_t)(q->splits[c][row + 1] - q->splits[c][row]));
    }
    if (col->dtype == TFQ_STRING) {
      const tfq__str *s = tfq__strs(q->cols[c]);
      for (int64_t e = lo; e < hi; e++) put_str(b, s[e].p, s[e].len);
    } else {
      size_t es = tfq_dtype_size(col->dtype);
      put(b, (const char *)q->cols[c]->data + (size_t)lo * es, (size_t)(hi - lo) * es);
    }
  }
}

static void put_part(tfq_pipeline *p, wbuf *b, const pl_part *q) {
  put_u32(b, (uint32_t)q->kind);
  if (q->kind == PART_RECORDS) {
    put_u64(b, (uint64_t)(q->n - q->taken));
    for (int64_t r = q->taken; r < q->n; r++) put_record(p, b, q, r);
  } else if (q->kind == PART_BAD) {
    put_u32(b, (uint32_t)q->code);
    put_u32(b, (uint32_t)q->fatal);
    put_str(b, q->where, strlen(q->where));
    put_str(b, q->reason, strlen(q->reason));
    put_str(b, q->file, strlen(q->file));
    put_u64(b, (uint64_t)q->line);
    put_u64(b, (uint64_t)q->offset);
  }
}

/* Waits until no step is being read or decoded and holds the readers back (pause), or lets
 * them go on. */
static void pause_readers(tfq_pipeline *p, int on) {
  tfq__lock(&p->mu);
  p->paused = on;
  if (on)
    while (p->in_flight > 0) {
      p->cons_waiting = 1;
      pthread_cond_wait(&p->cv_cons, &p->mu);
      p->cons_waiting = 0;
    }
  else
    pthread_cond_broadcast(&p->cv_work);
  tfq__unlock(&p->mu);
}

tfq_code tfq_pipeline_save(tfq_pipeline *p, char **state, size_t *len, tfq_status *st) {
  if (p->sticky != TFQ_OK && p->sticky != TFQ_OUT_OF_RANGE)
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION,
                          "the pipeline stopped on an error: there is no state to save");
  wbuf b = {0};
  put(&b, STATE_MAGIC, 8);
  put_u32(&b, STATE_VERSION);
  put_u32(&b, 0);
  put_u64(&b, 0); /* body length, set below */
  put_u32(&b, 0); /* CRC, set below */
  pause_readers(p, 1);
  put_u64(&b, p->fp_options);
  put_u64(&b, p->fp_files);
  put_u64(&b, p->seed);
  put_u64(&b, p->nfiles);
  int64_t counters[] = {atomic_load(&p->records_read),
                        atomic_load(&p->bytes_read),
                        p->records_out,
                        p->batches_out,
                        p->bad_records,
                        p->dropped};
  for (size_t i = 0; i < 6; i++) put_u64(&b, (uint64_t)counters[i]);
  tfq__lock(&p->src_mu);
  put_u64(&b, (uint64_t)p->src.epoch);
  put_u64(&b, p->src.fpos);
  put_u32(&b, (uint32_t)p->src.open);
  put_u64(&b, (uint64_t)p->src.file_records);
  put_u64(&b, (uint64_t)p->src.epoch_records);
  put_u32(&b, (uint32_t)p->src.ended);
  tfq__unlock(&p->src_mu);
  put_u64(&b, p->rng.state);
  put_u64(&b, p->rng.inc);
  put_u64(&b, (uint64_t)p->size);
  for (int64_t i = 0; i < p->size; i++) put_record(p, &b, p->slots[i].part, p->slots[i].row);
  /* the parts: the stream, then the ready steps in order (none is in flight) */
  wbuf parts = {0};
  uint64_t nparts = 0;
  if (p->error) { /* found, not yet returned: the buffer is being drained before it */
    put_part(p, &parts, p->error);
    nparts++;
  }
  for (pl_part *q = p->stream; q; q = q->next, nparts++) put_part(p, &parts, q);
  tfq__lock(&p->mu);
  for (uint64_t s = p->cons_seq; s < p->issued; s++) {
    pl_chunk *c = p->ready[s % p->window];
    if (!c || c->seq != s) continue;
    for (pl_part *q = c->head; q; q = q->next, nparts++) put_part(p, &parts, q);
  }
  tfq__unlock(&p->mu);
  pause_readers(p, 0);
  put_u64(&b, nparts);
  put(&b, parts.p, parts.n);
  int oom = b.oom || parts.oom;
  tfq_free(parts.p);
  if (oom) {
    tfq_free(b.p);
    return TFQ__OOM(st);
  }
  size_t body = b.n - STATE_HEADER;
  uint32_t crc = tfq_crc32c_mask(tfq_crc32c_extend(0, b.p + STATE_HEADER, body));
  for (int i = 0; i < 8; i++) b.p[16 + i] = (char)(unsigned char)((uint64_t)body >> (8 * i));
  for (int i = 0; i < 4; i++) b.p[24 + i] = (char)(unsigned char)(crc >> (8 * i));
  *state = b.p;
  *len = b.n;
  tfq_status_clear(st);
  return TFQ_OK;
}

/* The code of a failed file operation, as TF's readers name them. */
static tfq_code io_code(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return TFQ_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS: return TFQ_PERMISSION_DENIED;
    case ENOSPC:
    case EDQUOT: return TFQ_RESOURCE_EXHAUSTED;
    case EISDIR: return TFQ_FAILED_PRECONDITION;
    default: return TFQ_UNKNOWN;
  }
}

tfq_code tfq_pipeline_save_file(tfq_pipeline *p, const char *path, tfq_status *st) {
  char *s;
  size_t n;
  tfq_code rc = tfq_pipeline_save(p, &s, &n, st);
  if (rc) return rc;
  rc = tfq_pipeline_state_write_file(path, s, n, st);
  tfq_free(s);
  return rc;
}

tfq_code tfq_pipeline_state_write_file(const char *path, const void *state, size_t n,
                                       tfq_status *st) {
  const char *s = state;
  size_t pl = strlen(path);
  char *tmp = tfq_malloc(pl + 16);
  if (!tmp) return TFQ__OOM(st);
  /* one temporary name per state file: a save killed half-way leaves it, the next overwrites it */
  snprintf(tmp, pl + 16, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    for (size_t off = 0; off < n && !err;) {
      ssize_t w = write(fd, s + off, n - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        err = errno;
      else
        off += (size_t)w;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) unlink(tmp);
  }
  tfq_free(tmp);
  if (err) return tfq_status_set(st, io_code(err), "%s; %s", path, strerror(err));
  /* the rename itself durable: fsync the directory */
  char *dir = tfq__strdup(path);
  if (dir) {
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)fsync(dfd);
      close(dfd);
    }
    tfq_free(dir);
  }
  tfq_status_clear(st);
  return TFQ_OK;
}

/* ---- reading ---- */

typedef struct rbuf {
  const unsigned char *p;
  size_t n, off;
  int bad;
} rbuf;

static const void *get(rbuf *b, size_t n) {
  if (b->bad || n > b->n - b->off) {
    b->bad = 1;
    return NULL;
  }
  const void *q = b->p + b->off;
  b->off += n;
  return q;
}
static uint64_t get_u64(rbuf *b) {
  const unsigned char *x = get(b, 8);
  uint64_t v = 0;
  for (int i = 0; x && i < 8; i++) v |= (uint64_t)x[i] << (8 * i);
  return v;
}
static uint32_t get_u32(rbuf *b) {
  const unsigned char *x = get(b, 4);
  uint32_t v = 0;
  for (int i = 0; x && i < 4; i++) v |= (uint32_t)x[i] << (8 * i);
  return v;
}
static char *get_str(rbuf *b) {
  uint64_t n = get_u64(b);
  const char *s = get(b, (size_t)n);
  if (!s) return NULL;
  char *d = tfq_malloc((size_t)n + 1);
  if (d) {
    memcpy(d, s, (size_t)n);
    d[n] = '\0';
  }
  return d;
}

/* Record r of the columns from `b`.  Pass 0 only reads past it, adding each VarLen list's length
 * to tot[c]; pass 1 stores it into row r of q (a list at tot[c], which it advances).  0, or -1
 * (truncated, out of memory). */
static int get_record(tfq_pipeline *p, rbuf *b, pl_part *q, int64_t r, int64_t *tot, int pass) {
  for (size_t c = 0; c < p->ncols; c++) {
    const pl_column *col = &p->cols[c];
    int64_t at = r * col->width, k = col->width;
    if (PL_RAGGED(col)) {
      uint64_t rows = get_u64(b);
      if (b->bad || rows > b->n) return -1;
      k = (int64_t)rows * col->width;
      at = tot[c] * col->width;
      if (pass) q->splits[c][r] = tot[c];
      tot[c] += (int64_t)rows;
    }
    if (col->dtype == TFQ_STRING) {
      for (int64_t e = 0; e < k; e++) {
        uint64_t len = get_u64(b);
        const char *s = get(b, (size_t)len);
        if (!s || (pass && tfq__tensor_put_string(q->cols[c], at + e, s, (size_t)len))) return -1;
      }
    } else {
      size_t bytes = (size_t)k * tfq_dtype_size(col->dtype);
      const void *s = get(b, bytes);
      if (!s) return -1;
      if (pass)
        memcpy((char *)q->cols[c]->data + (size_t)at * tfq_dtype_size(col->dtype), s, bytes);
    }
  }
  return 0;
}

/* A part of `n` records read from `b` (two passes when a column is VarLen: the lists' lengths
 * first, to size their values). */
static pl_part *get_records(tfq_pipeline *p, rbuf *b, int64_t n) {
  pl_part *q = tfq__pl_part_new(PART_RECORDS);
  int64_t *tot = tfq__calloc(p->ncols, sizeof *tot);
  if (!q || !tot || !(q->cols = tfq__calloc(p->ncols, sizeof *q->cols))) goto fail;
  q->n = n;
  int any_sparse = 0;
  for (size_t c = 0; c < p->ncols; c++) any_sparse |= PL_RAGGED(&p->cols[c]);
  if (any_sparse) {
    size_t start = b->off;
    for (int64_t r = 0; r < n; r++)
      if (get_record(p, b, q, r, tot, 0)) goto fail;
    b->off = start;
    if (!(q->splits = tfq__calloc(p->ncols, sizeof *q->splits))) goto fail;
  }
  for (size_t c = 0; c < p->ncols; c++) {
    const pl_column *col = &p->cols[c];
    int64_t dims[9];
    dims[0] = n;
    memcpy(dims + 1, col->dims, (size_t)col->rank * sizeof *dims);
    if (PL_RAGGED(col)) {
      int64_t flat = tot[c] * col->width;
      if (!(q->splits[c] = tfq_malloc((size_t)(n + 1) * sizeof *q->splits[c])) ||
          tfq__tensor_alloc(col->dtype, &flat, 1, 0, &q->cols[c], NULL))
        goto fail;
      q->splits[c][n] = tot[c];
      tot[c] = 0;
    } else if (tfq__tensor_alloc(col->dtype, dims, col->rank + 1, 0, &q->cols[c], NULL)) {
      goto fail;
    }
  }
  for (int64_t r = 0; r < n; r++)
    if (get_record(p, b, q, r, tot, 1)) goto fail;
  tfq_free(tot);
  return q;
fail:
  tfq_free(tot);
  tfq__pl_part_free(q, p->ncols);
  return NULL;
}

static tfq_code corrupted(const char *why, tfq_status *st) {
  return tfq_status_set(st, TFQ_DATA_LOSS, "pipeline state is corrupted (%s)", why);
}

tfq_code tfq_pipeline_restore(tfq_pipeline *p, const void *state, size_t len, tfq_status *st) {
  if (p->started || p->restored)
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION,
                          "restore must come before the pipeline's first batch");
  const unsigned char *s = state;
  if (len < STATE_HEADER || memcmp(s, STATE_MAGIC, 8) != 0)
    return corrupted("not a tfq pipeline state: bad magic", st);
  rbuf h = {s, len, 8, 0};
  uint32_t version = get_u32(&h);
  uint32_t reserved = get_u32(&h); /* not under the CRC: must be 0 */
  uint64_t body = get_u64(&h);
  uint32_t crc = get_u32(&h);
  if (version != STATE_VERSION)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "pipeline state has version %u; this library reads version %u", version,
                          STATE_VERSION);
  if (reserved != 0) return corrupted("bad header", st);
  if (body != len - STATE_HEADER) return corrupted("its length does not match", st);
  if (tfq_crc32c_mask(tfq_crc32c_extend(0, s + STATE_HEADER, (size_t)body)) != crc)
    return corrupted("checksum mismatch", st);
  rbuf b = {s + STATE_HEADER, (size_t)body, 0, 0};
  uint64_t fo = get_u64(&b), ff = get_u64(&b), seed = get_u64(&b), nf = get_u64(&b);
  if (p->o.seed_set && seed != p->seed) /* without a seed set: the state's seed is used */
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "pipeline state is from other options or files (the seed differs: "
                          "state %llu, pipeline %llu)",
                          (unsigned long long)seed, (unsigned long long)p->seed);
  if (ff != p->fp_files || nf != p->nfiles)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "pipeline state is from other options or files (the input files "
                          "differ: %llu in the state, %zu here, or their names or sizes)",
                          (unsigned long long)nf, p->nfiles);
  if (fo != p->fp_options)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "pipeline state is from other options or files (the options differ: "
                          "format, columns, batch size, shuffle, capacity, epochs, shard or "
                          "bad-record budget)");
  int64_t cnt[6];
  for (int i = 0; i < 6; i++) cnt[i] = (int64_t)get_u64(&b);
  int64_t epoch = (int64_t)get_u64(&b);
  uint64_t fpos = get_u64(&b);
  uint32_t open = get_u32(&b);
  int64_t frec = (int64_t)get_u64(&b), erec = (int64_t)get_u64(&b);
  uint32_t ended = get_u32(&b);
  uint64_t rs = get_u64(&b), ri = get_u64(&b); /* PCG32's increment is odd: a full period */
  uint64_t nslots = get_u64(&b);
  if (b.bad) return corrupted("truncated", st);
  /* (the restore replays the file order's shuffles up to the epoch: one past num_epochs, or
   * past 2^32 when the epochs never end, is no state this pipeline wrote) */
  if (nslots > (uint64_t)p->capacity || fpos > p->nfiles || (open && fpos >= p->nfiles) ||
      epoch < 0 || frec < 0 || !(ri & 1) || (p->o.num_epochs > 0 && epoch > p->o.num_epochs) ||
      epoch > ((int64_t)1 << 32))
    return corrupted("values out of range", st);
  tfq_code rc = TFQ_OK;
  pl_part *buf = NULL;
  if (nslots) {
    if (!(buf = get_records(p, &b, (int64_t)nslots)))
      return b.bad ? corrupted("truncated", st) : TFQ__OOM(st);
  }
  uint64_t nparts = get_u64(&b);
  pl_part *head = NULL, *tail = NULL;
  for (uint64_t i = 0; !rc && i < nparts; i++) {
    uint32_t kind = get_u32(&b);
    pl_part *q = NULL;
    if (b.bad) {
      rc = corrupted("truncated", st);
    } else if (kind == PART_RECORDS) {
      uint64_t n = get_u64(&b);
      if (n > b.n)
        rc = corrupted("values out of range", st);
      else if (!(q = get_records(p, &b, (int64_t)n)))
        rc = b.bad ? corrupted("truncated", st) : TFQ__OOM(st);
    } else if (kind == PART_BAD) {
      if (!(q = tfq__pl_part_new(PART_BAD))) {
        rc = TFQ__OOM(st);
        break;
      }
      q->code = (tfq_code)get_u32(&b);
      q->fatal = (int)get_u32(&b);
      q->where = get_str(&b);
      q->reason = get_str(&b);
      q->file = get_str(&b);
      q->line = (int64_t)get_u64(&b);
      q->offset = (int64_t)get_u64(&b);
      if (b.bad || !q->where || !q->reason || !q->file)
        rc = b.bad ? corrupted("truncated", st) : TFQ__OOM(st);
    } else if (kind == PART_END) {
      if (!(q = tfq__pl_part_new(PART_END))) rc = TFQ__OOM(st);
    } else {
      rc = corrupted("unknown part", st);
    }
    if (q) {
      if (tail)
        tail->next = q;
      else
        head = q;
      tail = q;
    }
  }
  if (!rc && b.off != b.n) rc = corrupted("trailing bytes", st);
  if (!rc) {
    tfq__lock(&p->src_mu);
    if (seed != p->seed) { /* no seed set: the state's (the file order's stream restarts) */
      p->seed = seed;
      p->src.order_epoch = INT64_MAX;
    }
    p->src.epoch = epoch;
    atomic_store_explicit(&p->epoch_pub, epoch, memory_order_relaxed);
    p->src.fpos = (size_t)fpos;
    p->src.epoch_records = erec;
    p->src.ended = (int)ended;
    tfq__pl_epoch_order(p, epoch);
    if (open) rc = tfq__pl_source_seek(p, frec, st);
    tfq__unlock(&p->src_mu);
  }
  if (rc) {
    tfq__pl_part_free(buf, p->ncols);
    while (head) {
      pl_part *next = head->next;
      tfq__pl_part_free(head, p->ncols);
      head = next;
    }
    return rc;
  }
  if (buf) {
    for (uint64_t i = 0; i < nslots; i++) p->slots[i] = (pl_slot){buf, (int64_t)i};
    buf->taken = buf->n;
    buf->refs = (int64_t)nslots; /* slots only: it is not in the stream */
  }
  p->size = (int64_t)nslots;
  tfq__pl_ring_reload(p);
  tfq__pl_stream_append(p, head);
  p->rng.state = rs;
  p->rng.inc = ri;
  atomic_store(&p->records_read, cnt[0]);
  atomic_store(&p->bytes_read, cnt[1]);
  p->records_out = cnt[2];
  p->batches_out = cnt[3];
  p->bad_records = cnt[4];
  p->dropped = cnt[5];
  tfq__pl_publish(p);
  p->restored = 1;
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_pipeline_restore_file(tfq_pipeline *p, const char *path, tfq_status *st) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return tfq_status_set(st, io_code(errno), "%s; %s", path, strerror(errno));
  struct stat sb;
  char *buf = NULL;
  size_t n = 0;
  tfq_code rc = TFQ_OK;
  if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode)) {
    int err = S_ISDIR(sb.st_mode) ? EISDIR : errno;
    rc = tfq_status_set(st, io_code(err), "%s; %s", path, strerror(err));
  } else if (!(buf = tfq_malloc((size_t)sb.st_size + 1))) {
    rc = TFQ__OOM(st);
  } else {
    while (n < (size_t)sb.st_size) {
      ssize_t r = read(fd, buf + n, (size_t)sb.st_size - n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      n += (size_t)r;
    }
  }
  close(fd);
  if (!rc) rc = tfq_pipeline_restore(p, buf, n, st);
  tfq_free(buf);
  return rc;
}
