/* tfq-cat: preview the shuffled minibatches a TF1 input pipeline would feed a model.
 *
 * It runs the real tfq pipeline:
 *
 *   string_input_producer(files, num_epochs)            filename queue (FIFO)
 *     -> N reader threads (QueueRunner ops): read_up_to -> decode_csv -> enqueue_many
 *     -> RandomShuffleQueue (capacity, min_after_dequeue, seed)   (FIFO with --no-shuffle)
 *     -> main thread: dequeue_up_to(batch) (dequeue_many with --drop-remainder) -> print
 *
 * and stops the coordinator as soon as it has printed what was asked, so previewing a few
 * batches of a huge file reads little more than the shuffle buffer.
 *
 * Compression is per reader in tfq, and a reader takes its work from a queue: so each reader
 * thread takes a filename from the producer's queue, hands it to the reader of that file's
 * compression through a one-element work queue, and reads it with read_up_to.
 *
 * Public headers only.  See tools/tfq-cat.1 and docs/tfq-cat.md. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <tfq/producer.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

#include "tfq_cat_args.h"

#define INFER_ROWS 100
#define READ_CHUNK 256
#define STDIN_PREFIX_MAX ((size_t)1 << 20)

/* Exit codes (style-and-reliability.md B10). */
enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

/* ---- small helpers ------------------------------------------------------------------------- */

static int g_quiet;

static void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnx_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs(PROG ": ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static _Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs(PROG ": ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fputs("Try '" PROG " --help' for more information.\n", stderr);
  exit(EXIT_USAGE);
}

static _Noreturn void die_oom(void) {
  fputs(PROG ": out of memory\n", stderr);
  exit(EXIT_DATA);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die_oom();
  return p;
}
static void *xcalloc(size_t n, size_t m) {
  void *p = calloc(n ? n : 1, m ? m : 1);
  if (!p) die_oom();
  return p;
}
static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) die_oom();
  return p;
}
static char *xstrndup(const char *s, size_t n) {
  char *d = xmalloc(n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}
static char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

#include "sbuf.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- number formatting (shortest round trip) ---------------------------------------------- */

/* Writes `v` in the shortest %.{1..9}g (float32: `f32` set, v holding the float exactly) or
 * %.{1..17}g (float64) form that parses back to the same value; NaN / Infinity / -Infinity. */
static void fmt_real(char *buf, size_t cap, double v, int f32) {
  if (isnan(v)) {
    snprintf(buf, cap, "NaN");
    return;
  }
  if (isinf(v)) {
    snprintf(buf, cap, v > 0 ? "Infinity" : "-Infinity");
    return;
  }
  for (int p = 1; p <= (f32 ? 9 : 17); p++) {
    snprintf(buf, cap, "%.*g", p, v);
    if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) return;
  }
}
static void fmt_float(char *buf, size_t cap, float v) { fmt_real(buf, cap, v, 1); }
static void fmt_double(char *buf, size_t cap, double v) { fmt_real(buf, cap, v, 0); }

/* Length of the valid UTF-8 sequence at s[0..n) (1..4), or 0 if it is not valid. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return len;
}

/* Appends `s` as a JSON string: valid UTF-8 as is, other bytes as \u00XX. */
static void json_string(sbuf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  sb_putc(b, '"');
  size_t i = 0;
  while (i < n) {
    unsigned c = u[i];
    if (c == '"' || c == '\\') {
      sb_putc(b, '\\');
      sb_putc(b, (char)c);
      i++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\b': sb_puts(b, "\\b"); break;
        case '\f': sb_puts(b, "\\f"); break;
        default: sb_printf(b, "\\u%04x", c);
      }
      i++;
    } else if (c < 0x80) {
      sb_putc(b, (char)c);
      i++;
    } else {
      size_t l = utf8_seq(u + i, n - i);
      if (l) {
        sb_add(b, s + i, l);
        i += l;
      } else {
        sb_printf(b, "\\u%04x", c);
        i++;
      }
    }
  }
  sb_putc(b, '"');
}

/* Appends `s` for a terminal table: printable text as is, the rest escaped (\t, \n, \xNN).
 * Returns the display width added (one column per code point). */
static size_t table_string(sbuf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t w = 0, i = 0;
  while (i < n) {
    unsigned c = u[i];
    if (c == '\\') {
      sb_puts(b, "\\\\");
      w += 2;
      i++;
    } else if (c == '\t') {
      sb_puts(b, "\\t");
      w += 2;
      i++;
    } else if (c == '\n') {
      sb_puts(b, "\\n");
      w += 2;
      i++;
    } else if (c == '\r') {
      sb_puts(b, "\\r");
      w += 2;
      i++;
    } else if (c < 0x20 || c == 0x7F) {
      sb_printf(b, "\\x%02x", c);
      w += 4;
      i++;
    } else if (c < 0x80) {
      sb_putc(b, (char)c);
      w++;
      i++;
    } else {
      size_t l = utf8_seq(u + i, n - i);
      if (l) {
        sb_add(b, s + i, l);
        w++;
        i += l;
      } else {
        sb_printf(b, "\\x%02x", c);
        w += 4;
        i++;
      }
    }
  }
  return w;
}

/* Appends an RFC 4180 field: quoted when it contains ',', '"', CR or LF. */
static void csv_field(sbuf *b, const char *s, size_t n) {
  int q =
      n == 0 ? 0
             : (memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n) || memchr(s, '\r', n));
  if (!q) {
    sb_add(b, s, n);
    return;
  }
  sb_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') sb_putc(b, '"');
    sb_putc(b, s[i]);
  }
  sb_putc(b, '"');
}

/* Formats a spec back into -d syntax. */
static void spec_to_string(sbuf *b, const field_spec *fs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) sb_putc(b, ',');
    sb_puts(b, spec_type_name(fs[i].dtype));
    if (fs[i].required) continue;
    sb_putc(b, ':');
    if (fs[i].dtype == TFQ_STRING) {
      int q = memchr(fs[i].def, ',', fs[i].deflen) || memchr(fs[i].def, '"', fs[i].deflen);
      if (q) {
        sb_putc(b, '"');
        for (size_t k = 0; k < fs[i].deflen; k++) {
          if (fs[i].def[k] == '"') sb_putc(b, '"');
          sb_putc(b, fs[i].def[k]);
        }
        sb_putc(b, '"');
      } else {
        sb_add(b, fs[i].def, fs[i].deflen);
      }
    } else {
      sb_puts(b, fs[i].def);
    }
  }
}

/* ---- input files ------------------------------------------------------------------------------
 */

typedef struct {
  const char *display; /* the operand as given ("-" for standard input) */
  char *path;          /* what the readers open (the operand, or /dev/fd/N for stdin) */
  tfq_compression comp;
  int is_stdin;
  char *sample_path; /* what inference reads (a memfd holding the stdin prefix), or NULL */
  int sample_truncated;
  int is_pipe; /* read_up_to blocks until it has n records: read a batch at a time */
} input_file;

