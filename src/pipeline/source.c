/* The pipeline's inputs and its source of read steps: the files (globs expanded, sharded), the
 * columns, the readers, the epoch's file order, and a step read under the source's lock (decoded
 * outside it by decode.c). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../csv/csv_shared.h"
#include "../readers/readers_shared.h"
#include "pipeline_internal.h"

/* ---- set-up ---- */

static tfq_code add_path(tfq_pipeline *p, const char *path, size_t *cap, tfq_status *st) {
  struct stat sb;
  if (stat(path, &sb) != 0)
    return tfq_status_set(st, errno == ENOENT ? TFQ_NOT_FOUND : TFQ_UNKNOWN, "%s; %s", path,
                          strerror(errno));
  if (S_ISDIR(sb.st_mode))
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION, "%s; %s", path, strerror(EISDIR));
  if (p->nfiles == *cap) {
    size_t nc = *cap ? 2 * *cap : 8;
    pl_file *f = tfq_realloc(p->files, nc * sizeof *f);
    if (!f) return TFQ__OOM(st);
    p->files = f;
    *cap = nc;
  }
  pl_file *f = &p->files[p->nfiles];
  memset(f, 0, sizeof *f);
  if (!(f->path = tfq__strdup(path))) return TFQ__OOM(st);
  f->size = (int64_t)sb.st_size;
  f->stream = !S_ISREG(sb.st_mode);
  p->nfiles++;
  return TFQ_OK;
}

static tfq_code expand_files(tfq_pipeline *p, tfq_status *st) {
  size_t cap = 0;
  const tfq_pipeline_options *o = &p->o;
  if (o->nfiles == 0) return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "no input file");
  for (size_t i = 0; i < o->nfiles; i++) {
    const char *pat = o->files[i];
    tfq_code rc;
    if (strpbrk(pat, "*?[")) {
      glob_t g;
      int r = glob(pat, 0, NULL, &g);
      if (r == GLOB_NOMATCH) return tfq_status_set(st, TFQ_NOT_FOUND, "%s: no file matches", pat);
      if (r != 0) return tfq_status_set(st, TFQ_UNKNOWN, "%s: glob failed", pat);
      rc = TFQ_OK;
      for (size_t k = 0; !rc && k < g.gl_pathc; k++) rc = add_path(p, g.gl_pathv[k], &cap, st);
      globfree(&g);
    } else {
      rc = add_path(p, pat, &cap, st);
    }
    if (rc) return rc;
  }
  /* --shard over at least `count` files: whole files */
  if (o->shard_n > 1 && p->nfiles >= (size_t)o->shard_n) {
    size_t m = 0;
    for (size_t k = 0; k < p->nfiles; k++) {
      if ((int64_t)(k % (size_t)o->shard_n) == o->shard_i)
        p->files[m++] = p->files[k];
      else
        tfq_free(p->files[k].path);
    }
    p->nfiles = m;
    p->shard_files = 1;
  }
  return TFQ_OK;
}

static tfq_code add_column(tfq_pipeline *p, const char *name, size_t len, tfq_dtype dt,
                           const int64_t *dims, int rank, tfq_status *st) {
  /* Doubling (the array has room for the next power of two of ncols, at least 8): growing by
   * one column at a time was quadratic where realloc copies (ASan; 20,000-column files). */
  size_t n = p->ncols;
  if (n < 8 ? n == 0 : (n & (n - 1)) == 0) {
    pl_column *g = tfq_realloc(p->cols, (n < 8 ? 8 : 2 * n) * sizeof *g);
    if (!g) return TFQ__OOM(st);
    p->cols = g;
  }
  pl_column *c;
  c = &p->cols[p->ncols];
  memset(c, 0, sizeof *c);
  if (rank > 8) return tfq_status_set(st, TFQ_UNIMPLEMENTED, "feature %s: rank above 8", name);
  if (!(c->name = tfq_malloc(len + 1))) return TFQ__OOM(st);
  memcpy(c->name, name, len);
  c->name[len] = '\0';
  c->dtype = dt;
  c->rank = rank;
  c->width = 1;
  for (int i = 0; i < rank; i++) {
    c->dims[i] = dims[i];
    c->width *= dims[i];
  }
  p->ncols++;
  return TFQ_OK;
}

