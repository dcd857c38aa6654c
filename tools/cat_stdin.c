/* tfq-cat's standard input (see cat_stdin.h). */
#include "cat_stdin.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define STDIN_PREFIX_MAX ((size_t)1 << 20)

typedef struct {
  char *prefix;
  size_t n;
  int out_fd;
} pump_ctx;

/* The pump's write end, so that a stop can end the reader's blocking read() on the pipe: it is
 * replaced by /dev/null (dup2, so the number is never reused while the pump writes to it). */
static pthread_mutex_t g_pump_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_pump_fd = -1;

void pump_detach_reader(void) {
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

/* ---- the trailer '#tfq end rows=N' (after a '#tfq ...' header) ----
 * Spark's RDD.pipe feeds a partition through a writer thread; if that thread dies, the feeder
 * sees an early end of file.  The trailer, the last line, says how many data lines came before
 * it: without it, or with another count, the input was cut short (DATA_LOSS) and the unit must
 * not count as done. */
#define TRAILER "#tfq end "
static int g_want_trailer;
static struct {
  int found, failed;
  int64_t lines, rows;
  int last_nl;     /* the last data byte written was '\n' (or nothing was written) */
  char carry[256]; /* a line start that may be the trailer, or the trailer itself */
  size_t ncarry;
  char msg[300];
} g_tr = {0, 0, 0, -1, 1, {0}, 0, {0}};

static void trailer_fail(const char *fmt, const char *detail) {
  if (!g_tr.failed) snprintf(g_tr.msg, sizeof g_tr.msg, fmt, detail);
  g_tr.failed = 1;
}

/* Writes data bytes on, counting lines. */
static int data_out(int fd, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) g_tr.lines += p[i] == '\n';
  if (n) g_tr.last_nl = p[n - 1] == '\n';
  return write_all(fd, p, n);
}

/* Passes p[0..n) on, keeping back a trailer (or the start of one) at a line start. */
static int filter_out(int fd, const char *in, size_t n) {
  char tmp[sizeof g_tr.carry + (1 << 16)];
  const char *p = in;
  if (g_tr.ncarry) {                                                /* the kept bytes come first */
    if (n > sizeof tmp - g_tr.ncarry) n = sizeof tmp - g_tr.ncarry; /* callers pass <= 64 KiB */
    memcpy(tmp, g_tr.carry, g_tr.ncarry);
    memcpy(tmp + g_tr.ncarry, in, n);
    n += g_tr.ncarry;
    g_tr.ncarry = 0;
    p = tmp;
  }
  if (g_tr.found) { /* only the rest of the trailer line may follow */
    size_t k = 0;
    while (k < n && p[k] != '\n') k++;
    if (k < n && k + 1 < n) trailer_fail("%s", "data after the '#tfq end' trailer");
    if (k + 1 >= n && g_tr.ncarry + n < sizeof g_tr.carry) {
      memcpy(g_tr.carry, p, n);
      g_tr.ncarry = n;
    }
    return 0;
  }
  size_t start = 0; /* data before a trailer */
  size_t s = g_tr.last_nl ? 0 : SIZE_MAX;
  for (size_t i = 0; i <= n; i++) {
    if (s != SIZE_MAX && s == i) {
      size_t left = n - s, m = left < sizeof TRAILER - 1 ? left : sizeof TRAILER - 1;
      if (memcmp(p + s, TRAILER, m) == 0) {
        if (data_out(fd, p + start, s - start)) return -1;
        size_t rest = left < sizeof g_tr.carry ? left : sizeof g_tr.carry - 1;
        memcpy(g_tr.carry, p + s, rest);
        g_tr.ncarry = rest;
        if (left >= sizeof TRAILER - 1) {
          g_tr.found = 1;
          const char *nl = memchr(p + s, '\n', left);
          if (nl && (size_t)(nl - p) + 1 < n)
            trailer_fail("%s", "data after the '#tfq end' trailer");
        }
        return 0;
      }
    }
    if (i < n && p[i] == '\n') s = i + 1;
  }
  return data_out(fd, p + start, n - start);
}

/* At the end of standard input: the kept bytes were data after all, or the trailer to check. */
static void trailer_end(int fd) {
  if (g_tr.ncarry && !g_tr.found && memcmp(g_tr.carry, TRAILER, sizeof TRAILER - 1) != 0) {
    if (data_out(fd, g_tr.carry, g_tr.ncarry)) trailer_fail("%s", "cannot pass the data on");
    g_tr.ncarry = 0;
  }
  if (g_tr.ncarry && memcmp(g_tr.carry, TRAILER, sizeof TRAILER - 1) == 0) g_tr.found = 1;
  if (!g_tr.found) {
    trailer_fail("%s",
                 "standard input ended without its '#tfq end rows=N' trailer: the data "
                 "was cut short (a Spark writer that died?)");
    return;
  }
  char t[sizeof g_tr.carry + 1];
  memcpy(t, g_tr.carry, g_tr.ncarry);
  t[g_tr.ncarry] = '\0';
  char *end;
  const char *r = strstr(t, "rows=");
  long long rows = r ? strtoll(r + 5, &end, 10) : -1;
  int64_t lines = g_tr.lines + (g_tr.last_nl ? 0 : 1);
  if (rows < 0) {
    trailer_fail("%s", "a '#tfq end' trailer without rows=N");
  } else if (rows != lines) {
    char d[160];
    snprintf(d, sizeof d, "the trailer counts %lld rows, %lld came: the data was cut short", rows,
             (long long)lines);
    trailer_fail("%s", d);
  }
}

