# Set-up is part of every target: each creates .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_CORE := $(VENV)/.core-installed
STAMP_DEV := $(VENV)/.dev-installed

.PHONY: demo test lint browser java bench bench-clusters docs clean

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

# two processes, a test file each at a time (a file's fixtures, a Spark session among them, start once)
test: lint browser java
	$(PY) -m pytest -n 2 --dist loadfile

# the HTML report is checked in a real headless browser: Debian's chromium, installed here when it is missing
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
		apt-get install -y -q chromium >/dev/null 2>&1; }; }; } || \
		echo "chromium is not installed and cannot be here: the browser test of the HTML report will be skipped"

# the Spark tests start a real local session: Java (Debian's headless JRE), installed here when it is missing
java:
	@command -v java >/dev/null 2>&1 || [ -n "$$JAVA_HOME" ] || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
		apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1; }; }; } || \
		echo "Java is not installed and cannot be here: the Spark tests will be skipped"

# one BLAS thread: OpenBLAS's idle threads spin after a call (scikit-learn's, the plot's) and take a core
# from the timings that follow on a 2-core machine
bench: $(STAMP_DEV)
	OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/run.py

# one Parquet dataset evaluated by one process, Dask and Spark (table written into docs/distributed.md)
bench-clusters: $(STAMP_DEV) java
	$(PY) benchmarks/clusters.py --rows 10000000 --files 8 --out docs/distributed.md

docs: $(STAMP_DEV)
	$(PY) docs/make_figures.py
	$(VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
