"""Identity (`--version`, `version --json`), delegation and leases, through real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.installed import BeamHome, Installed, current_is_a_variant, make_writable

INSTALLED_KEYS = [
    "schema", "name", "version", "runtime_id", "install_root", "runtime_dir", "beam_cli",
    "python", "mcp_protocol", "runtime_current", "runtime_error",
]  # fmt: skip
DEV_KEYS = ["schema", "name", "version", "beam_cli", "python", "mcp_protocol"]


def identity(beam: BeamHome, argv: list[str], **extra: str) -> dict[str, object]:
    done = beam.run([*argv, "version", "--json"], **extra)
    assert done.code == 0, done.stderr
    body = done.json()
    assert isinstance(body, dict)
    return body


@pytest.mark.parametrize("command", ["lean-beam", "beam-cli"])
def test_development_identity(fresh_home: BeamHome, command: str) -> None:
    body = identity(fresh_home, [fresh_home.console(command)], BEAM_NO_DELEGATE="1")
    assert list(body) == DEV_KEYS
    assert body["name"] == command
    assert body["mcp_protocol"] == "2026-07-28"
    assert body["python"] == os.path.realpath(str(body["python"]))
    text = fresh_home.run([fresh_home.console(command), "--version"], BEAM_NO_DELEGATE="1")
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == f"{command} {body['version']}"
    assert "mcp_protocol: 2026-07-28" in lines
    assert not any(line.startswith(("runtime_", "install_root")) for line in lines)


def test_installed_identity_text(installed_root: Installed) -> None:
    done = installed_root.run([installed_root.wrapper("lean-beam"), "--version"])
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("lean-beam ")
    assert f"runtime_id: {installed_root.runtime_id}" in lines
    assert f"install_root: {installed_root.root}" in lines
    assert "runtime_current: true" in lines
    assert "runtime_error: none" in lines
    body = identity(installed_root, [installed_root.launcher("beam-cli")])
    assert list(body) == INSTALLED_KEYS


def test_mcp_server_identity_pairs_with_its_own_beam_cli(installed_root: Installed) -> None:
    done = installed_root.run([installed_root.wrapper("lean-beam-mcp"), "--version"])
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("lean-beam-mcp ")
    assert f"beam_cli: {installed_root.launcher('beam-cli')}" in lines
    assert f"runtime_id: {installed_root.runtime_id}" in lines
    override = installed_root.run(
        [installed_root.launcher("lean-beam-mcp"), "--beam-cli", "/opt/other/beam-cli", "--version"]
    )
    assert override.code == 0, override.stderr
    assert "beam_cli: /opt/other/beam-cli" in override.stdout.splitlines()


def corrupt_marker_missing(i: Installed) -> None:
    (i.root / ".lean-beam-install-root").unlink()


def corrupt_marker_invalid(i: Installed) -> None:
    (i.root / ".lean-beam-install-root").write_text("{not json")


def corrupt_marker_other_root(i: Installed) -> None:
    body = {"owner": "lean-beam", "schema": 1, "root": "/somewhere/else"}
    (i.root / ".lean-beam-install-root").write_text(json.dumps(body))


def _manifest(i: Installed) -> Path:
    make_writable(i.runtime_dir)
    return i.runtime_dir / "manifest.json"


def corrupt_manifest_missing(i: Installed) -> None:
    _manifest(i).unlink()


def corrupt_manifest_invalid(i: Installed) -> None:
    _manifest(i).write_text("[1, 2")


def corrupt_manifest_other_id(i: Installed) -> None:
    path = _manifest(i)
    body = json.loads(path.read_text())
    body["runtime_id"] = "0.0.1-0123456789abcdef"
    path.write_text(json.dumps(body))


@pytest.mark.parametrize(
    ("corrupt", "phrases"),
    [
        (corrupt_marker_missing, ["marker", "missing", "rename the whole install root"]),
        (corrupt_marker_invalid, ["marker", "invalid", "rename the whole install root"]),
        (corrupt_marker_other_root, ["names a different root", "/somewhere/else"]),
        (corrupt_manifest_missing, ["manifest", "missing", "out of versions/"]),
        (corrupt_manifest_invalid, ["manifest", "invalid", "out of versions/"]),
        (corrupt_manifest_other_id, ["names runtime '0.0.1-0123456789abcdef'", "out of versions/"]),
    ],
)
def test_runtime_error_cases(installed_root: Installed, corrupt, phrases: list[str]) -> None:  # type: ignore[no-untyped-def]
    corrupt(installed_root)
    for command in ("lean-beam", "beam-cli"):
        body = identity(installed_root, [installed_root.launcher(command)])
        assert list(body) == INSTALLED_KEYS
        assert body["runtime_current"] is True
        error = str(body["runtime_error"])
        assert "\n" not in error
        for phrase in phrases:
            assert phrase in error
    text = installed_root.run([installed_root.launcher("lean-beam"), "--version"])
    assert text.code == 0, text.stderr
    assert any(line.startswith("runtime_error: ") and "none" not in line
               for line in text.stdout.splitlines())  # fmt: skip
    mcp = installed_root.run([installed_root.launcher("lean-beam-mcp"), "--version"])
    assert mcp.code == 0, mcp.stderr
    assert phrases[0] in mcp.stdout


def test_runtime_current_false_when_superseded_or_missing(installed_root: Installed) -> None:
    current = installed_root.root / "current"
    current.unlink()
    current.symlink_to("versions/0.0.1-0123456789abcdef")
    body = identity(installed_root, [installed_root.launcher("lean-beam")])
    assert body["runtime_current"] is False
    assert body["runtime_error"] is None
    current.unlink()
    assert (
        identity(installed_root, [installed_root.launcher("lean-beam")])["runtime_current"] is False
    )
    wrapper = installed_root.run([installed_root.wrapper("lean-beam"), "--version"])
    assert wrapper.code == 1
    assert "no installed runtime" in wrapper.stderr


@pytest.mark.parametrize("command", ["lean-beam", "beam-cli"])
def test_console_scripts_delegate_to_current(installed_root: Installed, command: str) -> None:
    body = identity(installed_root, [installed_root.console(command)])
    assert body["runtime_id"] == installed_root.runtime_id
    assert body["python"] == os.path.realpath(str(body["python"]))
    off = identity(installed_root, [installed_root.console(command)], BEAM_NO_DELEGATE="1")
    assert "runtime_id" not in off


def test_mcp_console_script_delegates(installed_root: Installed) -> None:
    done = installed_root.run([installed_root.console("lean-beam-mcp"), "--version"])
    assert done.code == 0, done.stderr
    assert f"runtime_id: {installed_root.runtime_id}" in done.stdout.splitlines()
    assert done.stderr == ""


def test_no_delegation_to_an_unsound_current(installed_root: Installed) -> None:
    corrupt_manifest_other_id(installed_root)
    body = identity(installed_root, [installed_root.console("lean-beam")])
    assert "runtime_id" not in body


def test_version_mismatch_hint(installed_root: Installed) -> None:
    path = _manifest(installed_root)
    body = json.loads(path.read_text())
    body["version"] = "9.9.9"
    path.write_text(json.dumps(body))
    for command in ("lean-beam", "beam-cli"):
        done = installed_root.run([installed_root.console(command), "--version"])
        assert done.code == 0, done.stderr
        assert f"runtime_id: {installed_root.runtime_id}" in done.stdout.splitlines()
        assert "9.9.9" in done.stderr and "lean-beam install" in done.stderr
        assert len(done.stderr.splitlines()) == 1
    mcp = installed_root.run([installed_root.console("lean-beam-mcp"), "--version"])
    assert mcp.code == 0, mcp.stderr
    assert mcp.stderr == ""


def test_install_never_delegates(installed_root: Installed) -> None:
    variant, original = current_is_a_variant(installed_root)
    done = installed_root.install("--json")
    assert done.code == 0, done.stderr
    body = done.json()
    # Delegating would have run the variant's code, which re-stages the variant (reused).
    assert body["runtime"]["id"] == original
    assert body["runtime"]["action"] == "created"
    assert body["current"] == {"from": variant, "to": original, "changed": True}


def test_runtime_code_never_delegates(installed_root: Installed, tmp_path: Path) -> None:
    other = tmp_path / "other-root"
    done = installed_root.install("--install-root", str(other), "--bin-dir", str(tmp_path / "b"))
    assert done.code == 0, done.stderr
    other_home = Installed(
        installed_root.home, installed_root.venv, other, installed_root.runtime_id
    )
    variant, _ = current_is_a_variant(other_home)
    assert os.readlink(other / "current") == f"versions/{variant}"
    body = identity(installed_root, [installed_root.launcher("lean-beam")],
                    BEAM_INSTALL_ROOT=str(other))  # fmt: skip
    assert body["runtime_id"] == installed_root.runtime_id
    assert body["install_root"] == str(installed_root.root)
