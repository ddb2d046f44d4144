"""`setup --all` then `remove --all` gives every client file and directory back byte for byte.

A property test over all seven client formats: each client's user file is absent (its directory
there or not) or holds a generated document (with or without the servers table or object, other
servers, comments where the client accepts them, CRLF or LF, a final newline or none, any
indentation, empty objects written in odd ways), and the skill directories exist or not. Both
commands run as real processes through the installed wrapper, on real files.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runtime.conftest import install_into
from tests.setup.conftest import CLIENTS, Beam, snapshot

COMMENTS_OK = {"gemini", "vscode", "opencode"}
CONTAINER = {
    "claude-code": "mcpServers",
    "cursor": "mcpServers",
    "gemini": "mcpServers",
    "vscode": "servers",
    "opencode": "mcp",
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Beam:
    base = tmp_path_factory.mktemp("restore")
    home = base / "install-home"
    home.mkdir()
    root = base / "beam"
    return Beam(home, root, install_into(home, root))


@pytest.fixture
def homes(installed: Beam) -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for home in made:
        shutil.rmtree(home, ignore_errors=True)


KEYS = st.text("abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)
SCALARS = st.one_of(
    st.integers(-5, 500),
    st.booleans(),
    st.none(),
    st.text('abc xyz/é"\\', max_size=10),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=6,
)
OTHER_SERVER = st.fixed_dictionaries(
    {"command": st.sampled_from(["/usr/bin/other-mcp", "npx"]), "args": st.lists(KEYS, max_size=2)}
)
ODD_EMPTY = ["{}", "{ }", "{\n}", "{\n\n}", "{\r\n}", "{\n  // nothing yet\n}", "", "\n", "  \n\n"]


@st.composite
def json_text(draw: st.DrawFn, client: str) -> str:
    comments = client in COMMENTS_OK
    if draw(st.integers(0, 9)) == 0:
        odd = draw(st.sampled_from(ODD_EMPTY))
        return odd if comments or "//" not in odd else "{}"
    # a drawn key never names a servers container: its value would be random, and setup
    # rightly refuses a container that is not an object (a test of its own)
    doc: dict[str, Any] = draw(
        st.dictionaries(KEYS.filter(lambda k: k not in CONTAINER.values()), VALUES, max_size=4)
    )
    shape = draw(st.sampled_from(["none", "empty", "others"]))
    if shape != "none":
        servers = draw(st.dictionaries(KEYS, OTHER_SERVER, max_size=2)) if shape == "others" else {}
        doc[CONTAINER[client]] = servers
        keys = list(doc)
        draw(st.randoms()).shuffle(keys)
        doc = {k: doc[k] for k in keys}
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    text = json.dumps(doc, indent=indent, ensure_ascii=draw(st.booleans()))
    if comments and indent is not None and draw(st.booleans()):
        text = text.replace("{\n", "{\n// kept comment\n", 1)
        text = text[: text.rfind("}")] + "/* tail */" + text[text.rfind("}") :]
    if draw(st.booleans()):
        text += "\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


@st.composite
def toml_text(draw: st.DrawFn, client: str) -> str:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append("# my settings")
    for key in draw(st.lists(KEYS, max_size=3, unique=True)):
        lines.append(f"{key.replace('-', '_')}x = {json.dumps(draw(st.integers(0, 9)))}")
    shape = draw(st.sampled_from(["none", "others", "projects"]))
    if shape == "others" and client == "codex":
        lines += ["", "[mcp_servers.other]", 'command = "/usr/bin/other-mcp"', "args = []"]
    elif shape == "others":
        lines += ["", "[[mcp_servers]]", 'name = "other"', 'transport = "stdio"', 'command = "x"']
    elif shape == "projects":
        lines += ["", '[projects."/tmp/p"]', 'trust_level = "trusted"  # a comment']
    text = "\n".join(lines)
    if lines and draw(st.booleans()):
        text += "\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


@st.composite
def homes_state(draw: st.DrawFn) -> dict[str, Any]:
    files: dict[str, str | None] = {}
    for client in CLIENTS:
        if draw(st.integers(0, 3)) == 0:
            files[client] = None
        elif client in ("codex", "vibe"):
            files[client] = draw(toml_text(client))
        else:
            files[client] = draw(json_text(client))
    return {
        "files": files,
        "dirs": draw(
            st.lists(st.sampled_from(["config", "skills", "claude", "agents"]), unique=True)
        ),
    }


def _plant(home: Path, state: dict[str, Any]) -> None:
    beam = Beam(home, Path("/"), "")
    for client, text in state["files"].items():
        path = beam.config(client)
        if text is None:
            if "config" in state["dirs"] and path.parent != home:
                path.parent.mkdir(parents=True, exist_ok=True)  # an empty directory, kept
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    if "claude" in state["dirs"]:
        (home / ".claude").mkdir(exist_ok=True)
    if "agents" in state["dirs"]:
        (home / ".agents" / "skills").mkdir(parents=True, exist_ok=True)
    if "skills" in state["dirs"]:
        (home / ".claude" / "skills" / "other").mkdir(parents=True, exist_ok=True)


def check_round_trip(installed: Beam, homes: list[Path], state: dict[str, Any]) -> None:
    home = Path(tempfile.mkdtemp(prefix="home-", dir=installed.root.parent))
    homes.append(home)
    _plant(home, state)
    before = snapshot(home)
    beam = Beam(home, installed.root, installed.runtime_id)
    done = beam.beam("setup", "--all", "--yes", "--json")
    assert done.code == 0, (done.stderr, state)
    body = done.json()
    assert {c["action"] for c in body["changes"]} <= {"created"}, body
    gone = beam.beam("remove", "--all", "--yes", "--json")
    assert gone.code == 0, (gone.stderr, state)
    after = snapshot(home)
    for name in sorted(set(before) | set(after)):
        assert after.get(name) == before.get(name), (name, before.get(name), after.get(name), state)


FAST = settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FAST
@given(state=homes_state())
def test_setup_then_remove_gives_every_byte_back(
    installed: Beam, homes: list[Path], state: dict[str, Any]
) -> None:
    check_round_trip(installed, homes, state)


SHARDS = 4  # the long run in independent parts, so that parallel workers share it


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(FAST, max_examples=200 // SHARDS)
@given(state=homes_state())
def test_setup_then_remove_gives_every_byte_back_many(
    installed: Beam, homes: list[Path], state: dict[str, Any], shard: int
) -> None:
    check_round_trip(installed, homes, state)


CASES = {
    "no servers table, no final newline": {"claude-code": '{"numStartups": 3}'},
    "crlf and comments": {"gemini": '{\r\n  // mine\r\n  "theme": "dark"\r\n}\r\n'},
    "other servers, tabs": {"cursor": '{\n\t"mcpServers": {\n\t\t"x": {"command": "y"}\n\t}\n}'},
    "empty servers object kept": {"vscode": '{\n  "servers": {}\n}\n'},
    "an odd empty object": {"opencode": "{ }"},
    "codex without a final newline": {"codex": 'model = "o3"'},
    "codex table with comments, crlf": {
        "codex": '# top\r\n[mcp_servers.other]\r\ncommand = "x" # why\r\n'
    },
    "vibe with another server": {"vibe": '[[mcp_servers]]\nname = "o"\ncommand = "x"\n'},
}


@pytest.mark.parametrize("files", list(CASES.values()), ids=list(CASES))
def test_named_shapes_come_back_byte_for_byte(
    installed: Beam, homes: list[Path], files: dict[str, str]
) -> None:
    state = {"files": {c: files.get(c) for c in CLIENTS}, "dirs": ["config"]}
    check_round_trip(installed, homes, state)


def test_a_directory_that_existed_before_setup_stays(installed: Beam, homes: list[Path]) -> None:
    """Setup creates `~/.gemini/settings.json` inside an empty `~/.gemini/` it did not make:
    remove deletes the file and keeps the directory; directories setup made go."""
    state = {"files": dict.fromkeys(CLIENTS), "dirs": ["config"]}
    check_round_trip(installed, homes, state)
    state = {"files": dict.fromkeys(CLIENTS), "dirs": []}
    check_round_trip(installed, homes, state)
