/* Fault tests (docs/reliability.md, "Faults"): unreadable inputs (missing, permission denied, a
 * directory) for the TextLine, FixedLength and TFRecord readers and for tfq-cat; files truncated or
 * growing while they are read; signals (no SA_RESTART) hitting threads blocked in read(), open()
 * and queue waits; a full disk (RLIMIT_FSIZE) under the TFRecord writer; and a reader failing in
 * the middle of file 3 of 5 inside a QueueRunner pipeline.
 *
 * Public headers only.  The tests run as root, so "permission denied" drops privileges in a
 * forked child (setresgid/setresuid to 65534); children report through their exit status (0 ok,
 * 77 skip, anything else a failure described on stderr) and run LeakSanitizer's check before
 * leaving when built with ASan.  tfq-cat is found through $TFQ_CAT (set by meson). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef TFQ_TAP_CRITERION /* the ThreadSanitizer tree: tests/faults/meson.build */
#include "../common/tap_criterion.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <tfq/tfq.h>
#include <time.h>
#include <unistd.h>

#include "../common/inputs.h"
#include "../common/scratch.h"

#if defined(__SANITIZE_ADDRESS__)
#define FAULTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAULTS_ASAN 1
#endif
#endif
#ifdef FAULTS_ASAN
#include <sanitizer/lsan_interface.h>
#define LEAKS_FOUND() __lsan_do_recoverable_leak_check()
#else
#define LEAKS_FOUND() 0
#endif

/* ---- checks usable in the test process and in forked children ------------------------------ */

static int g_child; /* in a forked child: report on stderr and _exit(90) instead of cr_assert */

#define REQUIRE(cond, ...)            \
  do {                                \
    if (!(cond)) {                    \
      if (g_child) {                  \
        fprintf(stderr, "child: ");   \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr);          \
        _exit(90);                    \
      }                               \
      cr_assert_fail(__VA_ARGS__);    \
    }                                 \
  } while (0)

