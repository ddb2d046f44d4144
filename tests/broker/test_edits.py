"""Edits sent to Lean in proportion to the edit: range edits computed on UTF-8 bytes, lines counted
from an anchor, only the changed lines decoded and checked.

Pure functions against a reference (the edit applied the way Lean applies it: LSP positions in
UTF-16 units over LF text), and one session that sends an edit of a 50,000-line file to a
recording channel while ``tracemalloc`` watches what it allocates.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from beam_runtime.broker.config import Limits
from beam_runtime.broker.session import edits
from beam_runtime.broker.session.edits import Anchor
from beam_runtime.broker.session.launch import LaunchSpec
from beam_runtime.broker.session.paths import resolve_source
from beam_runtime.broker.session.session import LeanSession
from beam_runtime.broker.session.text import utf16_to_index
from beam_runtime.broker.session.versions import VersionStore

PIECES = ["def x : Nat := 1", "-- é", "𝔸𝔹", "  exact h", "", "α β γ", "😀", "théorème", "x"]


def _apply(text: str, change: dict[str, Any]) -> str:
    """What Lean does with one content change (UTF-16 positions, LF text)."""
    if "range" not in change:
        return str(change["text"])
    lines = text.split("\n")

    def index(point: dict[str, int]) -> int:
        column = utf16_to_index(lines[point["line"]], point["character"])
        assert column is not None, point
        return sum(len(line) + 1 for line in lines[: point["line"]]) + column

    rng = change["range"]
    return text[: index(rng["start"])] + change["text"] + text[index(rng["end"]) :]


def _text(rng: random.Random, lines: int) -> str:
    return "\n".join(" ".join(rng.choices(PIECES, k=rng.randint(0, 4))) for _ in range(lines))


def _edit(rng: random.Random, text: str) -> str:
    """Somewhere in the text, possibly inside a character: delete, insert or replace."""
    data = text.encode()
    at = rng.randint(0, len(data))
    cut = rng.randint(0, min(40, len(data) - at))
    fresh = _text(rng, rng.randint(0, 2)).encode() if rng.random() < 0.7 else b""
    spliced = data[:at] + fresh + data[at + cut :]
    return spliced.decode("utf-8", "ignore")  # a cut inside a character drops its pieces


@pytest.mark.parametrize("seed", range(20))
def test_byte_edits_rebuild_the_file_and_keep_their_anchor(seed: int) -> None:
    rng = random.Random(seed)
    text = _text(rng, 60)
    anchor = Anchor()
    for _ in range(40):
        new = _edit(rng, text)
        old_bytes, new_bytes = text.encode(), new.encode()
        span = edits.byte_span(old_bytes, new_bytes)
        edits.check_lines(old_bytes, new_bytes, span)
        change, ranged, anchor = edits.byte_change(old_bytes, new_bytes, span, anchor)
        assert _apply(text, change) == new, (seed, change)
        assert ranged == ("range" in change)
        assert anchor.line == new_bytes.count(b"\n", 0, anchor.offset), anchor
        text = new


@pytest.mark.parametrize("seed", range(5))
def test_in_place_comparison_agrees_with_slices(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        a = bytes(rng.choices(b"ab\n", k=rng.randint(0, 300)))
        b = bytearray(a)
        for _ in range(rng.randint(0, 3)):
            if b and rng.random() < 0.5:
                del b[rng.randrange(len(b))]
            else:
                b.insert(rng.randint(0, len(b)), rng.choice(b"abc\n"))
        b = bytes(b)
        start = edits.shared_start(a, b)
        assert start == edits.common_start(a, b), (a, b)
        limit = min(len(a), len(b)) - start
        assert edits.shared_end(a, b, limit) == edits.common_end(a, b, limit), (a, b)


def test_only_the_changed_lines_are_checked_and_errors_point_into_the_file() -> None:
    old = "".join(f"line {i} é\n" for i in range(100)).encode()
    bad = old.replace(b"line 50 ", b"line 50 \xff", 1)
    span = edits.byte_span(old, bad)
    with pytest.raises(UnicodeDecodeError) as error:
        edits.check_lines(old, bad, span)
    assert error.value.start == bad.index(b"\xff")
    edits.check_lines(old, old.replace(b"line 50", b"line 5\xc3\xa9", 1), span)


def test_a_span_never_splits_a_character() -> None:
    old, new = "aé𝔸b".encode(), "aè𝔸b".encode()  # é and è share their first byte
    start, end = edits.byte_span(old, new)
    assert old[:start].decode() == "a" and old[len(old) - end :].decode() == "𝔸b"


class _Recorder:
    """The session's channel: notifications are recorded, nothing is sent anywhere."""

    alive = True
    bytes_sent = 0

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


LINES = 50_000


def _big(serial: int) -> str:
    middle = LINES // 2
    return "".join(f"def d{i} : Nat := {serial if i == middle else i}\n" for i in range(LINES))


@pytest.mark.anyio
async def test_a_one_line_edit_of_a_large_file_allocates_no_copy_of_its_text(
    tmp_path: Path,
) -> None:
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    big = tmp_path / "Big.lean"
    big.write_text(_big(0))
    session = LeanSession(str(tmp_path), 1, LaunchSpec(["lean"]), Limits(1, 1, 1), VersionStore())
    channel = _Recorder()
    session.channel = channel  # type: ignore[assignment]
    source = resolve_source(str(tmp_path), "Big.lean")
    await session.sync_text(source)
    size = big.stat().st_size
    big.write_text(_big(-1))
    tracemalloc.start()
    try:
        _, changed = await session.sync_text(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert changed
    (params,) = [p for m, p in channel.sent if m == "textDocument/didChange"]
    (change,) = params["contentChanges"]
    assert change["range"]["start"] == {"line": LINES // 2, "character": 20}, change
    # The new file's bytes are read once; nothing else of its size is made (no decoded copy
    # of the whole text, no split lines).
    assert peak < 1.25 * size, (peak, size)
