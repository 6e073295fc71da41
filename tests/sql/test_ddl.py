"""Parsing every statement form, and the error each malformed one gets."""

import json
import re
from dataclasses import replace

import pytest
from pyspark.sql.types import DecimalType

from kindling.connectors.base import TABLE_METADATA, TABLE_PARTITION_KEYS, TABLE_PRIMARY_KEY, TABLE_ROWTIME, TABLE_ROWTIME_MILLIS
from kindling.sql import ddl
from kindling.sql.catalog import Catalog, describe_rows
from kindling.sql.ddl import parse_statement
from kindling.sql.errors import SqlError
from kindling.sql.statements import split_statements

TRANSACTIONS = """CREATE TEMPORARY TABLE IF NOT EXISTS transactions (
    account_id  BIGINT,
    amount      DECIMAL(10, 2) COMMENT 'in cents',
    transaction_time TIMESTAMP(3),
    hour_of_day AS EXTRACT(HOUR FROM transaction_time),
    kafka_ts    TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,
    `partition` INT METADATA VIRTUAL,
    WATERMARK FOR transaction_time AS transaction_time - INTERVAL '5' SECOND,
    PRIMARY KEY (account_id) NOT ENFORCED
) COMMENT 'payments' PARTITIONED BY (account_id) WITH (
    'connector' = 'kafka',
    'topic'     = 'transactions',
    'properties.bootstrap.servers' = 'localhost:9092',
    'format'    = 'csv'
)"""


def test_create_table_with_every_column_kind():
    table = parse_statement(TRANSACTIONS)
    assert isinstance(table, ddl.CreateTable)
    assert table.temporary and table.if_not_exists and table.name == "transactions"
    kinds = [(c.name, c.kind) for c in table.columns]
    assert kinds == [("account_id", "physical"), ("amount", "physical"), ("transaction_time", "physical"),
                     ("hour_of_day", "computed"), ("kafka_ts", "metadata"), ("partition", "metadata")]
    assert table.columns[1].type.spark == DecimalType(10, 2) and table.columns[1].comment == "in cents"
    assert table.columns[3].expression == "EXTRACT(HOUR FROM transaction_time)"
    assert table.columns[4].metadata_key == "timestamp" and table.columns[4].virtual
    assert table.columns[5].metadata_key is None and table.columns[5].line == 7
    assert table.watermark.column == "transaction_time"
    assert table.watermark.expression == "transaction_time - INTERVAL '5' SECOND"
    assert table.primary_key == ["account_id"] and table.partition_keys == ["account_id"]
    assert table.options["format"] == "csv" and table.comment == "payments"


def test_catalog_passes_table_facts_to_the_connector():
    catalog = Catalog()
    catalog.create_table(parse_statement(TRANSACTIONS))
    table = catalog.table("transactions")
    options = table.connector_options()
    assert "connector" not in options and options["topic"] == "transactions"
    assert options[TABLE_PRIMARY_KEY] == "account_id" and options[TABLE_PARTITION_KEYS] == "account_id"
    assert json.loads(options[TABLE_METADATA]) == [["kafka_ts", "timestamp", True], ["partition", "partition", True]]
    assert table.source_schema().fieldNames() == ["account_id", "amount", "transaction_time", "kafka_ts", "partition"]
    assert table.sink_schema().fieldNames() == ["account_id", "amount", "transaction_time"]
    with pytest.raises(SqlError, match="kindling does not derive Flink's type of computed column 'hour_of_day'"):
        describe_rows(table)  # EXTRACT's: Flink's DESCRIBE says BIGINT
    rows = describe_rows(replace(table, columns=[c for c in table.columns if c.kind != "computed"]))
    assert rows[0][3] == "PRI(account_id)" and rows[2][5] == "`transaction_time` - INTERVAL '5' SECOND"  # as Flink prints it
    assert rows[3][4] == "METADATA FROM 'timestamp' VIRTUAL" and rows[4][4] == "METADATA VIRTUAL"
    assert options[TABLE_ROWTIME] == "transaction_time"


