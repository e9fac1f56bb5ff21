"""The `benchreport` command line: `commands` (every command and `main`), `parser` (argparse),
`common` (exit codes, the one way in), `writers` (figure and table), `plan`, `lab`, `log`.

The console script is `benchreport.cli:main` (pyproject.toml).
"""

from benchreport.cli.commands import build_request, main, run_build

__all__ = ["main", "build_request", "run_build"]
