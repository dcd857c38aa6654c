/* Ready-made runner ops: read → decode_csv → enqueue_many (the queue → queue transfer op is in
 * transfer_op.c). */
#include <stdatomic.h>
#include <string.h>
#include <tfq/ops.h>

#include "../csv/csv_shared.h"
#include "../readers/readers_shared.h"
#include "coord_internal.h"
#include "ops_internal.h"

tfq_code tfq_read_decode_op_new(tfq_reader *reader, tfq_queue *work, const tfq_csv_options *csv,
                                int64_t batch, tfq_queue *target, tfq_read_decode_op **out,
                                tfq_status *st) {
  *out = NULL;
  if (batch < 1)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "batch must be >= 1, got %lld",
                          (long long)batch);
  tfq_read_decode_op *op = tfq__calloc(1, sizeof *op);
  if (!op) return TFQ__OOM(st);
  op->reader = reader;
  op->work = tfq_queue_ref(work);
  op->target = tfq_queue_ref(target);
  op->csv = csv;
  op->batch = batch;
  atomic_init(&op->records, 0);
  atomic_init(&op->lines, NULL);
  atomic_init(&op->cols, NULL);
  atomic_init(&op->park, NULL);
  atomic_init(&op->line_bytes, 0);
  atomic_init(&op->span_steps, 0);
  atomic_init(&op->span_lines, batch);
  for (size_t i = 0; i < sizeof op->owners / sizeof op->owners[0]; i++)
    atomic_init(&op->owners[i], NULL);
  atomic_init(&op->owner_next, 0);
  atomic_init(&op->ring_steps, 0);
  tfq__op_ring_plan(op);
  *out = op;
  tfq_status_clear(st);
  return TFQ_OK;
}

void tfq_read_decode_op_free(tfq_read_decode_op *op) {
  if (!op) return;
  for (size_t i = 0; i < op->nmap; i++) {
    tfq_free(op->map[i].cols);
    tfq_tensor_free(atomic_load(&op->map[i].spare));
  }
  tfq_free(op->map);
  tfq_free(op->owner);
  for (size_t i = 0; i < sizeof op->owners / sizeof op->owners[0]; i++)
    tfq_tensor_free(atomic_load(&op->owners[i]));
  tfq_tensor_free(atomic_load(&op->lines));
  tfq_tuple_free(atomic_load(&op->cols));
  tfq_tuple_free(atomic_load(&op->park));
  tfq_queue_free(op->work);
  tfq_queue_free(op->target);
  tfq_free(op);
}

void tfq_read_decode_op_set_keys(tfq_read_decode_op *op, int on) { op->keys = on != 0; }

tfq_code tfq_read_decode_op_set_shard(tfq_read_decode_op *op, int64_t index, int64_t count,
                                      tfq_status *st) {
  if (count < 1 || index < 0 || index >= count)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "shard %lld of %lld: need 0 <= index < count",
                          (long long)index, (long long)count);
  op->shard_index = index;
  op->shard_count = count;
  tfq_status_clear(st);
  return TFQ_OK;
}

/* splitmix64's finaliser: byte offsets (TFRecord keys) spread evenly over the shards. */
static uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Which shard a record belongs to, from its key: TextLineReader's line and FixedLength's record
 * number round-robin; other numbers (TFRecord offsets) and other keys hashed. */
static int64_t shard_of(const tfq__str *k, int round_robin, int64_t count) {
  size_t fl;
  int64_t num;
  uint64_t h;
  if (tfq_reader_key_split(k->p, k->len, &fl, &num)) {
    if (round_robin) return num % count;
    h = mix64((uint64_t)num);
  } else {
    h = 1469598103934665603ULL; /* FNV-1a of the whole key */
    for (size_t i = 0; i < k->len; i++) h = (h ^ (unsigned char)k->p[i]) * 1099511628211ULL;
  }
  return (int64_t)(h % (uint64_t)count);
}

/* Keeps the records of this op's shard (in order) and returns how many. */
static int64_t keep_shard(tfq_read_decode_op *op, tfq_tensor *keys, tfq_tensor *values) {
  tfq_reader_kind kind = tfq_reader_get_kind(op->reader);
  int rr = kind == TFQ_READER_TEXT_LINE || kind == TFQ_READER_FIXED_LENGTH;
  tfq__str *k = tfq__strs(keys), *v = tfq__strs(values);
  int64_t n = keys->nelems, m = 0;
  for (int64_t i = 0; i < n; i++)
    if (shard_of(&k[i], rr, op->shard_count) == op->shard_index) {
      k[m] = k[i];
      v[m] = v[i];
      m++;
    }
  keys->dims[0] = keys->nelems = values->dims[0] = values->nelems = m;
  return m;
}

