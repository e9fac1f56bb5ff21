#!/usr/bin/env bash
# The nightly user's first two nights, as cron would run them (docs/transcripts.md, "Nightly").
# Usage: scripts/transcripts/nightly.sh [WORK_DIR]   (needs .venv: make setup)
# Night 1: two seats, 3 passes each; night 2: the same, with seat-001's TTFT and end-to-end
# latency 1.5x on every pass (a planted regression). Everything runs from WORK_DIR.
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
BR="$REPO/.venv/bin/benchreport"
PY="$REPO/.venv/bin/python"
WORK="${1:-$(mktemp -d)}"; mkdir -p "$WORK"; cd "$WORK"
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
night() {  # night DATE SLOWER: write that night's runs into runs/DATE
  "$PY" - "$REPO" "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[1]) / "benchmarks"))
from generate import generate
date, slower = sys.argv[2], float(sys.argv[3])
seed = 1  # the same seats and requests both nights: only the planted change differs
for f in generate(Path("runs") / date, seats=2, passes=3, requests=100, concurrencies=(1, 8), seed=seed, date=date):
    run = json.loads(f.read_text())
    run["run_id"] = f"{run['run_id']}-{date}"
    if run["seat"]["id"] == "seat-001":
        for r in run.get("requests", []):
            for k in ("ttft_ms", "e2e_latency_ms"):
                if k in r:
                    r[k] = round(r[k] * slower, 3)
    f.write_text(json.dumps(run))
PY
}
echo "## night 1"
night 2026-12-01 1.0
run "$BR" ingest runs/2026-12-01 --store store --quiet
run "$BR" compare --store store previous latest --fail-on regression --quiet
run "$BR" build --store store --out site/latest --format html --quiet --fail-on critical
echo "## night 2: seat-001 1.5x slower to the first token on every pass"
night 2026-12-02 1.5
run "$BR" ingest runs/2026-12-02 --store store --quiet
run "$BR" compare --store store previous latest --fail-on regression --quiet
echo "## two builds into one --out at once"
"$BR" build --store store --out site/latest --format html --quiet & first=$!
sleep 1
run "$BR" build --store store --out site/latest --format html --quiet
wait $first; echo "[first build: exit $?]"
