/* libFuzzer target: PaddingFIFOQueue and the shape checks, driven by a byte program.
 *
 * Input: byte 0 = components (1 + b % 3); per component a dtype byte, a rank byte (rank b % 6;
 * 0xFF: unknown rank) and one byte per dim (0xFF: unknown, 0xFD: the invalid -2, else b % 5);
 * a capacity byte (1 + b % 8); then a registry probe (one byte per declared dim: 0 keep,
 * 1 unknown, 2 a different size); then ops until the input ends:
 *   op % 6 == 0 enqueue; 1 enqueue_many (B = byte % 5); 2 dequeue; 3 dequeue_many(byte % 6);
 *   4 dequeue_up_to(byte % 6); 5 close (byte & 1: cancel_pending_enqueues)
 * An enqueued component takes one "mode" byte (% 16 == 0: wrong rank, 1: a wrong known dim,
 * 2: wrong dtype, 3 (enqueue_many): a different batch size, else conforming) and one size byte
 * per unknown dim.  Every call uses timeout 0, so nothing blocks.
 * A model FIFO predicts each result: INVALID_ARGUMENT for a bad spec (spec_add: dim -2; queue:
 * unknown rank), for a FIFOQueue given unknown dims, for a shared-name reopen with incompatible
 * shapes, and for a bad element; CANCELLED / DEADLINE_EXCEEDED / OUT_OF_RANGE as the queue state
 * says; dequeue returns the element unpadded, dequeue_many/up_to pad unknown dims to the batch
 * maximum with 0 / "" / false and keep the values in the leading corner. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXC 3
#define MAXR 5

typedef struct {
  const uint8_t *p;
  size_t n, i;
} input;
static int more(const input *in) { return in->i < in->n; }
static uint8_t next(input *in) { return in->i < in->n ? in->p[in->i++] : 0; }

static const tfq_dtype dtypes[] = {TFQ_FLOAT, TFQ_INT32, TFQ_STRING, TFQ_INT64,
                                   TFQ_BOOL,  TFQ_UINT8, TFQ_DOUBLE};
#define NDT (sizeof dtypes / sizeof dtypes[0])

typedef struct {
  int rank;
  int64_t dims[MAXR];
  uint32_t seed; /* values are val(seed, flat index) */
} elem_comp;

typedef struct {
  elem_comp c[MAXC];
} element;

static uint32_t val(uint32_t seed, int64_t i) {
  return (uint32_t)((seed * 131u + (uint32_t)i * 7u) % 1000u) + 1u;
}

static int64_t nelems(const int64_t *dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= dims[d];
  return n;
}

/* Writes val(seed, i) as element i of `t` starting at flat index `base`. */
static void put(tfq_tensor *t, tfq_dtype dt, int64_t base, uint32_t v, tfq_status *st) {
  void *d = tfq_tensor_data(t);
  switch (dt) {
    case TFQ_FLOAT: ((float *)d)[base] = (float)v; break;
    case TFQ_DOUBLE: ((double *)d)[base] = (double)v; break;
    case TFQ_INT32: ((int32_t *)d)[base] = (int32_t)v; break;
    case TFQ_INT64: ((int64_t *)d)[base] = (int64_t)v; break;
    case TFQ_UINT8: ((uint8_t *)d)[base] = (uint8_t)(v % 255u + 1u); break;
    case TFQ_BOOL: ((uint8_t *)d)[base] = 1; break;
    default: {
      char s[16];
      int n = snprintf(s, sizeof s, "s%u", v);
      FUZZ_CHECK(tfq_tensor_set_string(t, base, s, (size_t)n, st) == TFQ_OK);
    }
  }
}

