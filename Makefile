# Everything installs from the project's own files: uv is bootstrapped into .tools from PyPI,
# then .venv is created exactly from uv.lock.
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(shell command -v $(PYTHON))
# `make setup` compiles every installed module to bytecode once, at install: where
# PYTHONDONTWRITEBYTECODE is set (containers, CI) Python would otherwise compile each import from
# source on every run. uv compiles the dependencies; the project itself is installed editable, so
# compileall does it.
export UV_COMPILE_BYTECODE := 1
# `make run` compiles only what running imports (about 2,000 of the 5,300 modules; the whole lot
# took 16 s of CPU): its commands write the bytecode of each module they import, once, whatever
# PYTHONDONTWRITEBYTECODE says, while the first run's kernels compile on the other core.
WRITE_BYTECODE := PYTHONDONTWRITEBYTECODE=

.PHONY: setup run test test-fast lint docs bench bench-e2e bench-scale clean

$(UV):
	@echo "setting up: installing uv $(UV_VERSION) into $(TOOLS) (once, a few seconds)"
	$(PYTHON) -m venv --without-pip $(TOOLS)
	@# the system's pip installs into .tools (seconds); without one, .tools gets its own pip
	$(PYTHON) -m pip --python $(TOOLS)/bin/python install --quiet --disable-pip-version-check uv==$(UV_VERSION) \
	  || { $(TOOLS)/bin/python -m ensurepip --default-pip && \
	       $(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); }

# `make run` installs only what running needs (no test tools); `make setup`, `make test` and
# the other developer targets add the dev group. Where `make setup` installed the test tools
# (.venv/.synced), a run keeps them: uv's --no-dev removes the dev group even with --inexact.
.venv/.synced-run: uv.lock pyproject.toml | $(UV)
	@echo "setting up: installing the packages ratings needs into .venv (a few seconds)"
	UV_COMPILE_BYTECODE=0 $(UV) sync --frozen --inexact $(if $(wildcard .venv/.synced),,--no-dev)
	@echo "setting up: done; the first run compiles the bytecode of what it imports as it goes"
	touch $@

.venv/.synced: uv.lock pyproject.toml | $(UV)
	@echo "setting up: installing the packages and the test tools into .venv"
	$(UV) sync --frozen
	.venv/bin/python -m compileall -q rating_core assets pipelines
	touch $@ .venv/.synced-run

setup: .venv/.synced

run: .venv/.synced-run
	$(WRITE_BYTECODE) .venv/bin/ratings run --inbox data_samples --lake lake
	$(WRITE_BYTECODE) .venv/bin/ratings report --lake lake --output lake/report.html

test: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/mkdocs build --strict --site-dir .cache/site
	.venv/bin/lint-imports
	.venv/bin/pytest

# The quick tier while you work (under two minutes): no end-to-end, slow or browser tests.
test-fast: setup
	.venv/bin/pytest -m "not e2e and not slow and not browser"

# The documentation (docs/, mkdocs.yml) served at http://127.0.0.1:8000 while you edit it.
docs: setup
	.venv/bin/mkdocs serve

lint: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

bench: setup
	.venv/bin/python benchmarks/ingest.py --repeat 3
	.venv/bin/python benchmarks/replay.py --repeat 3
	.venv/bin/python benchmarks/federation.py --repeat 3

# `ratings run` end to end in subprocesses (minutes; about 1 GB of generated PGN in a temporary folder);
# BENCH_E2E="--scale 0.05" for a quick check, "--only cold" for one figure.
bench-e2e: setup
	.venv/bin/python benchmarks/end_to_end.py $(BENCH_E2E)

# A generated Lichess month through `ratings run`, a rerun and a moderation rerun, against
# `zstd -dc | wc -l` and python-chess (issue 31). The .pgn.zst is cached in /tmp/ratings-scale
# (3M games: about 1 GB, plus up to 2 GB of lake while it runs); BENCH_SCALE="--games 20000
# --chess-games 5000" for a quick check.
BENCH_SCALE ?= --games 3000000
bench-scale: setup
	@command -v zstd >/dev/null || echo "bench-scale: no zstd command (Debian package zstd): the baseline is Python's zstandard instead"
	.venv/bin/python benchmarks/scale.py $(BENCH_SCALE)

clean:
	rm -rf .venv $(TOOLS) lake .cache/site
