"""Immutable means verified, bytecode included.

Python runs a runtime's `__pycache__` files instead of its sources, so a swapped, corrupted or
added `.pyc` must make `install` (reuse) and `doctor` refuse the runtime alike.
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.runtime.clienv import client_env, dev_command, run


def _install(home: Path, root: Path) -> object:
    return run(
        [
            dev_command("lean-beam"),
            "install",
            "--install-root",
            str(root),
            "--bin-dir",
            str(home / "bin"),
            "--json",
        ],
        client_env(home),
    )


def _runtime(root: Path) -> Path:
    return root / "versions" / os.readlink(root / "current").split("/", 1)[1]


def _pycs(runtime: Path) -> list[Path]:
    return sorted((runtime / "site" / "beam_runtime").glob("__pycache__/*.pyc"))


def _swap(runtime: Path) -> None:
    first, second = _pycs(runtime)[:2]
    data = second.read_bytes()
    first.chmod(0o644)
    first.write_bytes(data)  # another module's valid bytecode: runs, and is wrong


def _corrupt(runtime: Path) -> None:
    target = _pycs(runtime)[0]
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:16] + b"\0garbage")


def _add(runtime: Path) -> None:
    folder = runtime / "site" / "beam_runtime" / "__pycache__"
    source = _pycs(runtime)[0]
    folder.chmod(0o755)
    shutil.copy(source, folder / "injected.cpython-311.pyc")


def _fifo(runtime: Path) -> None:
    folder = runtime / "site" / "beam_runtime" / "__pycache__"
    folder.chmod(0o755)
    os.mkfifo(folder / "odd.pyc")


def _record(runtime: Path) -> None:
    record = runtime / "__pycache__" / "bytecode.sha256"
    record.chmod(0o644)
    record.write_bytes(record.read_bytes() + record.read_bytes()[:200])


@pytest.mark.parametrize(
    "tamper", [_swap, _corrupt, _add, _fifo, _record], ids=lambda f: f.__name__
)
def test_install_and_doctor_refuse_tampered_bytecode(
    tmp_path: Path, tamper: Callable[[Path], None]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    first = _install(home, root)
    assert first.code == 0, first.stderr  # type: ignore[attr-defined]
    runtime = _runtime(root)
    assert _pycs(runtime), "a runtime ships its bytecode"
    manifest = json.loads((runtime / "manifest.json").read_text())
    assert len(manifest["bytecode_sha256"]) == 64
    tamper(runtime)
    again = _install(home, root)
    assert again.code == 1, again.stdout  # type: ignore[attr-defined]
    error = json.loads(again.stderr)["error"]  # type: ignore[attr-defined]
    assert error["category"] == "invalidRuntime", error
    assert "bytecode" in error["message"] or "not a regular file" in error["message"], error
    doctor = run(
        [dev_command("lean-beam"), "doctor", "--install-root", str(root), "--json"],
        client_env(home),
    )
    report = json.loads(doctor.stdout)
    failed = [c for c in report["checks"] if c["status"] == "fail" and c["name"] == runtime.name]
    assert failed, report
    assert doctor.code == 1


def test_a_launcher_whose_runtime_is_gone_says_it_was_pruned(tmp_path: Path) -> None:
    """The window before the lease: the runtime moved out of versions/ as Python started."""
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    assert _install(home, root).code == 0  # type: ignore[attr-defined]
    runtime = _runtime(root)
    orphan = tmp_path / "trash" / runtime.name / "bin"
    orphan.mkdir(parents=True)
    shutil.copy(runtime / "bin" / "lean-beam", orphan / "lean-beam")
    done = run([str(orphan / "lean-beam"), "version"], client_env(home))
    assert done.code == 1
    assert done.stderr == f"lean-beam: runtime {runtime.name} was pruned; restart\n"


# --- Only verified code runs -------------------------------------------------------------------
#
# Each attack below changes a runtime after install; every command started through the runtime
# (the three wrappers, doctor among them) must then refuse with one clear line that names the
# runtime and `lean-beam install`, and never run the planted code.

MCP_LIST = (
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{'
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    '"io.modelcontextprotocol/clientCapabilities":{}}}}\n'
)
PLANT = "open(__import__('os').environ['HOME'] + '/PLANTED', 'a').write('{name}\\n')\n"


def _installed(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "beam"
    done = _install(home, root)
    assert done.code == 0, done.stderr  # type: ignore[attr-defined]
    return home, root, _runtime(root)


def _pyc(runtime: Path, module: str) -> Path:
    package, _, name = module.rpartition(".")
    folder = runtime / "site" / package.replace(".", "/") / "__pycache__"
    return folder / f"{name}.{sys.implementation.cache_tag}.pyc"


def _writable(path: Path) -> None:
    for folder in [path.parent, *path.parent.parents]:
        if folder.name == "site":
            break
        folder.chmod(0o755)
    if path.exists():
        path.chmod(0o644)


def _planted_code(runtime: Path, module: str, name: str) -> bytes:
    """The module's own source with a line in front that leaves a trace, compiled."""
    source = runtime / "site" / (module.replace(".", "/") + ".py")
    future = "from __future__ import annotations\n"
    head, _, rest = source.read_text().partition(future)
    text = head + future + PLANT.format(name=name) + rest
    return marshal.dumps(compile(text, str(source), "exec"))