/* Is element i of `t` val v (v == 0: the pad value)? */
static int is(const tfq_tensor *t, tfq_dtype dt, int64_t i, uint32_t v) {
  const void *d = tfq_tensor_cdata(t);
  switch (dt) {
    case TFQ_FLOAT: return ((const float *)d)[i] == (float)v;
    case TFQ_DOUBLE: return ((const double *)d)[i] == (double)v;
    case TFQ_INT32: return ((const int32_t *)d)[i] == (int32_t)v;
    case TFQ_INT64: return ((const int64_t *)d)[i] == (int64_t)v;
    case TFQ_UINT8: return ((const uint8_t *)d)[i] == (v ? (uint8_t)(v % 255u + 1u) : 0);
    case TFQ_BOOL: return ((const uint8_t *)d)[i] == (v ? 1 : 0);
    default: {
      size_t len;
      const char *p = tfq_tensor_string(t, i, &len);
      char s[16];
      int n = v ? snprintf(s, sizeof s, "s%u", v) : 0;
      return p != NULL && len == (size_t)n && memcmp(p, s, len) == 0;
    }
  }
}

typedef struct {
  size_t ncomp;
  tfq_dtype dt[MAXC];
  int rank[MAXC];
  int64_t dims[MAXC][MAXR];
  int64_t cap;
  element *q; /* the model FIFO, q[head..tail) */
  size_t head, tail, qcap;
  int closed;
  uint32_t next_seed;
} model;

static size_t msize(const model *m) { return m->tail - m->head; }
static void mpush(model *m, const element *e) {
  if (m->tail == m->qcap) {
    m->qcap = m->qcap ? m->qcap * 2 : 16;
    m->q = realloc(m->q, m->qcap * sizeof *m->q);
    FUZZ_CHECK(m->q != NULL);
  }
  m->q[m->tail++] = *e;
}

/* Does element component e match `t` (rank, dims, values), as row `row` of a batch of the
 * component's padded shape when batched? */
static void check_comp(const model *m, size_t c, const elem_comp *e, const tfq_tensor *t,
                       int batched, int64_t row) {
  const int64_t *td = tfq_tensor_dims(t) + batched;
  int r = tfq_tensor_rank(t) - batched;
  FUZZ_CHECK(r == e->rank);
  int64_t per = nelems(td, r);
  for (int64_t i = 0; i < per; i++) {
    /* the multi-index of i in the tensor's shape, and whether it is inside the element */
    int64_t rest = i, ei = 0, stride = 1, inside = 1;
    for (int d = r - 1; d >= 0; d--) {
      int64_t ix = rest % td[d];
      rest /= td[d];
      if (ix >= e->dims[d]) inside = 0;
      ei += ix * stride;
      stride *= e->dims[d];
    }
    FUZZ_CHECK(is(t, m->dt[c], row * per + i, inside ? val(e->seed, ei) : 0));
  }
}

/* Checks a dequeue_many/up_to batch of k elements from the model's head, then pops them. */
static void check_batch(model *m, const tfq_tuple *b, int64_t k) {
  FUZZ_CHECK(tfq_tuple_size(b) == m->ncomp);
  for (size_t c = 0; c < m->ncomp; c++) {
    const tfq_tensor *t = tfq_tuple_get(b, c);
    FUZZ_CHECK(tfq_tensor_dtype(t) == m->dt[c]);
    FUZZ_CHECK(tfq_tensor_rank(t) == m->rank[c] + 1 && tfq_tensor_dim(t, 0) == k);
    for (int d = 0; d < m->rank[c]; d++) {
      int64_t want = m->dims[c][d];
      if (want < 0) { /* unknown: the batch maximum (0 for an empty batch) */
        want = 0;
        for (int64_t i = 0; i < k; i++)
          if (m->q[m->head + (size_t)i].c[c].dims[d] > want)
            want = m->q[m->head + (size_t)i].c[c].dims[d];
      }
      FUZZ_CHECK(tfq_tensor_dim(t, d + 1) == want);
    }
    for (int64_t i = 0; i < k; i++) check_comp(m, c, &m->q[m->head + (size_t)i].c[c], t, 1, i);
  }
  m->head += (size_t)k;
}

