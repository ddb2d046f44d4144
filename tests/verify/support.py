"""Shared pieces of the `lean_verify` tests: a small Lake project, a server on the fake
`lake serve` with its own temporary HOME (so the receipt key is the test's), and readers."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, ok, workspace
from tests.mcp.helpers import REPO, Server, minimal_env

LAKE = REPO / "tests" / "fake_lean" / "bin" / "lake"
LAKE_SERVE = shlex.join([str(LAKE), "serve"])

BASIC = """\
namespace Demo
def a : Nat := 1
theorem a_pos : 0 < a + 1 := by omega
theorem plain : True := trivial
private theorem hidden : True := trivial
end Demo
"""
USE = "import Demo.Basic\nnamespace Demo\ndef b : Nat := a + 1\nend Demo\n"
MAIN = "import Demo.Use\ndef c : Nat := Demo.b\n"
OTHER = "def unrelated : Nat := 7\n"


def make_project(root: Path) -> Path:
    (root / "Demo").mkdir(parents=True)
    (root / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (root / "lakefile.toml").write_text('name = "demo"\n')
    (root / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    (root / "Demo" / "Basic.lean").write_text(BASIC)
    (root / "Demo" / "Use.lean").write_text(USE)
    (root / "Demo" / "Other.lean").write_text(OTHER)
    (root / "Main.lean").write_text(MAIN)
    return root.resolve()


def home_of(root: Path, name: str = "home") -> Path:
    home = root.parent / name
    home.mkdir(exist_ok=True)
    return home


def lake_server(servers: list[Server], home: Path, **env: str) -> Server:
    return start(servers, "--lean-cmd", LAKE_SERVE, **FAST_FAKE, HOME=str(home), **env)


def verify(server: Server, root: Path, rid: int, **args: object) -> dict:
    return ok(server, rid, "lean_verify", {**workspace(root), "path": "Demo/Basic.lean", **args})


def by_module(result: dict) -> dict[str, dict]:
    return {m["module"]: m for m in result["modules"]}


def by_name(result: dict) -> dict[str, dict]:
    return {d["name"]: d for d in result["declarations"]}


def key_file(home: Path) -> Path:
    return home / ".local" / "state" / "beam" / "verify-receipt.key"


def lean_beam(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lean-beam lean ARGS --lean-cmd <fake lake serve>` in the project, as a person runs it."""
    command = [str(Path(sys.executable).with_name("lean-beam")), "lean", *args]
    return subprocess.run(
        [*command, "--lean-cmd", LAKE_SERVE],
        capture_output=True,
        text=True,
        cwd=str(root),
        env=minimal_env(**FAST_FAKE, HOME=str(home)),
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def read_lock(root: Path) -> dict:
    return json.loads((root / ".lean-beam" / "statements.lock").read_text())
