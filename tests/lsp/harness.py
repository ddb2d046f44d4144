"""Driving the fake Lean server through the real client: launching, recording, waiting."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import psutil

from beam_runtime.lsp import messages
from beam_runtime.lsp.client import LspClient

FAKE_DIR = Path(__file__).resolve().parents[1] / "fake_lean"
FAKE_SERVER = FAKE_DIR / "server.py"
FAKE_LAKE = FAKE_DIR / "bin" / "lake"
WAIT = 20.0


@dataclass
class Recorder:
    """Every notification in arrival order, plus a way to wait for one."""

    items: list[tuple[str, Any]] = field(default_factory=list)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def __call__(self, method: str, params: Any) -> None:
        self.items.append((method, params))
        self.changed.set()
        self.changed = anyio.Event()

    def of(self, method: str, uri: str | None = None) -> list[Any]:
        return [p for m, p in self.items if m == method and (uri is None or _uri(p) == uri)]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = WAIT) -> Any:
        with anyio.fail_after(timeout):
            while True:
                value = predicate()
                if value:
                    return value
                await self.changed.wait()


def _uri(params: Any) -> str | None:
    if "uri" in params:
        return str(params["uri"])
    return str(params.get("textDocument", {}).get("uri"))


def base_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "FAKE_LEAN_REPORT_DELAY_MS": "50",
        "FAKE_LEAN_CMD_DELAY_MS": "0",
    }
    env.update(extra)
    return env


@asynccontextmanager
async def session(
    root: Path,
    argv: list[str] | None = None,
    initialize: bool = True,
    silent: bool = False,
    incremental: bool = False,
    **extra_env: str,
) -> AsyncIterator[tuple[LspClient, Recorder]]:
    command = argv or [sys.executable, str(FAKE_SERVER)]
    recorder = Recorder()
    env = base_env(root.parent, **extra_env)
    async with LspClient.launch(command, cwd=root, env=env, request_timeout=WAIT) as client:
        client.add_notification_handler(None, recorder)
        if initialize:
            params = messages.initialize_params(root, silent=silent, incremental=incremental)
            await client.initialize(params, timeout=WAIT)
        yield client, recorder


async def open_and_wait(client: LspClient, uri: str, text: str, version: int = 1) -> None:
    await client.notify("textDocument/didOpen", messages.did_open(uri, version, text))
    await client.request(
        "textDocument/waitForDiagnostics", messages.wait_for_diagnostics(uri, version)
    )


def last_diagnostics(recorder: Recorder, uri: str) -> list[dict[str, Any]]:
    publishes = recorder.of("textDocument/publishDiagnostics", uri)
    assert publishes, "no publishDiagnostics arrived"
    return list(publishes[-1]["diagnostics"])


def gone(pid: int) -> bool:
    """The process has ended (a zombie counts: it runs no more code)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def make_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.33.0\n")
    (root / "lakefile.toml").write_text('name = "proj"\n\n[[lean_lib]]\nname = "Proj"\n')
    return root
