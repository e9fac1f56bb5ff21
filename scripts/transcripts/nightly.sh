#!/usr/bin/env bash
# The nightly user's first two nights, by the cron jobs as documented (docs/transcripts.md,
# "Nightly"): docs/store.md's nightly script ("A night in cron"), taken from the page and run as
# written with its paths put in WORK_DIR, and README's one-line cron job. A stand-in for mail(1)
# keeps each message as WORK_DIR/mail/N.txt instead of sending it.
# Usage: scripts/transcripts/nightly.sh [WORK_DIR]   (needs .venv: make setup)
# Night 1: two seats, 3 passes each, 100 requests a pass at 1 and 8 streams; every fifth request
# of seat-000 fails (HTTP 503: 20%, a critical requests.failed flag). Night 2: the same failures
# (the flag stands) and seat-001's TTFT and end-to-end latency 1.5x on every pass (a planted
# regression).
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
seed = 1  # the same seats and requests both nights: only the planted changes differ
for f in generate(Path("runs") / date, seats=2, passes=3, requests=100, concurrencies=(1, 8), seed=seed, date=date):
    run = json.loads(f.read_text())
    run["run_id"] = f"{run['run_id']}-{date}"
    for i, r in enumerate(run.get("requests", [])):
        if run["seat"]["id"] == "seat-000" and i % 5 == 0:
            r["finish_reason"], r["error"] = "error", "HTTP 503: upstream overloaded"
        if run["seat"]["id"] == "seat-001":
            for k in ("ttft_ms", "e2e_latency_ms"):
                if k in r:
                    r[k] = round(r[k] * slower, 3)
    f.write_text(json.dumps(run))
PY
}
mails() {  # show the mails sent since the last call
  for f in mail/*.txt; do
    [ -e "$f" ] && [ ! -e "$f.shown" ] && { echo "--- $f"; cat "$f"; echo "---"; : > "$f.shown"; }
  done
  return 0
}

# mail(1) that keeps the message: mail -s SUBJECT TO < BODY -> mail/N.txt
mkdir -p bin mail
cat > bin/mail <<'SH'
#!/bin/sh
n=$(( $(ls "$MAILDIR" | grep -c '\.txt$') + 1 ))
{ echo "To: $3"; echo "Subject: $2"; echo; cat; } > "$MAILDIR/$n.txt"
SH
chmod +x bin/mail
export PATH="$WORK/bin:$PATH" MAILDIR="$WORK/mail"

# the documented jobs, their paths put here: /srv/benchreport -> WORK, /data/runs -> runs,
# /data/store -> store, /srv/www/bench -> www (README's: www/readme), .venv/bin/benchreport -> the repo's
here() { sed -e "s#cd /srv/benchreport#cd $WORK#" -e "s#\.venv/bin/benchreport#$BR#g" -e "s#/data/runs#runs#g" \
             -e "s#/data/store#store#g" -e "s#/srv/www/bench#$1#g"; }
sed -n '/^    #!\/bin\/sh$/,/^    exit "\$worst"$/p' "$REPO/docs/store.md" | sed 's/^    //' | here www > nightly-job.sh
README_JOB="$(grep -m1 '^    15 6 \* \* \*  cd /srv/benchreport && .venv/bin/benchreport build' "$REPO/README.md" \
              | sed 's/^    15 6 \* \* \*  //' | here www/readme)"
[ -s nightly-job.sh ] && [ -n "$README_JOB" ] || { echo "the documented jobs were not found"; exit 2; }

echo "## night 1: seat-000 fails 20% of its requests (a critical flag, new tonight)"
night 2026-12-01 1.0
run sh nightly-job.sh
mails
run sh -c "$README_JOB"
mails
echo "## night 2: the same failures (the flag stands); seat-001 1.5x slower to the first token"
night 2026-12-02 1.5
run sh nightly-job.sh
mails
run sh -c "$README_JOB"
mails
echo "## two builds into one --out at once"
"$BR" build --store store --out www/latest --format html --quiet & first=$!
sleep 1
run "$BR" build --store store --out www/latest --format html --quiet
wait $first; echo "[first build: exit $?]"
