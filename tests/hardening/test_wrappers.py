"""Generated shell code is injection-proof: hostile roots, hostile `current` links."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from beam_install.wrappers import wrapper_text
from beam_runtime.layout import COMMANDS
from tests.runtime.clienv import client_env, dev_command, run

HOSTILE = "beam\n$(touch PWNED-dollar)\n`touch PWNED-tick`'; touch PWNED-quote; '\"$HOME\" x"


def _installed(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / HOSTILE
    done = run(
        [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(home / ".local" / "bin"),
            "--json",
        ],
        client_env(home),
        cwd=tmp_path,
    )
    assert done.code == 0, done.stderr
    return home, root


def _pwned(tmp_path: Path) -> list[Path]:
    return [p for p in tmp_path.rglob("PWNED*")] + list(Path.cwd().glob("PWNED*"))


def test_a_root_full_of_shell_syntax_stays_data(tmp_path: Path) -> None:
    home, root = _installed(tmp_path)
    for command in COMMANDS:
        wrapper = root / "bin" / command
        text = wrapper.read_text()
        assert text.count(HOSTILE.split("\n")[0]) >= 1
        result = subprocess.run(
            ["sh", "-n", str(wrapper)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
    done = run(
        [str(root / "bin" / "lean-beam"), "version", "--json"], client_env(home), cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert done.json()["install_root"] == str(root)
    assert _pwned(tmp_path) == []


@pytest.mark.parametrize(
    "target",
    [
        "versions/../../../../bin",
        "versions/x/../../..",
        "versions/",
        "versions/..",
        "versions/a b",
        "versions/id;touch PWNED-semi",
        "versions/$(touch PWNED-sub)",
        "/etc",
        "elsewhere/versions/x",
    ],
)
def test_current_must_name_exactly_one_runtime(tmp_path: Path, target: str) -> None:
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    wrapper = root / "bin" / "lean-beam"
    wrapper.write_text(wrapper_text(root, "lean-beam"))
    wrapper.chmod(0o755)
    os.symlink(target, root / "current")
    done = subprocess.run(
        [str(wrapper), "version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=30,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "no installed runtime" in done.stderr
    assert _pwned(tmp_path) == []


def test_only_known_commands_are_written() -> None:
    with pytest.raises(ValueError):
        wrapper_text(Path("/r"), "lean-beam\nrm -rf /")
