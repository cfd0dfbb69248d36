"""The shape of the code, as DESIGN.md "Code layout inside memory/" and STYLE.md state it: asking never
imports the background read, and no module passes 400 lines."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("accounts", "memory", "mcp", "console", "twin")
MODULE_LINES_MAX = 400  # STYLE.md: split a module that passes about 400 lines

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
    result = subprocess.run([sys.executable, "-c", IMPORT_THE_QUERY_ROOM], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"memory.query.search", "memory.query.retrieval", "memory.query.browse",
            "memory.query.history"} <= set(found["imported"])
    assert found["read"] == [], f"importing memory.query pulled in {found['read']}"


def test_no_module_passes_400_lines():
    modules = [path for app in APPS for path in (ROOT / app).rglob("*.py") if "migrations" not in path.parts]
    assert len(modules) > len(APPS)
    long = {str(path.relative_to(ROOT)): n for path in modules
            if (n := len(path.read_text().splitlines())) > MODULE_LINES_MAX}
    assert long == {}, f"modules over {MODULE_LINES_MAX} lines: {long}"
