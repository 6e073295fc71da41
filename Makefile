# kindling: `make demo` runs the playground job, `make test` the test suite. Both set up everything.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DURATION ?= 60

.PHONY: demo test lint setup bytecode java chromium databases kinesis-local kinesalite class-archive benchmark clean
.PHONY: nexmark-check nexmark-bench sql-reference datastream-reference pyflink

setup: java chromium databases kinesis-local $(STAMP) class-archive

# The driver JVM's class-sharing archive (kindling/runtime/jvm_classes.py): a driver starts in ~11 s instead of ~17 s.
class-archive: java $(STAMP)
	@$(BIN)/kindling class-archive

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

# PostgreSQL and MariaDB for the JDBC connector's tests and `kindling local postgres|mysql` (run by
# kindling itself on 127.0.0.1; the packages' own services are not used).
databases:
	@if ! command -v mariadbd >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then \
		echo "MariaDB or PostgreSQL not found: installing mariadb-server postgresql with apt-get"; \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server postgresql; \
		else \
			echo "the JDBC tests need MariaDB and PostgreSQL: install them (e.g. 'sudo apt-get install mariadb-server postgresql')"; exit 1; \
		fi; \
	fi
# The local Kinesis API server (npm kinesis-local) for the Kinesis connector's tests and
# `kindling local kinesis`: Node.js from Debian if missing, the package into .kindling/node.
KINESIS_LOCAL := .kindling/node/node_modules/kinesis-local/main.js
kinesis-local: $(KINESIS_LOCAL)
$(KINESIS_LOCAL):
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
		echo "Node.js not found: installing nodejs and npm with apt-get"; \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
		else \
			echo "the Kinesis tests need Node.js: install it (e.g. 'sudo apt-get install nodejs npm')"; exit 1; \
		fi; \
	fi
	mkdir -p .kindling/node
	npm install --prefix .kindling/node --no-audit --no-fund --silent kinesis-local@0.6.2

# kinesalite (npm), the Kinesis source benchmark's server: it loads and serves 200k records where kinesis-local
# slows down as a stream grows; in memory, so leveldown's native build is not needed.
KINESALITE := .kindling/node/node_modules/kinesalite/cli.js
kinesalite: $(KINESALITE)
$(KINESALITE): $(KINESIS_LOCAL)
	npm install --prefix .kindling/node --no-audit --no-fund --silent --ignore-scripts kinesalite@3.3.3

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[server,local,test]'
	@touch $(STAMP)

# kindling is installed editable, so pip compiles none of it; with PYTHONDONTWRITEBYTECODE set, no process would
# either, and every one Spark starts (a source's runner, a keyed operator's driver worker: several per query) compiled
# the modules it imports afresh, ~0.1 s of CPU each. Compiled here once, they are read from __pycache__.
bytecode: setup
	$(BIN)/python -m compileall -q kindling tests benchmarks examples >/dev/null

demo: setup bytecode
	$(BIN)/kindling demo click-count --duration $(DURATION)

# The tests drive kindling with the real `flink` CLI of PyFlink, in its own venv (see pyproject's bench extra).
# Two pytest workers (pytest-xdist), each test module whole on one: run one after another the tests left a core idle
# half the time (waiting on micro-batches, JVM starts, killed drivers), and the suite took 47 minutes of pytest on
# 2 cores; in two workers it took 29. Each worker has its own SparkSession and starts the local servers its modules
# use. TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= 2
test: setup pyflink bytecode
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=60 -n $(TEST_WORKERS) --dist loadfile

# Lint and import order (ruff, configured in pyproject.toml); tests/test_lint.py runs the same check in `make test`.
lint: setup
	$(BIN)/python -m ruff check kindling tests benchmarks examples

pyflink:
	@[ -x $(VENV)/pyflink/bin/python ] || ($(PYTHON) -m venv $(VENV)/pyflink && $(VENV)/pyflink/bin/pip install -q apache-flink==2.3.0)

# Every benchmark in benchmarks/ as one table (workload, kindling, reference, ratio, target), also written
# to artifacts/benchmarks.md; BENCHMARK_ARGS="--only stateful,kafka_source" or "--quick" (small inputs).
benchmark: setup pyflink kinesalite
	@$(BIN)/python -c 'import duckdb' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/run_all.py $(BENCHMARK_ARGS)

# Nexmark conformance: every query of benchmarks/nexmark/queries through kindling's SQL against a
# DuckDB reference over the same events; ends with `conformant=<k> total=<n>`.
nexmark-check: setup
	@$(BIN)/python -c 'import duckdb' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/nexmark/check.py $(NEXMARK_ARGS)

# Nexmark benchmark: kindling vs hand-written PySpark vs PyFlink (in its own venv, see pyproject's bench extra).
nexmark-bench: setup pyflink
	@$(BIN)/python -c 'import duckdb' 2>/dev/null || $(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/nexmark/run.py --pyflink-python $(VENV)/pyflink/bin/python $(NEXMARK_ARGS)

# Re-record Flink's answers for the differential SQL suite (tests/sql/differential/reference.json) on
# PyFlink 2.3 in its own venv; `make test` compares kindling's answers with them (PyFlink is not needed there).
# The Table API's printed schemas, DESCRIBE and statement results (tests/table/pyflink_reference/) are recorded too.
sql-reference: setup pyflink
	$(VENV)/pyflink/bin/python tests/sql/differential/record.py
	$(VENV)/pyflink/bin/python tests/table/schema_scenarios.py stream > tests/table/pyflink_reference/schemas_stream.txt
	$(VENV)/pyflink/bin/python tests/table/schema_scenarios.py batch > tests/table/pyflink_reference/schemas_batch.txt
	$(VENV)/pyflink/bin/python tests/table/result_scenarios.py > tests/table/pyflink_reference/results.txt

# PyFlink 2.3's own output of the wheel's DataStream examples (and tests/datastream/pyflink_programs), recorded
# as test data in tests/datastream/pyflink_reference/ (PyFlink runs in its own venv, never inside `make test`).
datastream-reference: setup pyflink
	$(BIN)/python tests/datastream/record_pyflink_reference.py $(VENV)/pyflink/bin/python $(PROGRAMS)

clean:
	rm -rf $(VENV) .kindling artifacts *.egg-info
