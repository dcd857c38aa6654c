/* tfq._tfq.Pipeline: tfq_pipeline (tfq/pipeline.h) for tfq.data.
 *
 * Pipeline(files, options) takes the options as a dict of the keys below (tfq.data builds it);
 * every blocking or decoding call (next, save, restore, start) runs with the GIL released.
 * Bad records within the budget are reported by the library on the consumer's thread inside
 * tfq_pipeline_next(), with the GIL released: bad_record() only copies them into C memory, and
 * next() hands them to the Python callback (options["on_bad_record"]) after the call.
 * A pipeline is bound to the process that made it: used after fork() in a child it raises
 * RuntimeError (the reader threads do not survive a fork). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfqpy.h"

/* ---- Ctrl-C during next() ----------------------------------------------------------------------
 * tfq_pipeline_next() has no timeout, so a thread watches a pipe that Python's C signal handler
 * writes each signal's number to (signal.set_wakeup_fd, set by tfq.data when nobody else owns it:
 * _watch_interrupts(fd)).  While the main thread is inside next() (armed), a SIGINT byte makes
 * the watcher stop that pipeline (tfq_pipeline_stop); next() then returns CANCELLED, and the main
 * thread, with the GIL back, runs PyErr_CheckSignals(): KeyboardInterrupt.  The watcher never
 * calls Python.  A pipeline interrupted so is stopped for good (later calls: CancelledError).
 * A reader's read (reader.c) arms it with a tfq_cancel instead: the byte triggers it, the read
 * fails with CANCELLED while it waits for a work unit (nothing is taken from the queue). */
static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static tfq_pipeline *watch_armed = NULL; /* the pipeline in next() on the main thread */
static tfq_cancel *watch_cancel = NULL;  /* or the cancel of a blocking read on it */
static int watch_hit = 0;                /* the watcher stopped watch_armed */
static int watch_fd = -1;
static unsigned long watch_main = 0; /* the main thread's PyThread ident */

static void *watch_loop(void *arg) {
  (void)arg;
  for (;;) {
    unsigned char buf[64];
    ssize_t n = read(watch_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return NULL;
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] != SIGINT) continue;
      pthread_mutex_lock(&watch_mu);
      if ((watch_armed != NULL || watch_cancel != NULL) && !watch_hit) {
        watch_hit = 1;
        if (watch_armed != NULL) tfq_pipeline_stop(watch_armed);
        if (watch_cancel != NULL) tfq_cancel_trigger(watch_cancel);
      }
      pthread_mutex_unlock(&watch_mu);
    }
  }
}

/* _watch_interrupts(fd): from the main thread, once; fd the read end of the wakeup pipe. */
PyObject *tfqpy_watch_interrupts(PyObject *self, PyObject *arg) {
  int fd = (int)PyLong_AsLong(arg);
  if (fd < 0 && PyErr_Occurred()) return NULL;
  if (watch_fd >= 0) Py_RETURN_FALSE;
  watch_fd = fd;
  watch_main = PyThread_get_thread_ident();
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &attr, watch_loop, NULL);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    watch_fd = -1;
    Py_RETURN_FALSE;
  }
  Py_RETURN_TRUE;
}

/* Arms the watcher for `p` or `cancel` when on the main thread; -1 with KeyboardInterrupt if a
 * SIGINT is already pending (it came before the arming: its byte may be gone). */
static int watch_arm_either(tfq_pipeline *p, tfq_cancel *cancel, int *armed) {
  *armed = 0;
  if (watch_fd < 0 || PyThread_get_thread_ident() != watch_main) return 0;
  pthread_mutex_lock(&watch_mu);
  watch_armed = p;
  watch_cancel = cancel;
  watch_hit = 0;
  pthread_mutex_unlock(&watch_mu);
  *armed = 1;
  if (PyErr_CheckSignals() < 0) {
    pthread_mutex_lock(&watch_mu);
    watch_armed = NULL;
    watch_cancel = NULL;
    pthread_mutex_unlock(&watch_mu);
    *armed = 0;
    return -1;
  }
  return 0;
}

