"""Names benchreport reserves for itself in the folders it reads and writes.

A base module (layer 0) so that reading (`benchreport.load`, which never reads benchreport's own
output as runs) and writing (`benchreport.outdir`, which marks its output folders) share one name
without the reading layer importing the writing one.
"""

from __future__ import annotations

__all__ = ["OUTPUT_MARKER"]

#: the file that makes a folder benchreport's own output (hidden, so never read as a run file)
OUTPUT_MARKER = ".benchreport-output"
