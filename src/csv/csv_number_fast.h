/* The fast number routines of decode_csv's fused row decoder (decode_csv.c), beside the exact
 * parsers of csv_number.c: digits 8 at a time, no bounds-checked loop per digit.  Each returns
 * the end of the number it took, or NULL for anything it does not decide alone (the caller then
 * falls back to the exact parser).  Every number they accept, the exact parsers accept with the
 * same value: both are correctly rounded.  Static inline: they belong to the hot loop.
 * Private to src/csv. */
#ifndef TFQ_CSV_NUMBER_FAST_H
#define TFQ_CSV_NUMBER_FAST_H

#include <stdint.h>
#include <string.h>

#include "csv_internal.h"
#include "csv_simd.h"

static const uint64_t POW10_U64[20] = {1ULL,
                                       10ULL,
                                       100ULL,
                                       1000ULL,
                                       10000ULL,
                                       100000ULL,
                                       1000000ULL,
                                       10000000ULL,
                                       100000000ULL,
                                       1000000000ULL,
                                       10000000000ULL,
                                       100000000000ULL,
                                       1000000000000ULL,
                                       10000000000000ULL,
                                       100000000000000ULL,
                                       1000000000000000ULL,
                                       10000000000000000ULL,
                                       100000000000000000ULL,
                                       1000000000000000000ULL,
                                       10000000000000000000ULL};
