"""Scratch pools: parallel probes, per-document and per-process caps, idle closing."""

from __future__ import annotations

import time
from pathlib import Path

from tests.broker.fake import request_log
from tests.mcp.helpers import Server, call, structured
from tests.speculative.helpers import Probe, fake_server, targets

PROOF = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact hp\n"
# (probe text, expected goal targets afterwards)
CASES = [
    ("sleep 200\nconstructor", ["p", "q"]),
    ("sleep 200\nconstructor\nexact hp", ["q"]),
    ("sleep 200\nskip", ["p ∧ q"]),
    ("sleep 200\nconstructor\nexact hp\nexact hq", []),
    ("sleep 200\nexact hq", ["p ∧ q"]),
]


def scratch_count(p: Probe) -> int:
    count: int = p.stats()["workspaces"][0]["session"]["scratch_documents"]
    return count


def concurrent(p: Probe, path: str, cases: list[tuple[str, list[str]]]) -> list[dict]:
    """Sends every probe at once, then collects the answers in order."""
    ids = list(range(1000, 1000 + len(cases)))
    version = p.ok("lean_update", {"path": path})["version"]
    for rid, (text, _) in zip(ids, cases, strict=True):
        args = {**p.ws, "path": path, "version": version, "line": 1, "character": 2, "text": text}
        p.server.send(call(rid, "lean_run_at", args))
    answers: dict[int, dict] = {}
    while len(answers) < len(ids):
        message = p.server.read()
        if message.get("id") in ids and "method" not in message:
            answers[message["id"]] = message
    return [structured(answers[rid]) for rid in ids]


def setup(servers: list[Server], project: Path, *flags: str) -> Probe:
    (project / "Main.lean").write_text(PROOF)
    (project / "Other.lean").write_text(PROOF)
    return Probe(fake_server(servers, *flags), project)


def test_parallel_probes_get_their_own_answers(servers: list[Server], project: Path) -> None:
    p = setup(servers, project, "--scratch-per-document", "2")
    results = concurrent(p, "Main.lean", CASES)
    for (text, expected), result in zip(CASES, results, strict=True):
        assert targets(result) == expected, text
    assert results[4]["success"] is False
    assert all(result["success"] for result in results[:4])
    assert 1 <= scratch_count(p) <= 2
    p.untouched()


def test_default_pool_queues_on_one_scratch_document(servers: list[Server], project: Path) -> None:
    p = setup(servers, project)
    results = concurrent(p, "Main.lean", CASES[:3])
    assert [targets(result) for result in results] == [expected for _, expected in CASES[:3]]
    assert scratch_count(p) == 1
    p.untouched()


def test_process_cap_moves_the_scratch_document(servers: list[Server], project: Path) -> None:
    p = setup(servers, project, "--scratch-per-process", "1")
    other = Probe(p.server, project, "Other.lean")
    for round_ in range(2):
        assert targets(p.at(1, 2, "constructor")) == ["p", "q"], round_
        assert scratch_count(p) == 1
        assert targets(other.at(1, 2, "constructor\nexact hp")) == ["q"], round_
        assert scratch_count(p) == 1


def test_idle_scratch_documents_are_closed(servers: list[Server], project: Path) -> None:
    p = setup(servers, project, "--scratch-idle-ms", "200")
    handle = p.at(1, 2, "constructor", tool="lean_run_at_handle")["next_handle"]
    assert scratch_count(p) == 1
    deadline = time.monotonic() + 15
    while scratch_count(p) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert scratch_count(p) == 0
    # a handle outlives its scratch document: the next probe opens a fresh one
    assert targets(p.with_(handle, "exact hp")) == ["q"]


def test_nearby_probes_return_to_the_scratch_document_that_ran_them(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    (project / "Main.lean").write_text(PROOF + "  skip\n")
    p = Probe(
        fake_server(servers, "--scratch-per-document", "2", FAKE_LEAN_REQUEST_LOG=str(log)), project
    )
    version = p.version
    ids = [2000, 2001]
    for rid, line in zip(ids, (1, 3), strict=True):  # both at once: two scratch documents
        args = {
            **p.ws,
            "path": "Main.lean",
            "version": version,
            "line": line,
            "character": 2,
            "text": "sleep 300\nskip",
        }
        p.server.send(call(rid, "lean_run_at", args))
    seen = 0
    while seen < len(ids):
        message = p.server.read()
        seen += message.get("id") in ids and "method" not in message
    assert scratch_count(p) == 2
    for line in (1, 3, 1, 3):
        p.at(line, 2, "skip")
    goal_calls = [
        e["uri"]
        for e in request_log(log)
        if e.get("request") == "$/lean/rpc/call" and "beam-scratch" in (e.get("uri") or "")
    ]
    sequential = goal_calls[2:]
    assert len(sequential) == 4
    assert sequential[0] == sequential[2] and sequential[1] == sequential[3]
    assert sequential[0] != sequential[1]