static int watch_arm(tfq_pipeline *p, int *armed) { return watch_arm_either(p, NULL, armed); }

/* Disarms; nonzero if the watcher stopped the pipeline (or triggered the cancel) during the
 * call. */
static int watch_disarm(int armed) {
  if (!armed) return 0;
  pthread_mutex_lock(&watch_mu);
  int hit = watch_hit;
  watch_armed = NULL;
  watch_cancel = NULL;
  watch_hit = 0;
  pthread_mutex_unlock(&watch_mu);
  return hit;
}

int tfqpy_watch_arm_cancel(tfq_cancel *cancel, int *armed) {
  return watch_arm_either(NULL, cancel, armed);
}

int tfqpy_watch_disarm(int armed) { return watch_disarm(armed); }

PyObject *tfqpy_pipeline_type = NULL;

typedef struct {
  PyObject_HEAD tfq_pipeline *p;
  tfq_example_config *cfg; /* borrowed by p: freed after it */
  PyObject *on_bad;        /* callable(where: str, reason: str) or NULL */
  char **bad;              /* "where\0reason" reports collected during next() */
  size_t n_bad, cap_bad;
  int bad_oom;
  pid_t pid;
  int started, busy, closing;
} pipeline_object;

static void bad_record(void *ctx, const char *where, const char *reason) {
  pipeline_object *o = ctx; /* the consumer's thread, GIL released: C memory only */
  if (o->n_bad == o->cap_bad) {
    size_t cap = o->cap_bad ? 2 * o->cap_bad : 16;
    char **b = realloc(o->bad, cap * sizeof *b);
    if (b == NULL) {
      o->bad_oom = 1;
      return;
    }
    o->bad = b;
    o->cap_bad = cap;
  }
  size_t lw = strlen(where), lr = strlen(reason);
  char *s = malloc(lw + lr + 2);
  if (s == NULL) {
    o->bad_oom = 1;
    return;
  }
  memcpy(s, where, lw + 1);
  memcpy(s + lw + 1, reason, lr + 1);
  o->bad[o->n_bad++] = s;
}

/* Hands the collected reports to the callback, in input order.  -1 with an exception set. */
static int flush_bad(pipeline_object *o) {
  int rc = 0;
  for (size_t i = 0; i < o->n_bad; i++) {
    char *s = o->bad[i];
    if (rc == 0 && o->on_bad != NULL) {
      PyObject *r = PyObject_CallFunction(o->on_bad, "ss", s, s + strlen(s) + 1);
      if (r == NULL) rc = -1;
      Py_XDECREF(r);
    }
    free(s);
  }
  o->n_bad = 0;
  if (rc == 0 && o->bad_oom) {
    o->bad_oom = 0;
    PyErr_NoMemory();
    rc = -1;
  }
  return rc;
}

static int raise_st(tfq_status *st) {
  tfqpy_raise(st);
  return -1;
}

/* ---- options from the dict ------------------------------------------------------------------ */

/* 1 and *v set when `key` is present and not None, 0 when absent, -1 with an exception. */
static int opt_i64(PyObject *d, const char *key, int64_t *v) {
  PyObject *x = PyDict_GetItemString(d, key);
  if (x == NULL || x == Py_None) return 0;
  long long n = PyLong_AsLongLong(x);
  if (n == -1 && PyErr_Occurred()) return -1;
  *v = (int64_t)n;
  return 1;
}

static int opt_str(PyObject *d, const char *key, const char **v) {
  PyObject *x = PyDict_GetItemString(d, key);
  if (x == NULL || x == Py_None) return 0;
  *v = PyUnicode_AsUTF8AndSize(x, NULL);
  return *v == NULL ? -1 : 1;
}

