/* tfq._tfq.Reader: tfq's readers (tfq/reader.h) for tfq.TextLineReader and the others
 * (tfq/readers.py).
 *
 * Reader(kind, options) with kind a tfq_reader_kind and options a dict (name, skip_header_lines,
 * record_bytes, header_bytes, footer_bytes, hop_bytes, compression, tf_compat_truncation).
 * read(queue) and read_up_to(queue, n) take their work units (file names) from a tfq._tfq.Queue of
 * one string component and run with the GIL released: a read that waits on an empty queue lets
 * every other Python thread run. */
#include "tfqpy.h"

typedef struct {
  PyObject_HEAD tfq_reader *r;
} reader_object;

static int ropt(PyObject *d, const char *k, long long *v) {
  PyObject *x = PyDict_GetItemString(d, k);
  if (x == NULL || x == Py_None) return 0;
  *v = PyLong_AsLongLong(x);
  return *v == -1 && PyErr_Occurred() ? -1 : 1;
}

static int set_reader_options(tfq_reader_options *o, PyObject *d, tfq_status *st) {
  static const char *const keys[] = {"skip_header_lines", "record_bytes", "header_bytes",
                                     "footer_bytes", "hop_bytes"};
  static void (*const setters[])(tfq_reader_options *, int64_t) = {
      tfq_reader_options_set_skip_header_lines, tfq_reader_options_set_record_bytes,
      tfq_reader_options_set_header_bytes, tfq_reader_options_set_footer_bytes,
      tfq_reader_options_set_hop_bytes};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
    long long v;
    int r = ropt(d, keys[i], &v);
    if (r < 0) return -1;
    if (r) setters[i](o, (int64_t)v);
  }
  PyObject *x = PyDict_GetItemString(d, "tf_compat_truncation");
  if (x != NULL && x != Py_None) {
    int on = PyObject_IsTrue(x);
    if (on < 0) return -1;
    tfq_reader_options_set_tf_compat_truncation(o, on);
  }
  x = PyDict_GetItemString(d, "compression");
  if (x != NULL && x != Py_None) {
    const char *s = PyUnicode_AsUTF8AndSize(x, NULL);
    if (s == NULL) return -1;
    tfq_reader_options_set_compression(o, tfq_compression_from_string(s));
  }
  x = PyDict_GetItemString(d, "name");
  if (x != NULL && x != Py_None) {
    const char *s = PyUnicode_AsUTF8AndSize(x, NULL);
    if (s == NULL) return -1;
    if (tfq_reader_options_set_name(o, s, st) != TFQ_OK) {
      tfqpy_raise(st);
      return -1;
    }
  }
  return 0;
}

