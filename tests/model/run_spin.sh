#!/bin/sh
# Model-checks tests/model/queue.pml (the queue engine's locking protocol) with Spin, for
# capacity 1 and 2: safety (assertions, invalid end states = deadlocks / lost wake-ups),
# non-progress cycles, and the LTL property closed_then_all_return under weak fairness.
#
#   run_spin.sh [--broken]     --broken: check that each deliberately broken variant
#                              (BUG_NO_RECHECK, BUG_NO_SIGNAL, BUG_CLOSE_NO_FLUSH,
#                              BUG_FAST_NO_FLUSH, BUG_COMMIT_NO_FLUSH) is caught
#
# Exit 0 all verified; 1 an error (or, with --broken, a variant not caught); 77 skip when spin or
# a C compiler is missing (an error under CI=true).
set -u
here=$(cd "$(dirname "$0")" && pwd)
model="$here/queue.pml"
cc=${CC:-cc}

missing=""
command -v spin >/dev/null 2>&1 || missing="spin"
command -v "$cc" >/dev/null 2>&1 || missing="$missing $cc"
if [ -n "$missing" ]; then
  echo "########################################################################"
  echo "## SKIP: $missing not installed: the queue protocol model is NOT checked"
  echo "## (scripts/setup installs spin)."
  echo "########################################################################"
  [ "${CI:-}" = "true" ] && { echo "CI=true: failing instead of skipping"; exit 1; }
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tfq_spin_XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/queue.pml"
cd "$work" || exit 1

# check NAME DEFINES PAN_CFLAGS PAN_ARGS: generate, compile and run one verifier.  Prints one line;
# returns 0 when pan found no error.
check() {
  name=$1 defs=$2 cflags=$3 args=$4
  rm -f pan pan.* queue.pml.trail
  if ! spin $defs -a queue.pml >spin.out 2>&1; then
    echo "not ok - $name: spin -a failed"; cat spin.out; return 2
  fi
  # pan.c is generated code: its warnings are not ours; -O0 because compiling it at -O2 costs
  # far more than the search saves.  NFAIR=3: weak fairness over 8 processes.
  if ! $cc -O0 -w -DNFAIR=3 $cflags -o pan pan.c >cc.out 2>&1; then
    echo "not ok - $name: compiling pan failed"; cat cc.out; return 2
  fi
  ./pan $args >pan.out 2>&1
  errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | head -1)
  if [ "$errs" = "0" ] && ! grep -q "error: max search depth too small" pan.out; then
    echo "ok - $name ($states states)"
    return 0
  fi
  why=$(grep -m1 -E "pan:[0-9]+: |errors:|max search depth" pan.out)
  echo "FOUND - $name: ${why:-no verdict}"
  [ -n "${VERBOSE:-}" ] && cat pan.out
  return 1
}

# The three checks of one configuration.  Returns the number of failed checks.  With
# FIRST_FIND=1 (--broken) it stops at the first check that finds an error: a mutant is caught
# once any check catches it, and the later full searches would only cost minutes.
config() {
  d=$1 fails=0
  # 1. safety: assertions and invalid end states (every thread must end: no deadlock, no
  #    thread asleep forever).  The LTL claim is left out.
  check "safety $d" "$d" "-DSAFETY -DNOCLAIM" "-m200000" || fails=$((fails + 1))
  [ "${FIRST_FIND:-0}" = 1 ] && [ $fails -gt 0 ] && return $fails
  # 2. non-progress cycles (progress = a dequeue delivered rows; every thread ends, so any
  #    cycle would be a livelock).  No fairness needed: a cycle must not exist at all.
  check "non-progress $d" "$d" "-DNP -DNOCLAIM" "-l -m200000" || fails=$((fails + 1))
  [ "${FIRST_FIND:-0}" = 1 ] && [ $fails -gt 0 ] && return $fails
  # 3. LTL: [] (closed -> <> (inop == 0)), under weak fairness (-f): a thread that stays
  #    enabled is eventually scheduled, as the OS scheduler does; without it pan would report
  #    executions that simply never run a ready thread.
  check "ltl closed_then_all_return $d" "$d" "" "-a -f -m200000" \
    || fails=$((fails + 1))
  return $fails
}

if [ "${1:-}" = "--broken" ]; then
  FIRST_FIND=1
  status=0
  for bug in BUG_NO_RECHECK BUG_NO_SIGNAL BUG_CLOSE_NO_FLUSH BUG_FAST_NO_FLUSH BUG_COMMIT_NO_FLUSH; do
    if config "-DCAP=1 -D$bug" >out.txt; then
      cat out.txt
      echo "not ok - $bug was NOT caught by the model"
      status=1
    elif grep -q "^not ok" out.txt; then  # spin or the compiler failed: that catches nothing
      cat out.txt
      echo "not ok - $bug: the check could not run"
      status=1
    else
      cat out.txt
      echo "ok - $bug caught"
    fi
  done
  exit $status
fi

status=0
for cap in 1 2; do
  config "-DCAP=$cap" || status=1
done
[ $status -eq 0 ] && echo "queue.pml: all checks passed" || echo "queue.pml: FAILED"
exit $status
