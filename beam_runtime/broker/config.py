"""The broker's configuration records: the bounds of a session's waits, the session manager's
settings, the scratch pool's caps and the broker's own; immutable, and cheap to import (the MCP
server and the shared host's client build them without importing the broker itself)."""

from __future__ import annotations

from typing import NamedTuple

# NamedTuple records: about 60 us each to define, where a frozen dataclass takes 0.7-0.8 ms.


class Limits(NamedTuple):
    """Bounds (seconds) of the waits a session performs."""

    start_s: float
    barrier_s: float
    navigation_s: float
    config_grace_s: float = 0.05
    rpc_keepalive_s: float = 10.0  # Lean drops an RPC session 30 s after its last keep-alive
    barrier_reissue_s: float = 2.0  # re-ask a barrier Lean seems to have dropped (see barrier)


class ManagerConfig(NamedTuple):
    """The sessions of one process (``session/manager.py``): how Lean is launched, how many
    workspaces are kept and for how long."""

    lean_cmd: tuple[str, ...] | None
    beam_cli: str | None
    limits: Limits
    idle_timeout_s: float
    max_workspaces: int
    config_timeout_s: float = 120.0
    # Passed to every Lean tree as LEAN_BEAM_MEMORY_SCOPE: the memory budget counts the Lean
    # processes of one scope (beam_runtime/lsp/memory.py). None: not passed.
    memory_scope: str | None = None
    # An address-space limit (bytes) on the Lean server's process tree (--worker-memory-max).
    worker_memory_max: int | None = None


class PoolConfig(NamedTuple):
    """The scratch documents of speculative tools (``speculation/scratch.py``): how many, how
    long kept."""

    per_document: int = 1
    per_process: int = 2  # each scratch document is a Lean worker process
    idle_s: float = 300.0
    wait_s: float = 600.0  # bound on queueing for a scratch document


class BrokerConfig(NamedTuple):
    """Everything the broker is configured with (the MCP layer fills it from its settings)."""

    manager: ManagerConfig
    scratch: PoolConfig
    result_bytes: int = 20_000  # the MCP result budget; lean_try shapes its answer to fit it
    # Bytes the Lean processes of the memory scope may use before a new worker is refused
    # (session/budget.py); None: no budget.
    budget_bytes: int | None = None
