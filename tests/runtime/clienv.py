"""Running lean-beam's console scripts the way an MCP client would: a real subprocess with only
HOME, PATH, USER, SHELL, TERM and LOGNAME set (plus what a test adds explicitly)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.installed import SHORT_PATH, Result, client_env

__all__ = ["SHORT_PATH", "Run", "client_env", "dev_command", "run"]

VENV_BIN = Path(sys.executable).parent


class Run(Result):
    """A finished command; `error()` is stricter than `Result.error()`."""

    def error(self) -> dict[str, Any]:
        """The single `{"error": {...}}` object a failing --json command writes on stderr."""
        assert self.stdout == "", self.stdout
        body = json.loads(self.stderr)
        assert set(body) == {"error"}, body
        error: dict[str, Any] = body["error"]
        assert error["message"] and error["fix"], error
        return error

    def final_error(self) -> dict[str, Any]:
        """The error of a failing `runtime prune --json`: its final object on stdout carries it,
        and stderr carries the same `{"error": {...}}` as every other failure."""
        assert self.code == 1, (self.code, self.stdout, self.stderr)
        assert "Traceback" not in self.stderr, self.stderr
        final = json.loads(self.stdout)
        assert final["schema"] == 1 and final["removed"] == [], final
        body = json.loads(self.stderr)
        assert set(body) == {"error"} and body["error"] == final["error"], (body, final)
        error: dict[str, Any] = body["error"]
        assert error["message"] and error["fix"], error
        return error


def run(
    argv: list[str], env: Mapping[str, str], cwd: Path | None = None, timeout: float = 120
) -> Run:
    done = subprocess.run(
        argv, env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr)


def dev_command(name: str) -> str:
    """The console script of the test venv (a development identity)."""
    return str(VENV_BIN / name)
