"""The agent skill `lean-beam setup` installs: its text, where it goes, and whether it is ours.

The text is the front matter, the ownership marker and `skill_text.BODY`, which is generated
from the tool catalog (`python -m beam_mcp.tools.generate`; this package never imports
`beam_mcp`). Claude Code reads `~/.claude/skills/lean-beam/SKILL.md` (or under
`CLAUDE_CONFIG_DIR`); the other clients share `~/.agents/skills/lean-beam/SKILL.md`. A skill
file is ours when it carries `SKILL_MARKER`; a file without it is never changed or removed.
Setup refreshes a copy of ours whose text is older, wherever it finds one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from beam_install.skill_text import BODY

SKILL_HOSTS = ("claude-code", "agents")  # Claude Code's own skill directory, the shared one
MARKER_PREFIX = "<!-- managed-by: lean-beam"  # what ownership is checked by, across versions
SKILL_MARKER = f"{MARKER_PREFIX} (written by `lean-beam setup`) -->"

SKILL_TEXT = f"""---
name: lean-beam
description: >-
  Work on Lean 4 projects through the lean-beam MCP server: check files, read goals and
  errors, search declarations before guessing names, try many tactics at once without
  editing, and verify a proof with Lake before calling it done.
---
{SKILL_MARKER}

{BODY}"""


def skill_path(host: str, env: Mapping[str, str]) -> Path:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if host == "claude-code":
        base = env.get("CLAUDE_CONFIG_DIR")
        claude = Path(base).expanduser() if base else home / ".claude"
        return claude / "skills" / "lean-beam" / "SKILL.md"
    return home / ".agents" / "skills" / "lean-beam" / "SKILL.md"


def is_ours(text: str) -> bool:
    return MARKER_PREFIX in text