/* Builds one component tensor for an enqueue (batch < 0) or an enqueue_many of `batch` rows;
 * returns 0 when the input made it invalid on purpose.  The element shapes go to es[]. */
static int make_comp(model *m, size_t c, input *in, int64_t batch, tfq_tensor **out, elem_comp *es,
                     tfq_status *st) {
  uint8_t mode = next(in) % 16;
  int ok = 1, rank = m->rank[c];
  int64_t dims[MAXR + 1];
  for (int d = 0; d < rank; d++) dims[d] = m->dims[c][d] < 0 ? next(in) % 5 : m->dims[c][d];
  tfq_dtype dt = m->dt[c];
  if (mode == 0) { /* wrong rank */
    if (rank > 0 && (next(in) & 1))
      rank--;
    else if (rank < MAXR)
      dims[rank++] = 1;
    else
      rank--;
    ok = 0;
  } else if (mode == 1) { /* a wrong known dim (if any) */
    for (int d = 0; d < rank; d++)
      if (m->dims[c][d] >= 0) {
        dims[d] = m->dims[c][d] + 1;
        ok = 0;
        break;
      }
  } else if (mode == 2) {
    dt = dt == TFQ_STRING ? TFQ_INT32 : TFQ_STRING;
    ok = 0;
  } else if (mode == 3 && batch >= 0 && c > 0) {
    batch++;
    ok = 0;
  }
  int64_t full[MAXR + 1];
  int fr = 0;
  if (batch >= 0) full[fr++] = batch;
  for (int d = 0; d < rank; d++) full[fr++] = dims[d];
  FUZZ_CHECK(tfq_tensor_new(dt, full, fr, out, st) == TFQ_OK);
  int64_t rows = batch >= 0 ? batch : 1, per = nelems(dims, rank);
  for (int64_t r = 0; r < rows; r++) {
    uint32_t seed = m->next_seed + (uint32_t)r;
    if (ok || dt == m->dt[c])
      for (int64_t i = 0; i < per; i++) put(*out, dt, r * per + i, val(seed, i), st);
    if (ok && r < 5) {
      es[r].rank = rank;
      memcpy(es[r].dims, dims, sizeof(int64_t) * (size_t)rank);
      es[r].seed = seed;
    }
  }
  return ok;
}

