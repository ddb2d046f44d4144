"""The real client CLIs pinned in `tests/clients/package.json` (`.ci/run` installs them) list
lean-beam after `lean-beam setup --yes`, each with its own listing command, and no longer after
`lean-beam remove`; their trust and approval gates behave as `doctor --client` says.

The CLIs run in parallel, each call bounded, in a temporary HOME with telemetry, updates and
model downloads off. Missing CLIs skip these tests locally and fail them under CI=true.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.clients.conftest import Beam
from tests.support.clients import (
    COMMANDS,
    Ran,
    cli_env,
    pins,
    quiet_gemini,
    run_cli,
)

SETUP_NAMES = {
    "claude": "claude-code",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
}


def listings(clis: dict[str, str], env: dict[str, str], cwd: Path) -> dict[str, Ran]:
    """Each CLI's own server listing, all four at once."""
    argv = {
        "claude": [clis["claude"], "mcp", "list"],
        "codex": [clis["codex"], "mcp", "list", "--json"],
        "gemini": [clis["gemini"], "mcp", "list"],
        "opencode": [clis["opencode"], "mcp", "list"],
    }
    with ThreadPoolExecutor(len(argv)) as pool:
        futures = {name: pool.submit(run_cli, command, env, cwd) for name, command in argv.items()}
        return {name: future.result() for name, future in futures.items()}


def codex_servers(ran: Ran) -> dict[str, Any]:
    start = ran.out.index("[")
    return {s["name"]: s for s in json.loads(ran.out[start:])}


def project(beam: Beam) -> Path:
    path = beam.home / "proj"
    path.mkdir()
    return path


def trust_gemini(beam: Beam, folder: Path) -> None:
    (beam.home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(folder): "TRUST_FOLDER"})
    )


def test_every_client_lists_lean_beam_after_setup_and_not_after_remove(
    clis: dict[str, str], beam: Beam
) -> None:
    env = cli_env(beam.home, *clis.values())
    here = project(beam)
    quiet_gemini(beam.home)
    trust_gemini(beam, here)
    body = beam.setup_json(*SETUP_NAMES.values(), "--yes")
    assert {c["client"] for c in body["changes"]} == set(SETUP_NAMES.values())
    listed = listings(clis, env, here)
    for name, ran in listed.items():
        print(f"--- {name} mcp list\n{ran.out}")
    assert "✔ Connected" in listed["claude"].line("lean-beam:"), listed["claude"].out
    assert beam.wrapper in listed["claude"].line("lean-beam:")
    server = codex_servers(listed["codex"])["lean-beam"]
    assert server["enabled"] is True and server["transport"]["command"] == beam.wrapper
    assert (server["startup_timeout_sec"], server["tool_timeout_sec"]) == (30, 120)
    assert listed["gemini"].line("lean-beam:").endswith("- Connected"), listed["gemini"].out
    opencode = listed["opencode"].line("lean-beam")
    assert "✓ lean-beam" in opencode and opencode.endswith(" connected"), listed["opencode"].out
    removed = beam.beam("remove", *SETUP_NAMES.values(), "--yes", "--json")
    assert removed.code == 0, removed.stderr
    after = listings(clis, env, here)
    for name, ran in after.items():
        print(f"--- {name} mcp list after remove\n{ran.out}")
        assert ran.code == 0, ran.out
    assert all("lean-beam" not in ran.out for ran in after.values())


def doctor_gate(beam: Beam, client: str, cwd: Path) -> dict[str, Any]:
    done = beam.beam("doctor", "--json", "--client", client, cwd=cwd)
    report = json.loads(done.stdout)
    trips = [c for c in report["checks"] if c["section"] == "mcp round trip"]
    assert trips and all(c["status"] == "ok" for c in trips), report
    (gate,) = [c for c in report["checks"] if c["section"] == "client trust"]
    return dict(gate)


