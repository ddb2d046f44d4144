"""The modules a Lean file's header imports: one reading for every consumer.

Cone (what `lean_verify` builds), recovery plans (what to `lean_save` when imports are stale)
and scratch freshness (which `.olean`s a scratch worker loaded) must agree on the header, so
comments in any position, `module`/`prelude` lines and nested comments are read alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from beam_runtime.broker.session import header
from beam_runtime.broker.session.paths import resolve_source
from beam_runtime.broker.session.recovery import incomplete_data
from beam_runtime.broker.verify.cone import workspace_graph
from tests.support.projects import lean_project

CASES = [
    ("plain", "import A.B\nimport Std.Data\n\ndef z := 1\n", ["A.B", "Std.Data"]),
    ("trailing line comment", "import A.B -- ours\nimport Std.Data\n", ["A.B", "Std.Data"]),
    ("module with a comment", "module -- new style\nimport A.B\n", ["A.B"]),
    ("prelude", "prelude\nimport A.B\n", ["A.B"]),
    ("block comment before, same line", "/- doc -/ import A.B\n", ["A.B"]),
    ("block comment inside", "import A.B /- and -/ Std.Data\n", ["A.B", "Std.Data"]),
    ("nested block comment", "/- outer /- inner -/\n still outer -/\nimport A.B\n", ["A.B"]),
    (
        "public meta import",
        "module\npublic meta import A.B\nimport all Std.Data\n",
        ["A.B", "Std.Data"],
    ),
    ("stops at the first command", "import A.B\ndef x := 1\nimport Std.Data\n", ["A.B"]),
    ("none", "def x := 1\n", []),
]


@pytest.mark.parametrize(("text", "modules"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_header_imports(text: str, modules: list[str]) -> None:
    assert header.imports(text) == modules


@pytest.fixture
def root(tmp_path: Path) -> str:
    return str(lean_project(tmp_path / "proj", {"A/B.lean": "def y := 2\n"}))


@pytest.mark.parametrize(("text", "modules"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recovery_and_cone_read_the_header_alike(root: str, text: str, modules: list[str]) -> None:
    Path(root, "Main.lean").write_text(text)
    ours = ["A.B"] if "A.B" in modules else []
    data = incomplete_data(resolve_source(root, "Main.lean"), text, ["Imports are out of date"])
    assert [dep["module"] for dep in data["staleDirectDeps"]] == ours
    graph = workspace_graph(root)
    assert list(graph.imports["Main"]) == ours
