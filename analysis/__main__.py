"""`python -m analysis` is the `benchreport` command."""
import sys

from analysis.cli import main

sys.exit(main())
