"""`lean-beam doctor` on real installs, with fake lake/elan and real client configs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.runtime.clienv import dev_command, run
from tests.runtime.conftest import Installed, write_codex
from tests.runtime.trees import clone_runtime
from tests.support.toolchain import install_fake_elan


def project(path: Path, toolchain: str = "leanprover/lean4:v4.24.0") -> Path:
    path.mkdir(parents=True)
    (path / "lakefile.toml").write_text('name = "demo"\n')
    (path / "lean-toolchain").write_text(toolchain + "\n")
    return path


def doctor(installed: Installed, cwd: Path, **env: str) -> tuple[int, dict[str, Any]]:
    result = installed.beam("doctor", "--json", cwd=cwd, **env)
    assert result.stdout, result.stderr
    return result.code, json.loads(result.stdout)


def find(report: dict[str, Any], name: str) -> dict[str, Any]:
    (check,) = [c for c in report["checks"] if c["name"] == name]
    return check


def failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["status"] == "fail"]


def test_healthy_install_in_a_lean_project(installed: Installed, tmp_path: Path) -> None:
    install_fake_elan(installed.home / ".elan")
    write_codex(installed.home, {"beam": f"{installed.root}/bin/lean-beam-mcp"})
    code, report = doctor(installed, project(tmp_path / "proj"))
    assert code == 0, failures(report)
    assert report["schema"] == 1 and report["ok"] is True and report["failures"] == 0
    assert report["install_root"] == str(installed.root)
    assert find(report, "current")["detail"] == f"runtime {installed.runtime_id}"
    assert find(report, "codex:beam")["status"] == "ok"
    assert find(report, "lake --version")["detail"].startswith("Lake version")
    assert find(report, "lean-toolchain")["status"] == "ok"
    assert find(report, "self-check")["status"] == "ok"
    assert find(report, installed.runtime_id)["status"] == "ok"
    text = installed.beam("doctor", cwd=tmp_path / "proj")
    assert text.code == 0 and "everything works" in text.stdout


def test_every_problem_has_a_fix_and_fails(
    installed: Installed, tmp_path: Path, lease_holders
) -> None:  # type: ignore[no-untyped-def]
    root = installed.root
    old = clone_runtime(root, installed.runtime_id, variant="a", created_at="2020-01-01T00:00:00Z")
    gone = "0.1.0-0000000000000000"
    write_codex(
        installed.home,
        {
            "pinned": f"{root}/versions/{old}/bin/lean-beam-mcp",
            "dangling": f"{root}/versions/{gone}/bin/lean-beam-mcp",
            "pipx": "/opt/pipx/bin/lean-beam-mcp",
        },
    )
    (installed.home / ".claude.json").write_text("{not json")
    (root / "versions" / "broken").mkdir()
    (root / "bin" / "beam-cli").unlink()
    assert lease_holders(root, old).held
    code, report = doctor(installed, tmp_path)
    assert code == 1 and report["ok"] is False
    assert find(report, "broken")["status"] == "fail"
    assert find(report, "broken")["fix"].startswith("mv ")
    assert find(report, "beam-cli")["status"] == "fail"
    assert find(report, "beam-cli")["fix"] == "lean-beam install"
    assert find(report, "codex:dangling")["status"] == "fail"
    assert "codex mcp add" in find(report, "codex:dangling")["fix"]
    assert find(report, "codex:pinned")["status"] == "warn"
    assert find(report, "codex:pipx")["status"] == "warn"
    assert find(report, "claude-code config")["status"] == "warn"
    assert find(report, f"{old} lease")["status"] == "warn"
    for check in report["checks"]:
        if check["status"] in ("warn", "fail"):
            assert check["fix"], check
    # outside a Lean project a missing toolchain is only a warning
    assert find(report, "lake")["status"] == "warn"
    assert find(report, "project")["status"] == "info"


def test_toolchain_problems_inside_a_project(installed: Installed, tmp_path: Path) -> None:
    install_fake_elan(installed.home / ".elan")
    old = project(tmp_path / "old", "leanprover/lean4:v4.20.0")
    code, report = doctor(installed, old)
    assert code == 1
    assert find(report, "lean-toolchain")["status"] == "fail"
    assert "v4.24.0" in find(report, "lean-toolchain")["fix"]
    broken = project(tmp_path / "ok")
    code, report = doctor(installed, broken, FAKE_LAKE_MODE="fail")
    assert code == 1 and find(report, "lake --version")["status"] == "fail"
    nightly = project(tmp_path / "nightly", "leanprover/lean4:nightly-2025-10-01")
    code, report = doctor(installed, nightly)
    assert code == 0 and find(report, "lean-toolchain")["status"] == "warn"


def test_missing_toolchain_fails_inside_a_project(installed: Installed, tmp_path: Path) -> None:
    code, report = doctor(installed, project(tmp_path / "p"))
    assert code == 1
    assert find(report, "lake")["status"] == "fail" and "elan" in find(report, "lake")["fix"]


def test_missing_current_and_not_installed(installed: Installed, tmp_path: Path) -> None:
    os.unlink(installed.root / "current")
    env = installed.env(BEAM_NO_DELEGATE="1")
    result = run(
        [dev_command("lean-beam"), "doctor", "--json", "--install-root", str(installed.root)],
        env,
        cwd=tmp_path,
    )
    report = json.loads(result.stdout)
    assert result.code == 1 and find(report, "current")["status"] == "fail"
    assert find(report, "current")["fix"] == "lean-beam install"
    shutil.rmtree(installed.root)
    result = run(
        [dev_command("lean-beam"), "doctor", "--install-root", str(installed.root)],
        env,
        cwd=tmp_path,
    )
    assert result.code == 1 and "does not exist" in result.stdout
    assert "fix: lean-beam install" in result.stdout


def set_interpreter(runtime: Path, executable: str) -> None:
    """Point a runtime's manifest at another interpreter (the manifest is not payload-hashed)."""
    manifest = runtime / "manifest.json"
    body = json.loads(manifest.read_text())
    body["python"]["executable"] = executable
    os.chmod(manifest, 0o644)
    manifest.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    os.chmod(manifest, 0o444)