def test_temporary_and_permanent_objects_are_listed_and_dropped_as_flink_does():
    """PyFlink 2.3's answers to the same statements (listTables/listTemporaryTables/listTemporaryViews, and its
    ValidationException messages)."""
    catalog = Catalog()
    for statement in ["CREATE TEMPORARY TABLE ta (x INT) WITH ('connector' = 'datagen')",
                      "CREATE TABLE tb (x INT) WITH ('connector' = 'datagen')",
                      "CREATE TEMPORARY VIEW va AS SELECT * FROM ta", "CREATE VIEW vb AS SELECT * FROM tb"]:
        parsed = parse_statement(statement)
        (catalog.create_table if isinstance(parsed, ddl.CreateTable) else catalog.create_view)(parsed)
    catalog.put_query_view("vx", "SELECT * FROM ta")  # create_temporary_view
    assert catalog.tables() == ["ta", "tb", "va", "vb", "vx"] and catalog.views() == ["va", "vb", "vx"]
    assert catalog.temporary_tables() == ["ta", "va", "vx"] and catalog.temporary_views() == ["va", "vx"]

    def drop(statement: str) -> bool:
        parsed = parse_statement(statement)
        return catalog.drop(parsed.kind, parsed.name, parsed.if_exists, parsed.line, parsed.temporary)

    for statement, message in [
        ("DROP VIEW vx", "Temporary view with identifier '`default_catalog`.`default_database`.`vx`' exists. Drop it first "
                         "before removing the permanent view."),
        ("DROP TABLE IF EXISTS ta", "Temporary table with identifier '`default_catalog`.`default_database`.`ta`' exists."),
        ("DROP TEMPORARY TABLE tb", "Temporary table or view with identifier 'default_catalog.default_database.tb' does not exist."),
        ("DROP TEMPORARY VIEW vb", "Temporary table or view with identifier 'default_catalog.default_database.vb' does not exist."),
        ("DROP TEMPORARY TABLE vx", "Temporary table or view with identifier 'default_catalog.default_database.vx' does not exist."),
    ]:
        with pytest.raises(SqlError, match=re.escape(message)):
            drop(statement)
    assert not drop("DROP TEMPORARY TABLE IF EXISTS tb") and not drop("DROP TEMPORARY VIEW IF EXISTS ta")
    assert drop("DROP TEMPORARY VIEW va") and catalog.temporary_tables() == ["ta", "vx"]
    assert catalog.tables() == ["ta", "tb", "vb", "vx"]
    with pytest.raises(SqlError, match="cannot hide the permanent table 'tb'"):  # Flink would let it shadow tb
        catalog.create_table(parse_statement("CREATE TEMPORARY TABLE tb (x INT) WITH ('connector' = 'datagen')"))
    assert drop("DROP VIEW vb") and drop("DROP TEMPORARY TABLE ta") and catalog.temporary_tables() == ["vx"]


def test_describe_prints_types_as_flink_does():
    catalog = Catalog()
    catalog.create_table(parse_statement("CREATE TABLE t (a VARCHAR, b CHAR, c STRING, d VARCHAR(5)) WITH ('connector' = 'datagen')"))
    # PyFlink 2.3's DESCRIBE of this table: STRING, CHAR(1), STRING, VARCHAR(5)
    assert [row[1] for row in describe_rows(catalog.table("t"))] == ["STRING", "CHAR(1)", "STRING", "VARCHAR(5)"]


