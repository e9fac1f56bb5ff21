"""The test oracles kept beside the captured harness fixtures (`expected.json`): the harness's own
summary figures, copied out for the importer tests. They are not harness output, so a folder
holding them loads without refusals; each carries a top-level `fixture_oracle` key that says so.
"""

from __future__ import annotations

from benchreport.load.harness import ImportOutcome, SourceFile
from benchreport.load.harness._common import skip

NAME = "fixture oracle"


class _Importer:
    name = NAME

    def recognise(self, doc, path):
        return "results" if isinstance(doc, dict) and isinstance(doc.get("fixture_oracle"), str) else None

    def import_files(self, files: list[SourceFile], manifests: list) -> ImportOutcome:
        outcome = ImportOutcome()
        for source in files:
            skip(
                outcome,
                source,
                "a test oracle (fixture_oracle): the harness's figures copied out for the "
                "importer tests, not harness output",
            )
        return outcome


IMPORTER = _Importer()
