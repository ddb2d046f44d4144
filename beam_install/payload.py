"""What goes into a runtime: the dependency closure and its files (docs/RUNTIME.md).

The closure is a walk of `Requires-Dist` from `lean-beam` with markers evaluated and no extras.
Each distribution contributes the files its `RECORD` lists inside its site directory (never the
`../bin` scripts) and its dist-info minus `RECORD`, `INSTALLER`, `REQUESTED` and
`direct_url.json`. An editable lean-beam is staged from the package directories Python imports;
an editable dependency is refused. Code already running from an installed runtime re-stages that
runtime's own `site/`. Bytecode is carried along but is not part of the payload hash (the
bytecode record written at staging pins it). Launchers run the import gate
(`beam_runtime.bytecode_gate`) first.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shlex
import stat
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from beam_runtime import identity
from beam_runtime.bytecode_gate import GATE, RECORD
from beam_runtime.entry import ENTRY_POINTS
from beam_runtime.errors import BeamError
from beam_runtime.record_check import file_mode_tag, file_sha256, hash_line, payload_sha256
from beam_runtime.version import NAME

PACKAGES = ("beam_install", "beam_runtime", "beam_mcp")
DIST_INFO_SKIPPED = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})
BYTECODE_SUFFIX = f".{sys.implementation.cache_tag}.pyc"
GATE_PYC = f"site/beam_runtime/__pycache__/bytecode_gate{BYTECODE_SUFFIX}"


@dataclass(frozen=True)
class PayloadFile:
    """One hashed file of the runtime: copied from `source` or written from `content`.

    `size` comes from the one `stat` made while collecting (paths stay strings: pathlib costs
    more than the hashing on a reinstall's ~600 files).
    """

    relpath: str
    executable: bool
    size: int
    source: str | None = None
    content: bytes | None = None

    def digest(self) -> str:
        if self.content is not None:
            import hashlib

            return hashlib.sha256(self.content).hexdigest()
        assert self.source is not None
        return file_sha256(self.source)


@dataclass
class Payload:
    """Everything a runtime holds, and the facts its manifest records."""

    version: str
    python: dict[str, str]
    created_by: str
    files: list[PayloadFile]
    bytecode: list[tuple[str, str]] = field(default_factory=list)
    distributions: list[str] = field(default_factory=list)
    sha256: str = ""
    total_bytes: int = 0
    bytecode_sha256: str = ""  # filled in at staging, once the bytecode is compiled

    @property
    def runtime_id(self) -> str:
        return f"{self.version}-{self.sha256[:16]}"


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return True


def real_interpreter() -> str:
    """The interpreter binary itself: never a shim script, never a venv copy that can vanish."""
    in_venv = sys.prefix != sys.base_prefix
    candidates = [getattr(sys, "_base_executable", ""), sys.executable]
    for candidate in candidates:
        if not candidate:
            continue
        real = os.path.realpath(candidate)
        if in_venv and real.startswith(os.path.realpath(sys.prefix) + os.sep):
            continue
        if os.path.isfile(real) and os.access(real, os.X_OK) and not _is_script(real):
            return real
    raise BeamError(
        "interpreterNotFound",
        f"cannot find the real Python binary behind {sys.executable}",
        "run lean-beam install with a Python whose executable is a real binary (not a shim)",
    )


def python_info() -> dict[str, str]:
    return {
        "executable": real_interpreter(),
        "version": platform.python_version(),
        "abi": sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag or "unknown",
        "implementation": sys.implementation.name,
        "platform": sysconfig.get_platform(),
    }


def installing_environment() -> str:
    """pipx, uv, nix, venv or unknown: the manifest's `created_by`."""
    prefix = Path(sys.prefix)
    if str(prefix.resolve()).startswith("/nix/store/"):
        return "nix"
    if (prefix / "pipx_metadata.json").exists():
        return "pipx"
    if (prefix / "uv-receipt.toml").exists():
        return "uv"
    if sys.prefix != sys.base_prefix:
        return "venv"
    return "unknown"


def nix_store_paths(payload: Payload) -> list[str]:
    """The /nix/store paths a runtime of `payload` needs kept: its interpreter's first, then
    every one its files were copied from (their closures hold what the copies link against)."""
    paths = [payload.python["executable"]]
    paths += sorted({item.source for item in payload.files if item.source is not None})
    found: dict[str, None] = {}
    for path in paths:
        parts = path.split("/")
        if path.startswith("/nix/store/") and len(parts) > 3:
            found.setdefault("/".join(parts[:4]), None)
    return list(found)


def launcher_text(python: str, command: str) -> bytes:
    """A runtime launcher: embeds the interpreter and the entry point, never the root or the id.

    Its only Python reads the bytecode record, checks the import gate's bytecode against its
    line there and hands over to the gate's `launch`, which checks the record against the
    manifest and every other module's bytecode before it runs (docs/RUNTIME.md, "Only verified
    code runs"). A runtime pruned (moved out of versions/) before it could start has no record
    left to read: that is said as such; anything else that does not match is a damaged runtime.
    """
    if command not in ENTRY_POINTS:
        raise ValueError(f"not a lean-beam command: {command!r}")
    gate = GATE_PYC
    code = (
        "import os, sys, marshal\n"
        "r = os.path.dirname(os.path.dirname(os.path.realpath(sys.argv[1])))\n"
        "def b(p):\n"
        "    try:\n"
        "        d = os.open(os.path.join(r, p), os.O_RDONLY | os.O_NONBLOCK)\n"
        "        try:\n"
        "            return os.read(d, os.fstat(d).st_size)\n"
        "        finally:\n"
        "            os.close(d)\n"
        "    except OSError:\n"
        '        return b""\n'
        f't, c = b("{RECORD}"), b("{gate}")\n'
        f'i = t.find(b"  {gate}\\n")\n'
        "try:\n"
        "    from _sha2 import sha256 as h\n"
        "except ImportError:\n"
        "    try:\n"
        "        from _sha256 import sha256 as h\n"
        "    except ImportError:\n"
        "        from hashlib import sha256 as h\n"
        "if i < 69 or h(c).hexdigest().encode() != t[i - 69 : i - 5]:\n"
        '    e = ["runtime " + os.path.basename(r), "", "runtimePruned"]\n'
        '    if os.path.basename(os.path.dirname(r)) != "versions" or not os.path.isdir(r):\n'
        '        e[0] += " was pruned; restart"\n'
        '        e[1] = "restart the MCP client or rerun the command through <root>/bin"\n'
        "    else:\n"
        f'        e[0] += " is damaged: its import gate {gate} is missing or not "\n'
        '        e[0] += "what was installed"\n'
        '        e[1] = "stop the agents that use it, move " + r + " out of versions/ "\n'
        '        e[1] += "(keep it for inspection) and run `lean-beam install`"\n'
        '        e[2] = "invalidRuntime"\n'
        '    if "--json" in sys.argv[2:]:\n'
        "        import json\n"
        '        w = json.dumps({"error": dict(zip(("message", "fix", "category"), e))})\n'
        "    else:\n"
        f'        w = "{command}: " + e[0] + ("; " + e[1] if e[2] == "invalidRuntime" else "")\n'
        '    sys.stderr.write(w + "\\n")\n'
        "    raise SystemExit(1)\n"
        f'n = {{"__name__": "beam_runtime.bytecode_gate", "__file__": os.path.join(r, "{GATE}")}}\n'
        "exec(marshal.loads(c[16:]), n)\n"
        f'n["launch"](r, "{command}", "{ENTRY_POINTS[command]}", t)\n'
    )
    return (
        "#!/bin/sh\n"
        f"# lean-beam runtime launcher for {command}; part of an immutable runtime, do not edit.\n"
        "# Runs the recorded interpreter isolated; only this runtime's verified bytecode runs.\n"
        f'exec {shlex.quote(python)} -I -S -B -c {shlex.quote(code)} "$0" "$@"\n'
    ).encode()


def _editable(dist: metadata.Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        return bool(json.loads(text).get("dir_info", {}).get("editable"))
    except (ValueError, AttributeError):
        return False


def _find(name: str, path: list[str] | None) -> metadata.Distribution:
    """The installed distribution `name`; a `.dist-info` wins over a stray `.egg-info`.

    (A source checkout on `sys.path` may hold a stale `<name>.egg-info` from a build.)
    """
    found = list(metadata.distributions(name=name, path=path if path is not None else sys.path))
    for dist in found:
        if str(getattr(dist, "_path", "")).endswith(".dist-info"):
            return dist
    if found:
        return found[0]
    raise BeamError(
        "missingDistribution",
        f"the distribution {name} that lean-beam needs is not installed in {sys.prefix}",
        "reinstall lean-beam with its dependencies (e.g. pip install --force-reinstall lean-beam)",
        {"distribution": name},
    )


@dataclass(frozen=True)
class Found:
    """A distribution of the closure, with its metadata read once."""

    name: str
    version: str
    dist: metadata.Distribution


def closure(path: list[str] | None = None) -> list[Found]:
    """lean-beam and every distribution it requires (markers evaluated, no extras)."""
    found: dict[str, Found] = {}
    queue = [canonicalize_name(NAME)]
    while queue:
        key = queue.pop()
        if key in found:
            continue
        dist = _find(key, path)
        meta = dist.metadata
        found[key] = Found(meta["Name"], meta["Version"], dist)
        for spec in meta.get_all("Requires-Dist") or []:
            requirement = Requirement(spec)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            queue.append(canonicalize_name(requirement.name))
    return [found[key] for key in sorted(found)]


class _Collector:
    """Accumulates payload and bytecode files by runtime-relative path (first one wins)."""

    def __init__(self) -> None:
        self.files: dict[str, PayloadFile] = {}
        self.bytecode: dict[str, str] = {}

    def add(self, relpath: str, source: str) -> bool:
        """Add one file; False when `source` does not exist."""
        bytecode = "/__pycache__/" in relpath
        if not bytecode and relpath.endswith((".pyc", ".pyo")):
            return True
        try:
            info = os.stat(source)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return True
        if bytecode:
            if relpath.endswith(BYTECODE_SUFFIX):
                self.bytecode.setdefault(relpath, source)
            return True
        executable = file_mode_tag(info.st_mode) == "755"
        item = PayloadFile(relpath, executable, info.st_size, source=source)
        self.files.setdefault(relpath, item)
        return True

    def add_tree(self, prefix: str, directory: str) -> None:
        for current, dirnames, filenames in os.walk(directory):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = os.path.relpath(current, directory).replace(os.sep, "/")
            for name in filenames:
                if name.startswith("."):
                    continue
                inner = name if rel == "." else f"{rel}/{name}"
                self.add(f"{prefix}/{inner}", os.path.join(current, name))


def _recorded_paths(dist: metadata.Distribution) -> list[str] | None:
    """The posix paths a distribution lists (RECORD read directly: faster than `dist.files`)."""
    text = dist.read_text("RECORD")
    if text is None:
        files = dist.files
        return None if files is None else [entry.as_posix() for entry in files]
    import csv

    return [row[0] for row in csv.reader(text.splitlines()) if row]


def _add_distribution(collect: _Collector, found: Found, own: bool) -> None:
    dist, name = found.dist, found.name
    files = _recorded_paths(dist)
    if files is None:
        raise BeamError(
            "incompleteDistribution",
            f"{name} has no RECORD of its files, so lean-beam cannot copy it",
            f"reinstall {name} with pip, pipx or uv",
            {"distribution": name},
        )
    editable = _editable(dist)
    if editable and not own:
        raise BeamError(
            "editableInstall",
            f"the dependency {name} is an editable install; a runtime cannot copy it",
            f"install {name} normally (not with -e) in this environment, then rerun",
            {"distribution": name},
        )
    site = str(dist.locate_file(""))
    for entry in files:
        parts = entry.split("/")
        if not entry or parts[0] == "..":
            continue
        in_dist_info = parts[0].endswith(".dist-info")
        if in_dist_info and parts[-1] in DIST_INFO_SKIPPED:
            continue
        if editable and not in_dist_info:
            continue  # the editable hooks; the packages themselves come from their directories
        source = os.path.join(site, entry)
        if not collect.add(f"site/{entry}", source) and "__pycache__" not in parts:
            raise BeamError(
                "incompleteDistribution",
                f"{name} lists {entry} but the file is missing: {source}",
                f"reinstall {name}",
                {"distribution": name, "path": source},
            )
    if editable:
        for package in PACKAGES:
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.submodule_search_locations:
                collect.add_tree(f"site/{package}", next(iter(spec.submodule_search_locations)))


def _collect_environment(path: list[str] | None) -> tuple[_Collector, list[str]]:
    collect = _Collector()
    names = []
    for found in closure(path):
        _add_distribution(collect, found, canonicalize_name(found.name) == NAME)
        names.append(f"{found.name} {found.version}")
    return collect, names


def _collect_runtime(runtime_dir: str) -> tuple[_Collector, list[str]]:
    collect = _Collector()
    collect.add_tree("site", os.path.join(runtime_dir, "site"))
    return collect, [f"{NAME} (from runtime {os.path.basename(runtime_dir)})"]


def _launchers(python: str, collect: _Collector) -> list[PayloadFile]:
    gate = collect.files.get(GATE)
    if gate is None:
        raise BeamError(
            "incompleteDistribution",
            f"lean-beam's import gate {GATE} is missing from what would be installed",
            "reinstall lean-beam (e.g. pip install --force-reinstall lean-beam)",
        )
    return [
        PayloadFile(f"bin/{command}", True, len(text), content=text)
        for command in ENTRY_POINTS
        for text in [launcher_text(python, command)]
    ]


def hash_payload(files: Iterable[PayloadFile]) -> tuple[str, int]:
    """(payload_sha256, total bytes) of the files."""
    lines = []
    total = 0
    for item in files:
        lines.append(hash_line(item.digest(), "755" if item.executable else "644", item.relpath))
        total += item.size
    return payload_sha256(lines), total


def compute_payload(path: list[str] | None = None) -> Payload:
    """The payload of the code this process runs (or of the distributions found on `path`)."""
    python = python_info()
    running_from = identity.code_runtime_dir()
    if running_from is not None and path is None:
        collect, names = _collect_runtime(running_from)
        manifest = identity.read_manifest(running_from)[0] or {}
        created_by = str(manifest.get("created_by", "unknown"))
    else:
        collect, names = _collect_environment(path)
        created_by = installing_environment()
    files = sorted(
        [*collect.files.values(), *_launchers(python["executable"], collect)],
        key=lambda item: item.relpath.encode(),
    )
    payload = Payload(
        version=str(Version(metadata_version(path))),
        python=python,
        created_by=created_by,
        files=files,
        bytecode=sorted(collect.bytecode.items()),
        distributions=names,
    )
    payload.sha256, payload.total_bytes = hash_payload(files)
    return payload


def metadata_version(path: list[str] | None) -> str:
    if path is None:
        from beam_runtime.version import VERSION

        return VERSION
    return str(_find(canonicalize_name(NAME), path).metadata["Version"])