#define OK(call)                                                       \
  do {                                                                 \
    tfq_code ok_c_ = (call);                                           \
    REQUIRE(ok_c_ == TFQ_OK, "%s -> %s", #call, tfq_code_name(ok_c_)); \
  } while (0)

/* ---- scratch directory (../common/scratch.h: g_dir, path_of) ----------------------------- */

static void setup(void) {
  cr_assert_not_null(scratch_make("tfq_faults"));
  cr_assert_eq(chmod(g_dir, 0755), 0); /* the unprivileged child must reach its files */
}
static void teardown(void) { scratch_remove(); }

TestSuite(faults, .init = setup, .fini = teardown);

static void put_file(const char *p, const void *data, size_t len, const char *mode) {
  REQUIRE(scratch_put(p, data, len, mode) == 0, "writing %s: %s", p, strerror(errno));
}

/* The contents of p, NUL-terminated (the caller frees). */
static char *slurp(const char *p, size_t *len) {
  char *b = scratch_slurp(p, len);
  REQUIRE(b != NULL, "reading %s", p);
  return b;
}

/* ---- records of the three file kinds --------------------------------------------------------
 * Record i is "rec-%04d" (TextLine: one line; TFRecord: the payload; FixedLength: 10-byte
 * records "rec-%04d#\n"). */

#define FIXED_BYTES 10

static const char *kind_name(tfq_reader_kind k) {
  return k == TFQ_READER_TEXT_LINE      ? "TextLine"
         : k == TFQ_READER_FIXED_LENGTH ? "FixedLength"
                                        : "TFRecord";
}

static void expected_value(tfq_reader_kind k, int i, char *buf, size_t cap) {
  if (k == TFQ_READER_FIXED_LENGTH)
    snprintf(buf, cap, "rec-%04d#\n", i);
  else
    snprintf(buf, cap, "rec-%04d", i);
}

/* Writes records [from, to) of kind k to path p (TFRecord through tfq's writer). */
static void write_records(tfq_reader_kind k, const char *p, int from, int to) {
  if (k == TFQ_READER_TFRECORD) {
    tfq_tfrecord_writer *w;
    OK(tfq_tfrecord_writer_new(p, TFQ_COMPRESSION_NONE, &w, NULL));
    for (int i = from; i < to; i++) {
      char v[32];
      expected_value(k, i, v, sizeof v);
      OK(tfq_tfrecord_writer_write(w, v, strlen(v), NULL));
    }
    OK(tfq_tfrecord_writer_close(w, NULL));
    tfq_tfrecord_writer_free(w);
    return;
  }
  FILE *f = fopen(p, "wb");
  REQUIRE(f != NULL, "fopen %s", p);
  for (int i = from; i < to; i++) {
    char v[32];
    expected_value(k, i, v, sizeof v);
    fputs(v, f);
    if (k == TFQ_READER_TEXT_LINE) fputc('\n', f);
  }
  REQUIRE(fclose(f) == 0, "fclose");
}

static tfq_reader *mk_reader(tfq_reader_kind k, size_t buffer_bytes) {
  tfq_reader_options *o;
  OK(tfq_reader_options_new(&o, NULL));
  if (k == TFQ_READER_FIXED_LENGTH) tfq_reader_options_set_record_bytes(o, FIXED_BYTES);
  if (buffer_bytes) tfq_reader_options_set_buffer_bytes(o, buffer_bytes);
  tfq_reader *r;
  OK(tfq_reader_new(k, o, &r, NULL));
  tfq_reader_options_free(o);
  return r;
}

/* A closed FIFO work queue "work" holding `n` filenames. */
static tfq_queue *work_queue(const char *const *names, int n) {
  tfq_queue *q;
  OK(test_work_queue(names, n, -1, "work", &q, NULL));
  return q;
}

/* One read; the value (NUL-terminated, truncated to cap) goes to val. */
static tfq_code read1(tfq_reader *r, tfq_queue *q, char *val, size_t cap, tfq_status *st) {
  tfq_tensor *k = NULL, *v = NULL;
  tfq_code c = tfq_reader_read(r, q, &k, &v, NULL, st);
  if (c == TFQ_OK) {
    size_t len;
    const char *p = tfq_tensor_string(v, 0, &len);
    if (len >= cap) len = cap - 1;
    memcpy(val, p, len);
    val[len] = 0;
  }
  tfq_tensor_free(k);
  tfq_tensor_free(v);
  return c;
}

/* Reads records from..to-1 of kind k in order, then checks that the queue is drained. */
static void expect_records(tfq_reader *r, tfq_queue *q, tfq_reader_kind k, int from, int to,
                           int then_end) {
  tfq_status *st = tfq_status_new();
  for (int i = from; i < to; i++) {
    char got[64], want[64];
    tfq_code c = read1(r, q, got, sizeof got, st);
    REQUIRE(c == TFQ_OK, "%s: record %d: %s %s", kind_name(k), i, tfq_code_name(c),
            tfq_status_message(st));
    expected_value(k, i, want, sizeof want);
    REQUIRE(strcmp(got, want) == 0, "%s: record %d is '%s', expected '%s'", kind_name(k), i, got,
            want);
  }
  if (then_end) {
    char got[64];
    tfq_code c = read1(r, q, got, sizeof got, st);
    REQUIRE(c == TFQ_OUT_OF_RANGE, "%s: after record %d: %s '%s' (expected OUT_OF_RANGE)",
            kind_name(k), to - 1, tfq_code_name(c), c ? tfq_status_message(st) : got);
  }
  tfq_status_free(st);
}

static const tfq_reader_kind kKinds[3] = {TFQ_READER_TEXT_LINE, TFQ_READER_FIXED_LENGTH,
                                          TFQ_READER_TFRECORD};

/* Work queue [bad, good]: the first read fails with `code` and message "<bad>; <reason>", the
 * file is skipped and the next read returns the good file's records. */
static void expect_open_failure_then_next_file(const char *bad, tfq_code code, const char *reason) {
  for (int ki = 0; ki < 3; ki++) {
    tfq_reader_kind k = kKinds[ki];
    char good[512];
    snprintf(good, sizeof good, "%s", path_of(kind_name(k)));
    if (access(good, F_OK) != 0) write_records(k, good, 0, 3); /* made by the parent if forked */
    const char *names[2] = {bad, good};
    tfq_queue *q = work_queue(names, 2);
    tfq_reader *r = mk_reader(k, 0);
    tfq_status *st = tfq_status_new();
    char got[64], want[600];
    tfq_code c = read1(r, q, got, sizeof got, st);
    snprintf(want, sizeof want, "%s; %s", bad, reason);
    REQUIRE(c == code, "%s on %s: %s '%s', expected %s", kind_name(k), bad, tfq_code_name(c),
            c ? tfq_status_message(st) : got, tfq_code_name(code));
    REQUIRE(strcmp(tfq_status_message(st), want) == 0, "%s: message '%s', expected '%s'",
            kind_name(k), tfq_status_message(st), want);
    expect_records(r, q, k, 0, 3, 1);
    tfq_status_free(st);
    tfq_reader_free(r);
    tfq_queue_free(q);
  }
}

/* ---- unreadable inputs ---------------------------------------------------------------------- */

Test(faults, missing_file_fails_with_not_found_and_the_next_file_is_read) {
  expect_open_failure_then_next_file(path_of("no_such_file"), TFQ_NOT_FOUND,
                                     "No such file or directory");
}

Test(faults, directory_given_as_file_fails_with_failed_precondition_and_is_skipped) {
  const char *d = path_of("a_directory");
  cr_assert_eq(mkdir(d, 0755), 0);
  expect_open_failure_then_next_file(d, TFQ_FAILED_PRECONDITION, "Is a directory");
}

/* Drops to uid/gid 65534 in the current (forked) process.  Returns 0, or -1 if the kernel or
 * the container refuses. */
/* Stays root but loses the capabilities that bypass file permissions, in this process and in
 * anything it executes (dropped from the bounding set too): a mode-000 file is then unreadable,
 * while the build tree (maybe inside a mode-700 directory) stays reachable for tfq-cat. */
static int drop_dac_capabilities(void) {
  if (geteuid() != 0) return -1;
  if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0 ||
      prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) != 0)
    return -1;
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  if (syscall(SYS_capget, &h, d) != 0) return -1;
  unsigned drop = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
  d[0].effective &= ~drop;
  d[0].permitted &= ~drop;
  d[0].inheritable &= ~drop;
  return syscall(SYS_capset, &h, d) == 0 ? 0 : -1;
}

