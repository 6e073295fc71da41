"""The Kinesis playground (examples/kinesis_playground.py) against the session's local Kinesis server: every
closed window's count is right although the input stream is resharded from 4 to 8 shards mid-way."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kinesis_playground.py"


def test_windows_survive_a_reshard_from_four_to_eight_shards(kinesis, capsys):
    spec = importlib.util.spec_from_file_location("kinesis_playground", EXAMPLE)
    playground = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(playground)
    status = playground.main(["--endpoint", kinesis.endpoint, "--clicks", "1200"])
    summary = [line for line in capsys.readouterr().out.splitlines() if line.startswith("shards=")]
    assert summary == ["shards=12 clicks=1200 windows=15 correct=15 wrong=0"], summary
    assert status == 0
