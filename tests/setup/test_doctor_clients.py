"""`lean-beam doctor --client X` speaks as X: X's own `initialize` through the stored command, in
the bare environment clients give servers, and X's trust or approval gates with their fixes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from beam_mcp.tools.catalog import NAMES
from tests.setup.conftest import Beam

# A stand-in for a server of an older lean-beam: whatever the client proposes, it answers with
# one fixed revision; it writes every line it reads (and its environment) to a log.
OLD_SERVER = """#!{python}
import json, os, sys
log = open({log!r}, "a")
log.write(json.dumps({{"env": sorted(os.environ), "cwd": os.getcwd()}}) + "\\n")
for line in sys.stdin:
    log.write(line); log.flush()
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {{"protocolVersion": {answer!r}, "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": "old", "version": "0"}}}}
    elif msg["method"] == "tools/list":
        result = {{"tools": [{{"name": "t", "inputSchema": {{"type": "object"}}}}]}}
    else:
        print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"],
                          "error": {{"code": -32601, "message": "no"}}}}), flush=True)
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": result}}), flush=True)
"""


def old_server(directory: Path, answer: str = "2025-11-25") -> tuple[Path, Path]:
    """A fake `lean-beam-mcp` (the name doctor looks for) and the log it writes."""
    directory.mkdir(parents=True, exist_ok=True)
    script, log = directory / "lean-beam-mcp", directory / "lines.jsonl"
    script.write_text(OLD_SERVER.format(python=sys.executable, log=str(log), answer=answer))
    script.chmod(0o755)
    return script, log


def register(path: Path, container: str, command: Path, **fields: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"command": str(command), "args": [], "env": {"LEAN_BEAM_MANAGED": "1"}, **fields}
    path.write_text(json.dumps({container: {"lean-beam": entry}}))


def doctor(beam: Beam, client: str, cwd: Path | None = None, **env: str) -> tuple[int, Any]:
    done = beam.beam("doctor", "--json", "--client", client, cwd=cwd, **env)
    assert done.stdout, done.stderr
    return done.code, json.loads(done.stdout)


def rows(report: dict[str, Any], section: str) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["section"] == section]


def sent(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()][1:]


def test_gemini_fails_against_a_server_answering_a_revision_gemini_rejects(
    beam: Beam, tmp_path: Path
) -> None:
    script, log = old_server(tmp_path / "old")
    register(beam.config("gemini"), "mcpServers", script)
    code, report = doctor(beam, "gemini")
    (trip,) = rows(report, "mcp round trip")
    assert code == 1 and trip["status"] == "fail", report
    assert "2025-11-25" in trip["detail"] and "Gemini CLI" in trip["detail"]
    assert "drops the connection" in trip["detail"]
    assert "lean-beam install" in trip["fix"]
    init = sent(log)[0]
    assert init["method"] == "initialize"
    assert init["params"]["protocolVersion"] == "2025-06-18"
    assert init["params"]["clientInfo"]["name"] == "gemini-cli-mcp-client"
    assert init["params"]["capabilities"] == {"roots": {"listChanged": True}}


def test_gemini_passes_against_ours(beam: Beam) -> None:
    beam.setup_json("gemini", "--yes")
    code, report = doctor(beam, "gemini")
    (trip,) = rows(report, "mcp round trip")
    assert code == 0 and trip["status"] == "ok", report
    assert "initialize (2025-06-18)" in trip["detail"]
    assert f"listed {len(NAMES)} tools" in trip["detail"]


def test_a_client_that_accepts_that_revision_passes_the_same_server(
    beam: Beam, tmp_path: Path
) -> None:
    script, log = old_server(tmp_path / "old")
    register(beam.config("opencode"), "mcp", script, type="local", enabled=True)
    beam.config("opencode").write_text(
        json.dumps(
            {
                "mcp": {
                    "lean-beam": {
                        "type": "local",
                        "command": [str(script)],
                        "enabled": True,
                        "environment": {"LEAN_BEAM_MANAGED": "1"},
                    }
                }
            }
        )
    )
    code, report = doctor(beam, "opencode", FOO="not passed on")
    (trip,) = rows(report, "mcp round trip")
    assert code == 0 and trip["status"] == "ok", report
    first = json.loads(log.read_text().splitlines()[0])
    # only what clients pass, plus the entry's own environment
    assert set(first["env"]) <= {"HOME", "PATH", "USER", "SHELL", "TERM", "LOGNAME"} | {
        "LEAN_BEAM_MANAGED",
        "LC_CTYPE",
    }
    init = sent(log)[0]["params"]
    assert init["protocolVersion"] == "2025-11-25" and init["clientInfo"]["name"] == "opencode"


@pytest.mark.parametrize(
    ("client", "how"),
    [
        ("claude-code", "server/discover (2026-07-28)"),
        ("codex", "initialize (2025-06-18)"),
        ("opencode", "initialize (2025-11-25)"),
        ("cursor", "initialize (2025-06-18)"),
        ("vscode", "initialize (2025-06-18)"),
        ("vibe", "initialize (2025-06-18)"),
    ],
)
def test_every_client_passes_against_ours(beam: Beam, client: str, how: str) -> None:
    beam.setup_json(client, "--yes")
    code, report = doctor(beam, client)
    (trip,) = rows(report, "mcp round trip")
    assert code == 0 and trip["status"] == "ok", report
    assert how in trip["detail"], trip


def test_claude_code_falls_back_to_initialize_when_discovery_fails(
    beam: Beam, tmp_path: Path
) -> None:
    script, log = old_server(tmp_path / "old")
    register(beam.config("claude-code"), "mcpServers", script, type="stdio")
    code, report = doctor(beam, "claude-code")
    (trip,) = rows(report, "mcp round trip")
    assert code == 0 and "initialize (2025-11-25)" in trip["detail"], report
    methods = [m.get("method") for m in sent(log)]
    assert methods[:2] == ["server/discover", "initialize"]
    discover = sent(log)[0]["params"]["_meta"]
    assert discover["io.modelcontextprotocol/clientInfo"]["name"] == "claude-code"


def test_a_project_server_starts_in_its_project(beam: Beam, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    script, log = old_server(tmp_path / "old", answer="2025-06-18")
    register(project / ".gemini" / "settings.json", "mcpServers", script)
    beam.root.joinpath("state", "setup").mkdir(parents=True, exist_ok=True)
    beam.root.joinpath("state", "setup", "registrations.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "registrations": [
                    {"client": "gemini", "file": str(project / ".gemini" / "settings.json")}
                ],
            }
        )
    )
    code, report = doctor(beam, "gemini", cwd=beam.home)
    assert code == 0, report
    assert [c["status"] for c in rows(report, "mcp round trip")] == ["ok"], report
    assert json.loads(log.read_text().splitlines()[0])["cwd"] == str(project)


# ---- trust and approval gates -------------------------------------------------------------


def gate(report: dict[str, Any]) -> list[dict[str, Any]]:
    return rows(report, "client trust")


def project_dir(tmp_path: Path) -> Path:
    path = tmp_path / "proj"  # not a Lean project: doctor's toolchain checks stay quiet
    path.mkdir()
    return path


def test_gemini_untrusted_folder_warns_with_the_fix(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.setup_json("gemini", "--yes")
    code, report = doctor(beam, "gemini", cwd=project)
    (check,) = gate(report)
    assert code == 0 and check["status"] == "warn", report
    trusted = beam.home / ".gemini" / "trustedFolders.json"
    assert f'"{project}": "TRUST_FOLDER"' in check["fix"] and str(trusted) in check["fix"]
    trusted.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    (check,) = gate(doctor(beam, "gemini", cwd=project)[1])
    assert check["status"] == "ok", check
    # the longest rule wins, and a parent's TRUST_PARENT rule reaches its siblings
    trusted.write_text(
        json.dumps({str(tmp_path): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}, indent=2)
    )
    (check,) = gate(doctor(beam, "gemini", cwd=project)[1])
    assert check["status"] == "warn" and "DO_NOT_TRUST" in check["detail"], check
    trusted.write_text(json.dumps({str(project / "sibling"): "TRUST_PARENT"}))
    assert gate(doctor(beam, "gemini", cwd=project)[1])[0]["status"] == "ok"
    trusted.unlink()
    report = doctor(beam, "gemini", cwd=project, GEMINI_CLI_TRUST_WORKSPACE="true")[1]
    assert gate(report)[0]["status"] == "ok"


def test_gemini_folder_trust_off_needs_nothing(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.config("gemini").parent.mkdir(parents=True)
    beam.config("gemini").write_text('{"security": {"folderTrust": {"enabled": false}}}\n')
    beam.setup_json("gemini", "--yes")
    (check,) = gate(doctor(beam, "gemini", cwd=project)[1])
    assert check["status"] == "ok" and "folder trust is off" in check["detail"], check


def test_codex_untrusted_project_warns_with_the_fix(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.setup_json("codex", "--scope", "project", "--project", str(project), "--yes")
    code, report = doctor(beam, "codex", cwd=project)
    assert code == 0, report
    (check,) = gate(report)
    assert check["status"] == "warn", report
    assert f'[projects."{project}"]' in check["fix"] and 'trust_level = "trusted"' in check["fix"]
    config = beam.home / ".codex" / "config.toml"
    assert str(config) in check["fix"]
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    (check,) = gate(doctor(beam, "codex", cwd=project)[1])
    assert check["status"] == "ok", check
    # inside a git repository Codex keys its trust by the repository's root
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    inner = repo / "lean"
    inner.mkdir()
    beam.setup_json("codex", "--scope", "project", "--project", str(inner), "--yes")
    report = doctor(beam, "codex", cwd=inner)[1]
    (check,) = [c for c in gate(report) if str(inner) in c["name"]]
    assert check["status"] == "warn" and f'[projects."{repo}"]' in check["fix"], check


def test_claude_code_project_server_needs_approval(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.setup_json("claude-code", "--scope", "project", "--project", str(project), "--yes")
    code, report = doctor(beam, "claude-code", cwd=project)
    assert code == 0, report
    (check,) = gate(report)
    assert check["status"] == "warn" and "pending approval" in check["detail"], report
    settings = beam.home / ".claude" / "settings.json"
    assert str(settings) in check["fix"] and '"enabledMcpjsonServers"' in check["fix"]
    # approved in the project's entry of ~/.claude.json once its folder is trusted
    claude_json = beam.home / ".claude.json"
    state = {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["lean-beam"]}
    claude_json.write_text(json.dumps({"projects": {str(project): state}}))
    assert gate(doctor(beam, "claude-code", cwd=project)[1])[0]["status"] == "ok"
    # ... but not without that trust
    state = {"enabledMcpjsonServers": ["lean-beam"]}
    claude_json.write_text(json.dumps({"projects": {str(project): state}}))
    assert gate(doctor(beam, "claude-code", cwd=project)[1])[0]["status"] == "warn"
    # approved for every project in the user's settings
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledMcpjsonServers": ["lean-beam"]}))
    assert gate(doctor(beam, "claude-code", cwd=project)[1])[0]["status"] == "ok"
    # rejected in the project wins
    claude_json.write_text(
        json.dumps({"projects": {str(project): {"disabledMcpjsonServers": ["lean-beam"]}}})
    )
    (check,) = gate(doctor(beam, "claude-code", cwd=project)[1])
    assert check["status"] == "warn" and "rejected" in check["detail"], check
    assert "disabledMcpjsonServers" in check["fix"]


def test_claude_code_user_server_disabled_for_this_project(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.setup_json("claude-code", "--yes")
    (check,) = gate(doctor(beam, "claude-code", cwd=project)[1])
    assert check["status"] == "ok", check
    claude_json = beam.home / ".claude.json"
    body = json.loads(claude_json.read_text())
    body["projects"] = {str(project): {"disabledMcpServers": ["lean-beam"]}}
    claude_json.write_text(json.dumps(body))
    (check,) = gate(doctor(beam, "claude-code", cwd=project)[1])
    assert check["status"] == "warn" and "disabled for this project" in check["detail"], check
    assert "/mcp" in check["fix"] and "disabledMcpServers" in check["fix"]


def test_no_gates_without_client(beam: Beam, tmp_path: Path) -> None:
    project = project_dir(tmp_path)
    beam.setup_json("gemini", "--yes")
    done = beam.beam("doctor", "--json", cwd=project)
    assert not rows(json.loads(done.stdout), "client trust")
