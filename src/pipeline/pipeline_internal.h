/* Private declarations of src/pipeline (tfq/pipeline.h): the options, the source of read steps
 * (source.c), the decoded parts they become (decode.c), the consumer and its shuffle buffer
 * (pipeline.c) and the checkpoint state (state.c).
 *
 * Data: a read step is a `pl_chunk` with a sequence number; decoding turns it into a list of
 * `pl_part`s, each a run of decoded records or one bad record (or the end of the input).  The
 * consumer takes chunks in sequence order, appends their parts to its stream, and moves records
 * from the stream into buffer slots; a slot names a part and a row, and a part lives while slots
 * or the stream refer to it (consumer thread only, no locks). */
#ifndef TFQ_PIPELINE_INTERNAL_H
#define TFQ_PIPELINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <tfq/pipeline.h>
#include <tfq/queue.h>

#include "../core/base.h"
#include "../core/sync.h"

/* ---- options (options.c) ---- */
struct tfq_pipeline_options {
  char **files;
  size_t nfiles, files_cap;
  tfq_format format;
  tfq_compression compression;
  char *columns; /* the spec string, or NULL; in a pipeline's copy, after set-up: the columns'
                  * spec string (given or inferred), formatted by tfq__pl_format_columns; for
                  * Example input the features' SPEC (tfq__pl_features_spec), so the fingerprint
                  * covers them */
  const tfq_csv_options *csv;
  char delim;
  char *na_value; /* decode_csv's na_value for a spec string, or NULL */
  int no_quote;   /* use_quote_delim off (spec strings and inference) */
  int64_t *select_cols;
  size_t nselect;
  int header; /* 1, 0, or -1: detect (infer.c); 0 or 1 in a pipeline's copy after set-up */
  int64_t skip_header_lines; /* -1: not set */
  int64_t record_bytes, header_bytes, footer_bytes, hop_bytes;
  const tfq_example_config *features;
  int keys;
  int64_t batch_size;
  int drop_remainder;
  int shuffle;
  int64_t capacity, mad; /* -1: default */
  int seed_set;
  uint64_t seed;
  int64_t num_epochs;
  int threads;
  int64_t step;
  int64_t shard_i, shard_n;
  int64_t max_bad;
  int deterministic;
  int ragged; /* FixedLenSequence columns as values + row splits (set_ragged_sequences) */
  tfq_bad_record_fn bad_fn;
  void *bad_ctx;
  int64_t infer_rows; /* CSV inference: records sampled; -1: tfq-cat's rule (infer.c) */
  char *sample_file;  /* what inference reads, or NULL (owned, in a pipeline's copy too) */
  int strip_bom; /* set_header -1 on CSV: a UTF-8 BOM starting a file's first record is dropped */
  char index_suffix[32]; /* TFRecord indexes "<file><suffix>" (set_index_suffix), "": none */
};

/* One column of the spec string. */
typedef struct pl_colspec {
  tfq_dtype dtype;
  int required;
  char *def; /* default bytes (NUL-terminated; strings may hold NUL: deflen) */
  size_t deflen;
} pl_colspec;

/* Parses a column spec (tfq_pipeline_options_set_columns).  *out (n entries) freed with
 * tfq__pl_colspec_free. */
tfq_code tfq__pl_parse_columns(const char *spec, pl_colspec **out, size_t *n, tfq_status *st);
void tfq__pl_colspec_free(pl_colspec *c, size_t n);
/* decode_csv options from a parsed spec and the options' delimiter, select_cols, na_value and
 * quoting. */
tfq_code tfq__pl_csv_from_spec(const pl_colspec *c, size_t n, const tfq_pipeline_options *o,
                               tfq_csv_options **out, tfq_status *st);

/* infer.c: CSV columns from a sample, with tfq-cat's rules. */
/* Formats columns as a spec string, runs of 3 or more identical entries as N*TYPE[:DEFAULT]
 * (tfq-cat's inferred -d).  *out freed with tfq_free. */