static PyObject *reader_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  int kind;
  PyObject *opts;
  if (!PyArg_ParseTuple(args, "iO!:Reader", &kind, &PyDict_Type, &opts)) return NULL;
  tfq_status *st = tfq_status_new();
  tfq_reader_options *o = NULL;
  tfq_reader *r = NULL;
  PyObject *res = NULL;
  if (st == NULL) return PyErr_NoMemory();
  if (tfq_reader_options_new(&o, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  if (set_reader_options(o, opts, st) < 0) goto done;
  if (tfq_reader_new((tfq_reader_kind)kind, o, &r, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  res = alloc(tp, 0);
  if (res == NULL)
    tfq_reader_free(r);
  else
    ((reader_object *)res)->r = r;
done:
  tfq_reader_options_free(o);
  tfq_status_free(st);
  return res;
}

static void reader_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tfq_reader_free(((reader_object *)self)->r);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

/* read(queue) / read_up_to(queue, n) -> (keys Tensor, values Tensor); n < 0: read.  On the main
 * thread Ctrl-C wakes a read that waits for a work unit (tfq.readers sets the watcher up):
 * KeyboardInterrupt, nothing taken from the queue, the reader usable again. */
static PyObject *reader_read_op(reader_object *o, PyObject *qobj, long long n) {
  tfq_queue *q = tfqpy_queue_get(qobj);
  if (q == NULL) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_cancel *cancel = NULL;
  if (tfq_cancel_new(&cancel, st) != TFQ_OK) {
    PyObject *e = tfqpy_raise(st);
    tfq_status_free(st);
    return e;
  }
  int armed;
  if (tfqpy_watch_arm_cancel(cancel, &armed) < 0) {
    tfq_cancel_free(cancel);
    tfq_status_free(st);
    return NULL;
  }
  tfq_tensor *k = NULL, *v = NULL;
  tfq_code c;
  Py_INCREF(qobj); /* the queue outlives the call while the GIL is released */
  Py_BEGIN_ALLOW_THREADS;
  c = n < 0 ? tfq_reader_read(o->r, q, &k, &v, cancel, st)
            : tfq_reader_read_up_to(o->r, q, (int64_t)n, &k, &v, cancel, st);
  Py_END_ALLOW_THREADS;
  Py_DECREF(qobj);
  int interrupted = tfqpy_watch_disarm(armed);
  tfq_cancel_free(cancel);
  PyObject *res = NULL;
  if (c == TFQ_CANCELLED && interrupted && PyErr_CheckSignals() < 0) {
    res = NULL; /* KeyboardInterrupt (or the handler's own exception) */
  } else if (c != TFQ_OK) {
    res = tfqpy_raise(st);
  } else {
    PyObject *pk = tfqpy_tensor_wrap(k);
    PyObject *pv = tfqpy_tensor_wrap(v);
    if (pk != NULL && pv != NULL) res = PyTuple_Pack(2, pk, pv);
    Py_XDECREF(pk);
    Py_XDECREF(pv);
  }
  tfq_status_free(st);
  return res;
}

static PyObject *reader_read(PyObject *self, PyObject *q) {
  return reader_read_op((reader_object *)self, q, -1);
}

static PyObject *reader_read_up_to(PyObject *self, PyObject *args) {
  PyObject *q;
  long long n;
  if (!PyArg_ParseTuple(args, "OL", &q, &n)) return NULL;
  if (n < 0) {
    char msg[64];
    PyOS_snprintf(msg, sizeof msg, "num_records must be >= 0 not %lld", n);
    return tfqpy_raise_code(TFQ_INVALID_ARGUMENT, msg);
  }
  return reader_read_op((reader_object *)self, q, n);
}

static PyObject *reader_produced(PyObject *self, PyObject *unused) {
  return PyLong_FromLongLong(
      (long long)tfq_reader_num_records_produced(((reader_object *)self)->r));
}

static PyObject *reader_completed(PyObject *self, PyObject *unused) {
  return PyLong_FromLongLong(
      (long long)tfq_reader_num_work_units_completed(((reader_object *)self)->r));
}

static PyObject *reader_reset(PyObject *self, PyObject *unused) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  PyObject *res = tfq_reader_reset(((reader_object *)self)->r, st) == TFQ_OK ? Py_NewRef(Py_None)
                                                                             : tfqpy_raise(st);
  tfq_status_free(st);
  return res;
}

static PyObject *reader_serialize(PyObject *self, PyObject *unused) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  char *s = NULL;
  size_t len = 0;
  PyObject *res;
  if (tfq_reader_serialize_state(((reader_object *)self)->r, &s, &len, st) != TFQ_OK)
    res = tfqpy_raise(st);
  else
    res = PyBytes_FromStringAndSize(s ? s : "", (Py_ssize_t)len);
  tfq_free(s);
  tfq_status_free(st);
  return res;
}

static PyObject *reader_restore(PyObject *self, PyObject *arg) {
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
  tfq_status *st = tfq_status_new();
  PyObject *res;
  if (st == NULL)
    res = PyErr_NoMemory();
  else if (tfq_reader_restore_state(((reader_object *)self)->r, view.buf, (size_t)view.len, st) !=
           TFQ_OK)
    res = tfqpy_raise(st);
  else
    res = Py_NewRef(Py_None);
  PyBuffer_Release(&view);
  tfq_status_free(st);
  return res;
}

static PyObject *reader_name(PyObject *self, void *closure) {
  return PyUnicode_FromString(tfq_reader_name(((reader_object *)self)->r));
}

static PyMethodDef reader_methods[] = {
    {"read", reader_read, METH_O, "read(queue) -> (key, value) scalar Tensors"},
    {"read_up_to", reader_read_up_to, METH_VARARGS, "read_up_to(queue, n) -> ([k], [k])"},
    {"num_records_produced", reader_produced, METH_NOARGS, "records produced"},
    {"num_work_units_completed", reader_completed, METH_NOARGS, "work units finished"},
    {"reset", reader_reset, METH_NOARGS, "abandon the work unit, zero the counters"},
    {"serialize_state", reader_serialize, METH_NOARGS, "TF's ReaderBaseState bytes"},
    {"restore_state", reader_restore, METH_O, "restore_state(bytes)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef reader_getset[] = {{"name", reader_name, NULL, "the reader's name", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot reader_slots[] = {
    {Py_tp_new, (void *)reader_new},
    {Py_tp_dealloc, (void *)reader_dealloc},
    {Py_tp_methods, reader_methods},
    {Py_tp_getset, reader_getset},
    {Py_tp_doc, (void *)"a tfq reader (use tfq.TextLineReader, ...)"},
    {0, NULL}};

static PyType_Spec reader_spec = {"tfq._tfq.Reader", sizeof(reader_object), 0, Py_TPFLAGS_DEFAULT,
                                  reader_slots};

static PyObject *reader_type = NULL;

tfq_reader *tfqpy_reader_get(PyObject *obj) {
  if (reader_type == NULL || !PyObject_TypeCheck(obj, (PyTypeObject *)reader_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a tfq reader (tfq.TextLineReader, ...)");
    return NULL;
  }
  return ((reader_object *)obj)->r;
}

int tfqpy_reader_init_type(PyObject *module) {
  reader_type = PyType_FromSpec(&reader_spec);
  if (reader_type == NULL) return -1;
  Py_INCREF(reader_type); /* kept for tfqpy_reader_get */
  return PyModule_AddObject(module, "Reader", reader_type);
}
