"""The shape of the code, as CONTRIBUTING.md "The layout rules" states it: asking never imports the background
read; no module passes 400 lines nor a function 60; no two modules import each other, and the apps depend one
way; no import hides inside a function; no SQL row is read by position. And the words around it: every module
is named where a newcomer looks for it (README.md's layout table, docs/architecture.md), and no file speaks of
how the project was made or cites a document outside it.

The checks read the source (ast) and the text, never import it, so each stands alone and takes well under a
second. Each is first shown to catch what it looks for, on a planted fault."""

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "memory", "mcp_server", "console", "twin")
MODULE_LINES_MAX = 400  # a module that passes it holds two subjects: split it
FUNCTION_LINES_MAX = 60  # functions under about 60 lines, the def line to the last, so each reads at a glance
# accounts <- memory <- {mcp_server, console}. What each app may import of the others (twin, the wiring and
# the process's infrastructure, sits apart: its urls import every app, and every app may use its helpers).
MAY_IMPORT = {
    "accounts": {"twin"},
    "memory": {"accounts", "twin"},
    "mcp_server": {"accounts", "memory", "twin"},
    "console": {"accounts", "memory", "twin"},
}
# Function-local imports allowed besides AppConfig.ready (where Django wants signal receivers and schema
# extensions imported), each with why: none today.
LOCAL_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("memory.model.int8_file", "quantize"): "onnx is slow to import, and only the making of the model file, once "
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
    found: set[str] = set()
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
    assert wrong == [], f"imports against accounts <- memory <- {{mcp_server, console}}: {wrong}"


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


# ---- the words around the code -------------------------------------------------------------------------------

# How the project was made is the git log's to tell, and a document outside the project is one a reader of it
# does not have. Each pattern is written so this file does not match it.
MAKING = re.compile(
    r"\bsession\s+[0-9]+\b|\(issue\s+[0-9]+\)|\bissue\s+#?[0-9]+\b|\bDESIGN\.md\b|\bSTYLE\.md\b", re.IGNORECASE
)
OUTSIDE = "../" + "shared"
# The one outside place the project names: the bench data's default folder, where bench/ and the docs of its
# setting (TWIN_BENCH_DATA) say so.
BENCH_DATA_DEFAULT = OUTSIDE + "/bench"
BENCH_DATA_DOCS = ("bench/", "CONTRIBUTING.md")
LAYOUT_SECTION = "## How the code is laid out"


def _tracked_texts() -> dict[str, str]:
    """Every tracked text file of the project by path, but the conformance suite's installed packages and npm's
    lock file (not ours to word)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    texts = {}
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if not name or "node_modules/" in name or path.name == "package-lock.json" or not path.is_file():
            continue
        data = path.read_bytes()
        try:
            texts[name] = "" if b"\0" in data else data.decode()
        except UnicodeDecodeError:  # not text
            continue
    return texts


def words_of_making(texts: dict[str, str]) -> list[str]:
    """path:line of each place that speaks of how the project was made (a working session's or an issue's
    number, design notes kept outside it) or cites a document outside it, but the bench data's default."""
    found = []
    for name, text in texts.items():
        may_name_data = name.startswith(BENCH_DATA_DOCS) and "TWIN_BENCH_DATA" in text
        lines = {text.count("\n", 0, match.start()) + 1 for match in MAKING.finditer(text)}
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE in (line.replace(BENCH_DATA_DEFAULT, "") if may_name_data else line):
                lines.add(number)
        found += [f"{name}:{number}" for number in sorted(lines)]
    return found


def _named(text: str, name: str) -> bool:
    """`name` (a path or a file name) written whole in `text`, not as the tail of a longer path."""
    return re.search(rf"(?<![\w/.]){re.escape(name)}(?!\w)", text) is not None


