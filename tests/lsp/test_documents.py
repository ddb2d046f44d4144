"""Document lifecycle: progress, publish ordering, the waitForDiagnostics barrier, edits."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from beam_runtime.lsp import messages
from tests.lsp.harness import last_diagnostics, open_and_wait, session

pytestmark = pytest.mark.anyio


def _kinds(recorder: object, uri: str) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for method, params in recorder.items:  # type: ignore[attr-defined]
        if method == "$/lean/fileProgress" and params["textDocument"]["uri"] == uri:
            out.append(("progress", params["processing"]))
        elif method == "textDocument/publishDiagnostics" and params["uri"] == uri:
            out.append(("publish", len(params["diagnostics"])))
    return out


async def test_fast_file_reports_done_before_its_only_publish(project: Path) -> None:
    uri = (project / "A.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, "def answerA : Nat := 42\n", version=0)
        events = _kinds(rec, uri)
        whole = {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "kind": 1,
        }
        assert events == [("progress", [whole]), ("progress", []), ("publish", 0)]
        progress = rec.of("$/lean/fileProgress", uri)
        assert progress[0]["textDocument"]["version"] == 0


async def test_slow_file_publishes_while_processing(project: Path) -> None:
    uri = (project / "Slow.lean").as_uri()
    text = "def x : Nat := foo\nexample : True := by\n  sleep 400\n  trivial\n"
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, text)
        events = _kinds(rec, uri)
        busy = [e for e in events if e[0] == "progress" and e[1]]
        assert busy[1][1][0]["kind"] == 1  # type: ignore[index]
        assert events[-1] == ("progress", [])
        assert events[-2] == ("publish", 1)
        first_publish = events.index(("publish", 1))
        assert events.index(("progress", [])) > first_publish


async def test_wait_for_diagnostics_waits_for_a_future_version(project: Path) -> None:
    uri = (project / "A.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, "def a : Nat := 1\n")
        pending = await client.send_request(
            "textDocument/waitForDiagnostics", messages.wait_for_diagnostics(uri, 2)
        )
        await anyio.sleep(0.3)
        assert not pending.answered, "answered before version 2 existed"
        await client.notify(
            "textDocument/didChange", messages.did_change_full(uri, 2, "def a : Nat := bad\n")
        )
        assert await pending.result() == {}
        diags = last_diagnostics(rec, uri)
        assert rec.of("textDocument/publishDiagnostics", uri)[-1]["version"] == 2
        assert [d["message"] for d in diags] == ["Unknown identifier `bad`"]


async def test_incremental_edits_use_utf16_columns(project: Path) -> None:
    uri = (project / "U.lean").as_uri()
    text = 'def s : String := "𝔸" -- x\ndef t : Nat := 1\n'
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, text)
        change = {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 0, "character": 22},
                        "end": {"line": 0, "character": 22},
                    },
                    "text": " bogus",
                }
            ],
        }
        await client.notify("textDocument/didChange", change)
        await client.request("textDocument/waitForDiagnostics", {"uri": uri, "version": 2})
        diags = last_diagnostics(rec, uri)
        assert diags[0]["message"] == "Unknown identifier `bogus`"
        assert diags[0]["range"]["start"] == {"line": 0, "character": 23}


async def test_close_publishes_empty_and_later_requests_fail(project: Path) -> None:
    from beam_runtime.lsp.errors import ContentModified

    uri = (project / "A.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, "def x : Nat := foo\n")
        await client.notify("textDocument/didClose", messages.did_close(uri))
        await rec.wait_for(
            lambda: rec.of("textDocument/publishDiagnostics", uri)[-1]["diagnostics"] == []
        )
        with pytest.raises(ContentModified) as info:
            await client.request("textDocument/hover", messages.position(uri, 0, 4))
        assert info.value.message == f"Cannot process request to closed file '{uri}'"


async def test_close_terminates_pending_requests(project: Path) -> None:
    from beam_runtime.lsp.errors import ContentModified

    uri = (project / "S.lean").as_uri()
    text = "example : True := by\n  sleep 5000\n  trivial\n"
    async with session(project) as (client, _rec):
        await client.notify("textDocument/didOpen", messages.did_open(uri, 1, text))
        pending = await client.send_request("textDocument/hover", messages.position(uri, 2, 2))
        await client.notify("textDocument/didClose", messages.did_close(uri))
        with pytest.raises(ContentModified) as info:
            await pending.result()
        assert info.value.message == f"The file worker for {uri} has been terminated."


async def test_silent_and_incremental_diagnostics_when_asked(project: Path) -> None:
    uri = (project / "G.lean").as_uri()
    text = "example : True := by\n  sleep 200\n  trivial\ndef x : Nat := foo\n"
    async with session(project, silent=True, incremental=True) as (client, rec):
        await open_and_wait(client, uri, text)
        publishes = rec.of("textDocument/publishDiagnostics", uri)
        assert publishes[0]["isIncremental"] is False
        assert all(p["isIncremental"] for p in publishes[1:])
        everything = [d for p in publishes for d in p["diagnostics"]]
        silent = [d for d in everything if d.get("isSilent")]
        assert silent and silent[0]["message"] == "Goals accomplished!"
        assert silent[0]["leanTags"] == [2]


async def test_no_silent_or_incremental_fields_by_default(project: Path) -> None:
    uri = (project / "G.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, "example : True := by\n  trivial\n")
        publish = rec.of("textDocument/publishDiagnostics", uri)[-1]
        assert "isIncremental" not in publish
        assert publish["diagnostics"] == []


async def test_unchanged_prefix_is_not_elaborated_again(project: Path) -> None:
    uri = (project / "Long.lean").as_uri()
    text = "".join(f"def d{i} : Nat := {i}\n" for i in range(30))
    async with session(project) as (client, _):
        await open_and_wait(client, uri, text)
        first = (await client.request("$/fake/state"))["documents"][uri]["freshElaborations"]
        await client.notify(
            "textDocument/didChange",
            messages.did_change_full(uri, 2, text + "example : d29 = d29 := by\n  rfl\n"),
        )
        await client.request("textDocument/waitForDiagnostics", {"uri": uri, "version": 2})
        second = (await client.request("$/fake/state"))["documents"][uri]["freshElaborations"]
        assert (first, second) == (30, 31)


async def test_header_error_ends_with_fatal_progress(project: Path) -> None:
    uri = (project / "H.lean").as_uri()
    async with session(project) as (client, rec):
        await open_and_wait(client, uri, "import Does.Not.Exist\ndef y := 1\n")
        final = rec.of("$/lean/fileProgress", uri)[-1]["processing"]
        assert final == [
            {
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
                "kind": 2,
            }
        ]
        (diag,) = last_diagnostics(rec, uri)
        assert diag["message"].startswith(
            "unknown module prefix 'Does'\n\nNo directory 'Does' or file 'Does.olean' in the "
            "search path entries:\n"
        )
        assert diag["range"]["end"] == {"line": 1, "character": 0}
        assert await client.request("textDocument/hover", messages.position(uri, 1, 4)) is None


async def test_stale_dependency_after_save(project: Path) -> None:
    a_uri, b_uri = (project / "A.lean").as_uri(), (project / "B.lean").as_uri()
    (project / "A.lean").write_text("def a := 1\n")
    async with session(project) as (client, rec):
        await open_and_wait(client, a_uri, "def a := 1\n")
        await open_and_wait(client, b_uri, "import A\ndef b := a\n")
        await client.notify("textDocument/didSave", messages.did_save(a_uri))
        message = (
            'Imports are out of date and should be rebuilt; use the "Restart File" command in '
            "your editor."
        )
        diag = await rec.wait_for(
            lambda: [d for d in last_diagnostics(rec, b_uri) if d["message"] == message]
        )
        assert diag[0]["severity"] == 3
        assert diag[0]["range"]["end"] == {"line": 1, "character": 0}


async def test_never_build_mode_with_stale_imports(project: Path) -> None:
    uri = (project / "B.lean").as_uri()
    async with session(project, FAKE_LEAN_STALE_IMPORTS="1") as (client, rec):
        params = messages.did_open(uri, 1, "import Mathlib\ndef b := 1\n", build_mode="never")
        await client.notify("textDocument/didOpen", params)
        await client.request("textDocument/waitForDiagnostics", {"uri": uri, "version": 1})
        (diag,) = last_diagnostics(rec, uri)
        assert diag["message"] == (
            'Imports are out of date and must be rebuilt; use the "Restart File" command in '
            "your editor."
        )
