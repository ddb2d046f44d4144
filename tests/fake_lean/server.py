"""Entry point of the fake Lean language server (``lean --server`` stand-in).

Runs as ``python -m tests.fake_lean`` or as a script path from any working directory. Only LSP
frames go to stdout; everything else goes to stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv: list[str] | None = None) -> int:
    from tests.fake_lean.config import load_settings
    from tests.fake_lean.watchdog import Server

    args = sys.argv[1:] if argv is None else argv
    if "--version" in args or "-v" in args:
        settings = load_settings(args)
        sys.stderr.write(f"{lean_version_line(settings.lean_version)}\n")
        return 0
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames may reach the real stdout
    server = Server(load_settings(args), sys.stdin.buffer, stdout)
    return server.run()


def lean_version_line(version: str) -> str:
    return (
        f"Lean (version {version}, x86_64-unknown-linux-gnu, commit "
        "0000000000000000000000000000000000fa4e00, Release)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
