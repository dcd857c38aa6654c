/* Number parsing for decode_csv with the reference TensorFlow's acceptance rules.
 *
 * TensorFlow 2.21 parses decode_csv numbers with absl::SimpleAtoi / SimpleAtof / SimpleAtod
 * (tensorflow/core/platform/numbers.cc -> absl).  The rules below were checked one by one against
 * the pinned wheel (tests/unit/test_csv_numbers.c holds the table):
 *   - ASCII whitespace (space, \t, \n, \v, \f, \r) around the number is ignored; a field that is
 *     only whitespace is rejected;
 *   - floats: an optional '+' (not followed by '-') or '-'; then a decimal number (digits with an
 *     optional '.', at least one digit, optional exponent e/E[+-]digits), or a hex number after
 *     0x/0X (hex digits with an optional '.', optional binary exponent p/P[+-]digits), or
 *     inf / infinity / nan / nan(chars) in any letter case; nothing may follow; overflow gives
 *     +-inf, underflow 0 or a subnormal, all correctly rounded (float32 directly from the text);
 *   - integers: an optional '+' or '-', then decimal digits only; out of range is rejected.
 *
 * Decimal conversion: Clinger's exact fast path, then the Eisel-Lemire algorithm (Lemire,
 * "Number Parsing at a Gigabyte per Second", 2021) on the first 19 significant digits, and when
 * that cannot decide (rare), strtod/strtof on a short canonical copy without a radix character
 * (so the C locale does not matter). */
#define TFQ_EXPERIMENTAL
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tfq/experimental.h>

#include "csv_internal.h"
#include "csv_pow5.h"

static inline int is_ws(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline int is_digit(unsigned char c) { return (unsigned)(c - '0') < 10u; }
static inline int is_hex(unsigned char c) {
  return is_digit(c) || (unsigned)((c | 0x20) - 'a') < 6u;
}
static inline int lower(unsigned char c) { return c | 0x20; }

/* ---- 64x64 -> 128 multiplication ---- */
typedef struct u128 {
  uint64_t lo, hi;
} u128;

static inline u128 mul64(uint64_t a, uint64_t b) {
  u128 r;
#if defined(__SIZEOF_INT128__)
  __extension__ typedef unsigned __int128 tfq__u128;
  tfq__u128 p = (tfq__u128)a * b;
  r.lo = (uint64_t)p;
  r.hi = (uint64_t)(p >> 64);
#else
  uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
  r.lo = (mid << 32) | (uint32_t)p00;
  r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
  return r;
}

static inline int clz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_clzll(x);
#else
  int n = 0;
  while (!(x & 0x8000000000000000ULL)) {
    x <<= 1;
    n++;
  }
  return n;
#endif
}

/* ---- Eisel-Lemire ---- */
typedef struct binfmt {
  int mbits;     /* explicit mantissa bits */
  int min_exp;   /* binary exponent bias, negated: -1023 / -127 */
  int inf_power; /* biased exponent of infinity */
  int q_small, q_large;
  int even_min, even_max; /* range of q where exact halfway cases exist */
} binfmt;

static const binfmt F64 = {52, -1023, 0x7FF, -342, 308, -4, 23};
static const binfmt F32 = {23, -127, 0xFF, -65, 38, -17, 10};

/* Returns 1 with (mantissa, biased exponent) set, or 0 when undecided.  w != 0. */
static int eisel_lemire(const binfmt *f, uint64_t w, int64_t q, uint64_t *mant, int *pow2) {
  if (w == 0 || q < f->q_small) {
    *mant = 0;
    *pow2 = 0;
    return 1;
  }
  if (q > f->q_large) {
    *mant = 0;
    *pow2 = f->inf_power;
    return 1;
  }
  int lz = clz64(w);
  w <<= lz;
  const uint64_t *t = tfq__pow5_128[q - TFQ__POW5_QMIN];
  const uint64_t mask = 0xFFFFFFFFFFFFFFFFULL >> (f->mbits + 3);
  u128 p = mul64(w, t[0]);
  if ((p.hi & mask) == mask) {
    u128 p2 = mul64(w, t[1]);
    p.lo += p2.hi;
    if (p2.hi > p.lo) p.hi++;
    /* The truncated table may still hide a carry: let the exact fallback decide. */
    if ((p.hi & mask) == mask && p.lo == 0xFFFFFFFFFFFFFFFFULL) return 0;
  }
  int upperbit = (int)(p.hi >> 63);
  int shift = upperbit + 64 - f->mbits - 3;
  uint64_t m = p.hi >> shift;
  /* floor(q * log2(10)) + 63, as in the paper: (217706 * q) >> 16 */
  int64_t pw = ((217706 * q) >> 16) + 63;
  int64_t e = pw + upperbit - lz - f->min_exp;
  if (e <= 0) { /* subnormal or zero */
    if (-e + 1 >= 64) {
      *mant = 0;
      *pow2 = 0;
      return 1;
    }
    m >>= -e + 1;
    m += m & 1;
    m >>= 1;
    *pow2 = m < (1ULL << f->mbits) ? 0 : 1;
    *mant = m & ((1ULL << f->mbits) - 1);
    return 1;
  }
  if (p.lo <= 1 && q >= f->even_min && q <= f->even_max && (m & 3) == 1) {
    if ((m << shift) == p.hi) m &= ~1ULL; /* exactly halfway: round to even (down) */
  }
  m += m & 1;
  m >>= 1;
  if (m >= (2ULL << f->mbits)) {
    m = 1ULL << f->mbits;
    e++;
  }
  m &= ~(1ULL << f->mbits);
  if (e >= f->inf_power) {
    *mant = 0;
    *pow2 = f->inf_power;
    return 1;
  }
  *mant = m;
  *pow2 = (int)e;
  return 1;
}

