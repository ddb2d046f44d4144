"""The stdio primitives both server phases share: writing whole answers, handling one line,
telling whether a loop can wait on a descriptor, and building what lives as long as the server.

``server`` (phase 1, which owns the choice of loop) and ``aserver`` (phase 2) both import this
module; neither imports the other at run time.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
from collections.abc import Iterator

from beam_mcp.router import PendingCall, Router
from beam_mcp.wire import RpcError, decode, error_message


def pollable(fd: int) -> bool:
    """Whether an event loop can wait on `fd` (pipes, sockets and terminals; not files)."""
    try:
        probe = select.epoll()
    except (AttributeError, OSError):
        return False
    try:
        probe.register(fd, select.EPOLLIN)
    except OSError:
        return False
    finally:
        probe.close()
    return True


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """For building what lives as long as the server (phase 2's modules, the broker).

    Imports make tens of thousands of objects that never die, and the cyclic collector walks
    each of them a few times while they are young (several ms of a first Lean call). It pauses
    while they are built, then they are frozen: no later collection walks them again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def handle_line(router: Router, line: bytes | RpcError) -> PendingCall | None:
    if isinstance(line, RpcError):
        router.outbox.send(error_message(None, line))
        return None
    stripped = line.strip()
    if not stripped:
        return None  # blank lines are ignored
    return router.handle(decode(stripped))
