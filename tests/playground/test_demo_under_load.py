"""``kindling demo click-count`` on a busy machine: windows or a one-line reason, never a Python trace."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HOG_SECONDS = 120
# Spins one core until its deadline: the test's load ends by itself even if the test is killed.
HOG = f"import time\nend = time.monotonic() + {HOG_SECONDS}\nwhile time.monotonic() < end:\n    pass\n"


def test_demo_under_cpu_load_reports_windows_or_one_line_reason():
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(os.cpu_count() or 2)]
    try:
        result = subprocess.run(
            [sys.executable, "-m", "kindling.cli", "demo", "click-count", "--duration", "20", "--startup-timeout", "240"],
            cwd=ROOT, capture_output=True, text=True, timeout=480, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    output = result.stdout + result.stderr
    print(output)  # what a newcomer would see (pytest -rA shows it)
    assert "Traceback" not in output and "BrokenPipe" not in output, output[-3000:]
    lines = result.stdout.strip().splitlines()
    summary = next(line for line in reversed(lines) if line.startswith("windows="))
    windows, correct, wrong = map(int, re.fullmatch(r"windows=(\d+) correct=(\d+) wrong=(\d+)", summary).groups())
    assert "first micro-batch done" in result.stdout or "still waiting" in result.stdout or "reason:" in result.stdout
    if windows > 0 and wrong == 0:
        assert result.returncode == 0 and correct == windows, output[-3000:]
    else:
        # No windows (or wrong ones): the last line says why, in one line, and the exit status is 1.
        assert result.returncode == 1
        assert lines[-1].startswith("reason: ") and lines[-2] == summary, output[-3000:]
