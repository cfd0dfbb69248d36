"""The TypeScript client (clients/typescript, built by make setup) on the Node the conformance suite installs:
its unit tests (`node --test`), and a script against the running service (pytest-django's live_server)."""

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"
NODE = ROOT / "tests" / "conformance" / "node_modules" / ".bin" / "node"
TIMEOUT_SECONDS = 120


def node(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(NODE), *arguments], cwd=CLIENT, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)


def test_the_clients_unit_tests_pass():
    done = node("--test")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_against_the_service(live_server, write_key, read_key, tmp_path):
    done = node("scripts/live.mjs", live_server.url, write_key[1], read_key[1], str(tmp_path))
    assert done.returncode == 0, (done.args, done.stderr[-3000:])
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["added"] == "added" and "Porto" in seen["found"]
    assert all(seen["classes"].values()), seen["classes"]
    assert seen["field"] == ["query", 2000, True]
    assert seen["keyShown"] is False
    assert seen["written"] == (tmp_path / "u_1.jsonl").stat().st_size
    assert seen["imported"] == {"added": 1} and seen["lines"] == 2
