"""The JSON Schema of `benchreport.run/1`, generated from the Structs in benchreport.load.native.

The committed file `run-1.schema.json` is what external tools validate against; a test
checks it equals `schema_text()` so it cannot drift from the loader.
"""

from __future__ import annotations

import json
from importlib import resources

import msgspec

SCHEMA_FILE = "run-1.schema.json"


def schema_dict() -> dict:
    """JSON Schema (2020-12) for the native run file, from the loader's own types."""
    from benchreport.load.native import FORMAT, Run

    schema = msgspec.json.schema(Run)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://benchreport.invalid/schema/run-1.schema.json"
    schema["title"] = FORMAT
    schema["description"] = (
        "One benchmark run: one seat, one harness invocation, one day, one pass "
        "(spec/run-format.md). Rules beyond this schema (units match metrics, counts "
        "within totals, unique run_id, one model per seat id) are checked by the loader."
    )
    run_def = schema["$defs"]["Run"]
    run_def["properties"]["format"]["const"] = FORMAT
    run_def["anyOf"] = [
        {"required": [k], "properties": {k: {"minItems": 1}}} for k in ("measurements", "requests", "exams")
    ]
    return schema


def schema_text() -> str:
    return json.dumps(schema_dict(), indent=2, sort_keys=True) + "\n"


def packaged_schema() -> dict:
    """The committed schema file shipped in the package."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
