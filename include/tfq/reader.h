/* File readers with TensorFlow 1.x semantics, and a TFRecord writer.
 *
 * A reader takes work units (normally filenames) from a string queue (one scalar string
 * component, see queue.h) and produces (key, value) records, as TF's ReaderBase does
 * (core/framework/reader_base.cc):
 *
 *   TFQ_READER_TEXT_LINE     key "<file>:<line>" (1-based, header lines counted), value the line
 *                            without "\n" and without one trailing "\r"
 *   TFQ_READER_FIXED_LENGTH  key "<file>:<index>" (0-based), value record_bytes bytes
 *   TFQ_READER_TFRECORD      key "<file>:<offset of the record in the decompressed stream>"
 *   TFQ_READER_WHOLE_FILE    key "<file>", value the whole file
 *   TFQ_READER_IDENTITY      key = value = the work unit
 *
 * The filename is used verbatim in keys.  A work unit whose file cannot be opened fails that one
 * call and is skipped (WholeFile: the error is sticky, as in TF).  When the work queue is closed
 * and drained a read fails with the queue's OUT_OF_RANGE ("FIFOQueue '<name>' is closed and has
 * insufficient elements (requested 1, current size 0)"): the normal end of input.
 *
 * Deviations from TF (docs/readers.md):
 *  - Truncation is never silent by default.  A compressed stream cut short, a TFRecord cut inside
 *    its 12-byte header, a fixed-length file ending inside a record or inside its header give
 *    TFQ_DATA_LOSS naming the file and the offset.  tfq_reader_options_set_tf_compat_truncation()
 *    restores TF's behaviour (silent end; OUT_OF_RANGE "reached end of file" for a file shorter
 *    than its FixedLength header).
 *  - read_up_to that meets an error after k records returns those k records and reports the
 *    error on the next call on the reader (TF discards them).
 *  - Every reader accepts GZIP/ZLIB input (TF1's TextLineReader and WholeFileReader have none).
 *  - TextLineReader lines are capped at max_line_bytes (TFQ_RESOURCE_EXHAUSTED beyond).
 *
 * Files are streamed through a buffer (256 KiB by default): memory does not grow with the size
 * of a file, only with the longest line / record.
 *
 * Thread-safety: a tfq_reader may be used by several threads at once; every call on it is
 * serialised by an internal mutex (a read blocked on an empty work queue holds it, as in TF). */
#ifndef TFQ_READER_H
#define TFQ_READER_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/export.h>
#include <tfq/queue.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

typedef enum tfq_reader_kind {
  TFQ_READER_TEXT_LINE = 0,
  TFQ_READER_FIXED_LENGTH = 1,
  TFQ_READER_TFRECORD = 2,
  TFQ_READER_WHOLE_FILE = 3,
  TFQ_READER_IDENTITY = 4
} tfq_reader_kind;

/* The whole file is one stream: ZLIB = zlib-wrapped deflate (windowBits 15), GZIP = gzip
 * (windowBits 31, every member of a multi-member file is read). */
typedef enum tfq_compression {
  TFQ_COMPRESSION_NONE = 0,
  TFQ_COMPRESSION_ZLIB = 1,
  TFQ_COMPRESSION_GZIP = 2,
  /* Readers only (a tfq extension): each file's compression is picked when it is opened, from
   * its first bytes (gzip magic 1F 8B), then its name (.gz GZIP; .zz, .zlib ZLIB), then, for
   * TFRecordReader, a valid TFRecord length CRC at offset 0 (plain), then a zlib header (ZLIB);
   * anything else is read plain.  Works on pipes (the first bytes stay buffered).  The TFRecord
   * writer refuses it.  Since: 0.2 */
  TFQ_COMPRESSION_AUTO = 3
} tfq_compression;

/* TF's compression_type / encoding strings: "ZLIB" and "GZIP" (exact case); any other string,
 * "" and NULL included, means TFQ_COMPRESSION_NONE, as in TF (no error).  ("AUTO" is not taken
 * here: TF would read such files plain.)  Ownership: `s` borrowed for the call.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_compression tfq_compression_from_string(const char *s);

/* The compression TFQ_COMPRESSION_AUTO picks for a file whose first `n` bytes are `first`
 * (pass at least 12 when the file has them) and whose name is `name` (NULL: none): the gzip magic
 * 1F 8B is GZIP; then the extensions .gz (GZIP), .zz and .zlib (ZLIB); then, with `tfrecord`
 * != 0, a valid TFRecord length CRC at offset 0 is NONE; then a zlib header (deflate, window
 * <= 32 KiB, no preset dictionary, FCHECK) is ZLIB; anything else NONE.
 * Ownership: both borrowed.  Thread-safety: any.  Since: 0.2 */
