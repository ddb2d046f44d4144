"""The import gate of an installed runtime: only the bytecode install recorded ever runs.

A runtime's launcher reads the bytecode record `__pycache__/bytecode.sha256` (one
`<sha256>  <mode>  <path>` line per bytecode file of `site/`, sorted by path: the lines whose
sha256 is the manifest's `bytecode_sha256`), checks this module's bytecode against its line there,
runs it and calls `launch` before any other module of the runtime is imported. `launch`
(docs/RUNTIME.md, "Only verified code runs"):

1. checks the record against the manifest whenever the manifest is sound;
2. appends `site/` to `sys.path`, after the standard library, so nothing in `site/` shadows it;
3. gives `site/` and every directory below it a finder of its own: a module is found only
   through a recorded `__pycache__/<name>.<tag>.pyc` (or as an extension module), whose bytes
   are read, hashed and compared with the record before they are unmarshalled. A `.py` without
   recorded bytecode and a sourceless `.pyc` are never imported; the sources are never compiled;
4. runs `beam_runtime.launcher.main`. Whatever does not match, then or at any later import,
   ends the command with one line (a JSON error with `--json`) naming the runtime and the way
   to reinstall it, never a traceback.

Stdlib only, and only modules Python has loaded before `-c` code runs (plus the builtin hash):
this runs on every start of every command. It is never compiled there: the launcher runs its
verified bytecode.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.machinery import SourceFileLoader as _SourceFileLoader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType, ModuleType
    from typing import Any, NoReturn

RECORD = "__pycache__/bytecode.sha256"  # relative to the runtime directory
GATE = "site/beam_runtime/bytecode_gate.py"
MANIFEST = "manifest.json"
SUFFIX = f".{sys.implementation.cache_tag}.pyc"
HEADER_BYTES = 16  # magic, flags and the source stamp: the record already vouches for them
PYC_CAP = 1 << 28


class Refusal(Exception):
    """This runtime cannot run: it is damaged (`category` invalidRuntime) or was pruned."""

    def __init__(self, runtime: str, what: str, path: str, *, pruned: bool = False) -> None:
        runtime_id = os.path.basename(runtime)
        if pruned:
            message = f"runtime {runtime_id} was pruned; restart"
            fix = "restart the MCP client or rerun the command through <root>/bin"
        else:
            message = f"runtime {runtime_id} is damaged: {what}"
            fix = (
                f"stop the agents that use it, move {runtime} out of versions/ (keep it for "
                "inspection) and run `lean-beam install`"
            )
        super().__init__(f"{message}; {fix}")
        self.category = "runtimePruned" if pruned else "invalidRuntime"
        self.message = message
        self.fix = fix
        self.details = {"runtime_id": runtime_id, "path": path}


def _published(runtime: str) -> bool:
    """Still `versions/<id>` (prune renames a runtime away before it deletes it)."""
    parent = os.path.dirname(runtime)
    return os.path.basename(parent) == "versions" and os.path.isdir(runtime)


def _read(path: str, cap: int) -> bytes:
    """A regular file's bytes; a FIFO, device or directory there never blocks (OSError)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_size > cap:
            raise OSError(f"{path} is larger than {cap} bytes")
        chunks = []
        while chunk := os.read(fd, max(info.st_size, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


_BUILTIN_BYTES = 1 << 20  # hashed with the builtin sha256 before OpenSSL's is worth loading
_hashed = [0]


def _sha256() -> Callable[[bytes], Any]:
    """The builtin sha256 for the first MiB (a command's start: no library to load), OpenSSL's
    after that or once something has loaded it (five times faster on a first Lean call)."""
    openssl = sys.modules.get("_hashlib")
    if openssl is None and _hashed[0] > _BUILTIN_BYTES:
        try:
            import _hashlib as openssl
        except ImportError:
            openssl = None
    if openssl is not None:
        return openssl.openssl_sha256  # type: ignore[no-any-return]
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    return sha256  # type: ignore[no-any-return]


def _hexdigest(data: bytes) -> str:
    _hashed[0] += len(data)
    return str(_sha256()(data).hexdigest())


class _Scan:
    """What `_json.make_scanner` reads from a decoder; `import json` would pull in `re`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def _parse_json(text: str) -> object:
    """CPython's C scanner for well-formed input; `json.loads` decides (and raises) otherwise."""
    try:
        from _json import make_scanner

        start = len(text) - len(text.lstrip(" \t\r\n"))
        value, end = make_scanner(_Scan)(text, start)  # type: ignore[arg-type]
        if not text[end:].strip(" \t\r\n"):
            return value
    except Exception:  # the C scanner reports its errors through `json`: let it decide
        pass
    import json

    return json.loads(text)


def _manifest_digest(runtime: str) -> str | None:
    """The manifest's `bytecode_sha256`, or None when the manifest cannot vouch for anything.

    A runtime whose manifest is missing, unreadable or names another id still runs so that it
    can report that in its identity's `runtime_error`; its modules are then checked against the
    record alone.
    """
    try:
        manifest = _parse_json(_read(os.path.join(runtime, MANIFEST), 1 << 20).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("runtime_id") != os.path.basename(runtime):
        return None
    digest = manifest.get("bytecode_sha256", "")
    return digest if isinstance(digest, str) else None


def parse_record(data: bytes) -> dict[str, str]:
    """`{relative path: sha256}` of a bytecode record; raises ValueError when malformed."""
    record = {}
    for line in data.decode("utf-8").split("\n")[:-1]:
        digest, _mode, path = line.split("  ", 2)
        if len(digest) != 64 or not path:
            raise ValueError(f"bad line in the bytecode record: {line[:120]!r}")
        record[path] = digest
    return record


class Gate:
    """The verified bytecode of one runtime and the finders that serve it."""

    def __init__(self, runtime: str, record: dict[str, str]) -> None:
        self.runtime = runtime
        self.site = os.path.join(runtime, "site")
        self.record = record

    @classmethod
    def load(cls, runtime: str, data: bytes) -> Gate:
        """Check the record's bytes (read by the launcher) against the manifest; parse them.

        Raises `Refusal`.
        """
        record_path = os.path.join(runtime, RECORD)
        expected = _manifest_digest(runtime)
        if expected is not None and _hexdigest(data) != expected:
            what = f"{record_path} does not match the manifest's bytecode_sha256"
            raise Refusal(runtime, what, record_path)
        try:
            return cls(runtime, parse_record(data))
        except ValueError as exc:
            raise Refusal(runtime, str(exc), record_path) from None

    @staticmethod
    def _unreadable(runtime: str, exc: BaseException) -> Refusal:
        path = getattr(exc, "filename", None) or os.path.join(runtime, RECORD)
        if not _published(runtime):
            return Refusal(runtime, "", path, pruned=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Refusal(runtime, f"cannot read {path} ({reason or type(exc).__name__})", path)

    def install(self) -> None:
        """`site/` last on `sys.path`, served only by this gate's finders."""
        sys.path_hooks.insert(0, self._hook)
        sys.path_importer_cache.pop(self.site, None)
        sys.path.append(self.site)

    def _hook(self, path: str) -> _Finder:
        if path == self.site or path.startswith(self.site + os.sep):
            return _Finder(self, path)
        raise ImportError("not a directory of this runtime")

    def verified(self, relpath: str) -> bytes:
        """The recorded bytecode file's bytes after its hash matched; raises `Refusal`."""
        path = os.path.join(self.runtime, relpath)
        try:
            data = _read(path, PYC_CAP)
        except OSError as exc:
            raise self._unreadable(self.runtime, exc) from None
        if _hexdigest(data) != self.record[relpath]:
            what = f"its bytecode {relpath} is not what was installed"
            raise Refusal(self.runtime, what, path)
        return data


class _Loader(_SourceFileLoader):
    """A source module whose code comes only from its verified bytecode, never its source."""

    def __init__(self, fullname: str, path: str, gate: Gate, pyc: str) -> None:
        super().__init__(fullname, path)
        self.gate = gate
        self.pyc = pyc

    def get_code(self, fullname: str) -> CodeType:
        data = self.gate.verified(self.pyc)
        try:
            code = marshal.loads(memoryview(data)[HEADER_BYTES:])
        except (EOFError, ValueError, TypeError):
            raise Refusal(self.gate.runtime, f"{self.pyc} is not bytecode", self.pyc) from None
        return code  # type: ignore[no-any-return]


class _Finder:
    """Finds modules in one directory of `site/` through the bytecode record."""

    def __init__(self, gate: Gate, path: str) -> None:
        self.gate = gate
        self.path = path
        self.rel = path[len(gate.runtime) + 1 :].replace(os.sep, "/")

    def invalidate_caches(self) -> None:
        """Nothing cached: the record is fixed for the life of the process."""

    def find_spec(self, fullname: str, target: ModuleType | None = None) -> ModuleSpec | None:
        tail = fullname.rpartition(".")[2]
        folder = os.path.join(self.path, tail)
        pyc = f"{self.rel}/{tail}/__pycache__/__init__{SUFFIX}"
        if pyc in self.gate.record:
            return self._spec(fullname, os.path.join(folder, "__init__.py"), pyc, folder)
        pyc = f"{self.rel}/__pycache__/{tail}{SUFFIX}"
        if pyc in self.gate.record:
            return self._spec(fullname, folder + ".py", pyc, None)
        for suffix in EXTENSION_SUFFIXES:
            if os.path.isfile(folder + suffix):
                loader = ExtensionFileLoader(fullname, folder + suffix)
                spec = ModuleSpec(fullname, loader, origin=folder + suffix)
                spec.has_location = True
                return spec
        if os.path.isdir(folder) and not os.path.exists(os.path.join(folder, "__init__.py")):
            spec = ModuleSpec(fullname, None, is_package=True)  # a namespace package
            spec.submodule_search_locations = [folder]
            return spec
        return None

    def _spec(self, fullname: str, origin: str, pyc: str, package: str | None) -> ModuleSpec:
        loader = _Loader(fullname, origin, self.gate, pyc)
        spec = ModuleSpec(fullname, loader, origin=origin, is_package=package is not None)
        spec.has_location = True
        spec.cached = os.path.join(self.gate.runtime, pyc)
        if package is not None:
            spec.submodule_search_locations = [package]
        return spec


def refuse(command: str, refusal: Refusal) -> NoReturn:
    """One line on stderr (`{"error": ...}` with `--json`), exit 1."""
    if "--json" in sys.argv[2:] and command != "lean-beam-mcp":
        import json

        body = {
            "category": refusal.category,
            "message": refusal.message,
            "fix": refusal.fix,
            "details": refusal.details,
        }
        sys.stderr.write(json.dumps({"error": body}) + "\n")
    elif refusal.category == "runtimePruned":
        sys.stderr.write(f"{command}: {refusal.message}\n")
    else:
        sys.stderr.write(f"{command}: {refusal.message}; {refusal.fix}\n")
    sys.stderr.flush()
    raise SystemExit(1)


_OUT_OF_MEMORY_FIX = "free memory (or raise the process's memory limit), then retry"


def _out_of_memory(command: str) -> bytes:
    """The command's own report of a MemoryError (as `beam_runtime.errors` words it), for one
    that comes before the command's handler is in place: while the gate checks, or imports."""
    message = f"{command} ran out of memory"
    if "--json" in sys.argv[2:] and command != "lean-beam-mcp":
        return (
            '{"error": {"category": "outOfMemory", "message": "'
            + message
            + '", "fix": "'
            + _OUT_OF_MEMORY_FIX
            + '"}}\n'
        ).encode()
    return f"error: {message}\nfix: {_OUT_OF_MEMORY_FIX}\n".encode()


def launch(runtime: str, command: str, entry: str, record: bytes) -> NoReturn:
    """Open the gate, then run `command` (`entry` is its `module:function`) from `runtime`.

    `record` is the bytecode record as the launcher read it (it found this module's own line
    there before running it). Running out of memory before the command's own handler takes
    over is one line made in advance, never a traceback.
    """
    out_of_memory = _out_of_memory(command)
    try:
        Gate.load(runtime, record).install()
        try:
            from beam_runtime.launcher import main
        except ImportError as exc:
            raise Refusal(runtime, f"cannot import its launcher ({exc})", runtime) from None
        main(runtime, command, entry)
    except Refusal as refusal:
        refuse(command, refusal)
    except (MemoryError, ImportError) as exc:
        if isinstance(exc, ImportError) and not _could_not_map(exc):
            raise
        exc.__traceback__ = None  # the frames that hold the memory go first
        del exc
        os.write(2, out_of_memory)
        raise SystemExit(1) from None
    raise SystemExit(0)


def _could_not_map(exc: ImportError) -> bool:
    """An extension module the dynamic loader found no memory to map (how an address-space
    limit shows at an import); a loader refusing for another reason names that reason."""
    text = str(exc)
    return text.endswith("failed to map segment from shared object") or text.endswith(
        "Cannot allocate memory"
    )
