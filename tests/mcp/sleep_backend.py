"""Test-only fault injection: a backend that sleeps and reports instead of running Lean.

Selected with `LEAN_BEAM_MCP_BACKEND=<this file>:create_backend` (see `SLEEP_BACKEND` in
`tests/mcp/helpers.py`); the product never loads it otherwise. It exercises the
server's own machinery (concurrency, cancellation, progress, status notices, logs, statistics)
without a Lean toolchain. Directives are read from the `path` (or `query`) argument:

- `<N>ms`      sleep N milliseconds (default 0), cancellable
- `steps<N>`   send N progress updates spread over the sleep (after one preparation update)
- `setup`      trigger the beam.status notice at once, as a Lake setup line would
- `diag`       send one live diagnostic of each severity, filtered by diagnostic_scope
- `fail`       answer the tool error `workerExited`
- `crash`      raise an unexpected exception (the server answers `internalError`)

With `SLEEP_BACKEND_ECHO=1` in its environment every result also carries `arguments` (the
validated input it was handed, as plain JSON: `echo`) and `arguments_type` (its class name).
"""

from __future__ import annotations

import os
import re
from typing import Any

import anyio

from beam_mcp.backend import LeanBackend, ToolContext
from beam_mcp.errors import ToolError
from beam_mcp.settings import Settings
from beam_mcp.tools.catalog import ToolSpec

SEVERITIES = ("error", "warning", "information", "hint")
SYNC_FAMILY = frozenset(("lean_sync", "lean_refresh", "lean_save", "lean_close_save"))


class SleepBackend:
    def __init__(self) -> None:
        self._active = False
        self._roots: dict[str, int] = {}

    async def call(self, spec: ToolSpec, arguments: Any, ctx: ToolContext) -> dict[str, Any]:
        tool = spec.name
        self._active = True
        self._roots[ctx.root] = self._roots.get(ctx.root, 0) + 1
        directives = str(getattr(arguments, "path", None) or getattr(arguments, "query", "") or "")
        ctx.progress(f"{tool}: preparing the Lean workspace")
        if "setup" in directives:
            ctx.status("preparing_dependencies", f"{tool} is preparing Lean dependencies.")
        await self._sleep(directives, ctx)
        if "diag" in directives:
            self._diagnostics(arguments, ctx)
        if "fail" in directives:
            raise ToolError("workerExited", "the test backend simulated a Lean crash")
        if "crash" in directives:
            raise RuntimeError("the test backend simulated a bug")
        result = self._result(spec, directives, ctx)
        if os.environ.get("SLEEP_BACKEND_ECHO") == "1":
            result.update(arguments=echo(arguments), arguments_type=type(arguments).__name__)
        return result

    async def _sleep(self, spec: str, ctx: ToolContext) -> None:
        ms = _number(r"(\d+)ms", spec)
        steps = _number(r"steps(\d+)", spec)
        for step in range(steps):
            await anyio.sleep(ms / 1000 / max(steps, 1))
            ctx.progress(f"{ctx.tool}: step {step + 1} of {steps}")
        if steps == 0:
            await anyio.sleep(ms / 1000)

    def _diagnostics(self, arguments: Any, ctx: ToolContext) -> None:
        scope = getattr(arguments, "diagnostic_scope", "errors")
        for severity in SEVERITIES:
            if scope == "all" or severity == "error":
                ctx.diagnostic(
                    {"path": arguments.path, "severity": severity, "message": f"a test {severity}"}
                )

    def _result(self, spec: ToolSpec, directives: str, ctx: ToolContext) -> dict[str, Any]:
        tool = spec.name
        body: dict[str, Any] = {"workspace": {"root": ctx.root}, "tool": tool}
        if spec.fence:
            dropped = self._roots.pop(ctx.root, 0) > 1
            body.update(dropped=dropped, invalidated_handles=0)
            if not dropped:
                body["reason"] = "notFound"
            return body
        body["path"] = directives
        if tool in SYNC_FAMILY:
            body["document_progress"] = {"updates": 1, "done": True}
        return body

    def runtime_active(self) -> bool:
        return self._active

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        return {
            root: {
                "active": True,
                "epoch": 1,
                "pid": None,
                "rss_bytes": None,
                "open_documents": 0,
                "scratch_documents": 0,
            }
            for root in self._roots
        }

    async def aclose(self) -> None:
        self._roots.clear()


def echo(value: Any) -> Any:
    """A validated input (pydantic model or plain `Arguments`) as JSON: its fields, recursively."""
    if isinstance(value, list):
        return [echo(item) for item in value]
    if isinstance(value, dict):
        return {key: echo(item) for key, item in value.items()}
    if hasattr(value, "__dict__"):
        return {"__fields_set__": sorted(value.model_fields_set), **echo(vars(value))}
    return value


def _number(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else 0


def create_backend(settings: Settings) -> LeanBackend:
    return SleepBackend()
