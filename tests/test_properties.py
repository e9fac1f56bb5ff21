"""Property-based: valid runs always load and round-trip through Parquet intact; mutated runs
are either valid or refused with a message naming the file and a JSON path; never a crash."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchreport.columns import METRICS
from benchreport.load import load
from benchreport.tables import build_tables, read_parquet, write_parquet

ids = st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True)
#: characters the loader refuses in names (errors.UNSAFE_CHARS): controls, surrogates, bidi
UNSAFE = (
    "\x00\x07\n\r\t\x1b\x7f\x85\x9f\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e"
    "\u2066\u2067\u2068\u2069\ud800\udfff"
)
safe_chars = st.characters(exclude_categories=("Cc", "Cs"), exclude_characters=UNSAFE)
text = st.text(safe_chars, min_size=1, max_size=20)  # untrusted strings: anything printable, markup too
finite = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
count = st.integers(min_value=0, max_value=10**6)


@st.composite
def measurements(draw):
    metric = draw(st.sampled_from(sorted(METRICS)))
    m = {"workload": draw(text), "metric": metric, "value": draw(finite), "unit": METRICS[metric][0]}
    if draw(st.booleans()):
        m["concurrency"] = draw(st.integers(1, 1024))
    if draw(st.booleans()):
        m["statistic"] = draw(st.sampled_from(["mean", "p50", "p90", "p95", "p99", "min", "max"]))
    if draw(st.booleans()):
        m["fresh_prompt"] = draw(st.booleans())
    return m


@st.composite
def requests_(draw):
    out = draw(count)
    ttft = draw(finite)
    r = {
        "workload": draw(text),
        "output_tokens": out,
        "reasoning_tokens": draw(st.integers(0, out)),
        "ttft_ms": ttft,
        "e2e_latency_ms": ttft + draw(finite),
    }  # the first token comes before the last
    if draw(st.booleans()):
        r["finish_reason"] = draw(st.sampled_from(["stop", "length", "error"]))
    return r


@st.composite
def exams(draw):
    if draw(st.booleans()):
        n = draw(st.integers(1, 30))
        return {"benchmark": draw(text), "items": [{"id": f"q{i}", "correct": draw(st.booleans())} for i in range(n)]}
    total = draw(st.integers(1, 1000))
    return {"benchmark": draw(text), "correct": draw(st.integers(0, total)), "total": total}


@st.composite
def runs(draw):
    run = {
        "format": "benchreport.run/1",
        "run_id": draw(ids),
        "date": "2026-09-10",
        "seat": {
            "id": draw(ids),
            "model": draw(text),
            "role": draw(st.sampled_from(["incumbent", "candidate", "reference"])),
        },
        "harness": {"name": draw(text)},
        "pass": draw(st.integers(1, 50)),
        "measurements": draw(
            st.lists(
                measurements(),
                min_size=1,
                max_size=5,
                unique_by=lambda m: (m["workload"], m.get("concurrency"), m["metric"], m.get("statistic", "mean")),
            )
        ),
    }
    if draw(st.booleans()):
        run["requests"] = draw(st.lists(requests_(), min_size=1, max_size=5))
    if draw(st.booleans()):
        run["exams"] = draw(st.lists(exams(), min_size=1, max_size=3, unique_by=lambda e: e["benchmark"]))
    return run


#: CI explores the same examples every run (a red CI must mean a regression, not a new draw);
#: locally each run draws new ones. HYPOTHESIS_EXAMPLES raises the count for a deeper search.
SETTINGS = settings(
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", 60)),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(runs())
def test_valid_run_loads_and_round_trips(run):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.json"
        path.write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
        result = load([d])
        assert not result.refused, [str(r) for r in result.refused]
        tables = build_tables(result)
        write_parquet(tables, Path(d) / "pq")
        back = read_parquet(Path(d) / "pq")
        for name, df in tables.items():
            got = getattr(back, name)
            assert list(got.columns) == list(df.columns) and list(got.dtypes) == list(df.dtypes), name
            assert got.equals(df), name
    m = tables.measurements
    assert m["value"].tolist() == [x["value"] for x in run["measurements"]]
    assert m["metric"].tolist() == [x["metric"] for x in run["measurements"]]
    assert m["workload"].tolist() == [x["workload"] for x in run["measurements"]]
    assert tables.seats["model"].tolist() == [run["seat"]["model"]]
    if "requests" in run:
        assert tables.requests["output_tokens"].tolist() == [r["output_tokens"] for r in run["requests"]]


def _paths(obj, here=()):
    yield here
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, here + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, here + (i,))


MUTANTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just([]),
    st.just({}),
    st.just("<script>alert(1)</script>"),
)


@SETTINGS
@given(runs(), st.data())
def test_mutated_run_is_loaded_or_refused_with_file_and_path(run, data):
    paths = [p for p in _paths(run) if p]
    target = data.draw(st.sampled_from(paths))
    value = data.draw(MUTANTS)
    obj = run
    for p in target[:-1]:
        obj = obj[p]
    if data.draw(st.booleans()) and isinstance(obj, dict):
        del obj[target[-1]]
    else:
        obj[target[-1]] = value
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mutant.json"
        path.write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
        result = load([d])  # must not raise
        assert len(result.runs) + len(result.refused) == 1
        for r in result.refused:
            assert r.path == str(path) and r.json_path.startswith("$") and r.message
        if result.runs:
            build_tables(result)  # a loaded run always makes tables


# --- text safe everywhere (issue 16) ----------------------------------------------------------

TEXT_FIELDS = [
    ("seat", "model"),
    ("harness", "name"),
    ("measurements", 0, "workload"),
    ("harness", "probe"),
    ("seat", "quantisation"),
    ("seat", "engine"),
    ("measurements", 0, "condition"),
]


@SETTINGS
@given(runs(), st.sampled_from(TEXT_FIELDS), st.sampled_from(list(UNSAFE)), st.data())
def test_an_unsafe_character_in_a_name_is_refused_with_its_path(run, field, char, data):
    obj = run
    for p in field[:-1]:
        obj = obj[p]
    value = data.draw(text)
    at = data.draw(st.integers(0, len(value)))
    obj[field[-1]] = value[:at] + char + value[at:]
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in field)
    with tempfile.TemporaryDirectory() as d:
        Path(d, "run.json").write_text(json.dumps(run), encoding="utf-8")  # ensure_ascii: escapes only
        result = load([d])
    assert not result.runs
    (r,) = result.refused
    assert r.json_path == path, str(r)
    assert "surrogate" in r.message or "control" in r.message
    assert not UNSAFE_RE.search(str(r)), "the refusal line itself is safe"


UNSAFE_RE = re.compile("[" + UNSAFE + "]")
GOOD_TEXT = (Path(__file__).parent / "bad_inputs" / "good" / "good-1.json").read_text()


@SETTINGS
@given(
    st.binary(min_size=1, max_size=40).filter(lambda b: b"/" not in b and b"\x00" not in b and b not in (b".", b".."))
)
def test_a_file_name_of_any_bytes_loads_or_is_refused_in_one_safe_line(name):
    with tempfile.TemporaryDirectory() as d:
        raw = os.fsencode(d) + b"/" + name
        with open(raw, "wb") as f:
            f.write(GOOD_TEXT.encode())
        result = load([d])
        shown = (
            [lr.source_file for lr in result.runs] + [str(r) for r in result.refused] + [str(s) for s in result.skipped]
        )
    assert len(shown) == 1 or name.startswith(b".")
    for line in shown:
        assert not UNSAFE_RE.search(line) and "\n" not in line
        line.encode("utf-8")  # never a surrogate left: writable to Parquet, CSV, HTML


@settings(SETTINGS, max_examples=max(10, SETTINGS.max_examples // 4))  # each writes Parquet
@given(st.one_of(st.integers(min_value=1, max_value=2**80), st.integers(2**63 - 2, 2**63 + 1)))
def test_integers_of_any_size_load_or_are_refused_by_path(n):
    run = json.loads(GOOD_TEXT)
    run["measurements"][0]["concurrency"] = n
    with tempfile.TemporaryDirectory() as d:
        Path(d, "run.json").write_text(json.dumps(run), encoding="utf-8")
        result = load([d])
        if result.runs:
            assert n < 2**63
            write_parquet(build_tables(result), Path(d) / "pq")  # never a pyarrow overflow
        else:
            assert n >= 2**63 and [r.json_path for r in result.refused] == ["$.measurements[0].concurrency"]


@SETTINGS
@given(st.text(max_size=12))
def test_csv_cells_never_start_a_formula(value):
    from benchreport.pipeline import FORMULA_START, neutralise_cell

    out = neutralise_cell(value)
    assert out == value or out == "'" + value
    if out.startswith(FORMULA_START):
        float(out)  # only a plain number may start with + or -


# --- ambiguity refused (issue 16) ---------------------------------------------------------------


def _dumps_with_twice(obj, target, key, value) -> str:
    """JSON text of `obj` in which the object `target` holds `key` a second time, set to `value`."""
    if isinstance(obj, dict):
        items = [f"{json.dumps(k)}: {_dumps_with_twice(v, target, key, value)}" for k, v in obj.items()]
        if obj is target:
            items.append(f"{json.dumps(key)}: {json.dumps(value)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(_dumps_with_twice(v, target, key, value) for v in obj) + "]"
    return json.dumps(obj)


@SETTINGS
@given(runs(), st.data())
def test_a_key_given_twice_is_refused_with_its_path(run, data):
    objects = [p for p in _paths(run) if isinstance(_at(run, p), dict) and _at(run, p)]
    where = data.draw(st.sampled_from(objects))
    target = _at(run, where)
    key = data.draw(st.sampled_from(sorted(target)))
    other = data.draw(st.one_of(st.integers(0, 9), text))
    with tempfile.TemporaryDirectory() as d:
        Path(d, "run.json").write_text(_dumps_with_twice(run, target, key, other), encoding="utf-8")
        result = load([d])
    assert not result.runs
    (r,) = result.refused
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in (*where, key))
    assert (r.json_path, r.message.split(",")[0]) == (path, "expected each key once in an object"), str(r)


def _at(obj, path):
    for p in path:
        obj = obj[p]
    return obj
