"""The host's transport: a Unix stream socket with Content-Length frames on it.

The listening socket is bound with mode 0600 inside a 0700 directory (``place``), and every
accepted connection's peer is checked with ``SO_PEERCRED``: a process of another user is
refused even if the file modes were loosened. Frames are those of the Lean language server
(``beam_runtime/lsp/framing.py``): compact UTF-8 JSON after a ``Content-Length`` header.
``Frames`` carries them over an anyio stream; ``SyncChannel`` over a blocking socket, for the
commands that only ask a host a question (``lean-beam host list``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
from typing import Any

import anyio
from anyio.abc import ByteStream

from beam_runtime.lsp.framing import FrameBuffer, FrameReader, encode_message

PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def bind_listener(path: str, backlog: int = 128) -> socket.socket:
    """A listening socket at ``path`` (mode 0600); a file already there is replaced: the caller
    holds the host lock, so whatever is there belongs to a host that died."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the host is single-threaded while it binds
    try:
        sock.bind(path)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(backlog)
    return sock


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a connected Unix socket."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size)
    return int(PEERCRED.unpack(raw)[1])


class Frames:
    """One JSON object per frame over an anyio byte stream; sends are serialized."""

    def __init__(self, stream: ByteStream) -> None:
        self.stream = stream
        self._reader = FrameReader(stream)
        self._lock = anyio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = encode_message(message)
        async with self._lock:
            await self.stream.send(data)

    async def receive(self) -> dict[str, Any] | None:
        """The next message; None at a clean end of stream (``FramingError`` otherwise)."""
        return await self._reader.read()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.stream.aclose()


class SyncChannel:
    """The same frames over a blocking socket, every operation bounded by ``timeout_s``."""

    def __init__(self, path: str, timeout_s: float) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout_s)
        try:
            self._sock.connect(path)
        except OSError:
            self._sock.close()
            raise
        self._buffer = FrameBuffer()
        self._ready: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self._sock.sendall(encode_message(message))

    def receive(self) -> dict[str, Any] | None:
        while not self._ready:
            data = self._sock.recv(1 << 16)
            if not data:
                return None
            self._ready.extend(self._buffer.feed(data))
        return self._ready.pop(0)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> SyncChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