int64_t tfq_read_decode_op_records(const tfq_read_decode_op *op) {
  return atomic_load(&op->records);
}

/* Whether lines_step decodes the new mapping i's columns in place: k >= 2 columns of one dtype
 * (strings too: their bytes then lie row by row in the component's arena, not copied by a stack),
 * none of them used by another component or twice (a column has one place to go).  A
 * column used again takes its first user out too.  op->owner[c]: the first mapping of column c. */
static void plan_direct(tfq_read_decode_op *op, size_t i) {
  size_t ncol = tfq_csv_options_num_columns(op->csv);
  mapping *m = &op->map[i];
  tfq_dtype dt = m->cols[0] < ncol ? tfq__csv_column_dtype(op->csv, m->cols[0]) : 0;
  m->direct = m->stack && m->n >= 2 && dt != 0;
  for (size_t j = 0; j < m->n; j++) {
    size_t c = m->cols[j];
    if (c >= ncol || tfq__csv_column_dtype(op->csv, c) != dt) {
      m->direct = 0;
      continue;
    }
    if (op->owner[c] == SIZE_MAX) {
      op->owner[c] = i;
      continue;
    }
    mapping *first = &op->map[op->owner[c]];
    if (first != m && first->direct) op->ndirect--;
    first->direct = 0;
    m->direct = 0;
  }
  op->ndirect += m->direct != 0;
}

tfq_code tfq_read_decode_op_add_component(tfq_read_decode_op *op, const size_t *cols, size_t n,
                                          int stack, tfq_status *st) {
  if (n == 0) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "a component needs a column");
  if (n > 1 && !stack)
    return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                          "several columns make one component only when stacked");
  if (op->nmap == op->cap) {
    size_t cap = op->cap ? 2 * op->cap : 4;
    mapping *m = tfq_realloc(op->map, cap * sizeof *m);
    if (!m) return TFQ__OOM(st);
    op->map = m;
    op->cap = cap;
  }
  size_t ncol = op->csv ? tfq_csv_options_num_columns(op->csv) : 0;
  if (ncol && !op->owner) {
    op->owner = tfq_malloc(ncol * sizeof *op->owner);
    if (!op->owner) return TFQ__OOM(st);
    for (size_t k = 0; k < ncol; k++) op->owner[k] = SIZE_MAX;
  }
  size_t *c = tfq_malloc(n * sizeof *c);
  if (!c) return TFQ__OOM(st);
  memcpy(c, cols, n * sizeof *c);
  mapping *nm = &op->map[op->nmap++];
  nm->cols = c;
  nm->n = n;
  nm->stack = stack != 0;
  atomic_init(&nm->spare, NULL);
  nm->direct = 0;
  if (ncol) plan_direct(op, op->nmap - 1);
  tfq__op_ring_plan(op);
  tfq_status_clear(st);
  return TFQ_OK;
}

