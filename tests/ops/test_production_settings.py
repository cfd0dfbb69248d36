"""Production settings: with DEBUG off and HTTPS on (or behind TRUSTED_PROXIES), Django's deploy check is clean
(secure session and CSRF cookies, HSTS, the OpenAPI schema's authentication described); outside development
(TWIN_ENV) the console email backend, which would log sign-up and reset links, is refused at start."""

import os
import subprocess
import sys

import pytest

from tests.worker import ROOT

EMAIL = "django.core.mail.backends.smtp.EmailBackend"


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "HTTPS", "TWIN_ENV", "EMAIL_BACKEND")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("env", [{"HTTPS": "1"}, {"TRUSTED_PROXIES": "1"}], ids=["https", "behind-a-proxy"])
def test_the_deploy_check_is_clean(env):
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", DEBUG="0", TWIN_ENV="production", EMAIL_BACKEND=EMAIL, **env
    )
    assert result.returncode == 0 and "no issues" in result.stdout, result.stdout + result.stderr


def test_outside_development_the_console_email_backend_is_refused_at_start():
    refused = manage("check", TWIN_ENV="production")
    assert refused.returncode != 0 and "EMAIL_BACKEND" in refused.stderr
    assert manage("check", TWIN_ENV="production", EMAIL_BACKEND=EMAIL).returncode == 0
    assert manage("check").returncode == 0, "development keeps the console backend"


def test_secure_cookies_and_hsts_over_https():
    script = (
        "from django.conf import settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS > 0, s.SECURE_SSL_REDIRECT)"
    )
    result = manage("shell", "-v", "0", "-c", script, HTTPS="1")
    assert result.stdout.split() == ["True", "True", "True", "True"], result.stderr
