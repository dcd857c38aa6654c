/* tfq._tfq: the module, the error mapping and the Tensor type (see tfqpy.h). */
#include <string.h>

#include "tfqpy.h"

PyObject *tfqpy_tensor_type = NULL;
static PyObject *error_classes = NULL; /* dict: int code -> exception class */

PyObject *tfqpy_raise_code(tfq_code code, const char *msg) {
  PyObject *cls = NULL;
  if (error_classes != NULL) {
    PyObject *key = PyLong_FromLong((long)code);
    if (key == NULL) return NULL;
    cls = PyDict_GetItemWithError(error_classes, key); /* borrowed */
    Py_DECREF(key);
    if (cls == NULL && PyErr_Occurred()) return NULL;
  }
  if (cls == NULL) {
    PyErr_Format(PyExc_RuntimeError, "%s: %s", tfq_code_name(code), msg);
    return NULL;
  }
  PyObject *exc = PyObject_CallFunction(cls, "OOs", Py_None, Py_None, msg);
  if (exc != NULL) {
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
  }
  return NULL;
}

PyObject *tfqpy_raise(tfq_status *st) {
  return tfqpy_raise_code(tfq_status_code(st), tfq_status_message(st));
}

static PyObject *set_error_classes(PyObject *self, PyObject *arg) {
  if (!PyDict_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "_set_error_classes takes a dict {code: class}");
    return NULL;
  }
  Py_XDECREF(error_classes);
  Py_INCREF(arg);
  error_classes = arg;
  Py_RETURN_NONE;
}

/* ---- Tensor ------------------------------------------------------------------------------ */

static const char *buffer_format(tfq_dtype dt) {
  switch (dt) {
    case TFQ_FLOAT: return "f";
    case TFQ_DOUBLE: return "d";
    case TFQ_INT32: return "i";
    case TFQ_UINT8: return "B";
    case TFQ_INT16: return "h";
    case TFQ_INT8: return "b";
    case TFQ_INT64: return sizeof(long) == 8 ? "l" : "q"; /* numpy's int64 on LP64 */
    case TFQ_BOOL: return "?";
    case TFQ_UINT16: return "H";
    case TFQ_HALF: return "e";
    case TFQ_COMPLEX64: return "Zf";
    case TFQ_COMPLEX128: return "Zd";
    case TFQ_BFLOAT16: return "H"; /* no buffer format: its 16 bits, as uint16 */
    default: return NULL;          /* string */
  }
}

PyObject *tfqpy_tensor_wrap(tfq_tensor *t) {
  PyTypeObject *tp = (PyTypeObject *)tfqpy_tensor_type;
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  tfqpy_tensor_object *o = (tfqpy_tensor_object *)alloc(tp, 0);
  if (o == NULL) {
    tfq_tensor_free(t);
    return NULL;
  }
  o->t = t;
  o->exports = 0;
  o->ndim = tfq_tensor_rank(t);
  const int64_t *dims = tfq_tensor_dims(t);
  Py_ssize_t step = (Py_ssize_t)tfq_dtype_size(tfq_tensor_dtype(t));
  for (int i = o->ndim - 1; i >= 0; i--) {
    o->shape[i] = (Py_ssize_t)dims[i];
    o->strides[i] = step;
    step *= (Py_ssize_t)dims[i];
  }
  return (PyObject *)o;
}

PyObject *tfqpy_tuple_take(tfq_tuple *tup) {
  size_t n = tfq_tuple_size(tup);
  PyObject *res = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; res != NULL && i < n; i++) {
    PyObject *t = tfqpy_tensor_wrap(tfq_tensor_ref(tfq_tuple_get(tup, i)));
    if (t == NULL)
      Py_CLEAR(res);
    else
      PyTuple_SetItem(res, (Py_ssize_t)i, t);
  }
  tfq_tuple_free(tup);
  return res;
}

static void tensor_dealloc(PyObject *self) {
  tfqpy_tensor_object *o = (tfqpy_tensor_object *)self;
  PyTypeObject *tp = Py_TYPE(self);
  tfq_tensor_free(o->t);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  tfqpy_tensor_object *o = (tfqpy_tensor_object *)self;
  const char *fmt = buffer_format(tfq_tensor_dtype(o->t));
  if (fmt == NULL) {
    PyErr_Format(PyExc_BufferError, "a %s tensor has no buffer (use tfq's arrays)",
                 tfq_dtype_name(tfq_tensor_dtype(o->t)));
    view->obj = NULL;
    return -1;
  }
  /* Writable while this object holds the tensor's only reference (a batch's tensors do). */
  int readonly = tfq_tensor_refcount(o->t) != 1;
  if ((flags & PyBUF_WRITABLE) && readonly) {
    PyErr_SetString(PyExc_BufferError, "tensor is shared: read-only");
    view->obj = NULL;
    return -1;
  }
  view->buf = tfq_tensor_data(o->t);
  view->obj = self;
  Py_INCREF(self);
  view->len = (Py_ssize_t)tfq_tensor_byte_size(o->t);
  view->itemsize = (Py_ssize_t)tfq_dtype_size(tfq_tensor_dtype(o->t));
  view->readonly = readonly;
  view->ndim = o->ndim;
  view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
  view->shape = (flags & PyBUF_ND) ? o->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? o->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  o->exports++;
  return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view) {
  ((tfqpy_tensor_object *)self)->exports--;
}

