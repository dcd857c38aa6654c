/* The subset of Criterion's test API that tfq's threaded Criterion suites use, as a plain TAP
 * program: so that they can run under ThreadSanitizer, where Criterion's own runner cannot (it
 * exits with TSan's status 66 before running a test).  A test file includes
 * <criterion/criterion.h> normally and this header instead when TFQ_TAP_CRITERION is defined
 * (tests/faults/meson.build does so in the tree built with -Donly_plain=true, scripts/test's
 * TSan tree):
 *
 *   #ifdef TFQ_TAP_CRITERION
 *   #include "../common/tap_criterion.h"
 *   #else
 *   #include <criterion/criterion.h>
 *   #endif
 *
 * What it provides: TestSuite(suite, .init = f, .fini = g), Test(suite, name, .init, .fini,
 * .timeout), cr_assert, cr_assert_eq/neq/lt/leq/gt/geq, cr_assert_null/not_null,
 * cr_assert_str_eq/str_neq, cr_assert_float_eq, cr_assert_fail, cr_skip_test, each with an
 * optional printf-style message.  main() runs every test in its own forked process (init, test,
 * fini), in registration order, with a timeout (.timeout seconds, default 300), and prints TAP:
 * `ok N - suite::name`, `ok N - suite::name # SKIP why`, or `not ok N - ...` after the failed
 * assertion's file, line and message as a diagnostic.  Exit status 0 when no test failed.
 * Arguments: `--list` lists the tests; other arguments (Criterion's --tap, -j1) are ignored. */
#ifndef TFQ_TAP_CRITERION_H
#define TFQ_TAP_CRITERION_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int dummy_;
  void (*init)(void);
  void (*fini)(void);
  double timeout;
} tapcr_opts;

typedef struct {
  const char *suite, *name;
  void (*fn)(void);
  const tapcr_opts *opts;
} tapcr_test;

typedef struct {
  const char *suite;
  const tapcr_opts *opts;
} tapcr_suite;

enum { TAPCR_MAX = 512, TAPCR_SKIP = 77 };
static tapcr_test tapcr_tests[TAPCR_MAX];
static int tapcr_ntests;
static tapcr_suite tapcr_suites[16];
static int tapcr_nsuites;

static inline void tapcr_register(const char *suite, const char *name, void (*fn)(void),
                                  const tapcr_opts *o) {
  if (tapcr_ntests == TAPCR_MAX) abort();
  tapcr_tests[tapcr_ntests++] = (tapcr_test){suite, name, fn, o};
}

static inline void tapcr_register_suite(const char *suite, const tapcr_opts *o) {
  if (tapcr_nsuites == 16) abort();
  tapcr_suites[tapcr_nsuites++] = (tapcr_suite){suite, o};
}

/* A failed assertion: its place, what failed and the caller's message (fmt may be ""), then the
 * test's process ends with status 1.  The trailing "" every macro appends is an unused argument. */
