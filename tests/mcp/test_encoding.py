"""The one-pass encoding of `tools/call` answers agrees with encoding the whole answer."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from beam_mcp.wire import compact, text_of, tool_result_message

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(
    rid=st.integers() | st.text(),
    body=st.dictionaries(st.text(), JSON, max_size=5),
    is_error=st.booleans(),
    extra=st.sampled_from([{}, {"resultType": "complete", "_meta": {"k": {"name": "x"}}}]),
)
def test_spliced_answer_is_the_answer(
    rid: Any, body: dict[str, Any], is_error: bool, extra: dict[str, Any]
) -> None:
    raw = tool_result_message(rid, body, is_error, extra)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    expected = {
        "jsonrpc": "2.0",
        "id": rid,
        "result": {
            "content": [{"type": "text", "text": _text(body)}],
            "structuredContent": body,
            "isError": is_error,
            **extra,
        },
    }
    assert json.loads(raw) == expected


def _text(body: dict[str, Any]) -> str:
    """Non-ASCII as itself, unless a lone surrogate forces the ASCII encoding."""
    text = text_of(body)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return compact(body)
    return text
