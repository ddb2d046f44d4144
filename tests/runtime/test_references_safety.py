"""Fail-closed reading of client configs and exact runtime ids.

Each test writes real config files under a temporary HOME and asks the same index prune asks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from beam_runtime.references import ReferenceIndex, read_registrations, referenced_ids

ID_A = "0.1.0-aaaaaaaaaaaaaaaa"
ID_B = "0.1.0-bbbbbbbbbbbbbbbb"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def make_root(root: Path) -> Path:
    for rid in (ID_A, ID_B):
        (root / "versions" / rid / "bin").mkdir(parents=True)
    (root / "bin").mkdir()
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path / "beam")


def index(root: Path, home: Path) -> ReferenceIndex:
    return ReferenceIndex(root, read_registrations({"HOME": str(home)}))


def blocked(idx: ReferenceIndex) -> dict[str, list[str]]:
    return {rid: [r.client for r in idx.referenced_by(rid)] for rid in (ID_A, ID_B)}


@pytest.mark.parametrize(
    "doc",
    [
        lambda v: [f"{v}/{ID_A}/bin/lean-beam-mcp"],  # the document is a list
        lambda v: f"{v}/{ID_A}/bin/lean-beam-mcp",  # the document is a string
        lambda v: {"projects": f"{v}/{ID_A}/bin/lean-beam-mcp"},  # `projects` is a string
        lambda v: {"projects": [{"mcpServers": {"b": {"command": f"{v}/{ID_A}/bin/x"}}}]},
    ],
    ids=["list-document", "string-document", "string-projects", "list-projects"],
)
def test_a_config_of_the_wrong_shape_blocks_the_ids_in_its_text(
    home: Path, root: Path, doc: object
) -> None:
    body = doc(f"{root}/versions")  # type: ignore[operator]
    (home / ".claude.json").write_text(json.dumps(body))
    idx = index(root, home)
    assert blocked(idx) == {ID_A: ["claude-code"], ID_B: []}
    (problem,) = idx.registrations.problems
    assert problem.text is not None and problem.error
    (ref,) = idx.referenced_by(ID_A)
    assert ref.error and "does not parse" in ref.describe()


# Once a realpath pass over `=`/`:`-separated tokens read the rest of the token as part of
# the id (`<id> && ...` -> "<id> && ...").
@pytest.mark.parametrize(
    "tail",
    [
        ":/usr/bin",
        "=1",
        " && exec lean-beam-mcp",
        "'",
        '"',
        " --stdio",
        "\tx",
        "\nx",
        ",x",
        ";x",
    ],
)
def test_an_id_ends_where_the_argument_stops_naming_it(root: Path, tail: str) -> None:
    value = f"{root}/versions/{ID_A}{tail}"
    assert referenced_ids([value], root) == {ID_A}
    assert referenced_ids(["-c", f"exec {value}"], root) == {ID_A}


def test_an_id_inside_a_shell_command_in_a_real_config(home: Path, root: Path) -> None:
    versions = f"{root}/versions"
    server = {
        "command": "sh",
        "args": ["-c", f"cd /tmp && {versions}/{ID_A} && echo done"],
        "env": {"EXTRA": f"PATH={versions}/{ID_B}:/usr/bin"},
    }
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    idx = index(root, home)
    assert blocked(idx) == {ID_A: ["claude-code"], ID_B: ["claude-code"]}
    assert idx.registrations.problems == []


def test_a_dangling_symlink_config_blocks_every_runtime(home: Path, root: Path) -> None:
    (home / ".codex").mkdir()
    os.symlink(home / "nowhere" / "config.toml", home / ".codex" / "config.toml")
    idx = index(root, home)
    assert blocked(idx) == {ID_A: ["codex"], ID_B: ["codex"]}
    (problem,) = idx.registrations.problems
    assert problem.text is None


def test_a_config_that_is_not_utf8_blocks_every_runtime(home: Path, root: Path) -> None:
    (home / ".claude.json").write_bytes(b'{"mcpServers": {"b": {"command": "\xff\xfe"}}}')
    idx = index(root, home)
    assert blocked(idx) == {ID_A: ["claude-code"], ID_B: ["claude-code"]}
    (problem,) = idx.registrations.problems
    assert problem.text is None and "cannot read" in problem.error


def test_a_parsable_config_blocks_only_what_it_registers(home: Path, root: Path) -> None:
    """The fail-closed paths above are not the default: a sound config blocks nothing else."""
    server = {"command": f"{root}/versions/{ID_A}/bin/lean-beam-mcp"}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"s": server}, "projects": {}}))
    assert blocked(index(root, home)) == {ID_A: ["claude-code"], ID_B: []}


def test_alias_spellings_embedded_in_longer_strings_count(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    root = make_root(real / "beam")  # the canonical root; clients may spell it through `alias`
    spelled = f"{alias}/beam/versions"
    server = {
        "command": "sh",
        "args": ["-c", f"exec {spelled}/{ID_A}/bin/lean-beam-mcp"],
        "env": {"BEAM_CMD": f"exec {spelled}/{ID_B}/bin/beam-cli --stdio"},
    }
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"s": server}}))
    assert referenced_ids(server["args"], root) == {ID_A}
    assert blocked(index(root, home)) == {ID_A: ["claude-code"], ID_B: ["claude-code"]}


def test_an_alias_with_a_space_embedded_in_a_shell_command_counts(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "my alias"
    alias.symlink_to(real)
    root = make_root(real / "beam")
    value = f"cd /tmp && exec {alias}/beam/versions/{ID_A}/bin/lean-beam-mcp --stdio"
    assert referenced_ids(["-c", value], root) == {ID_A}
