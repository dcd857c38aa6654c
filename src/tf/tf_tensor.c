/* Codes, dtypes and tensor conversions, and feed mode A (TF_SessionRun inputs). */
#include <stdatomic.h>
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