/* Compression from the first bytes of a file, then from its name. */
static tfq_compression detect_compression(const unsigned char *m, size_t n, const char *name,
                                          in_format fmt) {
  if (n >= 2 && m[0] == 0x1F && m[1] == 0x8B) return TFQ_COMPRESSION_GZIP;
  size_t len = strlen(name);
  int ext = strip_comp_ext(name, &len);
  if (ext >= 0) return (tfq_compression)ext;
  /* An uncompressed TFRecord starts with a length whose masked CRC32C follows it. */
  if (fmt == FMT_TFRECORD && n >= 12) {
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

/* ---- standard input ---------------------------------------------------------------------------
 * A pipe cannot be opened twice nor peeked, so the first bytes are read here (to detect the
 * compression and infer the types), kept in a memfd for inference, and a pump thread feeds them
 * and the rest of standard input into a pipe that the reader opens as /dev/fd/N. */

typedef struct {
  char *prefix;
  size_t n;
  int out_fd;
} pump_ctx;

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The pump's write end, so that a stop can end the reader's blocking read() on the pipe: it is
 * replaced by /dev/null (dup2, so the number is never reused while the pump writes to it). */
static pthread_mutex_t g_pump_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_pump_fd = -1;

static void pump_detach_reader(void) {
  pthread_mutex_lock(&g_pump_mu);
  if (g_pump_fd >= 0) {
    int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (nul >= 0) {
      dup2(nul, g_pump_fd);
      close(nul);
    }
  }
  pthread_mutex_unlock(&g_pump_mu);
}

static void *pump_main(void *arg) {
  pump_ctx *c = arg;
  int ok = write_all(c->out_fd, c->prefix, c->n) == 0;
  free(c->prefix);
  c->prefix = NULL;
  if (ok) {
    char buf[1 << 16];
    for (;;) {
      ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      if (write_all(c->out_fd, buf, (size_t)r)) break;
    }
  }
  pthread_mutex_lock(&g_pump_mu);
  close(c->out_fd);
  g_pump_fd = -1;
  pthread_mutex_unlock(&g_pump_mu);
  free(c);
  return NULL;
}

static size_t count_newlines(const char *p, size_t n) {
  size_t k = 0;
  for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) k++;
  return k;
}

static void setup_stdin(input_file *f, const options *o, in_format fmt, int need_sample) {
  struct stat sb;
  if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
      lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
    unsigned char m[16];
    ssize_t r = pread(STDIN_FILENO, m, sizeof m, 0);
    f->path = xstrdup("/dev/stdin");
    f->comp = o->compression == COMP_AUTO ? detect_compression(m, r > 0 ? (size_t)r : 0, "", fmt)
                                          : (tfq_compression)o->compression;
    return;
  }
  if (o->num_epochs > 1)
    usage_error("--num-epochs=%" PRId64 " needs files: standard input can be read only once",
                o->num_epochs);
  /* Read a prefix: enough lines for inference, or the magic bytes. */
  size_t want_lines = need_sample ? (size_t)o->skip_header_lines + INFER_ROWS + 1 : 0;
  size_t cap = 1 << 16, n = 0;
  char *buf = xmalloc(cap);
  size_t magic = fmt == FMT_TFRECORD ? 12 : 2;
  for (;;) {
    if (n >= STDIN_PREFIX_MAX || (!need_sample && n >= magic)) break;
    if (n >= 2 && need_sample &&
        !((unsigned char)buf[0] == 0x1F && (unsigned char)buf[1] == 0x8B) &&
        count_newlines(buf, n) >= want_lines)
      break;
    if (n >= magic) {
      /* A slow stream (tail -f | tfq-cat): once some data is in, wait at most 200 ms for
       * more before inferring from what arrived. */
      struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
      int pr = poll(&pfd, 1, 200);
      if (pr == 0) break;
      if (pr < 0 && errno == EINTR) continue;
    }
    if (n == cap) {
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    ssize_t r = read(STDIN_FILENO, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      warnx_("-: %s", strerror(errno));
      exit(EXIT_DATA);
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  f->comp = o->compression == COMP_AUTO ? detect_compression((const unsigned char *)buf, n, "", fmt)
                                        : (tfq_compression)o->compression;
  if (need_sample) {
    int mfd = memfd_create("tfq-cat-stdin-prefix", 0);
    if (mfd < 0) {
      warnx_("memfd_create: %s", strerror(errno));
      exit(EXIT_DATA);
    }
    size_t keep = n;
    if (f->comp == TFQ_COMPRESSION_NONE) {
      /* Keep whole lines only (the last one may continue beyond the prefix). */
      while (keep && buf[keep - 1] != '\n') keep--;
      if (!keep) keep = n;
    }
    if (write_all(mfd, buf, keep)) {
      warnx_("memfd: %s", strerror(errno));
      exit(EXIT_DATA);
    }
    sbuf p = {0};
    sb_printf(&p, "/dev/fd/%d", mfd);
    f->sample_path = p.p;
    f->sample_truncated = 1;
  }
  int fds[2];
  if (pipe(fds)) {
    warnx_("pipe: %s", strerror(errno));
    exit(EXIT_DATA);
  }
  (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  sbuf p = {0};
  sb_printf(&p, "/dev/fd/%d", fds[0]);
  f->path = p.p;
  f->is_pipe = 1;
  pump_ctx *pc = xmalloc(sizeof *pc);
  pc->prefix = buf;
  pc->n = n;
  pc->out_fd = fds[1];
  g_pump_fd = fds[1];
  pthread_t th;
  if (pthread_create(&th, NULL, pump_main, pc)) {
    warnx_("cannot start a thread");
    exit(EXIT_DATA);
  }
  pthread_detach(th);
}

/* ---- the application state ---------------------------------------------------------------- */

typedef struct app app;

typedef struct {
  app *a;
  int id;
  tfq_reader *readers[3]; /* by tfq_compression */
  tfq_queue *unit;        /* one-file work queue being read, or NULL */
  const input_file *file;
  int64_t last_line; /* text/csv: line of the last record read from `file` */
  tfq_status *st2;
} worker;

struct app {
  options o;
  in_format fmt;
  input_file *files;
  size_t nfiles;
  field_spec *fields;
  size_t nfields;
  char **names; /* nfields names */
  tfq_csv_options *csv;
  tfq_spec *spec; /* of the record queue: fields (+ key) */
  tfq_queue *q;   /* RandomShuffleQueue or FIFO */
  tfq_queue *filenames;
  tfq_producer_thread *producer;
  tfq_coord *coord;
  tfq_runner *runner;
  worker *workers;
  int64_t capacity, mad;
  atomic_llong records_in;
  /* output */
  int64_t batches_out, records_out;
  double fullness_sum;
  int64_t fullness_n;
  int header_done;
  sbuf out;
  const char *stdin_path; /* to print keys as "-:N" */
};

static atomic_int g_signal;
static atomic_int g_phase; /* 0 setup, 1 pipeline running */
static _Atomic(tfq_coord *) g_coord;

/* Maps a reader key "<path>:<n>" to what the user named the file. */
static void display_key(const app *a, const char *k, size_t n, sbuf *out) {
  if (a->stdin_path) {
    size_t pl = strlen(a->stdin_path);
    if (n > pl && memcmp(k, a->stdin_path, pl) == 0 && k[pl] == ':') {
      sb_putc(out, '-');
      sb_add(out, k + pl, n - pl);
      return;
    }
  }
  sb_add(out, k, n);
}

static const input_file *find_file(const app *a, const char *path, size_t n) {
  for (size_t i = 0; i < a->nfiles; i++)
    if (strlen(a->files[i].path) == n && memcmp(a->files[i].path, path, n) == 0)
      return &a->files[i];
  return NULL;
}

static tfq_code new_reader(const app *a, tfq_compression comp, int for_sample, int tf_compat,
                           tfq_reader **out, tfq_status *st) {
  tfq_reader_options *ro;
  tfq_code c = tfq_reader_options_new(&ro, st);
  if (c) return c;
  tfq_reader_kind kind = TFQ_READER_TEXT_LINE;
  if (a->fmt == FMT_TFRECORD) kind = TFQ_READER_TFRECORD;
  if (a->fmt == FMT_FIXED) kind = TFQ_READER_FIXED_LENGTH;
  if (for_sample) {
    kind = TFQ_READER_TEXT_LINE;
    tfq_reader_options_set_tf_compat_truncation(ro, tf_compat);
  } else {
    tfq_reader_options_set_skip_header_lines(ro, a->o.skip_header_lines);
  }
  if (kind == TFQ_READER_FIXED_LENGTH) {
    tfq_reader_options_set_record_bytes(ro, a->o.record_bytes);
    tfq_reader_options_set_header_bytes(ro, a->o.header_bytes);
    tfq_reader_options_set_footer_bytes(ro, a->o.footer_bytes);
    tfq_reader_options_set_hop_bytes(ro, a->o.hop_bytes);
  }
  tfq_reader_options_set_compression(ro, comp);
  c = tfq_reader_new(kind, ro, out, st);
  tfq_reader_options_free(ro);
  return c;
}

/* A one-element work queue holding `path`, closed. */
static tfq_code unit_queue(const char *path, size_t len, tfq_queue **out, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_tuple *t = NULL;
  tfq_tensor *s = NULL;
  tfq_queue *q = NULL;
  tfq_code c;
  if ((c = tfq_spec_new(&spec, st)) || (c = tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st)) ||
      (c = tfq_fifo_queue_new(spec, 1, "tfq_cat_unit", &q, st)) ||
      (c = tfq_tensor_new(TFQ_STRING, NULL, 0, &s, st)) ||
      (c = tfq_tensor_set_string(s, 0, path, len, st)) || (c = tfq_tuple_new(1, &t, st)))
    goto done;
  tfq_tuple_set_take(t, 0, s);
  s = NULL;
  if ((c = tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st)) ||
      (c = tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st)))
    goto done;
  *out = q;
  q = NULL;
done:
  tfq_tensor_free(s);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  return c;
}

static int64_t key_line(const char *k, size_t n) {
  /* Keys are (pointer, length) bytes, not NUL-terminated. */
  size_t i = n;
  while (i && k[i - 1] >= '0' && k[i - 1] <= '9') i--;
  int64_t v = 0;
  for (; i < n && v < INT64_MAX / 10 - 9; i++) v = v * 10 + (k[i] - '0');
  return v;
}

/* Finds the first record of `values` that fails to decode on its own: its index and message. */
static int64_t first_bad_record(const app *a, const tfq_tensor *values, tfq_status *msg) {
  int64_t n = tfq_tensor_num_elements(values);
  for (int64_t i = 0; i < n; i++) {
    size_t len;
    const char *rec = tfq_tensor_string(values, i, &len);
    tfq_tuple *t = NULL;
    const char *lines[1] = {rec};
    size_t lens[1] = {len};
    tfq_code c = tfq_decode_csv_lines(a->csv, lines, lens, 1, &t, msg);
    tfq_tuple_free(t);
    if (c) return i;
  }
  return -1;
}

/* The reader op: read_up_to -> decode_csv -> enqueue_many. */
static tfq_code worker_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  worker *w = ctx;
  app *a = w->a;
  tfq_code c;
  if (!w->unit) {
    tfq_tuple *fn = NULL;
    c = tfq_queue_dequeue(a->filenames, &fn, cancel, TFQ_NO_TIMEOUT, st);
    if (c) return c; /* OUT_OF_RANGE: no more files; CANCELLED: stopping */
    size_t len;
    const char *path = tfq_tensor_string(tfq_tuple_get(fn, 0), 0, &len);
    w->file = find_file(a, path, len);
    c = unit_queue(path, len, &w->unit, st);
    tfq_tuple_free(fn);
    if (c) return c;
    if (!w->file) return tfq_status_set(st, TFQ_INTERNAL, "unknown work unit");
    tfq_compression comp = w->file->comp;
    if (!w->readers[comp] && (c = new_reader(a, comp, 0, 0, &w->readers[comp], st))) return c;
    w->last_line = a->o.skip_header_lines;
  }
  tfq_reader *r = w->readers[w->file->comp];
  tfq_tensor *keys = NULL, *values = NULL;
  int64_t chunk = READ_CHUNK;
  if (w->file->is_pipe && a->o.batch_size < chunk) chunk = a->o.batch_size;
  c = tfq_reader_read_up_to(r, w->unit, chunk, &keys, &values, cancel, st);
  if (c == TFQ_OUT_OF_RANGE) { /* this file is done */
    tfq_queue_free(w->unit);
    w->unit = NULL;
    tfq_status_clear(st);
    return TFQ_OK;
  }
  if (c) {
    if (c == TFQ_CANCELLED) return c;
    sbuf m = {0};
    if (a->fmt == FMT_CSV || a->fmt == FMT_TEXT)
      sb_printf(&m, "%s:%" PRId64 ": %s", w->file->display, w->last_line + 1,
                tfq_status_message(st));
    else
      sb_printf(&m, "%s: %s", w->file->display, tfq_status_message(st));
    tfq_status_set(st, c, "%s", m.p);
    free(m.p);
    return c;
  }
  int64_t k = tfq_tensor_num_elements(keys);
  if (k > 0) {
    size_t kl;
    const char *ks = tfq_tensor_string(keys, k - 1, &kl);
    w->last_line = key_line(ks, kl);
  }
  tfq_tuple *batch = NULL;
  if (a->fmt == FMT_CSV) {
    c = tfq_decode_csv(a->csv, values, &batch, st);
    if (c) {
      int64_t bad = first_bad_record(a, values, w->st2);
      sbuf m = {0};
      if (bad >= 0) {
        size_t kl;
        const char *ks = tfq_tensor_string(keys, bad, &kl);
        display_key(a, ks, kl, &m);
        sb_printf(&m, ": %s", tfq_status_message(w->st2));
      } else {
        sb_printf(&m, "%s: %s", w->file->display, tfq_status_message(st));
      }
      tfq_status_set(st, c, "%s", m.p);
      free(m.p);
      tfq_tensor_free(keys);
      tfq_tensor_free(values);
      return c;
    }
    if (a->o.keys) {
      size_t nf = tfq_tuple_size(batch);
      tfq_tuple *b2 = NULL;
      if ((c = tfq_tuple_new(nf + 1, &b2, st))) goto fail;
      for (size_t i = 0; i < nf; i++)
        tfq_tuple_set_take(b2, i, tfq_tensor_ref(tfq_tuple_get(batch, i)));
      tfq_tuple_set_take(b2, nf, keys);
      keys = NULL;
      tfq_tuple_free(batch);
      batch = b2;
    }
    tfq_tensor_free(values);
    values = NULL;
  } else {
    if ((c = tfq_tuple_new(a->o.keys ? 2 : 1, &batch, st))) goto fail;
    tfq_tuple_set_take(batch, 0, values);
    values = NULL;
    if (a->o.keys) {
      tfq_tuple_set_take(batch, 1, keys);
      keys = NULL;
    }
  }
  tfq_tensor_free(keys);
  keys = NULL;
  c = tfq_queue_enqueue_many(a->q, batch, cancel, TFQ_NO_TIMEOUT, st);
  tfq_tuple_free(batch);
  if (c == TFQ_OK) atomic_fetch_add(&a->records_in, k);
  return c;
fail:
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  tfq_tuple_free(batch);
  return c;
}

