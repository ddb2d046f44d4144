"""``lean_try``: tactics × positions in one call, in parallel on scratch documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from beam_runtime.broker.results import TryResult
from beam_runtime.broker.speculation.trying import try_this_texts
from tests.broker.fake import request_log, until
from tests.mcp.helpers import Server, call, structured
from tests.speculative.helpers import HANDLE_ID, Probe, fake_server
from tests.support.shapes import problems

PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
    "theorem u (n : Nat) : n + 0 = n := by\n"
    "  simp\n"
)
A = {"line": 1, "character": 2}  # before `constructor`: ⊢ p ∧ q
B = {"line": 2, "character": 2}  # after it: case left ⊢ p, case right ⊢ q
C = {"line": 5, "character": 2}  # ⊢ n + 0 = n
EIGHT = ["constructor", "exact hp", "exact hq", "trivial", "skip", "assumption", "simp", "norm_num"]


def cells(result: dict) -> dict[tuple[int, int], tuple[str, Any]]:
    """Every pair of a ``lean_try`` answer as ``(position index, tactic index) -> (kind, what)``,
    checking that each pair is in exactly one group: ``("ok", group)``, ``("error", text)``,
    ``("reason", reason)`` of a failure, or ``("skipped", reason)``."""
    found: dict[tuple[int, int], tuple[str, Any]] = {}

    def put(spot: int, group: dict, value: tuple[str, Any]) -> None:
        assert group["tactics"] == sorted(set(group["tactics"])), group
        for k in group["tactics"]:
            assert (spot, k) not in found, (spot, k)
            found[(spot, k)] = value

    for spot, entry in enumerate(result["positions"]):
        for group in entry["succeeded"]:
            put(spot, group, ("ok", group))
        for group in entry["failed"]:
            if "error" in group:
                put(spot, group, ("error", result["errors"][group["error"]]))
            else:
                put(spot, group, ("reason", group["reason"]))
        for group in entry["skipped"]:
            put(spot, group, ("skipped", group["reason"]))
    every = [(s, k) for s in range(len(result["positions"])) for k in range(len(result["tactics"]))]
    assert sorted(found) == every
    return found


def start(servers: list[Server], project: Path, log: Path, *flags: str, header: str = "") -> Probe:
    (project / "Main.lean").write_text(header + PROOF)
    server = fake_server(servers, *flags, FAKE_LEAN_REQUEST_LOG=str(log))
    return Probe(server, project)


def try_(p: Probe, **args: Any) -> dict:
    result = p.ok("lean_try", {"path": p.path, **args})
    p.untouched()
    assert problems(result, TryResult) == []  # its shape of record, whatever was left out
    return result


def scratch_opens(log: Path) -> tuple[int, set[str]]:
    """Most scratch documents open at one time, by the fake's log, and every one opened."""
    now, most, seen = 0, 0, set()
    for entry in request_log(log):
        uri = entry.get("uri") or ""
        if "beam-scratch" not in uri or "notification" not in entry:
            continue
        if entry["notification"] == "textDocument/didOpen":
            now, most = now + 1, max(most, now + 1)
            seen.add(uri)
        elif entry["notification"] == "textDocument/didClose":
            now -= 1
    return most, seen


def scratch_count(p: Probe) -> int:
    count: int = p.stats()["workspaces"][0]["session"]["scratch_documents"]
    return count


