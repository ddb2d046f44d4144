"""Stdin in every shape a client may hand the server: pipe, regular file, terminal.

Phase 2 reads stdin on the event loop when it can wait on it (pipes, sockets, terminals) and
leaves a regular file to the reader thread; either way every line is answered once, in order
of arrival, and no line is cut where the loop takes over from the thread.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
import tty
from pathlib import Path
from typing import Any

from tests.mcp.helpers import REPO, SLEEP_BACKEND, Server, call, ids_of, minimal_env, structured


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _sync(rid: int, project: Path, spec: str = "10ms") -> dict[str, Any]:
    return call(rid, "lean_sync", {"workspace": {"root": str(project)}, "path": spec})


def _answers(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_line_cut_across_the_takeover_is_read_whole(project: Path) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        second = _line(_sync(2, project))
        # The first call starts phase 2 while half of the second line is still unread.
        srv.send(_line(_sync(1, project, "200ms")) + second[:25])
        time.sleep(0.5)
        srv.send(second[25:])
        answers = {message.get("id"): message for message in (srv.read(), srv.read())}
        assert set(answers) == {1, 2}  # no parse error (id null) for a half line
        assert all(message["result"]["isError"] is False for message in answers.values())
    finally:
        srv.kill()


def test_many_lines_after_the_takeover_are_all_answered(project: Path) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    try:
        srv.send(_sync(0, project))
        srv.read_until(0)
        srv.send(b"".join(_line(call(rid, "beam_version")) for rid in range(1, 201)))
        seen = ids_of(srv.read() for _ in range(200))
        assert sorted(seen) == list(range(1, 201))
    finally:
        srv.kill()


def test_last_line_without_newline_is_answered_at_eof(project: Path) -> None:
    srv = Server(env=minimal_env(**SLEEP_BACKEND))
    srv.send(_sync(1, project))
    srv.read_until(1)
    srv.send(json.dumps(call(2, "beam_version")).encode())  # no newline, then EOF
    code, stderr, rest = srv.close()
    assert (code, stderr) == (0, b"")
    assert ids_of(rest) == [2]


def test_regular_file_stdin_is_read_to_the_end(project: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    lines = [_line(_sync(1, project)), *(_line(call(rid, "beam_version")) for rid in (2, 3))]
    requests.write_bytes(b"".join(lines) + json.dumps(_sync(4, project)).encode())
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "beam_mcp"],
            stdin=stdin,
            capture_output=True,
            env=minimal_env(**SLEEP_BACKEND),
            cwd=REPO,
            timeout=60,
            check=False,
        )
    assert (done.returncode, done.stderr) == (0, b"")
    answers = _answers(done.stdout)
    # EOF cancels calls still in flight, so only the quick ones are certain to be answered.
    assert {2, 3} <= set(ids_of(answers))


def test_terminal_stdin(project: Path) -> None:
    """A terminal is pollable too: the loop takes it over and still answers every line."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no echo, no line editing: the bytes arrive as written
    proc = subprocess.Popen(
        [sys.executable, "-m", "beam_mcp"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=minimal_env(**SLEEP_BACKEND),
        cwd=REPO,
    )
    os.close(slave)
    try:
        os.write(master, _line(_sync(1, project)))
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        os.write(master, _line(call(2, "beam_version")))
        second = json.loads(proc.stdout.readline())
        assert (first["id"], second["id"]) == (1, 2)
        assert structured(second)["name"] == "lean-beam-mcp"
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
