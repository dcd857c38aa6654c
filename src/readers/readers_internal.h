/* Private declarations of src/readers (never installed).  Symbols here are tfq__* and hidden. */
#ifndef TFQ_READERS_INTERNAL_H
#define TFQ_READERS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <tfq/reader.h>

#include "../core/base.h"
#include "../core/sync.h"

/* ---- buffered (optionally inflating) input: zstream.c, the only file that calls zlib ---- */

/* A file read through a buffer of decompressed bytes.  Memory is the buffer (grown only when a
 * caller asks for more contiguous bytes than it holds) plus, when compressed, a raw input
 * buffer of the same initial size and zlib's state.  One thread at a time. */
typedef struct tfq__instream tfq__instream;

/* Opens `path`.  NOT_FOUND / PERMISSION_DENIED / UNKNOWN with "<path>; <strerror>" as TF says,
 * RESOURCE_EXHAUSTED.  `tf_compat`: a compressed stream cut short ends silently (TF) instead of
 * DATA_LOSS. */
tfq_code tfq__instream_open(const char *path, tfq_compression c, size_t bufsize, int tf_compat,
                            int tfrecord, tfq__instream **out, tfq_status *st);
/* TFQ_COMPRESSION_AUTO looks at this many first bytes of a file. */
#define TFQ__DETECT_BYTES 12

void tfq__instream_close(tfq__instream *s);
/* Makes at least `want` bytes available at the current position, growing the buffer if needed;
 * *p and *avail receive the buffered bytes (avail < want only at a clean end of stream).  A
 * corrupt or truncated stream returns DATA_LOSS once the good bytes before it are consumed. */
tfq_code tfq__instream_ensure(tfq__instream *s, size_t want, const char **p, size_t *avail,
                              tfq_status *st);
/* The bytes buffered now (without reading). */
const char *tfq__instream_peek(tfq__instream *s, size_t *avail);
void tfq__instream_consume(tfq__instream *s, size_t n);
/* The stream's compression (never TFQ_COMPRESSION_AUTO: what AUTO picked). */
tfq_compression tfq__instream_compression(const tfq__instream *s);
/* Decompressed offset of the current position. */
uint64_t tfq__instream_pos(const tfq__instream *s);
/* Moves the position `n` decompressed bytes on: lseek past the buffer for a plain regular file,
 * else reading through.  TFQ_OUT_OF_RANGE when the stream ends first; a stream's errors. */
tfq_code tfq__instream_skip(tfq__instream *s, uint64_t n, tfq_status *st);
/* Current buffer capacity (for tests and the line cap). */
size_t tfq__instream_capacity(const tfq__instream *s);
/* Shrinks a buffer that grew past its initial size back (when nothing large is buffered). */
void tfq__instream_trim(tfq__instream *s);
/* The uint8 tensor whose data the buffer is (borrowed).  A reference taken to it keeps the bytes
 * consumed so far where they are, unchanged: while anyone else holds it the stream never writes
 * over them (it moves the unread bytes to a new buffer instead). */
tfq_tensor *tfq__instream_holder(const tfq__instream *s);

/* Buffered (optionally deflating) output for the TFRecord writer. */
typedef struct tfq__outstream tfq__outstream;
tfq_code tfq__outstream_open(const char *path, tfq_compression c, tfq__outstream **out,
                             tfq_status *st);
tfq_code tfq__outstream_write(tfq__outstream *s, const void *p, size_t n, tfq_status *st);
tfq_code tfq__outstream_flush(tfq__outstream *s, tfq_status *st);
/* Finishes the stream and closes the file; frees `s` in every case. */
tfq_code tfq__outstream_close(tfq__outstream *s, tfq_status *st);

/* ---- little-endian fields of the TFRecord framing (tfrecord.c, scan.c) ---- */
static inline uint64_t tfq__le64(const char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | (unsigned char)p[i];
  return v;
}
static inline uint32_t tfq__le32(const char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | (unsigned char)p[i];
  return v;
}

/* tfrecord.c: a TFRecord header p[0..12) at offset o: *n the payload length, or DATA_LOSS with
 * TF's messages (a length CRC mismatch, a length too large). */
tfq_code tfq__tfrecord_header(const char *p, uint64_t o, uint64_t *n, tfq_status *st);

/* ---- CRC32C (crc32c.c) ---- */
uint32_t tfq__crc32c_sw(uint32_t crc, const void *p, size_t n);
/* Hardware version; REQUIRES tfq__crc32c_hw_available(). */
uint32_t tfq__crc32c_hw(uint32_t crc, const void *p, size_t n);
int tfq__crc32c_hw_available(void);

