/* tfq._tfq.Queue: tfq's queues (tfq/queue.h) for tfq.FIFOQueue and the others (tfq/queues.py).
 *
 * Queue(kind, dtypes, shapes, options) with dtypes a list of tfq_dtype codes, shapes None or a
 * list of tuples (None for an unknown dim), options a dict (capacity, name, shared_name,
 * container, min_after_dequeue, seed, seed2).  A component goes in as (dtype code, shape, data):
 * data a C-contiguous buffer of the dtype for numeric components, a flat sequence of bytes for
 * strings.  Every blocking call runs with the GIL released; timeout_us < 0 waits for ever.  A
 * shared name opens the queue in the process-wide registry (TF's resource manager). */
#include <string.h>

#include "tfqpy.h"

typedef struct {
  PyObject_HEAD tfq_queue *q;
} queue_object;

static int shape_dims(PyObject *shape, int64_t *dims, int *rank) {
  if (shape == Py_None) {
    *rank = TFQ_UNKNOWN_RANK;
    return 0;
  }
  Py_ssize_t r = PySequence_Size(shape);
  if (r < 0) return -1;
  if (r > TFQ_MAX_RANK) {
    PyErr_SetString(PyExc_ValueError, "shape has too many dims");
    return -1;
  }
  *rank = (int)r;
  for (Py_ssize_t k = 0; k < r; k++) {
    PyObject *x = PySequence_GetItem(shape, k);
    if (x == NULL) return -1;
    dims[k] = x == Py_None ? TFQ_UNKNOWN_DIM : (int64_t)PyLong_AsLongLong(x);
    Py_DECREF(x);
  }
  return PyErr_Occurred() ? -1 : 0;
}

/* (dtype code, shape, data) -> a new tensor; NULL with an exception. */
static tfq_tensor *make_tensor(PyObject *comp, tfq_status *st) {
  int dtype, rank;
  PyObject *shape, *data;
  int64_t dims[TFQ_MAX_RANK];
  if (!PyArg_ParseTuple(comp, "iOO", &dtype, &shape, &data)) return NULL;
  if (shape_dims(shape, dims, &rank) < 0) return NULL;
  tfq_tensor *t = NULL;
  if (tfq_tensor_new((tfq_dtype)dtype, dims, rank, &t, st) != TFQ_OK) {
    tfqpy_raise(st);
    return NULL;
  }
  int64_t n = tfq_tensor_num_elements(t);
  if (dtype == TFQ_STRING) {
    for (int64_t i = 0; i < n; i++) {
      PyObject *x = PySequence_GetItem(data, (Py_ssize_t)i);
      char *b;
      Py_ssize_t len;
      int bad = x == NULL || PyBytes_AsStringAndSize(x, &b, &len) < 0;
      if (!bad && tfq_tensor_set_string(t, i, b, (size_t)len, st) != TFQ_OK) {
        tfqpy_raise(st);
        bad = 1;
      }
      Py_XDECREF(x);
      if (bad) {
        tfq_tensor_free(t);
        return NULL;
      }
    }
    return t;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) < 0) {
    tfq_tensor_free(t);
    return NULL;
  }
  if ((size_t)view.len != tfq_tensor_byte_size(t)) {
    PyErr_Format(PyExc_ValueError, "component data has %zd bytes for %zu", view.len,
                 tfq_tensor_byte_size(t));
    PyBuffer_Release(&view);
    tfq_tensor_free(t);
    return NULL;
  }
  if (view.len > 0) memcpy(tfq_tensor_data(t), view.buf, (size_t)view.len);
  PyBuffer_Release(&view);
  return t;
}

tfq_tuple *tfqpy_make_tuple(PyObject *comps, tfq_status *st) {
  Py_ssize_t n = PySequence_Size(comps);
  if (n < 0) return NULL;
  tfq_tuple *tup = NULL;
  if (tfq_tuple_new((size_t)n, &tup, st) != TFQ_OK) {
    tfqpy_raise(st);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *c = PySequence_GetItem(comps, i);
    tfq_tensor *t = c ? make_tensor(c, st) : NULL;
    Py_XDECREF(c);
    if (t == NULL) {
      tfq_tuple_free(tup);
      return NULL;
    }
    tfq_tuple_set_take(tup, (size_t)i, t);
  }
  return tup;
}

static int opt_get(PyObject *d, const char *k, long long *v) {
  PyObject *x = PyDict_GetItemString(d, k);
  if (x == NULL || x == Py_None) return 0;
  *v = PyLong_AsLongLong(x);
  return *v == -1 && PyErr_Occurred() ? -1 : 1;
}

static const char *opt_s(PyObject *d, const char *k) {
  PyObject *x = PyDict_GetItemString(d, k);
  return x == NULL || x == Py_None ? NULL : PyUnicode_AsUTF8AndSize(x, NULL);
}

