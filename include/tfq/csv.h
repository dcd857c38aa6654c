/* decode_csv: TensorFlow's DecodeCSV op in C.
 *
 * tfq_decode_csv() turns a batch of CSV records (one line each, as a TextLineReader's read_up_to
 * returns them) into one column tensor per output field, with the exact rules and messages of
 * the reference TensorFlow (tf.compat.v1.decode_csv in the pinned tensorflow-cpu 2.21 wheel):
 *
 *  - Field splitting (per record, delimiter D, quoting Q): an empty record has no field;
 *    '\n' and '\r' are skipped where a field starts; an unquoted field runs to the next D and
 *    may contain neither '\n', '\r' nor (with Q) '"'; a quoted field ends at a '"' followed by D
 *    or at the last byte, "" stands for one '"', and D, '\n', '\r' are data inside it; a record
 *    whose last byte is D has one more, empty, field.  Nothing is trimmed.
 *  - Each field that is empty (a quoted "" included) or equal to na_value takes its column's
 *    default; a column without a default is required.
 *  - Numbers follow TF 2.21 (absl) rules: ASCII whitespace around the number is ignored;
 *    floats accept '+'/'-', decimal and hex forms ("0x1A", "0x1.8p3"), inf/infinity/nan in any
 *    case, overflow to +-inf, and are correctly rounded (float32 directly from the text); ints
 *    accept '+'/'-' and decimal digits, and out-of-range values are errors.
 *  - select_cols keeps only the listed columns; splitting stops after the last selected one.
 *  - The first error wins; every decode error is TFQ_INVALID_ARGUMENT with TF's message:
 *      "Expect <N> fields but have <M> in record <K>"
 *      "Field <f> is required but missing in record <K>!"
 *      "Field <f> in record <K> is not a valid int32: <field>"  (int64, float, double alike)
 *      "Unquoted fields cannot have quotes/CRLFs inside"
 *      "Quote inside a string has to be escaped by another quote"
 *      "Quoted field has to end with quote followed by delim or end"
 *    where K is the record's flat (row-major) index and f the output column.
 *
 * Records without quotes go through a vectorised tokenizer; records with quotes through libcsv;
 * both give the same results (a differential fuzz test keeps them so).  See docs/decode_csv.md.
 *
 * Thread-safety: an options object is built by one thread; once built it is read-only and may be
 * shared by any number of concurrent decode calls.  Decode calls share no state. */
#ifndef TFQ_CSV_H
#define TFQ_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/export.h>
#include <tfq/status.h>
#include <tfq/tensor.h>

TFQ_EXTERN_C_BEGIN

/* The attributes of one DecodeCSV op: delimiter, quoting, na_value, select_cols and one record
 * default per output column.  Opaque.  Thread-safety: see above. */
typedef struct tfq_csv_options tfq_csv_options;

/* Creates options with TF's defaults: field_delim ',', use_quote_delim on, na_value "", every
 * column selected, and no column yet (add one default per column).
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.
 * Ownership: *out (NULL on failure) is freed with tfq_csv_options_free().  Thread-safety: any.
 * Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_new(tfq_csv_options **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Frees `o`; NULL does nothing.  Ownership: takes `o`.  Thread-safety: one thread, after every
 * decode call using `o`.  Since: 0.1 */
TFQ_API void tfq_csv_options_free(tfq_csv_options *o);

/* Sets the field delimiter: `len` bytes at `delim`, which must be exactly one byte (any byte,
 * NUL included).
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT "field_delim should be only 1 char" (options unchanged).
 * Ownership: `delim` borrowed for the call.  Thread-safety: one thread, while building `o`.  Since:
 * 0.1 */
TFQ_API tfq_code tfq_csv_options_set_field_delim(tfq_csv_options *o, const char *delim, size_t len,
                                                 tfq_status *st) TFQ_WARN_UNUSED;

/* use_quote_delim: nonzero (the default) gives '"' its CSV meaning; zero makes it an ordinary
 * byte.  Ownership: nothing is taken.  Thread-safety: one thread, while building `o`.  Since: 0.1
 */
