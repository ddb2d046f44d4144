"""The server's backend: each workspace on its shared Lean host, or on an in-process broker.

With ``--host auto`` (the default) a workspace's tools go to the host that serves its
(root, toolchain, runtime, Lean launch), started on first use (``beam_runtime/host``); when no
host can be started or reached (a sandbox that forbids the socket, a read-only directory) the
workspace runs on the in-process broker as before, and ``beam_stats`` says why. ``required``
answers a tool error instead; ``off`` never uses a host. Results are the broker's own either
way: the host runs the same entry points (``beam_runtime/broker/entries.py``) on the same
arguments, so only ``beam_stats`` tells the two apart (docs/HOST.md).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from beam_mcp.errors import ToolError
from beam_mcp.lean import BrokerBackend, broker_config, tool_error
from beam_runtime.broker.errors import BrokerError
from beam_runtime.host.client import HandleOrigins, HostLink, ask
from beam_runtime.host.config import HostConfig
from beam_runtime.host.place import (
    Place,
    Unavailable,
    place_of,
    runtime_id,
    setup_digest,
)
from beam_runtime.lsp import memory

if TYPE_CHECKING:
    from beam_mcp.backend import ToolContext, ToolInput
    from beam_mcp.settings import Settings
    from beam_mcp.tools.catalog import ToolSpec
    from beam_runtime.broker.config import BrokerConfig

BUDGET_SHARE = 0.6  # of physical memory, when no budget is given


def memory_config(settings: Settings) -> BrokerConfig:
    """The broker configuration with the memory scope and budget of this user."""
    config = broker_config(settings)
    budget = settings.memory_budget
    if budget is None:
        budget = int(memory.physical_memory() * BUDGET_SHARE) or None
    scope = memory.user_scope()
    return config._replace(manager=config.manager._replace(memory_scope=scope), budget_bytes=budget)


class SharedBackend:
    """Routes each workspace to its host link or to the in-process broker."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.mode = settings.host
        self.config = memory_config(settings)
        self.links: dict[str, HostLink] = {}
        self.in_process: dict[str, str] = {}  # root -> why it runs here
        self._local: BrokerBackend | None = None
        self._group: TaskGroup | None = None
        self._opening: dict[str, anyio.Lock] = {}
        # Handle id -> the root whose host made it: each host knows only its own handles, an
        # in-process broker knows every workspace's (and refuses another workspace's handle).
        self._handle_roots: HandleOrigins[str] = HandleOrigins()

    def attach(self, group: TaskGroup) -> None:
        self._group = group

    def serves_here(self, root: str) -> bool:
        """Whether the in-process broker serves the root (``--host off``, or no host could be
        had for it)."""
        return self.mode == "off" or root in self.in_process

    def rides_root_checks(self, root: str) -> bool:
        """A root served here rides its check on the broker's first read; a host reads files
        in its own process, so a hosted root is checked here first."""
        return self.serves_here(root)

    def local(self) -> BrokerBackend:
        if self._local is None:
            self._local = BrokerBackend(self.settings, self.config)
            assert self._group is not None
            self._local.attach(self._group)
        return self._local

    async def call(self, spec: ToolSpec, arguments: ToolInput, ctx: ToolContext) -> dict[str, Any]:
        root = ctx.root
        if self.serves_here(root):
            self.in_process.setdefault(root, "the shared host is off (--host off)")
            return await self.local().call(spec, arguments, ctx)
        if spec.fence and not self._connected(root):
            # Nothing of this server runs there: the answer an unknown workspace gets.
            return {
                "workspace": {"root": root},
                "dropped": False,
                "invalidated_handles": 0,
                "reason": "notFound",
            }
        if getattr(arguments, "wait_ms", 0) is None:  # omitted: the server's default
            arguments = arguments.model_copy(update={"wait_ms": self.settings.wait_ms})
        try:
            link = await self._link(root)
            if link is None:
                return await self.local().call(spec, arguments, ctx)
            sent = plain(arguments)
            self._check_workspace(sent, root)
            content = await link.call(spec.name, sent, ctx)
        except BrokerError as error:
            raise tool_error(error) from None
        self._handle_roots.note(content, root)
        return content

    def _check_workspace(self, arguments: dict[str, Any], root: str) -> None:
        handle_id, made_in = self._handle_roots.of(arguments)
        if made_in is not None and made_in != root:
            raise BrokerError(
                "invalidParams",
                "this handle belongs to another workspace",
                {"reason": "handleWorkspaceMismatch", "handle": {"id": handle_id}},
            )

    async def _link(self, root: str) -> HostLink | None:
        """The root's live host link, or None when it must run in-process (``auto``)."""
        async with self._opening.setdefault(root, anyio.Lock()):
            link = self.links.get(root)
            try:
                if link is None:
                    link = HostLink(await self._host_config(root), self._require_group())
                await link.connected()
            except Unavailable as why:
                if self.mode == "required":
                    raise BrokerError(
                        "runtimeSetup",
                        f"no shared Lean host: {why.message}",
                        {
                            "category": "hostUnavailable",
                            "reason": why.reason,
                            "detail": why.message,
                            "fix": "fix what the message names, or run with --host auto (or "
                            "off) to use an in-process Lean server",
                        },
                    ) from None
                self.in_process[root] = why.message
                return None
            self.links[root] = link
            return link

    def _connected(self, root: str) -> bool:
        link = self.links.get(root)
        return link is not None and link.client is not None and link.client.alive

    def _require_group(self) -> TaskGroup:
        if self._group is None:
            raise ToolError("internalError", "the backend was not attached to the server")
        return self._group

    async def _host_config(self, root: str) -> HostConfig:
        settings = self.settings
        toolchain = await _toolchain(root)
        draft = HostConfig(root, toolchain, runtime_id(), Place("", ""), self.config)
        draft = draft._replace(idle_s=float(settings.host_idle_s))
        setup = setup_digest(draft.to_json() + repr(settings.lean_plugin), dict(os.environ))
        return draft._replace(place=place_of(root, toolchain, draft.runtime_id, setup))

    def runtime_active(self) -> bool:
        hosted = any(link.runtime_active for link in self.links.values())
        return hosted or (self._local is not None and self._local.runtime_active())

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        if self._local is not None:
            for root, session in self._local.workspace_sessions().items():
                host = {"mode": "in-process", "pid": os.getpid(), "connections": 1}
                if root in self.in_process:
                    host["reason"] = self.in_process[root]
                found[root] = {**session, "host": host}
        for root, link in self.links.items():
            described = _describe(link)
            if described is not None:
                found[root] = described
        return found

    async def aclose(self) -> None:
        for link in list(self.links.values()):
            await link.aclose()
        if self._local is not None:
            await self._local.aclose()


