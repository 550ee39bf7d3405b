# Hippocampus — two commands: `make run` (install + run the whole graph on the sample vault)
# and `make test` (install + run the test suite). Everything lives in ./.venv.

PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
HIPPO   = $(VENV)/bin/hippo
STAMP   = $(VENV)/.installed

export DAGSTER_HOME ?= $(CURDIR)/.dagster
export HIPPO_VAULT  ?= $(CURDIR)/vault
export HIPPO_HOME   ?= $(CURDIR)/.hippo

.PHONY: install run test lint ui serve bench docs clean sample-vault

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

sample-vault:
	cp -r examples/vault $(HIPPO_VAULT)
	git -C $(HIPPO_VAULT) init -q -b main
	git -C $(HIPPO_VAULT) -c user.name=Hippocampus -c user.email=hippocampus@localhost add -A
	git -C $(HIPPO_VAULT) -c user.name=Hippocampus -c user.email=hippocampus@localhost commit -q -m "sample vault"

run: $(STAMP) $(if $(wildcard $(HIPPO_VAULT)),,sample-vault)
	$(HIPPO) run
	@echo
	$(HIPPO) search "침실 온도를 몇 도로 맞춰야 하나" --k 3
	@echo
	$(HIPPO) search "hook exit code 2 blocks a tool call" --k 3
	@echo
	@echo "Next, try:"
	@echo "  1. make serve                        the librarian: REST + MCP for agents, and fast \`hippo search\`"
	@echo "  2. $(HIPPO) search \"your question\"   hybrid search of $(HIPPO_VAULT)"
	@echo "  3. make ui                           the Dagster UI: assets, runs, checks, schedules, sensors"
	@echo "  Edits re-indexed within seconds: DAGSTER_HOME=$(DAGSTER_HOME) $(HIPPO) watch"
	@echo "  Something off? $(HIPPO) doctor"

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

ui: $(STAMP)
	$(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

serve: $(STAMP)
	$(HIPPO) serve

bench: $(STAMP)
	$(PY) -m eval.report ../shared/eval-data --out eval/reports/latest

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve -a 127.0.0.1:8000

clean:
	rm -rf $(VENV) .dagster .hippo
