"""The official Python MCP SDK client against the real `lean-beam-mcp` executable.

The installed SDK negotiates with `mode`: "legacy" (initialize handshake), "auto" (probe
server/discover, fall back to initialize) and a pinned modern revision ("2026-07-28").
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcp.helpers import REPO, SLEEP_BACKEND, minimal_env

mcp = pytest.importorskip("mcp")

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from beam_mcp.tools.catalog import NAMES  # noqa: E402

EXECUTABLE = str(Path(sys.executable).with_name("lean-beam-mcp"))


def params(**env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXECUTABLE,
        args=["--status-delay-ms", "100"],
        env=minimal_env(BEAM_NO_DELEGATE="1", **env),
        cwd=str(REPO),
    )


async def session(mode: str, project: Path, log_level: Any = None) -> dict[str, Any]:
    updates: list[float] = []
    logs: list[Any] = []

    class OnProgress:
        async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
            updates.append(progress)

    on_progress = OnProgress()

    async def on_log(params: Any) -> None:
        logs.append(params)

    with tempfile.TemporaryFile("w+") as errlog:
        from mcp.client.stdio import stdio_client

        transport = stdio_client(params(**SLEEP_BACKEND), errlog=errlog)
        async with Client(
            transport, mode=mode, logging_callback=on_log, log_level=log_level
        ) as client:
            tools = await client.list_tools()
            version = await client.call_tool("beam_version", {})
            bad = await client.call_tool("lean_sync", {"workspace": {"root": "rel"}, "path": "x"})
            sync = await client.call_tool(
                "lean_sync",
                {"workspace": {"root": str(project)}, "path": "300ms steps2"},
                progress_callback=on_progress,
            )
            quiet = await client.call_tool(
                "lean_sync", {"workspace": {"root": str(project)}, "path": "300ms"}
            )
            protocol = client.session.protocol_version
        errlog.seek(0)
        stderr = errlog.read()
    return {
        "tools": tools,
        "version": version,
        "bad": bad,
        "sync": sync,
        "quiet": quiet,
        "progress": updates,
        "logs": logs,
        "stderr": stderr,
        "protocol": protocol,
    }


@pytest.mark.parametrize(
    ("mode", "protocol"),
    [("legacy", "2025-11-25"), ("auto", "2026-07-28"), ("2026-07-28", "2026-07-28")],
)
def test_sdk_modes(mode: str, protocol: str, project: Path) -> None:
    got = anyio.run(session, mode, project)
    assert got["protocol"] == protocol
    assert len(got["tools"].tools) == len(NAMES)
    assert got["version"].structured_content["name"] == "lean-beam-mcp"
    assert got["bad"].is_error and got["bad"].structured_content["code"] == "invalidInput"
    assert got["sync"].is_error is False
    assert got["progress"] == [1, 2, 3]
    logs = [getattr(p, "logger", None) for p in got["logs"]]
    # Legacy starts at debug, so the slow call without a token gets one beam.status notice;
    # modern requests without a log level get none.
    assert logs == (["beam.status"] if mode == "legacy" else [])
    assert got["stderr"] == ""


def test_sdk_modern_log_level_opt_in(project: Path) -> None:
    got = anyio.run(session, "2026-07-28", project, "notice")
    assert [p.logger for p in got["logs"]] == ["beam.status"]


def test_console_script_exists() -> None:
    assert os.access(EXECUTABLE, os.X_OK)
