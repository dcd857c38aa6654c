/* The C side of bench_feed.py: pushes --records rows of (id int64, x float[D], y float) into a
 * TensorFlow FIFOQueue by shared name on a cluster's ps and prints one line
 *   "tfq_feeder mode=M threads=T batch=B records=N seconds=S rate=R self_cpu=C ps_cpu=P"
 * (self_cpu: this process's CPU seconds inside the timed window, every thread; ps_cpu: the CPU
 * seconds of process --ps-pid in the same window, from /proc, or -1).
 *
 * Modes:
 *   feeder  the tfq feeder, the way the distributed example does it: every row already in a tfq
 *           queue of ready batches -> T QueueRunner threads running tfq_tf_feeder_step ->
 *           QueueEnqueueManyV2 (libtfq_tf, feed mode B).  The figure compared with Python.
 *   raw     the ceiling of any feeder: the TF C API alone, no tfq; T threads call TF_SessionRun
 *           of QueueEnqueueManyV2 in a tight loop on TF_Tensors allocated and filled once.
 *   sink    as raw, but the run's target is a NoOp after a Size op per fed tensor on the same
 *           device: the cluster's cost of a run with the same feeds minus the queue kernel.
 * --target local runs raw/sink/feeder on an in-process direct session (no gRPC, no ps): the
 * queue kernel's own ceiling on this machine.
 *
 *   bench_feed --target grpc://127.0.0.1:PORT [--device /job:ps/task:0] [--shared-name q]
 *              [--records 200000] [--batch 1000] [--dim 4] [--threads 2] [--mode feeder]
 *              [--ps-pid PID]
 *   bench_feed --host-port PORT ...   hosts /job:ps/task:0 itself (TF_NewServer, topology B of
 *                                     docs/tf-bridge.md) and feeds its own in-process queue */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <tfq/coord.h>
#include <tfq/queue.h>
#include <tfq/tf.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double self_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

