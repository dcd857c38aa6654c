/* libFuzzer target: the three decode_csv tokenizer paths (fast path + libcsv, libcsv only,
 * scalar reference) must agree on every input; any difference aborts.  Build with clang
 * -fsanitize=fuzzer, or with tests/fuzz/replay_main.c to replay a corpus. */
#include <stdint.h>
#include <stdlib.h>

#include "csv_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (csv_diff_run(data, size)) abort();
  return 0;
}
