"""The read's worker yields the CPU to searches. Where the kernel groups each session's processes (autogroup),
niceness only orders a process against its own session, so a worker that leads its session (as systemd and
`make run` start it) gives the whole session its niceness; one started inside another's session leaves that
session's as it was."""

import uuid
from pathlib import Path

import pytest

from tests.conftest import TEST_QUEUE
from tests.worker import running_worker

pytestmark = pytest.mark.worker


def processes_marked(mark: str) -> list[str]:
    """The pids of the processes whose environment holds TWIN_TEST_MARK=mark (a worker and its pool)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"TWIN_TEST_MARK={mark}".encode() in (entry / "environ").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


def autogroup(pid: str) -> str:
    return Path(f"/proc/{pid}/autogroup").read_text().strip()


def test_a_worker_leading_its_session_gives_the_session_its_niceness():
    mark = uuid.uuid4().hex
    with running_worker(TEST_QUEUE, processes=1, READ_WORKER_NICENESS="7", TWIN_TEST_MARK=mark):
        pids = processes_marked(mark)
        assert len(pids) == 2, "the worker and its pool process"
        assert {autogroup(pid).split(" nice ")[1] for pid in pids} == {"7"}
        assert autogroup(pids[0]) != autogroup("self"), "a session of its own"


def test_a_worker_inside_another_session_leaves_that_sessions_niceness():
    mark, before = uuid.uuid4().hex, autogroup("self")
    with running_worker(TEST_QUEUE, READ_WORKER_NICENESS="7", TWIN_TEST_MARK=mark):
        (pid,) = processes_marked(mark)
        assert autogroup(pid) == autogroup("self") == before
