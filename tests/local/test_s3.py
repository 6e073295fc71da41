"""The local S3 server (SeaweedFS): start, readiness by a real S3 request, the S3 API kindling relies on, stop by pid."""

from __future__ import annotations

import os
import subprocess

import pyarrow.fs as pafs
import pytest

from kindling.cli import main
from kindling.local import s3 as local_s3
from kindling.local.ports import free_port
from kindling.local.process import alive
from kindling.local.s3 import LocalS3, s3_answers

pytestmark = pytest.mark.integration


def test_own_server_speaks_s3_with_credentials_and_stops_by_pid(s3, tmp_path):
    with LocalS3(data_dir=tmp_path / "data") as server:
        assert server.endpoint.startswith("http://127.0.0.1:") and s3_answers(server.endpoint, server.access_key, server.secret_key)
        # Bound to loopback only: every port the process listens on is on 127.0.0.1.
        listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        mine = [line.split()[3] for line in listening.splitlines() if f"pid={server.pid}," in line]
        assert mine and all(address.startswith("127.0.0.1:") for address in mine), mine
        server.create_bucket("lake")
        fs = server.filesystem()
        big = os.urandom(12 * 1024 * 1024)  # large enough for a multipart upload
        with fs.open_output_stream("lake/a/big.bin") as out:
            out.write(big)
        fs.copy_file("lake/a/big.bin", "lake/b/copy.bin")  # server-side copy: how the sink publishes
        with fs.open_input_stream("lake/b/copy.bin") as handle:
            assert handle.read() == big
        wrong = pafs.S3FileSystem(access_key=server.access_key, secret_key="wrong", endpoint_override=server.endpoint[7:],
                                  scheme="http", region="us-east-1")
        with pytest.raises(OSError, match="ACCESS_DENIED|SIGNATURE"):
            wrong.get_file_info("lake/a/big.bin")
        pid = server.pid
    assert not alive(pid) and not server.running
    assert s3_answers(s3.endpoint, s3.access_key, s3.secret_key)  # the session's server is another process


def test_background_server_start_status_stop(tmp_path, capsys):
    state = tmp_path / "state"
    port = free_port()
    assert main(["local", "s3", "start", "--port", str(port), "--state-dir", str(state)]) == 0
    try:
        info = local_s3.status(state)
        assert info["running"] and info["port"] == port and info["access_key"] == "kindling"
        assert local_s3.DEFAULT_SECRET_KEY not in capsys.readouterr().out  # the secret is never printed
        again = local_s3.start_background(port=port, state_dir=state)
        assert again["already_running"] and again["pid"] == info["pid"]
    finally:
        assert main(["local", "s3", "stop", "--state-dir", str(state)]) == 0
    assert not alive(info["pid"])
    assert main(["local", "s3", "status", "--state-dir", str(state)]) == 3
