"""``kindling sql``: run a SQL script (``-f job.sql``) or an interactive session, like Flink's SQL client.

A script runs every statement in order; INSERT jobs are submitted as they come and the command
waits for all of them at the end (bounded jobs finish, so the command exits; unbounded ones run
until Ctrl-C). SELECT results print as Flink's tableau mode: one line per change, as it arrives.
The interactive client keeps a history file, reads multi-line statements up to ``;`` and shows
each query's changes live until the query ends or Ctrl-C stops it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping, Optional, TextIO

from kindling.runtime.job import TERMINAL_STATES
from kindling.sql import ddl
from kindling.sql.errors import SqlError
from kindling.sql.result import ResultKind, TableResult
from kindling.sql.session import SqlSession
from kindling.sql.statements import Statement, is_complete, split_statements

HISTORY_FILE = Path(os.environ.get("KINDLING_SQL_HISTORY", Path.home() / ".kindling_sql_history"))
PROMPT = "Flink SQL> "
CONTINUATION = "> "
_HELP = """Statements end with ';'. Supported: CREATE [TEMPORARY] TABLE/VIEW/FUNCTION, DROP, SET, RESET, INSERT INTO,
EXECUTE STATEMENT SET BEGIN ... END, SELECT, EXPLAIN, SHOW TABLES|VIEWS|FUNCTIONS, DESCRIBE.
Client commands: HELP; CLEAR; QUIT; (or EXIT;). Ctrl-C stops a running SELECT."""


def _session(defines: Mapping[str, str]) -> SqlSession:
    from kindling.env import StreamEnvironment

    return StreamEnvironment(dict(defines)).sql_session()


def _report(statement: Statement, result: TableResult, out: TextIO) -> None:
    parsed = ddl.parse_statement(statement)
    if isinstance(parsed, ddl.Query):
        result.print(out, client=True)
    elif isinstance(parsed, (ddl.Insert, ddl.StatementSet, ddl.EndStatementSet)) and result.get_job_client() is not None:
        client = result.get_job_client()
        out.write("[INFO] Submitting SQL update statement to the cluster...\n"
                  f"[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: {client.job_id}\n\n")
    elif isinstance(parsed, ddl.Explain):
        out.write(result.collect()[0][0] + "\n\n")
    elif result.get_result_kind() == ResultKind.SUCCESS:
        out.write("[INFO] Execute statement succeeded.\n\n")
    else:
        result.print(out, client=True)
    out.flush()


def run_file(path: str, defines: Mapping[str, str], out: Optional[TextIO] = None) -> int:
    """Run a script; returns 0 when every job finished (or the script had none). Errors raise."""
    out = out or sys.stdout
    script = Path(path).read_text() if path != "-" else sys.stdin.read()
    if path != "-":
        # Python functions next to the script (CREATE TEMPORARY FUNCTION ... AS 'module.fn') are importable.
        sys.path.insert(0, str(Path(path).resolve().parent))
    statements = split_statements(script)
    if not statements:
        raise SqlError(f"{path} holds no SQL statement", construct="script")
    session = _session(defines)
    try:
        for statement in statements:
            try:
                result = session.execute_statement(statement)
            except SqlError as exc:
                exc.args = (f"{path}: {exc}",)
                raise
            _report(statement, result, out)
        for client in session.jobs:
            client.wait()
    except KeyboardInterrupt:
        for client in session.jobs:
            client.cancel()
        print("kindling: stopped (Ctrl-C)", file=sys.stderr)
        return 130
    return 0


def interactive(defines: Mapping[str, str], stdin: Optional[TextIO] = None, out: Optional[TextIO] = None) -> int:
    """The interactive client: multi-line statements, history, live query results."""
    out = out or sys.stdout
    stdin = stdin or sys.stdin
    use_readline = stdin is sys.stdin and stdin.isatty()
    if use_readline:
        try:
            import readline

            if HISTORY_FILE.exists():
                readline.read_history_file(str(HISTORY_FILE))
        except (ImportError, OSError):
            use_readline = False
    out.write("kindling SQL client: Flink SQL on Apache Spark. Type HELP; for help, QUIT; to leave.\n\n")
    session = None
    buffer = ""
    try:
        while True:
            prompt = PROMPT if not buffer else CONTINUATION
            try:
                if use_readline:
                    line = input(prompt)
                else:
                    out.write(prompt)
                    out.flush()
                    line = stdin.readline()
                    if not line:
                        break
                    line = line.rstrip("\n")
            except EOFError:
                break
            except KeyboardInterrupt:
                buffer = ""
                out.write("\n")
                continue
            buffer += line + "\n"
            if not is_complete(buffer):
                continue
            text, buffer = buffer, ""
            command = text.strip().rstrip(";").strip().upper()
            if command in ("QUIT", "EXIT"):
                break
            if command == "HELP":
                out.write(_HELP + "\n\n")
                continue
            if command == "CLEAR":
                out.write("\033[2J\033[H")
                continue
            if session is None:
                session = _session(defines)
            try:
                for statement in split_statements(text):
                    _report(statement, session.execute_statement(statement), out)
            except (SqlError, ValueError, RuntimeError) as exc:
                out.write(f"[ERROR] {exc}\n\n")
            out.flush()
    finally:
        if use_readline:
            try:
                import readline

                readline.write_history_file(str(HISTORY_FILE))
            except OSError:
                pass
        if session is not None:
            for client in session.jobs:
                if client.get_job_status() not in TERMINAL_STATES:
                    client.cancel()
    out.write("Goodbye!\n")
    return 0
