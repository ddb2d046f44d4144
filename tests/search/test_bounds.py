"""``lean_search`` never stalls the server, never waits past ``wait_ms`` and never blows up.

Through a real server: sources and the index cache on a FUSE mount whose reads or stats hang,
another process holding the index's writer lock, a query far over the size limit, a source
with a huge line, a corrupt index file, and EOF while a search is pending.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.broker.fake import err, fake_server, ok, workspace
from tests.mcp.helpers import Server, call, modern, structured
from tests.support.projects import lean_project
from tests.support.slowfs import slow_mount

MAIN = "namespace Demo\ntheorem add_zero_right (n : Nat) : n + 0 = n := by simp\nend Demo\n"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "ELAN_HOME": str(tmp_path / "elan")}


def _answers(server: Server, ids: set[int], timeout: float = 20.0) -> tuple[dict, list[int]]:
    """The answers to ``ids`` (by id) and the order they came in."""
    answers: dict[int, dict] = {}
    order: list[int] = []
    deadline = time.monotonic() + timeout
    while len(answers) < len(ids):
        msg = server.read(max(0.01, deadline - time.monotonic()))
        if msg.get("id") in ids and "method" not in msg:
            answers[msg["id"]] = msg
            order.append(msg["id"])
    return answers, order


def _stdout_closes(server: Server, seconds: float) -> bool:
    """EOF on stdin; True when the server's stdout closes within ``seconds``."""
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            if not server.lines.get(timeout=left):
                return True
        except Exception:  # queue.Empty
            return False
    return False


def _source_project(tmp_path: Path) -> Path:
    root = lean_project(tmp_path / "source", {"Main.lean": MAIN})
    (root / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    dep = root / ".lake" / "packages" / "dep" / "Dep"
    dep.mkdir(parents=True)
    (dep / "List.lean").write_text("theorem dep_lemma : True := trivial\n")
    return root


@pytest.mark.parametrize(
    "hang",
    [
        {"hang_read": ("lake-manifest.json",)},
        {"hang_stat": (".lake/packages/dep",)},
    ],
    ids=["manifest-read", "package-stat"],
)
def test_sources_on_a_hung_mount_never_block_the_server(
    servers: list[Server], tmp_path: Path, hang: dict
) -> None:
    """The manifest's read or a package directory's stat never finishes: other requests are
    answered meanwhile, the search answers within its wait, and EOF still closes stdout."""
    with slow_mount(_source_project(tmp_path), tmp_path / "mnt", **hang) as root:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5", **_env(tmp_path))
        args = {**workspace(root), "query": "add_zero"}
        server.send(call(1, "lean_search", args))  # the default wait_ms: 45 s
        server.send(modern(2, "tools/list"))
        answers, order = _answers(server, {1, 2})
        assert order[0] == 2, order  # tools/list did not wait for the hung file
        body = structured(answers[1])
        if "hang_read" in hang:  # no index key without the manifest: the read's timeout
            assert answers[1]["result"]["isError"], body
            assert body["code"] == "timeout" and body["data"]["phase"] == "read", body
            assert "lake-manifest.json" in body["message"] and body["data"]["fix"], body
        else:  # the hung dependency is skipped and named; the workspace's hits come back
            assert answers[1]["result"]["isError"] is False, body
            assert body["complete"] is False and body["reason"] == "unreadable", body
            assert body["unreadable"] == [".lake/packages/dep"], body
            assert body["hits"][0]["name"] == "Demo.add_zero_right", body
        again = server.ask(call(3, "lean_search", {**args, "wait_ms": 300}))
        assert again["result"]["structuredContent"], again
        assert _stdout_closes(server, 5.0), "stdout still open 5 s after EOF"


def test_a_cache_dir_on_a_hung_mount_answers_within_wait_ms(
    servers: list[Server], tmp_path: Path
) -> None:
    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN})
    cache = tmp_path / "cache-source"
    cache.mkdir()
    with slow_mount(cache, tmp_path / "cache", hang_stat=("beam",)) as mount:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5", XDG_CACHE_HOME=str(mount))
        args = {**workspace(root), "query": "add_zero", "wait_ms": 500}
        started = time.monotonic()
        server.send(call(1, "lean_search", args))
        server.send(modern(2, "tools/list"))
        answers, order = _answers(server, {1, 2})
        assert order[0] == 2, order
        assert time.monotonic() - started < 15  # not the old 600 s wait
        first = structured(answers[1])
        assert answers[1]["result"]["isError"] is False, first
        assert first["complete"] is False and first["reason"] == "indexing", first
        assert first["hits"] == [] and first["retry_after_ms"] > 0, first
        later = err(server, 3, "lean_search", {**args, "wait_ms": 5000})
        assert later["code"] == "timeout" and "search index" in later["message"], later
        assert later["data"]["fix"], later
        assert _stdout_closes(server, 5.0), "stdout still open 5 s after EOF"


