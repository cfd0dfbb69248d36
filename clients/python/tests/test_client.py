"""The client's own behaviour over a faked HTTP layer (httpx.MockTransport): headers, errors, retries, files."""

import asyncio
import gzip
import io
import json

import httpx
import pytest
from twin_memory import (
    AsyncTwinMemory,
    ConnectionFailed,
    InvalidArguments,
    NoMemory,
    RateLimited,
    TwinMemory,
    Unauthorized,
    Unavailable,
)

KEY = "tm_secret_key_0123456789"


class Clock:
    def __init__(self):
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def client(handler, **options) -> TwinMemory:
    clock = options.pop("clock", Clock())
    return TwinMemory(
        KEY,
        account="u_1",
        base_url="http://memory.test",
        transport=httpx.MockTransport(handler),
        clock=clock,
        sleep=clock.sleep,
        **options,
    )


def test_a_call_sends_the_key_the_end_user_and_the_user_agent_and_leaves_unset_arguments_out():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={"query": "q", "mode": "brief", "found": 0, "hits": []})

    assert client(handler).search(query="q")["mode"] == "brief"
    request = seen[0]
    assert request.url == "http://memory.test/v1/memory/search"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["x-twin-account"] == "u_1"
    assert request.headers["user-agent"].startswith("twin-memory-python/0.")
    assert json.loads(request.content) == {"query": "q"}


def test_an_error_answer_raises_its_class_with_the_field_the_bound_and_the_request_id():
    def handler(request):
        body = {"error": "invalid_arguments", "message": "too long", "field": "query", "bound": 2000}
        return httpx.Response(400, json=body, headers={"X-Request-Id": "req-1"})

    with pytest.raises(InvalidArguments) as raised:
        client(handler).search(query="q")
    assert (raised.value.code, raised.value.field, raised.value.bound) == ("invalid_arguments", "query", 2000)
    assert raised.value.request_id == "req-1" and "req-1" in str(raised.value)


def test_no_memory_is_a_not_found_of_its_own():
    def handler(request):
        return httpx.Response(404, json={"error": "no_memory", "message": "nothing yet"})

    with pytest.raises(NoMemory):
        client(handler).overview()


def test_429_is_retried_after_retry_after_then_answers():
    answers = [httpx.Response(429, json={"error": "rate_limited", "message": "slow"}, headers={"Retry-After": "7"})]
    answers.append(httpx.Response(200, json={"passages": []}))
    clock = Clock()
    assert client(lambda request: answers.pop(0), clock=clock).latest() == {"passages": []}
    assert clock.slept == [7.0]


def test_retries_stop_at_max_retries_and_at_the_deadline():
    def busy(request):
        return httpx.Response(503, json={"error": "unavailable", "message": "busy"}, headers={"Retry-After": "2"})

    clock = Clock()
    with pytest.raises(Unavailable) as raised:
        client(busy, clock=clock).latest()
    assert clock.slept == [2.0, 2.0] and raised.value.retry_after == 2.0
    clock = Clock()
    with pytest.raises(Unavailable):
        client(busy, clock=clock, deadline=3).latest()
    assert clock.slept == [2.0]


def test_nothing_else_is_retried():
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(401, json={"error": "invalid_key", "message": "no"})

    with pytest.raises(Unauthorized):
        client(handler).latest()
    assert len(calls) == 1


def test_a_refused_connection_names_the_url_and_never_the_key():
    def handler(request):
        raise httpx.ConnectError("Connection refused")

    with pytest.raises(ConnectionFailed) as raised:
        client(handler).latest()
    assert "http://memory.test/v1/memory/latest" in str(raised.value)
    twin = client(handler)
    for text in (str(raised.value), repr(raised.value), repr(twin), repr(twin._settings)):
        assert KEY not in text