static int partial_rank5(const model *m) {
  for (size_t c = 0; c < m->ncomp; c++)
    for (int d = 0; d < m->rank[c]; d++)
      if (m->dims[c][d] < 0 && m->rank[c] >= 5) return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size, 0};
  model m;
  memset(&m, 0, sizeof m);
  tfq_status *st = tfq_status_new();
  FUZZ_CHECK(st != NULL);
  tfq_spec *spec;
  FUZZ_CHECK(tfq_spec_new(&spec, st) == TFQ_OK);
  m.ncomp = 1 + next(&in) % MAXC;
  int bad_spec = 0, unknown_rank = 0, partial = 0;
  for (size_t c = 0; c < m.ncomp; c++) {
    m.dt[c] = dtypes[next(&in) % NDT];
    uint8_t rb = next(&in);
    m.rank[c] = rb == 0xFF ? TFQ_UNKNOWN_RANK : rb % (MAXR + 1);
    int bad = 0;
    for (int d = 0; d < m.rank[c]; d++) {
      uint8_t b = next(&in);
      m.dims[c][d] = b == 0xFF ? TFQ_UNKNOWN_DIM : b == 0xFD ? -2 : b % 5;
      bad |= m.dims[c][d] == -2;
      partial |= m.dims[c][d] == TFQ_UNKNOWN_DIM;
    }
    tfq_code sc = tfq_spec_add(spec, m.dt[c], m.dims[c], m.rank[c], NULL, st);
    if (bad) {
      FUZZ_CHECK(sc == TFQ_INVALID_ARGUMENT);
      fuzz_check_failure(sc, st);
      bad_spec = 1;
      break;
    }
    FUZZ_CHECK(sc == TFQ_OK);
    unknown_rank |= m.rank[c] == TFQ_UNKNOWN_RANK;
  }
  m.cap = 1 + next(&in) % 8;
  tfq_queue *q = NULL, *fifo = NULL;
  if (bad_spec) goto out;

  tfq_queue_options *qo;
  FUZZ_CHECK(tfq_queue_options_new(&qo, st) == TFQ_OK);
  tfq_queue_options_set_capacity(qo, m.cap);
  /* FIFOQueue: every shape fully defined, or none given */
  tfq_code fc = tfq_queue_new(TFQ_QUEUE_FIFO, spec, qo, &fifo, st);
  int all_unknown = 1;
  for (size_t c = 0; c < m.ncomp; c++) all_unknown &= m.rank[c] == TFQ_UNKNOWN_RANK;
  if (partial || (unknown_rank && !all_unknown)) {
    FUZZ_CHECK(fc == TFQ_INVALID_ARGUMENT && fifo == NULL);
    fuzz_check_failure(fc, st);
  } else {
    FUZZ_CHECK(fc == TFQ_OK);
  }
  /* PaddingFIFOQueue, shared through a private registry */
  FUZZ_CHECK(tfq_queue_options_set_shared_name(qo, "padq", st) == TFQ_OK);
  tfq_registry *reg;
  FUZZ_CHECK(tfq_registry_new(&reg, st) == TFQ_OK);
  tfq_code pc = tfq_queue_open(reg, TFQ_QUEUE_PADDING_FIFO, spec, qo, &q, st);
  if (unknown_rank) {
    FUZZ_CHECK(pc == TFQ_INVALID_ARGUMENT && q == NULL);
    fuzz_check_failure(pc, st);
  } else {
    FUZZ_CHECK(pc == TFQ_OK);
    /* reopen with shapes changed by the input: OK iff compatible (same rank, equal known dims) */
    tfq_spec *s2;
    FUZZ_CHECK(tfq_spec_new(&s2, st) == TFQ_OK);
    int compatible = 1;
    for (size_t c = 0; c < m.ncomp; c++) {
      int64_t d2[MAXR];
      for (int d = 0; d < m.rank[c]; d++) {
        uint8_t b = next(&in) % 3;
        int64_t x = m.dims[c][d];
        d2[d] = b == 0 ? x : b == 1 ? TFQ_UNKNOWN_DIM : x < 0 ? 3 : x + 1;
        if (b == 2 && x >= 0) compatible = 0;
      }
      FUZZ_CHECK(tfq_spec_add(s2, m.dt[c], d2, m.rank[c], NULL, st) == TFQ_OK);
    }
    tfq_queue *q2 = NULL;
    tfq_code c2 = tfq_queue_open(reg, TFQ_QUEUE_PADDING_FIFO, s2, qo, &q2, st);
    if (compatible) {
      FUZZ_CHECK(c2 == TFQ_OK && q2 == q);
    } else {
      FUZZ_CHECK(c2 == TFQ_INVALID_ARGUMENT && q2 == NULL);
      fuzz_check_failure(c2, st);
    }
    tfq_queue_free(q2);
    tfq_spec_free(s2);
  }
  tfq_registry_free(reg);
  tfq_queue_options_free(qo);
  if (!q) goto out;

  for (int ops = 0; more(&in) && ops < 200; ops++) {
    uint8_t op = next(&in) % 6;
    tfq_code c;
    if (op == 0 || op == 1) {
      int64_t batch = op == 1 ? next(&in) % 5 : -1;
      tfq_tuple *t;
      FUZZ_CHECK(tfq_tuple_new(m.ncomp, &t, st) == TFQ_OK);
      element es[5];
      int ok = 1;
      for (size_t k = 0; k < m.ncomp; k++) {
        tfq_tensor *x;
        elem_comp ec[5];
        ok &= make_comp(&m, k, &in, batch, &x, ec, st);
        for (int r = 0; r < 5; r++) es[r].c[k] = ec[r];
        tfq_tuple_set_take(t, k, x);
      }
      size_t before = msize(&m);
      c = op == 1 ? tfq_queue_enqueue_many(q, t, NULL, 0, st)
                  : tfq_queue_enqueue(q, t, NULL, 0, st);
      tfq_tuple_free(t);
      int64_t rows = op == 1 ? batch : 1;
      int64_t now = tfq_queue_size(q), added = now - (int64_t)before;
      if (!ok) {
        FUZZ_CHECK(c == TFQ_INVALID_ARGUMENT && added == 0);
      } else if (rows == 0) {
        FUZZ_CHECK(c == TFQ_OK && added == 0);
      } else if (m.closed) {
        FUZZ_CHECK(c == TFQ_CANCELLED && added == 0);
      } else {
        int64_t room = m.cap - (int64_t)before;
        FUZZ_CHECK(added == (rows < room ? rows : room));
        FUZZ_CHECK(c == (added == rows ? TFQ_OK : TFQ_DEADLINE_EXCEEDED));
        for (int64_t r = 0; r < added; r++) mpush(&m, &es[r]);
      }
      if (ok) m.next_seed += (uint32_t)(rows > 0 ? rows : 0);
    } else if (op == 2) {
      tfq_tuple *b = NULL;
      c = tfq_queue_dequeue(q, &b, NULL, 0, st);
      if (msize(&m) > 0) {
        FUZZ_CHECK(c == TFQ_OK);
        for (size_t k = 0; k < m.ncomp; k++) {
          const tfq_tensor *t = tfq_tuple_get(b, k);
          FUZZ_CHECK(tfq_tensor_dtype(t) == m.dt[k]);
          const elem_comp *e = &m.q[m.head].c[k];
          for (int d = 0; d < e->rank; d++) FUZZ_CHECK(tfq_tensor_dim(t, d) == e->dims[d]);
          check_comp(&m, k, e, t, 0, 0);
        }
        m.head++;
      } else {
        FUZZ_CHECK(c == (m.closed ? TFQ_OUT_OF_RANGE : TFQ_DEADLINE_EXCEEDED));
      }
      tfq_tuple_free(b);
    } else if (op == 3 || op == 4) {
      int64_t n = next(&in) % 6, have = (int64_t)msize(&m);
      tfq_tuple *b = NULL;
      c = op == 3 ? tfq_queue_dequeue_many(q, n, &b, NULL, 0, st)
                  : tfq_queue_dequeue_up_to(q, n, &b, NULL, 0, st);
      int64_t k = have >= n ? n : (op == 4 && m.closed && have > 0) ? have : -1;
      if (c == TFQ_UNIMPLEMENTED && k > 0 && partial_rank5(&m)) { /* TF's rank limit */
        fuzz_check_failure(c, st);
        break; /* what the queue keeps after this is not modelled */
      }
      if (k >= 0) {
        FUZZ_CHECK(c == TFQ_OK);
        check_batch(&m, b, k);
      } else {
        FUZZ_CHECK(c == (m.closed ? TFQ_OUT_OF_RANGE : TFQ_DEADLINE_EXCEEDED));
        FUZZ_CHECK(tfq_queue_size(q) == have); /* the partial batch went back */
      }
      tfq_tuple_free(b);
    } else {
      int cancel_pending = next(&in) & 1;
      c = tfq_queue_close(q, cancel_pending, NULL, 0, st);
      FUZZ_CHECK(c == (m.closed && !cancel_pending ? TFQ_CANCELLED : TFQ_OK));
      m.closed = 1;
    }
    if (c != TFQ_OK) fuzz_check_failure(c, st);
    if (m.head == m.tail) m.head = m.tail = 0;
    FUZZ_CHECK(tfq_queue_size(q) == (int64_t)msize(&m));
  }
out:
  tfq_queue_free(q);
  tfq_queue_free(fifo);
  tfq_spec_free(spec);
  tfq_status_free(st);
  free(m.q);
  return 0;
}
