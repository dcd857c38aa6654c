#!/bin/sh
# Runs run_conformance.py with the project venv's python, or skips loudly (exit 77) when that
# python cannot import tensorflow -- a failure instead when CI=true.
PY="${TFQ_CONFORMANCE_PYTHON:-$(dirname "$0")/../../.venv/bin/python}"
if ! "$PY" -c 'import tensorflow' >/dev/null 2>&1; then
  echo "############################################################################"
  echo "# SKIPPED: conformance needs the reference TensorFlow, but"
  echo "#   $PY -c 'import tensorflow'"
  echo "# failed.  Run scripts/setup to create .venv with the pinned tensorflow-cpu."
  echo "############################################################################"
  if [ "${CI:-}" = "true" ]; then
    echo "CI=true: a missing TensorFlow is a failure, not a skip."
    exit 1
  fi
  exit 77
fi
exec "$PY" "$@"
