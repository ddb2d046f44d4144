"""Small Lean projects on disk for tests: `lean-toolchain`, `lakefile.toml` and the given files."""

from __future__ import annotations

from pathlib import Path

TOOLCHAIN = "leanprover/lean4:v4.24.0\n"


def lean_project(root: Path, files: dict[str, str], *, lakefile: str | None = None) -> Path:
    """Write a project at `root` (created) with `files` (relative path -> text); its real path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "lean-toolchain").write_text(TOOLCHAIN)
    default = 'name = "proj"\ndefaultTargets = ["Main"]\n'
    (root / "lakefile.toml").write_text(default if lakefile is None else lakefile)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root.resolve()