static PyObject *tensor_dtype(PyObject *self, void *closure) {
  tfq_dtype dt = tfq_tensor_dtype(((tfqpy_tensor_object *)self)->t);
  return PyUnicode_FromString(tfq_dtype_name(dt));
}

static PyObject *tensor_shape(PyObject *self, void *closure) {
  tfqpy_tensor_object *o = (tfqpy_tensor_object *)self;
  PyObject *tup = PyTuple_New(o->ndim);
  if (tup == NULL) return NULL;
  for (int i = 0; i < o->ndim; i++) {
    PyObject *d = PyLong_FromSsize_t(o->shape[i]);
    if (d == NULL) {
      Py_DECREF(tup);
      return NULL;
    }
    PyTuple_SetItem(tup, i, d);
  }
  return tup;
}

static PyObject *tensor_is_string(PyObject *self, void *closure) {
  return PyBool_FromLong(tfq_tensor_dtype(((tfqpy_tensor_object *)self)->t) == TFQ_STRING);
}

/* The elements of a string tensor, row-major, as a list of bytes (copies: bytes own memory). */
static PyObject *tensor_strings(PyObject *self, PyObject *unused) {
  tfq_tensor *t = ((tfqpy_tensor_object *)self)->t;
  if (tfq_tensor_dtype(t) != TFQ_STRING) {
    PyErr_SetString(PyExc_TypeError, "not a string tensor");
    return NULL;
  }
  int64_t n = tfq_tensor_num_elements(t);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (list == NULL) return NULL;
  for (int64_t i = 0; i < n; i++) {
    size_t len = 0;
    const char *s = tfq_tensor_string(t, i, &len);
    PyObject *b = PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
    if (b == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, (Py_ssize_t)i, b);
  }
  return list;
}

/* Short strings repeat (categories, codes, flags): a direct-mapped cache of bytes objects (strong
 * references, GIL-protected: used only with the GIL held) hands out the same immutable object
 * for the same contents, which saves an allocation now and a deallocation when the batch dies.
 * A miss replaces the entry; at most BYTES_CACHE small objects stay alive. */
#define BYTES_CACHE 4096
#define BYTES_CACHE_MAXLEN 32
static PyObject *bytes_cache[BYTES_CACHE];
static const char *bytes_cache_data[BYTES_CACHE]; /* each entry's bytes and size, kept beside */
static size_t bytes_cache_len[BYTES_CACHE];       /* it so that a lookup reads no object */

static PyObject *cached_bytes(const char *s, size_t len, int *hit) {
  if (len > BYTES_CACHE_MAXLEN) return PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
  uint32_t h = 2166136261u ^ (uint32_t)len;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  size_t k = (h ^ (h >> 15)) & (BYTES_CACHE - 1);
  PyObject *b = bytes_cache[k];
  if (b != NULL && bytes_cache_len[k] == len && memcmp(bytes_cache_data[k], s, len) == 0) {
    ++*hit;
    return Py_NewRef(b);
  }
  b = PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
  if (b == NULL) return NULL;
  PyObject *old = bytes_cache[k];
  bytes_cache[k] = Py_NewRef(b);
  bytes_cache_data[k] = PyBytes_AsString(b);
  bytes_cache_len[k] = len;
  Py_XDECREF(old);
  return b;
}

/* strings_into(array): the elements of a string tensor as bytes, written straight into a
 * writable, C-contiguous buffer of object pointers (format "O": a numpy object array of as many
 * elements), replacing (and releasing) what it held -- one pass, no list in between, which is
 * most of a batch's cost in Python (tfq.data's string columns).  Returns None. */