/* ---- CSV: splitting (for the header and the field count), inference ------------------------- */

/* Splits one record with decode_csv's field rules into fields (unquoted). */
static size_t split_record(const char *s, size_t n, char delim, int quote, sbuf **fields_out) {
  size_t nf = 0, cap = 8;
  sbuf *fs = xcalloc(cap, sizeof *fs);
  size_t i = 0;
  if (n == 0) {
    *fields_out = fs;
    return 0;
  }
  for (;;) {
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    if (nf == cap) {
      cap *= 2;
      fs = xrealloc(fs, cap * sizeof *fs);
      memset(fs + nf, 0, (cap - nf) * sizeof *fs);
    }
    sbuf *f = &fs[nf++];
    sb_add(f, "", 0);
    if (quote && i < n && s[i] == '"') {
      i++;
      while (i < n) {
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            sb_putc(f, '"');
            i += 2;
            continue;
          }
          i++;
          break;
        }
        sb_putc(f, s[i++]);
      }
      while (i < n && s[i] != delim) i++;
    } else {
      size_t st = i;
      while (i < n && s[i] != delim) i++;
      sb_add(f, s + st, i - st);
    }
    if (i >= n) break;
    i++; /* the delimiter: a field follows, possibly empty */
    if (i == n) {
      if (nf == cap) {
        cap++;
        fs = xrealloc(fs, cap * sizeof *fs);
      }
      memset(&fs[nf], 0, sizeof fs[nf]);
      sb_add(&fs[nf++], "", 0);
      break;
    }
  }
  *fields_out = fs;
  return nf;
}