int tfq__eisel_lemire_f64(uint64_t w, int64_t q, double *out) {
  uint64_t m;
  int e;
  if (!eisel_lemire(&F64, w, q, &m, &e)) return 0;
  uint64_t bits = m | ((uint64_t)e << 52);
  memcpy(out, &bits, 8);
  return 1;
}

int tfq__eisel_lemire_f32(uint64_t w, int64_t q, float *out) {
  uint64_t m;
  int e;
  if (!eisel_lemire(&F32, w, q, &m, &e)) return 0;
  uint32_t bits = (uint32_t)(m | ((uint64_t)e << 23));
  memcpy(out, &bits, 4);
  return 1;
}

static const double P10_F64[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const float P10_F32[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                  1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

/* ---- the grammar ---- */
typedef enum kind { K_DEC, K_HEX, K_INF, K_NAN, K_NANSEQ } kind;

typedef struct num {
  kind k;
  int neg;
  const char *body, *end; /* after the signs */
  uint64_t w;             /* first 19 significant digits */
  int64_t q;              /* decimal exponent of w */
  int truncated;          /* nonzero digits were dropped after the 19th */
  int zero;               /* every mantissa digit is 0 */
} num;

#define EXP_CAP 100000000 /* exponents saturate here: far beyond every finite result */

/* Parses the decimal grammar on [p, end); returns 1 if it matches exactly. */
static int scan_decimal(const char *p, const char *end, num *n) {
  uint64_t w = 0;
  int nsig = 0, any = 0, trunc = 0;
  int64_t q = 0;
  while (p < end && *p == '0') {
    p++;
    any = 1;
  }
  while (p < end && is_digit((unsigned char)*p)) {
    if (nsig < 19) {
      w = w * 10 + (uint64_t)(*p - '0');
      nsig++;
    } else {
      q++;
      if (*p != '0') trunc = 1;
    }
    p++;
    any = 1;
  }
  if (p < end && *p == '.') {
    p++;
    if (nsig == 0) {
      while (p < end && *p == '0') {
        p++;
        q--;
        any = 1;
      }
    }
    while (p < end && is_digit((unsigned char)*p)) {
      if (nsig < 19) {
        w = w * 10 + (uint64_t)(*p - '0');
        nsig++;
        q--;
      } else if (*p != '0') {
        trunc = 1;
      }
      p++;
      any = 1;
    }
  }
  if (!any) return 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    int eneg = 0;
    if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
    if (p == end || !is_digit((unsigned char)*p)) return 0;
    int64_t e = 0;
    while (p < end && is_digit((unsigned char)*p)) {
      if (e < EXP_CAP) e = e * 10 + (*p - '0');
      p++;
    }
    q += eneg ? -e : e;
  }
  if (p != end) return 0;
  n->w = w;
  n->q = q;
  n->truncated = trunc;
  n->zero = nsig == 0;
  return 1;
}

static int scan_hex(const char *p, const char *end, num *n) {
  int any = 0, nonzero = 0;
  while (p < end && is_hex((unsigned char)*p)) {
    if (*p != '0') nonzero = 1;
    p++;
    any = 1;
  }
  if (p < end && *p == '.') {
    p++;
    while (p < end && is_hex((unsigned char)*p)) {
      if (*p != '0') nonzero = 1;
      p++;
      any = 1;
    }
  }
  if (!any) return 0;
  if (p < end && (*p == 'p' || *p == 'P')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p == end || !is_digit((unsigned char)*p)) return 0;
    while (p < end && is_digit((unsigned char)*p)) p++;
  }
  if (p != end) return 0;
  n->zero = !nonzero;
  return 1;
}

static int ieq(const char *p, const char *end, const char *word) {
  size_t l = strlen(word);
  if ((size_t)(end - p) != l) return 0;
  for (size_t i = 0; i < l; i++)
    if (lower((unsigned char)p[i]) != word[i]) return 0;
  return 1;
}

