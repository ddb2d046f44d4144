"""The broker adapter: server settings into broker configuration, catalog handlers onto the
broker, and broker errors into tool errors (the one place where that happens)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anyio.abc import TaskGroup

from beam_mcp.errors import ToolError
from beam_runtime.broker.config import BrokerConfig, Limits, ManagerConfig, PoolConfig
from beam_runtime.broker.errors import BrokerError

if TYPE_CHECKING:
    from beam_mcp.backend import ToolContext, ToolInput
    from beam_mcp.settings import Settings
    from beam_mcp.tools.catalog import ToolSpec


def broker_config(settings: Settings) -> BrokerConfig:
    limits = Limits(
        start_s=settings.session_start_timeout_ms / 1000,
        barrier_s=settings.barrier_timeout_ms / 1000,
        navigation_s=settings.navigation_timeout_ms / 1000,
        rpc_keepalive_s=settings.rpc_keepalive_ms / 1000,
        barrier_reissue_s=settings.barrier_reissue_ms / 1000,
    )
    manager = ManagerConfig(
        lean_cmd=settings.lean_cmd,
        beam_cli=settings.beam_cli,
        limits=limits,
        idle_timeout_s=settings.idle_timeout_ms / 1000,
        max_workspaces=settings.max_workspaces,
        config_timeout_s=min(120.0, settings.session_start_timeout_ms / 1000),
        worker_memory_max=settings.worker_memory_max,
    )
    scratch = PoolConfig(
        per_document=settings.scratch_per_document,
        per_process=settings.scratch_per_process,
        idle_s=settings.scratch_idle_ms / 1000,
        wait_s=settings.barrier_timeout_ms / 1000,
    )
    return BrokerConfig(manager=manager, scratch=scratch, result_bytes=settings.result_bytes)


def tool_error(error: BrokerError) -> ToolError:
    return ToolError(error.code, error.message, error.data)


class BrokerBackend:
    """The server's backend: each call runs its catalog row's handler on the broker."""

    def rides_root_checks(self, root: str) -> bool:
        """Yes: the broker's first bounded read of a call (or `Broker.run`'s settle when no file
        is named) runs the server's check of a remembered root (`backend.py`)."""
        return True

    def __init__(self, settings: Settings, config: BrokerConfig | None = None) -> None:
        from beam_runtime.broker.service import Broker  # the broker's imports: first use only

        self.broker = Broker(config if config is not None else broker_config(settings))
        self.wait_ms = settings.wait_ms

    def attach(self, group: TaskGroup) -> None:
        self.broker.attach(group)

    async def call(self, spec: ToolSpec, arguments: ToolInput, ctx: ToolContext) -> dict[str, Any]:
        if getattr(arguments, "wait_ms", 0) is None:  # omitted: the server's default
            arguments = arguments.model_copy(update={"wait_ms": self.wait_ms})
        try:
            result: dict[str, Any] = await spec.handler(self.broker, arguments, ctx)
        except BrokerError as error:
            raise tool_error(error) from None
        return result

    def runtime_active(self) -> bool:
        return self.broker.runtime_active()

    def workspace_sessions(self) -> dict[str, dict[str, Any]]:
        return self.broker.workspace_sessions()

    async def aclose(self) -> None:
        await self.broker.aclose()
