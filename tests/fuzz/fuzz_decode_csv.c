/* libFuzzer target: the three decode_csv tokenizer paths (fast path + libcsv, libcsv only,
 * scalar reference) must agree on every input, at each structural scan level the CPU has
 * (src/csv/csv_simd.h: scalar, sse2, avx2), and the levels with each other; any difference
 * aborts.  Build with clang
 * -fsanitize=fuzzer, or with tests/fuzz/replay_main.c to replay a corpus. */
#include <stdint.h>
#include <stdlib.h>

#include "csv_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (csv_diff_levels(data, size)) abort();
  return 0;
}
