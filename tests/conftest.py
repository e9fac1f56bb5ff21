import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def cli(capsys):
    """`benchreport ARGS` in this process: returncode, stdout and stderr as a subprocess would
    give them."""
    from benchreport.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return run


def pytest_generate_tests(metafunc):
    """A test asking for `store_engine` runs on each run-store engine (DuckLake, the default, and
    the Parquet store of before); one marked `parquet_layout` on the Parquet store only."""
    if "store_engine" in metafunc.fixturenames:
        only_parquet = metafunc.definition.get_closest_marker("parquet_layout") is not None
        metafunc.parametrize("store_engine", ["parquet"] if only_parquet else ["ducklake", "parquet"])
