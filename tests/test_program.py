"""Running a PyFlink program file (``kindling run``, ``python -m kindling``): jobs it leaves running are waited for."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path

import pytest

from kindling.program import run_program

pytestmark = pytest.mark.integration


def test_a_program_returning_without_wait_keeps_its_job_until_it_ends(spark, tmp_path: Path, capsys):
    # The PyFlink walkthrough's shape: execute_insert() and return. On a Flink cluster the job runs on;
    # here the program's process stays until the job has written all of its input.
    out = tmp_path / "out"
    program = tmp_path / "submit_and_return.py"
    program.write_text(textwrap.dedent(f"""
        from pyflink.table import EnvironmentSettings, TableEnvironment

        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("state.checkpoints.dir", {str(tmp_path / "checkpoints")!r})
        t_env.get_config().set("execution.checkpointing.interval", "1 s")
        t_env.execute_sql("CREATE TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '300', "
                          "'rows-per-second' = '100', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '300')")
        t_env.execute_sql("CREATE TABLE sink (n BIGINT) WITH ('connector' = 'filesystem', 'path' = {str(out)!r}, 'format' = 'csv')")
        t_env.from_path("numbers").execute_insert("sink")
    """))
    assert run_program(str(program)) == 0
    assert "runs on until it ends" in capsys.readouterr().err
    published = [f for f in out.rglob("*") if f.is_file() and not any(p.startswith((".", "_")) for p in f.relative_to(out).parts)]
    numbers = sorted(int(line) for f in published for line in f.read_text().split())
    assert numbers == list(range(1, 301))


def test_kindlings_log_lines_stay_out_of_a_program_logging_to_stdout(tmp_path: Path, capsys):
    # PyFlink's examples log to stdout; a restart warning from the runtime must not land among their records.
    program = tmp_path / "logs_to_stdout.py"
    program.write_text(textwrap.dedent("""
        import logging
        import sys

        logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(message)s")
        logging.getLogger("kindling.job").warning("job j: sink failed (boom); restarting from its checkpoint in 0:00:01")
        logging.info("the program's own line")
    """))
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    for handler in saved:  # as in a fresh interpreter, where the program's basicConfig takes effect
        root.removeHandler(handler)
    try:
        assert run_program(str(program)) == 0
    finally:
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        for handler in saved:
            root.addHandler(handler)
        root.setLevel(level)
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["the program's own line"]
    assert "restarting from its checkpoint" in captured.err