static const double POW10_F64[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
/* The doubles nearest 10^-k (the compiler rounds each literal correctly). */
static const double POW10_NEG_F64[23] = {1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,
                                         1e-8,  1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15,
                                         1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22};

static inline uint64_t load8(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* Number of leading ASCII digits of the 8 bytes in v (first byte lowest).  A carry out of a
 * byte >= 0xFA only disturbs the bytes after it, which follow a non-digit. */
static inline unsigned lead_digits8(uint64_t v) {
  uint64_t x =
      (v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4);
  uint64_t y = x ^ 0x3333333333333333ULL; /* nonzero bytes: not a digit */
  uint64_t m = (y | ((y & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL)) & 0x8080808080808080ULL;
  return m ? (unsigned)__builtin_ctzll(m) >> 3 : 8u;
}

/* Value of the first k (1..8) digits of v (Lemire's eight-digit SWAR, on zeros shifted in). */
static inline uint64_t value8(uint64_t v, unsigned k) {
  v -= 0x3030303030303030ULL; /* digit bytes do not borrow; the bytes after them go away */
  v <<= 8 * (8 - k);
  v = (v * 10) + (v >> 8);
  v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
       (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
      32;
  return v;
}

/* Reads the run of digits at p into *acc (acc * 10^n + run; wraps harmlessly when the run is
 * long: callers reject more than 19 digits).  Loads may read up to lim.  Returns the run's end. */
static inline const char *digit_run(const char *p, const char *lim, uint64_t *acc) {
  uint64_t a = *acc;
  while (lim - p >= 8) {
    uint64_t v = load8(p);
    unsigned k = lead_digits8(v);
    if (k == 0) break;
    a = a * POW10_U64[k] + value8(v, k);
    p += k;
    if (k < 8) {
      *acc = a;
      return p;
    }
  }
  while (p < lim && (unsigned)((unsigned char)*p - '0') < 10u) a = a * 10 + (uint64_t)(*p++ - '0');
  *acc = a;
  return p;
}

/* [-]digits[.digits] with 1..19 digits in all; returns the end, or NULL. */
static inline const char *fast_decimal(const char *p, const char *end, const char *lim, uint64_t *w,
                                       int *nfrac, int *neg) {
  const int n = p < end && *p == '-'; /* no branch: the sign of random data is unpredictable */
  *neg = n;
  p += n;
  uint64_t a = 0;
  const char *d = digit_run(p, lim, &a);
  size_t ni = (size_t)(d - p), nf = 0;
  if (d < end && *d == '.') {
    const char *f = d + 1;
    d = digit_run(f, lim, &a);
    nf = (size_t)(d - f);
  }
  if (ni + nf == 0 || ni + nf > 19 || d > end) return NULL;
  *w = a;
  *nfrac = (int)nf;
  return d;
}

/* w * 10^-nf, negated when neg, correctly rounded to float32 at *out: 1, or 0 when it cannot
 * decide alone (the exact parser then does). */
static inline int f32_of(uint64_t w, int nf, int neg, float *out) {
  float v;
  if (w == 0) {
    v = 0.0f;
  } else if (w <= (1ULL << 53) && nf <= 22) {
    /* w (exact) times the double nearest 10^-nf: two roundings of relative error 2^-53 each, so
     * within 2 units in the last place of the exact value x (a unit is at least 2^-53 x).  Cast
     * to float that is x correctly rounded unless a float halfway point lies within those
     * units: the 29 bits the cast drops then sit within 4 of the halfway pattern 0x10000000, and
     * the division (correctly rounded, as slow as ~6 multiplies) decides, as before.  The value
     * is a normal float here (1e-22 <= x < 2^53). */
    double dv = (double)w * POW10_NEG_F64[nf];
    uint64_t bits;
    memcpy(&bits, &dv, 8);
    if ((uint64_t)((bits & 0x1FFFFFFFULL) - (0x10000000ULL - 4)) <= 8) {
      dv = (double)w / POW10_F64[nf]; /* correctly rounded; the float is too unless it sits on */
      memcpy(&bits, &dv, 8);          /* a float halfway point */
      if ((bits & 0x1FFFFFFFULL) == 0x10000000ULL) {
        if (!tfq__eisel_lemire_f32(w, -nf, &v)) return 0;
      } else {
        v = (float)dv;
      }
    } else {
      v = (float)dv;
    }
  } else if (!tfq__eisel_lemire_f32(w, -nf, &v)) {
    return 0;
  }
  uint32_t b; /* the sign bit, without a branch: the sign of random data is unpredictable */
  memcpy(&b, &v, 4);
  b |= (uint32_t)neg << 31;
  memcpy(out, &b, 4);
  return 1;
}

/* As f32_of, to float64. */
static inline int f64_of(uint64_t w, int nf, int neg, double *out) {
  double v;
  if (w == 0) {
    v = 0.0;
  } else if (w <= (1ULL << 53) && nf <= 22) {
    v = (double)w / POW10_F64[nf];
  } else if (!tfq__eisel_lemire_f64(w, -nf, &v)) {
    return 0;
  }
  uint64_t b;
  memcpy(&b, &v, 8);
  b |= (uint64_t)neg << 63;
  memcpy(out, &b, 8);
  return 1;
}

static inline const char *fast_f32(const char *p, const char *end, const char *lim, float *out) {
  uint64_t w;
  int nf, neg;
  const char *e = fast_decimal(p, end, lim, &w, &nf, &neg);
  return e && f32_of(w, nf, neg, out) ? e : NULL;
}

static inline const char *fast_f64(const char *p, const char *end, const char *lim, double *out) {
  uint64_t w;
  int nf, neg;
  const char *e = fast_decimal(p, end, lim, &w, &nf, &neg);
  return e && f64_of(w, nf, neg, out) ? e : NULL;
}

/* w, negated when neg (as two's complement, without a branch: the sign of random data is
 * unpredictable). */
static inline int64_t signed_of(uint64_t w, int neg) {
  return (int64_t)((w ^ (0 - (uint64_t)neg)) + (uint64_t)neg);
}

/* [-]digits with 1..19 digits whose value lies in [-(max + 1), max] (max = INT32_MAX or INT64_MAX;
 * 19 digits cannot overflow the uint64 accumulator); returns the end, or NULL (the generic parser
 * then decides, with TF's message for an out-of-range value). */
static inline const char *fast_int(const char *p, const char *end, const char *lim, uint64_t max,
                                   int64_t *out) {
  const int neg = p < end && *p == '-';
  p += neg;
  uint64_t a = 0;
  const char *d = digit_run(p, lim, &a);
  size_t nd = (size_t)(d - p);
  if (nd == 0 || nd > 19 || d > end || a > max + (uint64_t)neg) return NULL;
  *out = signed_of(a, neg);
  return d;
}

#if TFQ__CSV_X86
#include <immintrin.h>

/* The vector number scan of the AVX2 level (csv_simd.h): fast_decimal and fast_int's digits on
 * the 16 bytes at p at once.  One load; the digits and the '.' as bit masks; the '.' taken out by
 * shifting the bytes before it up by one; the digits right-aligned by one byte shuffle and summed
 * by multiply-adds (10, 100, 10^4, then 10^8 in a scalar).  About 35 instructions for the usual
 * field against about 130 for two digit_run()s.  Compiled for AVX2 (SSSE3 and SSE4.1 are all it
 * uses), called only at that level. */

/* A sliding byte-shuffle mask: loaded from SHIFT_TAB + e, byte j is j - (16 - e), or 0x80 (a
 * zero) below 16 - e: bytes [0, e) move to the top of the register. */
static const signed char TFQ__VEC_SHIFT[32] = {
    -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128,
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15};
/* The vector constants, loaded from memory (one instruction; a broadcast from an immediate takes
 * three). */
static const signed char TFQ__VEC_K[4][16] __attribute__((aligned(16))) = {
    {'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'},
    {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
    {'.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.', '.'},
    {10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1}};
#define TFQ__VEC_K_(k) _mm_load_si128((const __m128i *)(const void *)TFQ__VEC_K[k])
/* Loaded from TFQ__VEC_LE + 15 - k, byte j is all ones when j <= k (k = -1: none). */
static const signed char TFQ__VEC_LE[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                            -1, -1, -1, -1, -1, 0,  0,  0,  0,  0,  0,
                                            0,  0,  0,  0,  0,  0,  0,  0,  0,  0};

/* [-]digits[.digits] (dot: 1; else [-]digits) ending within the 16 bytes at p (p + 16 bytes may
 * be read): its end, with the digits' value, fraction digits and sign as fast_decimal()
 * gives them.  NULL when it does not decide: a number that does not end within 15 bytes, no digit,
 * or one that runs past end; the caller then asks fast_decimal() / fast_int(), which decide every
 * case the same way as before. */
__attribute__((target("avx2"))) static inline const char *vec_number(const char *p, const char *end,
                                                                     int dot, uint64_t *w,
                                                                     int *nfrac, int *neg) {
  const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
  /* The sign from its own byte load.  Taken from v instead (one instruction fewer, p < end holds
   * at every call), it made C_wide 26-40% slower by time though callgrind counted fewer
   * instructions: the field's end then waits on the vector load.  Dropping only the p < end
   * test cost as much again (measured, 5 interleaved rounds): leave this line as it is. */
  const unsigned s = p < end && *p == '-';
  __m128i t = _mm_sub_epi8(v, TFQ__VEC_K_(0));
  const unsigned stop = ~(unsigned)_mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_min_epu8(t, TFQ__VEC_K_(1)), t)); /* bits 16..31 set: a sentinel */
  const unsigned ni = (unsigned)__builtin_ctz(stop >> s);
  const unsigned pos = s + ni; /* <= 16 */
  unsigned hasdot = 0, nf = 0;
  if (dot) {
    hasdot = ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, TFQ__VEC_K_(2))) >> pos) & 1u;
    nf = hasdot ? (unsigned)__builtin_ctz(stop >> (pos + 1)) : 0u;
  }
  const unsigned e = pos + hasdot + nf;
  if (e > 15 || ni + nf == 0 || (size_t)(end - p) < e) return NULL;
  /* the sign byte to 0; with a '.', bytes [0, pos] take the byte below them (byte 0 a zero) */
  t = _mm_andnot_si128(_mm_cvtsi32_si128((int)(0xFFu & (0u - s))), t);
  const __m128i before =
      _mm_loadu_si128((const __m128i *)(const void *)(TFQ__VEC_LE + (hasdot ? 15 - pos : 16)));
  t = _mm_blendv_epi8(t, _mm_slli_si128(t, 1), before);
  /* bytes [0, e) at the top, zeros below: the digits, most significant first */
  t = _mm_shuffle_epi8(t, _mm_loadu_si128((const __m128i *)(const void *)(TFQ__VEC_SHIFT + e)));
  t = _mm_maddubs_epi16(t, TFQ__VEC_K_(3));
  t = _mm_madd_epi16(t, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
  t = _mm_packus_epi32(t, t);
  t = _mm_madd_epi16(t, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
  const uint64_t r = (uint64_t)_mm_cvtsi128_si64(t);
  *w = (r & 0xFFFFFFFFu) * 100000000u + (r >> 32);
  *nfrac = (int)nf;
  *neg = (int)s;
  return p + e;
}

#endif

#endif
