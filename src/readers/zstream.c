/* Buffered file input and output, plain or through zlib.  This is the only file of tfq that
 * calls zlib (docs/design.md §3, rule 5).  inflate()/deflate() are driven directly over our own
 * read()/write() buffers, not through gzFile: gzread reads plain files transparently and reports
 * a truncated stream only through gzerror, easy to miss, while tfq reports every truncation as
 * DATA_LOSS (docs/readers.md, "Deviations from TensorFlow"). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "readers_internal.h"

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
  (void)opaque;
  size_t total;
  if (!tfq__mul_ok(items, size, &total)) return Z_NULL;
  return tfq_malloc(total);
}

static void z_free(voidpf opaque, voidpf p) {
  (void)opaque;
  tfq_free(p);
}

/* TF's ErrnoToCode (tensorflow/core/platform/error.cc), with one deliberate difference: EFBIG is
 * RESOURCE_EXHAUSTED, not OUT_OF_RANGE, which a QueueRunner would take for a clean end of input. */
static tfq_code errno_code(int err) {
  switch (err) {
    case EINVAL:
    case ENAMETOOLONG:
    case E2BIG:
    case EFAULT:
    case EILSEQ:
    case ENOTTY:
    case ESPIPE: return TFQ_INVALID_ARGUMENT;
    case ETIMEDOUT:
    case ETIME: return TFQ_DEADLINE_EXCEEDED;
    case ENODEV:
    case ENOENT:
    case ENXIO:
    case ESRCH: return TFQ_NOT_FOUND;
    case EEXIST: return TFQ_ALREADY_EXISTS;
    case EPERM:
    case EACCES:
    case EROFS: return TFQ_PERMISSION_DENIED;
    case ENOTEMPTY:
    case EISDIR:
    case ENOTDIR:
    case EBADF:
    case EBUSY:
    case ETXTBSY:
    case EPIPE: return TFQ_FAILED_PRECONDITION;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case EMLINK:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
    case EFBIG: return TFQ_RESOURCE_EXHAUSTED;
    case EOVERFLOW:
    case ERANGE: return TFQ_OUT_OF_RANGE;
    case ENOSYS:
    case ENOTSUP:
    case EXDEV: return TFQ_UNIMPLEMENTED;
    case EAGAIN:
    case EINTR:
    case ENOLCK: return TFQ_UNAVAILABLE;
    case EDEADLK:
    case ESTALE: return TFQ_ABORTED;
    case ECANCELED: return TFQ_CANCELLED;
    default: return TFQ_UNKNOWN; /* EIO, ELOOP, ... as in TF */
  }
}

static tfq_code errno_status(const char *path, int err, tfq_status *st) {
  tfq_status_set(st, errno_code(err), "%s; %s", path, strerror(err));
  tfq__status_names_file(st);
  return errno_code(err);
}

static const char *comp_name(tfq_compression c) {
  return c == TFQ_COMPRESSION_GZIP ? "GZIP" : c == TFQ_COMPRESSION_ZLIB ? "ZLIB" : "";
}

/* ---- input ---- */

/* A buffer of `cap` bytes: the data of a new uint8 tensor (NULL out of memory). */
static tfq_tensor *buf_new(size_t cap) {
  int64_t d = (int64_t)cap;
  tfq_tensor *t;
  return tfq__tensor_alloc(TFQ_UINT8, &d, 1, 0, &t, NULL) ? NULL : t;
}

struct tfq__instream {
  int fd;
  char *path;
  tfq_compression comp;
  int tf_compat;
  char *buf;          /* decompressed bytes [pos, len) are unread */
  tfq_tensor *holder; /* a uint8 tensor whose data is buf (tfq__instream_holder) */
  size_t pos, len, cap, init_cap;
  uint64_t base; /* stream offset of buf[0] */
  int eof;       /* no more bytes will come */
  tfq_code err;  /* error to report once the buffered bytes are used up */
  char errmsg[TFQ__MSG_CAP];
  /* compressed input */
  z_stream z;
  int z_live, z_ended;
  unsigned char *in;
  size_t in_cap;
  int raw_eof;
  uint64_t raw_off; /* compressed bytes read from the file */
};

