"""The real MCP client CLIs from npm (`tests/clients/package.json` pins them; `.ci/run` installs
them): finding them, and an environment in which they never wait on the network.

A CLI is looked up in `$BEAM_CLIENT_CLI_DIR` (e.g. the `node_modules/.bin` of a local `npm
install`), else on PATH. A missing CLI skips the test locally and fails it under `CI=true`.
Every run is bounded by a timeout. The environment switches off what would phone home:
auto-update, telemetry, error reports and model-list downloads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.installed import client_env

PACKAGES = Path(__file__).resolve().parents[1] / "clients" / "package.json"
COMMANDS = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "opencode": "opencode-ai",
}
QUIET = {
    # Claude Code
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # OpenCode
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}
# Gemini CLI reads these from its user settings, not from the environment.
GEMINI_QUIET_SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
TIMEOUT_S = 90.0
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def pins() -> dict[str, str]:
    deps: dict[str, str] = json.loads(PACKAGES.read_text())["dependencies"]
    return deps


def real_cli(name: str) -> str:
    """The path of the `name` CLI; skips (locally) or fails (under CI) when it is missing."""
    where = os.environ.get("BEAM_CLIENT_CLI_DIR")
    found = shutil.which(name, path=where) if where else shutil.which(name)
    if found is None or shutil.which("node") is None:
        package = f"{COMMANDS[name]}@{pins()[COMMANDS[name]]}"
        message = f"the real {name} CLI ({package} from npm) or Node is not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; .ci/run installs it")
        pytest.skip(message)
    return found


@dataclass
class Ran:
    code: int
    out: str  # stdout and stderr together, ANSI colours removed

    def line(self, needle: str) -> str:
        """The first line that contains `needle` ("" when none does)."""
        return next((line for line in self.out.splitlines() if needle in line), "")


def cli_env(home: Path, *clis: str, **extra: str) -> dict[str, str]:
    """What a user's shell would give the CLIs: the client variables, a PATH with the CLIs and
    Node, and the switches that keep them off the network."""
    dirs = [os.path.dirname(c) for c in clis]
    node = shutil.which("node")
    if node:
        dirs.append(os.path.dirname(node))
    path = ":".join(dict.fromkeys([*dirs, "/usr/bin", "/bin"]))
    return client_env(home, path=path, **QUIET, **extra)


def run_cli(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = TIMEOUT_S) -> Ran:
    done = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, _ANSI.sub("", done.stdout))


def quiet_gemini(home: Path) -> Path:
    """Gemini CLI's user settings with usage statistics, telemetry and updates off."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(GEMINI_QUIET_SETTINGS, indent=2) + "\n")
    return settings
