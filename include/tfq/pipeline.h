/* The pipeline a user wants, as one object: "these files, these columns, shuffled batches of
 * 128".  TF1 builds it from parts (string_input_producer -> readers -> decode_csv or
 * parse_example -> shuffle_batch under QueueRunners and a Coordinator); tfq_pipeline builds the
 * same flow from tfq's parts and adds what TF1 lacks:
 *
 *   - nothing lost on a bad record: every good record before a failing one is delivered before
 *     the error, in input order (tfq_pipeline_next() returns the error once the records before
 *     it are out), and a budget of bad records can be skipped, each reported once;
 *   - a deterministic mode: with a seed, the batches are a pure function of (input, options,
 *     seed), with any number of reader threads;
 *   - checkpoint and exact resume: tfq_pipeline_save() at a batch boundary, and
 *     tfq_pipeline_restore() into a new pipeline with the same options continues exactly (in
 *     deterministic mode, the same batches as the uninterrupted run; otherwise every record
 *     exactly once).
 *
 * How data flows.  One source hands out read steps in input order: the files of the epoch (in
 * the order given, or shuffled per epoch with the seed when shuffling), each file's records in
 * file order, up to `step` records a step and never two files in one step; each step gets the
 * next sequence number.  Reader threads (num_threads) each take a step under the source's lock
 * and decode it (decode_csv, parse_example) outside it, in parallel (a lone reader thread decodes
 * CSV where the lines lie in the reader's buffer, under its lock).  The caller's thread, in
 * tfq_pipeline_next(), takes the decoded steps IN SEQUENCE ORDER into the shuffle buffer (or
 * straight into batches without shuffling) and draws each batch from the buffer as a
 * RandomShuffleQueue does: each record uniformly at random (PCG32) from the buffer's records,
 * removed, and the last record moved into its place.
 *
 *   free-running (default)  a batch is drawn once the buffer holds min_after_dequeue + batch
 *                           records (TF1's rule), whatever has arrived: the records a draw sees
 *                           depend on how far the readers got, as in TF1.
 *   deterministic           a batch is drawn once the buffer holds `capacity` records (or the
 *                           input has ended): the buffer's content at each draw, and so every
 *                           batch, depends only on the input, the options and the seed; the
 *                           number of threads and the step size do not change it.
 *
 * Without shuffling the records come out in input order in both modes.  The final batch may be
 * smaller than batch_size (dequeue_up_to), unless drop_remainder is set.
 *
 * Bad records.  A record that fails to decode or parse, and a read error (a truncated or
 * corrupted compressed stream or TFRecord file, which ends that file), is a bad record.  The
 * first bad record past the budget (max_bad_records, default 0) stops the pipeline: every
 * record before it in input order is delivered first (in shuffled batches when shuffling: the
 * buffer is drained), then tfq_pipeline_next() returns the error, with the file and the line
 * (CSV, text) or the record number (other formats) in the message and as data on the status
 * (tfq_status_file(), tfq_status_line(), tfq_status_offset()).  Bad records within the budget
 * are skipped: each is reported once, in input order, through the bad-record callback (default:
 * one line on standard error, "tfq: skipped bad record <file>:<line>: <reason>") and counted in
 * the stats.  A skipped read error skips the rest of that file (its good records before the error
 * are delivered).
 *
 * Checkpoints.  A state holds: a magic and a version, a CRC32C of the whole, a fingerprint of the
 * options and of the input files (paths and sizes), the source's position (epoch, the epoch's
 * file order, the file, and the number of records read from it), the records in the shuffle
 * buffer in their slots, the records already read but not yet in the buffer, the random
 * generator's state and the counters.  Restoring re-opens the file at its position by reading
 * up to it again (the records are not decoded again).  A state made with other options or other
 * files is refused with TFQ_INVALID_ARGUMENT and a message naming what differs; a corrupted one
 * with TFQ_DATA_LOSS.
 *
 * Threads.  Reader threads start at the first tfq_pipeline_next() (or tfq_pipeline_start());
 * num_threads == 0 reads and decodes on the caller's thread inside tfq_pipeline_next().  No
 * callback is ever called from a reader thread.  A pipeline is safe to use from a process made by
 * fork() only if it was created in that process.
 *
 * Since: 0.3 */
