/* The done set of distributed feeding (distributed-feeding.md 4.4, with a hash table instead of
 * a variable): a MutableHashTableV2 int64 -> int64 by shared name on the ps; a mark is
 * LookupTableInsertV2 then, control-dependent, LookupTableSizeV2, in one RunStep. */
#include <stdlib.h>
#include <string.h>
#include <tfq/alloc.h>

#include "tf_internal.h"

struct tfq_tf_done {
  TF_Graph *graph;
  TF_Session *session;
  TF_Buffer *run_options;
  TF_Output key;         /* placeholder int64 [1] */
  TF_Operation *insert;  /* LookupTableInsertV2(table, key, [1]) */
  TF_Output size_after;  /* LookupTableSizeV2, control-dependent on insert */
  TF_Output size;        /* LookupTableSizeV2 alone */
  TF_Output export_keys; /* LookupTableExportV2 output 0 */
  TF_Output keys;        /* placeholder int64 [n] */
  TF_Output found;       /* LookupTableFindV2(table, keys, 0) */
};

static TF_Operation *finish_op(TF_OperationDescription *d, const char *device, TF_Status *s) {
  if (device && *device) TF_SetDevice(d, device);
  return TF_FinishOperation(d, s);
}

/* An int64 placeholder of shape dims[0..rank) (-1: unknown). */
static TF_Operation *placeholder(TF_Graph *g, const char *name, const int64_t *dims, int rank,
                                 const char *device, TF_Status *s) {
  TF_OperationDescription *od = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(od, "dtype", TF_INT64);
  TF_SetAttrShape(od, "shape", dims, rank);
  return finish_op(od, device, s);
}

/* A Const holding `t` (deleted here). */
static TF_Operation *const_op(TF_Graph *g, const char *name, TF_Tensor *t, const char *device,
                              TF_Status *s) {
  TF_OperationDescription *od = TF_NewOperation(g, "Const", name);
  TF_SetAttrType(od, "dtype", TF_TensorType(t));
  TF_SetAttrTensor(od, "value", t, s);
  TF_DeleteTensor(t);
  if (TF_GetCode(s) != TF_OK) return NULL;
  return finish_op(od, device, s);
}

/* An int64 Const of shape dims[0..rank) (at most one element) holding v.  NULL with `s` set;
 * *oom set when the tensor could not be allocated. */
static TF_Operation *const_i64(TF_Graph *g, const char *name, int64_t v, const int64_t *dims,
                               int rank, const char *device, TF_Status *s, int *oom) {
  TF_Tensor *t = TF_AllocateTensor(TF_INT64, dims, rank, sizeof(int64_t));
  if (!t) {
    *oom = 1;
    return NULL;
  }
  *(int64_t *)TF_TensorData(t) = v;
  return const_op(g, name, t, device, s);
}

