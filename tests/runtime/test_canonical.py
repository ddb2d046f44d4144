"""The kernel's canonical names agree with `os.path.realpath` on real trees of links."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beam_mcp.errors import ToolError
from beam_mcp.workspace import canonical_root
from beam_runtime import canonical
from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.paths import resolve_source


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project reached through absolute, relative and chained links, with odd names."""
    real = tmp_path / "real dir" / "prøject"
    (real / "Sub").mkdir(parents=True)
    (real / "lean-toolchain").write_text("leanprover/lean4:v4.24.0\n")
    (real / "Main.lean").write_text("def x := 1\n")
    (real / "Sub" / "A.lean").write_text("def a := 1\n")
    (tmp_path / "abs-link").symlink_to(real)
    (tmp_path / "rel-link").symlink_to(Path("real dir") / "prøject")
    (tmp_path / "chain").symlink_to(tmp_path / "abs-link")
    (real / "Sub" / "link.lean").symlink_to(Path("..") / "Main.lean")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    return tmp_path


SPELLINGS = [
    "real dir/prøject",
    "abs-link",
    "rel-link",
    "chain",
    "chain/Sub/..",
    "real dir/../chain/Sub/A.lean",
    "abs-link/Sub/link.lean",
    "rel-link/Main.lean",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_existing_paths_match_realpath(tree: Path, spelling: str) -> None:
    path = str(tree / spelling)
    found = canonical.existing(path)
    assert found is not None
    assert found[0] == os.path.realpath(path)


@pytest.mark.parametrize("spelling", ["nowhere", "dangling", "real dir/prøject/Main.lean/x"])
def test_missing_paths_are_left_to_realpath(tree: Path, spelling: str) -> None:
    assert canonical.existing(str(tree / spelling)) is None


@pytest.mark.parametrize("kernel", [True, False], ids=["proc", "realpath"])
def test_roots_and_sources_resolve_the_same_either_way(
    tree: Path, kernel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not kernel:
        monkeypatch.setattr(canonical, "_O_PATH", 0)  # as on a system without O_PATH
    real = os.path.realpath(tree / "real dir" / "prøject")
    for spelling in ("abs-link", "rel-link", "chain", "chain/Sub/.."):
        assert canonical_root(str(tree / spelling)) == real
    source = resolve_source(real, "Sub/link.lean")
    assert (source.abs_path, source.display) == (os.path.join(real, "Main.lean"), "Main.lean")
    assert resolve_source(real, str(tree / "chain" / "Sub" / "A.lean")).display == "Sub/A.lean"
    with pytest.raises(ToolError) as not_dir:
        canonical_root(str(tree / "chain" / "Main.lean"))
    assert not_dir.value.data["reason"] == "notDirectory"
    with pytest.raises(ToolError) as missing:
        canonical_root(str(tree / "dangling"))
    assert missing.value.data["reason"] == "notFound"
    assert canonical_root(str(tree / "dangling"), allow_vanished=True) == str(tree / "nowhere")
    with pytest.raises(BrokerError) as not_file:
        resolve_source(real, "Sub")
    assert not_file.value.data["reason"] == "fileNotFound"
