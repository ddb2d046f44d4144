"""A fake elan installation made of the fake Lean toolchain's own executables.

`tests/fake_lean/bin/{lake,elan}` (see tests/fake_lean/README.md) are real programs run as real
subprocesses. `install_fake_elan` lays them out the way elan does (`<elan home>/bin/{elan,lake}`)
as symlinks: the fakes find their package through their real path, and lookups through PATH and
through `~/.elan/bin` are both exercised. `FAKE_LAKE_MODE=fail|hang` breaks the fake `lake`.
"""

from __future__ import annotations

from pathlib import Path

FAKE_BIN = Path(__file__).resolve().parents[1] / "fake_lean" / "bin"


def install_fake_elan(elan_home: Path, *, with_lake: bool = True, with_elan: bool = True) -> Path:
    """Link the fakes into `<elan_home>/bin` and return that bin directory."""
    bin_dir = elan_home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, wanted in (("lake", with_lake), ("elan", with_elan)):
        if wanted:
            (bin_dir / name).symlink_to(FAKE_BIN / name)
    return bin_dir
