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
    /* Correctly rounded double; rounding it to float is exact unless it sits on a float
     * halfway point (the value is a normal float here: 1e-22 <= x < 2^53). */
    double dv = (double)w / POW10_F64[nf];
    uint64_t bits;
    memcpy(&bits, &dv, 8);
    if ((bits & 0x1FFFFFFFULL) == 0x10000000ULL) {
      if (!tfq__eisel_lemire_f32(w, -nf, &v)) return 0;
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
  *out = (int64_t)((a ^ (0 - (uint64_t)neg)) + (uint64_t)neg); /* -a when neg, no branch */
  return d;
}

#endif
