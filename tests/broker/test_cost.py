"""Cost in proportion to the work: stat fingerprints, range edits, Lean's counters."""

from __future__ import annotations

import os
from pathlib import Path

from beam_runtime.broker.session.fingerprint import SourceCache
from tests.broker.fake import fake_server, ok, request_log, workspace
from tests.mcp.helpers import Server


def _update(server: Server, rid: int, project: Path, path: str = "Main.lean") -> dict:
    return ok(server, rid, "lean_update", {**workspace(project), "path": path})


def _sync(server: Server, rid: int, project: Path, path: str) -> dict:
    """``lean_sync`` waits for Lean's diagnostics, so the fake has seen the edit."""
    return ok(server, rid, "lean_sync", {**workspace(project), "path": path})


def _lean(server: Server, rid: int, project: Path) -> dict:
    stats = ok(server, rid, "beam_stats", {})
    (entry,) = [w for w in stats["workspaces"] if w["root"] == str(project)]
    return dict(entry["lean"])


def _same_stamp(path: Path, before: os.stat_result) -> None:
    """Put the old mtime back: only size, inode and ctime can tell the files apart."""
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_same_second_same_size_edit_is_seen(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    main = project / "Main.lean"
    first = _update(server, 1, project)
    assert _update(server, 2, project)["changed"] is False
    before = main.stat()
    main.write_text("def answerA : Nat := 43\n")  # same size, same second
    _same_stamp(main, before)
    second = _update(server, 3, project)
    assert second["changed"] is True and second["version"] == first["version"] + 1
    assert _update(server, 4, project)["changed"] is False


def test_edit_through_a_rename_is_seen(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    main = project / "Main.lean"
    first = _update(server, 1, project)
    before = main.stat()
    staged = project / "Main.lean.tmp"
    staged.write_text("def answerB : Nat := 42\n")
    _same_stamp(staged, before)
    os.replace(staged, main)
    second = _update(server, 2, project)
    assert second["changed"] is True and second["version"] == first["version"] + 1


def test_unchanged_file_is_not_read_again(tmp_path: Path) -> None:
    path = tmp_path / "A.lean"
    path.write_text("def a : Nat := 1\n")
    reads: list[int] = []

    def reader(last: bytes | None) -> tuple[bytes, None]:
        reads.append(1)
        return path.read_bytes(), None

    settled = SourceCache(window_ns=0)  # no racy window: the fingerprint alone decides
    first = settled.read(str(path), reader)
    assert settled.read(str(path), reader) is first and len(reads) == 1
    before = path.stat()
    path.write_text("def a : Nat := 2\n")
    _same_stamp(path, before)  # ctime still moved
    assert settled.read(str(path), reader).data == b"def a : Nat := 2\n" and len(reads) == 2


def test_a_file_modified_just_before_its_read_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "A.lean"
    path.write_text("def a : Nat := 1\n")
    cache = SourceCache()  # the default window: a file written a moment ago is racy
    cache.read(str(path), lambda last: (path.read_bytes(), None))
    cache.read(str(path), lambda last: (path.read_bytes(), None))
    assert cache.counts.reads == 2 and cache.counts.racy_reads == 1 and cache.counts.hits == 0


TEXT = "".join(f"def d{i} : Nat := {i} -- 𝔸{i}é\n" for i in range(200))


def _edits(text: str) -> list[tuple[str, str]]:
    lines = text.split("\n")
    middle = [*lines[:100], "def fresh : Nat := 7 -- 😀 mid", *lines[100:]]
    return [
        ("one line changed after a surrogate pair", text.replace("𝔸57é", "𝔸57éé", 1)),
        ("line inserted in the middle", "\n".join(middle)),
        ("line deleted", "\n".join(middle[:10] + middle[11:])),
        ("edit at the start", "-- top\n" + "\n".join(middle[:10] + middle[11:])),
        ("tail appended", "-- top\n" + "\n".join(middle[:10] + middle[11:]) + "def z := 1\n"),
    ]


def test_edits_go_to_lean_as_ranges_that_rebuild_the_file(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.log"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), FAKE_LEAN_STRICT_EDITS="1")
    big = project / "Big.lean"
    big.write_text(TEXT)
    _update(server, 1, project, "Big.lean")
    rid = 10
    for what, text in _edits(big.read_text()):
        big.write_text(text)
        rid += 1
        assert _sync(server, rid, project, "Big.lean")["version"] == rid - 9, what
    checks = [entry for entry in request_log(log) if "didChange" in entry]
    assert [entry["matchesFile"] for entry in checks] == [True] * 5, checks
    counts = _lean(server, 99, project)
    assert counts["incremental_sends"] == 5 and counts["full_text_sends"] == 1, counts
    big.write_text("def other : Nat := 1\n")  # most of the file replaced: the whole text
    assert _update(server, 100, project, "Big.lean")["changed"] is True
    after = _lean(server, 101, project)
    assert after["full_text_sends"] == 2 and after["incremental_sends"] == 5, after
    assert after["workers_started"] == 1 and after["bytes_sent"] > len(TEXT.encode())


def test_crlf_file_edits_match(servers: list[Server], project: Path, tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), FAKE_LEAN_STRICT_EDITS="1")
    main = project / "Main.lean"
    body = "".join(f"def c{i} : Nat := {i}\r\n" for i in range(50))
    main.write_bytes(body.encode())
    _update(server, 1, project)
    main.write_bytes(body.replace("c20 ", "c20x ").encode())
    assert _sync(server, 2, project, "Main.lean")["version"] == 2
    checks = [entry for entry in request_log(log) if "didChange" in entry]
    assert [entry["matchesFile"] for entry in checks] == [True], checks


def test_a_header_change_counts_a_worker_start(servers: list[Server], project: Path) -> None:
    server = fake_server(servers)
    main = project / "Main.lean"
    main.write_text("import Std\n\n" + TEXT)
    _update(server, 1, project)
    first = _lean(server, 2, project)
    assert first["workers_started"] == 1 and first["header_loads"] == 1, first
    main.write_text("import Std\nimport Lean\n\n" + TEXT)
    _update(server, 3, project)
    second = _lean(server, 4, project)
    assert second["workers_started"] == 2 and second["header_loads"] == 2, second
    assert second["incremental_sends"] == 1 and second["rss_bytes"] >= 0


PROOF = (
    "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n"
    "  constructor\n"
    "  exact hp\n"
    "  exact hq\n"
)


def test_probes_reuse_one_worker_and_send_only_ranges(
    servers: list[Server], project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "requests.log"
    server = fake_server(servers, FAKE_LEAN_REQUEST_LOG=str(log), FAKE_LEAN_STRICT_EDITS="1")
    (project / "Main.lean").write_text(TEXT + PROOF)
    ws = {**workspace(project), "path": "Main.lean"}
    version = _sync(server, 1, project, "Main.lean")["version"]
    first = TEXT.count("\n")
    for rid, (line, text) in enumerate([(1, "skip"), (2, "exact hp"), (3, "exact hq")] * 2, 10):
        where = {**ws, "version": version, "line": first + line, "character": 2}
        ok(server, rid, "lean_run_at", {**where, "text": text})
    counts = _lean(server, 50, project)
    # the document's worker and one scratch worker; every probe after the first is a range edit
    assert counts["workers_started"] == 2 and counts["full_text_sends"] == 2, counts
    assert counts["incremental_sends"] == 5, counts


def test_a_retargeted_symlink_is_followed_by_the_next_query(
    servers: list[Server], project: Path
) -> None:
    """A query names `Link.lean`; between two queries the link moves from A.lean to B.lean (a
    file with the same size and times): the second query answers for B.lean."""
    (project / "A.lean").write_text("def alpha : Nat := 1\n")
    (project / "B.lean").write_text("def bravo : Nat := 2\n")
    before = (project / "A.lean").stat()
    os.utime(project / "B.lean", ns=(before.st_atime_ns, before.st_mtime_ns))
    link = project / "Link.lean"
    link.symlink_to("A.lean")
    server = fake_server(servers)
    at = {**workspace(project), "path": "Link.lean", "line": 0, "character": 5}
    first = ok(server, 1, "lean_hover", at)
    assert "alpha" in str(first) and "bravo" not in str(first), first
    staged = project / "Link.tmp"
    staged.symlink_to("B.lean")
    os.replace(staged, link)
    second = ok(server, 2, "lean_hover", at)
    assert "bravo" in str(second), second
