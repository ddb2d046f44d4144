"""``lean_search`` through a real server: workspace, package and toolchain sources, kept current.

The index lives under the user cache dir (``XDG_CACHE_HOME`` here); the toolchain's sources are
found under ``ELAN_HOME``. No Lean session is started for a search.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.fake import err, fake_server, ok, workspace
from tests.mcp.helpers import Server, call

MAIN = """\
namespace Demo
/-- Adding zero on the right. -/
theorem add_zero_right (n : Nat) :
    n + 0 = n := by simp
def double (n : Nat) : Nat := 2 * n
end Demo
"""
PACKAGE = (
    "theorem List.length_append_cons (xs ys : List α) (y : α) :\n"
    "    (xs ++ y :: ys).length = xs.length + ys.length + 1 := by simp\n"
)
CORE = "namespace Nat\ntheorem succ_ne_zero (n : Nat) : succ n ≠ 0 := nofun\nend Nat\n"


@pytest.fixture
def env(tmp_path: Path, project: Path) -> dict[str, str]:
    (project / "Main.lean").write_text(MAIN)
    dep = project / ".lake" / "packages" / "dep" / "Dep"
    dep.mkdir(parents=True)
    (dep / "List.lean").write_text(PACKAGE)
    core = tmp_path / "elan" / "toolchains" / "leanprover--lean4---v4.24.0" / "src" / "lean"
    (core / "Init").mkdir(parents=True)
    (core / "Init" / "Core.lean").write_text(CORE)
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "ELAN_HOME": str(tmp_path / "elan")}


def search(server: Server, root: Path, rid: int, query: str, **extra: object) -> dict:
    return ok(server, rid, "lean_search", {**workspace(root), "query": query, **extra})


def names(result: dict) -> list[str]:
    return [hit["name"] for hit in result["hits"]]


def test_hits_come_from_the_workspace_its_packages_and_the_toolchain(
    servers: list[Server], project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    server = fake_server(servers, **env)
    found = search(server, project, 1, "add zero")
    assert found["workspace"] == {"root": str(project)} and found["indexed_files"] == 3
    assert found["hits"][0] == {
        "name": "Demo.add_zero_right",
        "kind": "theorem",
        "signature": "add_zero_right (n : Nat) : n + 0 = n",
        "path": "Main.lean",
        "line": 3,
    }
    package = search(server, project, 2, "length append")["hits"]
    assert package[0]["name"] == "List.length_append_cons"
    assert package[0]["path"] == ".lake/packages/dep/Dep/List.lean" and package[0]["line"] == 1
    core = search(server, project, 3, "succ_ne_zero")["hits"]
    assert core[0]["name"] == "Nat.succ_ne_zero"
    assert core[0]["path"] == str(
        tmp_path
        / "elan"
        / "toolchains"
        / "leanprover--lean4---v4.24.0"
        / "src"
        / "lean"
        / "Init"
        / "Core.lean"
    )
    by_statement = search(server, project, 4, "xs.length")["hits"]
    assert names({"hits": by_statement}) == ["List.length_append_cons"]
    assert list((tmp_path / "cache" / "beam" / "search").glob("*.sqlite3"))
    assert ok(server, 5, "beam_version", {})["runtime_active"] is False  # no Lean was started


def test_kind_limit_and_exact_names_first(
    servers: list[Server], project: Path, env: dict[str, str]
) -> None:
    (project / "More.lean").write_text(
        "def Demo.double_twice (n : Nat) : Nat := 4 * n\n"
        "theorem Demo.double_pos (n : Nat) : 0 < double n + 1 := by omega\n"
    )
    server = fake_server(servers, **env)
    assert names(search(server, project, 1, "Demo.double"))[0] == "Demo.double"
    defs = search(server, project, 2, "double", kind="def")
    assert sorted(names(defs)) == ["Demo.double", "Demo.double_twice"]
    assert len(search(server, project, 3, "double", limit=1)["hits"]) == 1
    theorems = search(server, project, 4, "double", kind="theorem")
    assert names(theorems) == ["Demo.double_pos"]


def test_edits_new_and_deleted_files_are_seen_by_the_next_query(
    servers: list[Server], project: Path, env: dict[str, str]
) -> None:
    server = fake_server(servers, **env)
    assert search(server, project, 1, "triple")["hits"] == []
    (project / "Extra.lean").write_text("def triple (n : Nat) : Nat := 3 * n\n")
    found = search(server, project, 2, "triple")
    assert names(found) == ["triple"] and found["indexed_files"] == 4
    (project / "Main.lean").write_text(MAIN.replace("double", "quadruple"))
    assert names(search(server, project, 3, "double")) == []
    assert names(search(server, project, 4, "quadruple")) == ["Demo.quadruple"]
    (project / "Extra.lean").unlink()
    gone = search(server, project, 5, "triple")
    assert gone["hits"] == [] and gone["indexed_files"] == 3


def test_first_build_reports_progress_and_a_new_manifest_replaces_the_index(
    servers: list[Server], project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    server = fake_server(servers, **env)
    args = {**workspace(project), "query": "double"}
    server.send(call(1, "lean_search", args, call_meta={"progressToken": "s"}))
    reply, before = server.read_until(1)
    assert reply["result"]["isError"] is False
    progress = [
        m["params"]["message"] for m in before if m.get("method") == "notifications/progress"
    ]
    assert any("building the search index: 3/3 files" in line for line in progress), progress
    server.send(call(2, "lean_search", args, call_meta={"progressToken": "t"}))
    reply, before = server.read_until(2)
    assert not any("building" in str(m) for m in before)
    store = tmp_path / "cache" / "beam" / "search"
    assert len(list(store.glob("*.sqlite3"))) == 1
    (project / "lake-manifest.json").write_text('{"version": 7, "packages": []}\n')
    before_files = set(store.glob("*.sqlite3"))
    assert names(search(server, project, 3, "double")) == ["Demo.double"]
    after_files = set(store.glob("*.sqlite3"))
    assert len(after_files) == 1 and after_files != before_files  # the old key was pruned


def test_two_servers_share_one_index(
    servers: list[Server], project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    first, second = fake_server(servers, **env), fake_server(servers, **env)
    args = {**workspace(project), "query": "add_zero"}
    for server in (first, second):
        server.send(call(1, "lean_search", args))
    for server in (first, second):
        reply = server.read_until(1)[0]
        assert reply["result"]["isError"] is False, reply
        assert reply["result"]["structuredContent"]["hits"][0]["name"] == "Demo.add_zero_right"
    assert len(list((tmp_path / "cache" / "beam" / "search").glob("*.sqlite3"))) == 1


def test_a_query_without_words_is_an_error_with_a_fix(
    servers: list[Server], project: Path, env: dict[str, str]
) -> None:
    server = fake_server(servers, **env)
    error = err(server, 1, "lean_search", {**workspace(project), "query": " + = "})
    assert error["code"] == "invalidParams" and error["data"]["fix"]
    bad = err(server, 2, "lean_search", {**workspace(project), "query": "x", "kind": "lemmas"})
    assert bad["code"] == "invalidInput"
