#!/usr/bin/env bash
# Acceptance 2 of issue #42: an installed tfq works from its prefix without LD_LIBRARY_PATH.
#
# `meson install --destdir` copies the built tree's install into a fresh temporary directory, so
# the prefix ends up somewhere it was never built for (a moved prefix: RUNPATHs must be relative
# or name the TensorFlow wheel, never the build or source tree).  Then, with LD_LIBRARY_PATH
# unset: the installed tfq-cat (its --version, a decoded file checked against Python's csv, and
# the loader resolving libtfq.so.0 inside the prefix), pkg-config on the installed tfq.pc and
# tfq_tf.pc (prefix moved with --define-variable), a program compiled against the installed
# headers and libtfq.so (and one against libtfq.a with `pkg-config --static`), and, with the
# bridge, tfq-feed and a program compiled against tfq_tf.pc.  Every version printed (meson's,
# the header's, the library's, tfq-cat's, tfq.pc's) must be the project's.
#
# Usage: install_prefix.sh --meson M --cc CC --build DIR --source DIR --prefix P --libdir L
#        --bindir B --version V --bridge 0|1 [--wheel DIR] [--tf-option DIR] [--cflags FLAGS]
set -euo pipefail
unset LD_LIBRARY_PATH LIBRARY_PATH
wheel="" tf_option="" extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --meson) meson_cmd=$2 ;; --cc) cc=$2 ;; --build) build=$2 ;; --source) source=$2 ;;
    --prefix) prefix=$2 ;; --libdir) libdir=$2 ;; --bindir) bindir=$2 ;; --version) version=$2 ;;
    --bridge) bridge=$2 ;; --wheel) wheel=$2 ;; --tf-option) tf_option=$2 ;; --cflags) extra=$2 ;;
    *) echo "install_prefix.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift 2
