# Set-up is part of every target: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_CORE := $(VENV)/.core-installed
STAMP_DEV := $(VENV)/.dev-installed

.PHONY: demo test lint bench docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP_CORE): pyproject.toml setup.py streameval/_speedups.c | $(PY)
	$(PY) -m pip install --quiet -e ".[river]"
	touch $@

$(STAMP_DEV): pyproject.toml setup.py streameval/_speedups.c | $(PY)
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@ $(STAMP_CORE)

demo: $(STAMP_DEV)
	$(PY) examples/phishing_demo.py

lint: $(STAMP_DEV)
	$(VENV)/bin/ruff check streameval tests examples benchmarks docs
	$(VENV)/bin/mypy streameval

test: lint
	$(PY) -m pytest

bench: $(STAMP_DEV)
	$(PY) benchmarks/run.py

docs: $(STAMP_DEV)
	$(PY) docs/make_figures.py
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
