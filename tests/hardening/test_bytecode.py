"""Immutable means verified, bytecode included.

Python runs a runtime's `__pycache__` files instead of its sources, so a swapped, corrupted or
added `.pyc` must make `install` (reuse) and `doctor` refuse the runtime alike.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.runtime.clienv import client_env, dev_command, run


def _install(home: Path, root: Path) -> object:
    return run(
        [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(home / "bin"),
            "--json",
        ],
        client_env(home),
    )


def _runtime(root: Path) -> Path:
    return root / "versions" / os.readlink(root / "current").split("/", 1)[1]


def _pycs(runtime: Path) -> list[Path]:
    return sorted((runtime / "site" / "beam_runtime").glob("__pycache__/*.pyc"))


def _swap(runtime: Path) -> None:
    first, second = _pycs(runtime)[:2]
    data = second.read_bytes()
    first.chmod(0o644)
    first.write_bytes(data)  # another module's valid bytecode: runs, and is wrong


def _corrupt(runtime: Path) -> None:
    target = _pycs(runtime)[0]
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:16] + b"\0garbage")


def _add(runtime: Path) -> None:
    folder = runtime / "site" / "beam_runtime" / "__pycache__"
    source = _pycs(runtime)[0]
    folder.chmod(0o755)
    shutil.copy(source, folder / "injected.cpython-311.pyc")


def _fifo(runtime: Path) -> None:
    folder = runtime / "site" / "beam_runtime" / "__pycache__"
    folder.chmod(0o755)
    os.mkfifo(folder / "odd.pyc")


@pytest.mark.parametrize("tamper", [_swap, _corrupt, _add, _fifo], ids=lambda f: f.__name__)
def test_install_and_doctor_refuse_tampered_bytecode(
    tmp_path: Path, tamper: Callable[[Path], None]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    first = _install(home, root)
    assert first.code == 0, first.stderr  # type: ignore[attr-defined]
    runtime = _runtime(root)
    assert _pycs(runtime), "a runtime ships its bytecode"
    manifest = json.loads((runtime / "manifest.json").read_text())
    assert len(manifest["bytecode_sha256"]) == 64
    tamper(runtime)
    again = _install(home, root)
    assert again.code == 1, again.stdout  # type: ignore[attr-defined]
    error = json.loads(again.stderr)["error"]  # type: ignore[attr-defined]
    assert error["category"] == "invalidRuntime", error
    assert "bytecode" in error["message"] or "not a regular file" in error["message"], error
    doctor = run(
        [dev_command("lean-beam"), "doctor", "--install-root", str(root), "--json"],
        client_env(home),
    )
    report = json.loads(doctor.stdout)
    failed = [c for c in report["checks"] if c["status"] == "fail" and c["name"] == runtime.name]
    assert failed, report
    assert doctor.code == 1


def test_a_launcher_whose_runtime_is_gone_says_it_was_pruned(tmp_path: Path) -> None:
    """The window before the lease: the runtime moved out of versions/ as Python started."""
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    assert _install(home, root).code == 0  # type: ignore[attr-defined]
    runtime = _runtime(root)
    orphan = tmp_path / "trash" / runtime.name / "bin"
    orphan.mkdir(parents=True)
    shutil.copy(runtime / "bin" / "lean-beam", orphan / "lean-beam")
    done = run([str(orphan / "lean-beam"), "version"], client_env(home))
    assert done.code == 1
    assert done.stderr == f"lean-beam: runtime {runtime.name} was pruned; restart\n"
