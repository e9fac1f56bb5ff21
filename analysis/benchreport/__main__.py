"""`python -m benchreport` is the `benchreport` command."""

import sys

from benchreport.cli import main

sys.exit(main())