static int scan_number(const char *s, size_t len, num *n) {
  const char *p = s, *end = s + len;
  while (p < end && is_ws((unsigned char)*p)) p++;
  while (end > p && is_ws((unsigned char)end[-1])) end--;
  n->neg = 0;
  if (p < end && *p == '+') {
    p++;
    if (p < end && *p == '-') return 0;
  }
  if (p < end && *p == '-') {
    n->neg = 1;
    p++;
  }
  if (p == end) return 0;
  n->body = p;
  n->end = end;
  unsigned char c = (unsigned char)*p;
  if (is_digit(c) || c == '.') {
    if (c == '0' && end - p >= 2 && lower((unsigned char)p[1]) == 'x') {
      n->k = K_HEX;
      return scan_hex(p + 2, end, n);
    }
    n->k = K_DEC;
    return scan_decimal(p, end, n);
  }
  if (ieq(p, end, "inf") || ieq(p, end, "infinity")) {
    n->k = K_INF;
    return 1;
  }
  if (ieq(p, end, "nan")) {
    n->k = K_NAN;
    return 1;
  }
  if (end - p >= 5 && lower((unsigned char)p[0]) == 'n' && lower((unsigned char)p[1]) == 'a' &&
      lower((unsigned char)p[2]) == 'n' && p[3] == '(' && end[-1] == ')') {
    for (const char *q = p + 4; q < end - 1; q++) {
      unsigned char ch = (unsigned char)*q;
      if (!(is_digit(ch) || (unsigned)(lower(ch) - 'a') < 26u || ch == '_')) return 0;
    }
    n->k = K_NANSEQ;
    return 1;
  }
  return 0;
}

/* ---- the exact fallback: a canonical copy without a radix character ---- */
#define CANON_DIGITS 780 /* > 767, the most significant digits a double halfway point has */
#define CANON_CAP (CANON_DIGITS + 64)

/* Writes "[-]DDDDe<exp>" (decimal) or "[-]0xHHHHp<exp>" (hex) for n into buf. */
static void canonical(const num *n, char *buf) {
  char *o = buf;
  if (n->neg) *o++ = '-';
  const char *p = n->body, *end = n->end;
  int hex = n->k == K_HEX;
  int maxd = hex ? 40 : CANON_DIGITS;
  int64_t adj = 0, exp = 0;
  int k = 0, seen = 0, sticky = 0, frac = 0;
  if (hex) {
    *o++ = '0';
    *o++ = 'x';
    p += 2;
  }
  const int step = hex ? 4 : 1;
  for (; p < end; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '.') {
      frac = 1;
      continue;
    }
    if (hex ? !is_hex(c) : !is_digit(c)) break;
    if (!seen && c == '0') {
      if (frac) adj -= step;
      continue;
    }
    seen = 1;
    if (k < maxd) {
      o[k++] = (char)c;
      if (frac) adj -= step;
    } else {
      if (!frac) adj += step;
      if (c != '0') sticky = 1;
    }
  }
  if (sticky) {
    o[k++] = '1';
    adj -= step;
  }
  o += k;
  if (p < end) { /* exponent */
    p++;
    int eneg = 0;
    if (*p == '+' || *p == '-') eneg = *p++ == '-';
    int64_t e = 0;
    for (; p < end; p++)
      if (e < EXP_CAP) e = e * 10 + (*p - '0');
    exp = eneg ? -e : e;
  }
  *o++ = hex ? 'p' : 'e';
  long long total = (long long)(exp + adj);
  char tmp[32];
  int tl = 0;
  unsigned long long ut = total < 0 ? (unsigned long long)(-total) : (unsigned long long)total;
  if (total < 0) *o++ = '-';
  do {
    tmp[tl++] = (char)('0' + ut % 10);
    ut /= 10;
  } while (ut);
  while (tl) *o++ = tmp[--tl];
  *o = 0;
}

static void nan_copy(const num *n, char *buf) {
  size_t l = (size_t)(n->end - n->body);
  char *o = buf;
  if (n->neg) *o++ = '-';
  memcpy(o, n->body, l);
  o[l] = 0;
}

/* tfq__parse_f64 and tfq__parse_f32 are one algorithm over two types, written once here:
 *   SFX     name suffix (f64 / f32)       T      the type
 *   HUGE    its infinity                  NANF   its quiet-NaN builtin
 *   STRTO   the C library parser          P10    exact powers of ten 1e0 .. 1e<QMAX>
 *   QMAX    largest exact power used      WBITS  mantissa bits (53 / 24): w <= 2^WBITS is exact
 * nan(chars): the payload rules are the C library's (absl hands the characters to std::nan), so
 * the C library parses them; a copy longer than the local buffer goes to the heap (on allocation
 * failure the default quiet NaN with the sign is returned).  Decimal: Clinger's fast path when
 * both w and 10^q are exact, else Eisel-Lemire (for a truncated mantissa, both w and w + 1 must
 * round alike), else the canonical string through the C library. */
