/* tfq._tfq.Coord and tfq._tfq.Runner: tfq's Coordinator and QueueRunner (tfq/coord.h) with the
 * library's ready-made C ops, for tfq.train (tfq/train.py).
 *
 * Coord() wraps a tfq_coord: request_stop(code, message) (code 0: a clean stop), should_stop(),
 * wait_for_stop(timeout_us), join(grace_us, ignore_live_threads) (raises the recorded error or
 * the straggler DeadlineExceeded), clear_stop(), error() -> None or (code, message).  The
 * blocking calls release the GIL.
 *
 * Runner(queue) wraps a tfq_runner for a tfq._tfq.Queue; ops are C step functions, so that no
 * Python code ever runs on a runner's threads:
 *   add_producer(components, num_epochs, shuffle, seed or None, tf_seeds or None) — the rows of
 *     `components` (queue.c's (dtype, shape, data) form), one epoch per step (producer.h);
 *   add_read_decode(reader, work_queue, csv or None, batch, components or None, threads) —
 * read_up_to → decode_csv → enqueue_many (ops.h); csv is (columns, delim, quote, na, select) as
 *     tfq.decode_csv's, components a list of (column indices, stack);
 *   add_transfer(from_queue, batch, threads) — dequeue_up_to → enqueue_many (ops.h).
 * start(coord or None), join() (the first error recorded), running(), num_errors().  A runner
 * holds references to the Python objects whose C handles its ops borrow (readers, queues). */
#include "tfqpy.h"

/* ---- Coord -------------------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD tfq_coord *c;
} coord_object;

static PyObject *coord_type = NULL;

static PyObject *coord_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  if (!PyArg_ParseTuple(args, ":Coord")) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_coord *c = NULL;
  PyObject *res = NULL;
  if (tfq_coord_new(&c, st) != TFQ_OK) {
    res = tfqpy_raise(st);
  } else {
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    res = alloc(tp, 0);
    if (res == NULL)
      tfq_coord_free(c);
    else
      ((coord_object *)res)->c = c;
  }
  tfq_status_free(st);
  return res;
}

static void coord_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  tfq_coord *c = ((coord_object *)self)->c;
  if (c != NULL) {
    /* runners still registered: stop them and wait for them (they hold no Python state) */
    (void)tfq_coord_request_stop(c, TFQ_OK, NULL);
    tfq_status *st = tfq_status_new();
    if (st != NULL) {
      Py_BEGIN_ALLOW_THREADS;
      if (tfq_coord_join(c, 10 * 1000000LL, 1, st) != TFQ_OK) tfq_status_clear(st);
      Py_END_ALLOW_THREADS;
      tfq_status_free(st);
    }
    tfq_coord_free(c);
  }
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

static tfq_coord *coord_get(PyObject *obj) {
  if (coord_type == NULL || !PyObject_TypeCheck(obj, (PyTypeObject *)coord_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a tfq._tfq.Coord");
    return NULL;
  }
  return ((coord_object *)obj)->c;
}

static PyObject *coord_request_stop(PyObject *self, PyObject *args) {
  int code = 0;
  const char *msg = NULL;
  if (!PyArg_ParseTuple(args, "|iz", &code, &msg)) return NULL;
  return PyLong_FromLong(
      (long)tfq_coord_request_stop(((coord_object *)self)->c, (tfq_code)code, msg));
}

static PyObject *coord_should_stop(PyObject *self, PyObject *unused) {
  return PyBool_FromLong(tfq_coord_should_stop(((coord_object *)self)->c));
}

static PyObject *coord_wait_for_stop(PyObject *self, PyObject *args) {
  long long us = -1;
  if (!PyArg_ParseTuple(args, "|L", &us)) return NULL;
  tfq_coord *c = ((coord_object *)self)->c;
  int r;
  /* waits in slices so that Ctrl-C (KeyboardInterrupt) wakes it */
  for (;;) {
    long long slice = us < 0 || us > 100000 ? 100000 : us;
    Py_BEGIN_ALLOW_THREADS;
    r = tfq_coord_wait_for_stop(c, (int64_t)slice);
    Py_END_ALLOW_THREADS;
    if (r || us == 0) break;
    if (us > 0 && (us -= slice) <= 0) break;
    if (PyErr_CheckSignals() < 0) return NULL;
  }
  return PyBool_FromLong(r);
}

static PyObject *coord_join(PyObject *self, PyObject *args) {
  long long grace = 120000000LL;
  int ignore = 0;
  if (!PyArg_ParseTuple(args, "|Lp", &grace, &ignore)) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code c;
  tfq_coord *co = ((coord_object *)self)->c;
  Py_BEGIN_ALLOW_THREADS;
  c = tfq_coord_join(co, (int64_t)grace, ignore, st);
  Py_END_ALLOW_THREADS;
  PyObject *res = c != TFQ_OK ? tfqpy_raise(st) : Py_NewRef(Py_None);
  tfq_status_free(st);
  return res;
}

static PyObject *coord_clear_stop(PyObject *self, PyObject *unused) {
  tfq_coord_clear_stop(((coord_object *)self)->c);
  Py_RETURN_NONE;
}

static PyObject *coord_joined(PyObject *self, PyObject *unused) {
  return PyBool_FromLong(tfq_coord_joined(((coord_object *)self)->c));
}

static PyObject *coord_error(PyObject *self, PyObject *unused) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code c = tfq_coord_error(((coord_object *)self)->c, st);
  PyObject *res =
      c == TFQ_OK ? Py_NewRef(Py_None) : Py_BuildValue("(is)", (int)c, tfq_status_message(st));
  tfq_status_free(st);
  return res;
}