tfq_code tfq__pl_sample_reader(tfq_pipeline *p, tfq_reader_kind kind, tfq_reader **r,
                               tfq_queue **unit, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  const char *path = o->sample_file ? o->sample_file : p->files[0].path;
  struct stat sb;
  *r = NULL;
  *unit = NULL;
  if (o->sample_file && stat(path, &sb) != 0)
    return tfq_status_set(st, errno == ENOENT ? TFQ_NOT_FOUND : TFQ_UNKNOWN, "sample file %s; %s",
                          path, strerror(errno));
  if (o->sample_file && S_ISDIR(sb.st_mode))
    return tfq_status_set(st, TFQ_FAILED_PRECONDITION, "sample file %s; %s", path,
                          strerror(EISDIR));
  tfq_reader_options *ro;
  tfq_code rc = tfq_reader_options_new(&ro, st);
  if (rc) return rc;
  tfq_reader_options_set_compression(ro, o->compression);
  tfq_reader_options_set_tf_compat_truncation(ro, o->sample_file != NULL);
  rc = tfq_reader_new(kind, ro, r, st);
  tfq_reader_options_free(ro);
  if (!rc) rc = tfq__pl_unit_queue(path, unit, st);
  if (rc) {
    tfq_reader_free(*r);
    *r = NULL;
  }
  return rc;
}

/* The first line of the first file (the header), through a TextLine reader. */
static tfq_code first_line(tfq_pipeline *p, tfq_tensor **line, tfq_status *st) {
  tfq_reader_options *ro;
  tfq_reader *r = NULL;
  tfq_queue *unit = NULL;
  tfq_tensor *key = NULL;
  tfq_code rc = tfq_reader_options_new(&ro, st);
  if (rc) return rc;
  tfq_reader_options_set_compression(ro, p->o.compression);
  rc = tfq_reader_new(TFQ_READER_TEXT_LINE, ro, &r, st);
  tfq_reader_options_free(ro);
  if (!rc) rc = tfq__pl_unit_queue(p->files[0].path, &unit, st);
  if (!rc) rc = tfq_reader_read(r, unit, &key, line, NULL, st);
  if (rc == TFQ_OUT_OF_RANGE)
    rc = tfq_status_set(st, TFQ_OUT_OF_RANGE, "%s: no header line (the file is empty)",
                        p->files[0].path);
  tfq_tensor_free(key);
  tfq_queue_free(unit);
  tfq_reader_free(r);
  return rc;
}

