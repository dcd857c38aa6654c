#!/bin/sh
# Stands in for the TensorFlow bridge suite when meson did not build libtfq_tf.
echo "############################################################################"
echo "# SKIPPED: the TensorFlow bridge (libtfq_tf) was not built: no tensorflow-cpu"
echo "# wheel with the C API was found through .venv/bin/python.  Run scripts/setup."
echo "############################################################################"
if [ "${CI:-}" = "true" ]; then
  echo "CI=true: a missing TensorFlow is a failure, not a skip."
  exit 1
fi
exit 77
