#!/usr/bin/env bash
# The analyst's first session, as a new user would have it (docs/transcripts.md, "Analyst"):
# the wheel into a fresh venv with the lab extra, `benchreport lab` beside a real multi-harness
# folder (every captured harness format of tests/fixtures), the notebook run top to bottom and
# exported as one page, and two seats compared in Python: the pair the notebook shows first, and a
# pair that shares only exam tasks. Usage: scripts/transcripts/analyst.sh [WORK_DIR]
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${1:-$(mktemp -d)}"; mkdir -p "$WORK"; cd "$WORK"
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
python3 -m pip wheel --quiet --no-deps -w wheels "$REPO" >/dev/null
WHEEL="$(ls wheels/benchreport-*.whl)"
run python3 -m venv venv
run venv/bin/python -m pip install --quiet --prefer-binary "${WHEEL}[lab]"
cp -r "$REPO/tests/fixtures" my-runs
run venv/bin/benchreport lab my-runs --no-start
run venv/bin/python -m papermill --log-level ERROR my-runs/explore.ipynb my-runs/explore-run.ipynb
run venv/bin/python -c 'from benchreport.explore import export_html; export_html("my-runs/explore-run.ipynb", "explore.html")'
run du -h explore.html
run venv/bin/python - <<'PY'
from benchreport import compare, explore
a = explore.open_runs("my-runs", n_boot=200)
x, y, why = explore.default_pair(a)
print(f"shown first: {y} against {x}, {why}")
t = compare(a, x, y)
print(t.summary())
print(t[["workload", "concurrency", "metric", "statistic", "ratio", "ci_low", "ci_high", "verdict"]].head(3).to_string())
exams = compare(a, "tiny-gpt2-s1", "tiny-gpt2-s2")
print(exams.summary())
print(exams.exams[["benchmark", "dimension", "test", "n_items", "diff", "diff_ci_low", "diff_ci_high", "p_value", "p_holm"]].to_string())
cells = explore.Explorer(a).cells_table()  # the notebook's cells table: what tells its rows apart first
one = cells[cells["seat"].str.startswith("tiny-gpt2-s1 ") & (cells["concurrency"] == 4)]
print(one[["harness", "load", "date", "workload", "estimate"]].head(5).to_string())
PY