/* A FixedLen default or FixedLenSequence padding from a flat list of values. */
static int default_tensor(PyObject *vals, tfq_dtype dt, tfq_tensor **out, tfq_status *st) {
  Py_ssize_t n = PySequence_Size(vals);
  if (n < 0) return -1;
  int64_t dims[1] = {(int64_t)n};
  if (tfq_tensor_new(dt, dims, 1, out, st) != TFQ_OK) return raise_st(st);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PySequence_GetItem(vals, i);
    if (x == NULL) return -1;
    int bad = 0;
    if (dt == TFQ_FLOAT) {
      double v = PyFloat_AsDouble(x);
      bad = v == -1.0 && PyErr_Occurred();
      ((float *)tfq_tensor_data(*out))[i] = (float)v;
    } else if (dt == TFQ_INT64) {
      long long v = PyLong_AsLongLong(x);
      bad = v == -1 && PyErr_Occurred();
      ((int64_t *)tfq_tensor_data(*out))[i] = (int64_t)v;
    } else {
      char *b;
      Py_ssize_t len;
      bad = PyBytes_AsStringAndSize(x, &b, &len) < 0;
      if (!bad && tfq_tensor_set_string(*out, i, b, (size_t)len, st) != TFQ_OK) {
        tfqpy_raise(st);
        bad = 1;
      }
    }
    Py_DECREF(x);
    if (bad) return -1;
  }
  return 0;
}

/* A SparseFeature: `extra` is (index_keys, value_key, already_sorted), the sizes the shape.
 * 0, or -1 with an exception. */
static int add_sparse(tfq_example_config *cfg, const char *key, tfq_dtype dtype,
                      const int64_t *dims, int rank, PyObject *extra, tfq_status *st) {
  PyObject *index_keys;
  const char *value_key;
  int sorted = 0;
  if (!PyArg_ParseTuple(extra, "Osp", &index_keys, &value_key, &sorted)) return -1;
  Py_ssize_t n = PySequence_Size(index_keys);
  if (n < 0) return -1;
  if (n > TFQ_MAX_RANK || n != rank) {
    PyErr_SetString(PyExc_ValueError, "SparseFeature: one size per index key");
    return -1;
  }
  const char *names[TFQ_MAX_RANK];
  PyObject *items[TFQ_MAX_RANK];
  Py_ssize_t got = 0;
  int rc = 0;
  for (; got < n; got++) {
    items[got] = PySequence_GetItem(index_keys, got);
    names[got] = items[got] ? PyUnicode_AsUTF8AndSize(items[got], NULL) : NULL;
    if (names[got] == NULL) {
      Py_XDECREF(items[got]);
      rc = -1;
      break;
    }
  }
  if (rc == 0 && tfq_example_config_add_sparse(cfg, key, names, (size_t)n, value_key, dtype, dims,
                                               sorted, st) != TFQ_OK) {
    tfqpy_raise(st);
    rc = -1;
  }
  for (Py_ssize_t k = 0; k < got; k++) Py_DECREF(items[k]);
  return rc;
}

int tfqpy_build_features(tfq_example_config **cfg, PyObject *feats, tfq_status *st) {
  if (tfq_example_config_new(cfg, st) != TFQ_OK) return raise_st(st);
  Py_ssize_t n = PySequence_Size(feats);
  if (n < 0) return -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *f = PySequence_GetItem(feats, i);
    if (f == NULL) return -1;
    const char *key, *kind;
    int dtype;
    PyObject *shape, *vals;
    if (!PyArg_ParseTuple(f, "ssiOO", &key, &kind, &dtype, &shape, &vals)) {
      Py_DECREF(f);
      return -1;
    }
    int64_t dims[TFQ_MAX_RANK];
    int rank = TFQ_UNKNOWN_RANK;
    if (shape != Py_None) {
      Py_ssize_t r = PySequence_Size(shape);
      if (r < 0 || r > TFQ_MAX_RANK) {
        if (r >= 0) PyErr_SetString(PyExc_ValueError, "shape has too many dims");
        Py_DECREF(f);
        return -1;
      }
      rank = (int)r;
      for (int k = 0; k < rank; k++) {
        PyObject *x = PySequence_GetItem(shape, k);
        dims[k] = x == Py_None ? TFQ_UNKNOWN_DIM : (int64_t)PyLong_AsLongLong(x);
        Py_XDECREF(x);
      }
      if (PyErr_Occurred()) {
        Py_DECREF(f);
        return -1;
      }
    }
    tfq_tensor *def = NULL;
    tfq_code c = TFQ_OK;
    int rc = 0;
    if (vals != Py_None && strcmp(kind, "sparse") != 0)
      rc = default_tensor(vals, (tfq_dtype)dtype, &def, st);
    if (rc == 0) {
      if (strcmp(kind, "sparse") == 0)
        rc = add_sparse(*cfg, key, (tfq_dtype)dtype, dims, rank, vals, st);
      else if (strcmp(kind, "var") == 0)
        c = tfq_example_config_add_var_len(*cfg, key, (tfq_dtype)dtype, st);
      else if (strcmp(kind, "seq") == 0)
        c = tfq_example_config_add_fixed_len_sequence(*cfg, key, (tfq_dtype)dtype, dims, rank, 1,
                                                      def, st);
      else
        c = tfq_example_config_add_fixed_len(*cfg, key, (tfq_dtype)dtype, dims, rank, def, st);
      if (c != TFQ_OK) {
        tfqpy_raise(st);
        rc = -1;
      }
    }
    tfq_tensor_free(def);
    Py_DECREF(f);
    if (rc < 0) return -1;
  }
  return 0;
}

