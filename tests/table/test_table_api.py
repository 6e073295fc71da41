"""The Table API on the SQL planner: each operation gives what the same query in SQL gives."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kindling.sql import SqlError
from kindling.table import DataTypes, Schema, StreamTableEnvironment, TableDescriptor, udf
from kindling.table.expressions import call_sql, col, lit, row_interval
from kindling.table.window import Over, Slide, Tumble

pytestmark = pytest.mark.integration

ORDERS = [(1, "apple", 3, "2024-01-01 00:00:01"), (2, "pear", 5, "2024-01-01 00:00:04"), (3, "apple", 4, "2024-01-01 00:00:07"),
          (4, "fig", 1, "2024-01-01 00:00:12"), (5, "pear", 2, "2024-01-01 00:00:03")]


@pytest.fixture
def t_env(env):
    return StreamTableEnvironment.create(env)


def _rows(table) -> list[tuple]:
    return sorted(tuple(r) for r in table.execute().final_rows(timeout=600))


def test_unaliased_fields_are_named_as_flinks_table_api_names_them(t_env):
    t = t_env.from_elements([("a", 1), ("b", 2)], ["k", "n"])
    # recorded from PyFlink 2.3 (get_schema().get_field_names()): a projection's expression is _c<position in the row>,
    # a grouped select's bare aggregate EXPR$<aggregate calls before it>
    cases = [
        (t.select(col("n") + 1, col("k"), col("n") * 2), ["_c0", "k", "_c2"]),
        (t.group_by(col("k")).select(col("k"), col("n").sum, col("n").count), ["k", "EXPR$0", "EXPR$1"]),
        (t.group_by(col("k")).select(col("n").sum, col("k")), ["EXPR$0", "k"]),
        (t.group_by(col("k")).select(col("k").upper_case, col("n").sum + 1, col("n").max.alias("m"), col("n").min),
         ["_c0", "_c1", "m", "EXPR$2"]),
        (t.group_by(col("k")).select(col("k"), lit(1), col("n").sum), ["k", "_c1", "EXPR$0"]),
        (t.add_columns(col("n") * 2, col("k").upper_case), ["k", "n", "_c2", "_c3"]),
        (t.add_columns(col("n").alias("x"), col("n") + 1), ["k", "n", "x", "_c3"]),
        (t.add_or_replace_columns(col("n") * 2), ["k", "n", "_c2"]),
        # a column's CAST is '<column>-<type>'; a CAST of anything else, or of a CAST, is _c<position>
        (t.select(col("k"), col("n").cast(DataTypes.STRING())), ["k", "n-STRING"]),
        (t.select(col("n").cast(DataTypes.DECIMAL(10, 2))), ["n-DECIMAL(10, 2)"]),
        (t.select(col("n").cast(DataTypes.BIGINT()), col("n").cast(DataTypes.DOUBLE())), ["n-BIGINT", "n-DOUBLE"]),
        (t.select((col("n") + 1).cast(DataTypes.STRING())), ["_c0"]),
        (t.select(col("n").cast(DataTypes.BIGINT()).cast(DataTypes.STRING())), ["_c0"]),
        (t.add_columns(col("n").cast(DataTypes.BIGINT())), ["k", "n", "n-BIGINT"]),
        (t.add_or_replace_columns(col("n").cast(DataTypes.BIGINT())), ["k", "n", "n-BIGINT"]),
        (t.group_by(col("k")).select(col("k"), col("k").cast(DataTypes.STRING())), ["k", "k-STRING"]),
        (t.select(col("n").cast(DataTypes.STRING()).alias("s")), ["s"]),
    ]
    assert [table.get_schema().get_field_names() for table, _ in cases] == [names for _, names in cases]
    widened = t.select(col("k"), col("n").cast(DataTypes.DECIMAL(10, 2))).select(col("n-DECIMAL(10, 2)") * 2)
    assert _rows(widened) == [(Decimal("2.00"),), (Decimal("4.00"),)]


def test_relational_operations(t_env):
    orders = t_env.from_elements([o[:3] for o in ORDERS], ["id", "fruit", "amount"])
    assert orders.get_schema().simpleString() == "struct<id:bigint,fruit:string,amount:bigint>"
    schema = orders.get_schema()  # PyFlink's TableSchema accessors (from_elements infers BIGINT and STRING, as PyFlink)
    assert schema.get_field_names() == ["id", "fruit", "amount"] and schema.get_field_count() == 3
    assert schema.get_field_data_types() == [DataTypes.BIGINT(), DataTypes.STRING(), DataTypes.BIGINT()]
    assert schema.get_field_data_type("fruit") == DataTypes.STRING() and schema.get_field_name(3) is None
    assert orders.get_resolved_schema().get_column_names() == ["id", "fruit", "amount"]
    assert _rows(orders.where(col("amount") > 2).select(col("id"), (col("amount") * 10).alias("x"))) == [(1, 30), (2, 50), (3, 40)]
    assert _rows(orders.filter(col("fruit").in_("fig", "pear")).select(orders.id)) == [(2,), (4,), (5,)]
    renamed = orders.alias("n", "name", "qty").rename_columns(col("qty").alias("quantity")).drop_columns(col("n"))
    assert renamed.get_schema().fieldNames() == ["name", "quantity"]
    assert _rows(orders.add_columns(call_sql("UPPER(fruit)").alias("up")).select(col("up")).distinct()) == [("APPLE",), ("FIG",), ("PEAR",)]
    replaced = orders.add_or_replace_columns((col("amount") * 2).alias("amount"), lit("x").alias("tag"))
    assert replaced.get_schema().fieldNames() == ["id", "fruit", "amount", "tag"]  # a replaced column keeps its place
    assert _rows(replaced.where(col("id") == 1)) == [(1, "apple", 6, "x")]
    totals = orders.group_by(col("fruit")).select(col("fruit"), col("amount").sum.alias("total"), lit(1).count.alias("n"))
    assert _rows(totals) == [("apple", 7, 2), ("fig", 1, 1), ("pear", 7, 2)]
    # the same query in SQL over the table's name: one planner
    assert _rows(t_env.sql_query(f"SELECT fruit, SUM(amount), COUNT(1) FROM {orders} GROUP BY fruit")) == _rows(totals)
    prices = t_env.from_elements([("apple", 2.5), ("pear", 1.0)], ["name", "price"])
    joined = orders.join(prices, col("fruit") == col("name")).select(col("id"), (col("amount") * col("price")).alias("cost"))
    assert _rows(joined) == [(1, 7.5), (2, 5.0), (3, 10.0), (5, 2.0)]
    assert _rows(orders.select(col("id")).union_all(prices.select(lit(0).cast(DataTypes.BIGINT())))) == [(0,), (0,), (1,), (2,), (3,), (4,), (5,)]

    @udf(result_type=DataTypes.STRING())
    def shout(s):
        return s.upper() + "!"

    assert shout("a") == "A!"  # still the Python function when called with values
    assert _rows(orders.where(col("id") == 4).select(shout(col("fruit")))) == [("FIG!",)]


def _timed_orders(t_env, tmp_path, name: str):
    """ORDERS as a CSV table with event time ``ts`` (watermark 1 s behind)."""
    data = tmp_path / name
    data.mkdir()
    (data / "part-0.csv").write_text("".join(f"{i},{f},{a},{ts}\n" for i, f, a, ts in ORDERS))
    t_env.create_temporary_table(name, TableDescriptor.for_connector("filesystem")
                                 .schema(Schema.new_builder().column("id", DataTypes.BIGINT()).column("fruit", DataTypes.STRING())
                                         .column("amount", DataTypes.INT()).column("ts", DataTypes.TIMESTAMP(3))
                                         .watermark("ts", "ts - INTERVAL '1' SECOND").build())
                                 .option("path", str(data)).format("csv").build())
    return t_env.from_path(name)


def test_group_windows_give_the_sql_group_window_result(t_env, tmp_path):
    orders = _timed_orders(t_env, tmp_path, "orders")
    tumbled = (orders.window(Tumble.over(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("fruit"), col("w"))
               .select(col("fruit"), col("amount").sum.alias("total"), col("w").start.alias("s"), col("w").end.alias("e")))
    sql = t_env.sql_query("SELECT fruit, SUM(amount) AS total, TUMBLE_START(ts, INTERVAL '5' SECOND) AS s, "
                          "TUMBLE_END(ts, INTERVAL '5' SECOND) AS e FROM orders GROUP BY fruit, TUMBLE(ts, INTERVAL '5' SECOND)")
    got = _rows(tumbled)
    assert got == _rows(sql)
    assert [(f, t) for f, t, _, _ in got] == [("apple", 3), ("apple", 4), ("fig", 1), ("pear", 7)]
    slid = (orders.window(Slide.over(lit(10).seconds).every(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("w"))
            .select(col("w").end.alias("e"), col("amount").sum.alias("total")))
    assert [t for _, t in _rows(slid)] == [10, 14, 5, 1]
    # OVER windows: the Table API's over_window is the SQL WINDOW clause, on the same operator
    over = (orders.over_window(Over.partition_by(col("fruit")).order_by(col("ts")).preceding(row_interval(1)).alias("w"))
            .select(col("id"), col("amount").sum.over(col("w")).alias("s"), col("amount").max.over(col("w")).alias("m")))
    got = _rows(over)
    assert got == _rows(t_env.sql_query("SELECT id, SUM(amount) OVER w AS s, MAX(amount) OVER w AS m FROM orders "
                                        "WINDOW w AS (PARTITION BY fruit ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"))
    assert [r for r in got if r[0] in (1, 3, 4)] == [(1, 3, 3), (3, 7, 4), (4, 1, 1)]


def test_statement_sets_and_descriptors(t_env, tmp_path):
    orders = t_env.from_elements([o[:3] for o in ORDERS], ["id", "fruit", "amount"])
    schema = Schema.new_builder().column("id", DataTypes.BIGINT()).column("fruit", DataTypes.STRING()).build()
    for name in ("big", "small"):
        t_env.create_temporary_table(name, TableDescriptor.for_connector("filesystem").schema(schema)
                                     .option("path", str(tmp_path / name)).format("csv").build())
    statements = t_env.create_statement_set()
    statements.add_insert("big", orders.where(col("amount") >= 3).select(col("id"), col("fruit")))
    statements.add_insert_sql(f"INSERT INTO small SELECT id, fruit FROM {orders} WHERE amount < 3")
    assert statements.execute().wait(timeout=600) == "FINISHED"
    assert _rows(t_env.from_path("big")) == [(1, "apple"), (2, "pear"), (3, "apple")]
    assert _rows(t_env.from_path("small")) == [(4, "fig"), (5, "pear")]
    assert "big" in t_env.list_tables() and not any(n.startswith("UnnamedTable") for n in t_env.list_views())
    # a pipeline into a table only a descriptor names (no schema: the table's columns), alone and in a statement set
    csv = TableDescriptor.for_connector("filesystem").option("path", str(tmp_path / "described")).format("csv").build()
    assert orders.where(col("id") == 1).select(col("id"), col("fruit")).insert_into(csv).execute().wait(timeout=600) == "FINISHED"
    pipeline = orders.where(col("id") == 2).select(col("id"), col("fruit")).insert_into("small")
    assert "small" in pipeline.explain()
    assert str(pipeline.get_sink_identifier()) == "`default_catalog`.`default_database`.`small`"  # PyFlink 2.3's
    assert orders.insert_into(csv).get_sink_identifier() is None  # an anonymous sink, as in PyFlink
    assert t_env.create_statement_set().add(pipeline).execute().wait(timeout=600) == "FINISHED"
    assert _rows(t_env.from_path("small")) == [(2, "pear"), (4, "fig"), (5, "pear")]
    assert not any(n.startswith("__kindling_anonymous") for n in t_env.list_tables())
    t_env.create_temporary_table("described", TableDescriptor.for_connector("filesystem").schema(schema)
                                 .option("path", str(tmp_path / "described")).format("csv").build())
    assert _rows(t_env.from_path("described")) == [(1, "apple")]
    assert _rows(t_env.from_descriptor(TableDescriptor.for_connector("filesystem").schema(schema)
                                       .option("path", str(tmp_path / "described")).format("csv").build())) == [(1, "apple")]
    assert "described" in t_env.explain_sql("SELECT fruit FROM described")
    t_env.create_view("firsts", t_env.from_path("described"))
    assert "firsts" in t_env.list_views() and "firsts" not in t_env.list_temporary_views()
    assert t_env.drop_view("firsts") and not t_env.drop_view("firsts")
    assert "described" in t_env.list_temporary_tables()
    with pytest.raises(SqlError, match="Temporary table with identifier '`default_catalog`.`default_database`.`described`' exists"):
        t_env.drop_table("described")  # as PyFlink 2.3: a temporary table is dropped with drop_temporary_table
    assert not t_env.drop_temporary_view("described") and t_env.drop_temporary_table("described")
    assert "described" not in t_env.list_tables()
    t_env.create_temporary_function("shout", udf(lambda s: s.upper(), result_type=DataTypes.STRING()))
    assert "shout" in t_env.list_user_defined_functions()
    assert t_env.drop_temporary_function("shout") and not t_env.drop_function("shout")
    assert (t_env.get_current_catalog(), t_env.get_current_database()) == ("default_catalog", "default_database")
    t_env.use_catalog("default_catalog")
    with pytest.raises(ValueError, match="kindling has one in-memory catalog"):
        t_env.use_catalog("hive")
    with pytest.raises(AttributeError, match="has no column or method 'nope'"):
        getattr(orders, "nope")  # noqa: B009 - the attribute a program would read
    with pytest.raises(TypeError, match="no truth value"):
        bool(col("a") > 1)


def test_pandas_round_trip_keeps_rows_and_names(t_env):
    import pandas as pd

    frame = pd.DataFrame({"k": [3, 1, 2], "v": [0.5, None, 2.25], "s": ["c", "a", "b"]})
    table = t_env.from_pandas(frame)
    assert table.get_schema().simpleString() == "struct<k:bigint,v:double,s:string>"
    back = table.select(col("k"), col("v"), col("s").upper_case).to_pandas()
    assert list(back.columns) == ["k", "v", "_c2"]
    ordered = back.sort_values("k")
    assert ordered["k"].tolist() == [1, 2, 3] and ordered["_c2"].tolist() == ["A", "B", "C"]
    assert pd.isna(ordered["v"].iloc[0]) and ordered["v"].tolist()[1:] == [2.25, 0.5]


def test_table_functions_in_the_table_api_and_in_sql(t_env):
    from kindling.table import udtf

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def split(line):
        for word in (line or "").split():
            yield word, len(word)

    lines = t_env.from_elements([(1, "to be"), (2, ""), (3, "or")], ["id", "line"])
    joined = lines.join_lateral(split(col("line")).alias("word", "length")).select(col("id"), col("word"), col("length"))
    assert _rows(joined) == [(1, "be", 2), (1, "to", 2), (3, "or", 2)]
    outer = lines.left_outer_join_lateral(split(col("line")).alias("word", "length")).select(col("id"), col("word"))
    assert _rows(outer) == sorted([(1, "be"), (1, "to"), (2, None), (3, "or")], key=lambda r: (r[0], r[1] or ""))

    @udtf(result_types=[DataTypes.STRING()])
    def words_of_row(row):
        yield from row[1].split()

    assert _rows(lines.flat_map(words_of_row).alias("word")) == [("be",), ("or",), ("to",)]
    t_env.create_temporary_function("split", split)
    t_env.create_temporary_view("lines", lines)
    sql = t_env.sql_query("SELECT id, w FROM lines LEFT JOIN LATERAL TABLE(split(line)) AS T(w, n) ON TRUE WHERE id < 3")
    assert _rows(sql) == sorted([(1, "be"), (1, "to"), (2, None)], key=lambda r: (r[0], r[1] or ""))


def test_async_and_class_based_scalar_functions(t_env):
    import asyncio

    from kindling.table.udf import AsyncScalarFunction, ScalarFunction

    class Prefix(ScalarFunction):
        def open(self, function_context):
            self.prefix = "id-"

        def eval(self, value):
            return self.prefix + str(value)

    class SlowLookup(AsyncScalarFunction):
        def open(self, function_context):
            self.running = self.most = 0

        async def eval(self, value):
            self.running += 1
            self.most = max(self.most, self.running)
            await asyncio.sleep(0.05)
            self.running -= 1
            return f"{value}:{self.most}"  # how many calls were in flight together

    @udf(result_type=DataTypes.BIGINT())
    async def doubled(value):
        await asyncio.sleep(0.01)
        return value * 2

    t_env.create_temporary_function("prefix", udf(Prefix(), result_type=DataTypes.STRING()))
    t_env.create_temporary_function("slow_lookup", udf(SlowLookup(), result_type=DataTypes.STRING()))
    t_env.create_temporary_function("doubled", doubled)
    numbers = t_env.from_elements([(i,) for i in range(30)], ["n"])
    t_env.create_temporary_view("numbers", numbers)
    rows = _rows(t_env.sql_query("SELECT n, prefix(n), doubled(n), slow_lookup(n) FROM numbers"))
    assert [(n, p, d) for n, p, d, _ in rows] == [(n, f"id-{n}", 2 * n) for n in range(30)]
    in_flight = max(int(s.split(":")[1]) for *_, s in rows)
    assert 1 < in_flight <= 10  # concurrent, within Flink's default of 10 async calls in flight


def test_batch_mode_gives_final_rows_sorted_set_operations_and_outer_joins(env):
    from kindling.table import EnvironmentSettings

    t_env = StreamTableEnvironment.create(env, EnvironmentSettings.in_batch_mode())
    orders = t_env.from_elements([o[:3] for o in ORDERS], ["id", "fruit", "amount"])
    totals = orders.group_by(col("fruit")).select(col("fruit"), col("amount").sum.alias("total"))
    changes = totals.execute().collect_changelog(timeout=300)
    assert sorted((kind, tuple(row)) for kind, row in changes) == [("+I", ("apple", 7)), ("+I", ("fig", 1)), ("+I", ("pear", 7))]
    ranked = orders.order_by(col("amount").desc).offset(1).fetch(2).select(col("id"))
    assert [tuple(r) for r in ranked.execute().final_rows(timeout=300)] == [(3,), (1,)]
    assert [tuple(r) for r in orders.order_by(col("id")).limit(2, 1).select(col("id")).execute().final_rows(timeout=300)] == [(2,), (3,)]
    prices = t_env.from_elements([("apple", 2.5), ("kiwi", 1.0)], ["name", "price"])
    full = orders.full_outer_join(prices, col("fruit") == col("name")).select(col("id"), col("name"))
    outer = [tuple(r) for r in full.execute().final_rows(timeout=300)]
    assert sorted(outer, key=str) == sorted([(1, "apple"), (3, "apple"), (2, None), (4, None), (5, None), (None, "kiwi")], key=str)
    fruits = orders.select(col("fruit"))
    assert _rows(fruits.minus(prices.select(col("name")))) == [("fig",), ("pear",)]
    assert _rows(fruits.intersect_all(prices.select(col("name")))) == [("apple",)]
    assert totals.to_pandas().sort_values("fruit")["total"].tolist() == [7, 1, 7]


def test_aggregate_functions_in_group_by_group_windows_and_batch(t_env, env, tmp_path):
    from kindling.table import AggregateFunction, EnvironmentSettings, udaf

    class WeightedAvg(AggregateFunction):
        def create_accumulator(self):
            return [0, 0]

        def get_value(self, accumulator):
            return accumulator[0] // accumulator[1] if accumulator[1] else None

        def accumulate(self, accumulator, value, weight):
            accumulator[0] += value * weight
            accumulator[1] += weight

        def retract(self, accumulator, value, weight):
            accumulator[0] -= value * weight
            accumulator[1] -= weight

    weighted_avg = udaf(WeightedAvg(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))

    @udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
    def mean(v):
        return v.mean()

    orders = t_env.from_elements([o[:3] for o in ORDERS], ["id", "fruit", "amount"])
    grouped = orders.group_by(col("fruit")).select(col("fruit"), weighted_avg(col("amount"), col("id")).alias("wa"))
    assert _rows(grouped) == [("apple", 3), ("fig", 1), ("pear", 2)]  # apple (3*1 + 4*3) // 4, pear (5*2 + 2*5) // 7
    t_env.create_temporary_system_function("weighted_avg", weighted_avg)  # the same function by name in SQL
    assert _rows(t_env.sql_query(f"SELECT fruit, weighted_avg(amount, id) FROM {orders} GROUP BY fruit")) == _rows(grouped)

    windowed = (_timed_orders(t_env, tmp_path, "timed").window(Tumble.over(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("w"))
                .select(col("w").end.alias("e"), mean(col("amount")).alias("m")))
    assert [m for _, m in _rows(windowed)] == [10 / 3, 4.0, 1.0]  # [0 s, 5 s): 3, 5, 2; [5 s, 10 s): 4; [10 s, 15 s): 1

    batch = StreamTableEnvironment.create(env, EnvironmentSettings.in_batch_mode())
    rows = batch.from_elements([o[:3] for o in ORDERS], ["id", "fruit", "amount"])
    assert _rows(rows.group_by(col("fruit")).select(col("fruit"), mean(col("amount")))) == [("apple", 3.5), ("fig", 1.0), ("pear", 3.5)]


def test_to_changelog_stream_gives_rows_of_each_change_kind(t_env, env):
    from kindling.common import Row, RowKind, Types

    env.execute_sql("CREATE TABLE sales (k STRING, v BIGINT) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    "'data' = '[[\"a\", 1], [\"b\", 2], [\"a\", 3]]')")
    totals = t_env.sql_query("SELECT k, SUM(v) AS s FROM sales GROUP BY k")
    changes = t_env.to_changelog_stream(totals).map(lambda row: (str(row.get_row_kind()), row.k, row[1]),
                                                    output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG()]))
    assert [tuple(r) for r in changes.execute_and_collect()] == [("+I", "a", 1), ("+I", "b", 2), ("-U", "a", 1), ("+U", "a", 4)]
    inserts = t_env.to_changelog_stream(t_env.from_path("sales").where(col("v") > 1))
    kinds = inserts.map(lambda row: str(row.get_row_kind()) + row.k, output_type=Types.STRING()).execute_and_collect()
    assert sorted(kinds) == ["+Ia", "+Ib"]  # a STRING stream's records are strings, as PyFlink collects them
    assert RowKind.from_short_string("-D") is RowKind.DELETE and Row.of_kind(RowKind.DELETE, 1).get_row_kind() is RowKind.DELETE


def test_from_changelog_stream_applies_each_rows_kind(t_env, env):
    """Flink's documentation example, with PyFlink 2.3's answers (recorded from it)."""
    from kindling.common import Row, RowKind, Types

    ds = env.from_collection([Row.of_kind(RowKind.INSERT, "Alice", 12), Row.of_kind(RowKind.INSERT, "Bob", 5),
                              Row.of_kind(RowKind.UPDATE_BEFORE, "Alice", 12), Row.of_kind(RowKind.UPDATE_AFTER, "Alice", 100)],
                             type_info=Types.ROW([Types.STRING(), Types.INT()]))
    assert list(ds.map(lambda r: f"{r.get_row_kind()} {r!r}", output_type=Types.STRING()).execute_and_collect()) == [
        "+I Row(f0='Alice', f1=12)", "+I Row(f0='Bob', f1=5)", "-U Row(f0='Alice', f1=12)", "+U Row(f0='Alice', f1=100)"]
    printed = [ds.get_type().format(r) for r in ds.execute_and_collect()]  # ds.print()'s lines
    assert printed == ["+I[Alice,12]", "+I[Bob,5]", "-U[Alice,12]", "+U[Alice,100]"]
    table = t_env.from_changelog_stream(ds)
    assert table.get_schema().fieldNames() == ["f0", "f1"]
    t_env.create_temporary_view("InputTable", table)
    scores = t_env.execute_sql("SELECT f0 AS name, SUM(f1) AS score FROM InputTable GROUP BY f0")
    assert sorted(tuple(r) for r in scores.final_rows(timeout=300)) == [("Alice", 100), ("Bob", 5)]
    assert _rows(table) == [("Alice", 100), ("Bob", 5)]
    back = t_env.from_changelog_stream(t_env.to_changelog_stream(t_env.sql_query("SELECT f0, SUM(f1) AS s FROM InputTable GROUP BY f0")))
    assert _rows(back) == [("Alice", 100), ("Bob", 5)]
    with pytest.raises(ValueError, match="from_changelog_stream needs Rows that keep their row kinds"):
        t_env.from_changelog_stream(ds.map(lambda r: r, output_type=Types.ROW([Types.STRING(), Types.INT()])))


def test_table_config_and_descriptor_accessors(t_env, tmp_path):
    import datetime as dt

    config = t_env.get_config()
    assert config.get_local_timezone() == "UTC"  # kindling's session default
    config.set_idle_state_retention(dt.timedelta(hours=1))
    assert config.get("table.exec.state.ttl") == "3600000 ms" and config.get_idle_state_retention() == dt.timedelta(hours=1)
    config.add_configuration({"table.exec.state.ttl": "0"})
    assert config.to_map()["table.exec.state.ttl"] == "0" and config.get_idle_state_retention() == dt.timedelta(0)
    descriptor = (TableDescriptor.for_connector("filesystem").schema(Schema.new_builder().column("k", DataTypes.STRING()).build())
                  .option("path", str(tmp_path)).format("csv").partitioned_by("k").comment("keys").build())
    assert descriptor.get_partition_keys() == ["k"] and descriptor.get_comment() == "keys"
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("not-a-package-of-kindling\n")
    with pytest.raises(RuntimeError, match="does not meet: not-a-package-of-kindling"):
        t_env.set_python_requirements(str(requirements))
    with pytest.raises(NotImplementedError, match="add_python_archive"):
        t_env.add_python_archive(str(tmp_path / "venv.zip"))


def test_to_append_and_to_retract_stream_give_pyflinks_records(t_env, env):
    """PyFlink 2.3's answers for the same calls (its records' repr, row kinds and printed lines)."""
    from kindling.common import Types

    env.execute_sql("CREATE TABLE pairs (k STRING, v BIGINT) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    "'data' = '[[\"a\", 1], [\"b\", 2], [\"a\", 3]]')")
    totals = t_env.sql_query("SELECT k, SUM(v) AS s FROM pairs GROUP BY k")
    retract = t_env.to_retract_stream(totals, Types.ROW([Types.STRING(), Types.LONG()]))
    records = list(retract.execute_and_collect())
    assert [repr(r) for r in records] == ["(True, Row(f0='a', f1=1))", "(True, Row(f0='b', f1=2))",
                                          "(False, Row(f0='a', f1=1))", "(True, Row(f0='a', f1=4))"]
    assert [str(r[1].get_row_kind()) for r in records] == ["+I", "+I", "-U", "+U"]
    assert [retract.get_type().format(r) for r in records] == ["(true,+I[a, 1])", "(true,+I[b, 2])", "(false,-U[a, 1])",
                                                               "(true,+U[a, 4])"]  # print(), as Flink's Tuple2
    pairs = t_env.from_path("pairs")
    named = t_env.to_append_stream(pairs, Types.ROW_NAMED(["x", "y"], [Types.STRING(), Types.LONG()]))
    assert list(named.map(lambda r: f"{r!r} {r.x}", output_type=Types.STRING()).execute_and_collect()) == [
        "Row(x='a', y=1) a", "Row(x='b', y=2) b", "Row(x='a', y=3) a"]
    tuples = t_env.to_append_stream(pairs, Types.TUPLE([Types.STRING(), Types.LONG()]))
    assert [repr(r) for r in tuples.execute_and_collect()] == ["('a', 1)", "('b', 2)", "('a', 3)"]
    with pytest.raises(ValueError, match="toAppendStream doesn't support consuming update changes"):
        t_env.to_append_stream(totals, Types.ROW([Types.STRING(), Types.LONG()]))
    with pytest.raises(ValueError, match="the table has 2 columns .* has 3 fields"):
        t_env.to_append_stream(pairs, Types.ROW([Types.STRING(), Types.LONG(), Types.LONG()]))
    for narrower in (Types.STRING(), Types.INT()):  # refused, not cast: a value would change or be lost
        with pytest.raises(ValueError, match="column 'v' is bigint but field f1 .* the types must match"):
            t_env.to_append_stream(pairs, Types.ROW([Types.STRING(), narrower]))


def test_row_based_map_and_aggregate_give_pyflinks_columns(t_env):
    """PyFlink 2.3's answers for the same calls (its basic_operations.py row_operations, run on PyFlink)."""
    import json

    from kindling.common import Row
    from kindling.table import AggregateFunction, udaf

    table = t_env.from_elements([(1, '{"tel": 123, "country": "Germany"}'), (2, '{"tel": 135, "country": "China"}'),
                                 (3, '{"tel": 124, "country": "China"}'), (4, '{"tel": 32, "country": "China"}')], ["id", "data"])

    @udf(result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()), DataTypes.FIELD("country", DataTypes.STRING())]))
    def extract_country(row):  # not called: takes each row as a Row of all columns
        return Row(row.id, json.loads(row.data)["country"])

    mapped = table.map(extract_country)
    assert mapped.get_schema().fieldNames() == ["id", "country"]
    assert _rows(mapped) == [(1, "Germany"), (2, "China"), (3, "China"), (4, "China")]
    square = udf(lambda x: Row(x + 1, x * x), result_type=DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT()),
                                                                       DataTypes.FIELD("b", DataTypes.BIGINT())]))
    assert _rows(table.map(square(col("id"))).alias("x", "y")) == [(2, 1), (3, 4), (4, 9), (5, 16)]
    with pytest.raises(ValueError, match="map takes a scalar function whose result_type is a ROW"):
        table.map(udf(lambda x: x, result_type=DataTypes.BIGINT())(col("id")))

    class CountAndSum(AggregateFunction):
        def create_accumulator(self):
            return Row(0, 0)

        def accumulate(self, accumulator, row):
            accumulator[0] += 1
            accumulator[1] += int(json.loads(row.data)["tel"])

        def get_value(self, accumulator):
            return Row(accumulator[0], accumulator[1])

        def get_result_type(self):
            return DataTypes.ROW([DataTypes.FIELD("cnt", DataTypes.BIGINT()), DataTypes.FIELD("sum", DataTypes.BIGINT())])

    class SumTwo(AggregateFunction):
        def create_accumulator(self):
            return [0, 0]

        def accumulate(self, accumulator, a, b):
            accumulator[0] += a
            accumulator[1] += b

        def get_value(self, accumulator):
            return Row(accumulator[0], accumulator[1])

        def get_result_type(self):
            return DataTypes.ROW([DataTypes.FIELD("s1", DataTypes.BIGINT()), DataTypes.FIELD("s2", DataTypes.BIGINT())])

    countries = table.add_columns(call_sql("JSON_VALUE(data, '$.country')").alias("country"))
    counted = countries.group_by(col("country")).aggregate(udaf(CountAndSum()).alias("cnt", "sum"))
    assert _rows(counted.select(col("country"), col("cnt"), col("sum"))) == [("China", 3, 291), ("Germany", 1, 123)]
    summed = countries.group_by(col("country")).aggregate(udaf(SumTwo())(col("id"), col("id") * 2)).select(col("*"))
    assert summed.get_schema().fieldNames() == ["country", "TMP_0$s1", "TMP_0$s2"]  # Flink's names without aliases
    assert _rows(summed) == [("China", 9, 18), ("Germany", 1, 2)]
    assert _rows(table.aggregate(udaf(SumTwo())(col("id"), col("id")).alias("p", "q")).select(col("p"), col("q"))) == [(10, 10)]


