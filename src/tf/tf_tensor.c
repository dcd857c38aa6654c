/* Codes, dtypes and tensor conversions, and feed mode A (TF_SessionRun inputs). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorflow/c/tf_tstring.h>
#include <tfq/alloc.h>

#include "tf_internal.h"

static atomic_llong g_lent, g_returned;

tfq_code tfq_tf_code_from_tf(TF_Code code) {
  int c = (int)code;
  return c >= 0 && c <= 16 ? (tfq_code)c : TFQ_UNKNOWN;
}

TF_Code tfq_tf_code_to_tf(tfq_code code) {
  int c = (int)code;
  return c >= 0 && c <= 16 ? (TF_Code)c : TF_UNKNOWN;
}

tfq_code tfq_tf_status_copy(const TF_Status *src, tfq_status *dst) {
  tfq_code c = tfq_tf_code_from_tf(TF_GetCode(src));
  if (c == TFQ_OK) {
    tfq_status_clear(dst);
    return c;
  }
  return tfq_status_set(dst, c, "%s", TF_Message(src));
}

TF_DataType tfq_tf_dtype_to_tf(tfq_dtype dt) { return (TF_DataType)dt; }

tfq_code tfq_tf_dtype_from_tf(TF_DataType dt, tfq_dtype *out, tfq_status *st) {
  if (!tfq_dtype_valid((tfq_dtype)dt))
    return tfq_status_set(st, TFQ_UNIMPLEMENTED, "TensorFlow dtype %d has no tfq equivalent",
                          (int)dt);
  *out = (tfq_dtype)dt;
  return TFQ_OK;
}

const char *tfq_tf_version(void) { return TF_Version(); }

void tfq_tf_lent_counts(int64_t *lent, int64_t *returned) {
  if (lent) *lent = (int64_t)atomic_load(&g_lent);
  if (returned) *returned = (int64_t)atomic_load(&g_returned);
}

/* TensorFlow's deallocator for a lent tfq buffer: drops the reference the TF_Tensor held.  Runs
 * exactly once per lent buffer, on whichever thread releases the last TensorFlow reference (or
 * inside TF_NewTensor when TensorFlow copies or refuses the buffer). */
static void lent_release(void *data, size_t len, void *arg) {
  (void)data;
  (void)len;
  atomic_fetch_add(&g_returned, 1);
  tfq_tensor_free((tfq_tensor *)arg);
}

static tfq_code string_to_tf(tfq_tensor *t, TF_Tensor **out, tfq_status *st) {
  int64_t n = tfq_tensor_num_elements(t);
  TF_Tensor *r = TF_AllocateTensor(TF_STRING, tfq_tensor_dims(t), tfq_tensor_rank(t),
                                   (size_t)n * sizeof(TF_TString));
  if (!r) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "TF_AllocateTensor failed");
  TF_TString *p = (TF_TString *)TF_TensorData(r);
  for (int64_t i = 0; i < n; i++) {
    size_t len;
    const char *s = tfq_tensor_string(t, i, &len);
    TF_StringInit(&p[i]);
    TF_StringCopy(&p[i], s, len);
  }
  *out = r;
  return TFQ_OK;
}

tfq_code tfq_tf_tensor_to_tf(tfq_tensor *t, TF_Tensor **out, tfq_status *st) {
  *out = NULL;
  tfq_dtype dt = tfq_tensor_dtype(t);
  if (dt == TFQ_STRING) return string_to_tf(t, out, st);
  size_t len = tfq_tensor_byte_size(t);
  const int64_t *dims = tfq_tensor_dims(t);
  int rank = tfq_tensor_rank(t);
  if (len == 0) { /* nothing to lend */
    TF_Tensor *r = TF_AllocateTensor((TF_DataType)dt, dims, rank, 0);
    if (!r) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "TF_AllocateTensor failed");
    *out = r;
    return TFQ_OK;
  }
  atomic_fetch_add(&g_lent, 1);
  TF_Tensor *r = TF_NewTensor((TF_DataType)dt, dims, rank, tfq_tensor_data(tfq_tensor_ref(t)), len,
                              lent_release, t);
  if (!r) /* TensorFlow has already run lent_release */
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "TF_NewTensor refused a %s tensor of %zu bytes",
                          tfq_dtype_name(dt), len);
  *out = r;
  return TFQ_OK;
}

