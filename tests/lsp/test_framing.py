"""The Content-Length framing, over real anyio byte streams."""

from __future__ import annotations

import json

import anyio
import pytest

from beam_runtime.lsp.errors import FramingError
from beam_runtime.lsp.framing import FrameBuffer, FrameReader, encode_message

pytestmark = pytest.mark.anyio


class _Bytes(anyio.abc.ByteReceiveStream):
    """A byte stream that yields the given chunks, then ends."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        return self._chunks.pop(0)

    async def aclose(self) -> None:
        self._chunks = []


async def test_round_trip_counts_bytes_not_characters() -> None:
    message = {"jsonrpc": "2.0", "method": "x", "params": {"goal": "⊢ p ∧ q"}}
    frame = encode_message(message)
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    assert frame.startswith(b"Content-Length: %d\r\n\r\n" % len(body))
    reader = FrameReader(_Bytes(frame[:7], frame[7:30], frame[30:]))
    assert await reader.read() == message
    assert await reader.read() is None


async def test_two_frames_in_one_chunk() -> None:
    first, second = {"id": 1, "result": None}, {"id": 2, "result": 3}
    reader = FrameReader(_Bytes(encode_message(first) + encode_message(second)))
    assert await reader.read() == first
    assert await reader.read() == second


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"Content-Length: 5\r\nX-Other: 1\r\n\r\n{}   ", "unexpected LSP header"),
        (b"Content-Type: x\r\n\r\n{}", "missing Content-Length"),
        (b"Content-Length: abc\r\n\r\n{}", "invalid Content-Length"),
        (b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", "duplicate"),
        (b"Content-Length: 10\r\n\r\n{}", "inside an LSP message body"),
        (b"Content-Length: 2\r\n", "inside an LSP header"),
        (b"Content-Length: 2\r\n\r\n[]", "not a JSON object"),
        (b"Content-Length: 2\r\n\r\n{x", "not UTF-8 JSON"),
    ],
)
async def test_malformed_frames_are_clear_errors(data: bytes, problem: str) -> None:
    with pytest.raises(FramingError, match=problem):
        await FrameReader(_Bytes(data)).read()
    buffer = FrameBuffer()
    with pytest.raises(FramingError, match=problem):
        buffer.feed(data)
        buffer.finish()


async def test_header_size_is_bounded() -> None:
    reader = FrameReader(_Bytes(b"Content-Length: 1" + b" " * 10000), max_header_bytes=1024)
    with pytest.raises(FramingError, match="longer than 1024 bytes"):
        await reader.read()


def test_frame_buffer_byte_by_byte_and_batched() -> None:
    first = {"jsonrpc": "2.0", "method": "x", "params": {"goal": "⊢ p ∧ q"}}
    second = {"id": 2, "result": 3}
    data = encode_message(first) + encode_message(second)
    buffer = FrameBuffer()
    seen = [message for byte in data for message in buffer.feed(bytes([byte]))]
    buffer.finish()
    assert seen == [first, second]
    assert FrameBuffer().feed(data) == [first, second]


def test_frame_buffer_header_size_is_bounded() -> None:
    buffer = FrameBuffer(max_header_bytes=1024)
    with pytest.raises(FramingError, match="longer than 1024 bytes"):
        buffer.feed(b"Content-Length: 1" + b" " * 10000)