static void free_fields(sbuf *fs, size_t n) {
  for (size_t i = 0; i < n; i++) free(fs[i].p);
  free(fs);
}

static tfq_code build_csv_options(const app *a, const field_spec *fs, size_t n,
                                  tfq_csv_options **out, tfq_status *st) {
  tfq_csv_options *o;
  tfq_code c = tfq_csv_options_new(&o, st);
  if (c) return c;
  char d = a->o.field_delim;
  if ((c = tfq_csv_options_set_field_delim(o, &d, 1, st))) goto fail;
  tfq_csv_options_set_use_quote_delim(o, !a->o.no_quote_delim);
  if (a->o.na_value &&
      (c = tfq_csv_options_set_na_value(o, a->o.na_value, strlen(a->o.na_value), st)))
    goto fail;
  if (a->o.nselect && (c = tfq_csv_options_set_select_cols(o, a->o.select_cols, a->o.nselect, st)))
    goto fail;
  for (size_t i = 0; i < n; i++) {
    const field_spec *f = &fs[i];
    if (f->required)
      c = tfq_csv_options_add_required(o, f->dtype, st);
    else if (f->dtype == TFQ_FLOAT)
      c = tfq_csv_options_add_default_float(o, f->v.f, st);
    else if (f->dtype == TFQ_DOUBLE)
      c = tfq_csv_options_add_default_double(o, f->v.d, st);
    else if (f->dtype == TFQ_INT32)
      c = tfq_csv_options_add_default_int32(o, f->v.i32, st);
    else if (f->dtype == TFQ_INT64)
      c = tfq_csv_options_add_default_int64(o, f->v.i64, st);
    else
      c = tfq_csv_options_add_default_string(o, f->def, f->deflen, st);
    if (c) goto fail;
  }
  *out = o;
  return TFQ_OK;
fail:
  tfq_csv_options_free(o);
  return c;
}

/* Does `v` parse as a single field of `dt` with decode_csv's own number rules? */
static int probe_number(tfq_dtype dt, const char *v, size_t n) {
  static tfq_csv_options *probes[2];
  int i = dt == TFQ_INT64 ? 0 : 1;
  if (!probes[i]) {
    if (tfq_csv_options_new(&probes[i], NULL)) die_oom();
    tfq_csv_options_set_use_quote_delim(probes[i], 0);
    char d = '\x01'; /* a byte unlikely in the value: a split means "not a number" */
    if (tfq_csv_options_set_field_delim(probes[i], &d, 1, NULL) ||
        tfq_csv_options_add_required(probes[i], dt, NULL))
      die_oom();
  }
  if (memchr(v, '\x01', n) || memchr(v, '\n', n) || memchr(v, '\r', n)) return 0;
  tfq_tuple *t = NULL;
  tfq_code c = tfq_decode_csv_record(probes[i], v, n, &t, NULL);
  tfq_tuple_free(t);
  return c == TFQ_OK;
}

/* Reads the header line and up to INFER_ROWS records of the first file (a TextLine reader that
 * skips nothing and, for a standard-input prefix, ends a truncated stream silently). */
static void read_sample(app *a, char **header, size_t *header_len, sbuf **rows, size_t *nrows) {
  const input_file *f = &a->files[0];
  const char *path = f->sample_path ? f->sample_path : f->path;
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  tfq_reader *r = NULL;
  tfq_queue *q = NULL;
  *header = NULL;
  *rows = xcalloc(INFER_ROWS, sizeof **rows);
  *nrows = 0;
  int64_t want = a->o.skip_header_lines + INFER_ROWS, got = 0;
  if (new_reader(a, f->comp, 1, f->sample_truncated, &r, st) ||
      unit_queue(path, strlen(path), &q, st))
    goto done;
  while (got < want) {
    tfq_tensor *keys = NULL, *values = NULL;
    tfq_code c =
        tfq_reader_read_up_to(r, q, want - got, &keys, &values, tfq_coord_cancel(a->coord), st);
    if (c) break; /* end of file, or an error the pipeline reports properly */
    int64_t k = tfq_tensor_num_elements(values);
    for (int64_t i = 0; i < k; i++, got++) {
      size_t len;
      const char *v = tfq_tensor_string(values, i, &len);
      if (got == 0 && a->o.skip_header_lines > 0) {
        *header = xstrndup(v, len);
        *header_len = len;
      } else if (got >= a->o.skip_header_lines) {
        sb_add(&(*rows)[(*nrows)++], v, len);
      }
    }
    tfq_tensor_free(keys);
    tfq_tensor_free(values);
  }
done:
  tfq_reader_free(r);
  tfq_queue_free(q);
  tfq_status_free(st);
}

