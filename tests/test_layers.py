"""The package layers (docs/CONTRIBUTING.md), checked the way the test command checks them.

`scripts/check` runs `lint-imports` with the contracts in pyproject.toml; these tests show that
the contracts pass on the tree and fail on a copy with a wrong-way import, and that nothing but
the entry points and the launcher loads product modules by name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("beam_install", "beam_runtime", "beam_mcp")
LINT = Path(sys.executable).parent / "lint-imports"
# Where loading by name is allowed: console scripts, the runtime launcher, and the --backend
# hook (which loads a file or module the user names, never a product module).
BY_NAME_ALLOWED = {"beam_runtime/entry.py", "beam_runtime/launcher.py", "beam_mcp/backend.py"}


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    for package in PACKAGES:
        shutil.copytree(
            REPO / package, tree / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(REPO / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def lint_available() -> None:
    if not LINT.exists():
        pytest.fail(f"{LINT} is missing: install the test extra (pip install -e '.[test]')")


def test_the_tree_keeps_every_contract(lint_available: None, tmp_path: Path) -> None:
    done = _lint(_copy(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("beam_runtime/version.py", "import beam_install.root", "beam_install"),
        ("beam_runtime/broker/session/text.py", "from beam_mcp import errors", "beam_mcp"),
        ("beam_mcp/stats.py", "from beam_install import lock", "beam_install"),
        ("beam_install/lock.py", "import beam_mcp.wire", "beam_mcp"),
        ("beam_runtime/lsp/framing.py", "import mcp.types", "mcp"),
        ("beam_mcp/wire.py", "import tests.mcp.helpers", "tests"),
        (
            "beam_runtime/broker/session/text.py",
            "from beam_runtime.broker.queries import goals",
            "beam_runtime.broker.queries",
        ),
        (
            "beam_runtime/broker/queries/goals.py",
            "from beam_runtime.broker.speculation import probes",
            "beam_runtime.broker.speculation",
        ),
        (
            "beam_runtime/broker/verify/cone.py",
            "from beam_runtime.broker.speculation import scratch",
            "beam_runtime.broker.speculation",
        ),
        (
            "beam_runtime/broker/speculation/probes.py",
            "from beam_runtime.broker.verify import save",
            "beam_runtime.broker.verify",
        ),
        (
            "beam_runtime/broker/session/paths.py",
            "from beam_runtime.broker import service",
            "beam_runtime.broker.service",
        ),
    ],
)
def test_a_wrong_way_import_breaks_the_check(
    lint_available: None, tmp_path: Path, module: str, line: str, broken: str
) -> None:
    tree = _copy(tmp_path)
    with open(tree / module, "a", encoding="utf-8") as handle:
        handle.write(f"\n\ndef _wrong_way() -> None:\n    {line}  # noqa\n")
    done = _lint(tree)
    assert done.returncode != 0
    said = " ".join(done.stdout.split())  # lint-imports wraps long lines
    assert f"not allowed to import {broken}" in said


def test_the_test_command_runs_the_checks() -> None:
    script = (REPO / "scripts" / "test").read_text(encoding="utf-8")
    check = (REPO / "scripts" / "check").read_text(encoding="utf-8")
    assert "scripts/check" in script
    assert "lint-imports" in check and "format --check" in check


def test_product_modules_are_loaded_by_name_only_by_entry_points() -> None:
    pattern = re.compile(r"\bimport_module\(|__import__\(|spec_from_file_location\(")
    offenders = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if pattern.search(path.read_text(encoding="utf-8")) and rel not in BY_NAME_ALLOWED:
                offenders.append(rel)
    assert offenders == []


def test_no_test_code_ships_in_the_product() -> None:
    names = [
        p.relative_to(REPO).as_posix()
        for pkg in PACKAGES
        for p in (REPO / pkg).rglob("*.py")
        if p.name.startswith("test") or "fake" in p.name
    ]
    assert names == []


def test_architecture_page_is_generated_from_the_docstrings() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "architecture.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