static tfq_code setup_columns(tfq_pipeline *p, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  tfq_code rc = TFQ_OK;
  char nm[32];
  /* TFRecord input that may hold Examples, Examples without features: detected and inferred as
   * tfq-cat does (infer_example.c), which settles o->format and o->features */
  if (o->format == TFQ_FORMAT_TFRECORD_AUTO || (o->format == TFQ_FORMAT_EXAMPLES && !o->features))
    if ((rc = tfq__pl_infer_features(p, st))) return rc;
  if ((rc = tfq__pl_detect_header(p, st))) return rc; /* set_header -1: settled from the sample */
  switch (o->format) {
    case TFQ_FORMAT_CSV: {
      if (o->csv) {
        p->csv = o->csv;
      } else {
        /* no columns: inferred from a sample, as tfq-cat infers them (infer.c) */
        if (!o->columns && (rc = tfq__pl_infer_columns(p, st))) return rc;
        pl_colspec *cs;
        size_t n;
        char *spec = NULL;
        if ((rc = tfq__pl_parse_columns(o->columns, &cs, &n, st))) return rc;
        rc = tfq__pl_csv_from_spec(cs, n, o, &p->csv_owned, st);
        if (!rc) rc = tfq__pl_format_columns(cs, n, &spec, st); /* tfq_pipeline_columns_spec() */
        tfq__pl_colspec_free(cs, n);
        if (rc) return rc;
        tfq_free(p->o.columns);
        p->o.columns = spec;
        p->csv = p->csv_owned;
      }
      /* the dtypes: decode no record */
      tfq_tensor *none;
      tfq_tuple *cols;
      int64_t zero = 0;
      if ((rc = tfq_tensor_new(TFQ_STRING, &zero, 1, &none, st))) return rc;
      rc = tfq_decode_csv(p->csv, none, &cols, st);
      tfq_tensor_free(none);
      if (rc) return rc;
      for (size_t i = 0; !rc && i < tfq_tuple_size(cols); i++) {
        snprintf(nm, sizeof nm, "c%zu", i);
        rc = add_column(p, nm, strlen(nm), tfq_tensor_dtype(tfq_tuple_get(cols, i)), NULL, 0, st);
      }
      tfq_tuple_free(cols);
      if (!rc && o->header) rc = tfq__pl_header_names(p, p->ncols, st);
      break;
    }
    case TFQ_FORMAT_TEXT:
      rc = add_column(p, "line", 4, TFQ_STRING, NULL, 0, st);
      if (!rc && o->header) {
        tfq_tensor *line;
        if (!(rc = first_line(p, &line, st))) {
          size_t len;
          const char *s = tfq_tensor_string(line, 0, &len);
          tfq_free(p->cols[0].name);
          p->cols[0].name = tfq_malloc(len + 1);
          if (p->cols[0].name) {
            memcpy(p->cols[0].name, s, len);
            p->cols[0].name[len] = '\0';
          } else {
            rc = TFQ__OOM(st);
          }
          tfq_tensor_free(line);
        }
      }
      break;
    case TFQ_FORMAT_TFRECORD:
    case TFQ_FORMAT_FIXED_LENGTH: rc = add_column(p, "record", 6, TFQ_STRING, NULL, 0, st); break;
    case TFQ_FORMAT_EXAMPLES: {
      const tfq_example_config *cfg = o->features;
      if (!cfg || tfq_example_config_size(cfg) == 0)
        return tfq_status_set(st, TFQ_INVALID_ARGUMENT,
                              "the features given for Example input are empty (give none to "
                              "infer them)");
      if ((rc = tfq_example_config_check(cfg, st))) return rc;
      for (size_t i = 0; !rc && i < tfq_example_config_size(cfg); i++) {
        const char *key = tfq_example_config_key(cfg, i);
        int rank = tfq_example_config_rank(cfg, i);
        const int64_t *dims = tfq_example_config_dims(cfg, i);
        tfq_example_kind kind = tfq_example_config_kind(cfg, i);
        int var = kind == TFQ_EXAMPLE_VAR_LEN, seq = kind == TFQ_EXAMPLE_FIXED_LEN_SEQUENCE;
        int ok = var || (kind == TFQ_EXAMPLE_FIXED_LEN && rank >= 0) || (seq && rank >= 1);
        for (int d = seq; ok && !var && d < rank; d++) ok = dims[d] >= 0;
        if (!ok)
          return tfq_status_set(st, TFQ_UNIMPLEMENTED,
                                "feature %s: the pipeline takes FixedLen features with a fully "
                                "defined shape, VarLen and FixedLenSequence features (parse "
                                "Sparse features with tfq_read_parse_op)",
                                key);
        if (seq) { /* rows of dims[1..]: parsed per record too, for each record's own rows */
          const tfq_tensor *pad = tfq_example_config_default(cfg, i);
          if (!p->seq_cfg && (rc = tfq_example_config_new(&p->seq_cfg, st))) return rc;
          if ((rc = tfq_example_config_add_fixed_len_sequence(p->seq_cfg, key,
                                                              tfq_example_config_dtype(cfg, i),
                                                              dims + 1, rank - 1, 1, pad, st)))
            return rc;
          if ((rc = add_column(p, key, strlen(key), tfq_example_config_dtype(cfg, i), dims, rank,
                               st)))
            return rc;
          pl_column *col = &p->cols[p->ncols - 1];
          col->seq = 1;
          col->pad = pad;
          col->seq_out = tfq_example_config_size(p->seq_cfg) - 1;
          col->width = 1;
          for (int d = 1; d < rank; d++) col->width *= dims[d];
          continue;
        }
        const int64_t unknown = -1;
        rc = add_column(p, key, strlen(key), tfq_example_config_dtype(cfg, i),
                        var ? &unknown : dims, var ? 1 : rank, st);
        if (!rc && var) {
          p->cols[p->ncols - 1].sparse = 1;
          p->cols[p->ncols - 1].width = 1;
        }
      }
      if (!rc) rc = tfq__pl_features_spec(p, st); /* tfq_pipeline_features_spec() */
      break;
    }
    default: return tfq_status_set(st, TFQ_INVALID_ARGUMENT, "unknown format %d", (int)o->format);
  }
  if (!rc && o->keys) rc = add_column(p, "key", 3, TFQ_STRING, NULL, 0, st);
  for (size_t i = 0; !rc && i < p->ncols; i++) { /* a sparse column: indices, values, shape */
    p->cols[i].slot = p->nslots;
    p->nslots += p->cols[i].sparse ? 3 : p->cols[i].seq && p->o.ragged ? 2 : 1;
  }
  return rc;
}

