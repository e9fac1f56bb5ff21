#!/usr/bin/env bash
# The analyst's first session, as a new user would have it (docs/transcripts.md, "Analyst"):
# the wheel into a fresh venv with the lab extra, `benchreport lab` beside a real multi-harness
# folder (every captured harness format of tests/fixtures), the notebook run top to bottom, and two
# seats compared in Python. Usage: scripts/transcripts/analyst.sh [WORK_DIR]
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
run venv/bin/python - <<'PY'
from benchreport import compare
from benchreport.explore import open_runs
a = open_runs("my-runs", n_boot=200)
print(sorted(a.tables.seats["seat"]))
for x, y in (("tiny-gpt2-s1", "tiny-gpt2-r1"), ("tiny-gpt2-s1", "my-runs_harness_trtllm_bench-77d7fe1")):
    t = compare(a, x, y)
    print(f"{y} against {x}: {len(t)} shared cells; verdicts: {t['verdict'].value_counts().to_dict()}")
    if len(t):
        print(t[["workload", "concurrency", "metric", "statistic", "ratio", "ci_low", "ci_high", "verdict"]]
              .head(4).to_string())
PY