def test_missing_interpreter_fails_with_the_right_fix(installed: Installed, tmp_path: Path) -> None:
    root = installed.root
    old = clone_runtime(root, installed.runtime_id, variant="gc", created_at="2020-01-01T00:00:00Z")
    gone = str(tmp_path / "nix" / "store" / "python3.11")  # e.g. after a Nix garbage collection
    set_interpreter(root / "versions" / old, gone)
    code, report = doctor(installed, tmp_path)
    assert code == 1
    check = find(report, old)
    assert check["status"] == "fail"
    assert gone in check["detail"] and "is gone" in check["detail"]
    assert check["fix"] == "lean-beam runtime prune --yes"
    assert find(report, installed.runtime_id)["status"] == "ok"
    # the current runtime's interpreter gone: the fix is a reinstall, not a prune
    set_interpreter(root / "versions" / installed.runtime_id, gone)
    code, report = doctor(installed, tmp_path)
    current = find(report, installed.runtime_id)
    assert code == 1 and current["status"] == "fail"
    assert "lean-beam install" in current["fix"] and "prune" not in current["fix"]


def dev_doctor(installed: Installed, cwd: Path, **extra: str) -> tuple[int, dict[str, Any]]:
    """doctor from the development copy, so it runs even when the installed runtime cannot."""
    env = installed.env(BEAM_NO_DELEGATE="1", **extra)
    result = run([dev_command("lean-beam"), "doctor", "--json", "--install-root",
                  str(installed.root)], env, cwd=cwd)  # fmt: skip
    assert result.stdout, result.stderr
    return result.code, json.loads(result.stdout)


def test_failing_self_check_is_reported_with_its_output(installed: Installed,
                                                        tmp_path: Path) -> None:  # fmt: skip
    # Without its lease file the runtime's launchers refuse to start: the round trip fails.
    (installed.root / "state" / "leases" / f"{installed.runtime_id}.lease").unlink()
    code, report = dev_doctor(installed, tmp_path)
    check = find(report, "self-check")
    assert code == 1 and check["status"] == "fail"
    assert "exited 1" in check["detail"] and "was pruned; restart" in check["detail"]
    assert "--self-check" in check["fix"]


def test_self_check_that_does_not_answer_in_time_fails(installed: Installed,
                                                       tmp_path: Path) -> None:  # fmt: skip
    # 1 ms: no Python process can even start in that time, so the bound always trips.
    code, report = dev_doctor(installed, tmp_path, BEAM_DOCTOR_SELF_CHECK_TIMEOUT_S="0.001")
    check = find(report, "self-check")
    assert code == 1 and check["status"] == "fail"
    assert check["detail"] == "no answer within 0.001 s"
    assert "--self-check" in check["fix"]
