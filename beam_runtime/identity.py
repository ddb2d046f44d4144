"""Identity of the running code (runtime.md "Identity"). Placeholder: development identity only.

The installer work replaces this with the full installed-runtime identity; the signature stays.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from beam_runtime.version import VERSION

MCP_PROTOCOL = "2026-07-28"


def runtime_identity(name: str, *, beam_cli: str | None = None) -> dict[str, Any]:
    """Identity fields of runtime.md for the process running this code."""
    return {
        "name": name,
        "version": VERSION,
        "beam_cli": beam_cli,
        "python": os.path.realpath(sys.executable),
        "mcp_protocol": MCP_PROTOCOL,
    }
