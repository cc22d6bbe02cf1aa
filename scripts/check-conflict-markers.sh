#!/usr/bin/env bash
# Fails when a tracked text file holds a merge-conflict marker line (a merge that was committed
# unresolved). Run by .ci/run before anything else.
set -euo pipefail
cd "$(dirname "$0")/.."
if markers=$(git grep -n -I -E '^(<<<<<<< |>>>>>>> |=======$)' -- . ':!package-lock.json'); then
  echo "merge-conflict markers in tracked files (resolve them):" >&2
  echo "$markers" >&2
  exit 1
fi
echo "no merge-conflict markers in tracked files"