static int set_queue_options(tfq_queue_options *o, PyObject *d, tfq_status *st) {
  long long v, s2 = 0;
  int r;
  if ((r = opt_get(d, "capacity", &v)) < 0) return -1;
  if (r) tfq_queue_options_set_capacity(o, v);
  if ((r = opt_get(d, "min_after_dequeue", &v)) < 0) return -1;
  if (r) tfq_queue_options_set_min_after_dequeue(o, v);
  if ((r = opt_get(d, "seed2", &s2)) < 0) return -1;
  if ((r = opt_get(d, "seed", &v)) < 0) return -1;
  if (r) tfq_queue_options_set_seeds(o, v, s2);
  const char *s;
  if ((s = opt_s(d, "name")) != NULL && tfq_queue_options_set_name(o, s, st) != TFQ_OK) goto fail;
  if ((s = opt_s(d, "shared_name")) != NULL &&
      tfq_queue_options_set_shared_name(o, s, st) != TFQ_OK)
    goto fail;
  if ((s = opt_s(d, "container")) != NULL && tfq_queue_options_set_container(o, s, st) != TFQ_OK)
    goto fail;
  return PyErr_Occurred() ? -1 : 0;
fail:
  tfqpy_raise(st);
  return -1;
}

static PyObject *queue_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  int kind;
  PyObject *dtypes, *shapes, *opts;
  if (!PyArg_ParseTuple(args, "iOOO!:Queue", &kind, &dtypes, &shapes, &PyDict_Type, &opts))
    return NULL;
  tfq_status *st = tfq_status_new();
  tfq_spec *spec = NULL;
  tfq_queue_options *o = NULL;
  PyObject *res = NULL;
  if (st == NULL) return PyErr_NoMemory();
  if (tfq_spec_new(&spec, st) != TFQ_OK || tfq_queue_options_new(&o, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  Py_ssize_t n = PySequence_Size(dtypes);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *d = PySequence_GetItem(dtypes, i);
    PyObject *sh = shapes == Py_None ? NULL : PySequence_GetItem(shapes, i);
    long code = d ? PyLong_AsLong(d) : -1;
    int64_t dims[TFQ_MAX_RANK];
    int rank = TFQ_UNKNOWN_RANK;
    int bad = PyErr_Occurred() || (sh != NULL && shape_dims(sh, dims, &rank) < 0);
    Py_XDECREF(d);
    Py_XDECREF(sh);
    if (bad) goto done;
    if (tfq_spec_add(spec, (tfq_dtype)code, dims, rank, NULL, st) != TFQ_OK) {
      tfqpy_raise(st);
      goto done;
    }
  }
  if (n < 0 || set_queue_options(o, opts, st) < 0) goto done;
  tfq_queue *q = NULL;
  if (tfq_queue_open(NULL, (tfq_queue_kind)kind, spec, o, &q, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  res = alloc(tp, 0);
  if (res == NULL)
    tfq_queue_free(q);
  else
    ((queue_object *)res)->q = q;
done:
  tfq_spec_free(spec);
  tfq_queue_options_free(o);
  tfq_status_free(st);
  return res;
}

static void queue_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tfq_queue_free(((queue_object *)self)->q);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

enum { OP_ENQ, OP_ENQ_MANY, OP_DEQ, OP_DEQ_MANY, OP_DEQ_UP_TO, OP_CLOSE };

/* One blocking call, the GIL released. */
static PyObject *queue_call(queue_object *o, int op, tfq_tuple *in, long long n,
                            long long timeout) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) {
    tfq_tuple_free(in);
    return PyErr_NoMemory();
  }
  tfq_tuple *out = NULL;
  tfq_queue *q = o->q;
  tfq_code c = TFQ_OK;
  /* A dequeue waits in slices of 100 ms, taking the GIL back between them to see Ctrl-C
   * (PyErr_CheckSignals: KeyboardInterrupt); a timed-out dequeue_many/up_to puts its partial
   * batch back (queue.h), so slicing loses nothing and changes no order. */
  int sliced = op >= OP_DEQ && op <= OP_DEQ_UP_TO;
  int64_t left = timeout < 0 ? -1 : (int64_t)timeout;
again:;
  int64_t to = left < 0 ? TFQ_NO_TIMEOUT : left;
  if (sliced && (left < 0 || left > 100000)) to = 100000;
  Py_BEGIN_ALLOW_THREADS;
  switch (op) {
    case OP_ENQ: c = tfq_queue_enqueue(q, in, NULL, to, st); break;
    case OP_ENQ_MANY: c = tfq_queue_enqueue_many(q, in, NULL, to, st); break;
    case OP_DEQ: c = tfq_queue_dequeue(q, &out, NULL, to, st); break;
    case OP_DEQ_MANY: c = tfq_queue_dequeue_many(q, n, &out, NULL, to, st); break;
    case OP_DEQ_UP_TO: c = tfq_queue_dequeue_up_to(q, n, &out, NULL, to, st); break;
    default: c = tfq_queue_close(q, (int)n, NULL, to, st); break;
  }
  Py_END_ALLOW_THREADS;
  if (sliced && c == TFQ_DEADLINE_EXCEEDED && to != left) {
    if (left > 0) left -= to;
    if (PyErr_CheckSignals() < 0) {
      tfq_status_free(st);
      return NULL;
    }
    tfq_status_clear(st);
    goto again;
  }
  tfq_tuple_free(in);
  PyObject *res;
  if (c != TFQ_OK)
    res = tfqpy_raise(st);
  else if (out != NULL)
    res = tfqpy_tuple_take(out);
  else
    res = Py_NewRef(Py_None);
  tfq_status_free(st);
  return res;
}

