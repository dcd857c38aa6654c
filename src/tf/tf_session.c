/* What every client of the bridge shares: the hand-written protocol buffer encoder (ServerDef,
 * ConfigProto, RunOptions), the in-process gRPC server, and the session helpers (a session with
 * device filters and a timeout; TF_SessionRun with RunOptions.timeout_in_ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_internal.h"

/* ---- protocol buffer encoding ---------------------------------------------------------------- */

static void pb_reserve(tfq__pb *b, size_t more) {
  if (b->oom || b->n + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + more) cap *= 2;
  unsigned char *p = tfq_realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return;
  }
  b->p = p;
  b->cap = cap;
}

void tfq__pb_varint(tfq__pb *b, uint64_t v) {
  pb_reserve(b, 10);
  if (b->oom) return;
  do {
    unsigned char byte = v & 0x7f;
    v >>= 7;
    b->p[b->n++] = byte | (v ? 0x80 : 0);
  } while (v);
}

void tfq__pb_uint(tfq__pb *b, int field, uint64_t v) {
  tfq__pb_varint(b, (uint64_t)field << 3);
  tfq__pb_varint(b, v);
}

void tfq__pb_bytes(tfq__pb *b, int field, const void *data, size_t len) {
  tfq__pb_varint(b, (uint64_t)field << 3 | 2);
  tfq__pb_varint(b, len);
  pb_reserve(b, len);
  if (b->oom) return;
  if (len) memcpy(b->p + b->n, data, len);
  b->n += len;
}

void tfq__pb_free(tfq__pb *b) {
  tfq_free(b->p);
  memset(b, 0, sizeof *b);
}

static tfq_code tf_error(TF_Status *s, tfq_status *st) { return tfq_tf_status_copy(s, st); }

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tfq_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- server ------------------------------------------------------------------------------- */

struct tfq_tf_server {
  TF_Server *server;
  char *target;
};

/* Encodes ServerDef{cluster, job_name, task_index, protocol "grpc"} from "job=a,b;job2=c". */
static tfq_code encode_server_def(const char *cluster, const char *job, int task, tfq__pb *out,
                                  tfq_status *st) {
  tfq__pb cl = {0};
  int found = 0;
  const char *p = cluster;
  while (*p) {
    const char *end = strchr(p, ';');
    if (!end) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (!eq || eq == p) {
      tfq__pb_free(&cl);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                            "Bad cluster '%s': expected job=host:port,...;job=...", cluster);
    }
    tfq__pb jd = {0};
    tfq__pb_bytes(&jd, 1, p, (size_t)(eq - p));
    int is_job = strlen(job) == (size_t)(eq - p) && memcmp(job, p, (size_t)(eq - p)) == 0;
    const char *a = eq + 1;
    int idx = 0;
    while (a < end) {
      const char *comma = memchr(a, ',', (size_t)(end - a));
      if (!comma) comma = end;
      tfq__pb entry = {0};
      tfq__pb_uint(&entry, 1, (uint64_t)idx);
      tfq__pb_bytes(&entry, 2, a, (size_t)(comma - a));
      tfq__pb_bytes(&jd, 2, entry.p, entry.n);
      cl.oom |= entry.oom;
      tfq__pb_free(&entry);
      if (is_job && idx == task) found = 1;
      idx++;
      a = comma + (comma < end);
    }
    tfq__pb_bytes(&cl, 1, jd.p, jd.n);
    cl.oom |= jd.oom;
    tfq__pb_free(&jd);
    p = *end ? end + 1 : end;
  }
  if (!found) {
    tfq__pb_free(&cl);
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Task %s:%d is not in cluster '%s'", job, task,
                          cluster);
  }
  tfq__pb_bytes(out, 1, cl.p, cl.n);
  out->oom |= cl.oom;
  tfq__pb_free(&cl);
  tfq__pb_bytes(out, 2, job, strlen(job));
  tfq__pb_uint(out, 3, (uint64_t)task);
  tfq__pb_bytes(out, 5, "grpc", 4);
  if (out->oom) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  return TFQ_OK;
}