static tfq_code setup_reader(tfq_pipeline *p, tfq_status *st) {
  const tfq_pipeline_options *o = &p->o;
  tfq_code rc = tfq_reader_options_new(&p->ropts, st);
  if (rc) return rc;
  tfq_reader_options_set_compression(p->ropts, o->compression);
  int64_t skip = o->skip_header_lines >= 0 ? o->skip_header_lines : 0;
  if (o->header && skip < 1) skip = 1;
  p->kind = TFQ_READER_TEXT_LINE;
  if (o->format == TFQ_FORMAT_TFRECORD || o->format == TFQ_FORMAT_EXAMPLES ||
      o->format == TFQ_FORMAT_TFRECORD_AUTO)
    p->kind = TFQ_READER_TFRECORD;
  if (o->format == TFQ_FORMAT_FIXED_LENGTH) {
    p->kind = TFQ_READER_FIXED_LENGTH;
    tfq_reader_options_set_record_bytes(p->ropts, o->record_bytes);
    tfq_reader_options_set_header_bytes(p->ropts, o->header_bytes);
    tfq_reader_options_set_footer_bytes(p->ropts, o->footer_bytes);
    tfq_reader_options_set_hop_bytes(p->ropts, o->hop_bytes);
  }
  if (p->kind == TFQ_READER_TEXT_LINE) tfq_reader_options_set_skip_header_lines(p->ropts, skip);
  return tfq_reader_new(p->kind, p->ropts, &p->src.reader, st);
}

tfq_code tfq__pl_setup(tfq_pipeline *p, tfq_status *st) {
  tfq_code rc = expand_files(p, st);
  if (!rc) rc = setup_columns(p, st);
  if (!rc) rc = setup_reader(p, st);
  if (!rc) rc = tfq__pl_index_shard(p, st);
  if (!rc && !(p->src.order = tfq__calloc(p->nfiles, sizeof *p->src.order))) rc = TFQ__OOM(st);
  p->src.order_epoch = INT64_MAX; /* tfq__pl_epoch_order starts the stream */
  if (!rc) tfq__pl_epoch_order(p, 0);
  return rc;
}

void tfq__pl_source_free(tfq_pipeline *p) {
  tfq_tensor_free(atomic_exchange(&p->lines_cache, NULL));
  tfq_queue_free(p->src.unit);
  tfq_reader_free(p->src.reader);
  tfq_reader_options_free(p->ropts);
  tfq_free(p->src.order);
}

/* ---- the source ---- */

tfq_code tfq__pl_unit_queue(const char *path, tfq_queue **out, tfq_status *st) {
  tfq_spec *spec = NULL;
  tfq_tuple *t = NULL;
  tfq_tensor *s = NULL;
  tfq_queue *q = NULL;
  tfq_code c;
  if ((c = tfq_spec_new(&spec, st)) || (c = tfq_spec_add(spec, TFQ_STRING, NULL, 0, NULL, st)) ||
      (c = tfq_fifo_queue_new(spec, 1, "tfq_pipeline_unit", &q, st)) ||
      (c = tfq_tensor_new(TFQ_STRING, NULL, 0, &s, st)) ||
      (c = tfq_tensor_set_string(s, 0, path, strlen(path), st)) || (c = tfq_tuple_new(1, &t, st)))
    goto done;
  tfq_tuple_set_take(t, 0, s);
  s = NULL;
  if ((c = tfq_queue_enqueue(q, t, NULL, TFQ_NO_TIMEOUT, st)) ||
      (c = tfq_queue_close(q, 0, NULL, TFQ_NO_TIMEOUT, st)))
    goto done;
  *out = q;
  q = NULL;
done:
  tfq_tensor_free(s);
  tfq_tuple_free(t);
  tfq_queue_free(q);
  tfq_spec_free(spec);
  return c;
}