@pytest.mark.parametrize("columns, rowtime, millis", [
    ("ts TIMESTAMP(3)", "ts", None),
    ("ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'", "ts", None),
    ("ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3)", "ms", None),
    ("`Ms` BIGINT, ts AS to_timestamp_ltz(`Ms`, 3)", "Ms", None),
    ("s STRING, ts AS TO_TIMESTAMP(s)", "s", None),
    ("s STRING, ts AS CAST(s AS TIMESTAMP(3))", "s", None),
    ("sec BIGINT, ts AS TO_TIMESTAMP_LTZ(sec, 0)", "sec", "1000 0"),
    ("sec INT, ts AS TO_TIMESTAMP(FROM_UNIXTIME(sec))", "sec", "1000 0"),
    ("ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3) + INTERVAL '1' HOUR", "ms", "1 3600000"),
    ("t TIMESTAMP(3), ts AS t - INTERVAL '1.5' SECOND + INTERVAL '2' MINUTE", "t", "1 118500"),
    ("k TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', ts AS k - INTERVAL '5' SECOND", "k", "1 -5000"),
    ("ms BIGINT, ts AS CAST(ms AS TIMESTAMP(3))", None, None),  # Flink cannot cast a BIGINT to TIMESTAMP
    ("s STRING, ts AS TO_TIMESTAMP_LTZ(s, 3)", None, None),
    ("ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms * 1000, 3)", None, None),  # arithmetic on the number: not traced
    ("ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 6)", None, None),
    ("s STRING, ts AS TO_TIMESTAMP(s, 'yyyyMMddHHmmss')", None, None),  # a pattern the source cannot parse
    ("ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3) + INTERVAL '1-2' YEAR TO MONTH", None, None),
])
def test_the_source_learns_which_stored_column_holds_the_rowtime_and_how_to_convert_it(columns, rowtime, millis):
    catalog = Catalog()
    catalog.create_table(parse_statement(
        f"CREATE TABLE t ({columns}, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'kafka')"))
    options = catalog.table("t").connector_options()
    assert (options.get(TABLE_ROWTIME), options.get(TABLE_ROWTIME_MILLIS)) == (rowtime, millis)


def test_column_level_primary_key_and_constraint_name():
    table = parse_statement("CREATE TABLE t (id BIGINT PRIMARY KEY NOT ENFORCED, v STRING) WITH ('connector' = 'print')")
    assert table.primary_key == ["id"]
    table = parse_statement("CREATE TABLE t (id BIGINT, CONSTRAINT pk PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'print')")
    assert table.primary_key == ["id"]


def test_like_merges_with_flinks_defaults():
    catalog = Catalog()
    catalog.create_table(parse_statement(TRANSACTIONS))
    catalog.create_table(parse_statement("CREATE TABLE copy WITH ('topic' = 'other') LIKE transactions"))
    copy = catalog.table("copy")
    assert [c.name for c in copy.columns] == [c.name for c in catalog.table("transactions").columns]
    assert copy.options["topic"] == "other" and copy.options["connector"] == "kafka"
    assert copy.watermark is not None and copy.primary_key == ["account_id"]
    catalog.create_table(parse_statement("CREATE TABLE bare WITH ('connector' = 'print') LIKE transactions (EXCLUDING ALL)"))
    bare = catalog.table("bare")
    assert [c.name for c in bare.columns] == ["account_id", "amount", "transaction_time"]
    assert bare.options == {"connector": "print"} and bare.watermark is None and not bare.primary_key


def test_like_conflicts_are_errors():
    catalog = Catalog()
    catalog.create_table(parse_statement(TRANSACTIONS))
    with pytest.raises(SqlError, match="column 'amount' is defined both"):
        catalog.create_table(parse_statement("CREATE TABLE c (amount INT) WITH ('connector' = 'print') LIKE transactions"))
    with pytest.raises(SqlError, match="option 'topic' is set both"):
        catalog.create_table(parse_statement("CREATE TABLE c WITH ('topic' = 'x') LIKE transactions (INCLUDING OPTIONS)"))
    with pytest.raises(SqlError, match="table or view 'nope' does not exist"):
        catalog.create_table(parse_statement("CREATE TABLE c WITH ('connector' = 'print') LIKE nope"))


