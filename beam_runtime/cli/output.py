"""Rendering of command results and errors: JSON for machines, text for people."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn, Protocol

from beam_runtime.errors import BeamError


class CommandResult(Protocol):
    def to_json(self) -> dict[str, Any]: ...

    def to_text(self) -> str: ...


def emit(result: CommandResult, as_json: bool) -> None:
    """Print a successful result: one JSON object with `schema: 1`, or text."""
    if as_json:
        body = {"schema": 1, **result.to_json()}
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        sys.stdout.write(result.to_text().rstrip("\n") + "\n")
    sys.stdout.flush()


def fail(error: BeamError, as_json: bool) -> NoReturn:
    """Report a failure on stderr (nothing on stdout) and exit 1."""
    if as_json:
        sys.stderr.write(json.dumps(error.to_json()) + "\n")
    else:
        sys.stderr.write(error.to_text() + "\n")
    sys.stderr.flush()
    raise SystemExit(1)
