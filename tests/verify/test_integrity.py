"""`lean_verify` against hostile inputs, through a real server on the fake `lake serve`: forged
and hand-written receipts, a regression in an imported module, declarations a source scanner
misses, an empty list, a failing dependency package, an edit undone during the build, and an
axiom only an importer's `#print axioms` loses. Each of these once answered `ok: true`."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from tests.broker.fake import err, workspace
from tests.mcp.helpers import Server
from tests.verify.support import (
    BASIC,
    by_module,
    by_name,
    home_of,
    key_file,
    lake_server,
    make_project,
    verify,
)

SORRY = BASIC.replace("end Demo\n", "theorem bad : 1 = 2 := by sorry\nend Demo\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def plain_digest(body: dict) -> str:
    """The digest an unauthenticated receipt carried: sha256 of its canonical JSON."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def forged(receipt: dict) -> dict:
    """The receipt with its outcome turned to ok and its digest recomputed, as anyone can."""
    body = {k: v for k, v in receipt.items() if k != "digest"}
    body.update(ok=True, flagged=[])
    body["declarations"] = [{**d, "flags": []} for d in receipt["declarations"]]
    return {**body, "digest": plain_digest({k: v for k, v in body.items() if k != "mac"})}


def test_a_forged_receipt_is_verified_again_never_trusted(
    servers: list[Server], project: Path
) -> None:
    (project / "Demo" / "Basic.lean").write_text(SORRY)
    server = lake_server(servers, home_of(project))
    first = verify(server, project, 1)
    assert first["ok"] is False and first["flagged"] == ["Demo.bad"]
    again = verify(server, project, 2, receipt=forged(first["receipt"]))
    assert again["ok"] is False and again["flagged"] == ["Demo.bad"], again
    assert again["receipt_valid"] is False and again["receipt_mismatch"] == ["signature"]


def test_a_hand_written_receipt_is_verified_again(servers: list[Server], project: Path) -> None:
    (project / "Demo" / "Basic.lean").write_text(SORRY)
    server = lake_server(servers, home_of(project))
    seen = verify(server, project, 1)
    written = {
        "schema": "lean-beam.verify-receipt/1",
        "root": str(project),
        "targets": ["Demo/Basic.lean"],
        "requested": None,
        "toolchain": seen["toolchain"],
        "manifest_hash": seen["manifest_hash"],
        "sources": seen["sources"],
        "ok": True,
        "modules": seen["modules"],
        "declarations": [],
        "flagged": [],
    }
    old_style = verify(server, project, 2, receipt={**written, "digest": plain_digest(written)})
    assert old_style["ok"] is False and old_style["receipt_valid"] is False
    assert old_style["receipt_mismatch"] == ["schema"]
    current = {**seen["receipt"], "ok": True, "flagged": [], "mac": "0" * 64}
    guessed = verify(server, project, 3, receipt=current)
    assert guessed["ok"] is False and guessed["receipt_mismatch"] == ["signature"]


def test_the_receipt_key_is_private_and_per_user(servers: list[Server], project: Path) -> None:
    mine, theirs = home_of(project, "mine"), home_of(project, "theirs")
    receipt = verify(lake_server(servers, mine), project, 1)["receipt"]
    key = key_file(mine)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text().strip() not in json.dumps(receipt)
    held = verify(lake_server(servers, mine), project, 1, receipt=receipt)
    assert held["receipt_valid"] is True
    other = verify(lake_server(servers, theirs), project, 1, receipt=receipt)
    assert other["receipt_valid"] is False and other["receipt_mismatch"] == ["signature"]
    assert key_file(theirs).read_text() != key.read_text()
    key.chmod(0o644)
    exposed = err(
        lake_server(servers, mine),
        2,
        "lean_verify",
        {**workspace(project), "path": "Demo/Basic.lean"},
    )
    assert exposed["code"] == "invalidParams" and exposed["data"]["reason"] == "receiptKey"
    assert str(key) in exposed["data"]["fix"]


