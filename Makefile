# The two commands of the README:
#   make demo   install agentmem into .venv and run the offline demo
#   make test   install agentmem with its test tools into .venv and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Run the tests with the network cut off where this machine allows it (user namespaces),
# to prove that nothing downloads at run time.
OFFLINE := $(shell unshare -rn true >/dev/null 2>&1 && echo unshare -rn)

.PHONY: demo test install dev lint format bench-locomo

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install -e .

dev: $(BIN)/python
	$(BIN)/pip install -e ".[dev]"

demo: install
	$(BIN)/agentmem demo

test: dev
	$(OFFLINE) $(BIN)/python -m pytest

lint: dev
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

format: dev
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

bench-locomo: install
	$(BIN)/agentmem bench locomo --data ../shared/data/locomo10.json --out bench-reports/locomo.json
