/* Helpers shared by the benchmark programs (bench/, never installed): the spin hint, the seeded
 * PCG32 stream and the D1/D4 row generator (bench/README.md, "Data sets"), so that bench_decode,
 * bench_e2e and gen_data (the data sets of scripts/bench report) produce byte-identical data from
 * one definition.  Single-threaded (one global stream per program).  Like every file in bench/, it
 * includes public headers (<tfq/...>) and system headers only. */
#ifndef TFQ_BENCH_UTIL_H
#define TFQ_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* CPU_RELAX(): the spin-wait hint, the same instruction per architecture as the queue engine's
 * (src/core/cpu_relax.h, private to the library): x86 PAUSE, ARM YIELD, else nothing. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

/* D1 / D4: NF float fields, NI int fields, then one word field (10 fields in all). */
#define BENCH_NF 6
#define BENCH_NI 3

/* The stream's state: set it to a data set's seed (0xD1D1D1D1 for D1 ...) before generating. */
__attribute__((unused)) static uint64_t bench_rs;

/* PCG32 (XSH RR 64/32), the default multiplier and increment. */
static inline uint32_t bench_rnd(void) {
  bench_rs = bench_rs * 6364136223846793005ULL + 1442695040888963407ULL;
  uint32_t x = (uint32_t)(((bench_rs >> 18) ^ bench_rs) >> 27), r = (uint32_t)(bench_rs >> 59);
  return (x >> r) | (x << ((32 - r) & 31));
}

__attribute__((unused)) static const char *const BENCH_WORDS[8] = {
    "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"};

/* Writes one D1 (quoted = 0) or D4 (quoted = 1: 5% empty fields, 20% quoted, embedded commas and
 * doubled quotes) row with its newline at b (at most 140 bytes); returns its length. */
static inline size_t bench_row_d1(char *b, int quoted) {
  size_t n = 0;
  for (int f = 0; f < 10; f++) {
    int empty = quoted && bench_rnd() % 20 == 0;
    int q = quoted && bench_rnd() % 5 == 0;
    if (f) b[n++] = ',';
    if (empty) continue;
    if (q) b[n++] = '"';
    if (f < BENCH_NF) {
      n += (size_t)sprintf(b + n, "%.6f", (bench_rnd() % 1000000000u) / 1e6);
    } else if (f < BENCH_NF + BENCH_NI) {
      n += (size_t)sprintf(b + n, "%u", bench_rnd() % 100000u);
    } else {
      const char *w = BENCH_WORDS[bench_rnd() % 8];
      if (q && bench_rnd() % 2) {
        n += (size_t)sprintf(b + n, "%s, \"\"%s\"\"", w, BENCH_WORDS[bench_rnd() % 8]);
      } else {
        n += (size_t)sprintf(b + n, "%s", w);
      }
    }
    if (q) b[n++] = '"';
  }
  b[n++] = '\n';
  return n;
}

/* The whole D1 (quoted = 0, seed 0xD1D1D1D1) or D4 (quoted = 1, seed 0xD4D4D4D4) data set of
 * `rows` rows in one malloc'd buffer (the caller frees it); exits on allocation failure. */
static inline char *bench_gen_d1(long rows, int quoted, size_t *len) {
  size_t cap = (size_t)rows * 140 + 1, n = 0;
  char *b = malloc(cap);
  if (!b) exit(1);
  bench_rs = quoted ? 0xD4D4D4D4ULL : 0xD1D1D1D1ULL;
  for (long r = 0; r < rows; r++) n += bench_row_d1(b + n, quoted);
  *len = n;
  return b;
}

#endif
