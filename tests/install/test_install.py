"""`lean-beam install` through a real console script into a temporary HOME and root."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from tests.support.installed import BeamHome, Installed

COMMANDS = ("lean-beam", "lean-beam-mcp", "beam-cli")


def oracle_payload_hash(runtime: Path) -> tuple[str, int, int]:
    """The payload hash recomputed independently: sorted `<sha256>  <644|755>  <relpath>` lines."""
    lines = []
    total = 0
    for path in runtime.rglob("*"):
        rel = path.relative_to(runtime).as_posix()
        if "__pycache__" in rel.split("/") or rel == "manifest.json" or not path.is_file():
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        mode = "755" if path.stat().st_mode & 0o111 else "644"
        lines.append((rel.encode(), f"{digest}  {mode}  {rel}\n".encode()))
        total += path.stat().st_size
    lines.sort()
    return hashlib.sha256(b"".join(line for _, line in lines)).hexdigest(), len(lines), total


def test_fresh_install_tree_and_manifest(installed_root: Installed) -> None:
    root = installed_root.root
    assert root == installed_root.default_root.resolve()
    assert sorted(p.name for p in root.iterdir()) == [
        ".lean-beam-install-root", "bin", "current", "state", "versions",
    ]  # fmt: skip
    marker = json.loads((root / ".lean-beam-install-root").read_text())
    assert marker == {"owner": "lean-beam", "schema": 1, "root": str(root)}
    assert os.readlink(root / "current") == f"versions/{installed_root.runtime_id}"
    runtime = installed_root.runtime_dir
    manifest = json.loads((runtime / "manifest.json").read_text())
    digest, count, size = oracle_payload_hash(runtime)
    assert manifest["payload_sha256"] == digest
    assert (manifest["files"], manifest["bytes"]) == (count, size)
    assert installed_root.runtime_id == f"{manifest['version']}-{digest[:16]}"
    assert manifest["created_by"] == "venv"
    assert manifest["created_at"].endswith("Z")
    python = manifest["python"]["executable"]
    assert python == os.path.realpath(python)
    assert not python.startswith(str(installed_root.venv))
    assert Path(python).read_bytes()[:2] != b"#!"
    assert (root / "state" / "leases" / f"{installed_root.runtime_id}.lease").is_file()
    assert list((root / "state" / "staging").iterdir()) == []


def test_payload_is_the_closure_without_install_records(installed_root: Installed) -> None:
    site = installed_root.runtime_dir / "site"
    names = {p.name for p in site.iterdir()}
    for package in ("beam_runtime", "beam_install", "beam_mcp", "click", "pydantic", "anyio"):
        assert package in names
    assert not list(site.glob("*.dist-info/RECORD"))
    assert not list(site.glob("*.dist-info/INSTALLER"))
    assert not list(site.glob("*.dist-info/direct_url.json"))
    assert list(site.glob("lean_beam-*.dist-info/METADATA"))
    assert not (site / "pytest").exists()  # test extras are not part of the closure
    assert list(site.glob("click/__pycache__/*.pyc"))


def test_published_files_are_read_only(installed_root: Installed) -> None:
    for path in installed_root.runtime_dir.rglob("*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) & 0o222 == 0, path
    for command in COMMANDS:
        assert os.access(installed_root.launcher(command), os.X_OK)


def test_wrappers_are_managed_sh_scripts(installed_root: Installed) -> None:
    for command in COMMANDS:
        text = Path(installed_root.wrapper(command)).read_text()
        assert text.startswith("#!/bin/sh\n")
        assert "# managed-by: lean-beam" in text.splitlines()
        assert str(installed_root.root) in text
        link = installed_root.user_bin / command
        assert os.readlink(link) == installed_root.wrapper(command)


def test_wrappers_run_with_the_bare_client_environment(installed_root: Installed) -> None:
    for command in ("lean-beam", "beam-cli"):
        done = installed_root.run([installed_root.wrapper(command), "version", "--json"])
        assert done.code == 0, done.stderr
        identity = done.json()
        assert identity["name"] == command
        assert identity["runtime_id"] == installed_root.runtime_id
        assert identity["install_root"] == str(installed_root.root)
        assert identity["runtime_current"] is True
        assert identity["runtime_error"] is None
        assert identity["beam_cli"] == installed_root.launcher("beam-cli")


def test_launchers_ignore_the_users_python_environment(
    installed_root: Installed, tmp_path: Path
) -> None:
    poison = tmp_path / "poison"
    (poison / "click").mkdir(parents=True)
    (poison / "click" / "__init__.py").write_text("raise SystemExit('poisoned click imported')\n")
    done = installed_root.run(
        [installed_root.wrapper("lean-beam"), "version", "--json"],
        PYTHONPATH=str(poison),
        PYTHONHOME="/nonexistent",
    )
    assert done.code == 0, done.stderr
    assert (
        done.json()["python"]
        == json.loads((installed_root.runtime_dir / "manifest.json").read_text())["python"][
            "executable"
        ]
    )


def test_identical_reinstall_is_reused(installed_root: Installed) -> None:
    done = installed_root.install("--json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["schema"] == 1
    assert body["runtime"] == {
        "id": installed_root.runtime_id,
        "version": body["runtime"]["version"],
        "dir": str(installed_root.runtime_dir),
        "action": "reused",
    }
    assert body["current"] == {
        "from": installed_root.runtime_id, "to": installed_root.runtime_id, "changed": False,
    }  # fmt: skip
    assert body["restart_required"] is False
    assert {w["action"] for w in body["wrappers"]} == {"unchanged"}
    assert {link["action"] for link in body["links"]} == {"unchanged"}
    text = installed_root.install()
    assert text.code == 0
    assert "reused" in text.stdout
    assert "Restart running agents" not in text.stdout
    assert f"{installed_root.root}/bin/lean-beam-mcp" in text.stdout


def test_first_install_text_summary(fresh_home: BeamHome) -> None:
    done = fresh_home.install()
    assert done.code == 0, done.stderr
    out = done.stdout
    assert f"install root: {fresh_home.default_root}" in out
    assert "(created)" in out
    assert "current: (none) -> " in out
    assert "Restart running agents" in out
    assert "codex mcp add lean-beam -- " in out
    assert "claude mcp add --scope user lean-beam -- " in out


def test_dry_run_writes_nothing(fresh_home: BeamHome) -> None:
    done = fresh_home.install("--dry-run", "--json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["dry_run"] is True
    assert body["runtime"]["action"] == "would_create"
    assert body["current"]["from"] is None
    assert sorted(p.name for p in fresh_home.home.iterdir()) == []


def test_dry_run_after_install_would_reuse(installed_root: Installed) -> None:
    before = sorted(str(p) for p in installed_root.home.rglob("*"))
    body = installed_root.install("--dry-run", "--json").json()
    assert body["runtime"]["action"] == "would_reuse"
    assert sorted(str(p) for p in installed_root.home.rglob("*")) == before


def test_explicit_root_is_written_into_the_wrappers(fresh_home: BeamHome, tmp_path: Path) -> None:
    root = tmp_path / "elsewhere" / "beam root"
    done = fresh_home.install("--install-root", str(root), "--bin-dir", str(tmp_path / "b"))
    assert done.code == 0, done.stderr
    assert not fresh_home.default_root.exists()
    probe = fresh_home.run([str(root / "bin" / "lean-beam"), "version", "--json"])
    assert probe.code == 0, probe.stderr
    assert probe.json()["install_root"] == str(root)
    assert os.readlink(tmp_path / "b" / "beam-cli") == str(root / "bin" / "beam-cli")


def test_root_from_environment(fresh_home: BeamHome, tmp_path: Path) -> None:
    root = tmp_path / "env-root"
    done = fresh_home.install("--json", BEAM_INSTALL_ROOT=str(root))
    assert done.code == 0, done.stderr
    assert done.json()["install_root"] == str(root)
    probe = fresh_home.run([str(root / "bin" / "beam-cli"), "--version"])
    assert probe.code == 0, probe.stderr
    assert f"install_root: {root}" in probe.stdout


def test_bin_dir_from_environment(fresh_home: BeamHome, tmp_path: Path) -> None:
    links = tmp_path / "links"
    done = fresh_home.install("--json", BEAM_BIN_HOME=str(links))
    assert done.code == 0, done.stderr
    assert sorted(p.name for p in links.iterdir()) == sorted(COMMANDS)
