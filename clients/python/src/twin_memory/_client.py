"""TwinMemory and AsyncTwinMemory: one method per route of /v1/memory/, on httpx.

A tool's method (generated in _operations.py from the service's schema) posts its arguments as JSON and
answers the JSON; an error answer raises its exception (_errors.py). 429 and 503 are sent again after
Retry-After, at most `max_retries` times and within `deadline` seconds of the first try; nothing else is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx

from . import _files
from ._operations import AsyncOperations, Operations
from ._settings import (
    DEFAULT_DEADLINE,
    DEFAULT_TIMEOUT,
    Settings,
    connection_error,
    error_of,
    settings_from,
    wait_before_retry,
    with_account,
)
from ._types import ImportAnswer, ImportJob

Progress = Callable[[int], None]
FINISHED = ("done", "refused", "failed")  # an import job's ends
POLL_SECONDS = 1.0  # between looks at a running import job


class TwinMemory(Operations):
    """The synchronous client.

    ``TwinMemory(api_key=…, account="user_42", base_url=…)``; the key and the URL default to the environment's
    TWIN_MEMORY_API_KEY and TWIN_MEMORY_URL. An OAuth access token works as the key (it names its end user).
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        account: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        deadline: float = DEFAULT_DEADLINE,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        _settings: Settings | None = None,
        _http: httpx.Client | None = None,
    ):
        self._settings = _settings or settings_from(api_key, account, base_url, timeout, max_retries, deadline)
        self._clock, self._sleep = clock, sleep
        self._http = _http or httpx.Client(timeout=self._settings.timeout, transport=transport)

    def __repr__(self) -> str:
        return f"TwinMemory(account={self.account!r}, base_url={self._settings.base_url!r})"

    @property
    def account(self) -> str | None:
        return self._settings.account

    def for_account(self, account: str) -> TwinMemory:
        """The same client (key, URL, connections) for another end user."""
        return TwinMemory(
            _settings=with_account(self._settings, account), clock=self._clock, sleep=self._sleep, _http=self._http
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> TwinMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, rewind: Callable[[], Any] | None = None, headers=None, **kwargs: Any):
        """The response to a request, an error answer raised; 429 and 503 sent again as the rules allow.
        `rewind` gives a streamed body afresh for each try (None: the body is sent once, never again)."""
        url, started, attempt = self._settings.url(path), self._clock(), 0
        while True:
            if rewind is not None:
                kwargs["content"] = rewind()
            request = self._http.build_request(
                method, url, headers={**self._settings.headers(), **(headers or {})}, **kwargs
            )
            try:
                response = self._http.send(request, stream=True)
            except httpx.TransportError as failed:
                raise connection_error(url, failed) from None
            if response.status_code < 400:
                return response
            response.read()
            response.close()
            error = error_of(response)
            wait = wait_before_retry(error, attempt, self._settings, started, self._clock())
            if wait is None or ("content" in kwargs and rewind is None):
                raise error
            self._sleep(wait)
            attempt += 1

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._send(method, path, **kwargs)
        try:
            return response.read() and response.json()
        finally:
            response.close()

    def _tool(self, name: str, arguments: dict[str, Any]) -> Any:
        sent = {key: value for key, value in arguments.items() if value is not None}
        return self._json("POST", f"/v1/memory/{name}", json=sent)

    def export(self, *, to: _files.Target, progress: Progress | None = None) -> int:
        """The end user's whole memory as JSON Lines, streamed into `to` (a path, written whole or not at all,
        or a binary file); `progress` is called with the bytes written so far. Answers the bytes written."""
        response = self._send("POST", "/v1/memory/export")
        try:
            with _files.writer(to) as write:
                written = 0
                for chunk in response.iter_bytes(_files.CHUNK):
                    write(chunk)
                    written += len(chunk)
                    if progress is not None:
                        progress(written)
        finally:
            response.close()
        return written

    def export_lines(self) -> Iterator[dict[str, Any]]:
        """The export's lines, parsed, one at a time (the header line first)."""
        response = self._send("POST", "/v1/memory/export")
        try:
            yield from _files.parsed_lines(response.iter_lines())
        finally:
            response.close()

    def import_(self, *, from_: _files.Source, wait: bool | float = True) -> ImportAnswer | ImportJob:
        """An export (JSON Lines, or gzipped) into this end user's memory, the file streamed up (a path, or a
        binary file). The service answers at once, or with a job still importing, which is then asked after
        until it ends: its answer is returned, or its refusal raised. `wait` False returns a running job as it
        stands, a number of seconds waits at most that long for it."""
        upload = _files.Upload(from_)
        response = self._send(
            "POST", "/v1/memory/import", rewind=upload.rewind if upload.again else None, **upload.request()
        )
        try:
            body = response.read() and response.json()
        finally:
            response.close()
        if response.status_code != 202:
            return body
        started = self._clock()
        while body["state"] not in FINISHED and not _files.waited_enough(wait, self._clock() - started):
            self._sleep(POLL_SECONDS)
            body = self.import_job(job=body["job"])
        return _files.job_answer(body) if body["state"] in FINISHED else body

    def import_job(self, *, job: str) -> ImportJob:
        """An import job's state, by its id."""
        return self._json("GET", f"/v1/memory/import/{job}")


