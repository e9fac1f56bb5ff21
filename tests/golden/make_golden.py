"""Regenerate the golden tables: `python tests/golden/make_golden.py`.

Only after a deliberate change to the numbers (say why in the commit). Speed work must
leave them unchanged: tests/test_golden_tables.py compares every cell (numbers to 1e-12
relative, the last-bit noise between CPUs) and two builds on one machine byte for byte.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import generate  # noqa: E402

from benchreport.load import load  # noqa: E402
from benchreport.pipeline import Options, analyse, write_analysis  # noqa: E402

TABLES = ("cells", "comparisons", "exam_deltas", "passes")
#: baseline: a single-pass seat, so ratios over requests, over passes and mixed designs all occur
OPTIONS = Options(n_boot=2000, seed=7, baseline="single-000")


def golden_tables(out: Path) -> None:
    """Analyse the example data plus a small generated fleet; write the tables into `out`."""
    with tempfile.TemporaryDirectory() as tmp:
        fleet = Path(tmp) / "fleet"
        generate(fleet, seats=3, passes=3, requests=60, concurrencies=(1, 8))
        generate(fleet, seats=3, passes=3, requests=60, concurrencies=(1, 8), seed=5, date="2026-10-25")
        single = Path(tmp) / "single"
        generate(single, seats=2, passes=1, requests=120, concurrencies=(1, 8), seed=11)
        for folder, prefix in ((fleet, "fleet"), (single, "single")):
            for f in folder.iterdir():  # own seat ids; the example's incumbent stays the only one
                text = (
                    f.read_text()
                    .replace('"seat-00', f'"{prefix}-00')
                    .replace('"role":"incumbent"', '"role":"candidate"')
                )
                f.write_text(text)
        analysis = analyse(load([ROOT / "data" / "example", fleet, single], progress=False), OPTIONS)
        write_analysis(analysis, out)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        golden_tables(Path(tmp))
        for name in TABLES:
            (HERE / f"{name}.csv").write_bytes((Path(tmp) / "tables" / f"{name}.csv").read_bytes())
    print("golden tables written")
