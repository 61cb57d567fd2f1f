"""The package's shape (docs/architecture.md): which part may import which, no import circle,
and modules that stay small. Every import counts, also one made inside a function."""

import ast
from pathlib import Path

import ankita

SRC = Path(ankita.__file__).parent
BASE = {"_errors", "_models", "_config", "_validate", "_eventdata", "_files", "_jsonl"}

# What each part may import besides itself and the base modules.
ALLOWED = {
    "base": set(),
    "analysis": set(),
    "embed": set(),
    "store": set(),
    "search": {"analysis", "store"},
    "ops": {"analysis", "store", "search"},
    "engine": {"analysis", "search", "store", "embed", "ops"},
    "api": {"analysis", "embed", "engine"},  # the package's public names
    "tools": {"engine"},
    "dev": {"analysis", "search", "store", "embed", "ops", "engine", "api"},
    "companion": {"engine", "api", "tools", "console"},
    # The server serves the companion's card and tasks to its owner.
    "server": {
        "analysis",
        "search",
        "store",
        "embed",
        "ops",
        "engine",
        "api",
        "tools",
        "companion",
    },
    "console": {"engine"},
    "cli": {
        "analysis",
        "search",
        "store",
        "embed",
        "ops",
        "engine",
        "api",
        "tools",
        "dev",
        "server",
        "companion",
        "console",
    },
    "main": {"cli"},
}
MAX_LINES = 500  # no module over this: one responsibility you can state in a line


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def part_of(module: str) -> str:
    names = module.split(".")
    if len(names) == 1:
        return "api"
    top = names[1]
    if top in BASE:
        return "base"
    if top in ("analysis", "search", "store", "embed", "ops", "server", "dev", "companion", "cli"):
        return top
    return {
        "_memory": "engine",
        "_write": "engine",
        "_bulk": "engine",
        "_compare": "engine",
        "_multilingual": "engine",
        "_missing": "engine",
        "_parses": "engine",
        "_novelty": "engine",
        "_merge_check": "engine",
        "tools": "tools",
        "_console": "console",
        "__main__": "main",
    }[top]


def imports() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: relative import"
                if node.module and node.module.split(".")[0] == "ankita":
                    found.add(node.module)
                    found |= {
                        f"{node.module}.{a.name}"
                        for a in node.names
                        if f"{node.module}.{a.name}" in modules
                    }
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "ankita"}
        # A package's own __init__ (a docstring) is no dependency.
        graph[name] = {
            m
            for m in found
            if m in modules
            and m != name
            and not (modules[m].name == "__init__.py" and m != "ankita")
        }
    return graph


def wrong_imports(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for importer, targets in graph.items():
        mine = part_of(importer)
        for target in targets:
            theirs = part_of(target)
            if theirs not in (mine, "base") and theirs not in ALLOWED[mine]:
                wrong.append(f"{importer} ({mine}) imports {target} ({theirs})")
    return wrong


def test_each_part_imports_only_the_parts_below_it():
    assert wrong_imports(imports()) == []


def test_the_engine_never_imports_the_companion_or_a_door():
    graph = imports()
    engine = [
        m
        for m in graph
        if part_of(m) in ("base", "analysis", "search", "store", "embed", "ops", "engine")
    ]
    for module in engine:
        assert not {
            t
            for t in graph[module]
            if part_of(t) in ("companion", "cli", "server", "dev", "console")
        }, module


COMPANION_PARTS = {"chat", "persona", "tasks", "channels", "voice"}
# What may stay at the companion's top: its public names, the CLI over all parts, the app
# launcher chat and voice share, where its files live, their SQLite helper, and the seam.
COMPANION_TOP = {"__init__", "_cli", "_apps", "_paths", "_localdb", "state"}


def test_the_companion_shows_its_parts():
    root = SRC / "companion"
    parts = {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    assert parts == COMPANION_PARTS
    for part in parts:
        purpose = ast.get_docstring(ast.parse((root / part / "__init__.py").read_text()))
        assert purpose and len(purpose.splitlines()) == 1, f"{part}: a one-line purpose"
    assert {p.stem for p in root.glob("*.py")} == COMPANION_TOP


def test_the_server_reads_the_companion_through_its_one_seam():
    graph = imports()
    reached = {
        t for m in graph if part_of(m) == "server" for t in graph[m] if part_of(t) == "companion"
    }
    assert reached == {"ankita.companion.state"}


def test_no_import_circle():
    graph = imports()
    graph.pop("ankita")  # the package re-exports; its parts never import it back in a circle
    seen: dict[str, int] = {}
    circles = []

    def visit(module: str, path: list[str]) -> None:
        seen[module] = 1
        for target in sorted(graph.get(module, ())):
            if seen.get(target) == 1:
                circles.append(path[path.index(target) :] + [target])
            elif target not in seen:
                visit(target, [*path, target])
        seen[module] = 2

    for module in sorted(graph):
        if module not in seen:
            visit(module, [module])
    assert circles == []


def test_modules_stay_small():
    over = {}
    for path in SRC.rglob("*.py"):
        name = path.relative_to(SRC).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            over[name] = lines
    assert over == {}


def test_the_detector_sees_a_wrong_import(tmp_path, monkeypatch):
    # A store module that imports the companion must be caught.
    fake = tmp_path / "ankita"
    (fake / "store").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "store" / "__init__.py").write_text("")
    (fake / "store" / "_x.py").write_text("from ankita.companion._y import z\n")
    (fake / "companion").mkdir()
    (fake / "companion" / "__init__.py").write_text("")
    (fake / "companion" / "_y.py").write_text("z = 1\n")
    monkeypatch.setattr(__import__(__name__), "SRC", fake)
    assert wrong_imports(imports()) == [
        "ankita.store._x (store) imports ankita.companion._y (companion)"
    ]