static tfq_code read_shape(const TF_Tensor *t, int64_t *dims, int *rank, tfq_status *st) {
  int r = TF_NumDims(t);
  if (r < 0 || r > TFQ_MAX_RANK)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "rank %d is above tfq's limit of %d", r,
                          TFQ_MAX_RANK);
  for (int i = 0; i < r; i++) dims[i] = TF_Dim(t, i);
  *rank = r;
  return TFQ_OK;
}

tfq_code tfq_tf_tensor_from_tf(const TF_Tensor *t, tfq_tensor **out, tfq_status *st) {
  *out = NULL;
  tfq_dtype dt;
  int64_t dims[TFQ_MAX_RANK];
  int rank = 0; /* set by read_shape; gcc -O3 cannot see it */
  tfq_code c = tfq_tf_dtype_from_tf(TF_TensorType(t), &dt, st);
  if (c || (c = read_shape(t, dims, &rank, st))) return c;
  tfq_tensor *r;
  if ((c = tfq_tensor_new(dt, dims, rank, &r, st))) return c;
  if (dt == TFQ_STRING) {
    const TF_TString *p = (const TF_TString *)TF_TensorData(t);
    int64_t n = tfq_tensor_num_elements(r);
    for (int64_t i = 0; i < n; i++) {
      if ((c = tfq_tensor_set_string(r, i, TF_StringGetDataPointer(&p[i]), TF_StringGetSize(&p[i]),
                                     st))) {
        tfq_tensor_free(r);
        return c;
      }
    }
  } else {
    size_t len = tfq_tensor_byte_size(r);
    if (TF_TensorByteSize(t) < len) {
      tfq_tensor_free(r);
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "TF_Tensor holds %zu bytes, expected %zu",
                            TF_TensorByteSize(t), len);
    }
    if (len) memcpy(tfq_tensor_data(r), TF_TensorData(t), len);
  }
  *out = r;
  return TFQ_OK;
}

static void tf_tensor_release(void *data, size_t len, void *arg) {
  (void)data;
  (void)len;
  TF_DeleteTensor((TF_Tensor *)arg);
}

tfq_code tfq_tf_tensor_from_tf_take(TF_Tensor *t, tfq_tensor **out, tfq_status *st) {
  *out = NULL;
  if (TF_TensorType(t) == TF_STRING || TF_TensorByteSize(t) == 0) {
    tfq_code c = tfq_tf_tensor_from_tf(t, out, st);
    TF_DeleteTensor(t);
    return c;
  }
  tfq_dtype dt;
  int64_t dims[TFQ_MAX_RANK];
  int rank = 0; /* set by read_shape; gcc -O3 cannot see it */
  tfq_code c = tfq_tf_dtype_from_tf(TF_TensorType(t), &dt, st);
  if (c || (c = read_shape(t, dims, &rank, st))) {
    TF_DeleteTensor(t);
    return c;
  }
  c = tfq_tensor_wrap(dt, dims, rank, TF_TensorData(t), TF_TensorByteSize(t), tf_tensor_release, t,
                      out, st);
  /* tensor.h: INVALID_ARGUMENT means the buffer was not taken; other failures ran the
   * deallocator. */
  if (c == TFQ_INVALID_ARGUMENT) TF_DeleteTensor(t);
  return c;
}

void tfq__tf_delete_tensors(TF_Tensor **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (v[i]) TF_DeleteTensor(v[i]);
    v[i] = NULL;
  }
}

