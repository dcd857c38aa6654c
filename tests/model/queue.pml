/* A Promela model of the locking protocol of the queue engine, src/queues/queue.c (the cancel
 * token's half — cancel_register, cancel_unregister, tfq_cancel_trigger — is in
 * src/queues/cancel.c as tfq__cancel_register, tfq__cancel_unregister and tfq_cancel_trigger,
 * which cancels each attempt through queue.c's tfq__queue_cancel_attempt).
 *
 * What is modelled (names are the C names):
 *   q->mu (mu), tfq_cancel's mu (cmu) and `triggered`; the attempt lists E (enqueue, enqueue_many,
 *   plain close) and D (the dequeue family), served head of line by flush()/run_side();
 *   step_enqueue / step_close / step_dequeue with incremental enqueue_many and dequeue_up_to
 *   (partial batches held by a pending dequeue, restore_partial at close and cancel);
 *   complete(): unlink, signal the owner's condition variable only when it sleeps, publish
 *   `state` last; run_attempt(): cancel_register, the inline step when nothing waits on this side,
 *   append + flush otherwise, the lock-free spin on `state` (a bounded number of reads: the real
 *   spin is bounded by SPIN_NS), then sleep: lock, re-check `state`, sleeping = 1,
 *   while (!state) cond_wait; cancel_unregister; tfq_cancel_trigger (cmu then mu, per registered
 *   attempt not yet done: cancel_attempt_locked = restore + complete + flush);
 *   tfq_queue_close(cancel_pending_enqueues=1): closed = 1, complete every E attempt with
 *   ENQ_CANCELLED, flush.
 *
 * Also the single-element fast path of all-dense queues (fast_path below: no attempt, no cancel
 * registration when the call completes at once), the bounded pre-queue wait of an enqueue
 * that finds the queue full (wait_for_room), and rows written in place (tfq__queue_reserve /
 * tfq__queue_commit, src/queues/queues_shared.h: the read-decode op's way into a FIFO's ring):
 * a reservation never waits, holds `resv` rows of room out of sight until its commit, and
 * meanwhile every enqueue and close (the cancelling one on resv_cv) waits behind it.
 *
 * Not modelled: deadlines (timedwait / timeout 0), storage (ring, held-room allocation, OOM),
 * element order (only counts), the RandomShuffle min_after_dequeue rule, PriorityQueue's
 * all-at-once dequeue_many.  A pthread_cond_wait is modelled without spurious wake-ups (they can
 * only add wake-ups, and the C code re-checks `state` in a loop).
 *
 * Threads (each is a proctype with one attempt, reused for each of its calls):
 *   producer 0: enqueue_many(2 rows) (then NOPS-1 enqueue), no cancel token; the enqueue_many
 *               may first reserve what room there is (up to 2 rows, at least 1: reserve_rows)
 *               and commit it after an interleaving point, the rest as an enqueue_many;
 *   producer 1: NOPS enqueue(1), with the shared cancel token;
 *   (every single enqueue / dequeue() takes the fast path first, as all-dense queues do);
 *   consumer 0: dequeue_up_to(2) until it fails (OUT_OF_RANGE), no cancel token;
 *   consumer 1: NOPS dequeue(), with the shared cancel token;
 *   (NOPS = 1 by default: -DNOPS=2 is a bigger search, ~10x the states);
 *   closer:     close() or close(cancel_pending_enqueues=1), chosen nondeterministically, at any
 *               moment;
 *   canceller:  triggers the shared cancel token at any moment, or never;
 *   served:     the invariant monitor below.
 * CAP (capacity) is set with -DCAP=1 or -DCAP=2 (default 1).
 *
 * Checked by tests/model/run_spin.sh: safety (no invalid end state = no deadlock or lost
 * wake-up, assertions: conservation of elements, list integrity, and the `served` invariant: no
 * call waits while it could be served), non-progress cycles, and the
 * LTL property `closed_then_all_return`: once the queue is closed, every operation in progress
 * eventually returns.
 *
 * Deliberately broken variants (each must make run_spin.sh fail, see run_spin.sh --broken):
 *   -DBUG_NO_RECHECK  the owner decides to sleep on a `state` it read before taking the lock and
 *                     waits once without re-checking (the classic lost wake-up);
 *   -DBUG_NO_SIGNAL   complete() publishes `state` but does not signal a sleeping owner;
 *   -DBUG_CLOSE_NO_FLUSH  the cancelling close does not flush, so dequeues waiting on an empty
 *                     queue are never told it is closed;
 *   -DBUG_FAST_NO_FLUSH   the fast-path enqueue stores its element without serving the dequeues
 *                     that wait for one;
 *   -DBUG_COMMIT_NO_FLUSH the commit of a reservation does not flush, so the calls that waited
 *                     behind it (or for its rows) are left waiting. */

