/* conformance_coord: the tfq half of the coordination-layer families of the conformance harness
 * (coord_conformance.py): Coordinator scripts, QueueRunner scenarios, batchers and producers.
 * conformance_coord.c has main(), the Coordinator and the QueueRunner; conformance_batch.c the
 * batchers and the producers.  Public tfq headers only. */
#ifndef CONFORMANCE_COORD_H
#define CONFORMANCE_COORD_H

#include <stdint.h>
#include <stdio.h>
#include <tfq/coord.h>
#include <tfq/queue.h>

/* Sleeps `ms` milliseconds. */
void sleep_ms(int64_t ms);
/* Polls until tfq_queue_size(q) >= n or `ms` milliseconds passed. */
void wait_size(tfq_queue *q, int64_t n, int64_t ms);
/* Polls until the queue is closed or `ms` milliseconds passed; returns whether it is closed. */
int wait_closed(tfq_queue *q, int64_t ms);
/* A spec from components "<dtype>/<dims>;..." (dims as conformance_io.h). */
tfq_spec *parse_spec(const char *comps_tok, tfq_status *st);
/* A queue of components `comps_tok`, named (or, with `shared`, shared-named) `name`. */
tfq_queue *make_queue(tfq_queue_kind kind, const char *comps_tok, int64_t cap, const char *name,
                      int shared, tfq_status *st);
/* Prints "<tag> <id> " then the result of a dequeue-like call: "OK <tensors>" or the error. */
void print_result(const char *tag, const char *id, tfq_code c, const tfq_tuple *out,
                  tfq_status *st);

/* conformance_batch.c: "batcher ..." (reads its source lines from `in`) and "producer ...". */
void batcher_cmd(FILE *in, char **tok, int n);
void producer_cmd(char **tok, int n);

#endif
