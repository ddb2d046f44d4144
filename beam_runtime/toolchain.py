"""Finding `lake` and `elan`, reading `lean-toolchain`, and the supported toolchain floor.

MCP clients start servers with a short PATH, so everything here resolves absolute paths and also
looks in elan's own bin directory (`$ELAN_HOME/bin`, then `~/.elan/bin`) when PATH has no `lake`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from beam_runtime import safe_read
from beam_runtime.errors import BeamError

# Oldest canonical Lean release lean-beam supports. Documented in docs/RUNTIME.md.
TOOLCHAIN_FLOOR = "v4.24.0"

PROJECT_FILES = ("lean-toolchain", "lakefile.toml", "lakefile.lean")
TOOLCHAIN_FILE = "lean-toolchain"
PROBE_TIMEOUT_S = 60.0
PROBE_TIMEOUT_VAR = "BEAM_TOOLCHAIN_PROBE_TIMEOUT_S"
ELAN_INSTALL_FIX = (
    "install elan (https://github.com/leanprover/elan), which provides `lake`, then retry"
)

_RELEASE = re.compile(r"^(?:leanprover/lean4:)?v?(\d+\.\d+\.\d+(?:-rc\d+)?)$")
_NIGHTLY = re.compile(r"^leanprover/lean4(?:-nightly)?:nightly(?:-[\w.-]+)?$")
_PR = re.compile(r"^leanprover/lean4-pr-releases:pr-release-[\w.-]+$")


@dataclass(frozen=True)
class ToolchainSpec:
    """The first line of `lean-toolchain` and what kind of toolchain it names."""

    spec: str
    kind: str  # "release", "nightly", "pr" or "linked"
    version: str | None
    warning: str | None


@dataclass(frozen=True)
class LakeLocation:
    lake: Path
    elan_bin: Path | None  # elan's bin dir when it exists (put first on PATH for Lake)


def home_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def elan_bin_dirs(env: Mapping[str, str]) -> list[Path]:
    """Candidate elan bin directories, most specific first."""
    dirs: list[Path] = []
    if env.get("ELAN_HOME"):
        dirs.append(Path(env["ELAN_HOME"]).expanduser() / "bin")
    dirs.append(home_dir(env) / ".elan" / "bin")
    return dirs


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_tool(name: str, env: Mapping[str, str]) -> Path | None:
    """Absolute path of `name`: PATH first, then elan's bin directories."""
    found = shutil.which(name, path=env.get("PATH", ""))
    if found:
        return Path(os.path.abspath(found))
    for directory in elan_bin_dirs(env):
        if _executable(directory / name):
            return directory / name
    return None


def find_elan_bin(env: Mapping[str, str]) -> Path | None:
    """elan's bin directory: the one holding an executable `elan`, if any."""
    elan = find_tool("elan", env)
    return elan.parent if elan else None


def locate_lake(env: Mapping[str, str], toolchain: str) -> LakeLocation:
    """Find `lake`, or raise lakeNotFound / elanNotFound with the fix."""
    lake = find_tool("lake", env)
    elan_bin = find_elan_bin(env)
    if lake is not None:
        return LakeLocation(lake=lake, elan_bin=elan_bin)
    searched = [env.get("PATH", ""), *(str(d) for d in elan_bin_dirs(env))]
    if elan_bin is None:
        raise BeamError(
            "elanNotFound",
            "neither `lake` nor `elan` was found",
            ELAN_INSTALL_FIX,
            {"searched": searched},
        )
    raise BeamError(
        "lakeNotFound",
        f"elan is installed in {elan_bin} but no `lake` was found",
        f"run `{elan_bin / 'elan'} toolchain install {toolchain}` (and `elan self update`)",
        {"searched": searched},
    )


def is_project_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in PROJECT_FILES)