#ifndef TFQ_PIPELINE_H
#define TFQ_PIPELINE_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/csv.h>
#include <tfq/example.h>
#include <tfq/export.h>
#include <tfq/reader.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* The input's format. */
typedef enum tfq_format {
  TFQ_FORMAT_CSV = 0,          /* lines of delimited fields, decoded by decode_csv */
  TFQ_FORMAT_TEXT = 1,         /* lines, one string column "line" */
  TFQ_FORMAT_TFRECORD = 2,     /* TFRecord records, one string column "record" */
  TFQ_FORMAT_EXAMPLES = 3,     /* TFRecord files of tf.train.Example, parsed by parse_example */
  TFQ_FORMAT_FIXED_LENGTH = 4, /* fixed-length records, one string column "record" */
  /* TFRecord files: parsed as TFQ_FORMAT_EXAMPLES when the first file's first records are
   * tf.train.Example (tfq-cat's rule, see set_features), else raw records as
   * TFQ_FORMAT_TFRECORD; tfq_pipeline_format() gives the outcome.  Since: 0.3 */
  TFQ_FORMAT_TFRECORD_AUTO = 5
} tfq_format;

/* ---- options --------------------------------------------------------------------------------
 * A builder: every setter only records its value; tfq_pipeline_new() checks them all.
 * Ownership: strings and objects passed in are copied.  Thread-safety: one thread at a time. */
typedef struct tfq_pipeline_options tfq_pipeline_options;