#define SET_I64(key, call)         \
  do {                             \
    int64_t v_;                    \
    int r_ = opt_i64(d, key, &v_); \
    if (r_ < 0) return -1;         \
    if (r_ > 0) call;              \
  } while (0)

static int apply_options(pipeline_object *self, tfq_pipeline_options *o, PyObject *d,
                         tfq_status *st) {
  const char *s;
  int r;
  SET_I64("format", tfq_pipeline_options_set_format(o, (tfq_format)v_));
  SET_I64("compression", tfq_pipeline_options_set_compression(o, (tfq_compression)v_));
  if ((r = opt_str(d, "columns", &s)) < 0) return -1;
  if (r && tfq_pipeline_options_set_columns(o, s, st) != TFQ_OK) return raise_st(st);
  if ((r = opt_str(d, "na_value", &s)) < 0) return -1;
  if (r && tfq_pipeline_options_set_na_value(o, s, st) != TFQ_OK) return raise_st(st);
  if ((r = opt_str(d, "field_delim", &s)) < 0) return -1;
  if (r) {
    if (strlen(s) != 1) {
      PyErr_SetString(PyExc_ValueError, "field_delim should be only 1 char");
      return -1;
    }
    tfq_pipeline_options_set_field_delim(o, s[0]);
  }
  if ((r = opt_str(d, "sample_file", &s)) < 0) return -1;
  if (r && tfq_pipeline_options_set_sample_file(o, s, st) != TFQ_OK) return raise_st(st);
  SET_I64("use_quote_delim", tfq_pipeline_options_set_use_quote_delim(o, (int)v_));
  SET_I64("header", tfq_pipeline_options_set_header(o, (int)v_));
  SET_I64("skip_header_lines", tfq_pipeline_options_set_skip_header_lines(o, v_));
  SET_I64("infer_rows", tfq_pipeline_options_set_infer_rows(o, v_));
  SET_I64("ragged", tfq_pipeline_options_set_ragged_sequences(o, (int)v_));
  SET_I64("keys", tfq_pipeline_options_set_keys(o, (int)v_));
  SET_I64("batch_size", tfq_pipeline_options_set_batch_size(o, v_));
  SET_I64("drop_remainder", tfq_pipeline_options_set_drop_remainder(o, (int)v_));
  SET_I64("shuffle", tfq_pipeline_options_set_shuffle(o, (int)v_));
  SET_I64("capacity", tfq_pipeline_options_set_capacity(o, v_));
  SET_I64("min_after_dequeue", tfq_pipeline_options_set_min_after_dequeue(o, v_));
  SET_I64("seed", tfq_pipeline_options_set_seed(o, (uint64_t)v_));
  SET_I64("num_epochs", tfq_pipeline_options_set_num_epochs(o, v_));
  SET_I64("num_threads", tfq_pipeline_options_set_num_threads(o, (int)v_));
  SET_I64("step", tfq_pipeline_options_set_step(o, v_));
  SET_I64("max_bad_records", tfq_pipeline_options_set_max_bad_records(o, v_));
  SET_I64("deterministic", tfq_pipeline_options_set_deterministic(o, (int)v_));
  PyObject *x = PyDict_GetItemString(d, "shard");
  if (x != NULL && x != Py_None) {
    long long i, n;
    if (!PyArg_ParseTuple(x, "LL", &i, &n)) return -1;
    tfq_pipeline_options_set_shard(o, i, n);
  }
  x = PyDict_GetItemString(d, "select_cols");
  if (x != NULL && x != Py_None) {
    Py_ssize_t n = PySequence_Size(x);
    if (n < 0) return -1;
    int64_t *cols = PyMem_Malloc(sizeof *cols * (size_t)(n ? n : 1));
    if (cols == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *c = PySequence_GetItem(x, i);
      cols[i] = c ? (int64_t)PyLong_AsLongLong(c) : -1;
      Py_XDECREF(c);
    }
    tfq_code c = PyErr_Occurred() ? TFQ_UNKNOWN
                                  : tfq_pipeline_options_set_select_cols(o, cols, (size_t)n, st);
    PyMem_Free(cols);
    if (PyErr_Occurred()) return -1;
    if (c != TFQ_OK) return raise_st(st);
  }
  x = PyDict_GetItemString(d, "fixed_length");
  if (x != NULL && x != Py_None) {
    long long a, b, c, e;
    if (!PyArg_ParseTuple(x, "LLLL", &a, &b, &c, &e)) return -1;
    tfq_pipeline_options_set_fixed_length(o, a, b, c, e);
  }
  x = PyDict_GetItemString(d, "features");
  if (x != NULL && x != Py_None) {
    if (tfqpy_build_features(&self->cfg, x, st) < 0) return -1;
    tfq_pipeline_options_set_features(o, self->cfg);
  }
  x = PyDict_GetItemString(d, "on_bad_record");
  if (x != NULL && x != Py_None) {
    Py_INCREF(x);
    self->on_bad = x;
    tfq_pipeline_options_set_bad_record_fn(o, bad_record, self);
  }
  return 0;
}

