"""The safety checks of `lean-beam setup` and `remove`, each pinned by its own test: real processes
through the installed wrapper, real files under a temporary HOME. `bench/mutants_pins.py` lists
the one-line weakening of each check that these tests must catch (`python3 bench/mutation.py
--list pins --only setup`)."""

from __future__ import annotations

import json
import os
import selectors
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from beam_install.skill import SKILL_TEXT
from tests.setup.conftest import Beam, load_json, load_toml, snapshot

MARK = {"LEAN_BEAM_MANAGED": "1"}
JSON_CLIENTS = {  # client: (servers object, environment key)
    "claude-code": ("mcpServers", "env"),
    "cursor": ("mcpServers", "env"),
    "gemini": ("mcpServers", "env"),
    "vscode": ("servers", "env"),
    "opencode": ("mcp", "environment"),
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def ok(done: object) -> dict[str, object]:
    assert done.code == 0, done.stderr  # type: ignore[attr-defined]
    body: dict[str, object] = done.json()  # type: ignore[attr-defined]
    return body


def actions(body: dict[str, object]) -> dict[str, str]:
    return {c["client"]: c["action"] for c in body["changes"]}  # type: ignore[attr-defined, index]


# 1. Our entry first among the servers ------------------------------------------------------


@pytest.mark.parametrize("client", list(JSON_CLIENTS))
def test_removing_our_entry_when_it_comes_first_keeps_the_other_servers(
    beam: Beam, client: str
) -> None:
    """Clients rewrite their files (sorting, or our entry written before theirs): remove takes
    out the first member and only it."""
    container, env = JSON_CLIENTS[client]
    ours = f'"lean-beam": {{"command": "/opt/old/lean-beam-mcp", "{env}": {json.dumps(MARK)}}},'
    others = '"github": {"command": "npx", "args": ["-y", "gh"]},\n    "docs": {"command": "docs"}'
    before = f'{{\n  "theme": "dark",\n  "{container}": {{\n    '
    after = f"{others}\n  }}\n}}\n"
    path = write(beam.config(client), before + ours + "\n    " + after)
    assert actions(ok(beam.beam("remove", client, "--yes", "--json"))) == {client: "removed"}
    assert path.read_text() == before + after  # the other servers, byte for byte


def test_removing_our_codex_table_when_it_comes_first_keeps_the_other_servers(
    beam: Beam,
) -> None:
    ours = (
        "[mcp_servers.lean-beam]\n"
        'command = "/opt/old/lean-beam-mcp"\n'
        'env = { LEAN_BEAM_MANAGED = "1" }\n\n'
    )
    rest = (
        '[mcp_servers.docs]\ncommand = "docs-mcp"  # mine\nargs = ["--stdio"]\n\n'
        '[mcp_servers.github]\ncommand = "npx"\n'
    )
    path = write(beam.config("codex"), ours + rest)
    assert actions(ok(beam.beam("remove", "codex", "--yes", "--json"))) == {"codex": "removed"}
    assert path.read_text() == rest


# 2. A file setup created goes only while nothing the user added is in it --------------------


def test_a_json_file_setup_created_stays_with_what_the_user_added(beam: Beam) -> None:
    ok(beam.beam("setup", "cursor", "--yes", "--json"))
    path = beam.config("cursor")
    doc = load_json(path)
    doc["mcpServers"]["github"] = {"command": "npx"}  # added after ours, as a client would
    path.write_text(json.dumps(doc, indent=2) + "\n")
    assert actions(ok(beam.beam("remove", "cursor", "--yes", "--json"))) == {"cursor": "removed"}
    assert load_json(path) == {"mcpServers": {"github": {"command": "npx"}}}


def test_a_toml_file_setup_created_stays_with_what_the_user_added(beam: Beam) -> None:
    ok(beam.beam("setup", "codex", "--yes", "--json"))
    path = beam.config("codex")
    path.write_text(path.read_text() + '[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    assert actions(ok(beam.beam("remove", "codex", "--yes", "--json"))) == {"codex": "removed"}
    assert load_toml(path) == {"mcp_servers": {"docs": {"command": "docs-mcp"}}}


# 3. Skills that are not ours, and skills another registration still needs --------------------


def test_remove_keeps_a_skill_file_that_is_not_ours(beam: Beam) -> None:
    shared = beam.skills()[1]
    write(shared, "# my own notes about lean-beam\n")
    body = ok(beam.beam("setup", "cursor", "--yes", "--json"))
    assert [s["action"] for s in body["skills"]] == ["skipped"]  # type: ignore[attr-defined]
    gone = ok(beam.beam("remove", "cursor", "--yes", "--json"))
    assert [s["action"] for s in gone["skills"]] == ["skipped"]  # type: ignore[attr-defined]
    assert shared.read_text() == "# my own notes about lean-beam\n"


def test_remove_keeps_the_shared_skill_while_another_client_needs_it(beam: Beam) -> None:
    ok(beam.beam("setup", "codex", "cursor", "--yes", "--json"))  # both read the shared skill
    shared = beam.skills()[1]
    assert shared.read_text() == SKILL_TEXT
    ok(beam.beam("remove", "codex", "--yes", "--json"))
    assert shared.read_text() == SKILL_TEXT  # cursor is still registered
    ok(beam.beam("remove", "cursor", "--yes", "--json"))
    assert not shared.exists() and not (beam.home / ".agents").exists()


# 4. --refresh keeps the user's environment on our entry ---------------------------------------


def test_refresh_keeps_the_users_environment_on_our_entries(beam: Beam) -> None:
    ok(beam.beam("setup", "cursor", "codex", "--yes", "--json"))
    cursor = beam.config("cursor")
    doc = load_json(cursor)
    doc["mcpServers"]["lean-beam"]["env"]["LEAN_NUM_THREADS"] = "2"
    doc["mcpServers"]["lean-beam"]["command"] = "/old/root/bin/lean-beam-mcp"
    cursor.write_text(json.dumps(doc, indent=2) + "\n")
    codex = beam.config("codex")
    codex.write_text(
        codex.read_text()
        .replace("LEAN_BEAM_MANAGED", 'LEAN_NUM_THREADS = "2", LEAN_BEAM_MANAGED')
        .replace(beam.wrapper, "/old/root/bin/lean-beam-mcp")
    )
    body = ok(beam.beam("setup", "--refresh", "--yes", "--json"))
    assert actions(body) == {"cursor": "updated", "codex": "updated"}
    want = {"LEAN_NUM_THREADS": "2", **MARK}
    assert load_json(cursor)["mcpServers"]["lean-beam"]["env"] == want
    assert load_toml(codex)["mcp_servers"]["lean-beam"]["env"] == want
    assert load_json(cursor)["mcpServers"]["lean-beam"]["command"] == beam.wrapper


# 5. The journal and the files setup creates are private ---------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_journal_and_the_files_setup_creates_are_private(beam: Beam) -> None:
    """They can hold secrets (tokens in the servers' environments): mode 0600, whatever the
    umask."""
    write(beam.config("claude-code"), '{"mcpServers": {"gh": {"env": {"TOKEN": "secret"}}}}\n')
    killed = beam.beam("setup", "claude-code", "--yes", BEAM_SETUP_FAILPOINT="journal-written")
    assert killed.code == -signal.SIGKILL
    journal = beam.root / "state" / "setup" / "journal.json"
    assert "secret" in journal.read_text() and _mode(journal) == 0o600
    ok(beam.beam("setup", "cursor", "codex", "--yes", "--json"))  # rolls back, then writes
    assert not journal.exists()
    for path in (beam.config("cursor"), beam.config("codex")):
        assert _mode(path) == 0o600, path
    assert _mode(beam.root / "state" / "setup" / "registrations.json") == 0o600


# 6. A lock timeout is an error, never a second writer -----------------------------------------

HOLDER = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1], thread_local=False)
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


