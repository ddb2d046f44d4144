"""The Nix GC root of a runtime covers every store path its payload came from.

The store tests make small real store paths with `nix-store --add` (a stand-in interpreter
directory and a stand-in site directory), root them the way `lean-beam install` does, and ask
the real garbage collector to delete them: it must refuse. They skip where `nix-store` is
missing or the store cannot be written (CI runs them as root after installing nix-bin).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from beam_install.install import _nix_gcroot
from beam_install.payload import Payload, PayloadFile, nix_store_paths
from tests.runtime.clienv import dev_command, run
from tests.runtime.trees import clone_runtime
from tests.support.installed import Installed

NIX_STORE = shutil.which("nix-store")
needs_store = pytest.mark.skipif(
    NIX_STORE is None or not os.access("/nix/store", os.W_OK),
    reason="needs nix-store and a writable /nix/store (CI installs nix-bin and runs as root)",
)


def payload(executable: str, *sources: str) -> Payload:
    files = [PayloadFile(f"site/f{n}", False, 1, source=source) for n, source in enumerate(sources)]
    files.append(PayloadFile("bin/lean-beam", True, 1, content=b"#!/bin/sh\n"))
    python = {
        "executable": executable,
        "version": "3.13.7",
        "abi": "cpython-313",
        "implementation": "cpython",
        "platform": "linux-x86_64",
    }
    return Payload("0.1.0", python, "nix", files, sha256="ab" * 32)


def add_to_store(tmp_path: Path, name: str, files: dict[str, str]) -> str:
    """A real store path holding `files` (relative path -> text), made with `nix-store --add`."""
    assert NIX_STORE is not None
    tree = tmp_path / name
    for relpath, text in files.items():
        (tree / relpath).parent.mkdir(parents=True, exist_ok=True)
        (tree / relpath).write_text(text)
        (tree / relpath).chmod(0o755)
    done = subprocess.run(
        [NIX_STORE, "--add", str(tree)], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_store_paths_are_the_interpreter_then_every_payload_source() -> None:
    found = nix_store_paths(
        payload(
            "/nix/store/aaa-python3-3.13.7/bin/python3.13",
            "/nix/store/ccc-pydantic-2.11/lib/python3.13/site-packages/pydantic/main.py",
            "/nix/store/aaa-python3-3.13.7/lib/python3.13/site-packages/x.py",
            "/nix/store/bbb-lean-beam-0.1.0/lib/python3.13/site-packages/beam_runtime/a.py",
            "/home/someone/.venv/lib/python3.13/site-packages/y.py",
        )
    )
    assert found == [
        "/nix/store/aaa-python3-3.13.7",
        "/nix/store/bbb-lean-beam-0.1.0",
        "/nix/store/ccc-pydantic-2.11",
    ]
    assert nix_store_paths(payload("/usr/bin/python3", "/usr/lib/python3/x.py")) == []


@needs_store
def test_install_roots_the_interpreter_and_the_package_closure(tmp_path: Path) -> None:
    assert NIX_STORE is not None
    interpreter = add_to_store(tmp_path, "beam-test-python", {"bin/python3": "#!/bin/sh\n"})
    site = add_to_store(tmp_path, "beam-test-site", {"lib/site-packages/m.py": "X = 1\n"})
    root = tmp_path / "root"
    made = payload(f"{interpreter}/bin/python3", f"{site}/lib/site-packages/m.py")
    gcroot = _nix_gcroot(root, made)
    roots = root / "state" / "gcroots"
    assert gcroot == str(roots / made.runtime_id)
    assert os.readlink(roots / made.runtime_id) == interpreter
    assert os.readlink(roots / f"{made.runtime_id}-2") == site
    for path in (interpreter, site):
        done = subprocess.run(
            [NIX_STORE, "--delete", path], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode != 0 and "alive" in done.stderr, done.stderr
        assert os.path.isdir(path)


def doctor(installed: Installed, cwd: Path) -> dict[str, Any]:
    argv = [dev_command("lean-beam"), "doctor", "--json", "--install-root", str(installed.root)]
    result = run(argv, installed.env(BEAM_NO_DELEGATE="1"), cwd=cwd)
    assert result.stdout, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@needs_store
def test_doctor_warns_about_a_nix_runtime_without_its_gc_root(
    installed_root: Installed, tmp_path: Path
) -> None:
    assert NIX_STORE is not None
    root = installed_root.root
    other = clone_runtime(
        root, installed_root.runtime_id, variant="nix", created_at="2020-01-01T00:00:00Z"
    )
    interpreter = add_to_store(tmp_path, "beam-test-python", {"bin/python3": "#!/bin/sh\n"})
    manifest = root / "versions" / other / "manifest.json"
    body = json.loads(manifest.read_text())
    body["python"]["executable"] = f"{interpreter}/bin/python3"
    os.chmod(manifest, 0o644)
    manifest.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    os.chmod(manifest, 0o444)
    name = f"{other} gc root"

    (check,) = [c for c in doctor(installed_root, tmp_path)["checks"] if c["name"] == name]
    assert check["status"] == "warn" and "nix-collect-garbage" in check["detail"]
    assert "lean-beam install" in check["fix"]

    gcroot = root / "state" / "gcroots" / other
    subprocess.run(
        [NIX_STORE, "--add-root", str(gcroot), "--realise", interpreter],
        capture_output=True,
        timeout=60,
        check=True,
    )
    (check,) = [c for c in doctor(installed_root, tmp_path)["checks"] if c["name"] == name]
    assert check["status"] == "ok" and interpreter in check["detail"]
