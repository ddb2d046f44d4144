#!/bin/bash
# Runs the MCP and broker benchmarks of two source trees in turns (A B A B), with the same
# interpreter, so that before/after figures come from one run. Usage:
#   bench/compare_trees.sh BEFORE_TREE AFTER_TREE   (e.g. a `git worktree` of the old commit)
set -euo pipefail
PY=${PYTHON:-$(dirname "$0")/../.venv-test/bin/python}
for round in 1 2; do
  for tree in "$1" "$2"; do
    echo "=== $tree round $round mcp"; "$PY" "$tree/bench/mcp.py" --runs 15 --calls 5000
    echo "=== $tree round $round broker"; "$PY" "$tree/bench/broker.py" --rounds 300 --no-sync
  done
done
