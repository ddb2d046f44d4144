"""Mutation audit of the safety checks: a fixed list of one-line mutants, each run against the
fast tests that should catch it. A bench, not a test: it is never collected by pytest.

Usage: python3 bench/mutation.py [--list first|pins|second] [--only MODULE ...] [--timeout SECONDS]
       [--work DIR] [--select listed|coverage] [--check]

The repository (tracked and untracked, not ignored, files) is copied to a temporary directory with
a virtual environment of its own (`pip install -e .[test]`, so console scripts, installed runtimes
and the test wheel all run the copy's code). Each mutant replaces one exact snippet in one file of
the copy, its tests run with `-x -m "not slow"` under a timeout, and the file is restored. The
worktree is never touched. A mutant is killed when its tests fail or time out; a snippet that no
longer occurs exactly once is reported as "snippet not found" (the code moved: update the list).
Equivalent mutants (no behaviour changes) are listed and left out of the kill rate.

`--select coverage` runs, for each mutant, only the tests seen running its line: the fast suite
runs once under coverage.py (installed into the copy's venv) with one context per test, and the
tests that fail unmutated are never selected (so no separate baseline run). Coverage follows the
test processes (xdist workers) and every Python subprocess of the copy's venv started below a
test (a `.pth` hook, active only during that run); what an installed runtime runs (`-S`, no
`.pth`) is not seen. A mutant on a module-level line (or inside one) runs the tests seen running
any function of its module; a mutant no test was seen reaching, or one that survives the tests
seen reaching it, runs its listed test directories with `-x -n 4` (an installed runtime's lines
are run by tests coverage cannot see).
"""

# ruff: noqa: E501  (the mutant table quotes source lines verbatim)
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    module: str
    path: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    equivalent: str = ""  # why the mutant changes no behaviour, when it does not


ROUTER = (
    "tests/mcp/test_families.py",
    "tests/mcp/test_families_validation.py",
    "tests/mcp/test_wire.py",
    "tests/mcp/test_tools.py",
)
FAMILIES = (
    "tests/mcp/test_families.py",
    "tests/mcp/test_families_validation.py",
    "tests/mcp/test_negotiation.py",
)
PRUNE = (
    "tests/runtime/test_prune_rechecks.py",
    "tests/runtime/test_prune_deletion.py",
    "tests/runtime/test_prune.py",
)
REFS = ("tests/runtime/test_references.py", "tests/runtime/test_references_safety.py")
IDENTITY = ("tests/install/test_identity_records.py", "tests/install/test_identity.py")
LEASES = ("tests/install/test_leases.py", "tests/install/test_lease_republish.py")
PATHS = ("tests/broker/test_paths_safety.py", "tests/broker/test_pure.py")
HANDLES = ("tests/speculative/test_handle_workspaces.py", "tests/speculative/test_handles.py")
INSTALL = ("tests/runtime/test_prune_deletion.py", "tests/install/test_install.py")
GOALS = ("tests/broker/test_pure.py", "tests/lsp/test_goals.py")
SORRY = ("tests/speculative/test_sorry.py", "tests/speculative/test_run_at.py")
RPC = ("tests/broker/test_interactive.py", "tests/broker/test_goal_sources.py")
GRID = ("tests/speculative/test_try.py",)

R, F, P = "beam_mcp/router.py", "beam_mcp/families.py", "beam_install/prune.py"
C, RF = "beam_install/cleanup.py", "beam_runtime/references.py"
IR, ID = "beam_runtime/install_root.py", "beam_runtime/identity.py"
L, PA = "beam_runtime/leases.py", "beam_runtime/broker/session/paths.py"
H, ST = "beam_runtime/broker/speculation/handles.py", "beam_install/staging.py"
CU, G = "beam_install/current.py", "beam_runtime/broker/queries/goals.py"
PR, GR = "beam_runtime/broker/speculation/probes.py", "beam_runtime/broker/speculation/grid.py"
RP, IN = "beam_runtime/broker/queries/rpc.py", "beam_runtime/broker/queries/interactive.py"