/* The epoch's file order: shuffled per epoch by one PCG32 stream seeded (seed,
 * 0x5851f42d4c957f2d) with Fisher-Yates draws, exactly as string_input_producer does in tfq
 * (src/coord/producer.c), so that a seed gives the producer's file order.  Epochs run in order
 * (the stream goes on); a restore replays the shuffles up to its epoch. */
void tfq__pl_epoch_order(tfq_pipeline *p, int64_t epoch) {
  pl_source *s = &p->src;
  if (epoch < s->order_epoch) {
    tfq__pcg32_seed(&s->file_rng, p->seed, 0x5851f42d4c957f2dULL);
    s->order_epoch = -1;
  }
  uint32_t *ord = s->order;
  while (s->order_epoch < epoch) {
    for (size_t i = 0; i < p->nfiles; i++) ord[i] = (uint32_t)i;
    if (p->o.shuffle)
      for (size_t i = p->nfiles; i-- > 1;) {
        size_t j = (size_t)tfq__pcg32_bounded64(&s->file_rng, (uint64_t)i + 1);
        uint32_t t = ord[i];
        ord[i] = ord[j];
        ord[j] = t;
      }
    s->order_epoch++;
  }
}

static tfq_code open_file(tfq_pipeline *p, tfq_status *st) {
  pl_source *s = &p->src;
  tfq_queue_free(s->unit);
  s->unit = NULL;
  const pl_file *f = &p->files[s->order[s->fpos]];
  tfq_code rc = tfq_reader_reset(s->reader, st);
  if (!rc) rc = tfq__pl_unit_queue(f->path, &s->unit, st);
  if (rc) return rc;
  s->open = 1;
  s->file_records = 0;
  if (f->rec_hi >= 0) { /* an indexed shard: its range of the file */
    tfq__reader_start_at(s->reader, f->off_lo);
    s->file_records = f->rec_lo;
  }
  return TFQ_OK;
}

static void close_file(tfq_pipeline *p) {
  pl_source *s = &p->src;
  tfq_queue_free(s->unit);
  s->unit = NULL;
  s->open = 0;
  s->fpos++;
}

tfq_code tfq__pl_source_seek(tfq_pipeline *p, int64_t skip, tfq_status *st) {
  tfq_code rc = open_file(p, st);
  int64_t done = p->src.file_records; /* an indexed shard starts at its range */
  while (!rc && done < skip) {
    tfq_tensor *k = NULL, *v = NULL;
    int64_t n = skip - done < p->step ? skip - done : p->step;
    rc = tfq_reader_read_up_to(p->src.reader, p->src.unit, n, &k, &v, p->cancel, st);
    if (!rc) done += tfq_tensor_num_elements(v);
    tfq_tensor_free(k);
    tfq_tensor_free(v);
  }
  if (rc == TFQ_OUT_OF_RANGE)
    rc = tfq_status_set(st, TFQ_DATA_LOSS,
                        "%s has %lld records now, fewer than the saved position %lld",
                        p->files[p->src.order[p->src.fpos]].path, (long long)done, (long long)skip);
  p->src.file_records = done;
  return rc;
}

/* Whether a read error is a bad record (skippable) rather than a failure of the run. */
static int read_error_skippable(const tfq_status *s) {
  tfq_code c = tfq_status_code(s);
  return c == TFQ_DATA_LOSS || c == TFQ_INVALID_ARGUMENT ||
         (c == TFQ_RESOURCE_EXHAUSTED && !tfq__pl_oom(s)); /* a line over max_line_bytes */
}

/* Lines a TextLineReader already holds, without keys (tfq__reader_take_lines): 1 with in->n > 0,
 * or 0 when an ordinary read is needed. */