static int has_suffix(const char *s, size_t n, const char *suf) {
  size_t k = strlen(suf);
  return n >= k && memcmp(s + n - k, suf, k) == 0;
}

tfq_compression tfq_compression_detect(const void *first, size_t n, const char *name,
                                       int tfrecord) {
  const unsigned char *m = first;
  if (n >= 2 && m[0] == 0x1F && m[1] == 0x8B) return TFQ_COMPRESSION_GZIP;
  size_t len = name ? strlen(name) : 0;
  if (has_suffix(name, len, ".gz")) return TFQ_COMPRESSION_GZIP;
  if (has_suffix(name, len, ".zz") || has_suffix(name, len, ".zlib")) return TFQ_COMPRESSION_ZLIB;
  /* An uncompressed TFRecord starts with a length whose masked CRC32C follows it. */
  if (tfrecord && n >= 12) {
    uint32_t want =
        (uint32_t)m[8] | (uint32_t)m[9] << 8 | (uint32_t)m[10] << 16 | (uint32_t)m[11] << 24;
    if (tfq_crc32c_mask(tfq_crc32c_extend(0, m, 8)) == want) return TFQ_COMPRESSION_NONE;
  }
  /* zlib header: deflate, window <= 32K, no preset dictionary, FCHECK. */
  if (n >= 2 && (m[0] & 0x0F) == 8 && (m[0] >> 4) <= 7 && !(m[1] & 0x20) &&
      ((unsigned)m[0] * 256 + m[1]) % 31 == 0)
    return TFQ_COMPRESSION_ZLIB;
  return TFQ_COMPRESSION_NONE;
}

static ssize_t read_full(int fd, void *p, size_t n);

/* TFQ_COMPRESSION_AUTO: reads the first bytes (a pipe cannot be peeked: they stay buffered, as
 * decompressed bytes when the file is plain, as raw input otherwise) and picks the compression. */
static int auto_prefix(tfq__instream *s, int tfrecord, unsigned char *m, size_t *n) {
  /* Only the bytes the rule looks at: on a stream that stays open (tail -f | ...) a read must
   * not wait for more than a record needs. */
  size_t need = tfrecord ? TFQ__DETECT_BYTES : 2;
  *n = 0;
  while (*n < need) {
    ssize_t k = read_full(s->fd, m + *n, need - *n);
    if (k < 0) return -1;
    if (k == 0) break;
    *n += (size_t)k;
  }
  s->comp = tfq_compression_detect(m, *n, s->path, tfrecord);
  return 0;
}

