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