tfq_code tfq__tf_tuple_to_tf(const tfq_tuple *batch, size_t k, TF_Tensor **vals, tfq_status *st) {
  for (size_t i = 0; i < k; i++) vals[i] = NULL;
  if (tfq_tuple_size(batch) != k)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Expected %zu components, got %zu", k,
                          tfq_tuple_size(batch));
  for (size_t i = 0; i < k; i++) {
    tfq_tensor *t = tfq_tuple_get(batch, i);
    tfq_code c = t ? tfq_tf_tensor_to_tf(t, &vals[i], st)
                   : tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Component %zu is not set", i);
    if (c) {
      tfq__tf_delete_tensors(vals, k);
      return c;
    }
  }
  return TFQ_OK;
}

/* ---- feed mode A ------------------------------------------------------------------------- */

struct tfq_tf_feed {
  TF_Graph *graph;
  size_t n;
  TF_Output *inputs;
  TF_Tensor **values;
  int nvalues; /* 0 or n */
};

tfq_code tfq_tf_feed_new(TF_Graph *graph, const char *const *names, size_t n, tfq_tf_feed **out,
                         tfq_status *st) {
  *out = NULL;
  if (n == 0 || n > 1u << 20)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "A feed needs 1 to 2^20 names, got %zu", n);
  tfq_tf_feed *f = tfq_malloc(sizeof *f);
  TF_Output *in = tfq_malloc(n * sizeof *in);
  TF_Tensor **v = tfq_malloc(n * sizeof *v);
  if (!f || !in || !v) {
    tfq_free(f);
    tfq_free(in);
    tfq_free(v);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    const char *name = names[i];
    const char *colon = strrchr(name, ':');
    size_t len = colon ? (size_t)(colon - name) : strlen(name);
    int index = 0;
    if (colon) {
      char *end;
      long idx = strtol(colon + 1, &end, 10);
      if (*end || end == colon + 1 || idx < 0 || idx > 1 << 20) {
        tfq_free(f);
        tfq_free(in);
        tfq_free(v);
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Bad output index in '%s'", name);
      }
      index = (int)idx;
    }
    char buf[512];
    TF_Operation *op = NULL;
    if (len < sizeof buf) {
      memcpy(buf, name, len);
      buf[len] = '\0';
      op = TF_GraphOperationByName(graph, buf);
    }
    if (!op || index >= TF_OperationNumOutputs(op)) {
      tfq_free(f);
      tfq_free(in);
      tfq_free(v);
      return tfq_status_set(st, op ? TFQ_INVALID_ARGUMENT : TFQ_NOT_FOUND,
                            op ? "Operation '%s' has no such output"
                               : "No operation named '%s' "
                                 "in the graph",
                            name);
    }
    in[i].oper = op;
    in[i].index = index;
    v[i] = NULL;
  }
  f->graph = graph;
  f->n = n;
  f->inputs = in;
  f->values = v;
  f->nvalues = 0;
  *out = f;
  return TFQ_OK;
}

void tfq_tf_feed_clear(tfq_tf_feed *f) {
  if (!f) return;
  tfq__tf_delete_tensors(f->values, f->n);
  f->nvalues = 0;
}

void tfq_tf_feed_free(tfq_tf_feed *f) {
  if (!f) return;
  tfq_tf_feed_clear(f);
  tfq_free(f->inputs);
  tfq_free(f->values);
  tfq_free(f);
}

tfq_code tfq_tf_feed_set(tfq_tf_feed *f, const tfq_tuple *batch, tfq_status *st) {
  tfq_tf_feed_clear(f);
  tfq_code c = tfq__tf_tuple_to_tf(batch, f->n, f->values, st);
  if (c == TFQ_OK) f->nvalues = (int)f->n;
  return c;
}