/* tf.stack of [B] columns into one [B, n] tensor. */
static tfq_code stack_columns(tfq_tuple *cols, mapping *m, tfq_tensor **out, tfq_status *st) {
  const tfq_tensor *first = cols->c[m->cols[0]];
  int64_t b = first->nelems;
  for (size_t k = 1; k < m->n; k++)
    if (cols->c[m->cols[k]]->dtype != first->dtype)
      return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "cannot stack columns of dtypes %s and %s",
                            tfq_dtype_name(first->dtype),
                            tfq_dtype_name(cols->c[m->cols[k]]->dtype));
  int64_t dims[2] = {b, (int64_t)m->n};
  tfq_tensor *spare = first->dtype == TFQ_STRING ? NULL : atomic_exchange(&m->spare, NULL);
  tfq_code c = TFQ_OK;
  if (spare && spare->dtype == first->dtype && spare->dims[0] == b) {
    *out = spare; /* a step's stacked numbers, copied into the queue, refilled */
  } else {
    tfq_tensor_free(spare);
    c = tfq__tensor_alloc(first->dtype, dims, 2, 0, out, st);
  }
  if (c) return c;
  size_t esz = tfq_dtype_size(first->dtype);
  if (first->dtype == TFQ_STRING) { /* the bytes of all the columns in one block */
    size_t total = 0;
    for (size_t k = 0; k < m->n; k++)
      for (int64_t r = 0; r < b; r++) total += tfq__strs(cols->c[m->cols[k]])[r].len;
    char *p = total ? tfq__tensor_arena_alloc(*out, total) : NULL;
    if (total && !p) {
      tfq_tensor_free(*out);
      *out = NULL;
      return TFQ__OOM(st);
    }
    tfq__str *dst = tfq__strs(*out);
    for (size_t k = 0; k < m->n; k++) {
      const tfq__str *col = tfq__strs(cols->c[m->cols[k]]);
      for (int64_t r = 0; r < b; r++) {
        tfq__str *d = &dst[(size_t)r * m->n + k];
        if (!col[r].len) continue; /* "" from the allocation */
        memcpy(p, col[r].p, col[r].len);
        *d = (tfq__str){p, col[r].len};
        p += col[r].len;
      }
    }
    return TFQ_OK;
  }
  /* A transpose of [n columns][b rows] into [b][n], in tiles of 32 x 32 so that both the reads
   * (down a column) and the writes (along a row, n elements apart) stay in cache: walking one
   * whole column at a time wrote every element a row (n * esz bytes, 160 KB for 20,000 float64
   * columns) apart, a cache miss and often a TLB miss each. */
  enum { TILE = 32 };
  char *dst = (*out)->data;
  size_t n = m->n;
  for (int64_t r0 = 0; r0 < b; r0 += TILE) {
    int64_t r1 = r0 + TILE < b ? r0 + TILE : b;
    for (size_t k0 = 0; k0 < n; k0 += TILE) {
      size_t k1 = k0 + TILE < n ? k0 + TILE : n;
      for (size_t k = k0; k < k1; k++) {
        const char *src = cols->c[m->cols[k]]->data;
        if (esz == 8)
          for (int64_t r = r0; r < r1; r++)
            memcpy(dst + ((size_t)r * n + k) * 8, src + (size_t)r * 8, 8);
        else if (esz == 4)
          for (int64_t r = r0; r < r1; r++)
            memcpy(dst + ((size_t)r * n + k) * 4, src + (size_t)r * 4, 4);
        else
          for (int64_t r = r0; r < r1; r++)
            memcpy(dst + ((size_t)r * n + k) * esz, src + (size_t)r * esz, esz);
      }
    }
  }
  return TFQ_OK;
}

/* The target's components from the decoded columns (or the records), plus the keys.  direct
 * (NULL: none): component i is direct[i] where that is set, moved into the tuple (set to NULL). */
static tfq_code components(tfq_read_decode_op *op, tfq_tuple *cols, tfq_tensor *keys,
                           tfq_tensor **direct, tfq_tuple **out, tfq_status *st) {
  size_t n = op->nmap ? op->nmap : cols->n, k = n + (op->keys != 0);
  tfq_tuple *comp;
  tfq_code c = tfq_tuple_new(k, &comp, st);
  if (c) return c;
  for (size_t i = 0; !c && i < n; i++) {
    mapping *m = op->nmap ? &op->map[i] : NULL;
    if (!m) {
      comp->c[i] = tfq_tensor_ref(cols->c[i]);
      continue;
    }
    if (direct && direct[i]) {
      comp->c[i] = direct[i];
      direct[i] = NULL;
      continue;
    }
    for (size_t j = 0; !c && j < m->n; j++)
      if (m->cols[j] >= cols->n)
        c = tfq_status_set(st, TFQ_INVALID_ARGUMENT, "column %zu is not decoded (%zu columns)",
                           m->cols[j], cols->n);
    if (c) break;
    if (!m->stack)
      comp->c[i] = tfq_tensor_ref(cols->c[m->cols[0]]);
    else
      c = stack_columns(cols, m, &comp->c[i], st);
  }
  if (!c && op->keys) comp->c[n] = tfq_tensor_ref(keys);
  if (c) {
    tfq_tuple_free(comp);
    return c;
  }
  *out = comp;
  return TFQ_OK;
}

/* decode_csv of the first `n` records, mapped to the target's components, enqueue_many'd. */
/* After an enqueue: keeps the numeric stacked components nothing else references (the queue
 * copied their rows) for the next step's stack_columns or direct_outputs, and the string ones
 * decoded in place (the queue shares their rows) for direct_outputs to park, and frees `comp`. */
static void recycle(tfq_read_decode_op *op, tfq_tuple *comp) {
  for (size_t i = 0; comp && i < op->nmap; i++) {
    tfq_tensor *t = comp->c[i];
    if (!op->map[i].stack || !t) continue;
    if (t->dtype == TFQ_STRING ? !op->map[i].direct : tfq_tensor_refcount(t) != 1) continue;
    comp->c[i] = NULL;
    tfq_tensor_free(atomic_exchange(&op->map[i].spare, t));
  }
  tfq_tuple_free(comp);
}

