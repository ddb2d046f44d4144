"""Driving the speculative tools through a real server, checking the source stays untouched."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from tests.broker.fake import fake_server, workspace
from tests.mcp.helpers import Server, call, structured

HANDLE_ID = re.compile(r"^[A-Za-z0-9_-]{43}$")

__all__ = ["Probe", "fake_server", "workspace"]


class Probe:
    """One server and one source file; every call checks that the file and its version held."""

    def __init__(self, server: Server, root: Path, path: str = "Main.lean") -> None:
        self.server = server
        self.root = root
        self.path = path
        self.ws = workspace(root)
        self._ids = itertools.count(1)
        self.bytes = (root / path).read_bytes()
        self.version = self.ok("lean_update", {"path": path})["version"]

    def reply(self, tool: str, args: dict[str, Any], bare: bool = False) -> dict[str, Any]:
        arguments = args if bare else {**self.ws, **args}
        message = self.server.ask(call(next(self._ids), tool, arguments))
        return message["result"]

    def stats(self) -> dict[str, Any]:
        result = self.reply("beam_stats", {}, bare=True)
        assert result["isError"] is False, result
        return structured({"result": result})

    def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.reply(tool, args)
        assert result["isError"] is False, result
        return structured({"result": result})

    def err(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = self.reply(tool, args)
        assert result["isError"] is True, result
        return structured({"result": result})

    def untouched(self) -> None:
        assert (self.root / self.path).read_bytes() == self.bytes
        again = self.ok("lean_update", {"path": self.path})
        assert again["version"] == self.version and again["changed"] is False

    def at(self, line: int, character: int, text: str, tool: str = "lean_run_at") -> dict:
        args = {
            "path": self.path,
            "version": self.version,
            "line": line,
            "character": character,
            "text": text,
        }
        result = self.ok(tool, args)
        self.untouched()
        return result

    def with_(self, handle: dict, text: str, linear: bool = False) -> dict:
        tool = "lean_run_with_linear" if linear else "lean_run_with"
        result = self.ok(tool, {"path": self.path, "handle": handle, "text": text})
        self.untouched()
        return result

    def with_error(self, handle: dict, text: str = "skip", tool: str = "lean_run_with") -> dict:
        return self.err(tool, {"path": self.path, "handle": handle, "text": text})


def targets(result: dict) -> list[str]:
    assert result["proof_state"] is not None, result
    return [goal["target"] for goal in result["proof_state"]["goals"]]
