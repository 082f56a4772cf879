PYTHON ?= python3
DB ?= textgen_eval.duckdb

.PHONY: dashboard test install install-test bench

install:
	bash scripts/install-system-deps.sh
	$(PYTHON) -m pip install -q -e .

install-test:
	bash scripts/install-system-deps.sh --test
	$(PYTHON) -m pip install -q -e ".[test]"

## Install, then open the dashboard on a local DuckDB file with the bundled sample.
dashboard: install
	$(PYTHON) -m textgen_core --db $(DB) dashboard

## Install everything the tests need, then run the whole suite.
test: install-test
	$(PYTHON) -m pytest

bench: install-test
	$(PYTHON) bench/lexical.py
	$(PYTHON) bench/judge.py
	$(PYTHON) bench/dashboard.py