def test_eight_tactics_at_two_positions_run_side_by_side(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log, "--scratch-per-process", "4")
    result = try_(p, version=p.version, positions=[A, B], tactics=EIGHT)
    assert result["path"] == "Main.lean" and result["version"] == p.version
    assert result["tactics"] == EIGHT and "omitted" not in result
    at_a, at_b = result["positions"]
    assert at_a["position"] == A and at_b["position"] == B
    assert all(entry["skipped"] == [] for entry in result["positions"])
    # successes: one group per distinct proof state, each with one handle
    assert [(g["tactics"], g["goals_after"], g.get("first_goal")) for g in at_a["succeeded"]] == [
        ([0], 2, "p"),
        ([3, 7], 0, None),
        ([4], 1, "p ∧ q"),
    ]
    assert [(g["tactics"], g["goals_after"], g.get("first_goal")) for g in at_b["succeeded"]] == [
        ([1, 3, 5, 7], 1, "q"),
        ([4], 2, "p"),
    ]
    for group in at_a["succeeded"] + at_b["succeeded"]:
        assert HANDLE_ID.match(group["handle"]["id"]), group
    # failures: grouped by error text, each text once in `errors`, no goals
    assert [g["tactics"] for g in at_a["failed"]] == [[1], [2], [5], [6]]
    assert [g["tactics"] for g in at_b["failed"]] == [[0], [2], [6]]
    assert all(set(g) == {"tactics", "error"} for g in at_a["failed"] + at_b["failed"])
    assert len(result["errors"]) == len(set(result["errors"]))
    pairs = cells(result)
    assert pairs[(0, 1)][1].startswith("Type mismatch")
    assert pairs[(0, 6)] == pairs[(1, 6)] == ("error", "simp made no progress")
    assert at_a["failed"][3]["error"] == at_b["failed"][2]["error"]  # one text, shared
    # A new scratch document is only made while every other one is busy: four open at once
    # means four probes were under way together, beyond the per-document pool of one.
    most, seen = scratch_opens(log)
    assert most == 4 and len(seen) == 4
    assert scratch_count(p) == 1  # trimmed back to the per-document pool after the call
    # A success's handle continues from its state.
    after = p.with_(at_b["succeeded"][0]["handle"], "exact hq")
    assert after["success"] is True and after["proof_state"] == {"goals": []}


def test_stop_on_first_success_skips_the_rest_of_that_position(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)  # default process cap: 2 probes at a time
    slow = "sleep 600000\nskip"
    result = try_(p, positions=[B, A], tactics=["trivial", slow, slow], stop_on_first_success=True)
    # each position stops at its own first success; the second still ran after the first stopped
    for entry, position in zip(result["positions"], (B, A), strict=True):
        assert entry["position"] == position
        assert [g["tactics"] for g in entry["succeeded"]] == [[0]]
        assert entry["failed"] == []
        assert entry["skipped"] == [{"tactics": [1, 2], "reason": "stopOnFirstSuccess"}]
    # a slow probe that had started was cancelled: Lean was told, its scratch document closed
    assert any("cancel" in entry for entry in request_log(log))
    closed = [
        entry for entry in request_log(log) if entry.get("notification") == "textDocument/didClose"
    ]
    assert closed and all("beam-scratch" in entry["uri"] for entry in closed)
    assert scratch_count(p) <= 1