/* @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Ownership: *out freed with
 * tfq_pipeline_options_free().  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_new(tfq_pipeline_options **out,
                                          tfq_status *st) TFQ_WARN_UNUSED;
/* NULL is a no-op.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_free(tfq_pipeline_options *o);

/* Adds an input: a path, or a glob pattern (glob(3): *, ?, [...]) expanded, sorted, when the
 * pipeline is made; a pattern that matches nothing is an error then ("<pattern>: no file
 * matches").  Files are read in the order added.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_add_file(tfq_pipeline_options *o, const char *path,
                                               tfq_status *st) TFQ_WARN_UNUSED;
/* Default TFQ_FORMAT_CSV.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_format(tfq_pipeline_options *o, tfq_format f);
/* Default TFQ_COMPRESSION_AUTO: each file by its first bytes, then by its name (.gz, .zlib).
 * Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_compression(tfq_pipeline_options *o, tfq_compression c);

/* CSV columns as a spec string: comma-separated [N*]TYPE[:DEFAULT] entries, TYPE one of
 * float32, float64, int32, int64, string (aliases float, double, int, long, str); ":DEFAULT"
 * gives the record default (a string default may be in double quotes, with "" for a quote), and
 * no ':' makes the column required ("Field N is required but missing in record M!").  "N*"
 * repeats an entry.  Example: "2*float32:-1,int32:-1" is the seed program's
 * record_defaults=[[-1.], [-1.], [-1]].
 *
 * Without a spec and without csv options, tfq_pipeline_new() infers the columns as tfq-cat does
 * (docs/tfq-cat.md, "Type inference"): it reads the header and skipped lines and a sample of the
 * first input file (after sharding by file; or the sample file) through a TextLine reader with
 * the pipeline's compression: 100 records, fewer for wide rows (2^17 values' worth, never fewer
 * than 10 records; see set_infer_rows).  The records kept are the sample's records before the
 * first that decode_csv rejects (delimiter, quoting and select_cols as the data will be
 * decoded).  Each column is int64:0 when every non-empty value of it is an int64 for
 * decode_csv's own parser, else float64:0.0 when every one is a float64 (decode_csv's rules:
 * nan, inf, hex floats, blanks around), else string: (a column empty in every sampled record is
 * a string column).  Without records (an empty file) there is one string column (one per
 * select_cols entry).  A read error ends the sample (the pipeline reports it when it reads the
 * file).  tfq_pipeline_columns_spec() gives the result.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT naming the bad entry ("unknown type 'decimal' in column
 *         spec ..."); TFQ_RESOURCE_EXHAUSTED.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_set_columns(tfq_pipeline_options *o, const char *spec,
                                                  tfq_status *st) TFQ_WARN_UNUSED;
/* CSV columns as decode_csv options (typed defaults, delimiter, na_value, select_cols): used as
 * they are instead of a spec string.  Ownership: `csv` borrowed; it must outlive every pipeline
 * made from these options and must not change meanwhile.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_csv_options(tfq_pipeline_options *o,
                                                  const tfq_csv_options *csv);
/* CSV with a spec string (or inferred columns): decode_csv's na_value, a field that takes its
 * column's default like an empty one (NULL: none, the default).  @return TFQ_OK,
 * TFQ_RESOURCE_EXHAUSTED.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_set_na_value(tfq_pipeline_options *o, const char *na,
                                                   tfq_status *st) TFQ_WARN_UNUSED;
/* CSV with a spec string (or inferred columns): decode_csv's use_quote_delim (default on: a
 * field may be quoted with '"').  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_use_quote_delim(tfq_pipeline_options *o, int on);
/* CSV with a spec string: the field delimiter (one byte, default ',').  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_field_delim(tfq_pipeline_options *o, char delim);
/* CSV with a spec string: keep only these columns of each line (0-based, increasing), as
 * decode_csv's select_cols; the spec then lists the kept columns.  @return TFQ_OK,
 * TFQ_RESOURCE_EXHAUSTED.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_set_select_cols(tfq_pipeline_options *o, const int64_t *cols,
                                                      size_t n, tfq_status *st) TFQ_WARN_UNUSED;
/* CSV and text: the first line of each file holds the column names (CSV: split at the
 * delimiter as tfq-cat splits it: a field starting with '"' ends at the next lone '"', "" is a
 * quote; with select_cols the kept fields; read from the sample file when one is set); it is
 * skipped, as with skip_header_lines = 1.  Without it, or for columns the header line lacks (a
 * CSV file that is empty included), the columns are named "c0", "c1", ... (text: "line"), as
 * tfq-cat names them.  Since: 0.3
 *
 * `on` -1 (CSV with a spec string or inferred columns; tfq-cat's default, not the library's,
 * which stays TF1's 0): line 1 is taken as the header when it looks like one, decided by
 * tfq_pipeline_new() from line 1 and a sample of the records after it (the first input file or
 * the sample file, set_infer_rows records, as for column inference): the records' columns are
 * inferred, then each field of line 1 votes: in an int64 or float64 column, +1 when it is text
 * that is not such a number, -1 when it is one; in a string column, -1 when it is a number or
 * repeats one of the column's sampled values, +1 when the column's values (3 or more) all have
 * one length and the field another (Python's csv.Sniffer.has_header rule); an empty field or
 * na_value does not vote.  A header when the votes add up to more than 0 (a file of one line:
 * never).  With skip_header_lines >= 1, line 1 is the header.  Other formats and csv options: off.
 * tfq_pipeline_header() tells the outcome.  A UTF-8 byte order mark (EF BB BF) at the start of
 * the header line is not part of the first column's name (any `on`); with -1 and no header, one
 * at the start of a file's first record is not part of the data either (as Python's utf-8-sig
 * reads it; with 0, the record's bytes as TF1 reads them).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_header(tfq_pipeline_options *o, int on);
/* TextLineReader's skip_header_lines (CSV, text): lines skipped at the start of each file.
 * Default 0 (1 when set_header is on).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_skip_header_lines(tfq_pipeline_options *o, int64_t n);
/* CSV column inference (see set_columns): the records of the first file sampled, rows >= 1
 * (exactly that many, whatever the width of the rows, when the file has them).  Default -1:
 * tfq-cat's rule, 100 records, fewer for rows of more than 1310 fields (2^17 values' worth) but
 * never fewer than 10.  Example feature inference and TFQ_FORMAT_TFRECORD_AUTO's detection (see
 * set_features) sample `rows` records too; -1: tfq-cat's 100.  Another value is refused by
 * tfq_pipeline_new() when it infers or detects ("infer_rows must be >= 1 ...",
 * TFQ_INVALID_ARGUMENT).  Thread-safety: as the builder.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_infer_rows(tfq_pipeline_options *o, int64_t rows);
/* CSV: column inference and the header names, Examples: feature inference and
 * TFQ_FORMAT_TFRECORD_AUTO's detection, read `path` instead of the first input file: for
 * standard input (a pipe cannot be read twice), whose first bytes a tool saves aside in a file
 * (as tfq-cat does in a memfd).  It is read with the pipeline's compression, and a compressed
 * stream cut short ends there silently (a prefix).  NULL: the first input again.  (Without a
 * sample file, tfq_pipeline_new() reads the first input itself, which blocks on a pipe or FIFO
 * until it delivers.)  A path that does not exist fails tfq_pipeline_new() (TFQ_NOT_FOUND
 * "sample file <path>; ...").
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Ownership: `path` copied.  Thread-safety: as the
 * builder.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_set_sample_file(tfq_pipeline_options *o, const char *path,
                                                      tfq_status *st) TFQ_WARN_UNUSED;
/* TFQ_FORMAT_FIXED_LENGTH: FixedLengthRecordReader's record_bytes (> 0), header_bytes,
 * footer_bytes, hop_bytes.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_fixed_length(tfq_pipeline_options *o, int64_t record_bytes,
                                                   int64_t header_bytes, int64_t footer_bytes,
                                                   int64_t hop_bytes);
/* TFQ_FORMAT_EXAMPLES (and TFQ_FORMAT_TFRECORD_AUTO when it finds Examples): the features to
 * parse, one column each, named by their keys, in the config's order (sorted keys), batched as
 * TF's parse_example batches them: a FixedLen feature with a fully defined shape is a dense
 * column [n, shape]; a VarLen feature a sparse column (TF's SparseTensor, three slots); a
 * FixedLenSequence feature a dense column [n, the most rows of a record in the batch, row
 * shape], each record's rows followed by the padding (its default_value, else 0 or "").  Sparse
 * features are refused (TFQ_UNIMPLEMENTED at tfq_pipeline_new; the read-parse op of tfq/ops.h
 * takes them); an empty config is refused (TFQ_INVALID_ARGUMENT).
 *
 * Without features (cfg NULL, the default), tfq_pipeline_new() infers them as tfq-cat does
 * (docs/tfq-cat.md, "tf.train.Example"), from a sample of the first input file (after sharding
 * by file; or the sample file) read through a TFRecord reader with the pipeline's compression:
 * its first 100 records (see set_infer_rows); a read error ends the sample.  A key with the same
 * value count k in every sampled Example is a required FixedLen feature (no default; shape [] for
 * k = 1, else [k]); any other key (one missing from some Example, with counts that differ, or
 * only ever an empty Feature) is VarLen; the dtype is that of its first non-empty list (float32,
 * int64 or string; string when it never has one).  Keys holding a NUL byte cannot be requested
 * and are left out.  A sample without a feature fails tfq_pipeline_new() with
 * TFQ_INVALID_ARGUMENT "no features to infer from the first records of <file>: give the features
 * (...)" (or, when the sample ended on a read error, that error's code and "cannot infer the
 * features of <file>: <reason>").  Records of the sample that are not Examples are left out of
 * the inference (the pipeline reports them when it parses them).
 *
 * TFQ_FORMAT_TFRECORD_AUTO reads the same sample and finds Examples when every sampled record
 * parses as one by the structural rules of TF's fast parser and at least one names a feature
 * (tfq-cat's rule); the features are then `cfg` when given, else inferred as above.  Otherwise
 * (an empty file too) the records are raw, one string column "record".
 * tfq_pipeline_features_spec() gives the features used.
 * Ownership: `cfg` borrowed; it must outlive every pipeline made from these options (an inferred
 * config is the pipeline's own).  Thread-safety: as the builder.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_features(tfq_pipeline_options *o,
                                               const tfq_example_config *cfg);
/* FixedLenSequence columns as ragged batches instead of padded ones: two tuple slots, the
 * records' rows back to back [total rows, row shape] and int64 row splits [n + 1] (record r's rows
 * are splits[r] .. splits[r + 1]; tf.RaggedTensor.from_row_splits), so each record's own rows
 * stay known (the padded batch cannot tell padding from values).  Default off.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_ragged_sequences(tfq_pipeline_options *o, int on);
/* A last string column "key" holding each record's reader key ("<file>:<n>").  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_keys(tfq_pipeline_options *o, int on);

/* Records per batch (> 0, default 32).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_batch_size(tfq_pipeline_options *o, int64_t n);
/* The last, smaller batch of an input is not returned (its records are counted as dropped in
 * the stats).  Default off.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_drop_remainder(tfq_pipeline_options *o, int on);
/* Shuffle the records (and the file order each epoch).  Default on.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_shuffle(tfq_pipeline_options *o, int on);
/* The shuffle buffer: capacity (default min_after_dequeue + 3 * batch_size, TF's rule with one
 * thread) and min_after_dequeue (default 1000, TF's docs' example; free-running mode only).
 * Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_capacity(tfq_pipeline_options *o, int64_t capacity);
TFQ_API void tfq_pipeline_options_set_min_after_dequeue(tfq_pipeline_options *o, int64_t m);
/* tf.train.shuffle_batch's arguments in one call: batch_size, num_threads, capacity,
 * min_after_dequeue (shuffle on).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_shuffle_batch(tfq_pipeline_options *o, int64_t batch_size,
                                                    int num_threads, int64_t capacity,
                                                    int64_t min_after_dequeue);
/* The seed of the file order and the draws.  Without one, a seed from the OS (readable from the
 * stats, so a run can be repeated).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_seed(tfq_pipeline_options *o, uint64_t seed);
/* Passes over the input (0: forever; default 1).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_num_epochs(tfq_pipeline_options *o, int64_t n);
/* Reader threads (default 1; 0: read on the caller's thread).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_num_threads(tfq_pipeline_options *o, int n);
/* Records read a step (default 2048).  Changes neither the records nor, in deterministic mode,
 * the batches.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_step(tfq_pipeline_options *o, int64_t records);
/* Shard `index` of `count` (0 <= index < count): with at least `count` files, the files k with
 * k % count == index; otherwise the records n (0-based in each file) with n % count == index.
 * Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_shard(tfq_pipeline_options *o, int64_t index, int64_t count);
/* TFRecord input (TFQ_FORMAT_TFRECORD, _EXAMPLES, _TFRECORD_AUTO): each file's record index is
 * the file "<file><suffix>" beside it (".idx" for tfq-cat --write-index's and DALI's
 * tfrecord2idx's), one line "OFFSET SIZE" per record in file order: the record's first byte and
 * its framed size (12 + payload + 4), in decimal.  For a GZIP or ZLIB file OFFSET is in the
 * decompressed stream (tfq's extension: DALI cannot index those).  With a shard by record
 * (set_shard with fewer files than `count`) each file's N records (its index's lines) split into
 * `count` contiguous ranges, and shard `index` reads records [index*N/count, (index+1)*N/count)
 * (integer division) from its first record's offset: an lseek in a plain file (the bytes before are
 * not read), read through in a compressed one; the union over the shards is every record once.
 * Without a shard by record the index is checked and not otherwise used.  NULL (the default):
 * no index.  tfq_pipeline_new() fails with TFQ_NOT_FOUND for a missing index and
 * TFQ_DATA_LOSS "<index>:<line>: ..." for one that is malformed, does not start at 0, is not
 * contiguous, or (plain files) does not end at the file's size.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT an empty suffix or one over 31 bytes.
 * Ownership: `suffix` copied.  Thread-safety: as the options.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_options_set_index_suffix(tfq_pipeline_options *o, const char *suffix,
                                                       tfq_status *st) TFQ_WARN_UNUSED;
/* Bad records skipped before one stops the pipeline (default 0; -1: no limit).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_max_bad_records(tfq_pipeline_options *o, int64_t n);
/* The deterministic mode (above).  Default off.  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_deterministic(tfq_pipeline_options *o, int on);

/* Called once per skipped bad record, in input order, on the thread calling
 * tfq_pipeline_next(): `where` is "<file>:<line>" (CSV, text: the 1-based line), "<file>:<n>"
 * (TFRecord, Examples, fixed-length: the record's number in its file, from 0) or "<file>" (a
 * read error: the reason says where), `reason` TF's message for the record decoded alone.
 * Strings borrowed for the call. */
