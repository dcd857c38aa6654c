/* Private declarations of src/csv (never installed).  Symbols here are tfq__* and hidden.
 *
 * Layout of the module:
 *   csv_options.c  the options object (delimiter, quoting, na_value, select_cols, defaults)
 *   csv_number.c   TensorFlow 2.21's number acceptance rules and the conversions (Eisel-Lemire)
 *   csv_scan.c     the fast tokenizer (scalar, SSE2 or AVX2 scan; quoted fields go to libcsv)
 *                  and the scalar reference tokenizer
 *   csv_simd.c/.h  the structural scan's level chosen at run time (TFQ_SIMD) and its AVX2 kernels
 *   csv_libcsv.c   the libcsv tokenizer for quoted fields (the only file that uses libcsv)
 *   decode_csv.c   the decode driver: records -> fields -> column tensors, TF's messages; the
 *                  fused row decoder (split + fast number conversion in one pass) */
#ifndef TFQ_CSV_INTERNAL_H
#define TFQ_CSV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <tfq/csv.h>

#include "../core/base.h"

/* ---- options ---- */
typedef struct tfq__csv_default {
  tfq_dtype dtype;
  int required; /* no default value */
  union {
    float f;
    double d;
    int32_t i32;
    int64_t i64;
  } v;
  char *s; /* string default (tfq_malloc'd), s_len bytes */
  size_t s_len;
} tfq__csv_default;

struct tfq_csv_options {
  unsigned char delim;
  int use_quote;
  char *na; /* NULL or na_len bytes */
  size_t na_len;
  int64_t *select; /* NULL when every column is selected */
  size_t nselect;
  tfq__csv_default *defs;
  size_t ndefs, capdefs;
};

/* ---- tokenizers ----
 * A tokenizer splits one record into fields with TensorFlow's rules (decode_csv_op.cc,
 * ExtractFields) and keeps the selected ones: spans[0..min(*nkept, cap)) receive the kept fields
 * in order and *nkept counts every kept field (it may exceed cap; the caller reports "Expect N
 * fields but have M").  Returns one of the TFQ__TOK_* values. */
typedef struct tfq__span {
  const char *p;
  size_t len;
} tfq__span;

enum {
  TFQ__TOK_OK = 0,
  TFQ__TOK_UNQUOTED = 1,     /* "Unquoted fields cannot have quotes/CRLFs inside" */
  TFQ__TOK_QUOTE_INSIDE = 2, /* "Quote inside a string has to be escaped by another quote" */
  TFQ__TOK_QUOTED_END = 3,   /* "Quoted field has to end with quote followed by delim or end" */
  TFQ__TOK_OOM = 4,
  TFQ__TOK_HAS_QUOTE = 5 /* fast path only: the record needs the quote-aware tokenizer */
};
const char *tfq__tok_message(int tok);

/* Selection state shared by the tokenizers. */
typedef struct tfq__csv_sel {
  const int64_t *cols; /* NULL: all */
  size_t n;
} tfq__csv_sel;

typedef struct tfq__lcsv tfq__lcsv;

/* Fast path (its scan at a level of csv_simd.h: bytes, SSE2 or AVX2).  Only valid when the
 * delimiter is not '\n', '\r' (nor '"' with quoting on).  Unquoted fields are split here; with
 * quoting on, a field that starts with '"' is handed to libcsv (tfq__lcsv_quoted on lc), and a
 * quote anywhere else is the unquoted-field error.  With lc NULL it returns TFQ__TOK_HAS_QUOTE at
 * the first quoted field met before the last selected field was complete. */
typedef int (*tfq__tok_fast_fn)(const char *rec, size_t len, unsigned char delim, int use_quote,
                                const tfq__csv_sel *sel, tfq__span *spans, size_t cap,
                                size_t *nkept, tfq__lcsv *lc);
/* The fast path for scan level simd (csv_simd.h: TFQ__SIMD_*), to be picked once per batch. */
tfq__tok_fast_fn tfq__tok_fast_for(int simd);