def test_for_account_is_refused_for_an_oauth_token():
    twin = TwinMemory("oauth-access-token", base_url="http://memory.test")
    with pytest.raises(ValueError):
        twin.for_account("u_2")
    assert client(lambda request: httpx.Response(200, json={})).for_account("u_2").account == "u_2"


def test_the_key_and_url_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("TWIN_MEMORY_API_KEY", KEY)
    monkeypatch.setenv("TWIN_MEMORY_URL", "http://from.env/")
    twin = TwinMemory(account="u_1")
    assert twin._settings.url("/x") == "http://from.env/x"


def test_export_streams_to_a_file_with_progress_and_import_sends_gzip_as_gzip(tmp_path):
    lines = b'{"header": 1}\n' + b'{"item": 2}\n' * 1000
    progress: list[int] = []

    def handler(request):
        if request.url.path.endswith("/export"):
            return httpx.Response(200, content=lines)
        assert request.headers["content-type"] == "application/gzip"
        assert int(request.headers["content-length"]) == len(request.read())
        return httpx.Response(202, json={"job": "ij_1", "state": "queued", "url": "/v1/memory/import/ij_1"})

    twin = client(handler)
    assert twin.export(to=tmp_path / "out.jsonl", progress=progress.append) == len(lines)
    assert (tmp_path / "out.jsonl").read_bytes() == lines and progress[-1] == len(lines)
    job = twin.import_(from_=io.BytesIO(gzip.compress(lines)), wait=False)
    assert job.get("state") == "queued"


def test_an_import_job_is_asked_after_until_it_ends():
    states = iter(["checking", "done"])

    def handler(request):
        if request.method == "POST":
            return httpx.Response(202, json={"job": "ij_1", "state": "queued"})
        state = next(states)
        return httpx.Response(200, json={"job": "ij_1", "state": state, "answer": {"items": 1}})

    clock = Clock()
    assert client(handler, clock=clock).import_(from_=io.BytesIO(b"{}\n")) == {"items": 1}
    assert len(clock.slept) == 2


def test_a_refused_import_job_raises_its_refusal():
    def handler(request):
        if request.method == "POST":
            return httpx.Response(202, json={"job": "ij_1", "state": "queued"})
        error = {"error": "invalid_arguments", "message": "bad line", "line": 3, "field": "item.text"}
        return httpx.Response(200, json={"job": "ij_1", "state": "refused", "error": error})

    with pytest.raises(InvalidArguments) as raised:
        client(handler).import_(from_=io.BytesIO(b"{}\n"))
    assert (raised.value.line, raised.value.field) == (3, "item.text")


def test_a_rate_limited_answer_without_retries_carries_retry_after():
    def handler(request):
        return httpx.Response(429, json={"error": "rate_limited", "message": "slow", "retry_after": 5})

    with pytest.raises(RateLimited) as raised:
        client(handler, max_retries=0).latest()
    assert raised.value.retry_after == 5


def test_the_async_client_answers_retries_and_raises_alike():
    answers = [
        httpx.Response(503, json={"error": "unavailable", "message": "busy"}, headers={"Retry-After": "3"}),
        httpx.Response(200, json={"passages": []}),
        httpx.Response(404, json={"error": "no_memory", "message": "nothing yet"}),
    ]
    seen: list[httpx.Request] = []
    slept: list[float] = []

    def handler(request):
        seen.append(request)
        return answers.pop(0)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def run():
        twin = AsyncTwinMemory(
            KEY, account="u_1", base_url="http://memory.test", transport=httpx.MockTransport(handler), sleep=sleep
        )
        assert await twin.latest(k=2) == {"passages": []}
        with pytest.raises(NoMemory):
            await twin.for_account("u_2").overview()
        await twin.aclose()

    asyncio.run(run())
    assert slept == [3.0] and json.loads(seen[0].content) == {"k": 2}
    assert seen[-1].headers["x-twin-account"] == "u_2" and KEY not in repr(seen[-1].headers)
