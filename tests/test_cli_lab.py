"""`benchreport lab DIR` (issue 31): the explore notebook beside the user's runs, `runs` set to DIR;
a notebook already there is kept; the placed notebook runs top to bottom on that folder."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "example"


def lab(*argv):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", "lab", *map(str, argv)], capture_output=True, text=True, timeout=120
    )


def _parameters(path: Path) -> dict:
    """The parameters cell's names and values, read by Python's own parser."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}


def test_lab_places_the_notebook_with_runs_pointing_at_the_folder(tmp_path):
    runs = tmp_path / "my runs's folder"  # a quote in the path: the parameter stays valid Python
    shutil.copytree(EXAMPLE, runs)
    proc = lab(runs, "--no-start")
    assert proc.returncode == 0, proc.stderr
    placed = runs / "explore.ipynb"
    params = _parameters(placed)
    assert params["runs"] == [str(runs.resolve())]
    shipped = _parameters(ROOT / "notebooks" / "explore.ipynb")
    assert {k: v for k, v in params.items() if k != "runs"} == {k: v for k, v in shipped.items() if k != "runs"}
    assert re.search(r"(jupyter lab|-m jupyterlab)( --allow-root)? explore\.ipynb", proc.stderr), proc.stderr


def test_a_notebook_already_there_is_kept(tmp_path):
    (tmp_path / "explore.ipynb").write_text("mine", encoding="utf-8")
    proc = lab(tmp_path, "--no-start")
    assert proc.returncode == 0 and "kept" in proc.stderr
    assert (tmp_path / "explore.ipynb").read_text(encoding="utf-8") == "mine"


def test_a_folder_that_does_not_exist_is_exit_2(tmp_path):
    proc = lab(tmp_path / "nope", "--no-start")
    assert proc.returncode == 2 and "no such folder" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "nope").exists()


def test_the_placed_notebook_runs_on_the_folder_it_sits_in(tmp_path):
    import papermill as pm

    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLE, runs)
    assert lab(runs, "--no-start").returncode == 0
    out = tmp_path / "executed.ipynb"
    pm.execute_notebook(
        str(runs / "explore.ipynb"),
        str(out),
        parameters={"n_boot": 200},
        cwd=str(tmp_path),
        kernel_name="python3",
        progress_bar=False,
    )
    text = out.read_text(encoding="utf-8")
    assert "14 runs, 9 seats" in text  # the example's runs, read from DIR (not the package's default)


def test_as_root_jupyter_is_told_to_allow_it(tmp_path):
    """Most GPU containers run as root, where Jupyter refuses to start without its own --allow-root
    (issue 45): the command passes it and says so; --allow-root is accepted when not root."""
    import os

    proc = lab(tmp_path, "--no-start", "--allow-root")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"(jupyter lab|-m jupyterlab) --allow-root explore\.ipynb", proc.stderr), proc.stderr
    if os.geteuid() == 0:
        assert "running as root" in proc.stderr
        assert "--allow-root explore.ipynb" in lab(tmp_path, "--no-start").stderr


def _lab_in_process(folder, monkeypatch, capsys, euid, *flags):
    """`benchreport lab FOLDER --no-start FLAGS` in this process, the effective user id `euid`."""
    from benchreport.cli import main

    monkeypatch.setattr(os, "geteuid", lambda: euid)
    assert main(["lab", str(folder), "--no-start", *flags]) == 0
    return capsys.readouterr().err


def test_not_root_no_allow_root_unless_asked(tmp_path, monkeypatch, capsys):
    """As another user the command is Jupyter's plain one; --allow-root still passes the flag on;
    as root (euid 0, simulated or real) it is always passed and said."""
    plain = _lab_in_process(tmp_path, monkeypatch, capsys, 1000)
    assert "--allow-root" not in plain and "running as root" not in plain and "explore.ipynb" in plain
    asked = _lab_in_process(tmp_path, monkeypatch, capsys, 1000, "--allow-root")
    assert "--allow-root explore.ipynb" in asked and "running as root" not in asked
    root = _lab_in_process(tmp_path, monkeypatch, capsys, 0)
    assert "--allow-root explore.ipynb" in root and "running as root" in root


def test_never_writes_through_a_symlink_or_onto_a_folder(tmp_path):
    outside = tmp_path / "outside.ipynb"
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "explore.ipynb").symlink_to(outside)  # dangling: writing through it would create outside.ipynb
    proc = lab(runs, "--no-start")
    assert proc.returncode == 2 and "symbolic link" in proc.stderr and not outside.exists()
    outside.write_text("someone else's notebook", encoding="utf-8")  # no longer dangling: still refused
    proc = lab(runs, "--no-start")
    assert proc.returncode == 2 and "symbolic link" in proc.stderr and "yours" not in proc.stderr
    assert outside.read_text(encoding="utf-8") == "someone else's notebook"
    other = tmp_path / "other"
    (other / "explore.ipynb").mkdir(parents=True)
    proc = lab(other, "--no-start")
    assert proc.returncode == 2 and "a folder, not a notebook" in proc.stderr
