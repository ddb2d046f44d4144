"""A runtime launcher runs its recorded interpreter as itself, whatever bytes its path holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from beam_install.payload import launcher_text


@pytest.mark.parametrize(
    "folder", ["with space", "dollar $HOME", "quote ' and `tick`", "semi;colon"]
)
def test_the_interpreter_path_is_quoted(tmp_path: Path, folder: str) -> None:
    interpreter = tmp_path / folder / "python3"
    interpreter.parent.mkdir()
    # Stands in for the interpreter: says which file ran and with which first arguments.
    interpreter.write_text('#!/bin/sh\nprintf "%s\\n" "ran $0" "$1" "$2"\n')
    interpreter.chmod(0o755)
    launcher = tmp_path / "lean-beam-mcp"
    launcher.write_bytes(launcher_text(str(interpreter), "lean-beam-mcp"))
    launcher.chmod(0o755)
    done = subprocess.run([str(launcher)], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:3] == [f"ran {interpreter}", "-I", "-S"]
