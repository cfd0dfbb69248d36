# twin memory: `make run` sets everything up and runs the service; `make test` runs the whole test suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
REDIS_URL ?= redis://127.0.0.1:6379/0
export REDIS_URL

.PHONY: setup run test clients check redis chromium conformance database migrate model

setup: $(VENV)/.installed redis chromium conformance clients database migrate model

# Reinstall only when requirements.txt changes, so a second `make setup` takes seconds.
$(VENV)/.installed: requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $@

# Redis answers, or a local redis-server is started (Debian's package installed first when root).
redis: $(VENV)/.installed
	@if $(PY) -c "import os, redis; redis.Redis.from_url(os.environ['REDIS_URL'], socket_connect_timeout=1).ping()" 2>/dev/null; then \
		echo "Redis answers at $$REDIS_URL"; \
	else \
		case "$$REDIS_URL" in redis://127.0.0.1*|redis://localhost*) ;; \
		*) echo "Redis at $$REDIS_URL does not answer; start it, or unset REDIS_URL to use a local one." >&2; exit 1;; esac; \
		if ! command -v redis-server >/dev/null; then \
			if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
				echo "Installing redis-server…"; \
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || \
				{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }; \
			else \
				echo "Redis is not running and redis-server is not installed: install it (apt-get install redis-server) or set REDIS_URL." >&2; exit 1; \
			fi; \
		fi; \
		mkdir -p var; \
		redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
			--dir "$(CURDIR)/var" --logfile "$(CURDIR)/var/redis.log"; \
		for i in $$(seq 50); do $(PY) -c "import os, redis; redis.Redis.from_url(os.environ['REDIS_URL']).ping()" 2>/dev/null && break; sleep 0.1; done; \
		echo "Started redis-server at $$REDIS_URL"; \
	fi

# Debian's chromium for the browser tests (tests/e2e, driven by Playwright; no browser is downloaded):
# installed when root and missing; otherwise those tests fail, saying what to install.
chromium:
	@if command -v chromium >/dev/null; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing chromium…"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; \
	else \
		echo "chromium is not installed and the browser tests need it: apt-get install chromium." >&2; \
	fi

# The official MCP conformance suite and the Node it needs (22 or newer, both from the npm registry), exactly as
# tests/conformance/package-lock.json pins them; reinstalled only when the lock file changes. npm itself is the
# machine's, or Debian's package installed when root and missing.
CONFORMANCE := tests/conformance
conformance: $(CONFORMANCE)/node_modules/.installed

$(CONFORMANCE)/node_modules/.installed: $(CONFORMANCE)/package-lock.json
	@if ! command -v npm >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "Installing npm…"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null || \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; }; \
		else \
			echo "npm is not installed and the conformance test needs it: apt-get install npm." >&2; exit 1; \
		fi; \
	fi
	cd $(CONFORMANCE) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The official clients (clients/), for their tests: the Python one installed into the venv, editable, so the
# checkout's code is what runs; done again only when its pyproject.toml changes.
# The TypeScript one built (npm ci runs its prepare: tsc, ESM and CommonJS) with the conformance suite's npm, again
# when its lock file or its sources change.
TS_CLIENT := clients/typescript
clients: $(VENV)/.client-python $(TS_CLIENT)/dist/.built

$(VENV)/.client-python: $(VENV)/.installed clients/python/pyproject.toml
	$(PY) -m pip install --quiet -e ./clients/python
	@touch $@

$(TS_CLIENT)/dist/.built: $(TS_CLIENT)/package-lock.json $(wildcard $(TS_CLIENT)/src/*.ts) | conformance
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The superuser's steps, once (roles twin_owner and twin_app, the database, pgvector; twin/database_setup.py):
# done on the embedded PostgreSQL, which this starts when DATABASE_URL is unset; with DATABASE_URL an admin
# runs the SQL of `manage.py setupdb --sql` (README).
database: $(VENV)/.installed
	@$(PY) manage.py setupdb

# As twin_owner, the tables' owner (manage.py migrate defaults to it).
migrate: $(VENV)/.installed database
	@$(PY) manage.py migrate --noinput -v 0
	@echo "Database migrated"

# The embedding model's int8 file, made once from the installed package's (memory/model/int8_file.py).
model: $(VENV)/.installed
	@$(PY) manage.py makemodel

# The worker and the web server name their kind (TWIN_PROCESS, read once by twin/settings.py; manage.py names its
# own). The worker leads a session of its own (setsid), so its niceness holds against PostgreSQL and the web tier
# where the kernel groups sessions (README "Sizing"); Ctrl-C stops it by its pid, as it is outside this shell's
# process group. Sizes (web workers and threads, pool, worker children) come from the environment
# (twin/capacity.py, README "Sizing"); checkconnections refuses to start what the database could not serve.
# Imports run on a worker of their own (memory/portability/jobs.py): one process, one import at a time, at the same
# niceness as the read's; IMPORT_WORKERS in twin/capacity.py counts its connection.
IMPORT_QUEUE ?= $${TWIN_QUEUE:-twin}-import
run: setup
	@$(PY) manage.py checkconnections
	@$(PY) manage.py demo --port $(PORT)
	@TWIN_PROCESS=worker setsid $(VENV)/bin/celery -A twin worker -B --loglevel=info --schedule var/celerybeat-schedule & \
	worker=$$!; \
	TWIN_PROCESS=worker setsid $(VENV)/bin/celery -A twin worker -P solo -Q $(IMPORT_QUEUE) -n import@%h --loglevel=info & \
	importer=$$!; trap 'kill $$worker $$importer; kill 0' INT TERM; \
	TWIN_PROCESS=web HOST=$(HOST) PORT=$(PORT) $(VENV)/bin/gunicorn -c gunicorn.conf.py & \
	wait

# The static checks: the format, the lint and the types (pyproject.toml configures each), from the venv alone.
# mypy's Django plugin loads twin.settings: as a command, with a database URL that is parsed but never
# connected to (so no embedded server starts) and a fixed key (so none is written under var/).
CHECK_ENV := TWIN_PROCESS=command DATABASE_URL=postgresql://twin_app@127.0.0.1:1/twin SECRET_KEY=check
check: $(VENV)/.installed $(VENV)/.client-python
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(CHECK_ENV) $(VENV)/bin/mypy

# Two pytest workers (each with its own test database and Celery queue): about 1.7 times faster on 2 cores.
# loadgroup: tests that share one costly fixture (the fault tests' own service) stay on one worker.
# The static checks come first: a finding fails the run before the database starts.
TEST_WORKERS ?= 2
test: check setup
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)