MUTANTS: list[Mutant] = [
    # router
    Mutant(
        "router",
        R,
        "if self.state.family is Family.LEGACY:\n            raise self.state.cross_family(Family.MODERN)",
        "if False:\n            pass",
        ROUTER,
    ),
    Mutant(
        "router",
        R,
        "        if state.family is Family.MODERN:\n            if req.method in fam.LEGACY_ONLY:",
        "        if False:\n            if req.method in fam.LEGACY_ONLY:",
        ROUTER,
    ),
    Mutant("router", R, "if state.lifecycle is Lifecycle.FRESH:", "if False:", ROUTER),
    Mutant("router", R, "if state.lifecycle is Lifecycle.INITIALIZED:", "if False:", ROUTER),
    Mutant("router", R, "if self.state.lifecycle is not Lifecycle.FRESH:", "if False:", ROUTER),
    Mutant(
        "router",
        R,
        '        if extra:\n            raise RpcError(INVALID_PARAMS, f"tools/call does not accept: {names(extra)}")',
        "        pass",
        ROUTER,
    ),
    Mutant("router", R, "        if mrtr:", "        if False:", ROUTER),
    Mutant("router", R, "        if not isinstance(arguments, dict):", "        if False:", ROUTER),
    Mutant(
        "router",
        R,
        '    if extra:\n        raise RpcError(INVALID_PARAMS, f"{method} does not accept: {names(extra)}")',
        "    pass",
        ROUTER,
    ),
    # families
    Mutant(
        "families",
        F,
        '    if extra:\n        raise RpcError(INVALID_PARAMS, f"initialize does not accept: {names(extra)}")',
        "    pass",
        FAMILIES,
    ),
    Mutant(
        "families",
        F,
        '        and isinstance(info.get("name"), str)\n        and isinstance(info.get("version"), str)\n    )\n    if not ok:',
        '        and isinstance(info.get("name"), str)\n    )\n    if not ok:',
        FAMILIES,
    ),
    Mutant(
        "families",
        F,
        '        and isinstance(info.get("version"), str)\n    ):',
        "    ):",
        FAMILIES,
    ),
    Mutant(
        "families",
        F,
        "    if not isinstance(meta.get(META_CAPABILITIES), dict):",
        "    if False:",
        FAMILIES,
    ),
    Mutant("families", F, "    if version not in SUPPORTED_MODERN:", "    if False:", FAMILIES),
    Mutant(
        "families",
        F,
        "    if META_LOG_LEVEL in meta and level not in LOG_RANK:",
        "    if False:",
        FAMILIES,
    ),
    Mutant(
        "families",
        F,
        "    return requested if requested in LEGACY_VERSIONS else LEGACY_VERSION",
        "    return LEGACY_VERSION",
        FAMILIES,
    ),
    Mutant(
        "families",
        F,
        "LEGACY_VERSIONS.index(revision) >= LEGACY_VERSIONS.index(STRUCTURED_SINCE)",
        "LEGACY_VERSIONS.index(revision) > LEGACY_VERSIONS.index(STRUCTURED_SINCE)",
        FAMILIES,
    ),
    # prune
    Mutant("prune", P, "    if fresh.inode != entry.inode:", "    if False:", PRUNE),
    Mutant("prune", P, "    if fresh.inode is None:", "    if False:", PRUNE),
    Mutant(
        "prune",
        P,
        '    if fresh.manifest is None:\n        return Skipped(entry.name, fresh.invalid or "invalid")',
        "    pass",
        PRUNE,
    ),
    Mutant(
        "prune",
        P,
        '    if current_runtime_id(root) == entry.name:\n        return Kept(entry.name, ["current"])',
        "    pass",
        PRUNE,
    ),
    Mutant(
        "prune", P, "    if refs:\n        return Kept", "    if False:\n        return Kept", PRUNE
    ),
    Mutant(
        "prune",
        P,
        "        if not exclusive:\n            return Kept(entry.name, [_active_reason(root, entry.name)])",
        "        pass",
        PRUNE,
    ),
    Mutant(
        "prune",
        P,
        "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        except BlockingIOError:\n            yield False",
        "            pass\n        except BlockingIOError:\n            yield False",
        PRUNE,
    ),
    Mutant(
        "prune",
        P,
        "        if running_id is not None:\n            check_running_is_current(root, running_id)",
        "        pass",
        PRUNE,
    ),
    Mutant(
        "prune",
        P,
        "        os.rename(entry.path, target)",
        "        delete_tree(entry.path)",
        PRUNE,
    ),
    Mutant(
        "prune",
        P,
        "    with suppress(OSError):\n        delete_tree(target)",
        "    if True:\n        delete_tree(target)",
        PRUNE,
    ),
    Mutant("prune", P, "        elif entry.holders():", "        elif False:", PRUNE),
    Mutant(
        "prune",
        C,
        "    _writable_dirs(path)\n    shutil.rmtree(path)",
        "    shutil.rmtree(path)",
        PRUNE,
    ),
    Mutant(
        "prune",
        C,
        "            if not os.path.islink(child):\n                os.chmod",
        "            if True:\n                os.chmod",
        PRUNE,
    ),
    # references
    Mutant(
        "references",
        RF,
        "        if not os.path.lexists(path):",
        "        if not os.path.exists(path):",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "        return self.text is None or runtime_id in self.text",
        '        return runtime_id in (self.text or "")',
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "        return self.text is None or runtime_id in self.text",
        "        return self.text is None",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "        if not isinstance(projects, dict):\n            raise _BadShape",
        "        if False:\n            raise _BadShape",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "    if not isinstance(doc, dict):\n        raise _BadShape",
        "    if False:\n        raise _BadShape",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        '_ID_END = re.compile(r"[/\\s:=,;\\"\'\\\\]")',
        '_ID_END = re.compile(r"[/]")',
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "            env.update({str(k): v for k, v in values.items() if isinstance(v, str)})",
        "            pass",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        '    command = [*_as_strings(server.get("command")), *_as_strings(server.get("args"))]',
        '    command = [*_as_strings(server.get("command"))]',
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "        if directory in spelled or _resolves_to(directory, versions):",
        "        if directory in spelled:",
        REFS,
    ),
    Mutant(
        "references",
        RF,
        "        except (OSError, UnicodeDecodeError) as exc:",
        "        except OSError as exc:",
        REFS,
    ),
    # identity (readers in install_root.py, used by identity.py)
    Mutant("identity", IR, 'data.get("owner") != "lean-beam"', "False", IDENTITY),
    Mutant(
        "identity",
        IR,
        "    if type(schema) is int and schema > MARKER_SCHEMA:",
        "    if False:",
        IDENTITY,
    ),
    Mutant(
        "identity",
        IR,
        "    if schema != MARKER_SCHEMA or type(schema) is not int:",
        "    if schema != MARKER_SCHEMA:",
        IDENTITY,
    ),
    Mutant(
        "identity",
        IR,
        '    if not isinstance(data.get("version"), str):',
        "    if False:",
        IDENTITY,
    ),
    Mutant("identity", IR, "    if named != runtime_id:", "    if False:", IDENTITY),
    Mutant(
        "identity",
        IR,
        "    if os.path.realpath(named) != os.path.realpath(root):",
        "    if False:",
        IDENTITY,
    ),
    Mutant(
        "identity",
        ID,
        "        problem = read_manifest(runtime_dir)[1]",
        "        problem = None",
        IDENTITY,
    ),
    # leases
    Mutant(
        "leases",
        L,
        "        if _same_file(fd, path):\n            return fd",
        "        return fd",
        LEASES,
    ),
    Mutant(
        "leases",
        L,
        '        if not _published(root, runtime_id):\n            raise LeaseRefused(f"runtime {runtime_id} was pruned; restart", pruned=True)\n        if time',
        '        if False:\n            raise LeaseRefused(f"runtime {runtime_id} was pruned; restart", pruned=True)\n        if time',
        LEASES,
    ),
    Mutant(
        "leases",
        L,
        "        if not _published(root, runtime_id):\n            os.close(fd)",
        "        if False:\n            os.close(fd)",
        LEASES,
    ),
    Mutant(
        "leases",
        L,
        "    return os.path.isdir(path) and not os.path.islink(path)",
        "    return True",
        LEASES,
    ),
    Mutant("leases", L, "        if time.monotonic() >= deadline:", "        if True:", LEASES),
    # paths
    Mutant(
        "paths",
        PA,
        "not candidate.startswith(root.rstrip(os.sep) + os.sep)",
        "not candidate.startswith(root)",
        PATHS,
    ),
    Mutant("paths", PA, '    if not path or "\\x00" in path:', "    if not path:", PATHS),
    Mutant("paths", PA, "        if candidate != root and not", "        if False and not", PATHS),
    # handles
    Mutant(
        "handles",
        H,
        "            if tomb.root != root:\n                raise _foreign(handle_id)",
        "            pass",
        HANDLES,
    ),
    Mutant(
        "handles",
        H,
        "        if record.root != root:\n            raise _foreign(handle_id)",
        "        pass",
        HANDLES,
    ),
    Mutant("handles", H, "        if record.abs_path != abs_path:", "        if False:", HANDLES),
    Mutant(
        "handles",
        H,
        '{"reason": "handleWorkspaceMismatch", "handle": {"id": handle_id}}',
        '{"reason": "unknownHandle", "handle": {"id": handle_id}}',
        HANDLES,
    ),
    # staging and current
    Mutant("staging/current", ST, "    _flush_filesystem(stage)", "    pass", INSTALL),
    Mutant("staging/current", ST, "    fsync_dir(layout.versions_dir(root))", "    pass", INSTALL),
    Mutant(
        "staging/current",
        ST,
        "    os.rename(stage, target)",
        "    shutil.copytree(stage, target)",
        INSTALL,
    ),
    Mutant(
        "staging/current",
        ST,
        "    write_manifest(stage, payload)\n    make_read_only(stage)",
        "    make_read_only(stage)\n    write_manifest(stage, payload)",
        INSTALL,
    ),
    Mutant(
        "staging/current",
        CU,
        "    os.replace(tmp, layout.current_link(root))",
        "    os.unlink(layout.current_link(root)) if os.path.lexists(layout.current_link(root)) else None\n    os.replace(tmp, layout.current_link(root))",
        INSTALL,
    ),
    Mutant("staging/current", CU, "        os.fsync(fd)", "        pass", INSTALL),
    Mutant(
        "staging/current",
        CU,
        '    os.symlink(f"versions/{runtime_id}", tmp)',
        '    os.symlink(f"{root}/versions/{runtime_id}", tmp)',
        INSTALL,
    ),
    # goals (the parser's own tests belong to the goals work; these run the tests of this branch)
    Mutant(
        "goals",
        G,
        '    if not line or line[0] in " \\t":',
        '    if not line or line[0] == " ":',
        GOALS,
    ),
    Mutant(
        "goals",
        G,
        '    if line.startswith("\\t"):\n        return line[1:].rstrip()',
        "    if False:\n        return line[1:].rstrip()",
        GOALS,
    ),
    Mutant("goals", G, '    if lines and lines[0].startswith("case "):', "    if False:", GOALS),
    Mutant(
        "goals",
        G,
        "        if len(candidate) - len(candidate.lstrip()) <= column:",
        "        if len(candidate) - len(candidate.lstrip()) < column:",
        GOALS,
    ),
    # sorry in probes: Lean's warning where only the probe can have caused it, and the token
    Mutant(
        "sorry",
        PR,
        "    if layout.probe_sorry:\n        return True",
        "    if False:\n        return True",
        SORRY,
    ),
    Mutant(
        "sorry",
        PR,
        "    if layout.owner is None or layout.owner_sorry:",
        "    if layout.owner is None:",
        SORRY,
    ),
    Mutant(
        "sorry",
        PR,
        "diag.is_sorry_warning(item) and _range(item)[0] >= layout.owner for item in items",
        "diag.is_sorry_warning(item) for item in items",
        SORRY,
    ),
    Mutant(
        "sorry",
        PR,
        "        kept_sorry = kept_sorry or diag.is_sorry_warning(item)",
        "        kept_sorry = False",
        SORRY,
    ),
    Mutant(
        "sorry",
        PR,
        "    return diag.is_unsolved_goals(item) or diag.is_sorry_warning(item)",
        "    return diag.is_sorry_warning(item)",
        SORRY,
    ),
    # goals over RPC: remembered fallback, one time bound, only string references released
    Mutant(
        "rpc",
        RP,
        "        if code in NO_RPC_CODES:\n            self.supported = False",
        "        if code in NO_RPC_CODES:\n            pass",
        RPC,
    ),
    Mutant(
        "rpc",
        RP,
        '                    timeout_s=budget.left("$/lean/rpc/call"),',
        "                    timeout_s=budget.timeout_s,",
        RPC,
    ),
    Mutant(
        "rpc",
        IN,
        '        if len(value) == 1 and isinstance(value.get("p", value.get("__rpcref")), str):',
        '        if len(value) == 1 and ("p" in value or "__rpcref" in value):',
        RPC,
    ),
    # lean_try's answer: every fitting step, and nothing is ever left out silently
    Mutant("grid", GR, "        form.headlines = True", "        form.headlines = False", GRID),
    Mutant("grid", GR, '            self.omitted["handles"] += 1\n', "", GRID),
    Mutant(
        "grid",
        GR,
        '        text = full.split("\\n", 1)[0] if self.form.headlines else full',
        "        text = full",
        GRID,
    ),
]


