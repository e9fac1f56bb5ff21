#!/usr/bin/env bash
# The wheel's install size and dependency count, plain and with each extra (docs/performance.md,
# "Install size"). Usage: benchmarks/install_size.sh [REPO]  (default: this repository)
# Each install is a fresh venv from the package index (pip's cache makes reruns quick).
set -euo pipefail
REPO="$(cd "${1:-$(dirname "$0")/..}" && pwd)"
WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
python3 -m pip wheel --quiet --no-deps -w wheels "$REPO" >/dev/null
WHEEL="$(ls wheels/benchreport-*.whl)"
python3 -m venv empty
echo "empty venv: $(du -sm empty | cut -f1) MB, $(empty/bin/python -m pip list --format freeze | wc -l) packages"
for extra in "" "[pdf]" "[explore]" "[all]"; do
  python3 -m venv v
  v/bin/python -m pip install --quiet --prefer-binary "$WHEEL$extra"
  echo "benchreport$extra: $(du -sm v | cut -f1) MB, $(v/bin/python -m pip list --format freeze | grep -vc '^benchreport=') packages besides benchreport"
  rm -rf v
done
