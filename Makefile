# The two commands a newcomer needs: `make demo` and `make test`. Both set up what they need,
# idempotently, on a fresh Debian/Ubuntu machine.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PIP_QUIET := 2>&1 | { grep -v "^WARNING: Location" || true; }
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := redis-server tesseract-ocr
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False
export PREFECT_SERVER_ANALYTICS_ENABLED := false

.PHONY: setup system venv inspector langchain-client test demo lint bench clean

setup: system venv

## System packages: installed only when a binary is missing. redis-server also runs Redis Sentinel (`redis-server
## <conf> --sentinel`, as the failover tests do), so no redis-sentinel package is needed.
system:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v tesseract >/dev/null || missing="$$missing tesseract-ocr"; \
	command -v $(PYTHON) >/dev/null || command -v python3 >/dev/null || missing="$$missing python3"; \
	$(PYTHON) -m venv --help >/dev/null 2>&1 || python3 -m venv --help >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "installing system packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## The venv: CPU torch first (or pip pulls CUDA), then the locked dependencies, then this project.
venv: $(STAMP)

$(STAMP): requirements.lock requirements.txt requirements-dev.txt pyproject.toml
	@py=$$(command -v $(PYTHON) || command -v python3); \
	[ -x $(BIN)/python ] || $$py -m venv $(VENV)
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

## langchain-mcp-adapters in a venv of its own (it needs mcp 1.x; this project runs mcp 2.x), the LangChain
## client of tests/mcp_service/test_governance_langchain.py.
LANGCHAIN_VENV := .tools/langchain-venv
LANGCHAIN_CLIENT := $(LANGCHAIN_VENV)/.installed

langchain-client: $(LANGCHAIN_CLIENT)

$(LANGCHAIN_CLIENT):
	@py=$$(command -v $(PYTHON) || command -v python3); $$py -m venv $(LANGCHAIN_VENV)
	$(LANGCHAIN_VENV)/bin/pip install -q --disable-pip-version-check langchain-mcp-adapters==0.3.2 mcp==1.30.0 \
		langchain-core==1.7.2 $(PIP_QUIET)
	@touch $(LANGCHAIN_CLIENT)

## pytest on as many xdist workers as cores, at most 2 (what CI has; decision 0033), a test file or the whole of
## tests/stack per work unit (tests/xdist_scheduling.py). `pytest` alone runs the suite in one process.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n < 2 ? n : 2 )))

test: setup inspector langchain-client
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

demo: setup
	$(BIN)/policy-kb demo

lint: venv
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

bench: setup
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .tools
