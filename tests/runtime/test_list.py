"""`lean-beam runtime list` against a real install plus runtimes derived from it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from beam_runtime.record_check import load_manifest
from tests.runtime.clienv import dev_command, run
from tests.runtime.conftest import Installed, write_codex
from tests.runtime.trees import clone_runtime
from tests.support.tracing import strace_or_skip


def test_fresh_install(installed: Installed) -> None:
    result = installed.beam("runtime", "list", "--json")
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["schema"] == 1
    assert body["install_root"] == str(installed.root)
    assert body["current"] == installed.runtime_id
    (entry,) = body["runtimes"]
    manifest = load_manifest(installed.versions() / installed.runtime_id)
    assert entry == {
        "id": installed.runtime_id,
        "version": manifest.version,
        "created_at": manifest.created_at,
        "bytes": manifest.bytes,
        "current": True,
        "active": False,  # the listing process holds this lease itself: it never counts (49)
        "active_pids": [],
        "referenced_by": [],
        "invalid": None,
    }


def test_flags_order_and_invalid_entries(installed: Installed, lease_holders) -> None:  # type: ignore[no-untyped-def]
    root, source = installed.root, installed.runtime_id
    old = clone_runtime(root, source, variant="old", created_at="2020-01-01T00:00:00Z")
    mid = clone_runtime(root, source, variant="mid", created_at="2021-01-01T00:00:00Z")
    new = clone_runtime(root, source, variant="new", created_at="2022-01-01T00:00:00Z")
    assert lease_holders(root, mid).held
    write_codex(
        installed.home,
        {
            "pinned": f"{root}/versions/{old}/bin/lean-beam-mcp",
            "stable": f"{root}/bin/lean-beam-mcp",
        },
    )
    versions = installed.versions()
    (versions / "stray-file").write_text("x")
    (versions / "no-manifest").mkdir()
    os.symlink(versions / new, versions / "0.1.0-link")

    body = installed.beam("runtime", "list", "--json").json()
    by_id = {r["id"]: r for r in body["runtimes"]}
    order = [r["id"] for r in body["runtimes"]]
    assert order[:4] == [installed.runtime_id, new, mid, old]
    assert set(order[4:]) == {"stray-file", "no-manifest", "0.1.0-link"}
    assert by_id[mid]["active"] and not by_id[new]["active"] and not by_id[old]["active"]
    assert by_id[old]["referenced_by"] == [
        {
            "client": "codex",
            "config": str(installed.home / ".codex" / "config.toml"),
            "server_name": "pinned",
        }
    ]
    assert by_id[new]["referenced_by"] == [] and not by_id[new]["current"]
    for name in ("stray-file", "no-manifest", "0.1.0-link"):
        assert by_id[name]["invalid"], name
        assert by_id[name]["version"] is None and by_id[name]["bytes"] is None

    text = installed.beam("runtime", "list")
    assert text.code == 0
    assert f"{old}" in text.stdout and "referenced by codex:pinned" in text.stdout
    assert "invalid:" in text.stdout


def test_unparsable_config_is_reported_per_runtime(installed: Installed) -> None:
    root, source = installed.root, installed.runtime_id
    other = clone_runtime(root, source, variant="o", created_at="2020-01-01T00:00:00Z")
    (installed.home / ".claude.json").write_text(f'{{"mcpServers": {{"x": "{other}"')
    by_id = {r["id"]: r for r in installed.beam("runtime", "list", "--json").json()["runtimes"]}
    (ref,) = by_id[other]["referenced_by"]
    assert ref["client"] == "claude-code" and ref["server_name"] is None and ref["error"]
    assert by_id[installed.runtime_id]["referenced_by"] == []


def test_install_root_option_from_a_development_copy(installed: Installed) -> None:
    env = installed.env(BEAM_NO_DELEGATE="1")
    result = run(
        [
            dev_command("lean-beam"),
            "runtime",
            "list",
            "--install-root",
            str(installed.root),
            "--json",
        ],
        env,
    )
    assert result.code == 0, result.stderr
    (entry,) = result.json()["runtimes"]
    assert entry["current"] and not entry["active"]  # nothing runs from the runtime now


def test_refused_root_and_usage_errors(installed: Installed) -> None:
    env = installed.env(BEAM_NO_DELEGATE="1")
    bad = run(
        [dev_command("lean-beam"), "runtime", "list", "--install-root", "relative/x", "--json"], env
    )
    assert bad.code == 1 and bad.error()["category"] == "invalidInstallRoot"
    unknown = installed.beam("runtime", "list", "--bogus")
    assert unknown.code == 2 and unknown.stdout == ""


def test_a_claude_config_of_thirty_thousand_projects_is_read_within_the_default_bound(
    installed: Installed,
) -> None:
    """A heavy Claude Code user's `~/.claude.json` (30,000 projects, each with a server of its
    own, 10 MB) is read within the default read bound: the runtime one project's server pins
    is found, so is the one a listed project's own `.mcp.json` pins, and nothing is reported
    unreadable (on a loaded machine it was: the scan took over 10 s)."""
    root = installed.root
    pinned = clone_runtime(
        root, installed.runtime_id, variant="a", created_at="2020-01-01T00:00:00Z"
    )
    local = clone_runtime(
        root, installed.runtime_id, variant="b", created_at="2020-02-01T00:00:00Z"
    )
    project = installed.home / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"b": {"command": f"{root}/versions/{local}/bin/lean-beam-mcp"}}})
    )
    server = {"command": "/bin/true", "args": ["a" * 50] * 5}
    projects: dict[str, object] = {
        f"/gone/{i}": {"mcpServers": {"x": server}} for i in range(30_000)
    }
    projects["/gone/17"] = {"mcpServers": {"y": {"command": f"{root}/versions/{pinned}/bin/x"}}}
    projects[str(project)] = {}
    (installed.home / ".claude.json").write_text(json.dumps({"projects": projects}))
    done = installed.beam("runtime", "list", "--json")
    assert done.code == 0, done.stderr
    rows = {r["id"]: r for r in done.json()["runtimes"]}
    errors = [ref for row in rows.values() for ref in row["referenced_by"] if ref.get("error")]
    assert errors == []
    assert [ref["server_name"] for ref in rows[pinned]["referenced_by"]] == ["y (project /gone/17)"]
    assert [ref["server_name"] for ref in rows[local]["referenced_by"]] == ["b"]
    assert rows[installed.runtime_id]["referenced_by"] == []


def test_listed_projects_cost_one_stat_each_and_a_repeated_command_is_resolved_once(
    installed: Installed, tmp_path: Path
) -> None:
    """With 3,000 listed projects that no longer exist, each with the same server, `runtime list`
    (all its processes, under strace) asks the file system once per project whether it is there,
    never for each client file inside it, and resolves the repeated command a few times, not once
    per entry (eight stats per project and one resolution per entry, before)."""
    strace = strace_or_skip()
    server = {"command": "/usr/bin/env", "args": ["some-mcp", "--flag"]}
    projects = {f"/gone/{i}": {"mcpServers": {"x": server}} for i in range(3000)}
    (installed.home / ".claude.json").write_text(json.dumps({"projects": projects}))
    log = tmp_path / "list.strace"
    argv = [strace, "-f", "-qq", "-e", "trace=%%stat", "-o", str(log)]
    argv += [str(installed.root / "bin" / "lean-beam"), "runtime", "list", "--json"]
    done = run(argv, installed.env(), cwd=installed.home)
    assert done.code == 0, done.stderr
    assert all(not r["referenced_by"] for r in done.json()["runtimes"]), done.stdout
    calls = log.read_text().splitlines()
    under_gone = [c for c in calls if '"/gone/' in c]
    assert 3000 <= len(under_gone) <= 3100, len(under_gone)
    assert all(re.search(r'"/gone/\d+"', c) for c in under_gone), under_gone[:5]
    command = [c for c in calls if '"/usr/bin/env"' in c]
    assert 1 <= len(command) <= 10, len(command)
