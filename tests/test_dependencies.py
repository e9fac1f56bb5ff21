"""environment.yml (conda) asks for what pyproject.toml asks for, every extra included, with the same
lower bounds; the extras name what their part imports (benchreport.extras)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: conda-forge names that differ from the PyPI ones
CONDA_NAMES = {"duckdb": "python-duckdb"}


def _requirements(lines) -> dict[str, str]:
    """name -> version specifier, names lower-cased ("pandas>=2.2" -> {"pandas": ">=2.2"})."""
    out = {}
    for line in lines:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", line.strip())
        if m:
            out[m.group(1).lower()] = m.group(2).replace(" ", "")
    return out


def _dependencies_section() -> str:
    text = (ROOT / "environment.yml").read_text()
    return text[text.index("\ndependencies:") :]


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [
        req
        for group in project["optional-dependencies"].values()
        for req in group
        if not req.startswith("benchreport[")
    ]  # environment.yml installs every extra
    wanted = _requirements(project["dependencies"] + extras)
    listed = _requirements(
        m.group(1)
        for m in re.finditer(r"^\s*-\s+([A-Za-z][^#\n]*?)\s*$", _dependencies_section(), re.M)
        if not m.group(1).endswith(":")
    )
    for name, spec in wanted.items():
        conda = CONDA_NAMES.get(name, name)
        assert conda in listed, f"{conda} (pyproject.toml: {name}{spec}) is missing from environment.yml"
        assert listed[conda] == spec, f"{conda}: environment.yml says {listed[conda]!r}, pyproject.toml {spec!r}"
    extra = set(listed) - {CONDA_NAMES.get(n, n) for n in wanted} - {"python", "pip"}
    assert not extra, f"environment.yml asks for {sorted(extra)}, which pyproject.toml does not"


def test_the_extras_module_names_the_packages_of_each_extra():
    from benchreport import extras

    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    import_names = {"pyyaml": "yaml"}
    for extra, names in extras.EXTRAS.items():
        listed = set()
        for req in groups[extra]:
            if req.startswith("benchreport["):
                for inner in req[len("benchreport[") : -1].split(","):
                    listed |= set(_requirements(groups[inner]))
            else:
                listed |= set(_requirements([req]))
        assert {import_names.get(n, n) for n in listed} == set(names), extra


def test_run_time_imports_no_extra_package():
    """`benchreport build --format html` imports nothing of an extra: a plain install serves cron."""
    import subprocess
    import sys

    code = (
        "import sys, benchreport.cli, benchreport.pipeline, benchreport.report.build, benchreport.report.render.html, "
        "benchreport.report.catalog, benchreport.store; "
        "print(sorted(m for m in ('weasyprint', 'itables', 'ipywidgets', 'plotly', 'jupyterlab', 'pingouin') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
