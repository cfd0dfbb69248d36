"""Sign up (/signup), log in and out, and password reset (/password-reset, mailed through the email backend)."""

from django.contrib.auth.hashers import MD5PasswordHasher
from django.core import mail
from django.test import Client

from accounts.models import Membership, Role, User
from tests.conftest import first_group
from tests.console import html, logged_in


def sign_up(client, email="Dana@Example.com", **fields):
    return client.post("/signup", {"email": email, "password": "a-long-pass-9", "project_name": "", **fields})


def mailed_link() -> str:
    return first_group(r"http://testserver(/signup/\S+)", mail.outbox[-1].body)


def test_it_signs_up_with_a_first_project_from_the_mailed_link(db):
    client = Client()
    response = sign_up(client)
    assert response["Location"] == "/signup/sent" and not User.objects.exists(), "no account before the link"
    assert mail.outbox[-1].to == ["dana@example.com"] and "Finish signing up" in mail.outbox[-1].subject
    link = mailed_link()
    assert "Create my account" in html(client.get(link)) and not User.objects.exists(), "a GET creates nothing"
    created = client.post(link)
    user = User.objects.get(email="dana@example.com")
    membership = Membership.objects.get(user=user)
    assert membership.role == Role.OWNER and membership.project.name == "dana's project"
    assert created.status_code == 302 and created["Location"] == f"/projects/{membership.project.slug}"
    page = client.get(created["Location"])
    assert page.status_code == 200 and "Welcome!" in html(page)
    assert Client().login(username="dana@example.com", password="a-long-pass-9")
    assert client.post(link).status_code == 404 and Client().get(link).status_code == 404, "the link works once"


def test_it_names_the_first_project(db):
    client = Client()
    sign_up(client, email="dana@example.com", project_name="Dana Labs")
    client.post(mailed_link())
    assert Membership.objects.get(user__email="dana@example.com").project.name == "Dana Labs"


def test_it_answers_the_same_whether_or_not_the_email_has_an_account(alice):
    new, taken = sign_up(Client(), email="dana@example.com"), sign_up(Client(), email="alice@example.com")
    assert (new.status_code, new["Location"]) == (taken.status_code, taken["Location"]) == (302, "/signup/sent")
    assert html(Client().get("/signup/sent")).count("Check your email") >= 1
    exists = mail.outbox[-1]
    assert exists.to == ["alice@example.com"] and "already have" in exists.subject
    assert "/password-reset" in exists.body and "/signup/" not in exists.body
    assert User.objects.filter(email="alice@example.com").count() == 1
    assert Client().login(username="alice@example.com", password="alice-password-1"), "her password is unchanged"


class CountingHasher(MD5PasswordHasher):
    """A hasher that counts its hashes, to see which sign-ups hash a password."""

    algorithm = "counting_md5"
    hashed: list[str] = []

    def encode(self, password, salt):
        self.hashed.append(password)
        return super().encode(password, salt)


def test_it_hashes_the_password_whether_or_not_the_email_has_an_account(alice, settings):
    # Hashing is the slow step: a sign-up that skipped it for a taken email would tell it by its time.
    settings.PASSWORD_HASHERS = ["tests.console_pages.test_console_signup.CountingHasher", *settings.PASSWORD_HASHERS]
    CountingHasher.hashed.clear()
    sign_up(Client(), email="dana@example.com", password="a-long-pass-9")
    sign_up(Client(), email="alice@example.com", password="a-long-pass-10")
    assert CountingHasher.hashed == ["a-long-pass-9", "a-long-pass-10"]


def test_it_refuses_a_weak_password(db):
    weak = Client().post("/signup", {"email": "dana@example.com", "password": "123"})
    assert weak.status_code == 200 and "too short" in html(weak) and not mail.outbox


def test_it_goes_to_next_after_signing_up(db):
    client = Client()
    sign_up(client, email="dana@example.com", next="/account/apps")
    assert client.post(mailed_link())["Location"] == "/account/apps"
    offsite = Client()
    sign_up(offsite, email="erin@example.com", next="https://evil.example/")
    assert offsite.post(mailed_link())["Location"].startswith("/projects/")


def test_the_signup_form_is_csrf_protected(db):
    response = Client(enforce_csrf_checks=True).post("/signup", {"email": "d@example.com", "password": "a-long-pass-9"})
    assert response.status_code == 403


def test_log_in_goes_home_to_the_project(alice, project):
    client = Client()
    response = client.post("/login", {"username": "alice@example.com", "password": "alice-password-1"})
    assert response["Location"] == "/"
    assert client.get("/")["Location"] == f"/projects/{project.slug}"


def test_home_needs_a_login_and_sends_a_projectless_person_to_projects(db, charlie):
    assert Client().get("/")["Location"] == "/login"
    assert logged_in(charlie).get("/")["Location"] == "/projects"


def test_the_login_form_is_csrf_protected(alice):
    response = Client(enforce_csrf_checks=True).post(
        "/login", {"username": "alice@example.com", "password": "alice-password-1"}
    )
    assert response.status_code == 403


def test_password_reset_mails_a_link_that_sets_a_new_password(alice):
    client = Client()
    response = client.post("/password-reset", {"email": "alice@example.com"})
    assert response["Location"] == "/password-reset/sent"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
    link = first_group(r"http://testserver(/reset/\S+)", mail.outbox[0].body)
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "Choose a new password" in html(form)
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": "brand-new-pass-7", "new_password2": "brand-new-pass-7"}
    )
    assert done["Location"] == "/reset/done"
    assert Client().login(username="alice@example.com", password="brand-new-pass-7")
    again = client.get(link, follow=True)
    assert "This link no longer works" in html(again)


def test_password_reset_says_the_same_for_an_unknown_email(db):
    response = Client().post("/password-reset", {"email": "nobody@example.com"})
    assert response["Location"] == "/password-reset/sent" and len(mail.outbox) == 0


def test_the_password_reset_form_is_csrf_protected(alice):
    assert Client(enforce_csrf_checks=True).post("/password-reset", {"email": "alice@example.com"}).status_code == 403


def test_the_auth_pages_are_accessible_and_never_framed(db):
    for path in ("/login", "/signup", "/password-reset"):
        response = Client().get(path)
        page = html(response)
        assert response.status_code == 200
        assert 'class="skip-link" href="#main"' in page and '<main id="main"' in page and "<label for=" in page
        assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
