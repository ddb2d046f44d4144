"""`lean-beam setup` and `remove` through the installed wrapper, on real files under a temp HOME."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.setup.conftest import CLIENTS, Beam, load_json, load_toml, snapshot

MARK = {"LEAN_BEAM_MANAGED": "1"}

# Shapes the clients themselves write (other servers, settings, comments), to be kept intact.
CLAUDE = """{
  "numStartups": 12,
  "projects": {
    "/work/demo": {
      "allowedTools": [],
      "mcpServers": {}
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {}
    }
  }
}
"""
CODEX = """# Codex settings
model = "gpt-5-codex"   # the default model

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]

[projects."/work/demo"]
trust_level = "trusted"
"""
OPENCODE = """{
  "$schema": "https://opencode.ai/config.json",
  // local servers
  "mcp": {
    "fs": { "type": "local", "command": ["fs-mcp"], /* on */ "enabled": true, }, // keep me
  },
}
"""
VSCODE = '{\n\t"servers": {\n\t\t"x": {"type": "stdio", "command": "x"}\n\t},\n\t"inputs": []\n}\n'
VIBE = """active_model = "devstral"

[[mcp_servers]]
name = "fetch"
transport = "stdio"
command = "uvx"
args = ["mcp-server-fetch"]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_plan_only_without_yes(beam: Beam) -> None:
    before = snapshot(beam.home)
    body = beam.setup_json("--all")
    assert body["schema"] == 1 and body["dry_run"] is True
    assert [c["client"] for c in body["changes"]] == list(CLIENTS)
    assert {c["action"] for c in body["changes"]} == {"created"}
    assert {s["action"] for s in body["skills"]} == {"created"}
    assert snapshot(beam.home) == before
    assert not (beam.root / "state" / "setup" / "registrations.json").exists()
    text = beam.beam("setup", "codex")
    assert text.code == 0 and "would create" in text.stdout and "--yes" in text.stdout
    assert beam.wrapper in text.stdout  # the plan shows the entry it would write


def test_every_client_gets_its_own_shape(beam: Beam) -> None:
    body = beam.setup_json("--all", "--yes")
    assert body["dry_run"] is False
    assert {c["action"] for c in body["changes"]} == {"created"}
    claude = load_json(beam.config("claude-code"))["mcpServers"]["lean-beam"]
    assert claude == {"type": "stdio", "command": beam.wrapper, "args": [], "env": MARK}
    codex = load_toml(beam.config("codex"))["mcp_servers"]["lean-beam"]
    assert codex == {
        "command": beam.wrapper,
        "args": [],
        "env": MARK,
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 120,
    }
    for client in ("cursor", "gemini"):
        entry = load_json(beam.config(client))["mcpServers"]["lean-beam"]
        assert entry == {"command": beam.wrapper, "args": [], "env": MARK}
    opencode = load_json(beam.config("opencode"))["mcp"]["lean-beam"]
    assert opencode == {
        "type": "local",
        "command": [beam.wrapper],
        "enabled": True,
        "environment": MARK,
    }
    vscode = load_json(beam.config("vscode"))["servers"]["lean-beam"]
    assert vscode["type"] == "stdio" and vscode["command"] == beam.wrapper
    (vibe,) = load_toml(beam.config("vibe"))["mcp_servers"]
    assert vibe["name"] == "lean-beam" and vibe["transport"] == "stdio"
    assert vibe["command"] == beam.wrapper and vibe["env"] == MARK
    for skill in beam.skills():
        text = skill.read_text()
        assert text.startswith("---\nname: lean-beam\n") and "managed-by: lean-beam" in text
        assert len(text.split()) < 600
    again = beam.setup_json("--all", "--yes")
    assert {c["action"] for c in again["changes"]} == {"unchanged"}
    assert {s["action"] for s in again["skills"]} == {"unchanged"}


def test_bytes_outside_our_entry_are_kept(beam: Beam) -> None:
    originals = {
        "claude-code": CLAUDE,
        "codex": CODEX,
        "opencode": OPENCODE.replace("\n", "\n"),
        "vscode": VSCODE,
        "vibe": VIBE,
    }
    for client, text in originals.items():
        write(beam.config(client), text)
    os.chmod(beam.config("claude-code"), 0o600)
    beam.setup_json(*originals, "--yes")
    codex = beam.config("codex").read_text()
    assert codex.startswith(CODEX.split("[projects")[0].rstrip("\n"))
    assert "# the default model" in codex and '[projects."/work/demo"]' in codex
    assert "// keep me" in beam.config("opencode").read_text()
    assert '\t\t"lean-beam": {' in beam.config("vscode").read_text()  # the file's own tabs
    assert load_json(beam.config("claude-code"))["mcpServers"]["github"]["command"] == "npx"
    assert os.stat(beam.config("claude-code")).st_mode & 0o777 == 0o600
    done = beam.beam("remove", *originals, "--yes", "--json")
    assert done.code == 0, done.stderr
    assert {c["action"] for c in done.json()["changes"]} == {"removed"}
    for client, text in originals.items():
        assert beam.config(client).read_text() == text, client
    assert not any(skill.exists() for skill in beam.skills())