TFQ_API tfq_compression tfq_compression_detect(const void *first, size_t n, const char *name,
                                               int tfrecord);

/* Default TextLineReader line cap. */
#define TFQ_DEFAULT_MAX_LINE_BYTES ((size_t)64 << 20)
/* Default read buffer (TF's TextLineReader buffer size). */
#define TFQ_DEFAULT_READ_BUFFER_BYTES ((size_t)256 << 10)

/* ---- options ---------------------------------------------------------------------------------
 * Construction options.  Opaque.  Thread-safety: one thread at a time.
 * Values are checked by tfq_reader_new() (with TF's messages), not by the setters. */
typedef struct tfq_reader_options tfq_reader_options;

/* Defaults: name = the kind's op name ("TextLineReaderV2", ...), skip_header_lines 0,
 * record/header/footer/hop bytes 0, compression NONE, tf_compat_truncation 0,
 * max_line_bytes TFQ_DEFAULT_MAX_LINE_BYTES, buffer_bytes TFQ_DEFAULT_READ_BUFFER_BYTES.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * Ownership: *out (NULL on failure) freed with tfq_reader_options_free().  Thread-safety: any.
 * Since: 0.1 */
TFQ_API tfq_code tfq_reader_options_new(tfq_reader_options **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `o`.  NULL does nothing.  Ownership: takes `o`.  Thread-safety: as tfq_reader_options.
 * Since: 0.1 */
TFQ_API void tfq_reader_options_free(tfq_reader_options *o);

/* The node name used in messages ("TextLineReader '<name>'").  Copied; NULL restores the
 * default.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (options unchanged).  Ownership: `name`
 * copied.  Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API tfq_code tfq_reader_options_set_name(tfq_reader_options *o, const char *name,
                                             tfq_status *st) TFQ_WARN_UNUSED;
/* TextLine: lines skipped at the start of every file (>= 0).  Ownership: nothing is taken.
 * Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_skip_header_lines(tfq_reader_options *o, int64_t n);
/* FixedLength: record, header, footer and hop sizes in decompressed bytes (each >= 0; hop 0
 * means hop = record_bytes).  Ownership: nothing is taken.  Thread-safety: as
 * tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_record_bytes(tfq_reader_options *o, int64_t n);
TFQ_API void tfq_reader_options_set_header_bytes(tfq_reader_options *o, int64_t n);
TFQ_API void tfq_reader_options_set_footer_bytes(tfq_reader_options *o, int64_t n);
TFQ_API void tfq_reader_options_set_hop_bytes(tfq_reader_options *o, int64_t n);
/* Every kind except Identity: the file is one compressed stream.  Ownership: nothing is taken.
 * Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_compression(tfq_reader_options *o, tfq_compression c);
/* Nonzero: truncated files end silently as in TF (see the top of this file).
 * Ownership: nothing is taken.  Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_tf_compat_truncation(tfq_reader_options *o, int on);
/* TextLine: longest line accepted (>= 1).  Ownership: nothing is taken.
 * Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_max_line_bytes(tfq_reader_options *o, size_t n);
/* Size of the read buffer (and of the compressed-input buffer), >= 64.  Ownership: nothing is
 * taken.  Thread-safety: as tfq_reader_options.  Since: 0.1 */
TFQ_API void tfq_reader_options_set_buffer_bytes(tfq_reader_options *o, size_t n);

/* ---- readers ----------------------------------------------------------------------------------
 */

/* A reader.  Opaque.  Thread-safety: any thread, concurrently (internally serialised). */
typedef struct tfq_reader tfq_reader;

/* Creates a reader of `kind` configured by `opts` (NULL: defaults).
 * @return TFQ_OK
 *         TFQ_INVALID_ARGUMENT  TF's messages: "skip_header_lines must be >= 0 not -1",
 *                               "record_bytes must be >= 0 not -1" (also header_bytes,
 *                               footer_bytes, hop_bytes); an unknown kind; a zero line cap.
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: `opts` copied; *out (NULL on failure) freed with tfq_reader_free().
 * Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_reader_new(tfq_reader_kind kind, const tfq_reader_options *opts,
                                tfq_reader **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Closes the current file and frees the reader.  NULL does nothing.
 * REQUIRES: no call on `r` is in progress.  Ownership: takes `r`.  Thread-safety: one thread,
 * after every other call on `r`.  Since: 0.1 */
TFQ_API void tfq_reader_free(tfq_reader *r);

/* "<Kind> '<name>'", e.g. "TextLineReader 'TextLineReaderV2'".  Ownership: borrowed, valid while
 * `r` lives.  Thread-safety: any.  Since: 0.1 */
TFQ_API const char *tfq_reader_name(const tfq_reader *r);

/* The kind the reader was made with.  Ownership: nothing is taken.  Thread-safety: any.
 * Since: 0.2 */
TFQ_API tfq_reader_kind tfq_reader_get_kind(const tfq_reader *r);

/* Splits a reader key of TF's form "<file>:<number>" (TextLineReader: the 1-based line number;
 * FixedLengthRecordReader: the record index; TFRecordReader: the byte offset of the record) at
 * its last ':'.  Keys are (pointer, length) bytes and may hold ':' in the file name.
 * @return 1 with *file_len and *number set, or 0 when `key` does not end in ":<digits>"
 *         (WholeFileReader and IdentityReader keys).
 * Ownership: `key` borrowed for the call; *file_len and *number written.  Thread-safety: any.
 * Since: 0.2 */
TFQ_API int tfq_reader_key_split(const char *key, size_t len, size_t *file_len, int64_t *number);

/* Reads the next record, taking work units from `work` as needed (empty files are skipped).
 * Blocks while it needs a work unit and `work` is open and empty.
 * @return TFQ_OK            *key and *value are new scalar string tensors.
 *         TFQ_OUT_OF_RANGE  `work` is closed and drained (the queue's message); or, with
 *                           tf_compat_truncation, a FixedLength file shorter than its header
 *                           ("reached end of file"; that file is skipped).
 *         TFQ_CANCELLED     `cancel` triggered while waiting for a work unit.
 *         TFQ_NOT_FOUND, TFQ_PERMISSION_DENIED, TFQ_UNKNOWN
 *                           the work unit could not be opened ("<file>; No such file or
 *                           directory"); the next call takes the next work unit (WholeFile:
 *                           the same one again, as in TF).
 *         TFQ_FAILED_PRECONDITION  the work unit is a directory ("<dir>; Is a directory", TF's
 *                           code); skipped like an unopenable file.
 *         TFQ_DATA_LOSS     also: a regular file truncated below the offset already read
 *                           ("<file> was truncated to N bytes while being read at offset M");
 *                           bytes appended while a file is read are read (the end is where
 *                           read() first returns 0).
 *         TFQ_DATA_LOSS     corrupt or truncated data: TFRecord "corrupted record at <o>",
 *                           "truncated record at <o>' failed with Read less bytes than
 *                           requested", inflate errors, and tfq's truncation messages (file and
 *                           offset).  Sticky: the next call meets it again until reset.
 *         TFQ_RESOURCE_EXHAUSTED  out of memory, or a line longer than max_line_bytes.
 *         TFQ_INVALID_ARGUMENT "Expected single component queue", "Expected queue with single
 *                           string component", "Expected to dequeue a one-element string
 *                           tensor".
 *         A code kept from an earlier read_up_to is returned first (see read_up_to).
 * Ownership: `work` and `cancel` borrowed; *key and *value (NULL on failure) freed with
 * tfq_tensor_free().  Thread-safety: any (serialised).  Since: 0.1 */
TFQ_API tfq_code tfq_reader_read(tfq_reader *r, tfq_queue *work, tfq_tensor **key,
                                 tfq_tensor **value, tfq_cancel *cancel,
                                 tfq_status *st) TFQ_WARN_UNUSED;

/* Reads up to `n` records of ONE work unit: the batch ends early at the end of a file, and never
 * mixes files.  n == 0 returns empty tensors without touching `work`.
 * If an error happens after k >= 1 records, returns TFQ_OK with those k records and keeps the
 * error for the next read/read_up_to call on this reader (TF would drop the k records).
 * @return TFQ_OK            *keys and *values are new [k] string tensors, 1 <= k <= n (k = 0
 *                           only when n == 0).
 *         TFQ_INVALID_ARGUMENT n < 0 ("num_records must be >= 0 not -1"), or as read.
 *         others as tfq_reader_read (only when no record was read).
 * Ownership: as tfq_reader_read.  Thread-safety: any (serialised).  Since: 0.1 */
TFQ_API tfq_code tfq_reader_read_up_to(tfq_reader *r, tfq_queue *work, int64_t n, tfq_tensor **keys,
                                       tfq_tensor **values, tfq_cancel *cancel,
                                       tfq_status *st) TFQ_WARN_UNUSED;

/* Records produced since creation / the last reset or restore.  Ownership: nothing is taken.
 * Thread-safety: any (serialised; a snapshot).  Since: 0.1 */
TFQ_API int64_t tfq_reader_num_records_produced(tfq_reader *r);
/* Work units finished (a file counts when the reader notices its end).  Ownership: nothing is
 * taken.  Thread-safety: any (serialised; a snapshot).  Since: 0.1 */
TFQ_API int64_t tfq_reader_num_work_units_completed(tfq_reader *r);

/* Abandons the current work unit (its remaining records are lost, the queue is untouched),
 * zeroes the counters and forgets a kept error.  @return TFQ_OK.  Ownership: nothing is taken.
 * Thread-safety: any (serialised).  Since: 0.1 */
TFQ_API tfq_code tfq_reader_reset(tfq_reader *r, tfq_status *st) TFQ_WARN_UNUSED;

/* Serialises the counters and current work unit as TF's ReaderBaseState protobuf (proto3).
 * Only IdentityReader and WholeFileReader support it, as in TF.
 * @return TFQ_OK               *state (tfq_malloc'ed, free with tfq_free) and *len set; an
 *                              untouched reader gives 0 bytes.
 *         TFQ_UNIMPLEMENTED    "Reader SerializeState" for the other kinds.
 *         TFQ_RESOURCE_EXHAUSTED
 * Ownership: *state is the caller's, freed with tfq_free().  Thread-safety: any (serialised).
 * Since: 0.1 */
TFQ_API tfq_code tfq_reader_serialize_state(tfq_reader *r, char **state, size_t *len,
                                            tfq_status *st) TFQ_WARN_UNUSED;

/* Restores a state from tfq_reader_serialize_state (or TF).  Any failure first resets the
 * reader, as in TF.  The bytes are parsed as protobuf parses a ReaderBaseState: unknown fields
 * (and known ones with another wire type) are skipped, groups included up to 100 deep; tags are
 * at most 5 bytes; an overlong varint value keeps its low 64 bits.
 * @return TFQ_OK
 *         TFQ_UNIMPLEMENTED     "Reader RestoreState" (TextLine, FixedLength, TFRecord).
 *         TFQ_INVALID_ARGUMENT  "Could not parse state for <Kind> '<name>': <C-escaped bytes>",
 *                               "Unexpected negative value when restoring in ...",
 *                               "Inconsistent work started vs. finished when restoring in ...".
 * Ownership: `state` borrowed.  Thread-safety: any (serialised).  Since: 0.1 */
TFQ_API tfq_code tfq_reader_restore_state(tfq_reader *r, const void *state, size_t len,
                                          tfq_status *st) TFQ_WARN_UNUSED;

/* ---- TFRecord writer and CRC32C ------------------------------------------------------------ */

/* Writes TFRecord files: per record the little-endian uint64 length, its masked CRC32C, the
 * payload and its masked CRC32C; with ZLIB or GZIP the whole file is one compressed stream.
 * Opaque.  Thread-safety: one thread at a time. */
typedef struct tfq_tfrecord_writer tfq_tfrecord_writer;

/* Creates (truncates) `path`.
 * @return TFQ_OK, TFQ_NOT_FOUND / TFQ_PERMISSION_DENIED / TFQ_UNKNOWN ("<path>; <reason>"),
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `path` borrowed for the call; *out (NULL on failure) freed with
 * tfq_tfrecord_writer_free().  Thread-safety: any.  Since: 0.1 */
TFQ_API tfq_code tfq_tfrecord_writer_new(const char *path, tfq_compression c,
                                         tfq_tfrecord_writer **out, tfq_status *st) TFQ_WARN_UNUSED;
/* Appends one record of `len` bytes.  @return TFQ_OK, TFQ_FAILED_PRECONDITION (closed), I/O
 * codes, TFQ_RESOURCE_EXHAUSTED (out of memory; a full disk, a quota or RLIMIT_FSIZE: "<path>;
 * No space left on device" / "<path>; File too large" — TF gives EFBIG OUT_OF_RANGE, which a
 * QueueRunner would take for the end of input).  Writes are buffered: flush and close report
 * the same errors.  Ownership: `data` borrowed for the call (copied or written).
 * Thread-safety: as tfq_tfrecord_writer.  Since: 0.1 */
TFQ_API tfq_code tfq_tfrecord_writer_write(tfq_tfrecord_writer *w, const void *data, size_t len,
                                           tfq_status *st) TFQ_WARN_UNUSED;
/* Pushes buffered bytes to the file (a compressed stream gets a Z_SYNC_FLUSH).
 * @return as tfq_tfrecord_writer_write().  Ownership: nothing is taken.
 * Thread-safety: as tfq_tfrecord_writer.  Since: 0.1 */
TFQ_API tfq_code tfq_tfrecord_writer_flush(tfq_tfrecord_writer *w, tfq_status *st) TFQ_WARN_UNUSED;
/* Finishes the stream and closes the file; later writes fail.  Idempotent.
 * @return as tfq_tfrecord_writer_write().  Ownership: nothing is taken.
 * Thread-safety: as tfq_tfrecord_writer.  Since: 0.1 */
TFQ_API tfq_code tfq_tfrecord_writer_close(tfq_tfrecord_writer *w, tfq_status *st) TFQ_WARN_UNUSED;
/* Closes (ignoring errors) and frees.  NULL does nothing.  Ownership: takes `w`.
 * Thread-safety: one thread, after every other call on `w`.  Since: 0.1 */
TFQ_API void tfq_tfrecord_writer_free(tfq_tfrecord_writer *w);

/* CRC32C (Castagnoli) of data[0..n) continuing from `crc` (0 to start); uses the SSE4.2 crc32
 * instruction when the CPU has it.  Ownership: `data` borrowed for the call.  Thread-safety: any.
 * Since: 0.1 */
TFQ_API uint32_t tfq_crc32c_extend(uint32_t crc, const void *data, size_t n);
/* TFRecord's masking: rotate right by 15, add 0xA282EAD8; and its inverse.
 * Thread-safety: any.  Since: 0.1 */
TFQ_API uint32_t tfq_crc32c_mask(uint32_t crc);
TFQ_API uint32_t tfq_crc32c_unmask(uint32_t masked);

/* ---- whole-file scans (no record is decoded) -------------------------------------------------
 * For tools that count or index records: tfq-cat --count and --index. */

/* Called once per record by tfq_tfrecord_scan(), in file order: `offset` is the record's first
 * byte (its length field) in the file's decompressed stream, `size` its whole framed size
 * (12 + payload + 4 bytes), as DALI's tfrecord2idx writes them.  Return 0 to go on, nonzero to
 * stop the scan (it then returns TFQ_CANCELLED). */
typedef int (*tfq_tfrecord_scan_fn)(void *ctx, uint64_t offset, uint64_t size);

/* Walks the TFRecord framing of `path` (compression NONE, ZLIB, GZIP or AUTO as for the
 * readers), verifying both CRCs of every record, and calls `fn` (NULL: none) per record.
 * *records (NULL: not wanted) is set to the number of good records before the end or the
 * error.  Reads the file once, in buffer-sized pieces (a record larger than the buffer is
 * CRC'd in pieces, never held whole).
 * @return TFQ_OK; TFQ_DATA_LOSS with the reader's messages ("corrupted record at <o>",
 *         "truncated record at <o>...", "truncated record header at <o>: ...", a corrupt
 *         compressed stream); TFQ_NOT_FOUND, TFQ_PERMISSION_DENIED, TFQ_UNKNOWN ("<path>;
 *         <strerror>"); TFQ_CANCELLED (fn stopped it); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `path` borrowed.  Thread-safety: any (no shared state).  Since: 0.3 */
TFQ_API tfq_code tfq_tfrecord_scan(const char *path, tfq_compression c, tfq_tfrecord_scan_fn fn,
                                   void *ctx, int64_t *records, tfq_status *st) TFQ_WARN_UNUSED;

/* The records of `path` (compression as for the readers; "/dev/stdin" is fine: the file is read
 * once, front to back) without decoding any: for `kind` TFQ_READER_TFRECORD as
 * tfq_tfrecord_scan() counts them (CRCs verified); for TFQ_READER_TEXT_LINE the lines a
 * TextLineReader would read (a last line without '\n' and empty lines included, no length cap)
 * less the first `skip_header_lines` (>= 0; fewer lines give 0); for (tfq_reader_kind)-1 the
 * kind is sniffed from the first 12 decompressed bytes: a TFRecord length with its valid masked
 * CRC32C is TFRECORD, anything else (an empty file too) TEXT_LINE.  *kind_out (NULL: not
 * wanted) receives the kind counted; *records the records counted (on an error: the good ones
 * before it).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT another kind; as tfq_tfrecord_scan() for I/O, framing
 *         and compressed-stream errors.
 * Ownership: `path` borrowed.  Thread-safety: any.  Since: 0.3 */
TFQ_API tfq_code tfq_record_count(const char *path, tfq_compression c, tfq_reader_kind kind,
                                  int64_t skip_header_lines, int64_t *records,
                                  tfq_reader_kind *kind_out, tfq_status *st) TFQ_WARN_UNUSED;

TFQ_EXTERN_C_END

#endif
