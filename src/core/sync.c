/* Thread synchronisation helpers shared by every module (see sync.h). */
#include "sync.h"

#include <errno.h>

#include "base.h"

tfq_code tfq__mutex_init(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  if (pthread_mutexattr_init(&a)) return TFQ_RESOURCE_EXHAUSTED;
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
  /* Short critical sections: spin a little in user space before the futex. */
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
  int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return rc ? TFQ_RESOURCE_EXHAUSTED : TFQ_OK;
}

int64_t tfq__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t tfq__deadline_ns(int64_t timeout_us, int64_t start_ns) {
  if (timeout_us < 0) return -1;
  if (start_ns < 0) start_ns = tfq__now_ns();
  if (timeout_us > (INT64_MAX - start_ns) / 1000) return -1;
  return start_ns + timeout_us * 1000;
}

void tfq__cond_init_monotonic(pthread_cond_t *cv) {
  pthread_condattr_t a;
  if (pthread_condattr_init(&a) || pthread_condattr_setclock(&a, CLOCK_MONOTONIC) ||
      pthread_cond_init(cv, &a))
    abort();
  pthread_condattr_destroy(&a);
}

int tfq__cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns) {
  if (deadline_ns < 0) {
    if (pthread_cond_wait(cv, mu)) abort();
    return 0;
  }
  struct timespec ts = tfq__timespec_ns(deadline_ns);
  int rc = pthread_cond_timedwait(cv, mu, &ts);
  if (rc && rc != ETIMEDOUT) abort();
  return rc == ETIMEDOUT;
}

/* Not pthread_clockjoin_np: ThreadSanitizer does not intercept it (gcc 12's libtsan knows
 * pthread_join, pthread_timedjoin_np and pthread_tryjoin_np), so every thread joined with it
 * looked leaked, and a new thread that reused its id aborted the run ("dup thread with used
 * id").  pthread_timedjoin_np takes a CLOCK_REALTIME deadline, which a clock step would move.
 * So: try to join, then sleep a short step (20 us doubling to 500 us, never past the
 * deadline), on the monotonic clock.  A thread that ends is joined at most 0.5 ms late. */
int tfq__join_until(pthread_t th, int64_t deadline_ns) {
  if (deadline_ns < 0) return pthread_join(th, NULL);
  int64_t step = 20000;
  for (;;) {
    int rc = pthread_tryjoin_np(th, NULL);
    if (rc != EBUSY) return rc;
    int64_t now = tfq__now_ns();
    if (now >= deadline_ns) return ETIMEDOUT;
    int64_t nap = deadline_ns - now < step ? deadline_ns - now : step;
    struct timespec ts = {(time_t)(nap / 1000000000), (long)(nap % 1000000000)};
    while (nanosleep(&ts, &ts) && errno == EINTR) {
    }
    if (step < 500000) step *= 2;
  }
}