def test_other_statements():
    assert parse_statement("CREATE VIEW v (a, b) AS SELECT x, y FROM t") == ddl.CreateView("v", "SELECT x, y FROM t", 1, ["a", "b"], line=1)
    view = parse_statement("CREATE TEMPORARY VIEW IF NOT EXISTS v AS\nSELECT 1 FROM t")
    assert view.temporary and view.if_not_exists and view.query_line == 2
    assert parse_statement("DROP TABLE IF EXISTS t") == ddl.Drop("TABLE", "t", True, 1)
    assert parse_statement("DROP TEMPORARY VIEW v") == ddl.Drop("VIEW", "v", False, 1, temporary=True)
    assert parse_statement("SET 'execution.checkpointing.interval' = '10 s'") == ddl.SetOption("execution.checkpointing.interval", "10 s", 1)
    assert parse_statement("SET execution.runtime-mode = streaming") == ddl.SetOption("execution.runtime-mode", "streaming", 1)
    assert parse_statement("SET") == ddl.SetOption(None, None, 1)
    assert parse_statement("RESET 'pipeline.name'") == ddl.ResetOption("pipeline.name", 1)
    assert parse_statement("RESET") == ddl.ResetOption(None, 1)
    insert = parse_statement("INSERT INTO sink (a, b)\nSELECT x, y FROM t")
    assert insert == ddl.Insert("sink", "SELECT x, y FROM t", 2, ["a", "b"], line=1)
    assert parse_statement("INSERT INTO sink (SELECT 1 FROM t)").query == "(SELECT 1 FROM t)"
    assert parse_statement("EXECUTE INSERT INTO s SELECT 1 FROM t").table == "s"
    assert isinstance(parse_statement("SELECT * FROM t"), ddl.Query)
    assert isinstance(parse_statement("WITH a AS (SELECT 1) SELECT * FROM a"), ddl.Query)
    explain = parse_statement("EXPLAIN PLAN FOR SELECT * FROM t")
    assert isinstance(explain, ddl.Explain) and isinstance(explain.statement, ddl.Query)
    assert isinstance(parse_statement("EXPLAIN CHANGELOG_MODE INSERT INTO s SELECT * FROM t").statement, ddl.Insert)
    assert parse_statement("SHOW TABLES") == ddl.Show("TABLES", 1)
    assert parse_statement("SHOW USER FUNCTIONS") == ddl.Show("FUNCTIONS", 1, user=True)
    assert parse_statement("SHOW FUNCTIONS") == ddl.Show("FUNCTIONS", 1, user=False)
    assert parse_statement("DESCRIBE default_catalog.default_database.t") == ddl.Describe("t", 1)
    assert parse_statement("DESC t") == ddl.Describe("t", 1)
    function = parse_statement("CREATE TEMPORARY FUNCTION f AS 'mod.fn' LANGUAGE PYTHON")
    assert function == ddl.CreateFunction("f", "mod.fn", "PYTHON", True, False, 1)
    assert isinstance(parse_statement("BEGIN STATEMENT SET"), ddl.BeginStatementSet)
    assert isinstance(parse_statement("END"), ddl.EndStatementSet)


def test_statement_set_keeps_lines_of_its_inserts():
    (statement,) = split_statements("\n\nEXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT * FROM t;\n  INSERT INTO b SELECT * FROM t;\nEND;")
    parsed = parse_statement(statement)
    assert isinstance(parsed, ddl.StatementSet) and parsed.line == 3
    assert [(i.table, i.line) for i in parsed.inserts] == [("a", 4), ("b", 5)]


