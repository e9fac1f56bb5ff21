"""Failed requests are told by the kind of error, quoted whole to a word's end (issues 26, 27).

The SGLang capture's overflow run failed 3 of 12 requests with HTTP 400 bodies that differ only
in their token counts; a reader needs one quote of that message, not three JSON bodies cut
mid-word and spliced together.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchreport import format as F
from benchreport.flags.rules.faults import ERROR_CHARS, _error_text, error_counts

SGLANG = Path(__file__).parent / "fixtures" / "harness" / "sglang"


def test_an_openai_error_body_is_quoted_by_its_message():
    body = (
        'Bad Request: {"object":"error","message":"This model\'s maximum context length is 70 tokens. '
        'However, you requested 84 tokens.","type":"BadRequestError","param":null,"code":400}'
    )
    assert _error_text(body, None) == (
        "Bad Request: This model's maximum context length is 70 tokens. However, you requested 84 tokens."
    )
    assert _error_text(None, "length") == "finish_reason length"
    assert _error_text("  ", None) == "failed"


def test_a_long_message_is_cut_at_a_word_end():
    text = _error_text("word " * 100, None)
    assert len(text) <= ERROR_CHARS and text.endswith("word…")
    assert F.words_cut("short", 10) == "short"
    assert F.words_cut("abcdefghijklmnop", 8) == "abcdefg…"


def test_messages_equal_but_for_numbers_are_one_kind():
    texts = ["needs 84 tokens", "needs 77 tokens", "timeout", "needs 84 tokens", "needs 79.5 tokens"]
    kinds = error_counts(texts)
    assert [(k.error, k.count, k.variants) for k in kinds] == [("needs 84 tokens", 4, 3), ("timeout", 1, 1)]


def test_the_sglang_overflow_run_reads_as_one_quoted_kind():
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(SGLANG), "--json", "--quiet"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    failed = [f for f in json.loads(proc.stdout) if f["code"] == "requests.failed"]
    assert len(failed) == 1
    message = failed[0]["message"]
    assert "3× “Bad Request: This model's maximum context length is 70 tokens." in message
    assert "3 messages of this form, their numbers differ" in message
    assert '{"object"' not in message and message.count("×") == 1
