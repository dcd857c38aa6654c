/* tfq-cat --schema and --sample N (see cat_b.h).  --sample: a uniform sample of N records of the
 * whole input, by reservoir sampling (Vitter's algorithm R) over the batches the pipeline returns:
 * record t (0-based, in input order) takes a place when t < N, else replaces place j, j uniform in
 * [0, t], when j < N; so every record ends in the sample with probability N / M (M records
 * in all).  The draws come from a splitmix64 stream seeded with --seed, without modulo bias. */
#include <stdlib.h>
#include <string.h>

#include "cat_app.h"
#include "cat_b.h"
#include "cat_output.h"

struct cat_sample {
  int64_t n, filled, seen;
  uint64_t rng;
  tfq_tuple *res; /* the reservoir: per slot a tensor [n, record shape] */
  size_t nslots;
};

static uint64_t next64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, bound) (bound >= 1), by rejection. */
static uint64_t below(uint64_t *s, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound, r;
  do r = next64(s);
  while (r >= limit);
  return r % bound;
}

cat_sample *sample_new(const tfq_pipeline *p, int64_t n, uint64_t seed) {
  for (size_t c = 0; c < tfq_pipeline_num_columns(p); c++)
    if (tfq_pipeline_column_is_sparse(p, c) || tfq_pipeline_column_is_ragged(p, c))
      usage_error("--sample: column '%s' holds a list of varying length per record",
                  tfq_pipeline_column_name(p, c));
  cat_sample *s = xcalloc(1, sizeof *s);
  s->n = n;
  s->rng = seed;
  s->nslots = tfq_pipeline_num_slots(p);
  return s;
}

/* Row r of slot tensor `from` into row k of `to` (same dtype and record shape). */
static void copy_row(tfq_tensor *to, int64_t k, const tfq_tensor *from, int64_t r, tfq_status *st) {
  int64_t w = 1;
  for (int i = 1; i < tfq_tensor_rank(from); i++) w *= tfq_tensor_dim(from, i);
  if (tfq_tensor_dtype(from) == TFQ_STRING) {
    for (int64_t e = 0; e < w; e++) {
      size_t len;
      const char *b = tfq_tensor_string(from, r * w + e, &len);
      if (tfq_tensor_set_string(to, k * w + e, b, len, st)) die_oom();
    }
    return;
  }
  size_t es = tfq_dtype_size(tfq_tensor_dtype(from)) * (size_t)w;
  memcpy((char *)tfq_tensor_data(to) + (size_t)k * es,
         (const char *)tfq_tensor_cdata(from) + (size_t)r * es, es);
}

void sample_add(cat_sample *s, const tfq_tuple *b, int64_t rows) {
  tfq_status *st = tfq_status_new();
  if (!st) die_oom();
  if (!s->res) { /* the reservoir's tensors, shaped as this batch's with n rows */
    if (tfq_tuple_new(s->nslots, &s->res, st)) die_oom();
    for (size_t i = 0; i < s->nslots; i++) {
      const tfq_tensor *t = tfq_tuple_get(b, i);
      int64_t dims[16];
      int rank = tfq_tensor_rank(t);
      for (int d = 0; d < rank && d < 16; d++) dims[d] = tfq_tensor_dim(t, d);
      dims[0] = s->n;
      tfq_tensor *r;
      if (tfq_tensor_new(tfq_tensor_dtype(t), dims, rank, &r, st)) die_oom();
      tfq_tuple_set_take(s->res, i, r);
    }
  }
  for (int64_t r = 0; r < rows; r++, s->seen++) {
    int64_t k = s->seen < s->n ? s->seen : (int64_t)below(&s->rng, (uint64_t)s->seen + 1);
    if (k >= s->n) continue;
    for (size_t i = 0; i < s->nslots; i++)
      copy_row(tfq_tuple_get(s->res, i), k, tfq_tuple_get(b, i), r, st);
    if (s->filled < s->n) s->filled++;
  }
  tfq_status_free(st);
}

void sample_emit(app *a, cat_sample *s) {
  if (s->filled) {
    emit_batch(a, s->res, s->filled);
    a->batches_out++;
    a->records_out += s->filled;
  }
}

void sample_free(cat_sample *s) {
  if (!s) return;
  tfq_tuple_free(s->res);
  free(s);
}

int print_schema(const app *a) {
  const tfq_pipeline *p = a->p;
  sbuf s = {0};
  for (size_t c = 0; c < a->ncols; c++) {
    size_t pc = a->col[c];
    sb_printf(&s, "%s\t%s", a->names[c], spec_type_name(tfq_pipeline_column_dtype(p, pc)));
    int rank = tfq_pipeline_column_rank(p, pc);
    const int64_t *d = tfq_pipeline_column_dims(p, pc);
    if (tfq_pipeline_column_is_sparse(p, pc)) {
      sb_puts(&s, "[*]");
    } else if (rank > 0) {
      for (int i = 0; i < rank; i++)
        if (d[i] < 0)
          sb_printf(&s, "%s?", i ? "," : "[");
        else
          sb_printf(&s, "%s%lld", i ? "," : "[", (long long)d[i]);
      sb_putc(&s, ']');
    }
    sb_putc(&s, '\n');
  }
  const char *spec = tfq_pipeline_columns_spec(p);
  const char *feat = tfq_pipeline_features_spec(p);
  if (spec) sb_printf(&s, "-d '%s'\n", spec);
  if (feat) sb_printf(&s, "--features '%s'\n", feat);
  fwrite(s.p ? s.p : "", 1, s.n, stdout);
  free(s.p);
  return fflush(stdout) ? EXIT_DATA : EXIT_OK;
}
