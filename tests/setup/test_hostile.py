"""Hostile input and odd states for setup, remove, uninstall, list, prune and doctor: every one
ends in a clean result or a categorized error, never a traceback, and never a false report
(real installs, real processes, real files under a temporary HOME)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.runtime.clienv import client_env, dev_command, run
from tests.runtime.trees import clone_runtime
from tests.setup.conftest import Beam


def deep_json(depth: int = 50_000) -> str:
    return '{"projects": ' + '{"a": ' * depth + "1" + "}" * depth + "}\n"


def deep_toml(depth: int = 50_000) -> str:
    return "model = " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_a_deeply_nested_config_is_a_clean_error_everywhere(beam: Beam, client: str) -> None:
    beam.setup_json("--all", "--yes")
    path = beam.config(client)
    path.write_text(deep_json() if client == "claude-code" else deep_toml())
    for args in (("runtime", "list"), ("runtime", "prune", "--keep-latest", "0")):
        done = beam.beam(*args, "--json")
        assert "Traceback" not in done.stderr and done.code == 0, (args, done.stderr)
    done = beam.beam("runtime", "list", "--json")
    (current,) = done.json()["runtimes"]
    assert current["referenced_by"] == []  # the text names no runtime id: nothing blocked
    doctor = beam.beam("doctor", "--json")
    assert "Traceback" not in doctor.stderr and doctor.stdout, doctor.stderr
    (row,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == f"{client} config"]
    assert row["status"] == "warn" and str(path) in row["detail"], row
    assert "nested" in row["detail"], row
    for args in (("setup", client), ("remove", client), ("uninstall",)):
        done = beam.beam(*args, "--yes", "--json")
        assert "Traceback" not in done.stderr, (args, done.stderr)
        error = done.error()
        assert done.code == 1 and error["category"] == "configInvalid", (args, error)
        assert str(path) in error["message"] and "nested" in error["message"]
    assert beam.root.is_dir()


def test_uninstall_a_root_whose_name_is_250_bytes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / ("r" * 250)
    env = client_env(home)
    argv = [dev_command("lean-beam"), "install", "--install-root", str(root), "--json"]
    done = run([*argv, "--bin-dir", str(home / ".local" / "bin")], env)
    assert done.code == 0, done.stderr
    wrapper = str(root / "bin" / "lean-beam")
    assert run([wrapper, "setup", "codex", "--yes"], env).code == 0
    done = run([wrapper, "uninstall", "--yes", "--json"], env)
    assert done.code == 0, done.stderr
    assert done.json()["root"] == "removed"
    assert sorted(os.listdir(tmp_path)) == ["home"]  # no renamed copy of the root left


def test_recovery_clears_a_stray_journal_temporary(beam: Beam) -> None:
    done = beam.beam("setup", "codex", "--yes", BEAM_SETUP_FAILPOINT="journal-temp")
    assert done.code == -signal.SIGKILL, done
    setup_dir = beam.root / "state" / "setup"
    strays = [p.name for p in setup_dir.iterdir() if p.name.startswith(".journal.")]
    assert len(strays) == 1 and strays[0].endswith(".tmp"), strays
    assert not (setup_dir / "journal.json").exists()
    (setup_dir / ".journal.999999.tmp").write_text("{half")  # another killed run's leftover
    body = beam.setup_json("codex", "--yes")
    assert body["changes"][0]["action"] == "created"
    assert not [p for p in setup_dir.iterdir() if p.name.startswith(".journal.")]


def _without_dac(
    beam: Beam, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`lean-beam ARGS` as root without the capabilities that ignore permission bits."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to drop CAP_DAC_OVERRIDE")
    bounding = "--bounding-set=-dac_override,-dac_read_search,-fowner"
    return subprocess.run(
        [setpriv, bounding, str(beam.root / "bin" / "lean-beam"), *args],
        env=beam.env(),
        cwd=cwd or beam.home,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _denied(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    error: dict[str, object] = json.loads(done.stderr)["error"]
    return error


def test_permission_errors_name_the_directory_that_refused(beam: Beam, tmp_path: Path) -> None:
    gemini = beam.home / ".gemini"
    gemini.mkdir(mode=0o555)
    error = _denied(_without_dac(beam, "setup", "gemini", "--yes", "--json"))
    assert error["category"] == "setupFailed", error
    assert f"permission denied on {gemini}" in str(error["message"]), error
    assert f"chmod u+w {gemini}" in str(error["fix"]), error
    gemini.chmod(0o755)
    skills = beam.home / ".claude" / "skills"
    skills.mkdir(parents=True, mode=0o555)
    error = _denied(_without_dac(beam, "setup", "claude-code", "--yes", "--json"))
    assert f"permission denied on {skills}" in str(error["message"]), error
    skills.chmod(0o755)
    setup_dir = beam.root / "state" / "setup"
    setup_dir.mkdir(parents=True, exist_ok=True)
    setup_dir.chmod(0o555)
    error = _denied(_without_dac(beam, "setup", "codex", "--yes", "--json"))
    assert f"permission denied on {setup_dir}" in str(error["message"]), error
    setup_dir.chmod(0o755)
    parent = beam.root.parent
    parent.chmod(0o555)
    try:
        error = _denied(_without_dac(beam, "uninstall", "--yes", "--json"))
    finally:
        parent.chmod(0o755)
    assert error["category"] == "permissionDenied", error
    assert f"permission denied on {parent}" in str(error["message"]), error
    assert beam.root.is_dir()


def test_doctor_during_a_prune_reports_no_false_invalid_runtime(beam: Beam) -> None:
    """Doctor checks the runtimes one after another while a prune removes them: a runtime that
    vanishes in between was removed, not broken."""
    old = [
        clone_runtime(
            beam.root, beam.runtime_id, variant=f"v{i}", created_at=f"20{10 + i}-01-01T00:00:00Z"
        )
        for i in range(10)
    ]
    prune = beam.popen("runtime", "prune", "--keep-latest", "0", "--yes", "--json")
    false_invalid: list[dict[str, object]] = []
    runs = 0
    try:
        while prune.poll() is None or runs == 0:
            runs += 1
            done = beam.beam("doctor", "--json")
            assert done.stdout, done.stderr
            rows = json.loads(done.stdout)["checks"]
            false_invalid += [
                r for r in rows if r["section"] == "runtimes" and r["status"] == "fail"
            ]
    finally:
        out, err = prune.communicate(timeout=120)
    assert prune.returncode == 0, err
    assert sorted(json.loads(out)["removed"]) == sorted(old)
    assert false_invalid == [], false_invalid


CAS_WRITER = r"""
import json, os, sys, time
path, stop, ready = sys.argv[1:4]
last, reverts, writes = 0, [], 0
while not os.path.exists(stop):
    doc = json.loads(open(path, encoding="utf-8").read())
    seen = doc.get("counter", 0)
    if seen < last:
        reverts.append([seen, last])
    last += 1
    doc["counter"] = last
    tmp = f"{path}.client-tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(doc, indent=2))
    os.replace(tmp, path)  # how clients replace their own file
    writes += 1
    if writes == 1:
        open(ready, "w").close()
    time.sleep(0.05)  # twenty rewrites a second: far busier than a real client
print(json.dumps({"reverts": reverts, "writes": writes}))
"""


def test_setup_and_remove_never_revert_a_clients_concurrent_rewrite(
    beam: Beam, tmp_path: Path
) -> None:
    import sys

    config = beam.config("claude-code")
    config.write_text('{\n  "counter": 0\n}\n')
    stop, ready = tmp_path / "stop", tmp_path / "ready"
    writer = subprocess.Popen(
        [sys.executable, "-c", CAS_WRITER, str(config), str(stop), str(ready)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert time.monotonic() < deadline and writer.poll() is None, "writer never started"
            time.sleep(0.01)
        outcomes = []
        for _ in range(10):
            for command in ("setup", "remove"):
                done = beam.beam(command, "claude-code", "--yes", "--json")
                assert "Traceback" not in done.stderr, done.stderr
                if done.code != 0:
                    assert done.error()["category"] == "configChanged", done.stderr
                outcomes.append((command, done.code))
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=60)
    report = json.loads(out)
    assert report["writes"] > 20, report
    assert report["reverts"] == [], (report, outcomes)
    assert sum(1 for _, code in outcomes if code == 0) >= len(outcomes) // 2, outcomes
    assert json.loads(config.read_text())["counter"] == report["writes"]