#ifndef CAP
#define CAP 1
#endif
#ifndef NOPS
#define NOPS 1 /* calls per producer (the first call of producer 0 is an enqueue_many(2)) */
#endif
#ifndef SPIN_READS
#define SPIN_READS 1 /* lock-free reads of `state` before the owner goes to sleep */
#endif

#define NA 5 /* attempts: 0,1 producers; 2,3 consumers; 4 closer */
#define P0 0
#define P1 1
#define C0 2
#define C1 3
#define CL 4

/* kinds */
#define ENQ 0
#define CLOSE 1
#define DEQ 2
/* results */
#define R_OK 0
#define R_CLOSED 1
#define R_ALREADY 2
#define R_ENQ_CANC 3
#define R_DEQ_CANC 4
#define R_INSUFF 5
/* step results */
#define S_NONE 0
#define S_PROGRESS 1
#define S_COMPLETE 2

/* ---- shared state ---- */
byte mu;  /* q->mu: 0 free, else owner pid+1 */
byte cmu; /* the cancel token's mutex */
bool triggered;
bool closed;
byte count; /* elements stored */
byte resv;  /* rows reserved after the tail (tfq__queue_reserve), not yet committed */
bool rwait; /* a cancelling close waits on resv_cv (resv_waiters) */
bool rsig;  /* resv_cv signalled */
/* the attempt lists: side 0 = E (enqueues, plain close), side 1 = D (dequeues) */
byte L[2 * NA]; byte llen[2];
#define elen llen[0]
#define dlen llen[1]
#define SIDE(x) (kind[x] == DEQ -> 1 : 0)

byte kind[NA], total[NA], done[NA], res[NA];
bool upto[NA], linked[NA], state[NA], sleeping[NA], sig[NA], reg[NA];

/* observation */
byte inop;         /* operations in progress (between entering and leaving run_attempt) */
byte inserted;     /* rows put in by enqueues */
byte delivered;    /* rows handed out by completed dequeues */

#define LOCK(m) atomic { m == 0 -> m = _pid + 1 }
#define UNLOCK(m) m = 0

/* Temporaries of the inlines.  All but i_ are used only inside atomic sequences that hold mu,
 * so one hidden (not part of the state vector) copy serves every thread. */
hidden byte a_, j_, r_, before_, sz_;
hidden byte p_, prog_, side_;
#define LOCALS byte i_; bool f_; bool w_ /* f_, w_: single_op's fast-path flags */

inline list_append(sd, x) {
  L[sd * NA + llen[sd]] = x; llen[sd]++; linked[x] = 1
}

inline list_remove(sd, x) {
  j_ = 0;
  do
  :: j_ < llen[sd] && L[sd * NA + j_] != x -> j_++
  :: j_ < llen[sd] && L[sd * NA + j_] == x -> break
  :: j_ >= llen[sd] -> assert(false) /* a linked attempt must be on its list */
  od;
  do
  :: j_ + 1 < llen[sd] -> L[sd * NA + j_] = L[sd * NA + j_ + 1]; j_++
  :: else -> break
  od;
  llen[sd]--; L[sd * NA + llen[sd]] = 0; linked[x] = 0
}