def gemini_gate(beam: Beam, gemini: str, here: Path) -> list[str]:
    env = cli_env(beam.home, gemini)
    before = run_cli([gemini, "mcp", "list"], env, here)
    assert "untrusted" in before.out and "Disabled" in before.line("lean-beam:"), before.out
    gate = doctor_gate(beam, "gemini", here)
    assert gate["status"] == "warn" and "TRUST_FOLDER" in gate["fix"], gate
    trust_gemini(beam, here)  # the edit the fix names
    after = run_cli([gemini, "mcp", "list"], env, here)
    assert after.line("lean-beam:").endswith("- Connected"), after.out
    assert doctor_gate(beam, "gemini", here)["status"] == "ok"
    return [before.out, after.out]


def codex_gate(beam: Beam, codex: str, here: Path) -> list[str]:
    env = cli_env(beam.home, codex)
    argv = [codex, "mcp", "list", "--json"]
    before = run_cli(argv, env, here)
    assert "lean-beam" not in before.out, before.out
    gate = doctor_gate(beam, "codex", here)
    assert gate["status"] == "warn" and f'[projects."{here}"]' in gate["fix"], gate
    config = beam.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    with config.open("a") as handle:
        handle.write(f'\n[projects."{here}"]\ntrust_level = "trusted"\n')
    after = run_cli(argv, env, here)
    server = codex_servers(after)["lean-beam"]
    assert server["enabled"] is True and server["startup_timeout_sec"] == 30, after.out
    assert doctor_gate(beam, "codex", here)["status"] == "ok"
    return [before.out, after.out]


def claude_gate(beam: Beam, claude: str, here: Path) -> list[str]:
    env = cli_env(beam.home, claude)
    before = run_cli([claude, "mcp", "list"], env, here)
    assert "Pending approval" in before.line("lean-beam:"), before.out
    gate = doctor_gate(beam, "claude-code", here)
    assert gate["status"] == "warn" and '"enabledMcpjsonServers"' in gate["fix"], gate
    settings = beam.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledMcpjsonServers": ["lean-beam"]}))
    after = run_cli([claude, "mcp", "list"], env, here)
    assert "✔ Connected" in after.line("lean-beam:"), after.out
    assert doctor_gate(beam, "claude-code", here)["status"] == "ok"
    return [before.out, after.out]


def test_trust_and_approval_gates_as_doctor_reports_them(clis: dict[str, str], beam: Beam) -> None:
    gemini, codex, claude = (clis[n] for n in ("gemini", "codex", "claude"))
    quiet_gemini(beam.home)
    folders = {n: beam.home / n for n in ("gemini", "codex", "claude")}
    for folder in folders.values():
        folder.mkdir()
    beam.setup_json("gemini", "--yes")
    for client, folder in (("codex", folders["codex"]), ("claude-code", folders["claude"])):
        beam.setup_json(client, "--scope", "project", "--project", str(folder), "--yes")
    flows: list[tuple[Callable[..., list[str]], str, Path]] = [
        (gemini_gate, gemini, folders["gemini"]),
        (codex_gate, codex, folders["codex"]),
        (claude_gate, claude, folders["claude"]),
    ]
    with ThreadPoolExecutor(len(flows)) as pool:
        outputs = [pool.submit(flow, beam, cli, here) for flow, cli, here in flows]
        for future in outputs:
            for out in future.result():
                print(out)


def test_the_clis_are_the_pinned_versions(clis: dict[str, str], tmp_path: Path) -> None:
    env = cli_env(tmp_path, *clis.values())
    with ThreadPoolExecutor(len(clis)) as pool:
        found = {n: pool.submit(run_cli, [c, "--version"], env, tmp_path) for n, c in clis.items()}
        versions = {name: future.result().out for name, future in found.items()}
    for name, out in versions.items():
        print(f"{name} --version: {out.strip()}")
        assert pins()[COMMANDS[name]] in out, (name, out)
