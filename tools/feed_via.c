/* tfq-feed-via SOCKET [TFQ-FEED ARGUMENTS...]: one tfq-feed unit run by the resident tfq-feed
 * listening on SOCKET (see feed_serve.h), started here if none is.  Linked to libc only: a unit
 * costs a connection and a fork of the resident process, not a start of TensorFlow.
 *
 * The unit's standard input, output and error are this process's, handed over; so are the
 * arguments (argv[0] becomes "tfq-feed") and the environment (TF_CONFIG, ...).  Exits with the
 * unit's status (128+N when it died of signal N); 1, naming the cause, when the resident process
 * cannot be started or reached or dies before the unit ends.  Environment: TFQ_FEED, the tfq-feed
 * to start (default: tfq-feed beside this program); TFQ_FEED_IDLE_MS, how long a server it
 * starts waits for more units once idle (default 10000).  Starting is serialised by an flock on
 * SOCKET.lock; the server's own messages go to SOCKET.log. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "feed_serve.h"

extern char **environ;

static const char *g_sock;

static _Noreturn void fail(const char *fmt, const char *arg) {
  fprintf(stderr, "tfq-feed-via %s: ", g_sock ? g_sock : "");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  exit(1);
}

static int try_connect(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) fail("the socket's path is too long (%s)", path);
  strcpy(a.sun_path, path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) fail("socket: %s", strerror(errno));
  if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) return s;
  int e = errno;
  close(s);
  errno = e;
  return -1;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The last lines of the server's log, for a message. */
static void log_tail(const char *log) {
  FILE *f = fopen(log, "r");
  if (!f) return;
  char buf[4096];
  if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof buf - 1)
    fseek(f, -(long)sizeof buf + 1, SEEK_END);
  else
    rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  fprintf(stderr, "tfq-feed-via %s: the server's log (%s) ends:\n%s\n", g_sock, log, buf);
}

/* Starts `tfq-feed --serve SOCKET` (a session of its own, outliving this unit) and waits until
 * it listens.  Called under the start lock. */
static int start_server(const char *path) {
  char feed[PATH_MAX], self[PATH_MAX], log[PATH_MAX + 8], idle[32];
  const char *env_feed = getenv("TFQ_FEED");
  if (env_feed && *env_feed) {
    snprintf(feed, sizeof feed, "%s", env_feed);
  } else {
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) fail("cannot find tfq-feed: set TFQ_FEED (%s)", strerror(errno));
    self[n] = '\0';
    snprintf(feed, sizeof feed, "%s/tfq-feed", dirname(self));
  }
  const char *env_idle = getenv("TFQ_FEED_IDLE_MS");
  snprintf(idle, sizeof idle, "%s", env_idle && *env_idle ? env_idle : "10000");
  snprintf(log, sizeof log, "%s.log", path);
  struct stat sb;
  long from = stat(log, &sb) == 0 ? (long)sb.st_size : 0; /* what this server writes */
  pid_t pid = fork();
  if (pid < 0) fail("fork: %s", strerror(errno));
  if (pid == 0) {
    setsid();
    int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(127);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    if (fork() != 0) _exit(0); /* the server is nobody's child here: no zombie, no wait */
    execl(feed, "tfq-feed", "--serve", path, "--idle-ms", idle, (char *)NULL);
    fprintf(stderr, "tfq-feed-via: cannot run %s: %s\n", feed, strerror(errno));
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  for (int i = 0; i < 12000; i++) { /* up to 120 s: loading TensorFlow under load */
    int s = try_connect(path);
    if (s >= 0) return s;
    nap_ms(10);
    if (i % 100 == 99) { /* a server that failed says so in its log (lines after `from`) */
      FILE *f = fopen(log, "r");
      char line[512];
      int failed = 0;
      if (f && fseek(f, from, SEEK_SET) != 0) rewind(f);
      while (f && fgets(line, sizeof line, f))
        failed |= strstr(line, "cannot run") != NULL ||
                  (strstr(line, "--serve") && !strstr(line, ", up") && !strstr(line, "there"));
      if (f) fclose(f);
      if (failed) break;
    }
  }
  log_tail(log);
  fail("the resident tfq-feed did not come up (%s)", feed);
}

static int connect_or_start(const char *path) {
  int s = try_connect(path);
  if (s >= 0) return s;
  char lock[PATH_MAX];
  snprintf(lock, sizeof lock, "%s.lock", path);
  int lf = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lf < 0) fail("cannot open the start lock: %s", strerror(errno));
  while (flock(lf, LOCK_EX) != 0)
    if (errno != EINTR) fail("flock: %s", strerror(errno));
  s = try_connect(path); /* another unit may have started it meanwhile */
  if (s < 0) s = start_server(path);
  close(lf); /* the lock goes with the descriptor */
  return s;
}

static void put(char **buf, size_t *n, size_t *cap, const void *p, size_t len) {
  if (*n + len > *cap) {
    while (*n + len > *cap) *cap = *cap ? 2 * *cap : 4096;
    *buf = realloc(*buf, *cap);
    if (!*buf) fail("%s", "out of memory");
  }
  memcpy(*buf + *n, p, len);
  *n += len;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: tfq-feed-via SOCKET [TFQ-FEED ARGUMENTS...]\n"
            "Runs one tfq-feed unit in the resident tfq-feed on SOCKET (started if none is).\n");
    return argc < 2 ? 2 : 0;
  }
  g_sock = argv[1];
  char *buf = NULL;
  size_t n = 0, cap = 0;
  uint32_t na = (uint32_t)(argc - 1), ne = 0, len = 0;
  while (environ && environ[ne]) ne++;
  put(&buf, &n, &cap, &na, 4);
  put(&buf, &n, &cap, &ne, 4);
  put(&buf, &n, &cap, "tfq-feed", 9);
  for (int i = 2; i < argc; i++) put(&buf, &n, &cap, argv[i], strlen(argv[i]) + 1);
  for (uint32_t i = 0; i < ne; i++) put(&buf, &n, &cap, environ[i], strlen(environ[i]) + 1);
  if (n > FEED_SERVE_MAX_REQUEST) fail("%s", "the arguments and environment are too large");
  len = (uint32_t)n;
  int s = connect_or_start(g_sock);
  int fds[3] = {0, 1, 2};
  char cbuf[CMSG_SPACE(sizeof fds)];
  memset(cbuf, 0, sizeof cbuf);
  struct iovec iov = {&len, sizeof len};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  if (sendmsg(s, &mh, 0) != (ssize_t)sizeof len) fail("sending the request: %s", strerror(errno));
  for (size_t off = 0; off < n;) {
    ssize_t w = write(s, buf + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("sending the request: %s", strerror(errno));
    off += (size_t)w;
  }
  free(buf);
  /* the unit has our descriptors now; we only wait for its status.  Standard input is the
   * unit's alone: a writer must see the pipe's end when the unit ends early. */
  int null = open("/dev/null", O_RDONLY);
  if (null >= 0) {
    dup2(null, 0);
    close(null);
  }
  int32_t status;
  size_t got = 0;
  while (got < sizeof status) {
    ssize_t r = read(s, (char *)&status + got, sizeof status - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail("%s", "the resident tfq-feed ended before the unit did: the unit failed");
    got += (size_t)r;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "tfq-feed-via %s: the unit died of signal %d (%s)\n", g_sock, WTERMSIG(status),
            strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return 1;
}
