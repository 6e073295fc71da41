"""The interactive SQL client: multi-line statements, errors that do not end the session, client commands."""

import io

from kindling.sql.client import interactive


def test_interactive_client_reads_multi_line_statements_and_keeps_going_after_errors():
    script = "\n".join([
        "HELP;",
        "CREATE TABLE t (",
        "  a INT,",
        "  b STRING",
        ") WITH ('connector' = 'blackhole');",
        "CREATE TABLE t (a INT) WITH ('connector' = 'blackhole');",
        "SHOW TABLES;",
        "DESCRIBE t;",
        "DROP TABLE t; SHOW TABLES;",
        "QUIT;",
        "SHOW TABLES;",
    ])
    out = io.StringIO()
    assert interactive({}, stdin=io.StringIO(script + "\n"), out=out) == 0
    text = out.getvalue()
    assert "Client commands" in text
    assert text.count("[INFO] Execute statement succeeded.") == 2  # CREATE and DROP
    assert "[ERROR] SQL line 1: table or view 't' already exists" in text
    assert "| t          |" in text and "1 row in set" in text
    assert "| b    | STRING | TRUE |" in text
    assert "Empty set" in text
    assert text.rstrip().endswith("Goodbye!")
    assert text.count("Flink SQL> ") == 7  # nothing after QUIT is read
    assert "Flink SQL> > > > [INFO]" in text  # continuation prompts of the multi-line CREATE
