"""strace for tests that count system calls: its path, or a skip where it cannot trace (a
failure under CI, which installs it: `.ci/run`)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def strace_or_skip(*options: str) -> str:
    """strace's path, once it has traced `true` with these options (e.g. `--seccomp-bpf`)."""
    path = shutil.which("strace")
    works = path is not None and (
        subprocess.run(
            [path, "-f", "-qq", *options, "-o", os.devnull, "true"], check=False
        ).returncode
        == 0
    )
    if not works:
        if os.environ.get("CI"):
            pytest.fail("strace is needed in CI (.ci/run installs it)")
        pytest.skip("strace is missing or cannot trace here")
    assert path is not None
    return path
