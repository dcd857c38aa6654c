#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz with clang, -fsanitize=fuzzer,address,undefined:
#   tests/fuzz/build-fuzzers.sh <outdir>        (e.g. build-fuzz-clang)
# <outdir>/lib is a meson tree of libtfq instrumented with -fsanitize=fuzzer-no-link plus
# ASan+UBSan; the targets are linked against its libtfq.a as <outdir>/fuzz_<name>.
# Run one:  <outdir>/fuzz_line_reader -timeout=5 -rss_limit_mb=2048 tests/fuzz/corpus/line_reader
# Environment: JOBS (ninja -j, default 2), CC (default clang).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <outdir>" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
cc=${CC:-clang}
san=-fsanitize=address,undefined
if [ ! -f "$out/lib/build.ninja" ]; then
  CC=$cc meson setup "$out/lib" "$src" -Dbuildtype=debugoptimized -Db_sanitize=address,undefined \
    -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link -Dtests=disabled -Dtensorflow=disabled \
    >"$out/setup.log" 2>&1 || { cat "$out/setup.log"; exit 1; }
fi
ninja -C "$out/lib" -j "${JOBS:-2}" libtfq.a
cflags=(-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer "$san" -fno-sanitize-recover=undefined
  -I"$src/include" -I"$out/lib/include" -I"$src/src" -I"$src/tools" -Wall -Wextra)
libs=("$out/lib/libtfq.a" -lcsv -lz -lm -lpthread)
build() { # name, sources...
  local name=$1; shift
  echo "CC $name"
  "$cc" "${cflags[@]}" -fsanitize=fuzzer "$@" "${libs[@]}" -o "$out/$name"
}
t="$src/tests/fuzz"
build fuzz_decode_csv "$t/fuzz_decode_csv.c"
build fuzz_line_reader "$t/fuzz_line_reader.c"
build fuzz_tfrecord "$t/fuzz_tfrecord.c"
build fuzz_padding "$t/fuzz_padding.c"
build fuzz_example "$t/fuzz_example.c"
build fuzz_cli_args "$t/fuzz_cli_args.c" "$src/tools/tfq_cat_args.c" "$src/tools/cat_args_a.c"
build fuzz_pipeline_state "$t/fuzz_pipeline_state.c"
build fuzz_tf_config "$t/fuzz_tf_config.c" "$src/src/tf/tf_config.c" "$src/src/tf/tf_json.c"
echo "built in $out"