TFQ_API void tfq_csv_options_set_use_quote_delim(tfq_csv_options *o, int on);

/* Sets na_value: a field equal to these `len` bytes (compared after quote removal, case
 * sensitive) counts as missing.  len 0 (the default) adds nothing.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Ownership: bytes copied.  Thread-safety: one thread,
 * while building `o`. Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_set_na_value(tfq_csv_options *o, const char *na, size_t len,
                                              tfq_status *st) TFQ_WARN_UNUSED;

/* Keeps only the fields whose 0-based indices are listed (n of them, one per default; n == 0
 * restores "all columns").
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT "select_cols is not strictly increasing." or
 *                              "select_cols contains negative values." (TF's Python checks,
 *                              in that order; options unchanged);
 *         TFQ_RESOURCE_EXHAUSTED.
 * The count is compared with the number of defaults when decoding ("Length of select_cols and
 * record_defaults do not match.").  Ownership: `cols` copied.  Thread-safety: one thread, while
 * building `o`. Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_set_select_cols(tfq_csv_options *o, const int64_t *cols, size_t n,
                                                 tfq_status *st) TFQ_WARN_UNUSED;

/* Appends an output column with a default value (TF: a one-element record default), whose
 * dtype is the column's dtype: TFQ_FLOAT, TFQ_DOUBLE, TFQ_INT32, TFQ_INT64, TFQ_STRING.
 * @return TFQ_OK, TFQ_RESOURCE_EXHAUSTED.  Ownership: `bytes` copied.  Thread-safety: one thread,
 * while building `o`. Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_add_default_float(tfq_csv_options *o, float v,
                                                   tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_csv_options_add_default_double(tfq_csv_options *o, double v,
                                                    tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_csv_options_add_default_int32(tfq_csv_options *o, int32_t v,
                                                   tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_csv_options_add_default_int64(tfq_csv_options *o, int64_t v,
                                                   tfq_status *st) TFQ_WARN_UNUSED;
TFQ_API tfq_code tfq_csv_options_add_default_string(tfq_csv_options *o, const char *bytes,
                                                    size_t len, tfq_status *st) TFQ_WARN_UNUSED;

/* Appends a required output column of `dtype` (TF: an empty record default): a missing field
 * is the error "Field <f> is required but missing in record <K>!".
 * @return TFQ_OK; TFQ_INVALID_ARGUMENT for a dtype other than the five above ("Value for attr
 *         'OUT_TYPE' of <dtype> is not in the list of allowed values: float, double, int32,
 *         int64, string"); TFQ_RESOURCE_EXHAUSTED.
 * Ownership: nothing is taken.  Thread-safety: one thread, while building `o`.  Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_add_required(tfq_csv_options *o, tfq_dtype dtype,
                                              tfq_status *st) TFQ_WARN_UNUSED;

/* Appends a column whose default is given as a tensor, exactly as TF takes record_defaults:
 * 0 elements make it required, 1 element (scalar or [1]) is the default.
 * @return TFQ_OK;
 *         TFQ_INVALID_ARGUMENT "Each record default should be at most rank 1" (rank > 1),
 *           "There should only be 1 default per field but field <i> has <n>" (n > 1), or the
 *           dtype message of tfq_csv_options_add_required();
 *         TFQ_RESOURCE_EXHAUSTED.
 * Ownership: `t` borrowed for the call (its value is copied).  Thread-safety: one thread, while
 * building `o`. Since: 0.1 */
TFQ_API tfq_code tfq_csv_options_add_default_tensor(tfq_csv_options *o, const tfq_tensor *t,
                                                    tfq_status *st) TFQ_WARN_UNUSED;

/* Number of output columns added so far.  Ownership: nothing is taken.  Thread-safety: any (as
 * a decode call).  Since: 0.1 */
TFQ_API size_t tfq_csv_options_num_columns(const tfq_csv_options *o);

