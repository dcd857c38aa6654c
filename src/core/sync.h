/* Thread synchronisation for every module of the library (never installed): mutexes, condition
 * variables on CLOCK_MONOTONIC, and deadlines as monotonic nanoseconds (tfq__now_ns()) computed
 * from the API's timeouts in microseconds.  A failing lock, unlock, wait or condition-variable
 * initialisation is a bug (R11): it aborts.  Symbols are tfq__* and hidden. */
#ifndef TFQ_CORE_SYNC_H
#define TFQ_CORE_SYNC_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <tfq/status.h>
#include <time.h>

/* ---- mutexes ---- */

/* Inline: the queue engine's single-element fast paths take the lock once per element. */
static inline void tfq__lock(pthread_mutex_t *m) {
  if (pthread_mutex_lock(m)) abort();
}

static inline void tfq__unlock(pthread_mutex_t *m) {
  if (pthread_mutex_unlock(m)) abort();
}

/* Initialises `m` (adaptive where glibc has it: short critical sections spin a little in user
 * space before the futex).  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__mutex_init(pthread_mutex_t *m);

/* *v read under `m`: the lock-protected getters. */
static inline int tfq__locked_int(pthread_mutex_t *m, const int *v) {
  tfq__lock(m);
  int x = *v;
  tfq__unlock(m);
  return x;
}

static inline int64_t tfq__locked_i64(pthread_mutex_t *m, const int64_t *v) {
  tfq__lock(m);
  int64_t x = *v;
  tfq__unlock(m);
  return x;
}

/* ---- deadlines and timed waits ---- */

/* The deadline `timeout_us` microseconds after `start_ns` (monotonic ns; negative: now, the
 * clock read only when needed).  -1, no deadline, when `timeout_us` is negative or the sum does
 * not fit in 64 bits. */
int64_t tfq__deadline_ns(int64_t timeout_us, int64_t start_ns);

/* Monotonic nanoseconds as the absolute timespec of the pthread calls. */
static inline struct timespec tfq__timespec_ns(int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  return ts;
}

/* Initialises `cv` on CLOCK_MONOTONIC (the clock of every deadline here); aborts on failure. */
void tfq__cond_init_monotonic(pthread_cond_t *cv);

/* Waits on `cv` (made by tfq__cond_init_monotonic; `mu` held) until it is signalled or
 * `deadline_ns` passes (negative: no deadline).  Returns nonzero on timeout, 0 otherwise
 * (spurious wake-ups included: callers re-check their condition). */
int tfq__cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns);

/* Joins `th` until `deadline_ns` (negative: no deadline).  Returns 0 when joined (the thread's
 * result is dropped), else the pthread error (ETIMEDOUT: still running). */
int tfq__join_until(pthread_t th, int64_t deadline_ns);

#endif