static tfq_code deliver(tfq_read_decode_op *op, tfq_tensor *keys, tfq_tensor *values, int64_t n,
                        tfq_cancel *cancel, tfq_status *st) {
  tfq_tuple *cols = NULL, *comp = NULL;
  keys->dims[0] = keys->nelems = values->dims[0] = values->nelems = n;
  tfq_code c;
  if (op->csv) {
    c = tfq_decode_csv(op->csv, values, &cols, st);
  } else if (!(c = tfq_tuple_new(1, &cols, st))) {
    cols->c[0] = tfq_tensor_ref(values);
  }
  if (!c) c = components(op, cols, keys, NULL, &comp, st);
  if (!c) c = tfq_queue_enqueue_many(op->target, comp, cancel, TFQ_NO_TIMEOUT, st);
  if (!c) atomic_fetch_add(&op->records, n);
  tfq_tuple_free(cols);
  recycle(op, comp);
  return c;
}

/* A decode error in record r of a batch: TF's message for that record alone (as decode_csv of
 * the one line gives it), prefixed with its key, and its location as data: the file and line of
 * its key, and r.  `scratch` is a cleared status the call may use. */
static void locate_record(tfq_read_decode_op *op, const tfq_tensor *keys, const tfq_tensor *values,
                          int64_t r, tfq_status *scratch, tfq_status *st) {
  const tfq__str *k = &tfq__strs(keys)[r], *v = &tfq__strs(values)[r];
  const char *rec[1] = {v->p};
  size_t len[1] = {v->len};
  tfq_tuple *one = NULL;
  tfq_code c = tfq_decode_csv_lines(op->csv, rec, len, 1, &one, scratch);
  tfq_tuple_free(one);
  if (c) tfq_status_set(st, c, "%s", tfq_status_message(scratch));
  size_t flen = k->len;
  int64_t num = -1;
  if (!tfq_reader_key_split(k->p, k->len, &flen, &num)) num = -1;
  tfq__status_prefix(st, "%.*s: ", (int)k->len, k->p);
  tfq_status_set_location(st, k->p, flen, -1,
                          tfq_reader_get_kind(op->reader) == TFQ_READER_TEXT_LINE ? num : -1);
  tfq__status_set_record(st, r);
}

/* After deliver() of a batch failed with `c`: a decode error in record r keeps the r good
 * records before it (TF drops the whole batch): they are delivered, then the error is reported
 * with its location.  Returns the step's code. */
static tfq_code salvage(tfq_read_decode_op *op, tfq_tensor *keys, tfq_tensor *values, int64_t n,
                        tfq_code c, tfq_cancel *cancel, tfq_status *st) {
  tfq_status scratch; /* the location is needed to keep the good records */
  tfq_status_clear(&scratch);
  int64_t r = c == TFQ_INVALID_ARGUMENT && op->csv ? tfq_status_record(st) : -1;
  if (r >= 0 && r < n) {
    tfq_code c2 = r > 0 ? deliver(op, keys, values, r, cancel, &scratch) : TFQ_OK;
    if (c2 && c2 != TFQ_CANCELLED) { /* report why the good records were not delivered */
      c = tfq_status_set(st, c2, "%s", tfq_status_message(&scratch));
    } else {
      tfq_status_clear(&scratch);
      locate_record(op, keys, values, r, &scratch, st);
    }
  }
  return c;
}

#define DIRECT_MAX TFQ_READ_DECODE_DIRECT_MAX /* the widest op decoding in place (ops.h) */
/* After direct_outputs: the tensors components() did not take go back as spares. */
static void free_direct(tfq_read_decode_op *op, tfq_tensor **direct) {
  for (size_t i = 0; direct && i < op->nmap; i++)
    if (direct[i]) tfq_tensor_free(atomic_exchange(&op->map[i].spare, direct[i]));
}

/* Places a string column has in the op's park: a RandomShuffleQueue holds some row of a step's
 * string columns for ~25 steps after it (its draws are uniform: the last of 384 rows in a pool of
 * ~1,400 leaves after ~70 batches of 128), so a park of fewer places would rarely hold one the
 * queue has let go of. */
#define PARK 32