/* utime + stime of a process (every thread), in seconds; -1 when unreadable. */
static double proc_cpu(int pid) {
  if (pid <= 0) return -1;
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  unsigned long long ut, st;
  /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int die(const char *what, tfq_status *st) {
  fprintf(stderr, "bench_feed: %s: %s\n", what, tfq_status_message(st));
  return 1;
}

static int tf_die(const char *what, TF_Status *s) {
  fprintf(stderr, "bench_feed: %s: %s\n", what, TF_Message(s));
  return 1;
}

static void fill_rows(int64_t off, int64_t n, int dim, int64_t *pid, float *px, float *py) {
  for (int64_t i = 0; i < n; i++) {
    pid[i] = off + i;
    for (int j = 0; j < dim; j++) px[i * dim + j] = (float)((off + i + j) % 1000) / 500.0f - 1;
    py[i] = px[i * dim];
  }
}

/* ---- raw / sink: the TF C API alone ------------------------------------------------------- */

typedef struct raw_ctx {
  TF_Session *sess;
  TF_Output in[3];
  TF_Operation *target;
  TF_Tensor *full[3], *tail[3]; /* a full batch and the last partial one, made once */
  int64_t records, batch, nbatches;
  atomic_llong next;
  atomic_int failed;
} raw_ctx;

static void *raw_main(void *arg) {
  raw_ctx *r = arg;
  TF_Status *s = TF_NewStatus();
  const TF_Operation *targets[1] = {r->target};
  for (;;) {
    long long b = atomic_fetch_add(&r->next, 1);
    if (b >= r->nbatches || atomic_load(&r->failed)) break;
    int last = b == r->nbatches - 1 && r->records % r->batch;
    TF_SessionRun(r->sess, NULL, r->in, last ? r->tail : r->full, 3, NULL, NULL, 0, targets, 1,
                  NULL, s);
    if (TF_GetCode(s) != TF_OK) {
      fprintf(stderr, "bench_feed: run: %s\n", TF_Message(s));
      atomic_store(&r->failed, 1);
      break;
    }
  }
  TF_DeleteStatus(s);
  return NULL;
}

static TF_Tensor *new_tensor(TF_DataType dt, const int64_t *dims, int rank, size_t elt) {
  size_t n = elt;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  return TF_AllocateTensor(dt, dims, rank, n);
}

static TF_Operation *finish(TF_OperationDescription *d, TF_Status *s) {
  TF_Operation *op = TF_FinishOperation(d, s);
  if (TF_GetCode(s) != TF_OK) {
    tf_die("graph", s);
    exit(1);
  }
  return op;
}

/* Builds FIFOQueueV2 (shared name) + 3 placeholders + QueueEnqueueManyV2 (raw), or the same
 * placeholders + Size + NoOp (sink), opens a session, runs the timed loop on `threads` threads.
 * *size_out: the queue's size after the loop (raw), or -1. */
static int run_raw(const char *target, const char *device, const char *name, int sink,
                   int64_t records, int64_t batch, int dim, int threads, int64_t *size_out,
                   double *seconds, double *cpu, double *ps_cpu, int ps_pid) {
  TF_Status *s = TF_NewStatus();
  TF_Graph *g = TF_NewGraph();
  raw_ctx r;
  memset(&r, 0, sizeof r);
  TF_DataType types[3] = {TF_INT64, TF_FLOAT, TF_FLOAT};
  int64_t xdim[1] = {dim};
  const int64_t *shapes[3] = {NULL, xdim, NULL};
  int ranks[3] = {0, 1, 0};
  TF_OperationDescription *d;
  TF_Output handle = {NULL, 0}, sz = {NULL, 0};
  if (!sink) {
    d = TF_NewOperation(g, "FIFOQueueV2", "q");
    if (*device) TF_SetDevice(d, device);
    TF_SetAttrTypeList(d, "component_types", types, 3);
    TF_SetAttrShapeList(d, "shapes", shapes, ranks, 3);
    TF_SetAttrInt(d, "capacity", -1);
    TF_SetAttrString(d, "shared_name", name, strlen(name));
    handle.oper = finish(d, s);
  }
  for (int i = 0; i < 3; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "ph%d", i);
    d = TF_NewOperation(g, "Placeholder", nm);
    if (*device) TF_SetDevice(d, device);
    TF_SetAttrType(d, "dtype", types[i]);
    r.in[i].oper = finish(d, s);
  }
  if (!sink) {
    d = TF_NewOperation(g, "QueueEnqueueManyV2", "enq");
    if (*device) TF_SetDevice(d, device);
    TF_AddInput(d, handle);
    TF_AddInputList(d, r.in, 3);
    r.target = finish(d, s);
    d = TF_NewOperation(g, "QueueSizeV2", "size");
    if (*device) TF_SetDevice(d, device);
    TF_AddInput(d, handle);
    sz.oper = finish(d, s);
  } else {
    TF_Operation *sizes[3];
    for (int i = 0; i < 3; i++) {
      char nm[16];
      snprintf(nm, sizeof nm, "size%d", i);
      d = TF_NewOperation(g, "Size", nm);
      if (*device) TF_SetDevice(d, device);
      TF_AddInput(d, r.in[i]);
      sizes[i] = finish(d, s);
    }
    d = TF_NewOperation(g, "NoOp", "sink");
    if (*device) TF_SetDevice(d, device);
    for (int i = 0; i < 3; i++) TF_AddControlInput(d, sizes[i]);
    r.target = finish(d, s);
  }
  TF_SessionOptions *so = TF_NewSessionOptions();
  if (*target) TF_SetTarget(so, target);
  if (*device) { /* ConfigProto.device_filters = [device] (field 4) */
    unsigned char cfg[256];
    size_t len = strlen(device);
    if (len > 200) return 2;
    cfg[0] = 4 << 3 | 2;
    cfg[1] = (unsigned char)len;
    memcpy(cfg + 2, device, len);
    TF_SetConfig(so, cfg, len + 2, s);
    if (TF_GetCode(s) != TF_OK) return tf_die("config", s);
  }
  r.sess = TF_NewSession(g, so, s);
  TF_DeleteSessionOptions(so);
  if (TF_GetCode(s) != TF_OK) return tf_die("session", s);

  int64_t tail = records % batch;
  for (int k = 0; k < 2; k++) {
    int64_t n = k ? tail : batch;
    if (n == 0) continue;
    int64_t dn[1] = {n}, dx[2] = {n, dim};
    TF_Tensor **v = k ? r.tail : r.full;
    v[0] = new_tensor(TF_INT64, dn, 1, 8);
    v[1] = new_tensor(TF_FLOAT, dx, 2, 4);
    v[2] = new_tensor(TF_FLOAT, dn, 1, 4);
    fill_rows(k ? records - tail : 0, n, dim, TF_TensorData(v[0]), TF_TensorData(v[1]),
              TF_TensorData(v[2]));
  }
  r.records = records;
  r.batch = batch;
  r.nbatches = (records + batch - 1) / batch;
  atomic_init(&r.next, 0);
  atomic_init(&r.failed, 0);
  /* Warm-up: one run with an empty batch (builds and registers the graph on the device). */
  {
    int64_t z[1] = {0}, zx[2] = {0, dim};
    TF_Tensor *e[3] = {new_tensor(TF_INT64, z, 1, 8), new_tensor(TF_FLOAT, zx, 2, 4),
                       new_tensor(TF_FLOAT, z, 1, 4)};
    const TF_Operation *t[1] = {r.target};
    TF_SessionRun(r.sess, NULL, r.in, e, 3, NULL, NULL, 0, t, 1, NULL, s);
    for (int i = 0; i < 3; i++) TF_DeleteTensor(e[i]);
    if (TF_GetCode(s) != TF_OK) return tf_die("warm-up", s);
  }
  pthread_t th[64];
  if (threads > 64) threads = 64;
  double c0 = self_cpu(), p0 = proc_cpu(ps_pid), t0 = now();
  for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, raw_main, &r);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  *seconds = now() - t0;
  *cpu = self_cpu() - c0;
  double p1 = proc_cpu(ps_pid);
  *ps_cpu = p0 < 0 || p1 < 0 ? -1 : p1 - p0;
  if (atomic_load(&r.failed)) return 1;
  *size_out = -1;
  if (sz.oper) {
    TF_Tensor *out = NULL;
    TF_SessionRun(r.sess, NULL, NULL, NULL, 0, &sz, &out, 1, NULL, 0, NULL, s);
    if (TF_GetCode(s) != TF_OK) return tf_die("size", s);
    *size_out = *(const int32_t *)TF_TensorData(out);
    TF_DeleteTensor(out);
  }
  for (int i = 0; i < 3; i++) {
    if (r.full[i]) TF_DeleteTensor(r.full[i]);
    if (r.tail[i]) TF_DeleteTensor(r.tail[i]);
  }
  TF_CloseSession(r.sess, s);
  TF_DeleteSession(r.sess, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
  return 0;
}