def _pins() -> list[Mutant]:
    from mutants_pins import PINS  # bench/ is on sys.path when this file runs as a script

    return list(PINS)


def _second() -> list[Mutant]:
    from mutants_second import SECOND

    return list(SECOND)


# The first list (above) was written with the tests in view; `pins` holds one weakening per
# safety check that a dedicated test pins; `second` was written from the product code alone.
LISTS = {"first": lambda: MUTANTS, "pins": _pins, "second": _second}


def copy_repo(work: Path) -> Path:
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    target = work / "repo"
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file() or source.is_symlink():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel, follow_symlinks=False)
    return target


def make_venv(repo: Path) -> Path:
    venv = repo / ".venv-test"  # the tests expect this name next to the code
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e", ".[test]"],
            cwd=repo,
            check=True,
        )
    return venv / "bin" / "python"


def run_tests(
    python: Path,
    repo: Path,
    tests: tuple[str, ...],
    timeout: float,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> str:
    argv = [
        str(python),
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "not slow",
        "--timeout",
        str(int(timeout)),
        *extra,
        *tests,
    ]
    try:
        done = subprocess.run(
            argv, cwd=repo, capture_output=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode == 5:
        return "no tests"  # everything was deselected: not a kill
    return "pass" if done.returncode == 0 else "fail"


# --- test selection by coverage (`--select coverage`) -----------------------------------------
#
# Once per run the fast suite runs under coverage.py with one context per test. The tests build
# their subprocesses' environment from scratch, so nothing rides on environment variables: while
# `<venv>/beam-mutation/active` exists, a `.pth` hook starts coverage in every Python process of
# the copy's venv, and takes as context the node id that the pytest plugin wrote for the nearest
# ancestor process that is running a test (`<venv>/beam-mutation/context/<pid>`). Installed
# runtimes run their interpreter with `-S` (no `.pth`): what runs there is not seen, and a mutant
# whose line no test was seen running falls back to its listed test directories.

_PLUGIN = """\
import os
import sys

import pytest

STATE = os.path.join(sys.prefix, "beam-mutation")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if os.path.exists(os.path.join(STATE, "active")):
        import coverage

        with open(os.path.join(STATE, "context", str(os.getpid())), "w") as handle:
            handle.write(item.nodeid)
        cov = coverage.Coverage.current()
        if cov is not None:
            cov.switch_context(item.nodeid)
    yield


def _lines(variable):
    path = os.environ.get(variable)
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        return set(handle.read().splitlines())


def pytest_collection_modifyitems(config, items):
    keep, skip = _lines("BEAM_MUTATION_KEEP"), _lines("BEAM_MUTATION_SKIP") or set()
    chosen = [i for i in items if (keep is None or i.nodeid in keep) and i.nodeid not in skip]
    dropped = [i for i in items if i not in chosen]
    if dropped:
        items[:] = chosen
        config.hook.pytest_deselected(items=dropped)


def pytest_runtest_logreport(report):
    path = os.environ.get("BEAM_MUTATION_FAILED")
    if path and report.failed:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(report.nodeid + "\\n")
"""

_PTH_HOOK = """\
import os
import sys

_STATE = os.path.join(sys.prefix, "beam-mutation")


def _context():
    pid = os.getpid()
    for _ in range(12):
        try:
            with open(os.path.join(_STATE, "context", str(pid))) as handle:
                return handle.read()
        except OSError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        if pid <= 1:
            return ""
    return ""


if os.path.exists(os.path.join(_STATE, "active")):
    try:
        import coverage

        _cov = coverage.Coverage(config_file=os.path.join(_STATE, "coveragerc"), auto_data=True)
        _cov._warn_no_data = False
        _cov.start()
        _found = _context()
        if _found:
            _cov.switch_context(_found)
    except Exception:
        pass
"""

_DUMP = """\
import json, sys
from coverage import CoverageData

data = CoverageData(sys.argv[1])
data.read()
wanted = json.loads(sys.argv[2])
out = {}
for measured in data.measured_files():
    for rel in wanted:
        if measured.endswith("/" + rel):
            by_line = data.contexts_by_lineno(measured)
            into = out.setdefault(rel, {})
            for line, contexts in by_line.items():
                into.setdefault(str(line), set()).update(c for c in contexts if c)
print(json.dumps({r: {l: sorted(c) for l, c in v.items()} for r, v in out.items()}))
"""


@dataclass
class Selection:
    """Which tests ran each line of the mutated files, and the tests that failed unmutated."""

    lines: dict[str, dict[int, set[str]]]
    failed: set[str]
    skip_file: Path

    def tests_for(self, repo: Path, mutant: Mutant) -> set[str]:
        text = (repo / mutant.path).read_text(encoding="utf-8")
        start = text.find(mutant.original)
        if start < 0:
            return set()
        first = text.count("\n", 0, start) + 1
        by_line = self.lines.get(mutant.path, {})
        indented = text.rfind("\n", 0, start) + 1
        found: set[str] = set()
        if text[indented].isspace():  # inside a function: the tests that ran these lines
            span = range(first, first + mutant.original.count("\n") + 1)
            found = set().union(*(by_line.get(n, set()) for n in span))
            for back in range(first - 1, max(first - 6, 0), -1):  # a multi-line statement
                if found:
                    break
                found = set(by_line.get(back, set()))
        if not found:  # module level (runs at import) or a line inside one: who ran the module
            lines = text.splitlines()
            found = set().union(
                *(c for n, c in by_line.items() if n <= len(lines) and lines[n - 1][:1].isspace())
            )
        return found - self.failed


def _site_packages(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def select_by_coverage(work: Path, repo: Path, python: Path, mutants: list[Mutant]) -> Selection:
    """Run the fast suite once under coverage with per-test contexts (cached in `work`)."""
    import json

    folder = work / "coverage"
    cached = folder / "map.json"
    skip_file = folder / "failed.txt"
    if not cached.exists():
        folder.mkdir(parents=True, exist_ok=True)
        check = subprocess.run([str(python), "-c", "import coverage"], capture_output=True)
        if check.returncode != 0:
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "coverage>=7.4"], check=True
            )
        site = _site_packages(python)
        (site / "beam_mutation_plugin.py").write_text(_PLUGIN, encoding="utf-8")
        (site / "beam_mutation_context.py").write_text(_PTH_HOOK, encoding="utf-8")
        (site / "zz_beam_mutation.pth").write_text("import beam_mutation_context\n")
        state = python.parent.parent / "beam-mutation"
        shutil.rmtree(state, ignore_errors=True)
        (state / "context").mkdir(parents=True)
        data = folder / "data"
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir()
        rc = state / "coveragerc"
        rc.write_text(
            "[run]\nparallel = true\nsigterm = true\n"
            f"data_file = {data}/.coverage\n"
            "include =\n    */beam_install/*\n    */beam_runtime/*\n    */beam_mcp/*\n",
            encoding="utf-8",
        )
        skip_file.write_text("")
        env = {**os.environ, "BEAM_MUTATION_FAILED": str(skip_file)}
        argv = [
            str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "beam_mutation_plugin", "-m", "not slow", "-n", "4", "tests",
        ]  # fmt: skip
        started = time.monotonic()
        print("running the fast suite under coverage (once)...", flush=True)
        (state / "active").write_text("")
        try:
            done = subprocess.run(
                argv, cwd=repo, env=env, capture_output=True, text=True, check=False
            )
        finally:
            (state / "active").unlink()
        (folder / "suite.log").write_text(done.stdout + done.stderr, encoding="utf-8")
        tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print(f"  {time.monotonic() - started:.0f}s: {tail[0]}", flush=True)
        subprocess.run(
            [str(python), "-m", "coverage", "combine", "--quiet", "--rcfile", str(rc)],
            cwd=data,
            check=True,
        )
        paths = sorted({m.path for m in LISTS["first"]()} | {m.path for m in mutants})
        dump = subprocess.run(
            [str(python), "-c", _DUMP, str(data / ".coverage"), json.dumps(paths)],
            capture_output=True,
            text=True,
            check=True,
        )
        cached.write_text(dump.stdout, encoding="utf-8")
    raw = json.loads(cached.read_text(encoding="utf-8"))
    lines = {rel: {int(n): set(c) for n, c in v.items()} for rel, v in raw.items()}
    failed = set(skip_file.read_text(encoding="utf-8").split())
    if failed:
        print(f"  {len(failed)} test(s) failed unmutated and are never selected", flush=True)
    return Selection(lines, failed, skip_file)


def drop_bytecode(path: Path) -> None:
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink()


def apply(repo: Path, mutant: Mutant) -> str | None:
    """Write the mutant into the copy; returns the original text, or None when not applicable."""
    path = repo / mutant.path
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.original) != 1:
        return None
    path.write_text(text.replace(mutant.original, mutant.replacement), encoding="utf-8")
    drop_bytecode(path)
    return text


