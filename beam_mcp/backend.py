"""The seam between the MCP server and what runs its workspace tools.

The server validates every input, canonicalizes the workspace, accounts statistics and owns
progress, logs and cancellation; a backend only performs the tool. The backend is
`beam_mcp.hosted.SharedBackend` (each workspace on its shared Lean host, or on the in-process
broker adapter of `beam_mcp.lean`) unless `--backend`/`LEAN_BEAM_MCP_BACKEND` names another
factory (a test hook: the tests' fault-injection backend lives in `tests/`). Cancellation is
ordinary anyio cancellation of the task that awaits `call`: a backend that must tell Lean
(`$/cancelRequest`) catches `anyio.get_cancelled_exc_class()`, does so in a shielded scope and
re-raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from beam_mcp.errors import ToolError

if TYPE_CHECKING:
    from beam_mcp.progress import Reporter
    from beam_mcp.settings import Settings
    from beam_mcp.tools.admit import Arguments
    from beam_mcp.tools.catalog import ToolSpec
    from beam_mcp.tools.models import Closed

    ToolInput: TypeAlias = Arguments | Closed  # a validated input: admitted, or the model


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

    @property
    def owner(self) -> str:
        """Handles and scratch documents of an in-process broker belong to the process."""
        return ""

    def others(self) -> int:
        """Other agents using this workspace: none in-process."""
        return 0

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
    async def call(self, spec: ToolSpec, arguments: ToolInput, ctx: ToolContext) -> dict[str, Any]:
        """Runs one workspace-bound tool (every catalog row that is not `process`).

        `arguments` is the validated input (`tools.admit.Arguments` or the pydantic model).
        Return the `structuredContent` (it must echo `workspace: {"root": ctx.root}`); raise
        `ToolError` for tool errors.
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
# Optional: a backend with `rides_root_checks(root) -> bool` answering True for a canonical root
# makes a bounded read (`safe_read`) in this process before it acts on that workspace (or calls
# `safe_read.settle`): the server then hands it the remembered root at once and the root's check
# rides along with that read (see `workspace.py`). Other backends, and roots served elsewhere
# (a shared host), get the root canonicalized before the call, in a trip of its own.


def create_backend(settings: Settings) -> LeanBackend:
    if settings.backend is not None:
        backend: LeanBackend = load_factory(settings.backend)(settings)
        return backend
    from beam_mcp.hosted import SharedBackend

    return SharedBackend(settings)


def load_factory(spec: str) -> Any:
    """`FACTORY` from `/path/file.py:FACTORY` or `module:FACTORY` (the `--backend` hook)."""
    location, _, name = spec.rpartition(":")
    if not location or not name:
        raise ToolError("internalError", f"--backend must be PATH.py:FACTORY, got {spec!r}")
    import importlib
    import importlib.util

    if location.endswith(".py"):
        found = importlib.util.spec_from_file_location("beam_backend_plugin", location)
        if found is None or found.loader is None:
            raise ToolError("internalError", f"--backend file cannot be loaded: {location}")
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    return getattr(module, name)


__all__ = ["LeanBackend", "ToolContext", "ToolError", "create_backend"]
