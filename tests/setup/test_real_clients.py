"""The real `codex` and `claude` CLIs (npm `@openai/codex`, `@anthropic-ai/claude-code`) read
what setup wrote, rewrite their own files, and setup/remove still recognise our entry.

The CLIs are found on PATH or in `$BEAM_CLIENT_CLI_DIR` (`tests/support/clients.py`); without
them these tests skip locally and fail under CI=true (`.ci/run` installs the pinned versions).
"""

from __future__ import annotations

import json

from tests.runtime.clienv import run
from tests.setup.conftest import Beam, load_json, load_toml
from tests.support.clients import cli_env, real_cli


def cli(name: str) -> str:
    return real_cli(name)


def test_codex_reads_and_rewrites_our_entry(beam: Beam) -> None:
    codex = cli("codex")
    beam.setup_json("codex", "--yes")
    env = cli_env(beam.home, codex)
    got = run([codex, "mcp", "get", "lean-beam", "--json"], env, cwd=beam.home)
    assert got.code == 0, got.stderr
    body = json.loads(got.stdout)
    assert body["transport"]["command"] == beam.wrapper
    assert body["transport"]["env"] == {"LEAN_BEAM_MANAGED": "1"}
    assert body["startup_timeout_sec"] == 30 and body["tool_timeout_sec"] == 120
    added = run([codex, "mcp", "add", "other", "--", "/bin/true"], env, cwd=beam.home)
    assert added.code == 0, added.stderr  # Codex rewrites config.toml in its own style
    again = beam.setup_json("codex", "--yes")
    assert again["changes"][0]["action"] == "unchanged"
    removed = beam.beam("remove", "codex", "--yes", "--json")
    assert removed.json()["changes"][0]["action"] == "removed"
    servers = load_toml(beam.config("codex"))["mcp_servers"]
    assert list(servers) == ["other"]


def test_claude_code_connects_to_our_entry(beam: Beam) -> None:
    claude = cli("claude")
    beam.setup_json("claude-code", "--yes")
    env = cli_env(beam.home, claude)
    got = run([claude, "mcp", "get", "lean-beam"], env, cwd=beam.home, timeout=120)
    assert got.code == 0, got.stderr
    assert beam.wrapper in got.stdout and "LEAN_BEAM_MANAGED=1" in got.stdout
    assert "Connected" in got.stdout  # Claude Code started the server and spoke MCP to it
    added = run(
        [claude, "mcp", "add", "--scope", "user", "other", "--", "/bin/true"],
        env,
        cwd=beam.home,
        timeout=120,
    )
    assert added.code == 0, added.stderr
    assert beam.setup_json("claude-code", "--yes")["changes"][0]["action"] == "unchanged"
    beam.beam("remove", "claude-code", "--yes")
    assert list(load_json(beam.config("claude-code"))["mcpServers"]) == ["other"]
