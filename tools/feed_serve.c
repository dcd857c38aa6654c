/* tfq-feed --serve SOCKET: the resident feeder (see feed_serve.h).
 *
 * One thread, no TensorFlow call: the server only accepts, forks and reaps, so that a fork
 * happens in a process with a single thread and TensorFlow's libraries loaded but not started
 * (every thread pool, session and gRPC channel is the child's own). */
#include "feed_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_UNITS 256

typedef struct unit {
  int fd;    /* the client's connection, -1 once the client went away */
  pid_t pid; /* the forked unit */
} unit;

static const char *g_sock;

/* Exits without atexit handlers or a leak check of TensorFlow's loaded libraries (as leave() in
 * tfq-feed.c: a tool's process ends here, nothing to free). */
static _Noreturn void leave_serve(int rc) {
  fflush(stderr);
  _exit(rc);
}

static _Noreturn void serve_fail(const char *what) {
  fprintf(stderr, "tfq-feed --serve %s: %s: %s\n", g_sock, what, strerror(errno));
  leave_serve(1);
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int read_full(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Binds SOCKET; a stale socket file (nobody listening) is replaced, a live one is an error
 * (another server serves it). */
static int listen_on(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    serve_fail("the socket's path");
  }
  strcpy(a.sun_path, path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) serve_fail("socket");
  if (bind(s, (struct sockaddr *)&a, sizeof a) != 0) {
    if (errno != EADDRINUSE) serve_fail("bind");
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
      fprintf(stderr, "tfq-feed --serve %s: another server is listening there\n", path);
      leave_serve(1);
    }
    if (probe >= 0) close(probe);
    unlink(path);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0) serve_fail("bind");
  }
  if (listen(s, 64) != 0) serve_fail("listen");
  return s;
}

/* Reads one request: the three descriptors and the strings.  Returns 0 and fills fds, args,
 * envs (pointers into *blob), or -1 (the request is dropped). */
static int read_request(int c, int fds[3], char **blob, char ***args, char ***envs) {
  uint32_t len = 0;
  char cbuf[CMSG_SPACE(3 * sizeof(int))];
  struct iovec iov = {&len, sizeof len};
  struct msghdr mh = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
  fds[0] = fds[1] = fds[2] = -1;
  ssize_t r = recvmsg(c, &mh, MSG_CMSG_CLOEXEC);
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
      cm->cmsg_len == CMSG_LEN(3 * sizeof(int)))
    memcpy(fds, CMSG_DATA(cm), 3 * sizeof(int));
  if (r != (ssize_t)sizeof len || fds[2] < 0 || len < 8 || len > FEED_SERVE_MAX_REQUEST) goto bad;
  *blob = malloc((size_t)len + 1);
  if (!*blob || read_full(c, *blob, len)) goto bad;
  (*blob)[len] = '\0';
  uint32_t na, ne;
  memcpy(&na, *blob, 4);
  memcpy(&ne, *blob + 4, 4);
  if (na < 1 || na > len || ne > len) goto bad;
  *args = calloc((size_t)na + 1, sizeof **args);
  *envs = calloc((size_t)ne + 1, sizeof **envs);
  if (!*args || !*envs) goto bad;
  char *p = *blob + 8, *end = *blob + len;
  for (uint32_t i = 0; i < na + ne; i++) {
    char *z = memchr(p, '\0', (size_t)(end - p));
    if (!z) goto bad;
    if (i < na)
      (*args)[i] = p;
    else
      (*envs)[i - na] = p;
    p = z + 1;
  }
  return 0;
bad:
  for (int i = 0; i < 3; i++)
    if (fds[i] >= 0) close(fds[i]);
  return -1;
}

static void reply(int fd, int status) {
  if (fd < 0) return;
  int32_t v = status;
  ssize_t w;
  do {
    w = write(fd, &v, sizeof v);
  } while (w < 0 && errno == EINTR);
  close(fd);
}

void feed_serve(int *argc, char ***argv) {
  if (*argc < 3) {
    fprintf(stderr, "tfq-feed: --serve SOCKET [--idle-ms MS]\n");
    leave_serve(2);
  }
  g_sock = (*argv)[2];
  double idle_s = 10.0;
  if (*argc >= 5 && strcmp((*argv)[3], "--idle-ms") == 0) idle_s = atof((*argv)[4]) / 1000.0;
  signal(SIGPIPE, SIG_IGN);
  int ls = listen_on(g_sock);
  fprintf(stderr, "tfq-feed --serve %s: pid %ld, up\n", g_sock, (long)getpid());
  unit u[MAX_UNITS];
  int nu = 0;
  double idle_since = mono_s();
  int closing = 0;
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) /* a unit ended: its status to its client */
      for (int i = 0; i < nu; i++)
        if (u[i].pid == pid) {
          reply(u[i].fd, status);
          u[i--] = u[--nu];
          break;
        }
    if (nu == 0 && idle_s > 0 && mono_s() - idle_since >= idle_s && !closing) {
      /* idle: the name goes first (a new client starts a new server), then what is already
       * waiting in the backlog is served, and the server exits once nothing is */
      unlink(g_sock);
      closing = 1;
      int fl = fcntl(ls, F_GETFL);
      if (fl < 0 || fcntl(ls, F_SETFL, fl | O_NONBLOCK) != 0) serve_fail("fcntl");
    }
    struct pollfd pf[MAX_UNITS + 1];
    pf[0] = (struct pollfd){.fd = nu < MAX_UNITS ? ls : -1, .events = POLLIN};
    for (int i = 0; i < nu; i++) pf[i + 1] = (struct pollfd){.fd = u[i].fd, .events = POLLIN};
    if (poll(pf, (nfds_t)nu + 1, 50) < 0 && errno != EINTR) serve_fail("poll");
    for (int i = 0; i < nu; i++) /* a client that went away: its unit is stopped (SIGTERM) */
      if (u[i].fd >= 0 && (pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) {
        kill(u[i].pid, SIGTERM);
        close(u[i].fd);
        u[i].fd = -1;
      }
    if (nu) idle_since = mono_s();
    if (!(pf[0].revents & POLLIN) && !closing) continue;
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (closing && nu == 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      continue;
    }
    struct timeval tv = {10, 0}; /* a client sends its request at once */
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int fds[3];
    char *blob = NULL, **args = NULL, **envs = NULL;
    if (read_request(c, fds, &blob, &args, &envs) != 0) {
      close(c);
      free(blob);
      free(args);
      free(envs);
      continue;
    }
    fflush(stderr);
    pid = fork();
    if (pid == 0) { /* the unit: an ordinary tfq-feed run with the client's stdio and env */
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() == 1) _exit(128 + SIGTERM);
      close(ls);
      close(c);
      for (int i = 0; i < nu; i++)
        if (u[i].fd >= 0) close(u[i].fd);
      for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0) _exit(1);
      for (int i = 0; i < 3; i++)
        if (fds[i] > 2) close(fds[i]);
      signal(SIGPIPE, SIG_DFL);
      environ = envs;
      int n = 0;
      while (args[n]) n++;
      *argc = n;
      *argv = args;
      return;
    }
    for (int i = 0; i < 3; i++) close(fds[i]);
    free(blob);
    free(args);
    free(envs);
    if (pid < 0) {
      reply(c, 1 << 8); /* exit status 1 */
      continue;
    }
    u[nu++] = (unit){c, pid};
  }
  fprintf(stderr, "tfq-feed --serve %s: idle for %g s, exiting\n", g_sock, idle_s);
  leave_serve(0);
}
