"""flake.nix evaluated (never built) against tests/nix/stub-nixpkgs.nix, and flake.lock.

`nix-instantiate --eval --strict` runs the flake's `outputs` function with the stub package set
as its nixpkgs input (tests/nix/eval-flake.nix gathers the facts). The package, the apps, the
checks and the development shell must agree with pyproject.toml through the explicit PyPI ->
nixpkgs name map below, at the stub's versions. Two mutated copies of flake.nix (a dependency
dropped, lsprotocol mapped back to nixpkgs' plain `lsprotocol`) must be caught.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
EVAL = REPO / "tests" / "nix" / "eval-flake.nix"
NIX_INSTANTIATE = shutil.which("nix-instantiate")
needs_nix = pytest.mark.skipif(
    NIX_INSTANTIATE is None,
    reason="nix-instantiate is not installed (CI installs Debian's nix-bin); flake not evaluated",
)
# PyPI name -> nixpkgs python3Packages attribute. Written out on purpose: the namespaces usually
# agree, and a new dependency must be looked up in nixpkgs before it is added here.
# nixpkgs' `lsprotocol` is an alias of lsprotocol_2023 (no `types.ClientInfo`).
PYPI_TO_NIX = {
    "click": "click",
    "packaging": "packaging",
    "platformdirs": "platformdirs",
    "filelock": "filelock",
    "pydantic": "pydantic",
    "anyio": "anyio",
    "lsprotocol": "lsprotocol_2025",
    "psutil": "psutil",
    "tomlkit": "tomlkit",
    "tomli": "tomli",
    "pytest": "pytest",
    "pytest-timeout": "pytest-timeout",
    "pytest-xdist": "pytest-xdist",
    "hypothesis": "hypothesis",
    "mcp": "mcp",
    "build": "build",
    "ruff": "ruff",
    "mypy": "mypy",
    "import-linter": "import-linter",
    "fusepy": "fusepy",
    "setuptools": "setuptools",
    "wheel": "wheel",
}
# What the check's Python carries besides pyproject's lists: pip and the build backend for the
# offline test wheel.
BUILD_TOOLS = {"pip", "setuptools", "wheel"}
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# What eval-flake.nix needs next to flake.nix in a mutated copy.
FLAKE_FILES = (
    "pyproject.toml",
    "README.md",
    "flake.lock",
    "beam_install",
    "beam_runtime",
    "beam_mcp",
    "tests",
)


def evaluate(flake_dir: Path = REPO, **args: str) -> dict[str, Any]:
    assert NIX_INSTANTIATE is not None
    argv = [
        NIX_INSTANTIATE,
        "--store",
        "dummy://",
        "--eval",
        "--strict",
        "--json",
        str(EVAL),
        "--argstr",
        "flakeDir",
        str(flake_dir),
    ]
    for name, value in args.items():
        argv += ["--argstr", name, value]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wanted(specs: list[str], python: str) -> dict[str, SpecifierSet]:
    """Canonical name -> specifier of the requirements whose markers hold on `python`."""
    env = {
        **default_environment(),
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
        "extra": "",
    }
    found = {}
    for spec in specs:
        requirement = Requirement(spec)
        if requirement.marker is None or requirement.marker.evaluate(env):
            found[canonicalize_name(requirement.name)] = requirement.specifier
    return found


def problems(
    found: list[dict[str, Any]],
    specs: dict[str, SpecifierSet],
    names: dict[str, str] | None = None,
    allowed: set[str] = frozenset(),
) -> list[str]:
    """How the evaluated packages `found` differ from the requirements `specs`."""
    names = {**PYPI_TO_NIX, **(names or {})}
    by_attr = {item["attr"]: item for item in found if item["attr"]}
    out = []
    for name, specifier in sorted(specs.items()):
        assert name in names, f"add {name} to PYPI_TO_NIX (and flake.nix)"
        item = by_attr.get(names[name])
        if item is None:
            out.append(f"{name}: python3Packages.{names[name]} is not in the flake's list")
        elif not specifier.contains(item["version"], prereleases=True):
            out.append(f"{name}: {names[name]} {item['version']} does not satisfy {specifier}")
    extra = set(by_attr) - {names[name] for name in specs} - allowed
    if extra:
        out.append(f"not in pyproject.toml: {sorted(extra)}")
    return out


def runtime_specs(python: str = "3.13.7") -> dict[str, SpecifierSet]:
    return wanted(PROJECT["project"]["dependencies"], python)


def extra_specs(python: str = "3.13.7") -> dict[str, SpecifierSet]:
    return wanted(PROJECT["project"]["optional-dependencies"]["test"], python)


def mutated_copy(tmp_path: Path, old: str, new: str) -> Path:
    text = (REPO / "flake.nix").read_text()
    assert old in text, f"flake.nix no longer has {old!r}: update this test"
    (tmp_path / "flake.nix").write_text(text.replace(old, new, 1))
    for name in FLAKE_FILES:
        (tmp_path / name).symlink_to(REPO / name)
    return tmp_path


def test_flake_lock_pins_the_nixpkgs_input() -> None:
    lock = json.loads((REPO / "flake.lock").read_text())
    url = re.search(
        r'inputs\.nixpkgs\.url = "github:([^/"]+)/([^/"]+)/([^/"]+)";',
        (REPO / "flake.nix").read_text(),
    )
    assert url, "flake.nix: inputs.nixpkgs.url is not a github:OWNER/REPO/REF url"
    assert lock["version"] == 7
    assert lock["nodes"][lock["root"]]["inputs"] == {"nixpkgs": "nixpkgs"}
    node = lock["nodes"]["nixpkgs"]
    owner, repo, ref = url.groups()
    assert node["original"] == {"owner": owner, "repo": repo, "ref": ref, "type": "github"}
    locked = node["locked"]
    assert (locked["owner"], locked["repo"], locked["type"]) == (owner, repo, "github")
    assert re.fullmatch(r"[0-9a-f]{40}", locked["rev"])
    assert re.fullmatch(r"sha256-[A-Za-z0-9+/]{43}=", locked["narHash"])
    assert isinstance(locked["lastModified"], int) and locked["lastModified"] > 1.7e9


@needs_nix
def test_package_matches_pyproject() -> None:
    facts = evaluate()
    package = facts["package"]
    version = re.search(
        r'^VERSION = "([^"]+)"$', (REPO / "beam_runtime/version.py").read_text(), re.MULTILINE
    )
    assert version
    assert (package["pname"], package["version"]) == (PROJECT["project"]["name"], version[1])
    assert package["name"] == f"lean-beam-{version[1]}"
    assert package["stubKind"] == "buildPythonApplication" and package["pyproject"] is True
    assert problems(package["dependencies"], runtime_specs()) == []
    assert (
        problems(package["buildSystem"], wanted(PROJECT["build-system"]["requires"], "3.13.7"))
        == []
    )
    assert set(package["pythonImportsCheck"]) == {"beam_install", "beam_runtime", "beam_mcp"}
    assert set(package["src"]) == {
        "pyproject.toml",
        "README.md",
        "beam_install",
        "beam_runtime",
        "beam_mcp",
    }
    meta = package["meta"]
    assert meta["license"] == PROJECT["project"]["license"]
    assert meta["mainProgram"] == "lean-beam" and meta["description"]
    assert facts["formatter"] == "nixfmt-rfc-style"
    assert facts["systems"] == sorted(
        ["x86_64-linux", "aarch64-linux", "x86_64-darwin", "aarch64-darwin"]
    )


@needs_nix
def test_apps_run_the_built_package() -> None:
    facts = evaluate()
    store_path = facts["package"]["storePath"]
    apps = facts["apps"]
    assert apps["default"]["program"] == f"{store_path}/bin/lean-beam"
    for name, app in apps.items():
        command = app["program"].rsplit("/", 1)[1]
        assert app["type"] == "app" and app["mainProgram"] == command
        assert app["program"] == f"{store_path}/bin/{command}", name
        assert command in PROJECT["project"]["scripts"]


@needs_nix
def test_check_runs_the_suite_offline_with_the_package() -> None:
    checks = evaluate()["checks"]
    assert checks["names"] == ["default", "package"] and checks["packageIsPackage"]
    modules = [item for item in checks["python"] if item["isPackage"]]
    assert [item["module"] for item in modules] == [True], "toPythonModule of the package"
    others = [item for item in checks["python"] if not item["isPackage"]]
    assert problems(others, {**runtime_specs(), **extra_specs()}, allowed=BUILD_TOOLS) == []
    script = checks["script"]
    for step in ("patchShebangs tests", "unset CI", "BEAM_TEST_OFFLINE=1", "python -m pytest"):
        assert step in script


@needs_nix
def test_python_older_than_3_11_gets_tomli() -> None:
    facts = evaluate(python="3.10.16")
    assert problems(facts["package"]["dependencies"], runtime_specs("3.10.16")) == []
    assert any(item["attr"] == "tomli" for item in facts["package"]["dependencies"])


@needs_nix
@pytest.mark.parametrize(
    ("args", "names"),
    [
        ({"mcp": "1.29.0", "mcp_2": "2.2.0"}, {"mcp": "mcp_2"}),
        ({"mcp": "1.29.0"}, None),
    ],
)
def test_mcp_1_in_nixpkgs_is_never_used(args: dict[str, str], names: dict[str, str] | None) -> None:
    python = [item for item in evaluate(**args)["checks"]["python"] if not item["isPackage"]]
    specs = {**runtime_specs(), **extra_specs()}
    if names is None:  # no mcp 2 at all: left out, so the SDK test skips (importorskip)
        del specs["mcp"]
    assert problems(python, specs, names, allowed=BUILD_TOOLS) == []


@needs_nix
def test_dev_shell_has_tests_node_and_an_editable_install() -> None:
    shell = evaluate()["devShell"]
    attrs = {item["attr"] for item in shell["packages"]}
    assert {"python3", "venvShellHook", "nodejs"} <= attrs
    libraries = [
        item
        for item in shell["packages"]
        if item["attr"] not in {"python3", "venvShellHook", "nodejs"}
    ]
    assert problems(libraries, {**runtime_specs(), **extra_specs()}, allowed=BUILD_TOOLS) == []
    assert "--editable ." in shell["postVenvCreation"] and shell["venvDir"]


@needs_nix
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("          psutil\n", "", "psutil: python3Packages.psutil is not in the flake's list"),
        (
            "          lsprotocol_2025\n",
            "          lsprotocol\n",
            "lsprotocol: python3Packages.lsprotocol_2025 is not in",
        ),
    ],
)
def test_a_broken_flake_is_caught(tmp_path: Path, old: str, new: str, expected: str) -> None:
    facts = evaluate(mutated_copy(tmp_path, old, new))
    found = problems(facts["package"]["dependencies"], runtime_specs())
    assert any(line.startswith(expected) for line in found), found