def _describe(link: HostLink) -> dict[str, Any] | None:
    """The root's ``beam_stats`` session object, asked of its host (bounded), with ``host``."""
    client = link.client
    if client is None or not client.alive:
        return None
    root = link.config.root
    try:
        stats = ask(link.config.place.socket, "host/stats")
    except Exception:  # the host is going away; its answer is not worth a hang
        stats = None
    if not isinstance(stats, dict):
        return None
    session = (stats.get("sessions") or {}).get(root)
    if not isinstance(session, dict):
        return None  # no Lean session there now (idle, dropped): as an in-process broker says
    host = {"mode": "shared", "pid": client.pid, "connections": stats.get("connections", 0)}
    return {**session, "host": host}


async def _toolchain(root: str) -> str:
    """The first line of the root's ``lean-toolchain`` ("" when there is none)."""
    from beam_runtime import safe_read

    try:
        data = await safe_read.read_async(os.path.join(root, "lean-toolchain"), safe_read.SMALL_CAP)
    except (OSError, ValueError):
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[0].strip() if lines else ""


def plain(arguments: Any) -> Any:
    """A validated input as JSON: every field, defaults included, nested objects as dicts."""
    from beam_mcp.tools.admit import Arguments

    if isinstance(arguments, Arguments):
        return {name: plain(value) for name, value in vars(arguments).items()}
    if hasattr(arguments, "model_dump"):
        return arguments.model_dump()
    if isinstance(arguments, list):
        return [plain(item) for item in arguments]
    if isinstance(arguments, dict):
        return {key: plain(value) for key, value in arguments.items()}
    return arguments
