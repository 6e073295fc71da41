"""Splitting scripts into statements: comments, quotes, statement sets, line numbers."""

import pytest

from kindling.sql.errors import SqlError
from kindling.sql.statements import is_complete, split_statements


def test_splits_on_semicolons_outside_strings_identifiers_and_comments():
    script = """-- a comment; not a statement end
CREATE TABLE `we;ird` (a STRING) WITH ('connector' = 'print', 'x' = 'a;b');
/* block; comment */ SELECT 'it''s; fine' FROM t;
SELECT 2"""
    statements = split_statements(script)
    assert [s.line for s in statements] == [2, 3, 4]
    assert statements[0].text.startswith("CREATE TABLE `we;ird`")
    assert statements[0].text.endswith("'a;b')")
    assert statements[1].text == "SELECT 'it''s; fine' FROM t"
    assert statements[2].text == "SELECT 2"


def test_statement_set_is_one_statement():
    script = "EXECUTE STATEMENT SET\nBEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;\nSELECT 3;"
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[0].text.endswith("END")
    assert statements[1].line == 6


def test_unterminated_statement_set_names_its_line():
    with pytest.raises(SqlError, match=r"line 2: .*no matching END"):
        split_statements("SELECT 1;\nEXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;")


def test_unterminated_string_and_comment_are_errors_with_lines():
    with pytest.raises(SqlError, match=r"line 2: unterminated string literal"):
        split_statements("SELECT 1;\nSELECT 'oops;")
    with pytest.raises(SqlError, match=r"line 1: unterminated comment"):
        split_statements("/* never closed")


def test_require_terminator():
    with pytest.raises(SqlError, match="does not end with ';'"):
        split_statements("SELECT 1", require_terminator=True)


def test_is_complete_for_interactive_input():
    assert not is_complete("SELECT 1")
    assert is_complete("SELECT 1;")
    assert not is_complete("SELECT 'a;")
    assert not is_complete("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;")
    assert is_complete("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;")


def test_a_statement_set_may_end_without_a_semicolon_as_the_last_statement():
    (statement,) = split_statements("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2; END")
    assert str(statement).endswith("END")
    with pytest.raises(SqlError, match="no matching END"):  # the SQL client's scripts need the ';'
        split_statements("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END", require_terminator=True)