/* complete(q, a, why): unlink, wake the owner if it sleeps, publish state last */
inline complete(x, why) {
  if
  :: linked[x] -> list_remove(SIDE(x), x)
  :: else -> skip
  fi;
  res[x] = why;
#ifndef BUG_NO_SIGNAL
  if
  :: sleeping[x] -> sig[x] = 1
  :: else -> skip
  fi;
#endif
  state[x] = 1
}

inline step_enqueue(x) {
  if
  :: closed -> complete(x, R_CLOSED); r_ = S_COMPLETE
  :: !closed && resv > 0 -> r_ = S_NONE /* behind the open reservation */
  :: !closed && resv == 0 ->
    before_ = done[x];
    do
    :: done[x] < total[x] && count < CAP -> count++; done[x]++; inserted++
    :: else -> break
    od;
    if
    :: done[x] == total[x] -> complete(x, R_OK); r_ = S_COMPLETE
    :: else -> r_ = (done[x] > before_ -> S_PROGRESS : S_NONE)
    fi
  fi
}

inline step_close(x) {
  if
  :: resv > 0 -> r_ = S_NONE /* the reservation's rows go in first */
  :: resv == 0 && closed -> complete(x, R_ALREADY); r_ = S_COMPLETE
  :: resv == 0 && !closed -> closed = 1; complete(x, R_OK); r_ = S_COMPLETE
  fi
}

inline step_dequeue(x) {
  r_ = S_NONE;
  if
  :: closed && count < total[x] - done[x] ->
    sz_ = count;
    count = count + done[x]; done[x] = 0; /* restore_partial */
    if
    :: upto[x] && count > 0 -> total[x] = count
    :: else -> complete(x, R_INSUFF); r_ = S_COMPLETE
    fi
  :: else -> skip
  fi;
  if
  :: r_ != S_COMPLETE ->
    before_ = done[x];
    do
    :: done[x] < total[x] && count > 0 -> count--; done[x]++
    :: else -> break
    od;
    if
    :: done[x] == total[x] -> complete(x, R_OK); r_ = S_COMPLETE
    :: else -> r_ = (done[x] > before_ -> S_PROGRESS : S_NONE)
    fi
  :: else -> skip
  fi
}

inline step(x) {
  if
  :: kind[x] == ENQ -> step_enqueue(x)
  :: kind[x] == CLOSE -> step_close(x)
  :: kind[x] == DEQ -> step_dequeue(x)
  fi
}

/* run_side(q, enq_side): step the head while heads complete */
inline run_side(sd) {
  p_ = 0;
  do
  :: llen[sd] == 0 -> break
  :: llen[sd] > 0 ->
    a_ = L[sd * NA];
    step(a_);
    if
    :: r_ == S_COMPLETE -> p_ = 1
    :: else -> p_ = p_ || (r_ == S_PROGRESS); break
    fi
  od
}

inline flush() {
  do
  :: run_side(0); prog_ = p_;
     run_side(1); prog_ = prog_ || p_;
     if
     :: !prog_ -> break
     :: else -> skip
     fi
  od
}

/* cancel_attempt_locked(q, a, why) */
inline cancel_attempt_locked(x, why) {
  if
  :: kind[x] == DEQ -> count = count + done[x]; done[x] = 0
  :: else -> skip
  fi;
  complete(x, why);
  flush()
}

/* run_attempt(q, a, cancel, NO_TIMEOUT), with attempt_init on the owner's stack before it (the
 * call is then counted in `inop` until it returns).  Every section that holds q->mu is one
 * d_step: nothing else may touch the queue meanwhile, and the only lock-free accesses (the
 * owner's reads of `state`) see the section's effects all at once or not at all, as in C where
 * `state` is published last with a release store.  Steps that touch only the owner's attempt
 * are merged into the neighbouring atomic sequences (they commute with every other thread). */
