"""flake.nix: it parses (when nix-instantiate exists) and its dependency lists match pyproject."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
# PyPI name -> nixpkgs python3Packages attribute. Written out on purpose: the two namespaces
# usually agree, and a new dependency must be looked up in nixpkgs before it is added here.
PYPI_TO_NIX = {
    "click": "click",
    "packaging": "packaging",
    "platformdirs": "platformdirs",
    "filelock": "filelock",
    "pydantic": "pydantic",
    "anyio": "anyio",
    "lsprotocol": "lsprotocol",
    "psutil": "psutil",
    "tomlkit": "tomlkit",
    "tomli": "tomli",
    "pytest": "pytest",
    "pytest-timeout": "pytest-timeout",
    "hypothesis": "hypothesis",
    "mcp": "mcp",
    "build": "build",
    "ruff": "ruff",
    "mypy": "mypy",
}


def flake_list(name: str) -> set[str]:
    """The attribute names in `<name> = ps: with ps; [ ... ] (++ lib.optional (...) x)?;`."""
    text = (REPO / "flake.nix").read_text()
    match = re.search(rf"^\s*{name} = ps: with ps; \[([^\]]*)\](.*?);$", text, re.MULTILINE)
    assert match, f"{name} not found in flake.nix"
    names = set(match.group(1).split())
    names |= set(re.findall(r"lib\.optional \([^)]*\) ([\w-]+)", match.group(2)))
    return names


def pyproject_names(requirements: list[str]) -> set[str]:
    names = set()
    for spec in requirements:
        name = canonicalize_name(Requirement(spec).name)
        assert name in PYPI_TO_NIX, f"add {name} to PYPI_TO_NIX (and flake.nix)"
        names.add(PYPI_TO_NIX[name])
    return names


def test_flake_dependencies_match_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert flake_list("runtimeDeps") == pyproject_names(project["dependencies"])
    assert flake_list("testDeps") == pyproject_names(project["optional-dependencies"]["test"])


def test_flake_parses() -> None:
    tool = shutil.which("nix-instantiate")
    if tool is None:
        pytest.skip("nix-instantiate is not installed (CI installs nix-bin)")
    done = subprocess.run([tool, "--parse", str(REPO / "flake.nix")], capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