class AsyncTwinMemory(AsyncOperations):
    """The asyncio client: the same methods as TwinMemory, awaited."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        account: str | None = None,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        deadline: float = DEFAULT_DEADLINE,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
        _settings: Settings | None = None,
        _http: httpx.AsyncClient | None = None,
    ):
        self._settings = _settings or settings_from(api_key, account, base_url, timeout, max_retries, deadline)
        self._clock, self._sleep = clock, sleep
        self._http = _http or httpx.AsyncClient(timeout=self._settings.timeout, transport=transport)

    def __repr__(self) -> str:
        return f"AsyncTwinMemory(account={self.account!r}, base_url={self._settings.base_url!r})"

    @property
    def account(self) -> str | None:
        return self._settings.account

    def for_account(self, account: str) -> AsyncTwinMemory:
        """The same client (key, URL, connections) for another end user."""
        return AsyncTwinMemory(
            _settings=with_account(self._settings, account), clock=self._clock, sleep=self._sleep, _http=self._http
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncTwinMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(
        self, method: str, path: str, *, rewind: Callable[[], Any] | None = None, headers=None, **kwargs: Any
    ):
        url, started, attempt = self._settings.url(path), self._clock(), 0
        while True:
            if rewind is not None:
                kwargs["content"] = rewind()
            request = self._http.build_request(
                method, url, headers={**self._settings.headers(), **(headers or {})}, **kwargs
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as failed:
                raise connection_error(url, failed) from None
            if response.status_code < 400:
                return response
            await response.aread()
            await response.aclose()
            error = error_of(response)
            wait = wait_before_retry(error, attempt, self._settings, started, self._clock())
            if wait is None or ("content" in kwargs and rewind is None):
                raise error
            await self._sleep(wait)
            attempt += 1

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self._send(method, path, **kwargs)
        try:
            return await response.aread() and response.json()
        finally:
            await response.aclose()

    async def _tool(self, name: str, arguments: dict[str, Any]) -> Any:
        sent = {key: value for key, value in arguments.items() if value is not None}
        return await self._json("POST", f"/v1/memory/{name}", json=sent)

    async def export(self, *, to: _files.Target, progress: Progress | None = None) -> int:
        """As TwinMemory.export (the file is written without blocking on the network)."""
        response = await self._send("POST", "/v1/memory/export")
        try:
            with _files.writer(to) as write:
                written = 0
                async for chunk in response.aiter_bytes(_files.CHUNK):
                    write(chunk)
                    written += len(chunk)
                    if progress is not None:
                        progress(written)
        finally:
            await response.aclose()
        return written

    async def import_(self, *, from_: _files.Source, wait: bool | float = True) -> ImportAnswer | ImportJob:
        """As TwinMemory.import_."""
        upload = _files.Upload(from_, asynchronous=True)
        response = await self._send(
            "POST", "/v1/memory/import", rewind=upload.rewind if upload.again else None, **upload.request()
        )
        try:
            body = await response.aread() and response.json()
        finally:
            await response.aclose()
        if response.status_code != 202:
            return body
        started = self._clock()
        while body["state"] not in FINISHED and not _files.waited_enough(wait, self._clock() - started):
            await self._sleep(POLL_SECONDS)
            body = await self.import_job(job=body["job"])
        return _files.job_answer(body) if body["state"] in FINISHED else body

    async def import_job(self, *, job: str) -> ImportJob:
        """An import job's state, by its id."""
        return await self._json("GET", f"/v1/memory/import/{job}")
