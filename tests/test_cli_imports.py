"""The command keeps jsonschema from importing rfc3987-syntax (issue 45): JupyterLab's extras bring
it (jupyter-events asks for jsonschema[format-nongpl]) and it compiles a grammar at import, about a
second in every process that imports nbformat. A stand-in module on the path says when it is
imported: a plain import of nbformat does import it (the stand-in is reachable), the command's
process does not."""

from __future__ import annotations

import os
import subprocess
import sys


def _imports_stand_in(tmp_path, code: str) -> bool:
    (tmp_path / "rfc3987_syntax.py").write_text(
        "import sys\nsys.stderr.write('STAND-IN IMPORTED\\n')\ndef is_valid_syntax(rule, text):\n    return True\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return "STAND-IN IMPORTED" in proc.stderr


def test_the_command_never_imports_rfc3987_syntax(tmp_path):
    assert _imports_stand_in(tmp_path, "import nbformat")
    after_command = "from benchreport.cli import main\nmain(['schema'])\nimport nbformat, papermill, nbconvert"
    assert not _imports_stand_in(tmp_path, after_command)
