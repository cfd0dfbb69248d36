"""Browser tests: a real headless Chromium (Debian's package, not a downloaded one) driven by Playwright,
against pytest-django's live server (a real HTTP server on the test database, Celery eager).

Each test starts its own browser with a fresh profile and stops it before the database is flushed. Every
wait is bounded. Screenshots of the main pages go to tests/artifacts/screenshots/ (ignored by git) for a
reviewer to look at; `shot(page, name)` saves one.
"""

import os
import shutil
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = os.environ.get("TWIN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
TIMEOUT_MS = 15_000  # any one wait: a click's navigation, a selector, an assertion
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # No name outside this machine resolves: the tests never reach the network (an OAuth app's callback
    # on https://app.example is seen as a request, never sent).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.timeout(120))


@pytest.fixture
def browser(live_server, transactional_db, monkeypatch):
    """Chromium, started for one test and stopped after it, before the database is flushed.

    Playwright's sync API runs an asyncio loop in this thread while it is started, and Django refuses ORM
    calls from a thread with a running loop: the test's own ORM calls are allowed by DJANGO_ALLOW_ASYNC_UNSAFE
    for this test only, and the loop is gone before the next test (a session-wide browser would leave it
    running under the rest of the suite). launch() gives the browser a fresh temporary profile (user-data
    dir) each time, removed when it closes.
    """
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"No Chromium at {CHROMIUM}: `make setup` installs Debian's chromium when run as root "
            "(or: apt-get install chromium)."
        )
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS, timeout=30_000)
        try:
            yield browser
        finally:
            browser.close()
            # While the loop runs, Django keys its connections apart from the test's own: close the ones
            # opened in that time, or they would outlive the test and hold the test database open.
            connections.close_all()


@pytest.fixture
def page(browser, live_server):
    """A page in a fresh context whose base URL is the live server; fails the test on a JavaScript error."""
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 1280, "height": 900}, locale="en-US", timezone_id="UTC"
    )
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def shot(page, name: str) -> Path:
    """Save a full-page screenshot as tests/artifacts/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
