"""Content-Length framing on the fake's stdio (blocking, standard library only)."""

from __future__ import annotations

import json
import threading
from typing import Any, BinaryIO


class WireError(Exception):
    pass


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """One decoded message, or None at end of input."""
    length: int | None = None
    while True:
        line = stream.readline(65536)
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise WireError("missing Content-Length header")
    body = stream.read(length)
    if len(body) < length:
        return None
    message = json.loads(body.decode("utf-8"))
    if not isinstance(message, dict):
        raise WireError("message is not a JSON object")
    return message


class Writer:
    """Serialises frames onto stdout; every message gets ``"jsonrpc": "2.0"``."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        payload = {"jsonrpc": "2.0", **message}
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        frame = b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        with self._lock:
            try:
                self._stream.write(frame)
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"id": request_id, "error": {"code": code, "message": message}})