/* Without the capability route (not root, or no CAP_SETPCAP): become nobody. */
static int drop_privileges(void) {
  if (drop_dac_capabilities() == 0) return 0;
  if (setgroups(0, NULL) != 0) return -1;
  if (setresgid(65534, 65534, 65534) != 0) return -1;
  if (setresuid(65534, 65534, 65534) != 0) return -1;
  (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* LeakSanitizer needs to inspect the process */
  return 0;
}

/* Runs fn() in a forked child after dropping privileges; skips loudly if a file with mode 000 is
 * still readable there (no privilege drop possible). */
static void run_unprivileged(void (*fn)(const char *denied), const char *denied) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    g_child = 1;
    if (drop_privileges() != 0) {
      fprintf(stderr, "child: cannot drop privileges: %s\n", strerror(errno));
      _exit(77);
    }
    int fd = open(denied, O_RDONLY);
    if (fd >= 0 || errno != EACCES) {
      fprintf(stderr, "child: a mode-000 file is still readable after dropping privileges\n");
      _exit(77);
    }
    fn(denied);
    if (LEAKS_FOUND()) _exit(91);
    _exit(0);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
  if (WEXITSTATUS(status) == 77) {
    const char *ci = getenv("CI");
    cr_assert(!(ci && strcmp(ci, "true") == 0),
              "permission-denied case: privileges cannot be dropped here, and CI=true");
    fprintf(stderr, "SKIPPED: permission-denied case: privileges cannot be dropped here\n");
    cr_skip_test("privileges cannot be dropped (see stderr)");
  }
  cr_assert_eq(WEXITSTATUS(status), 0, "unprivileged child failed (exit %d, see stderr)",
               WEXITSTATUS(status));
}

static void denied_reader_case(const char *denied) {
  expect_open_failure_then_next_file(denied, TFQ_PERMISSION_DENIED, "Permission denied");
}

static const char *make_denied_file(void) {
  for (int ki = 0; ki < 3; ki++) write_records(kKinds[ki], path_of(kind_name(kKinds[ki])), 0, 3);
  const char *p = path_of("secret");
  put_file(p, "x\n", 2, "wb");
  cr_assert_eq(chmod(p, 0), 0);
  return p;
}

Test(faults, unreadable_file_fails_with_permission_denied_and_the_next_file_is_read) {
  run_unprivileged(denied_reader_case, make_denied_file());
}

/* ---- tfq-cat ---------------------------------------------------------------------------------
 * Runs tfq-cat with `args`; returns the exit status, stderr in err (NUL-terminated), the
 * number of stdout bytes in *out_len. */
static int run_cat(const char *const *args, char *err, size_t cap, size_t *out_len) {
  const char *cat = getenv("TFQ_CAT");
  REQUIRE(cat != NULL && *cat, "TFQ_CAT is not set (meson sets it)");
  char eout[] = "/tmp/tfq_faults_cat_err_XXXXXX", oout[] = "/tmp/tfq_faults_cat_out_XXXXXX";
  int efd = mkstemp(eout), ofd = mkstemp(oout);
  REQUIRE(efd >= 0 && ofd >= 0, "mkstemp");
  fflush(NULL);
  pid_t pid = fork();
  REQUIRE(pid != -1, "fork");
  if (pid == 0) {
    dup2(ofd, 1);
    dup2(efd, 2);
    const char *argv[16];
    int n = 0;
    argv[n++] = cat;
    for (int i = 0; args[i] && n < 15; i++) argv[n++] = args[i];
    argv[n] = NULL;
    /* In a -Db_coverage build, tfq-cat writes .gcda files next to its objects at exit, which an
     * unprivileged child cannot do (libgcov would print to stderr): send them elsewhere. */
    if (geteuid() != 0) setenv("GCOV_PREFIX", "/tmp/tfq-faults-gcov-unprivileged", 1);
    execv(cat, (char *const *)argv);
    _exit(127);
  }
  int status;
  REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
  size_t n;
  char *e = slurp(eout, &n);
  snprintf(err, cap, "%s", e);
  free(e);
  free(slurp(oout, out_len));
  close(efd);
  close(ofd);
  unlink(eout);
  unlink(oout);
  REQUIRE(WIFEXITED(status), "tfq-cat killed by signal %d", WTERMSIG(status));
  return WEXITSTATUS(status);
}

static void expect_cat_failure(const char *bad, const char *reason) {
  const char *args[] = {bad, NULL};
  char err[4096], want[600];
  size_t out_len;
  int rc = run_cat(args, err, sizeof err, &out_len);
  snprintf(want, sizeof want, "tfq-cat: %s: %s\n", bad, reason);
  REQUIRE(rc == 1, "tfq-cat %s exited %d (stderr: %s)", bad, rc, err);
  REQUIRE(strcmp(err, want) == 0, "tfq-cat stderr '%s', expected '%s'", err, want);
  REQUIRE(out_len == 0, "tfq-cat wrote %zu bytes to stdout", out_len);
}

Test(faults, tfq_cat_missing_file_exits_1_naming_the_file) {
  expect_cat_failure(path_of("no_such.csv"), "No such file or directory");
}

Test(faults, tfq_cat_directory_exits_1_naming_the_directory) {
  const char *d = path_of("dir.csv");
  cr_assert_eq(mkdir(d, 0755), 0);
  expect_cat_failure(d, "Is a directory");
}

static void denied_cat_case(const char *denied) { expect_cat_failure(denied, "Permission denied"); }

Test(faults, tfq_cat_unreadable_file_exits_1_with_permission_denied) {
  run_unprivileged(denied_cat_case, make_denied_file());
}

/* ---- files that change while they are read ------------------------------------------------ */

