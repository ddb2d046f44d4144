"""Client names on the command line: the names setup knows, and the ones people also use.

`setup`, `remove` and `doctor --client` take a client by its name (`claude-code`, `codex`,
`cursor`, `opencode`, `gemini`, `vscode`, `vibe`) or an alias, in any case and with `_` for
`-`; an alias stands for its client everywhere after parsing.
"""

from __future__ import annotations

from typing import Any

import click

from beam_runtime.references import CLIENTS

ALIASES = {
    "claude": "claude-code",
    "claudecode": "claude-code",
    "codex-cli": "codex",
    "openai-codex": "codex",
    "cursor-agent": "cursor",
    "open-code": "opencode",
    "gemini-cli": "gemini",
    "code": "vscode",
    "vs-code": "vscode",
    "visual-studio-code": "vscode",
    "mistral-vibe": "vibe",
}


def canonical(name: str) -> str:
    """The client a name or alias stands for (unknown names come back normalized)."""
    spelled = name.strip().lower().replace("_", "-")
    return ALIASES.get(spelled, spelled)


class ClientName(click.Choice):  # type: ignore[type-arg]
    """A client name or alias; converts to the client's name."""

    def __init__(self) -> None:
        super().__init__(CLIENTS)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and canonical(value) in CLIENTS:
            value = canonical(value)
        return super().convert(value, param, ctx)


ALIAS_HELP = (
    "Aliases: "
    + "; ".join(
        f"{', '.join(a for a, c in ALIASES.items() if c == client)} for {client}"
        for client in CLIENTS
        if client in ALIASES.values()
    )
    + "."
)
