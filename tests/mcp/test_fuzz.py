"""Property-based fuzz of the wire: the server never dies, stdout stays JSON lines, and every
request is answered exactly once (or not at all when its id was busy)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.mcp.helpers import SLEEP_BACKEND, Server, meta, minimal_env, request

METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
    "x/y",
]
TOOLS = ["beam_version", "beam_stats", "lean_sync", "lean_hover", "nope"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.binary(max_size=40)).replace(b"\n", b" ") + b"\n"
    if kind == 1:
        return json.dumps(draw(json_values)).encode() + b"\n"
    msg: dict[str, Any] = {
        "jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0"])),
        "method": draw(st.sampled_from(METHODS)),
    }
    params: dict[str, Any] = {}
    if draw(st.booleans()):
        params["_meta"] = meta() if draw(st.booleans()) else draw(json_values)
    if msg["method"] == "tools/call":
        params["name"] = draw(st.sampled_from(TOOLS))
        params["arguments"] = draw(
            st.dictionaries(
                st.sampled_from(["workspace", "path", "version", "x"]), json_values, max_size=3
            )
        )
    if draw(st.booleans()):
        params.update(draw(st.dictionaries(st.text(max_size=4), json_values, max_size=2)))
    msg["params"] = params
    if kind >= 3:
        msg["id"] = draw(st.one_of(st.integers(-3, 10**6), st.text(max_size=6), json_values))
    return json.dumps(msg).encode() + b"\n"


def expected_ids(batch: list[bytes]) -> list[Any]:
    """Valid request ids that must be answered (unique within a batch by construction)."""
    ids = []
    for frame in batch:
        try:
            obj = json.loads(frame)
        except ValueError:
            continue
        if isinstance(obj, dict) and "method" in obj and "id" in obj:
            rid = obj["id"]
            if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
                ids.append(rid)
    return ids


def uniquify(batch: list[bytes], offset: int) -> list[bytes]:
    """Gives every valid request id a fresh unique value so answers can be counted."""
    out = []
    for n, frame in enumerate(batch):
        try:
            obj = json.loads(frame)
        except ValueError:
            out.append(frame)
            continue
        if (
            isinstance(obj, dict)
            and "method" in obj
            and "id" in obj
            and (isinstance(obj["id"], str) or type(obj["id"]) is int)
        ):
            obj["id"] = f"f{offset}-{n}" if isinstance(obj["id"], str) else offset * 1000 + n
            frame = json.dumps(obj).encode() + b"\n"
        out.append(frame)
    return out


@pytest.fixture(scope="module")
def long_lived() -> Iterator[Server]:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    yield srv
    code, stderr, _ = srv.close()
    assert (code, stderr) == (0, b"")


def check_batch(srv: Server, batch: list[bytes]) -> None:
    want = expected_ids(batch)
    srv.send(*batch)
    marker = request("fuzz-marker", "server/discover", {"_meta": meta()})
    srv.send(marker)
    seen: list[Any] = []
    while True:
        msg = srv.read()
        assert msg.get("jsonrpc") == "2.0"
        if msg.get("id") == "fuzz-marker":
            break
        if "method" not in msg and msg.get("id") is not None:
            seen.append(msg["id"])
    # tools/call of Lean tools may still be running; collect their answers too.
    missing = [i for i in want if i not in seen]
    while missing:
        msg = srv.read()
        if "method" not in msg and msg.get("id") is not None:
            seen.append(msg["id"])
        missing = [i for i in want if i not in seen]
    assert sorted(map(str, seen)) == sorted(map(str, want))


COUNTER = iter(range(1, 10**9))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(frames(), min_size=1, max_size=30))
def test_fuzz_long_lived_server(long_lived: Server, batch: list[bytes]) -> None:
    check_batch(long_lived, uniquify(batch, next(COUNTER)))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(frames(), min_size=1, max_size=40))
def test_fuzz_fresh_servers(batch: list[bytes]) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        check_batch(srv, uniquify(batch, 1))
        code, stderr, _rest = srv.close()
        assert (code, stderr) == (0, b"")
        for raw in srv.raw:
            json.loads(raw)  # every stdout line is JSON
    finally:
        srv.kill()