def restore(repo: Path, mutant: Mutant, text: str) -> None:
    path = repo / mutant.path
    path.write_text(text, encoding="utf-8")
    drop_bytecode(path)


def _run_mutant(
    repo: Path,
    python: Path,
    mutant: Mutant,
    timeout: float,
    selection: Selection | None,
    chosen: set[str],
) -> tuple[str, str]:
    """(outcome of the tests, which tests): the covering ones, else the listed ones."""
    if selection is None:
        return run_tests(python, repo, mutant.tests, timeout), "listed"
    env = {**os.environ, "BEAM_MUTATION_SKIP": str(selection.skip_file)}
    plugin = ("-p", "beam_mutation_plugin")
    if chosen:
        keep = selection.skip_file.with_name("keep.txt")
        keep.write_text("\n".join(sorted(chosen)) + "\n", encoding="utf-8")
        files = tuple(sorted({nodeid.split("::")[0] for nodeid in chosen}))
        workers = ("-n", "4") if len(chosen) > 8 else ()
        outcome = run_tests(
            python,
            repo,
            files,
            timeout,
            (*plugin, *workers),
            {**env, "BEAM_MUTATION_KEEP": str(keep)},
        )
        if outcome != "pass" and outcome != "no tests":
            return outcome, f"cov:{len(chosen)}"
        # Survived its covering tests: coverage cannot see the interpreters of installed
        # runtimes (run with -S), so the listed directories decide before it is a survivor.
    # whole directories on a loaded machine: a longer bound, so that slowness is not a kill
    return run_tests(python, repo, mutant.tests, 3 * timeout, (*plugin, "-n", "4"), env), "dirs"


