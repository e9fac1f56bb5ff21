"""`benchreport lab DIR`: the analyst's notebook beside the user's runs (issue 31).

Copies the explore notebook shipped with the package into DIR as ``explore.ipynb`` (a notebook
already there is the user's and is kept), with its ``runs`` parameter set to DIR, then starts
JupyterLab on it when JupyterLab is installed, or says how to.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["lab_command", "place_notebook", "NOTEBOOK_NAME"]

#: the notebook's name in DIR
NOTEBOOK_NAME = "explore.ipynb"

_RUNS_LINE = re.compile(r"^runs = .*?(\s+#.*)?$")


def place_notebook(folder: Path) -> tuple[Path, bool]:
    """DIR/explore.ipynb with `runs` set to DIR (absolute), copied from the package's notebook;
    (its path, whether it was written). A notebook already there is left as it is."""
    from benchreport.resources import notebook_path

    target = folder / NOTEBOOK_NAME
    if target.exists():
        return target, False
    nb = json.loads(notebook_path(NOTEBOOK_NAME).read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    lines = "".join(cell["source"]).split("\n")
    hits = [i for i, line in enumerate(lines) if _RUNS_LINE.match(line)]
    if len(hits) != 1:
        raise RuntimeError(f"the packaged {NOTEBOOK_NAME} has {len(hits)} `runs = ...` lines in its parameters cell")
    comment = _RUNS_LINE.match(lines[hits[0]]).group(1) or ""
    lines[hits[0]] = f"runs = [{str(folder.resolve())!r}]{comment}"
    cell["source"] = [line + "\n" for line in lines[:-1]] + [lines[-1]]
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target, True


def _jupyter() -> list[str] | None:
    """The command that starts JupyterLab from this environment, or None when it is not installed."""
    if importlib.util.find_spec("jupyterlab") is None:
        return None
    here = Path(sys.executable).parent / "jupyter"
    exe = str(here) if here.exists() else shutil.which("jupyter")
    return [exe, "lab"] if exe else [sys.executable, "-m", "jupyterlab"]


def lab_command(args) -> int:
    """Place the notebook in DIR, then start JupyterLab there (unless --no-start)."""
    from benchreport.cli_common import EXIT_OK, UsageError, one_line

    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"{one_line(str(folder))}: no such folder (give the folder of your runs)")
    try:
        target, written = place_notebook(folder)
    except OSError as exc:
        raise UsageError(f"could not write {one_line(str(folder / NOTEBOOK_NAME))}: {exc.strerror or exc}") from None
    shown = one_line(str(target))
    print(f"wrote {shown} (runs = {one_line(str(folder.resolve()))})" if written
          else f"kept {shown}: it is already there (yours; its runs parameter unchanged)", file=sys.stderr)
    start = _jupyter()
    if args.no_start or start is None:
        how = (" ".join(start[:2]) if start else "jupyter lab") + f" {NOTEBOOK_NAME}"
        need = "" if start else " (JupyterLab is not installed here: pip install 'benchreport[lab]')"
        print(f"to explore: cd {one_line(str(folder))} && {how}{need}", file=sys.stderr)
        return EXIT_OK
    return subprocess.call([*start, NOTEBOOK_NAME], cwd=folder)
