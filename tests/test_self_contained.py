"""The project speaks of itself alone: no pointer to notes that do not ship with it.

Code, docstrings, tool descriptions, the generated JSON and the docs must stand on their own or
point at the project's own documents (`docs/MCP.md`, `docs/BROKER.md`, ...). References to
numbered design notes, to an internal tracker's issues, to planning seeds or to specification
files kept outside the repository mean nothing to a reader of the package, so this test fails
when one comes back. Public upstream references (`leanprover/lean4#1234`, an issue URL) stay
allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Directories and files a reader of the project meets. `tests/` is included (comments and
# docstrings); this file is left out because it spells the patterns it looks for.
SCANNED = (
    "beam_install",
    "beam_runtime",
    "beam_mcp",
    "docs",
    "bench",
    "scripts",
    "tests",
    "README.md",
    "flake.nix",
    "pyproject.toml",
)
SUFFIXES = {".py", ".md", ".json", ".nix", ".toml", ".sh", ".mjs", ".txt", ""}
SELF = Path(__file__).resolve()

# Each pattern names one kind of outside reference.
PATTERNS = {
    "numbered decision": re.compile(r"(?<![a-z])decisions?[\s#_-]*\d+", re.IGNORECASE),
    "decisions file": re.compile(r"decisions\.md", re.IGNORECASE),
    "tracker issue": re.compile(r"(?<![a-z])issues?[\s_-]*#?\s*\d+(?:\.\d+)?", re.IGNORECASE),
    "bare issue number": re.compile(r"(?<![\w/&#.-])#\d{1,4}\b(?![\w-])"),
    "outside spec folder": re.compile(r"shared/(?:spec|seeds)", re.IGNORECASE),
    "seed": re.compile(r"(?<![a-z])seeds?[\s_-]*0\d\d|\b00\d_[0-9a-f]{6,}", re.IGNORECASE),
    "spec digest": re.compile(
        r"(?<![\w/.-])(?:broker|tools|runtime|lean-lsp|original-lean-beam)\.md\b"
    ),
    "original spec section": re.compile(r"\boriginal,? section\b", re.IGNORECASE),
}
# An upstream project's issue is public, so it may stay when the project is named right before
# it: `leanprover/lean4 issue #1234`, `lean4 issue #1234` (and `leanprover/lean4#1234`, which
# no pattern matches).
UPSTREAM = re.compile(
    r"(?:[\w.-]+/[\w.-]+|lean4|lake|elan|mathlib4?|batteries|aesop|cpython|pydantic|anyio"
    r"|codex)\s+$",
    re.IGNORECASE,
)


def scanned_files(root: Path) -> list[Path]:
    """Every text file under the scanned paths of `root`, this test excluded."""
    found: list[Path] = []
    for name in SCANNED:
        top = root / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
        for path in candidates:
            if not path.is_file() or path.resolve() == SELF or "__pycache__" in path.parts:
                continue
            if path.suffix in SUFFIXES:
                found.append(path)
    return found


def references_in(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, matched text) of every outside reference in `text`."""
    hits = []
    for kind, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            before = text[max(0, match.start() - 80) : match.start()]
            if kind == "tracker issue" and UPSTREAM.search(before):
                continue
            line = text.count("\n", 0, match.start()) + 1
            hits.append((line, kind, match.group(0)))
    return sorted(hits)


def scan(root: Path) -> list[str]:
    problems = []
    for path in scanned_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for line, kind, matched in references_in(text):
            problems.append(f"{path.relative_to(root)}:{line}: {kind}: {matched!r}")
    return problems


def test_the_project_cites_no_notes_it_does_not_ship() -> None:
    files = {path.relative_to(REPO).as_posix() for path in scanned_files(REPO)}
    # The scan reaches what a reader sees, generated JSON included.
    for expected in ("beam_mcp/schema.json", "beam_mcp/fields.json", "docs/MCP.md", "README.md"):
        assert expected in files
    assert len(files) > 200
    problems = scan(REPO)
    assert not problems, "outside references:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "planted",
    [
        "the rule of decision 46",
        "Decisions 30-31 settle it",
        "(decision\n    47)",
        "# as decision\n    # 12 fixes",
        "see decisions.md",
        "issue 17, item 3",
        "Issue #6 seam",
        "issue 13.4",
        "fixed in #17",
        "../shared/spec/runtime.md",
        "seed 000's matrix",
        "../shared/seeds/000_6945c4dd66ac3f0b.txt",
        "the codes of tools.md",
        'runtime.md "Tree"',
        "lean-lsp.md section 6.2",
        "broker.md",
        "(decision 40, original section 8.7)",
        "def test_the_decision_44_shape():",
    ],
)
def test_a_planted_reference_is_found(planted: str) -> None:
    assert references_in(f"Some text; {planted}; more text.\n")


@pytest.mark.parametrize(
    "allowed",
    [
        "see docs/BROKER.md and docs/RUNTIME.md",
        "[docs/MCP.md](docs/MCP.md#positions)",
        "leanprover/lean4#15226",
        "leanprover/lean4 issue #15226",
        "lean4 issue #15226",
        "https://github.com/openai/codex/issues/17574",
        "a decision: reuse only after hashing",
        "issues with the disk",
        "../shared/real-lean/ samples",
        "seed = 20240611",
        "color: #ffffff; &#8212;",
    ],
)
def test_the_project_s_own_and_upstream_references_pass(allowed: str) -> None:
    assert references_in(f"Some text; {allowed}; more text.\n") == []


def test_a_planted_file_fails_the_scan(tmp_path: Path) -> None:
    (tmp_path / "beam_mcp").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "beam_mcp" / "tool.py").write_text('"""Positions (decision 46)."""\n')
    doc = "# MCP\n\nFormats: `../shared/spec/tools.md`, see tools.md.\n"
    (tmp_path / "docs" / "MCP.md").write_text(doc)
    (tmp_path / "beam_mcp" / "schema.json").write_text('{"description": "as issue 17 asks"}\n')
    (tmp_path / "README.md").write_text("Self-contained.\n")
    problems = scan(tmp_path)
    assert any(p.startswith("beam_mcp/tool.py:1: numbered decision") for p in problems)
    assert any(p.startswith("docs/MCP.md:3: outside spec folder") for p in problems)
    assert any(p.startswith("docs/MCP.md:3: spec digest") for p in problems)
    assert any(p.startswith("beam_mcp/schema.json:1: tracker issue") for p in problems)
    assert not any(p.startswith("README.md") for p in problems)
