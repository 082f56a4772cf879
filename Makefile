# The README's two commands: `make dashboard` and `make test`.
# Inside an active virtual environment they install into it; otherwise they
# create ./.venv first, so they work on an externally managed system Python
# (PEP 668: Debian 12, Ubuntu >= 23.04).
SYSTEM_PYTHON ?= python3
DB ?= textgen_eval.duckdb
VENV ?= .venv
# pytest-xdist workers for `make test` (the suite is written for 2 cores; 0 runs it in one process).
TEST_WORKERS ?= 2

# The interpreter every target uses: the active environment's, else ./.venv's.
# (Set from the command line only, `make PYTHON=...`: an exported $PYTHON is not taken.)
ifeq ($(origin PYTHON),command line)
else ifdef VIRTUAL_ENV
PYTHON := $(VIRTUAL_ENV)/bin/python
else
PYTHON := $(VENV)/bin/python
endif

# After an install: byte-compile the package (an editable install leaves it as source, so every new process,
# a CLI command, a pool worker, the dashboard, compiled ~32,000 lines again: ~0.3 CPU-s each) and compile
# BLEU's kernels into numba's cache (~7 CPU-s once; the first BLEU score otherwise pays it).
WARM = $(PYTHON) -m compileall -q textgen_core textgen_dashboard \
	&& $(PYTHON) -c "from textgen_core.metrics.lexical.bleu_kernel import compile_now; compile_now()"

.PHONY: dashboard test install install-test bench venv

venv:
	@bash scripts/make-venv.sh "$(SYSTEM_PYTHON)" "$(VENV)" "$(PYTHON)"

install: venv
	bash scripts/install-system-deps.sh
	$(PYTHON) -m pip install -q -e .
	$(WARM)

install-test: venv
	bash scripts/install-system-deps.sh --test
	$(PYTHON) -m pip install -q torch==2.13.0
	$(PYTHON) -m pip install -q -e ".[test,ray,models]"
	$(WARM)

## Install, then open the dashboard on a local DuckDB file with the bundled sample (Ctrl-C stops it).
dashboard: install
	$(PYTHON) -m textgen_core --db $(DB) dashboard

## Install everything the tests need, then run the whole suite.
test: install-test
	$(PYTHON) -m pytest -n $(TEST_WORKERS)

bench: install-test
	$(PYTHON) bench/lexical.py
	$(PYTHON) bench/judge.py
	$(PYTHON) bench/scale.py
	$(PYTHON) bench/dashboard.py
	$(PYTHON) bench/compare.py
	$(PYTHON) bench/panel_agreement.py
	$(PYTHON) bench/jury.py
