"""``kindling local postgres|mysql start|status|stop --port N``: one line to connect with, a clean stop by pid."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from kindling.cli import main
from kindling.local import mysql as local_mysql
from kindling.local import postgres as local_postgres
from kindling.local.ports import free_port
from kindling.local.process import alive

pytestmark = pytest.mark.integration

SERVICES = {"postgres": (local_postgres, "postgresql"), "mysql": (local_mysql, "mysql")}


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_cli_start_status_stop(name, capsys):
    from kindling.connectors.jdbc.dialects import dialect_for
    from kindling.connectors.jdbc.options import jdbc_config

    module, scheme = SERVICES[name]
    # As root the server runs as its own system user, which must be able to enter the state directory
    # (pytest's temporary directories are private to root).
    state_dir = Path(tempfile.mkdtemp(prefix=f"kindling-cli-{name}-"))
    state_dir.chmod(0o755)
    state, port, pid = str(state_dir), free_port(), None
    try:
        assert main(["local", name, "start", "--port", str(port), "--state-dir", state]) == 0
        try:
            out = capsys.readouterr().out.strip().splitlines()
            assert len(out) == 1, out
            line = re.fullmatch(rf"url=(jdbc:{scheme}://127\.0\.0\.1:{port}/(\w+)) user=(\w+) password=(\S+)", out[0])
            assert line is not None, out[0]
            url, _database, user, password = line.groups()
            # the line is all a script needs: the jdbc connector connects with it
            config = jdbc_config({"url": url, "username": user, "password": password, "table-name": "t"})
            connection = dialect_for(config).connect_checked()
            cursor = connection.cursor()
            cursor.execute("SELECT 1")
            assert cursor.fetchone()[0] == 1
            connection.close()
            assert main(["local", name, "status", "--state-dir", state]) == 0
            shown = capsys.readouterr().out
            assert f'"port": {port}' in shown and password not in shown  # status never shows the password
            pid = module.status(state_dir)["pid"]
            assert pid is not None and alive(pid)
        finally:
            assert main(["local", name, "stop", "--state-dir", state]) == 0
        assert pid is not None and not alive(pid)
        assert main(["local", name, "status", "--state-dir", state]) == 3
    finally:
        if pid is not None and alive(pid):  # a failed stop must not leave a server behind
            os.kill(pid, 9)
        shutil.rmtree(state_dir, ignore_errors=True)
