# The two commands a newcomer needs: `make demo` and `make test`. Both set up what they need,
# idempotently, on a fresh Debian/Ubuntu machine.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PIP_QUIET := 2>&1 | { grep -v "^WARNING: Location" || true; }
# python3.11 when it runs, else the machine's python3 (3.11 or newer: requires-python); a pyenv shim that names a
# version not installed does not count.
PYTHON ?= $(shell for p in python3.11 python3; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; done)
# A second interpreter for the fast tests (test-py312): python3.12 on the PATH, or pyenv's.
PY312 ?= $(shell for p in python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12; do \
	$$p -c '' 2>/dev/null && { echo $$p; break; }; done)
VENV312 := .venv312
FAST_TESTS := tests/lib/retrieval tests/lib/test_config.py tests/lib/test_import_rules.py tests/lib/test_paths.py \
	tests/lib/policies/test_temporal_rules.py tests/lib/policies/test_temporal_rules_property.py \
	tests/lib/policies/test_refs.py tests/lib/policies/test_xrefs.py tests/lib/text/test_chunking.py \
	tests/lib/text/test_filetypes.py tests/test_compose.py tests/mcp_service/test_entry_points.py
FAST_TESTS_DESELECT := --deselect tests/lib/retrieval/test_lexical_audit.py --deselect tests/lib/retrieval/test_float_rows.py
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := redis-server tesseract-ocr
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export PREFECT_SERVER_ANALYTICS_ENABLED := false

.PHONY: setup system venv inspector axe langchain-client test test-py312 demo lint docs bench clean

setup: system venv

## System packages: installed only when a binary is missing. redis-server also runs Redis Sentinel (`redis-server
## <conf> --sentinel`, as the failover tests do), so no redis-sentinel package is needed. chromium is the headless
## browser of the web page's tests (tests/mcp_service/test_ui.py, driven by Playwright with this system browser).
system:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v tesseract >/dev/null || missing="$$missing tesseract-ocr"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	[ -n "$(PYTHON)" ] || missing="$$missing python3"; \
	python3 -m venv --help >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## The venv: CPU torch first (or pip pulls CUDA), then the locked dependencies, then this project.
venv: $(STAMP)

$(STAMP): requirements.lock requirements.txt requirements-dev.txt pyproject.toml
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0 $(PIP_QUIET)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.lock $(PIP_QUIET)
	$(BIN)/pip install -q --disable-pip-version-check --no-deps -e . $(PIP_QUIET)
	@touch $(STAMP)

## The MCP Inspector's CLI (Node.js 20+), a third-party client for tests/mcp_service/test_inspector.py.
INSPECTOR_VERSION := 2.12.0
INSPECTOR := .tools/inspector/node_modules/.bin/mcp-inspector

inspector: $(INSPECTOR)

$(INSPECTOR):
	@command -v npm >/dev/null || { echo "npm (Node.js 20+) is needed for the MCP Inspector test"; exit 1; }
	npm install --prefix .tools/inspector --no-audit --no-fund --loglevel=error \
		@modelcontextprotocol/inspector@$(INSPECTOR_VERSION)
	@touch $(INSPECTOR)

## axe-core, the accessibility rules the web page's browser tests run in the page (tests/mcp_service/ui_checks.py).
AXE_VERSION := 4.14.1
AXE := .tools/axe/node_modules/axe-core/axe.min.js

axe: $(AXE)

$(AXE):
	@command -v npm >/dev/null || { echo "npm (Node.js 20+) is needed for the web page's accessibility checks"; exit 1; }
	npm install --prefix .tools/axe --no-audit --no-fund --loglevel=error axe-core@$(AXE_VERSION)
	@touch $(AXE)

## langchain-mcp-adapters in a venv of its own (it needs mcp 1.x; this project runs mcp 2.x), the LangChain
## client of tests/mcp_service/test_governance_langchain.py.
LANGCHAIN_VENV := .tools/langchain-venv
LANGCHAIN_CLIENT := $(LANGCHAIN_VENV)/.installed

langchain-client: $(LANGCHAIN_CLIENT)

$(LANGCHAIN_CLIENT):
	@$(PYTHON) -m venv $(LANGCHAIN_VENV)
	$(LANGCHAIN_VENV)/bin/pip install -q --disable-pip-version-check langchain-mcp-adapters==0.3.2 mcp==1.30.0 \
		langchain-core==1.7.2 $(PIP_QUIET)
	@touch $(LANGCHAIN_CLIENT)

## pytest on as many xdist workers as cores, at most 2 (what CI has; decision 0033), a test file or the whole of
## tests/stack per work unit (tests/xdist_scheduling.py). `pytest` alone runs the suite in one process.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 2 ? n : 2 )))

test: setup inspector axe langchain-client
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=30
	@if [ -n "$(PY312)" ]; then $(MAKE) --no-print-directory test-py312; \
	else echo "no python3.12 on this machine: the fast tests ran on $(PYTHON) only"; fi

## The tests that need no model and no stack, on Python 3.12 in a venv of its own. The lock without torch
## (--no-deps: nothing pulls it in; these tests never import it), so no CUDA/CPU torch download. See
## docs/decisions/0031-spec-gaps-and-python-3-12.md for the choice and the seconds it costs.
test-py312: $(VENV312)/.installed
	$(VENV312)/bin/python -m pytest -q -p no:cacheprovider $(FAST_TESTS) $(FAST_TESTS_DESELECT)

$(VENV312)/.installed: requirements.lock pyproject.toml
	@[ -n "$(PY312)" ] || { echo "python3.12 is needed for test-py312"; exit 1; }
	@[ -x $(VENV312)/bin/python ] || $(PY312) -m venv $(VENV312)
	$(VENV312)/bin/pip install -q --disable-pip-version-check --no-deps -r requirements.lock $(PIP_QUIET)
	$(VENV312)/bin/pip install -q --disable-pip-version-check --no-deps -e . $(PIP_QUIET)
	@touch $@

demo: setup
	$(BIN)/policy-kb demo

lint: venv
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

## The reference tables in docs/ (tools, error types, settings) rewritten from the code; tests/test_docs_generated.py
## fails when the committed copy is stale.
docs: venv
	$(BIN)/python -m deployments.docs

bench: setup
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) $(VENV312) .pytest_cache .ruff_cache .hypothesis .tools
