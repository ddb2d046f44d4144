"""Projects the MCP server has served are known to `runtime list`, `prune` and `doctor`: a
runtime pinned in the project-scoped file of a project no client lists survives prune, which
names the file (real install, the installed `lean-beam-mcp` over real pipes, the fake Lean)."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.broker.fake import FAKE_CMD, FAST_FAKE
from tests.mcp.helpers import Server, call, structured
from tests.runtime.trees import clone_runtime
from tests.setup.conftest import Beam
from tests.support.projects import lean_project


def installed_server(beam: Beam) -> Server:
    """`<root>/bin/lean-beam-mcp` as a client starts it, with the fake Lean."""
    return Server(
        "--lean-cmd",
        FAKE_CMD,
        command=[beam.wrapper],
        env=beam.env(**FAST_FAKE),
        cwd=str(beam.home),
    )


@pytest.fixture
def served(beam: Beam) -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.kill()


def record(beam: Beam) -> Path:
    return beam.root / "state" / "projects.json"


def served_roots(beam: Beam) -> list[str]:
    try:
        body = json.loads(record(beam).read_text())
    except FileNotFoundError:
        return []
    return [row["root"] for row in body["projects"]]


def until(condition: Any, what: str, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)
    return value


def symbols(server: Server, rid: int, project: Path) -> dict[str, Any]:
    args = {"workspace": {"root": str(project)}, "path": "Main.lean"}
    reply = server.ask(call(rid, "lean_document_symbols", args))
    assert reply["result"]["isError"] is False, reply
    return structured(reply)


def test_a_runtime_pinned_by_a_served_project_survives_prune(
    beam: Beam, served: list[Server], tmp_path: Path
) -> None:
    old = clone_runtime(beam.root, beam.runtime_id, variant="a", created_at="2020-01-01T00:00:00Z")
    project = lean_project(tmp_path / "proj", {"Main.lean": "def answerA : Nat := 42\n"})
    pinned = f"{beam.root}/versions/{old}/bin/lean-beam-mcp"
    mcp = project / ".mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"lean": {"command": pinned, "args": []}}}))
    plan = beam.beam("runtime", "prune", "--keep-latest", "0", "--json")
    assert plan.json()["planned"] == [old]  # nothing knows the project yet
    server = installed_server(beam)
    served.append(server)
    symbols(server, 1, project)
    until(lambda: served_roots(beam) == [str(project)], "the served project to be recorded")
    body = json.loads(record(beam).read_text())
    assert body["schema"] == 1 and body["projects"][0]["last_used"].endswith("Z")
    done = beam.beam("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["removed"] == []
    (kept,) = [k for k in done.json()["kept"] if k["id"] == old]
    assert kept["reasons"] == [f"referenced by claude-code:lean in {mcp}"], kept
    text = beam.beam("runtime", "prune", "--keep-latest", "0").stdout
    assert f"keep: {old} (referenced by claude-code:lean in {mcp})" in text
    listed = beam.beam("runtime", "list", "--json").json()["runtimes"]
    (row,) = [r for r in listed if r["id"] == old]
    assert row["referenced_by"][0]["config"] == str(mcp)
    doctor = beam.beam("doctor", "--json")
    names = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert "pinned to runtime" in names["claude-code:lean"]["detail"], names
    mcp.unlink()
    done = beam.beam("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    assert done.json()["removed"] == [old]  # the record protects what the files pin, no more


def test_doctor_reads_the_project_it_runs_in(beam: Beam, tmp_path: Path) -> None:
    old = clone_runtime(beam.root, beam.runtime_id, variant="b", created_at="2020-01-01T00:00:00Z")
    project = lean_project(tmp_path / "here", {"Main.lean": "def a : Nat := 1\n"})
    (project / ".codex").mkdir()
    pinned = f"{beam.root}/versions/{old}/bin/lean-beam-mcp"
    (project / ".codex" / "config.toml").write_text(f'[mcp_servers.pin]\ncommand = "{pinned}"\n')
    elsewhere = json.loads(beam.beam("doctor", "--json").stdout)
    assert "codex:pin" not in {c["name"] for c in elsewhere["checks"]}
    inside = json.loads(beam.beam("doctor", "--json", cwd=project / ".codex").stdout)
    rows = {c["name"]: c for c in inside["checks"]}
    assert rows["codex:pin"]["status"] == "warn", rows
    assert f"pinned to runtime {old}" in rows["codex:pin"]["detail"], rows


def test_recording_never_holds_up_a_call(beam: Beam, served: list[Server], tmp_path: Path) -> None:
    """Another writer holds the record's lock: calls are answered meanwhile, and the project is
    recorded once the lock is free again."""
    project = lean_project(tmp_path / "proj", {"Main.lean": "def answerA : Nat := 42\n"})
    lock = os.open(beam.root / "state" / "projects.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        server = installed_server(beam)
        served.append(server)
        for rid in range(1, 4):
            symbols(server, rid, project)
        assert served_roots(beam) == []
    finally:
        os.close(lock)
    deadline = time.monotonic() + 90
    rid = 10
    while served_roots(beam) != [str(project)]:
        assert time.monotonic() < deadline, "never recorded after the lock was freed"
        rid += 1
        symbols(server, rid, project)  # a later call hands the root over again
        time.sleep(0.2)


def test_the_record_keeps_the_500_most_recent(tmp_path: Path) -> None:
    from beam_runtime import served as record_module

    root = tmp_path / "root"
    (root / "state").mkdir(parents=True)
    first = {f"/p/{i:04d}": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z" for i in range(300)}
    later = {
        f"/p/{i:04d}": f"2026-01-02T00:{i // 60 % 60:02d}:{i % 60:02d}Z" for i in range(250, 600)
    }
    assert record_module.write(root, first) and record_module.write(root, later)
    rows = json.loads((root / "state" / "projects.json").read_text())["projects"]
    assert len(rows) == 500
    assert rows[0] == {"root": "/p/0599", "last_used": "2026-01-02T00:09:59Z"}
    assert {r["root"] for r in rows} == {f"/p/{i:04d}" for i in range(100, 600)}
    assert [p.name for p in (root / "state").iterdir() if p.name.startswith(".")] == []
    assert record_module.load(root)[:2] == ["/p/0599", "/p/0598"]