done
here=$(cd "$(dirname "$0")" && pwd)
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_eq() { # what, actual, expected
  if [ "$2" == "$3" ]; then ok "$1: $2"; else bad "$1: got [$2], expected [$3]"; fi
}
expect_has() { # what, haystack, needle
  case " $2 " in *" $3 "*) ok "$1 has $3" ;; *) bad "$1: [$2] lacks [$3]" ;; esac
}
runpath() { readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'; }

dest=$(mktemp -d "${TMPDIR:-/tmp}/tfq_install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
# --no-rebuild: meson test has built everything; --quiet: the file list is long.
$meson_cmd install -C "$build" --destdir "$dest" --no-rebuild --quiet
root=$dest$prefix
lib=$root/$libdir
bin=$root/$bindir
numver=$(echo "$version" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')
echo "installed into $root (libdir $libdir)"

# 1. No installed file carries a RUNPATH into the build or the source tree (except a
#    -Dtensorflow_libdir given explicitly), and tfq-cat's is relative to itself.
src_real=$(cd "$source" && pwd -P)
build_real=$(cd "$build" && pwd -P)
while IFS= read -r f; do
  readelf -h "$f" >/dev/null 2>&1 || continue
  IFS=: read -ra parts <<<"$(runpath "$f")"
  for p in "${parts[@]}"; do
    [ -n "$p" ] && [ "$p" != "$tf_option" ] || continue
    real=$(cd "$p" 2>/dev/null && pwd -P || echo "$p")
    for tree in "$source" "$src_real" "$build" "$build_real"; do
      case "$real/" in "$tree"/*) bad "${f#"$dest"}: RUNPATH entry $p is inside $tree" ;; esac
    done
  done
done < <(find "$root" -type f \( -perm -u+x -o -name '*.so*' \))
expect_eq "tfq-cat RUNPATH" "$(runpath "$bin/tfq-cat")" "\$ORIGIN/../$libdir"
resolves() { readlink -f "$(ldd "$1" | awk -v l="$2" '$1 == l {print $3}')"; }
expect_eq "libtfq.so.0 of tfq-cat resolves to" "$(resolves "$bin/tfq-cat" libtfq.so.0)" "$(readlink -f "$lib/libtfq.so.0")"

# 2. The installed tfq-cat runs: its version, and the first rows of iris.csv (values checked
#    against Python's csv module reading the file).
expect_eq "tfq-cat --version" "$("$bin/tfq-cat" --version)" "tfq-cat (tfq) $version"
"$bin/tfq-cat" --skip-header-lines=1 --no-shuffle -b 4 -n 1 -o csv \
  "$source/examples/data/iris.csv" >"$dest/cat.csv" 2>"$dest/cat.err" ||
  bad "tfq-cat on iris.csv: exit $? ($(cat "$dest/cat.err"))"
if python3 - "$source/examples/data/iris.csv" "$dest/cat.csv" <<'EOF'; then
import csv, sys
want = list(csv.reader(open(sys.argv[1])))[1:5]
got = list(csv.reader(open(sys.argv[2])))[1:]
def norm(r): return [float(v) for v in r[:4]] + r[4:]
sys.exit(0 if [norm(r) for r in got] == [norm(r) for r in want] else 1)
EOF
  ok "installed tfq-cat printed iris.csv's first 4 rows as Python's csv reads them"
else
  bad "installed tfq-cat's rows differ from Python's csv: $(cat "$dest/cat.csv")"
fi

# 3. pkg-config on the installed .pc files, the prefix moved to where they are now.
export PKG_CONFIG_PATH=$lib/pkgconfig
pc() { pkg-config --define-variable=prefix="$root" "$@" | sed 's/ *$//'; }
expect_eq "pkg-config --modversion tfq" "$(pc --modversion tfq)" "$version"
expect_eq "pkg-config --cflags --libs tfq" "$(pc --cflags --libs tfq)" "-I$root/include -L$lib -ltfq"
static_libs=$(pc --static --libs tfq)
for flag in -ltfq -lcsv -lm -pthread -lz; do expect_has "pkg-config --static --libs tfq" "$static_libs" "$flag"; done

# 4. A program compiled against the installed headers and libtfq.so, then libtfq.a.
expected_out="record 7 2.5 abc
record -3 0 x,y
end FIFOQueue '_0_installed' is closed and has insufficient elements (requested 1, current size 0)
header $version $numver
library $version $numver"
# shellcheck disable=SC2046,SC2086
$cc -std=c11 -Wall -Wextra -Werror $extra "$here/installed_tfq.c" -o "$dest/prog_shared" \
  $(pc --cflags --libs tfq) -Wl,-rpath,"$lib"
expect_eq "program on libtfq.so" "$("$dest/prog_shared")" "$expected_out"
expect_eq "its libtfq.so.0 resolves to" "$(resolves "$dest/prog_shared" libtfq.so.0)" "$(readlink -f "$lib/libtfq.so.0")"
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror $extra "$here/installed_tfq.c" -o "$dest/prog_static" \
  $(pc --cflags tfq) $(echo " $static_libs " | sed 's/ -ltfq / -l:libtfq.a /')
expect_eq "program on libtfq.a" "$("$dest/prog_static")" "$expected_out"
if ldd "$dest/prog_static" | grep -q libtfq; then bad "the static program loads libtfq.so"; fi

# 5. The bridge: tfq-feed, libtfq_tf and tfq_tf.pc.
if [ "$bridge" != 1 ]; then
  if [ "${CI:-}" = true ]; then bad "the TensorFlow bridge is not built (CI=true)"; fi
  echo "SKIPPED PART: the TensorFlow bridge is not built here (no libtfq_tf, tfq-feed, tfq_tf.pc)"
else
  tfdir=$(pc --variable=tensorflow_libdir tfq_tf)
  [ -n "$tf_option" ] && expect_eq "tfq_tf.pc tensorflow_libdir (-Dtensorflow_libdir)" "$tfdir" "$tf_option"
  suffix=${tfdir:+:$tfdir}
  expect_eq "libtfq_tf.so RUNPATH" "$(runpath "$lib/libtfq_tf.so.0")" "\$ORIGIN$suffix"
  expect_eq "tfq-feed RUNPATH" "$(runpath "$bin/tfq-feed")" "\$ORIGIN/../$libdir$suffix"
  tf_libs=$(pc --cflags --libs tfq tfq_tf)
  for flag in "-I$root/include" "-L$lib" -ltfq_tf -ltfq; do expect_has "pkg-config --cflags --libs tfq tfq_tf" "$tf_libs" "$flag"; done
  # The wheel's version, from its dist-info (the oracle for TF_Version()).
  wheel_dir=${tfdir:-$wheel}
  tf_version=$(basename "$(ls -d "$(dirname "$wheel_dir")"/tensorflow*-*.dist-info | head -1)" .dist-info)
  tf_version=${tf_version#*-}
  if [ -z "$tfdir" ]; then
    # Nothing recorded (the wheel is in the source tree): the loader needs LD_LIBRARY_PATH, and
    # says which library it misses without it; a program adds TensorFlow's flags itself
    # (docs/install.md).
    if msg=$("$bin/tfq-feed" --version 2>&1); then bad "tfq-feed ran without a TensorFlow RUNPATH"; fi
    case "$msg" in
      *"libtensorflow_cc.so.2: cannot open shared object file"*)
        ok "without -Dtensorflow_libdir tfq-feed names the missing libtensorflow_cc.so.2" ;;
      *) bad "tfq-feed without TensorFlow: $msg" ;;
    esac
    export LD_LIBRARY_PATH=$wheel
    tf_libs="$tf_libs -I$wheel/include -L$wheel -l:libtensorflow_cc.so.2 -l:libtensorflow_framework.so.2"
  else
    for flag in "-I$tfdir/include" "-L$tfdir" "-Wl,-rpath,$tfdir"; do
      expect_has "pkg-config --cflags --libs tfq tfq_tf" "$tf_libs" "$flag"
    done
  fi
  expect_eq "tfq-feed --version" "$("$bin/tfq-feed" --version 2>/dev/null)" "tfq-feed (tfq) $version, TensorFlow $tf_version"
  # shellcheck disable=SC2086
  $cc -std=c11 -Wall -Wextra -Werror $extra "$here/installed_tfq_tf.c" -o "$dest/prog_tf" \
    $tf_libs -Wl,-rpath,"$lib"
  expect_eq "program on libtfq_tf" "$("$dest/prog_tf" 2>/dev/null)" "tf tensor dtype 1 dims 2 3: -1 -0.5 0 0.5 1 1.5
tensorflow $tf_version $tf_version
library $version"
  unset LD_LIBRARY_PATH
fi

if [ "$fails" -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
