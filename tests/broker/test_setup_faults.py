"""Set-up failures through the real stdio server: runtimeSetup tool errors, never a hang."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import psutil

from tests.broker.conftest import script, start
from tests.mcp.helpers import Server, call, structured


def _tool_error(server: Server, rid: int, tool: str, args: dict) -> dict:
    reply = server.ask(call(rid, tool, args))
    assert reply["result"]["isError"] is True, reply
    return structured(reply)


def _sync(root: Path, path: str = "Main.lean") -> dict:
    return {"workspace": {"root": str(root)}, "path": path}


def test_missing_lake(servers: list[Server], project: Path, tmp_path: Path) -> None:
    server = start(servers, "--lean-cmd", str(tmp_path / "no-such-dir" / "lake") + " serve --")
    error = _tool_error(server, 1, "lean_sync", _sync(project))
    assert error["code"] == "runtimeSetup"
    assert error["data"]["category"] == "lakeNotFound" and error["data"]["fix"]


def test_toolchain_that_fails_to_start(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    lean = script(
        tmp_path, "lean", "echo 'libleanshared.so: cannot open shared object' >&2\nexit 127\n"
    )
    server = start(servers, "--lean-cmd", shlex.join([lean, "--server"]))
    error = _tool_error(server, 1, "lean_sync", _sync(project))
    assert error["code"] == "runtimeSetup"
    assert error["data"]["category"] == "toolchainNotRunnable"
    assert any("cannot open shared object" in line for line in error["data"]["stderr_tail"])


def test_broken_lake_config(servers: list[Server], project: Path, tmp_path: Path) -> None:
    lake = script(
        tmp_path,
        "lake",
        "echo 'error: lakefile.toml:1:0: unexpected token' >&2\n"
        "echo 'warning: package configuration has errors, falling back to plain' >&2\n"
        "exit 1\n",
    )
    server = start(servers, "--lean-cmd", shlex.join([lake, "serve", "--"]))
    error = _tool_error(server, 1, "lean_sync", _sync(project))
    assert error["code"] == "runtimeSetup"
    assert error["data"]["category"] == "lakeConfigInvalid"
    assert any("unexpected token" in line for line in error["data"]["stderr_tail"])


def test_server_that_never_answers_is_bounded_and_killed(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    marker = f"beam-hang-{time.monotonic_ns()}"
    hang = script(tmp_path, "lake", f"exec sleep 300 # {marker}\n")
    server = start(
        servers, "--lean-cmd", shlex.join([hang, "serve"]), "--session-start-timeout-ms", "400"
    )
    error = _tool_error(server, 1, "lean_sync", _sync(project))
    assert error["code"] == "timeout"
    assert error["data"]["phase"] == "sessionStart" and error["data"]["waited_ms"] >= 400
    code, _stderr, _ = server.close()
    assert code == 0
    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])
    ]
    assert leftovers == []


def test_no_lean_command(servers: list[Server], project: Path) -> None:
    server = start(servers)
    error = _tool_error(server, 1, "lean_update", _sync(project))
    assert error["code"] == "runtimeSetup" and error["data"]["category"] == "noLeanCommand"


def test_bad_paths_start_no_lean(servers: list[Server], project: Path, tmp_path: Path) -> None:
    lake = script(tmp_path, "lake", "echo started >> " + str(tmp_path / "started") + "\nexit 1\n")
    server = start(servers, "--lean-cmd", shlex.join([lake, "serve"]))
    (project / "Bad.lean").write_bytes(b"def x := \xff\n")
    (tmp_path / "Outside.lean").write_text("def o := 1\n")
    cases = {
        "../Outside.lean": "pathEscapesRoot",
        "Nope.lean": "fileNotFound",
        "Bad.lean": "notUtf8",
    }
    for rid, (path, reason) in enumerate(cases.items(), start=1):
        error = _tool_error(server, rid, "lean_sync", _sync(project, path))
        assert error["code"] == "invalidInput" and error["data"]["reason"] == reason
    assert not (tmp_path / "started").exists()