inline run_attempt(x, k, tot, ut, usecancel, counted) {
  atomic {
    kind[x] = k; total[x] = tot; upto[x] = ut; done[x] = 0; res[x] = R_OK;
    linked[x] = 0; sleeping[x] = 0; sig[x] = 0; state[x] = 0;
    inop = inop + (counted -> 0 : 1); /* single_op counts its call itself */
    if
    :: usecancel -> /* cancel_register */
      LOCK(cmu);
      if
      :: triggered -> res[x] = (k == DEQ -> R_DEQ_CANC : R_ENQ_CANC); state[x] = 1;
         UNLOCK(cmu); goto unregistered
      :: else -> reg[x] = 1; UNLOCK(cmu)
      fi
    :: else -> skip
    fi
  }
  d_step {
    LOCK(mu);
    if
    :: state[x] -> skip /* cancelled between the registration and this lock */
    :: else ->
      side_ = (kind[x] == DEQ -> dlen == 0 : elen == 0);
      if
      :: side_ ->
        step(x);
        if
        :: r_ != S_COMPLETE -> list_append(SIDE(x), x)
        :: else -> skip
        fi;
        if
        :: elen > 0 || dlen > 0 -> flush()
        :: else -> skip
        fi
      :: else ->
        list_append(SIDE(x), x);
        flush()
      fi
    fi;
    UNLOCK(mu)
  };
#ifdef BUG_NO_RECHECK
  if /* the spin: a lock-free read of `state` */
  :: state[x] -> goto finished_
  :: else -> skip
  fi;
  /* the decision to sleep was taken on the unlocked read above: lock, sleep once, no re-check */
  atomic { LOCK(mu); sleeping[x] = 1; sig[x] = 0; UNLOCK(mu) } /* cond_wait: release + wait */
  atomic { sig[x] -> sig[x] = 0; LOCK(mu); sleeping[x] = 0; UNLOCK(mu) };
#else
  /* The spin (lock-free reads of `state`: any number of them adds no behaviour, since state
   * only goes 0 -> 1, and returning on a read of 1 is the same as returning after the locked
   * re-check), then lock, re-check, sleep. */
  atomic {
    LOCK(mu);
    if
    :: state[x] -> UNLOCK(mu); goto finished_
    :: else -> sleeping[x] = 1; sig[x] = 0; UNLOCK(mu) /* pthread_cond_wait: release + wait */
    fi
  }
  do
  :: atomic {
       sig[x] -> sig[x] = 0; /* woken: retake mu, re-check state */
       LOCK(mu);
       if
       :: state[x] -> sleeping[x] = 0; UNLOCK(mu); break
       :: else -> UNLOCK(mu) /* wait again */
       fi
     }
  od;
#endif
finished_:
  atomic {
    if
    :: usecancel -> LOCK(cmu); reg[x] = 0; UNLOCK(cmu) /* cancel_unregister */
    :: else -> skip
    fi;
unregistered:
    assert(!linked[x] && state[x]); inop--
  }
}

/* The single-element fast path (enqueue_rows / dequeue_rows, every op of an all-dense queue that
 * moves one element): a lock-free read of the cancel token (triggered: the ordinary attempt,
 * which the registration then cancels), then one hold of mu that completes the call at once
 * when it can (fast_enqueue_locked: no enqueue pending, not closed, room; fast_dequeue_locked:
 * no dequeue pending, an element) without an attempt or a cancel registration, flushing the
 * other side.  An enqueue that found the queue full with no enqueue pending (no deadline) then
 * waits for room outside the lock (wait_for_room, bounded: one interleaving point here, since
 * what happens meanwhile is up to the other threads), retakes mu and tries once more unless its
 * token was triggered meanwhile.  Otherwise the ordinary attempt.  In C a no-token enqueue keeps
 * mu from that second try into its attempt (run_locked); here mu is released in between, which
 * only adds interleavings.  The call counts in `inop` from its first step to its return. */
