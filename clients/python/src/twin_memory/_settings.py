"""What both clients are made of: the credential, the end user, the URL, the retry rules, and the answers read
into the client's exceptions. Shared by the sync and the async client, which differ only in how they wait."""

from __future__ import annotations

import email.utils
import os
import time
from dataclasses import dataclass
from typing import Any

import httpx

from ._errors import ApiError, ConnectionFailed, TimedOut, error_for
from ._version import VERSION

KEY_PREFIX = "tm_"  # an API key; any other bearer is an OAuth access token, which names its end user itself
ACCOUNT_HEADER = "X-Twin-Account"
DEFAULT_URL = "http://127.0.0.1:8000"  # `make run`'s
USER_AGENT = f"twin-memory-python/{VERSION}"
RETRIED = (429, 503)  # refused before anything happened, with a Retry-After: safe to send again
RETRY_AFTER_DEFAULT = 1.0  # seconds, when a 429 or 503 names none
DEFAULT_TIMEOUT = 30.0
DEFAULT_DEADLINE = 120.0


class Secret(str):
    """The key, as a str that never shows itself: in a repr, an f-string or a traceback's locals."""

    def __repr__(self) -> str:
        return "'tm_…'" if self.startswith(KEY_PREFIX) else "'…'"

    def __str__(self) -> str:
        return self.__repr__()

    def reveal(self) -> str:
        return str.__str__(self)


@dataclass(frozen=True)
class Settings:
    """One client's configuration (for_account copies it with another end user)."""

    api_key: Secret
    account: str | None
    base_url: str
    timeout: float
    max_retries: int
    deadline: float

    @property
    def oauth(self) -> bool:
        return not self.api_key.reveal().startswith(KEY_PREFIX)

    def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key.reveal()}", "User-Agent": USER_AGENT}
        if self.account is not None and not self.oauth:
            headers[ACCOUNT_HEADER] = self.account
        return headers

    def url(self, path: str) -> str:
        return self.base_url + path


def settings_from(
    api_key: str | None, account: str | None, base_url: str | None, timeout: float, max_retries: int, deadline: float
) -> Settings:
    """The settings, the key and the URL read from TWIN_MEMORY_API_KEY and TWIN_MEMORY_URL when not given."""
    key = api_key or os.environ.get("TWIN_MEMORY_API_KEY")
    if not key:
        raise ValueError("No API key: pass api_key=… or set TWIN_MEMORY_API_KEY.")
    url = (base_url or os.environ.get("TWIN_MEMORY_URL") or DEFAULT_URL).rstrip("/")
    settings = Settings(Secret(key), account, url, timeout, max_retries, deadline)
    if settings.oauth and account is not None:
        raise ValueError("An OAuth access token names its end user itself: leave account unset.")
    return settings


def with_account(settings: Settings, account: str) -> Settings:
    """The same settings for another end user; refused for an OAuth token, which names its own."""
    if settings.oauth:
        raise ValueError("for_account needs an API key: an OAuth access token names its end user itself.")
    return Settings(
        settings.api_key, account, settings.base_url, settings.timeout, settings.max_retries, settings.deadline
    )


def retry_after(response: httpx.Response) -> float:
    """Seconds a 429 or 503 asks to wait: Retry-After (seconds or an HTTP date), else the body's retry_after."""
    value = response.headers.get("Retry-After", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    when = email.utils.parsedate_to_datetime(value) if value else None
    if when is not None:
        return max(0.0, when.timestamp() - time.time())
    try:
        return float(response.json().get("retry_after", RETRY_AFTER_DEFAULT))
    except (ValueError, AttributeError, TypeError):
        return RETRY_AFTER_DEFAULT


def error_of(response: httpx.Response) -> ApiError:
    """The exception for an error answer (read already)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = {"error": "error", "message": response.text[:500]}
    wait = retry_after(response) if response.status_code in RETRIED else None
    return error_for(response.status_code, body, request_id=response.headers.get("X-Request-Id"), retry_after=wait)


def connection_error(url: str, error: httpx.TransportError) -> ConnectionFailed:
    """A transport failure as the client's exception, naming the URL and the failure's kind, never a header."""
    if isinstance(error, httpx.TimeoutException):
        return TimedOut(url, f"no answer in time ({type(error).__name__})")
    reason = str(error) or type(error).__name__
    return ConnectionFailed(url, reason)


def wait_before_retry(error: ApiError, attempt: int, settings: Settings, started: float, now: float) -> float | None:
    """Seconds to wait before sending again, or None when this error is final: not a 429 or 503, out of
    retries, or a wait that would pass the deadline."""
    if error.status not in RETRIED or attempt >= settings.max_retries:
        return None
    wait = error.retry_after if error.retry_after is not None else RETRY_AFTER_DEFAULT
    if now + wait - started > settings.deadline:
        return None
    return float(wait)
