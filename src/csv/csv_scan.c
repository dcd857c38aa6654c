/* Tokenizers: the fast path (quoted fields go to libcsv, csv_libcsv.c) and the scalar reference.
 *
 * Both reproduce TensorFlow's DecodeCSV field splitting (decode_csv_op.cc, ExtractFields):
 *   - an empty record has no field;
 *   - '\n' and '\r' are skipped where a field starts, and an error inside an unquoted field;
 *   - with quoting on, '"' inside an unquoted field is an error;
 *   - a record whose last byte is the delimiter gets one more, empty, field;
 *   - with select_cols, splitting stops as soon as the last selected field is taken, and the
 *     trailing empty field counts only if its index is selected. */
#include <string.h>

#include "csv_internal.h"
#include "csv_simd.h"
#if TFQ__CSV_X86
#include <immintrin.h>
#endif

const char *tfq__tok_message(int tok) {
  switch (tok) {
    case TFQ__TOK_UNQUOTED: return "Unquoted fields cannot have quotes/CRLFs inside";
    case TFQ__TOK_QUOTE_INSIDE: return "Quote inside a string has to be escaped by another quote";
    case TFQ__TOK_QUOTED_END: return "Quoted field has to end with quote followed by delim or end";
    case TFQ__TOK_OOM: return "out of memory";
    default: return "internal tokenizer state";
  }
}

/* ---- fast path ---- */
typedef struct fast_state {
  const char *rec;
  const tfq__csv_sel *sel;
  tfq__span *spans;
  tfq__lcsv *lc;
  size_t len, cap, kept, parsed, si, fstart;
  int begun; /* tfq__lcsv_begin done for this record */
} fast_state;

/* Takes field (p, n).  Returns 1 once the last selected field has been taken. */
static inline int take(fast_state *s, const char *p, size_t n) {
  const tfq__csv_sel *sel = s->sel;
  size_t idx = s->parsed++;
  if (sel->cols) {
    if ((uint64_t)sel->cols[s->si] != idx) return 0;
    if (s->kept < s->cap) {
      s->spans[s->kept].p = p;
      s->spans[s->kept].len = n;
    }
    s->kept++;
    return ++s->si == sel->n;
  }
  if (s->kept < s->cap) {
    s->spans[s->kept].p = p;
    s->spans[s->kept].len = n;
  }
  s->kept++;
  return 0;
}

#define TAKE_END(s, end) take(s, (s)->rec + (s)->fstart, (end) - (s)->fstart)

/* Handles the special byte at p.  Returns -1 to go on, -2 to go on from s->fstart (a quoted
 * field was consumed), or a TFQ__TOK_* value to stop with (TFQ__TOK_OK: the last selected field
 * is taken). */
static inline int special(fast_state *s, size_t p, unsigned char delim) {
  unsigned char c = (unsigned char)s->rec[p];
  if (c == delim) {
    int done = TAKE_END(s, p);
    s->fstart = p + 1;
    return done ? TFQ__TOK_OK : -1;
  }
  if (c == '\n' || c == '\r') {
    if (p == s->fstart) {
      s->fstart = p + 1;
      return -1;
    }
    return TFQ__TOK_UNQUOTED;
  }
  /* '"' */
  if (p != s->fstart) return TFQ__TOK_UNQUOTED;
  if (!s->lc) return TFQ__TOK_HAS_QUOTE;
  if (!s->begun) {
    if (!tfq__lcsv_begin(s->lc, s->len)) return TFQ__TOK_OOM;
    s->begun = 1;
  }
  tfq__span f;
  const char *fend;
  int r = tfq__lcsv_quoted(s->lc, s->rec + p, s->rec + s->len, &f, &fend);
  if (r != TFQ__TOK_OK) return r;
  int done = take(s, f.p, f.len);
  size_t e = (size_t)(fend - s->rec);
  /* After the delimiter; at the end, the end-of-record rule sees an empty remainder. */
  s->fstart = e < s->len ? e + 1 : e;
  return done ? TFQ__TOK_OK : -2;
}

/* The fast path's loop over the record, for one scan level: BLOCK_MASK(ptr) is a mask with bit
 * k set when byte k of the W bytes at ptr is a special byte (W 0: bytes only).  A quoted field
 * consumed by special() restarts the blocks after it. */
