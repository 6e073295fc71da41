import json

import pytest

from kindling.cli import build_parser, main
from kindling.local.ports import free_port


def test_demo_arguments():
    args = build_parser().parse_args(["demo", "click-count", "--duration", "30", "--processing-time"])
    assert args.duration == 30 and args.event_time is False


@pytest.mark.integration
def test_local_kafka_start_status_stop(tmp_path, capsys):
    state = str(tmp_path / "kafka-state")
    port = free_port()
    assert main(["local", "kafka", "start", "--port", str(port), "--state-dir", state]) == 0
    try:
        assert f"127.0.0.1:{port}" in capsys.readouterr().out
        assert main(["local", "kafka", "status", "--state-dir", state]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["running"] and info["port"] == port
    finally:
        assert main(["local", "kafka", "stop", "--state-dir", state]) == 0
    assert main(["local", "kafka", "status", "--state-dir", state]) == 3


def test_run_from_a_savepoint_keeps_an_s3_uri_and_makes_a_local_path_absolute(tmp_path, monkeypatch):
    from kindling.server.cli import savepoint_location

    monkeypatch.chdir(tmp_path)
    assert savepoint_location("s3://bucket/savepoints/savepoint-abc") == "s3://bucket/savepoints/savepoint-abc"
    assert savepoint_location("savepoints/savepoint-abc") == str(tmp_path / "savepoints" / "savepoint-abc")
