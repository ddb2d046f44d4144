"""Content-Length framing over anyio byte streams (strict, with bounded headers)."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from beam_runtime.lsp.errors import FramingError

MAX_HEADER_BYTES = 8 * 1024
MAX_BODY_BYTES = 512 * 1024 * 1024
_ALLOWED_HEADERS = ("content-length", "content-type")
_PLAIN_HEADER = re.compile(rb"Content-Length: ([0-9]+)")
# Built once: json.dumps with options builds a new encoder on every call.
_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def encode_message(message: dict[str, Any]) -> bytes:
    """A frame: compact UTF-8 JSON (non-ASCII kept raw), length counted in bytes."""
    body = _encode_json(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def write_message(stream: ByteSendStream, message: dict[str, Any]) -> None:
    await stream.send(encode_message(message))


def parse_header(block: bytes) -> int:
    """The body length declared by a header block (without its final blank line)."""
    plain = _PLAIN_HEADER.fullmatch(block)  # what Lean (and every server we know) sends
    if plain is not None and len(plain[1]) < 12:
        return _checked_length(int(plain[1]))
    try:
        text = block.decode("ascii")
    except UnicodeDecodeError as error:
        raise FramingError("LSP header is not ASCII") from error
    length: int | None = None
    for line in text.split("\r\n"):
        name, sep, value = line.partition(":")
        key = name.strip().lower()
        if not sep or key not in _ALLOWED_HEADERS:
            raise FramingError(f"unexpected LSP header line {line!r}")
        if key == "content-length":
            if length is not None:
                raise FramingError("duplicate Content-Length header")
            if not value.strip().isdigit():
                raise FramingError(f"invalid Content-Length {value.strip()!r}")
            length = int(value.strip())
    if length is None:
        raise FramingError("missing Content-Length header")
    return _checked_length(length)


def _checked_length(length: int) -> int:
    if length > MAX_BODY_BYTES:
        raise FramingError(f"message of {length} bytes exceeds the {MAX_BODY_BYTES}-byte limit")
    return length


class FrameReader:
    """Reads one JSON object per frame; ``None`` marks a clean end of stream."""

    def __init__(self, stream: ByteReceiveStream, max_header_bytes: int = MAX_HEADER_BYTES) -> None:
        from anyio.streams.buffered import BufferedByteReceiveStream  # not used on asyncio

        self._stream = BufferedByteReceiveStream(stream)
        self._max_header = max_header_bytes

    async def read(self) -> dict[str, Any] | None:
        try:
            header = await self._stream.receive_until(b"\r\n\r\n", self._max_header)
        except anyio.IncompleteRead:
            if self._stream.buffer:
                raise FramingError("stream ended inside an LSP header") from None
            return None
        except anyio.DelimiterNotFound:
            raise FramingError(f"LSP header longer than {self._max_header} bytes") from None
        length = parse_header(header)
        try:
            body = await self._stream.receive_exactly(length)
        except anyio.IncompleteRead:
            raise FramingError("stream ended inside an LSP message body") from None
        return decode_body(body)


def decode_body(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FramingError(f"LSP body is not UTF-8 JSON: {error}") from error
    if not isinstance(message, dict):
        raise FramingError("LSP message is not a JSON object")
    return message


class FrameBuffer:
    """The same framing, synchronous and incremental: bytes in, complete messages out."""

    def __init__(self, max_header_bytes: int = MAX_HEADER_BYTES) -> None:
        self._buffer = bytearray()
        self._max_header = max_header_bytes
        self._length: int | None = None

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        buffer = self._buffer
        buffer += data
        messages: list[dict[str, Any]] = []
        while True:
            if self._length is None:
                end = buffer.find(b"\r\n\r\n")
                if end < 0 or end > self._max_header:
                    if end > self._max_header or len(buffer) > self._max_header + 3:
                        raise FramingError(f"LSP header longer than {self._max_header} bytes")
                    return messages
                self._length = parse_header(bytes(buffer[:end]))
                del buffer[: end + 4]
            if len(buffer) < self._length:
                return messages
            body = bytes(buffer[: self._length])
            del buffer[: self._length]
            self._length = None
            messages.append(decode_body(body))

    def finish(self) -> None:
        """The stream ended: an error if it stopped inside a frame."""
        if self._length is not None:
            raise FramingError("stream ended inside an LSP message body")
        if self._buffer:
            raise FramingError("stream ended inside an LSP header")