/* Decodes a string tensor of records of any shape (scalar and empty included).
 * @return TFQ_OK                 *out holds one tensor per column, each with the shape of
 *                                `records` and its column's dtype (an empty `records` gives
 *                                empty outputs, even for required columns).
 *         TFQ_INVALID_ARGUMENT   a decode error (messages above), `records` not a string
 *                                tensor, no column, or "Length of select_cols and
 *                                record_defaults do not match.".
 *         TFQ_RESOURCE_EXHAUSTED out of memory.
 * Ownership: `o` and `records` borrowed for the call; *out (NULL on failure) is freed with
 * tfq_tuple_free().  Thread-safety: any thread, concurrently with other decode calls.
 * Since: 0.1 */
TFQ_API tfq_code tfq_decode_csv(const tfq_csv_options *o, const tfq_tensor *records,
                                tfq_tuple **out, tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_decode_csv(), but into `dst`, a tuple of tfq_csv_options_num_columns(o) slots that the
 * caller keeps across calls (from tfq_tuple_new(), or filled by an earlier call), so that a steady
 * decode loop allocates nothing for its numeric columns: a slot holding a tensor of the column's
 * dtype and the shape of `records` that only `dst` references (refcount 1, not wrapped) is
 * overwritten in place (a string tensor keeps its newest block of byte storage); any other slot
 * (empty, another shape, shared) gets a new tensor and its old reference is dropped.  To keep a
 * column beyond the next call, take a reference (tfq_tensor_ref) and the next call allocates
 * anew.
 * @return as tfq_decode_csv(), plus TFQ_INVALID_ARGUMENT "the output tuple has m slots for k
 *         columns" and "dst must not be NULL".
 * Ownership: `o` and `records` borrowed for the call; `dst` borrowed, its slots owned by it as
 * before; on failure they hold tensors of unspecified contents (or stay empty).
 * Thread-safety: as tfq_decode_csv(), each thread with its own `dst`.  Since: 0.2 */
TFQ_API tfq_code tfq_decode_csv_into(const tfq_csv_options *o, const tfq_tensor *records,
                                     tfq_tuple *dst, tfq_status *st) TFQ_WARN_UNUSED;

/* As tfq_decode_csv() for n records given as (pointer, length) pairs (bytes may contain NUL);
 * outputs have shape [n].  lines/lens may be NULL when n == 0.
 * @return as tfq_decode_csv().  Ownership: all inputs borrowed for the call; *out as
 * tfq_decode_csv().  Thread-safety: as tfq_decode_csv().  Since: 0.1 */
TFQ_API tfq_code tfq_decode_csv_lines(const tfq_csv_options *o, const char *const *lines,
                                      const size_t *lens, size_t n, tfq_tuple **out,
                                      tfq_status *st) TFQ_WARN_UNUSED;

/* Convenience for one record: outputs are scalars (shape []).
 * @return as tfq_decode_csv() (the record index in messages is 0).  Ownership: `o` and `rec`
 * borrowed for the call; *out as tfq_decode_csv().  Thread-safety: as tfq_decode_csv().
 * Since: 0.1 */
TFQ_API tfq_code tfq_decode_csv_record(const tfq_csv_options *o, const char *rec, size_t len,
                                       tfq_tuple **out, tfq_status *st) TFQ_WARN_UNUSED;

/* Decodes a whole buffer of records: the lines of `buf` as a TextLineReader returns them (split
 * at '\n'; one '\r' before the '\n' removed; a last line without '\n' counts when it is not
 * empty).  A quoted field therefore cannot span lines, as in TF's reader + decode_csv pipeline.
 * Outputs have shape [number of lines]; the record index in messages is the 0-based line.
 * @return as tfq_decode_csv().  Ownership: `o` and `buf` borrowed for the call; *out as
 * tfq_decode_csv().  Thread-safety: as tfq_decode_csv().  Since: 0.1 */
TFQ_API tfq_code tfq_decode_csv_buffer(const tfq_csv_options *o, const char *buf, size_t len,
                                       tfq_tuple **out, tfq_status *st) TFQ_WARN_UNUSED;

TFQ_EXTERN_C_END

#endif