/* Scalar transliteration of TensorFlow's loop; handles every delimiter.  Quoted fields with
 * escaped quotes are unescaped into *scratch (grown with tfq_realloc); spans may point into it. */
typedef struct tfq__scratch {
  char *p;
  size_t len, cap;
} tfq__scratch;
int tfq__tok_ref(const char *rec, size_t len, unsigned char delim, int use_quote,
                 const tfq__csv_sel *sel, tfq__span *spans, size_t cap, size_t *nkept,
                 tfq__scratch *scratch);

/* The libcsv path (csv_libcsv.c).  A tokenizer object owns one libcsv parser whose buffers go
 * through tfq_realloc/tfq_free.  Requires quoting on and a delimiter other than '"', '\n', '\r'. */
tfq__lcsv *tfq__lcsv_new(unsigned char delim);
void tfq__lcsv_free(tfq__lcsv *t);
int tfq__lcsv_record(tfq__lcsv *t, const char *rec, size_t len, const tfq__csv_sel *sel,
                     tfq__span *spans, size_t cap, size_t *nkept);
/* One quoted field: p points at its opening '"' at a field start of a record ending at end.
 * Call tfq__lcsv_begin(t, record length) once per record first: it reserves the buffer the
 * unquoted contents of the record's quoted fields go to (valid until the next begin).  On
 * TFQ__TOK_OK, *field is the contents and *fend the end of the field (the delimiter after the
 * closing quote, or end).  The parser stays between fields (no per-record csv_fini); after an
 * error it is reset.  tfq__lcsv_begin returns 0 when out of memory. */
int tfq__lcsv_begin(tfq__lcsv *t, size_t len);
int tfq__lcsv_quoted(tfq__lcsv *t, const char *p, const char *end, tfq__span *field,
                     const char **fend);

/* ---- the decode driver ---- */
typedef enum tfq__csv_path {
  TFQ__PATH_AUTO = 0,   /* fast path, libcsv for records with quotes */
  TFQ__PATH_LIBCSV = 1, /* libcsv for every record it can take (tests: differential) */
  TFQ__PATH_REF = 2     /* the scalar transliteration for every record (tests) */
} tfq__csv_path;

/* Decodes records[0..n) (pointer/length pairs) into one tensor per output column of shape
 * dims[0..rank) (whose element count must be n). */
tfq_code tfq__decode_csv_path(const tfq_csv_options *o, const char *const *recs, const size_t *lens,
                              size_t n, const int64_t *dims, int rank, tfq__csv_path path,
                              tfq_tuple **out, tfq_status *st);

/* ---- numbers (csv_number.c) ----
 * TensorFlow 2.21 rules (absl::SimpleAtoi / SimpleAtof / SimpleAtod, verified against the
 * wheel): ASCII whitespace around the number is ignored; floats take an optional '+' or '-',
 * decimal forms, hex forms "0x1A", "0x1.8p3", inf/infinity/nan/nan(chars) in any case; integers
 * take an optional '+' or '-' and decimal digits only.  Return 1 on success, 0 if rejected. */
int tfq__parse_f64(const char *s, size_t len, double *out);
int tfq__parse_f32(const char *s, size_t len, float *out);
int tfq__parse_i32(const char *s, size_t len, int32_t *out);
int tfq__parse_i64(const char *s, size_t len, int64_t *out);

/* Decimal conversion core, exposed for tests: digits w (<= 19 significant digits), exponent q,
 * returns 1 and the correctly rounded value, or 0 when the fast algorithm cannot decide. */
int tfq__eisel_lemire_f64(uint64_t w, int64_t q, double *out);
int tfq__eisel_lemire_f32(uint64_t w, int64_t q, float *out);

/* The lines of buf[0, len) (len >= 1): its '\n's, and one more for a last line without one
 * (tfq_decode_csv_buffer's record count). */
size_t tfq__csv_count_lines(const char *buf, size_t len);

#endif
