"""A handle is bound to its workspace and path; the refusal says why in `data.reason`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.helpers import Server
from tests.speculative.helpers import Probe, fake_server

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "def after : Nat := 1\n"
)


def second_workspace(tmp_path: Path) -> Path:
    other = tmp_path / "second"
    other.mkdir()
    (other / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (other / "Main.lean").write_text(PROOF)
    return other.resolve()


def in_other(p: Probe, other: Path, handle: dict[str, Any]) -> dict[str, Any]:
    args = {
        "workspace": {"root": str(other)},
        "path": "Main.lean",
        "handle": handle,
        "text": "skip",
    }
    reply = p.reply("lean_run_with", args, bare=True)
    assert reply["isError"] is True, reply
    body: dict[str, Any] = reply["structuredContent"]
    return body


def test_handles_refuse_another_workspace_live_or_released(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    (project / "Main.lean").write_text(PROOF)
    (project / "Other.lean").write_text("def other : Nat := 2\n")
    p = Probe(fake_server(servers), project)
    other = second_workspace(tmp_path)
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    live = in_other(p, other, handle)
    assert live["code"] == "invalidParams"
    assert live["data"]["reason"] == "handleWorkspaceMismatch"
    wrong_path = p.err("lean_run_with", {"path": "Other.lean", "handle": handle, "text": "skip"})
    assert wrong_path["code"] == "invalidParams"
    assert wrong_path["data"]["reason"] == "handlePathMismatch"
    assert p.with_(handle, "exact hp")["success"] is True  # the refusals changed nothing
    p.ok("lean_release", {"path": "Main.lean", "handle": handle})
    released = in_other(p, other, handle)
    assert released["code"] == "invalidParams"
    assert released["data"]["reason"] == "handleWorkspaceMismatch"
    same = p.with_error(handle)
    assert same["code"] == "contentModified" and same["data"]["reason"] == "released"


def test_a_nested_workspace_refuses_the_outer_ones_handle_of_the_same_file(
    servers: list[Server], project: Path
) -> None:
    """A project inside another: one file is `inner/Main.lean` of the outer workspace and
    `Main.lean` of the inner one, so a handle made in the outer workspace names the very file the
    inner one resolves and the path check cannot tell them apart. Only the workspace check
    stands between the handle and the inner session: `invalidParams`
    (`handleWorkspaceMismatch`), and the handle stays live where it was made. (With the shared
    host each workspace has a host of its own and the server refuses first; with `--host off` one
    broker serves both, and its handle store refuses.)"""
    inner = project / "inner"
    inner.mkdir()
    (inner / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (inner / "Main.lean").write_text(PROOF)
    p = Probe(fake_server(servers), project, "inner/Main.lean")
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    live = in_other(p, inner, handle)
    assert live["code"] == "invalidParams", live
    assert live["data"]["reason"] == "handleWorkspaceMismatch"
    assert p.with_(handle, "exact hp")["success"] is True  # the refusal changed nothing
    p.ok("lean_release", {"path": "inner/Main.lean", "handle": handle})
    released = in_other(p, inner, handle)
    assert released["code"] == "invalidParams", released
    assert released["data"]["reason"] == "handleWorkspaceMismatch"
