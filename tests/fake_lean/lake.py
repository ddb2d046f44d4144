"""The fake ``lake``: ``serve``, ``--version``, ``build +Module``, ``env``, ``setup-file``."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"


def lake_version_line() -> str:
    lean = os.environ.get("FAKE_LEAN_VERSION", "4.33.0")
    return f"Lake version 5.0.0-src+fa4e000 (Lean version {lean})"


def main(argv: list[str]) -> int:
    mode = os.environ.get("FAKE_LAKE_MODE", "ok")
    if mode == "fail":  # a broken toolchain: every command fails
        sys.stderr.write("error: fake lake was told to fail (FAKE_LAKE_MODE=fail)\n")
        return 1
    if mode == "hang":  # a toolchain that never answers: every command blocks
        time.sleep(3600)
        return 1
    args = [arg for arg in argv if not arg.startswith("+")] if argv[:1] != ["build"] else argv
    if not args or args[0] in ("--version", "-V"):
        print(lake_version_line())
        return 0
    command, rest = args[0], args[1:]
    if command == "serve":
        return serve(rest)
    if command == "build":
        return build(rest)
    if command == "env":
        return env(rest)
    if command == "setup-file":
        return 0
    sys.stderr.write(f"error: unknown command '{command}'\n")
    return 1


def _config_error(root: Path) -> str | None:
    for name in ("lakefile.lean", "lakefile.toml"):
        path = root / name
        if path.is_file() and "FAKE_BROKEN" in path.read_text(encoding="utf-8", errors="replace"):
            return f"error: {path}: configuration could not be elaborated (scripted by FAKE_BROKEN)"
    return None


def serve(rest: list[str]) -> int:
    """Load the workspace (stderr log), then run the server as a child, as Lake does."""
    root = Path.cwd()
    extra = rest[1:] if rest[:1] == ["--"] else rest
    environment = dict(os.environ)
    environment["FAKE_LEAN_UNDER_LAKE"] = "1"
    environment["LAKE"] = str(HERE / "bin" / "lake")
    environment["LEAN_SYSROOT"] = str(HERE / "toolchain")
    sys.stderr.write(f"info: fake lake: loading workspace at {root}\n")
    problem = _config_error(root)
    if problem is not None:
        sys.stderr.write(problem + "\n")
        sys.stderr.write(
            "warning: package configuration has errors, falling back to plain `lean --server`\n"
        )
        environment["LAKE_INVALID_CONFIG"] = problem + "\n"
    sys.stderr.flush()
    child = subprocess.Popen([sys.executable, str(SERVER), "--server", *extra], env=environment)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.kill()
        return 130


def build(rest: list[str]) -> int:
    """Lake's order and reporting: imports first; a failed module's importers are not built."""
    root = Path.cwd()
    problem = _config_error(root)
    if problem is not None:
        sys.stderr.write(problem + "\n")
        return 1
    targets = [arg[1:] for arg in rest if arg.startswith("+")]
    if not targets:
        print("Build completed successfully.")
        return 0
    delay = float(os.environ.get("FAKE_LAKE_BUILD_MS", "0")) / 1000.0
    for module in targets:
        if not _source(root, module).is_file():
            sys.stderr.write(f"error: unknown module '{module}'\n")
            return 1
    order = _in_import_order(root, targets)
    failed: list[str] = []
    logged: list[str] = []
    for index, module in enumerate(order, start=1):
        source = _source(root, module)
        if set(_local_imports(root, source)) & set(failed):
            failed.append(module)  # Lake does not start a module whose imports failed
            continue
        with swapped_during_build(root, source):
            errors, warnings = _messages(source)
            time.sleep(delay)
            shown = f"./{source.relative_to(root)}"
            if errors:
                failed.append(module)
                logged.append(module)
                print(f"✖ [{index}/{len(order)}] Building {module}")
                for message in warnings:
                    print(f"warning: {shown}:{message}")
                for message in errors:
                    print(f"error: {shown}:{message}")
                print("error: Lean exited with code 1")
                continue
            _write_artifacts(root, module, source)
        print(f"{'⚠' if warnings else '✔'} [{index}/{len(order)}] Built {module}")
        for message in warnings:
            print(f"warning: {shown}:{message}")
    if failed:
        print("Some required targets logged failures:")
        for module in logged:
            print(f"- {module}")
        print("error: build failed")
        return 1
    print("Build completed successfully.")
    return 0


def _source(root: Path, module: str) -> Path:
    """The module's file in the workspace, else in a dependency package under .lake/packages."""
    relative = Path(*module.split(".")).with_suffix(".lean")
    if (root / relative).is_file():
        return root / relative
    for package in sorted((root / ".lake" / "packages").glob("*")):
        if (package / relative).is_file():
            return package / relative
    return root / relative


@contextlib.contextmanager
def swapped_during_build(root: Path, source: Path) -> Iterator[None]:
    """``FAKE_LAKE_SWAP=REL:FILE``: while building REL, its text is FILE's (as if an editor saved
    another text and then the old one again); afterwards the old bytes and times come back."""
    spec = os.environ.get("FAKE_LAKE_SWAP", "")
    relative, _, replacement = spec.partition(":")
    if not spec or (root / relative).resolve() != source.resolve():
        yield
        return
    before = source.read_bytes()
    times = source.stat()
    source.write_bytes(Path(replacement).read_bytes())
    try:
        yield
    finally:
        source.write_bytes(before)
        os.utime(source, ns=(times.st_atime_ns, times.st_mtime_ns))


