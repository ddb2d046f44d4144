"""What setup's neighbours see: references in project files, honest `active`, prune's words,
`doctor --client`, `uninstall` (real installs, real processes, real files under a temp HOME)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from beam_mcp.tools.catalog import NAMES
from tests.runtime.conftest import LeaseHolder
from tests.runtime.trees import clone_runtime
from tests.setup.conftest import Beam
from tests.support.toolchain import install_fake_elan


def old_runtime(beam: Beam, variant: str, year: int = 2020) -> str:
    return clone_runtime(
        beam.root, beam.runtime_id, variant=variant, created_at=f"{year}-01-01T00:00:00Z"
    )


def listing(beam: Beam) -> dict[str, dict[str, Any]]:
    done = beam.beam("runtime", "list", "--json")
    assert done.code == 0, done.stderr
    return {r["id"]: r for r in done.json()["runtimes"]}


def pinned(beam: Beam, runtime_id: str) -> str:
    return f"{beam.root}/versions/{runtime_id}/bin/lean-beam-mcp"


def test_project_registrations_protect_their_runtimes(beam: Beam, tmp_path: Path) -> None:
    claude_project, codex_project, recorded = (tmp_path / n for n in ("cp", "xp", "rp"))
    a, b, c, d = (old_runtime(beam, v) for v in "abcd")
    # what `claude mcp add --scope project` and Codex's per-project config look like
    claude_project.mkdir()
    (claude_project / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"lean": {"type": "stdio", "command": pinned(beam, a), "args": []}}}
        )
    )
    beam.config("claude-code").write_text(
        json.dumps(
            {
                "projects": {
                    str(claude_project): {"mcpServers": {"local": {"command": pinned(beam, b)}}}
                }
            }
        )
    )
    (codex_project / ".codex").mkdir(parents=True)
    (codex_project / ".codex" / "config.toml").write_text(
        f'[mcp_servers.lean]\ncommand = "{pinned(beam, c)}"\n'
    )
    beam.config("codex").parent.mkdir()
    beam.config("codex").write_text(f'[projects."{codex_project}"]\ntrust_level = "trusted"\n')
    # a project file only setup knows about (recorded under <root>/state/setup/)
    recorded.mkdir()
    beam.setup_json("cursor", "--scope", "project", "--project", str(recorded), "--yes")
    mcp = recorded / ".cursor" / "mcp.json"
    mcp.write_text(mcp.read_text().replace(beam.wrapper, pinned(beam, d)))
    runtimes = listing(beam)
    assert runtimes[a]["referenced_by"][0]["config"] == str(claude_project / ".mcp.json")
    assert runtimes[b]["referenced_by"][0]["server_name"] == f"local (project {claude_project})"
    assert runtimes[c]["referenced_by"][0]["config"] == str(codex_project / ".codex/config.toml")
    assert runtimes[d]["referenced_by"][0]["config"] == str(mcp)
    done = beam.beam("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["removed"] == []
    assert {k["id"] for k in body["kept"]} == {beam.runtime_id, a, b, c, d}


def test_active_counts_other_processes_only(beam: Beam) -> None:
    entry = listing(beam)[beam.runtime_id]
    assert entry["active"] is False and entry["active_pids"] == []  # the listing itself
    holder = LeaseHolder(beam.root, beam.runtime_id)
    try:
        assert holder.held
        entry = listing(beam)[beam.runtime_id]
        assert entry["active"] is True
        (pid,) = entry["active_pids"]
        assert pid["pid"] == holder.proc.pid and "hold_lease" in pid["command"]
        text = beam.beam("runtime", "list").stdout
        assert f"active (pid {holder.proc.pid})" in text
    finally:
        holder.stop()
    assert listing(beam)[beam.runtime_id]["active"] is False


def test_prune_says_why_and_repeats_its_flags(beam: Beam) -> None:
    old = [old_runtime(beam, v, 2010 + i) for i, v in enumerate("abc")]
    beam.config("codex").parent.mkdir()
    beam.config("codex").write_text(f'[mcp_servers.pin]\ncommand = "{pinned(beam, old[0])}"\n')
    holder = LeaseHolder(beam.root, old[1])
    try:
        text = beam.beam("runtime", "prune").stdout
        assert f"keep: {beam.runtime_id} (current)" in text
        assert f"keep: {old[0]} (referenced by codex:pin in {beam.config('codex')})" in text
        assert f"keep: {old[1]} (active (pid {holder.proc.pid}))" in text
        assert f"keep: {old[2]} (among the newest 2 unused)" in text
        assert "--keep-latest 0 --yes` removes them too" in text
        zero = beam.beam("runtime", "prune", "--keep-latest", "0", "--lock-timeout", "5").stdout
        assert f"would remove: {old[2]}" in zero
        assert "run `lean-beam runtime prune --keep-latest 0 --lock-timeout 5.0 --yes`" in zero
    finally:
        holder.stop()


def doctor(beam: Beam, *args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    done = beam.beam("doctor", "--json", *args, cwd=cwd)
    assert done.stdout, done.stderr
    return done.code, json.loads(done.stdout)


def checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def test_doctor_client_runs_the_stored_command(beam: Beam) -> None:
    beam.setup_json("codex", "claude-code", "--yes")
    code, report = doctor(beam, "--client", "codex")
    found = checks(report)
    assert code == 0, report
    assert found["codex:lean-beam"]["status"] == "ok"
    assert f"listed {len(NAMES)} tools" in found["launch codex:lean-beam"]["detail"]
    assert "claude-code:lean-beam" not in found and "self-check" not in found
    # a registration whose command cannot start, exactly as the client would see it
    path = beam.config("claude-code")
    path.write_text(path.read_text().replace(beam.wrapper, "/nonexistent/lean-beam-mcp"))
    code, report = doctor(beam, "--client", "claude-code")
    rows = [c for c in report["checks"] if c["section"] == "mcp round trip"]
    assert code == 1 and rows[0]["status"] == "fail"
    assert "cannot start /nonexistent/lean-beam-mcp" in rows[0]["detail"]
    code, report = doctor(beam, "--client", "gemini")
    assert code == 1 and checks(report)["gemini"]["fix"] == "lean-beam setup gemini --yes"


def test_doctor_says_everything_works_only_with_lean(beam: Beam, tmp_path: Path) -> None:
    beam.setup_json("codex", "--yes")
    code, report = doctor(beam)
    assert code == 0 and report["lean_found"] is False
    assert "everything works" not in report["verdict"]
    assert "install elan" in report["verdict"] and "elan-init.sh" in report["verdict"]
    install_fake_elan(beam.home / ".elan")
    code, report = doctor(beam)
    assert code == 0 and report["verdict"] == "everything works"


def test_uninstall_refuses_while_a_runtime_runs_then_removes_everything(beam: Beam) -> None:
    beam.setup_json("--all", "--yes")
    foreign = beam.home / ".claude" / "skills" / "other" / "SKILL.md"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("not ours\n")
    holder = LeaseHolder(beam.root, beam.runtime_id)
    try:
        done = beam.beam("uninstall", "--yes", "--json")
        error = done.error()
        assert done.code == 1 and error["category"] == "runtimeActive"
        assert f"pid {holder.proc.pid}" in error["message"]
        assert beam.config("codex").exists() and beam.root.is_dir()
    finally:
        holder.stop()
    plan = beam.beam("uninstall")
    assert plan.code == 0 and "would remove" in plan.stdout and beam.root.is_dir()
    links = beam.home / ".local" / "bin"
    assert (links / "lean-beam").is_symlink()
    done = beam.beam("uninstall", "--yes", "--json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["root"] == "removed" and not beam.root.exists()
    assert {c["action"] for c in body["changes"]} == {"removed"}
    assert sorted(body["links"]) == sorted(
        str(links / n) for n in ("lean-beam", "lean-beam-mcp", "beam-cli")
    )
    assert not any(os.path.lexists(links / n) for n in ("lean-beam", "lean-beam-mcp"))
    assert not any(skill.exists() for skill in beam.skills()) and foreign.exists()
    assert not beam.config("cursor").exists()  # setup created it for our entry alone


def test_uninstall_keep_root(beam: Beam) -> None:
    beam.setup_json("codex", "--yes")
    done = beam.beam("uninstall", "--yes", "--keep-root", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["root"] == "kept" and (beam.root / "versions" / beam.runtime_id).is_dir()
    assert not beam.config("codex").exists()
