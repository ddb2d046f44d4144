"""The basic scenario against a real ``lake serve``; runs only when ``lake`` is on PATH."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient

pytestmark = [pytest.mark.real_lean, pytest.mark.anyio]

LAKE = shutil.which("lake")


@pytest.mark.skipif(LAKE is None, reason="no `lake` on PATH (no Lean toolchain on this machine)")
async def test_real_lake_serve_basic_scenario(tmp_path: Path) -> None:
    assert LAKE is not None
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lakefile.toml").write_text('name = "proj"\n')
    file = root / "A.lean"
    text = "def answerA : Nat := 42\ntheorem foo : 1 + 1 = 2 := by sorry\n"
    file.write_text(text)
    uri = file.as_uri()
    seen: list[tuple[str, object]] = []
    async with LspClient.launch([LAKE, "serve", "--"], cwd=root, request_timeout=600) as client:
        client.add_notification_handler(None, lambda m, p: seen.append((m, p)))
        await client.initialize(messages.initialize_params(root), timeout=600)
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, text))
        await client.request("textDocument/waitForDiagnostics", {"uri": uri, "version": 1})
        hover = await client.request("textDocument/hover", messages.position(uri, 0, 4))
        assert "answerA : Nat" in hover["contents"]["value"]
        publishes = [p for m, p in seen if m == "textDocument/publishDiagnostics"]
        messages_ = [d["message"] for d in publishes[-1]["diagnostics"]]  # type: ignore[index]
        assert any("declaration uses" in m and "sorry" in m for m in messages_)
