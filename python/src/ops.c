/* tfq._tfq.decode_csv: tfq_decode_csv_lines for tfq.decode_csv (eager; the GIL released while
 * decoding).  decode_csv(records, columns, field_delim, use_quote_delim, na_value, select_cols)
 * with records a sequence of bytes and columns a sequence of (dtype code, default or None);
 * returns a tuple of Tensors of shape [len(records)]. */
#include "tfqpy.h"

static int add_column(tfq_csv_options *o, PyObject *col, tfq_status *st) {
  int dtype;
  PyObject *def;
  if (!PyArg_ParseTuple(col, "iO", &dtype, &def)) return -1;
  tfq_code c;
  if (def == Py_None) {
    c = tfq_csv_options_add_required(o, (tfq_dtype)dtype, st);
  } else if (dtype == TFQ_STRING) {
    char *b;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(def, &b, &len) < 0) return -1;
    c = tfq_csv_options_add_default_string(o, b, (size_t)len, st);
  } else if (dtype == TFQ_FLOAT || dtype == TFQ_DOUBLE) {
    double v = PyFloat_AsDouble(def);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    c = dtype == TFQ_FLOAT ? tfq_csv_options_add_default_float(o, (float)v, st)
                           : tfq_csv_options_add_default_double(o, v, st);
  } else {
    long long v = PyLong_AsLongLong(def);
    if (v == -1 && PyErr_Occurred()) return -1;
    c = dtype == TFQ_INT32 ? tfq_csv_options_add_default_int32(o, (int32_t)v, st)
                           : tfq_csv_options_add_default_int64(o, (int64_t)v, st);
  }
  if (c != TFQ_OK) {
    tfqpy_raise(st);
    return -1;
  }
  return 0;
}

int tfqpy_csv_set_options(tfq_csv_options *o, PyObject *cols, PyObject *delim, int quote,
                          PyObject *na, PyObject *select, tfq_status *st) {
  Py_ssize_t n = PySequence_Size(cols);
  if (n < 0) return -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *col = PySequence_GetItem(cols, i);
    if (col == NULL) return -1;
    int rc = add_column(o, col, st);
    Py_DECREF(col);
    if (rc < 0) return -1;
  }
  char *b;
  Py_ssize_t len;
  if (PyBytes_AsStringAndSize(delim, &b, &len) < 0) return -1;
  if (tfq_csv_options_set_field_delim(o, b, (size_t)len, st) != TFQ_OK) goto fail;
  tfq_csv_options_set_use_quote_delim(o, quote);
  if (PyBytes_AsStringAndSize(na, &b, &len) < 0) return -1;
  if (tfq_csv_options_set_na_value(o, b, (size_t)len, st) != TFQ_OK) goto fail;
  n = PySequence_Size(select);
  if (n < 0) return -1;
  if (n > 0) {
    int64_t *sel = PyMem_Malloc(sizeof *sel * (size_t)n);
    if (sel == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *x = PySequence_GetItem(select, i);
      sel[i] = x ? (int64_t)PyLong_AsLongLong(x) : -1;
      Py_XDECREF(x);
    }
    tfq_code c =
        PyErr_Occurred() ? TFQ_UNKNOWN : tfq_csv_options_set_select_cols(o, sel, (size_t)n, st);
    PyMem_Free(sel);
    if (PyErr_Occurred()) return -1;
    if (c != TFQ_OK) goto fail;
  }
  return 0;
fail:
  tfqpy_raise(st);
  return -1;
}

PyObject *tfqpy_decode_csv(PyObject *self, PyObject *args) {
  PyObject *records, *cols, *delim, *na, *select;
  int quote;
  if (!PyArg_ParseTuple(args, "OOOpOO:decode_csv", &records, &cols, &delim, &quote, &na, &select))
    return NULL;
  PyObject *recs = PySequence_Tuple(records); /* our own references while the GIL is out */
  if (recs == NULL) return NULL;
  Py_ssize_t n = PyTuple_Size(recs);
  const char **ptrs = PyMem_Malloc(sizeof *ptrs * (size_t)(n ? n : 1));
  size_t *lens = PyMem_Malloc(sizeof *lens * (size_t)(n ? n : 1));
  tfq_status *st = tfq_status_new();
  tfq_csv_options *o = NULL;
  PyObject *res = NULL;
  if (ptrs == NULL || lens == NULL || st == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    char *b;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(PyTuple_GetItem(recs, i), &b, &len) < 0) goto done;
    ptrs[i] = b;
    lens[i] = (size_t)len;
  }
  if (tfq_csv_options_new(&o, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  if (tfqpy_csv_set_options(o, cols, delim, quote, na, select, st) < 0) goto done;
  tfq_tuple *out = NULL;
  tfq_code c;
  Py_BEGIN_ALLOW_THREADS c = tfq_decode_csv_lines(o, ptrs, lens, (size_t)n, &out, st);
  Py_END_ALLOW_THREADS if (c != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  res = tfqpy_tuple_take(out);
done:
  tfq_csv_options_free(o);
  tfq_status_free(st);
  PyMem_Free(ptrs);
  PyMem_Free(lens);
  Py_DECREF(recs);
  return res;
}
