/* The CPython extension tfq._tfq (python/README: docs/python.md): shared declarations.
 *
 * Written against the stable ABI of CPython 3.11 (Py_LIMITED_API, set by meson's limited_api):
 * heap types from PyType_Spec, no access to the interpreter's structs.  Python is never called
 * from a tfq thread: every callback that the library makes (the bad-record reports) runs on the
 * consumer's thread inside tfq_pipeline_next() with the GIL released, so it only records into C
 * memory; the records are handed to Python after the call, with the GIL held again. */
#ifndef TFQ_PY_H
#define TFQ_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tfq/tfq.h>

/* A tfq tensor owned by Python.  Numeric tensors export a C-contiguous Py_buffer (numpy's
 * np.asarray / np.frombuffer view it without a copy, and the array's base keeps the object, and
 * so the tensor, alive).  String tensors give their elements as bytes (tfqpy_tensor_strings). */
typedef struct {
  PyObject_HEAD tfq_tensor *t;
  int ndim;
  int exports; /* live Py_buffer views */
  Py_ssize_t shape[TFQ_MAX_RANK];
  Py_ssize_t strides[TFQ_MAX_RANK];
} tfqpy_tensor_object;

/* Module state kept in statics: the module is single-phase and the types are made once. */
extern PyObject *tfqpy_tensor_type;
extern PyObject *tfqpy_pipeline_type;

/* Wraps `t`, taking the caller's reference (freed here on failure). */
PyObject *tfqpy_tensor_wrap(tfq_tensor *t);
/* A Python tuple of Tensors for the slots of `tup`; takes (frees) `tup`.  NULL with an
 * exception on failure. */
PyObject *tfqpy_tuple_take(tfq_tuple *tup);
int tfqpy_tensor_init_type(PyObject *module);
int tfqpy_pipeline_init_type(PyObject *module);
int tfqpy_queue_init_type(PyObject *module);
int tfqpy_reader_init_type(PyObject *module);
/* The tfq_queue of a tfq._tfq.Queue (borrowed, valid while the object lives); NULL with a
 * TypeError for anything else (queue.c). */
tfq_queue *tfqpy_queue_get(PyObject *obj);

/* The tfq_reader of a tfq._tfq.Reader (borrowed, valid while the object lives); NULL with a
 * TypeError for anything else (reader.c). */
tfq_reader *tfqpy_reader_get(PyObject *obj);
/* A new tuple from a sequence of (dtype code, shape, data) components, queue.c's form; NULL with
 * an exception. */
tfq_tuple *tfqpy_make_tuple(PyObject *comps, tfq_status *st);
/* decode_csv's options from tfq.decode_csv's arguments (ops.c); -1 with an exception. */
int tfqpy_csv_set_options(tfq_csv_options *o, PyObject *cols, PyObject *delim, int quote,
                          PyObject *na, PyObject *select, tfq_status *st);
/* _tfq._watch_interrupts(fd): Ctrl-C wakes a pipeline's next() (pipeline.c). */
PyObject *tfqpy_watch_interrupts(PyObject *self, PyObject *arg);
/* Around a blocking call on the main thread (pipeline.c): a Ctrl-C then triggers `cancel`.
 * arm: 0 (*armed set), or -1 with KeyboardInterrupt already pending; disarm: nonzero if the
 * watcher triggered `cancel` during the call. */
int tfqpy_watch_arm_cancel(tfq_cancel *cancel, int *armed);
int tfqpy_watch_disarm(int armed);
/* tfq._tfq.Coord and tfq._tfq.Runner (train.c). */
int tfqpy_train_init_type(PyObject *module);

/* _tfq.decode_csv, parse_example, decode_raw (ops.c). */
PyObject *tfqpy_decode_csv(PyObject *self, PyObject *args);
PyObject *tfqpy_parse_example(PyObject *self, PyObject *args);
PyObject *tfqpy_decode_raw(PyObject *self, PyObject *args);
/* A config from a list of (key, kind 'fixed'|'var'|'seq', dtype code, shape tuple or None,
 * flat default values or None), tfq.io's form (pipeline.c).  -1 with an exception; *cfg is
 * then the caller's to free too. */
int tfqpy_build_features(tfq_example_config **cfg, PyObject *feats, tfq_status *st);

/* Raises the Python exception for a failed tfq call: the class registered for the code by
 * tfq.errors (_tfq._set_error_classes), called as TF's OpError is: cls(None, None, message);
 * before registration a RuntimeError.  Returns NULL. */
PyObject *tfqpy_raise(tfq_status *st);
/* As tfqpy_raise for a code and a message without a status. */
PyObject *tfqpy_raise_code(tfq_code code, const char *msg);

#endif