tfq_code tfq_tf_server_new(const char *cluster, const char *job, int task, tfq_tf_server **out,
                           tfq_status *st) {
  *out = NULL;
  tfq__pb def = {0};
  tfq_code c = encode_server_def(cluster, job, task, &def, st);
  if (c) {
    tfq__pb_free(&def);
    return c;
  }
  TF_Status *s = TF_NewStatus();
  TF_Server *srv = TF_NewServer(def.p, def.n, s);
  tfq__pb_free(&def);
  if (srv) TF_ServerStart(srv, s);
  if (TF_GetCode(s) != TF_OK) {
    c = tf_error(s, st);
    TF_DeleteStatus(s);
    /* A server that failed to start can be deleted; a started one cannot (see free). */
    if (srv) TF_DeleteServer(srv);
    return c;
  }
  TF_DeleteStatus(s);
  tfq_tf_server *r = tfq_malloc(sizeof *r);
  char *target = dup_str(TF_ServerTarget(srv));
  if (!r || !target) {
    tfq_free(r);
    tfq_free(target);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory"); /* srv kept, see free */
  }
  r->server = srv;
  r->target = target;
  *out = r;
  return TFQ_OK;
}

const char *tfq_tf_server_target(const tfq_tf_server *s) { return s->target; }

void tfq_tf_server_free(tfq_tf_server *s) {
  if (!s) return;
  /* TF_ServerStop answers UNIMPLEMENTED ("Clean shutdown is not currently implemented") and the
   * server's destructor CHECKs that Stop succeeded: a started TF_Server is deliberately kept
   * until the process exits (TensorFlow's Python servers are never deleted either). */
  TF_Status *ts = TF_NewStatus();
  if (ts) {
    TF_ServerStop(s->server, ts);
    TF_DeleteStatus(ts);
  }
  tfq_free(s->target);
  tfq_free(s);
}

tfq_code tfq__tf_new_session(TF_Graph *graph, const char *target, const char *device,
                             char *const *filters, int nfilters, int64_t timeout_ms,
                             TF_Session **out, tfq_status *st) {
  *out = NULL;
  TF_SessionOptions *so = TF_NewSessionOptions();
  TF_Status *s = TF_NewStatus();
  if (!so || !s) {
    if (so) TF_DeleteSessionOptions(so);
    if (s) TF_DeleteStatus(s);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (target && *target) TF_SetTarget(so, target);
  /* ConfigProto: device_filters = 4, operation_timeout_in_ms = 11.  Never cluster_def (14): it
   * would isolate this session's resources from the other clients' (tf-c-api.md 4.2). */
  tfq__pb cfg = {0};
  for (int i = 0; i < nfilters; i++) tfq__pb_bytes(&cfg, 4, filters[i], strlen(filters[i]));
  if (nfilters == 0 && device && *device) tfq__pb_bytes(&cfg, 4, device, strlen(device));
  if (timeout_ms > 0) tfq__pb_uint(&cfg, 11, (uint64_t)timeout_ms);
  tfq_code c = TFQ_OK;
  if (cfg.oom) {
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    if (cfg.n) TF_SetConfig(so, cfg.p, cfg.n, s);
    if (TF_GetCode(s) == TF_OK) *out = TF_NewSession(graph, so, s);
    if (TF_GetCode(s) != TF_OK) c = tf_error(s, st);
  }
  tfq__pb_free(&cfg);
  TF_DeleteSessionOptions(so);
  TF_DeleteStatus(s);
  return c;
}

TF_Buffer *tfq__tf_run_options(int64_t timeout_ms, int *oom) {
  *oom = 0;
  if (timeout_ms <= 0) return NULL;
  tfq__pb ro = {0};
  tfq__pb_uint(&ro, 2, (uint64_t)timeout_ms); /* RunOptions.timeout_in_ms = 2 */
  TF_Buffer *b = ro.oom ? NULL : TF_NewBufferFromString(ro.p, ro.n);
  tfq__pb_free(&ro);
  if (!b) *oom = 1;
  return b;
}

tfq_code tfq__tf_run(TF_Session *session, const TF_Buffer *run_options, const TF_Output *in,
                     TF_Tensor *const *vals, int nin, const TF_Output *fetch, TF_Tensor **fetched,
                     int nfetch, const TF_Operation *const *targets, int ntargets, tfq_status *st) {
  TF_Status *s = TF_NewStatus();
  if (!s) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  TF_SessionRun(session, run_options, in, vals, nin, fetch, fetched, nfetch, targets, ntargets,
                NULL, s);
  tfq_code c = tf_error(s, st);
  TF_DeleteStatus(s);
  return c;
}