def test_limit_skips_the_pairs_past_it(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl")
    result = try_(p, positions=[A, B], tactics=["skip", "trivial"], limit=3)
    pairs = cells(result)
    assert [kind for _, (kind, _) in sorted(pairs.items())] == ["ok", "ok", "ok", "skipped"]
    assert result["positions"][1]["skipped"] == [{"tactics": [1], "reason": "limit"}]


def test_suggest_returns_try_this_texts(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl")
    result = try_(p, positions=[B, C], tactics=[], suggest=True)
    assert result["tactics"] == ["exact?", "apply?", "simp?"]
    pairs = cells(result)
    assert pairs[(0, 0)][0] == pairs[(0, 1)][0] == "ok"
    assert pairs[(0, 2)] == ("error", "simp made no progress")
    at_b, at_c = result["positions"]
    assert at_b["suggestions"] == [{"tactic": 0, "text": "exact hp"}]  # apply? said it too
    assert {"tactic": 2, "text": "simp only [Nat.add_zero]"} in at_c["suggestions"]
    for entry in result["positions"]:
        texts = [item["text"] for item in entry["suggestions"]]
        assert len(texts) == len(set(texts))


def test_suggest_uses_aesop_when_imported(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    p = start(servers, project, tmp_path / "requests.jsonl", header="import Aesop\n")
    later = {"line": 3, "character": 2}  # B, one line down
    result = try_(p, positions=[later], tactics=["exact hp"], suggest=True)
    assert result["tactics"] == ["exact hp", "exact?", "apply?", "simp?", "aesop?"]
    (entry,) = result["positions"]
    assert entry["suggestions"] == [{"tactic": 1, "text": "exact hp"}]  # aesop?'s is the same
    assert cells(result)[(0, 4)][0] == "ok"


def test_legacy_wording_of_try_this(servers: list[Server], project: Path) -> None:
    (project / "Main.lean").write_text(PROOF)
    p = Probe(fake_server(servers, FAKE_LEAN_PROFILE="v4.2x-legacy"), project)
    result = try_(p, positions=[C], tactics=[], suggest=True)
    assert {"tactic": 2, "text": "simp only [Nat.add_zero]"} in result["positions"][0][
        "suggestions"
    ]


@pytest.mark.parametrize(
    ("message", "texts"),
    [
        ("Try this: exact foo", ["exact foo"]),
        ("Try this:\n  [apply] simp only [Nat.add_zero]", ["simp only [Nat.add_zero]"]),
        ("Try these:\n  [apply] exact a\n  [apply] exact b", ["exact a", "exact b"]),
        ("Try these:\n• simp\n• omega", ["simp", "omega"]),
        (
            "Try this:\n  [apply] constructor\n    · exact a\n    · exact b",
            ["constructor\n· exact a\n· exact b"],
        ),
        ("unsolved goals", []),
    ],
)
def test_try_this_wordings(message: str, texts: list[str]) -> None:
    assert try_this_texts(message) == texts


def test_cancelling_the_call_cancels_its_probes(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)
    slow = "sleep 600000\nskip"
    args = {**p.ws, "path": "Main.lean", "positions": [A, B], "tactics": [slow]}
    p.server.send(call(700, "lean_try", args))
    until(lambda: scratch_opens(log)[0] == 2, "two probes to start")
    p.server.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 700}}
    )
    closed = until(
        lambda: [
            e
            for e in request_log(log)
            if e.get("notification") == "textDocument/didClose"
            and "beam-scratch" in (e.get("uri") or "")
        ],
        "the probes' scratch documents to close",
    )
    assert {e["uri"] for e in closed} == scratch_opens(log)[1]
    waits = {
        e["id"]
        for e in request_log(log)
        if e.get("request") == "textDocument/waitForDiagnostics"
        and "beam-scratch" in (e.get("uri") or "")
    }
    assert waits and {e["cancel"] for e in request_log(log) if "cancel" in e} >= waits
    # the server is free for the next call, and the cancelled one is never answered
    p.server.send(call(701, "lean_try", {**args, "tactics": ["skip"]}))
    again, before = p.server.read_until(701)
    assert structured(again)["positions"][0]["succeeded"][0]["tactics"] == [0]
    assert all(m.get("id") != 700 for m in before + p.server.quiet(0.3))