/* ---- feeder: the tfq pipeline -------------------------------------------------------------- */

static int run_feeder(const char *target, const char *device, const char *name, int64_t records,
                      int64_t batch, int dim, int threads, int64_t *size_out, double *seconds,
                      double *cpu, double *ps_cpu, int ps_pid) {
  tfq_status *st = tfq_status_new();
  tfq_spec *spec;
  int64_t d1[1] = {dim};
  if (tfq_spec_new(&spec, st) || tfq_spec_add(spec, TFQ_INT64, NULL, 0, "id", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, d1, 1, "x", st) ||
      tfq_spec_add(spec, TFQ_FLOAT, NULL, 0, "y", st))
    return die("spec", st);

  /* The source: every row already in a tfq queue (so the figure is the push rate). */
  tfq_queue *src;
  if (tfq_fifo_queue_new(spec, -1, "bench_src", &src, st)) return die("queue", st);
  for (int64_t off = 0; off < records; off += batch) {
    int64_t n = records - off < batch ? records - off : batch;
    int64_t dn[1] = {n}, dx[2] = {n, dim};
    tfq_tuple *b;
    tfq_tensor *id, *x, *y;
    if (tfq_tuple_new(3, &b, st) || tfq_tensor_new(TFQ_INT64, dn, 1, &id, st) ||
        tfq_tensor_new(TFQ_FLOAT, dx, 2, &x, st) || tfq_tensor_new(TFQ_FLOAT, dn, 1, &y, st))
      return die("tensors", st);
    fill_rows(off, n, dim, tfq_tensor_data(id), tfq_tensor_data(x), tfq_tensor_data(y));
    tfq_tuple_set_take(b, 0, id);
    tfq_tuple_set_take(b, 1, x);
    tfq_tuple_set_take(b, 2, y);
    if (tfq_queue_enqueue_many(src, b, NULL, TFQ_NO_TIMEOUT, st)) return die("fill", st);
    tfq_tuple_free(b);
  }
  if (tfq_queue_close(src, 0, NULL, TFQ_NO_TIMEOUT, st)) return die("close", st);

  tfq_tf_queue_options *o;
  tfq_tf_queue *q;
  if (tfq_tf_queue_options_new(&o, st) || tfq_tf_queue_options_set_target(o, target, st) ||
      tfq_tf_queue_options_set_device(o, device, st) ||
      tfq_tf_queue_options_set_shared_name(o, name, st) || tfq_tf_queue_open(spec, o, &q, st))
    return die("open the TensorFlow queue", st);
  tfq_tf_queue_options_free(o);
  /* Warm-up: the first run builds the ps-side graph. */
  int64_t size;
  if (tfq_tf_queue_size(q, &size, st)) return die("size", st);

  tfq_coord *coord;
  tfq_runner *runner;
  tfq_tf_feeder *f;
  if (tfq_coord_new(&coord, st) || tfq_runner_new(src, &runner, st) ||
      tfq_tf_feeder_new(src, batch, q, threads, &f, st))
    return die("runner", st);
  for (int i = 0; i < threads; i++)
    if (tfq_runner_add_op(runner, tfq_tf_feeder_step, f, "push", st)) return die("op", st);
  int64_t lent0, ret0, lent1, ret1;
  tfq_tf_lent_counts(&lent0, &ret0);
  double c0 = self_cpu(), p0 = proc_cpu(ps_pid), t0 = now();
  if (tfq_runner_start(runner, coord, 0, st)) return die("start", st);
  tfq_code c = tfq_coord_join(coord, 10000000, 0, st);
  *seconds = now() - t0;
  *cpu = self_cpu() - c0;
  double p1 = proc_cpu(ps_pid);
  *ps_cpu = p0 < 0 || p1 < 0 ? -1 : p1 - p0;
  if (c) return die("join", st);
  if (tfq_tf_queue_size(q, &size, st)) return die("size", st);
  *size_out = size;
  tfq_tf_lent_counts(&lent1, &ret1);
  /* Every numeric component of every batch went to TensorFlow zero-copy and came back. */
  int64_t nb = (records + batch - 1) / batch;
  if (lent1 - lent0 != 3 * nb || ret1 - ret0 != 3 * nb) {
    fprintf(stderr, "bench_feed: %lld buffers lent and %lld returned, expected %lld\n",
            (long long)(lent1 - lent0), (long long)(ret1 - ret0), (long long)(3 * nb));
    return 1;
  }
  tfq_runner_free(runner);
  tfq_tf_feeder_free(f);
  tfq_tf_queue_free(q);
  tfq_coord_free(coord);
  tfq_queue_free(src);
  tfq_spec_free(spec);
  tfq_status_free(st);
  return 0;
}

