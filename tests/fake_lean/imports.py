"""Header processing: which imports resolve, header errors, and imported declarations."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.fake_lean.config import Settings
from tests.fake_lean.elab import Env, elaborate
from tests.fake_lean.library import LIBRARY_MODULES
from tests.fake_lean.model import Decl
from tests.fake_lean.source import split_commands, split_lines

CONFIG_FAILED = (
    "Failed to configure the Lake workspace. Please restart the server after fixing the error "
    "above."
)
MUST_REBUILD = (
    'Imports are out of date and must be rebuilt; use the "Restart File" command in your editor.'
)
SHOULD_REBUILD = (
    'Imports are out of date and should be rebuilt; use the "Restart File" command in your editor.'
)


@dataclass
class HeaderResult:
    fatal_message: str | None = None
    local_modules: list[str] = field(default_factory=list)
    decls: dict[str, Decl] = field(default_factory=dict)


def imported_modules(lines: list[str], header_end: int) -> list[str]:
    """Imported module names as Lean reads them: `«Demo».«Basic»` is `Demo.Basic`."""
    modules: list[str] = []
    for line in lines[:header_end]:
        match = re.match(r"^\s*(?:public\s+)?import\s+(.*)$", line.split("--")[0])
        if match:
            tokens = re.findall(r"(?:«[^»]*»|[^\s«])+", match.group(1))
            modules.extend(".".join(_components(token)) for token in tokens)
    return modules


def _components(name: str) -> list[str]:
    """`«A».B` -> [`A`, `B`]: dots inside an escape belong to the component."""
    return [part.strip("«»") for part in re.findall(r"«[^»]*»|[^.]+", name)]


def module_path(root: Path, module: str) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".lean")


def module_of(root: Path, path: Path) -> str | None:
    try:
        relative = path.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    if relative.suffix != ".lean":
        return None
    return ".".join(relative.with_suffix("").parts)


def process_header(
    settings: Settings,
    root: Path,
    uri: str,
    modules: list[str],
    build_mode: str,
    open_texts: dict[str, str],
) -> HeaderResult:
    result = HeaderResult()
    if uri.startswith("untitled:"):
        return result
    if settings.lake_invalid_config is not None:
        result.fatal_message = CONFIG_FAILED
        return result
    if modules and build_mode == "never" and settings.stale_imports:
        result.fatal_message = MUST_REBUILD
        return result
    for module in modules:
        head = module.split(".")[0]
        if head in LIBRARY_MODULES:
            continue
        path = module_path(root, module)
        text = open_texts.get(path.as_uri())
        if text is None and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
        if text is None:
            result.fatal_message = _unknown_module(settings, root, head)
            return result
        result.local_modules.append(module)
        result.decls.update(collect_decls(settings, text, path.as_uri(), root))
    return result


def _unknown_module(settings: Settings, root: Path, head: str) -> str:
    entries = [str(settings.sysroot / "lib" / "lean")]
    if settings.under_lake:
        entries.append(str(root / ".lake" / "build" / "lib" / "lean"))
    return (
        f"unknown module prefix '{head}'\n\nNo directory '{head}' or file '{head}.olean' in the "
        "search path entries:\n" + "\n".join(entries)
    )


def collect_decls(
    settings: Settings, text: str, uri: str, root: Path | None = None, seen: set[str] | None = None
) -> dict[str, Decl]:
    """Declarations of another file, no costs paid; with ``root``, also those of the workspace
    modules it imports, transitively (each once), as Lean's environment holds them."""
    lines = split_lines(text)
    header_end, commands = split_commands(lines)
    env = Env()
    if root is not None:
        seen = set() if seen is None else seen
        for module in imported_modules(lines, header_end):
            path = module_path(root, module)
            if module in seen or not path.is_file():
                continue
            seen.add(module)
            imported = path.read_text(encoding="utf-8", errors="replace")
            env.decls.update(collect_decls(settings, imported, path.as_uri(), root, seen))
    for command in commands:
        result = elaborate(command, lines, env, settings.texts, uri, None)
        for decl in result.decls:
            env.decls[decl.name] = decl
        env.namespaces, env.opens = result.namespaces, result.opens
    return env.decls