#define TOK_FAST_BODY(W, BLOCK_MASK)                                       \
  fast_state s = {rec, sel, spans, lc, len, cap, 0, 0, 0, 0, 0};           \
  int r;                                                                   \
  size_t base = 0;                                                         \
  *nkept = 0;                                                              \
  if (len == 0) return TFQ__TOK_OK;                                        \
  blocks:                                                                  \
  while ((W) && base + (W) <= len) {                                       \
    uint32_t mask = BLOCK_MASK(rec + base);                                \
    while (mask) {                                                         \
      size_t p = base + (size_t)__builtin_ctz(mask);                       \
      mask &= mask - 1;                                                    \
      if ((r = special(&s, p, delim)) >= 0) goto out;                      \
      if (r == -2) {                                                       \
        base = s.fstart;                                                   \
        goto blocks;                                                       \
      }                                                                    \
    }                                                                      \
    base += (W);                                                           \
  }                                                                        \
  while (base < len) {                                                     \
    unsigned char c = (unsigned char)rec[base];                            \
    if (c == delim || c == '\n' || c == '\r' || (use_quote && c == '"')) { \
      if ((r = special(&s, base, delim)) >= 0) goto out;                   \
      if (r == -2) {                                                       \
        base = s.fstart;                                                   \
        goto blocks;                                                       \
      }                                                                    \
    }                                                                      \
    base++;                                                                \
  }                                                                        \
  /* End of the record. */                                                 \
  if (s.fstart < len) {                                                    \
    TAKE_END(&s, len);                                                     \
  } else if ((unsigned char)rec[len - 1] == delim) {                       \
    s.fstart = len;                                                        \
    TAKE_END(&s, len);                                                     \
  }                                                                        \
  r = TFQ__TOK_OK;                                                         \
  out:                                                                     \
  *nkept = s.kept;                                                         \
  return r;

#define TOK_FAST_ARGS                                                                       \
  const char *rec, size_t len, unsigned char delim, int use_quote, const tfq__csv_sel *sel, \
      tfq__span *spans, size_t cap, size_t *nkept, tfq__lcsv *lc

#define NO_BLOCKS(x) 0u
static int tok_fast_scalar(TOK_FAST_ARGS) { TOK_FAST_BODY(0, NO_BLOCKS) }

#if TFQ__CSV_X86
static inline uint32_t sse2_mask(const char *x, __m128i vd, __m128i vn, __m128i vr, __m128i vq) {
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)x);
  return (uint32_t)_mm_movemask_epi8(
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, vd), _mm_cmpeq_epi8(v, vq)),
                   _mm_or_si128(_mm_cmpeq_epi8(v, vn), _mm_cmpeq_epi8(v, vr))));
}
#define SSE2_MASK(x) sse2_mask(x, vd, vn, vr, vq)
static int tok_fast_sse2(TOK_FAST_ARGS) {
  const __m128i vd = _mm_set1_epi8((char)delim), vn = _mm_set1_epi8('\n'), vr = _mm_set1_epi8('\r'),
                vq = _mm_set1_epi8(use_quote ? '"' : (char)delim);
  TOK_FAST_BODY(16, SSE2_MASK)
}

__attribute__((target("avx2"))) static inline uint32_t avx2_mask(const char *x, __m256i vd,
                                                                 __m256i vn, __m256i vr,
                                                                 __m256i vq) {
  __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)x);
  return (uint32_t)_mm256_movemask_epi8(
      _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, vd), _mm256_cmpeq_epi8(v, vq)),
                      _mm256_or_si256(_mm256_cmpeq_epi8(v, vn), _mm256_cmpeq_epi8(v, vr))));
}
#define AVX2_MASK(x) avx2_mask(x, vd, vn, vr, vq)
__attribute__((target("avx2"))) static int tok_fast_avx2(TOK_FAST_ARGS) {
  const __m256i vd = _mm256_set1_epi8((char)delim), vn = _mm256_set1_epi8('\n'),
                vr = _mm256_set1_epi8('\r'), vq = _mm256_set1_epi8(use_quote ? '"' : (char)delim);
  TOK_FAST_BODY(32, AVX2_MASK)
}
#endif

tfq__tok_fast_fn tfq__tok_fast_for(int simd) {
#if TFQ__CSV_X86
  if (simd == TFQ__SIMD_AVX2) return tok_fast_avx2;
  if (simd == TFQ__SIMD_SSE2) return tok_fast_sse2;
#else
  (void)simd;
#endif
  return tok_fast_scalar;
}