def unnamed_modules(modules: list[str], readme: str, architecture: str) -> list[str]:
    """The modules (paths) named neither by their path, in README.md's layout section or docs/architecture.md,
    nor inside a row of README.md's layout table by their path from the row's folder (`pipeline.py` in the
    row of `memory/read/`)."""
    section = readme.split(LAYOUT_SECTION, 1)[-1].split("\n## ", 1)[0] if LAYOUT_SECTION in readme else ""
    rows = [
        (re.findall(r"`([\w/]+/)`", line.split("|")[1]), line)
        for line in section.splitlines()
        if line.startswith("|") and not line.startswith("|---")
    ]
    return [
        module
        for module in modules
        if not _named(section, module)
        and not _named(architecture, module)
        and not any(
            module.startswith(folder) and _named(line, module[len(folder) :])
            for folders, line in rows
            for folder in folders
        )
    ]


def test_no_file_speaks_of_how_it_was_made():
    texts = _tracked_texts()
    assert "README.md" in texts and "memory/tools.py" in texts
    found = words_of_making(texts)
    assert found == [], f"say it without the session, the issue or the outside document: {found}"


def test_every_module_is_named_in_the_layout_docs():
    modules = sorted(
        str(path.relative_to(ROOT))
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and path.name != "__init__.py"
    )
    assert len(modules) > len(APPS)
    readme = (ROOT / "README.md").read_text()
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    missing = unnamed_modules(modules, readme, architecture)
    assert missing == [], f"name these in README.md's layout table or docs/architecture.md: {missing}"


def test_the_words_check_catches_what_it_looks_for():
    planted = {
        "memory/a.py": "x = 1\n# measured in ses" + "sion 14, see the notes\n",
        "memory/b.py": '"""As measured in ses' + 'sion\n9."""\n',  # broken over two lines
        "tests/c.py": "# the inputs of (iss" + "ue 13, item 3)\n",
        "docs/d.md": "See " + "DESIGN" + ".md and Style" + ".md.\n",
        "docs/e.md": "Read " + OUTSIDE + "/notes.md.\n",
        "bench/f.py": 'DATA = "' + BENCH_DATA_DEFAULT + '"\n',  # the default, but no setting named
        "bench/g.py": "# TWIN_BENCH_DATA, by default " + BENCH_DATA_DEFAULT + "\nx = '" + OUTSIDE + "/other'\n",
        "memory/h.py": "# one session, 4 items; an issue with 2 fields; sessions 3\n",
    }
    assert words_of_making(planted) == [
        "memory/a.py:2",
        "memory/b.py:1",
        "tests/c.py:1",
        "docs/d.md:1",
        "docs/e.md:1",
        "bench/f.py:1",
        "bench/g.py:2",
    ]


def test_the_layout_check_catches_an_unnamed_module():
    readme = (
        "Intro, naming memory/query/browse.py.\n\n" + LAYOUT_SECTION + "\n\n| folder | what |\n|---|---|\n"
        "| `memory/read/` | `pipeline.py`, and `cutting.py` |\n"
        "| `memory/` (top) | `tools.py`, `read/stats.py` |\n"
        "| `memory/connectors/`, `memory/sample/` | `generate.py` |\n\n"
        "`memory/query/search.py` answers.\n\n## Configuration\n\n`memory/query/history.py`\n"
    )
    modules = [
        "memory/read/pipeline.py",
        "memory/read/cutting.py",
        "memory/tools.py",
        "memory/read/stats.py",
        "memory/sample/generate.py",
        "memory/query/search.py",
        "memory/query/retrieval.py",  # named in docs/architecture.md
        "memory/query/browse.py",  # named, but outside the layout section
        "memory/query/history.py",  # named, but in another section
        "memory/pipeline.py",  # its name is in another folder's row
        "memory/read/tools.py",  # the same
        "memory/read/line.py",  # a name only the tail of another's (`pipeline.py`)
    ]
    architecture = "Ranking: `memory/query/retrieval.py`."
    assert unnamed_modules(modules, readme, architecture) == [
        "memory/query/browse.py",
        "memory/query/history.py",
        "memory/pipeline.py",
        "memory/read/tools.py",
        "memory/read/line.py",
    ]
