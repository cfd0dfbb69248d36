"""Password guessing at the console's sign-in: failures are bounded per email and per client address."""

import re
import socket
import time
import types
import uuid

import pytest
from django.core import mail
from django.test import Client

from accounts.models import User
from tests.conftest import first_group
from tests.console import html
from tests.oauth_flow import fresh_address

PASSWORD = "a-long-pass-9"


@pytest.fixture
def person(db):
    """Someone with an account of this run's own, so no other test shares their allowance."""
    return User.objects.create_user(email=f"dana-{uuid.uuid4().hex[:12]}@example.com", password=PASSWORD)


def sign_in(email: str, password: str, address: str):
    client = Client()
    response = client.post("/login", {"username": email, "password": password}, REMOTE_ADDR=address)
    return response, client


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_an_account_with_too_many_failures_waits_even_with_the_right_password(person, settings, monkeypatch):
    settings.LOGIN_FAILURES_PER_ACCOUNT = 3
    clock = [1_900_000_000.0]
    monkeypatch.setattr("accounts.throttle.time", types.SimpleNamespace(time=lambda: clock[0]))
    for _ in range(3):
        response, _ = sign_in(person.email, "wrong-guess", fresh_address())
        assert response.status_code == 200 and "correct email and password" in html(response)
    response, client = sign_in(person.email.upper(), PASSWORD, fresh_address())
    assert response.status_code == 429 and not signed_in(client)
    wait = int(response["Retry-After"])
    assert 15 * 60 <= wait <= 2 * 15 * 60, "the failures take a window to slide out"
    assert (
        f"Too many failed attempts for this account or from this address: try again in {-(-wait // 60)} minutes"
        in html(response)
    )
    assert person.email.upper() in html(response), "the form keeps what was typed"
    clock[0] += wait - 2
    assert sign_in(person.email, PASSWORD, fresh_address())[0].status_code == 429
    clock[0] += 3
    response, client = sign_in(person.email, PASSWORD, fresh_address())
    assert response.status_code == 302 and signed_in(client), "once Retry-After has passed"


def test_an_address_with_too_many_failures_waits_for_every_account(person, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 4
    address = fresh_address()
    for n in range(4):
        assert sign_in(f"nobody-{n}-{person.email}", "guess", address)[0].status_code == 200
    response, client = sign_in(person.email, PASSWORD, address)
    assert response.status_code == 429 and not signed_in(client)
    response, client = sign_in(person.email, PASSWORD, fresh_address())
    assert response.status_code == 302 and signed_in(client), "another address has its own allowance"


def test_an_unknown_email_is_counted_like_a_known_one(person, settings):
    """Locking only real accounts would tell a guesser which emails have one."""
    settings.LOGIN_FAILURES_PER_ACCOUNT = 2
    unknown = f"x-{person.email}"
    answers = {}
    for email in (person.email, unknown):
        for _ in range(2):
            sign_in(email, "guess", fresh_address())
        response, _ = sign_in(email, "guess", fresh_address())
        page = re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "", html(response)).replace(email, "EMAIL")
        # the wait depends on where in the sliding window each refusal falls, not on whose email it is
        page = re.sub(r"try again in \d+ minutes?", "try again in N minutes", page)
        answers[email] = (response.status_code, page)
    assert answers[person.email] == answers[unknown] and answers[unknown][0] == 429


def test_right_passwords_are_not_counted(person, settings):
    settings.LOGIN_FAILURES_PER_ACCOUNT = 2
    address = fresh_address()
    for _ in range(4):
        response, client = sign_in(person.email, PASSWORD, address)
        assert response.status_code == 302 and signed_in(client)


def test_behind_a_proxy_each_client_has_its_own_allowance(person, settings):
    settings.TRUSTED_PROXIES, settings.LOGIN_FAILURES_PER_ADDRESS = 1, 2
    proxy, client_a, client_b = fresh_address(), fresh_address(), fresh_address()

    def through_proxy(password, client, claimed="203.0.113.9"):
        forwarded = f"{claimed}, {client}"  # the proxy appends the address it saw; the first is the client's say
        return Client().post(
            "/login",
            {"username": f"x-{person.email}", "password": password},
            REMOTE_ADDR=proxy,
            HTTP_X_FORWARDED_FOR=forwarded,
        )

    for n in range(2):
        through_proxy("guess", client_a, claimed=f"198.51.100.{n}")
    assert through_proxy("guess", client_a).status_code == 429, "what a client writes in the header is not trusted"
    assert through_proxy("guess", client_b).status_code == 200, "another client behind the same proxy"


def test_without_trusted_proxies_the_forwarded_header_is_ignored(person, settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 2
    address = fresh_address()
    for n in range(2):
        Client().post(
            "/login",
            {"username": f"x{n}-{person.email}", "password": "guess"},
            REMOTE_ADDR=address,
            HTTP_X_FORWARDED_FOR=fresh_address(),
        )
    response = Client().post(
        "/login",
        {"username": person.email, "password": PASSWORD},
        REMOTE_ADDR=address,
        HTTP_X_FORWARDED_FOR=fresh_address(),
    )
    assert response.status_code == 429


def test_a_locked_out_owner_still_signs_in_through_a_password_reset_link(person, settings):
    settings.LOGIN_FAILURES_PER_ACCOUNT = 3
    for _ in range(3):  # someone else, guessing
        sign_in(person.email, "wrong-guess", fresh_address())
    refused, _ = sign_in(person.email, PASSWORD, fresh_address())
    assert refused.status_code == 429
    owner = Client()
    owner.post("/password-reset", {"email": person.email})
    link = first_group(r"http://testserver(/reset/\S+)", mail.outbox[-1].body)
    form = owner.get(link, follow=True)
    done = owner.post(
        form.redirect_chain[-1][0], {"new_password1": "brand-new-pass-7", "new_password2": "brand-new-pass-7"}
    )
    assert done["Location"] == "/reset/done" and signed_in(owner), "the reset signs the owner in"
    assert "You are signed in" in html(owner.get("/reset/done"))


def test_a_stalled_redis_answers_503_in_a_moment_instead_of_holding_the_sign_in(person, settings):
    """A Redis that takes the connection and never answers (the throttle counts there): the sign-in is
    answered 503 with Retry-After within a second, not held until the web server's timeout."""
    with socket.socket() as stalled:
        stalled.bind(("127.0.0.1", 0))
        stalled.listen(8)  # connections are queued by the kernel and never read from
        settings.CACHES = {
            "default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{stalled.getsockname()[1]}/0"}
        }
        started = time.monotonic()
        response, client = sign_in(person.email, PASSWORD, fresh_address())
        assert time.monotonic() - started < 1.5
    assert response.status_code == 503 and int(response["Retry-After"]) > 0 and not signed_in(client)
