"""Hover, definition (both result forms), references, symbols, signature help, code actions."""

from __future__ import annotations

from pathlib import Path

import pytest

from beam_runtime.lsp import messages
from beam_runtime.lsp.errors import ResponseError
from tests.lsp.harness import open_and_wait, session

pytestmark = pytest.mark.anyio

MAIN = (
    "import Defs\n"
    "def answerA : Nat := 42\n"
    "def sigTarget (x y : Nat) : Nat := x\n"
    "def sigUse : Nat :=\n"
    "  sigTarget 1 2\n"
    "def useImported : Nat := base\n"
    "namespace Space\n"
    "theorem inner : True := by\n"
    "  sorry\n"
    "end Space\n"
)


@pytest.fixture
def files(project: Path) -> tuple[str, str]:
    (project / "Defs.lean").write_text("/-- The base value. -/\ndef base : Nat := 7\n")
    return (project / "Main.lean").as_uri(), (project / "Defs.lean").as_uri()


async def test_hover(project: Path, files: tuple[str, str]) -> None:
    main, _ = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        hover = await client.request("textDocument/hover", messages.position(main, 1, 4))
        assert "answerA : Nat" in hover["contents"]["value"]
        assert hover["range"] == {
            "start": {"line": 1, "character": 4},
            "end": {"line": 1, "character": 11},
        }
        imported = await client.request("textDocument/hover", messages.position(main, 5, 26))
        assert "*import Defs*" in imported["contents"]["value"]
        assert await client.request("textDocument/hover", messages.position(main, 0, 20)) is None


async def test_definition_link_in_file_and_location_across_files(
    project: Path, files: tuple[str, str]
) -> None:
    main, defs = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        (link,) = await client.request("textDocument/definition", messages.position(main, 4, 3))
        assert link["targetUri"] == main
        assert link["targetSelectionRange"]["start"] == {"line": 2, "character": 4}
        assert link["originSelectionRange"]["start"] == {"line": 4, "character": 2}
        (location,) = await client.request(
            "textDocument/definition", messages.position(main, 5, 26)
        )
        assert location["uri"] == defs
        assert location["range"]["start"] == {"line": 1, "character": 0}


@pytest.mark.parametrize("form, key", [("link", "targetUri"), ("location", "uri")])
async def test_definition_form_switch(
    project: Path, files: tuple[str, str], form: str, key: str
) -> None:
    main, _ = files
    async with session(project, FAKE_LEAN_DEFINITION_FORM=form) as (client, _):
        await open_and_wait(client, main, MAIN)
        for line, col in ((4, 3), (5, 26)):
            (result,) = await client.request(
                "textDocument/definition", messages.position(main, line, col)
            )
            assert key in result


async def test_references(project: Path, files: tuple[str, str]) -> None:
    main, _ = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        params = {**messages.position(main, 2, 6), "context": {"includeDeclaration": False}}
        refs = await client.request("textDocument/references", params)
        assert [r["range"]["start"]["line"] for r in refs] == [4]
        params["context"] = {"includeDeclaration": True}
        refs = await client.request("textDocument/references", params)
        assert sorted(r["range"]["start"]["line"] for r in refs) == [2, 4]


async def test_document_and_workspace_symbols(project: Path, files: tuple[str, str]) -> None:
    main, defs = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        symbols = await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": main}}
        )
        names = [(s["name"], s["kind"]) for s in symbols]
        assert ("answerA", 6) in names and ("Space", 3) in names
        space = next(s for s in symbols if s["name"] == "Space")
        assert [c["name"] for c in space["children"]] == ["inner"]
        assert await client.request("workspace/symbol", {"query": ""}) == []
        found = await client.request("workspace/symbol", {"query": "base"})
        assert [(f["name"], f["location"]["uri"]) for f in found] == [("base", defs)]
        inner = await client.request("workspace/symbol", {"query": "Space.inn"})
        assert inner[0]["name"] == "Space.inner" and inner[0]["kind"] == 14


async def test_signature_help(project: Path, files: tuple[str, str]) -> None:
    main, _ = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        help_ = await client.request("textDocument/signatureHelp", messages.position(main, 4, 12))
        assert "x y : Nat" in help_["signatures"][0]["label"]
        none = await client.request("textDocument/signatureHelp", messages.position(main, 1, 2))
        assert none is None


async def test_code_action_resolve(project: Path, files: tuple[str, str]) -> None:
    main, _ = files
    async with session(project) as (client, _):
        await open_and_wait(client, main, MAIN)
        actions = await client.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": main},
                "range": {"start": {"line": 8, "character": 0}, "end": {"line": 8, "character": 7}},
                "context": {"diagnostics": []},
            },
        )
        (lazy,) = actions
        assert "edit" not in lazy and "data" in lazy
        resolved = await client.request("codeAction/resolve", lazy)
        edit = resolved["edit"]["documentChanges"][0]
        assert edit["edits"][0]["newText"] == "exact?"
        assert edit["textDocument"] == {"uri": main, "version": 1}
        with pytest.raises(ResponseError, match="Cannot process request"):
            await client.request("codeAction/resolve", {"title": "x"})
