"""Fake `lake` and `elan` executables (POSIX sh) standing in for a Lean toolchain.

They are real programs run as real subprocesses. `install_fake_elan` lays them out the way elan
does (`<elan home>/bin/{elan,lake}`), so lookups through PATH and through `~/.elan/bin` are both
exercised.
"""

from __future__ import annotations

import shutil
from pathlib import Path

FAKE_BIN = Path(__file__).resolve().parent / "bin"


def install_fake_elan(elan_home: Path, *, with_lake: bool = True, with_elan: bool = True) -> Path:
    """Copy the fakes into `<elan_home>/bin` and return that bin directory."""
    bin_dir = elan_home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    names = [n for n, wanted in (("lake", with_lake), ("elan", with_elan)) if wanted]
    for name in names:
        shutil.copy2(FAKE_BIN / name, bin_dir / name)
        (bin_dir / name).chmod(0o755)
    return bin_dir