def test_another_process_building_the_index_is_waited_for_only_up_to_wait_ms(
    servers: list[Server], tmp_path: Path
) -> None:
    from filelock import FileLock

    from beam_runtime.search.index import database_path
    from beam_runtime.search.sources import sources_of

    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN})
    env = _env(tmp_path)
    path = database_path(str(tmp_path / "cache" / "beam"), sources_of(str(root), env))
    path.parent.mkdir(parents=True)
    lock = FileLock(str(path) + ".lock")
    lock.acquire()  # another process is building this (still incomplete) index
    try:
        server = fake_server(servers, **env)
        args = {**workspace(root), "query": "add_zero"}
        found = ok(server, 1, "lean_search", {**args, "wait_ms": 500})
        assert found["complete"] is False and found["reason"] == "indexing", found
        assert found["hits"] == [] and found["retry_after_ms"] > 0, found
        assert server.ask(modern(2, "tools/list"))["result"]["tools"]
    finally:
        lock.release()
    done = ok(server, 3, "lean_search", {**args, "wait_ms": 20000})
    assert done["complete"] is True and "retry_after_ms" not in done, done
    assert done["hits"][0]["name"] == "Demo.add_zero_right", done


def test_eof_ends_the_server_while_a_search_waits_for_a_hung_source(
    servers: list[Server], tmp_path: Path
) -> None:
    source = lean_project(tmp_path / "source", {"Main.lean": MAIN, "Slow.lean": "def s := 1\n"})
    with slow_mount(source, tmp_path / "mnt", hang_read=("Slow.lean",)) as root:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="60", **_env(tmp_path))
        server.send(call(1, "lean_search", {**workspace(root), "query": "s", "wait_ms": 60000}))
        assert server.ask(modern(2, "tools/list"))["result"]["tools"]
        assert _stdout_closes(server, 5.0), "stdout still open 5 s after EOF"
    assert server.proc.wait(timeout=30) == 0


def test_a_source_whose_read_hangs_is_named_and_the_rest_is_indexed(
    servers: list[Server], tmp_path: Path
) -> None:
    source = lean_project(tmp_path / "source", {"Main.lean": MAIN, "Slow.lean": "def s := 1\n"})
    with slow_mount(source, tmp_path / "mnt", hang_read=("Slow.lean",)) as root:
        server = fake_server(servers, BEAM_READ_TIMEOUT_S="1.5", **_env(tmp_path))
        args = {**workspace(root), "query": "add_zero", "wait_ms": 20000}
        server.send(call(1, "lean_search", args))
        server.send(modern(2, "tools/list"))
        answers, order = _answers(server, {1, 2})
        assert order[0] == 2, order
        found = structured(answers[1])
        assert found["complete"] is False and found["reason"] == "unreadable", found
        assert found["unreadable"] == ["Slow.lean"], found
        assert found["hits"][0]["name"] == "Demo.add_zero_right", found
        assert _stdout_closes(server, 5.0), "stdout still open 5 s after EOF"


def test_eof_ends_the_server_during_a_first_build(servers: list[Server], tmp_path: Path) -> None:
    body = "".join(f"theorem t{n} (a b : Nat) : a + b = b + a := by omega\n" for n in range(40))
    files = {f"D{n % 20}/F{n}.lean": body for n in range(3000)}
    root = lean_project(tmp_path / "proj", files)
    server = fake_server(servers, **_env(tmp_path))
    found = ok(server, 1, "lean_search", {**workspace(root), "query": "t1", "wait_ms": 100})
    assert found["complete"] is False and found["reason"] == "indexing", found
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(timeout=5) == 0  # the build is not waited for