tfq_code tfq__pl_format_columns(const pl_colspec *c, size_t n, char **out, tfq_status *st);
/* Infers the columns from the sample (the sample file, else the first input file) and sets
 * p->o.columns to their spec string. */
tfq_code tfq__pl_infer_columns(tfq_pipeline *p, tfq_status *st);
/* Names the first `ncols` columns after the header line of the sample source (an empty one:
 * names unchanged). */
tfq_code tfq__pl_header_names(tfq_pipeline *p, size_t ncols, tfq_status *st);
/* set_header -1: decides from the sample whether line 1 is a header; sets p->o.header to 0 or 1
 * (other formats, csv options: 0). */
tfq_code tfq__pl_detect_header(tfq_pipeline *p, tfq_status *st);

/* infer_example.c: Example input without features and TFRecord input that may hold Examples,
 * with tfq-cat's rules.  For TFQ_FORMAT_TFRECORD_AUTO, resolves p->o.format (Examples or raw
 * records) from a sample of the first file; for Examples without features, infers them into
 * p->features_cfg and points p->o.features at it. */
tfq_code tfq__pl_infer_features(tfq_pipeline *p, tfq_status *st);
/* Sets p->o.columns to p->o.features as a --features SPEC (tfq_pipeline_features_spec()). */
tfq_code tfq__pl_features_spec(tfq_pipeline *p, tfq_status *st);

/* ---- parts and chunks ---- */
enum { PART_RECORDS = 0, PART_BAD = 1, PART_END = 2 };

typedef struct pl_part {
  struct pl_part *next;
  int kind;
  int64_t n;          /* records */
  int64_t taken;      /* records moved on from the front (into slots or a batch) */
  int64_t refs;       /* slots referring to it, + 1 while in the stream */
  tfq_tensor **cols;  /* ncols tensors [n, record shape] (PART_RECORDS); a ragged column (sparse,
                       * seq): its values, flat, record r's rows splits[c][r] .. splits[c][r + 1]
                       * (row k: elements k * width .. (k + 1) * width) */
  int64_t **splits;   /* ncols entries, non-NULL for ragged columns (NULL when none is) */
  int64_t rows_alloc; /* CSV decoded at once: the rows its tensors have room for (pool) */
  uint64_t stamp;     /* batch.c's view_strings: the gather that last counted it an owner */
  /* PART_BAD */
  tfq_code code;
  int fatal; /* not skippable */
  char *where, *reason, *file;
  int64_t line, offset;
} pl_part;

typedef struct pl_chunk {
  uint64_t seq;
  pl_part *head, *tail;
} pl_chunk;

/* One buffer slot: row `row` of part `part`. */
typedef struct pl_slot {
  pl_part *part;
  int64_t row;
} pl_slot;

/* ---- the pipeline ---- */
#define PL_RAGGED(col) ((col)->sparse || (col)->seq)
typedef struct pl_column {
  char *name;
  tfq_dtype dtype;
  int rank;
  int64_t dims[8];
  int64_t width; /* elements per record (a ragged column: per row) */
  int sparse;    /* a VarLen feature: per record a list; in a batch a SparseTensor */
  int seq;       /* a FixedLenSequence feature: per record rows of dims[1..]; in a batch a dense
                  * [n, longest, dims[1..]] padded with `pad` (NULL: 0 or ""), or with
                  * options.ragged two slots: the rows [total, dims[1..]] and int64 row splits */
  const tfq_tensor *pad;
  size_t seq_out; /* its output in the pipeline's seq_cfg */
  size_t slot;    /* its first slot in a batch tuple (a sparse column has three) */
} pl_column;

typedef struct pl_file {
  char *path;
  int64_t size;
  tfq_compression comp;
  /* sharded by its index (source.c, index_shard): this shard's records [rec_lo, rec_hi) of the
   * file, the first at decompressed offset off_lo; rec_hi -1: the whole file, no index */
  int64_t rec_lo, rec_hi;
  uint64_t off_lo;
  int stream; /* a pipe, FIFO, socket or device: a step takes the lines in, not a full buffer */
} pl_file;