/* ---- the type ---------------------------------------------------------------------------------
 */

static int check_usable(pipeline_object *o) {
  if (o->p == NULL) {
    PyErr_SetString(PyExc_ValueError, "the pipeline is closed");
    return -1;
  }
  if (o->pid != getpid()) {
    PyErr_Format(PyExc_RuntimeError,
                 "this tfq pipeline was made in process %ld and cannot run in process %ld made by "
                 "fork() (its threads do not survive a fork): make the pipeline in the child, "
                 "e.g. in the DataLoader's worker_init_fn or on first iteration",
                 (long)o->pid, (long)getpid());
    return -1;
  }
  if (o->busy) {
    PyErr_SetString(PyExc_RuntimeError, "the pipeline is in use by another thread");
    return -1;
  }
  return 0;
}

static void release(pipeline_object *o) {
  /* In a forked child the reader threads of the parent do not exist: freeing would wait for
   * them, so the child leaves the parent's pipeline to the process's exit. */
  if (o->p != NULL && (o->pid == getpid() || !o->started)) {
    tfq_pipeline *p = o->p;
    Py_BEGIN_ALLOW_THREADS tfq_pipeline_free(p);
    Py_END_ALLOW_THREADS
  }
  o->p = NULL;
  tfq_example_config_free(o->cfg);
  o->cfg = NULL;
  for (size_t i = 0; i < o->n_bad; i++) free(o->bad[i]);
  free(o->bad);
  o->bad = NULL;
  o->n_bad = o->cap_bad = 0;
}

