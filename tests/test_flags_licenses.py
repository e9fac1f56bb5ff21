"""The licence list: non-commercial licences in every spelling, expressions, unknowns, no false alarms."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from benchreport.flags.licenses import classify, load_list, normalise


@pytest.mark.parametrize(
    "text",
    [
        "CC-BY-NC-ND-4.0",
        "cc-by-nc-nd-4.0",
        "CC BY-NC-ND 4.0",
        "cc_by_nc_nd_4.0",
        "CC-BY-NC-4.0",
        "CC-BY-NC-2.0",
        "CC-BY-NC-1.0",
        "CC-BY-NC-SA-4.0",
        "CC-BY-NC-SA-3.0-IGO",
        "CC-BY-NC-SA-2.0-UK",
        "CC-BY-NC-ND-3.0-DE",
        "cc-by-nc",
        "CC BY-NC 2.0 KR",
        "Creative Commons Attribution-NonCommercial-NoDerivatives 4.0 International",
        "PolyForm-Noncommercial-1.0.0",
        "NCGL-UK-2.0",
        "MNPL-0.1",
        "mnpl",
        "MRL-0.1",
        "qwen-research",
        "apple-amlr",
        "deepfloyd-if-license",
        "sai-nc-community",
        "MIT AND CC-BY-NC-4.0",
        "(MIT OR Apache-2.0) AND CC-BY-NC-SA-4.0",
        "CC-BY-NC-4.0 OR CC-BY-NC-SA-4.0",
    ],
)
def test_noncommercial(text):
    v = classify(text)
    assert v.kind == "noncommercial", text
    assert v.source and v.source.startswith("https://")


@pytest.mark.parametrize(
    "text",
    [
        "MIT",
        "Apache-2.0",
        "BSD-3-Clause",
        "CC-BY-4.0",
        "CC-BY-SA-4.0",
        "CC-BY-ND-4.0",
        "CC0-1.0",
        "NCSA",
        "Unlicense",
        "llama3",
        "gemma",
        "MIT OR CC-BY-NC-4.0",
        "Apache-2.0 WITH LLVM-exception",
        "GPL-3.0-or-later",
        "OpenRAIL-M",
    ],
)
def test_commercial_use_allowed_or_not_forbidden(text):
    assert classify(text).kind == "ok", text


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "NOASSERTION",
        "noassertion",
        "NONE",
        "other",
        "UNKNOWN",
        "LicenseRef-acme-internal",
        "UNLICENSED",
        "proprietary",
    ],
)
def test_unknown(text):
    assert classify(text).kind == "unknown", text


def test_nan_and_na_are_unknown():
    import pandas as pd

    assert classify(float("nan")).kind == "unknown"
    assert classify(pd.NA).kind == "unknown"


def test_normalise():
    assert normalise("  CC BY-NC-ND 4.0 ") == "CC-BY-NC-ND-4.0"
    assert normalise("cc__by//nc") == "CC-BY-NC"


def test_every_list_entry_has_a_source():
    data = json.loads(resources.files("benchreport.flags").joinpath("licenses.json").read_text("utf-8"))
    for entry in data["noncommercial"]["ids"]:
        assert entry["source"].startswith("https://") and entry["name"], entry
    for entry in data["noncommercial"]["patterns"]:
        assert entry["source"] and entry["why"], entry
    assert data["unknown"]["source"]
    # the whole CC NonCommercial family on the SPDX list is named explicitly
    ids = {normalise(e["id"]) for e in data["noncommercial"]["ids"]}
    for version in ("1.0", "2.0", "2.5", "3.0", "4.0"):
        for kind in ("NC", "NC-SA", "NC-ND"):
            assert f"CC-BY-{kind}-{version}" in ids
    assert load_list()["ids"]
