"""Every real Lean answer in ``../shared/real-lean/`` fed through the broker's own code.

The data stays in ``../shared`` (read here, never copied). Goal texts go through the plainGoal
parser, and back through the fake's layout rules, which must print them exactly as Lean did;
the wire capture and the plainGoal answers are served by ``replay_lean.py`` over real pipes to a
real ``LeanSession`` (LSP client framing, notification routing, barrier, goals fallback).
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from beam_runtime.broker.config import Limits
from beam_runtime.broker.queries.goals import parse_goal, parse_plain_goal
from beam_runtime.broker.queries.navigation import normalize_locations
from beam_runtime.broker.queries.rpc import goals_at
from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.documents import OpenDocument
from beam_runtime.broker.session.launch import LaunchSpec
from beam_runtime.broker.session.paths import SourceFile, resolve_source
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.versions import VersionStore
from beam_runtime.lsp.client import LspClient
from tests.broker.replay_lean import capture_frames, read_values, request_answer_pairs
from tests.fake_lean import layout

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-lean"
REPLAY = Path(__file__).resolve().parent / "replay_lean.py"
CAPTURE = REAL / "wire-capture-newest-lean.jsonl"
PLAIN_GOAL = REAL / "plainGoal.lean.expected.out"
TERM_GOAL = REAL / "plainTermGoal.and.anonHyp.expected.out"

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-lean is not present")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def relayout(goal: dict[str, Any]) -> str:
    """A parsed goal printed again with Lean's layout rules (the fake's implementation)."""
    entries = [
        layout.Entry(tuple(hyp["names"]), hyp["type"], hyp.get("value")) for hyp in goal["hyps"]
    ]
    return layout.goal_text(goal.get("userName"), entries, goal["target"], goal["kind"] == "conv")


def h(names: str, type_: str, value: str | None = None) -> dict[str, Any]:
    hyp: dict[str, Any] = {"names": names.split(), "type": type_}
    if value is not None:
        hyp["value"] = value
    return hyp


def g(target: str, *hyps: dict[str, Any], case: str | None = None, kind: str = "goal") -> dict:
    goal: dict[str, Any] = {"userName": case} if case else {}
    return {**goal, "kind": kind, "hyps": list(hyps), "target": target}


SUCC = g("0 + (n✝ + 1) = n✝ + 1", h("n✝", "Nat"), h("a✝", "0 + n✝ = n✝"), case="succ")
S27 = (h("n m", "Nat"), h("h1", "n = m"), h("h2", "m = 0"))
T78 = (h("t a n✝", "Nat"), h("a✝", "t * (a + n✝) = t * a + t * n✝"))
PLAIN_GOAL_EXPECTED: dict[tuple[int, int], list[dict[str, Any]] | None] = {
    (0, 20): [g("α → α", h("α", "Sort ?u"))],
    (3, 3): [g("α", h("α", "Sort ?u"), h("a", "α"))],
    (15, 9): [g("0 + 0 = 0", case="zero")],
    (17, 5): [SUCC],
    (27, 3): [g("0 = n", *S27)],
    (27, 9): [g("0 = m", *S27)],
    (27, 13): [],
    (40, 3): [g("0 + 0 = 0", case="zero"), SUCC],
    (48, 3): [g("a = b", h("a b", "Nat"))],
    (55, 3): [
        g(
            "p a",
            h("α", "Sort u_1"),
            h("p", "α → Prop"),
            h("a b", "α"),
            h("inst✝", "DecidablePred p"),
            h("h", "∀ {p : α → Prop} [DecidablePred p], p a → p b"),
        )
    ],
    (61, 3): [g("True", case="left")],
    (78, 29): [
        g("t * (a + n✝) + t = t * a + t * (n✝ + 1)", *T78),
        g("t * (a + n✝) + t = t * a + (t * n✝ + t)", *T78),
        g("t * (a + n✝) + t = t * a + (t * n✝ + t)", *T78),
    ],
    (82, 53): [
        g("[] ++ bs ++ cs = [] ++ (bs ++ cs)", h("α", "Type u_1"), h("bs cs", "List α"), case="nil")
    ],
    (86, 38): [],
    (89, 39): None,
    (93, 16): [g("True", case="left"), g("False", case="right")],
    (97, 8): [g("True = True", kind="conv")],
    (99, 4): [g("True = True", kind="conv")],
    (101, 2): [],
    (106, 4): [g("True")],
    (115, 2): None,
    (124, 17): [g("p ∧ q", h("p q", "Prop"), h("hp", "p"), h("hq", "q"), h("this", "q ∧ p"))],
    (128, 18): [g("id (p ∧ q)", h("p q", "Prop"), h("hp", "p"), h("hq", "q"))],
    (139, 34): [g("True", case="zero"), g("True", h("n✝", "Nat"), h("a✝", "True"), case="succ")],
    (145, 34): [g("True", h("x✝", "Nat"))],
}


def _position(params: dict[str, Any]) -> tuple[int, int]:
    return params["position"]["line"], params["position"]["character"]


def test_every_plain_goal_answer_parses_exactly() -> None:
    pairs = request_answer_pairs(PLAIN_GOAL)
    assert {_position(params) for params, _ in pairs} == set(PLAIN_GOAL_EXPECTED)
    for params, answer in pairs:
        expected = PLAIN_GOAL_EXPECTED[_position(params)]
        if answer is None:
            assert expected is None
            continue
        parsed = parse_plain_goal(answer)
        assert parsed == expected, _position(params)
        # the markdown alone gives the same goals, and the layout rules print the texts again
        assert parse_plain_goal({"rendered": answer["rendered"]}) == parsed
        assert [relayout(goal) for goal in parsed] == answer["goals"]


TERM_EXPECTED = {
    "⊢ 0 < 2": g("0 < 2"),
    "y : Int\n⊢ OptionM Nat": g("OptionM Nat", h("y", "Int")),
    "m n : Nat\n⊢ ?m m n < n": g("?m m n < n", h("m n", "Nat")),
    "n : Nat\n⊢ ∀ (n m : Nat), n + m = m + n": g("∀ (n m : Nat), n + m = m + n", h("n", "Nat")),
    "x : Nat\n⊢ IO Unit": g("IO Unit", h("x", "Nat")),
}
ANONYMOUS = g(
    "Nat.succ n✝ + 1 > 0",
    h("n✝", "Nat"),
    {"names": [], "type": "n✝ + 1 > 0"},
    case="succ",
)


def test_term_goals_and_the_anonymous_hypothesis() -> None:
    seen = 0
    for _params, answer in request_answer_pairs(TERM_GOAL):
        if "goal" in answer:
            assert parse_goal(answer["goal"]) == TERM_EXPECTED[answer["goal"]]
            assert relayout(parse_goal(answer["goal"])) == answer["goal"]
        else:
            assert parse_plain_goal(answer) == [ANONYMOUS]
            assert [relayout(goal) for goal in parse_plain_goal(answer)] == answer["goals"]
        seen += 1
    assert seen == 6


GOAL_TEXTS_EXPECTED = [
    g("True", h("y", "Nat"), h("h", "let x := 1;\nx = y")),
    g("True", h("v", "let ty := Nat;\nid ty", "let x := 2;\nid x")),
    g("let ty := Nat;\nid = id"),
]


def test_wrapped_and_let_valued_goal_texts() -> None:
    goals = json.loads((REAL / "goal-texts.json").read_text(encoding="utf-8"))["goals"]
    parsed = [parse_goal(item["text"]) for item in goals]
    assert parsed == GOAL_TEXTS_EXPECTED
    assert [relayout(goal) for goal in parsed] == [item["text"] for item in goals]


def test_navigation_answers_normalize() -> None:
    pairs = request_answer_pairs(REAL / "navigation.expected.out")
    results = [normalize_locations(answer, "/") for _params, answer in pairs]
    assert results[0] == [
        {
            "uri": "file:///definition.lean",
            "path": "definition.lean",
            "range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 13}},
        }
    ]
    assert results[1][0]["range"]["start"] == {"line": 11, "character": 4}
    assert [item["range"]["start"]["line"] for item in results[2]] == [3, 6, 7]
    assert [item["path"] for item in results[3]] == [
        "findReferences.lean",
        "src/Lean/Server/Test/Refs.lean",
    ]
    assert [len(result) for result in results] == [1, 1, 3, 2]


def _mirror(uri: str, version: int) -> OpenDocument:
    source = SourceFile("/", uri.removeprefix("file://"), uri, uri)
    return OpenDocument(source, version, b"", "")


def test_published_diagnostics_as_the_broker_keeps_them() -> None:
    summary = []
    for params in read_values(REAL / "diagnostics.expected.out"):
        doc = _mirror(params["uri"], params["version"])
        doc.on_diagnostics(params)
        items = [diag.to_item(d, "f.lean", params["uri"]) for d in doc.diagnostics]
        for item, raw in zip(items, params["diagnostics"], strict=True):
            assert item["range"] == raw["fullRange"]  # never the truncated ``range``
        unsolved = [diag.is_unsolved_goals(d) for d in doc.diagnostics]
        summary.append((diag.counts(doc.diagnostics)["error"], unsolved))
    assert summary == [
        (2, [True, False]),
        (2, [False, True]),
        (1, [False]),
        (2, [True, False]),
        (1, [False]),
        (2, [False, True]),
    ]
    # the goals inside an "unsolved goals" message use the same layout as plainGoal answers
    first = read_values(REAL / "diagnostics.expected.out")[0]["diagnostics"][0]["message"]
    goal_text = first.split("\n", 1)[1]
    assert parse_goal(goal_text) == g("True", h("this", "∀ (a a : Nat), True"))


async def _session(group: Any, root: Path, *argv: str) -> LeanSession:
    launch = LaunchSpec([sys.executable, str(REPLAY), *argv])
    limits = Limits(start_s=10, barrier_s=10, navigation_s=10, config_grace_s=0.0)
    session = LeanSession(str(root), 1, launch, limits, VersionStore())
    await session.start(partial(LspClient.open_in, group))
    return session


@pytest.mark.anyio
async def test_wire_capture_through_a_real_session(tmp_path: Path) -> None:
    (tmp_path / "P.lean").write_text("#check unknownA\n#check unknownB\n")
    source = resolve_source(str(tmp_path), "P.lean")
    async with anyio.create_task_group() as group:
        session = await _session(group, tmp_path, str(CAPTURE), source.uri)
        try:
            assert session.server_capabilities["experimental"]["rpcProvider"]["rpcWireFormat"]
            doc, _ = await session.sync_text(source)
            await session.barrier(doc)
            assert doc.version == 1 and doc.progress.done and not doc.progress.fatal
            assert [diag.message_of(d) for d in doc.diagnostics] == [
                "Unknown identifier `unknownA`",
                "Unknown identifier `unknownB`",
            ]
            (tmp_path / "P.lean").write_text("#check Nat.zero\n#check unknownB\n")
            doc, changed = await session.sync_text(source)
            await session.barrier(doc)
            assert changed and doc.version == 2
            assert diag.counts(doc.diagnostics)["information"] == 1
            assert diag.counts(doc.diagnostics)["error"] == 1
            requests = [method for method, _ in session.channel.server_requests]  # type: ignore[union-attr]
            assert "client/registerCapability" in requests
        finally:
            await session.stop()
        group.cancel_scope.cancel()


@pytest.mark.anyio
async def test_real_plain_goal_answers_through_the_goals_fallback(tmp_path: Path) -> None:
    uri = "file:///plainGoal.lean"
    async with anyio.create_task_group() as group:
        session = await _session(group, tmp_path, str(CAPTURE), uri, str(PLAIN_GOAL))
        try:
            for (line, character), expected in PLAIN_GOAL_EXPECTED.items():
                position = {"line": line, "character": character}
                found = await goals_at(session, uri, position, 10)
                if expected is None:
                    assert found is None
                else:
                    assert found == ("plainGoal", expected), (line, character)
        finally:
            await session.stop()
        group.cancel_scope.cancel()


def test_capture_frames_are_read_in_order() -> None:
    frames = capture_frames(CAPTURE, "file:///X.lean")
    methods = [frame.get("method") for frame in frames]
    assert methods[0] is None and methods[1] == "client/registerCapability"
    assert all("file:///P.lean" not in json.dumps(frame) for frame in frames)
