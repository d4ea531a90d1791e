#!/bin/sh
# CTest entry `differential`: tests/oracle/differential.py under Debian's Python.
# Exit 77 (CTest's SKIP_RETURN_CODE) when it cannot run here, 1 instead when CI is set.
# Usage: tests/oracle/run_differential.sh REFEREE_BINARY [differential.py options]
PY=${REFEREE_ORACLE_PYTHON:-/usr/bin/python3}
if [ ! -x "$PY" ]; then
  if [ -n "$CI" ]; then
    echo "differential: FAILED: no $PY (CI is set: install Debian's python3 with python3-numpy python3-scipy python3-pandas python3-yaml)"
    exit 1
  fi
  echo "differential: SKIPPED: no $PY (Debian's python3 with python3-numpy python3-scipy python3-pandas python3-yaml)"
  exit 77
fi
referee=$1
shift
exec "$PY" "$(dirname "$0")/differential.py" --referee "$referee" "$@"
