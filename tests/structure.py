"""The library's structure measured from its source (docs/architecture.md, "Structure in numbers"):
import circles, imports that run upwards through the layers, private names used across module
lines, and private modules (`pkg._name`) imported from outside their package. Every import counts,
those inside functions included. (Function size is ruff's PLR0915, `make lint`.)

    python tests/structure.py [PACKAGE_DIR]     # the table of docs/architecture.md

tests/test_layout.py holds the library to zero on each. The import graph is built with `ast`
alone (no import is executed), and circles are the strongly connected components of that graph
(Tarjan 1972, via `graphlib`-free iteration so a circle of any length is found).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "analysis" / "benchreport"

#: the layers from the bottom up: a module may import its own layer and those below, never above.
#: Keys are the first part of the module's name under `benchreport` (a module or a subpackage).
LAYERS: dict[str, int] = {
    # 0: foundations every layer may use (no pandas pipeline of their own)
    "version": 0,
    "reserved": 0,
    "errors": 0,
    "columns": 0,
    "conditions": 0,
    "thresholds": 0,
    "format": 0,
    "progress": 0,
    "_memory": 0,
    "resources": 0,
    "extras": 0,
    "locks": 0,
    # 1: reading run files; 2: the tidy tables and the JSON Schema made from the run format
    "load": 1,
    "schema": 2,
    "tables": 2,
    # 3: statistics (pure); 4: flags (pure, read statistics); 5: the run store (Parquet files)
    "stats": 3,
    "flags": 4,
    "store": 5,
    # 6: the nightly route (a store read date by date, cached); 7: the pipeline and its options
    "days": 6,
    "source": 7,
    "pipeline": 7,
    "options": 7,
    # 8: output: files written atomically, the report, the site, the analyst's side
    "outdir": 8,
    "report": 8,
    "site": 8,
    "explore": 8,
    "before_after": 8,
    # 9: the command line, and the package's face (benchreport/__init__.py re-exports `compare`)
    "__init__": 9,
    "__main__": 9,
    "cli": 9,
}
#: inside a layer, a view-model never imports its renderer
INNER_ORDER: dict[str, int] = {
    "benchreport.report.model.sections": 0,
    "benchreport.report.model.figures": 0,
    "benchreport.report.render.html": 1,
}


@dataclass
class Structure:
    modules: dict[str, Path]
    imports: dict[str, set[str]] = field(default_factory=dict)
    private_uses: list[tuple[str, str, str]] = field(default_factory=list)  # (user, module, name)

    def circles(self) -> list[list[str]]:
        return [c for c in _strongly_connected(self.imports) if len(c) > 1]

    def upward(self) -> list[tuple[str, str]]:
        return sorted((a, b) for a, targets in self.imports.items() for b in targets if _runs_upward(a, b))

    def private_module_uses(self) -> list[tuple[str, str]]:
        """(importer, module) where `module` (or a package above it) is named `_x` and the importer
        is not inside the package that holds it."""
        found = []
        for importer, targets in self.imports.items():
            for target in targets:
                parts = target.split(".")
                for depth, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__"):
                        owner = ".".join(parts[:depth])
                        if importer != owner and not importer.startswith(owner + "."):
                            found.append((importer, target))
                        break
        return sorted(found)

    def summary(self) -> dict[str, int]:
        return {
            "import circles": len(self.circles()),
            "upward imports": len(self.upward()),
            "private names crossing modules": len(self.private_uses),
            "private modules imported from outside their package": len(self.private_module_uses()),
        }


def measure(package: Path = PACKAGE) -> Structure:
    """Read every module of `package` and measure it."""
    modules = {_module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    structure = Structure(modules, {name: set() for name in modules})
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _read_imports(structure, name, path, tree)
        _read_private_attributes(structure, name, tree, aliases)
    return structure


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else "__init__"]


def _runs_upward(importer: str, imported: str) -> bool:
    if layer(imported) > layer(importer):
        return True
    inner = [(p, rank) for p, rank in INNER_ORDER.items()]
    rank_of = lambda m: next((r for p, r in inner if m == p or m.startswith(p + ".")), None)  # noqa: E731
    a, b = rank_of(importer), rank_of(imported)
    return a is not None and b is not None and b > a


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _read_imports(structure: Structure, name: str, path: Path, tree: ast.AST) -> dict[str, str]:
    """Record `name`'s imports of other modules of the package; return local alias -> module."""
    modules, aliases = structure.modules, {}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    structure.imports[name].add(alias.name)
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    target = submodule
                    aliases[alias.asname or alias.name] = submodule
                elif base in modules:
                    target = base
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        structure.private_uses.append((name, base, alias.name))
                else:
                    continue
                if target != name:
                    structure.imports[name].add(target)
    return aliases


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _read_private_attributes(structure: Structure, name: str, tree: ast.AST, aliases: dict) -> None:
    """`module._name` where `module` is another module of the package imported here."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != name
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            structure.private_uses.append((name, aliases[node.value.id], node.attr))


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def main(argv: list[str]) -> int:
    structure = measure(Path(argv[0]) if argv else PACKAGE)
    print("| measure | count |\n|---|---|")
    for label, count in structure.summary().items():
        print(f"| {label} | {count} |")
    if "-v" in argv or True:
        for circle in structure.circles():
            print("circle:", " -> ".join(circle), file=sys.stderr)
        for a, b in structure.upward():
            print(f"upward: {a} -> {b}", file=sys.stderr)
        for user, module, private in structure.private_uses:
            print(f"private: {user} uses {module}.{private}", file=sys.stderr)
        for importer, module in structure.private_module_uses():
            print(f"private module: {importer} imports {module}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
