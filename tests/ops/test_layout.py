"""The shape of the code, as DESIGN.md "Code layout inside memory/" and STYLE.md state it: asking never
imports the background read; no module passes 400 lines nor a function 60; no two modules import each other,
and the apps depend one way; no import hides inside a function; no SQL row is read by position.

The checks read the source (ast), never import it, so each stands alone and takes well under a second."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "memory", "mcp", "console", "twin")
MODULE_LINES_MAX = 400  # STYLE.md: split a module that passes about 400 lines
FUNCTION_LINES_MAX = 60  # STYLE.md (issue 11): functions under about 60 lines, the def line to the last
# STYLE.md: accounts <- memory <- {mcp, console}. What each app may import of the others (twin, the wiring and
# the process's infrastructure, sits apart: its urls import every app, and every app may use its helpers).
MAY_IMPORT = {
    "accounts": {"twin"},
    "memory": {"accounts", "twin"},
    "mcp": {"accounts", "memory", "twin"},
    "console": {"accounts", "memory", "twin"},
}
# Function-local imports allowed besides AppConfig.ready (where Django wants signal receivers and schema
# extensions imported), each with why: none today.
LOCAL_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("memory.model.int8_file", "quantize"): "onnx takes 0.7 s to import, and only the making of the model file, once "
    "a machine, needs it: not every process that starts",
}
FETCHES = {"fetchone", "fetchall", "fetchmany"}

# Run in a fresh interpreter: in the test process, other tests (and Django's own start-up for them) have
# imported the read pipeline already, which would hide an import from memory.query.
IMPORT_THE_QUERY_ROOM = """
import importlib, json, pkgutil, sys
import django
django.setup()
import memory.query
names = [f"memory.query.{m.name}" for m in pkgutil.iter_modules(memory.query.__path__)]
for name in names:
    importlib.import_module(name)
read = sorted(m for m in sys.modules if m == "memory.read" or m.startswith("memory.read."))
print(json.dumps({"imported": names, "read": read}))
"""


def test_the_query_room_never_imports_the_read_pipeline():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "twin.settings"}
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_THE_QUERY_ROOM], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"memory.query.search", "memory.query.retrieval", "memory.query.browse", "memory.query.history"} <= set(
        found["imported"]
    )
    assert found["read"] == [], f"importing memory.query pulled in {found['read']}"


def test_no_module_passes_400_lines():
    modules = [path for app in APPS for path in (ROOT / app).rglob("*.py") if "migrations" not in path.parts]
    assert len(modules) > len(APPS)
    long = {
        str(path.relative_to(ROOT)): n
        for path in modules
        if (n := len(path.read_text().splitlines())) > MODULE_LINES_MAX
    }
    assert long == {}, f"modules over {MODULE_LINES_MAX} lines: {long}"


# ---- the source, read as ast --------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    """Module name -> file, for every module of the apps but their migrations."""
    return {
        _module_name(path): path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.parts
    }


def _trees() -> dict[str, ast.Module]:
    return {name: ast.parse(path.read_text(), str(path)) for name, path in _sources().items()}


def _functions(tree: ast.AST):
    return (node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known) -> set[str]:
    """The project modules an import statement loads: each named module (a name imported from a package
    that is a module of its own is that module) and the packages above it, whose __init__ runs first."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    found = set()
    for name in names:
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        found.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
    return {name for name in found if name != module and not module.startswith(name + ".")}


def import_graph(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in it: a function-local import counts too)."""
    sources = _sources()
    return {
        name: set().union(
            *(
                _imported(name, sources[name].name == "__init__.py", node, trees)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom))
            )
        )
        for name, tree in trees.items()
    }


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a loop (Tarjan's strongly connected
    components, iteratively: of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            target = next((t for t in edges if t in graph), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def long_functions(tree: ast.AST) -> dict[str, int]:
    return {
        f"{node.name}:{node.lineno}": n
        for node in _functions(tree)
        if (n := node.end_lineno - node.lineno + 1) > FUNCTION_LINES_MAX
    }


def local_imports(tree: ast.AST) -> list[tuple[str, int]]:
    """(function, line) of each import inside a function, but those in an AppConfig's ready()."""
    ready = {
        id(node)
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef) and any(ast.unparse(base).endswith("AppConfig") for base in cls.bases)
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "ready"
    }
    found = []
    for function in _functions(tree):
        if id(function) in ready:
            continue
        inner = {id(n) for f in _functions(function) if f is not function for n in ast.walk(f)}
        found += [
            (function.name, node.lineno)
            for node in ast.walk(function)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in inner
        ]
    return found