def test_a_regression_in_an_imported_module_invalidates_the_receipt(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers, home_of(project))
    first = verify(server, project, 1, path="Demo/Use.lean")
    assert first["ok"] is True
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace("end Demo\n", "axiom cheat : False\ndef broken : Nat := nope\nend Demo\n")
    )
    after = verify(server, project, 2, path="Demo/Use.lean", receipt=first["receipt"])
    assert after["ok"] is False
    assert after["receipt_valid"] is False and after["stale"] == ["Demo.Basic"]
    assert by_module(after)["Demo.Basic"]["built"] is False
    assert by_module(after)["Demo.Use"]["built"] is False


def test_a_namespace_mix_checks_each_declaration_by_its_real_name(
    servers: list[Server], project: Path
) -> None:
    (project / "Demo" / "Other.lean").write_text(
        "namespace A.B\n"
        "end B\n"
        "theorem foo : 1 = 2 := by sorry\n"
        "end A\n"
        "theorem foo : True := trivial\n"
    )
    result = verify(lake_server(servers, home_of(project)), project, 1, path="Demo/Other.lean")
    assert result["ok"] is False
    names = by_name(result)
    assert names["A.foo"]["flags"] == ["sorryAx"]  # `end B` leaves namespace A open
    assert names["foo"]["flags"] == []
    assert result["flagged"] == ["A.foo"]


