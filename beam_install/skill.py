"""The agent skill `lean-beam setup` installs: its text, where it goes, and whether it is ours.

Claude Code reads `~/.claude/skills/lean-beam/SKILL.md` (or under `CLAUDE_CONFIG_DIR`); the
other clients share `~/.agents/skills/lean-beam/SKILL.md`. A skill file is ours when it carries
`SKILL_MARKER`; a file without it is never changed or removed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

MARKER_PREFIX = "<!-- managed-by: lean-beam"  # what ownership is checked by, across versions
SKILL_MARKER = f"{MARKER_PREFIX} (written by `lean-beam setup`) -->"

SKILL_TEXT = f"""---
name: lean-beam
description: >-
  Work on Lean 4 projects through the lean-beam MCP server: check files, read goals
  and errors, try tactics without editing, and save checkpoints.
---
{SKILL_MARKER}

# Working on Lean 4 with lean-beam

lean-beam drives the Lean language server of one Lean project. Every Lean tool takes
`workspace: {{"root": "/absolute/path/of/the/project"}}` (the directory with `lean-toolchain`
or the lakefile) and a `path` inside it. Beam never edits `.lean` files: you edit them with
your own file tools, then tell Beam to look again.

## The loop: edit, sync, act
1. Edit the file on disk.
2. Call `lean_sync` on it. It reads the file, waits until Lean has checked it and returns the
   `version`, diagnostic counts and items, and `readiness`.
3. Act on what it says: fix the first error, ask for goals, or move on.

Never reason from an old answer after an edit: sync first. Pass the `version` you got back to
later calls when you want them to fail instead of answering about a newer text.

## Reading readiness
- `diagnostics.complete: true`: Lean finished; the diagnostics are the whole truth for that
  version. "No errors" means something only then.
- `readiness.save_ready: false` with `reason: "stillElaborating"`: Lean is still working (a
  first build of dependencies can take minutes). The answer is partial. Call `lean_sync` again
  after `retry_after_ms`; it joins the same check instead of starting over.
- A `syncBarrierIncomplete` error carries a recovery plan (for example rebuilding stale
  imports): follow it.

## Which tool when
- Errors and warnings: `lean_sync`. Open work in a range (sorry, holes, failing proofs):
  `lean_todo`, then `lean_code_action_resolve` for a suggested fix you apply yourself.
- Goals at a point: `lean_goals` (`mode` before or after the tactic).
- Types and docs: `lean_hover`; where a name comes from: `lean_definition`; uses:
  `lean_references`; outline: `lean_document_symbols`; search: `lean_workspace_symbols`.
- Try something without touching the file: `lean_run_at` (one-off) or `lean_run_at_handle`
  (returns a handle to continue from). Positions can be `line` + `character` (0-based), or
  `line1` + `match` (1-based line and the text to find), which is easier to get right.
- Checkpoint a finished file so dependents see it: `lean_save` (not a replacement for
  `lake build`). `lean_close` when done with a file.
- After changing the lakefile or toolchain: `lean_drop_workspace`, then sync again.

## Handles
`lean_run_at_handle` returns `next_handle`, an opaque object. Continue with `lean_run_with`
(keeps the parent, so you can branch) or `lean_run_with_linear` (consumes it; cheaper).
Release handles you no longer need with `lean_release`. A handle becomes stale when the
document changes: after an edit and sync, start again from a position.

## When something is off
`beam_version` says which runtime answers; `beam_stats` shows call counts and open workspaces.
In a terminal, `lean-beam doctor` checks the installation and the Lean toolchain.
"""


def skill_path(host: str, env: Mapping[str, str]) -> Path:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if host == "claude-code":
        base = env.get("CLAUDE_CONFIG_DIR")
        claude = Path(base).expanduser() if base else home / ".claude"
        return claude / "skills" / "lean-beam" / "SKILL.md"
    return home / ".agents" / "skills" / "lean-beam" / "SKILL.md"


def is_ours(text: str) -> bool:
    return MARKER_PREFIX in text
