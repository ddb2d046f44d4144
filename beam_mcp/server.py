"""The stdio server: stdin lines in order, one serialized writer, concurrent tool calls.

Start-up is in two phases so the first `tools/list` answer does not wait for anyio, asyncio or
pydantic:

1. Synchronous: a reader thread splits stdin into lines; the main thread lets the router answer
   them, writing each answer directly. Nothing runs concurrently, so this is trivially
   serialized.
2. Async (anyio): entered on the first `tools/call` that needs the Lean backend. The event loop
   takes stdin over from the thread when it can wait on it (a pipe, socket or terminal; the
   thread keeps reading a regular file), a writer task owns stdout, and every backend call runs
   in its own cancel scope inside one task group.

EOF, SIGTERM, SIGINT and SIGHUP end both phases the same way: stop admitting, cancel in-flight
calls (they get no response), flush what was already answered, exit 0.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from beam_mcp.router import Outbox, PendingCall, Router
from beam_mcp.settings import Settings
from beam_mcp.stdio import handle_line, long_lived, write_all
from beam_mcp.wire import MAX_LINE_BYTES, PARSE_ERROR, RequestId, RpcError

if TYPE_CHECKING:
    from beam_mcp.aserver import AsyncServer

_CHUNK = 1 << 16
_EOF = object()
_SIGNAL = object()
_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


class Inbox:
    """Batches of lines and end markers, from the reader thread (or a signal handler).

    Phase 1 blocks in `get`. Phase 2 sets `on_put` to a callback that wakes the event loop
    directly (`call_soon_threadsafe`), so a line reaches the loop with one thread hop.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.on_put: Callable[[], None] | None = None

    def put(self, item: Any) -> None:
        self._queue.put(item)  # SimpleQueue.put may be called from a signal handler
        wake = self.on_put
        if wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                wake()

    def get(self) -> Any:
        return self._queue.get()

    def get_nowait(self) -> Any:
        """The next item, or None when there is none."""
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return None


class LineSplitter:
    """Cuts a byte stream into lines; a line over `MAX_LINE_BYTES` becomes a parse error."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overlong = False  # inside a line that was already reported and discarded

    def feed(self, chunk: bytes) -> list[bytes | RpcError]:
        pending = self._pending
        pending += chunk
        lines: list[bytes | RpcError] = []
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            if self._overlong:
                self._overlong = False  # the rest of a discarded line
            else:
                lines.append(bytes(pending[start:end]))
            start = end + 1
        del pending[:start]
        if len(pending) > MAX_LINE_BYTES:
            if not self._overlong:
                lines.append(RpcError(PARSE_ERROR, "line longer than 32 MiB discarded"))
            self._overlong = True
            pending.clear()
        return lines

    def finish(self) -> list[bytes | RpcError]:
        """The last line when input ends without a newline."""
        last = bytes(self._pending)
        self._pending.clear()
        return [last] if last and not self._overlong else []


class LineReader:
    """The thread that reads stdin in phase 1 and queues its lines in batches.

    Phase 2 may take stdin over (`hand_over`): the thread stops between reads and the event
    loop reads the descriptor itself, with the same `LineSplitter`, so no line is lost or cut.
    """

    def __init__(self, fd: int, inbox: Inbox) -> None:
        self.fd = fd
        self.splitter = LineSplitter()
        self._inbox = inbox
        self._stop_r, self._stop_w = os.pipe()
        self._handed_over = False
        self.gate = threading.Event()  # cleared by phase 2 while it cannot take more lines
        self.gate.set()
        self._thread = threading.Thread(target=self._run, name="stdin-reader", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def hand_over(self) -> LineSplitter | None:
        """Stops the thread; returns the splitter if the caller may now read stdin itself.

        None when stdin has ended or failed already (then the inbox holds the end marker).
        """
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        # The thread blocks only in poll(), which the stop byte wakes: read() follows POLLIN.
        self._thread.join()
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        return self.splitter if self._handed_over else None

    def _run(self) -> None:
        stopped = False
        with contextlib.suppress(Exception):  # a broken stdin is the end of input
            stopped = self._read()
        if stopped:
            self._handed_over = True
            return
        self._inbox.put(_EOF)

    def _read(self) -> bool:
        """Reads until EOF (False) or until asked to stop (True)."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if self._stop_r in ready:
                return True
            self.gate.wait()
            chunk = os.read(self.fd, _CHUNK)
            if not chunk:
                if last := self.splitter.finish():
                    self._inbox.put(last)
                return False
            lines = self.splitter.feed(chunk)
            if lines:
                self._inbox.put(lines)


class SyncOutbox:
    """Phase-1 writer: answers go straight to stdout, in order."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def send(self, data: bytes, done: Callable[[], None] | None = None) -> None:
        write_all(self._fd, data)
        if done is not None:
            done()


class Server:
    """The process's server, and the router's host: it owns which phase serves the router."""

    def __init__(self, settings: Settings, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.settings = settings
        self.stdout_fd = stdout_fd
        self.inbox = Inbox()
        self.reader = LineReader(stdin_fd, self.inbox)
        self._outbox: Outbox = SyncOutbox(stdout_fd)
        self._node: AsyncServer | None = None
        self.router = Router(settings, self)

    # -- the router's host: phase 1 answers itself, phase 2 hands over to the async node

    def send(self, data: bytes, done: Callable[[], None] | None = None) -> None:
        self._outbox.send(data, done)

    def cancel(self, rid: RequestId) -> None:
        if self._node is not None:
            self._node.cancel(rid)

    def runtime_active(self) -> bool:
        return self._node is not None and self._node.runtime_active()

    def sessions(self) -> dict[str, dict[str, Any]]:
        return {} if self._node is None else self._node.sessions()

    def serve_through(self, node: AsyncServer) -> None:
        """Phase 2 starts: the node's outbox writes from now on, and it runs the calls."""
        self._node = node
        self._outbox = node.outbox

    def run(self) -> int:
        self._install_signals()
        self.reader.start()
        try:
            pending = self._sync_phase()
            if pending is not None:
                with long_lived():
                    from beam_mcp.aserver import run_async

                run_async(self, pending)
        except BrokenPipeError:
            pass  # the client closed stdout: nothing more can be said
        return 0

    def _install_signals(self) -> None:
        for name in _SIGNALS:
            signum = getattr(signal, name, None)
            if signum is not None:
                signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.inbox.put(_SIGNAL)

    def _sync_phase(self) -> tuple[PendingCall, list[bytes | RpcError]] | None:
        while True:
            item = self.inbox.get()
            if item is _EOF or item is _SIGNAL:
                return None
            for index, line in enumerate(item):
                pending = handle_line(self.router, line)
                if pending is not None:
                    return pending, item[index + 1 :]

    def end_of_input(self) -> None:
        self.inbox.put(_EOF)

    @staticmethod
    def is_end(item: Any) -> bool:
        return item is _EOF or item is _SIGNAL

    @staticmethod
    def is_eof(item: Any) -> bool:
        return item is _EOF