/* Keeps `vt` (NULL: nothing) for the next lines_step when nothing else references it. */
static void keep_lines(tfq_read_decode_op *op, tfq_tensor *vt) {
  if (vt && tfq_tensor_refcount(vt) == 1) vt = atomic_exchange(&op->lines, vt);
  tfq_tensor_free(vt);
}

/* A string column's rows enqueued are shared with the queue (the strings are not copied), so the
 * next step cannot refill it: the column is parked in the op's park (PARK places a column, and
 * PARK for each stacked string component decoded in place), and a parked one that nothing else
 * references any more (the queue and the batches let go of its rows) takes its place, to be
 * refilled.  Steady steps then allocate no string column, and the consumer that drops a column's
 * last row no longer frees it.  With every place taken by a column still in use, the oldest is let
 * go (the queue frees it with its last row) and decode allocates a new one.  The park is taken (or
 * made) at the first shared column and held to the end of step_outputs, so op->park_next is the
 * holder's alone; without one (another thread holds it, or out of memory) the columns are made
 * anew, as without a park.  Only ops of up to DIRECT_MAX columns park (PARK x 64 columns of a
 * step's strings at most): wider rows would keep too much memory. */

/* Takes the op's park into *park, or makes one, unless it is held already: 0 when there is none
 * to be had. */
static int park_take(tfq_read_decode_op *op, size_t ncol, tfq_tuple **park) {
  return *park || (*park = atomic_exchange(&op->park, NULL)) ||
         !tfq_tuple_new((ncol + op->nmap) * PARK, park, NULL);
}

/* Parks the shared string tensor `t` in group g's places and returns the parked tensor nothing
 * else references that it replaces (to be refilled), or NULL (decode makes a new one). */
static tfq_tensor *park_swap(tfq_read_decode_op *op, tfq_tuple *park, size_t g, tfq_tensor *t) {
  tfq_tensor **place = &park->c[g * PARK];
  size_t k = 0, empty = PARK;
  for (; k < PARK; k++) {
    if (!place[k]) {
      if (empty == PARK) empty = k;
    } else if (tfq_tensor_refcount(place[k]) == 1) {
      break;
    }
  }
  if (k < PARK) { /* a parked tensor nothing else uses: it takes t's place */
    tfq_tensor *r = place[k];
    place[k] = t;
    return r;
  }
  if (empty == PARK) { /* every place taken by a tensor in use: the oldest goes */
    empty = op->park_next;
    op->park_next = (op->park_next + 1) % PARK;
    tfq_tensor_free(place[empty]);
  }
  place[empty] = t;
  return NULL;
}

/* The decoded columns' side of the park (groups 0 .. ncol - 1). */
static void park_strings(tfq_read_decode_op *op, tfq_tuple *cols, tfq_tuple **park) {
  for (size_t f = 0; f < cols->n; f++) {
    tfq_tensor *t = cols->c[f];
    if (!t || t->dtype != TFQ_STRING || tfq_tensor_refcount(t) == 1) continue;
    if (!park_take(op, cols->n, park)) return;
    cols->c[f] = park_swap(op, *park, f, t);
  }
}

/* Stacked components decoded in place (plan_direct), for ops of up to DIRECT_MAX columns and
 * components (wider ones keep the copy, stack_columns' tiled transpose): for each such mapping
 * i, direct[i] is a [m, k] tensor (the spare the queue copied or let go of, or a parked one, or a
 * new one) and outs[] points its columns at their places in it; the other entries are zero.  A
 * string component's spare the queue still shares rows of is parked (group ncol + i). */
static tfq_code direct_outputs(tfq_read_decode_op *op, int64_t m, size_t ncol, tfq__csv_out *outs,
                               tfq_tensor **direct, tfq_tuple **park, tfq_status *st) {
  memset(outs, 0, ncol * sizeof *outs);
  memset(direct, 0, op->nmap * sizeof *direct);
  for (size_t i = 0; i < op->nmap; i++) {
    mapping *mp = &op->map[i];
    if (!mp->direct) continue;
    tfq_dtype dt = tfq__csv_column_dtype(op->csv, mp->cols[0]);
    tfq_tensor *t = atomic_exchange(&mp->spare, NULL);
    if (t && dt == TFQ_STRING && !tfq__tensor_sole(t))
      t = park_take(op, ncol, park) ? park_swap(op, *park, ncol + i, t)
                                    : (tfq_tensor_free(t), NULL);
    if (!t || t->dtype != dt || t->dims[0] != m || !tfq__tensor_sole(t)) {
      tfq_tensor_free(t);
      int64_t dims[2] = {m, (int64_t)mp->n};
      tfq_code c = tfq__tensor_alloc(dt, dims, 2, 0, &t, st);
      if (c) return c;
    } else if (dt == TFQ_STRING) {
      /* keeps its newest chunk; the decode writes every string of the rows it delivers, and a
       * step that fails hands the tensor back as the spare, unread */
      tfq__tensor_arena_reset(t);
    }
    direct[i] = t;
    size_t esz = dt == TFQ_STRING ? sizeof(tfq__str) : tfq_dtype_size(dt);
    for (size_t j = 0; j < mp->n; j++)
      outs[mp->cols[j]] =
          (tfq__csv_out){(char *)t->data + j * esz, mp->n * esz, dt == TFQ_STRING ? t : NULL};
  }
  return TFQ_OK;
}

