/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78), software slicing-by-8 and the SSE4.2
 * crc32 instruction, chosen once at run time.  Both are checked against the standard check
 * value 0xE3069283 for "123456789" in tests/unit/test_tfrecord.c. */
#include <pthread.h>
#include <string.h>

#include "readers_internal.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; i++)
    for (int s = 1; s < 8; s++)
      table[s][i] = (table[s - 1][i] >> 8) ^ table[0][table[s - 1][i] & 0xff];
}

uint32_t tfq__crc32c_sw(uint32_t crc, const void *data, size_t n) {
  if (pthread_once(&table_once, make_table) != 0) abort();
  const unsigned char *p = data;
  uint32_t c = ~crc;
  while (n && ((uintptr_t)p & 7)) {
    c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    n--;
  }
  while (n >= 8) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    lo = __builtin_bswap32(lo);
    hi = __builtin_bswap32(hi);
#endif
    lo ^= c;
    c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
        table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
        table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
  return ~c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) uint32_t tfq__crc32c_hw(uint32_t crc, const void *data,
                                                          size_t n) {
  const unsigned char *p = data;
  uint64_t c = ~crc;
  while (n && ((uintptr_t)p & 7)) {
    c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    n--;
  }
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
  return ~(uint32_t)c;
}

int tfq__crc32c_hw_available(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t tfq__crc32c_hw(uint32_t crc, const void *data, size_t n) {
  return tfq__crc32c_sw(crc, data, n);
}
int tfq__crc32c_hw_available(void) { return 0; }
#endif

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static crc_fn chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
static void choose(void) { chosen = tfq__crc32c_hw_available() ? tfq__crc32c_hw : tfq__crc32c_sw; }

uint32_t tfq_crc32c_extend(uint32_t crc, const void *data, size_t n) {
  if (pthread_once(&chosen_once, choose) != 0) abort();
  return chosen(crc, data, n);
}

uint32_t tfq_crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

uint32_t tfq_crc32c_unmask(uint32_t masked) {
  uint32_t r = masked - 0xA282EAD8u;
  return (r >> 17) | (r << 15);
}
