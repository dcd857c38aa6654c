#!/bin/sh
# Suite 'python': the pytest suite of tests/python against the just-built package
# (PYTHONPATH=<build>/python, set by meson.build), run with the project venv's Python.
# Without the venv or without pytest in it: skip (77) loudly, but fail under CI=true.
# Usage: run_pytest.sh PYTHON TESTDIR [pytest args...]
py=$1
shift
if ! "$py" -c 'import pytest, numpy' >/dev/null 2>&1; then
  echo "python suite: $py cannot import pytest and numpy (run scripts/setup)" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 77
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