const TF_Output *tfq_tf_feed_inputs(const tfq_tf_feed *f) { return f->inputs; }
TF_Tensor *const *tfq_tf_feed_values(const tfq_tf_feed *f) { return f->values; }
int tfq_tf_feed_count(const tfq_tf_feed *f) { return f->nvalues; }

tfq_code tfq_tf_feed_run(tfq_tf_feed *f, TF_Session *session, const tfq_tuple *batch,
                         const TF_Output *fetches, TF_Tensor **fetch_values, int nfetch,
                         const TF_Operation *const *targets, int ntargets, tfq_status *st) {
  tfq_code c = tfq_tf_feed_set(f, batch, st);
  if (c) return c;
  TF_Status *s = TF_NewStatus();
  if (!s) {
    tfq_tf_feed_clear(f);
    return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  }
  TF_SessionRun(session, NULL, f->inputs, f->values, f->nvalues, fetches, fetch_values, nfetch,
                targets, ntargets, NULL, s);
  c = tfq_tf_status_copy(s, st);
  TF_DeleteStatus(s);
  tfq_tf_feed_clear(f);
  return c;
}

/* ---- feed mode A for parsed Examples ----------------------------------------------------- */

/* "[?,2]" */
static void shape_text(char *buf, size_t cap, const int64_t *d, int rank) {
  size_t n = 0;
  n += (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < rank && n < cap; i++) {
    if (d[i] < 0)
      n += (size_t)snprintf(buf + n, cap - n, "%s?", i ? "," : "");
    else
      n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)d[i]);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static const char *tf_dtype_text(TF_DataType dt, char *buf, size_t cap) {
  if (tfq_dtype_valid((tfq_dtype)dt)) return tfq_dtype_name((tfq_dtype)dt);
  snprintf(buf, cap, "TF_DataType %d", (int)dt);
  return buf;
}

/* Checks the graph's input `in` against one component (dtype `want`, static shape wd[0..wr)). */
static tfq_code check_example_input(TF_Graph *graph, TF_Output in, const char *name,
                                    const char *key, const char *part, tfq_dtype want,
                                    const int64_t *wd, int wr, tfq_status *st) {
  char ws[256], hs[256], tb[32];
  shape_text(ws, sizeof ws, wd, wr);
  TF_DataType have = TF_OperationOutputType(in);
  if (have != (TF_DataType)want)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "Feature '%s'%s (%s %s) cannot feed '%s' (%s)",
                          key, part, tfq_dtype_name(want), ws, name,
                          tf_dtype_text(have, tb, sizeof tb));
  TF_Status *s = TF_NewStatus();
  if (!s) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  int hr = TF_GraphGetTensorNumDims(graph, in, s);
  int fits = 1;
  int64_t hd[TFQ_MAX_RANK + 2];
  if (TF_GetCode(s) == TF_OK && hr >= 0) { /* -1: unknown rank, anything fits */
    if (hr <= (int)(sizeof hd / sizeof hd[0])) TF_GraphGetTensorShape(graph, in, hd, hr, s);
    if (hr != wr) {
      fits = 0;
    } else if (TF_GetCode(s) == TF_OK) {
      for (int i = 0; i < hr; i++)
        if (hd[i] >= 0 && wd[i] >= 0 && hd[i] != wd[i]) fits = 0;
    }
  }
  int known = TF_GetCode(s) == TF_OK && hr <= (int)(sizeof hd / sizeof hd[0]);
  TF_DeleteStatus(s);
  if (fits) return TFQ_OK;
  if (known)
    shape_text(hs, sizeof hs, hd, hr);
  else
    snprintf(hs, sizeof hs, "rank %d", hr);
  return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                        "Feature '%s'%s (%s %s) cannot feed '%s' of shape %s", key, part,
                        tfq_dtype_name(want), ws, name, hs);
}

static void free_names(char **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) tfq_free(v[i]);
  tfq_free(v);
}

static char *concat(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *r = tfq_malloc(la + lb + 1);
  if (!r) return NULL;
  memcpy(r, a, la);
  memcpy(r + la, b, lb + 1);
  return r;
}

