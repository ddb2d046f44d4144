"""Client configs and listed projects on a mount whose reads or stats never return (NFS, FUSE):
`runtime list`, `prune`, `doctor`, `setup` and `remove` finish within their read bound with a
clear "could not read X within N s", and never write anything they could not read first."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.runtime.trees import clone_runtime
from tests.setup.conftest import Beam, snapshot
from tests.support.slowfs import slow_mount

BOUND = {"BEAM_READ_TIMEOUT_S": "2"}


def _timed(beam: Beam, *args: str, **extra: str) -> tuple[float, object]:
    start = time.monotonic()
    done = beam.beam(*args, **{**BOUND, **extra})
    return time.monotonic() - start, done


def test_a_listed_project_on_a_hung_mount_stalls_no_command(beam: Beam, tmp_path: Path) -> None:
    # In separate parent directories: while a lookup hangs in a FUSE directory, the kernel lets
    # no other lookup into that directory, so a sibling of `stuck` would not answer either.
    source = tmp_path / "source"
    (source / "a" / "stuck").mkdir(parents=True)
    (source / "b" / "slow").mkdir(parents=True)
    (source / "b" / "slow" / ".mcp.json").write_text('{"mcpServers": {}}')
    old = clone_runtime(beam.root, beam.runtime_id, variant="a", created_at="2020-01-01T00:00:00Z")
    with slow_mount(
        source, tmp_path / "mnt", hang_stat=("a/stuck",), hang_read=("b/slow/.mcp.json",)
    ) as mnt:
        projects = {str(mnt / "a" / "stuck"): {}, str(mnt / "b" / "slow"): {}}
        beam.config("claude-code").write_text(json.dumps({"projects": projects}))
        stuck, slow = mnt / "a" / "stuck", mnt / "b" / "slow" / ".mcp.json"
        seconds, listed = _timed(beam, "runtime", "list", "--json")
        assert listed.code == 0, listed.stderr  # type: ignore[attr-defined]
        rows = {r["id"]: r for r in listed.json()["runtimes"]}  # type: ignore[attr-defined]
        errors = {ref["error"] for ref in rows[old]["referenced_by"]}
        assert f"could not read {slow} within 2 s" in errors, errors
        assert f"could not read {stuck} within 2 s" in errors, errors  # the project itself
        seconds, pruned = _timed(beam, "runtime", "prune", "--keep-latest", "0", "--yes", "--json")
        assert pruned.code == 0, pruned.stderr  # type: ignore[attr-defined]
        body = pruned.json()  # type: ignore[attr-defined]
        assert body["removed"] == [], body  # fail closed: nothing it could not read is pruned
        (kept,) = [k for k in body["kept"] if k["id"] == old]
        assert any(f"could not read {slow} within 2 s" in r for r in kept["reasons"]), kept
        seconds, doctor = _timed(beam, "doctor", "--json")
        assert doctor.stdout, doctor.stderr  # type: ignore[attr-defined]
        details = [c["detail"] for c in json.loads(doctor.stdout)["checks"]]  # type: ignore[attr-defined]
        assert any(f"could not read {slow} within 2 s" in d for d in details), details
        assert seconds < 60, seconds


def test_setup_and_remove_with_a_client_config_on_a_hung_mount(beam: Beam, tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "claude").mkdir(parents=True)
    (source / "claude" / ".claude.json").write_text('{"numStartups": 1}\n')
    beam.setup_json("codex", "--yes")
    with slow_mount(source, tmp_path / "mnt", hang_read=("claude/.claude.json",)) as mnt:
        config = mnt / "claude" / ".claude.json"
        extra = {"CLAUDE_CONFIG_DIR": str(mnt / "claude")}
        before = snapshot(beam.home)
        record = (beam.root / "state" / "setup" / "registrations.json").read_bytes()
        for args in (("setup", "--all"), ("remove", "--all"), ("uninstall",)):
            seconds, done = _timed(beam, *args, "--yes", "--json", **extra)
            error = done.error()  # type: ignore[attr-defined]
            assert done.code == 1 and error["category"] == "configUnreadable", (args, error)  # type: ignore[attr-defined]
            assert f"could not read {config} within 2 s" in error["message"], error
            assert seconds < 60, (args, seconds)
            assert snapshot(beam.home) == before
            assert (beam.root / "state" / "setup" / "registrations.json").read_bytes() == record
        seconds, done = _timed(beam, "setup", "codex", "--yes", "--json", **extra)
        assert done.code == 0, done.stderr  # type: ignore[attr-defined]  # other clients still work
