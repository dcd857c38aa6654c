/* Decoding a read step into parts: runs of good records, and each bad record on its own with its
 * place and TF's message for it alone, in input order (pipeline_internal.h); CSV lines decoded
 * where they lie in the reader's buffer. */
#include <string.h>

#include "../csv/csv_shared.h"
#include "../readers/readers_shared.h"
#include "pipeline_internal.h"

/* ---- parts ---- */

pl_part *tfq__pl_part_new(int kind) {
  pl_part *q = tfq__calloc(1, sizeof *q);
  if (q) {
    q->kind = kind;
    q->refs = 1;
    q->line = q->offset = -1;
  }
  return q;
}

void tfq__pl_part_free(pl_part *q, size_t ncols) {
  if (!q) return;
  for (size_t i = 0; q->cols && i < ncols; i++) tfq_tensor_free(q->cols[i]);
  for (size_t i = 0; q->splits && i < ncols; i++) tfq_free(q->splits[i]);
  tfq_free(q->cols);
  tfq_free(q->splits);
  tfq_free(q->where);
  tfq_free(q->reason);
  tfq_free(q->file);
  tfq_free(q);
}

pl_part *tfq__pl_part_bad(const tfq_status *s, const char *where, int fatal) {
  pl_part *q = tfq__pl_part_new(PART_BAD);
  if (!q) return NULL;
  q->code = tfq_status_code(s);
  q->fatal = fatal;
  q->where = tfq__strdup(where ? where : "");
  q->reason = tfq__strdup(tfq_status_reason(s));
  q->file = tfq__strdup(tfq_status_file(s));
  q->line = tfq_status_line(s);
  q->offset = tfq_status_offset(s);
  if (!q->where || !q->reason || !q->file) {
    tfq__pl_part_free(q, 0);
    return NULL;
  }
  return q;
}

tfq_tuple *tfq__pl_pool_get(tfq_pipeline *p, int64_t rows, int64_t *room) {
  tfq_tuple *t = NULL;
  tfq__lock(&p->pool_mu);
  for (int i = p->npool; i-- > 0;)
    if (p->pool[i].rows >= rows) {
      t = p->pool[i].t;
      *room = p->pool[i].rows;
      p->pool[i] = p->pool[--p->npool];
      break;
    }
  tfq__unlock(&p->pool_mu);
  if (!t) {
    *room = rows;
    return tfq_tuple_new(p->ncols, &t, NULL) ? NULL : t;
  }
  for (size_t i = 0; i < p->ncols; i++) { /* [rows]: decode_csv refills them in place */
    tfq_tensor *c = t->c[i];
    if (!c) { /* decode_csv makes it, with room for `rows` only */
      *room = rows;
      continue;
    }
    c->dims[0] = c->nelems = rows;
    if (c->dtype != TFQ_STRING) c->nbytes = (size_t)rows * tfq_dtype_size(c->dtype);
  }
  return t;
}

void tfq__pl_part_recycle(tfq_pipeline *p, pl_part *q) {
  const int cap = (int)(sizeof p->pool / sizeof p->pool[0]);
  tfq_tuple *t = NULL;
  if (q->rows_alloc > 0 && q->cols && !q->splits && !tfq_tuple_new(p->ncols, &t, NULL)) {
    for (size_t i = 0; i < p->ncols; i++) {
      tfq_tensor *c = q->cols[i];
      q->cols[i] = NULL;
      if (c && tfq__tensor_sole(c))
        tfq_tuple_set_take(t, i, c);
      else /* a batch still views its strings: not reused */
        tfq_tensor_free(c);
    }
    tfq__lock(&p->pool_mu);
    if (p->npool < cap) {
      p->pool[p->npool].t = t;
      p->pool[p->npool++].rows = q->rows_alloc;
      t = NULL;
    }
    tfq__unlock(&p->pool_mu);
    tfq_tuple_free(t);
  }
  tfq__pl_part_free(q, p->ncols);
}

void tfq__pl_pool_free(tfq_pipeline *p) {
  for (int i = 0; i < p->npool; i++) tfq_tuple_free(p->pool[i].t);
  p->npool = 0;
}

void tfq__pl_chunk_add(pl_chunk *c, pl_part *q) {
  if (c->tail)
    c->tail->next = q;
  else
    c->head = q;
  c->tail = q;
}

