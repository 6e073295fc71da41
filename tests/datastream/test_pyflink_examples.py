"""PyFlink programs run unchanged on kindling and print what PyFlink 2.3 prints.

The example programs come from the apache-flink 2.3 wheel, fetched at test time (see
pyflink_examples.py; never copied here). The expected outputs were recorded once from a real
PyFlink 2.3 run (``make datastream-reference``) and live in pyflink_reference/. Lines are compared
as multisets with the ``N> `` subtask prefix removed (which subtask prints a record, and the order
across subtasks and keys, differ from run to run in PyFlink too); whether lines carry the prefix at
all is compared as well. Programs that need systems kindling does not have are listed in
pyflink_examples.NOT_RUNNABLE with the reason.

The example programs run as ``kindling run`` runs a program without a job manager, one after another in
one subprocess (example_runner.py: one Spark JVM for all of them), whose standard output is what they
printed; the tests of the command itself run it, one subprocess each.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from example_runner import run_programs, start_programs  # noqa: E402
from pyflink_examples import NOT_RUNNABLE, RUNNABLE, examples_dir, reference_dir, reference_name  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "pyflink_programs"
# Lines PyFlink's own runtime (Beam, Cython) writes to stdout: not the program's output.
NOISE = ("Using Any for unsupported type", "No module named google.cloud", "PYFLINK_CYTHON_ENABLED")
SUBTASK = re.compile(r"^\d+> ")


def program_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.startswith(NOISE)]


def comparable(lines: list[str]) -> tuple[list[str], bool]:
    """The lines without subtask prefixes, sorted, and whether the records carried prefixes."""
    records = [line for line in lines if SUBTASK.match(line)]
    return sorted(SUBTASK.sub("", line) for line in lines), bool(records)


def expected_lines(program: str) -> list[str]:
    return program_lines((reference_dir() / reference_name(program)).read_text())


def run_kindling(program: Path, cwd: Path, timeout: float = 1200) -> subprocess.CompletedProcess:
    """``kindling run program > out.txt`` without a job manager, as a user runs it: the file holds what the program printed.

    A subprocess, because the print sink writes from Spark's Python workers, whose stdout is the
    process's own file descriptor, not what pytest captures; a file rather than a pipe, because
    several processes write it (each Python worker appends to the JVM's stdout)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = cwd / "out.txt"
    with out.open("w") as stdout:
        done = subprocess.run([sys.executable, "-m", "kindling", "run", "-m", "127.0.0.1:1", "-D", "restart-strategy.type=fixed-delay",
                               "-D", "restart-strategy.fixed-delay.attempts=3", str(program)],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, timeout=timeout, check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, out.read_text(), done.stderr)


def test_every_example_is_run_or_listed_with_a_reason():
    found = {str(p.relative_to(examples_dir())) for p in examples_dir().rglob("*.py")}
    assert found == set(RUNNABLE) | set(NOT_RUNNABLE), found ^ (set(RUNNABLE) | set(NOT_RUNNABLE))


# Programs kindling runs but does not yet get right: defects, kept visible (strict: the test fails once one passes).
KNOWN_WRONG: dict[str, str] = {}
IN_PROCESS = [pytest.param(p, marks=pytest.mark.xfail(reason=KNOWN_WRONG[p], strict=True)) if p in KNOWN_WRONG else p
              for p, kind in RUNNABLE.items() if kind == "exact" and p != "word_count.py"]


SHARED = [p if isinstance(p, str) else p.values[0] for p in IN_PROCESS]
NAMED_JOB = (
    "from pyflink.common import Types\n"
    "from pyflink.datastream import StreamExecutionEnvironment\n"
    "env = StreamExecutionEnvironment.get_execution_environment()\n"
    "env.set_parallelism(1)\n"
    "env.from_collection([1, 2, 3], type_info=Types.INT()).map(lambda n: n * 10, output_type=Types.INT()).print()\n"
    "env.execute('tens')\n")
TYPE_MISMATCH = (
    "from pyflink.common import Types\n"
    "from pyflink.datastream import StreamExecutionEnvironment\n"
    "env = StreamExecutionEnvironment.get_execution_environment()\n"
    "def count_as_text(word):\n"
    "    return word, str(len(word))\n"
    "env.from_collection(['to', 'be']).map(count_as_text, output_type=Types.ROW_NAMED(['word', 'count'], "
    "[Types.STRING(), Types.LONG()])).print()\n"
    "env.execute()\n")


def _shared_runs(tmp_path_factory) -> list[tuple[str, Path, Path]]:
    own = tmp_path_factory.mktemp("programs")
    (own / "named.py").write_text(NAMED_JOB)
    (own / "mismatch.py").write_text(TYPE_MISMATCH)
    named_dir = tmp_path_factory.mktemp("named")
    return [(name, examples_dir() / name, tmp_path_factory.mktemp(Path(name).stem)) for name in SHARED] + [
        ("keys_and_two_jobs.py", PROGRAMS / "keys_and_two_jobs.py", tmp_path_factory.mktemp("keys")),
        ("connected_streams.py", PROGRAMS / "connected_streams.py", tmp_path_factory.mktemp("connected")),
        ("file_source_text.py", PROGRAMS / "file_source_text.py", tmp_path_factory.mktemp("file_source")),
        ("environment_settings.py", PROGRAMS / "environment_settings.py", tmp_path_factory.mktemp("environment")),
        ("named.py, first run", own / "named.py", named_dir),
        ("named.py, second run", own / "named.py", named_dir),
        ("mismatch.py", own / "mismatch.py", tmp_path_factory.mktemp("mismatch")),
    ]


_started: list = []  # the shared run, when the session started it in the background


def start_in_background(tmp_path_factory) -> None:
    """Called at the session's start (tests/conftest.py): the shared run begins at the lowest CPU priority."""
    _started.append(start_programs(_shared_runs(tmp_path_factory), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=2400,
                                   background=True))


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """The example programs and this module's own, run by example_runner.py in one subprocess (one Spark JVM):
    each run's exit status, standard output and standard error, by name."""
    if _started:
        return _started[0]()
    return run_programs(_shared_runs(tmp_path_factory), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=2400)


def printed_as_pyflink(shared_run: dict, program: str) -> list[str]:
    """The lines a program printed in the shared run, checked against what PyFlink 2.3 printed."""
    result = shared_run[program]
    assert result.returncode == 0, result.stderr[-3000:]
    got = program_lines(result.stdout)
    assert comparable(got) == comparable(expected_lines(program))
    return got


@pytest.mark.parametrize("program", IN_PROCESS)
def test_example_prints_what_pyflink_prints(program, shared_run):
    printed_as_pyflink(shared_run, program)


def test_keys_unchanged_key_type_and_second_execute(shared_run):
    """key_by leaves records as they are, get_current_key() has the selector's type, a second execute() prints."""
    got = printed_as_pyflink(shared_run, "keys_and_two_jobs.py")
    assert "((1, 'a', 10), 1, 'int')" in got and "(1, 'ac', 40)" in got


def test_connected_streams_keep_each_inputs_type(shared_run):
    """A typed tuple, a typed Row and an untyped (pickled) dict reach co-functions as PyFlink hands them."""
    got = printed_as_pyflink(shared_run, "connected_streams.py")
    assert "second {'words': 'to be'} dict" in got and "(a,refund Row,3)" in got


def test_file_source_text_lines(shared_run):
    """FileSource with StreamFormat.text_line_format(): every line (empty ones too, whatever ends it) one str record,
    from a file and from its directory."""
    got = [SUBTASK.sub("", line) for line in printed_as_pyflink(shared_run, "file_source_text.py")]
    assert "(,0,str)" in got and "(whether 'tis nöbler,19,str)" in got and "directory: in the mind" in got


def test_checkpoint_and_pipeline_settings_read_back_as_pyflink_reports_them(shared_run):
    """env.get_checkpoint_config() and the environment's getters: Flink's defaults (checkpointing off: interval -1,
    AT_LEAST_ONCE), its checks and derived answers; project() and the partitioning methods change no record."""
    got = printed_as_pyflink(shared_run, "environment_settings.py")
    assert "set_checkpoint_interval 5 refused" in got and "10:1" in got


def test_named_job_resumes_and_says_so(shared_run):
    first, second = shared_run["named.py, first run"], shared_run["named.py, second run"]
    assert first.returncode == 0, first.stderr[-3000:]
    assert sorted(program_lines(first.stdout)) == ["10", "20", "30"]
    assert "resumes from its earlier checkpoint" not in first.stderr
    assert second.returncode == 0, second.stderr[-3000:]
    assert "kindling: job 'tens' resumes from its earlier checkpoint" in second.stderr
    assert program_lines(second.stdout) == []  # the finished job's input was all consumed: nothing is replayed


def test_type_mismatch_fails_with_one_readable_message(shared_run):
    result = shared_run["mismatch.py"]
    assert result.returncode == 1, result.stderr[-3000:]
    message = [line for line in result.stderr.splitlines() if line.startswith("kindling: job")][-1]
    assert "count_as_text" in message and "'Map'" in message
    assert "field 'count'" in message and "'2'" in message and "LONG" in message
    assert "on record 'to'" in message or "on record 'be'" in message


def test_word_count_through_kindling_run_in_batch_mode(tmp_path):
    """The wheel's word_count, unchanged, through the ``kindling run`` command: batch mode prints final counts only."""
    result = run_kindling(examples_dir() / "word_count.py", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "running" in result.stderr and "in this process" in result.stderr
    assert comparable(program_lines(result.stdout)) == comparable(expected_lines("word_count.py"))