static void infer_fields(app *a, sbuf *rows, size_t nrows) {
  size_t ncols;
  if (a->o.nselect) {
    ncols = a->o.nselect;
  } else {
    sbuf *fs;
    ncols =
        nrows ? split_record(rows[0].p, rows[0].n, a->o.field_delim, !a->o.no_quote_delim, &fs) : 0;
    if (nrows) free_fields(fs, ncols);
  }
  if (ncols == 0) ncols = 1;
  field_spec *all_str = xcalloc(ncols, sizeof *all_str);
  for (size_t i = 0; i < ncols; i++) {
    all_str[i].dtype = TFQ_STRING;
    all_str[i].def = xstrdup("");
  }
  tfq_csv_options *o;
  if (build_csv_options(a, all_str, ncols, &o, NULL)) die_oom();
  int *is_int = xcalloc(ncols, sizeof *is_int), *is_num = xcalloc(ncols, sizeof *is_num);
  size_t *nonempty = xcalloc(ncols, sizeof *nonempty);
  for (size_t c = 0; c < ncols; c++) is_int[c] = is_num[c] = 1;
  for (size_t r = 0; r < nrows; r++) {
    tfq_tuple *t = NULL;
    if (tfq_decode_csv_record(o, rows[r].p, rows[r].n, &t, NULL)) {
      tfq_tuple_free(t);
      break; /* the pipeline will report this record */
    }
    for (size_t c = 0; c < ncols; c++) {
      size_t len;
      const char *v = tfq_tensor_string(tfq_tuple_get(t, c), 0, &len);
      if (!len) continue;
      nonempty[c]++;
      if (is_int[c] && !probe_number(TFQ_INT64, v, len)) is_int[c] = 0;
      if (!is_int[c] && is_num[c] && !probe_number(TFQ_DOUBLE, v, len)) is_num[c] = 0;
    }
    tfq_tuple_free(t);
  }
  tfq_csv_options_free(o);
  a->fields = all_str;
  a->nfields = ncols;
  for (size_t c = 0; c < ncols; c++) {
    field_spec *f = &a->fields[c];
    free(f->def);
    if (nonempty[c] && is_int[c]) {
      f->dtype = TFQ_INT64;
      f->def = xstrdup("0");
    } else if (nonempty[c] && is_num[c]) {
      f->dtype = TFQ_DOUBLE;
      f->def = xstrdup("0.0");
    } else {
      f->dtype = TFQ_STRING;
      f->def = xstrdup("");
    }
    f->deflen = strlen(f->def);
    (void)parse_default_number(f);
  }
  free(is_int);
  free(is_num);
  free(nonempty);
}

static void set_names(app *a, const char *header, size_t hlen) {
  a->names = xcalloc(a->nfields, sizeof *a->names);
  size_t nh = 0;
  sbuf *hf = NULL;
  if (header) nh = split_record(header, hlen, a->o.field_delim, !a->o.no_quote_delim, &hf);
  for (size_t i = 0; i < a->nfields; i++) {
    size_t col = a->o.nselect ? (size_t)a->o.select_cols[i] : i;
    if (header && col < nh) {
      a->names[i] = xstrndup(hf[col].p, hf[col].n);
    } else {
      sbuf b = {0};
      sb_printf(&b, "c%zu", i);
      a->names[i] = b.p;
    }
  }
  if (hf) free_fields(hf, nh);
}

/* ---- output -----------------------------------------------------------------------------------
 */

static int g_out_error; /* errno of a failed write to stdout */

static int out_flush(app *a, int force) {
  if (a->out.n && (force || a->out.n >= (1 << 16))) {
    if (write_all(STDOUT_FILENO, a->out.p, a->out.n)) {
      g_out_error = errno;
      sb_clear(&a->out);
      return -1;
    }
    sb_clear(&a->out);
  }
  return 0;
}

/* The text of element i of a numeric column. */
static void fmt_value(const tfq_tensor *t, int64_t i, char *buf, size_t cap) {
  const void *d = tfq_tensor_cdata(t);
  switch (tfq_tensor_dtype(t)) {
    case TFQ_FLOAT: fmt_float(buf, cap, ((const float *)d)[i]); break;
    case TFQ_DOUBLE: fmt_double(buf, cap, ((const double *)d)[i]); break;
    case TFQ_INT32: snprintf(buf, cap, "%" PRId32, ((const int32_t *)d)[i]); break;
    case TFQ_INT64: snprintf(buf, cap, "%" PRId64, ((const int64_t *)d)[i]); break;
    default: snprintf(buf, cap, "?");
  }
}

static void emit_jsonl(app *a, const tfq_tuple *b, int64_t n) {
  sbuf *o = &a->out;
  sb_printf(o, "{\"batch\":%" PRId64 ",\"size\":%" PRId64 ",\"columns\":[", a->batches_out, n);
  for (size_t c = 0; c < a->nfields; c++) {
    const tfq_tensor *t = tfq_tuple_get(b, c);
    sb_puts(o, c ? ",[" : "[");
    for (int64_t i = 0; i < n; i++) {
      if (i) sb_putc(o, ',');
      if (tfq_tensor_dtype(t) == TFQ_STRING) {
        size_t len;
        const char *s = tfq_tensor_string(t, i, &len);
        json_string(o, s, len);
      } else {
        char buf[64];
        fmt_value(t, i, buf, sizeof buf);
        if (isalpha((unsigned char)buf[0]) || (buf[0] == '-' && buf[1] == 'I'))
          sb_printf(o, "\"%s\"", buf);
        else
          sb_puts(o, buf);
      }
    }
    sb_putc(o, ']');
  }
  sb_putc(o, ']');
  if (a->o.keys) {
    const tfq_tensor *t = tfq_tuple_get(b, a->nfields);
    sb_puts(o, ",\"keys\":[");
    for (int64_t i = 0; i < n; i++) {
      size_t len;
      const char *s = tfq_tensor_string(t, i, &len);
      sbuf k = {0};
      display_key(a, s, len, &k);
      if (i) sb_putc(o, ',');
      json_string(o, k.p, k.n);
      free(k.p);
    }
    sb_putc(o, ']');
  }
  if (a->o.skip_header_lines > 0 && a->fmt == FMT_CSV) {
    sb_puts(o, ",\"names\":[");
    for (size_t c = 0; c < a->nfields; c++) {
      if (c) sb_putc(o, ',');
      json_string(o, a->names[c], strlen(a->names[c]));
    }
    sb_putc(o, ']');
  }
  sb_puts(o, "}\n");
}

