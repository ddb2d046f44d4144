"""Lean's own work that a session's traffic causes, counted for ``beam_stats`` (issue 17).

Every ``didOpen`` makes Lean's watchdog start a file worker, which loads the document's imports;
so does a change of the import header (the worker restarts) and the first change after a worker
crashed. Header loads are the worker starts whose header imports something: with Mathlib each is
seconds of CPU and gigabytes of memory. Bytes sent are counted by the LSP client as it writes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

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


def imports_something(header: str) -> bool:
    return "import" in header


@dataclass
class LeanWork:
    workers_started: int = 0
    header_loads: int = 0
    full_text_sends: int = 0
    incremental_sends: int = 0

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
        return asdict(self)
