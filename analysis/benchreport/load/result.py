"""What `benchreport.load.load` returns: the runs loaded, and the files refused and skipped."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from benchreport.load import native
from benchreport.load.errors import Refusal, Skipped

__all__ = ["LoadedRun", "LoadResult"]


@dataclass
class LoadedRun:
    """A validated run and where it came from."""

    run: native.Run
    source_file: str
    sha256: str
    source_format: str = "native"
    assumptions: tuple[str, ...] = ()
    #: figures an importer found to differ from an aggregate the harness wrote (dicts; see
    #: benchreport.load.harness._common.Check); the runs table's `figure_checks`
    checks: tuple[dict, ...] = ()


@dataclass
class LoadResult:
    runs: list[LoadedRun] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: the SHA-256 of the bytes read of every file that was read (shown path -> digest), the
    #: refused ones too: the run store compares a refusal's content to see that a cause is fixed
    digests: dict[str, str] = field(default_factory=dict)
    #: read from a run store: how many file versions it has in use (the runs are in the store)
    store_versions: int | None = None

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def refused_files(self) -> int:
        """How many files were refused (one file may be refused for several reasons, or lines)."""
        return len({r.path for r in self.refused})

    def refused_json(self) -> str:
        """`refused.json`: every refused and skipped file, and why."""
        return (
            json.dumps(
                {"refused": [r.as_dict() for r in self.refused], "skipped": [s.as_dict() for s in self.skipped]},
                indent=2,
            )
            + "\n"
        )

    def add(self, outcome: Refusal | Skipped) -> None:
        """Record a file refused or skipped."""
        (self.skipped if isinstance(outcome, Skipped) else self.refused).append(outcome)