KINDS = {
    "abbrev": ("abbrev ab : Nat := sorry\n", "Demo.ab", "sorryAx"),
    "opaque": ("opaque op : Nat := sorry\n", "Demo.op", "sorryAx"),
    "example": ("example : 1 = 2 := by sorry\n", "Demo/Basic.lean:6", "sorryWarning"),
    "structure field default": ("structure S where\n  x : Nat := sorry\n", "Demo.S", "sorryAx"),
    "anonymous instance": (
        "class Pointed (α : Type) where\n  pt : α\ninstance : Pointed Nat := ⟨sorry⟩\n",
        "Demo.instPointedNat",
        "sorryAx",
    ),
    "private theorem": ("private theorem pt : 1 = 2 := by sorry\n", "Demo.pt", "sorryAx"),
    "bare axiom": ("axiom ax : (sorry : Prop)\n", "Demo.ax", "axiom:Demo.ax"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_declaration_is_checked(
    servers: list[Server], project: Path, kind: str
) -> None:
    snippet, name, flag = KINDS[kind]
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace("end Demo\n", snippet + "end Demo\n")
    )
    result = verify(lake_server(servers, home_of(project)), project, 1)
    assert result["ok"] is False, result
    assert name in result["flagged"], result["declarations"]
    assert flag in by_name(result)[name]["flags"]


def test_one_line_forms_are_checked(servers: list[Server], project: Path) -> None:
    (project / "Demo" / "Basic.lean").write_text(
        BASIC.replace(
            "end Demo\n",
            "open Nat in theorem t1 : 1 = 2 := by sorry\n"
            "set_option maxHeartbeats 400 in theorem t2 : 1 = 2 := by sorry\n"
            "@[simp, aesop safe (rule_sets := [Foo])] theorem t3 : 1 = 2 := by sorry\n"
            "end Demo\n",
        )
    )
    result = verify(lake_server(servers, home_of(project)), project, 1)
    assert result["ok"] is False
    assert result["flagged"] == ["Demo.t1", "Demo.t2", "Demo.t3"]


def test_nothing_to_check_is_never_ok(servers: list[Server], project: Path) -> None:
    server = lake_server(servers, home_of(project))
    empty = verify(server, project, 1, declarations=[])
    assert empty["ok"] is False and empty["reason"] == "nothingChecked"
    assert empty["complete"] is True and empty["declarations"] == []
    unknown = verify(server, project, 2, declarations=["nope", "Demo.nothing"])
    assert unknown["ok"] is False and unknown["reason"] == "nothingChecked"
    assert [d["flags"] for d in unknown["declarations"]] == [["notFound"], ["notFound"]]
    (project / "Demo" / "Other.lean").write_text("example : True := trivial\n")
    bare = verify(server, project, 3, path="Demo/Other.lean")
    assert bare["ok"] is False and bare["reason"] == "nothingChecked"
    assert bare["declarations"] == [] and bare["receipt"]["reason"] == "nothingChecked"


def test_a_dependency_package_that_fails_to_build_fails_ok(
    servers: list[Server], project: Path
) -> None:
    package = project / ".lake" / "packages" / "dep" / "Dep"
    package.mkdir(parents=True)
    (package / "Bad.lean").write_text("def broken : Nat := nope\n")
    (project / "Demo" / "Other.lean").write_text("import Dep.Bad\nexample : True := trivial\n")
    result = verify(lake_server(servers, home_of(project)), project, 1, path="Demo/Other.lean")
    assert result["ok"] is False
    assert result["build"]["exit_code"] == 1 and result["build"]["failed_elsewhere"] == ["Dep.Bad"]
    assert by_module(result)["Demo.Other"]["built"] is False
    assert result["declarations"] == [{"name": "Demo.Other", "axioms": None, "flags": ["notBuilt"]}]


def test_an_edit_undone_during_the_build_is_never_ok(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    other_text = tmp_path / "B.lean"
    other_text.write_text(BASIC.replace("theorem plain", "theorem plain2"))
    server = lake_server(servers, home_of(project), FAKE_LAKE_SWAP=f"Demo/Basic.lean:{other_text}")
    before = (project / "Demo" / "Basic.lean").read_bytes()
    result = verify(server, project, 1)
    assert (project / "Demo" / "Basic.lean").read_bytes() == before  # A, B, then A again
    assert result["ok"] is False and result["receipt"] is None
    assert result["changed_during_verify"] == ["Demo.Basic"]


def test_an_axiom_reached_through_an_inductive_type_is_reported(
    servers: list[Server], project: Path
) -> None:
    (project / "Demo" / "Other.lean").write_text(
        "namespace Demo\n"
        "axiom secret : Nat\n"
        "structure Box where\n"
        "  x : Fin (secret + 1)\n"
        "theorem uses (b : Box) : True := trivial\n"
        "end Demo\n"
    )
    result = verify(lake_server(servers, home_of(project)), project, 1, path="Demo/Other.lean")
    uses = by_name(result)["Demo.uses"]
    assert uses["axioms"] == ["Demo.secret"] and uses["flags"] == ["axiom:Demo.secret"]
    assert by_name(result)["Demo.Box"]["axioms"] == ["Demo.secret"]
    assert result["ok"] is False and "Demo.uses" in result["flagged"]


def test_the_target_module_imports_are_covered_by_the_receipt(
    servers: list[Server], project: Path
) -> None:
    server = lake_server(servers, home_of(project))
    receipt = verify(server, project, 1, path="Demo/Use.lean")["receipt"]
    assert sorted(receipt["sources"]) == ["Demo.Basic", "Demo.Use", "Main"]
    assert set(receipt["files"]) == {
        "lakefile.lean",
        "lakefile.toml",
        "lean-toolchain",
        "lake-manifest.json",
        ".lean-beam/statements.lock",
        ".lean-beam/verify.toml",
    }
    (project / "lean-toolchain").write_text("leanprover/lean4:v4.25.0\n")
    moved = verify(server, project, 2, path="Demo/Use.lean", receipt=receipt)
    assert moved["receipt_valid"] is False and moved["receipt_mismatch"] == ["lean-toolchain"]


def test_a_short_name_two_declarations_end_with_is_not_guessed(
    servers: list[Server], project: Path
) -> None:
    """`declarations: ["foo"]` with `A.foo` and `B.foo` written: not the first of them, but
    `notFound` (a verify of a guessed declaration is no verify of the one meant)."""
    (project / "Demo" / "Other.lean").write_text(
        "theorem A.foo : True := trivial\ntheorem B.foo : 1 = 2 := by sorry\n"
    )
    server = lake_server(servers, home_of(project))
    result = verify(server, project, 1, path="Demo/Other.lean", declarations=["foo"])
    assert result["ok"] is False
    names = by_name(result)
    assert names["foo"]["flags"] == ["notFound"], names
    assert "A.foo" not in names and "B.foo" not in names, names
    exact = by_name(verify(server, project, 2, path="Demo/Other.lean", declarations=["A.foo"]))
    assert exact["A.foo"]["flags"] == [], exact
