"""createproject, createkey and makemodel, in their exact forms."""

import io

import pytest
from django.core.management import CommandError, call_command

from accounts.models import Membership, Project, Role
from tests.conftest import Api


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_createproject_creates_the_project_and_its_owner(db):
    slug = run("createproject", "Acme Support", "--owner", "ops@acme.test").strip()
    assert slug == "acme-support"
    project = Project.objects.get(slug=slug)
    membership = Membership.objects.get(project=project)
    assert membership.user.email == "ops@acme.test" and membership.role == Role.OWNER


def test_createproject_leaves_an_existing_project_as_it_is(db):
    first = run("createproject", "Acme", "--owner", "ops@acme.test").strip()
    again = run("createproject", "Acme", "--owner", "someone@else.test").strip()
    assert first == again
    assert Project.objects.count() == 1
    assert Membership.objects.get().user.email == "ops@acme.test"


def test_createkey_prints_a_working_key_on_its_last_line(db):
    slug = run("createproject", "Acme", "--owner", "ops@acme.test").strip()
    for access in ("read", "write"):
        key = run("createkey", slug, "--access", access, "--name", "ci").strip().splitlines()[-1]
        response = Api(key, "user_42").get("/v1/me")
        assert response.status_code == 200
        assert response.json()["access"] == access
        assert response.json()["project"]["slug"] == slug


def test_createkey_refuses_an_unknown_project(db):
    with pytest.raises(CommandError, match="No project"):
        run("createkey", "nope", "--access", "read")


def test_createkey_refuses_an_unknown_access(db):
    run("createproject", "Acme", "--owner", "ops@acme.test")
    with pytest.raises(CommandError):
        run("createkey", "acme", "--access", "admin")


def test_demo_prints_working_keys_and_a_console_login_and_keeps_them(db, settings, tmp_path):
    from django.test import Client

    settings.VAR_DIR = tmp_path
    first, again = run("demo", "--port", "8123"), run("demo", "--port", "8123")
    assert first == again  # the same keys and password on every `make run`
    keys = dict(line.split(":", 1) for line in first.splitlines() if line.strip().startswith(("read", "read and")))
    for name, access in (("  read key", "read"), ("  read and write key", "write")):
        response = Api(keys[name].strip(), "demo_user").get("/v1/me")
        assert response.status_code == 200 and response.json()["access"] == access
    assert "curl -s http://127.0.0.1:8123/v1/me" in first and '"url": "http://127.0.0.1:8123/v1/mcp"' in first
    password = first.split("password ")[1].split()[0]
    assert Client().post("/login", {"username": "demo@example.com", "password": password}).status_code == 302


def test_makemodel_makes_the_model_file_once(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    made = run("makemodel").strip().removeprefix("Model file ready: ")
    assert made.startswith(str(tmp_path / "models")) and made.endswith(".onnx")
    files = sorted(p.name for p in (tmp_path / "models").iterdir())
    stamp = (tmp_path / "models" / files[0]).stat().st_mtime_ns
    assert run("makemodel").strip().endswith(made) and len(files) == 1, "no half-written file is left"
    assert (tmp_path / "models" / files[0]).stat().st_mtime_ns == stamp, "made once, then found"
