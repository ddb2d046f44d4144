"""Bounded waits (docs/MCP.md#bounded-waits): a barrier that outlives the call which started it.

A call waits at most its ``wait_ms`` for a document's barrier. The barrier itself runs as a task
in the server's long-lived task group, one per document version, so when the call gives up the
Lean work and the wait for it go on, and the next call for the same path and version joins that
task instead of starting another. A barrier that failed is reported once, to the call that sees
it end; the call after that starts afresh.
"""

from __future__ import annotations

import anyio

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.session import LeanSession


class Barrier:
    """One document version's barrier, running or finished."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.done = anyio.Event()
        self.failure: BrokerError | None = None


async def barrier_within(session: LeanSession, doc: OpenDocument, wait_ms: int | None) -> bool:
    """Whether the barrier of ``doc``'s current version finished within ``wait_ms``.

    ``wait_ms`` of ``None`` waits as long as the session's barrier limit. Failures of the
    barrier (a timeout of that limit, a crash) are raised as they would be without a bound.
    """
    barrier = _joined(session, doc)
    if wait_ms is None:
        await barrier.done.wait()
    else:
        with anyio.move_on_after(wait_ms / 1000):
            await barrier.done.wait()
    if not barrier.done.is_set():
        return False
    if barrier.failure is not None:
        _barriers(session).pop(doc.source.abs_path, None)
        raise barrier.failure
    return True


def _joined(session: LeanSession, doc: OpenDocument) -> Barrier:
    running = _barriers(session)
    current = running.get(doc.source.abs_path)
    if current is not None and current.version == doc.version:
        return current
    barrier = running[doc.source.abs_path] = Barrier(doc.version)
    if session.spawn is None:
        raise BrokerError("internalError", "the broker has no task group for barriers")
    session.spawn(_run, session, doc, barrier)
    return barrier


def _barriers(session: LeanSession) -> dict[str, Barrier]:
    found: dict[str, Barrier] = session.barriers
    return found


async def _run(session: LeanSession, doc: OpenDocument, barrier: Barrier) -> None:
    try:
        await session.barrier(doc)
    except BrokerError as failure:
        barrier.failure = failure
    except Exception as exc:
        barrier.failure = BrokerError("internalError", f"the sync barrier failed: {exc}")
    finally:
        barrier.done.set()