static inline _Noreturn void tapcr_fail(const char *file, int line, const char *what,
                                        const char *fmt, ...) {
  fflush(stdout);
  fprintf(stderr, "# %s:%d: assertion failed: %s", file, line, what);
  if (fmt && *fmt) {
    va_list ap;
    va_start(ap, fmt);
    fputs(": ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
  }
  fputc('\n', stderr);
  fflush(stderr);
  _exit(1);
}

static inline _Noreturn void tapcr_skip(const char *fmt, ...) {
  fflush(stdout);
  fputs("# skip: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  _exit(TAPCR_SKIP);
}

#define TAPCR_IF(cond, what, ...)                                   \
  do {                                                              \
    if (!(cond)) tapcr_fail(__FILE__, __LINE__, what, __VA_ARGS__); \
  } while (0)
#define TAPCR_1(c, ...) TAPCR_IF(c, #c, __VA_ARGS__)
#define TAPCR_BIN(op, a, b, ...) TAPCR_IF((a)op(b), #a " " #op " " #b, __VA_ARGS__)
#define TAPCR_STR(op, a, b, ...) TAPCR_IF(strcmp((a), (b)) op 0, #a " " #op " " #b, __VA_ARGS__)
#define TAPCR_FEQ(a, b, eps, ...)                                                           \
  TAPCR_IF(((a) - (b) <= (eps)) && ((b) - (a) <= (eps)), #a " == " #b " (within " #eps ")", \
           __VA_ARGS__)
#define TAPCR_NULL(p, ...) TAPCR_IF((p) == NULL, #p " == NULL", __VA_ARGS__)
#define TAPCR_NOT_NULL(p, ...) TAPCR_IF((p) != NULL, #p " != NULL", __VA_ARGS__)

#define cr_assert(...) TAPCR_1(__VA_ARGS__, "")
#define cr_assert_eq(...) TAPCR_BIN(==, __VA_ARGS__, "")
#define cr_assert_neq(...) TAPCR_BIN(!=, __VA_ARGS__, "")
#define cr_assert_lt(...) TAPCR_BIN(<, __VA_ARGS__, "")
#define cr_assert_leq(...) TAPCR_BIN(<=, __VA_ARGS__, "")
#define cr_assert_gt(...) TAPCR_BIN(>, __VA_ARGS__, "")
#define cr_assert_geq(...) TAPCR_BIN(>=, __VA_ARGS__, "")
#define cr_assert_str_eq(...) TAPCR_STR(==, __VA_ARGS__, "")
#define cr_assert_str_neq(...) TAPCR_STR(!=, __VA_ARGS__, "")
#define cr_assert_float_eq(...) TAPCR_FEQ(__VA_ARGS__, "")
#define cr_assert_null(...) TAPCR_NULL(__VA_ARGS__, "")
#define cr_assert_not_null(...) TAPCR_NOT_NULL(__VA_ARGS__, "")
#define cr_assert_fail(...) tapcr_fail(__FILE__, __LINE__, "cr_assert_fail", __VA_ARGS__, "")
#define cr_skip_test(...) tapcr_skip(__VA_ARGS__, "")

#define TAPCR_TEST(suite, name, ...)                                            \
  static void suite##_##name##_fn(void);                                        \
  static const tapcr_opts suite##_##name##_opts = {__VA_ARGS__};                \
  __attribute__((constructor)) static void suite##_##name##_reg(void) {         \
    tapcr_register(#suite, #name, suite##_##name##_fn, &suite##_##name##_opts); \
  }                                                                             \
  static void suite##_##name##_fn(void)
#define Test(...) TAPCR_TEST(__VA_ARGS__, .dummy_ = 0)

#define TAPCR_SUITE(suite, ...)                                      \
  static const tapcr_opts suite##_suite_opts = {__VA_ARGS__};        \
  __attribute__((constructor)) static void suite##_suite_reg(void) { \
    tapcr_register_suite(#suite, &suite##_suite_opts);               \
  }                                                                  \
  typedef int suite##_suite_semicolon_
#define TestSuite(...) TAPCR_SUITE(__VA_ARGS__, .dummy_ = 0)

static inline const tapcr_opts *tapcr_suite_opts(const char *suite) {
  for (int i = 0; i < tapcr_nsuites; i++)
    if (strcmp(tapcr_suites[i].suite, suite) == 0) return tapcr_suites[i].opts;
  return NULL;
}

/* Runs test t in a child; returns 0 (passed), TAPCR_SKIP, or another nonzero status. */
static inline int tapcr_run(const tapcr_test *t) {
  const tapcr_opts *so = tapcr_suite_opts(t->suite);
  void (*init)(void) = t->opts->init ? t->opts->init : so ? so->init : NULL;
  void (*fini)(void) = t->opts->fini ? t->opts->fini : so ? so->fini : NULL;
  double timeout = t->opts->timeout > 0    ? t->opts->timeout
                   : so && so->timeout > 0 ? so->timeout
                                           : 300;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    setpgid(0, 0);
    if (init) init();
    t->fn();
    if (fini) fini();
    fflush(stdout);
    exit(0);
  }
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int ws;
    pid_t w = waitpid(pid, &ws, WNOHANG);
    if (w == pid) {
      if (WIFEXITED(ws)) return WEXITSTATUS(ws);
      fprintf(stderr, "# killed by signal %d\n", WTERMSIG(ws));
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > timeout) {
      fprintf(stderr, "# timed out after %.0f s\n", timeout);
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &ws, 0);
      return 1;
    }
    struct timespec nap = {0, 5000000};
    nanosleep(&nap, NULL);
  }
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--list") == 0) {
      for (int k = 0; k < tapcr_ntests; k++)
        printf("%s::%s\n", tapcr_tests[k].suite, tapcr_tests[k].name);
      return 0;
    }
  printf("1..%d\n", tapcr_ntests);
  int failed = 0;
  for (int k = 0; k < tapcr_ntests; k++) {
    const tapcr_test *t = &tapcr_tests[k];
    int rc = tapcr_run(t);
    if (rc == TAPCR_SKIP)
      printf("ok %d - %s::%s # SKIP\n", k + 1, t->suite, t->name);
    else
      printf("%s %d - %s::%s\n", rc ? "not ok" : "ok", k + 1, t->suite, t->name);
    fflush(stdout);
    failed |= rc != 0 && rc != TAPCR_SKIP;
  }
  return failed;
}

#endif
