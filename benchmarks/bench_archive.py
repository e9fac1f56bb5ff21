"""A nightly archive: ingest per night, full / new-night / no-change builds side by side.

The archive (benchmarks/generate_archive.py: 365 nights of a 10-seat fleet, 4 concurrencies
x 5 passes x 200 requests, 14.6 million request records) is ingested into a run store all
but its last night at once; then, each as its own `benchreport` process (peak memory is the
child's own high-water mark, benchmarks/measure.py), in one run:

1. `build --store --format html` with the store's cache empty: the **full build** (every
   date's request records read and summarised, every cell estimated, the report made);
2. the last night ingested and `build` again: a **new night** (its own date computed, the
   other dates' cells, the history walk and passes.csv lines read from the cache);
3. `build` once more: **no change** ("up to date": the build key matches, nothing is done);
4. the same three for `analyse --store` (statistics and tables, no report), on a copy of
   the store taken before step 1 (so its cache starts empty too);
5. `analyse` of the same JSON files (every night read and analysed from the files).

    python benchmarks/bench_archive.py [--seats 10] [--nights 365] [--work DIR] [--json-nights N] [--json OUT]
        [--engines ducklake,parquet]

`--engines`: the run-store engines whose ingest and three builds are timed side by side in the
one run (a new `--store DIR` is DuckLake's; `parquet:DIR` the Parquet store of before). The
first engine's store also serves steps 4-5; each engine's results are under `by_engine`, and
the first's are also the top-level entries (as before the option).

`--json-nights N` times the JSON route on the last N nights only (a year of JSON files does
not fit in memory at 50 seats); the store route is then timed on the same N nights too, so
the ratio compares like with like. `--no-build` skips the report builds (analyse only);
`--builds-only` runs steps 1-3 only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from generate_archive import generate_archive, nights  # noqa: E402
from measure import run_measured  # noqa: E402

BIN = [sys.executable, "-m", "benchreport"]


def run(args: list[str], *, ok=(0,)) -> dict:
    """Wall and CPU seconds and peak memory (MiB, printed as MB) of one benchreport process
    (benchmarks/measure.py): ``peak_mb`` the process itself, ``tree_peak_mb`` the largest sum of
    resident memory over the process and its children at any moment and ``tree_pss_mb`` the
    same in proportional set size (sampled every 100 ms: a build runs its report kernel beside
    itself)."""
    m = run_measured(BIN + args, tree=True)
    if m.returncode not in ok:
        raise SystemExit(f"benchreport {' '.join(args)} failed ({m.returncode}): {m.stderr}")
    out = {
        "wall_s": round(m.wall_s, 2),
        "cpu_s": round(m.cpu_s, 2),
        "peak_mb": m.peak_mb,
        "tree_peak_mb": m.tree_peak_mb,
        "tree_pss_mb": m.tree_pss_mb,
    }
    print(
        f"  {' '.join(args[:1] + [a for a in args[1:] if a.startswith('--') and a != '--quiet'])}: "
        f"{out['wall_s']:.1f} s wall, {out['cpu_s']:.1f} s CPU, peak {out['peak_mb']} MB "
        f"(process tree {out['tree_peak_mb']} MB resident, {out['tree_pss_mb']} MB proportional)",
        file=sys.stderr,
        flush=True,
    )
    return out


def _parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=10)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--work", type=Path, default=Path("/tmp/benchreport-archive"), help="archive, store and outputs")
    ap.add_argument("--json-nights", type=int, default=0, help="time the JSON route on the last N nights (0: all)")
    ap.add_argument("--no-build", action="store_true", help="skip the HTML builds")
    ap.add_argument("--builds-only", action="store_true", help="the three builds only (no analyse or JSON route)")
    ap.add_argument(
        "--reuse-store",
        type=Path,
        default=None,
        help="a JSON of an earlier run whose store (all but the last night) is still there: "
        "its ingest is reused, not repeated",
    )
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument(
        "--engines", default="ducklake,parquet", help="run-store engines timed side by side (comma-separated)"
    )
    return ap


def main(argv=None) -> dict:
    """Time every step on the archive (generated when absent); the results, also written to --json."""
    args = _parser().parse_args(argv)
    archive = args.work / f"archive-{args.seats}x{args.nights}"
    dates = nights("2026-01-01", args.nights)
    last_night = archive / dates[-1]
    res = _prepare_archive(args, archive, dates)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or set(engines) - {"ducklake", "parquet"}:
        raise SystemExit(f"--engines takes ducklake and/or parquet; got {args.engines!r}")
    out = args.work / "out"
    res["by_engine"] = {}
    for engine in engines:  # each engine's ingest and builds, one after the other in this run
        mine = res["by_engine"][engine] = {}
        store = args.work / f"store-{args.seats}x{args.nights}-{engine}"
        location = f"parquet:{store}" if engine == "parquet" else str(store)
        _ingest_all_but_last(args, mine, [archive / d for d in dates[:-1]], store, location)
        if engine == engines[0]:
            twin = args.work / f"store-{args.seats}x{args.nights}-analyse"  # the analyse route's own store
            shutil.rmtree(twin, ignore_errors=True)
            if not args.builds_only:
                shutil.copytree(store, twin)
        if not args.no_build:
            _time_builds(mine, store, out / f"build-{engine}", last_night)
            mine.update(_build_ratios(mine))
    res.update({k: v for k, v in res["by_engine"][engines[0]].items() if k not in _RATIO_KEYS})
    _print_side_by_side(res["by_engine"])
    if args.builds_only:
        shutil.rmtree(twin, ignore_errors=True)
        res["ratios"] = _build_ratios(res)
        return _finish(res, args.json)
    _time_analyses(res, twin, out / "analyse", last_night)
    shutil.rmtree(twin, ignore_errors=True)
    _time_json_route(args, res, [archive / d for d in dates], out)
    res["ratios"] = _analyse_ratios(res)
    if not args.no_build:
        res["ratios"].update(_build_ratios(res))
    return _finish(res, args.json)


def _prepare_archive(args, archive: Path, dates: list[str]) -> dict:
    """The archive (generated when absent) and its size: the first entries of the results."""
    if not (archive / dates[-1]).is_dir():
        t0 = time.perf_counter()
        generate_archive(archive, seats=args.seats, n_nights=args.nights, requests=args.requests)
        print(f"generated {archive} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    size = sum(f.stat().st_size for f in archive.rglob("*.json"))
    n_req = args.seats * args.nights * 4 * 5 * args.requests
    print(
        f"archive: {args.nights} nights x {args.seats} seats, {n_req:,} request records, {size / 1e6:,.0f} MB",
        file=sys.stderr,
    )
    return {"seats": args.seats, "nights": args.nights, "request_records": n_req, "json_mb": round(size / 1e6)}


def _ingest_all_but_last(args, res: dict, head: list[Path], store: Path, location: str) -> None:
    """Every night but the last into `store` (or the earlier run's store reused, its cache emptied)."""
    if args.reuse_store is not None:
        res["ingest_all_but_last"] = json.loads(args.reuse_store.read_text())["ingest_all_but_last"]
        shutil.rmtree(store / ".cache", ignore_errors=True)
    else:
        shutil.rmtree(store, ignore_errors=True)
        res["ingest_all_but_last"] = run(["ingest", *map(str, head), "--store", location, "--quiet"])
    res["ingest_per_night_s"] = round(res["ingest_all_but_last"]["wall_s"] / (args.nights - 1), 3)
    res["store_mb"] = round(sum(f.stat().st_size for f in store.rglob("*") if f.is_file()) / 1e6)


def _time_builds(res: dict, store: Path, out: Path, last_night: Path) -> None:
    """Steps 1-3: the full build, the last night ingested and built, a build with no change."""
    build = ["build", "--store", str(store), "--out", str(out), "--format", "html", "--quiet"]
    res["build_full"] = run(build)
    res["ingest_one_night"] = run(["ingest", str(last_night), "--store", str(store), "--quiet"])
    res["build_new_night"] = run(build)
    res["build_no_change"] = run(build)


def _time_analyses(res: dict, twin: Path, out: Path, last_night: Path) -> None:
    """Step 4: the same three for `analyse --store`, on the store's copy `twin`, and its cache's size."""
    analyse = ["analyse", "--store", str(twin), "--out", str(out), "--quiet"]
    res["analyse_full"] = run(analyse)
    res["ingest_one_night_analyse"] = run(["ingest", str(last_night), "--store", str(twin), "--quiet"])
    res["analyse_new_night"] = run(analyse)
    res["analyse_no_change"] = run(analyse)
    res["cache_mb"] = round(sum(f.stat().st_size for f in (twin / ".cache").rglob("*") if f.is_file()) / 1e6)


def _time_json_route(args, res: dict, night_dirs: list[Path], out: Path) -> None:
    """Step 5: `analyse` of the last --json-nights nights' JSON files, and the store route on the same nights."""
    k = args.json_nights or args.nights
    last_k = [str(d) for d in night_dirs[-k:]]
    if k < args.nights:  # the store route on the same nights as the JSON route
        small = args.work / f"store-{args.seats}x{k}"
        shutil.rmtree(small, ignore_errors=True)
        run(["ingest", *last_k, "--store", str(small), "--quiet"])
        res["analyse_store_same_nights"] = run(["analyse", "--store", str(small), "--out", str(out / "s"), "--quiet"])
        shutil.rmtree(small, ignore_errors=True)
    else:
        res["analyse_store_same_nights"] = res["analyse_full"]
    res["json_nights"] = k
    res["analyse_json"] = run(["analyse", *last_k, "--out", str(out / "json"), "--quiet"])


def _analyse_ratios(res: dict) -> dict:
    """A new night's ingest and analyse, and a no-change analyse, over the full analyse; JSON over store."""
    full = res["analyse_full"]["wall_s"]
    new_night = res["analyse_new_night"]["wall_s"] + res["ingest_one_night_analyse"]["wall_s"]
    return {
        "analyse_new_night_over_full": round(new_night / full, 3),
        "analyse_no_change_over_full": round(res["analyse_no_change"]["wall_s"] / full, 3),
        "json_over_store": round(res["analyse_json"]["wall_s"] / res["analyse_store_same_nights"]["wall_s"], 2),
    }


def _build_ratios(res: dict) -> dict:
    """A new night's ingest and build, and a no-change build, over the full build (wall time)."""
    full = res["build_full"]["wall_s"]
    return {
        "build_new_night_over_full": round(
            (res["build_new_night"]["wall_s"] + res["ingest_one_night"]["wall_s"]) / full, 3
        ),
        "build_no_change_over_full": round(res["build_no_change"]["wall_s"] / full, 3),
    }


_RATIO_KEYS = ("build_new_night_over_full", "build_no_change_over_full")
_SIDE_BY_SIDE = (
    ("ingest_all_but_last", "ingest all but the last night"),
    ("build_full", "full build (cache empty)"),
    ("ingest_one_night", "ingest the last night"),
    ("build_new_night", "build after the new night"),
    ("build_no_change", "build, nothing changed"),
)


def _print_side_by_side(by_engine: dict) -> None:
    """One Markdown table: each step's wall and CPU seconds and peak memory, an engine a column."""
    names = list(by_engine)
    lines = ["| step | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, label in _SIDE_BY_SIDE:
        cells = []
        for e in names:
            m = by_engine[e].get(key)
            cells.append(f"{m['wall_s']:.1f} s ({m['cpu_s']:.1f} s CPU, {m['tree_peak_mb']} MB)" if m else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("| store on disk | " + " | ".join(f"{by_engine[e].get('store_mb')} MB" for e in names) + " |")
    print("\n".join(lines), file=sys.stderr, flush=True)


def _finish(res: dict, out: Path | None) -> dict:
    """The peak over every step, the ratios on stderr, and the results as JSON in `out`."""
    steps = [v for v in res.values() if isinstance(v, dict) and "peak_mb" in v]
    for key in ("peak_mb", "tree_peak_mb", "tree_pss_mb"):
        res[f"{key}_max"] = max(v.get(key) or 0 for v in steps)
    print(json.dumps(res["ratios"]), file=sys.stderr)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    main()