Test(faults, tfrecord_truncated_inside_a_later_record_gives_sticky_data_loss_after_the_good_ones) {
  const char *p = path_of("cut.tfrecord");
  write_records(TFQ_READER_TFRECORD, p, 0, 10); /* 8-byte payloads: 24 bytes per record */
  const char *names[1] = {p};
  tfq_queue *q = work_queue(names, 1);
  tfq_reader *r = mk_reader(TFQ_READER_TFRECORD, 64);
  expect_records(r, q, TFQ_READER_TFRECORD, 0, 2, 0);
  cr_assert_eq(truncate(p, 6 * 24 + 14), 0); /* inside record 6's payload */
  expect_records(r, q, TFQ_READER_TFRECORD, 2, 6, 0);
  tfq_status *st = tfq_status_new();
  char got[64];
  for (int again = 0; again < 2; again++) {
    tfq_code c = read1(r, q, got, sizeof got, st);
    cr_assert_eq(c, TFQ_DATA_LOSS, "read %d: %s %s", again, tfq_code_name(c),
                 tfq_status_message(st));
    cr_assert_str_eq(tfq_status_message(st),
                     "truncated record at 144' failed with Read less bytes than requested");
  }
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(faults, fixed_length_truncated_inside_a_record_gives_data_loss_naming_file_and_offset) {
  const char *p = path_of("cut.bin");
  write_records(TFQ_READER_FIXED_LENGTH, p, 0, 40);
  const char *names[1] = {p};
  tfq_queue *q = work_queue(names, 1);
  tfq_reader *r = mk_reader(TFQ_READER_FIXED_LENGTH, 64);
  expect_records(r, q, TFQ_READER_FIXED_LENGTH, 0, 2, 0);
  cr_assert_eq(truncate(p, 25 * FIXED_BYTES + 3), 0);
  expect_records(r, q, TFQ_READER_FIXED_LENGTH, 2, 25, 0);
  tfq_status *st = tfq_status_new();
  char got[64];
  tfq_code c = read1(r, q, got, sizeof got, st);
  cr_assert_eq(c, TFQ_DATA_LOSS, "%s %s", tfq_code_name(c), tfq_status_message(st));
  cr_assert(strstr(tfq_status_message(st), p) && strstr(tfq_status_message(st), "offset 250"),
            "message: %s", tfq_status_message(st));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

Test(faults, text_file_truncated_at_a_line_boundary_ends_after_the_remaining_lines) {
  const char *p = path_of("cut.txt");
  write_records(TFQ_READER_TEXT_LINE, p, 0, 100); /* 9 bytes per line */
  const char *names[1] = {p};
  tfq_queue *q = work_queue(names, 1);
  tfq_reader *r = mk_reader(TFQ_READER_TEXT_LINE, 64);
  expect_records(r, q, TFQ_READER_TEXT_LINE, 0, 2, 0);
  cr_assert_eq(truncate(p, 50 * 9), 0);
  expect_records(r, q, TFQ_READER_TEXT_LINE, 2, 50, 1); /* then OUT_OF_RANGE */
  tfq_reader_free(r);
  tfq_queue_free(q);
}

/* A file cut below the offset the reader has already reached (copytruncate log rotation, a
 * rewritten file): the records that were there are gone, which must not look like a normal end
 * of file. */
Test(faults, file_truncated_below_the_read_position_gives_data_loss_not_a_silent_end) {
  for (int ki = 0; ki < 3; ki++) {
    tfq_reader_kind k = kKinds[ki];
    char p[512];
    snprintf(p, sizeof p, "%s", path_of(kind_name(k)));
    write_records(k, p, 0, 200);
    const char *names[1] = {p};
    tfq_queue *q = work_queue(names, 1);
    tfq_reader *r = mk_reader(k, 64);
    expect_records(r, q, k, 0, 100, 0);
    cr_assert_eq(truncate(p, 0), 0);
    tfq_status *st = tfq_status_new();
    char got[64];
    tfq_code c;
    int extra = 0; /* records still buffered before the cut was noticed */
    while ((c = read1(r, q, got, sizeof got, st)) == TFQ_OK) {
      char want[64];
      expected_value(k, 100 + extra, want, sizeof want);
      cr_assert_str_eq(got, want, "%s: buffered record %d", kind_name(k), 100 + extra);
      extra++;
    }
    cr_assert_eq(c, TFQ_DATA_LOSS, "%s: %s %s (after %d buffered records)", kind_name(k),
                 tfq_code_name(c), tfq_status_message(st), extra);
    cr_assert_lt(extra, 100);
    tfq_status_free(st);
    tfq_reader_free(r);
    tfq_queue_free(q);
  }
}

Test(faults, records_appended_while_a_file_is_read_are_all_returned_in_order) {
  for (int ki = 0; ki < 3; ki++) {
    tfq_reader_kind k = kKinds[ki];
    char p[512], whole[600];
    snprintf(p, sizeof p, "%s", path_of(kind_name(k)));
    snprintf(whole, sizeof whole, "%s.whole", p);
    write_records(k, whole, 0, 40);
    size_t n;
    char *all = slurp(whole, &n);
    size_t half = n / 2;
    if (k == TFQ_READER_TFRECORD) half = 20 * 24;
    put_file(p, all, half, "wb");
    const char *names[1] = {p};
    tfq_queue *q = work_queue(names, 1);
    tfq_reader *r = mk_reader(k, 64);
    expect_records(r, q, k, 0, 2, 0);
    put_file(p, all + half, n - half, "ab");
    expect_records(r, q, k, 2, 40, 1);
    free(all);
    tfq_reader_free(r);
    tfq_queue_free(q);
  }
}

/* ---- signals without SA_RESTART ---------------------------------------------------------------
 */

static atomic_long g_signals;
static void on_signal(int s) {
  (void)s;
  atomic_fetch_add(&g_signals, 1);
}

typedef struct {
  pthread_t targets[2];
  int ntargets;
  atomic_int stop;
  pthread_t th;
} signaller;

static void *signaller_main(void *arg) {
  signaller *s = arg;
  struct timespec ts = {0, 50 * 1000};
  for (unsigned i = 0; !atomic_load(&s->stop); i++) {
    pthread_kill(s->targets[i % (unsigned)s->ntargets], SIGUSR1);
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void install_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = 0; /* no SA_RESTART: blocking system calls fail with EINTR */
  sigemptyset(&sa.sa_mask);
  cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  atomic_store(&g_signals, 0);
}

static void signaller_start(signaller *s, pthread_t a, pthread_t b, int n) {
  s->targets[0] = a;
  s->targets[1] = b;
  s->ntargets = n;
  atomic_store(&s->stop, 0);
  cr_assert_eq(pthread_create(&s->th, NULL, signaller_main, s), 0);
}

static void signaller_stop(signaller *s) {
  atomic_store(&s->stop, 1);
  pthread_join(s->th, NULL);
}

Test(faults, signals_while_reading_a_file_change_nothing) {
  install_handler();
  const char *p = path_of("big.txt");
  write_records(TFQ_READER_TEXT_LINE, p, 0, 5000);
  const char *names[1] = {p};
  tfq_reader *r = mk_reader(TFQ_READER_TEXT_LINE, 64);
  signaller s;
  signaller_start(&s, pthread_self(), pthread_self(), 1);
  /* Whole passes over the file until enough signals have landed (the signaller thread competes
   * for 2 shared cores). */
  int passes = 0;
  while (passes < 3 || (atomic_load(&g_signals) < 200 && passes < 1000)) {
    tfq_queue *q = work_queue(names, 1);
    expect_records(r, q, TFQ_READER_TEXT_LINE, 0, 5000, 1);
    tfq_queue_free(q);
    passes++;
  }
  signaller_stop(&s);
  cr_assert_geq(atomic_load(&g_signals), 200, "only %ld signals delivered in %d passes",
                atomic_load(&g_signals), passes);
  tfq_reader_free(r);
}

typedef struct {
  const char *path;
  int lines;
} fifo_writer_arg;

static void *fifo_writer(void *arg) {
  fifo_writer_arg *a = arg;
  struct timespec late = {0, 100 * 1000 * 1000}, pause = {0, 1000 * 1000};
  nanosleep(&late, NULL); /* the reader sits in open() meanwhile */
  int fd = open(a->path, O_WRONLY);
  if (fd < 0) return (void *)1;
  for (int i = 0; i < a->lines; i++) {
    char line[32];
    int n = snprintf(line, sizeof line, "rec-%04d\n", i);
    if (write(fd, line, (size_t)n) != n) {
      close(fd);
      return (void *)2;
    }
    if (i % 100 == 99) nanosleep(&pause, NULL); /* the reader sits in read() meanwhile */
  }
  close(fd);
  return NULL;
}

Test(faults, signals_while_blocked_opening_and_reading_a_pipe_change_nothing) {
  install_handler();
  const char *p = path_of("pipe");
  cr_assert_eq(mkfifo(p, 0644), 0);
  const char *names[1] = {p};
  tfq_queue *q = work_queue(names, 1);
  tfq_reader *r = mk_reader(TFQ_READER_TEXT_LINE, 64);
  fifo_writer_arg wa = {p, 2000};
  pthread_t w;
  cr_assert_eq(pthread_create(&w, NULL, fifo_writer, &wa), 0);
  signaller s;
  signaller_start(&s, pthread_self(), pthread_self(), 1);
  tfq_status *st = tfq_status_new();
  char got[64];
  int n = 0;
  tfq_code c;
  while ((c = read1(r, q, got, sizeof got, st)) == TFQ_OK) {
    char want[64];
    expected_value(TFQ_READER_TEXT_LINE, n, want, sizeof want);
    if (strcmp(got, want) != 0) break;
    n++;
  }
  signaller_stop(&s);
  /* If the reader gave up early, hold the read end open so that the writer's open() and writes
   * (18 KB: they fit in the pipe) complete. */
  int fd = c != TFQ_OUT_OF_RANGE ? open(p, O_RDONLY | O_NONBLOCK) : -1;
  void *wr;
  pthread_join(w, &wr);
  if (fd >= 0) close(fd);
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "after %d lines: %s %s", n, tfq_code_name(c),
               c ? tfq_status_message(st) : got);
  cr_assert_eq(n, 2000);
  cr_assert_null(wr, "writer failed");
  cr_assert_gt(atomic_load(&g_signals), 10, "only %ld signals delivered", atomic_load(&g_signals));
  tfq_status_free(st);
  tfq_reader_free(r);
  tfq_queue_free(q);
}

#define QITEMS 20000

typedef struct {
  tfq_queue *q;
  tfq_code code;
} producer_arg;

static void *int_producer(void *arg) {
  producer_arg *a = arg;
  struct timespec pause = {0, 200 * 1000};
  for (int64_t i = 0; i < QITEMS; i++) {
    tfq_tensor *t;
    tfq_tuple *tu;
    if ((a->code = tfq_tensor_new(TFQ_INT64, NULL, 0, &t, NULL))) return NULL;
    *(int64_t *)tfq_tensor_data(t) = i;
    if ((a->code = tfq_tuple_new(1, &tu, NULL))) return NULL;
    tfq_tuple_set_take(tu, 0, t);
    a->code = tfq_queue_enqueue(a->q, tu, NULL, TFQ_NO_TIMEOUT, NULL);
    tfq_tuple_free(tu);
    if (a->code) return NULL;
    if (i % 1000 == 999) nanosleep(&pause, NULL); /* let the consumer block on empty */
  }
  a->code = tfq_queue_close(a->q, 0, NULL, TFQ_NO_TIMEOUT, NULL);
  return NULL;
}

Test(faults, signals_while_queue_operations_block_change_nothing) {
  install_handler();
  tfq_spec *sp;
  OK(tfq_spec_new(&sp, NULL));
  OK(tfq_spec_add(sp, TFQ_INT64, NULL, 0, NULL, NULL));
  tfq_queue *q;
  OK(tfq_fifo_queue_new(sp, 4, "sigq", &q, NULL)); /* capacity 4: the producer blocks on full */
  /* A timed dequeue on an empty queue waits its whole deadline despite the signals. */
  signaller s;
  signaller_start(&s, pthread_self(), pthread_self(), 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  tfq_tuple *out = NULL;
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_queue_dequeue(q, &out, NULL, 200 * 1000, st);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  signaller_stop(&s);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  cr_assert_eq(c, TFQ_DEADLINE_EXCEEDED, "%s %s", tfq_code_name(c), tfq_status_message(st));
  cr_assert_geq(ms, 199.0, "timed dequeue returned after %.1f ms", ms);

  producer_arg pa = {q, TFQ_OK};
  pthread_t prod;
  cr_assert_eq(pthread_create(&prod, NULL, int_producer, &pa), 0);
  signaller_start(&s, pthread_self(), prod, 2);
  int64_t next = 0;
  for (;;) {
    if (next % 2 == 0) {
      c = tfq_queue_dequeue(q, &out, NULL, TFQ_NO_TIMEOUT, st);
    } else {
      c = tfq_queue_dequeue_up_to(q, 3, &out, NULL, TFQ_NO_TIMEOUT, st);
    }
    if (c) break;
    tfq_tensor *t = tfq_tuple_get(out, 0);
    const int64_t *v = tfq_tensor_cdata(t);
    int64_t k = tfq_tensor_num_elements(t);
    for (int64_t i = 0; i < k; i++)
      cr_assert_eq(v[i], next + i, "item %lld is %lld", (long long)(next + i), (long long)v[i]);
    next += k;
    tfq_tuple_free(out);
  }
  signaller_stop(&s);
  pthread_join(prod, NULL);
  cr_assert_eq(c, TFQ_OUT_OF_RANGE, "%s %s", tfq_code_name(c), tfq_status_message(st));
  cr_assert_eq(next, QITEMS);
  cr_assert_eq(pa.code, TFQ_OK, "producer: %s", tfq_code_name(pa.code));
  cr_assert_gt(atomic_load(&g_signals), 10, "only %ld signals delivered", atomic_load(&g_signals));
  tfq_status_free(st);
  tfq_queue_free(q);
  tfq_spec_free(sp);
}

/* ---- a full disk under the TFRecord writer ------------------------------------------------ */

#define FSIZE_LIMIT (64 * 1024)

static void fsize_child(const char *p1, const char *p2) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {FSIZE_LIMIT, FSIZE_LIMIT};
  REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
  char rec[1000];
  memset(rec, 'x', sizeof rec);
  tfq_status *st = tfq_status_new();
  char want[600];
  snprintf(want, sizeof want, "%s; File too large", p1);
  /* 1. The write that overflows the writer's buffer meets the limit. */
  tfq_tfrecord_writer *w;
  OK(tfq_tfrecord_writer_new(p1, TFQ_COMPRESSION_NONE, &w, st));
  tfq_code c = TFQ_OK;
  int i;
  for (i = 0; i < 1000 && c == TFQ_OK; i++) c = tfq_tfrecord_writer_write(w, rec, sizeof rec, st);
  REQUIRE(c == TFQ_RESOURCE_EXHAUSTED, "write %d: %s '%s'", i, tfq_code_name(c),
          tfq_status_message(st));
  REQUIRE(strcmp(tfq_status_message(st), want) == 0, "message '%s', expected '%s'",
          tfq_status_message(st), want);
  c = tfq_tfrecord_writer_close(w, st);
  REQUIRE(c == TFQ_RESOURCE_EXHAUSTED || c == TFQ_OK, "close after a failed write: %s '%s'",
          tfq_code_name(c), tfq_status_message(st));
  c = tfq_tfrecord_writer_write(w, rec, sizeof rec, st);
  REQUIRE(c == TFQ_FAILED_PRECONDITION, "write after close: %s", tfq_code_name(c));
  tfq_tfrecord_writer_free(w);
  struct stat sb;
  REQUIRE(stat(p1, &sb) == 0 && sb.st_size == FSIZE_LIMIT, "file size %lld", (long long)sb.st_size);

  /* 2. Everything fits in the buffer: the error comes from close(), and free() after it. */
  snprintf(want, sizeof want, "%s; File too large", p2);
  OK(tfq_tfrecord_writer_new(p2, TFQ_COMPRESSION_NONE, &w, st));
  for (i = 0; i < 100; i++) OK(tfq_tfrecord_writer_write(w, rec, sizeof rec, st));
  c = tfq_tfrecord_writer_close(w, st);
  REQUIRE(c == TFQ_RESOURCE_EXHAUSTED, "close: %s '%s'", tfq_code_name(c), tfq_status_message(st));
  REQUIRE(strcmp(tfq_status_message(st), want) == 0, "close message '%s', expected '%s'",
          tfq_status_message(st), want);
  OK(tfq_tfrecord_writer_close(w, st)); /* idempotent */
  tfq_tfrecord_writer_free(w);

  /* 3. Destroyed without close, with a failing flush inside. */
  OK(tfq_tfrecord_writer_new(p2, TFQ_COMPRESSION_GZIP, &w, st));
  for (i = 0; i < 100; i++) {
    for (size_t j = 0; j < sizeof rec; j++) rec[j] = (char)(rand() & 0xff); /* incompressible */
    OK(tfq_tfrecord_writer_write(w, rec, sizeof rec, st));
  }
  tfq_tfrecord_writer_free(w);
  tfq_status_free(st);
}

Test(faults, tfrecord_writer_on_a_full_disk_returns_resource_exhausted_and_frees_cleanly) {
  char p1[512], p2[512];
  snprintf(p1, sizeof p1, "%s", path_of("full1.tfrecord"));
  snprintf(p2, sizeof p2, "%s", path_of("full2.tfrecord"));
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    g_child = 1;
    fsize_child(p1, p2);
    if (LEAKS_FOUND()) _exit(91);
    _exit(0);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status), "child killed by signal %d", WTERMSIG(status));
  cr_assert_eq(WEXITSTATUS(status), 0, "child failed (exit %d, see stderr)", WEXITSTATUS(status));
}