class _Top2:
    """PyFlink's Top2 table aggregate of its udtaf docs: the two largest values, each with its rank."""

    @staticmethod
    def function():
        from kindling.common import Row
        from kindling.table.udf import TableAggregateFunction, udtaf

        class Top2(TableAggregateFunction):
            def emit_value(self, accumulator):
                yield Row(accumulator[0], 1)
                if accumulator[1] is not None:
                    yield Row(accumulator[1], 2)

            def create_accumulator(self):
                return [None, None]

            def accumulate(self, accumulator, v):
                if v is None:
                    return
                if accumulator[0] is None or v > accumulator[0]:
                    accumulator[1], accumulator[0] = accumulator[0], v
                elif accumulator[1] is None or v > accumulator[1]:
                    accumulator[1] = v

            def retract(self, accumulator, v):
                if accumulator[0] == v:
                    accumulator[0], accumulator[1] = accumulator[1], None
                elif accumulator[1] == v:
                    accumulator[1] = None

            def get_result_type(self):
                return DataTypes.ROW([DataTypes.FIELD("v", DataTypes.BIGINT()), DataTypes.FIELD("rank", DataTypes.INT())])

            def get_accumulator_type(self):
                return DataTypes.ARRAY(DataTypes.BIGINT())

        return udtaf(Top2())


