"""`benchreport lab DIR`: the analyst's notebook beside the user's runs (issue 31).

Copies the explore notebook shipped with the package into DIR as ``explore.ipynb`` (a notebook
already there is the user's and is kept; a symbolic link or a folder of that name is refused,
never written through), with its ``runs`` parameter set to DIR, then starts JupyterLab on it when
JupyterLab is installed, or says how to. As root (most GPU containers) Jupyter's own
``--allow-root`` is passed, and said (issue 45).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
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
    if target.is_symlink():
        raise OSError(0, "a symbolic link: not written through (remove it, or give another folder)")
    if target.is_dir():
        raise OSError(0, "a folder, not a notebook: nothing written (rename it, or give another folder)")
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
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    # created here and only here: never through a link or over a file that appeared meanwhile
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
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
    from benchreport.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError, one_line

    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"{one_line(str(folder))}: no such folder (give the folder of your runs)")
    try:
        target, written = place_notebook(folder)
    except OSError as exc:
        raise UsageError(f"could not write {one_line(str(folder / NOTEBOOK_NAME))}: {exc.strerror or exc}") from None
    shown = one_line(str(target))
    print(
        f"wrote {shown} (runs = {one_line(str(folder.resolve()))})"
        if written
        else f"kept {shown}: it is already there (yours; its runs parameter unchanged)",
        file=sys.stderr,
    )
    start = _jupyter()
    root = getattr(os, "geteuid", lambda: -1)() == 0
    extra = ["--allow-root"] if (root or getattr(args, "allow_root", False)) else []
    if root:
        print(
            "running as root (as in most GPU containers): JupyterLab is started with its own --allow-root",
            file=sys.stderr,
        )
    if args.no_start or start is None:
        how = shlex.join([*(start or ["jupyter", "lab"]), *extra, NOTEBOOK_NAME])
        need = "" if start else " (JupyterLab is not installed here: pip install 'benchreport[lab]')"
        print(f"to explore: cd {one_line(str(folder))} && {how}{need}", file=sys.stderr)
        return EXIT_OK
    code = subprocess.call([*start, *extra, NOTEBOOK_NAME], cwd=folder)
    if code not in (0, EXIT_INTERRUPTED, -2):
        print(f"benchreport lab: JupyterLab exited with {code} (its messages above)", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK if code == 0 else EXIT_INTERRUPTED
