#!/bin/sh
# Fails if the static library defines a global symbol not named tfq_* or tfq__*: a program (or the
# Python extension) that links libtfq.a statically shares one namespace with it, so a private
# helper named, say, pl_setup would clash with the program's own.
# Usage: check_static_names.sh path/to/libtfq.a
set -eu
lib=$1
syms=$(nm --defined-only -g "$lib" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBRVWi]$/ {print $3}' | sort -u)
# A -Db_coverage=true build compiles gcov's own globals in (__gcov_*, mangle_path); ASan adds an
# __odr_asan.<name> for each global <name> (checked through <name> itself).
syms=$(printf '%s\n' "$syms" | grep -v '^__gcov_' | grep -vx 'mangle_path' |
  grep -v '^__odr_asan[.]' || true)
count=$(printf '%s\n' "$syms" | grep -c . || true)
bad=$(printf '%s\n' "$syms" | grep -v '^tfq_' | grep . || true)
echo "1..2"
if [ "$count" -gt 0 ]; then echo "ok 1 - $count global symbols"; else echo "not ok 1 - no global symbols found"; fi
if [ -z "$bad" ]; then
  echo "ok 2 - every global symbol of the static library starts with tfq_ (or tfq__)"
else
  echo "not ok 2 - global symbols outside the tfq_ namespace:"
  printf '%s\n' "$bad" | sed 's/^/#   /'
  exit 1
fi
[ "$count" -gt 0 ]
