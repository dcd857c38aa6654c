/* tfq-feed's standard input (see feed.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feed.h"

/* ---- standard input ----
 * A pipe cannot be read twice: the first lines (for inference) are kept in a memfd, the sample
 * file; a pump thread passes them and the rest on through a pipe that the pipeline reads as
 * /dev/fd/N.  After a '#tfq ...' header (Spark's RDD.pipe) the last line must be the trailer
 * '#tfq end rows=N', N the data lines before it: the pump takes it out and checks it (a Spark
 * writer that died cuts the data short: DATA_LOSS, and the unit is not done). */
#define TRAILER "#tfq end "

static FILE *g_in;
static int g_want_trailer;
static char g_trailer_err[300];

typedef struct pump {
  char *prefix;
  size_t n;
  int fd;
  int64_t lines; /* data lines in the prefix */
  char *trailer; /* the trailer, when the sample's reading met it */
} pump;

static void trailer_fail(const char *msg) {
  if (!g_trailer_err[0]) snprintf(g_trailer_err, sizeof g_trailer_err, "%s", msg);
}

/* Checks the trailer line `t` against the data lines counted. */
static void trailer_check(const char *t, int64_t lines) {
  const char *r = strstr(t, "rows=");
  char *end;
  long long rows = r ? strtoll(r + 5, &end, 10) : -1;
  if (rows < 0) {
    trailer_fail("a '#tfq end' trailer without rows=N");
  } else if (rows != lines) {
    char d[160];
    snprintf(d, sizeof d, "the trailer counts %lld rows, %lld came: the data was cut short", rows,
             (long long)lines);
    trailer_fail(d);
  }
}

/* Whether `f`'s read buffer is empty (its next read is a read(2)).  glibc: its buffer pointers;
 * elsewhere always (a write per line, as a plain pipe would). */
static int read_drained(FILE *f) {
#ifdef __GLIBC__
  return f->_IO_read_ptr >= f->_IO_read_end;
#else
  (void)f;
  return 1;
#endif
}

static void *pump_main(void *arg) {
  pump *p = arg;
  int ok = write_all(p->fd, p->prefix, p->n) == 0;
  int64_t lines = p->lines;
  char *line = NULL, *trailer = p->trailer;
  size_t cap = 0;
  ssize_t n;
  if (!g_want_trailer) {
    char buf[1 << 16];
    size_t r;
    while (ok && (r = fread(buf, 1, sizeof buf, g_in)) > 0) ok = write_all(p->fd, buf, r) == 0;
  } else { /* the lines go on in blocks: one write per block read (up to 256 KiB), not per line,
            * and never held once the input has nothing more to read yet */
    size_t bcap = (size_t)1 << 18, bn = 0;
    char *blk = xmalloc(bcap);
    while (ok && (n = getline(&line, &cap, g_in)) > 0) {
      if (trailer) {
        trailer_fail("data after the '#tfq end' trailer");
        break;
      }
      if ((size_t)n >= sizeof TRAILER - 1 && memcmp(line, TRAILER, sizeof TRAILER - 1) == 0) {
        trailer = xstrdup(line);
        continue;
      }
      lines++;
      if (bn + (size_t)n > bcap) {
        ok = write_all(p->fd, blk, bn) == 0;
        bn = 0;
      }
      if ((size_t)n > bcap) {
        ok = ok && write_all(p->fd, line, (size_t)n) == 0;
      } else {
        memcpy(blk + bn, line, (size_t)n);
        bn += (size_t)n;
      }
      if (bn && ok && read_drained(g_in)) { /* the next getline reads: pass on what came */
        ok = write_all(p->fd, blk, bn) == 0;
        bn = 0;
      }
    }
    if (ok && bn) ok = write_all(p->fd, blk, bn) == 0;
    free(blk);
    if (!ok)
      trailer_fail("cannot pass the data on");
    else if (!trailer)
      trailer_fail(
          "standard input ended without its '#tfq end rows=N' trailer: the data was cut short "
          "(a Spark writer that died?)");
    else
      trailer_check(trailer, lines);
  }
  free(line);
  free(trailer);
  free(p->prefix);
  close(p->fd);
  return NULL;
}

/* Standard input's header line "#tfq unit=U units=N [attempt=A]" (Spark's RDD.pipe gives every
 * task the same command and environment; the partition's number comes in the data): sets --unit,
 * --feeders and --attempt.  Anything else read is data: it starts *prefix. */
