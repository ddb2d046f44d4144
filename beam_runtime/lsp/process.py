"""Starting the server process and taking it down with every descendant.

The server runs in its own session. Lean's file workers call ``setsid``, so killing the process
group is not enough: descendants are tracked while the server runs (one shared scan,
`scanner`), and every process carrying this session's marker variable in its environment is
killed as well (that finds orphans whose parent already died). psutil is imported only when a
tree is killed. When this process itself dies, even by SIGKILL, its watchdog (`reaper`) kills
every marked process, the server and its workers alike.

No ``preexec_fn`` (a parent-death signal would need one, and only reaches the server, not the
workers it starts): with one, ``subprocess`` must ``fork`` instead of ``vfork``, and this
process then takes a copy-on-write fault on every page it writes afterwards (about a thousand on
a first Lean call).
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from beam_runtime.lsp.reaper import MARKER_VARIABLE, marked_environment
from beam_runtime.lsp.scanner import SCANNER, Descendant, read_table, start_ticks, update


class ServerProcess:
    def __init__(self, popen: subprocess.Popen[bytes], marker: str) -> None:
        self.popen = popen
        self.marker = marker
        self.known: set[Descendant] = set()  # seen as descendants (`scanner`)
        self.scans = 0  # scans that updated `known`

    @property
    def pid(self) -> int:
        return self.popen.pid


def spawn(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None) -> ServerProcess:
    environment = marked_environment(env)  # also starts this process's watchdog (`reaper`)
    marker = environment[MARKER_VARIABLE]
    popen = subprocess.Popen(
        list(argv),
        cwd=str(cwd),
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        start_new_session=True,
    )
    return ServerProcess(popen, marker)


class PipeReceiveStream(ByteReceiveStream):
    """Non-blocking reads from a pipe, waiting with ``anyio.wait_readable``."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)

    @property
    def closed(self) -> bool:
        return self._pipe.closed

    def fileno(self) -> int:
        return self._fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self._pipe.closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        if not self._pipe.closed:
            anyio.notify_closing(self._fd)
            self._pipe.close()


class PipeSendStream(ByteSendStream):
    def __init__(self, pipe: IO[bytes]) -> None:
        self._pipe = pipe
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._pipe.closed:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError) as error:
                raise anyio.BrokenResourceError from error
            view = view[written:]

    async def aclose(self) -> None:
        if not self._pipe.closed:
            anyio.notify_closing(self._fd)
            self._pipe.close()


class StderrTail:
    """The last ``size`` lines of the server's stderr (decoded leniently)."""

    def __init__(self, size: int = 64) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=size)
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        self._partial = self._partial[-65536:]
        for line in complete:
            self.lines.append(line.decode("utf-8", "replace").rstrip("\r"))

    def snapshot(self) -> list[str]:
        tail = list(self.lines)
        if self._partial:
            tail.append(self._partial.decode("utf-8", "replace"))
        return tail[-(self.lines.maxlen or 64) :]


def refresh_descendants(proc: ServerProcess) -> bool:
    """Scan now for `proc` alone; True if its tree grew.

    The shared scanner (`scanner.SCANNER`) does this for every live server at once. Blocking: it
    reads ``/proc`` for every process on the machine.
    """
    return update([proc], read_table())[0]


def _marked(marker: str) -> list[Any]:
    import psutil

    found = []
    for candidate in psutil.process_iter():
        try:
            if candidate.environ().get(MARKER_VARIABLE) == marker:
                found.append(candidate)
        except psutil.Error:
            continue
    return found


def kill_tree(proc: ServerProcess, wait_seconds: float = 3.0) -> None:
    """SIGKILL the server, its process group and every descendant; reap the server."""
    import psutil

    SCANNER.unregister(proc)
    targets: set[Any] = set(_still_known(proc))
    try:
        root = psutil.Process(proc.pid)
        targets.add(root)
        targets.update(root.children(recursive=True))
    except psutil.Error:
        pass
    targets.update(_marked(proc.marker))
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    for target in targets:
        try:
            target.kill()
        except psutil.Error:
            continue
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.popen.wait(timeout=wait_seconds)
    psutil.wait_procs([t for t in targets if t.pid != proc.pid], timeout=wait_seconds)


def _still_known(proc: ServerProcess) -> list[Any]:
    """psutil handles on the remembered descendants that are still the processes we saw."""
    import psutil

    found = []
    for known in proc.known:
        try:
            handle = psutil.Process(known.pid)
        except psutil.Error:
            continue
        if start_ticks(known.pid) == known.start:  # read after the handle: no pid reuse between
            found.append(handle)
    return found
