"""Record PyFlink 2.3's own output of the example programs as test data (``make datastream-reference``).

Runs each program with the real PyFlink (``.venv/pyflink``, never inside ``make test``) and keeps
its stdout in ``tests/datastream/pyflink_reference/<program>.txt``:

* "exact" examples and the programs of ``pyflink_programs/`` run to their end;
* "kafka" examples cannot run here (no Kafka connector jar in the wheel, no Maven): their stand-ins
  (``pyflink_stand_ins/``) run instead, and also leave the topic's messages as Flink's schemas make them
  in ``<program>.messages.json``;
* "structure" examples never end: their first ``STRUCTURE_LINES`` printed lines are kept, then the run is stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pyflink_examples import RUNNABLE, examples_dir, messages_reference_name, reference_dir, reference_name, stand_in  # noqa: E402

PROGRAMS = Path(__file__).parent / "pyflink_programs"
STRUCTURE_LINES = 40


def record_unbounded(python: str, path: Path, env: dict, lines: int, timeout: float = 600) -> str:
    """The first ``lines`` lines a never-ending program prints (after which it is stopped, with its JVM)."""
    out = path.parent / f".{path.stem}.out"
    with open(os.devnull, "w") as devnull, out.open("w") as stdout:
        process = subprocess.Popen([python, str(path)], stdout=stdout, stderr=devnull, cwd=path.parent, env=env,
                                   start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while len(out.read_text().splitlines()) < lines and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    text = out.read_text()
    out.unlink()
    return "".join(line + "\n" for line in text.splitlines()[:lines])


def main(python: str, only: list[str]) -> int:
    python = os.path.abspath(python)  # the programs run in their own directories (not resolved: a venv's python is a link)
    examples = examples_dir()
    programs = [(name, examples / name) for name, kind in RUNNABLE.items() if kind in ("exact", "structure")]
    programs += [(name, stand_in(name)) for name, kind in RUNNABLE.items() if kind == "kafka"]
    programs += [(p.name, p) for p in sorted(PROGRAMS.glob("*.py"))]
    failed = 0
    # PyFlink's Python workers run the first ``python`` on PATH: make it the PyFlink interpreter.
    env = dict(os.environ, PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}", PYFLINK_CLIENT_EXECUTABLE=python)
    for name, path in programs:
        if only and not any(o in name for o in only):
            continue
        if RUNNABLE.get(name) == "structure":
            (reference_dir() / reference_name(name)).write_text(record_unbounded(python, path, env, STRUCTURE_LINES))
            print(f"{name}: first {STRUCTURE_LINES} lines", flush=True)
            continue
        run_env = env
        if RUNNABLE.get(name) == "kafka":
            run_env = dict(env, KINDLING_REFERENCE_MESSAGES=str(reference_dir() / messages_reference_name(name)))
        out = subprocess.run([python, str(path)], capture_output=True, text=True, timeout=900, cwd=path.parent, env=run_env)
        if out.returncode != 0:
            print(f"{name}: exit {out.returncode}\n{out.stderr[-3000:]}", file=sys.stderr)
            failed += 1
            continue
        (reference_dir() / reference_name(name)).write_text(out.stdout)
        print(f"{name}: {len(out.stdout.splitlines())} lines", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))