def test_flat_aggregate_retracts_a_groups_rows_and_emits_its_new_ones(t_env, env):
    """A table aggregate function's rows per group, as PyFlink 2.3 gives them for the same calls (names and rows, the
    atomic result's f0 included), and its changelog record by record: a group's previous rows retracted (-D), its new
    ones inserted (+I), as PyFlink's GroupTableAggFunction does per bundle."""
    from kindling.common import Types

    top2 = _Top2.function()
    table = t_env.from_elements([(1, "a", 5), (2, "b", 7), (3, "a", 9), (4, "a", 2), (5, "b", 1), (6, "c", 4)], ["id", "k", "v"])
    grouped = table.group_by(col("k")).flat_aggregate(top2(col("v"))).select(col("*"))
    assert grouped.get_schema().fieldNames() == ["k", "v", "rank"]
    assert _rows(grouped) == [("a", 5, 2), ("a", 9, 1), ("b", 1, 2), ("b", 7, 1), ("c", 4, 1)]
    aliased = table.group_by(col("k")).flat_aggregate(top2(col("v")).alias("x", "r")).select(col("k"), col("x"))
    assert _rows(aliased) == [("a", 5), ("a", 9), ("b", 1), ("b", 7), ("c", 4)]
    assert _rows(table.flat_aggregate(top2(col("v"))).select(col("*"))) == [(7, 2), (9, 1)]

    from kindling.table.udf import TableAggregateFunction, udtaf

    class Values(TableAggregateFunction):  # an atomic result type: each emitted value is a row of one column, f0
        def emit_value(self, accumulator):
            yield from sorted(accumulator)

        def create_accumulator(self):
            return []

        def accumulate(self, accumulator, v):
            accumulator.append(v)

    values = udtaf(Values(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
    atomic = table.group_by(col("k")).flat_aggregate(values(col("v"))).select(col("*"))
    assert atomic.get_schema().fieldNames() == ["k", "f0"]
    assert _rows(atomic) == [("a", 2), ("a", 5), ("a", 9), ("b", 1), ("b", 7), ("c", 4)]
    # over an updating input (a GROUP BY's sums, retracted as they change): retract() takes the old sums out
    sums = table.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))
    assert _rows(sums.flat_aggregate(top2(col("s"))).select(col("*"))) == [(8, 2), (16, 1)]

    env.execute_sql("CREATE TABLE readings (k STRING, v BIGINT) WITH ('connector' = 'collection', 'rows-per-batch' = '1', "
                    "'data' = '[[\"a\", 5], [\"b\", 7], [\"a\", 9], [\"a\", 2]]')")
    changes = t_env.to_changelog_stream(t_env.from_path("readings").group_by(col("k")).flat_aggregate(top2(col("v"))).select(col("*")))
    kinds = changes.map(lambda row: (str(row.get_row_kind()), row.k, row.v, row.rank),
                        output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG(), Types.INT()]))
    assert [tuple(r) for r in kinds.execute_and_collect()] == [
        ("+I", "a", 5, 1), ("+I", "b", 7, 1),
        ("-D", "a", 5, 1), ("+I", "a", 9, 1), ("+I", "a", 5, 2),
        ("-D", "a", 9, 1), ("-D", "a", 5, 2), ("+I", "a", 9, 1), ("+I", "a", 5, 2)]

    t_env.create_temporary_function("top2", top2)
    with pytest.raises(SqlError, match="table aggregate function") as refused:
        t_env.execute_sql(f"SELECT k, top2(v) FROM {table} GROUP BY k")
    assert refused.value.construct == "table aggregate function TOP2"
    with pytest.raises(TypeError, match="declare it with udtaf"):
        from kindling.table import udaf

        udaf(top2.instance)


