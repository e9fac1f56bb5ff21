"""What the loader says about a file it could not use: refused (bad) or skipped (no results)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """A file that breaks the contract: `PATH: JSON-PATH: what was expected, what was found`."""

    path: str
    json_path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.json_path}: {self.message}"

    def as_dict(self) -> dict:
        return {"path": self.path, "json_path": self.json_path, "message": self.message}


@dataclass(frozen=True)
class Skipped:
    """A file a harness writes beside its results that carries none (logs, twins, inputs)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: skipped: {self.reason}"

    def as_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}


class RunFileError(ValueError):
    """Raised inside the loader for one bad field; becomes a Refusal naming the file."""

    def __init__(self, json_path: str, message: str):
        super().__init__(f"{json_path}: {message}")
        self.json_path = json_path
        self.message = message


class DataSetError(ValueError):
    """The data set as a whole cannot be analysed as asked (e.g. an unknown --baseline,
    several incumbents); the command line prints it as one line and exits 2."""