/* The source of read steps; everything under src_mu. */
typedef struct pl_source {
  int64_t epoch;
  size_t fpos;          /* position in the epoch's order */
  uint32_t *order;      /* nfiles indices */
  int64_t order_epoch;  /* the epoch `order` is for */
  tfq__pcg32 file_rng;  /* the file-order stream (tfq__pl_epoch_order) */
  int open;             /* a file is being read */
  int64_t file_records; /* records read from it (before sharding) */
  int64_t epoch_records;
  int ended;
  uint64_t next_seq;
  tfq_reader *reader;
  tfq_queue *unit;
} pl_source;

struct tfq_pipeline {
  tfq_pipeline_options o; /* a copy (files, columns, select_cols owned) */
  pl_file *files;
  size_t nfiles;
  pl_column *cols;
  size_t ncols, nslots; /* columns; the tuple slots of a batch */
  tfq_csv_options *csv_owned;
  tfq_example_config *seq_cfg;      /* the FixedLenSequence features alone, to parse a record's own
                                     * rows (the batch output pads them) */
  tfq_example_config *features_cfg; /* inferred features (o.features points at it), or NULL */
  int64_t not_example; /* TFRECORD_AUTO found raw records: tfq_pipeline_first_non_example() */
  int nul_keys;        /* inferred features left keys holding a NUL byte out */
  const tfq_csv_options *csv;
  tfq_reader_options *ropts;
  tfq_reader_kind kind;
  int shard_files; /* the source shards: whole files, or indexed ranges (else decode.c by number) */
  int64_t capacity, mad, batch, step;
  uint64_t seed;
  uint64_t fp_options, fp_files; /* fingerprints (state.c) */

  _Atomic(tfq_tensor *) lines_cache; /* a step's lines tensor, for the next (source.c) */
  /* the column tensors of consumed CSV parts, for a reader to decode its next step into (their
   * pages reused rather than fresh ones each step: tfq__pl_pool_get); under pool_mu */
  pthread_mutex_t pool_mu;
  struct {
    tfq_tuple *t;
    int64_t rows; /* the rows its tensors have room for */
  } pool[8];
  int npool;

  /* source */
  pthread_mutex_t src_mu;
  pl_source src;

  /* hand-off: under mu */
  pthread_mutex_t mu;
  pthread_cond_t cv_cons, cv_work;
  pl_chunk **ready; /* window slots, by seq % window */
  uint64_t window;
  uint64_t cons_seq; /* the next chunk the consumer takes */
  uint64_t issued;   /* tickets taken (chunks being read or decoded or ready) */
  int in_flight;     /* tickets taken, chunk not yet delivered */
  int paused, stopping, workers_done;
  int cons_waiting;   /* the consumer waits on cv_cons (deliveries signal only then) */
  int work_waiting;   /* readers waiting on cv_work */
  atomic_int stopped; /* tfq_pipeline_stop() */
  tfq_cancel *cancel;
  pthread_t *threads;
  int nthreads, started, restored;

  /* consumer (its thread only) */
  pl_part *stream, *stream_tail;
  pl_slot *slots;
  int64_t size;
  /* shuffling: each dense numeric column's values of the slots, copied in as records enter the
   * buffer, so that draws read a small contiguous ring rather than the scattered parts (ncols
   * entries, NULL for string and sparse columns; NULL without shuffling) */
  char **ring;
  int ended;       /* the stream reached its end */
  pl_part *error;  /* the bad record that stops the pipeline */
  tfq_code sticky; /* returned again once the error was returned */
  char *sticky_msg;
  tfq__pcg32 rng;
  uint64_t stamp; /* view_strings' gathers (batch.c) */