static int take_lines(tfq_pipeline *p, pl_step *in, tfq_status *st) {
  if (p->kind != TFQ_READER_TEXT_LINE) return 0;
  /* the lines' tensor of an earlier step, refilled in place (its arena block kept), or new */
  tfq_tensor *vt = atomic_exchange(&p->lines_cache, NULL);
  int64_t dim = p->step;
  if (vt) {
    vt->dims[0] = vt->nelems = dim;
    tfq__tensor_strings_reset(vt);
  } else if (tfq__tensor_alloc(TFQ_STRING, &dim, 1, 0, &vt, NULL)) {
    return 0;
  }
  int64_t m = 0;
  if (tfq__reader_take_lines(p->src.reader, vt, &m, &in->first, &in->work, &in->work_len, st) ||
      m == 0) {
    tfq__pl_recycle_lines(p, vt);
    return 0;
  }
  vt->dims[0] = vt->nelems = m;
  in->values = vt;
  in->n = m;
  return 1;
}

/* Keeps `vt` for the next step when nothing else holds it, else drops it. */
void tfq__pl_recycle_lines(tfq_pipeline *p, tfq_tensor *vt) {
  tfq_tensor *none = NULL;
  if (vt && tfq__tensor_sole(vt) && atomic_compare_exchange_strong(&p->lines_cache, &none, vt))
    return;
  tfq_tensor_free(vt);
}

/* The bytes a span step wants buffered: a full buffer from a file; from a stream (a pipe) what
 * has arrived, at least one whole line, so that a batch waits for its own records and no more
 * (a full buffer would wait for 256 KiB or the end of the stream). */
static size_t span_want(const tfq_pipeline *p) {
  return p->files[p->src.order[p->src.fpos]].stream ? 1 : SIZE_MAX;
}

/* One reader thread, CSV, no keys, no sharding by record: decodes the lines where they lie in
 * the reader's buffer under its lock (the read-decode op's span path: no scan for their ends, no
 * copy of them, string fields views of the buffer as in decode_span; with one thread nobody waits
 * for the lock meanwhile).  1 with a part of in->n
 * records added to `c`; 0 when take_span's path is needed (nothing taken: another reader state,
 * or a line that fails to decode, which the line-by-line path reports); -1 out of memory. */