static tfq_code build(tfq_tf_done *d, const char *device, const char *shared_name, tfq_status *st) {
  TF_Status *s = TF_NewStatus();
  if (!s) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  TF_Graph *g = d->graph;
  tfq_code c = TFQ_OK;
  TF_Operation *table = NULL, *key = NULL, *one = NULL, *size_after = NULL, *size = NULL,
               *export_op = NULL, *keys = NULL, *zero = NULL, *find = NULL;

  TF_OperationDescription *od = TF_NewOperation(g, "MutableHashTableV2", "tfq_done_table");
  TF_SetAttrString(od, "container", "", 0);
  TF_SetAttrString(od, "shared_name", shared_name, strlen(shared_name));
  TF_SetAttrBool(od, "use_node_name_sharing", 0);
  TF_SetAttrType(od, "key_dtype", TF_INT64);
  TF_SetAttrType(od, "value_dtype", TF_INT64);
  if (!(table = finish_op(od, device, s))) goto tf_fail;

  int64_t dim1[1] = {1}, dimn[1] = {-1};
  int oom = 0;
  if (!(key = placeholder(g, "tfq_done_unit", dim1, 1, device, s))) goto tf_fail;
  if (!(one = const_i64(g, "tfq_done_one", 1, dim1, 1, device, s, &oom))) goto fail;

  od = TF_NewOperation(g, "LookupTableInsertV2", "tfq_done_insert");
  TF_AddInput(od, (TF_Output){table, 0});
  TF_AddInput(od, (TF_Output){key, 0});
  TF_AddInput(od, (TF_Output){one, 0});
  if (!(d->insert = finish_op(od, device, s))) goto tf_fail;

  od = TF_NewOperation(g, "LookupTableSizeV2", "tfq_done_size_after");
  TF_AddInput(od, (TF_Output){table, 0});
  TF_AddControlInput(od, d->insert);
  if (!(size_after = finish_op(od, device, s))) goto tf_fail;

  od = TF_NewOperation(g, "LookupTableSizeV2", "tfq_done_size");
  TF_AddInput(od, (TF_Output){table, 0});
  if (!(size = finish_op(od, device, s))) goto tf_fail;

  od = TF_NewOperation(g, "LookupTableExportV2", "tfq_done_export");
  TF_AddInput(od, (TF_Output){table, 0});
  TF_SetAttrType(od, "Tkeys", TF_INT64);
  TF_SetAttrType(od, "Tvalues", TF_INT64);
  if (!(export_op = finish_op(od, device, s))) goto tf_fail;

  if (!(keys = placeholder(g, "tfq_done_keys", dimn, 1, device, s))) goto tf_fail;
  if (!(zero = const_i64(g, "tfq_done_zero", 0, NULL, 0, device, s, &oom))) goto fail;
  od = TF_NewOperation(g, "LookupTableFindV2", "tfq_done_find");
  TF_AddInput(od, (TF_Output){table, 0});
  TF_AddInput(od, (TF_Output){keys, 0});
  TF_AddInput(od, (TF_Output){zero, 0});
  if (!(find = finish_op(od, device, s))) goto tf_fail;

  d->keys = (TF_Output){keys, 0};
  d->found = (TF_Output){find, 0};
  d->key = (TF_Output){key, 0};
  d->size_after = (TF_Output){size_after, 0};
  d->size = (TF_Output){size, 0};
  d->export_keys = (TF_Output){export_op, 0};
  goto done;
fail:
  if (oom) {
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
tf_fail:
  c = tfq_tf_status_copy(s, st);
done:
  TF_DeleteStatus(s);
  return c;
}

tfq_code tfq_tf_done_open(const char *target, const char *device, const char *shared_name,
                          int64_t timeout_ms, tfq_tf_done **out, tfq_status *st) {
  *out = NULL;
  if (!shared_name || !*shared_name)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "The done set needs a shared name");
  tfq_tf_done *d = tfq_malloc(sizeof *d);
  if (!d) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  memset(d, 0, sizeof *d);
  int ro_oom = 0;
  d->graph = TF_NewGraph();
  d->run_options = tfq__tf_run_options(timeout_ms, &ro_oom);
  tfq_code c;
  if (!d->graph || ro_oom)
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  else if ((c = build(d, device, shared_name, st)) == TFQ_OK)
    c = tfq__tf_new_session(d->graph, target, device, NULL, 0, timeout_ms, &d->session, st);
  if (c) {
    tfq_tf_done_free(d);
    return c;
  }
  *out = d;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_tf_done_free(tfq_tf_done *d) {
  if (!d) return;
  if (d->session) {
    TF_Status *s = TF_NewStatus();
    if (s) {
      TF_CloseSession(d->session, s);
      TF_DeleteSession(d->session, s);
      TF_DeleteStatus(s);
    }
  }
  if (d->graph) TF_DeleteGraph(d->graph);
  if (d->run_options) TF_DeleteBuffer(d->run_options);
  tfq_free(d);
}

/* Runs one fetch (plus the optional target and key feed) and reads an int64 scalar. */
static tfq_code run_size(tfq_tf_done *d, TF_Output fetch, const int64_t *unit, int64_t *n,
                         tfq_status *st) {
  TF_Tensor *in = NULL, *r = NULL;
  if (unit) {
    int64_t dim1[1] = {1};
    in = TF_AllocateTensor(TF_INT64, dim1, 1, sizeof(int64_t));
    if (!in) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
    *(int64_t *)TF_TensorData(in) = *unit;
  }
  const TF_Operation *targets[1] = {d->insert};
  tfq_code c = tfq__tf_run(d->session, d->run_options, unit ? &d->key : NULL, unit ? &in : NULL,
                           unit ? 1 : 0, &fetch, &r, 1, unit ? targets : NULL, unit ? 1 : 0, st);
  if (in) TF_DeleteTensor(in);
  if (c == TFQ_OK) {
    if (r && TF_TensorType(r) == TF_INT64 && TF_TensorByteSize(r) >= sizeof(int64_t)) {
      if (n) *n = *(const int64_t *)TF_TensorData(r);
    } else {
      c = tfq_status_set(st, TFQ_INTERNAL, "LookupTableSizeV2 returned no int64 scalar");
    }
  }
  if (r) TF_DeleteTensor(r);
  return c;
}

tfq_code tfq_tf_done_mark(tfq_tf_done *d, int64_t unit, int64_t *ndone, tfq_status *st) {
  if (unit < 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Unit %lld: units are >= 0", (long long)unit);
  return run_size(d, d->size_after, &unit, ndone, st);
}

tfq_code tfq_tf_done_count(tfq_tf_done *d, int64_t *n, tfq_status *st) {
  return run_size(d, d->size, NULL, n, st);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

tfq_code tfq_tf_done_list(tfq_tf_done *d, int64_t **units, int64_t *n, tfq_status *st) {
  *units = NULL;
  *n = 0;
  TF_Tensor *r = NULL;
  tfq_code c =
      tfq__tf_run(d->session, d->run_options, NULL, NULL, 0, &d->export_keys, &r, 1, NULL, 0, st);
  if (c) {
    if (r) TF_DeleteTensor(r);
    return c;
  }
  size_t count = r ? TF_TensorByteSize(r) / sizeof(int64_t) : 0;
  if (count) {
    int64_t *u = tfq_malloc(count * sizeof *u);
    if (!u) {
      TF_DeleteTensor(r);
      return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
    }
    memcpy(u, TF_TensorData(r), count * sizeof *u);
    qsort(u, count, sizeof *u, cmp_i64);
    *units = u;
    *n = (int64_t)count;
  }
  if (r) TF_DeleteTensor(r);
  tfq_status_clear(st);
  return TFQ_OK;
}

tfq_code tfq_tf_done_find(tfq_tf_done *d, const int64_t *keys, int64_t n, int64_t *values,
                          tfq_status *st) {
  if (n < 0) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "n must be >= 0");
  if (n == 0) {
    tfq_status_clear(st);
    return TFQ_OK;
  }
  int64_t dim[1] = {n};
  TF_Tensor *in = TF_AllocateTensor(TF_INT64, dim, 1, (size_t)n * sizeof(int64_t)), *r = NULL;
  if (!in) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(TF_TensorData(in), keys, (size_t)n * sizeof(int64_t));
  tfq_code c =
      tfq__tf_run(d->session, d->run_options, &d->keys, &in, 1, &d->found, &r, 1, NULL, 0, st);
  TF_DeleteTensor(in);
  if (c == TFQ_OK) {
    if (r && TF_TensorType(r) == TF_INT64 && TF_TensorByteSize(r) == (size_t)n * sizeof(int64_t)) {
      const int64_t *v = TF_TensorData(r);
      memcpy(values, v, (size_t)n * sizeof *values);
      tfq_status_clear(st);
    } else {
      c = tfq_status_set(st, TFQ_INTERNAL, "LookupTableFindV2 returned no int64 [n]");
    }
  }
  if (r) TF_DeleteTensor(r);
  return c;
}

/* The failed marks: a MutableHashTableV2 int64 -> string, one Insert of [unit] -> [message]. */
static TF_Operation *const_string(TF_Graph *g, const char *name, const char *v, const char *device,
                                  TF_Status *s, int *oom) {
  int64_t dim1[1] = {1};
  TF_Tensor *t = TF_AllocateTensor(TF_STRING, dim1, 1, sizeof(TF_TString));
  if (!t) {
    *oom = 1;
    return NULL;
  }
  TF_TString *p = (TF_TString *)TF_TensorData(t);
  TF_StringInit(p);
  TF_StringCopy(p, v, strlen(v));
  return const_op(g, name, t, device, s);
}

static TF_Operation *build_fail(TF_Graph *g, const char *device, const char *shared_name,
                                int64_t unit, const char *message, TF_Status *s, int *oom) {
  TF_OperationDescription *od = TF_NewOperation(g, "MutableHashTableV2", "tfq_failed_table");
  TF_SetAttrString(od, "container", "", 0);
  TF_SetAttrString(od, "shared_name", shared_name, strlen(shared_name));
  TF_SetAttrBool(od, "use_node_name_sharing", 0);
  TF_SetAttrType(od, "key_dtype", TF_INT64);
  TF_SetAttrType(od, "value_dtype", TF_STRING);
  TF_Operation *table = finish_op(od, device, s), *key, *msg;
  int64_t dim1[1] = {1};
  if (!table || !(key = const_i64(g, "tfq_failed_unit", unit, dim1, 1, device, s, oom)) ||
      !(msg = const_string(g, "tfq_failed_message", message, device, s, oom)))
    return NULL;
  od = TF_NewOperation(g, "LookupTableInsertV2", "tfq_failed_insert");
  TF_AddInput(od, (TF_Output){table, 0});
  TF_AddInput(od, (TF_Output){key, 0});
  TF_AddInput(od, (TF_Output){msg, 0});
  return finish_op(od, device, s);
}

tfq_code tfq_tf_done_fail(const char *target, const char *device, const char *shared_name,
                          int64_t unit, const char *message, int64_t timeout_ms, tfq_status *st) {
  if (!shared_name || !*shared_name || unit < 0 || !message)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "A failed mark needs a shared name, a unit >= 0 and a message");
  TF_Status *s = TF_NewStatus();
  TF_Graph *g = TF_NewGraph();
  int oom = 0;
  TF_Buffer *ro = tfq__tf_run_options(timeout_ms, &oom);
  TF_Session *session = NULL;
  tfq_code c = TFQ_OK;
  if (!s || !g || oom) {
    c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  TF_Operation *insert = build_fail(g, device, shared_name, unit, message, s, &oom);
  if (!insert) {
    c = oom ? tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory")
            : tfq_tf_status_copy(s, st);
    goto done;
  }
  if ((c = tfq__tf_new_session(g, target, device, NULL, 0, timeout_ms, &session, st))) goto done;
  const TF_Operation *targets[1] = {insert};
  c = tfq__tf_run(session, ro, NULL, NULL, 0, NULL, NULL, 0, targets, 1, st);
done:
  if (session && s) {
    TF_CloseSession(session, s);
    TF_DeleteSession(session, s);
  }
  if (g) TF_DeleteGraph(g);
  if (ro) TF_DeleteBuffer(ro);
  if (s) TF_DeleteStatus(s);
  if (!c) tfq_status_clear(st);
  return c;
}