  /* counters */
  atomic_llong records_read, bytes_read;
  atomic_llong epoch_pub; /* src.epoch as the stats read it, without src_mu (which a lone reader
                           * holds while it decodes a step) */
  int64_t records_out, batches_out, bad_records, dropped; /* the consumer's */
  atomic_llong pub[5]; /* those and the buffer's size, as the stats read them (tfq__pl_publish) */
};

/* A read step before decoding (source.c reads it, decode.c decodes it). */
typedef struct pl_step {
  tfq_tensor *keys, *values; /* keys NULL until needed (lines taken from the buffer: in_keys) */
  const char **ptrs;
  size_t *lens;
  int64_t n;
  const char *work; /* lines taken from the buffer: their file and first line number */
  size_t work_len;
  int64_t first;
  tfq_tensor *holder; /* CSV lines taken where they lie in the reader's buffer: its holder */
  const char *span;   /* and the lines' bytes */
  size_t span_len;
  int64_t base;    /* records of the file read before the step */
  int64_t *rowmap; /* sharded by record: the step's row of each kept row, else NULL */
} pl_step;

/* Does the record at s[0..n), the file's record `recno` (from 0), start with a UTF-8 BOM that
 * the pipeline drops (strip_bom, no line skipped)?  3 (its length) or 0. */
static inline size_t tfq__pl_bom(const tfq_pipeline_options *o, int64_t recno, const char *s,
                                 size_t n) {
  return o->strip_bom && recno == 0 && !o->header && o->skip_header_lines <= 0 && n >= 3 &&
                 memcmp(s, "\xef\xbb\xbf", 3) == 0
             ? 3
             : 0;
}

/* Whether `s` says out of memory (RESOURCE_EXHAUSTED "out of memory", as against a line over
 * max_line_bytes, which is a bad record): never a bad record to skip, nor the end of a sample. */
static inline int tfq__pl_oom(const tfq_status *s) {
  return tfq_status_code(s) == TFQ_RESOURCE_EXHAUSTED &&
         strcmp(tfq_status_reason(s), "out of memory") == 0;
}

/* A growing NUL-terminated string (options.c): text_add appends n bytes; after an allocation
 * failure it appends nothing more and `oom` is set (the caller checks once at the end). */
typedef struct pl_text {
  char *p;
  size_t n, cap;
  int oom;
} pl_text;
void tfq__pl_text_add(pl_text *b, const char *s, size_t n);
static inline void text_add(pl_text *b, const char *s, size_t n) { tfq__pl_text_add(b, s, n); }
static inline void text_putc(pl_text *b, char c) { tfq__pl_text_add(b, &c, 1); }
static inline void text_puts(pl_text *b, const char *s) { tfq__pl_text_add(b, s, strlen(s)); }

/* source.c */
/* Expands the inputs, reads sizes and compression, the header, sets up columns and readers. */
tfq_code tfq__pl_setup(tfq_pipeline *p, tfq_status *st);
/* index.c: checks each TFRecord file's index (o.index_suffix) and, sharding by record, gives
 * the shard its range of each file (pl_file rec_lo, rec_hi, off_lo; then p->shard_files: the
 * source shards).  Every file's rec_hi is -1 otherwise.  Called by tfq__pl_setup after the
 * reader is set up. */
tfq_code tfq__pl_index_shard(tfq_pipeline *p, tfq_status *st);
/* Reads the next step (src_mu held): the step's records in *in (in->values, or in->span for CSV
 * lines in the reader's buffer; *base = the file's records before them), or a part added to `c`
 * (a read error, the end of the input), in->values and in->holder NULL.  TFQ_OK, or
 * TFQ_CANCELLED, TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__pl_read_step(tfq_pipeline *p, pl_chunk *c, pl_step *in, int64_t *base,
                           tfq_status *st);
/* decode.c: reads the next step under src_mu into `c` (seq set) and decodes it outside the lock.
 * Returns TFQ_OK (c holds parts, the last one PART_END at the end) or TFQ_RESOURCE_EXHAUSTED. */