int main(int argc, char **argv) {
  const char *target = NULL, *device = "/job:ps/task:0", *name = "bench_tfq", *mode = "feeder";
  int host_port = 0, ps_pid = 0;
  int64_t records = 200000, batch = 1000;
  int dim = 4, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--target"))
      target = argv[i + 1];
    else if (!strcmp(argv[i], "--device"))
      device = argv[i + 1];
    else if (!strcmp(argv[i], "--shared-name"))
      name = argv[i + 1];
    else if (!strcmp(argv[i], "--records"))
      records = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--batch"))
      batch = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--dim"))
      dim = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--host-port"))
      host_port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--mode"))
      mode = argv[i + 1];
    else if (!strcmp(argv[i], "--ps-pid"))
      ps_pid = atoi(argv[i + 1]);
  }
  tfq_status *st = tfq_status_new();
  tfq_tf_server *srv = NULL;
  if (host_port > 0) {
    char cluster[64];
    snprintf(cluster, sizeof cluster, "ps=127.0.0.1:%d", host_port);
    if (tfq_tf_server_new(cluster, "ps", 0, &srv, st)) return die("server", st);
    target = tfq_tf_server_target(srv);
    ps_pid = (int)getpid(); /* the ps is this process: ps_cpu == self_cpu */
  }
  int raw = !strcmp(mode, "raw"), sink = !strcmp(mode, "sink");
  if (!target || batch < 1 || records < 1 || dim < 1 || threads < 1 ||
      !(raw || sink || !strcmp(mode, "feeder"))) {
    fprintf(stderr, "usage: bench_feed --target grpc://HOST:PORT|local [options]\n");
    return 2;
  }
  if (!strcmp(target, "local")) { /* in-process direct session: no ps, no device */
    target = "";
    device = "";
  }
  int64_t size = -1;
  double dt, cpu, ps_cpu;
  int rc = raw || sink ? run_raw(target, device, name, sink, records, batch, dim, threads, &size,
                                 &dt, &cpu, &ps_cpu, ps_pid)
                       : run_feeder(target, device, name, records, batch, dim, threads, &size, &dt,
                                    &cpu, &ps_cpu, ps_pid);
  if (rc) return rc;
  if (!sink && size != records) {
    fprintf(stderr, "bench_feed: TF queue holds %lld rows, expected %lld\n", (long long)size,
            (long long)records);
    return 1;
  }
  printf(
      "tfq_feeder mode=%s threads=%d batch=%lld records=%lld seconds=%.4f rate=%.0f "
      "self_cpu=%.3f ps_cpu=%.3f\n",
      mode, threads, (long long)batch, (long long)records, dt, (double)records / dt, cpu, ps_cpu);
  tfq_tf_server_free(srv);
  tfq_status_free(st);
  return 0;
}
