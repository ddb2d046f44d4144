"""The skill setup installs comes from the tool catalog, says when to use each tool, and setup
keeps every copy of it that it owns current (real installs and processes for the last part)."""

from __future__ import annotations

import re

from beam_install.skill import MARKER_PREFIX, SKILL_TEXT
from beam_mcp.tools.catalog import NAMES
from beam_mcp.tools.generate import SKILL_PATH
from beam_mcp.tools.skill import GROUPS, WHEN, render_module
from tests.setup.conftest import Beam


def test_every_tool_has_its_line_and_no_line_names_a_missing_tool() -> None:
    assert set(WHEN) == set(NAMES)
    grouped = [name for _title, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(NAMES)
    for name in NAMES:
        assert f"- `{name}`: {WHEN[name]}" in SKILL_TEXT.replace("\n  ", " "), name
    named = set(re.findall(r"`((?:lean|beam)_[a-z_]+)`", SKILL_TEXT))
    assert named <= set(NAMES), named - set(NAMES)


def test_the_skill_says_when_to_search_try_verify_and_how_to_point() -> None:
    text = SKILL_TEXT.replace("\n", " ")
    assert "Search before you guess a name: `lean_search`" in text
    assert "Try many tactics at once: `lean_try`" in text
    assert "Verify before you say it is done: `lean_verify`" in text
    assert "Give positions by text: `line1`" in text and "`match`" in text


def test_the_installed_skill_text_is_generated_from_the_catalog() -> None:
    committed = SKILL_PATH.read_text(encoding="utf-8")
    assert committed == render_module(), "run: python -m beam_mcp.tools.generate"


def test_setup_refreshes_every_stale_copy_it_owns_and_nothing_else(beam: Beam) -> None:
    claude_skill, shared_skill = beam.skills()
    claude_skill.parent.mkdir(parents=True)
    stale = f"---\nname: lean-beam\n---\n{MARKER_PREFIX} (written by `lean-beam setup`) -->\nold\n"
    claude_skill.write_text(stale)
    foreign = "# my own lean-beam notes\n"
    shared_skill.parent.mkdir(parents=True)
    shared_skill.write_text(foreign)
    body = beam.setup_json("codex", "--yes")  # Codex reads the shared skill, not Claude's
    skills = {s["file"]: s for s in body["skills"]}
    assert skills[str(claude_skill)]["action"] == "updated", skills
    assert skills[str(shared_skill)]["action"] == "skipped", skills
    assert claude_skill.read_text() == SKILL_TEXT
    assert shared_skill.read_text() == foreign
    again = beam.setup_json("codex", "--yes")
    assert str(claude_skill) not in {s["file"] for s in again["skills"]}  # current: not listed
    shared_skill.unlink()
    beam.setup_json("codex", "--yes")
    assert shared_skill.read_text() == SKILL_TEXT
