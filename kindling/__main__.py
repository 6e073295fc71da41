"""``python -m kindling prog.py [args]`` runs a (PyFlink) program on kindling; ``python -m kindling <command>`` is the CLI."""

import sys

from kindling.cli import main
from kindling.program import run_program

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv and argv[0].endswith(".py"):
        raise SystemExit(run_program(argv[0], argv[1:]))
    raise SystemExit(main(argv))