/* Resolves `name` as tfq_tf_feed_new() does and checks it against one component.  `base` is the
 * sparse_placeholder's name for a sparse output (the NOT_FOUND hint), NULL for a dense one. */
static tfq_code check_example_name(TF_Graph *graph, const char *name, const char *base,
                                   const char *key, const char *part, tfq_dtype want,
                                   const int64_t *wd, int wr, tfq_status *st) {
  tfq_tf_feed *one;
  tfq_code c = tfq_tf_feed_new(graph, &name, 1, &one, st);
  if (c == TFQ_NOT_FOUND && base)
    return tfq_status_set(st, TFQ_NOT_FOUND,
                          "No operation named '%s' in the graph (sparse feature '%s' feeds a "
                          "tf.compat.v1.sparse_placeholder named '%s': %s/indices, %s/values, "
                          "%s/shape)",
                          name, key, base, base, base, base);
  if (c) return c;
  c = check_example_input(graph, tfq_tf_feed_inputs(one)[0], name, key, part, want, wd, wr, st);
  tfq_tf_feed_free(one);
  return c;
}

tfq_code tfq_tf_feed_new_example(TF_Graph *graph, const tfq_example_config *cfg,
                                 const char *const *names, tfq_tf_feed **out, tfq_status *st) {
  static const char *const suffix[3] = {"/indices", "/values", "/shape"};
  static const char *const part[3] = {" indices", " values", " dense_shape"};
  *out = NULL;
  size_t nf = cfg ? tfq_example_config_size(cfg) : 0;
  if (nf == 0)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "A feed for parsed Examples needs a config with at least one feature");
  size_t n = 0;
  for (size_t i = 0; i < nf; i++) n += tfq_example_config_is_sparse(cfg, i) ? 3 : 1;
  char **full = tfq_malloc(n * sizeof *full);
  if (!full) return tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t j = 0; j < n; j++) full[j] = NULL;
  /* Feature by feature, in output order, so that the first wrong input is the one reported. */
  tfq_code c = TFQ_OK;
  for (size_t i = 0, j = 0; i < nf && c == TFQ_OK; i++) {
    const char *key = tfq_example_config_key(cfg, i);
    const char *base = names && names[i] ? names[i] : key;
    tfq_dtype dt = tfq_example_config_dtype(cfg, i);
    int r = tfq_example_config_rank(cfg, i);
    const int64_t *dims = tfq_example_config_dims(cfg, i);
    if (!tfq_example_config_is_sparse(cfg, i)) {
      int64_t want[TFQ_MAX_RANK + 1];
      want[0] = TFQ_UNKNOWN_DIM;
      for (int k = 0; k < r; k++) want[k + 1] = dims[k];
      if (!(full[j] = concat(base, "")))
        c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
      else
        c = check_example_name(graph, full[j], NULL, key, "", dt, want, r + 1, st);
      j++;
      continue;
    }
    const int64_t ix[2] = {TFQ_UNKNOWN_DIM, 1 + r}, vals[1] = {TFQ_UNKNOWN_DIM}, sh[1] = {1 + r};
    const int64_t *wd[3] = {ix, vals, sh};
    const int wr[3] = {2, 1, 1};
    const tfq_dtype wt[3] = {TFQ_INT64, dt, TFQ_INT64};
    for (int p = 0; p < 3 && c == TFQ_OK; p++, j++) {
      if (!(full[j] = concat(base, suffix[p])))
        c = tfq_status_set(st, TFQ_RESOURCE_EXHAUSTED, "out of memory");
      else
        c = check_example_name(graph, full[j], base, key, part[p], wt[p], wd[p], wr[p], st);
    }
  }
  if (c == TFQ_OK) c = tfq_tf_feed_new(graph, (const char *const *)full, n, out, st);
  free_names(full, n);
  return c;
}