def _hold(lock: Path) -> subprocess.Popen[str]:
    lock.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=30), "the lock holder never took the lock"
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_lock_timeout_is_an_error_and_changes_nothing(beam: Beam) -> None:
    ok(beam.beam("setup", "codex", "--yes", "--json"))
    before = snapshot(beam.home)
    record = (beam.root / "state" / "setup" / "registrations.json").read_bytes()
    holder = _hold(beam.root / "state" / "setup" / "lock")
    try:
        for command in (["setup", "cursor"], ["remove", "codex"]):
            done = beam.beam(*command, "--yes", "--json", "--lock-timeout", "0.3")
            assert done.code == 1, (command, done.stdout, done.stderr)
            error = done.error()
            assert error["category"] == "lockTimeout" and "--lock-timeout" in error["fix"]
            assert snapshot(beam.home) == before
            assert (beam.root / "state" / "setup" / "registrations.json").read_bytes() == record
    finally:
        holder.communicate("", timeout=30)
    assert actions(ok(beam.beam("setup", "cursor", "--yes", "--json"))) == {"cursor": "created"}


# 7. An entry without a command is not ours ---------------------------------------------------


@pytest.mark.parametrize("shape", ["args", "url"])
def test_an_entry_without_a_command_is_not_taken_for_ours(beam: Beam, shape: str) -> None:
    """No marker and no command: whatever its arguments name (even our wrapper), it is not
    ours, so setup and remove leave it and its file as they are."""
    entry = {"args": [beam.wrapper]} if shape == "args" else {"type": "http", "url": "http://x"}
    write(beam.config("cursor"), json.dumps({"mcpServers": {"lean-beam": entry}}) + "\n")
    table = f"args = [{json.dumps(beam.wrapper)}]" if shape == "args" else 'url = "http://x"'
    write(beam.config("codex"), f"[mcp_servers.lean-beam]\n{table}\n")
    before = snapshot(beam.home)
    for command in ("setup", "remove"):
        body = ok(beam.beam(command, "cursor", "codex", "--yes", "--json"))
        assert actions(body) == {"cursor": "skipped", "codex": "skipped"}, (command, body)
        for client in ("cursor", "codex"):
            path = str(beam.config(client).relative_to(beam.home))
            assert snapshot(beam.home)[path] == before[path], (command, client)


