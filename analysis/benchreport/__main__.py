"""`python -m benchreport` is the `benchreport` command."""

from benchreport.cli import run

run()