/* A step's outputs for m rows: the last step's columns (any thread's; those the queue copied are
 * refilled in place, string columns it still shares are swapped for parked ones) in *cols, and
 * for an op with stacked components decoded in place, their [m, k] tensors in direct[] with
 * outs[] pointing the columns into them (*outs and *direct NULL otherwise).  outs_s and direct_s
 * hold DIRECT_MAX entries. */
static tfq_code step_outputs(tfq_read_decode_op *op, int64_t m, tfq_tuple **cols,
                             tfq__csv_out *outs_s, tfq_tensor **direct_s, tfq__csv_out **outs,
                             tfq_tensor ***direct, tfq_status *st) {
  size_t ncol = tfq_csv_options_num_columns(op->csv);
  tfq_code c = TFQ_OK;
  tfq_tuple *park = NULL;
  *outs = NULL;
  *direct = NULL;
  *cols = atomic_exchange(&op->cols, NULL);
  if (!*cols) {
    c = tfq_tuple_new(ncol, cols, st);
  } else if ((*cols)->n <= DIRECT_MAX && op->nmap <= DIRECT_MAX) {
    park_strings(op, *cols, &park);
  }
  if (!c && op->ndirect && ncol <= DIRECT_MAX && op->nmap <= DIRECT_MAX) {
    *outs = outs_s;
    *direct = direct_s;
    c = direct_outputs(op, m, ncol, outs_s, direct_s, &park, st);
  }
  if (park) tfq_tuple_free(atomic_exchange(&op->park, park));
  return c;
}

/* After the decode of a step's m records (c its code): their components enqueue_many'd into the
 * target, the direct tensors components() did not take back as spares, the columns kept for the
 * next step (freed after a failure). */
static tfq_code step_enqueue(tfq_read_decode_op *op, tfq_tuple *cols, tfq_tensor **direct,
                             int64_t m, tfq_code c, tfq_cancel *cancel, tfq_status *st) {
  tfq_tuple *comp = NULL;
  if (!c) c = components(op, cols, NULL, direct, &comp, st);
  free_direct(op, direct);
  if (!c) c = tfq_queue_enqueue_many(op->target, comp, cancel, TFQ_NO_TIMEOUT, st);
  if (!c) atomic_fetch_add(&op->records, m);
  recycle(op, comp); /* before the columns are kept: it drops comp's references to them */
  tfq_tuple_free(c ? cols : atomic_exchange(&op->cols, cols));
  return c;
}

/* A step's outputs made for b rows (step_outputs), cut to their first m. */
static void trim_rows(tfq_read_decode_op *op, tfq_tuple *cols, tfq_tensor **direct, int64_t b,
                      int64_t m) {
  for (size_t i = 0; i < cols->n + (direct ? op->nmap : 0); i++) {
    tfq_tensor *t = i < cols->n ? cols->c[i] : direct[i - cols->n];
    if (!t || t->rank < 1 || t->dims[0] != b) continue;
    t->nelems = t->nelems / b * m;
    t->dims[0] = m;
    if (t->dtype != TFQ_STRING) t->nbytes = (size_t)t->nelems * tfq_dtype_size(t->dtype);
  }
}

/* Whether a step's strings may point into the reader's buffer, uncopied: for a FIFO, and for a
 * shuffle pool of at most VIEW_POOL_BYTES of lines (tfq-cat's, 2 readers; each row keeps its whole
 * buffer alive: docs/performance.md, passes 10-11); a larger pool or a heap copies them. */
#define VIEW_POOL_BYTES ((int64_t)1 << 20)
static int views_ok(const tfq_read_decode_op *op, size_t est) {
  tfq_queue_kind kind = tfq_queue_get_kind(op->target);
  if (kind == TFQ_QUEUE_FIFO || kind == TFQ_QUEUE_PADDING_FIFO) return 1;
  int64_t cap = tfq_queue_capacity(op->target);
  return kind == TFQ_QUEUE_RANDOM_SHUFFLE && est && cap > 0 &&
         cap <= VIEW_POOL_BYTES / (int64_t)est;
}

