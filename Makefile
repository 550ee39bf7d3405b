# Hippocampus — two commands: `make run` (install + run the whole graph on the sample vault)
# and `make test` (install + run the test suite). Everything lives in ./.venv.

PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
HIPPO   = $(VENV)/bin/hippo
STAMP   = $(VENV)/.installed

# `make run`'s sample vault and stores (HIPPO_VAULT, HIPPO_HOME, DAGSTER_HOME override them); `make run`
# remembers them in the user's config file, so every `hippo` command finds them from any folder.
SAMPLE_VAULT   = $(abspath $(or $(HIPPO_VAULT),$(CURDIR)/vault))
SAMPLE_HOME    = $(abspath $(or $(HIPPO_HOME),$(CURDIR)/.hippo))
SAMPLE_DAGSTER = $(abspath $(or $(DAGSTER_HOME),$(CURDIR)/.dagster))

.PHONY: install run test lint ui serve bench docs clean sample-vault

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

sample-vault:
	cp -r examples/vault $(SAMPLE_VAULT)
	git -C $(SAMPLE_VAULT) init -q -b main
	git -C $(SAMPLE_VAULT) -c user.name=Hippocampus -c user.email=hippocampus@localhost add -A
	git -C $(SAMPLE_VAULT) -c user.name=Hippocampus -c user.email=hippocampus@localhost commit -q -m "sample vault"

run: $(STAMP) $(if $(wildcard $(SAMPLE_VAULT)),,sample-vault)
	$(HIPPO) config set --vault $(SAMPLE_VAULT) --home $(SAMPLE_HOME) --dagster-home $(SAMPLE_DAGSTER)
	$(HIPPO) run
	@echo
	$(HIPPO) search "침실 온도를 몇 도로 맞춰야 하나" --k 3
	@echo
	$(HIPPO) search "hook exit code 2 blocks a tool call" --k 3
	@echo
	@$(HIPPO) config link

test: $(STAMP)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

ui: $(STAMP)
	DAGSTER_HOME="$${DAGSTER_HOME:-$$($(HIPPO) config get dagster_home)}" \
	  $(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

serve: $(STAMP)
	$(HIPPO) serve

bench: $(STAMP)
	$(PY) -m eval.report ../shared/eval-data --out eval/reports/latest

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve -a 127.0.0.1:8000

clean:
	rm -rf $(VENV) .dagster .hippo