const char *stdin_trailer_error(void) { return g_want_trailer && g_tr.failed ? g_tr.msg : NULL; }

void stdin_want_trailer(void) { g_want_trailer = 1; }

static int pass_on(int fd, const char *p, size_t n) {
  return g_want_trailer ? filter_out(fd, p, n) : write_all(fd, p, n);
}

static void *pump_main(void *arg) {
  pump_ctx *c = arg;
  int ok = 1;
  for (size_t off = 0; ok && off < c->n; off += 1 << 16) /* <= 64 KiB a call (filter_out) */
    ok = pass_on(c->out_fd, c->prefix + off, c->n - off < (1 << 16) ? c->n - off : 1 << 16) == 0;
  free(c->prefix);
  c->prefix = NULL;
  if (ok) {
    char buf[1 << 16];
    for (;;) {
      ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      if (pass_on(c->out_fd, buf, (size_t)r)) break;
    }
    if (g_want_trailer) trailer_end(c->out_fd);
  } else if (g_want_trailer) {
    trailer_fail("%s", "cannot pass the data on");
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

static char *g_unread; /* bytes read from standard input before setup_stdin (stdin_header) */
static size_t g_unread_n;

int stdin_header(char *line, size_t cap) {
  /* A byte at a time: nothing past the line's end may be taken from a pipe. */
  size_t n = 0;
  char c;
  while (n + 1 < cap) {
    ssize_t r = read(STDIN_FILENO, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    line[n++] = c;
    if (c == '\n' || (n == 5 && memcmp(line, "#tfq ", 5) != 0)) break;
  }
  line[n] = '\0';
  if (n >= 5 && memcmp(line, "#tfq ", 5) == 0 && line[n - 1] == '\n') {
    line[n - 1] = '\0';
    return 1;
  }
  g_unread = xmalloc(n ? n : 1); /* not a header: data, given back to setup_stdin */
  memcpy(g_unread, line, n);
  g_unread_n = n;
  return 0;
}

size_t stdin_peek(size_t want, const char **p) {
  static char *file_prefix; /* a regular file's first bytes */
  struct stat sb;
  if (!g_unread && fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
      lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
    free(file_prefix);
    file_prefix = xmalloc(want ? want : 1);
    ssize_t r = pread(STDIN_FILENO, file_prefix, want, 0);
    *p = file_prefix;
    return r > 0 ? (size_t)r : 0;
  }
  if (g_unread_n < want) g_unread = xrealloc(g_unread, want);
  while (g_unread_n < want) {
    if (g_unread_n > 0) { /* a slow stream: what came within 200 ms */
      struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
      int pr = poll(&pfd, 1, 200);
      if (pr == 0) break;
      if (pr < 0 && errno == EINTR) continue;
    }
    ssize_t r = read(STDIN_FILENO, g_unread + g_unread_n, want - g_unread_n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    g_unread_n += (size_t)r;
  }
  if (!g_unread) g_unread = xmalloc(1); /* kept: setup_stdin takes the pipe path */
  *p = g_unread;
  return g_unread_n;
}

void setup_stdin(input_file *f, const options *o, in_format fmt, int need_sample) {
  struct stat sb;
  if (!g_unread && fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
      lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
    unsigned char m[16];
    ssize_t r = pread(STDIN_FILENO, m, sizeof m, 0);
    f->path = xstrdup("/dev/stdin");
    f->comp = o->compression == COMP_AUTO
                  ? tfq_compression_detect(m, r > 0 ? (size_t)r : 0, "", fmt == FMT_TFRECORD)
                  : (tfq_compression)o->compression;
    return;
  }
  if (o->num_epochs > 1)
    usage_error("--num-epochs=%" PRId64 " needs files: standard input can be read only once",
                o->num_epochs);
  /* Read a prefix: enough lines for inference, or the magic bytes. */
  int64_t rows = o->infer_rows > INFER_ROWS ? o->infer_rows : INFER_ROWS; /* --infer-rows */
  size_t want_lines = need_sample ? (size_t)(o->skip_header_lines + rows) + 1 : 0;
  size_t cap = g_unread_n > ((size_t)1 << 16) ? g_unread_n : (size_t)1 << 16, n = 0;
  char *buf = xmalloc(cap);
  if (g_unread) { /* what stdin_header took */
    memcpy(buf, g_unread, g_unread_n);
    n = g_unread_n;
    free(g_unread);
    g_unread = NULL;
  }
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
  f->comp = o->compression == COMP_AUTO
                ? tfq_compression_detect((const unsigned char *)buf, n, "", fmt == FMT_TFRECORD)
                : (tfq_compression)o->compression;
  if (need_sample) {
    int mfd = memfd_create("tfq-cat-stdin-prefix", 0);
    if (mfd < 0) {
      warnx_("memfd_create: %s", strerror(errno));
      exit(EXIT_DATA);
    }
    size_t keep = n;
    for (size_t i = 0; g_want_trailer && i + sizeof TRAILER - 1 <= keep; i++)
      if ((i == 0 || buf[i - 1] == '\n') && memcmp(buf + i, TRAILER, sizeof TRAILER - 1) == 0)
        keep = i; /* the trailer is no sample record */
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
