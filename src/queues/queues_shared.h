/* The queue engine's private entries for another module: the read-decode op (src/coord/ops.c)
 * decodes a step's records straight into a FIFO's ring, instead of into column tensors whose rows
 * enqueue_many then copies into the ring (docs/performance.md, twelfth pass). */
#ifndef TFQ_QUEUES_SHARED_H
#define TFQ_QUEUES_SHARED_H

#include <tfq/queue.h>

#include "../core/base.h"

/* Reserves up to `want` (>= 1) rows of FIFOQueue or PaddingFIFOQueue `q` after its tail for one
 * writer, who fills them outside the lock and then calls tfq__queue_commit().  It never waits: it
 * returns the rows reserved, between `min` (>= 1) and `want`, or 0 (nothing reserved, the caller
 * takes the ordinary enqueue_many) unless all of these hold: every component is stored as rows
 * (a fully defined shape), the queue is open, no enqueue or close is pending, no other
 * reservation is open, and at least `min` rows fit now, under the capacity and before the ring's
 * wrap (the rows are contiguous).  bases[c] (one entry per component) is then where component c's
 * first reserved row goes: rows of the component's elements (strings: tfq__str views, one per
 * element of a row), row after row.
 *
 * Semantics: the reservation is an enqueue_many that arrived when it was made and completes at
 * the commit.  Until then the reserved rows are not part of the queue (size, dequeues), other
 * enqueues and closes (a cancelling close too) wait behind it in arrival order, and dequeues
 * and cancellations go on.  The writer must commit, without waiting on anything the queue's
 * other users may hold, on every path.
 * Thread-safety: any; one open reservation per queue (another caller gets 0). */
int64_t tfq__queue_reserve(tfq_queue *q, int64_t want, int64_t min, char **bases);

/* Ends the reservation: its first `rows` rows (0 to its size) join the queue at the tail, in
 * order, as one enqueue_many of them; the rest are dropped unread.  The string components' rows
 * keep `owner` (a tensor that keeps alive every byte their views point at; NULL only when no
 * component is of strings or rows is 0): one reference a row and string component, taken here.
 * The waiting enqueues, closes and dequeues are then served.
 * Thread-safety: the thread that reserved. */
void tfq__queue_commit(tfq_queue *q, int64_t rows, tfq_tensor *owner);

#endif
