"""The Python client (clients/python) against the running service (pytest-django's live_server): every
answer and every error class from a real answer, export and import round trip, the retry of a 429."""

import subprocess
import sys
from pathlib import Path

import pytest
from twin_memory import (
    ConnectionFailed,
    InsufficientScope,
    InvalidArguments,
    NoMemory,
    RateLimited,
    TwinMemory,
    TwinMemoryError,
    Unauthorized,
)

from accounts.services import project_set_rate_limits

CLIENT_TESTS = Path(__file__).resolve().parents[2] / "clients" / "python" / "tests"


class Clock:
    """A clock that moves only when slept on, so a retry's wait is seen without being waited."""

    def __init__(self):
        self.now, self.slept = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def twin(live_server, write_key):
    return TwinMemory(write_key[1], account="u_1", base_url=live_server.url)


def test_the_clients_unit_tests_pass():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:django", "-p", "no:cacheprovider", str(CLIENT_TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def test_add_then_search_and_every_read(twin):
    added = twin.add(items=[{"text": "I moved to Porto", "id": "home"}], wait=True)
    assert added["items"][0]["status"] == "added" and added["searchable"]
    found = twin.search(query="Where do I live?")
    assert "Porto" in found["hits"][0]["text"]
    assert twin.overview()["counts"]["items"] == 1
    assert twin.grep(pattern="porto")["found"] == 1
    assert twin.versions(id="home")["current"]["text"] == "I moved to Porto"
    assert twin.correct(id="home", text="I moved to Braga")["status"] == "edited"
    assert twin.forget(ids=["home"])["forgotten"] == 1


def test_every_error_class_from_a_real_answer_and_the_key_in_none(twin, live_server, read_key, write_key):
    key = write_key[1]
    raised = []
    with pytest.raises(InvalidArguments) as bad:
        twin.search(query="x" * 2001)
    assert bad.value.field == "query" and bad.value.bound == 2000 and bad.value.request_id
    with pytest.raises(InsufficientScope) as reading:
        TwinMemory(read_key[1], account="u_1", base_url=live_server.url).add(items=[{"text": "no"}])
    with pytest.raises(NoMemory) as nobody:
        twin.for_account("nobody_yet").overview()
    with pytest.raises(Unauthorized) as unknown:
        TwinMemory("tm_not_a_key", account="u_1", base_url=live_server.url).overview()
    with pytest.raises(ConnectionFailed) as refused:
        TwinMemory(key, account="u_1", base_url="http://127.0.0.1:9").overview()
    assert "http://127.0.0.1:9/v1/memory/overview" in str(refused.value)
    raised = [bad.value, reading.value, nobody.value, unknown.value, refused.value]
    assert all(isinstance(error, TwinMemoryError) for error in raised)
    for error in raised:
        assert key not in str(error) and key not in repr(error)
    assert key not in repr(twin)


def test_a_429_is_retried_after_its_retry_after(live_server, write_key, project):
    project_set_rate_limits(project=project, per_credential=1, per_end_user=None)
    clock = Clock()
    twin = TwinMemory(
        write_key[1], account="u_1", base_url=live_server.url, clock=clock, sleep=clock.sleep, deadline=1000
    )
    twin.add(items=[{"text": "one"}])
    with pytest.raises(RateLimited) as limited:
        twin.latest()
    assert limited.value.retry_after and clock.slept and len(clock.slept) == 2
    assert all(0 < wait <= 2 * 60 for wait in clock.slept)  # the Retry-After of a minute's window


def test_export_to_a_file_and_import_into_another_end_user_give_the_same_memory(twin, tmp_path):
    twin.add(items=[{"text": "I moved to Porto", "id": "home"}, {"text": "I like tea", "id": "tea"}], wait=True)
    seen: list[int] = []
    path = tmp_path / "u_1.jsonl"
    written = twin.export(to=path, progress=seen.append)
    assert written == path.stat().st_size and seen[-1] == written
    other = twin.for_account("u_2")
    answer = other.import_(from_=path)
    assert answer["statuses"] == {"added": 2}
    again = tmp_path / "u_2.jsonl"
    other.export(to=again)
    lines = [line for line in again.read_text().splitlines()[1:]]
    assert lines == path.read_text().splitlines()[1:]
