"""Settings, all from the environment, with defaults that work on a developer's machine."""

import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from accounts.scopes import DEFAULT_SCOPES, SCOPES

from . import capacity, process
from .database import databases
from .logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TWIN_VAR_DIR", BASE_DIR / "var"))

# What this process is, named by whoever starts it (TWIN_PROCESS) and read here once: the web server, a
# Celery worker, a management command, or the local stdio MCP server. What differs by kind is decided in
# these settings from PROCESS_KIND; no module reconfigures another at run time.
PROCESS_KINDS = process.KINDS
PROCESS_KIND = os.environ.get(process.ENVIRONMENT, process.DEFAULT)
if PROCESS_KIND not in PROCESS_KINDS:
    raise ImproperlyConfigured(
        f"{process.ENVIRONMENT} is {PROCESS_KIND!r}; it must be one of {', '.join(PROCESS_KINDS)}."
    )


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


def _secret_key() -> str:
    """SECRET_KEY, or one generated once and kept in an untracked file for development."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# How many reverse proxies stand in front (0: clients connect directly). Behind them, a request's scheme is
# the X-Forwarded-Proto they set (so OAuth's resource URL says https) and the client's address, for rate
# limits, is read from X-Forwarded-For (accounts.throttle.client_address). Never set it without the proxies:
# a client could then choose both.
TRUSTED_PROXIES = int(os.environ.get("TRUSTED_PROXIES", "0"))
# GET /metrics answers only a scraper holding this as its bearer; unset, the route is a 404 (twin/metrics.py).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# METRICS=off records no metric at all: what bench/search_ab.py compares against.
METRICS_ON = os.environ.get("METRICS", "on") != "off"
# A worker machine serves its own metrics on this port (0: none); its pool processes' samples are summed there,
# through files they write under var/ (set before prometheus_client is first imported, which is after settings).
WORKER_METRICS_PORT = int(os.environ.get("WORKER_METRICS_PORT", "0"))
WORKER_METRICS_HOST = os.environ.get("WORKER_METRICS_HOST", "127.0.0.1")
if PROCESS_KIND == process.WORKER and WORKER_METRICS_PORT:
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(VAR_DIR / "metrics" / "worker"))
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Where the service runs: "development" (the default: a developer's machine, the test suite) or anything else
# ("production", "staging"), where settings that only suit a developer are refused at start (the email below).
TWIN_ENV = os.environ.get("TWIN_ENV", "development").strip().lower()
DEVELOPMENT = TWIN_ENV == "development"
# Served over HTTPS, directly or behind TRUSTED_PROXIES that terminate it (then on unless HTTPS=0): cookies
# only over HTTPS, plain HTTP redirected (but /healthz, which load balancers probe), and HSTS.
HTTPS = env_bool("HTTPS", bool(TRUSTED_PROXIES))
if HTTPS:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
    # Asking browsers to preload the domain is the domain owner's choice, made once and hard to undo:
    # HSTS_PRELOAD=1 makes it; until then the deploy check's reminder (security.W021) is silenced below.
    SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "oauth2_provider",
    "accounts",
    "memory",
    "mcp_server",
    "console",
    "twin",  # its commands: setupdb, and migrate run as the owner
]

MIDDLEWARE = [
    "twin.requestid.RequestIdMiddleware",  # X-Request-Id on every answer; every line logged names it
    "twin.middleware.NoStoreMiddleware",  # Cache-Control: no-store on every /v1/ answer, the refusals below too
    "twin.middleware.BodyLimitMiddleware",
    "twin.middleware.UnavailableMiddleware",  # 503 rather than 500 when busy or a dependency is down
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "twin.malformed.MalformedInputMiddleware",  # a NUL or an unreadable URL: 400 before a session or view reads it
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "accounts.ratelimit.RateLimitHeadersMiddleware",
]

ROOT_URLCONF = "twin.urls"
# memory_add takes up to 500 items of up to 100,000 characters: room for a full call, refused above it (413).
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("MAX_BODY_BYTES", 64 * 1024 * 1024))
WSGI_APPLICATION = "twin.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.access.console",
            ],
        },
    },
]

# default: twin_app, pooled in web processes; owner: twin_owner, for migrate (twin/database.py)
DATABASES = databases(VAR_DIR, PROCESS_KIND)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
# Redis answers in well under a millisecond on loopback and in a few on a network: half a second is a stall.
CACHE_TIMEOUT_SECONDS = 0.5
CACHES: dict[str, dict[str, Any]] = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": os.environ.get("TWIN_CACHE_PREFIX", "twin"),
        "TIMEOUT": 300,
        # redis-py waits forever by default: a stalled Redis would hold a sign-in (its throttle) or a sign-up
        # until gunicorn's timeout. Past this, the call raises and is answered 503 (twin/unavailable.py).
        "OPTIONS": {"socket_timeout": CACHE_TIMEOUT_SECONDS, "socket_connect_timeout": CACHE_TIMEOUT_SECONDS},
    }
}

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise serves from the finders; it wants the folder
WHITENOISE_USE_FINDERS = True

# Mail (sign-up links, invitations, password resets). The console backend writes those links into the log,
# which suits a developer only: outside development the service refuses to start with it.
CONSOLE_EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", CONSOLE_EMAIL_BACKEND)
if not DEVELOPMENT and EMAIL_BACKEND == CONSOLE_EMAIL_BACKEND:
    raise ImproperlyConfigured(
        f"TWIN_ENV={TWIN_ENV}: the console email backend would write sign-up and password-reset links into the "
        "log. Set EMAIL_BACKEND (e.g. django.core.mail.backends.smtp.EmailBackend with EMAIL_HOST, EMAIL_PORT, "
        "EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS)."
    )
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "twin memory <no-reply@localhost>")

# Celery: Redis is the broker; tasks are acknowledged late so a worker that dies mid-read loses nothing.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport, repaired for a lost broker (twin/broker.py); TLS (rediss://) keeps kombu's own.
CELERY_BROKER_TRANSPORT = "twin.broker:Transport" if REDIS_URL.startswith("redis://") else None
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("TWIN_QUEUE", "twin")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_CONCURRENCY = capacity.WORKER_CONCURRENCY  # prefork children (twin/capacity.py counts them)
# An add queues its read on commit; a broker that is down must not hold the request: a web process tries
# once, with a short connect timeout, and the item is left to the sweep (memory.services.enqueue_read).
# Elsewhere the broker is retried as Celery does by default.
BROKER_CONNECT_SECONDS_WEB = 0.1  # a broker on the network accepts within a millisecond or two
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, float] = {
    "visibility_timeout": 600,
    "socket_connect_timeout": CELERY_BROKER_CONNECTION_TIMEOUT,
}
if PROCESS_KIND == process.WEB:
    CELERY_BROKER_TRANSPORT_OPTIONS.update(max_retries=0, socket_connect_timeout=BROKER_CONNECT_SECONDS_WEB)
# The stdio server reads what it saves itself, in its own process, so it works with no worker running.
CELERY_TASK_ALWAYS_EAGER = PROCESS_KIND == process.STDIO or env_bool("CELERY_TASK_ALWAYS_EAGER")
# The sweep re-queues items whose read was lost (broker or worker down); tend-own-indexes gives big memories
# their own search indexes (memory/read/own_indexes.py). `celery -A twin worker -B` runs both.
CELERY_BEAT_SCHEDULE = {
    "sweep-unread": {"task": "memory.tasks.sweep_unread", "schedule": 60.0},
    "tend-own-indexes": {"task": "memory.tasks.tend_own_indexes", "schedule": 60.0},
    "reembed-stale": {"task": "memory.tasks.reembed_stale", "schedule": 60.0},
    "clear-expired-tokens": {"task": "accounts.tasks.clear_expired_tokens", "schedule": 24 * 3600.0},
}
# An item whose read raises is read again after this many seconds, doubled each time (memory.tasks.read_items).
READ_RETRY_BACKOFF_SECONDS = float(os.environ.get("READ_RETRY_BACKOFF_SECONDS", "2"))
# From how many passages an end user's memory gets its own search indexes (bench/README.md "Search latency").
OWN_INDEX_PASSAGES = int(os.environ.get("OWN_INDEX_PASSAGES", "20000"))
CELERY_TASK_EAGER_PROPAGATES = True
# The read's worker processes run this much nicer than the web tier, so an import never takes the CPU a
# search needs (bench/README.md "Adding": search p95 during a big import).
READ_WORKER_NICENESS = int(os.environ.get("READ_WORKER_NICENESS", "10"))
# The model's threads in each worker process (lanes: memory.model.embeddings.use_lanes), all the cores by default,
# since one project's import is read one turn at a time (memory/fairness.py) and would otherwise use one core
# of many (bench/README.md "Adding").
READ_MODEL_THREADS = int(os.environ.get("READ_MODEL_THREADS", str(os.cpu_count() or 1)))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["twin.json_limits.JSONParser"],  # bounded nesting: a refusal, never a 500
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "accounts.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "twin memory API",
    "DESCRIPTION": "Long-term memory for AI assistants: the HTTP API. Every route takes "
    "`Authorization: Bearer tm_…` and `X-Twin-Account: <end user>`.",
    "VERSION": "0.3.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# django-oauth-toolkit: the models are swapped (all together, in accounts' first migration) so a
# connection can name its project and end user. Sign-in follows the MCP authorization spec (2025-06-18,
# 2025-11-25): authorization code with PKCE S256 only, RFC 8707 resource binding, RFC 9207 `iss`, RFC 7591
# registration, rotating refresh tokens whose reuse ends the connection, and every RFC 9700 gate on.
OAUTH2_PROVIDER_APPLICATION_MODEL = "accounts.OAuthApplication"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "accounts.OAuthAccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "accounts.OAuthRefreshToken"
OAUTH2_PROVIDER_GRANT_MODEL = "accounts.OAuthGrant"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "accounts.OAuthIDToken"
OAUTH2_PROVIDER = {
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth_validator.TwinOAuth2Validator",
    "SCOPES": SCOPES,
    # A client that names no scope is offered both; the person chooses the access on the card.
    "DEFAULT_SCOPES": DEFAULT_SCOPES,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(timedelta(minutes=15).total_seconds()),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(timedelta(days=30).total_seconds()),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    "REQUEST_APPROVAL_PROMPT": "force",  # the card, every time
    # http only for loopback redirect URIs (RFC 8252); registration refuses any other http URI.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "DCR_ENABLED": True,  # served by mcp_server.oauth.register, advertised by the toolkit's metadata view
    # Client ID Metadata Documents (the 2026-07-28 authorization spec's preferred sign-in, claude.ai's when the
    # metadata offers it): a client_id that is an https URL is fetched by the toolkit's SafeMetadataFetcher
    # (https only, no redirects, the connected address checked, 5 s, 16 KB, cached, failures backed off) and
    # becomes a public app. Dynamic registration stays for older clients.
    "CIMD_ENABLED": True,
    # At most 2 fetches at once per process, well below its WEB_THREADS (16 by default): a flood
    # of made-up client_id URLs, each held up to the 5 s timeout, never takes the threads others need.
    "CIMD_MAX_CONCURRENT_FETCHES": 2,
    "OAUTH2_PROTECTED_RESOURCE_NAME": "twin memory",
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,  # only a checksum of each token is stored
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    # A deploy-check gate only: http stays allowed for loopback redirect URIs, which registration enforces.
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": False,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}
# http redirect URIs are loopback-only (RFC 8252 §7.3), enforced at registration: the warning does not apply.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"] + ([] if HTTPS and SECURE_HSTS_PRELOAD else ["security.W021"])
# Dynamic client registration: at most this many registrations a minute from one client address.
OAUTH_REGISTRATIONS_PER_MINUTE = int(os.environ.get("OAUTH_REGISTRATIONS_PER_MINUTE", "30"))
# Console sign-in: failed attempts allowed in 15 minutes for one email, and from one client address (higher:
# an office shares one), before even the right password waits.
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "10"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "50"))
# The API's rate limits (accounts/ratelimit.py), in requests a minute: per credential (an API key or an OAuth
# connection), and per credential and end user. Each project's Owners and Admins may set their own.
RATE_LIMIT_PER_CREDENTIAL = int(os.environ.get("RATE_LIMIT_PER_CREDENTIAL", "6000"))
RATE_LIMIT_PER_END_USER = int(os.environ.get("RATE_LIMIT_PER_END_USER", "600"))
# How much unread work a project may have queued for the background read (memory/fairness.py): items, and
# characters of their text. An add that would pass either is refused whole (429 with Retry-After).
READ_BACKLOG_ITEMS = int(os.environ.get("READ_BACKLOG_ITEMS", "200000"))
READ_BACKLOG_CHARACTERS = int(os.environ.get("READ_BACKLOG_CHARACTERS", "200000000"))
LOGIN_REDIRECT_URL = "/"  # the console's home: the person's last project
LOGOUT_REDIRECT_URL = "/login"
X_FRAME_OPTIONS = "DENY"  # the consent card and the console pages are never framed

# LOG_FORMAT=json: one JSON object per line, with the request's (or task's) fields (twin/logs.py).
LOGGING = logging_config(log_format=os.environ.get("LOG_FORMAT", "text"), level=os.environ.get("LOG_LEVEL", "INFO"))

# Models: only used when configured (OPENROUTER_API_KEY, or any OpenAI-compatible base URL and key).
OPENROUTER_API_KEY = os.environ.get("OPENROUTER_API_KEY", "")
LLM_BASE_URL = os.environ.get("LLM_BASE_URL", "https://openrouter.ai/api/v1" if OPENROUTER_API_KEY else "")
LLM_API_KEY = os.environ.get("LLM_API_KEY", OPENROUTER_API_KEY)
LLM_MODEL = os.environ.get("LLM_MODEL", "openai/gpt-4o-mini")