static PyObject *pipeline_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  PyObject *files, *opts;
  if (!PyArg_ParseTuple(args, "OO!:Pipeline", &files, &PyDict_Type, &opts)) return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  pipeline_object *self = (pipeline_object *)alloc(tp, 0);
  if (self == NULL) return NULL;
  self->pid = getpid();
  tfq_status *st = tfq_status_new();
  tfq_pipeline_options *o = NULL;
  if (st == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  int rc = -1;
  if (tfq_pipeline_options_new(&o, st) != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  Py_ssize_t n = PySequence_Size(files);
  if (n < 0) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *f = PySequence_GetItem(files, i);
    if (f == NULL) goto done;
    PyObject *b = NULL;
    int ok = PyUnicode_FSConverter(f, &b);
    Py_DECREF(f);
    if (!ok) goto done;
    tfq_code c = tfq_pipeline_options_add_file(o, PyBytes_AsString(b), st);
    Py_DECREF(b);
    if (c != TFQ_OK) {
      tfqpy_raise(st);
      goto done;
    }
  }
  if (apply_options(self, o, opts, st) < 0) goto done;
  tfq_code c;
  tfq_pipeline *p = NULL;
  Py_BEGIN_ALLOW_THREADS c = tfq_pipeline_new(o, &p, st); /* reads samples, headers */
  Py_END_ALLOW_THREADS if (c != TFQ_OK) {
    tfqpy_raise(st);
    goto done;
  }
  self->p = p;
  rc = 0;
done:
  tfq_pipeline_options_free(o);
  tfq_status_free(st);
  if (rc < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void pipeline_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  pipeline_object *o = (pipeline_object *)self;
  release(o);
  Py_CLEAR(o->on_bad);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(self);
  Py_DECREF(tp);
}

/* next() -> tuple of Tensors (the batch's slots); raises tfq.errors.* (OutOfRangeError at the
 * end).  The GIL is released while the batch is waited for and decoded. */
static PyObject *pipeline_next(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (check_usable(o) < 0) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_tuple *out = NULL;
  tfq_code c;
  tfq_pipeline *p = o->p;
  int armed;
  if (watch_arm(p, &armed) < 0) {
    tfq_status_free(st);
    return NULL;
  }
  o->busy = 1;
  o->started = 1;
  Py_BEGIN_ALLOW_THREADS c = tfq_pipeline_next(p, &out, st);
  Py_END_ALLOW_THREADS o->busy = 0;
  int interrupted = watch_disarm(armed);
  PyObject *res = NULL;
  if (interrupted && PyErr_CheckSignals() < 0) {
    /* Ctrl-C: KeyboardInterrupt (the pipeline is stopped) */
  } else if (flush_bad(o) < 0) {
    /* the callback raised: its exception wins */
  } else if (c != TFQ_OK) {
    tfqpy_raise(st);
  } else {
    res = tfqpy_tuple_take(out);
    out = NULL;
  }
  tfq_tuple_free(out);
  tfq_status_free(st);
  if (o->closing) release(o); /* close() from another thread while we waited */
  return res;
}

static PyObject *pipeline_start(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (check_usable(o) < 0) return NULL;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code c;
  tfq_pipeline *p = o->p;
  o->started = 1;
  Py_BEGIN_ALLOW_THREADS c = tfq_pipeline_start(p, st);
  Py_END_ALLOW_THREADS PyObject *res = c == TFQ_OK ? Py_NewRef(Py_None) : tfqpy_raise(st);
  tfq_status_free(st);
  return res;
}

/* save() -> bytes; save(path) writes the file atomically. */
static PyObject *pipeline_save(PyObject *self, PyObject *args) {
  pipeline_object *o = (pipeline_object *)self;
  PyObject *pb = NULL;
  if (!PyArg_ParseTuple(args, "|O&:save", PyUnicode_FSConverter, &pb)) return NULL;
  if (check_usable(o) < 0) {
    Py_XDECREF(pb);
    return NULL;
  }
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  char *state = NULL;
  size_t len = 0;
  tfq_code c;
  tfq_pipeline *p = o->p;
  const char *fn = pb ? PyBytes_AsString(pb) : NULL;
  Py_BEGIN_ALLOW_THREADS c =
      fn ? tfq_pipeline_save_file(p, fn, st) : tfq_pipeline_save(p, &state, &len, st);
  Py_END_ALLOW_THREADS PyObject *res;
  if (c != TFQ_OK)
    res = tfqpy_raise(st);
  else if (fn)
    res = Py_NewRef(Py_None);
  else
    res = PyBytes_FromStringAndSize(state, (Py_ssize_t)len);
  tfq_free(state);
  tfq_status_free(st);
  Py_XDECREF(pb);
  return res;
}

/* restore(bytes-like) or restore_file(path), before the first next(). */
static PyObject *restore_impl(pipeline_object *o, const char *fn, Py_buffer *buf) {
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code c;
  tfq_pipeline *p = o->p;
  Py_BEGIN_ALLOW_THREADS c = fn ? tfq_pipeline_restore_file(p, fn, st)
                                : tfq_pipeline_restore(p, buf->buf, (size_t)buf->len, st);
  Py_END_ALLOW_THREADS PyObject *res = c == TFQ_OK ? Py_NewRef(Py_None) : tfqpy_raise(st);
  tfq_status_free(st);
  return res;
}

static PyObject *pipeline_restore(PyObject *self, PyObject *arg) {
  pipeline_object *o = (pipeline_object *)self;
  if (check_usable(o) < 0) return NULL;
  Py_buffer buf;
  if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
  PyObject *res = restore_impl(o, NULL, &buf);
  PyBuffer_Release(&buf);
  return res;
}

static PyObject *pipeline_restore_file(PyObject *self, PyObject *arg) {
  pipeline_object *o = (pipeline_object *)self;
  if (check_usable(o) < 0) return NULL;
  PyObject *pb = NULL;
  if (!PyUnicode_FSConverter(arg, &pb)) return NULL;
  PyObject *res = restore_impl(o, PyBytes_AsString(pb), NULL);
  Py_DECREF(pb);
  return res;
}

static int put_i64(PyObject *d, const char *k, long long v) {
  PyObject *x = PyLong_FromLongLong(v);
  int rc = x ? PyDict_SetItemString(d, k, x) : -1;
  Py_XDECREF(x);
  return rc;
}

static PyObject *pipeline_stats(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (o->p == NULL) {
    PyErr_SetString(PyExc_ValueError, "the pipeline is closed");
    return NULL;
  }
  tfq_pipeline_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  tfq_status *st = tfq_status_new();
  if (st == NULL) return PyErr_NoMemory();
  tfq_code c = tfq_pipeline_get_stats(o->p, &s, st);
  if (c != TFQ_OK) {
    tfqpy_raise(st);
    tfq_status_free(st);
    return NULL;
  }
  tfq_status_free(st);
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  PyObject *seed = PyLong_FromUnsignedLongLong((unsigned long long)s.seed);
  if (seed == NULL || PyDict_SetItemString(d, "seed", seed) < 0 ||
      put_i64(d, "records_read", s.records_read) < 0 ||
      put_i64(d, "records_out", s.records_out) < 0 ||
      put_i64(d, "batches_out", s.batches_out) < 0 ||
      put_i64(d, "bad_records", s.bad_records) < 0 ||
      put_i64(d, "records_dropped", s.records_dropped) < 0 ||
      put_i64(d, "bytes_read", s.bytes_read) < 0 ||
      put_i64(d, "buffer_records", s.buffer_records) < 0 ||
      put_i64(d, "buffer_capacity", s.buffer_capacity) < 0 || put_i64(d, "epoch", s.epoch) < 0 ||
      put_i64(d, "files", s.files) < 0) {
    Py_XDECREF(seed);
    Py_DECREF(d);
    return NULL;
  }
  Py_DECREF(seed);
  return d;
}

/* columns() -> [(name, dtype, shape, first slot, kind)], kind 'dense', 'sparse' or 'ragged'. */
static PyObject *pipeline_columns(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (o->p == NULL) {
    PyErr_SetString(PyExc_ValueError, "the pipeline is closed");
    return NULL;
  }
  size_t n = tfq_pipeline_num_columns(o->p);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list != NULL && i < n; i++) {
    int rank = tfq_pipeline_column_rank(o->p, i);
    const int64_t *dims = tfq_pipeline_column_dims(o->p, i);
    PyObject *shape = PyTuple_New(rank > 0 ? rank : 0);
    for (int k = 0; shape != NULL && k < rank; k++)
      PyTuple_SetItem(shape, k, PyLong_FromLongLong((long long)dims[k]));
    const char *kind = tfq_pipeline_column_is_sparse(o->p, i)   ? "sparse"
                       : tfq_pipeline_column_is_ragged(o->p, i) ? "ragged"
                                                                : "dense";
    PyObject *t = shape ? Py_BuildValue("(ssNns)", tfq_pipeline_column_name(o->p, i),
                                        tfq_dtype_name(tfq_pipeline_column_dtype(o->p, i)), shape,
                                        (Py_ssize_t)tfq_pipeline_column_slot(o->p, i), kind)
                        : NULL;
    if (t == NULL)
      Py_CLEAR(list);
    else
      PyList_SetItem(list, (Py_ssize_t)i, t);
  }
  return list;
}

