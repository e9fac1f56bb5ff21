"""The distribution as a user gets it: a wheel in a fresh venv, outside the repository.

`pip install -e .` hides what a wheel leaves out (the first release's wheel held no notebooks
or templates, and `benchreport build` exited 4). So the slow test builds the wheel, installs
it with its dependencies into a new venv in a temporary folder, and builds the example report
there, from a folder holding an `analysis.py` that would have shadowed the old import name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_library_folder_is_a_listed_package():
    """pyproject lists packages by hand (the import name differs from the folder): a new
    subpackage missing from the list would be missing from the wheel."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    dirs = PYPROJECT["tool"]["setuptools"]["package-dir"]
    found = set()
    for name, folder in dirs.items():
        base = ROOT / folder
        found.add(name)
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if rel.parts and "__pycache__" not in rel.parts:
                found.add(".".join((name, *rel.parts)))
    assert found == listed, (
        f"in the tree, not listed: {sorted(found - listed)}; listed, not in the tree: {sorted(listed - found)}"
    )


def test_import_name_is_benchreport_and_package_data_is_found():
    import benchreport
    from benchreport.resources import notebook_path, templates_dir

    assert notebook_path("report.ipynb").is_file()
    assert notebook_path("explore.ipynb").is_file()
    assert (templates_dir() / "benchreport" / "index.html.j2").is_file()
    assert (templates_dir() / "sections" / "table.html.j2").is_file()
    assert (templates_dir() / "explore" / "index.html.j2").is_file()
    assert benchreport.__version__ == PYPROJECT["project"]["version"]


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_builds_the_example_report(tmp_path):
    """pip wheel -> new venv -> pip install the wheel (dependencies from the package index) ->
    `benchreport build example --out X` in a folder that is not the repository."""
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        cwd=tmp_path,
        timeout=600,
    )
    (wheel,) = wheels.glob("benchreport-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    for folder, inside in (("notebooks", "notebooks"), ("templates", "templates"), ("data/example", "example")):
        for f in (ROOT / folder).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and ".ipynb_checkpoints" not in f.parts:
                name = f"benchreport/{inside}/{f.relative_to(ROOT / folder).as_posix()}"
                assert name in shipped, f"{name} is not in the wheel (package-data in pyproject.toml)"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "install", "--quiet", "--prefer-binary", str(wheel)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]

    work = tmp_path / "user"
    work.mkdir()
    (work / "analysis.py").write_text("raise SystemExit('the user module analysis.py was imported')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    # a plain install (a cron machine): no PDF engine (no WeasyPrint, and no Chromium: an empty
    # BENCHREPORT_CHROMIUM), no notebook server; the HTML report builds and says why the PDF is left
    # out; asking for the PDF is a usage error naming what to install
    listed = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True, timeout=120
    ).stdout.lower()
    assert not {"weasyprint", "jupyterlab", "pingouin", "itables"} & {line.split("==")[0] for line in listed.split()}
    bare = {**env, "BENCHREPORT_CHROMIUM": ""}
    # the example runs come with the wheel (issue 45): no clone needed to try it
    example = subprocess.run(
        [str(bindir / "benchreport"), "example", "example"], cwd=work, env=bare, capture_output=True, text=True
    )
    assert example.returncode == 0 and (work / "example" / "fleet-paper").is_dir(), example.stderr
    run = subprocess.run(
        [str(bindir / "benchreport"), "build", "example", "--out", "H"],
        cwd=work,
        env=bare,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "pip install 'benchreport[pdf]'" in run.stderr and not (work / "H" / "report.pdf").exists()
    assert (work / "H" / "report.html").is_file()
    asked = subprocess.run(
        [str(bindir / "benchreport"), "build", "example", "--out", "P", "--format", "pdf"],
        cwd=work,
        env=bare,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert asked.returncode == 2 and "benchreport[pdf]" in asked.stderr, asked.stderr[-2000:]
    if shutil.which("chromium"):  # the same plain install prints the PDF with the machine's Chromium
        run = subprocess.run(
            [str(bindir / "benchreport"), "build", "example", "--out", "C"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0 and (work / "C" / "report.pdf").stat().st_size > 10_000, run.stderr[-3000:]

    pip = subprocess.run(
        [str(bindir / "python"), "-m", "pip", "install", "--quiet", "--prefer-binary", f"{wheel}[pdf]"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    run = subprocess.run(
        [str(bindir / "benchreport"), "build", "example", "--out", "X", "--pdf-engine", "weasyprint"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = work / "X"
    assert (out / "report.html").stat().st_size > 10_000
    from pypdf import PdfReader

    text = "".join(page.extract_text() or "" for page in PdfReader(out / "report.pdf").pages)
    assert "What these numbers will not carry" in text

    # the package runs from the wheel, not from the repository
    where = subprocess.run(
        [str(bindir / "python"), "-c", "import benchreport, sys; print(benchreport.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.returncode == 0, where.stderr
    assert str(venv) in where.stdout and str(ROOT) not in where.stdout
    mod = subprocess.run(
        [str(bindir / "python"), "-m", "benchreport", "--version"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert mod.returncode == 0 and mod.stdout.startswith("benchreport "), mod.stderr
