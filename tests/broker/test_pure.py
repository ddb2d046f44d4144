"""Path, version, position, diagnostic, goal, navigation, todo and save helpers on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.queries.goals import after_position, parse_goal
from beam_runtime.broker.queries.navigation import normalize_locations
from beam_runtime.broker.queries.todo import diagnostic_items
from beam_runtime.broker.session import diagnostics as diag
from beam_runtime.broker.session.header import imports as header_imports
from beam_runtime.broker.session.paths import read_source, resolve_source
from beam_runtime.broker.session.progress import DocumentProgress
from beam_runtime.broker.session.recovery import incomplete_data
from beam_runtime.broker.session.text import DocumentText
from beam_runtime.broker.session.versions import VersionStore
from beam_runtime.broker.verify.save import artifacts, module_name, source_hash
from tests.support.projects import lean_project


@pytest.fixture
def root(tmp_path: Path) -> str:
    files = {"Main.lean": "def x := 1\n", "A/B.lean": "def y := 2\n"}
    return str(lean_project(tmp_path / "proj", files, lakefile='name = "proj"\n'))


def _reason(error: pytest.ExceptionInfo[BrokerError]) -> str:
    assert error.value.data is not None
    return str(error.value.data["reason"])


def test_relative_and_absolute_paths(root: str, tmp_path: Path) -> None:
    inside = resolve_source(root, "A/B.lean")
    assert inside.display == "A/B.lean"
    assert inside.uri.startswith("file://") and inside.abs_path.endswith("A/B.lean")
    outside = tmp_path / "Dep.lean"
    outside.write_text("def d := 0\n")
    resolved = resolve_source(root, str(outside))
    assert resolved.display == os.path.realpath(outside)


def test_escaping_missing_and_non_utf8(root: str, tmp_path: Path) -> None:
    (tmp_path / "Outside.lean").write_text("x")
    with pytest.raises(BrokerError) as escaped:
        resolve_source(root, "../Outside.lean")
    assert escaped.value.code == "invalidInput" and _reason(escaped) == "pathEscapesRoot"
    with pytest.raises(BrokerError) as missing:
        resolve_source(root, "Nope.lean")
    assert _reason(missing) == "fileNotFound"
    with pytest.raises(BrokerError) as folder:
        resolve_source(root, "A")
    assert _reason(folder) == "fileNotFound"
    Path(root, "Bad.lean").write_bytes(b"def x := \xff\n")
    with pytest.raises(BrokerError) as bad:
        read_source(resolve_source(root, "Bad.lean"))
    assert _reason(bad) == "notUtf8"


def test_versions_are_monotonic_per_path() -> None:
    store = VersionStore()
    assert [store.next_version("/a"), store.next_version("/a"), store.next_version("/b")] == [
        1,
        2,
        1,
    ]
    assert store.last_issued("/a") == 2 and store.last_issued("/c") == 0


def test_utf16_positions() -> None:
    doc = DocumentText("a𝔸b\nxy")  # 𝔸 is outside the BMP: two UTF-16 units
    doc.check_position(0, 4)
    doc.check_position(1, 2)
    for line, character, reason in (
        (0, 5, "positionOutsideDocument"),
        (2, 0, "positionOutsideDocument"),
        (0, 2, "splitsSurrogatePair"),
    ):
        with pytest.raises(BrokerError) as error:
            doc.check_position(line, character)
        assert error.value.code == "invalidParams" and _reason(error) == reason
    assert doc.index_of(0, 3) == 2
    assert doc.position_of(2) == {"line": 0, "character": 3}
    assert doc.end_position() == {"line": 1, "character": 2}


def _d(severity: int, message: str, **extra: object) -> dict:
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
    return {"range": rng, "severity": severity, "message": message, **extra}


def test_diagnostics_counts_readiness_and_silence() -> None:
    full = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 4}}
    items = diag.visible(
        [
            _d(1, "unsolved goals\n⊢ q", fullRange=full, leanTags=[1]),
            _d(2, "declaration uses `sorry`"),
            _d(3, "Goals accomplished!", isSilent=True, leanTags=[2]),
        ]
    )
    assert len(items) == 2
    assert diag.counts(items) == {
        "error": 1,
        "warning": 1,
        "information": 0,
        "hint": 0,
        "unknown": 0,
        "total": 2,
    }
    item = diag.to_item(items[0], "Main.lean", "file:///x")
    assert item["range"] == full and item["save_blocking"] and item["completion_blocking"]
    assert diag.to_item(items[1], "M", "u")["completion_blocking"] is True
    ready = diag.readiness(items, fatal=False)
    assert ready["reason"] == "documentErrors" and ready["blocking_error_count"] == 1
    assert diag.readiness([], fatal=True)["reason"] == "documentDidNotElaborateSuccessfully"
    assert diag.readiness(items[1:], fatal=False)["save_ready"] is True
    stale = _d(3, 'Imports are out of date and should be rebuilt; use the "Restart File" ...')
    assert diag.is_stale_marker(stale) and not diag.is_setup_line(stale)
    assert diag.is_setup_line(_d(3, "✔ [3/10] Built Foo"))


def test_document_progress() -> None:
    progress = DocumentProgress()
    assert progress.to_json() == {"updates": 0, "done": True}
    rng = {"start": {"line": 4, "character": 0}, "end": {"line": 80, "character": 0}}
    progress.observe([{"range": rng, "kind": 1}])
    assert progress.to_json() == {
        "updates": 1,
        "done": False,
        "range_start_line": 5,
        "range_end_line": 80,
    }
    progress.observe([])
    assert progress.to_json() == {"updates": 2, "done": True, "range_end_line": 80}
    progress.observe([{"range": rng, "kind": 2}])
    assert progress.fatal and progress.done


def test_goal_parsing() -> None:
    goal = parse_goal("case right\np q : Prop\nhp : p\nn : Nat := 5\nf : Nat →\n  Nat\n⊢ q ∧\n  p")
    assert goal == {
        "userName": "right",
        "kind": "goal",
        "hyps": [
            {"names": ["p", "q"], "type": "Prop"},
            {"names": ["hp"], "type": "p"},
            {"names": ["n"], "type": "Nat", "value": "5"},
            {"names": ["f"], "type": "Nat →\nNat"},
        ],
        "target": "q ∧\np",
    }
    assert parse_goal("⊢ True") == {"kind": "goal", "hyps": [], "target": "True"}


def test_after_position_rule() -> None:
    doc = DocumentText(
        "theorem t : p := by\n"
        "  constructor  -- split\n"
        "  · exact hp\n"
        "    /- done -/\n"
        "  exact foo\n"
        "    bar -- more\n"
        "\n"
        "def z := by simp\n"
    )
    assert after_position(doc, 1, 2) == {"line": 1, "character": 13}
    assert after_position(doc, 2, 2) == {"line": 2, "character": 12}
    assert after_position(doc, 4, 2) == {"line": 5, "character": 7}
    assert after_position(doc, 7, 12) == {"line": 7, "character": 16}


def test_navigation_accepts_both_forms(root: str) -> None:
    target = Path(root, "A", "B.lean").as_uri()
    rng = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}
    links = [{"targetUri": target, "targetRange": rng, "targetSelectionRange": rng}]
    plain = [{"uri": target, "range": rng}, {"uri": "file:///tmp/scratch.lean", "range": rng}]
    expected = [{"uri": target, "path": "A/B.lean", "range": rng}]
    assert normalize_locations(links, root) == expected
    assert normalize_locations(plain, root, lambda uri: "scratch" in uri) == expected
    assert normalize_locations(None, root) == []


def test_todo_items() -> None:
    doc = DocumentText("theorem foo : 1 + 1 = 2 := by\n  sorry\n\ndef x : Nat := _\n")
    warning = {
        "range": {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 11}},
        "severity": 2,
        "message": "declaration uses `sorry`",
    }
    hole = {
        "range": {"start": {"line": 3, "character": 15}, "end": {"line": 3, "character": 16}},
        "severity": 1,
        "message": "don't know how to synthesize placeholder\ncontext:\n⊢ Nat",
    }
    items = diagnostic_items(doc, [warning, hole], (0, 0), (10, 0), suggest=True)
    assert [(i["kind"], i["run_at_position"]) for i in items] == [
        ("sorry", {"line": 1, "character": 2}),
        ("hole", {"line": 3, "character": 15}),
    ]
    assert items[0]["run_at_text"] == "exact?"
    assert diagnostic_items(doc, [warning, hole], (2, 0), (3, 0), suggest=False) == []


def test_save_helpers(root: str) -> None:
    assert module_name(root, os.path.join(root, "A", "B.lean")) == "A.B"
    for bad in ("lakefile.lean", os.path.join(".lake", "X.lean"), "a-b.lean"):
        with pytest.raises(BrokerError) as error:
            module_name(root, os.path.join(root, bad))
        assert error.value.code == "saveTargetNotModule"
    lib = Path(root, ".lake", "build", "lib", "lean", "A")
    lib.mkdir(parents=True)
    with pytest.raises(BrokerError) as missing:
        artifacts(root, "A.B")
    assert missing.value.code == "internalError"
    (lib / "B.olean").write_bytes(b"o")
    (lib / "B.ilean").write_bytes(b"i")
    (lib / "B.trace").write_text("{}")
    found = artifacts(root, "A.B")
    assert set(found) == {"olean", "ilean", "trace"}
    assert source_hash(b"abc") == "ba7816bf8f01cfea"


def test_recovery_plan(root: str) -> None:
    text = "-- header\nimport A.B\nimport Std.Data -- external\n\ndef z := 1\n"
    assert header_imports(text) == ["A.B", "Std.Data"]
    target = resolve_source(root, "Main.lean")
    data = incomplete_data(target, text, ["Imports are out of date"])
    assert data["staleDirectDeps"] == [{"module": "A.B", "path": "A/B.lean", "needsSave": True}]
    assert data["recoveryPlan"][0] == {"tool": "lean_save", "path": "A/B.lean"}
    assert data["recoveryPlan"][-1]["command"] == "lake build"


def test_goal_layout_corners() -> None:
    tabbed = parse_goal("h :\n\tNat →\n\t  Nat\nx : Nat :=\n\t5\n⊢ True")
    assert tabbed["hyps"] == [
        {"names": ["h"], "type": "Nat →\n  Nat"},
        {"names": ["x"], "type": "Nat", "value": "5"},
    ]
    # a tab-indented continuation that looks like a hypothesis still belongs to the one above
    nested = parse_goal("h :\n\tx : Nat\n⊢ True")
    assert nested["hyps"] == [{"names": ["h"], "type": "x : Nat"}]
    turnstile = parse_goal("Γ : Ctx\nh : Γ ⊢ t\n⊢ Γ ⊢ t")
    assert turnstile["hyps"][1] == {"names": ["h"], "type": "Γ ⊢ t"}
    assert turnstile["target"] == "Γ ⊢ t"
    inline = parse_goal("s : S := { a := 1, b := 2 }\nv : let y := 1; Fin y := let z := 0; z\n⊢ p")
    assert inline["hyps"] == [
        {"names": ["s"], "type": "S", "value": "{ a := 1, b := 2 }"},
        {"names": ["v"], "type": "let y := 1; Fin y", "value": "let z := 0; z"},
    ]
    conv = parse_goal("case h\nx : Nat\n| x + 0")
    assert conv == {
        "userName": "h",
        "kind": "conv",
        "hyps": [{"names": ["x"], "type": "Nat"}],
        "target": "x + 0",
    }
    anonymous = parse_goal(":\n  a_long_type\n⊢ q")
    assert anonymous["hyps"] == [{"names": [], "type": "a_long_type"}]