def test_a_huge_query_is_refused_at_once_and_blocks_nothing(
    servers: list[Server], tmp_path: Path
) -> None:
    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN})
    server = fake_server(servers, **_env(tmp_path))
    args = {**workspace(root), "wait_ms": 20000}
    server.send(call(1, "lean_search", {**args, "query": " ".join(["add"] * 20000)}))
    server.send(call(2, "lean_search", {**args, "query": "add_zero"}))
    answers, _ = _answers(server, {1, 2})
    refused = structured(answers[1])
    assert answers[1]["result"]["isError"] and refused["code"] == "invalidInput", refused
    assert "1000" in str(refused), refused  # the limit is named
    assert structured(answers[2])["hits"][0]["name"] == "Demo.add_zero_right"
    many = err(server, 3, "lean_search", {**args, "query": " ".join(f"w{n}" for n in range(40))})
    assert many["code"] == "invalidInput" and many["data"]["reason"] == "queryTooLong", many
    assert "32" in many["message"] and many["data"]["fix"], many
    # A repeated word counts once: 300 copies of two words fit the word limit.
    repeated = ok(server, 4, "lean_search", {**args, "query": "add zero " * 100})
    assert repeated["hits"][0]["name"] == "Demo.add_zero_right", repeated


def test_eof_after_a_giant_query_ends_the_server(servers: list[Server], tmp_path: Path) -> None:
    import psutil

    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN})
    server = fake_server(servers, **_env(tmp_path))
    assert ok(server, 1, "lean_search", {**workspace(root), "query": "add"})["hits"]
    process = psutil.Process(server.proc.pid)
    busy_from = sum(process.cpu_times()[:2])
    server.send(call(2, "lean_search", {**workspace(root), "query": " ".join(["add"] * 200000)}))
    # EOF once the server has either answered or worked on the query for a CPU second.
    deadline = time.monotonic() + 30
    while server.lines.empty() and sum(process.cpu_times()[:2]) - busy_from < 1.0:
        assert time.monotonic() < deadline, "neither an answer nor any work"
        time.sleep(0.05)
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.proc.wait(timeout=10) == 0


def test_a_source_with_a_huge_line_is_indexed(servers: list[Server], tmp_path: Path) -> None:
    """One 1 MB line with thousands of ``:=`` inside parentheses (a generated term)."""
    arguments = "(x := 1) " * 110_000
    big = f"theorem big_one {arguments}: True := trivial\ndef after_big : Nat := 1\n"
    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN, "Big.lean": big})
    server = fake_server(servers, **_env(tmp_path))
    found = ok(server, 1, "lean_search", {**workspace(root), "query": "after_big"})
    assert found["complete"] is True and found["hits"][0]["name"] == "after_big", found
    one = ok(server, 2, "lean_search", {**workspace(root), "query": "big_one"})
    assert one["hits"][0]["signature"].startswith("big_one (x := 1) (x := 1)"), one


def _index_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "beam" / "search").glob("*.sqlite3"))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty-header"])
def test_a_corrupt_index_is_rebuilt(servers: list[Server], tmp_path: Path, damage: str) -> None:
    root = lean_project(tmp_path / "proj", {"Main.lean": MAIN})
    env = _env(tmp_path)
    first = fake_server(servers, **env)
    assert ok(first, 1, "lean_search", {**workspace(root), "query": "add_zero"})["hits"]
    assert first.close()[0] == 0
    (index,) = _index_files(tmp_path)
    data = index.read_bytes()
    if damage == "garbage":
        index.write_bytes(os.urandom(len(data)))
    elif damage == "truncated":
        index.write_bytes(data[: len(data) // 3])
    else:
        index.write_bytes(b"\0" * 100 + data[100:])
    for extra in (Path(f"{index}-wal"), Path(f"{index}-shm")):
        extra.unlink(missing_ok=True)
    second = fake_server(servers, **env)
    found = ok(second, 1, "lean_search", {**workspace(root), "query": "add_zero"})
    assert found["complete"] is True, found
    assert [hit["name"] for hit in found["hits"]] == ["Demo.add_zero_right"], found
    assert ok(second, 2, "lean_search", {**workspace(root), "query": "add"})["hits"]
    code, stderr, _ = second.close()
    assert code == 0 and b"Traceback" not in stderr, stderr