static int span_step(tfq_pipeline *p, pl_chunk *c, pl_step *in, tfq_status *st) {
  if (p->o.format != TFQ_FORMAT_CSV || p->kind != TFQ_READER_TEXT_LINE || p->o.keys ||
      p->o.threads > 1 || (p->o.shard_n > 1 && !p->shard_files))
    return 0;
  const char *buf;
  size_t len, count = 0, used = 0;
  int at_end;
  int64_t first;
  tfq_tensor *holder;
  if (!tfq__reader_lines_begin(p->src.reader, span_want(p), &buf, &len, &at_end, &holder)) return 0;
  tfq_tuple *cols = NULL;
  pl_part *q = tfq__pl_part_new(PART_RECORDS);
  tfq_status s;
  tfq__status_ok(&s);
  tfq_code rc = q && (q->cols = tfq__calloc(p->ncols, sizeof *q->cols)) ? TFQ_OK : TFQ__OOM(&s);
  int64_t room = 0;
  if (!rc && !(cols = tfq__pl_pool_get(p, p->step, &room))) rc = TFQ__OOM(&s);
  if (!rc)
    rc = tfq__decode_csv_span(p->csv, buf, len, holder, (size_t)p->step, cols, NULL, &count, &used,
                              &s);
  int taken = !rc && count > 0;
  tfq__reader_lines_end(p->src.reader, taken ? used : 0, taken ? (int64_t)count : 0, &first);
  if (!taken) {
    tfq_tuple_free(cols);
    tfq__pl_part_free(q, p->ncols);
    if (rc != TFQ_RESOURCE_EXHAUSTED) return 0;
    tfq_status_set(st, rc, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < p->ncols; i++) { /* the rows decoded, count <= step */
    tfq_tensor *t = q->cols[i] = tfq_tensor_ref(tfq_tuple_get(cols, i));
    t->dims[0] = t->nelems = (int64_t)count;
    if (t->dtype != TFQ_STRING) t->nbytes = (size_t)count * tfq_dtype_size(t->dtype);
  }
  tfq_tuple_free(cols);
  q->n = (int64_t)count;
  q->rows_alloc = room;
  in->n = (int64_t)count;
  tfq__pl_chunk_add(c, q);
  atomic_fetch_add(&p->records_read, (int64_t)count);
  atomic_fetch_add(&p->bytes_read, (int64_t)(used - count)); /* without the '\n's */
  return 1;
}

/* CSV without keys or sharding by record: the step's lines where they lie in the reader's buffer
 * (tfq__reader_take_span: no copy of them, no string per line), decoded outside the lock. */
static int take_span(tfq_pipeline *p, pl_step *in) {
  if (p->o.format != TFQ_FORMAT_CSV || p->kind != TFQ_READER_TEXT_LINE || p->o.keys ||
      (p->o.shard_n > 1 && !p->shard_files))
    return 0;
  if (!tfq__reader_take_span(p->src.reader, span_want(p), p->step, &in->span, &in->span_len, &in->n,
                             &in->first, &in->holder))
    return 0;
  const pl_file *f = &p->files[p->src.order[p->src.fpos]];
  in->work = f->path;
  in->work_len = strlen(f->path);
  return 1;
}

/* See pipeline_internal.h. */
tfq_code tfq__pl_read_step(tfq_pipeline *p, pl_chunk *c, pl_step *in, int64_t *base,
                           tfq_status *st) {
  pl_source *s = &p->src;
  for (;;) {
    if (!s->ended && !s->open && s->fpos == p->nfiles) {
      s->epoch++;
      atomic_store_explicit(&p->epoch_pub, s->epoch, memory_order_relaxed);
      s->fpos = 0;
      if ((p->o.num_epochs > 0 && s->epoch >= p->o.num_epochs) || s->epoch_records == 0)
        s->ended = 1;
      else
        tfq__pl_epoch_order(p, s->epoch);
      s->epoch_records = 0;
    }
    if (s->ended) {
      pl_part *q = tfq__pl_part_new(PART_END);
      if (!q) return TFQ__OOM(st);
      tfq__pl_chunk_add(c, q);
      return TFQ_OK;
    }
    tfq_code rc = s->open ? TFQ_OK : open_file(p, st);
    if (rc) return rc;
    int sp = s->open ? span_step(p, c, in, st) : 0;
    if (sp < 0) return TFQ_RESOURCE_EXHAUSTED;
    if (sp) {
      s->file_records += in->n;
      s->epoch_records += in->n;
      return TFQ_OK;
    }
    if (s->open && take_span(p, in)) {
      *base = s->file_records;
      s->file_records += in->n;
      s->epoch_records += in->n;
      return TFQ_OK;
    }
    if (s->open && take_lines(p, in, st)) {
      *base = s->file_records;
      s->file_records += in->n;
      s->epoch_records += in->n;
      return TFQ_OK;
    }
    int64_t want = p->step;
    const pl_file *f = &p->files[s->order[s->fpos]];
    if (f->rec_hi >= 0 && f->rec_hi - s->file_records < want) { /* an indexed shard's range */
      want = f->rec_hi - s->file_records;
      if (want <= 0) {
        close_file(p);
        continue;
      }
    }
    rc = tfq_reader_read_up_to(s->reader, s->unit, want, &in->keys, &in->values, p->cancel, st);
    if (rc == TFQ_OUT_OF_RANGE) {
      close_file(p);
      continue;
    }
    if (rc == TFQ_OK) {
      *base = s->file_records;
      int64_t k = in->n = tfq_tensor_num_elements(in->values);
      s->file_records += k;
      s->epoch_records += k;
      return TFQ_OK;
    }
    if (rc == TFQ_CANCELLED) return rc;
    const char *path = p->files[s->order[s->fpos]].path;
    /* CSV, text: "<file>:<line>", the line that could not be read (tfq/pipeline.h) */
    int64_t line = p->kind == TFQ_READER_TEXT_LINE ? tfq_status_line(st) : -1;
    char *where = tfq_malloc(strlen(path) + 24);
    if (!where) return TFQ__OOM(st);
    if (line > 0)
      sprintf(where, "%s:%lld", path, (long long)line);
    else
      strcpy(where, path);
    pl_part *q = tfq__pl_part_bad(st, where, !read_error_skippable(st));
    tfq_free(where);
    close_file(p);
    if (!q) return TFQ__OOM(st);
    tfq__pl_chunk_add(c, q);
    return TFQ_OK;
  }
}
