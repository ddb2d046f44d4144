"""A temporary HOME with a real `lean-beam install` done through the test venv's console script.

`BeamHome` runs commands the way MCP clients start servers: with only HOME, PATH (short:
`/usr/bin:/bin`), USER, SHELL, TERM and LOGNAME in the environment, plus whatever a test passes
explicitly. `Installed` is a `BeamHome` whose install root holds one installed runtime.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.hosts import passed_on

SHORT_PATH = "/usr/bin:/bin"
# The client CLIs `lean-beam setup` looks for on PATH; CI installs some of them into /usr/bin.
CLIENT_CLIS = ("claude", "codex", "cursor", "opencode", "gemini", "code", "vibe")


def path_without_clients(where: Path) -> str:
    """A PATH like SHORT_PATH with every client CLI left out: `where` gets links to the rest."""
    where.mkdir(parents=True, exist_ok=True)
    for folder in SHORT_PATH.split(":"):
        for entry in os.scandir(folder):
            target = where / entry.name
            if entry.name not in CLIENT_CLIS and not target.exists():
                target.symlink_to(entry.path)
    return str(where)


def client_env(home: Path, path: str = SHORT_PATH, **extra: str) -> dict[str, str]:
    """The bare environment MCP clients pass (`path` as PATH), plus `extra`."""
    user = os.environ.get("USER", "root")
    env = {
        "HOME": str(home),
        "PATH": path,
        "USER": user,
        "SHELL": "/bin/sh",
        "TERM": "dumb",
        "LOGNAME": os.environ.get("LOGNAME", user),
    }
    env.update(passed_on())  # the test's own socket directory for shared Lean hosts
    env.update(extra)
    return env


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def error(self) -> dict[str, Any]:
        """The `error` object a `--json` failure prints on stderr."""
        body = json.loads(self.stderr.strip().splitlines()[-1])
        assert isinstance(body, dict)
        return dict(body["error"])


@dataclass
class BeamHome:
    """A fresh temporary HOME; `venv` is the test venv holding the built wheel."""

    home: Path
    venv: Path

    @property
    def default_root(self) -> Path:
        return self.home / ".local" / "share" / "beam"

    @property
    def user_bin(self) -> Path:
        return self.home / ".local" / "bin"

    def console(self, command: str) -> str:
        """The venv's console script for `command` (what pipx or pip would put on PATH)."""
        return str(self.venv / "bin" / command)

    def env(self, **extra: str) -> dict[str, str]:
        return client_env(self.home, **extra)

    def run(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        **extra: str,
    ) -> Result:
        """Run `argv` with the client environment (`env` replaces it; `extra` adds to it)."""
        done = subprocess.run(
            argv,
            env=env if env is not None else self.env(**extra),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def install(self, *args: str, **extra: str) -> Result:
        """`lean-beam install ARGS` through the venv's console script."""
        return self.run([self.console("lean-beam"), "install", *args], **extra)


@dataclass
class Installed(BeamHome):
    """A `BeamHome` whose default install root (`~/.local/share/beam`) holds one runtime."""

    root: Path
    runtime_id: str

    @property
    def runtime_dir(self) -> Path:
        return self.root / "versions" / self.runtime_id

    def wrapper(self, command: str) -> str:
        return str(self.root / "bin" / command)

    def launcher(self, command: str) -> str:
        return str(self.runtime_dir / "bin" / command)


def fresh_home(base: Path, venv: Path) -> BeamHome:
    home = base / "home"
    home.mkdir(parents=True)
    return BeamHome(home, venv)


def install_fresh(base: Path, venv: Path) -> Installed:
    """A fresh HOME with `lean-beam install --json` done into the default root."""
    beam = fresh_home(base, venv)
    done = beam.install("--json")
    assert done.code == 0, done.stderr
    body = done.json()
    return Installed(beam.home, venv, Path(body["install_root"]), body["runtime"]["id"])


def make_writable(path: Path) -> None:
    """Give back write bits so a test can corrupt a published (read-only) runtime."""
    for current, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(current, name)
            if not os.path.islink(full):
                os.chmod(full, os.stat(full).st_mode | 0o200)


def current_is_a_variant(installed: Installed) -> tuple[str, str]:
    """Make `current` a valid variant of the installed runtime and remove the original.

    Returns (variant id, original id): the next `lean-beam install` from the test venv must stage
    the original again. The variant comes from `tests.runtime.trees.clone_runtime`.
    """
    import shutil

    from beam_install.current import switch_current
    from tests.runtime.trees import clone_runtime

    original = installed.runtime_id
    variant = clone_runtime(
        installed.root, original, variant="prior", created_at="2020-01-01T00:00:00Z"
    )
    switch_current(installed.root, variant)
    shutil.rmtree(installed.runtime_dir)
    return variant, original
