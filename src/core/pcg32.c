/* PCG32 (PCG-XSH-RR with 64-bit state and 32-bit output), written from the definition published
 * by M. E. O'Neill (pcg-random.org, "PCG: A Family of Simple Fast Space-Efficient Statistically
 * Good Algorithms for Random Number Generation", 2014).  Checked against the published demo
 * output in tests/unit/test_core.c. */
#include <sys/random.h>

#include "base.h"

#define PCG_MULT 6364136223846793005ULL

uint32_t tfq__pcg32_next(tfq__pcg32 *r) {
  uint64_t old = r->state;
  r->state = old * PCG_MULT + r->inc;
  uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
  uint32_t rot = (uint32_t)(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

void tfq__pcg32_seed(tfq__pcg32 *r, uint64_t initstate, uint64_t initseq) {
  r->state = 0u;
  r->inc = (initseq << 1u) | 1u;
  tfq__pcg32_next(r);
  r->state += initstate;
  tfq__pcg32_next(r);
}

uint32_t tfq__pcg32_bounded(tfq__pcg32 *r, uint32_t bound) {
  /* Reject the low (2^32 mod bound) values so that every residue is equally likely. */
  uint32_t threshold = (uint32_t)(-bound) % bound;
  for (;;) {
    uint32_t x = tfq__pcg32_next(r);
    if (x >= threshold) return x % bound;
  }
}

uint64_t tfq__pcg32_bounded64(tfq__pcg32 *r, uint64_t bound) {
  if (bound <= UINT32_MAX) return tfq__pcg32_bounded(r, (uint32_t)bound);
  uint64_t threshold = (uint64_t)(-bound) % bound;
  for (;;) {
    uint64_t x = ((uint64_t)tfq__pcg32_next(r) << 32) | tfq__pcg32_next(r);
    if (x >= threshold) return x % bound;
  }
}

uint64_t tfq__random64(void) {
  static atomic_ulong counter;
  uint64_t v;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v) return v;
  v = (uint64_t)tfq__now_ns() ^ ((uint64_t)atomic_fetch_add(&counter, 1) << 48);
  tfq__pcg32 r;
  tfq__pcg32_seed(&r, v, (uint64_t)(uintptr_t)&v);
  return ((uint64_t)tfq__pcg32_next(&r) << 32) | tfq__pcg32_next(&r);
}