# 8. Server tables of other TOML shapes -------------------------------------------------------

CODEX_SHAPES = {
    "dotted keys at the top": (
        'model = "o3"\nmcp_servers.docs.command = "docs-mcp"\nmcp_servers.docs.args = ["-s"]\n'
        '\n[projects."/tmp/p"]\ntrust_level = "trusted"\n'
    ),
    "dotted keys in the table": '[mcp_servers]\ndocs.command = "docs-mcp"\ndocs.env.A = "1"\n',
    "an inline table": 'mcp_servers = { docs = { command = "docs-mcp", args = [] } }\n',
    "inline tables in the table": '[mcp_servers]\ndocs = { command = "docs-mcp" }  # mine\n',
    "an array of tables inside a server": (
        '[mcp_servers.docs]\ncommand = "docs-mcp"\n\n'
        '[[mcp_servers.docs.tools]]\nname = "a"\n\n[[mcp_servers.docs.tools]]\nname = "b"\n'
    ),
}
VIBE_SHAPES = {
    "an inline array of tables": 'mcp_servers = [ { name = "fetch", command = "uvx" } ]\n',
    "an empty inline array": "mcp_servers = []\n",
    "a sub-table of a server": (
        '[[mcp_servers]]\nname = "fetch"\ncommand = "uvx"\n\n[mcp_servers.env]\nA = "1"\n'
    ),
}
SHAPES = [pytest.param("codex", v, id=f"codex: {k}") for k, v in CODEX_SHAPES.items()]
SHAPES += [pytest.param("vibe", v, id=f"vibe: {k}") for k, v in VIBE_SHAPES.items()]


@pytest.mark.parametrize(("client", "text"), SHAPES)
def test_other_toml_server_shapes_are_left_alone_by_setup_and_remove(
    beam: Beam, client: str, text: str
) -> None:
    path = write(beam.config(client), text)
    others = load_toml(path)
    assert actions(ok(beam.beam("setup", client, "--yes", "--json"))) == {client: "created"}
    now = load_toml(path)
    if client == "codex":
        ours = now["mcp_servers"].pop("lean-beam")
    else:
        (ours,) = [s for s in now["mcp_servers"] if s["name"] == "lean-beam"]
        now["mcp_servers"].remove(ours)
    assert ours["command"] == beam.wrapper and ours["env"] == MARK
    assert now == others  # every other server and setting reads as before
    assert actions(ok(beam.beam("remove", client, "--yes", "--json"))) == {client: "removed"}
    assert path.read_text() == text


def test_a_codex_array_of_server_tables_is_refused_and_kept(beam: Beam) -> None:
    """Codex reads `mcp_servers` as a table; an array of tables there is refused by name."""
    path = write(beam.config("codex"), '[[mcp_servers]]\nname = "docs"\ncommand = "d"\n')
    before = snapshot(beam.home)
    for command in ("setup", "remove"):
        done = beam.beam(command, "codex", "--yes", "--json")
        assert done.code == 1 and done.error()["category"] == "configInvalid", done.stderr
        assert str(path) in done.error()["message"]
        assert snapshot(beam.home) == before


@pytest.mark.parametrize(
    ("client", "text"),
    [
        ("vscode", '{"servers": 0}'),
        ("claude-code", '{"mcpServers": []}\n'),
        ("opencode", '{"mcp": "x"}'),
        ("gemini", '{\n  // a note\n  "mcpServers": null\n}\n'),
    ],
)
def test_a_servers_container_that_is_not_an_object_is_refused_and_kept(
    beam: Beam, client: str, text: str
) -> None:
    """A client's servers key holding a number, list, string or null is not ours to replace."""
    path = write(beam.config(client), text)
    before = snapshot(beam.home)
    for command in ("setup", "remove"):
        done = beam.beam(command, client, "--yes", "--json")
        assert done.code == 1 and done.error()["category"] == "configInvalid", done.stderr
        assert str(path) in done.error()["message"] and done.error()["fix"]
        assert snapshot(beam.home) == before
