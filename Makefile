# The two commands of the README:
#   make demo   install agentmem into .venv and run the offline demo
#   make test   install agentmem, its servers, the multilingual embedder, the LangChain and
#               LlamaIndex integrations and the test tools into .venv, build the docs (strict)
#               and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Run the tests with the network cut off where this machine allows it (a user namespace with no
# network), to prove that nothing downloads at run time. A new network namespace starts with
# its loopback interface down; the server tests need 127.0.0.1, so bring `lo` up inside it.
# As root no user namespace is needed (and none is wanted: the PostgreSQL tests run the server
# as the postgres user, which a user namespace mapping only root could not switch to).
NO_NETWORK = unshare $(if $(filter 0,$(shell id -u)),-n,-rn) sh -c 'ip link set lo up && exec "$$@"' sh
OFFLINE := $(shell $(NO_NETWORK) true >/dev/null 2>&1 && echo yes)
RUN_OFFLINE := $(if $(OFFLINE),$(NO_NETWORK))
LINTED := src tests integrations cookbook

.PHONY: demo test install dev lint format bench-locomo

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install -e .

dev: $(BIN)/python
	$(BIN)/pip install -e ".[dev,server,mcp,openai,postgres,postgres-test,multilingual]" \
		-e "integrations/langchain[test]" -e integrations/llama_index
	$(BIN)/pip check

demo: install
	$(BIN)/agentmem demo

test: dev
	$(if $(OFFLINE),,@echo "note: cannot cut the network here (no user namespaces); running online")
	$(BIN)/mkdocs build --strict --quiet --site-dir $$(mktemp -d)
	$(RUN_OFFLINE) $(BIN)/python -m pytest

lint: dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

format: dev
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

bench-locomo: install
	$(BIN)/agentmem bench locomo --data ../shared/data/locomo10.json --out bench-reports/locomo.json
