"""The `benchreport` command line: `commands` (every command and `main`), `parser` (argparse),
`common` (exit codes, the one way in), `writers` (figure and table), `plan`, `lab`, `log`.

The console script is `benchreport.cli:run` (pyproject.toml): `main`, then exit.
"""

from benchreport.cli.commands import build_request, main, run, run_build

__all__ = ["main", "run", "build_request", "run_build"]