def _commands(home: Path, root: Path) -> list[tuple[list[str], str | None]]:
    return [
        ([str(root / "bin" / "lean-beam"), "version"], None),
        ([str(root / "bin" / "lean-beam"), "version", "--json"], None),
        ([str(root / "bin" / "lean-beam"), "doctor", "--json"], None),
        ([str(root / "bin" / "lean-beam"), "runtime", "list"], None),
        ([str(root / "bin" / "beam-cli"), "--version"], None),
        ([str(root / "bin" / "lean-beam-mcp")], MCP_LIST),
    ]


def _run_all(home: Path, root: Path) -> list[subprocess.CompletedProcess[str]]:
    done = []
    for argv, stdin in _commands(home, root):
        done.append(
            subprocess.run(
                argv,
                input=stdin or "",
                env=client_env(home),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        )
    return done


def _assert_refused(done: subprocess.CompletedProcess[str], runtime: Path) -> None:
    where = (done.args, done.stdout[-2000:], done.stderr[-2000:])
    assert done.returncode == 1, where
    assert "Traceback" not in done.stderr, where
    assert done.stdout == "", where
    if "--json" in done.args:
        error = json.loads(done.stderr)["error"]
        assert error["category"] == "invalidRuntime", error
        text = error["message"] + " " + error["fix"]
    else:
        assert done.stderr.count("\n") == 1, where
        text = done.stderr
    assert runtime.name in text and "lean-beam install" in text, where
    assert "was pruned" not in text, where


def _flip_byte(runtime: Path) -> None:
    target = _pyc(runtime, "beam_runtime.layout")
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    _writable(target)
    target.write_bytes(bytes(data))


def _truncate(runtime: Path) -> None:
    target = _pyc(runtime, "beam_runtime.leases")
    data = target.read_bytes()
    _writable(target)
    target.write_bytes(data[: len(data) // 2])


def _unchecked_hash(runtime: Path) -> None:
    """Bytecode that Python never compares with its source: flags 0b01, any source hash."""
    import importlib.util

    target = _pyc(runtime, "beam_runtime.layout")
    code = _planted_code(runtime, "beam_runtime.layout", "unchecked")
    header = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + b"\0" * 8
    _writable(target)
    target.write_bytes(header + code)


def _same_header(runtime: Path) -> None:
    """Planted code behind the original timestamp header: the source check passes."""
    target = _pyc(runtime, "beam_runtime.layout")
    header = target.read_bytes()[:16]
    code = _planted_code(runtime, "beam_runtime.layout", "timestamp")
    _writable(target)
    target.write_bytes(header + code)


def _swap_launcher(runtime: Path) -> None:
    target = _pyc(runtime, "beam_runtime.launcher")
    data = _pyc(runtime, "beam_runtime.version").read_bytes()
    _writable(target)
    target.write_bytes(data)


def _fifo_instead(runtime: Path) -> None:
    target = _pyc(runtime, "beam_runtime.layout")
    _writable(target)
    target.unlink()
    os.mkfifo(target)


def _record_edited(runtime: Path) -> None:
    """The record made to vouch for planted bytecode: it no longer matches the manifest."""
    import hashlib

    target = _pyc(runtime, "beam_runtime.layout")
    header = target.read_bytes()[:16]
    planted = header + _planted_code(runtime, "beam_runtime.layout", "recorded")
    _writable(target)
    target.write_bytes(planted)
    record = runtime / "__pycache__" / "bytecode.sha256"
    relpath = target.relative_to(runtime).as_posix()
    lines = record.read_text().splitlines(keepends=True)
    edited = [
        hashlib.sha256(planted).hexdigest() + line[64:] if line.endswith(f"  {relpath}\n") else line
        for line in lines
    ]
    record.chmod(0o644)
    record.write_text("".join(edited))


def _gate_planted(runtime: Path) -> None:
    """The import gate's own bytecode, which the launcher runs first."""
    target = _pyc(runtime, "beam_runtime.bytecode_gate")
    header = target.read_bytes()[:16]
    code = _planted_code(runtime, "beam_runtime.bytecode_gate", "gate")
    _writable(target)
    target.write_bytes(header + code)


def _record_gone(runtime: Path) -> None:
    record = runtime / "__pycache__" / "bytecode.sha256"
    record.unlink()


@pytest.mark.parametrize(
    "tamper",
    [
        _flip_byte,
        _truncate,
        _unchecked_hash,
        _same_header,
        _swap_launcher,
        _fifo_instead,
        _record_edited,
        _record_gone,
        _gate_planted,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_changed_bytecode_never_runs_and_every_command_says_so(
    tmp_path: Path, tamper: Callable[[Path], None]
) -> None:
    home, root, runtime = _installed(tmp_path)
    tamper(runtime)
    for done in _run_all(home, root):
        _assert_refused(done, runtime)
    assert not (home / "PLANTED").exists(), (home / "PLANTED").read_text()


def test_a_tampered_checker_cannot_make_doctor_say_ok(tmp_path: Path) -> None:
    """The checker's own bytecode answers "valid" for everything, and a source was changed."""
    home, root, runtime = _installed(tmp_path)
    module = "beam_runtime.record_check"
    target = _pyc(runtime, module)
    source = runtime / "site" / "beam_runtime" / "record_check.py"
    text = source.read_text() + "\n\ndef full_problem(runtime_dir):\n    return None\n"
    header = target.read_bytes()[:16]
    _writable(target)
    target.write_bytes(header + marshal.dumps(compile(text, str(source), "exec")))
    victim = runtime / "site" / "click" / "core.py"
    _writable(victim)
    victim.write_text(victim.read_text() + "\n# changed\n")
    doctor = subprocess.run(
        [str(root / "bin" / "lean-beam"), "doctor", "--json"],
        env=client_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    _assert_refused(doctor, runtime)


@pytest.mark.parametrize("name", ["json.pyc", "json.py", "shlex.pyc", "beam_stray.pyc"])
def test_nothing_in_site_shadows_the_standard_library(tmp_path: Path, name: str) -> None:
    """A stray module next to the runtime's packages: never imported, whatever its name."""
    home, root, runtime = _installed(tmp_path)
    site = runtime / "site"
    site.chmod(0o755)
    text = PLANT.format(name=name) + "raise SystemExit(7)\n"
    if name.endswith(".py"):
        (site / name).write_text(text)
    else:
        code = compile(text, name, "exec")
        (site / name).write_bytes(importlib_util().MAGIC_NUMBER + b"\0" * 12 + marshal.dumps(code))
    version = subprocess.run(
        [str(root / "bin" / "lean-beam"), "version", "--json"],
        env=client_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert version.returncode == 0, version.stderr
    assert json.loads(version.stdout)["runtime_id"] == runtime.name
    for done in _run_all(home, root):
        assert "Traceback" not in done.stderr, (done.args, done.stderr)
        assert done.returncode in (0, 1), (done.args, done.stderr)
    assert not (home / "PLANTED").exists(), (home / "PLANTED").read_text()


def importlib_util():  # type: ignore[no-untyped-def]
    import importlib.util

    return importlib.util


def test_reinstalling_from_a_damaged_runtime_refuses_instead_of_copying_it(
    tmp_path: Path,
) -> None:
    """`lean-beam install` run from a runtime re-stages that runtime: only when it is intact."""
    home, root, runtime = _installed(tmp_path)
    module = "beam_mcp.router"  # never imported by install
    target = _pyc(runtime, module)
    header = target.read_bytes()[:16]
    code = _planted_code(runtime, module, "restaged")
    _writable(target)
    target.write_bytes(header + code)
    victim = runtime / "site" / "click" / "termui.py"  # a changed source: a new runtime id
    _writable(victim)
    victim.write_text(victim.read_text() + "\n# changed\n")
    again = run(
        [str(root / "bin" / "lean-beam"), "install", "--bin-dir", str(home / "bin"), "--json"],
        client_env(home),
    )
    assert again.code == 1, again.stdout  # type: ignore[attr-defined]
    assert "Traceback" not in again.stderr  # type: ignore[attr-defined]
    error = json.loads(again.stderr)["error"]  # type: ignore[attr-defined]
    assert error["category"] == "invalidRuntime", error
    assert str(runtime) in error["message"], error
    assert [p.name for p in (root / "versions").iterdir()] == [runtime.name]
    subprocess.run(
        [str(root / "bin" / "lean-beam-mcp")],
        input=MCP_LIST,
        env=client_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert not (home / "PLANTED").exists(), (home / "PLANTED").read_text()


def test_a_runtime_moved_aside_leaves_wrappers_that_say_what_to_do(tmp_path: Path) -> None:
    """What the fix asks for: the damaged runtime moved out of versions/, then the wrappers."""
    home, root, runtime = _installed(tmp_path)
    runtime.rename(tmp_path / runtime.name)
    for command in ("lean-beam", "lean-beam-mcp", "beam-cli"):
        done = run([str(root / "bin" / command), "--version"], client_env(home))
        assert done.code == 1, done.stdout  # type: ignore[attr-defined]
        assert done.stderr.count("\n") == 1, done.stderr  # type: ignore[attr-defined]
        assert runtime.name in done.stderr and "lean-beam install" in done.stderr  # type: ignore[attr-defined]
    again = _install(home, root)
    assert again.code == 0, again.stderr  # type: ignore[attr-defined]
    assert run([str(root / "bin" / "lean-beam"), "version"], client_env(home)).code == 0  # type: ignore[attr-defined]