static void emit_csv(app *a, const tfq_tuple *b, int64_t n) {
  sbuf *o = &a->out;
  if (!a->header_done) {
    a->header_done = 1;
    if (a->o.keys) sb_puts(o, "key,");
    for (size_t c = 0; c < a->nfields; c++) {
      if (c) sb_putc(o, ',');
      csv_field(o, a->names[c], strlen(a->names[c]));
    }
    sb_putc(o, '\n');
  }
  for (int64_t i = 0; i < n; i++) {
    if (a->o.keys) {
      size_t len;
      const char *s = tfq_tensor_string(tfq_tuple_get(b, a->nfields), i, &len);
      sbuf k = {0};
      display_key(a, s, len, &k);
      csv_field(o, k.p, k.n);
      free(k.p);
      sb_putc(o, ',');
    }
    for (size_t c = 0; c < a->nfields; c++) {
      const tfq_tensor *t = tfq_tuple_get(b, c);
      if (c) sb_putc(o, ',');
      if (tfq_tensor_dtype(t) == TFQ_STRING) {
        size_t len;
        const char *s = tfq_tensor_string(t, i, &len);
        csv_field(o, s, len);
      } else {
        char buf[64];
        fmt_value(t, i, buf, sizeof buf);
        sb_puts(o, buf);
      }
    }
    sb_putc(o, '\n');
  }
}

/* Truncates an escaped cell to `w` display columns ("..." marks the cut; right-aligned cells,
 * keys and numbers, keep their end). */
static void put_cell(sbuf *o, const char *s, size_t cw, size_t w, int right) {
  if (cw > w && right && w > 3) {
    size_t skip = cw - (w - 3), i = 0;
    while (s[i] && skip) {
      i++;
      while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
      skip--;
    }
    sb_puts(o, "...");
    sb_puts(o, s + i);
    return;
  }
  if (cw <= w) {
    if (right == 1)
      for (size_t k = cw; k < w; k++) sb_putc(o, ' ');
    sb_puts(o, s);
    if (right != 1)
      for (size_t k = cw; k < w; k++) sb_putc(o, ' ');
    return;
  }
  /* Cut after w-3 code points. */
  size_t keep = w > 3 ? w - 3 : 0, cps = 0, i = 0;
  while (s[i] && cps < keep) {
    i++;
    while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
    cps++;
  }
  sb_add(o, s, i);
  sb_puts(o, w >= 3 ? "..." : "");
}

static void emit_table(app *a, const tfq_tuple *b, int64_t n) {
  size_t ncol = a->nfields + (a->o.keys ? 1 : 0);
  char ***cells = xcalloc(ncol, sizeof *cells);
  size_t **cw = xcalloc(ncol, sizeof *cw);
  size_t *width = xcalloc(ncol, sizeof *width);
  int *right = xcalloc(ncol, sizeof *right);
  const char **head = xcalloc(ncol, sizeof *head);
  for (size_t c = 0; c < ncol; c++) {
    int is_key = a->o.keys && c == 0;
    size_t fc = a->o.keys ? c - 1 : c;
    const tfq_tensor *t = tfq_tuple_get(b, is_key ? a->nfields : fc);
    head[c] = is_key ? "key" : a->names[fc];
    sbuf hb = {0};
    width[c] = table_string(&hb, head[c], strlen(head[c]));
    free(hb.p);
    right[c] = is_key ? 2 : tfq_tensor_dtype(t) != TFQ_STRING; /* 2: key, left aligned */
    cells[c] = xcalloc((size_t)n, sizeof **cells);
    cw[c] = xcalloc((size_t)n, sizeof **cw);
    for (int64_t i = 0; i < n; i++) {
      sbuf s = {0};
      if (tfq_tensor_dtype(t) == TFQ_STRING) {
        size_t len;
        const char *v = tfq_tensor_string(t, i, &len);
        if (is_key) {
          sbuf k = {0};
          display_key(a, v, len, &k);
          cw[c][i] = table_string(&s, k.p, k.n);
          free(k.p);
        } else {
          cw[c][i] = table_string(&s, v, len);
        }
        if (!s.p) sb_add(&s, "", 0);
      } else {
        char buf[64];
        fmt_value(t, i, buf, sizeof buf);
        sb_puts(&s, buf);
        cw[c][i] = s.n;
      }
      cells[c][i] = s.p;
      if (cw[c][i] > width[c]) width[c] = cw[c][i];
    }
  }
  /* Fit 80 columns: shrink the widest text column while it is wider than 12. */
  for (;;) {
    size_t total = 0, widest = SIZE_MAX;
    for (size_t c = 0; c < ncol; c++) {
      total += width[c] + (c ? 2 : 0);
      if (right[c] != 1 && width[c] > 12 && (widest == SIZE_MAX || width[c] > width[widest]))
        widest = c;
    }
    if (total <= 80 || widest == SIZE_MAX) break;
    size_t over = total - 80;
    width[widest] = width[widest] - over < 12 ? 12 : width[widest] - over;
  }
  sbuf *o = &a->out;
  if (a->batches_out) sb_putc(o, '\n');
  sb_printf(o, "batch %" PRId64 " (%" PRId64 " record%s)\n", a->batches_out, n, n == 1 ? "" : "s");
  for (size_t c = 0; c < ncol; c++) {
    if (c) sb_puts(o, "  ");
    sbuf hb = {0};
    size_t hw = table_string(&hb, head[c], strlen(head[c]));
    put_cell(o, hb.p ? hb.p : "", hw, width[c], right[c]);
    free(hb.p);
  }
  while (o->n && o->p[o->n - 1] == ' ') o->n--;
  sb_putc(o, '\n');
  for (int64_t i = 0; i < n; i++) {
    for (size_t c = 0; c < ncol; c++) {
      if (c) sb_puts(o, "  ");
      put_cell(o, cells[c][i], cw[c][i], width[c], right[c]);
    }
    while (o->n && o->p[o->n - 1] == ' ') o->n--;
    sb_putc(o, '\n');
  }
  for (size_t c = 0; c < ncol; c++) {
    for (int64_t i = 0; i < n; i++) free(cells[c][i]);
    free(cells[c]);
    free(cw[c]);
  }
  free(cells);
  free(cw);
  free(width);
  free(right);
  free(head);
}

/* ---- signals and progress ---------------------------------------------------------------------
 */

static void *signal_main(void *arg) {
  sigset_t *set = arg;
  int sig;
  for (;;) {
    if (sigwait(set, &sig)) continue;
    atomic_store(&g_signal, sig);
    if (atomic_load(&g_phase) == 0 || !g_coord) _exit(128 + sig);
    (void)tfq_coord_request_stop(g_coord, TFQ_OK, NULL);
    /* A clean stop should take milliseconds; do not hang on a stuck input. */
    struct timespec ts = {5, 0};
    nanosleep(&ts, NULL);
    _exit(128 + sig);
  }
  return NULL;
}

static long long read_rchar(void) {
  FILE *f = fopen("/proc/self/io", "r");
  if (!f) return -1;
  char line[128];
  long long v = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "rchar:", 6) == 0) v = strtoll(line + 6, NULL, 10);
  fclose(f);
  return v;
}

typedef struct {
  app *a;
  double t0;
} progress_ctx;

static tfq_code progress_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  (void)cancel;
  (void)st;
  progress_ctx *p = ctx;
  app *a = p->a;
  double dt = now_s() - p->t0;
  long long in = atomic_load(&a->records_in);
  fprintf(stderr, "\r\033[K" PROG ": %lld records read, %.0f/s, queue %" PRId64 "/%" PRId64, in,
          dt > 0 ? (double)in / dt : 0.0, tfq_queue_size(a->q), a->capacity);
  return TFQ_OK;
}