static PyObject *pipeline_info(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (o->p == NULL) {
    PyErr_SetString(PyExc_ValueError, "the pipeline is closed");
    return NULL;
  }
  const char *cs = tfq_pipeline_columns_spec(o->p), *fs = tfq_pipeline_features_spec(o->p);
  return Py_BuildValue("{s:i,s:z,s:z,s:n}", "format", (int)tfq_pipeline_format(o->p),
                       "columns_spec", cs, "features_spec", fs, "num_slots",
                       (Py_ssize_t)tfq_pipeline_num_slots(o->p));
}

/* stop(): any thread; a blocked next() raises CancelledError. */
static PyObject *pipeline_stop(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (o->p != NULL && o->pid == getpid()) tfq_pipeline_stop(o->p);
  Py_RETURN_NONE;
}

/* close(): stops and frees the pipeline (joins the threads); from another thread while next()
 * waits, stops it and lets that next() free it when it returns. */
static PyObject *pipeline_close(PyObject *self, PyObject *unused) {
  pipeline_object *o = (pipeline_object *)self;
  if (o->busy) {
    o->closing = 1;
    if (o->pid == getpid()) tfq_pipeline_stop(o->p);
    Py_RETURN_NONE;
  }
  release(o);
  Py_RETURN_NONE;
}