tfq_code tfq__pl_produce(tfq_pipeline *p, pl_chunk *c, tfq_status *st);
/* decode.c: appends a part to a chunk. */
void tfq__pl_chunk_add(pl_chunk *c, pl_part *q);
/* The epoch's file order (src_mu held). */
void tfq__pl_epoch_order(tfq_pipeline *p, int64_t epoch);
/* Opens the file at src.fpos and reads `skip` records to reach a saved position. */
tfq_code tfq__pl_source_seek(tfq_pipeline *p, int64_t skip, tfq_status *st);
void tfq__pl_source_free(tfq_pipeline *p);
/* Keeps a step's lines tensor for the next step, or frees it. */
void tfq__pl_recycle_lines(tfq_pipeline *p, tfq_tensor *vt);
/* The reader inference samples with (infer.c, infer_example.c): a `kind` reader with the
 * options' compression over the sample file (a stream cut short ends silently there) or the
 * first input, and its one-file work queue.  A sample file that does not exist or is a directory
 * is an error ("sample file <path>; <strerror>"); the inputs were checked by then.  On failure
 * *r and *unit are freed and NULL. */
tfq_code tfq__pl_sample_reader(tfq_pipeline *p, tfq_reader_kind kind, tfq_reader **r,
                               tfq_queue **unit, tfq_status *st);
/* A one-element work queue holding `path`, closed. */
tfq_code tfq__pl_unit_queue(const char *path, tfq_queue **out, tfq_status *st);

/* parts */
pl_part *tfq__pl_part_new(int kind);
/* A tuple of ncols slots for a CSV step of `rows` records to be decoded into: the columns of a
 * consumed part with room for as many rows, shaped [rows] (their tensors refilled in place where
 * nothing else holds them), else a new empty tuple; *room: the rows its tensors have room for
 * (the part's rows_alloc).  NULL: out of memory.  Any thread. */
tfq_tuple *tfq__pl_pool_get(tfq_pipeline *p, int64_t rows, int64_t *room);
/* Frees a part, its column tensors kept for tfq__pl_pool_get when it was decoded at once
 * (rows_alloc > 0) and the pool has room.  The consumer's thread. */
void tfq__pl_part_recycle(tfq_pipeline *p, pl_part *q);
void tfq__pl_pool_free(tfq_pipeline *p);
void tfq__pl_part_free(pl_part *q, size_t ncols);
/* A PART_BAD from a status. */
pl_part *tfq__pl_part_bad(const tfq_status *s, const char *where, int fatal);

/* batch.c: the ring (pipeline.h's shuffle buffer values, tfq_pipeline.ring): the bytes of
 * one record of column c in it (0: no ring for c), its allocation, and a reload of every slot's
 * values (after a restore or a rolled-back draw). */
size_t tfq__pl_ring_bytes(const tfq_pipeline *p, size_t c);
tfq_code tfq__pl_ring_new(tfq_pipeline *p, tfq_status *st);
void tfq__pl_ring_reload(tfq_pipeline *p);
/* batch.c: the n picked records into the batch tuple t (nslots slots): a slot tensor only t
 * holds, of the batch's dtype and shape, is refilled in place; any other gets a new tensor.
 * in_order: the picks are in input order (runs copied at once).  js/ls (shuffling): the draws'
 * ring rows and the rows moved into their places, applied to the ring once nothing can fail. */
tfq_code tfq__pl_gather(tfq_pipeline *p, const pl_slot *pick, int64_t n, int in_order, tfq_tuple *t,
                        const int64_t *js, const int64_t *ls, tfq_status *st);
/* Publishes the consumer's counters for tfq_pipeline_get_stats() from any thread. */
void tfq__pl_publish(tfq_pipeline *p);

/* state.c */
void tfq__pl_fingerprint(tfq_pipeline *p);
/* Appends parts to the consumer's stream. */
void tfq__pl_stream_append(tfq_pipeline *p, pl_part *head);

#endif
