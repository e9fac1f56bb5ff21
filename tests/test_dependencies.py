"""environment.yml (conda) asks for what pyproject.toml asks for, with the same lower bounds."""
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
    return text[text.index("\ndependencies:"):]


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = _requirements(project["dependencies"] + project["optional-dependencies"]["test"])
    listed = _requirements(m.group(1) for m in re.finditer(r"^\s*-\s+([A-Za-z][^#\n]*?)\s*$",
                                                           _dependencies_section(), re.M)
                           if not m.group(1).endswith(":"))
    for name, spec in wanted.items():
        conda = CONDA_NAMES.get(name, name)
        assert conda in listed, f"{conda} (pyproject.toml: {name}{spec}) is missing from environment.yml"
        assert listed[conda] == spec, f"{conda}: environment.yml says {listed[conda]!r}, pyproject.toml {spec!r}"
    extra = set(listed) - {CONDA_NAMES.get(n, n) for n in wanted} - {"python", "pip"}
    assert not extra, f"environment.yml asks for {sorted(extra)}, which pyproject.toml does not"
