"""``lean_search`` sees every change to the workspace's files, made as fast as an agent makes them.

Through a real server, with change notices (inotify) and without them
(``LEAN_BEAM_SEARCH_WATCH=0``): files added, removed, renamed, moved between directories,
replaced by a rename, whole directories renamed, and files edited in place, including an edit
that keeps the file's size and modification time. Workspaces are larger than the number of
files one search re-stats in turn, so only the mechanism under test can find a change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.broker.fake import fake_server, ok, workspace
from tests.mcp.helpers import Server
from tests.support.projects import lean_project

FILES_PER_DIR = 150
DIRS = 3
WATCH = {"watched": "1", "unwatched": "0"}


def _tree(tmp_path: Path) -> Path:
    files = {
        f"Part{d}/F{n}.lean": f"def filler_{d}_{n} : Nat := {n}\n"
        for d in range(DIRS)
        for n in range(FILES_PER_DIR)
    }
    return lean_project(tmp_path / "proj", files)


def _server(servers: list[Server], tmp_path: Path, watch: str) -> Server:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "LEAN_BEAM_SEARCH_WATCH": watch}
    return fake_server(servers, **env)


class Searcher:
    def __init__(self, server: Server, root: Path) -> None:
        self.server, self.root, self.rid = server, root, 0

    def __call__(self, name: str) -> list[tuple[str, str]]:
        """The hits named exactly ``name`` (other names start with it)."""
        self.rid += 1
        found = ok(self.server, self.rid, "lean_search", {**workspace(self.root), "query": name})
        assert found["complete"] is True, found
        return [(hit["name"], hit["path"]) for hit in found["hits"] if hit["name"] == name]


@pytest.mark.parametrize("watch", list(WATCH))
def test_adds_removes_and_renames_in_one_second_are_seen_by_the_next_search(
    servers: list[Server], tmp_path: Path, watch: str
) -> None:
    root = _tree(tmp_path)
    search = Searcher(_server(servers, tmp_path, WATCH[watch]), root)
    assert search("filler_1_7") == [("filler_1_7", "Part1/F7.lean")]
    (root / "Part1" / "New.lean").write_text("def fresh_one : Nat := 1\n")
    assert search("fresh_one") == [("fresh_one", "Part1/New.lean")]
    os.rename(root / "Part1" / "New.lean", root / "Part1" / "Renamed.lean")
    assert search("fresh_one") == [("fresh_one", "Part1/Renamed.lean")]
    os.rename(root / "Part1" / "Renamed.lean", root / "Part2" / "Moved.lean")
    assert search("fresh_one") == [("fresh_one", "Part2/Moved.lean")]
    (root / "Part2" / "Moved.lean").unlink()
    assert search("fresh_one") == []
    (root / "Part0" / "Deep" / "Er").mkdir(parents=True)
    (root / "Part0" / "Deep" / "Er" / "In.lean").write_text("def deep_one : Nat := 1\n")
    assert search("deep_one") == [("deep_one", "Part0/Deep/Er/In.lean")]
    os.rename(root / "Part0" / "Deep", root / "Part0" / "Shallow")
    assert search("deep_one") == [("deep_one", "Part0/Shallow/Er/In.lean")]
    staged = root / "Part0" / "F3.lean.tmp"  # an editor's save: write aside, rename over
    staged.write_text("def replaced_three : Nat := 3\n")
    os.replace(staged, root / "Part0" / "F3.lean")
    assert search("replaced_three") == [("replaced_three", "Part0/F3.lean")]
    assert search("filler_0_3") == []
    os.rename(root / "Part2", root / "Gone")
    (root / "Gone" / "F1.lean").unlink()
    assert search("filler_2_1") == []
    assert search("filler_2_2") == [("filler_2_2", "Gone/F2.lean")]


def test_an_in_place_edit_is_seen_by_the_next_search(servers: list[Server], tmp_path: Path) -> None:
    """With change notices, an edit that no directory reflects is found at once."""
    root = _tree(tmp_path)
    search = Searcher(_server(servers, tmp_path, "1"), root)
    assert search("filler_2_140") == [("filler_2_140", "Part2/F140.lean")]
    for round_ in range(5):
        name = f"edited_{round_}"
        (root / "Part2" / "F140.lean").write_text(f"def {name} : Nat := 1\n")  # truncate, write
        assert search(name) == [(name, "Part2/F140.lean")], round_


def test_without_notices_an_in_place_edit_is_seen_within_the_rolling_bound(
    servers: list[Server], tmp_path: Path
) -> None:
    """The documented bound: every search re-stats the next 200 files in turn, so an edit no
    directory reflects is found within ceil(files / 200) searches."""
    root = _tree(tmp_path)
    search = Searcher(_server(servers, tmp_path, "0"), root)
    assert search("filler_0_0")
    (root / "Part1" / "F77.lean").write_text("def edited_unwatched : Nat := 1\n")
    bound = -(-(DIRS * FILES_PER_DIR) // 200)
    seen = [bool(search("edited_unwatched")) for _ in range(bound)]
    assert seen[-1], seen


@pytest.mark.parametrize("watch", list(WATCH))
def test_an_edit_keeping_size_and_modification_time_is_seen(
    servers: list[Server], tmp_path: Path, watch: str
) -> None:
    """Same size, the modification time set back to the very nanosecond: the change time and
    the racy window still give it away."""
    root = _tree(tmp_path)
    target = root / "Part0" / "F9.lean"
    target.write_text("def alpha_nine : Nat := 1\n")
    search = Searcher(_server(servers, tmp_path, WATCH[watch]), root)
    assert search("alpha_nine") == [("alpha_nine", "Part0/F9.lean")]
    before = target.stat()
    target.write_text("def gamma_nine : Nat := 1\n")  # same length
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert search("gamma_nine") == [("gamma_nine", "Part0/F9.lean")]
    assert search("alpha_nine") == []
