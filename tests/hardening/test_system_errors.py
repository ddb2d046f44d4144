"""Categorized errors, never tracebacks: full disks, read-only file systems and
denied paths under `lean-beam install`, `runtime list`, `runtime prune` and `doctor`.

Real file systems: small tmpfs mounts (skipped where this process may not mount), and a
subprocess run as `nobody` for EACCES (root ignores permission bits).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from beam_runtime.errors import system_error
from tests.runtime.clienv import client_env, dev_command, run
from tests.runtime.conftest import Installed

LEAN_BEAM = dev_command("lean-beam")


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], check=False, capture_output=True)


def _tmpfs(mounts: list[Path], point: Path, options: str) -> Path:
    point.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    mounts.append(point)
    return point


def _error(done: object) -> dict:
    code, stdout, stderr = done.code, done.stdout, done.stderr  # type: ignore[attr-defined]
    assert code == 1, (code, stdout, stderr)
    assert "Traceback" not in stderr, stderr
    body = json.loads(stderr)
    assert set(body) == {"error"} and body["error"]["fix"], body
    return dict(body["error"])


def _install(home: Path, root: Path, cwd: Path) -> object:
    argv = [
        LEAN_BEAM,
        "install",
        "--install-root",
        str(root),
        "--bin-dir",
        str(home / "bin"),
        "--json",
    ]
    return run(argv, client_env(home), cwd=cwd)


def test_install_onto_a_read_only_file_system(tmp_path: Path, mounts: list[Path]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ro = _tmpfs(mounts, tmp_path / "ro", "ro,size=64k")
    error = _error(_install(home, ro / "beam", tmp_path))
    assert error["category"] == "readOnlyFilesystem", error


def test_install_onto_a_full_disk_leaves_nothing(tmp_path: Path, mounts: list[Path]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    small = _tmpfs(mounts, tmp_path / "small", "size=256k")
    error = _error(_install(home, small / "beam", tmp_path))
    assert error["category"] == "diskFull", error
    staging = small / "beam" / "state" / "staging"
    assert not staging.exists() or not any(staging.iterdir())
    assert not (small / "beam" / "current").exists()


def test_install_with_no_inodes_left(tmp_path: Path, mounts: list[Path]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    few = _tmpfs(mounts, tmp_path / "few", "size=64m,nr_inodes=40")
    error = _error(_install(home, few / "beam", tmp_path))
    assert error["category"] == "diskFull", error


def _as_nobody(argv: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run a command as nobody")
    return subprocess.run(
        [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv],
        env=client_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_install_into_a_denied_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    tmp_path.chmod(0o755)
    denied = tmp_path / "denied"
    denied.mkdir(mode=0o755)  # owned by root: nobody cannot create anything in it
    done = _as_nobody(
        [
            LEAN_BEAM,
            "install",
            "--install-root",
            str(denied / "beam"),
            "--bin-dir",
            str(home / "bin"),
            "--json",
        ],
        home,
        home,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    error = json.loads(done.stderr)["error"]
    assert error["category"] == "permissionDenied", error


def test_runtime_list_of_a_denied_root(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    tmp_path.chmod(0o755)
    root = tmp_path / "beam"
    done = run(
        [
            LEAN_BEAM,
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(tmp_path / "bin"),
            "--json",
        ],
        client_env(home),
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    (root / "versions").chmod(0o700)
    listed = _as_nobody(
        [LEAN_BEAM, "runtime", "list", "--install-root", str(root), "--json"], home, home
    )
    assert "Traceback" not in listed.stderr, listed.stderr
    if listed.returncode == 1:
        assert json.loads(listed.stderr)["error"]["category"], listed.stderr
    else:
        assert listed.returncode == 0 and json.loads(listed.stdout)


def test_prune_on_a_full_disk_prints_its_final_object(tmp_path: Path, mounts: list[Path]) -> None:
    """Prune fails before it has a plan (the lock's holder record cannot be written): `--json`
    still prints the final object, with the categorized error, and nothing changes."""
    home = tmp_path / "home"
    home.mkdir()
    small = _tmpfs(mounts, tmp_path / "small", "size=64m")
    root = small / "beam"
    assert _install(home, root, tmp_path).code == 0  # type: ignore[attr-defined]
    before = sorted(os.listdir(root / "versions"))
    with open(small / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
        while True:  # unbuffered: closing has nothing left to flush onto the full disk
            filler.write(b"\0" * (1 << 20))
    env = {**client_env(home), "BEAM_INSTALL_ROOT": str(root)}
    done = run([LEAN_BEAM, "runtime", "prune", "--yes", "--json"], env, cwd=tmp_path)
    error = done.final_error()
    assert error["category"] == "diskFull" and error["details"]["errno"] == "ENOSPC", error
    final = json.loads(done.stdout)
    assert final["install_root"] == str(root) and final["planned"] == [], final
    assert sorted(os.listdir(root / "versions")) == before
    text = run([LEAN_BEAM, "runtime", "prune", "--yes"], env, cwd=tmp_path)
    assert text.code == 1 and text.stdout == "" and "No space left" in text.stderr, text


def _claude_config(home: Path) -> None:
    """A large `~/.claude.json` (10 MB, 30,000 projects): parsing it takes a lot of memory."""
    server = {"command": "/bin/true", "args": ["a" * 50] * 5}
    projects = {f"/p/{i}": {"mcpServers": {"x": server}} for i in range(30_000)}
    (home / ".claude.json").write_text(json.dumps({"projects": projects}))


def _limited(argv: list[str], env: dict[str, str], mib: int) -> subprocess.CompletedProcess[str]:
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))

    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=60, preexec_fn=limit, check=False
    )


# From tight (the command itself runs out while it starts, checks its bytecode or imports) to
# loose (only the reader process that parses the large config runs out, or nothing does).
LIMITS_MIB = [*range(12, 40, 2), *range(40, 240, 15)]
OUT_OF_MEMORY = system_error(MemoryError(), "lean-beam")


@pytest.mark.parametrize("command", [["runtime", "list", "--json"], ["runtime", "prune", "--json"]])
def test_out_of_memory_at_any_point_is_one_categorized_error(
    installed: Installed, command: list[str]
) -> None:
    """Under address-space limits from tight to loose, a command reading a large client config
    answers, naming the config it could not read for want of memory (and so protecting every
    runtime), or fails with exactly one `outOfMemory` error object: never a traceback, also not
    when reporting the error itself runs out of memory."""
    _claude_config(installed.home)
    config = installed.home / ".claude.json"
    argv = [str(installed.root / "bin" / "lean-beam"), *command]
    in_command = in_reader = 0
    for mib in LIMITS_MIB:
        done = _limited(argv, installed.env(), mib)
        assert "Traceback" not in done.stderr, (mib, done.stderr[-2000:])
        assert done.returncode in (0, 1), (mib, done.returncode, done.stderr[-500:])
        if done.returncode == 1:
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1, (mib, done.stderr)
            error = json.loads(lines[0])["error"]
            assert error["category"] == "outOfMemory", (mib, lines)
            # the line the gate makes in advance says what the command's own handler says
            assert error["fix"] == OUT_OF_MEMORY.fix, (mib, error)
            in_command += 1
            continue
        body = json.loads(done.stdout)
        said = json.dumps(body.get("runtimes", body.get("kept", [])))
        if f"cannot read {config}: out of memory" in said:
            in_reader += 1
            assert body.get("removed", []) == [], body  # fail closed
    # Both ends were reached, else the sweep proved nothing about one of them.
    assert in_command and in_reader, (in_command, in_reader)


def test_lean_commands_out_of_file_descriptors_report_an_error_not_a_traceback(
    tmp_path: Path,
) -> None:
    """`lean-beam lean sync` with too few file descriptors (EMFILE while Lean starts, inside
    the broker's task group) fails with one categorized error, never an exception group."""
    import resource
    import sys

    from tests.broker.fake import FAKE_CMD, FAST_FAKE
    from tests.mcp.helpers import minimal_env
    from tests.support.projects import lean_project

    project = lean_project(tmp_path / "proj", {"Main.lean": "def a : Nat := 1\n"})
    lean_beam = str(Path(sys.executable).with_name("lean-beam"))
    failed = []
    for limit in range(9, 16):

        def low(limit: int = limit) -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        done = subprocess.run(
            [lean_beam, "lean", "sync", "Main.lean", "--json", "--lean-cmd", FAKE_CMD],
            cwd=project,
            env=minimal_env(**FAST_FAKE),
            capture_output=True,
            text=True,
            preexec_fn=low,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert "Traceback" not in done.stderr, (limit, done.stderr[-3000:])
        assert done.returncode in (0, 1), (limit, done.returncode, done.stderr[-3000:])
        if done.returncode == 1:
            body = json.loads(done.stderr)
            assert set(body) == {"error"} and body["error"]["fix"], body
            failed.append((limit, body["error"]))
    assert failed, "no limit was low enough to fail: the test exercised nothing"
    assert any("EMFILE" in json.dumps(error) or "Too many open files" in json.dumps(error)
               for _, error in failed), failed  # fmt: skip


def test_permission_errors_of_the_server_name_what_refused(tmp_path: Path) -> None:
    """The MCP server as `nobody`: a file inside a directory it may not enter is reported as
    that directory's refusal (not as a missing file), an unreadable file by its own name, and a
    feedback bundle whose folder cannot be made names that folder, with the errno."""
    import sys
    import tempfile

    from tests.mcp.helpers import call, minimal_env

    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run the server as nobody")
    base = Path(tempfile.mkdtemp(prefix="beam-eacces-", dir="/tmp"))  # outside pytest's 0700 dir
    try:
        base.chmod(0o755)
        project = base / "proj"
        (project / "Hidden").mkdir(parents=True)
        (project / "Open").mkdir()
        for name in ("Main.lean", "Hidden/A.lean", "Open/B.lean"):
            (project / name).write_text("def a : Nat := 1\n")
        (project / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
        (project / "Hidden").chmod(0o700)  # owned by root
        (project / "Open" / "B.lean").chmod(0o600)
        home = base / "home"  # owned by root: nobody cannot make its state directory
        home.mkdir(mode=0o755)
        server = subprocess.Popen(
            [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable,
             "-m", "beam_mcp", "--lean-cmd", "/bin/false"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=minimal_env(HOME=str(home)),
            cwd=base,
        )  # fmt: skip
        assert server.stdin is not None and server.stdout is not None

        def ask(rid: int, tool: str, args: dict) -> dict:
            message = call(rid, tool, {"workspace": {"root": str(project)}, **args})
            server.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
            server.stdin.flush()  # type: ignore[union-attr]
            answer = json.loads(server.stdout.readline())  # type: ignore[union-attr]
            assert answer["id"] == rid and answer["result"]["isError"], answer
            return dict(answer["result"]["structuredContent"])

        hidden = ask(1, "lean_sync", {"path": "Hidden/A.lean"})
        assert hidden["data"]["reason"] == "permissionDenied", hidden
        assert hidden["data"]["directory"] == str(project / "Hidden"), hidden
        assert "no such file" not in hidden["message"], hidden
        unreadable = ask(2, "lean_sync", {"path": "Open/B.lean"})
        assert str(project / "Open" / "B.lean") in unreadable["message"], unreadable
        assert "Permission denied" in unreadable["message"], unreadable
        report = {"title": "t", "summary": "s", "reproduction": "r", "expected": "e"}
        bundle = ask(3, "beam_feedback_report", {**report, "actual": "a", "bundle": "dir"})
        assert bundle["code"] == "systemError", bundle
        assert bundle["data"]["errno"] == "EACCES" and bundle["data"]["fix"], bundle
        assert str(home) in bundle["data"]["path"], bundle
        assert str(home) in bundle["message"], bundle
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        (base / "proj" / "Hidden").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
