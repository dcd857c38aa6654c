#!/bin/sh
# Fails if the shared library exports any defined dynamic symbol not named tfq_*.
# Usage: check_exports.sh path/to/libtfq.so
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}')
# A -Db_coverage=true build links libgcov into the library, which exports its own __gcov_*
# symbols and mangle_path; those (and only in such a build) are not ours.
if printf '%s\n' "$syms" | grep -qx '__gcov_master'; then
  syms=$(printf '%s\n' "$syms" | grep -v '^__gcov_' | grep -vx 'mangle_path')
fi
count=$(printf '%s\n' "$syms" | grep -c . || true)
bad=$(printf '%s\n' "$syms" | grep -v '^tfq_' | grep -v '^_init$' | grep -v '^_fini$' | grep . || true)
echo "1..2"
if [ "$count" -gt 0 ]; then echo "ok 1 - $count exported symbols"; else echo "not ok 1 - no exported symbols found"; fi
if [ -z "$bad" ]; then
  echo "ok 2 - every exported symbol starts with tfq_"
else
  echo "not ok 2 - symbols outside the tfq_ namespace:"
  printf '%s\n' "$bad" | sed 's/^/#   /'
  exit 1
fi
[ "$count" -gt 0 ]