def _local_imports(root: Path, source: Path) -> list[str]:
    _ensure_path()
    from tests.fake_lean.imports import imported_modules
    from tests.fake_lean.source import split_commands, split_lines

    lines = split_lines(source.read_text(encoding="utf-8"))
    header_end, _ = split_commands(lines)
    return [m for m in imported_modules(lines, header_end) if _source(root, m).is_file()]


def _in_import_order(root: Path, targets: list[str]) -> list[str]:
    order: list[str] = []

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if module in order or module in trail:
            return
        for imported in _local_imports(root, _source(root, module)):
            visit(imported, (*trail, module))  # Lake builds every import first
        order.append(module)

    for module in targets:
        visit(module, ())
    return order


def _ensure_path() -> None:
    if str(HERE.parents[1]) not in sys.path:
        sys.path.insert(0, str(HERE.parents[1]))


def _messages(source: Path) -> tuple[list[str], list[str]]:
    """``line:col: message`` errors and warnings of the module, its imports' names in scope."""
    _ensure_path()
    from tests.fake_lean.config import load_settings
    from tests.fake_lean.elab import Env, elaborate
    from tests.fake_lean.imports import collect_decls, imported_modules
    from tests.fake_lean.source import split_commands, split_lines

    settings = load_settings([])
    lines = split_lines(source.read_text(encoding="utf-8"))
    header_end, commands = split_commands(lines)
    env = Env()
    root = Path.cwd()
    for module in imported_modules(lines, header_end):
        path = _source(root, module)
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            env.decls.update(collect_decls(settings, text, path.as_uri(), root))
    errors: list[str] = []
    warnings: list[str] = []
    for command in commands:
        result = elaborate(command, lines, env, settings.texts, source.as_uri(), None)
        for decl in result.decls:
            env.decls[decl.name] = decl
        env.namespaces, env.opens = result.namespaces, result.opens
        for d in result.diags:
            if d.severity in (1, 2):
                found = errors if d.severity == 1 else warnings
                found.append(f"{d.start.line + 1}:{d.start.col}: {d.message}")
    return errors, warnings


def _write_artifacts(root: Path, module: str, source: Path) -> None:
    parts = module.split(".")
    package = source.parents[len(parts) - 1]  # the workspace or a dependency's checkout
    lib = package / ".lake" / "build" / "lib" / "lean"
    ir = package / ".lake" / "build" / "ir"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    base = lib.joinpath(*parts)
    base.parent.mkdir(parents=True, exist_ok=True)
    base.with_suffix(".olean").write_bytes(b"olean-fake\0" + digest.encode())
    base.with_suffix(".ilean").write_text(f'{{"version":4,"module":"{module}","decls":{{}}}}\n')
    trace = f'{{"depHash":"{digest[:16]}","inputs":["{source.name}"],"fake":true}}\n'
    base.with_suffix(".trace").write_text(trace)
    base.with_suffix(".olean.trace").write_text(trace)
    c_file = ir.joinpath(*parts).with_suffix(".c")
    c_file.parent.mkdir(parents=True, exist_ok=True)
    c_file.write_text(f"// fake Lean compiler output for {module}\n")


def env(rest: list[str]) -> int:
    values = {
        "LAKE": str(HERE / "bin" / "lake"),
        "LEAN_SYSROOT": str(HERE / "toolchain"),
        "LEAN_PATH": str(Path.cwd() / ".lake" / "build" / "lib" / "lean"),
    }
    if not rest:
        for key, value in values.items():
            print(f"{key}={value}")
        return 0
    os.execvpe(rest[0], rest, {**os.environ, **values})
    return 127


def elan_main(argv: list[str]) -> int:
    if not argv or argv[0] in ("--version", "-V"):
        print("elan 4.1.2 (fake 2025-01-01)")
        return 0
    if argv[0] == "which" and len(argv) > 1:
        tool = HERE / "bin" / argv[1]
        if not tool.exists():
            sys.stderr.write(f"error: unknown binary '{argv[1]}' in the fake toolchain\n")
            return 1
        print(tool)
        return 0
    if argv[0] == "show":
        toolchain = _toolchain(Path.cwd()) or "leanprover/lean4:v4.33.0"
        print(f"installed toolchains\n--------------------\n\n{toolchain}\n")
        print(f"active toolchain\n----------------\n\n{toolchain} (overridden by lean-toolchain)")
        print(f"{lake_version_line()}")
        return 0
    sys.stderr.write(f"error: fake elan does not know '{argv[0]}'\n")
    return 1


def _toolchain(start: Path) -> str | None:
    for directory in (start, *start.parents):
        marker = directory / "lean-toolchain"
        if marker.is_file():
            return marker.read_text(encoding="utf-8").strip()
    return None


def lean_main(argv: list[str]) -> int:
    if "--version" in argv or "-v" in argv:
        version = os.environ.get("FAKE_LEAN_VERSION", "4.33.0")
        print(
            f"Lean (version {version}, x86_64-unknown-linux-gnu, commit "
            "0000000000000000000000000000000000fa4e00, Release)"
        )
        return 0
    if "--server" in argv:
        os.execv(sys.executable, [sys.executable, str(SERVER), *argv])
    sys.stderr.write("fake lean: only --server and --version are supported\n")
    return 1
