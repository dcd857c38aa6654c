/* The readers' private entries for another module: the read-decode op's path for text lines
 * (src/coord/ops.c), which takes a TextLineReader's complete lines straight from its buffer -- one
 * block copy, no string per line, no keys -- instead of tfq_reader_read_up_to's key and value
 * tensors. */
#ifndef TFQ_READERS_SHARED_H
#define TFQ_READERS_SHARED_H

#include <tfq/reader.h>

#include "../core/base.h"

/* For a TextLineReader in the middle of a work unit, with no error pending: takes up to
 * `vt->nelems` complete lines that are already in the reader's buffer, as a read_up_to would
 * (counted as produced records; the line's '\r' before '\n' dropped), copying their bytes and
 * the work unit's name into one block of `vt`'s arena (tfq__tensor_arena_take: a tensor refilled
 * after tfq__tensor_strings_reset reuses its block) -- vt a string tensor of at least one element
 * that the caller owns alone -- and pointing vt's first *m strings at the lines.  *first is the
 * 1-based line number of the first line, *work (*work_len bytes, in vt's arena) its file.
 * *m == 0, with nothing taken, whenever the ordinary read is needed instead: another reader kind,
 * no current work unit, a pending error, the next line not entirely in the buffer (a new file,
 * the end of one, a refill, a line over max_line_bytes).
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (nothing taken).  Thread-safety: any (the reader's
 * lock is held inside). */
tfq_code tfq__reader_take_lines(tfq_reader *r, tfq_tensor *vt, int64_t *m, int64_t *first,
                                const char **work, size_t *work_len, tfq_status *st);

/* For the read-decode op, to decode lines where they lie in a TextLineReader's buffer (no copy,
 * no string tensor of them): when the reader is in the middle of a work unit with no error
 * pending, returns 1 with the reader's lock HELD and *buf and *len the buffered bytes up to and
 * including the last '\n' (at least one whole line), and *holder the tensor holding them
 * (borrowed: a reference taken to it keeps those bytes in place, unchanged, after the lines are
 * consumed, so that decoded strings may point into them).  Reads more first when fewer than `want`
 * bytes are buffered (a `want` over the buffer's size, SIZE_MAX included: as many as the buffer
 * holds); *at_end: fewer than that were there to read (the file ends, or an error waits in the
 * stream).  Returns 0, lock not held, whenever the
 * ordinary read is needed: another reader kind, no work unit, a pending error, a line known to
 * cross the buffer, no whole line buffered, a buffer grown for a long line, max_line_bytes below
 * buffer_bytes, and from the moment a second thread takes lines from this reader (this call or
 * tfq__reader_take_lines: a reader shared by several threads must not hold its lock through one
 * thread's decode).  The caller must call tfq__reader_lines_end() after every 1, from the same
 * thread, and touch nothing else of the reader in between.  Thread-safety: any. */
int tfq__reader_lines_begin(tfq_reader *r, size_t want, const char **buf, size_t *len, int *at_end,
                            tfq_tensor **holder);

/* Ends tfq__reader_lines_begin(): the first `count` lines (`used` bytes, whole lines) of its span
 * are taken, as a read_up_to would take them (count 0: nothing); *first = the 1-based line number
 * of the first of them.  Releases the reader's lock. */
void tfq__reader_lines_end(tfq_reader *r, size_t used, int64_t count, int64_t *first);

/* For a TextLineReader in the middle of a work unit, with no error pending: takes up to
 * `max_lines` whole lines from its buffer (reading more first when fewer than `want` bytes are
 * buffered; a `want` over the buffer's size: as many as it holds), as a read_up_to would take them
 * (counted as produced records), without copying them: *buf and *len are their bytes (whole
 * lines, each ending in '\n'; a '\r' before it is the caller's to drop, as decode_csv_span does),
 * *count their number, *first the 1-based line number of the first, and *holder a NEW reference
 * to the tensor holding the bytes, which keeps them in place and unchanged until it is freed (the
 * reader reads on into another buffer meanwhile).  The lock is released on return: several
 * threads may take spans and decode them at once.  Returns 0, with nothing taken and *holder
 * NULL, whenever the ordinary read is needed (as tfq__reader_lines_begin, but a reader shared by
 * threads is fine).  Thread-safety: any. */
int tfq__reader_take_span(tfq_reader *r, size_t want, int64_t max_lines, const char **buf,
                          size_t *len, int64_t *count, int64_t *first, tfq_tensor **holder);

/* The keys a TextLineReader gives lines first, first + 1, ... first + n - 1 of `work` (work_len
 * bytes): a new [n] string tensor of "<work>:<line>", for the op to locate an error in lines
 * taken by tfq__reader_take_lines.  @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED (*out NULL). */
tfq_code tfq__reader_line_keys(const char *work, size_t work_len, int64_t first, int64_t n,
                               tfq_tensor **out, tfq_status *st);

/* For a TFRecordReader: the next work unit it opens is read from decompressed offset `offset`
 * (a record's first byte, from an index) instead of 0; the keys stay "<file>:<offset>".  Once.
 * Thread-safety: any (the reader's lock is taken). */
void tfq__reader_start_at(tfq_reader *r, uint64_t offset);

#endif
