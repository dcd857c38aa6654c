/* tfq._tfq.parse_example and decode_raw for tfq.io (eager; the GIL released while parsing).
 *
 * parse_example(records, features, single): records a sequence of bytes (batch path) or, with
 * `single`, one bytes object (parse_single_example's path); features tfq.io's list (see
 * tfqpy_build_features).  Returns (keys, sparse flags, tuple of Tensors: one per dense feature,
 * three per sparse one) in the config's order (sorted keys).
 * decode_raw(records, dtype code, little_endian): a Tensor [len(records), k]. */
#include <string.h>

#include "tfqpy.h"

/* Pointers into the bytes of a tuple (which the caller keeps while they are used). */
static int bytes_vectors(PyObject *recs, const char ***ptrs, size_t **lens) {
  Py_ssize_t n = PyTuple_Size(recs);
  *ptrs = PyMem_Malloc(sizeof **ptrs * (size_t)(n ? n : 1));
  *lens = PyMem_Malloc(sizeof **lens * (size_t)(n ? n : 1));
  if (*ptrs == NULL || *lens == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    char *b;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(PyTuple_GetItem(recs, i), &b, &len) < 0) return -1;
    (*ptrs)[i] = b;
    (*lens)[i] = (size_t)len;
  }
  return 0;
}

static PyObject *result_to_python(tfq_example_result *r, tfq_status *st) {
  size_t n = tfq_example_result_size(r);
  PyObject *keys = PyList_New((Py_ssize_t)n), *sparse = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; keys != NULL && sparse != NULL && i < n; i++) {
    PyList_SetItem(keys, (Py_ssize_t)i, PyBytes_FromString(tfq_example_result_key(r, i)));
    PyList_SetItem(sparse, (Py_ssize_t)i, PyBool_FromLong(tfq_example_result_is_sparse(r, i)));
  }
  tfq_tuple *tup = NULL;
  PyObject *tensors = NULL;
  if (keys != NULL && sparse != NULL) {
    if (tfq_example_result_to_tuple(r, &tup, st) != TFQ_OK)
      tfqpy_raise(st);
    else
      tensors = tfqpy_tuple_take(tup);
  }
  if (tensors == NULL) {
    Py_XDECREF(keys);
    Py_XDECREF(sparse);
    return NULL;
  }
  return Py_BuildValue("(NNN)", keys, sparse, tensors);
}

PyObject *tfqpy_parse_example(PyObject *self, PyObject *args) {
  PyObject *records, *feats;
  int single;
  if (!PyArg_ParseTuple(args, "OOp:parse_example", &records, &feats, &single)) return NULL;
  PyObject *recs = single ? PyTuple_Pack(1, records) : PySequence_Tuple(records);
  if (recs == NULL) return NULL;
  tfq_status *st = tfq_status_new();
  tfq_example_config *cfg = NULL;
  tfq_example_result *r = NULL;
  const char **ptrs = NULL;
  size_t *lens = NULL;
  PyObject *res = NULL;
  if (st == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (bytes_vectors(recs, &ptrs, &lens) < 0 || tfqpy_build_features(&cfg, feats, st) < 0) goto done;
  tfq_code c;
  int64_t n = (int64_t)PyTuple_Size(recs);
  Py_BEGIN_ALLOW_THREADS;
  c = single ? tfq_parse_single_example(cfg, ptrs[0], lens[0], &r, st)
             : tfq_parse_example_strings(cfg, ptrs, lens, n, NULL, NULL, &r, st);
  Py_END_ALLOW_THREADS;
  if (c != TFQ_OK)
    tfqpy_raise(st);
  else
    res = result_to_python(r, st);
done:
  tfq_example_result_free(r);
  tfq_example_config_free(cfg);
  tfq_status_free(st);
  PyMem_Free(ptrs);
  PyMem_Free(lens);
  Py_DECREF(recs);
  return res;
}

PyObject *tfqpy_decode_raw(PyObject *self, PyObject *args) {
  PyObject *records;
  int dtype, little;
  if (!PyArg_ParseTuple(args, "Oip:decode_raw", &records, &dtype, &little)) return NULL;
  PyObject *recs = PySequence_Tuple(records);
  if (recs == NULL) return NULL;
  tfq_status *st = tfq_status_new();
  tfq_tensor *in = NULL, *out = NULL;
  PyObject *res = NULL;
  int64_t dims[1] = {(int64_t)PyTuple_Size(recs)};
  if (st == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (tfq_tensor_new(TFQ_STRING, dims, 1, &in, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  for (int64_t i = 0; i < dims[0]; i++) {
    char *b;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(PyTuple_GetItem(recs, (Py_ssize_t)i), &b, &len) < 0) goto done;
    if (tfq_tensor_set_string(in, i, b, (size_t)len, st) != TFQ_OK) {
      tfqpy_raise(st);
      goto done;
    }
  }
  tfq_code c;
  Py_BEGIN_ALLOW_THREADS;
  c = tfq_decode_raw(in, (tfq_dtype)dtype, little, &out, st);
  Py_END_ALLOW_THREADS;
  if (c != TFQ_OK)
    tfqpy_raise(st);
  else
    res = tfqpy_tensor_wrap(out);
done:
  tfq_tensor_free(in);
  tfq_status_free(st);
  Py_DECREF(recs);
  return res;
}
