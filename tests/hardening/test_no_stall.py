"""No file a tool or a command is pointed at can stall the server or a CLI command.

Through real processes: the MCP server with the fake Lean, `beam-cli mcp-config` and
`lean-beam runtime list`, with FIFOs, character devices and huge files where a file is expected.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from beam_runtime import safe_read
from tests.broker.conftest import start
from tests.broker.fake import FAST_FAKE, err, fake_server, ok, request_log, until, workspace
from tests.mcp.helpers import Server, call, modern, structured
from tests.runtime.clienv import SHORT_PATH, client_env, dev_command, run
from tests.support.projects import lean_project
from tests.support.slowfs import slow_mount

BEAM_CLI = dev_command("beam-cli")


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


def _still_answers(server: Server, rid: int) -> None:
    reply = server.ask(modern(rid, "tools/list"))
    assert reply["id"] == rid and reply["result"]["tools"], reply


def test_bad_sources_are_tool_errors_and_the_server_keeps_answering(
    servers: list[Server],
    project: Path,
    tmp_path: Path,
) -> None:
    server = fake_server(servers)
    ws = workspace(project)
    ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    os.mkfifo(project / "Fifo.lean")
    (project / "Zero.lean").symlink_to("/dev/zero")
    _sparse(project / "Huge.lean", safe_read.SOURCE_CAP + 1)
    for rid, name in enumerate(["Fifo.lean", "Zero.lean", "Huge.lean"], start=10):
        # Each request gets its own id: MCP ids are unique, and a reused id may still be live
        # until its answer's write has been accounted for.
        for offset, tool in enumerate(("lean_sync", "lean_update", "lean_refresh")):
            error = err(server, rid * 10 + offset, tool, {**ws, "path": name})
            assert error["code"] == "invalidInput", error
            if name == "Huge.lean":
                assert error["data"]["reason"] == "tooLarge" and "16 MiB" in error["message"]
        _still_answers(server, rid)
    ok(server, 99, "lean_sync", {**ws, "path": "Main.lean"})


def _barriers(log: Path) -> int:
    return sum(e.get("request") == "textDocument/waitForDiagnostics" for e in request_log(log))


def test_a_source_replaced_by_a_fifo_while_its_call_waits(
    servers: list[Server],
    project: Path,
) -> None:
    """The hostile case: the file passes resolution, then turns into a FIFO before it is read."""
    log = project.parent / "requests.jsonl"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log))
    ws = workspace(project)
    ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
    (project / "Main.lean").write_text("example : True := by\n  sleep 1500\n  trivial\n")
    # One of the two holds the document while Lean takes 1.5 s, the other waits for it. Which
    # one gets it first is not fixed: both resolve the path off the loop, in parallel.
    server.send(call(2, "lean_sync", {**ws, "path": "Main.lean"}))
    server.send(call(3, "lean_sync", {**ws, "path": "Main.lean"}))
    until(lambda: _barriers(log) >= 2, "a barrier on the new text (the first sync made one)")
    fifo = project / "fifo.tmp"
    os.mkfifo(fifo)
    os.replace(fifo, project / "Main.lean")
    server.send(modern(4, "tools/list"))
    seen = server.read_until(4)[1]
    answers = {m["id"]: m for m in seen if m.get("id") in (2, 3) and "method" not in m}
    while len(answers) < 2:
        msg = server.read()
        if msg.get("id") in (2, 3) and "method" not in msg:
            answers[msg["id"]] = msg
    refused = [structured(m) for m in answers.values() if m["result"]["isError"]]
    assert refused, answers  # at least the call that waited read the FIFO, and refused it
    for error in refused:
        assert error["code"] == "invalidInput", error
        assert error["data"]["reason"] in ("notRegular", "fileNotFound"), error
    code, _, _ = server.close()
    assert code == 0


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lakefile.toml").write_text('name = "demo"\n')
    return root


def _toolchain_kinds(root: Path) -> list[tuple[str, object]]:
    target = root / "lean-toolchain"

    def fifo() -> None:
        os.mkfifo(target)

    def zero() -> None:
        target.symlink_to("/dev/zero")

    def huge() -> None:
        _sparse(target, safe_read.SMALL_CAP + 1)

    return [("fifo", fifo), ("zero", zero), ("huge", huge)]


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_mcp_config_refuses_a_bad_lean_toolchain(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = _project(tmp_path)
    dict(_toolchain_kinds(root))[kind]()  # type: ignore[operator]
    done = run(
        [BEAM_CLI, "--root", str(root), "mcp-config"], client_env(home, SHORT_PATH), timeout=60
    )
    assert done.code == 1, done
    error = done.error()
    assert error["category"] == "missingToolchainFile", error
    assert ("regular file" in error["message"]) or ("1 MiB cap" in error["message"]), error


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge"])
def test_runtime_list_refuses_a_bad_client_config(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / ".claude.json"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "zero":
        config.symlink_to("/dev/zero")
    else:
        _sparse(config, safe_read.CONFIG_CAP + 1)
    keeper = threading.Event()  # nothing ever writes to the FIFO
    done = run(
        [
            dev_command("lean-beam"),
            "runtime",
            "list",
            "--install-root",
            str(tmp_path / "beam"),
            "--json",
        ],
        client_env(home, SHORT_PATH),
        timeout=60,
    )
    keeper.set()
    assert done.code in (0, 1), done
    assert "Traceback" not in done.stderr, done.stderr


def test_doctor_with_a_device_as_lean_toolchain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = _project(tmp_path)
    (root / "lean-toolchain").symlink_to("/dev/zero")  # read to the end: never ends
    done = run(
        [dev_command("lean-beam"), "doctor", "--install-root", str(tmp_path / "beam"), "--json"],
        client_env(home, SHORT_PATH),
        cwd=root,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    report = done.json()
    text = json.dumps(report)
    assert "is a character device, not a regular file" in text, text


def test_prune_with_a_fifo_client_config_finishes_and_keeps_everything(tmp_path: Path) -> None:
    from tests.runtime.conftest import Installed, install_into

    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    installed = Installed(home, root, install_into(home, root))
    os.mkfifo(home / ".claude.json")  # prune holds install.lock while it reads configs
    done = installed.beam("runtime", "prune", "--yes", "--json")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.code == 0, done.stderr
    assert (root / "versions" / installed.runtime_id).is_dir()
    listed = installed.beam("runtime", "list", "--json")
    assert listed.code == 0 and "a FIFO" in listed.stdout, listed.stdout


def _fuse_project(tmp_path: Path) -> Path:
    files = {
        "Main.lean": "def answerA : Nat := 42\n",
        "Slow.lean": "def slow : Nat := 1\n",
        "Stall.lean": "def stall : Nat := 2\n",
    }
    return lean_project(tmp_path / "source", files)


@pytest.mark.parametrize("hang", ["read", "stat"])
def test_a_hung_mount_is_a_tool_error_and_never_a_stall(
    servers: list[Server], tmp_path: Path, hang: str
) -> None:
    """A project on a mount whose reads (or stats) of one file never finish, as on a hung NFS or
    FUSE mount: the call on that file is a tool error after the read bound, calls on other files
    and other requests are answered meanwhile, and the server still exits at EOF."""
    name = "Slow.lean" if hang == "read" else "Stall.lean"
    hangs = {"hang_read": (name,)} if hang == "read" else {"hang_stat": (name,)}
    with slow_mount(_fuse_project(tmp_path), tmp_path / "mnt", **hangs) as root:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5")
        ws = workspace(root)
        ok(server, 1, "lean_sync", {**ws, "path": "Main.lean"})
        server.send(call(2, "lean_sync", {**ws, "path": name}))
        server.send(call(3, "lean_hover", {**ws, "path": "Main.lean", "line": 0, "character": 4}))
        server.send(modern(4, "tools/list"))
        answers: dict[int, dict] = {}
        order = []
        while len(answers) < 3:
            msg = server.read()
            if msg.get("id") in (2, 3, 4) and "method" not in msg:
                answers[msg["id"]] = msg
                order.append(msg["id"])
        assert order[-1] == 2, order  # the others did not wait for the hung file
        assert not answers[3]["result"]["isError"], answers[3]
        error = structured(answers[2])
        assert answers[2]["result"]["isError"], error
        assert error["code"] == "timeout" and error["data"]["phase"] == "read", error
        assert "1.5 s" in error["message"] and error["data"]["fix"], error
        _still_answers(server, 5)
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        # EOF ends the server at once: its pipes close although a thread of it is still stuck
        # in the kernel, which lets the process go only once the mount answers (unmounted below)
        assert _read_to_eof(server) == []
    assert server.proc.wait(timeout=30) == 0


def _read_to_eof(server: Server) -> list[bytes]:
    rest = []
    while line := server.lines.get(timeout=20):
        rest.append(line)
    return rest


def test_a_fifo_among_the_modules_stalls_neither_verify_nor_search(
    servers: list[Server], tmp_path: Path
) -> None:
    """`lean_verify` reads every module's header (the cone) and hashes the cone's sources;
    `lean_search` indexes every source. A FIFO or a link to /dev/zero among them, or as
    `lake-manifest.json` or `lean-toolchain`, is skipped or refused, never waited on."""
    from tests.verify.test_verify import LAKE_SERVE

    root = lean_project(
        tmp_path / "proj",
        {"Main.lean": "import Demo\ndef answerA : Nat := 42\n", "Demo.lean": "def d := 1\n"},
    )
    os.mkfifo(root / "Fifo.lean")
    (root / "Zero.lean").symlink_to("/dev/zero")
    os.mkfifo(root / "lake-manifest.json")
    home = tmp_path / "home"  # lean_verify's receipt key goes to this HOME
    home.mkdir()
    server = start(servers, "--lean-cmd", LAKE_SERVE, **FAST_FAKE, HOME=str(home))
    ws = workspace(root)
    server.send(call(1, "lean_verify", {**ws, "path": "Demo.lean", "wait_ms": 20000}))
    server.send(call(2, "lean_search", {**ws, "query": "answerA"}))
    _still_answers(server, 3)
    answers: dict[int, dict] = {}
    while len(answers) < 2:
        msg = server.read(timeout=60)
        if msg.get("id") in (1, 2) and "method" not in msg:
            answers[msg["id"]] = msg
    verified = structured(answers[1])
    assert not answers[1]["result"]["isError"], verified
    assert "Main" in {m["module"] for m in verified["modules"]}, verified
    found = structured(answers[2])
    assert not answers[2]["result"]["isError"], found
    assert "answerA" in json.dumps(found), found
    _still_answers(server, 4)


REPORT = {"title": "t", "summary": "s", "reproduction": "r", "expected": "e", "actual": "a"}


@pytest.mark.parametrize("hang", ["stat", "read"])
def test_a_feedback_report_on_a_hung_mount_never_stalls(
    servers: list[Server], tmp_path: Path, hang: str
) -> None:
    """`beam_feedback_report` collects the project's lakefiles and toolchain: a lakefile whose
    stat (or a toolchain whose read) never returns leaves the server answering, the report says
    what it could not read, and EOF ends the server."""
    hangs = (
        {"hang_stat": ("lakefile.toml",)} if hang == "stat" else {"hang_read": ("lean-toolchain",)}
    )
    with slow_mount(_fuse_project(tmp_path), tmp_path / "mnt", **hangs) as root:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5")
        ws = workspace(root)
        server.send(call(2, "beam_feedback_report", {**ws, **REPORT, "include_collected": True}))
        server.send(modern(3, "tools/list"))
        answers: dict[int, dict] = {}
        order = []
        while len(answers) < 2:
            msg = server.read(timeout=60)
            if msg.get("id") in (2, 3) and "method" not in msg:
                answers[msg["id"]] = msg
                order.append(msg["id"])
        assert order == [3, 2], order
        report = structured(answers[2])
        assert not answers[2]["result"]["isError"], report
        unread = report["collected"]["unreadable"]
        name = "lakefile.toml" if hang == "stat" else "lean-toolchain"
        assert any(name in item and "1.5 s" in item for item in unread), report["collected"]
        _still_answers(server, 4)
        server.send(call(5, "beam_feedback_report", {**ws, **REPORT}))  # pending at EOF
        assert server.proc.stdin is not None
        server.proc.stdin.close()
        started = time.monotonic()
        _read_to_eof(server)
        assert time.monotonic() - started < 5
    assert server.proc.wait(timeout=30) == 0
