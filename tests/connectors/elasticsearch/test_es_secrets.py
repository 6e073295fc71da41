"""Passwords never show: a SQL job with basic auth run as `kindling sql -f` at INFO log level (Spark's and kindling's
logs, the EXPLAIN of its INSERTs, the exception of a job that fails on a mapping error) never prints the password,
nor the Authorization header made from it, for either client (elasticsearch-7 and opensearch).

The local servers accept any credentials, so each sits behind a proxy that requires the right ones: the documents
arriving prove the password reached the server."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from es_helpers import BulkProxy, client_for, documents, fresh_index  # noqa: E402

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[3]
USER, SECRET = "elastic", "Pw-3c1d-never-shown"


def test_the_password_is_never_logged_explained_or_raised(elasticsearch, opensearch, tmp_path):
    indices = {name: fresh_index(name) for name in ("es", "os", "mapped")}
    client_for(elasticsearch).indices.create(index=indices["mapped"], body={"mappings": {"properties": {"k": {"type": "long"}}}})
    with BulkProxy(elasticsearch.url, credentials=(USER, SECRET)) as es_proxy, \
            BulkProxy(opensearch.url, credentials=(USER, SECRET)) as os_proxy:
        auth = f"'username' = '{USER}', 'password' = '{SECRET}'"
        script = tmp_path / "job.sql"
        script.write_text(f"""
SET 'restart-strategy.type' = 'none';
CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'collection', 'data' = '[["a", 1], ["b", 2]]');
CREATE TABLE es (k STRING, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'elasticsearch-7',
    'hosts' = '{es_proxy.url}', 'index' = '{indices["es"]}', {auth});
CREATE TABLE os (k STRING, v BIGINT) WITH ('connector' = 'opensearch', 'hosts' = '{os_proxy.url}',
    'index' = '{indices["os"]}', {auth});
CREATE TABLE mapped (k STRING, v BIGINT) WITH ('connector' = 'elasticsearch-7', 'hosts' = '{es_proxy.url}',
    'index' = '{indices["mapped"]}', 'failure-handler' = 'fail', {auth});
DESCRIBE es;
EXPLAIN INSERT INTO es SELECT k, v FROM src;
EXPLAIN INSERT INTO os SELECT k, v FROM src;
INSERT INTO es SELECT k, v FROM src;
INSERT INTO os SELECT k, v FROM src;
INSERT INTO mapped SELECT k, v FROM src;
""")
        run = subprocess.run([sys.executable, "-m", "kindling.cli", "sql", "-f", str(script), "-D", "kindling.log.level=INFO",
                              "-D", f"state.checkpoints.dir={tmp_path / 'checkpoints'}"],
                             capture_output=True, text=True, cwd=ROOT, timeout=600,
                             env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    output = run.stdout + run.stderr
    (tmp_path / "output.txt").write_text(output)
    # What the check reads is really there: INFO logs, both plans, the failed job's exception, the indexed documents.
    assert " INFO " in output and "== Sink: es (connector 'elasticsearch-7') ==" in output
    assert "== Sink: os (connector 'opensearch') ==" in output
    assert "failure-handler' = 'fail' fails the job" in output and "failed to parse field [k]" in output, output[-3000:]
    assert run.returncode != 0  # the mapping error failed the third job
    assert set(documents(elasticsearch, indices["es"])) == {"a", "b"}
    assert sorted(d["k"] for d in documents(opensearch, indices["os"]).values()) == ["a", "b"]
    header = base64.b64encode(f"{USER}:{SECRET}".encode()).decode()
    for text in (SECRET, header):
        where = [line for line in output.splitlines() if text in line]
        assert not where, where[:3]
    for path in (tmp_path / "checkpoints").rglob("*"):  # nor kept in a checkpoint
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