def test_unmanaged_entry_is_left_alone_until_forced(beam: Beam) -> None:
    mine = {"mcpServers": {"lean-beam": {"command": "/opt/other/lean-beam-mcp"}}}
    path = write(beam.config("cursor"), json.dumps(mine, indent=4) + "\n")
    before = path.read_bytes()
    body = beam.setup_json("cursor", "--yes")
    (change,) = body["changes"]
    assert change["action"] == "skipped" and "/opt/other/lean-beam-mcp" in change["reason"]
    assert "--force-unmanaged" in change["reason"] and change["file"] == str(path)
    assert path.read_bytes() == before
    removed = beam.beam("remove", "cursor", "--yes", "--json").json()
    assert removed["changes"][0]["action"] == "skipped" and path.read_bytes() == before
    forced = beam.setup_json("cursor", "--yes", "--force-unmanaged")
    assert forced["changes"][0]["action"] == "updated"
    entry = load_json(path)["mcpServers"]["lean-beam"]
    assert entry["command"] == beam.wrapper and entry["env"] == MARK
    assert '    "mcpServers": {' in path.read_text()  # four spaces, as the file had


def test_refresh_rewrites_only_our_entries(beam: Beam) -> None:
    beam.setup_json("codex", "--yes")
    path = beam.config("codex")
    moved = path.read_text().replace(beam.wrapper, "/old/root/bin/lean-beam-mcp")
    path.write_text(moved.replace("tool_timeout_sec = 120", "tool_timeout_sec = 60"))
    write(beam.config("cursor"), '{"mcpServers": {"lean-beam": {"command": "/x"}}}\n')
    body = beam.setup_json("--refresh", "--yes")
    assert [(c["client"], c["action"]) for c in body["changes"]] == [
        ("codex", "updated"),
        ("cursor", "skipped"),
    ]
    codex = load_toml(path)["mcp_servers"]["lean-beam"]
    assert codex["command"] == beam.wrapper and codex["tool_timeout_sec"] == 120
    assert not beam.config("claude-code").exists()  # refresh never adds
    assert beam.setup_json("--refresh", "--yes")["changes"][0]["action"] == "unchanged"


def test_project_scope_writes_the_project_files(beam: Beam, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    body = beam.setup_json(
        "claude-code", "codex", "--scope", "project", "--project", str(project), "--yes"
    )
    files = {c["client"]: c["file"] for c in body["changes"]}
    assert files == {
        "claude-code": str(project / ".mcp.json"),
        "codex": str(project / ".codex" / "config.toml"),
    }
    assert load_json(project / ".mcp.json")["mcpServers"]["lean-beam"]["command"] == beam.wrapper
    recorded = json.loads((beam.root / "state/setup/registrations.json").read_text())
    assert {(r["client"], r["scope"]) for r in recorded["registrations"]} == {
        ("claude-code", "project"),
        ("codex", "project"),
    }
    done = beam.beam("remove", "--all", "--yes", "--json")
    assert done.code == 0, done.stderr
    removed = [c for c in done.json()["changes"] if c["action"] == "removed"]
    assert {c["file"] for c in removed} == set(files.values())
    assert not (project / ".mcp.json").exists()  # setup created it for our entry alone
    assert not (project / ".codex").exists()


def test_no_client_found_or_named(beam: Beam) -> None:
    # a PATH without client commands (CI installs the real client CLIs into /usr/bin); the
    # wrapper needs readlink
    bare = beam.home / "bare-bin"
    bare.mkdir()
    (bare / "readlink").symlink_to(shutil.which("readlink") or "/bin/readlink")
    done = beam.beam("setup", "--json", PATH=str(bare))
    assert done.code == 1 and done.error()["category"] == "noClientSelected"
    (beam.home / ".codex").mkdir()
    found = beam.setup_json(PATH=str(bare))
    assert [c["client"] for c in found["changes"]] == ["codex"]
    usage = beam.beam("setup", "emacs")
    assert usage.code == 2


def test_setup_needs_an_install(tmp_path: Path) -> None:
    from tests.runtime.clienv import client_env, dev_command, run

    home = tmp_path / "home"
    home.mkdir()
    done = run(
        [
            dev_command("lean-beam"),
            "setup",
            "--all",
            "--yes",
            "--json",
            "--install-root",
            str(tmp_path / "nothing"),
        ],
        client_env(home),
    )
    assert done.code == 1 and done.error()["category"] == "notInstalled"
    assert "lean-beam install" in done.error()["fix"]
    assert list(home.iterdir()) == []


def test_install_points_at_setup(beam: Beam) -> None:
    (beam.home / ".codex").mkdir()
    from tests.runtime.clienv import client_env, dev_command, run

    done = run(
        [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(beam.root),
            "--bin-dir",
            str(beam.home / ".local" / "bin"),
        ],
        client_env(beam.home),
    )
    assert done.code == 0, done.stderr
    assert "lean-beam setup --yes" in done.stdout
    assert f"codex (user) {beam.config('codex')}: would create" in done.stdout
    assert f"{beam.home}/.local/bin is not on PATH" in done.stdout
    assert not beam.config("codex").exists()
