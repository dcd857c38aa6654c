/* The read-decode op's state (ops.c), shared with its path that decodes a step straight into a
 * FIFO's ring (ops_ring.c). */
#ifndef TFQ_OPS_INTERNAL_H
#define TFQ_OPS_INTERNAL_H

#include <stdatomic.h>
#include <tfq/ops.h>

#include "../core/base.h"
#include "../csv/csv_shared.h"

typedef struct mapping {
  size_t *cols;
  size_t n;
  int stack;
  int direct; /* lines_step decodes the columns straight into the stacked component (plan_direct) */
  _Atomic(tfq_tensor *) spare; /* the last stacked component, refilled (strings: parked until
                                * the queue lets go of its rows) */
} mapping;

struct tfq_read_decode_op {
  tfq_reader *reader;
  tfq_queue *work, *target;
  const tfq_csv_options *csv; /* NULL: the records themselves are the component */
  int64_t batch;
  int keys;
  int64_t shard_index, shard_count; /* keep the records of shard index of count */
  mapping *map;
  size_t nmap, cap, ndirect; /* ndirect: mappings with direct set */
  size_t *owner;             /* plan_direct's first mapping of each column, or NULL */
  _Atomic int64_t records;
  _Atomic(tfq_tensor *) lines; /* lines_step's string tensor, kept for the next step */
  _Atomic(tfq_tuple *) cols;   /* lines_step's decoded columns, refilled by the next step */
  _Atomic(tfq_tuple *) park;   /* string columns the queue held rows of (park_strings), or NULL */
  _Atomic size_t line_bytes;   /* span_step's bytes a line, rounded up (0: not known yet) */
  _Atomic int64_t span_steps;  /* the steps span_step took */
  _Atomic int64_t span_lines;  /* span_step's lines a step: batch, fewer for long lines */
  size_t park_next;            /* the place park_strings fills next when all are taken */
  int ring;                    /* ops_ring.c: -1 not known yet, 0 the target's ring cannot be
                                * written in place, 1 it can */
  _Atomic(tfq_tensor *) owners[8]; /* ops_ring.c: string owners of the steps in the ring */
  _Atomic size_t owner_next;       /* ops_ring.c: the place a new owner takes when all are full */
  _Atomic int64_t ring_steps;      /* the steps span_step decoded into the target's ring */
};

/* ---- ops_ring.c: a step decoded straight into a FIFO's ring ---- */

/* Sets op->ring: 1 when the target is a FIFOQueue or PaddingFIFOQueue whose components are the
 * op's columns as they are or stacked (same dtypes, shapes [] or [k], each column once), so that
 * tfq__op_ring_begin may reserve its rows; 0 otherwise.  Called whenever the mapping changes. */
void tfq__op_ring_plan(tfq_read_decode_op *op);
/* For a step of up to `want` text lines (no keys, no sharding): reserves rows of the target's
 * ring (tfq__queue_reserve) and points outs[] (one per column) at them, with *owner the tensor
 * that takes the step's string bytes and keeps its read buffer (NULL without string columns).
 * Returns the rows reserved, or 0 (nothing reserved: the ordinary path).  Every nonzero return
 * must be followed by tfq__op_ring_end(). */
int64_t tfq__op_ring_begin(tfq_read_decode_op *op, int64_t want, tfq__csv_out *outs,
                           tfq_tensor **owner);
/* Commits the first `rows` rows decoded (0: none, the step goes the ordinary way) and parks the
 * owner for a later step. */
void tfq__op_ring_end(tfq_read_decode_op *op, int64_t rows, tfq_tensor *owner);

#endif