/* Text lines decoded where they lie in the reader's buffer, under its lock (no copy, no scan:
 * tfq__reader_lines_begin): op->batch whole lines a step, or what the full buffer holds (long
 * lines).  A file's last few lines or a line that does not decode: nothing taken, lines_step
 * decodes them or locates the error.  *handled 0: the ordinary paths are needed. */
static tfq_code span_step(tfq_read_decode_op *op, tfq_cancel *cancel, int *handled,
                          tfq_status *st) {
  *handled = 0;
  const size_t b = (size_t)atomic_load_explicit(&op->span_lines, memory_order_relaxed),
               est = atomic_load_explicit(&op->line_bytes, memory_order_relaxed);
  /* a step's bytes and a quarter more; unknown (or huge): as much as the buffer holds */
  size_t want = est && est <= SIZE_MAX / 4 / b ? est * b + est * b / 4 + 64 : SIZE_MAX;
  const char *buf;
  size_t len, count = 0, used = 0;
  int at_end;
  int64_t first;
  tfq_tensor *holder;
  if (!tfq__reader_lines_begin(op->reader, want, &buf, &len, &at_end, &holder)) return TFQ_OK;
  if (!views_ok(op, est)) holder = NULL;
  /* a file's last lines, most likely fewer than b (tried once while the size of a line is not
   * known: a short span then teaches it) */
  if (at_end && est && len / est < b) {
    tfq__reader_lines_end(op->reader, 0, 0, &first);
    return TFQ_OK;
  }
  /* n lines: b, or the rows reserved in a FIFO's ring, where the step is decoded in place */
  tfq_tuple *cols = NULL;
  tfq__csv_out outs_s[DIRECT_MAX], *outs = outs_s;
  tfq_tensor *direct_s[DIRECT_MAX], **direct = NULL, *owner;
  size_t n = (size_t)tfq__op_ring_begin(op, (int64_t)b, outs_s, &owner);
  const int ring = n > 0;
  tfq_code c = TFQ_OK;
  if (ring) {
    if (!(cols = atomic_exchange(&op->cols, NULL)))
      c = tfq_tuple_new(tfq_csv_options_num_columns(op->csv), &cols, st);
  } else {
    n = b;
    c = step_outputs(op, (int64_t)b, &cols, outs_s, direct_s, &outs, &direct, st);
  }
  if (!c) c = tfq__decode_csv_span(op->csv, buf, len, holder, n, cols, outs, &count, &used, st);
  /* fewer than n lines and not at the end: the buffer is full of longer lines, all decoded; the
   * step takes them, and the next steps ask for an eighth fewer (lines vary) */
  int partial = !c && count < n && count > 0 && !at_end && used == len;
  int taken = !c && (count == n || partial);
  if (partial) {
    if (!ring) trim_rows(op, cols, direct, (int64_t)b, (int64_t)count);
    atomic_store_explicit(&op->span_lines, (int64_t)(count - count / 8), memory_order_relaxed);
  } else if (taken && b < (size_t)op->batch && !at_end && len - used > used / 4) {
    /* shorter lines again (after a long one): a quarter more a step, up to batch */
    size_t more = b + b / 4 + 1 < (size_t)op->batch ? b + b / 4 + 1 : (size_t)op->batch;
    atomic_store_explicit(&op->span_lines, (int64_t)more, memory_order_relaxed);
  }
  if (!c && count > 0) { /* bytes a line, rounded up; a short span: half as much again */
    size_t per = (used + count - 1) / count;
    atomic_store_explicit(&op->line_bytes, taken ? per : per + per / 2 + 1, memory_order_relaxed);
  }
  tfq__reader_lines_end(op->reader, taken ? used : 0, taken ? (int64_t)count : 0, &first);
  if (ring) tfq__op_ring_end(op, taken ? (int64_t)count : 0, owner);
  if (!taken) { /* nothing taken: lines_step decodes these lines again, or reports the error */
    free_direct(op, direct);
    if (cols) tfq_tuple_free(atomic_exchange(&op->cols, cols));
    if (c != TFQ_RESOURCE_EXHAUSTED) {
      tfq_status_clear(st);
      return TFQ_OK;
    }
    *handled = 1;
    return c;
  }
  *handled = 1;
  atomic_fetch_add_explicit(&op->span_steps, 1, memory_order_relaxed);
  if (!ring) return step_enqueue(op, cols, direct, (int64_t)count, TFQ_OK, cancel, st);
  atomic_fetch_add(&op->records, (int64_t)count);
  atomic_fetch_add_explicit(&op->ring_steps, 1, memory_order_relaxed);
  tfq_tuple_free(atomic_exchange(&op->cols, cols));
  return TFQ_OK;
}

