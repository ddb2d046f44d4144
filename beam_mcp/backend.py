"""The seam between the MCP server and whatever runs Lean (the broker).

The server validates every input, canonicalizes the workspace, accounts statistics and owns
progress, logs and cancellation; a backend only performs the Lean operation. Cancellation is
ordinary anyio cancellation of the task that awaits `call`: a backend that must tell Lean
(`$/cancelRequest`) catches `anyio.get_cancelled_exc_class()`, does so in a shielded scope and
re-raises.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol

from beam_mcp.errors import ToolError, runtime_setup

if TYPE_CHECKING:
    from beam_mcp.progress import Reporter
    from beam_mcp.settings import Settings

# The broker provides `create_backend(settings) -> LeanBackend` in this module.
BROKER_MODULE = "beam_runtime.broker.backend"


class ToolContext:
    """What a backend may use while serving one call."""

    def __init__(self, *, root: str, reporter: Reporter, settings: Settings) -> None:
        self.root = root  # canonical workspace root
        self.settings = settings
        self._reporter = reporter

    @property
    def request_id(self) -> str | int:
        return self._reporter.request_id

    @property
    def tool(self) -> str:
        return self._reporter.tool

    def progress(self, message: str) -> None:
        """A `notifications/progress` update (only sent when the call has a token)."""
        self._reporter.progress(message)

    def status(self, state: str = "running", message: str | None = None) -> None:
        """Sends this call's single `beam.status` notice now, e.g. on the first Lake setup line."""
        self._reporter.status(state, message)

    def diagnostic(self, item: dict[str, Any]) -> None:
        """One live `lean.diagnostic` log, already filtered by the call's diagnostic_scope."""
        self._reporter.diagnostic(item)


class LeanBackend(Protocol):
    async def call(self, tool: str, arguments: Any, ctx: ToolContext) -> dict[str, Any]:
        """Runs one workspace-bound tool: every `lean_*` tool, `lean_drop_workspace` and
        `beam_feedback_report`.

        `arguments` is the validated pydantic input model. Return the `structuredContent`
        (it must echo `workspace: {"root": ctx.root}`); raise `ToolError` for tool errors.
        """
        ...

    def runtime_active(self) -> bool:
        """True once this process has started a Lean session (stays true after drops)."""
        ...

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        """Canonical root -> `session` object of `beam_stats` for every cached workspace."""
        ...

    async def aclose(self) -> None:
        """Stops every Lean session; called once at shutdown."""
        ...


# Optional: a backend with `attach(task_group: anyio.abc.TaskGroup) -> None` receives the
# server's long-lived task group right after it is created (session readers, idle reapers).


class UnavailableBackend:
    """Used until the broker exists: validated Lean calls answer a `runtimeSetup` tool error."""

    async def call(self, tool: str, arguments: Any, ctx: ToolContext) -> dict[str, Any]:
        if tool == "lean_drop_workspace":
            # Nothing can be cached without a broker, so this answer is exact.
            return {"workspace": {"root": ctx.root}, "dropped": False,
                    "invalidated_handles": 0, "reason": "notFound"}
        raise runtime_setup(
            "the Lean broker is not available in this build of lean-beam-mcp yet",
            category="brokerUnavailable",
            fix="upgrade lean-beam to a release that includes the Lean broker",
            detail=f"{tool} needs a Lean session for {ctx.root}",
        )

    def runtime_active(self) -> bool:
        return False

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        return {}

    async def aclose(self) -> None:
        return None


def create_backend(settings: Settings) -> LeanBackend:
    if settings.test_backend is not None:
        from beam_mcp.testbackend import create_test_backend

        return create_test_backend(settings.test_backend)
    try:
        module = importlib.import_module(BROKER_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name is None or not BROKER_MODULE.startswith(exc.name):
            raise
        return UnavailableBackend()
    backend: LeanBackend = module.create_backend(settings)
    return backend


__all__ = ["LeanBackend", "ToolContext", "ToolError", "UnavailableBackend", "create_backend"]
