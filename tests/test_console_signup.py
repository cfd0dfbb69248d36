"""Sign up (/signup), log in and out, and password reset (/password-reset, mailed through the email backend)."""

import re

from django.core import mail
from django.test import Client

from accounts.models import Membership, Role, User
from tests.console import html, logged_in


def test_it_signs_up_with_a_first_project(db):
    client = Client()
    response = client.post("/signup", {"email": "Dana@Example.com", "password": "a-long-pass-9", "project_name": ""})
    user = User.objects.get(email="dana@example.com")
    membership = Membership.objects.get(user=user)
    assert membership.role == Role.OWNER and membership.project.name == "dana's project"
    assert response.status_code == 302 and response["Location"] == f"/projects/{membership.project.slug}"
    page = client.get(response["Location"])
    assert page.status_code == 200 and "Welcome!" in html(page)


def test_it_names_the_first_project(db):
    Client().post("/signup", {"email": "dana@example.com", "password": "a-long-pass-9", "project_name": "Dana Labs"})
    assert Membership.objects.get(user__email="dana@example.com").project.name == "Dana Labs"


def test_it_refuses_a_weak_password_and_a_taken_email(alice):
    weak = Client().post("/signup", {"email": "dana@example.com", "password": "123"})
    assert weak.status_code == 200 and "too short" in html(weak) and not User.objects.filter(email="dana@example.com").exists()
    taken = Client().post("/signup", {"email": "alice@example.com", "password": "a-long-pass-9"})
    assert taken.status_code == 200 and "already exists" in html(taken)


def test_it_goes_to_next_after_signing_up(db):
    response = Client().post("/signup", {"email": "dana@example.com", "password": "a-long-pass-9",
                                         "next": "/account/apps"})
    assert response["Location"] == "/account/apps"
    offsite = Client().post("/signup", {"email": "erin@example.com", "password": "a-long-pass-9",
                                        "next": "https://evil.example/"})
    assert offsite["Location"].startswith("/projects/")


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
    response = Client(enforce_csrf_checks=True).post("/login", {"username": "alice@example.com",
                                                               "password": "alice-password-1"})
    assert response.status_code == 403


def test_password_reset_mails_a_link_that_sets_a_new_password(alice):
    client = Client()
    response = client.post("/password-reset", {"email": "alice@example.com"})
    assert response["Location"] == "/password-reset/sent"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
    link = re.search(r"http://testserver(/reset/\S+)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "Choose a new password" in html(form)
    done = client.post(form.redirect_chain[-1][0], {"new_password1": "brand-new-pass-7", "new_password2": "brand-new-pass-7"})
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