/* ---- main ---------------------------------------------------------------------------------------
 */

static void check_files(app *a, int argc, char **argv) {
  int nops = argc - optind;
  a->nfiles = nops > 0 ? (size_t)nops : 1;
  a->files = xcalloc(a->nfiles, sizeof *a->files);
  int nstdin = 0, bad = 0;
  for (size_t i = 0; i < a->nfiles; i++) {
    input_file *f = &a->files[i];
    f->display = nops > 0 ? argv[optind + (int)i] : "-";
    if (strcmp(f->display, "-") == 0) {
      f->is_stdin = 1;
      if (++nstdin > 1) usage_error("standard input ('-') may be named only once");
      continue;
    }
    int fd = open(f->display, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0) {
      warnx_("%s: %s", f->display, strerror(errno));
      bad = 1;
      continue;
    }
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      warnx_("%s: %s", f->display, strerror(EISDIR));
      bad = 1;
      close(fd);
      continue;
    }
    f->path = xstrdup(f->display);
    unsigned char m[16];
    ssize_t r = read(fd, m, sizeof m);
    close(fd);
    f->comp = a->o.compression == COMP_AUTO
                  ? detect_compression(m, r > 0 ? (size_t)r : 0, f->display, a->fmt)
                  : (tfq_compression)a->o.compression;
  }
  if (bad) exit(EXIT_DATA);
}

