/* Regression (found by stress_queues): tfq_cancel_trigger racing a blocking call that has
 * registered with the cancel but not yet linked its attempt into the queue.  The trigger used to
 * complete the unlinked attempt, which the owner then linked anyway, leaving a dead stack attempt
 * in the queue: the next element vanished into it.  After every CANCELLED dequeue of an empty
 * queue, an enqueue must leave exactly one element.  Prints TAP.
 *   race_cancel_registration [iterations]   (default 20000) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <tfq/queue.h>
#include <tfq/tensor.h>
#include <unistd.h>

static tfq_queue *q;
static tfq_cancel *c;
static atomic_int go, done, quit;
static tfq_code code;

static void *deq(void *arg) {
  (void)arg;
  for (;;) {
    while (!atomic_load(&go))
      if (atomic_load(&quit)) return NULL;
    atomic_store(&go, 0);
    tfq_tuple *out = NULL;
    code = tfq_queue_dequeue(q, &out, c, TFQ_NO_TIMEOUT, NULL);
    tfq_tuple_free(out);
    atomic_store(&done, 1);
  }
}

/* Keeps q's mutex busy so the window between registering and linking widens. */
static void *hammer(void *arg) {
  (void)arg;
  while (!atomic_load(&quit)) (void)tfq_queue_size(q);
  return NULL;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  printf("1..1\n");
  tfq_spec *s;
  if (tfq_spec_new(&s, NULL) || tfq_spec_add(s, TFQ_INT64, NULL, 0, NULL, NULL)) return 2;
  tfq_tensor *x;
  tfq_tuple *e;
  if (tfq_tensor_new(TFQ_INT64, NULL, 0, &x, NULL) || tfq_tuple_new(1, &e, NULL)) return 2;
  tfq_tuple_set_take(e, 0, x);
  if (tfq_fifo_queue_new(s, 8, NULL, &q, NULL) || tfq_cancel_new(&c, NULL)) return 2;
  pthread_t th, hm;
  pthread_create(&th, NULL, deq, NULL);
  pthread_create(&hm, NULL, hammer, NULL);
  int rc = 0;
  long i;
  for (i = 0; i < iters; i++) {
    tfq_cancel_reset(c);
    atomic_store(&go, 1);
    for (volatile long spin = 0; spin < (i % 97) * 8; spin++) {
    }
    tfq_cancel_trigger(c);
    while (!atomic_load(&done)) {
    }
    atomic_store(&done, 0);
    if (code != TFQ_CANCELLED) {
      printf("# iteration %ld: dequeue on an empty queue returned %s\n", i, tfq_code_name(code));
      rc = 1;
      break;
    }
    /* The dequeue returned CANCELLED and no call is pending: enqueue must leave one element. */
    tfq_code ec = tfq_queue_enqueue(q, e, NULL, 0, NULL);
    int64_t size = tfq_queue_size(q);
    if (ec != TFQ_OK || size != 1) {
      printf(
          "# BUG at iteration %ld: after a CANCELLED dequeue, enqueue returned %s and size is "
          "%lld (expected OK, 1): the cancelled attempt was left linked in the queue\n",
          i, tfq_code_name(ec), (long long)size);
      rc = 1;
      break;
    }
    tfq_tuple *out = NULL;
    if (tfq_queue_dequeue(q, &out, NULL, 0, NULL) != TFQ_OK) {
      printf("# iteration %ld: cannot take the element back\n", i);
      rc = 1;
      break;
    }
    tfq_tuple_free(out);
  }
  if (!rc)
    printf("ok 1 - no dead attempt left in %ld cancel races\n", iters);
  else
    printf("not ok 1 - a cancelled attempt was left linked\n");
  fflush(stdout);
  atomic_store(&quit, 1);
  if (rc) _exit(rc); /* the queue may hold a dangling attempt: do not free it */
  pthread_join(th, NULL);
  pthread_join(hm, NULL);
  tfq_tuple_free(e);
  tfq_cancel_free(c);
  tfq_queue_free(q);
  tfq_spec_free(s);
  return 0;
}