static PyMethodDef coord_methods[] = {
    {"request_stop", coord_request_stop, METH_VARARGS, "request_stop([code[, message]]) -> code"},
    {"should_stop", coord_should_stop, METH_NOARGS, "a stop was requested"},
    {"wait_for_stop", coord_wait_for_stop, METH_VARARGS, "wait_for_stop([timeout_us]) -> bool"},
    {"join", coord_join, METH_VARARGS, "join([grace_us[, ignore_live_threads]])"},
    {"clear_stop", coord_clear_stop, METH_NOARGS, "clears the stop and the error"},
    {"joined", coord_joined, METH_NOARGS, "join has run"},
    {"error", coord_error, METH_NOARGS, "None or (code, message)"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot coord_slots[] = {{Py_tp_new, (void *)coord_new},
                                    {Py_tp_dealloc, (void *)coord_dealloc},
                                    {Py_tp_methods, coord_methods},
                                    {Py_tp_doc, (void *)"a tfq coordinator (use tfq.train)"},
                                    {0, NULL}};

static PyType_Spec coord_spec = {"tfq._tfq.Coord", sizeof(coord_object), 0, Py_TPFLAGS_DEFAULT,
                                 coord_slots};

/* ---- Runner ------------------------------------------------------------------------------- */

enum { OP_PRODUCER, OP_READ_DECODE, OP_TRANSFER };

typedef struct {
  int kind;
  void *op;
  tfq_csv_options *csv; /* OP_READ_DECODE: borrowed by the op */
} runner_op;

typedef struct {
  PyObject_HEAD tfq_runner *r;
  tfq_coord *coord; /* the coordinator it was started under (its object is in `refs`) */
  tfq_queue *q;     /* borrowed from the queue object in `refs` */
  PyObject *refs;   /* list: the Python objects whose handles the ops borrow */
  runner_op *ops;
  size_t nops, cap;
} runner_object;

static PyObject *runner_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  PyObject *qobj;
  if (!PyArg_ParseTuple(args, "O:Runner", &qobj)) return NULL;
  tfq_queue *q = tfqpy_queue_get(qobj);
  if (q == NULL) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_runner *r = NULL;
  PyObject *res = NULL;
  if (tfq_runner_new(q, &r, st) != TFQ_OK) {
    res = tfqpy_raise(st);
  } else {
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    res = alloc(tp, 0);
    PyObject *refs = res ? PyList_New(0) : NULL;
    if (refs == NULL || PyList_Append(refs, qobj) < 0) {
      Py_XDECREF(refs);
      Py_XDECREF(res);
      res = NULL;
      tfq_runner_free(r);
    } else {
      runner_object *o = (runner_object *)res;
      o->r = r;
      o->q = q;
      o->refs = refs;
    }
  }
  tfq_status_free(st);
  return res;
}

static void free_op(runner_op *op) {
  switch (op->kind) {
    case OP_PRODUCER: tfq_producer_free(op->op); break;
    case OP_READ_DECODE: tfq_read_decode_op_free(op->op); break;
    default: tfq_transfer_op_free(op->op); break;
  }
  tfq_csv_options_free(op->csv);
}

static void runner_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  runner_object *o = (runner_object *)self;
  if (o->r != NULL && o->coord != NULL && !tfq_coord_should_stop(o->coord) &&
      tfq_runner_running(o->r) > 0) {
    /* its threads run until the coordinator stops (as TF's do when the Python objects go):
     * they keep the runner, its ops and the objects those borrow -- left to them, not freed */
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
    return;
  }
  if (o->r != NULL) {
    tfq_runner *r = o->r;
    Py_BEGIN_ALLOW_THREADS;
    tfq_runner_free(r); /* joins the ops' threads */
    Py_END_ALLOW_THREADS;
  }
  for (size_t i = 0; i < o->nops; i++) free_op(&o->ops[i]);
  PyMem_Free(o->ops);
  Py_XDECREF(o->refs);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

/* Records an op (owned from here on) and adds it `threads` times to the runner. */
static PyObject *runner_add(runner_object *o, int kind, void *op, tfq_csv_options *csv,
                            tfq_step_fn step, int threads, tfq_status *st) {
  runner_op rec = {kind, op, csv};
  if (o->nops == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 4;
    runner_op *ops = PyMem_Realloc(o->ops, cap * sizeof *ops);
    if (ops == NULL) {
      free_op(&rec);
      return PyErr_NoMemory();
    }
    o->ops = ops;
    o->cap = cap;
  }
  o->ops[o->nops++] = rec;
  for (int i = 0; i < threads; i++)
    if (tfq_runner_add_op(o->r, step, op, "enqueue", st) != TFQ_OK) return tfqpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *runner_add_producer(PyObject *self, PyObject *args) {
  runner_object *o = (runner_object *)self;
  PyObject *comps, *seed, *tf_seeds;
  long long epochs;
  int shuffle;
  if (!PyArg_ParseTuple(args, "OLpOO", &comps, &epochs, &shuffle, &seed, &tf_seeds)) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  PyObject *res = NULL;
  tfq_producer_options *po = NULL;
  tfq_producer *p = NULL;
  tfq_tuple *rows = tfqpy_make_tuple(comps, st);
  if (rows == NULL) goto done;
  if (tfq_producer_options_new(&po, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  tfq_producer_options_set_num_epochs(po, (int64_t)epochs);
  tfq_producer_options_set_shuffle(po, shuffle);
  if (seed != Py_None) {
    unsigned long long s = PyLong_AsUnsignedLongLongMask(seed);
    if (PyErr_Occurred()) goto done;
    tfq_producer_options_set_seed(po, (uint64_t)s);
  }
  if (tf_seeds != Py_None) {
    long long s1, s2;
    if (!PyArg_ParseTuple(tf_seeds, "LL", &s1, &s2)) goto done;
    tfq_producer_options_set_tf_seeds(po, (int64_t)s1, (int64_t)s2);
  }
  if (tfq_producer_new(o->q, rows, po, &p, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  res = runner_add(o, OP_PRODUCER, p, NULL, tfq_producer_step, 1, st);
done:
  tfq_tuple_free(rows);
  tfq_producer_options_free(po);
  tfq_status_free(st);
  return res;
}

static PyObject *runner_add_read_decode(PyObject *self, PyObject *args) {
  runner_object *o = (runner_object *)self;
  PyObject *robj, *wobj, *csvspec, *comps;
  long long batch;
  int threads;
  if (!PyArg_ParseTuple(args, "OOOLOi", &robj, &wobj, &csvspec, &batch, &comps, &threads))
    return NULL;
  tfq_reader *reader = tfqpy_reader_get(robj);
  tfq_queue *work = reader ? tfqpy_queue_get(wobj) : NULL;
  if (work == NULL) return NULL;
  if (PyList_Append(o->refs, robj) < 0 || PyList_Append(o->refs, wobj) < 0) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  PyObject *res = NULL;
  tfq_csv_options *csv = NULL;
  tfq_read_decode_op *op = NULL;
  size_t *cols = NULL;
  if (csvspec != Py_None) {
    PyObject *ccols, *delim, *na, *select;
    int quote;
    if (!PyArg_ParseTuple(csvspec, "OOpOO", &ccols, &delim, &quote, &na, &select)) goto done;
    if (tfq_csv_options_new(&csv, st) != TFQ_OK) {
      tfqpy_raise(st);
      goto done;
    }
    if (tfqpy_csv_set_options(csv, ccols, delim, quote, na, select, st) < 0) goto done;
  }
  if (tfq_read_decode_op_new(reader, work, csv, (int64_t)batch, o->q, &op, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  if (comps != Py_None) {
    Py_ssize_t n = PySequence_Size(comps);
    if (n < 0) goto fail_op;
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *cidx, *comp = PySequence_GetItem(comps, i);
      int stack;
      if (comp == NULL) goto fail_op;
      int ok = PyArg_ParseTuple(comp, "Op", &cidx, &stack);
      Py_ssize_t k = ok ? PySequence_Size(cidx) : -1;
      if (k < 1) {
        Py_DECREF(comp);
        if (k == 0) PyErr_SetString(PyExc_ValueError, "a component needs a column");
        goto fail_op;
      }
      PyMem_Free(cols);
      cols = PyMem_Malloc(sizeof *cols * (size_t)k);
      for (Py_ssize_t j = 0; cols && j < k; j++) {
        PyObject *x = PySequence_GetItem(cidx, j);
        cols[j] = x ? (size_t)PyLong_AsSsize_t(x) : 0;
        Py_XDECREF(x);
      }
      Py_DECREF(comp);
      if (cols == NULL) {
        PyErr_NoMemory();
        goto fail_op;
      }
      if (PyErr_Occurred()) goto fail_op;
      if (tfq_read_decode_op_add_component(op, cols, (size_t)k, stack, st) != TFQ_OK) {
        tfqpy_raise(st);
        goto fail_op;
      }
    }
  }
  res = runner_add(o, OP_READ_DECODE, op, csv, tfq_read_decode_step, threads, st);
  csv = NULL;
  goto done;
fail_op:
  tfq_read_decode_op_free(op);
done:
  PyMem_Free(cols);
  tfq_csv_options_free(csv);
  tfq_status_free(st);
  return res;
}

static PyObject *runner_add_transfer(PyObject *self, PyObject *args) {
  runner_object *o = (runner_object *)self;
  PyObject *fobj;
  long long batch;
  int threads;
  if (!PyArg_ParseTuple(args, "OLi", &fobj, &batch, &threads)) return NULL;
  tfq_queue *from = tfqpy_queue_get(fobj);
  if (from == NULL) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_transfer_op *op = NULL;
  PyObject *res;
  if (tfq_transfer_op_new(from, o->q, (int64_t)batch, &op, st) != TFQ_OK)
    res = tfqpy_raise(st);
  else
    res = runner_add(o, OP_TRANSFER, op, NULL, tfq_transfer_step, threads, st);
  tfq_status_free(st);
  return res;
}

static PyObject *runner_start(PyObject *self, PyObject *args) {
  runner_object *o = (runner_object *)self;
  PyObject *cobj;
  if (!PyArg_ParseTuple(args, "O", &cobj)) return NULL;
  tfq_coord *c = NULL;
  if (cobj != Py_None) {
    c = coord_get(cobj);
    if (c == NULL) return NULL;
    if (PyList_Append(o->refs, cobj) < 0) return NULL;
    o->coord = c;
  }
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code code;
  tfq_runner *r = o->r;
  Py_BEGIN_ALLOW_THREADS;
  code = tfq_runner_start(r, c, 0, st);
  Py_END_ALLOW_THREADS;
  PyObject *res = code != TFQ_OK ? tfqpy_raise(st) : Py_NewRef(Py_None);
  tfq_status_free(st);
  return res;
}

static PyObject *runner_join(PyObject *self, PyObject *unused) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code code;
  tfq_runner *r = ((runner_object *)self)->r;
  Py_BEGIN_ALLOW_THREADS;
  code = tfq_runner_join(r, st);
  Py_END_ALLOW_THREADS;
  PyObject *res = code != TFQ_OK ? tfqpy_raise(st) : Py_NewRef(Py_None);
  tfq_status_free(st);
  return res;
}

static PyObject *runner_running(PyObject *self, PyObject *unused) {
  return PyLong_FromLong(tfq_runner_running(((runner_object *)self)->r));
}

static PyObject *runner_num_errors(PyObject *self, PyObject *unused) {
  return PyLong_FromLong(tfq_runner_num_errors(((runner_object *)self)->r));
}

static PyMethodDef runner_methods[] = {
    {"add_producer", runner_add_producer, METH_VARARGS,
     "add_producer(components, num_epochs, shuffle, seed, tf_seeds)"},
    {"add_read_decode", runner_add_read_decode, METH_VARARGS,
     "add_read_decode(reader, work_queue, csv, batch, components, threads)"},
    {"add_transfer", runner_add_transfer, METH_VARARGS, "add_transfer(from_queue, batch, threads)"},
    {"start", runner_start, METH_VARARGS, "start(coord or None)"},
    {"join", runner_join, METH_NOARGS, "waits for the ops; raises the first error"},
    {"running", runner_running, METH_NOARGS, "op threads still running"},
    {"num_errors", runner_num_errors, METH_NOARGS, "errors recorded by the last start"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot runner_slots[] = {{Py_tp_new, (void *)runner_new},
                                     {Py_tp_dealloc, (void *)runner_dealloc},
                                     {Py_tp_methods, runner_methods},
                                     {Py_tp_doc, (void *)"a tfq queue runner (use tfq.train)"},
                                     {0, NULL}};

static PyType_Spec runner_spec = {"tfq._tfq.Runner", sizeof(runner_object), 0, Py_TPFLAGS_DEFAULT,
                                  runner_slots};

int tfqpy_train_init_type(PyObject *module) {
  coord_type = PyType_FromSpec(&coord_spec);
  if (coord_type == NULL) return -1;
  Py_INCREF(coord_type); /* kept for coord_get */
  if (PyModule_AddObject(module, "Coord", coord_type) < 0) return -1;
  PyObject *rt = PyType_FromSpec(&runner_spec);
  if (rt == NULL) return -1;
  return PyModule_AddObject(module, "Runner", rt);
}