#define TFQ__DEFINE_PARSE_FLOAT(SFX, T, HUGE, NANF, STRTO, P10, QMAX, WBITS)  \
  static T nan_payload_##SFX(const num *n, char *buf, size_t cap) {           \
    size_t need = (size_t)(n->end - n->body) + 2;                             \
    char *b = need <= cap ? buf : tfq_malloc(need);                           \
    if (!b) return n->neg ? -NANF("") : NANF("");                             \
    nan_copy(n, b);                                                           \
    T v = STRTO(b, NULL);                                                     \
    if (b != buf) tfq_free(b);                                                \
    return v;                                                                 \
  }                                                                           \
                                                                              \
  int tfq__parse_##SFX(const char *s, size_t len, T *out) {                   \
    num n;                                                                    \
    if (!scan_number(s, len, &n)) return 0;                                   \
    T v;                                                                      \
    char buf[CANON_CAP];                                                      \
    switch (n.k) {                                                            \
      case K_INF: v = HUGE; break;                                            \
      case K_NAN: v = NANF(""); break;                                        \
      case K_NANSEQ: *out = nan_payload_##SFX(&n, buf, sizeof buf); return 1; \
      case K_HEX:                                                             \
        if (n.zero) {                                                         \
          v = 0;                                                              \
          break;                                                              \
        }                                                                     \
        canonical(&n, buf);                                                   \
        *out = STRTO(buf, NULL);                                              \
        return 1;                                                             \
      case K_DEC:                                                             \
      default:                                                                \
        if (n.zero) {                                                         \
          v = 0;                                                              \
          break;                                                              \
        }                                                                     \
        if (!n.truncated) {                                                   \
          if (n.q >= -(QMAX) && n.q <= (QMAX) && n.w <= (1ULL << (WBITS))) {  \
            v = (T)n.w;                                                       \
            v = n.q < 0 ? v / P10[-n.q] : v * P10[n.q];                       \
            break;                                                            \
          }                                                                   \
          if (tfq__eisel_lemire_##SFX(n.w, n.q, &v)) break;                   \
        } else {                                                              \
          T v2;                                                               \
          if (tfq__eisel_lemire_##SFX(n.w, n.q, &v) &&                        \
              tfq__eisel_lemire_##SFX(n.w + 1, n.q, &v2) && v == v2)          \
            break;                                                            \
        }                                                                     \
        canonical(&n, buf);                                                   \
        *out = STRTO(buf, NULL);                                              \
        return 1;                                                             \
    }                                                                         \
    *out = n.neg ? -v : v;                                                    \
    return 1;                                                                 \
  }

TFQ__DEFINE_PARSE_FLOAT(f64, double, HUGE_VAL, __builtin_nan, strtod, P10_F64, 22, 53)
TFQ__DEFINE_PARSE_FLOAT(f32, float, HUGE_VALF, __builtin_nanf, strtof, P10_F32, 10, 24)

/* ---- integers ---- */
static int parse_int(const char *s, size_t len, uint64_t pos_limit, int64_t *out) {
  const char *p = s, *end = s + len;
  while (p < end && is_ws((unsigned char)*p)) p++;
  while (end > p && is_ws((unsigned char)end[-1])) end--;
  int neg = 0;
  if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
  if (p == end) return 0;
  uint64_t limit = neg ? pos_limit + 1 : pos_limit, v = 0;
  for (; p < end; p++) {
    unsigned d = (unsigned)((unsigned char)*p - '0');
    if (d > 9) return 0;
    if (v > (limit - d) / 10) return 0;
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 1;
}

int tfq__parse_i32(const char *s, size_t len, int32_t *out) {
  int64_t v;
  if (!parse_int(s, len, INT32_MAX, &v)) return 0;
  *out = (int32_t)v;
  return 1;
}

int tfq__parse_i64(const char *s, size_t len, int64_t *out) {
  return parse_int(s, len, INT64_MAX, out);
}

/* ---- exported for benchmarks (tfq/experimental.h) ---- */

int tfq_experimental_parse_f32(const char *s, size_t n, float *out) {
  return tfq__parse_f32(s, n, out);
}
int tfq_experimental_parse_f64(const char *s, size_t n, double *out) {
  return tfq__parse_f64(s, n, out);
}
int tfq_experimental_parse_i32(const char *s, size_t n, int32_t *out) {
  return tfq__parse_i32(s, n, out);
}
int tfq_experimental_parse_i64(const char *s, size_t n, int64_t *out) {
  return tfq__parse_i64(s, n, out);
}
