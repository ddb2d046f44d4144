"""The broker without MCP: one Lean operation in-process, for the ``lean-beam lean`` commands.

It builds the broker's configuration from a launch choice (``--lean-cmd`` or ``beam-cli``) and
default limits, runs one operation on a fresh broker inside its own task group, and shuts Lean
down again. Operations are the ones the MCP tools run (``operations``, ``queries``, the
speculation tools, ``lean_try``, ``lean_verify``, and ``lean_search``, which needs no session),
with the same arguments as attributes and the same results and errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from beam_runtime.broker.config import BrokerConfig, Limits, ManagerConfig, PoolConfig
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.service import Broker, Operation

if TYPE_CHECKING:
    from beam_runtime.broker.session.reporting import Context
    from beam_runtime.broker.session.session import LeanSession


@dataclass
class At:
    """One position of ``lean_try``'s ``positions``, in one position form."""

    line: int | None = None
    character: int | None = None
    line1: int | None = None
    match: str | None = None
    occurrence: int | None = None
    declaration: str | None = None
    sorry: int | None = None


@dataclass
class Call:
    """Arguments of one operation, shaped like the MCP tool's input model (all optional)."""

    path: str
    wait_ms: int = 600_000
    version: int | None = None
    line: int | None = None
    character: int | None = None
    line1: int | None = None
    match: str | None = None
    occurrence: int | None = None
    declaration: str | None = None
    sorry: int | None = None
    mode: str = "before"
    text: str = ""
    kinds: list[str] = field(default_factory=list)
    suggest: str = "basic"
    start_line: int = 0
    start_character: int = 0
    end_line: int | None = None
    end_character: int | None = None
    diagnostic_scope: str = "all"
    diagnostics_in_result: bool = True
    include_declaration: bool = True
    paths: list[str] | None = None
    declarations: list[str] | None = None
    receipt: dict[str, Any] | None = None
    positions: list[At] = field(default_factory=list)
    tactics: list[str] = field(default_factory=list)
    stop_on_first_success: bool = False
    limit: int | None = None
    query: str = ""
    kind: str | None = None
    suggest_tactics: bool = False  # lean_try's `suggest` (``suggest`` is lean_todo's)


@dataclass
class TryCall:
    """``lean_try``'s arguments, taken from a ``Call``."""

    path: str
    version: int | None
    wait_ms: int
    positions: list[At]
    tactics: list[str]
    stop_on_first_success: bool
    limit: int | None
    suggest: bool

    @classmethod
    def of(cls, call: Call) -> TryCall:
        return cls(
            call.path,
            call.version,
            call.wait_ms,
            call.positions,
            call.tactics,
            call.stop_on_first_success,
            call.limit,
            call.suggest_tactics,
        )


class QuietContext:
    """The broker's call context with nobody listening (no progress, no live diagnostics)."""

    def __init__(self, tool: str) -> None:
        self._tool = tool

    @property
    def tool(self) -> str:
        return self._tool

    @property
    def owner(self) -> str:
        return ""

    def progress(self, message: str) -> None:
        pass

    def status(self, state: str = "running", message: str | None = None) -> None:
        pass

    def diagnostic(self, item: dict[str, Any]) -> None:
        pass


def config(lean_cmd: tuple[str, ...] | None, beam_cli: str | None) -> BrokerConfig:
    """The MCP server's default limits (600 s to start and to check a file, 60 s per query)."""
    limits = Limits(start_s=600.0, barrier_s=600.0, navigation_s=60.0)
    manager = ManagerConfig(
        lean_cmd=lean_cmd,
        beam_cli=beam_cli,
        limits=limits,
        idle_timeout_s=0,
        max_workspaces=1,
    )
    return BrokerConfig(manager=manager, scratch=PoolConfig(per_document=1, per_process=2))


async def run_once(broker_config: BrokerConfig, root: str, tool: str, call: Call) -> dict[str, Any]:
    """Runs ``tool`` (an MCP tool name) once on a broker of its own; raises ``BrokerError``."""
    import anyio

    broker = Broker(broker_config)
    operation = None if tool == "lean_search" else _operation(tool, broker)
    result: dict[str, Any] = {}
    failure: BrokerError | None = None
    async with anyio.create_task_group() as group:
        broker.attach(group)
        try:
            if operation is None:  # no Lean session: the declaration index alone
                limit = call.limit or 20
                searches = broker.searches()
                result = await searches.search(
                    root, call.query, call.kind, limit, call.wait_ms, QuietContext(tool)
                )
            else:
                result = await broker.run(root, call.path, operation, call, QuietContext(tool))
        except BrokerError as error:  # raised here it would leave as an ExceptionGroup
            failure = error
        finally:
            await broker.aclose()
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


def _operation(tool: str, broker: Broker) -> Operation[Call]:
    from beam_runtime.broker import operations
    from beam_runtime.broker.queries import queries

    async def sync(session: LeanSession, call: Call, ctx: Context) -> dict[str, Any]:
        return await operations.sync(
            session, call.path, ctx, scope=call.diagnostic_scope, items=True, wait_ms=call.wait_ms
        )

    async def run_at(session: LeanSession, call: Call, ctx: Context) -> dict[str, Any]:
        return await broker.speculation.run_at(session, call, ctx, keep=False)

    async def trying(session: LeanSession, call: Call, ctx: Context) -> dict[str, Any]:
        from beam_runtime.broker.speculation.trying import run_try

        return dict(await run_try(broker.speculation, session, TryCall.of(call), ctx))

    async def verify(session: LeanSession, call: Call, ctx: Context) -> dict[str, Any]:
        from beam_runtime.broker.verify import verify as verifying

        plan = await verifying.prepare(session.root, call)
        if plan.check is not None and plan.check.valid:
            return dict(verifying.from_receipt(plan))
        return dict(await verifying.verify(session, broker.speculation.scratch, plan, ctx))

    async def statements(session: LeanSession, call: Call, ctx: Context) -> dict[str, Any]:
        from beam_runtime.broker.verify import verify as verifying

        return dict(await verifying.statements(session, broker.speculation.scratch, call, ctx))

    found: dict[str, Operation[Call]] = {
        "lean_statements": statements,  # `lean-beam lean lock`: no MCP tool writes the lock
        "lean_sync": sync,
        "lean_goals": queries.goals,
        "lean_hover": queries.hover,
        "lean_todo": queries.todo,
        "lean_run_at": run_at,
        "lean_verify": verify,
        "lean_try": trying,
    }
    if tool not in found:
        raise BrokerError(
            "invalidInput",
            f"{tool} is not available from the command line in this version",
            {"reason": "unavailable", "fix": "use the MCP tool, or upgrade lean-beam"},
        )
    return found[tool]
