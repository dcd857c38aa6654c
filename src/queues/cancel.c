/* tfq_cancel, the cancel token: its registrations of pending attempts, and tfq_cancel_trigger(),
 * which cancels each registered attempt through the engine (tfq__queue_cancel_attempt: the
 * token's mu, then the queue's).  Half of the locking protocol of queue.c (tests/model/queue.pml
 * models both halves). */
#include <assert.h>

#include "queue_internal.h"

tfq_code tfq_cancel_new(tfq_cancel **out, tfq_status *st) {
  tfq_cancel *c = tfq__calloc(1, sizeof *c);
  *out = NULL;
  if (!c) return TFQ__OOM(st);
  if (tfq__mutex_init(&c->mu)) {
    tfq_free(c);
    return TFQ__OOM(st);
  }
  atomic_init(&c->triggered, 0);
  *out = c;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_cancel_free(tfq_cancel *c) {
  if (!c) return;
  assert(!c->regs);
  pthread_mutex_destroy(&c->mu);
  tfq_free(c);
}

int tfq_cancel_is_triggered(const tfq_cancel *c) { return tfq__cancel_triggered(c); }

void tfq_cancel_reset(tfq_cancel *c) {
  tfq__lock(&c->mu);
  atomic_store(&c->triggered, 0);
  tfq__unlock(&c->mu);
}

/* Lock order: the token's mu, then each registered attempt's queue mu. */
void tfq_cancel_trigger(tfq_cancel *c) {
  tfq__lock(&c->mu);
  atomic_store(&c->triggered, 1);
  for (tfq__cancel_reg *r = c->regs; r; r = r->next) tfq__queue_cancel_attempt(r->q, r->att);
  tfq__unlock(&c->mu);
}

int tfq__cancel_register(tfq_cancel *c, tfq_queue *q, tfq__attempt *a) {
  tfq__lock(&c->mu);
  int trig = atomic_load(&c->triggered);
  if (!trig) {
    a->reg.q = q;
    a->reg.att = a;
    a->reg.prev = NULL;
    a->reg.next = c->regs;
    if (c->regs) c->regs->prev = &a->reg;
    c->regs = &a->reg;
  }
  tfq__unlock(&c->mu);
  return trig;
}

void tfq__cancel_unregister(tfq_cancel *c, tfq__attempt *a) {
  tfq__lock(&c->mu);
  if (a->reg.prev)
    a->reg.prev->next = a->reg.next;
  else
    c->regs = a->reg.next;
  if (a->reg.next) a->reg.next->prev = a->reg.prev;
  tfq__unlock(&c->mu);
}
