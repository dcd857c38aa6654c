/* The run-time choice of decode_csv's structural scan (csv_simd.h) and its AVX2 kernels. */
#include "csv_simd.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if TFQ__CSV_X86
#include <immintrin.h>
#endif

static atomic_int simd_level = -1;

/* The best level the CPU has. */
static int cpu_best(void) {
#if TFQ__CSV_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? TFQ__SIMD_AVX2 : TFQ__SIMD_SSE2;
#else
  return TFQ__SIMD_SCALAR;
#endif
}

static int from_env(void) {
  int best = cpu_best();
  const char *e = getenv("TFQ_SIMD");
  int want = best;
  if (e && strcmp(e, "scalar") == 0)
    want = TFQ__SIMD_SCALAR;
  else if (e && strcmp(e, "sse2") == 0)
    want = TFQ__SIMD_SSE2;
  return want < best ? want : best;
}

int tfq__csv_simd(void) {
  int l = atomic_load_explicit(&simd_level, memory_order_relaxed);
  if (l >= 0) return l;
  l = from_env(); /* two threads may both get here: they store the same value */
  atomic_store_explicit(&simd_level, l, memory_order_relaxed);
  return l;
}

int tfq__csv_simd_set(int level) {
  int best = cpu_best();
  int l = level < 0 ? from_env() : level < best ? level : best;
  atomic_store_explicit(&simd_level, l, memory_order_relaxed);
  return l;
}

const char *tfq__csv_simd_name(int level) {
  return level == TFQ__SIMD_AVX2 ? "avx2" : level == TFQ__SIMD_SSE2 ? "sse2" : "scalar";
}

#if TFQ__CSV_X86
#define AVX2 __attribute__((target("avx2")))

AVX2 size_t tfq__csv_count_nl_avx2(const char *buf, size_t len, size_t *done) {
  size_t n = 0, i = 0;
  const __m256i vn = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
  while (len - i >= 32) {
    size_t blocks = (len - i) / 32;
    if (blocks > 255) blocks = 255;
    __m256i acc = zero; /* per byte lane: the '\n's seen there, at most 255 */
    for (size_t b = 0; b < blocks; b++, i += 32)
      acc = _mm256_sub_epi8(
          acc, _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(buf + i)), vn));
    __m256i s = _mm256_sad_epu8(acc, zero); /* four 64-bit lanes, each a sum of 8 bytes */
    n += (size_t)_mm256_extract_epi64(s, 0) + (size_t)_mm256_extract_epi64(s, 1) +
         (size_t)_mm256_extract_epi64(s, 2) + (size_t)_mm256_extract_epi64(s, 3);
  }
  *done = i;
  return n;
}

AVX2 const char *tfq__csv_quote_stop_avx2(const char **at, const char *end, unsigned char d) {
  const char *x = *at;
  const __m256i vq = _mm256_set1_epi8('"'), vn = _mm256_set1_epi8('\n'),
                vr = _mm256_set1_epi8('\r');
  while (end - x >= 32) {
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)x);
    unsigned m = (unsigned)_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, vq),
                        _mm256_or_si256(_mm256_cmpeq_epi8(v, vn), _mm256_cmpeq_epi8(v, vr))));
    while (m) {
      const char *y = x + __builtin_ctz(m);
      m &= m - 1;
      if (*y != '"' || y + 1 == end || (unsigned char)y[1] == d) return y;
    }
    x += 32;
  }
  *at = x;
  return NULL;
}
#endif
