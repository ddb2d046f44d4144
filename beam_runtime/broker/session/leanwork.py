"""Lean's own work that a session's traffic causes, counted for ``beam_stats``.

Every ``didOpen`` makes Lean's watchdog start a file worker, which loads the document's imports;
so does a change of the import header (the worker restarts) and the first change after a worker
crashed. Header loads are the worker starts whose header imports something: with Mathlib each is
seconds of CPU and gigabytes of memory. Bytes sent are counted by the LSP client as it writes.
"""

from __future__ import annotations

COMMENTS = ("--", "/-")
HEADER_WORDS = ("import", "public", "module", "prelude", "meta", *COMMENTS)


def header_of(text: str) -> str:
    """The header's commands (comments left out), scanning only the header's own lines."""
    at, kept = 0, []
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        stripped = text[at:end].strip()
        if stripped and not stripped.startswith(HEADER_WORDS):
            break
        if stripped and not stripped.startswith(COMMENTS):
            kept.append(stripped)
        at = end + 1
    return "\n".join(kept)


def header_span(data: bytes) -> int:
    """Bytes of UTF-8 ``data`` that `header_of` reads: the header's lines and the first line
    after it. An edit that starts at or past this offset leaves the header as it was."""
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        stripped = data[at:end].decode("utf-8", "replace").strip()
        if stripped and not stripped.startswith(HEADER_WORDS):
            return end
        at = end + 1
    return len(data)


def imports_something(header: str) -> bool:
    return "import" in header


class LeanWork:
    def __init__(self) -> None:
        self.workers_started = 0
        self.header_loads = 0
        self.full_text_sends = 0
        self.incremental_sends = 0

    def opened(self, header: str) -> None:
        self.worker_started(header)
        self.full_text_sends += 1

    def changed(self, *, ranged: bool) -> None:
        if ranged:
            self.incremental_sends += 1
        else:
            self.full_text_sends += 1

    def worker_started(self, header: str) -> None:
        self.workers_started += 1
        if imports_something(header):
            self.header_loads += 1

    def as_dict(self) -> dict[str, int]:
        return {
            "workers_started": self.workers_started,
            "header_loads": self.header_loads,
            "full_text_sends": self.full_text_sends,
            "incremental_sends": self.incremental_sends,
        }