/* The lines of a span as (pointer, length) pairs, as a TextLineReader gives them ('\n' and a
 * '\r' before it dropped). */
static tfq_code span_lines(pl_step *in, tfq_status *st) {
  int64_t n = in->n;
  in->ptrs = tfq_malloc((size_t)(n ? n : 1) * sizeof *in->ptrs);
  in->lens = tfq_malloc((size_t)(n ? n : 1) * sizeof *in->lens);
  if (!in->ptrs || !in->lens) return TFQ__OOM(st);
  const char *q = in->span, *e = in->span + in->span_len;
  for (int64_t i = 0; i < n; i++) {
    const char *nl = memchr(q, '\n', (size_t)(e - q));
    size_t len = (size_t)(nl - q);
    if (len && q[len - 1] == '\r') len--;
    in->ptrs[i] = q;
    in->lens[i] = len;
    q = nl + 1;
  }
  return TFQ_OK;
}

/* A span decoded at once (every line good): 1 with the part added to `c`; 0 for the line-by-line
 * path (a bad line, which decode_range finds and reports); -1 out of memory. */
static int decode_span(tfq_pipeline *p, pl_step *in, pl_chunk *c, tfq_status *st) {
  tfq_tuple *cols = NULL;
  pl_part *q = tfq__pl_part_new(PART_RECORDS);
  tfq_status s;
  tfq__status_ok(&s);
  size_t count = 0, used = 0;
  /* string fields are views of the reader's buffer (in->holder), not copies: a view keeps a read
   * buffer alive while a row of its step is in the shuffle buffer, so the reader takes fresh
   * pages more often, but with the parts' tensors pooled (tfq__pl_pool_get) the copies cost more
   * (2 readers on the mixed set, perf stat -r 10: 128.6 ms of CPU and 3,450 page faults with
   * views, 137.0 ms and 1,670 with copies; the maximum RSS stays 8.7 MB over 3 passes) */
  tfq_code rc = q && (q->cols = tfq__calloc(p->ncols, sizeof *q->cols)) ? TFQ_OK : TFQ__OOM(&s);
  int64_t room = 0;
  if (!rc && !(cols = tfq__pl_pool_get(p, in->n, &room))) rc = TFQ__OOM(&s);
  if (!rc)
    rc = tfq__decode_csv_span(p->csv, in->span, in->span_len, in->holder, (size_t)in->n, cols, NULL,
                              &count, &used, &s);
  if (rc || count != (size_t)in->n) {
    tfq_tuple_free(cols);
    tfq__pl_part_free(q, p->ncols);
    if (rc != TFQ_RESOURCE_EXHAUSTED) return 0;
    tfq_status_set(st, rc, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < p->ncols; i++) q->cols[i] = tfq_tensor_ref(tfq_tuple_get(cols, i));
  tfq_tuple_free(cols);
  q->n = in->n;
  q->rows_alloc = room;
  tfq__pl_chunk_add(c, q);
  return 1;
}

/* The FixedLenSequence columns of records [lo, hi) into q (ragged: values and splits): each
 * record parsed alone with the sequence features' config, which gives its own rows, unpadded (the
 * batch output pads every record to the longest).  The batch parse succeeded, so these do. */
static tfq_code decode_seq(tfq_pipeline *p, pl_step *in, int64_t lo, int64_t hi, pl_part *q,
                           tfq_status *st) {
  int64_t n = hi - lo;
  tfq_example_result **res = tfq__calloc((size_t)(n ? n : 1), sizeof *res);
  tfq_code rc = res ? TFQ_OK : TFQ__OOM(st);
  if (!rc && !q->splits && !(q->splits = tfq__calloc(p->ncols, sizeof *q->splits)))
    rc = TFQ__OOM(st);
  for (int64_t r = 0; !rc && r < n; r++)
    rc = tfq_parse_example_strings(p->seq_cfg, in->ptrs + lo + r, in->lens + lo + r, 1, NULL, NULL,
                                   &res[r], st);
  for (size_t c = 0; !rc && c < p->ncols; c++) {
    const pl_column *col = &p->cols[c];
    if (!col->seq) continue;
    int64_t *sp = q->splits[c] = tfq_malloc((size_t)(n + 1) * sizeof *sp);
    if (!sp) {
      rc = TFQ__OOM(st);
      break;
    }
    sp[0] = 0;
    for (int64_t r = 0; r < n; r++) /* [1, rows, row shape]: the record's rows */
      sp[r + 1] = sp[r] + tfq_tensor_dim(tfq_example_result_dense(res[r], col->seq_out), 1);
    int64_t flat = sp[n] * col->width;
    if ((rc = tfq__tensor_alloc(col->dtype, &flat, 1, 0, &q->cols[c], st))) break;
    for (int64_t r = 0; !rc && r < n; r++) {
      const tfq_tensor *d = tfq_example_result_dense(res[r], col->seq_out);
      int64_t k = tfq_tensor_num_elements(d), at = sp[r] * col->width;
      if (col->dtype != TFQ_STRING) {
        size_t es = tfq_dtype_size(col->dtype);
        memcpy((char *)q->cols[c]->data + (size_t)at * es, tfq_tensor_cdata(d), (size_t)k * es);
        continue;
      }
      for (int64_t e = 0; !rc && e < k; e++) {
        size_t len;
        const char *s = tfq_tensor_string(d, e, &len);
        if (tfq__tensor_put_string(q->cols[c], at + e, s, len)) rc = TFQ__OOM(st);
      }
    }
  }
  for (int64_t r = 0; res && r < n; r++) tfq_example_result_free(res[r]);
  tfq_free(res);
  return rc;
}

/* The keys of a step whose lines came from the buffer. */
static tfq_code in_keys(pl_step *in, tfq_status *st) {
  if (in->keys) return TFQ_OK;
  return tfq__reader_line_keys(in->work, in->work_len, in->first, in->n, &in->keys, st);
}

/* A string tensor of rows lo..hi of `t` (a new reference to `t` for the whole of it). */
static tfq_tensor *slice_strings(tfq_tensor *t, int64_t lo, int64_t hi, const int64_t *rows) {
  int64_t n = rows ? hi : hi - lo;
  if (!rows && lo == 0 && hi == tfq_tensor_num_elements(t)) return tfq_tensor_ref(t);
  tfq_tensor *o;
  if (tfq_tensor_new(TFQ_STRING, &n, 1, &o, NULL)) return NULL;
  for (int64_t i = 0; i < n; i++) {
    size_t len;
    const char *b = tfq_tensor_string(t, rows ? rows[i] : lo + i, &len);
    if (tfq_tensor_set_string(o, i, b, len, NULL)) {
      tfq_tensor_free(o);
      return NULL;
    }
  }
  return o;
}

/* Decodes rows [lo, hi) of `in` (all good): a part, or the status of the decoder. */
static tfq_code decode_rows(tfq_pipeline *p, pl_step *in, int64_t lo, int64_t hi, pl_part **out,
                            tfq_status *st) {
  pl_part *q = tfq__pl_part_new(PART_RECORDS);
  if (!q || !(q->cols = tfq__calloc(p->ncols, sizeof *q->cols))) {
    tfq__pl_part_free(q, 0);
    return TFQ__OOM(st);
  }
  q->n = hi - lo;
  size_t nd = p->ncols - (size_t)p->o.keys;
  tfq_code rc = TFQ_OK;
  if (p->o.format == TFQ_FORMAT_CSV) {
    tfq_tuple *t;
    rc = tfq_decode_csv_lines(p->csv, in->ptrs + lo, in->lens + lo, (size_t)(hi - lo), &t, st);
    if (!rc) {
      for (size_t i = 0; i < nd; i++) q->cols[i] = tfq_tensor_ref(tfq_tuple_get(t, i));
      tfq_tuple_free(t);
    }
  } else if (p->o.format == TFQ_FORMAT_EXAMPLES) {
    tfq_example_result *r;
    rc = tfq_parse_example_strings(p->o.features, in->ptrs + lo, in->lens + lo, hi - lo, NULL, NULL,
                                   &r, st);
    if (!rc) {
      for (size_t i = 0; !rc && i < nd; i++) {
        if (p->cols[i].seq) continue; /* decode_seq, below */
        if (!p->cols[i].sparse) {
          q->cols[i] = tfq_tensor_ref(tfq_example_result_dense(r, i));
          continue;
        }
        /* a VarLen feature: its values, and where each record's start (the sparse indices are
         * (record, position) in record order) */
        const tfq_sparse_tensor *sp = tfq_example_result_sparse(r, i);
        q->cols[i] = tfq_tensor_ref(sp->values);
        if (!q->splits && !(q->splits = tfq__calloc(p->ncols, sizeof *q->splits))) {
          rc = TFQ__OOM(st);
          break;
        }
        int64_t *sp_rows = q->splits[i] = tfq_malloc((size_t)(hi - lo + 1) * sizeof *sp_rows);
        if (!sp_rows) {
          rc = TFQ__OOM(st);
          break;
        }
        const int64_t *idx = tfq_tensor_cdata(sp->indices);
        int64_t nv = tfq_tensor_dim(sp->values, 0), j = 0;
        for (int64_t row = 0; row < hi - lo; row++) {
          sp_rows[row] = j;
          while (j < nv && idx[2 * j] == row) j++;
        }
        sp_rows[hi - lo] = j;
      }
      tfq_example_result_free(r);
      if (!rc && p->seq_cfg) rc = decode_seq(p, in, lo, hi, q, st);
    }
  } else {
    if (!(q->cols[0] = slice_strings(in->values, lo, hi, NULL))) rc = TFQ__OOM(st);
  }
  if (!rc && p->o.keys &&
      (in_keys(in, st) || !(q->cols[nd] = slice_strings(in->keys, lo, hi, NULL))))
    rc = TFQ__OOM(st);
  if (rc) {
    tfq__pl_part_free(q, p->ncols);
    return rc;
  }
  *out = q;
  return TFQ_OK;
}

/* A bad record: row `row`, with the decoder's message for it alone. */
static tfq_code bad_row(tfq_pipeline *p, pl_step *in, int64_t row, pl_chunk *c, tfq_status *st) {
  pl_part *q = NULL;
  tfq_status s;
  tfq__status_ok(&s);
  tfq_code rc = decode_rows(p, in, row, row + 1, &q, &s);
  if (rc == TFQ_OK) { /* good alone (cannot happen with a deterministic decoder) */
    tfq__pl_chunk_add(c, q);
    return TFQ_OK;
  }
  if (rc == TFQ_RESOURCE_EXHAUSTED) return tfq_status_set(st, rc, "out of memory");
  if (in_keys(in, st)) return TFQ__OOM(st);
  size_t klen;
  const char *key = tfq_tensor_string(in->keys, row, &klen);
  size_t flen;
  int64_t num;
  char where[TFQ__FILE_CAP + 32];
  int text = p->kind == TFQ_READER_TEXT_LINE;
  int64_t recno = in->base + (in->rowmap ? in->rowmap[row] : row);
  char *m =
      p->o.format == TFQ_FORMAT_EXAMPLES && recno > 0 ? tfq__strdup(tfq_status_message(&s)) : NULL;
  const char *ix = m ? strstr(m, ", Index: 0.") : NULL;
  if (ix) /* as parse_example of the file's records in one batch: "Index:" the record's number */
    tfq_status_set(&s, tfq_status_code(&s), "%.*s, Index: %lld.%s", (int)(ix - m), m,
                   (long long)recno, ix + 11);
  tfq_free(m);
  if (tfq_reader_key_split(key, klen, &flen, &num)) {
    /* lines: "<file>:<line>"; records: "<file>:<record number in the file, from 0>" (the key's
     * number, a TFRecord's byte offset, goes to the status's offset) */
    snprintf(where, sizeof where, "%.*s:%lld", (int)flen, key, (long long)(text ? num : recno));
    tfq_status_set_location(&s, key, flen, text ? -1 : num, text ? num : -1);
  } else {
    snprintf(where, sizeof where, "%.*s", (int)klen, key);
  }
  q = tfq__pl_part_bad(&s, where, 0);
  if (!q) return TFQ__OOM(st);
  tfq__pl_chunk_add(c, q);
  return TFQ_OK;
}

/* Decodes rows [lo, hi): runs of good rows as parts, each bad row as its own part. */
static tfq_code decode_range(tfq_pipeline *p, pl_step *in, int64_t lo, int64_t hi, pl_chunk *c,
                             tfq_status *st) {
  while (lo < hi) {
    pl_part *q;
    tfq_status s;
    tfq__status_ok(&s);
    tfq_code rc = decode_rows(p, in, lo, hi, &q, &s);
    if (rc == TFQ_OK) {
      tfq__pl_chunk_add(c, q);
      return TFQ_OK;
    }
    if (rc == TFQ_RESOURCE_EXHAUSTED) return tfq_status_set(st, rc, "out of memory");
    int64_t j = tfq_status_record(&s);
    if (j < 0 || j >= hi - lo) { /* no index: halve */
      if (hi - lo == 1) return bad_row(p, in, lo, c, st);
      int64_t mid = lo + (hi - lo) / 2;
      if ((rc = decode_range(p, in, lo, mid, c, st))) return rc;
      lo = mid;
      continue;
    }
    if (j > 0 && (rc = decode_range(p, in, lo, lo + j, c, st))) return rc;
    if ((rc = bad_row(p, in, lo + j, c, st))) return rc;
    lo += j + 1;
  }
  return TFQ_OK;
}

tfq_code tfq__pl_produce(tfq_pipeline *p, pl_chunk *c, tfq_status *st) {
  pl_step in = {0};
  int64_t base = 0;
  tfq__lock(&p->src_mu);
  c->seq = p->src.next_seq++;
  tfq_code rc = tfq__pl_read_step(p, c, &in, &base, st);
  tfq__unlock(&p->src_mu);
  if (!rc && in.holder) { /* CSV lines in the reader's buffer */
    atomic_fetch_add(&p->records_read, in.n);
    atomic_fetch_add(&p->bytes_read, (int64_t)in.span_len - in.n); /* without the '\n's */
    in.base = base;
    size_t bom = tfq__pl_bom(&p->o, base, in.span, in.span_len);
    in.span += bom;
    in.span_len -= bom;
    int d = decode_span(p, &in, c, st);
    if (d == 0) {
      rc = span_lines(&in, st);
      if (!rc) rc = decode_range(p, &in, 0, in.n, c, st);
    } else if (d < 0) {
      rc = TFQ_RESOURCE_EXHAUSTED;
    }
    tfq_free(in.ptrs);
    tfq_free(in.lens);
    tfq_tensor_free(in.keys);
    tfq_tensor_free(in.holder);
    return rc;
  }
  if (rc || !in.values) return rc;
  int64_t n = in.n, bytes = 0;
  in.base = base;
  if (p->o.shard_n > 1 && !p->shard_files) { /* shard by record number in the file */
    int64_t *rows = tfq_malloc((size_t)(n ? n : 1) * sizeof *rows), m = 0;
    if (!rows || in_keys(&in, st)) rc = TFQ__OOM(st);
    for (int64_t r = 0; !rc && r < n; r++)
      if ((base + r) % p->o.shard_n == p->o.shard_i) rows[m++] = r;
    tfq_tensor *k = NULL, *v = NULL;
    if (!rc &&
        (!(k = slice_strings(in.keys, 0, m, rows)) || !(v = slice_strings(in.values, 0, m, rows))))
      rc = TFQ__OOM(st);
    in.rowmap = rows;
    tfq_tensor_free(in.keys);
    tfq_tensor_free(in.values);
    in.keys = k;
    in.values = v;
    in.n = n = m;
  }
  if (!rc) {
    in.ptrs = tfq_malloc((size_t)(n ? n : 1) * sizeof *in.ptrs);
    in.lens = tfq_malloc((size_t)(n ? n : 1) * sizeof *in.lens);
    if (!in.ptrs || !in.lens) rc = TFQ__OOM(st);
    const tfq__str *v = in.values ? tfq__strs(in.values) : NULL;
    for (int64_t i = 0; !rc && i < n; i++) {
      size_t bom = tfq__pl_bom(&p->o, base + (in.rowmap ? in.rowmap[i] : i), v[i].p, v[i].len);
      in.ptrs[i] = v[i].p + bom;
      in.lens[i] = v[i].len - bom;
      bytes += (int64_t)v[i].len;
    }
  }
  atomic_fetch_add(&p->records_read, n);
  atomic_fetch_add(&p->bytes_read, bytes);
  if (!rc) rc = decode_range(p, &in, 0, n, c, st);
  tfq_free(in.ptrs);
  tfq_free(in.lens);
  tfq_free(in.rowmap);
  tfq_tensor_free(in.keys);
  if (in.work)
    tfq__pl_recycle_lines(p, in.values);
  else
    tfq_tensor_free(in.values);
  return rc;
}