def test_window_aggregate_of_a_row_valued_pandas_function_names_columns_as_pyflink(t_env, tmp_path):
    """PyFlink 2.3's answers for the same calls (its row-based operations docs' window aggregate, over ORDERS without the
    row PyFlink drops as late: kindling reads a bounded file in one micro-batch, where no row is late)."""
    from datetime import datetime

    from kindling.table import udaf

    def mean_max_function():
        return udaf(lambda pd: (pd.amount.mean(), pd.amount.max()), func_type="pandas",
                    result_type=DataTypes.ROW([DataTypes.FIELD("a", DataTypes.FLOAT()), DataTypes.FIELD("b", DataTypes.INT())]))

    mean_max = mean_max_function()
    timed = _timed_orders(t_env, tmp_path, "timed_rows").where(col("id") != 5)
    w = Tumble.over(lit(5).seconds).on(col("ts")).alias("w")
    totals = timed.select(col("amount"), col("ts")).window(w).group_by(col("w")).aggregate(mean_max.alias("d", "e")) \
        .select(col("w").rowtime, col("d"), col("e"))
    assert totals.get_schema().fieldNames() == ["EXPR$0", "d", "e"]
    assert _rows(totals) == [(datetime(2024, 1, 1, 0, 0, 4, 999000), 4.0, 5), (datetime(2024, 1, 1, 0, 0, 9, 999000), 4.0, 4),
                             (datetime(2024, 1, 1, 0, 0, 14, 999000), 1.0, 1)]
    keyed = timed.window(w).group_by(col("fruit"), col("w")).aggregate(mean_max.alias("d", "e")) \
        .select(col("fruit"), col("w").start, col("w").end, col("e"))
    assert keyed.get_schema().fieldNames() == ["fruit", "EXPR$0", "EXPR$1", "e"]
    assert sorted((f, s.second, e.second, m) for f, s, e, m in _rows(keyed)) == [("apple", 0, 5, 3), ("apple", 5, 10, 4),
                                                                               ("fig", 10, 15, 1), ("pear", 0, 5, 5)]
    # .alias() names the function's columns from then on (as PyFlink's, it sets them on the function): a new one has none
    unaliased = timed.window(w).group_by(col("w"), col("fruit")).aggregate(mean_max_function()).select(col("fruit"), col("TMP_0$b"))
    assert _rows(unaliased) == [("apple", 3), ("apple", 4), ("fig", 1), ("pear", 5)]  # Flink's TMP_0$<field> names
    with pytest.raises(ValueError, match=r"Can not use \* for window aggregate!"):
        timed.window(w).group_by(col("w")).aggregate(mean_max).select(col("*"))


