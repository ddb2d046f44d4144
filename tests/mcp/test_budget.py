"""The byte budget of tool results: stable cuts that say exactly what they left out."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from beam_mcp.budget import bound
from beam_mcp.wire import text_of, tool_result_message


def size(value: Any) -> int:
    return len(text_of(value).encode("utf-8"))


def test_a_body_that_fits_is_untouched() -> None:
    body = {"items": list(range(10)), "path": "Main.lean"}
    assert bound(body, 1000, size) is body


def test_the_longest_array_loses_items_first() -> None:
    body = {"workspace": {"root": "/p"}, "short": [1, 2, 3], "long": [{"m": "x" * 20}] * 200}
    cut = bound(body, 600, size)
    assert size(cut) <= 600
    assert cut["short"] == [1, 2, 3]
    kept = len(cut["long"])
    assert 0 < kept < 200
    assert cut["truncated"] == {"long": 200 - kept}
    assert cut["long"] == body["long"][:kept]


def test_then_the_longest_strings() -> None:
    body = {"path": "A" * 300, "hover": "h" * 5000, "note": "short"}
    cut = bound(body, 1000, size)
    assert size(cut) <= 1000
    assert cut["path"] == body["path"]  # passed back verbatim by agents: never cut
    assert cut["note"] == "short"
    omitted = cut["truncated"]["hover"]
    assert len(cut["hover"]) + omitted == 5000


def test_nested_fields_are_named_by_dotted_paths() -> None:
    goals = [{"hyps": [{"names": ["h"], "type": "t" * 40}] * 100, "target": "⊢ x"}]
    body = {"goals": goals}
    cut = bound(body, 900, size)
    assert set(cut["truncated"]) == {"goals.0.hyps"}


@given(st.lists(st.text(max_size=60), max_size=80), st.integers(min_value=200, max_value=3000))
def test_every_cut_fits_and_counts_what_it_omitted(texts: list[str], budget: int) -> None:
    body = {"items": [{"message": t} for t in texts], "other": texts[:3]}
    cut = bound(body, budget, size)
    assert size(cut) <= budget or (cut["items"] == [] and cut["other"] == [])
    omitted = cut.get("truncated", {})
    assert len(cut["items"]) + omitted.get("items", 0) == len(texts)
    assert cut == bound(body, budget, size)  # stable


def test_result_text_has_no_escapes_and_respects_the_budget() -> None:
    body = {"goals": [{"target": "⊢ p ∧ q"}] * 2000}
    raw = tool_result_message(1, body, False, {}, 20_000)
    message = json.loads(raw)
    text = message["result"]["content"][0]["text"]
    assert "\\u" not in text and "⊢" in text
    assert len(text.encode("utf-8")) <= 20_000
    structured = message["result"]["structuredContent"]
    assert json.loads(text) == structured
    assert structured["truncated"]["goals"] == 2000 - len(structured["goals"])
