/* The fused row decoder of decode_csv (csv_fused.c).  Private to src/csv. */
#ifndef TFQ_CSV_FUSED_H
#define TFQ_CSV_FUSED_H

#include <stddef.h>

#include "csv_internal.h"
#include "csv_simd.h"

/* Column f of the output as the fused decoder writes it: record i's value at base + i * stride
 * (decode_csv.c: data[f], stride[f]), with its default's dtype and required flag (defs[f]). */
typedef struct tfq__fcol {
  char *base;
  size_t stride;
  tfq_dtype dtype;
  int required;
} tfq__fcol;

/* ---- the fused row decoder ----
 * One pass per record: each field is split and converted in place, numbers by the fast routines
 * below (digits 8 at a time, no bounds-checked loops per digit), quoted fields by libcsv (one field
 * at a time) and tfq's general parsers.  It only handles what it can decide alone; anything else
 * (an error of any kind, a field count that does not match, CR/LF at a field start, a number the
 * fast routines do not take, a missing required field) returns 0 and the generic path redoes the
 * whole record, so messages and their order are the generic path's.  Numbers are written as
 * soon as they are converted (the generic path overwrites them); strings once the record is
 * accepted, except that fused_open writes a field that is a view of the buffer at once (the
 * generic path overwrites it too).  Every number the fast routines accept, the general parsers
 * accept with the same value: both are correctly rounded. */
typedef struct tfq__fused_ctx {
  const tfq__csv_default *defs;
  size_t ncol;
  unsigned char delim;
  int q;
  const char *na;
  size_t na_len;
  char **data; /* column f's value i is at data[f] + i * stride[f] (a tfq__str for strings) */
  const size_t *stride;
  tfq_tensor *const *sten; /* string column f's bytes go into sten[f]'s arena */
  tfq__lcsv *lc;
  tfq__span *strs;     /* the record's string fields, written on success */
  const size_t *scols; /* the string columns */
  size_t nscols;
  const char *view_lo, *view_hi; /* fused_open: string fields within point there, uncopied */
  int simd;                      /* the structural scan's level (csv_simd.h) */
  const tfq__fcol *cols;         /* fused_open: the columns in one array */
#if TFQ__CSV_X86
  /* The AVX2 level's stop for a string field (csv_fused.c nibble_stop): byte j of stop_tbl is
   * the stop byte whose low four bits are j, else 0x80; stop_nib is 1 when the stop bytes (the
   * delimiter, '\n', '\r' and, quoting on, '"') are ASCII with distinct low four bits, so that
   * one byte shuffle and one compare find them (tfq__fused_stop_table). */
  __m128i stop_tbl;
  int stop_nib;
#endif
} tfq__fused_ctx;

/* Records i, i+1, ... (fewer than n) of kind-3 lines (decode_csv.c rec_src: every line of
 * [*cur, end) ends with '\n') from *cur, until one the fused decoder cannot decide alone or the
 * end: returns the index of the first record not taken, *cur at its line.  Writes record k's
 * numbers at c->data[f] + k * c->stride[f], its strings as views of the buffer (between
 * c->view_lo and c->view_hi) or copies into c->sten[f]. */
typedef size_t tfq__fused_run_fn(tfq__fused_ctx *c, const char **cur, const char *end, size_t i,
                                 size_t n);
/* Record i = [rec, rec + len) (bytes up to lim may be read): 1 if decoded, 0 to let the generic
 * path redo it (which reports any error). */
typedef int tfq__fused_row_fn(tfq__fused_ctx *c, const char *rec, size_t len, const char *lim,
                              size_t i);

#if TFQ__CSV_X86
/* Sets c->stop_tbl and c->stop_nib from c->delim and c->q. */
void tfq__fused_stop_table(tfq__fused_ctx *c);
#endif

/* At the scalar and SSE2 levels. */
tfq__fused_run_fn tfq__fused_run_plain;
tfq__fused_row_fn tfq__fused_row_plain;
#if TFQ__CSV_X86
/* At the AVX2 level, with the vector number scan (csv_number_fast.h vec_number): compiled for
 * AVX2, to be called only when the CPU has it (tfq__csv_simd() == TFQ__SIMD_AVX2). */
tfq__fused_run_fn tfq__fused_run_avx2;
tfq__fused_row_fn tfq__fused_row_avx2;
#endif

#endif