@pytest.mark.parametrize("text, message", [
    ("CREATE TABLE t (a INT) WITH ('connector' = 'print'", r"line 1: .*expected ',' or '\)'|ends where"),
    ("CREATE TABLE t (a) WITH ('connector' = 'print')", "column 'a' has no type"),
    ("CREATE TABLE t (a INT, a STRING) WITH ('connector' = 'print')", "declares column 'a' twice"),
    ("CREATE TABLE t (a INT)", r"has no WITH \('connector'"),
    ("CREATE TABLE t (a INT, PRIMARY KEY (a)) WITH ('connector' = 'print')", "must be declared NOT ENFORCED"),
    ("CREATE TABLE t (a INT,\n WATERMARK FOR a) WITH ('connector' = 'print')", "line 2: .*WATERMARK: expected AS"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'print', 'connector' = 'x')", "'connector' is given twice"),
    ("CREATE TABLE t (a INT) WITH (connector = 'print')", "expected a quoted string"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'print') LIKE s (INCLUDING NOTHING)", "is not a LIKE option"),
    ("CREATE TABLE t (a INT METADATA FROM timestamp) WITH ('connector' = 'kafka')", "expected a quoted string"),
    ("CREATE OR REPLACE TABLE t (a INT) WITH ('connector' = 'print')", "CREATE OR REPLACE is not supported"),
    ("CREATE FUNCTION f AS 'com.Example'", "kindling runs Python functions only"),
    ("CREATE TEMPORARY FUNCTION f AS 'nodots' LANGUAGE PYTHON", "does not name module.function"),
    ("DROP INDEX i", "expected TABLE, VIEW or FUNCTION"),
    ("INSERT t SELECT 1", "expected INTO"),
    ("INSERT INTO t", "has no query"),
    ("SHOW DATABASES", "SHOW DATABASES is not supported"),
    ("USE CATALOG c", "'USE' statements are not supported"),
    ("FROBNICATE", "cannot parse a statement starting with 'FROBNICATE'"),
    ("EXPLAIN DROP TABLE t", "EXPLAIN takes a query"),
    ("CREATE VIEW v AS", "has no query|ends where"),
])
def test_malformed_statements_name_what_is_wrong(text, message):
    with pytest.raises(SqlError, match=message) as error:
        parse_statement(text)
    assert error.value.line is not None
    assert "line" in str(error.value)


def test_errors_point_at_the_line_in_the_script():
    script = "SELECT 1;\n\nCREATE TABLE t (\n  a INT,\n  b STRNG\n) WITH ('connector' = 'print');"
    statement = split_statements(script)[1]
    with pytest.raises(SqlError, match=r"line 5: unknown data type 'STRNG'; did you mean STRING\?"):
        parse_statement(statement)


def test_catalog_errors():
    catalog = Catalog()
    catalog.create_table(parse_statement("CREATE TABLE Orders (a INT) WITH ('connector' = 'print')"))
    with pytest.raises(SqlError, match="already exists"):
        catalog.create_table(parse_statement("CREATE TABLE Orders (a INT) WITH ('connector' = 'print')"))
    assert not catalog.create_table(parse_statement("CREATE TABLE IF NOT EXISTS Orders (a INT) WITH ('connector' = 'print')"))
    with pytest.raises(SqlError, match="did you mean 'Orders'"):
        catalog.get("orders")
    with pytest.raises(SqlError, match="is a table, not a view"):
        catalog.drop("VIEW", "Orders", False, 1)
    assert not catalog.drop("TABLE", "missing", True, 1)
    assert catalog.drop("TABLE", "Orders", False, 1) and "Orders" not in catalog
    with pytest.raises(SqlError, match="primary key column 'b' is not a column"):
        catalog.create_table(parse_statement("CREATE TABLE t (a INT, PRIMARY KEY (b) NOT ENFORCED) WITH ('connector' = 'print')"))
    with pytest.raises(SqlError, match=r"WATERMARK FOR 'tss': no such column in 't'; did you mean 'ts'"):
        catalog.create_table(parse_statement("CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR tss AS tss) WITH ('connector' = 'print')"))


