/* tfq-feed's shared state (tools/ only): the TF queues it feeds and, with --acks, what was sent
 * and not yet acknowledged (feed_acks.c).  Thread-safety: as each field says. */
#ifndef TFQ_TOOLS_FEED_H
#define TFQ_TOOLS_FEED_H

#include <pthread.h>
#include <stdint.h>
#include <tfq/tf.h>

#include "cat_app.h"

struct feed;

/* One TF queue of the cluster and the op feeding it. */
typedef struct target {
  struct feed *owner;
  char label[128]; /* "/job:worker/task:1 (127.0.0.1:2223)", for messages */
  char device[64];
  char name[256]; /* shared name */
  const char *session;
  int task; /* the worker's task index (--to workers) */
  tfq_tf_queue *q;
  tfq_tf_feeder *f;      /* without --acks */
  tfq_tf_queue *probe;   /* --acks: the liveness probe's handle (2 s limit) */
  int fails, dead;       /* --acks: probe failures in a row; declared dead (under acks' mu) */
  int64_t rows, batches; /* --acks: pushed by its op (under acks' mu) */
} target;

typedef struct acks acks;

typedef struct feed {
  app *a;
  tfq_tf_cluster *cluster;
  target *t;
  size_t nt;
  tfq_runner *runner;
  double t0;
  acks *ak; /* --acks */
} feed;

/* "<label>: <message on one line>" in `st`, for errors of one task. */
tfq_code name_task(const target *t, tfq_code c, tfq_status *st);

/* ---- acknowledgements and failover (feed_acks.c) ---------------------------------------------
 * Each batch element starts with an int64 scalar key (slot << 24 | seq; the slot is unique to a
 * unit and attempt).  A worker's training step inserts (key << 6 | worker task) -> rows into the
 * table NAME_acked on the ps, in the same run.  The feeder keeps every batch it sent until an
 * acknowledgement of it is seen (polled every 250 ms), probes each worker every 500 ms (QueueSize,
 * 2 s limit; three failures in a row: dead; not once the input is done, nothing waits to be
 * re-sent and the worker holds none of its unacknowledged batches), re-sends a dead worker's
 * unacknowledged batches to the live ones, and finishes only when everything it sent is
 * acknowledged. */

/* The key of batch `seq` of a unit's attempt, and the acknowledgement key of worker `task`. */
int64_t acks_slot(int64_t unit, int64_t attempt);
/* Sets up: the ack table on `device` of `session_target`, the probe handles. */
tfq_code acks_new(feed *f, const char *session_target, const char *device, int64_t slot,
                  tfq_status *st);
void acks_free(feed *f);
/* The op of target t (ctx: the target): next batch (a re-send first) -> key -> enqueue. */
tfq_code acks_step(void *ctx, tfq_cancel *cancel, tfq_status *st);
/* LooperThread steps (ctx: the feed): the acknowledgement poll and the liveness probe. */
tfq_code acks_poll_step(void *ctx, tfq_cancel *cancel, tfq_status *st);
tfq_code acks_probe_step(void *ctx, tfq_cancel *cancel, tfq_status *st);
/* After the ops ended: a last poll; nonzero when everything sent was acknowledged. */
int acks_all_acked(feed *f, tfq_status *st);
/* The counts of --stats: sent, re-sent and acknowledged batches; duplicate records (acknowledged
 * more than once: re-sent batches a dead worker had trained, and what earlier attempts of this
 * unit had acknowledged), counted from the table. */
typedef struct acks_stats {
  int64_t sent, resent, acked, acked_rows, dup_records, prior_rows, dead_workers;
} acks_stats;
tfq_code acks_count(feed *f, int64_t unit, int64_t attempt, acks_stats *out, tfq_status *st);

#endif
