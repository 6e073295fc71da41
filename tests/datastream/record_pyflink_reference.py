"""Record PyFlink 2.3's own output of the example programs as test data (``make datastream-reference``).

Runs each program with the real PyFlink (``.venv/pyflink``, never inside ``make test``) and keeps
its stdout in ``tests/datastream/pyflink_reference/<program>.txt``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pyflink_examples import RUNNABLE, examples_dir, reference_dir, reference_name  # noqa: E402

PROGRAMS = Path(__file__).parent / "pyflink_programs"


def main(python: str, only: list[str]) -> int:
    examples = examples_dir()
    programs = [(name, examples / name) for name in RUNNABLE]
    programs += [(p.name, p) for p in sorted(PROGRAMS.glob("*.py"))]
    failed = 0
    # PyFlink's Python workers run the first ``python`` on PATH: make it the PyFlink interpreter.
    env = dict(os.environ, PATH=f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}", PYFLINK_CLIENT_EXECUTABLE=python)
    for name, path in programs:
        if only and not any(o in name for o in only):
            continue
        out = subprocess.run([python, str(path)], capture_output=True, text=True, timeout=900, cwd=path.parent, env=env)
        if out.returncode != 0:
            print(f"{name}: exit {out.returncode}\n{out.stderr[-3000:]}", file=sys.stderr)
            failed += 1
            continue
        (reference_dir() / reference_name(name)).write_text(out.stdout)
        print(f"{name}: {len(out.stdout.splitlines())} lines", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))