# Flink's refusals, recorded from PyFlink 2.3 (CREATE TABLE in a streaming TableEnvironment): a watermark needs a
# TIMESTAMP(p) or TIMESTAMP_LTZ(p) time field with p from 0 to 3, whatever the connector.
_NOT_A_TIME_FIELD = ("Invalid data type of time field for watermark definition. The field must be of type TIMESTAMP(p) or "
                     "TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the time field type is ")


@pytest.mark.parametrize("columns, printed", [
    ("ts BIGINT, WATERMARK FOR ts AS ts - 5", "BIGINT"),
    ("s STRING, WATERMARK FOR s AS s", "STRING"),
    ("ts TIMESTAMP(6), WATERMARK FOR ts AS ts", "TIMESTAMP(6)"),
    ("ts TIMESTAMP, WATERMARK FOR ts AS ts", "TIMESTAMP(6)"),
    ("ts BIGINT NOT NULL, WATERMARK FOR ts AS ts", "BIGINT NOT NULL"),
    ("s STRING, ts AS CAST(s AS TIMESTAMP(6)), WATERMARK FOR ts AS ts", "TIMESTAMP(6)"),
])
def test_a_watermark_needs_a_time_field_of_millisecond_precision(columns, printed):
    catalog = Catalog()
    with pytest.raises(SqlError, match=re.escape(_NOT_A_TIME_FIELD + printed) + r"(\.|$)"):
        catalog.create_table(parse_statement(f"CREATE TABLE t ({columns}) WITH ('connector' = 'datagen')"))
    for accepted in ("ts TIMESTAMP(3), WATERMARK FOR ts AS ts", "ts TIMESTAMP_LTZ(0), WATERMARK FOR ts AS ts",
                     "ts TIMESTAMP(3) WITH LOCAL TIME ZONE, WATERMARK FOR ts AS ts",
                     "n BIGINT, ts AS TO_TIMESTAMP_LTZ(n, 3), WATERMARK FOR ts AS ts"):
        catalog.create_table(parse_statement(f"CREATE TABLE ok ({accepted}) WITH ('connector' = 'datagen')"))
        catalog.drop("TABLE", "ok", False, 1)


@pytest.mark.parametrize("expression, columns", [
    ("CASE WHEN event_type = 0 THEN person.`dateTime` WHEN event_type = 1 THEN auction.`dateTime` ELSE bid.`dateTime` END",
     [("person", "dateTime"), ("auction", "dateTime"), ("bid", "dateTime")]),
    ("CASE k WHEN 1 THEN a WHEN 2 THEN b END", [("a",), ("b",)]),
    ("r.ts", [("r", "ts")]),
    ("CASE WHEN k = 0 THEN ts + INTERVAL '1' SECOND ELSE ts END", None),
    ("CASE WHEN k = 0 THEN (CASE WHEN j = 0 THEN a ELSE b END) ELSE c END", None),
    ("CAST(s AS TIMESTAMP(3))", None),
    ("CASE WHEN k = 0 THEN a", None),
])
def test_the_columns_a_computed_time_field_comes_from(expression, columns):
    from kindling.sql.column_types import result_columns

    assert result_columns(expression) == columns


def test_a_computed_time_field_has_its_columns_type_only_when_they_share_one():
    from pyspark.sql.types import LongType, StructField, StructType, TimestampType

    from kindling.sql.column_types import shared_type

    row = StructType([StructField("t", TimestampType()), StructField("n", LongType())])
    schema = StructType([StructField("a", row), StructField("b", row), StructField("ts", TimestampType())])
    assert shared_type(schema, [("a", "t"), ("b", "t"), ("ts",)]) == TimestampType()
    assert shared_type(schema, [("a", "t"), ("b", "n")]) is None  # two types
    assert shared_type(schema, [("a", "x")]) is None and shared_type(schema, [("ts", "t")]) is None  # no such field
    assert shared_type(schema, None) is None and shared_type(schema, []) is None