/* ---- scalar reference: TensorFlow's loop, step by step ---- */
static int scratch_put(tfq__scratch *sc, const char *p, size_t n) {
  if (sc->len + n > sc->cap) {
    size_t nc = sc->cap ? sc->cap : 256;
    while (nc < sc->len + n) nc *= 2;
    char *np = tfq_realloc(sc->p, nc);
    if (!np) return 0;
    sc->p = np;
    sc->cap = nc;
  }
  if (n) memcpy(sc->p + sc->len, p, n);
  sc->len += n;
  return 1;
}

int tfq__tok_ref(const char *rec, size_t len, unsigned char delim, int use_quote,
                 const tfq__csv_sel *sel, tfq__span *spans, size_t cap, size_t *nkept,
                 tfq__scratch *sc) {
  size_t i = 0, parsed = 0, si = 0, kept = 0;
  int r = TFQ__TOK_OK;
  sc->len = 0;
  /* spans hold offsets into sc until the end (sc may move). */
#define INCLUDE() (!sel->cols || (uint64_t)sel->cols[si] == parsed)
  if (len > 0) {
    while (i < len) {
      unsigned char c = (unsigned char)rec[i];
      if (c == '\n' || c == '\r') {
        i++;
        continue;
      }
      int include = INCLUDE();
      size_t start = sc->len;
      if (use_quote && c == '"') {
        i++;
        while (i < len - 1 &&
               ((unsigned char)rec[i] != '"' || (unsigned char)rec[i + 1] != delim)) {
          if (rec[i] != '"') {
            if (include && !scratch_put(sc, rec + i, 1)) return TFQ__TOK_OOM;
            i++;
          } else {
            if (rec[i + 1] != '"') {
              r = TFQ__TOK_QUOTE_INSIDE;
              goto out;
            }
            if (include && !scratch_put(sc, "\"", 1)) return TFQ__TOK_OOM;
            i += 2;
          }
        }
        if (!(i < len && rec[i] == '"' && (i == len - 1 || (unsigned char)rec[i + 1] == delim))) {
          r = TFQ__TOK_QUOTED_END;
          goto out;
        }
        i += 2;
      } else {
        while (i < len && (unsigned char)rec[i] != delim) {
          unsigned char b = (unsigned char)rec[i];
          if ((use_quote && b == '"') || b == '\n' || b == '\r') {
            r = TFQ__TOK_UNQUOTED;
            goto out;
          }
          if (include && !scratch_put(sc, rec + i, 1)) return TFQ__TOK_OOM;
          i++;
        }
        i++;
      }
      parsed++;
      if (include) {
        if (kept < cap) {
          spans[kept].p = NULL;
          spans[kept].len = sc->len - start;
          spans[kept].p = (const char *)(uintptr_t)start;
        }
        kept++;
        if (sel->cols && ++si == sel->n) goto out;
      }
    }
    if (INCLUDE() && (unsigned char)rec[len - 1] == delim) {
      if (kept < cap) {
        spans[kept].p = (const char *)(uintptr_t)sc->len;
        spans[kept].len = 0;
      }
      kept++;
    }
  }
#undef INCLUDE
out:
  for (size_t k = 0; k < kept && k < cap; k++)
    spans[k].p = (sc->p ? sc->p : "") + (uintptr_t)spans[k].p;
  *nkept = kept;
  return r;
}

/* The lines of buf[0, len) (len >= 1): its '\n's, and one more for a last line without one.
 * The vector levels count the '\n's 16 or 32 bytes at a time (byte counters of up to 255 blocks,
 * then summed): a memchr call a line took ~3% more of tfq_decode_csv_buffer's CPU on ~100-byte
 * lines. */
size_t tfq__csv_count_lines(const char *buf, size_t len) {
  size_t n = 0, i = 0;
#if TFQ__CSV_X86
  const int simd = tfq__csv_simd();
  if (simd == TFQ__SIMD_AVX2) n = tfq__csv_count_nl_avx2(buf, len, &i);
  if (simd >= TFQ__SIMD_SSE2) {
    const __m128i vn = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (len - i >= 16) {
      size_t blocks = (len - i) / 16;
      if (blocks > 255) blocks = 255;
      __m128i acc = zero; /* per byte lane: the '\n's seen there, at most 255 */
      for (size_t b = 0; b < blocks; b++, i += 16)
        acc = _mm_sub_epi8(
            acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(buf + i)), vn));
      __m128i sums = _mm_sad_epu8(acc, zero); /* two 64-bit lanes, each a sum of 8 bytes */
      n += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_extract_epi16(sums, 4);
    }
  }
#endif
  for (; i < len; i++) n += buf[i] == '\n';
  return n + (buf[len - 1] != '\n');
}