int64_t tfq__read_decode_op_span_steps(tfq_read_decode_op *op) {
  return atomic_load_explicit(&op->span_steps, memory_order_relaxed);
}

int64_t tfq__read_decode_op_ring_steps(tfq_read_decode_op *op) {
  return atomic_load_explicit(&op->ring_steps, memory_order_relaxed);
}

/* The path for text lines (readers_shared.h): the reader's complete buffered lines are decoded
 * from one block copy, without a string per line or a key per record (keys are made only for an
 * error's location).  *handled 0: the ordinary read is needed (nothing was read). */
static tfq_code lines_step(tfq_read_decode_op *op, tfq_cancel *cancel, int *handled,
                           tfq_status *st) {
  *handled = 0;
  if (!op->csv || op->keys || op->shard_count > 1) return TFQ_OK;
  tfq_code c = span_step(op, cancel, handled, st);
  if (*handled) return c;
  /* The lines' tensor of the last step (any thread's), refilled in place, or a new one. */
  tfq_tensor *vt = atomic_exchange(&op->lines, NULL);
  int64_t m = 0, first = 0, dim = op->batch;
  const char *work = NULL;
  size_t work_len = 0;
  if (vt) {
    vt->dims[0] = vt->nelems = op->batch;
    tfq__tensor_strings_reset(vt);
  } else {
    c = tfq__tensor_alloc(TFQ_STRING, &dim, 1, 0, &vt, st);
  }
  if (!c) c = tfq__reader_take_lines(op->reader, vt, &m, &first, &work, &work_len, st);
  if (c || m == 0) {
    keep_lines(op, vt);
    *handled = c != TFQ_OK;
    return c;
  }
  *handled = 1;
  vt->dims[0] = vt->nelems = m;
  tfq_tuple *cols;
  tfq__csv_out outs_s[DIRECT_MAX], *outs;
  tfq_tensor *direct_s[DIRECT_MAX], **direct;
  c = step_outputs(op, m, &cols, outs_s, direct_s, &outs, &direct, st);
  if (!c)
    c = outs ? tfq__decode_csv_into_out(op->csv, vt, cols, outs, st)
             : tfq_decode_csv_into(op->csv, vt, cols, st);
  c = step_enqueue(op, cols, direct, m, c, cancel, st);
  if (c == TFQ_INVALID_ARGUMENT && tfq_status_record(st) >= 0) {
    tfq_tensor *keys = NULL;
    tfq_status ks;
    tfq_status_clear(&ks);
    if (tfq__reader_line_keys(work, work_len, first, m, &keys, &ks))
      c = tfq_status_set(st, tfq_status_code(&ks), "%s", tfq_status_message(&ks));
    else
      c = salvage(op, keys, vt, m, c, cancel, st);
    tfq_tensor_free(keys);
  }
  keep_lines(op, vt);
  return c;
}

tfq_code tfq_read_decode_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  tfq_read_decode_op *op = ctx;
  tfq_status local;
  tfq_status_clear(&local);
  if (!st) st = &local;
  int handled;
  tfq_code c = lines_step(op, cancel, &handled, st);
  if (handled) return c;
  tfq_tensor *keys = NULL, *values = NULL;
  c = tfq_reader_read_up_to(op->reader, op->work, op->batch, &keys, &values, cancel, st);
  if (c) {
    /* A reader error names its file and offset (TF's reader messages do not say which file). */
    const char *file = tfq_status_file(st);
    if (c != TFQ_OUT_OF_RANGE && c != TFQ_CANCELLED && *file && !st->named) {
      if (tfq_status_offset(st) >= 0)
        tfq__status_prefix(st, "%s at byte offset %lld: ", file, (long long)tfq_status_offset(st));
      else
        tfq__status_prefix(st, "%s: ", file);
    }
    return c;
  }
  int64_t n = op->shard_count > 1 ? keep_shard(op, keys, values) : keys->nelems;
  c = n > 0 ? deliver(op, keys, values, n, cancel, st) : TFQ_OK;
  if (c) c = salvage(op, keys, values, n, c, cancel, st);
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  return c;
}
