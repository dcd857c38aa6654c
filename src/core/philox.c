/* Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3",
 * SC11), laid out as TensorFlow's random::PhiloxRandom: key = (low32(seed), high32(seed)),
 * counter = (0, 0, low32(seed2), high32(seed2)); each block is 10 rounds over the current
 * counter, then the 128-bit counter is incremented; RandomShuffleQueue consumes the 4 output
 * words one per draw (SingleSampleAdapter).  Checked against Random123's known-answer vectors in
 * tests/unit/test_core.c. */
#include "base.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void tfq__philox_block(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4]) {
  uint32_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]};
  uint32_t k0 = key_in[0], k1 = key_in[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c[0] = n0;
    c[1] = n1;
    c[2] = n2;
    c[3] = n3;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2];
  out[3] = c[3];
}

void tfq__philox_seed(tfq__philox *p, uint64_t seed, uint64_t seed2) {
  p->key[0] = (uint32_t)seed;
  p->key[1] = (uint32_t)(seed >> 32);
  p->ctr[0] = 0;
  p->ctr[1] = 0;
  p->ctr[2] = (uint32_t)seed2;
  p->ctr[3] = (uint32_t)(seed2 >> 32);
  p->used = 4;
}

uint32_t tfq__philox_next(tfq__philox *p) {
  if (p->used == 4) {
    tfq__philox_block(p->ctr, p->key, p->out);
    for (int i = 0; i < 4 && ++p->ctr[i] == 0; i++) {
    }
    p->used = 0;
  }
  return p->out[p->used++];
}
