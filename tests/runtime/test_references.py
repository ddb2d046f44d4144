"""Reading real client config files written under a temporary HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beam_runtime.references import ReferenceIndex, read_registrations, referenced_ids

ID_A = "0.1.0-aaaaaaaaaaaaaaaa"
ID_B = "0.1.0-bbbbbbbbbbbbbbbb"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "beam root"
    for rid in (ID_A, ID_B):
        (root / "versions" / rid / "bin").mkdir(parents=True)
    (root / "bin").mkdir()
    return root


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def index(root: Path, env: dict[str, str]) -> ReferenceIndex:
    return ReferenceIndex(root, read_registrations(env))


def clients(idx: ReferenceIndex, rid: str) -> list[tuple[str, str | None]]:
    return sorted((r.client, r.server_name) for r in idx.referenced_by(rid))


def test_codex_toml_command_args_and_env(home: Path, root: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[mcp_servers.beam]\ncommand = "{root}/versions/{ID_A}/bin/lean-beam-mcp"\n'
        f'[mcp_servers.other]\ncommand = "x"\nargs = ["--beam-cli={root}/versions/{ID_B}/bin/b"]\n'
        f'[mcp_servers.third]\ncommand = "y"\n'
        f'env = {{ PATH = "/usr/bin:{root}/versions/{ID_B}/bin" }}\n'
    )
    idx = index(root, env_for(home))
    assert clients(idx, ID_A) == [("codex", "beam")]
    assert clients(idx, ID_B) == [("codex", "other"), ("codex", "third")]


def test_stable_wrapper_references_nothing(home: Path, root: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[mcp_servers.beam]\ncommand = "{root}/bin/lean-beam-mcp"\n'
    )
    idx = index(root, env_for(home))
    assert idx.referenced_by(ID_A) == [] and idx.referenced_by(ID_B) == []
    assert [e.server_name for e in idx.registrations.entries] == ["beam"]


def test_codex_home_overrides(home: Path, root: Path, tmp_path: Path) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text(
        f'[mcp_servers.b]\ncommand = "{root}/versions/{ID_A}/bin/lean-beam-mcp"\n'
    )
    assert clients(index(root, env_for(home)), ID_A) == []
    assert clients(index(root, env_for(home, CODEX_HOME=str(codex))), ID_A) == [("codex", "b")]


def test_claude_top_level_and_project_servers(home: Path, root: Path) -> None:
    server_a = {"type": "stdio", "command": f"{root}/versions/{ID_A}/bin/lean-beam-mcp"}
    server_b = {"command": "sh", "args": ["-c", f"exec '{root}/versions/{ID_B}/bin/x'"]}
    doc = {"mcpServers": {"beam": server_a}, "projects": {"/p": {"mcpServers": {"pb": server_b}}}}
    (home / ".claude.json").write_text(json.dumps(doc))
    idx = index(root, env_for(home))
    assert clients(idx, ID_A) == [("claude-code", "beam")]
    assert clients(idx, ID_B) == [("claude-code", "pb (project /p)")]


def test_claude_config_dir(home: Path, root: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "claude"
    cfg.mkdir()
    doc = {"mcpServers": {"beam": {"command": f"{root}/versions/{ID_A}/bin/lean-beam-mcp"}}}
    (cfg / ".claude.json").write_text(json.dumps(doc))
    idx = index(root, env_for(home, CLAUDE_CONFIG_DIR=str(cfg)))
    assert clients(idx, ID_A) == [("claude-code", "beam")]


def test_opencode_json_and_jsonc(home: Path, root: Path) -> None:
    cfg = home / ".config" / "opencode"
    cfg.mkdir(parents=True)
    (cfg / "opencode.json").write_text(
        json.dumps(
            {
                "mcp": {
                    "beam": {
                        "type": "local",
                        "command": [f"{root}/versions/{ID_A}/bin/lean-beam-mcp"],
                    }
                }
            }
        )
    )
    (cfg / "opencode.jsonc").write_text(
        "{\n // comment with a path " + f"{root}/versions/{ID_A}\n"
        '  "mcp": { "b": { "type": "local", "command": ["x"], /* inline */\n'
        f'  "environment": {{ "P": "{root}/versions/{ID_B}/bin", }}, }},\n}},\n}}\n'
    )
    idx = index(root, env_for(home))
    assert clients(idx, ID_A) == [("opencode", "beam")]  # comments do not count
    assert clients(idx, ID_B) == [("opencode", "b")]


def test_vibe_list_of_servers(home: Path, root: Path, tmp_path: Path) -> None:
    vibe = tmp_path / "vibe"
    vibe.mkdir()
    (vibe / "config.toml").write_text(
        '[[mcp_servers]]\nname = "beam"\ntransport = "stdio"\n'
        f'command = "{root}/versions/{ID_B}/bin/lean-beam-mcp"\nargs = []\n'
    )
    idx = index(root, env_for(home, VIBE_HOME=str(vibe)))
    assert clients(idx, ID_B) == [("vibe", "beam")]


def test_unparsable_config_blocks_exactly_the_ids_in_its_text(home: Path, root: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[mcp_servers.beam\ncommand = "{root}/versions/{ID_A}/bin/lean-beam-mcp"\n'
    )
    idx = index(root, env_for(home))
    (ref,) = idx.referenced_by(ID_A)
    assert ref.client == "codex" and ref.server_name is None and ref.error
    assert idx.referenced_by(ID_B) == []
    assert len(idx.registrations.problems) == 1


def test_wrong_shape_fails_closed_too(home: Path, root: Path) -> None:
    (home / ".claude.json").write_text(json.dumps({"mcpServers": f"{root}/versions/{ID_B}"}))
    idx = index(root, env_for(home))
    assert [r.client for r in idx.referenced_by(ID_B)] == ["claude-code"]
    assert idx.referenced_by(ID_A) == []


def test_unreadable_config_blocks_every_runtime(home: Path, root: Path) -> None:
    (home / ".claude.json").mkdir()  # exists but cannot be read as a file
    idx = index(root, env_for(home))
    assert idx.referenced_by(ID_A) and idx.referenced_by(ID_B)


def test_symlinked_path_into_a_runtime_counts(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "mylink"
    link.symlink_to(root / "versions" / ID_A)
    assert referenced_ids([f"{link}/bin/lean-beam-mcp"], root) == {ID_A}
    assert referenced_ids([f"{root}/bin/lean-beam-mcp", "lean-beam-mcp"], root) == set()
