"""The local search servers: owned servers answer the clients, the CLI's detached servers start, report and stop."""

from __future__ import annotations

import pytest

from kindling.cli import main
from kindling.local import elasticsearch as local_es
from kindling.local import opensearch as local_os
from kindling.local.ports import free_port
from kindling.local.process import alive
from kindling.local.search import server_answers

pytestmark = pytest.mark.integration


def test_session_servers_answer_their_clients(elasticsearch, opensearch):
    from elasticsearch import Elasticsearch
    from opensearchpy import OpenSearch

    assert Elasticsearch(elasticsearch.url).info()["version"]["number"].startswith("8.")
    assert OpenSearch(opensearch.url).info()["version"]["distribution"] == "opensearch"
    assert elasticsearch.url.startswith("http://127.0.0.1:") and opensearch.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize("module", [local_es, local_os], ids=["elasticsearch", "opensearch"])
def test_cli_start_status_stop(module, tmp_path, capsys):
    name = module.SERVICE.cli_name
    state = str(tmp_path / "state")
    port = free_port()
    assert main(["local", name, "start", "--port", str(port), "--state-dir", state]) == 0
    try:
        out = capsys.readouterr().out.strip().splitlines()
        assert out == [f"url=http://127.0.0.1:{port}"]
        assert server_answers(f"http://127.0.0.1:{port}")
        assert main(["local", name, "status", "--state-dir", state]) == 0
        pid = module.status(tmp_path / "state")["pid"]
    finally:
        assert main(["local", name, "stop", "--state-dir", state]) == 0
    assert not alive(pid)
    assert main(["local", name, "status", "--state-dir", state]) == 3