def find_project_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` that looks like a Lean/Lake project."""
    for candidate in (start, *start.parents):
        if is_project_dir(candidate):
            return candidate
    return None


def read_toolchain_file(root: Path) -> str:
    """The trimmed first line of `<root>/lean-toolchain`."""
    path = root / TOOLCHAIN_FILE
    try:
        text = safe_read.read_text_bounded(str(path), safe_read.SMALL_CAP)
    except FileNotFoundError:
        raise BeamError(
            "missingToolchainFile",
            f"{path} does not exist",
            f"create it with the toolchain to use, e.g. `echo leanprover/lean4:{TOOLCHAIN_FLOOR}"
            f" > {path}`",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeamError(
            "missingToolchainFile", f"cannot read {path}: {exc}", f"fix or recreate {path}"
        ) from None
    lines = text.splitlines()
    first = lines[0].strip() if lines else ""
    if not first:
        raise BeamError(
            "missingToolchainFile",
            f"{path} is empty",
            f"write the toolchain name on its first line, e.g. leanprover/lean4:{TOOLCHAIN_FLOOR}",
        )
    return first


def classify_toolchain(spec: str) -> ToolchainSpec:
    """Release versions are compared with the floor; anything else passes with a warning."""
    from packaging.version import Version

    release = _RELEASE.match(spec)
    if release:
        version = release.group(1)
        if Version(version) < Version(TOOLCHAIN_FLOOR.lstrip("v")):
            raise BeamError(
                "toolchainUnsupported",
                f"toolchain {spec} is older than the oldest supported release {TOOLCHAIN_FLOOR}",
                f"update lean-toolchain to leanprover/lean4:{TOOLCHAIN_FLOOR} or newer and run "
                "`lake update`",
                {"toolchain": spec, "floor": TOOLCHAIN_FLOOR},
            )
        return ToolchainSpec(spec, "release", f"v{version}", None)
    if _NIGHTLY.match(spec):
        kind = "nightly"
    elif _PR.match(spec):
        kind = "pr"
    else:
        kind = "linked"
    warning = (
        f"toolchain {spec} is a {kind} toolchain; lean-beam cannot check it against the "
        f"supported floor {TOOLCHAIN_FLOOR}"
    )
    return ToolchainSpec(spec, kind, None, warning)


def seconds_from_env(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive number of seconds from `env[name]`; `default` when unset or not usable."""
    try:
        value = float(env.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def probe_timeout(env: Mapping[str, str]) -> float:
    """Bound on one toolchain probe; `BEAM_TOOLCHAIN_PROBE_TIMEOUT_S` overrides the default."""
    return seconds_from_env(env, PROBE_TIMEOUT_VAR, PROBE_TIMEOUT_S)


def run_captured(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run a short command with no stdin, its output captured as text, within ``timeout``
    (raises ``subprocess.TimeoutExpired`` or ``OSError``)."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )


def run_probe(
    argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float = PROBE_TIMEOUT_S
) -> str:
    """Run a short toolchain command; its stdout, or toolchainNotRunnable with the output tail."""
    try:
        done = run_captured(argv, cwd, env, timeout)
    except subprocess.TimeoutExpired:
        raise BeamError(
            "toolchainNotRunnable",
            f"`{' '.join(argv)}` did not finish within {timeout:g} s in {cwd}",
            "run the command yourself in the project to see what it waits for (elan may be "
            "downloading the toolchain), then retry",
        ) from None
    except OSError as exc:
        raise BeamError(
            "toolchainNotRunnable",
            f"cannot run `{' '.join(argv)}`: {exc}",
            f"check that {argv[0]} is an executable Lake installation",
        ) from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-10:])
        raise BeamError(
            "toolchainNotRunnable",
            f"`{' '.join(argv)}` failed with exit code {done.returncode} in {cwd}",
            f"run `{' '.join(argv)}` in {cwd} and fix what it reports "
            "(often `elan toolchain install <toolchain>`)",
            {"stderr_tail": tail},
        )
    return done.stdout.strip()


def path_with_first(first: Path | None, path: str) -> str:
    """PATH with `first` at the front, without duplicating it."""
    parts = [p for p in path.split(os.pathsep) if p]
    if first is None:
        return os.pathsep.join(parts)
    head = str(first)
    return os.pathsep.join([head, *(p for p in parts if p != head)])