typedef void (*tfq_bad_record_fn)(void *ctx, const char *where, const char *reason);
/* NULL restores the default (standard error).  Since: 0.3 */
TFQ_API void tfq_pipeline_options_set_bad_record_fn(tfq_pipeline_options *o, tfq_bad_record_fn fn,
                                                    void *ctx);

/* ---- the pipeline ---------------------------------------------------------------------------- */
typedef struct tfq_pipeline tfq_pipeline;

/* Makes a pipeline: expands the inputs, checks the options, reads the header line when asked,
 * infers CSV columns when none are given (see set_columns), detects Examples
 * (TFQ_FORMAT_TFRECORD_AUTO) and infers their features when none are given (see
 * set_features).  No thread runs yet.
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT a bad option ("batch_size must be > 0", "no input file",
 *         "min_after_dequeue (m) must be below capacity (c)", "infer_rows must be >= 1 ...",
 *         ...); TFQ_NOT_FOUND an input or sample file that does not exist or a pattern matching
 *         nothing; TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `o` borrowed for the call (copied); *out freed with tfq_pipeline_free().
 * Thread-safety: any.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_new(const tfq_pipeline_options *o, tfq_pipeline **out,
                                  tfq_status *st) TFQ_WARN_UNUSED;

/* Starts the reader threads (tfq_pipeline_next() does it if needed).  After a restore only.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (no thread).  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_start(tfq_pipeline *p, tfq_status *st) TFQ_WARN_UNUSED;

/* The next batch: a tuple of tfq_pipeline_num_slots(p) tensors, each dense column [n, <record
 * shape>] with 1 <= n <= batch_size (n < batch_size only for the last batch of the input), each
 * sparse column three (below).
 * @return TFQ_OK; TFQ_OUT_OF_RANGE the input is exhausted ("End of sequence"), and on every
 *         later call; a bad record past the budget, after every record before it was returned
 *         (its code: TFQ_INVALID_ARGUMENT for decode/parse errors, TFQ_DATA_LOSS for corrupt or
 *         truncated files, ...; the same error again on later calls); TFQ_CANCELLED after
 *         tfq_pipeline_stop().
 * Ownership: *out (NULL unless TFQ_OK) is the caller's, freed with tfq_tuple_free().
 * Thread-safety: one thread at a time (the consumer).  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_next(tfq_pipeline *p, tfq_tuple **out,
                                   tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_pipeline_next(), into `dst`, a tuple of tfq_pipeline_num_columns(p) slots that the
 * caller keeps across calls, so that a steady loop allocates no tensor: a slot holding a tensor
 * of the column's dtype and the batch's shape that only `dst` references is refilled in place;
 * any other slot (empty, another shape: the last batch; shared: a reference taken to keep it)
 * gets a new tensor, its old reference dropped.  String slots view the decoded records' bytes
 * as with tfq_pipeline_next().
 * @return as tfq_pipeline_next(), plus TFQ_INVALID_ARGUMENT "the output tuple has m slots for k
 *         columns".  On an error `dst` keeps what it held, or tensors of unspecified contents.
 * Ownership: `dst` borrowed; its slots owned by it.  Thread-safety: as tfq_pipeline_next().
 * Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_next_into(tfq_pipeline *p, tfq_tuple *dst,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* The slots of a batch tuple: one per column, three for a sparse column (a VarLen feature: TF's
 * SparseTensor of the batch, indices int64 [N, 2] (record, position), values [N], dense_shape
 * int64 [2] = [records, longest list]); column i starts at tfq_pipeline_column_slot(p, i).
 * Thread-safety: any.  Since: 0.3 */