/* ---- a reader failing in the middle of file 3 of 5 inside a QueueRunner pipeline ---------- */

#define NFILES 5
#define PER_FILE 40
#define FAULT_FILE 2 /* 0-based: the third file */
#define FAULT_REC 21 /* records 0..20 of it come before the fault */

/* The CSV line of record (f, i): "x1,x2,id" with id = f * 1000 + i. */
static int csv_line(int f, int i, char *buf, size_t cap) {
  return snprintf(buf, cap, "%d.5,%d.25,%d", i, f, f * 1000 + i);
}

typedef struct pipeline {
  tfq_queue *files, *target;
  tfq_reader *reader;
  tfq_csv_options *csv;
  tfq_read_decode_op *op;
  tfq_runner *runner;
  tfq_coord *coord;
} pipeline;

static void pipeline_start(pipeline *pl, tfq_reader_kind kind, char names[NFILES][512],
                           int threads) {
  memset(pl, 0, sizeof *pl);
  const char *np[NFILES];
  for (int f = 0; f < NFILES; f++) np[f] = names[f];
  pl->files = work_queue(np, NFILES);
  pl->reader = mk_reader(kind, 256);
  OK(tfq_csv_options_new(&pl->csv, NULL));
  OK(tfq_csv_options_add_default_float(pl->csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_float(pl->csv, -1.f, NULL));
  OK(tfq_csv_options_add_default_int32(pl->csv, -1, NULL));
  tfq_spec *sp;
  OK(tfq_spec_new(&sp, NULL));
  int64_t two = 2;
  OK(tfq_spec_add(sp, TFQ_FLOAT, &two, 1, "features", NULL));
  OK(tfq_spec_add(sp, TFQ_INT32, NULL, 0, "id", NULL));
  OK(tfq_fifo_queue_new(sp, -1, "examples", &pl->target, NULL));
  tfq_spec_free(sp);
  OK(tfq_read_decode_op_new(pl->reader, pl->files, pl->csv, 8, pl->target, &pl->op, NULL));
  size_t feat[2] = {0, 1}, id[1] = {2};
  OK(tfq_read_decode_op_add_component(pl->op, feat, 2, 1, NULL));
  OK(tfq_read_decode_op_add_component(pl->op, id, 1, 0, NULL));
  OK(tfq_coord_new(&pl->coord, NULL));
  OK(tfq_runner_new(pl->target, &pl->runner, NULL));
  for (int t = 0; t < threads; t++)
    OK(tfq_runner_add_op(pl->runner, tfq_read_decode_step, pl->op, "read", NULL));
  OK(tfq_runner_start(pl->runner, pl->coord, 0, NULL));
}

/* Joins the coordinator (expecting `code` with every substring of `want` in its message), then
 * drains the target queue into seen[f * PER_FILE + i] counts and returns the number drained. */
static int pipeline_finish(pipeline *pl, tfq_code code, const char *const *want, int nwant,
                           int *seen) {
  tfq_status *st = tfq_status_new();
  tfq_code c = tfq_coord_join(pl->coord, 10 * 1000 * 1000, 0, st);
  cr_assert_eq(c, code, "coord join: %s '%s'", tfq_code_name(c), tfq_status_message(st));
  for (int i = 0; i < nwant; i++)
    cr_assert(strstr(tfq_status_message(st), want[i]) != NULL, "coord message '%s' lacks '%s'",
              tfq_status_message(st), want[i]);
  cr_assert_eq(tfq_runner_running(pl->runner), 0, "runner threads still running");
  int n = 0;
  tfq_tuple *b;
  while ((c = tfq_queue_dequeue_up_to(pl->target, 16, &b, NULL, 0, st)) == TFQ_OK) {
    tfq_tensor *feat = tfq_tuple_get(b, 0), *ids = tfq_tuple_get(b, 1);
    const float *x = tfq_tensor_cdata(feat);
    const int32_t *id = tfq_tensor_cdata(ids);
    for (int64_t r = 0; r < tfq_tensor_num_elements(ids); r++) {
      int f = id[r] / 1000, i = id[r] % 1000;
      cr_assert(f >= 0 && f < NFILES && i >= 0 && i < PER_FILE, "bad id %d", id[r]);
      cr_assert_float_eq(x[2 * r], (float)i + 0.5f, 0, "x1 of %d", id[r]);
      cr_assert_float_eq(x[2 * r + 1], (float)f + 0.25f, 0, "x2 of %d", id[r]);
      seen[f * PER_FILE + i]++;
      n++;
    }
    tfq_tuple_free(b);
  }
  cr_assert(c == TFQ_OUT_OF_RANGE, "drain: %s %s (the runner closes the queue on stop)",
            tfq_code_name(c), tfq_status_message(st));
  tfq_status_free(st);
  tfq_runner_free(pl->runner);
  tfq_read_decode_op_free(pl->op);
  tfq_coord_free(pl->coord);
  tfq_reader_free(pl->reader);
  tfq_csv_options_free(pl->csv);
  tfq_queue_free(pl->files);
  tfq_queue_free(pl->target);
  return n;
}

/* With one reader thread the records before the fault are exactly those of files 1-2 and the
 * first FAULT_REC of file 3, and nothing after the fault arrives; with several threads sharing
 * the reader, each record arrives at most once (another thread may already hold a later batch
 * of file 3 and enqueue it before the stop reaches it, as in TF). */
static void check_seen(const int *seen, int exact) {
  for (int f = 0; f < NFILES; f++)
    for (int i = 0; i < PER_FILE; i++) {
      int s = seen[f * PER_FILE + i];
      int before = f < FAULT_FILE || (f == FAULT_FILE && i < FAULT_REC);
      cr_assert_leq(s, 1, "record %d of file %d delivered %d times", i, f + 1, s);
      if (exact && f == FAULT_FILE && i >= FAULT_REC)
        cr_assert_eq(s, 0, "record %d of file 3 comes after the fault", i);
      if (exact) cr_assert_eq(s, before, "record %d of file %d: seen %d", i, f + 1, s);
    }
}

/* TFRecord files whose payloads are CSV lines; one payload byte of record FAULT_REC of file 3
 * is flipped.  Returns that record's offset in *fault_off. */
static void make_tfrecord_files(char names[NFILES][512], uint64_t *fault_off) {
  for (int f = 0; f < NFILES; f++) {
    char nm[32];
    snprintf(nm, sizeof nm, "part-%d.tfrecord", f + 1);
    snprintf(names[f], 512, "%s", path_of(nm));
    tfq_tfrecord_writer *w;
    OK(tfq_tfrecord_writer_new(names[f], TFQ_COMPRESSION_NONE, &w, NULL));
    uint64_t off = 0;
    for (int i = 0; i < PER_FILE; i++) {
      char line[64];
      int n = csv_line(f, i, line, sizeof line);
      if (f == FAULT_FILE && i == FAULT_REC) *fault_off = off;
      OK(tfq_tfrecord_writer_write(w, line, (size_t)n, NULL));
      off += (uint64_t)n + 16;
    }
    OK(tfq_tfrecord_writer_close(w, NULL));
    tfq_tfrecord_writer_free(w);
  }
  int fd = open(names[FAULT_FILE], O_RDWR);
  cr_assert_geq(fd, 0);
  char b;
  cr_assert_eq(pread(fd, &b, 1, (off_t)*fault_off + 13), 1);
  b ^= 0x20;
  cr_assert_eq(pwrite(fd, &b, 1, (off_t)*fault_off + 13), 1);
  close(fd);
}

static void corrupt_tfrecord_case(int threads) {
  char names[NFILES][512];
  uint64_t off = 0;
  make_tfrecord_files(names, &off);
  pipeline pl;
  pipeline_start(&pl, TFQ_READER_TFRECORD, names, threads);
  char where[64];
  snprintf(where, sizeof where, "corrupted record at %llu", (unsigned long long)off + 12);
  const char *want[2] = {names[FAULT_FILE], where};
  int seen[NFILES * PER_FILE] = {0};
  pipeline_finish(&pl, TFQ_DATA_LOSS, want, 2, seen);
  check_seen(seen, threads == 1);
}

Test(faults,
     pipeline_corrupt_tfrecord_in_file_3_of_5_reaches_the_coordinator_with_file_and_offset) {
  corrupt_tfrecord_case(1);
}

Test(faults, pipeline_corrupt_tfrecord_with_4_reader_threads_joins_all_and_duplicates_nothing) {
  corrupt_tfrecord_case(4);
}

/* Text CSV files; the x2 field of line FAULT_REC + 1 of file 3 is "abc". */
static void bad_csv_case(int threads) {
  char names[NFILES][512];
  for (int f = 0; f < NFILES; f++) {
    char nm[32];
    snprintf(nm, sizeof nm, "part-%d.csv", f + 1);
    snprintf(names[f], 512, "%s", path_of(nm));
    FILE *fp = fopen(names[f], "wb");
    cr_assert_not_null(fp);
    for (int i = 0; i < PER_FILE; i++) {
      char line[64];
      if (f == FAULT_FILE && i == FAULT_REC)
        snprintf(line, sizeof line, "%d.5,abc,%d", i, f * 1000 + i);
      else
        csv_line(f, i, line, sizeof line);
      fprintf(fp, "%s\n", line);
    }
    cr_assert_eq(fclose(fp), 0);
  }
  pipeline pl;
  pipeline_start(&pl, TFQ_READER_TEXT_LINE, names, threads);
  char key[600];
  snprintf(key, sizeof key, "%s:%d: ", names[FAULT_FILE], FAULT_REC + 1);
  const char *want[2] = {key, "is not a valid float: abc"};
  int seen[NFILES * PER_FILE] = {0};
  pipeline_finish(&pl, TFQ_INVALID_ARGUMENT, want, 2, seen);
  check_seen(seen, threads == 1);
}

Test(faults, pipeline_bad_csv_field_in_file_3_of_5_keeps_every_earlier_record) { bad_csv_case(1); }

Test(faults, pipeline_bad_csv_field_with_4_reader_threads_joins_all_and_duplicates_nothing) {
  bad_csv_case(4);
}
