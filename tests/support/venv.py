"""One wheel of this checkout installed into one temporary venv per test run.

The wheel is built from a copy of the package sources (never in the working tree, which other
people use at the same time); the venv is created with the real interpreter behind this one
(never a pyenv shim) and without pip, then pip from the running environment installs the wheel
and its dependencies into it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Offline (the Nix check): build without isolation and let the venv see this Python's packages.
OFFLINE = os.environ.get("BEAM_TEST_OFFLINE") == "1"
SOURCES = ("pyproject.toml", "README.md", "beam_install", "beam_runtime", "beam_mcp")


def real_python() -> str:
    """The interpreter binary behind this test run."""
    base = getattr(sys, "_base_executable", "") or sys.executable
    return os.path.realpath(base)


def build_wheel(work: Path) -> Path:
    source = work / "src"
    source.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    out = work / "dist"
    isolation = ["--no-build-isolation"] if OFFLINE else []
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            *isolation,
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = out.glob("lean_beam-*.whl")
    return wheel


def share_site_dirs(venv: Path) -> None:
    """Let the venv see this Python's site directories (the Nix check's `withPackages` env).

    `--system-site-packages` only shares the bare interpreter's own directory, which in the Nix
    store holds nothing. A `.pth` line is appended to the venv's path, after its own packages.
    """
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / minor / "site-packages"
    shared = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)]
    (site / "beam-test-shared.pth").write_text("".join(f"{p}\n" for p in shared))


def create_venv(work: Path, wheel: Path) -> Path:
    venv = work / "venv"
    shared = ["--system-site-packages"] if OFFLINE else []
    subprocess.run(
        [real_python(), "-m", "venv", "--without-pip", *shared, str(venv)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    offline = ["--no-deps", "--no-index"] if OFFLINE else []
    subprocess.run(
        [*pip, "install", "-q", "--disable-pip-version-check", *offline, str(wheel)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    if OFFLINE:  # after pip, so that it does not find lean-beam already there
        share_site_dirs(venv)
    return venv


def wheel_venv(work: Path) -> Path:
    """Build the wheel and a venv holding it; returns the venv directory."""
    return create_venv(work, build_wheel(work))