/* ---- readers ---- */
#define TFQ__KEY_COPIES 8
struct tfq_reader_options {
  char *name;
  int64_t skip_header_lines, record_bytes, header_bytes, footer_bytes, hop_bytes;
  tfq_compression compression;
  int tf_compat_truncation;
  size_t max_line_bytes, buffer_bytes;
};

typedef struct tfq__sink {
  tfq__strbatch keys, values;
} tfq__sink;

typedef struct tfq__reader_ops {
  const char *kind_name; /* "TextLineReader" */
  const char *op_name;   /* default node name */
  int serializable;
  /* OnWorkStarted: opens current_work.  NULL: nothing to do. */
  tfq_code (*start)(tfq_reader *r, tfq_status *st);
  /* Produces at most one record into `out`. */
  tfq_code (*next)(tfq_reader *r, tfq__sink *out, int *produced, int *at_end, tfq_status *st);
  /* OnWorkFinished / reset: closes the file and clears per-file state. */
  void (*finish)(tfq_reader *r);
  /* Optional batch form of next (used instead of it when set): appends at most `want` (>= 1)
   * records to `out`, stopping early only at the end of the file (*at_end) or at an error, which
   * comes back with the records appended before it kept (keys.n == values.n).  Exactly the
   * records, errors and state that `want` calls of next would give; no look-ahead beyond the
   * `want`-th record. */
  tfq_code (*next_many)(tfq_reader *r, tfq__sink *out, int64_t want, int *at_end, tfq_status *st);
} tfq__reader_ops;

struct tfq_reader {
  pthread_mutex_t mu;
  const tfq__reader_ops *ops;
  tfq_reader_kind kind;
  tfq_reader_options o;
  char *display; /* "TextLineReader 'name'" */
  int64_t work_started, work_finished, records;
  char *work; /* current work unit, NUL-terminated copy (may hold NUL inside: work_len) */
  size_t work_len, work_cap;
  /* a read_up_to that met an error after k records hands the error to the next call */
  tfq_code pend_code;
  char pend_msg[TFQ__MSG_CAP];
  int64_t pend_off, pend_line; /* its location (the file is still `work`) */
  int pend_named;
  /* per file */
  tfq__instream *in;
  int64_t index;     /* line number / record index */
  uint64_t skip;     /* FixedLength: bytes of a hop still to skip */
  uint64_t start_at; /* TFRecord: the next work unit starts at this offset (tfq__reader_start_at) */
  size_t scanned;    /* TextLine: bytes already searched for '\n' */
  /* the one thread that has taken lines for a read-decode op (tfq__reader_lines_begin and
   * tfq__reader_take_lines), and whether another has too: a reader several threads take lines
   * from must not hold its lock through their decodes */
  pthread_t line_thread;
  int line_thread_set, lines_shared;
  /* key buffers: TFQ__KEY_COPIES copies, key_stride apart, of "<work>:" followed by digits
   * (emit_num uses the first).  Each holds work_len + 64 initialised bytes: batch key writers
   * copy keys in 32-byte blocks. */
  char *key;
  size_t key_cap, key_stride;
};

/* textline.c: the take of tfq__reader_take_lines (readers_shared.h), r->mu held. */
int64_t tfq__textline_take(tfq_reader *r, tfq_tensor *vt, int64_t n, int64_t *first,
                           const char **work);

extern const tfq__reader_ops tfq__textline_ops, tfq__fixedlen_ops, tfq__tfrecord_ops,
    tfq__wholefile_ops, tfq__identity_ops;

/* Pushes key "<work>:<num>" and the value. */
tfq_code tfq__reader_emit_num(tfq_reader *r, tfq__sink *out, uint64_t num, const char *v,
                              size_t vlen, tfq_status *st);
/* OnWorkFinished: closes the file and clears the per-file state. */
void tfq__reader_finish_work(tfq_reader *r);
/* Copies the work unit's name into r->work.  TFQ_RESOURCE_EXHAUSTED (no status) on failure. */
tfq_code tfq__reader_set_work(tfq_reader *r, const char *p, size_t len);
/* Reset with r->mu held: no work, zero counters, no pending error. */
void tfq__reader_reset_locked(tfq_reader *r);
/* Opens r->work with the reader's compression options. */
tfq_code tfq__reader_open(tfq_reader *r, tfq_status *st);
#endif
