"""A fresh HOME and a real install per test; `lean-beam` runs through the root's own wrapper."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.clienv import Run, client_env, run
from tests.runtime.conftest import install_into

CLIENTS = ("claude-code", "codex", "cursor", "opencode", "gemini", "vscode", "vibe")


@dataclass
class Beam:
    home: Path
    root: Path
    runtime_id: str

    @property
    def wrapper(self) -> str:
        return str(self.root / "bin" / "lean-beam-mcp")

    def env(self, **extra: str) -> dict[str, str]:
        return client_env(self.home, **extra)

    def beam(self, *args: str, cwd: Path | None = None, **extra: str) -> Run:
        return run(
            [str(self.root / "bin" / "lean-beam"), *args], self.env(**extra), cwd=cwd or self.home
        )

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(self.root / "bin" / "lean-beam"), *args],
            env=self.env(**extra),
            cwd=self.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def config(self, client: str) -> Path:
        """Each client's user config under this HOME (no overriding variables set)."""
        return {
            "claude-code": self.home / ".claude.json",
            "codex": self.home / ".codex" / "config.toml",
            "cursor": self.home / ".cursor" / "mcp.json",
            "opencode": self.home / ".config" / "opencode" / "opencode.json",
            "gemini": self.home / ".gemini" / "settings.json",
            "vscode": self.home / ".config" / "Code" / "User" / "mcp.json",
            "vibe": self.home / ".vibe" / "config.toml",
        }[client]

    def skills(self) -> list[Path]:
        return [
            self.home / ".claude" / "skills" / "lean-beam" / "SKILL.md",
            self.home / ".agents" / "skills" / "lean-beam" / "SKILL.md",
        ]

    def setup_json(self, *args: str, **extra: str) -> dict[str, Any]:
        done = self.beam("setup", *args, "--json", **extra)
        assert done.code == 0, done.stderr
        body: dict[str, Any] = done.json()
        return body


@pytest.fixture
def beam(tmp_path: Path) -> Beam:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    return Beam(home, root, install_into(home, root))


def snapshot(home: Path) -> dict[str, bytes | str]:
    """Every file and link under HOME (links by target), to compare before and after."""
    found: dict[str, bytes | str] = {}
    for current, dirs, files in os.walk(home):
        for name in dirs + files:
            path = Path(current, name)
            rel = str(path.relative_to(home))
            if rel.startswith(".local"):
                continue
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
            else:
                found[rel] = "dir"
    return found


def load_json(path: Path) -> Any:
    from beam_runtime.references import strip_jsonc

    return json.loads(strip_jsonc(path.read_text()))


def load_toml(path: Path) -> Any:
    from beam_runtime.references import tomllib

    return tomllib.loads(path.read_text())
