"""The memory budget: before a new Lean worker starts, the user's Lean processes must fit.

Every document and scratch document is a Lean worker process. Before one is opened, the summed
PSS of every Lean process of the memory scope (``beam_runtime/lsp/memory.py``: all hosts and
in-process servers of the user) is compared with the budget. Over it, the least recently used
idle workers of this process are closed one by one until the sum fits; still over, the call
fails with ``memoryBudget`` instead of letting the machine run out of memory (docs/HOST.md,
"The memory budget").
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import NamedTuple

import anyio

from beam_runtime.broker.errors import BrokerError

SETTLE_S = 2.0  # how long a closed worker may take to leave before measuring again
RETRY_AFTER_MS = 10_000


class Idle(NamedTuple):
    """A worker that could be closed: when it was last used, and how to close it (False when
    it became busy meanwhile)."""

    last_used: float
    close: Callable[[], Awaitable[bool]]


class MemoryBudget:
    def __init__(self, limit_bytes: int, scope: str) -> None:
        self.limit = limit_bytes
        self.scope = scope
        self.evicted = 0  # workers closed to make room, for beam_stats

    async def measure(self) -> tuple[int, int]:
        """(Lean processes of the scope, their summed PSS in bytes), read off the loop."""
        from beam_runtime.lsp import memory

        def read() -> tuple[int, int]:
            return memory.usage(memory.lean_processes(self.scope))

        return await anyio.to_thread.run_sync(read)

    async def admit(self, idle: Callable[[], list[Idle]]) -> None:
        """Returns when a new worker may start; ``memoryBudget`` when nothing idle is left."""
        count, used = await self.measure()
        if used < self.limit:
            return
        for victim in sorted(idle(), key=lambda item: item.last_used):
            if not await victim.close():
                continue
            self.evicted += 1
            count, used = await self._settled(count)
            if used < self.limit:
                return
        raise over_budget(self.limit, used)

    async def _settled(self, before: int) -> tuple[int, int]:
        """The usage once the closed worker's process has gone (bounded by ``SETTLE_S``)."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            count, used = await self.measure()
            if count < before or time.monotonic() >= deadline:
                return count, used
            await anyio.sleep(0.05)


def over_budget(limit: int, used: int) -> BrokerError:
    return BrokerError(
        "memoryBudget",
        f"Lean processes already use {_mib(used)} of the {_mib(limit)} memory budget and no "
        "idle Lean worker of this workspace is left to close",
        {"budget_bytes": limit, "used_bytes": used, "retry_after_ms": RETRY_AFTER_MS},
    )


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.0f} MiB"