def test_bad_input_changes_nothing(servers: list[Server], project: Path, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    p = start(servers, project, log)
    base = {"path": "Main.lean"}
    cases = [
        ({"positions": [], "tactics": ["skip"]}, "invalidInput", None),
        ({"positions": [{"line": "1", "character": 2}], "tactics": ["skip"]}, "invalidInput", None),
        ({"positions": [A], "tactics": []}, "invalidInput", "noTactics"),
        ({"positions": [A], "tactics": ["  "]}, "invalidInput", "blankTactic"),
        ({"positions": [{"line": 99, "character": 0}], "tactics": ["skip"]}, "invalidParams", None),
        (
            {"positions": [A, {"line": 0, "character": 0}], "tactics": ["skip"]},
            "invalidParams",
            "notInProof",
        ),
        (
            {"version": p.version + 1, "positions": [A], "tactics": ["skip"]},
            "contentModified",
            "documentVersionMismatch",
        ),
        ({"positions": [A], "tactics": ["skip"], "limit": 0}, "invalidInput", None),
    ]
    for args, code, reason in cases:
        error = p.err("lean_try", {**base, **args})
        assert error["code"] == code, (args, error)
        if reason is not None:
            assert error["data"]["reason"] == reason, error
            assert error["data"].get("fix") or code == "contentModified", error
    p.untouched()
    assert scratch_opens(log)[1] == set()


KINDS = (
    "(p q : Prop) (hp : p) (hq : q) : p ∧ q",
    "(n : Nat) : n + {i} = {i} + n",
    "(p q : Prop) (hq : q) (hpq : q → p) : p",
    "(p q r : Prop) (hp : p) (hq : q) (hr : r) : p ∧ q ∧ r",
)
GRID = [
    *EIGHT,
    *("exact hr", "exact hpq", "exact trivial", "exact rfl", "exact foo", "intro h", "apply hpq"),
    *("apply hp", "refine hpq", "exact?", "apply?", "simp?", "rw [hpq]", "omega", "decide"),
    *("constructor\nexact hp\nexact hq", "simp_all", "aesop", "tauto", "linarith", "unfold f"),
    *("cases hp", "induction n", "rfl"),
]


def grid_probe(servers: list[Server], project: Path, *flags: str) -> tuple[Probe, list[dict]]:
    lines: list[str] = []
    positions = []
    for i in range(16):
        lines.append(f"theorem g{i} {KINDS[i % 4].format(i=i)} := by")
        positions.append({"line": len(lines), "character": 2})
        lines.append("  sorry")
    (project / "Main.lean").write_text("\n".join(lines) + "\n")
    return Probe(fake_server(servers, "--scratch-per-process", "4", *flags), project), positions


def test_a_whole_grid_of_512_pairs_fits_the_default_budget(
    servers: list[Server], project: Path
) -> None:
    assert len(GRID) == 32
    p, positions = grid_probe(servers, project)
    result = try_(p, positions=positions, tactics=GRID)
    assert "truncated" not in result and "omitted" not in result
    pairs = cells(result)
    assert len(pairs) == 512
    assert any("\n" in text for text in result["errors"])  # whole texts while they fit
    assert pairs[(0, 3)][0] == "ok" and pairs[(0, 3)][1]["goals_after"] == 0
    assert pairs[(2, 1)] == ("error", "Unknown identifier `hp`")


def test_an_answer_over_the_budget_leaves_out_details_and_says_so(
    servers: list[Server], project: Path
) -> None:
    """First the lines after each error's first, then handles, then the ends of long texts;
    never a pair."""
    p, positions = grid_probe(servers, project, "--result-bytes", "3000")
    args = {"positions": positions[:4], "tactics": GRID[:16]}
    result = try_(p, **args)
    assert "truncated" not in result
    assert len(cells(result)) == 64
    assert result["omitted"]["errors"] > 0 and result["omitted"]["handles"] > 0
    assert not any("\n" in text for text in result["errors"])
    assert "Type mismatch" in result["errors"]  # mismatches of every position now share one
    kept = [g for e in result["positions"] for g in e["succeeded"] if "handle" in g]
    assert kept and len(kept) + result["omitted"]["handles"] == sum(
        len(e["succeeded"]) for e in result["positions"]
    )
    after = p.with_(kept[0]["handle"], "skip")  # a handle the answer names works
    assert after["success"] is True


def test_a_tight_budget_still_accounts_for_every_pair(servers: list[Server], project: Path) -> None:
    p, positions = grid_probe(servers, project, "--result-bytes", "2000")
    result = try_(p, positions=positions[:4], tactics=GRID[:16])
    assert "truncated" not in result and len(cells(result)) == 64
    groups = [g for e in result["positions"] for g in e["succeeded"]]
    assert groups and not any("handle" in g for g in groups)
    assert result["omitted"]["handles"] == len(groups)
    intro = "Tactic `intro` failed: no additional binders"  # the headline of `intro h`
    cut = next(text for text in result["errors"] if intro.startswith(text))
    assert len(cut) < len(intro)  # long texts lost their ends
    assert result["omitted"]["errors"] > 0