def audit(
    repo: Path,
    python: Path,
    mutants: list[Mutant],
    timeout: float,
    selection: Selection | None = None,
) -> list[tuple[Mutant, str]]:
    results = []
    for number, mutant in enumerate(mutants, 1):
        chosen = set() if selection is None else selection.tests_for(repo, mutant)  # unmutated
        original = apply(repo, mutant)
        which = ""
        if original is None:
            outcome = "snippet not found"
        else:
            started = time.monotonic()
            try:
                tests, which = _run_mutant(repo, python, mutant, timeout, selection, chosen)
            finally:
                restore(repo, mutant, original)
            outcome = "survived" if tests == "pass" else f"killed ({tests})"
            outcome += f" {time.monotonic() - started:.0f}s"
        first = mutant.original.strip().splitlines()[0][:60]
        print(
            f"[{number:2}/{len(mutants)}] {mutant.module:16} {outcome:22} {which:8} {mutant.path}: {first}",
            flush=True,
        )
        results.append((mutant, outcome))
    return results


def report(results: list[tuple[Mutant, str]]) -> None:
    modules: dict[str, list[tuple[Mutant, str]]] = {}
    for mutant, outcome in results:
        modules.setdefault(mutant.module, []).append((mutant, outcome))
    print("\nmodule            killed / counted   rate")
    for module, rows in modules.items():
        counted = [o for m, o in rows if not m.equivalent and o != "snippet not found"]
        killed = sum(o.startswith("killed") for o in counted)
        rate = f"{100 * killed / len(counted):.0f} %" if counted else "n/a"
        print(f"{module:16}  {killed:3} / {len(counted):<3}           {rate}")
    for title, keep in (
        ("survivors", lambda m, o: o.startswith("survived") and not m.equivalent),
        ("equivalent (not counted)", lambda m, o: bool(m.equivalent)),
        ("snippet not found (code moved)", lambda m, o: o == "snippet not found"),
    ):
        rows = [(m, o) for m, o in results if keep(m, o)]
        if rows:
            print(f"\n{title}:")
            for m, o in rows:
                why = f" -- {m.equivalent}" if m.equivalent else ""
                print(f"  {m.module}: {m.path}: {m.original.strip().splitlines()[0]!r} ({o}){why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="modules to audit (default: all)")
    parser.add_argument(
        "--list",
        choices=sorted(LISTS),
        default="first",
        help="which mutant list: the first one (below), the pinned checks, or the second one",
    )
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant")
    parser.add_argument("--check", action="store_true", help="only check that snippets occur")
    parser.add_argument("--work", type=Path, help="reuse this work directory (kept afterwards)")
    parser.add_argument(
        "--select",
        choices=("listed", "coverage"),
        default="listed",
        help="run each mutant's listed tests, or the tests seen running its line (the fast "
        "suite runs once under coverage; the listed tests are the fallback)",
    )
    args = parser.parse_args()
    mutants = [m for m in LISTS[args.list]() if not args.only or m.module in args.only]
    if args.check:
        for m in mutants:
            count = (REPO / m.path).read_text(encoding="utf-8").count(m.original)
            if count != 1:
                print(f"{m.module}: {m.path}: found {count} times: {m.original!r}")
        print(f"{len(mutants)} mutants checked")
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="beam-mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo = copy_repo(work)  # again on reuse: the copy gets the worktree's current files
        python = make_venv(repo)
        selection = None
        if args.select == "coverage":  # tests that fail unmutated are never run: no baseline
            selection = select_by_coverage(work, repo, python, mutants)
        else:
            suites = sorted({t for m in mutants for t in m.tests})
            baseline = run_tests(python, repo, tuple(suites), 1800)
            if baseline != "pass":
                sys.exit(f"the unmutated tests do not pass ({baseline}); fix them first")
        report(audit(repo, python, mutants, args.timeout, selection))
    finally:
        if args.work is None:
            subprocess.run(["chmod", "-R", "u+rwx", str(work)], check=False)
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)
    main()
