"""Every refusal of `lean-beam install`: exit 1, a structured error, nothing written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.installed import BeamHome, Installed, make_writable


def snapshot(*bases: Path) -> dict[str, tuple[int, int, str | None]]:
    """Every path below `bases` with mode, size and link target: what 'nothing written' means."""
    seen: dict[str, tuple[int, int, str | None]] = {}
    for base in bases:
        if not os.path.lexists(base):
            continue
        for current, dirs, files in os.walk(base):
            for name in [*dirs, *files, "."]:
                path = os.path.join(current, name)
                info = os.lstat(path)
                target = os.readlink(path) if os.path.islink(path) else None
                seen[os.path.normpath(path)] = (info.st_mode, info.st_size, target)
    return seen


def refused(beam: BeamHome, *args: str, category: str, **extra: str) -> dict[str, str]:
    done = beam.install(*args, "--json", **extra)
    assert done.code == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    error = done.error()
    assert error["category"] == category, error
    assert error["message"] and error["fix"]
    return error


@pytest.mark.parametrize(
    ("root", "why"),
    [
        ("relative/beam", "absolute"),
        ("/tmp/x/../beam", ".."),
        ("/", "/"),
        ("~", "home directory"),
        ("", "empty"),
    ],
)
def test_bad_root_spellings(fresh_home: BeamHome, root: str, why: str) -> None:
    before = snapshot(fresh_home.home)
    error = refused(fresh_home, "--install-root", root, category="invalidInstallRoot")
    assert why in error["message"]
    assert snapshot(fresh_home.home) == before


def test_home_itself_from_environment(fresh_home: BeamHome) -> None:
    error = refused(
        fresh_home, category="invalidInstallRoot", BEAM_INSTALL_ROOT=str(fresh_home.home)
    )
    assert "home directory" in error["message"]
    assert list(fresh_home.home.iterdir()) == []


def test_text_mode_error_goes_to_stderr(fresh_home: BeamHome) -> None:
    done = fresh_home.install("--install-root", "rel")
    assert done.code == 1
    assert done.stdout == ""
    assert "error: install root must be an absolute path" in done.stderr
    assert "fix: " in done.stderr


def test_symlinked_root(fresh_home: BeamHome, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    before = snapshot(tmp_path)
    error = refused(fresh_home, "--install-root", str(link), category="invalidInstallRoot")
    assert "symlink" in error["message"]
    assert snapshot(tmp_path) == before


def test_symlinked_ancestor_is_fine(fresh_home: BeamHome, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    done = fresh_home.install("--install-root", str(tmp_path / "alias" / "beam"), "--json")
    assert done.code == 0, done.stderr
    assert done.json()["install_root"] == str(tmp_path / "real" / "beam")


@pytest.mark.parametrize("entry", ["notes.txt", "state/cache", ".hidden"])
def test_unknown_entries(fresh_home: BeamHome, tmp_path: Path, entry: str) -> None:
    root = tmp_path / "root"
    (root / entry).parent.mkdir(parents=True, exist_ok=True)
    (root / entry).write_text("not ours\n")
    before = snapshot(tmp_path)
    error = refused(fresh_home, "--install-root", str(root), category="invalidInstallRoot")
    assert str(root / entry) in error["message"]
    assert snapshot(tmp_path) == before


def test_root_that_is_a_file(fresh_home: BeamHome, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    refused(fresh_home, "--install-root", str(tmp_path / "file"), category="invalidInstallRoot")


@pytest.mark.parametrize(
    ("marker", "why"),
    [
        ("garbage", "unreadable"),
        (json.dumps({"owner": "someone", "schema": 1, "root": "/x"}), "invalid"),
        (json.dumps({"owner": "lean-beam", "schema": 7, "root": "/x"}), "newer lean-beam"),
        (json.dumps({"owner": "lean-beam", "schema": 1, "root": "/elsewhere"}), "different root"),
    ],
)
def test_bad_marker(installed_root: Installed, marker: str, why: str) -> None:
    path = installed_root.root / ".lean-beam-install-root"
    path.write_text(marker)
    before = snapshot(installed_root.home)
    error = refused(installed_root, category="invalidInstallRoot")
    assert why in error["message"]
    assert snapshot(installed_root.home) == before


def test_invalid_existing_runtime_names_the_directory(installed_root: Installed) -> None:
    runtime = installed_root.runtime_dir
    make_writable(runtime)
    victim = runtime / "site" / "click" / "core.py"
    victim.write_text(victim.read_text() + "\n# changed\n")
    before = snapshot(installed_root.home)
    error = refused(installed_root, category="invalidRuntime")
    assert str(runtime) in error["message"]
    assert f"move {runtime} out of" in error["fix"]
    assert snapshot(installed_root.home) == before


def test_existing_runtime_with_missing_file(installed_root: Installed) -> None:
    runtime = installed_root.runtime_dir
    make_writable(runtime)
    (runtime / "site" / "click" / "types.py").unlink()
    before = snapshot(installed_root.home)
    refused(installed_root, category="invalidRuntime")
    assert snapshot(installed_root.home) == before


def test_existing_runtime_with_non_executable_launcher(installed_root: Installed) -> None:
    os.chmod(installed_root.launcher("beam-cli"), 0o444)
    error = refused(installed_root, category="invalidRuntime")
    assert "launcher" in error["message"]


@pytest.mark.parametrize("command", ["lean-beam", "lean-beam-mcp", "beam-cli"])
def test_unmanaged_file_where_a_wrapper_goes(installed_root: Installed, command: str) -> None:
    wrapper = Path(installed_root.wrapper(command))
    wrapper.unlink()
    wrapper.write_text("#!/bin/sh\necho mine\n")
    before = snapshot(installed_root.home)
    error = refused(installed_root, category="unmanagedPath")
    assert str(wrapper) in error["message"]
    assert snapshot(installed_root.home) == before


def test_unmanaged_file_where_a_link_goes(fresh_home: BeamHome) -> None:
    fresh_home.user_bin.mkdir(parents=True)
    (fresh_home.user_bin / "beam-cli").write_text("#!/bin/sh\necho someone else\n")
    before = snapshot(fresh_home.home)
    error = refused(fresh_home, category="unmanagedPath")
    assert str(fresh_home.user_bin / "beam-cli") in error["message"]
    assert snapshot(fresh_home.home) == before


def test_link_to_something_else(fresh_home: BeamHome, tmp_path: Path) -> None:
    fresh_home.user_bin.mkdir(parents=True)
    (fresh_home.user_bin / "lean-beam").symlink_to("/usr/bin/env")
    before = snapshot(fresh_home.home)
    refused(fresh_home, category="unmanagedPath")
    assert snapshot(fresh_home.home) == before


def test_bad_bin_dir(fresh_home: BeamHome) -> None:
    refused(fresh_home, "--bin-dir", "relative/bin", category="invalidBinDir")
    assert list(fresh_home.home.iterdir()) == []


def test_pipx_owned_link_is_skipped_and_reported(fresh_home: BeamHome) -> None:
    pipx_venv = fresh_home.home / ".local" / "share" / "pipx" / "venvs" / "lean-beam"
    (pipx_venv / "bin").mkdir(parents=True)
    (pipx_venv / "pipx_metadata.json").write_text("{}\n")
    script = pipx_venv / "bin" / "lean-beam"
    script.write_text(Path(fresh_home.console("lean-beam")).read_text())
    script.chmod(0o755)
    fresh_home.user_bin.mkdir(parents=True)
    (fresh_home.user_bin / "lean-beam").symlink_to(script)
    done = fresh_home.install("--json")
    assert done.code == 0, done.stderr
    links = {link["name"]: link for link in done.json()["links"]}
    assert links["lean-beam"]["action"] == "skipped"
    assert links["lean-beam"]["reason"] == "owned by pipx (it delegates to current)"
    assert links["beam-cli"]["action"] == "created"
    assert os.readlink(fresh_home.user_bin / "lean-beam") == str(script)
    text = fresh_home.install()
    assert "skipped: owned by pipx (it delegates to current)" in text.stdout


def test_venv_console_script_link_is_skipped(fresh_home: BeamHome) -> None:
    fresh_home.user_bin.mkdir(parents=True)
    (fresh_home.user_bin / "beam-cli").symlink_to(fresh_home.console("beam-cli"))
    done = fresh_home.install("--json")
    assert done.code == 0, done.stderr
    links = {link["name"]: link for link in done.json()["links"]}
    assert links["beam-cli"] == {
        "name": "beam-cli",
        "path": str(fresh_home.user_bin / "beam-cli"),
        "action": "skipped",
        "reason": "owned by venv (it delegates to current)",
    }


@pytest.mark.parametrize(
    "args",
    [["--bogus"], ["--lock-timeout", "soon"], ["--lock-timeout", "-1"], ["extra-argument"]],
)
def test_usage_errors_exit_2(fresh_home: BeamHome, args: list[str]) -> None:
    done = fresh_home.install(*args)
    assert done.code == 2, done.stderr
    assert done.stdout == ""
    assert list(fresh_home.home.iterdir()) == []
