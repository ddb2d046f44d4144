"""The result budget through a real server: it counts UTF-8 bytes, and never cuts a value an
agent passes back verbatim (a `path`, an `id`, a `root`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.helpers import SLEEP_BACKEND, Server, call, minimal_env

BUDGET = 4000


def _project(tmp_path: Path) -> str:
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    return str(tmp_path)


def _echoing_server() -> Server:
    env = {**SLEEP_BACKEND, "SLEEP_BACKEND_ECHO": "1"}
    return Server("--result-bytes", str(BUDGET), env=minimal_env(**env))


def _text_and_body(reply: dict) -> tuple[str, dict]:  # type: ignore[type-arg]
    result = reply["result"]
    return result["content"][0]["text"], result["structuredContent"]


def test_the_budget_counts_utf8_bytes_not_characters(tmp_path: Path) -> None:
    text = "⊢" * 1500  # 1,500 characters, 4,500 bytes: over the budget only in bytes
    server = _echoing_server()
    try:
        reply = server.ask(
            call(
                1,
                "lean_run_at",
                {
                    "path": "A.lean",
                    "line": 0,
                    "character": 0,
                    "text": text,
                    "workspace": {"root": _project(tmp_path)},
                },
            )
        )
    finally:
        server.close()
    answer, body = _text_and_body(reply)
    assert len(answer.encode("utf-8")) <= BUDGET
    assert body["truncated"]["arguments.text"] > 0
    assert json.loads(answer) == body


def test_a_path_is_never_cut_even_when_other_text_must_be(tmp_path: Path) -> None:
    # 1,500 bytes, echoed twice (the call's path and its arguments): fits only whole. Were paths
    # cut like other text, one cap for all three strings would be under a third of the budget.
    path = "é" * 50 + "a" * 1395 + ".lean"
    server = _echoing_server()
    try:
        reply = server.ask(
            call(
                1,
                "lean_run_at",
                {
                    "path": path,
                    "line": 0,
                    "character": 0,
                    "text": "exact foo " * 800,
                    "workspace": {"root": _project(tmp_path)},
                },
            )
        )
    finally:
        server.close()
    text, body = _text_and_body(reply)
    assert len(text.encode("utf-8")) <= BUDGET
    assert body["arguments"]["path"] == path
    assert body["truncated"]["arguments.text"] > 0