/* Reports a failed cat_parse_options / cat_resolve as tfq-cat always has, and exits. */
static _Noreturn void args_failed(cat_args_status as, char *msg) {
  switch (as) {
    case CAT_ARGS_HELP: fputs(cat_usage_text, stdout); exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_VERSION:
      printf(PROG " (tfq) %s\n", tfq_version_string());
      exit(fflush(stdout) ? EXIT_DATA : EXIT_OK);
    case CAT_ARGS_USAGE: usage_error("%s", msg);
    default: die_oom();
  }
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  static app A;
  app *a = &A;
  {
    char *msg;
    int first_operand;
    cat_args_status as = cat_parse_options(argc, argv, &a->o, &first_operand, &msg);
    if (as != CAT_ARGS_OK) args_failed(as, msg);
  }
  options *o = &a->o;
  g_quiet = o->quiet;
  if (optind >= argc && isatty(STDIN_FILENO))
    usage_error("no input: name a FILE, or pipe data into standard input");

  /* Signals: one thread sigwaits; every other thread has them blocked. */
  static sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  pthread_t sig_th;
  if (pthread_create(&sig_th, NULL, signal_main, &sigs) == 0) pthread_detach(sig_th);

  /* The format: -f, else the first named file's extension; -d implies csv. */
  const char *first = optind < argc ? argv[optind] : "-";
  cat_plan plan;
  char *msg;
  cat_args_status as = cat_resolve(o, first, &plan, &msg);
  if (as != CAT_ARGS_OK) args_failed(as, msg);
  a->fmt = plan.fmt;
  a->fields = plan.fields;
  a->nfields = plan.nfields;
  a->mad = plan.mad;
  a->capacity = plan.capacity;

  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  if (tfq_coord_new(&a->coord, st)) die_oom();
  g_coord = a->coord;

  check_files(a, argc, argv);
  int need_sample = a->fmt == FMT_CSV && (!o->record_defaults || o->skip_header_lines > 0);
  for (size_t i = 0; i < a->nfiles; i++)
    if (a->files[i].is_stdin) {
      setup_stdin(&a->files[i], o, a->fmt, need_sample && i == 0);
      a->stdin_path = a->files[i].path;
    }

  /* Seeds. */
  if (!o->seed_set) {
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
      s = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    o->seed = s & (((uint64_t)1 << 63) - 1);
    if (o->shuffle && !o->quiet)
      warnx_("seed %" PRIu64 " (--seed=%" PRIu64 " repeats the order with -j 1)", o->seed, o->seed);
  }

  /* Columns. */
  char *header = NULL;
  size_t header_len = 0;
  if (a->fmt == FMT_CSV) {
    sbuf *rows = NULL;
    size_t nrows = 0;
    if (need_sample) read_sample(a, &header, &header_len, &rows, &nrows);
    if (!o->record_defaults) {
      infer_fields(a, rows, nrows);
      if (!o->quiet) {
        sbuf b = {0};
        spec_to_string(&b, a->fields, a->nfields);
        warnx_("inferred -d '%s'", b.p);
        free(b.p);
      }
    }
    for (size_t i = 0; rows && i < INFER_ROWS; i++) free(rows[i].p);
    free(rows);
    if (build_csv_options(a, a->fields, a->nfields, &a->csv, st)) {
      warnx_("%s", tfq_status_message(st));
      return EXIT_USAGE;
    }
    set_names(a, header, header_len);
  } else {
    a->nfields = 1;
    a->fields = xcalloc(1, sizeof *a->fields);
    a->fields[0].dtype = TFQ_STRING;
    a->names = xcalloc(1, sizeof *a->names);
    a->names[0] = xstrdup(a->fmt == FMT_TEXT ? "line" : "record");
  }
  free(header);

  /* The record queue. */
  tfq_code c;
  if ((c = tfq_spec_new(&a->spec, st))) die_oom();
  for (size_t i = 0; i < a->nfields; i++)
    if ((c = tfq_spec_add(a->spec, a->fields[i].dtype, NULL, 0, NULL, st))) die_oom();
  if (o->keys && (c = tfq_spec_add(a->spec, TFQ_STRING, NULL, 0, NULL, st))) die_oom();
  tfq_queue_options *qo;
  if (tfq_queue_options_new(&qo, st)) die_oom();
  tfq_queue_options_set_capacity(qo, a->capacity);
  if (o->shuffle) {
    tfq_queue_options_set_min_after_dequeue(qo, a->mad);
    /* (seed, seed2) = (0, 0) would mean "from the OS": keep seed2 nonzero. */
    tfq_queue_options_set_seeds(qo, (int64_t)o->seed, 87654321);
  }
  if (tfq_queue_options_set_name(qo, o->shuffle ? "shuffle_batch" : "batch", st) ||
      tfq_queue_new(o->shuffle ? TFQ_QUEUE_RANDOM_SHUFFLE : TFQ_QUEUE_FIFO, a->spec, qo, &a->q,
                    st)) {
    warnx_("%s", tfq_status_message(st));
    return EXIT_USAGE;
  }
  tfq_queue_options_free(qo);

  /* The filename producer. */
  {
    int64_t dims[1] = {(int64_t)a->nfiles};
    tfq_tensor *names;
    tfq_producer_options *po;
    if (tfq_tensor_new(TFQ_STRING, dims, 1, &names, st) || tfq_producer_options_new(&po, st))
      die_oom();
    for (size_t i = 0; i < a->nfiles; i++)
      if (tfq_tensor_set_string(names, (int64_t)i, a->files[i].path, strlen(a->files[i].path), st))
        die_oom();
    tfq_producer_options_set_num_epochs(po, o->num_epochs);
    tfq_producer_options_set_shuffle(po, o->shuffle);
    tfq_producer_options_set_seed(po, o->seed);
    if (tfq_string_input_producer(names, po, &a->filenames, &a->producer, st)) {
      warnx_("%s", tfq_status_message(st));
      return EXIT_DATA;
    }
    tfq_tensor_free(names);
    tfq_producer_options_free(po);
  }

  /* Reader threads under a QueueRunner and the Coordinator. */
  if (tfq_runner_new(a->q, &a->runner, st)) die_oom();
  a->workers = xcalloc((size_t)o->threads, sizeof *a->workers);
  for (int64_t i = 0; i < o->threads; i++) {
    worker *w = &a->workers[i];
    w->a = a;
    w->id = (int)i;
    w->st2 = tfq_status_new();
    if (!w->st2) die_oom();
    char name[32];
    snprintf(name, sizeof name, "reader%" PRId64, i);
    if (tfq_runner_add_op(a->runner, worker_step, w, name, st)) die_oom();
  }
  double t0 = now_s();
  long long rchar0 = read_rchar();
  atomic_store(&g_phase, 1);
  if ((c = tfq_runner_start(a->runner, a->coord, 0, st))) {
    warnx_("%s", tfq_status_message(st));
    return EXIT_DATA;
  }
  progress_ctx pc = {a, t0};
  if (o->stats && !o->quiet && isatty(STDERR_FILENO) &&
      (o->output == OUT_NONE || !isatty(STDOUT_FILENO)))
    if (tfq_coord_loop(a->coord, 100000, progress_step, &pc, "progress", NULL) != TFQ_OK)
      warnx_("no progress line: cannot start its thread");

  /* Batches. */
  int epipe = 0, dq_error = 0;
  tfq_cancel *cancel = tfq_coord_cancel(a->coord);
  double first_batch_s = -1;
  while (o->batches == 0 || a->batches_out < o->batches) {
    tfq_tuple *b = NULL;
    if (o->shuffle && o->seed_set) {
      /* Reproducible order: draw only from a full (or closed) queue, so that the queue's
       * contents at each dequeue do not depend on thread timing. */
      while (!tfq_queue_is_closed(a->q) && tfq_queue_size(a->q) < a->capacity &&
             !tfq_coord_wait_for_stop(a->coord, 200))
        ;
    }
    c = o->drop_remainder
            ? tfq_queue_dequeue_many(a->q, o->batch_size, &b, cancel, TFQ_NO_TIMEOUT, st)
            : tfq_queue_dequeue_up_to(a->q, o->batch_size, &b, cancel, TFQ_NO_TIMEOUT, st);
    if (c == TFQ_OUT_OF_RANGE || c == TFQ_CANCELLED) break; /* the end, or a stop */
    if (c) {
      warnx_("%s", tfq_status_message(st));
      dq_error = 1;
      break;
    }
    int64_t n = tfq_tensor_dim(tfq_tuple_get(b, 0), 0);
    a->fullness_sum += (double)tfq_queue_size(a->q) / (double)a->capacity;
    a->fullness_n++;
    if (first_batch_s < 0) first_batch_s = now_s() - t0;
    switch (o->output) {
      case OUT_TABLE: emit_table(a, b, n); break;
      case OUT_JSONL: emit_jsonl(a, b, n); break;
      case OUT_CSV: emit_csv(a, b, n); break;
      case OUT_NONE: break;
    }
    tfq_tuple_free(b);
    a->batches_out++;
    a->records_out += n;
    if (out_flush(a, o->batches != 0 || isatty(STDOUT_FILENO))) {
      if (g_out_error == EPIPE) epipe = 1;
      break;
    }
  }
  if (!g_out_error && out_flush(a, 1) && g_out_error == EPIPE) epipe = 1;

  /* Stop: request_stop, stop the producer, join. */
  (void)tfq_coord_request_stop(a->coord, TFQ_OK, NULL);
  tfq_producer_thread_stop(a->producer);
  pump_detach_reader();
  tfq_code jc = tfq_coord_join(a->coord, 10 * 1000000LL, 0, st);
  tfq_status *pst = tfq_status_new();
  if (tfq_producer_thread_join(a->producer, pst) != TFQ_OK &&
      tfq_status_code(pst) != TFQ_CANCELLED && jc == TFQ_OK) {
    jc = tfq_status_code(pst);
    tfq_status_set(st, jc, "%s", tfq_status_message(pst));
  }
  tfq_status_free(pst);
  if (o->stats && !o->quiet && isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);

  int rc = EXIT_OK;
  int sig = atomic_load(&g_signal);
  if (epipe) {
    rc = EXIT_OK;
  } else if (g_out_error) {
    warnx_("write error: %s", strerror(g_out_error));
    rc = EXIT_DATA;
  } else if (jc != TFQ_OK && jc != TFQ_CANCELLED && jc != TFQ_OUT_OF_RANGE) {
    warnx_("%s", tfq_status_message(st));
    rc = EXIT_DATA;
  } else if (sig) {
    rc = 128 + sig;
  } else if (dq_error) {
    rc = EXIT_DATA;
  }
  if (o->stats) {
    double dt = now_s() - t0;
    long long rchar1 = read_rchar();
    long long bytes = rchar0 >= 0 && rchar1 >= 0 ? rchar1 - rchar0 : -1;
    fprintf(stderr,
            PROG ": stats: records %" PRId64 ", batches %" PRId64
                 ", records read %lld, "
                 "bytes read %lld, time %.3f s, first batch %.3f s, %.0f records/s, %.1f MB/s, "
                 "queue %.0f%% full at dequeue (capacity %" PRId64 ", min_after_dequeue %" PRId64
                 ")\n",
            a->records_out, a->batches_out, (long long)atomic_load(&a->records_in), bytes, dt,
            first_batch_s < 0 ? 0.0 : first_batch_s, dt > 0 ? (double)a->records_out / dt : 0.0,
            dt > 0 && bytes >= 0 ? (double)bytes / dt / 1e6 : 0.0,
            a->fullness_n ? 100.0 * a->fullness_sum / (double)a->fullness_n : 0.0, a->capacity,
            o->shuffle ? a->mad : 0);
  }

  /* Teardown (everything is joined). */
  tfq_runner_free(a->runner);
  for (int64_t i = 0; i < o->threads; i++) {
    worker *w = &a->workers[i];
    for (int k = 0; k < 3; k++) tfq_reader_free(w->readers[k]);
    tfq_queue_free(w->unit);
    tfq_status_free(w->st2);
  }
  free(a->workers);
  tfq_queue_free(a->filenames);
  tfq_queue_free(a->q);
  tfq_spec_free(a->spec);
  tfq_csv_options_free(a->csv);
  g_coord = NULL;
  atomic_store(&g_phase, 0);
  tfq_coord_free(a->coord);
  tfq_status_free(st);
  for (size_t i = 0; i < a->nfields; i++) {
    free(a->fields[i].def);
    free(a->names[i]);
  }
  free(a->fields);
  free(a->names);
  for (size_t i = 0; i < a->nfiles; i++) {
    free(a->files[i].path);
    free(a->files[i].sample_path);
  }
  free(a->files);
  free(o->select_cols);
  free(a->out.p);
  return rc;
}