TFQ_API size_t tfq_pipeline_num_slots(const tfq_pipeline *p);
TFQ_API size_t tfq_pipeline_column_slot(const tfq_pipeline *p, size_t i);
TFQ_API int tfq_pipeline_column_is_sparse(const tfq_pipeline *p, size_t i);
/* A FixedLenSequence column with set_ragged_sequences: two slots, rows and row splits. */
TFQ_API int tfq_pipeline_column_is_ragged(const tfq_pipeline *p, size_t i);

/* Columns of the batches: count, names, dtypes, per-record shapes (a sparse column: [-1]; a
 * FixedLenSequence column: [-1, row shape]).
 * Ownership: strings and arrays borrowed from `p`.  Thread-safety: any.  Since: 0.3 */
TFQ_API size_t tfq_pipeline_num_columns(const tfq_pipeline *p);
TFQ_API const char *tfq_pipeline_column_name(const tfq_pipeline *p, size_t i);
TFQ_API tfq_dtype tfq_pipeline_column_dtype(const tfq_pipeline *p, size_t i);
TFQ_API int tfq_pipeline_column_rank(const tfq_pipeline *p, size_t i);
TFQ_API const int64_t *tfq_pipeline_column_dims(const tfq_pipeline *p, size_t i);
/* The CSV columns as a spec string (set_columns syntax), given or inferred, formatted as tfq-cat
 * prints its inferred -d: canonical type names (float32, float64, int32, int64, string), each
 * default as given (inferred: 0, 0.0 or empty), a string default holding ',' or '"' in double
 * quotes, and runs of 3 or more identical entries as N*TYPE[:DEFAULT] ("4*float64:0.0,string:"
 * for the iris data).  Given back to set_columns (with the same delimiter and select_cols), it
 * gives the same columns and batches.  NULL for csv options (set_csv_options) and the other
 * formats.  Ownership: borrowed from `p`.  Thread-safety: any.  Since: 0.3 */
