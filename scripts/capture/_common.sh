# Shared prologue and helpers of scripts/capture_fixtures.sh and scripts/capture/<tool>.sh
# (sourced, not run): work folder, server venv, locally trained tokenizer, tokenizer-config
# tweak, the --report-cached server patch, path scrubbing, publishing. Each tool script is
# usable on its own: `scripts/capture/<tool>.sh [WORK_DIR]`.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${1:-$(mktemp -d)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
SHARED="${HARNESS_CAPTURE_DIR:-$REPO/../shared/tools/harness-capture}"
PYTHON="${PYTHON:-python3}"
FIX="${CAPTURE_FIXTURES_DIR:-$REPO/tests/fixtures/harness}"   # override to test a re-capture elsewhere

TORCH="torch==2.13.0"                      # CPU build; any other pin pulls CUDA wheels
SERVER_PKGS=(transformers==5.24.0 tokenizers==0.23.3 fastapi==0.165.0 uvicorn==0.54.0)

export HF_HOME="$WORK/hf-home"             # keep any HF cache inside the work folder
export TOKENIZERS_PARALLELISM=false
export PIP_DISABLE_PIP_VERSION_CHECK=1
cd "$WORK"
echo "work folder: $WORK"

SERVER_PIDS=()
cleanup() {
    local pid
    for pid in "${SERVER_PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

log() { printf '\n=== %s\n' "$*"; }

mkvenv() {  # mkvenv NAME PKG... : create venv-NAME once and pip install into it
    local name="$1"; shift
    if [ ! -x "venv-$name/bin/python" ]; then
        "$PYTHON" -m venv "venv-$name"
    fi
    "venv-$name/bin/pip" install -q "$@" > "pip-$name.log" 2>&1 || {
        grep -v 'is ignored' "pip-$name.log" | tail -30; return 1; }
}

port_answers() {  # port_answers PORT : true if something serves /health there
    venv-server/bin/python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$1/health', timeout=2)" 2>/dev/null
}

start_server() {  # start_server SCRIPT PORT ARGS... ; sets LAST_PID
    local script="$1" port="$2"; shift 2
    if port_answers "$port"; then
        echo "port $port is already serving; stop that process first"; return 1
    fi
    venv-server/bin/python "$script" --tokenizer tokenizer-bpe4k --port "$port" "$@" \
        > "server-$port.log" 2>&1 &
    LAST_PID=$!
    SERVER_PIDS+=("$LAST_PID")
    local i
    for i in $(seq 1 120); do
        if port_answers "$port" && kill -0 "$LAST_PID" 2>/dev/null; then
            echo "server on 127.0.0.1:$port up (pid $LAST_PID): $*"
            return 0
        fi
        kill -0 "$LAST_PID" 2>/dev/null || { cat "server-$port.log"; return 1; }
        sleep 1
    done
    echo "server on port $port did not come up"; cat "server-$port.log"; return 1
}

stop_server() {  # stop_server PID
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

scrub() {  # scrub DIR : replace this machine's paths with placeholders, in place
    venv-server/bin/python - "$1" "$WORK" "$REPO" "$HOME" <<'PY'
import os, sys
root, work, repo, home = sys.argv[1:5]
subs = [(os.path.realpath(work), "<capture-dir>"), (work, "<capture-dir>"),
        (os.path.realpath(repo), "<repo>"), (repo, "<repo>")]
if home and home != "/":
    subs.append((home.rstrip("/") + "/", "<home>/"))
    subs.append((home.rstrip("/"), "<home>"))
for dirpath, _, files in os.walk(root):
    for fn in files:
        p = os.path.join(dirpath, fn)
        try:
            text = open(p, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        new = text
        for old, rep in subs:
            new = new.replace(old, rep)
        if new != text:
            open(p, "w", encoding="utf-8").write(new)
            print("scrubbed paths in", os.path.relpath(p, root))
PY
}

publish() {  # publish NAME : copy out/NAME into tests/fixtures/harness/NAME, keeping its
             # README.md (written by hand), and scrub machine paths. expected.json is
             # written into out/NAME by the tool script, copied from the tool's output.
    local h="$1" keep
    keep="$WORK/.publish-keep"; rm -rf "$keep"; mkdir -p "$keep"
    [ -f "$FIX/$h/README.md" ] && cp "$FIX/$h/README.md" "$keep/"
    rm -rf "${FIX:?}/$h"
    mkdir -p "$FIX"
    cp -r "out/$h" "$FIX/$h"
    cp "$keep"/* "$FIX/$h/" 2>/dev/null || true
    rm -rf "$keep"
    scrub "$FIX/$h"
    if grep -rn "$WORK\|$REPO\|$HOME/\|/tmp/" "$FIX/$h" >/dev/null 2>&1; then
        echo "WARNING: machine paths left in $FIX/$h:"; grep -rln "$WORK\|$REPO\|$HOME/\|/tmp/" "$FIX/$h"
    fi
    du -sh "$FIX/$h"
}

setup_server() {  # server venv, tokenizer, tokenizer-config tweak, patched server copy
    log "setup: server venv, tokenizer, patched server"
    cp "$SHARED/tiny_server.py" "$SHARED/build_tokenizer.py" .
    if [ ! -f venv-server/.done ]; then
        mkvenv server "$TORCH"
        mkvenv server "$TORCH" "${SERVER_PKGS[@]}"
        touch venv-server/.done
    fi
    if [ ! -f tokenizer-bpe4k/tokenizer.json ]; then
        venv-server/bin/python build_tokenizer.py tokenizer-bpe4k 4096
    fi
    # transformers 5 saves tokenizer_class "TokenizersBackend" and the chat template as a
    # separate .jinja file; transformers 4.x clients need the classic class name and the
    # template inside tokenizer_config.json.
    venv-server/bin/python - <<'PY'
import json, os
p = "tokenizer-bpe4k/tokenizer_config.json"
c = json.load(open(p))
c["tokenizer_class"] = "PreTrainedTokenizerFast"
tpl = "tokenizer-bpe4k/chat_template.jinja"
if os.path.exists(tpl):
    c["chat_template"] = open(tpl).read()
json.dump(c, open(p, "w"), indent=2)
PY
    # Patched server copy: --report-cached BLOCK simulates a vLLM-style prefix cache
    # (full BLOCK-token blocks already seen by an earlier prompt, never the whole
    # prompt) and reports usage.prompt_tokens_details.cached_tokens.
    venv-server/bin/python - tiny_server.py tiny_server_cached.py <<'PY'
import sys
src = open(sys.argv[1]).read()
def rep(old, new, count=1):
    global src
    assert src.count(old) == count, ("patch anchor not found", old, src.count(old))
    src = src.replace(old, new)
rep('p.add_argument("--checkpoint"',
    'p.add_argument("--report-cached", type=int, default=0, metavar="BLOCK",\n'
    '               help="simulate a prefix cache with this block size and report '
    'usage.prompt_tokens_details.cached_tokens")\n'
    'p.add_argument("--checkpoint"')
rep('def make_job(body, ids, loop, chat=False):\n',
    'PREFIX_BLOCKS = set()\n\n\n'
    'def cached_prefix(ids):\n'
    '    """vLLM-style prefix cache: full blocks already seen, never the whole prompt."""\n'
    '    B = args.report_cached\n'
    '    hit, miss = 0, False\n'
    '    for end in range(B, len(ids) + 1, B):\n'
    '        key = tuple(ids[:end])\n'
    '        if not miss and key in PREFIX_BLOCKS and end < len(ids):\n'
    '            hit = end\n'
    '        else:\n'
    '            miss = True\n'
    '        PREFIX_BLOCKS.add(key)\n'
    '    return hit\n\n\n'
    'def make_job(body, ids, loop, chat=False):\n')
rep('    return Job(ids, int(mt),', '    job = Job(ids, int(mt),')
rep('               bool(body.get("echo", False)), lp, loop)\n',
    '               bool(body.get("echo", False)), lp, loop)\n'
    '    job.cached = cached_prefix(ids) if args.report_cached else None\n'
    '    return job\n')
rep('def usage(pt, ct, rt=0):\n    u = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}\n',
    'def usage(pt, ct, rt=0, cached=None):\n    u = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}\n'
    '    if cached is not None:\n        u["prompt_tokens_details"] = {"cached_tokens": cached}\n')
rep('usage(len(job.prompt_ids), len(job.out_ids))',
    'usage(len(job.prompt_ids), len(job.out_ids), 0, job.cached)')
rep('min(n_think, len(job.out_ids)))', 'min(n_think, len(job.out_ids)), job.cached)', 2)
rep('"choices": choices, "usage": usage(pt, ct)}',
    '"choices": choices, "usage": usage(pt, ct, 0, '
    'sum(j.cached for j in jobs) if args.report_cached else None)}')
open(sys.argv[2], "w").write(src)
PY
}