static PyObject *pipeline_closed(PyObject *self, void *closure) {
  return PyBool_FromLong(((pipeline_object *)self)->p == NULL);
}

static PyMethodDef pipeline_methods[] = {
    {"next", pipeline_next, METH_NOARGS, "The next batch: a tuple of Tensors."},
    {"start", pipeline_start, METH_NOARGS, "Starts the reader threads."},
    {"save", pipeline_save, METH_VARARGS, "save() -> bytes; save(path) writes a file."},
    {"restore", pipeline_restore, METH_O, "Restores a state from bytes."},
    {"restore_file", pipeline_restore_file, METH_O, "Restores a state from a file."},
    {"stats", pipeline_stats, METH_NOARGS, "The counters, a dict."},
    {"columns", pipeline_columns, METH_NOARGS, "[(name, dtype, shape, slot, kind)]"},
    {"info", pipeline_info, METH_NOARGS, "format, columns_spec, features_spec, num_slots"},
    {"stop", pipeline_stop, METH_NOARGS, "Stops the pipeline (any thread)."},
    {"close", pipeline_close, METH_NOARGS, "Stops and frees the pipeline."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef pipeline_getset[] = {{"closed", pipeline_closed, NULL, "closed", NULL},
                                        {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot pipeline_slots[] = {{Py_tp_new, (void *)pipeline_new},
                                       {Py_tp_dealloc, (void *)pipeline_dealloc},
                                       {Py_tp_methods, pipeline_methods},
                                       {Py_tp_getset, pipeline_getset},
                                       {Py_tp_doc, (void *)"tfq_pipeline (use tfq.data)."},
                                       {0, NULL}};

static PyType_Spec pipeline_spec = {"tfq._tfq.Pipeline", sizeof(pipeline_object), 0,
                                    Py_TPFLAGS_DEFAULT, pipeline_slots};

int tfqpy_pipeline_init_type(PyObject *module) {
  tfqpy_pipeline_type = PyType_FromSpec(&pipeline_spec);
  if (tfqpy_pipeline_type == NULL) return -1;
  Py_INCREF(tfqpy_pipeline_type);
  return PyModule_AddObject(module, "Pipeline", tfqpy_pipeline_type);
}
