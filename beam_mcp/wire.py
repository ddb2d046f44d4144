"""JSON-RPC framing for the stdio transport: envelopes, ids, error codes, encoding.

Only the standard library and `beam_runtime.errors` (for `excerpt`) are imported here: this
module is on the cold-start path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from beam_runtime.errors import excerpt

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION = -32022

# A line longer than this is answered with -32700 and discarded.
MAX_LINE_BYTES = 32 * 1024 * 1024

RequestId = str | int

_REQUEST_KEYS = frozenset(("jsonrpc", "id", "method", "params"))
# ASCII output stays valid UTF-8 even when a client sent lone surrogates in a string.
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
# Tool results are read by models: non-ASCII text is written as itself.
_encode_text = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False).encode


# What an error quotes of a client's input: the start of a long value and its length, never the
# value whole (a 10 MB protocol version would otherwise come back twice as big).
ERROR_TEXT_CHARS = 2000  # the most of any one string an error carries
ERROR_ITEMS = 64  # the most items of any one list or object an error carries


def quoted(value: Any) -> str:
    """``repr`` of a client's value for a message, as an excerpt."""
    return repr(excerpt(value)) if isinstance(value, str) else excerpt(repr(value))


def names(keys: list[str]) -> str:
    """Names a client sent that are not accepted: the first eight, as excerpts, and the count."""
    shown = [excerpt(key, 80) for key in keys[:8]]
    return f"{shown} (and {len(keys) - 8} more of {len(keys)})" if len(keys) > 8 else str(shown)


def bounded(value: Any) -> Any:
    """``value`` with every string cut to an excerpt and every list or object to its first
    items: the last bound on what an error echoes, whatever built it."""
    if isinstance(value, str):
        return excerpt(value, ERROR_TEXT_CHARS)
    if isinstance(value, (list, tuple)):
        items = [bounded(item) for item in value[:ERROR_ITEMS]]
        if len(value) > ERROR_ITEMS:
            items.append(f"… ({len(value)} items)")
        return items
    if isinstance(value, dict):
        entries: dict[Any, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index == ERROR_ITEMS:
                entries["…"] = f"({len(value)} entries)"
                break
            entries[bounded(key) if isinstance(key, str) else key] = bounded(item)
        return entries
    return value


class RpcError(Exception):
    """A JSON-RPC error answer for one request."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": bounded(self.message)}
        if self.data is not None:
            body["data"] = bounded(self.data)
        return body


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Invalid:
    """A line that cannot be dispatched; `id` is the recovered id, if it was valid."""

    id: RequestId | None
    error: RpcError


Message = Request | Notification | Invalid


def valid_id(value: Any) -> bool:
    # bool is a subclass of int but JSON true/false are not valid ids.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def id_key(value: RequestId) -> tuple[str, RequestId]:
    """Keeps string and integer ids distinct when used as dictionary keys."""
    return ("s" if isinstance(value, str) else "i", value)


def decode(line: bytes) -> Message:
    """Classifies one non-blank input line."""
    try:
        text = line.decode("utf-8")  # strict: the wire is UTF-8 only (no UTF-16/32, no BOM)
    except UnicodeDecodeError:
        return Invalid(None, RpcError(PARSE_ERROR, "parse error: the line is not valid UTF-8"))
    try:
        obj = _decode(text)
    except (ValueError, RecursionError):
        return Invalid(None, RpcError(PARSE_ERROR, "parse error: the line is not valid JSON"))
    if isinstance(obj, list):
        return Invalid(None, RpcError(INVALID_REQUEST, "batch requests are not supported"))
    if not isinstance(obj, dict):
        return Invalid(None, RpcError(INVALID_REQUEST, "a message must be a JSON object"))
    return _classify(obj)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# What json.loads(bytes, parse_constant=...) does, without building a decoder per line.
_decode = json.JSONDecoder(parse_constant=_reject_constant).decode


def _classify(obj: dict[str, Any]) -> Message:
    has_id = "id" in obj
    raw_id = obj.get("id")
    rid: RequestId | None = raw_id if has_id and valid_id(raw_id) else None
    if "method" not in obj:
        # A response from the client: this server never sends requests.
        return Invalid(None, RpcError(INVALID_REQUEST, "unexpected message without a method"))
    if has_id and rid is None:
        return Invalid(None, RpcError(INVALID_REQUEST, "id must be a string or an integer"))
    extra = sorted(k for k in obj if k not in _REQUEST_KEYS)
    if extra:
        return Invalid(
            rid, RpcError(INVALID_REQUEST, f"undeclared envelope members: {names(extra)}")
        )
    if obj.get("jsonrpc") != "2.0":
        return Invalid(rid, RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0"'))
    method = obj["method"]
    if not isinstance(method, str):
        return Invalid(rid, RpcError(INVALID_REQUEST, "method must be a string"))
    params = obj.get("params", {})
    if not isinstance(params, dict):
        return Invalid(rid, RpcError(INVALID_PARAMS, "params must be an object"))
    if rid is None:
        return Notification(method, params)
    return Request(rid, method, params)


def encode(message: dict[str, Any]) -> bytes:
    return (_encode(message) + "\n").encode("utf-8")


def compact(value: Any) -> str:
    return _encode(value)


def tool_result_message(
    rid: RequestId,
    body: Any,
    is_error: bool,
    extra: dict[str, Any],
    budget: int | None = None,
    *,
    structured: bool = True,
) -> bytes:
    """A `tools/call` answer carrying `body` as its JSON text and, when `structured`, as
    structured content too (revisions before structured tool output get the text alone).

    The text is compact JSON with non-ASCII characters as themselves; over `budget` UTF-8 bytes
    the body is cut first (`beam_mcp.budget`). The body is encoded once and spliced in:
    `result` is the last member of the message and is never empty, so the encoded message ends
    with the two braces that close both. A lone surrogate (which UTF-8 cannot carry) sends the
    whole message through the ASCII encoder instead.
    """
    text = _encode_text(body)
    if budget is not None and len(text) * 4 > budget and _utf8_size(text) > budget:
        from beam_mcp.budget import bound

        body = bound(body, budget, lambda value: _utf8_size(_encode_text(value)))
        text = _encode_text(body)
    try:
        return _spliced(_encode_text, rid, text, is_error, extra, structured).encode("utf-8")
    except UnicodeEncodeError:
        return _spliced(_encode, rid, _encode(body), is_error, extra, structured).encode("utf-8")


def _spliced(
    encoder: Any,
    rid: RequestId,
    text: str,
    is_error: bool,
    extra: dict[str, Any],
    structured: bool,
) -> str:
    result = {"content": [{"type": "text", "text": text}], "isError": is_error, **extra}
    head: str = encoder({"jsonrpc": "2.0", "id": rid, "result": result})
    if not structured:
        return head + "\n"
    return head[:-2] + ',"structuredContent":' + text + "}}\n"


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def text_of(value: Any) -> str:
    """The text of a tool result: compact JSON, non-ASCII characters as themselves."""
    return _encode_text(value)


def result_message(rid: RequestId, result: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": rid, "result": result})


def error_message(rid: RequestId | None, error: RpcError) -> bytes:
    return encode({"jsonrpc": "2.0", "id": rid, "error": error.to_json()})


def notification_message(method: str, params: dict[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method, "params": params})
