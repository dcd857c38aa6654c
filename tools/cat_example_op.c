/* tfq-cat's reader op for tf.train.Example input: read_up_to -> parse_example (the batch path,
 * on the batch the reader returned) -> the record queue's components -> enqueue_many.  See
 * cat_example.h for the components and the encoding of VarLen and FixedLenSequence lists. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cat_example.h"

struct example_op {
  app *a;
  tfq_reader *reader;
  int64_t chunk;
  _Atomic int64_t records;
  /* Numbering the records of a file (for messages): the file and offset of the last record
   * read, and its index in that file. */
  char *file;
  size_t file_len;
  int64_t offset, index;
};

example_op *example_op_new(app *a, tfq_reader *reader, int64_t chunk) {
  example_op *op = xcalloc(1, sizeof *op);
  op->a = a;
  op->reader = reader;
  op->chunk = chunk;
  op->index = -1;
  atomic_init(&op->records, 0);
  return op;
}

void example_op_free(example_op *op) {
  if (!op) return;
  free(op->file);
  free(op);
}

int64_t example_op_records(const example_op *op) { return atomic_load(&op->records); }

/* Advances the file numbering over key k (TFRecord keys are "<file>:<byte offset>"): a new file,
 * or an offset that went back (the file read again, in a later epoch), starts at 0. */
static void count_key(example_op *op, const char *k, size_t n) {
  size_t fl = n;
  int64_t off = -1;
  if (!tfq_reader_key_split(k, n, &fl, &off)) off = -1;
  if (!op->file || fl != op->file_len || memcmp(k, op->file, fl) != 0 || off <= op->offset) {
    free(op->file);
    op->file = xstrndup(k, fl);
    op->file_len = fl;
    op->index = -1;
  }
  op->offset = off;
  op->index++;
}

/* Appends value j of `values` (a sparse or dense output) to the encoded list b. */
static void encode_value(sbuf *b, const tfq_tensor *values, int64_t j) {
  tfq_dtype dt = tfq_tensor_dtype(values);
  if (dt == TFQ_STRING) {
    size_t len;
    const char *s = tfq_tensor_string(values, j, &len);
    uint64_t l = len;
    sb_add(b, (const char *)&l, sizeof l);
    sb_add(b, s, len);
  } else {
    size_t esz = tfq_dtype_size(dt);
    sb_add(b, (const char *)tfq_tensor_cdata(values) + (size_t)j * esz, esz);
  }
}

/* A VarLen output of n records as n encoded lists.  The sparse indices are (record, position)
 * in record order, then position order (spec §3.3). */
static tfq_code var_len_column(const tfq_sparse_tensor *sp, int64_t n, tfq_tensor **out,
                               tfq_status *st) {
  tfq_code c = tfq_tensor_new(TFQ_STRING, &n, 1, out, st);
  const int64_t *idx = tfq_tensor_cdata(sp->indices);
  int64_t nv = tfq_tensor_dim(sp->values, 0), j = 0;
  sbuf b = {0};
  for (int64_t r = 0; !c && r < n; r++) {
    sb_clear(&b);
    for (; j < nv && idx[2 * j] == r; j++) encode_value(&b, sp->values, j);
    c = tfq_tensor_set_string(*out, r, b.p ? b.p : "", b.n, st);
  }
  free(b.p);
  return c;
}

/* The FixedLenSequence columns of n records: each record parsed alone with the config of these
 * features (`seq`), which gives its own rows, unpadded (the batch output pads every record to
 * the batch's longest).  A FixedLenSequence output is the same in both, as the batch parse of
 * every feature succeeded. */
static tfq_code seq_columns(const cat_example *ex, const char *const *ptrs, const size_t *lens,
                            int64_t n, tfq_tuple *comp, tfq_status *st) {
  tfq_code c = TFQ_OK;
  for (size_t i = 0; !c && i < ex->ncols; i++)
    if (ex->cols[i].kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) {
      tfq_tensor *t;
      if ((c = tfq_tensor_new(TFQ_STRING, &n, 1, &t, st))) break;
      tfq_tuple_set_take(comp, i, t);
    }
  sbuf b = {0};
  for (int64_t r = 0; !c && r < n; r++) {
    tfq_example_result *res;
    if ((c = tfq_parse_example_strings(ex->seq, &ptrs[r], &lens[r], 1, NULL, NULL, &res, st)))
      break;
    for (size_t i = 0; !c && i < ex->ncols; i++) {
      if (ex->cols[i].kind != TFQ_EXAMPLE_FIXED_LEN_SEQUENCE) continue;
      const tfq_tensor *d = tfq_example_result_dense(res, ex->cols[i].seq_out);
      sb_clear(&b);
      for (int64_t j = 0; j < tfq_tensor_num_elements(d); j++) encode_value(&b, d, j);
      c = tfq_tensor_set_string(tfq_tuple_get(comp, i), r, b.p ? b.p : "", b.n, st);
    }
    tfq_example_result_free(res);
  }
  free(b.p);
  return c;
}

