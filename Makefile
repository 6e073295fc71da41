# kindling: `make demo` runs the playground job, `make test` the test suite. Both set up everything.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DURATION ?= 60

.PHONY: demo test setup java chromium benchmark clean
.PHONY: nexmark-check nexmark-bench datastream-reference

setup: java chromium $(STAMP)

# Java 17 for Spark: use what is there, else install it from Debian's packages.
java:
	@if ! command -v java >/dev/null 2>&1 && [ -z "$$JAVA_HOME" ]; then \
		echo "Java not found: installing openjdk-17-jre-headless with apt-get"; \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless; \
		else \
			echo "kindling needs Java 17: install it (e.g. 'sudo apt-get install openjdk-17-jre-headless') or set JAVA_HOME"; exit 1; \
		fi; \
	fi

# Headless Chromium for the dashboard tests (driven by Playwright; never 'playwright install').
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "Chromium not found: installing chromium with apt-get"; \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else \
			echo "the dashboard tests need Chromium: install it (e.g. 'sudo apt-get install chromium')"; exit 1; \
		fi; \
	fi

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $(STAMP)

demo: setup
	$(BIN)/kindling demo click-count --duration $(DURATION)

test: setup
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=15

benchmark: setup
	$(BIN)/python benchmarks/kafka_source.py

# Nexmark conformance: every query of benchmarks/nexmark/queries through kindling's SQL against a
# DuckDB reference over the same events; ends with `conformant=<k> total=<n>`.
nexmark-check: setup
	@$(BIN)/python -c 'import duckdb' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/nexmark/check.py $(NEXMARK_ARGS)

# Nexmark benchmark: kindling vs hand-written PySpark vs PyFlink (in its own venv, see pyproject's bench extra).
nexmark-bench: setup
	@$(BIN)/python -c 'import duckdb' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	@[ -x $(VENV)/pyflink/bin/python ] || ($(PYTHON) -m venv $(VENV)/pyflink && $(VENV)/pyflink/bin/pip install -q apache-flink==2.3.0)
	$(BIN)/python benchmarks/nexmark/run.py --pyflink-python $(VENV)/pyflink/bin/python $(NEXMARK_ARGS)

# PyFlink 2.3's own output of the wheel's DataStream examples (and tests/datastream/pyflink_programs), recorded
# as test data in tests/datastream/pyflink_reference/ (PyFlink runs in its own venv, never inside `make test`).
datastream-reference: setup
	@[ -x $(VENV)/pyflink/bin/python ] || ($(PYTHON) -m venv $(VENV)/pyflink && $(VENV)/pyflink/bin/pip install -q apache-flink==2.3.0)
	$(BIN)/python tests/datastream/record_pyflink_reference.py $(VENV)/pyflink/bin/python $(PROGRAMS)

clean:
	rm -rf $(VENV) .kindling artifacts *.egg-info