static PyObject *tensor_strings_into(PyObject *self, PyObject *arr) {
  tfq_tensor *t = ((tfqpy_tensor_object *)self)->t;
  if (tfq_tensor_dtype(t) != TFQ_STRING) {
    PyErr_SetString(PyExc_TypeError, "not a string tensor");
    return NULL;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(arr, &view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
    return NULL;
  int64_t n = tfq_tensor_num_elements(t);
  if (view.format == NULL || strcmp(view.format, "O") != 0 ||
      view.itemsize != (Py_ssize_t)sizeof(PyObject *) ||
      view.len != (Py_ssize_t)(n * (int64_t)sizeof(PyObject *))) {
    PyBuffer_Release(&view);
    PyErr_SetString(PyExc_ValueError, "strings_into needs an object array of the tensor's size");
    return NULL;
  }
  PyObject **slots = view.buf;
  /* the cache serves columns whose values repeat: a column that misses most of its first 32
   * values (unique ids) makes its bytes directly for the rest of the call */
  int hits = 0, cache = 1;
  for (int64_t i = 0; i < n; i++) {
    size_t len = 0;
    const char *str = tfq_tensor_string(t, i, &len);
#if defined(__GNUC__)
    /* a shuffled batch's strings lie all over the reader's buffers: fetch ahead */
    if (i + 8 < n) __builtin_prefetch(tfq_tensor_string(t, i + 8, NULL));
#endif
    if (i == 32 && hits < 16) cache = 0;
    PyObject *b =
        cache ? cached_bytes(str, len, &hits) : PyBytes_FromStringAndSize(str, (Py_ssize_t)len);
    if (b == NULL) {
      PyBuffer_Release(&view);
      return NULL;
    }
    PyObject *old = slots[i];
    slots[i] = b;
    Py_XDECREF(old);
  }
  PyBuffer_Release(&view);
  Py_RETURN_NONE;
}

/* Debug accessors for the tests: the tensor's data address and its tfq reference count. */
static PyObject *tensor_address(PyObject *self, PyObject *unused) {
  return PyLong_FromVoidPtr(tfq_tensor_data(((tfqpy_tensor_object *)self)->t));
}

static PyObject *tensor_refcount(PyObject *self, PyObject *unused) {
  return PyLong_FromLongLong((long long)tfq_tensor_refcount(((tfqpy_tensor_object *)self)->t));
}

static PyMethodDef tensor_methods[] = {
    {"strings", tensor_strings, METH_NOARGS, "The elements of a string tensor as bytes, flat."},
    {"strings_into", tensor_strings_into, METH_O,
     "strings_into(object_array): the elements as bytes, into a numpy object array."},
    {"_address", tensor_address, METH_NOARGS, "The data address (debug: zero-copy tests)."},
    {"_refcount", tensor_refcount, METH_NOARGS, "tfq's reference count (debug)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tensor_getset[] = {
    {"dtype", tensor_dtype, NULL, "TF's dtype name", NULL},
    {"shape", tensor_shape, NULL, "the dims", NULL},
    {"is_string", tensor_is_string, NULL, "a string tensor", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tensor_slots[] = {
    {Py_tp_dealloc, (void *)tensor_dealloc},
    {Py_tp_methods, tensor_methods},
    {Py_tp_getset, tensor_getset},
    {Py_bf_getbuffer, (void *)tensor_getbuffer},
    {Py_bf_releasebuffer, (void *)tensor_releasebuffer},
    {Py_tp_doc, (void *)"A tfq tensor; numeric ones export the buffer protocol (zero-copy)."},
    {0, NULL}};

static PyType_Spec tensor_spec = {"tfq._tfq.Tensor", sizeof(tfqpy_tensor_object), 0,
                                  Py_TPFLAGS_DEFAULT, tensor_slots};

int tfqpy_tensor_init_type(PyObject *module) {
  tfqpy_tensor_type = PyType_FromSpec(&tensor_spec);
  if (tfqpy_tensor_type == NULL) return -1;
  Py_INCREF(tfqpy_tensor_type);
  return PyModule_AddObject(module, "Tensor", tfqpy_tensor_type);
}

/* ---- the module ---------------------------------------------------------------------------- */

static PyObject *version(PyObject *self, PyObject *unused) {
  return PyUnicode_FromString(tfq_version_string());
}

static PyMethodDef module_methods[] = {
    {"_set_error_classes", set_error_classes, METH_O, "tfq.errors registers its classes."},
    {"version", version, METH_NOARGS, "libtfq's version string."},
    {"decode_csv", tfqpy_decode_csv, METH_VARARGS, "tfq_decode_csv_lines: a tuple of Tensors."},
    {"parse_example", tfqpy_parse_example, METH_VARARGS, "(keys, sparse flags, Tensors)"},
    {"decode_raw", tfqpy_decode_raw, METH_VARARGS, "tfq_decode_raw: a Tensor [n, k]."},
    {"_watch_interrupts", tfqpy_watch_interrupts, METH_O, "Ctrl-C wakes Pipeline.next()."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                                        "_tfq",
                                        "tfq's C core (libtfq linked statically).",
                                        -1,
                                        module_methods,
                                        NULL,
                                        NULL,
                                        NULL,
                                        NULL};

PyMODINIT_FUNC PyInit__tfq(void);
PyMODINIT_FUNC PyInit__tfq(void) {
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  if (tfqpy_tensor_init_type(m) < 0 || tfqpy_pipeline_init_type(m) < 0 ||
      tfqpy_queue_init_type(m) < 0 || tfqpy_reader_init_type(m) < 0 ||
      tfqpy_train_init_type(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