/* parse_example of records [0, n) of the batch, the components, enqueue_many. */
static tfq_code deliver(example_op *op, const tfq_tensor *keys, const char *const *ptrs,
                        const size_t *lens, int64_t n, tfq_cancel *cancel, tfq_status *st) {
  const app *a = op->a;
  const cat_example *ex = a->ex;
  tfq_example_result *res = NULL;
  tfq_tuple *comp = NULL;
  tfq_code c = tfq_parse_example_strings(ex->cfg, ptrs, lens, n, NULL, NULL, &res, st);
  if (!c) c = tfq_tuple_new(ex->ncols + (a->o.keys != 0), &comp, st);
  if (!c && ex->seq) c = seq_columns(ex, ptrs, lens, n, comp, st);
  for (size_t i = 0; !c && i < ex->ncols; i++) {
    const ex_col *col = &ex->cols[i];
    tfq_tensor *t = NULL;
    if (col->kind == TFQ_EXAMPLE_FIXED_LEN)
      t = tfq_tensor_ref(tfq_example_result_dense(res, col->out));
    else if (col->kind == TFQ_EXAMPLE_VAR_LEN)
      c = var_len_column(tfq_example_result_sparse(res, col->out), n, &t, st);
    if (t) tfq_tuple_set_take(comp, i, t);
  }
  if (!c && a->o.keys) { /* the keys of these n records */
    tfq_tensor *k = NULL;
    c = tfq_tensor_new(TFQ_STRING, &n, 1, &k, st);
    for (int64_t r = 0; !c && r < n; r++) {
      size_t len;
      const char *s = tfq_tensor_string(keys, r, &len);
      c = tfq_tensor_set_string(k, r, s, len, st);
    }
    if (k) tfq_tuple_set_take(comp, ex->ncols, k);
  }
  if (!c) c = tfq_queue_enqueue_many(a->q, comp, cancel, TFQ_NO_TIMEOUT, st);
  if (!c) atomic_fetch_add(&op->records, n);
  tfq_tuple_free(comp);
  tfq_example_result_free(res);
  return c;
}

/* A parse error in record r of a batch: TF's message for that record alone (so that it says
 * "Index: 0" whatever the batch), prefixed with the file as the user named it and the record's
 * index in that file; the file and the record's offset as data. */
static tfq_code locate(example_op *op, const tfq_tensor *keys, const char *const *ptrs,
                       const size_t *lens, int64_t r, tfq_code c, tfq_status *st) {
  tfq_example_result *res = NULL;
  tfq_code c1 =
      tfq_parse_example_strings(op->a->ex->cfg, &ptrs[r], &lens[r], 1, NULL, NULL, &res, st);
  tfq_example_result_free(res);
  if (!c1) return c; /* cannot happen: errors are per record; keep the batch's message */
  size_t klen, fl;
  const char *k = tfq_tensor_string(keys, r, &klen);
  int64_t off = -1;
  if (!tfq_reader_key_split(k, klen, &fl, &off)) fl = klen;
  char *path = xstrndup(k, fl);
  const input_file *f = find_file(op->a, path);
  sbuf m = {0};
  sb_printf(&m, "%s:%" PRId64 ": %s", f ? f->display : path, op->index, tfq_status_message(st));
  tfq_status_set(st, c1, "%s", m.p);
  tfq_status_set_location(st, path, fl, off, -1);
  free(m.p);
  free(path);
  return c1;
}

tfq_code example_step(void *ctx, tfq_cancel *cancel, tfq_status *st) {
  example_op *op = ctx;
  tfq_status *local = NULL;
  if (!st && !(st = local = tfq_status_new())) die_oom();
  tfq_tensor *keys = NULL, *values = NULL;
  tfq_code c =
      tfq_reader_read_up_to(op->reader, op->a->filenames, op->chunk, &keys, &values, cancel, st);
  if (c) {
    if (c != TFQ_OUT_OF_RANGE && c != TFQ_CANCELLED) c = name_error(op->a, c, st);
    tfq_status_free(local);
    return c;
  }
  int64_t n = tfq_tensor_num_elements(values);
  const char **ptrs = xcalloc((size_t)n, sizeof *ptrs);
  size_t *lens = xcalloc((size_t)n, sizeof *lens);
  for (int64_t i = 0; i < n; i++) ptrs[i] = tfq_tensor_string(values, i, &lens[i]);
  c = deliver(op, keys, ptrs, lens, n, cancel, st);
  int64_t r = c == TFQ_INVALID_ARGUMENT ? tfq_status_record(st) : -1;
  /* Number the records: all of them, or up to the failing one. */
  for (int64_t i = 0; i < (r >= 0 && r < n ? r + 1 : n); i++) {
    size_t len;
    const char *k = tfq_tensor_string(keys, i, &len);
    count_key(op, k, len);
  }
  if (r >= 0 && r < n) {
    /* Keep the r good records before the bad one (TF drops the whole batch): they are
     * delivered, then the error is reported. */
    tfq_status *s2 = tfq_status_new();
    if (!s2) die_oom();
    tfq_code c2 = r > 0 ? deliver(op, keys, ptrs, lens, r, cancel, s2) : TFQ_OK;
    if (c2 && c2 != TFQ_CANCELLED)
      c = tfq_status_set(st, c2, "%s", tfq_status_message(s2));
    else
      c = locate(op, keys, ptrs, lens, r, c, st);
    tfq_status_free(s2);
  }
  free(ptrs);
  free(lens);
  tfq_tensor_free(keys);
  tfq_tensor_free(values);
  tfq_status_free(local);
  return c;
}
