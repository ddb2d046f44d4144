"""Probes never answer from imports rebuilt since their scratch document's worker loaded them.

Lean (and the fake) load a document's imports once per worker. A scratch document outlives many
probes, so a module rebuilt in between (a ``lake build`` outside the broker, the broker's own
``lean_save``, or Lean's "should be rebuilt" notice after a dependency was saved) must make the
broker replace the scratch document's worker before the next probe.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.broker.fake import FAST_FAKE
from tests.broker.test_lake_path import lake_server
from tests.mcp.helpers import REPO, Server
from tests.speculative.helpers import Probe, fake_server

MAIN = "import A\nexample : Nat := by\n  sorry\n"
A_OLD = "def a : Nat := 1\n"
A_NEW = "def a : Nat := 1\ndef a2 : Nat := 2\n"


def _lake_build(project: Path, module: str) -> None:
    lake = REPO / "tests" / "fake_lean" / "bin" / "lake"
    env = {**os.environ, **FAST_FAKE}
    done = subprocess.run(
        [sys.executable, str(lake), "build", f"+{module}"],
        cwd=project,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _setup(project: Path) -> None:
    (project / "A.lean").write_text(A_OLD)
    (project / "Main.lean").write_text(MAIN)


def test_external_lake_build_reaches_the_next_probe(servers: list[Server], project: Path) -> None:
    _setup(project)
    _lake_build(project, "A")
    p = Probe(fake_server(servers), project)
    assert p.at(2, 2, "exact a")["success"] is True
    assert p.at(2, 2, "exact a2")["success"] is False  # not there yet
    (project / "A.lean").write_text(A_NEW)
    _lake_build(project, "A")
    fresh = p.at(2, 2, "exact a2")
    assert fresh["success"] is True, fresh
    assert "stale_imports" not in fresh


def test_lean_save_reaches_the_next_probe(servers: list[Server], project: Path) -> None:
    _setup(project)
    server = lake_server(servers)
    p = Probe(server, project)
    p.ok("lean_save", {"path": "A.lean"})
    assert p.at(2, 2, "exact a")["success"] is True
    (project / "A.lean").write_text(A_NEW)
    p.ok("lean_save", {"path": "A.lean"})
    assert p.at(2, 2, "exact a2")["success"] is True


def test_leans_stale_notice_replaces_the_worker(servers: list[Server], project: Path) -> None:
    _setup(project)
    p = Probe(fake_server(servers), project)
    p.ok("lean_sync", {"path": "A.lean"})
    assert p.at(2, 2, "exact a")["success"] is True
    (project / "A.lean").write_text(A_NEW)
    p.ok("lean_sync", {"path": "A.lean"})  # didSave: Lean marks importers out of date
    assert p.at(2, 2, "exact a2")["success"] is True


def test_imports_that_stay_stale_are_named(servers: list[Server], project: Path) -> None:
    _setup(project)
    p = Probe(fake_server(servers, FAKE_LEAN_STALE_NOTICE="1"), project)
    result = p.at(2, 2, "exact a")
    assert result["stale_imports"] is True
    assert result["stale_modules"] == ["A"]


def test_beam_stats_counts_lean_workers(servers: list[Server], project: Path) -> None:
    _setup(project)
    p = Probe(fake_server(servers), project)
    p.at(2, 2, "exact a")
    (entry,) = p.stats()["workspaces"]
    session = entry["session"]
    workers = entry["lean_workers"]
    assert workers["count"] == session["open_documents"] + session["scratch_documents"] == 2
    assert workers["rss_bytes"] > 0