static PyObject *queue_enqueue_op(PyObject *self, PyObject *args, int op) {
  PyObject *comps;
  long long timeout = -1;
  if (!PyArg_ParseTuple(args, "O|L", &comps, &timeout)) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_tuple *in = tfqpy_make_tuple(comps, st);
  tfq_status_free(st);
  if (in == NULL) return NULL;
  return queue_call((queue_object *)self, op, in, 0, timeout);
}

static PyObject *queue_enqueue(PyObject *self, PyObject *args) {
  return queue_enqueue_op(self, args, OP_ENQ);
}

static PyObject *queue_enqueue_many(PyObject *self, PyObject *args) {
  return queue_enqueue_op(self, args, OP_ENQ_MANY);
}

static PyObject *queue_dequeue(PyObject *self, PyObject *args) {
  long long timeout = -1;
  if (!PyArg_ParseTuple(args, "|L", &timeout)) return NULL;
  return queue_call((queue_object *)self, OP_DEQ, NULL, 0, timeout);
}

static PyObject *queue_dequeue_n(PyObject *self, PyObject *args) {
  long long n, timeout = -1;
  int up_to = 0;
  if (!PyArg_ParseTuple(args, "Lp|L", &n, &up_to, &timeout)) return NULL;
  return queue_call((queue_object *)self, up_to ? OP_DEQ_UP_TO : OP_DEQ_MANY, NULL, n, timeout);
}

static PyObject *queue_close(PyObject *self, PyObject *args) {
  int cancel = 0;
  long long timeout = -1;
  if (!PyArg_ParseTuple(args, "|pL", &cancel, &timeout)) return NULL;
  return queue_call((queue_object *)self, OP_CLOSE, NULL, cancel, timeout);
}

static PyObject *queue_size(PyObject *self, PyObject *unused) {
  return PyLong_FromLongLong((long long)tfq_queue_size(((queue_object *)self)->q));
}

static PyObject *queue_is_closed(PyObject *self, PyObject *unused) {
  return PyBool_FromLong(tfq_queue_is_closed(((queue_object *)self)->q));
}

static PyObject *queue_name(PyObject *self, void *closure) {
  return PyUnicode_FromString(tfq_queue_name(((queue_object *)self)->q));
}

static PyMethodDef queue_methods[] = {
    {"enqueue", queue_enqueue, METH_VARARGS, "enqueue(components[, timeout_us])"},
    {"enqueue_many", queue_enqueue_many, METH_VARARGS, "enqueue_many(components[, timeout_us])"},
    {"dequeue", queue_dequeue, METH_VARARGS, "dequeue([timeout_us]) -> Tensors"},
    {"dequeue_n", queue_dequeue_n, METH_VARARGS, "dequeue_n(n, up_to[, timeout_us])"},
    {"close", queue_close, METH_VARARGS, "close([cancel_pending_enqueues[, timeout_us]])"},
    {"size", queue_size, METH_NOARGS, "elements in the queue"},
    {"is_closed", queue_is_closed, METH_NOARGS, "closed"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef queue_getset[] = {{"name", queue_name, NULL, "the queue's name", NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot queue_slots[] = {{Py_tp_new, (void *)queue_new},
                                    {Py_tp_dealloc, (void *)queue_dealloc},
                                    {Py_tp_methods, queue_methods},
                                    {Py_tp_getset, queue_getset},
                                    {Py_tp_doc, (void *)"a tfq queue (use tfq.FIFOQueue, ...)"},
                                    {0, NULL}};

static PyType_Spec queue_spec = {"tfq._tfq.Queue", sizeof(queue_object), 0, Py_TPFLAGS_DEFAULT,
                                 queue_slots};

static PyObject *queue_type = NULL;

tfq_queue *tfqpy_queue_get(PyObject *obj) {
  if (queue_type == NULL || !PyObject_TypeCheck(obj, (PyTypeObject *)queue_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a tfq queue (tfq.FIFOQueue, ...)");
    return NULL;
  }
  return ((queue_object *)obj)->q;
}

int tfqpy_queue_init_type(PyObject *module) {
  queue_type = PyType_FromSpec(&queue_spec);
  if (queue_type == NULL) return -1;
  Py_INCREF(queue_type); /* kept for tfqpy_queue_get */
  return PyModule_AddObject(module, "Queue", queue_type);
}
