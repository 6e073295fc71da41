"""The local Kinesis server (kinesis-local): loopback only, streams ACTIVE at once, AWS's shard limit, and the CLI's
one-line start."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


def test_binds_loopback_only_and_streams_are_active_at_once(kinesis):
    assert _listening_addresses(kinesis.port) == {"0100007F"}  # 127.0.0.1, nothing on 0.0.0.0 or ::
    client = kinesis.client()
    client.create_stream(StreamName="local-check", ShardCount=2)
    summary = client.describe_stream_summary(StreamName="local-check")["StreamDescriptionSummary"]
    assert summary["StreamStatus"] == "ACTIVE"
    assert summary["OpenShardCount"] == 2
    kinesis.delete_stream("local-check")


def test_the_shard_limit_is_awss_not_kinesis_mocks_fifty(kinesis):
    """A session's tests share one server; with kinesis-mock's 50 a reshard late in the suite was refused."""
    from kindling.local.kinesis import SHARD_LIMIT

    assert kinesis.client().describe_limits()["ShardLimit"] == SHARD_LIMIT == 500


def test_cli_start_prints_one_url_line_and_stop_ends_it(tmp_path):
    from kindling.local.ports import free_port

    port = free_port()
    state = str(tmp_path / "state")
    cli = [sys.executable, "-m", "kindling.cli", "local", "kinesis"]
    started = subprocess.run(cli + ["start", "--port", str(port), "--state-dir", state], capture_output=True, text=True, timeout=120)
    try:
        assert started.returncode == 0, started.stderr
        assert started.stdout.splitlines() == [f"url=http://127.0.0.1:{port}"]
        status = subprocess.run(cli + ["status", "--state-dir", state], capture_output=True, text=True, timeout=60)
        assert status.returncode == 0 and '"running": true' in status.stdout
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        stopped = subprocess.run(cli + ["stop", "--state-dir", state], capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0
    status = subprocess.run(cli + ["status", "--state-dir", state], capture_output=True, text=True, timeout=60)
    assert status.returncode == 3