static void read_header(options *o, sbuf *prefix, int64_t *lines) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, g_in);
  if (n <= 0 || strncmp(line, "#tfq ", 5) != 0 || line[n - 1] != '\n') {
    if (n > 0) sb_add(prefix, line, (size_t)n);
    *lines += n > 0;
    free(line);
    return;
  }
  line[n - 1] = '\0';
  long long unit = -1, units = -1, attempt = 0;
  for (char *tok = strtok(line + 5, " \t"); tok; tok = strtok(NULL, " \t")) {
    char *end;
    if (strncmp(tok, "unit=", 5) == 0) {
      unit = strtoll(tok + 5, &end, 10);
      if (*end || end == tok + 5) unit = -2;
    } else if (strncmp(tok, "units=", 6) == 0) {
      units = strtoll(tok + 6, &end, 10);
      if (*end || end == tok + 6) units = -2;
    } else if (strncmp(tok, "attempt=", 8) == 0) {
      attempt = strtoll(tok + 8, &end, 10);
      if (*end || end == tok + 8 || attempt < 0 || attempt > 255)
        config_error("standard input's header: attempt=A needs 0 <= A <= 255");
    } else {
      config_error("standard input's header: unknown field '%s' (expected unit=U units=N)", tok);
    }
  }
  if (unit < 0 || units < 1 || unit >= units)
    config_error("standard input's header: expected '#tfq unit=U units=N' with 0 <= U < N");
  o->unit = unit;
  o->feeders = units;
  if (attempt) o->attempt = attempt;
  g_want_trailer = 1;
  free(line);
}

/* Standard input as a path for the pipeline, and its sample file (inference). */
void setup_stdin(options *o, tfq_pipeline_options *po, tfq_status *st) {
  g_in = stdin;
  setvbuf(stdin, NULL, _IOFBF, (size_t)1 << 16); /* reads of a pipe's 64 KiB, not 4 KiB */
  sbuf pre = {0};
  int64_t lines = 0;
  read_header(o, &pre, &lines);
  struct stat sb;
  if (!g_want_trailer && pre.n == 0 && fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) &&
      lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
    if (tfq_pipeline_options_add_file(po, "/dev/stdin", st)) die_oom();
    free(pre.p);
    return;
  }
  if (o->num_epochs > 1)
    usage_error("--num-epochs=%" PRId64 " needs files: standard input can be read only once",
                o->num_epochs);
  /* The sample: the header lines and 100 records (CSV inference reads no more). */
  char *line = NULL, *trailer = NULL;
  size_t cap = 0;
  ssize_t n;
  while (pre.n < ((size_t)1 << 20) && lines < o->skip_header_lines + 101 &&
         (n = getline(&line, &cap, g_in)) > 0) {
    if (g_want_trailer && (size_t)n >= sizeof TRAILER - 1 &&
        memcmp(line, TRAILER, sizeof TRAILER - 1) == 0) {
      trailer = xstrdup(line); /* the pump checks it, and that nothing follows */
      break;
    }
    sb_add(&pre, line, (size_t)n);
    lines++;
  }
  int mfd = memfd_create("tfq-feed-stdin-prefix", 0);
  if (mfd < 0 || write_all(mfd, pre.p ? pre.p : "", pre.n)) {
    warnx_("memfd: %s", strerror(errno));
    leave(EXIT_DATA);
  }
  char path[64];
  snprintf(path, sizeof path, "/dev/fd/%d", mfd);
  if (tfq_pipeline_options_set_sample_file(po, path, st)) die_oom();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC)) {
    warnx_("pipe: %s", strerror(errno));
    leave(EXIT_DATA);
  }
  snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
  if (tfq_pipeline_options_add_file(po, path, st)) die_oom();
  pump *p = xcalloc(1, sizeof *p);
  p->prefix = pre.p;
  p->n = pre.n;
  p->fd = fds[1];
  p->lines = lines;
  p->trailer = trailer;
  free(line);
  pthread_t th;
  if (pthread_create(&th, NULL, pump_main, p)) die_oom();
  pthread_detach(th);
}

const char *stdin_trailer_error(void) {
  return g_want_trailer && g_trailer_err[0] ? g_trailer_err : NULL;
}