tfq_code tfq__instream_open(const char *path, tfq_compression c, size_t bufsize, int tf_compat,
                            int tfrecord, tfq__instream **out, tfq_status *st) {
  *out = NULL;
  if (bufsize < 64) bufsize = 64;
  tfq__instream *s = tfq__calloc(1, sizeof *s);
  if (!s) return TFQ__OOM(st);
  s->fd = -1;
  s->comp = c;
  s->tf_compat = tf_compat;
  s->path = tfq__strdup(path);
  s->holder = buf_new(bufsize);
  s->buf = s->holder ? s->holder->data : NULL;
  s->cap = s->init_cap = bufsize;
  if (!s->path || !s->buf) goto oom;
  do /* a FIFO blocks in open(): retry when a signal without SA_RESTART interrupts it */
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
  while (s->fd < 0 && errno == EINTR);
  struct stat sb;
  if (s->fd >= 0 && fstat(s->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    close(s->fd); /* open() accepts a directory; fail here so the work unit is skipped */
    s->fd = -1;
    errno = EISDIR;
  }
  unsigned char prefix[TFQ__DETECT_BYTES];
  size_t nprefix = 0;
  if (s->fd >= 0 && c == TFQ_COMPRESSION_AUTO && auto_prefix(s, tfrecord, prefix, &nprefix) < 0) {
    close(s->fd);
    s->fd = -1;
  }
  if (s->fd < 0) {
    int err = errno;
    tfq__instream_close(s);
    return errno_status(path, err, st);
  }
  if (s->comp != TFQ_COMPRESSION_NONE) {
    s->in = tfq_malloc(bufsize);
    s->in_cap = bufsize;
    if (!s->in) goto oom;
    s->z.zalloc = z_alloc;
    s->z.zfree = z_free;
    int zr = inflateInit2(&s->z, s->comp == TFQ_COMPRESSION_GZIP ? 31 : 15);
    if (zr == Z_MEM_ERROR) goto oom;
    if (zr != Z_OK) {
      tfq__instream_close(s);
      return tfq_status_set(st, TFQ_INTERNAL, "inflateInit2() failed with error %d", zr);
    }
    s->z_live = 1;
    memcpy(s->in, prefix, nprefix); /* bufsize >= 64 > TFQ__DETECT_BYTES */
    s->z.next_in = s->in;
    s->z.avail_in = (uInt)nprefix;
    s->raw_off = nprefix;
  } else {
    memcpy(s->buf, prefix, nprefix);
    s->len = nprefix;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  (void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  *out = s;
  return TFQ_OK;
oom:
  tfq__instream_close(s);
  return TFQ__OOM(st);
}

tfq_compression tfq__instream_compression(const tfq__instream *s) { return s->comp; }

void tfq__instream_close(tfq__instream *s) {
  if (!s) return;
  if (s->fd >= 0) close(s->fd);
  if (s->z_live) inflateEnd(&s->z);
  tfq_free(s->in);
  tfq_tensor_free(s->holder);
  tfq_free(s->path);
  tfq_free(s);
}

static ssize_t read_full(int fd, void *p, size_t n) {
  for (;;) {
    ssize_t k = read(fd, p, n);
    if (k >= 0 || errno != EINTR) return k;
  }
}

static void set_err(tfq__instream *s, tfq_code c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(tfq__instream *s, tfq_code c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
  va_end(ap);
  s->err = c;
  s->eof = 1;
}

/* At end of file: a regular file now shorter than the `off` bytes already read from it was
 * truncated while being read.  Its lost records must not look like a clean end: DATA_LOSS. */
static int shrank(tfq__instream *s, uint64_t off) {
  struct stat sb;
  if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size >= off) return 0;
  set_err(s, TFQ_DATA_LOSS, "%s was truncated to %lld bytes while being read at offset %llu",
          s->path, (long long)sb.st_size, (unsigned long long)off);
  return 1;
}

/* Appends decompressed bytes into buf[len, cap).  Sets eof or err when nothing more comes. */
static void fill(tfq__instream *s) {
  if (s->comp == TFQ_COMPRESSION_NONE) {
    ssize_t k = read_full(s->fd, s->buf + s->len, s->cap - s->len);
    if (k < 0) {
      s->err = errno == ENOMEM ? TFQ_RESOURCE_EXHAUSTED : TFQ_UNKNOWN;
      snprintf(s->errmsg, sizeof s->errmsg, "%s; %s", s->path, strerror(errno));
      s->eof = 1;
    } else if (k == 0) {
      if (!shrank(s, s->base + s->len)) s->eof = 1;
    } else {
      s->len += (size_t)k;
    }
    return;
  }
  size_t start = s->len;
  while (s->len == start && !s->eof) {
    if (s->z.avail_in == 0 && !s->raw_eof) {
      ssize_t k = read_full(s->fd, s->in, s->in_cap);
      if (k < 0) {
        set_err(s, TFQ_UNKNOWN, "%s; %s", s->path, strerror(errno));
        return;
      }
      if (k == 0 && shrank(s, s->raw_off)) return;
      if (k == 0) s->raw_eof = 1;
      s->raw_off += (uint64_t)k;
      s->z.next_in = s->in;
      s->z.avail_in = (uInt)k;
    }
    if (s->z_ended) {
      /* Between gzip members: another member follows only if more input exists. */
      if (s->z.avail_in == 0) {
        if (s->raw_eof) s->eof = 1;
        continue;
      }
      if (inflateReset(&s->z) != Z_OK) {
        set_err(s, TFQ_INTERNAL, "%s: inflateReset failed", s->path);
        return;
      }
      s->z_ended = 0;
    }
    if (s->z.avail_in == 0 && s->raw_eof) {
      /* The file ended inside the compressed stream. */
      if (s->tf_compat || (s->raw_off == 0)) {
        s->eof = 1; /* TF ends silently; an empty file is an empty stream */
      } else {
        set_err(s, TFQ_DATA_LOSS,
                "truncated %s stream: %s ends at compressed offset %llu (decompressed offset "
                "%llu) before the end of the stream",
                comp_name(s->comp), s->path, (unsigned long long)s->raw_off,
                (unsigned long long)(s->base + s->len));
      }
      return;
    }
    s->z.next_out = (Bytef *)s->buf + s->len;
    s->z.avail_out = (uInt)(s->cap - s->len);
    uInt before_in = s->z.avail_in;
    int zr = inflate(&s->z, Z_NO_FLUSH);
    s->len = s->cap - s->z.avail_out;
    if (zr == Z_STREAM_END) {
      if (s->comp == TFQ_COMPRESSION_GZIP) {
        s->z_ended = 1; /* multi-member gzip: TF 2.x reads every member */
      } else {
        s->z_ended = 1;
        s->eof = s->len == start; /* ZLIB: one stream; trailing bytes are ignored */
        s->raw_eof = 1;
        s->z.avail_in = 0;
      }
    } else if (zr == Z_BUF_ERROR) {
      if (before_in != 0) { /* no progress with input available: cannot happen */
        set_err(s, TFQ_DATA_LOSS, "inflate() failed with error -5 (%s)", s->path);
        return;
      }
    } else if (zr != Z_OK) {
      if (zr == Z_MEM_ERROR) {
        set_err(s, TFQ_RESOURCE_EXHAUSTED, "out of memory in inflate() for %s", s->path);
        return;
      }
      set_err(s, TFQ_DATA_LOSS,
              "inflate() failed with error %d%s%s (%s, near compressed offset %llu)", zr,
              s->z.msg ? ": " : "", s->z.msg ? s->z.msg : "", s->path,
              (unsigned long long)(s->raw_off - s->z.avail_in));
      return;
    }
  }
}

/* Moves the unread bytes [pos, len) to the start of a buffer of `cap` (>= len - pos) bytes: this
 * one, in place, when it keeps its size and nobody else holds it; otherwise a new one, so that
 * bytes already consumed stay where they are for whoever holds the old one (string views of a
 * decode step: tfq__instream_holder).  0, or -1 out of memory (nothing changed). */
static int rebase(tfq__instream *s, size_t cap) {
  size_t keep = s->len - s->pos;
  if (cap == s->cap && tfq__tensor_sole(s->holder)) {
    memmove(s->buf, s->buf + s->pos, keep);
  } else {
    tfq_tensor *t = buf_new(cap);
    if (!t) return -1;
    memcpy(t->data, s->buf + s->pos, keep);
    tfq_tensor_free(s->holder);
    s->holder = t;
    s->buf = t->data;
    s->cap = cap;
  }
  s->base += s->pos;
  s->len = keep;
  s->pos = 0;
  return 0;
}

tfq_code tfq__instream_ensure(tfq__instream *s, size_t want, const char **p, size_t *avail,
                              tfq_status *st) {
  if (s->len - s->pos < want && !s->eof) {
    if (s->pos > 0 && rebase(s, s->cap)) return TFQ__OOM(st);
    while (s->len < want && !s->eof) {
      /* Grow as the bytes arrive, not to `want` at once: a length read from a corrupt file (a
       * TFRecord header) must not allocate memory the file does not back.  The buffer is full of
       * bytes read, so doubling it allocates at most twice what the file has given; growing only
       * to `want` would crawl when callers ask for one byte more at a time (a line reader
       * looking for the end of a long line: one read() per byte). */
      if (s->len == s->cap && rebase(s, s->cap * 2)) return TFQ__OOM(st);
      fill(s);
    }
  }
  *p = s->buf + s->pos;
  *avail = s->len - s->pos;
  if (*avail < want && s->err) { /* every stream error message names the file */
    tfq_status_set(st, s->err, "%s", s->errmsg);
    tfq__status_names_file(st);
    return s->err;
  }
  return TFQ_OK;
}

const char *tfq__instream_peek(tfq__instream *s, size_t *avail) {
  *avail = s->len - s->pos;
  return s->buf + s->pos;
}

void tfq__instream_consume(tfq__instream *s, size_t n) {
  s->pos += n;
  if (s->pos == s->len && tfq__tensor_sole(s->holder)) { /* else the next ensure moves on */
    s->base += s->pos;
    s->pos = s->len = 0;
  }
}

uint64_t tfq__instream_pos(const tfq__instream *s) { return s->base + s->pos; }

tfq_code tfq__instream_skip(tfq__instream *s, uint64_t n, tfq_status *st) {
  size_t buffered = s->len - s->pos;
  size_t k = buffered < n ? buffered : (size_t)n;
  tfq__instream_consume(s, k);
  n -= k;
  /* a plain file: past the buffered bytes by lseek (a pipe cannot: it is read through) */
  if (n && s->comp == TFQ_COMPRESSION_NONE && !s->eof && s->len == 0) { /* nothing buffered */
    struct stat sb;
    if (fstat(s->fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
        lseek(s->fd, (off_t)n, SEEK_CUR) != (off_t)-1) {
      s->base += n;
      n = 0;
    }
  }
  while (n) {
    const char *p;
    size_t avail;
    tfq_code c = tfq__instream_ensure(s, 1, &p, &avail, st);
    if (c) return c;
    if (avail == 0)
      return tfq_status_set(st, TFQ_OUT_OF_RANGE, "%s ends before offset %llu", s->path,
                            (unsigned long long)(tfq__instream_pos(s) + n));
    k = avail < n ? avail : (size_t)n;
    tfq__instream_consume(s, k);
    n -= k;
  }
  return TFQ_OK;
}
size_t tfq__instream_capacity(const tfq__instream *s) { return s->cap; }

void tfq__instream_trim(tfq__instream *s) {
  if (s->cap <= s->init_cap || s->len - s->pos > s->init_cap) return;
  (void)rebase(s, s->init_cap); /* out of memory: the grown buffer stays */
}

tfq_tensor *tfq__instream_holder(const tfq__instream *s) { return s->holder; }

/* ---- output ---- */

#define OUT_BUF (256u << 10)

struct tfq__outstream {
  int fd;
  char *path;
  tfq_compression comp;
  unsigned char *buf; /* bytes waiting for write() */
  size_t len;
  z_stream z;
  int z_live;
};

static tfq_code write_all(tfq__outstream *s, const void *p, size_t n, tfq_status *st) {
  const char *c = p;
  while (n) {
    ssize_t k = write(s->fd, c, n);
    if (k < 0) {
      if (errno == EINTR) continue;
      return errno_status(s->path, errno, st);
    }
    c += k;
    n -= (size_t)k;
  }
  return TFQ_OK;
}

static tfq_code drain(tfq__outstream *s, tfq_status *st) {
  tfq_code c = write_all(s, s->buf, s->len, st);
  s->len = 0;
  return c;
}

tfq_code tfq__outstream_open(const char *path, tfq_compression c, tfq__outstream **out,
                             tfq_status *st) {
  *out = NULL;
  tfq__outstream *s = tfq__calloc(1, sizeof *s);
  if (!s) return TFQ__OOM(st);
  s->fd = -1;
  s->comp = c;
  s->path = tfq__strdup(path);
  s->buf = tfq_malloc(OUT_BUF);
  if (!s->path || !s->buf) goto oom;
  if (c != TFQ_COMPRESSION_NONE) {
    s->z.zalloc = z_alloc;
    s->z.zfree = z_free;
    int zr = deflateInit2(&s->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
                          c == TFQ_COMPRESSION_GZIP ? 31 : 15, 8, Z_DEFAULT_STRATEGY);
    if (zr != Z_OK) goto oom;
    s->z_live = 1;
  }
  s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (s->fd < 0) {
    int err = errno;
    tfq_code code = errno_status(path, err, st);
    (void)tfq__outstream_close(s, NULL);
    return code;
  }
  *out = s;
  return TFQ_OK;
oom:
  (void)tfq__outstream_close(s, NULL);
  return TFQ__OOM(st);
}

static tfq_code deflate_some(tfq__outstream *s, const void *p, size_t n, int flush,
                             tfq_status *st) {
  s->z.next_in = (Bytef *)(uintptr_t)p;
  s->z.avail_in = (uInt)n;
  for (;;) {
    s->z.next_out = s->buf + s->len;
    s->z.avail_out = (uInt)(OUT_BUF - s->len);
    int zr = deflate(&s->z, flush);
    s->len = OUT_BUF - s->z.avail_out;
    if (zr == Z_STREAM_ERROR) return tfq_status_set(st, TFQ_INTERNAL, "deflate() failed");
    if (s->len == OUT_BUF) {
      tfq_code c = drain(s, st);
      if (c) return c;
      continue;
    }
    if (s->z.avail_in == 0 && (flush == Z_NO_FLUSH || zr == Z_STREAM_END || flush == Z_SYNC_FLUSH))
      return TFQ_OK;
  }
}

tfq_code tfq__outstream_write(tfq__outstream *s, const void *p, size_t n, tfq_status *st) {
  if (s->comp != TFQ_COMPRESSION_NONE) {
    const char *c = p;
    while (n) { /* avail_in is a uInt */
      size_t k = n > (1u << 30) ? (1u << 30) : n;
      tfq_code code = deflate_some(s, c, k, Z_NO_FLUSH, st);
      if (code) return code;
      c += k;
      n -= k;
    }
    return TFQ_OK;
  }
  if (s->len + n > OUT_BUF) {
    tfq_code c = drain(s, st);
    if (c) return c;
    if (n >= OUT_BUF) return write_all(s, p, n, st);
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  return TFQ_OK;
}

tfq_code tfq__outstream_flush(tfq__outstream *s, tfq_status *st) {
  if (s->comp != TFQ_COMPRESSION_NONE) {
    tfq_code c = deflate_some(s, NULL, 0, Z_SYNC_FLUSH, st);
    if (c) return c;
  }
  return drain(s, st);
}

tfq_code tfq__outstream_close(tfq__outstream *s, tfq_status *st) {
  if (!s) return TFQ_OK;
  tfq_code c = TFQ_OK;
  if (s->fd >= 0) {
    if (s->z_live) c = deflate_some(s, NULL, 0, Z_FINISH, st);
    if (!c) c = drain(s, st);
    if (close(s->fd) != 0 && !c) c = errno_status(s->path, errno, st);
  }
  if (s->z_live) deflateEnd(&s->z);
  tfq_free(s->buf);
  tfq_free(s->path);
  tfq_free(s);
  return c;
}
