"""What each harness means by each figure: the definitions table (definitions.json, issue 46).

Read from package data, checked on reading: every harness gives a value, or a value per
endpoint, for every aspect, and every value is one the aspect names. `stats.agreement` reads
it to say which definitional difference can explain a gap between two harnesses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["Definitions", "definitions"]

FORMAT = "benchreport.harness-definitions/1"


@dataclass(frozen=True)
class Definitions:
    """The aspects (metrics they bear on, their values in words) and each harness's values."""

    aspects: dict
    harnesses: dict

    def value(self, harness: str, aspect: str, endpoint: str | None = None) -> str | None:
        """The harness's code for `aspect` on `endpoint` (None: harness or aspect not in the table)."""
        d = self.harnesses.get(harness, {}).get("definitions", {}).get(aspect)
        if d is None:
            return None
        if "by_endpoint" in d:
            return d["by_endpoint"].get(endpoint or "", None)
        return d["value"]

    def words(self, aspect: str, value: str | None) -> str:
        """A value in words ('the first token, reasoning or answer')."""
        return self.aspects[aspect]["values"].get(value, "not known") if value else "not known"

    def common(self, harness: str) -> dict:
        """Which request fields give the common definitions for this harness ({} when not in the table)."""
        return self.harnesses.get(harness, {}).get("common", {})

    def source(self, harness: str) -> str:
        return self.harnesses.get(harness, {}).get("source", "")


def _check(doc: dict) -> Definitions:
    if doc.get("format") != FORMAT:
        raise ValueError(f"definitions.json: expected format {FORMAT!r}, got {doc.get('format')!r}")
    aspects, harnesses = doc["aspects"], doc["harnesses"]
    for name, h in harnesses.items():
        if not h.get("source"):
            raise ValueError(f"definitions.json: $.harnesses.{name}.source: every entry cites its source")
        for aspect, spec in aspects.items():
            d = h["definitions"].get(aspect)
            if d is None:
                raise ValueError(f"definitions.json: $.harnesses.{name}.definitions.{aspect}: missing")
            values = list(d["by_endpoint"].values()) if "by_endpoint" in d else [d.get("value")]
            for v in values:
                if v not in spec["values"]:
                    raise ValueError(f"definitions.json: $.harnesses.{name}.definitions.{aspect}: unknown value {v!r}")
    return Definitions(aspects, harnesses)


@lru_cache(maxsize=1)
def definitions() -> Definitions:
    """The definitions table shipped as package data (analysis/benchreport/load/harness/definitions.json)."""
    text = resources.files("benchreport.load.harness").joinpath("definitions.json").read_text("utf-8")
    return _check(json.loads(text))
