/* tfq-feed's shared state (tools/ only): the TF queues it feeds and, with --acks, what was sent
 * and not yet acknowledged (feed_acks.c).  Thread-safety: as each field says. */
#ifndef TFQ_TOOLS_FEED_H
#define TFQ_TOOLS_FEED_H

#include <pthread.h>
#include <stdint.h>
#include <tfq/tf.h>

#include "cat_app.h"
#include "tfq_feed_args.h"

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
  tfq_tf_queue *closer; /* the close's handle, with a short limit (tfq-feed.c, close_targets) */
  tfq_code close_code;  /* the close's outcome */
  int gone;             /* no answer to the close nor to a probe: counts as closed */
  char close_msg[1300];
  tfq_tf_queue *probe;   /* --acks: the liveness probe's handle (2 s limit) */
  int fails, dead;       /* --acks: probe failures in a row; declared dead (under acks' mu) */
  int64_t rows, batches; /* --acks: pushed by its op (under acks' mu) */
} target;

typedef struct acks acks;

typedef struct feed {
  options *o;
  const feed_more *m;
  tfq_pipeline *p;
  tfq_spec *spec; /* the pipeline's columns */
  tfq_tf_dispatch *d;
  tfq_tf_cluster *cluster;
  target *t;
  size_t nt;
  double t0;
  acks *ak;        /* --acks */
  char ckpt[4200]; /* --checkpoint: this unit's state file */
  int64_t resumed; /* the batch the restored state starts at (0: no state) */
} feed;

/* "<label>: <message on one line>" in `st`, for errors of one task. */
tfq_code name_task(const target *t, tfq_code c, tfq_status *st);
/* TensorFlow's message on one line: a remote error comes as "From /job:...:\n<message>\n\t
 * [[{{node q}}]]"; the node annotations go, and line breaks and tabs become single spaces. */
void one_line(const char *in, char *out, size_t cap);
/* Exits with the usage status after a one-line message (no --help hint: the cause is named). */
_Noreturn void config_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Leaves at once after an error or a signal: threads may still be blocked in TensorFlow calls
 * (until --timeout-ms), so nothing is freed and no destructor runs. */
_Noreturn void leave(int rc);

/* ---- standard input (feed_stdin.c) -----------------------------------------------------------
 * A pipe cannot be read twice: the first lines (for inference) are kept in a memfd, the sample
 * file; a pump thread passes them and the rest on through a pipe that the pipeline reads as
 * /dev/fd/N (a regular file at its start is read as /dev/stdin).  A first line '#tfq unit=U
 * units=N [attempt=A]' (Spark's RDD.pipe) sets --unit, --feeders and --attempt; the last line
 * must then be the trailer '#tfq end rows=N', N the data lines before it, which the pump takes
 * out and checks. */

/* Adds standard input to the pipeline's files (and its sample file).  Exits on error. */
void setup_stdin(options *o, tfq_pipeline_options *po, tfq_status *st);
/* After a header: why the input is incomplete (no trailer, another count, data after it), or
 * NULL.  Meaningful once the pipeline has read the end of standard input. */
const char *stdin_trailer_error(void);

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
/* The send function of sender i (ctx: the feed): next batch (a re-send first) -> key ->
 * enqueue. */
tfq_code acks_step(void *ctx, size_t i, tfq_cancel *cancel, tfq_status *st);
/* --checkpoint: the dispatch's state function (ctx: the feed): keeps the state until every
 * batch before it is acknowledged; the poll then writes the newest such state to f->ckpt. */
tfq_code acks_state(void *ctx, int64_t batches, char *state, size_t len, tfq_status *st);
/* At the end of the unit, every batch acknowledged: the last kept state is written. */
void acks_checkpoint_final(feed *f);
/* LooperThread steps (ctx: the feed): the acknowledgement poll and the liveness probe. */
tfq_code acks_poll_step(void *ctx, tfq_cancel *cancel, tfq_status *st);
tfq_code acks_probe_step(void *ctx, tfq_cancel *cancel, tfq_status *st);
/* After the ops ended: a last poll; nonzero when everything sent was acknowledged. */
int acks_all_acked(feed *f, tfq_status *st);
/* The counts of --stats: sent, re-sent and acknowledged batches; duplicate records (acknowledged
 * more than once: re-sent batches a dead worker had trained, and what earlier attempts of this
 * unit had acknowledged), counted from the table. */
typedef struct acks_stats {
  int64_t sent, resent, acked, acked_rows, dup_records, prior_rows, dead_workers, checkpoints;
} acks_stats;
tfq_code acks_count(feed *f, int64_t unit, int64_t attempt, acks_stats *out, tfq_status *st);

#endif