def _is_fetch(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FETCHES


def positional_row_reads(tree: ast.AST) -> list[int]:
    """Lines that read a cursor's result by position: `cursor.fetchone()[0]`, or `row[3]` on a name bound to
    a fetch (`row = cursor.fetchone()`, `for row in cursor.fetchall()`)."""
    found = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Subscript) and _is_fetch(node.value)]
    for scope in [tree, *_functions(tree)]:
        bound = {
            target.id
            for node in ast.walk(scope)
            if isinstance(node, ast.Assign) and _is_fetch(node.value)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        bound |= {
            node.target.id
            for node in ast.walk(scope)
            if isinstance(node, (ast.For, ast.comprehension))
            and _is_fetch(node.iter)
            and isinstance(node.target, ast.Name)
        }
        found += [
            node.lineno
            for node in ast.walk(scope)
            if isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ]
    return sorted(set(found))


# ---- the checks ---------------------------------------------------------------------------------------------


def test_no_two_modules_import_each_other():
    graph = import_graph(_trees())
    assert len(graph) > len(APPS) and any(graph.values())
    cycles = import_cycles(graph)
    assert cycles == [], f"modules importing each other (round a loop): {cycles}"


def test_the_apps_depend_one_way():
    graph = import_graph(_trees())
    wrong = sorted(
        {
            (module, target)
            for module, targets in graph.items()
            for target in targets
            if (app := module.split(".")[0]) in MAY_IMPORT
            and (other := target.split(".")[0]) != app
            and other not in MAY_IMPORT[app]
        }
    )
    assert wrong == [], f"imports against accounts <- memory <- {{mcp, console}}: {wrong}"


def test_no_function_passes_60_lines():
    long = {f"{name}.{function}": n for name, tree in _trees().items() for function, n in long_functions(tree).items()}
    assert long == {}, f"functions over {FUNCTION_LINES_MAX} lines: {long}"


def test_no_import_hides_inside_a_function():
    hidden = {
        f"{name}.{function}:{line}"
        for name, tree in _trees().items()
        for function, line in local_imports(tree)
        if (name, function) not in LOCAL_IMPORTS_ALLOWED
    }
    assert hidden == set(), f"function-local imports (import at the top, or give a reason): {sorted(hidden)}"


def test_no_sql_row_is_read_by_position():
    by_position = {name: lines for name, tree in _trees().items() if (lines := positional_row_reads(tree))}
    assert by_position == {}, f"rows read by position (by name: memory.selectors.named_rows): {by_position}"


BROKEN = """
import os

def ready():
    import json
    return json

class Apps(AppConfig):
    def ready(self):
        from . import signals

def count(cursor):
    cursor.execute("SELECT 1")
    row = cursor.fetchone()
    total = cursor.fetchone()[0]
    for line in cursor.fetchall():
        total += line[2]
    return row[1] + total + len(row)
""" + "\n".join(["def long():"] + ["    x = 1"] * FUNCTION_LINES_MAX)


@pytest.mark.parametrize(
    "check, expected",
    [
        (local_imports, [("ready", 5)]),  # a function named ready is no AppConfig's
        (positional_row_reads, [15, 17, 18]),
        (long_functions, {"long:19": FUNCTION_LINES_MAX + 1}),
    ],
)
def test_the_checks_catch_what_they_look_for(check, expected):
    assert check(ast.parse(BROKEN)) == expected


def test_the_cycle_check_catches_a_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert import_cycles(graph) == [["a", "b", "c"]]