def test_python_operators_mean_what_they_mean_in_pyflink(env):
    """Recorded from PyFlink 2.3 (batch mode): ``~x`` is ``x IS NOT TRUE`` (TRUE for NULL, so ``where(~x)`` keeps the NULL
    row) where ``not_(x)`` keeps NULL; reflected ``%``, ``**``, ``&`` and ``|`` with a Python value on the left."""
    from kindling.table import EnvironmentSettings
    from kindling.table.expressions import not_

    t_env = StreamTableEnvironment.create(env, EnvironmentSettings.in_batch_mode())
    t = t_env.from_elements([(1, True), (2, False), (3, None)],
                            DataTypes.ROW([DataTypes.FIELD("id", DataTypes.INT()), DataTypes.FIELD("b", DataTypes.BOOLEAN())]))
    selected = t.select(col("id"), ~col("b"), not_(col("b")), 5 % col("id"), 2 ** col("id"), True & col("b"), False | col("b"))
    assert _rows(selected) == [(1, False, False, 0, 2.0, True, True), (2, True, True, 1, 4.0, False, False), (3, True, None, 2, 8.0, None, None)]
    assert _rows(t.where(~col("b"))) == [(2, False), (3, None)]
    assert _rows(t.where(not_(col("b")))) == [(2, False)]