TFQ_API const char *tfq_pipeline_columns_spec(const tfq_pipeline *p);

/* 1 when the first line of each file is the header (set_header 1, or -1 and detected, or
 * skip_header_lines >= 1 with -1), else 0 (other formats; p NULL).  Thread-safety: any.
 * Since: 0.3 */
TFQ_API int tfq_pipeline_header(const tfq_pipeline *p);

/* The pipeline's format: the one set, or for TFQ_FORMAT_TFRECORD_AUTO what the input turned out
 * to be (TFQ_FORMAT_EXAMPLES or TFQ_FORMAT_TFRECORD).  REQUIRES: p not NULL.  Thread-safety: any.
 * Since: 0.3 */
TFQ_API tfq_format tfq_pipeline_format(const tfq_pipeline *p);
/* The Example features (given or inferred) as a tfq-cat --features SPEC, formatted as tfq-cat
 * prints its inferred --features: "NAME:TYPE[SHAPE]" entries joined by ", " in column order
 * (sorted keys), TYPE float32, int64 or string, SHAPE none for [], "[d1,d2,...]" for FixedLen,
 * "[*]" for VarLen, "[?]" or "[?,d2,...]" for FixedLenSequence; a NAME that is empty, holds one of
 * ,:[]=" or starts or ends with a blank in double quotes ('"' doubled).  For inferred features
 * the string is exactly tfq-cat's ("id:int64, name:string, tags:string[*], x:float32[2]").  A
 * given FixedLen default follows as "=VALUE" (float32 with 9 significant digits, a string in
 * double quotes when it is empty, holds ',' or '"' or starts or ends with a blank); the syntax
 * holds one value repeated over the shape, so a default whose values differ shows its first one,
 * and a string default is cut at a NUL byte; a FixedLenSequence padding is not shown (tfq-cat's
 * SPEC has none).  Otherwise, given back to tfq-cat --features, it gives the same features.
 * NULL for input that is not Example (the other formats, and TFQ_FORMAT_TFRECORD_AUTO on raw
 * records) and for p NULL.  Ownership: borrowed from `p`.  Thread-safety: any.  Since: 0.3 */
