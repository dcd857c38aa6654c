/* The structural scans of decode_csv (the bytes that end or split a field: the delimiter, '\n',
 * '\r' and, quoting on, '"'), in three versions chosen at run time:
 *   scalar  one byte at a time (every build; the reference the others are tested against);
 *   sse2    16 bytes a step (x86-64, where SSE2 is always there);
 *   avx2    32 bytes a step, when the CPU has AVX2 (__builtin_cpu_supports): the fast
 *           tokenizer (csv_scan.c), the line count and the quoted fields' scan (csv_libcsv.c);
 *           the fused decoder (csv_fused.c) stays at 16 bytes, with a byte shuffle for a
 *           string field's stop and the vector number scan (csv_number_fast.h vec_number).
 *           Its functions are compiled with __attribute__((target("avx2"))), so that the build
 *           flags stay generic.
 * The level in use is the best the CPU has, unless the environment variable TFQ_SIMD (scalar,
 * sse2 or avx2; read once, at the first decode) asks for a lower one; a level the CPU lacks falls
 * to the best below it.  Every level gives the same fields, values and errors
 * (tests/unit/test_decode_csv.c "decode_csv_simd", tests/fuzz/csv_diff.h).  Private to src/csv. */
#ifndef TFQ_CSV_SIMD_H
#define TFQ_CSV_SIMD_H

#include <stddef.h>

#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define TFQ__CSV_X86 1
#include <emmintrin.h>
#else
#define TFQ__CSV_X86 0
#endif

enum { TFQ__SIMD_SCALAR = 0, TFQ__SIMD_SSE2 = 1, TFQ__SIMD_AVX2 = 2 };

/* The level in use (TFQ__SIMD_*).  Thread-safe; cheap after the first call. */
int tfq__csv_simd(void);
/* Tests and benchmarks: makes `level` the level in use (clamped to the best the CPU has) and
 * returns the level set; -1 goes back to TFQ_SIMD / the CPU's best.  Not to be called while
 * another thread decodes (the decodes under way keep the level they read). */
int tfq__csv_simd_set(int level);
/* "scalar", "sse2" or "avx2". */
const char *tfq__csv_simd_name(int level);

#if TFQ__CSV_X86
/* The AVX2 kernels (csv_simd.c).  Both take the whole 32-byte blocks and leave the rest to their
 * caller's loops: tfq__csv_count_nl_avx2 counts the '\n's of buf[0, *done) (*done: the bytes of
 * those blocks); tfq__csv_quote_stop_avx2 returns csv_libcsv.c next_stop()'s stop if one lies in
 * the blocks from *at on, else NULL with *at moved past the blocks. */
size_t tfq__csv_count_nl_avx2(const char *buf, size_t len, size_t *done);
const char *tfq__csv_quote_stop_avx2(const char **at, const char *end, unsigned char d);
#endif

/* The first delimiter, '\n', '\r' or (q: quoting on) '"' in [p, end), or NULL; the vector levels
 * may load bytes up to lim (>= end).  The fused decoder's stop for a string field: at the AVX2
 * level it stays at 16 bytes a step, inline.  Its fields mostly end within their first 16 bytes,
 * and a call to a 32-byte kernel cost ~4% of the decode on DM (bench_lines, CPU time); taking
 * the kernel after the first 16 bytes still added 30-40 instructions a row (callgrind), as the
 * compiler laid the fused decoder out anew, and bought nothing on string-heavy rows. */
static inline const char *tfq__csv_stop(int simd, const char *p, const char *end, const char *lim,
                                        unsigned char delim, int q) {
#if TFQ__CSV_X86
  if (simd >= TFQ__SIMD_SSE2) {
    const __m128i vd = _mm_set1_epi8((char)delim), vn = _mm_set1_epi8('\n'),
                  vr = _mm_set1_epi8('\r'), vq = _mm_set1_epi8(q ? '"' : (char)delim);
    while (lim - p >= 16) {
      __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
      __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, vd), _mm_cmpeq_epi8(v, vq)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, vn), _mm_cmpeq_epi8(v, vr)));
      unsigned mask = (unsigned)_mm_movemask_epi8(m);
      if (mask) {
        const char *x = p + __builtin_ctz(mask);
        return x < end ? x : NULL;
      }
      p += 16;
      if (p >= end) return NULL;
    }
  }
#else
  (void)simd;
  (void)lim;
#endif
  for (; p < end; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == delim || c == '\n' || c == '\r' || (q && c == '"')) return p;
  }
  return NULL;
}

#endif