inline fast_try(x, k) {
  if
  :: k == ENQ && elen == 0 && !closed && resv == 0 && count < CAP ->
     count++; inserted++; f_ = 1;
#ifndef BUG_FAST_NO_FLUSH
     if
     :: dlen > 0 -> flush()
     :: else -> skip
     fi
#endif
  :: k == DEQ && dlen == 0 && count > 0 ->
     count--; f_ = 1;
     if
     :: elen > 0 -> flush()
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* Sets f_ when the call completed on the fast path; otherwise the caller runs the ordinary attempt
 * (run_attempt with counted = 1: the call is already in `inop`).  (run_attempt is expanded once
 * per proctype: Spin does not allow its labels twice.) */
inline fast_path(x, k, usecancel) {
  /* The lock-free read of the token and the first hold of mu are one step: a trigger between
   * them commutes with the fast path (which registers nothing), so no behaviour is lost. */
  d_step {
    inop++;
    if
    :: usecancel && triggered -> skip
    :: else ->
       LOCK(mu);
       fast_try(x, k);
       if
       :: !f_ && k == ENQ && elen == 0 && !closed && count >= CAP -> w_ = 1
       :: else -> skip
       fi;
       UNLOCK(mu)
    fi;
    if
    :: f_ -> kind[x] = k; total[x] = 1; upto[x] = 0; res[x] = R_OK; inop--
    :: else -> skip
    fi
  };
  if
  :: w_ -> /* wait_for_room (mu released, other threads run), then the second try */
     d_step {
       w_ = 0;
       LOCK(mu);
       if
       :: !(usecancel && triggered) -> fast_try(x, k)
       :: else -> skip
       fi;
       UNLOCK(mu);
       if
       :: f_ -> kind[x] = k; total[x] = 1; upto[x] = 0; res[x] = R_OK; inop--
       :: else -> skip
       fi
     }
  :: else -> skip
  fi
}

/* tfq__queue_reserve(q, 2, 1) then, after the writer's interleaving point, tfq__queue_commit of
 * every row reserved: sets k_ to the rows that went in this way (0: no reservation was to be had,
 * and nothing happened).  The call counts in `inop` while the reservation is open. */
inline reserve_rows() {
  d_step {
    LOCK(mu);
    k_ = 0;
    if
    :: !closed && elen == 0 && resv == 0 && count < CAP ->
       k_ = (CAP - count < 2 -> CAP - count : 2); resv = k_; inop++
    :: else -> skip
    fi;
    UNLOCK(mu)
  };
  if
  :: k_ > 0 -> /* the rows are written outside the lock; then the commit */
     d_step {
       LOCK(mu);
       assert(resv == k_ && !closed && count + resv <= CAP);
       count = count + resv; inserted = inserted + resv; resv = 0;
       if
       :: rwait -> rsig = 1
       :: else -> skip
       fi;
#ifndef BUG_COMMIT_NO_FLUSH
       if
       :: elen > 0 || dlen > 0 -> flush()
       :: else -> skip
       fi;
#endif
       UNLOCK(mu);
       inop--
     }
  :: else -> skip
  fi
}

proctype producer(byte me; bool usecancel) {
  LOCALS;
  byte n_ = 0, k_ = 0;
  /* producer 0: enqueue_many(2), then enqueues; producer 1: enqueues; stop at an error */
  do
  :: n_ < NOPS ->
     k_ = 0;
     if
     :: me == P0 && n_ == 0 -> /* enqueue_many(2): rows written in place, or an attempt */
        if
        :: reserve_rows()
        :: skip
        fi
     :: else -> fast_path(me, ENQ, usecancel)
     fi;
     if
     :: me == P0 && n_ == 0 && k_ == 2 -> res[me] = R_OK /* all of it written in place */
     :: !f_ && !(me == P0 && n_ == 0 && k_ == 2) ->
        run_attempt(me, ENQ, (me == P0 && n_ == 0 -> 2 - k_ : 1), 0, usecancel,
                    !(me == P0 && n_ == 0))
     :: f_ -> f_ = 0
     fi;
     if
     :: res[me] == R_OK -> n_++
     :: else -> break
     fi
  :: else -> break
  od;
}

/* consumer 0 drains until a dequeue fails (OUT_OF_RANGE after the close); consumer 1 makes
 * NOPS calls, stopping at a failure */
proctype consumer(byte me; bool usecancel) {
  LOCALS;
  byte n_ = 0;
  do
  :: me == C0 || n_ < NOPS ->
     if
     :: me == C0 -> skip /* dequeue_up_to(2): always an attempt */
     :: else -> fast_path(me, DEQ, usecancel)
     fi;
     if
     :: !f_ -> run_attempt(me, DEQ, (me == C0 -> 2 : 1), (me == C0), usecancel, (me != C0))
     :: else -> f_ = 0
     fi;
     if
     :: res[me] == R_OK -> progress_took: delivered = delivered + total[me]; n_++
     :: else -> break
     fi
  :: else -> break
  od;
}

proctype closer() {
  LOCALS;
  if
  :: /* tfq_queue_close(q, 0): an attempt on E, behind pending enqueues */
     run_attempt(CL, CLOSE, 0, 0, 0, 0)
  :: /* tfq_queue_close(q, 1): at once, but after an open reservation's commit (resv_cv) */
     inop++;
     do
     :: d_step {
          LOCK(mu);
          if
          :: resv == 0 ->
             closed = 1;
             do
             :: elen > 0 -> a_ = L[0]; complete(a_, R_ENQ_CANC)
             :: else -> break
             od;
#ifndef BUG_CLOSE_NO_FLUSH
             flush();
#endif
             rwait = 0
          :: else -> rwait = 1; rsig = 0 /* pthread_cond_wait: release + wait */
          fi;
          UNLOCK(mu)
        };
        if
        :: !rwait -> break
        :: else -> atomic { rsig -> rsig = 0 } /* woken: retake mu, re-check resv */
        fi
     od;
     inop--
  fi
}

proctype canceller() {
  LOCALS;
  if
  :: /* tfq_cancel_trigger: cmu held while each registered, pending attempt is cancelled under
     * q->mu (only P1 and C1 ever register) */
     atomic {
       LOCK(cmu); triggered = 1;
       LOCK(mu);
       if
       :: reg[P1] && !state[P1] -> cancel_attempt_locked(P1, R_ENQ_CANC)
       :: else -> skip
       fi;
       UNLOCK(mu);
       LOCK(mu);
       if
       :: reg[C1] && !state[C1] -> cancel_attempt_locked(C1, R_DEQ_CANC)
       :: else -> skip
       fi;
       UNLOCK(mu);
       UNLOCK(cmu)
     }
  :: skip /* never triggered */
  fi;
}

/* The invariant every hold of mu restores (each one ends with flush): outside them no dequeue
 * waits while an element is stored, and no enqueue waits while there is room.  A violation is a
 * waiter left behind until some later call happens to flush (a lost wake-up the close would
 * hide from the end-state checks).  The guard is enabled only in a violating state. */
active proctype served() {
end_served:
  do
  :: atomic {
       mu == 0 && ((dlen > 0 && count > 0) || (elen > 0 && resv == 0 && count < CAP)) ->
       assert(false)
     }
  od
}

init {
  atomic {
    run producer(P0, 0);
    run producer(P1, 1);
    run consumer(C0, 0);
    run consumer(C1, 1);
    run closer();
    run canceller()
  }
  /* every thread ended: nothing is left pending, no element was lost or invented */
  _nr_pr == 2; /* init and served */
  assert(elen == 0 && dlen == 0 && inop == 0 && resv == 0);
  assert(closed);
  assert(inserted == delivered + count);
  assert(count == 0) /* consumer 0 never cancels: it drains until OUT_OF_RANGE */
}

/* Once the queue is closed, every operation in progress eventually returns. */
ltl closed_then_all_return { [] (closed -> <> (inop == 0)) }