TFQ_API const char *tfq_pipeline_features_spec(const tfq_pipeline *p);

/* TFQ_FORMAT_TFRECORD_AUTO that settled on raw records although the sample's Examples named
 * features: the number (from 0, in the first file or the sample file) of the first sampled record
 * that is not a tf.train.Example, for a note such as tfq-cat's ("<file>: record N is not a
 * tf.train.Example: printing the records' bytes").  -1 otherwise (Examples found, a sample that
 * named no feature, another format) and for p NULL.  Thread-safety: any.  Since: 0.3 */
TFQ_API int64_t tfq_pipeline_first_non_example(const tfq_pipeline *p);
/* Inferred Example features (see set_features): 1 when the sample named keys holding a NUL byte,
 * which were left out (they cannot be requested), else 0 (features given, or p NULL).
 * Thread-safety: any.  Since: 0.3 */
TFQ_API int tfq_pipeline_features_nul_keys(const tfq_pipeline *p);

/* Counters, a snapshot.  Fields may be added at the end (set `size` to sizeof before the call).
 */
typedef struct tfq_pipeline_stats {
  size_t size;             /* in: sizeof(tfq_pipeline_stats) as the caller knows it */
  uint64_t seed;           /* the seed in use (given or from the OS) */
  int64_t records_read;    /* records read from the files (good and bad, after sharding) */
  int64_t records_out;     /* records returned in batches */
  int64_t batches_out;     /* batches returned */
  int64_t bad_records;     /* bad records skipped */
  int64_t records_dropped; /* the remainder not returned (drop_remainder) */
  int64_t bytes_read;      /* bytes of records read (after decompression) */
  int64_t buffer_records;  /* records in the shuffle buffer now */
  int64_t buffer_capacity; /* its capacity */
  int64_t epoch;           /* the epoch being read (0-based) */
  int64_t files;           /* input files after expansion and sharding */
} tfq_pipeline_stats;
/* @return TFQ_OK, TFQ_INVALID_ARGUMENT (size 0).  Thread-safety: any thread (a progress thread
 * too): the consumer's figures as of its last returned batch; it takes no lock a reader holds
 * (cheap enough for a consumer to call after every batch).  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_get_stats(tfq_pipeline *p, tfq_pipeline_stats *out,
                                        tfq_status *st) TFQ_WARN_UNUSED;

/* Saves the state (above) at the current batch boundary: reader threads pause between steps
 * while the state is written, then go on.
 * @return TFQ_OK (*state, *len set); TFQ_FAILED_PRECONDITION after an error was returned;
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: *state is the caller's, freed with tfq_free().  Thread-safety: the consumer's
 * thread, between tfq_pipeline_next() calls.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_save(tfq_pipeline *p, char **state, size_t *len,
                                   tfq_status *st) TFQ_WARN_UNUSED;
/* As tfq_pipeline_save(), written to `path` atomically (the temporary file "<path>.tmp", fsync,
 * rename, fsync of the directory): a crash leaves the old state or the new one (and perhaps
 * "<path>.tmp", which the next save overwrites).  One saver per path at a time.  @return as save;
 * TFQ_NOT_FOUND (no such directory), TFQ_PERMISSION_DENIED, TFQ_RESOURCE_EXHAUSTED (disk full),
 * TFQ_UNKNOWN (other I/O errors), each "<path>; <strerror>".  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_save_file(tfq_pipeline *p, const char *path,
                                        tfq_status *st) TFQ_WARN_UNUSED;
/* Writes a state made by tfq_pipeline_save() earlier to `path`, atomically as
 * tfq_pipeline_save_file() does: for a program that keeps states in memory and persists one
 * later (tfq-feed --checkpoint keeps each until the batches before it are acknowledged).
 * @return TFQ_OK; as tfq_pipeline_save_file() for I/O errors.  Ownership: `state` borrowed.
 * Thread-safety: any thread; one writer per path at a time.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_state_write_file(const char *path, const void *state, size_t len,
                                               tfq_status *st) TFQ_WARN_UNUSED;
/* Restores a saved state into a pipeline made with the same options and files, before its
 * first tfq_pipeline_next().
 * @return TFQ_OK; TFQ_DATA_LOSS "pipeline state is corrupted (...)" (magic, checksum, length);
 *         TFQ_INVALID_ARGUMENT "pipeline state is from other options or files (...)" naming
 *         what differs, or a version this library cannot read; TFQ_FAILED_PRECONDITION the
 *         pipeline has started; TFQ_OUT_OF_RANGE / TFQ_DATA_LOSS a file is now shorter than its
 *         saved position; TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `state` borrowed.  Thread-safety: the consumer's thread.  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_restore(tfq_pipeline *p, const void *state, size_t len,
                                      tfq_status *st) TFQ_WARN_UNUSED;
/* As tfq_pipeline_restore(), from a file written by tfq_pipeline_save_file().  @return as
 * restore; TFQ_NOT_FOUND, TFQ_PERMISSION_DENIED, TFQ_FAILED_PRECONDITION (a directory),
 * TFQ_UNKNOWN, each "<path>; <strerror>".  Since: 0.3 */
TFQ_API tfq_code tfq_pipeline_restore_file(tfq_pipeline *p, const char *path,
                                           tfq_status *st) TFQ_WARN_UNUSED;

/* Makes a blocked or later tfq_pipeline_next() return TFQ_CANCELLED and stops the readers.
 * Thread-safety: any thread (a signal handler's thread too).  Since: 0.3 */
TFQ_API void tfq_pipeline_stop(tfq_pipeline *p);

/* Stops and joins the reader threads and frees everything.  A reader blocked in read() on a
 * pipe or FIFO that delivers nothing is not interrupted: the call waits until the pipe delivers
 * or ends (as TF's reader ops do).  NULL is a no-op.  Thread-safety: no
 * other call on `p` may run.  Since: 0.3 */
TFQ_API void tfq_pipeline_free(tfq_pipeline *p);

TFQ_EXTERN_C_END

#endif
