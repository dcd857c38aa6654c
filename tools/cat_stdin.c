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

void setup_stdin(input_file *f, const options *o, in_format fmt, int need_sample) {
  struct stat sb;
  if (!g_unread && fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
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
