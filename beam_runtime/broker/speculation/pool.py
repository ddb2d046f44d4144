"""How many scratch documents speculative tools may keep, and for how long."""

from __future__ import annotations

from typing import NamedTuple


class PoolConfig(NamedTuple):  # immutable records, 60 us to define (a frozen dataclass: 0.7 ms)
    """The scratch documents of speculative tools (``scratch.py``): how many, how long kept."""

    per_document: int = 1
    per_process: int = 2  # each scratch document is a Lean worker process
    idle_s: float = 300.0
    wait_s: float = 600.0  # bound on queueing for a scratch document
