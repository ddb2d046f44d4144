"""Resolving a tool's `path` against real directories: the root-prefix and NUL checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beam_runtime.broker.errors import BrokerError
from beam_runtime.broker.session.paths import resolve_source


@pytest.fixture
def base(tmp_path: Path) -> Path:
    for name in ("proj", "proj2", "projX"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "A.lean").write_text("def a := 1\n")
    return Path(os.path.realpath(tmp_path))


def reason(path: str, root: str) -> str:
    with pytest.raises(BrokerError) as caught:
        resolve_source(root, path)
    assert caught.value.code == "invalidInput"
    assert caught.value.data is not None
    return str(caught.value.data["reason"])


@pytest.mark.parametrize("path", ["../proj2/A.lean", "../projX/A.lean", "sub/../../proj2/A.lean"])
def test_a_sibling_sharing_the_root_prefix_is_outside(base: Path, path: str) -> None:
    assert reason(path, str(base / "proj")) == "pathEscapesRoot"


def test_the_root_itself_and_files_inside_resolve(base: Path) -> None:
    root = str(base / "proj")
    assert resolve_source(root, "A.lean").display == "A.lean"
    assert resolve_source(root, "./x/../A.lean").display == "A.lean"
    sibling = resolve_source(root, str(base / "proj2" / "A.lean"))  # absolute: allowed anywhere
    assert sibling.display == str(base / "proj2" / "A.lean")


@pytest.mark.parametrize("path", ["A.lean\x00", "\x00", "A\x00.lean"])
def test_a_nul_byte_is_invalid_input(base: Path, path: str) -> None:
    assert reason(path, str(base / "proj")) == "invalidPath"


def test_an_absolute_path_with_a_nul_byte_is_invalid_input(base: Path) -> None:
    assert reason(f"{base}/proj/A.lean\x00", str(base / "proj")) == "invalidPath"
