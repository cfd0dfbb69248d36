"""An import is a job, not a request: run by a real Celery worker on the import's own queue, asked after at
its address (202, then GET /v1/memory/import/<job>: its state, its counts, then the import's answer), one
import of a project at a time, and its address answered only for its own end user."""

import json
import time

import pytest
import redis
from django.conf import settings

from memory.portability.job_answers import NOT_FOUND
from memory.portability.jobs import import_queue
from memory.portability.spool import spool_dir
from tests.conftest import TEST_QUEUE, Api
from tests.console import html, logged_in
from tests.worker import running_worker
from twin.celery import app as celery_app

ENDED = ("done", "refused", "failed")


def body(count: int, *, bad: int | None = None) -> bytes:
    items = [{"item": {"id": f"n{n}", "text": f"Note {n}.", "at": "2024-01-01"}} for n in range(count)]
    if bad is not None:
        items[bad]["item"].pop("text")
    lines = [{"format": "twin-memory-export", "version": 1, "items": count}, *items]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def import_(api: Api, data: bytes, **headers):
    return api.client.post(
        "/v1/memory/import", data=data, content_type="application/x-ndjson", headers=api.headers(**headers)
    )


def at_once(api: Api, data: bytes):
    """An import answered at once (Prefer: respond-async): 202 with its job."""
    response = import_(api, data, Prefer="respond-async")
    assert response.status_code == 202, response.content
    assert response["Location"] == response.json()["url"]
    return response.json()


def ended(api: Api, url: str, seconds: float = 30) -> dict:
    deadline = time.monotonic() + seconds
    while (state := api.get(url).json())["state"] not in ENDED:
        assert time.monotonic() < deadline, state
        time.sleep(0.1)
    return state


@pytest.fixture
def queued(api):
    """Jobs go to this run's import queue in Redis, to be run by a worker (or by none), not in the test; the
    files of those no worker ran are deleted after it."""
    spooled = set(spool_dir().glob("*")) if spool_dir().exists() else set()
    celery_app.conf.task_always_eager = False
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = True
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(import_queue(), TEST_QUEUE)
        for left in set(spool_dir().glob("*")) - spooled:
            left.unlink(missing_ok=True)


@pytest.mark.worker
def test_a_worker_runs_the_job_and_its_address_tells_its_state_then_its_answer(api, queued):
    with running_worker(import_queue(), TWIN_QUEUE=TEST_QUEUE):
        job = at_once(api, body(3))
        assert job["state"] == "queued" and job["url"] == f"/v1/memory/import/{job['job']}"
        state = ended(api, job["url"])
        assert (state["state"], state["items"], state["checked"], state["stored"]) == ("done", 3, 3, 3)
        assert state["answer"]["statuses"] == {"added": 3} and state["finished_at"]

        again = import_(api, body(3))  # the request waits for its job's end, and answers the import's answer
        assert again.status_code == 200 and again.json()["statuses"] == {"unchanged": 3}, again.content

        refused = ended(api, at_once(api, body(4, bad=2))["url"])
        assert refused["state"] == "refused" and refused["error"]["error"] == "invalid_import"
        assert [(line["line"], line["field"]) for line in refused["error"]["lines"]] == [(4, "item.text")]
    assert api.tool("overview").json()["counts"]["items"] == 3, "the refused file stored nothing"


def test_a_project_imports_one_file_at_a_time(api, charlie_api, queued):
    first = at_once(api, body(2))  # queued: no worker runs it
    same = import_(api, body(2), Prefer="respond-async")
    assert same.status_code == 409 and same.json()["error"] == "import_running", same.content
    assert same.json()["job"] == first["job"] and int(same["Retry-After"]) > 0
    other = import_(api.as_account("u_2"), body(2), Prefer="respond-async")
    assert other.status_code == 409 and "job" not in other.json(), "another end user's job is not named"
    assert at_once(charlie_api, body(2))["state"] == "queued", "another project imports at the same time"


def test_a_jobs_address_answers_its_own_end_user_only(api, charlie_api, alice, project, queued):
    job = at_once(api, body(2))
    state = api.get(job["url"]).json()
    assert (state["state"], state["stored"], state["items"]) == ("queued", 0, None)
    for caller, url in (
        (charlie_api, job["url"]),  # another project's key
        (api.as_account("u_2"), job["url"]),  # another end user of the project
        (api, "/v1/memory/import/imp_0"),  # no such job
    ):
        missing = caller.get(url)
        assert missing.status_code == 404 and missing.json()["message"] == NOT_FOUND
    page = html(logged_in(alice).get(f"/projects/{project.slug}/end-users/u_1/import/{job['job']}"))
    assert "<dd>queued</dd>" in page and "Lines checked" in page, "the console shows the job's progress"
