"""The workspace's module graph from import headers, and the reverse dependency cone of a file.

Every ``.lean`` file under the root (hidden entries and ``.lake`` left out) whose path is a valid
module name is a workspace module. Its header is read as Lean reads it: after optional
``module`` and ``prelude``, the ``import`` lines (``public``, ``meta`` and ``all`` variants too),
comments ignored. The cone of some modules is those modules and every workspace module that
imports one of them, directly or not: the files an edit of them can break. Their closure is
those modules and every workspace module they import, directly or not: the files their
meaning depends on.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from beam_runtime import safe_read
from beam_runtime.broker.session.header import imports as header_imports
from beam_runtime.search.sources import lean_files

_COMPONENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_'!?]*$")


@dataclass(frozen=True)
class Graph:
    paths: dict[str, str]  # module -> absolute path
    imports: dict[str, tuple[str, ...]]  # module -> workspace modules it imports
    external: dict[str, tuple[str, ...]] = field(default_factory=dict)  # -> other imports

    def closure(self, modules: list[str]) -> list[str]:
        """``modules`` and every workspace module they import, directly or not, in import
        order: the sources a verification of them depends on."""
        seen = set(modules)
        queue = deque(modules)
        while queue:
            for dep in self.imports.get(queue.popleft(), ()):
                if dep not in seen:
                    seen.add(dep)
                    queue.append(dep)
        return [module for module in self.import_order() if module in seen]

    def reaches_outside(self, module: str) -> bool:
        """Whether ``module`` or a workspace module it imports imports a module from outside
        the workspace (other than Lean's own ``Init``, ``Std`` and ``Lean``)."""
        return any(
            any(m.split(".")[0] not in ("Init", "Std", "Lean") for m in self.external.get(dep, ()))
            for dep in self.closure([module])
        )

    def importers(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {module: set() for module in self.paths}
        for module, imported in self.imports.items():
            for target in imported:
                found[target].add(module)
        return found

    def cone(self, modules: list[str]) -> list[str]:
        """``modules`` and their workspace importers, each after the modules it imports."""
        importers = self.importers()
        seen = set(modules)
        queue = deque(modules)
        while queue:
            for importer in importers.get(queue.popleft(), ()):
                if importer not in seen:
                    seen.add(importer)
                    queue.append(importer)
        return [module for module in self.import_order() if module in seen]

    def import_order(self) -> list[str]:
        order: list[str] = []
        placed: set[str] = set()
        for start in sorted(self.paths):
            self._place(start, placed, order)
        return order

    def _place(self, start: str, placed: set[str], order: list[str]) -> None:
        stack: list[tuple[str, int]] = [(start, 0)]
        visiting = {start}
        while stack:
            module, index = stack.pop()
            if module in placed:
                continue
            deps = self.imports.get(module, ())
            if index < len(deps):
                stack.append((module, index + 1))
                dep = deps[index]
                if dep not in placed and dep not in visiting:  # an import cycle is Lake's error
                    visiting.add(dep)
                    stack.append((dep, 0))
                continue
            placed.add(module)
            order.append(module)

    def upstream_failed(self, module: str, failed: set[str]) -> bool:
        """Whether ``module`` or anything it imports (transitively) is in ``failed``."""
        seen = {module}
        queue = deque([module])
        while queue:
            current = queue.popleft()
            if current in failed:
                return True
            for dep in self.imports.get(current, ()):
                if dep not in seen:
                    seen.add(dep)
                    queue.append(dep)
        return False


def module_of(root: str, abs_path: str) -> str | None:
    rel = os.path.relpath(abs_path, root)
    if rel.startswith(os.pardir) or not rel.endswith(".lean"):
        return None
    parts = Path(rel[: -len(".lean")]).parts
    if parts[0] in (".lake", "lake-packages") or rel == "lakefile.lean":
        return None
    if not all(_COMPONENT.match(part) for part in parts):
        return None
    return ".".join(parts)


def workspace_graph(root: str) -> Graph:
    paths: dict[str, str] = {}
    for path, _stat in lean_files(root):
        module = module_of(root, path)
        if module is not None:
            paths[module] = path
    imports: dict[str, tuple[str, ...]] = {}
    external: dict[str, tuple[str, ...]] = {}
    for module, path in paths.items():
        try:
            text = safe_read.read_regular(path, safe_read.SOURCE_CAP).decode("utf-8", "replace")
        except OSError:
            text = ""
        named = header_imports(text)
        imports[module] = tuple(m for m in named if m in paths and m != module)
        external[module] = tuple(m for m in named if m not in paths)
    return Graph(paths, imports, external)
