"""Rewriting Flink-only query syntax for Spark, and refusing what Spark streams cannot run."""

import itertools

import pytest

from kindling.sql.errors import SqlError
from kindling.sql.ranking import find_top_n, ranking_upsert_key
from kindling.sql.translate import translate_expression, translate_query, watermark_delay


def translate(text, line=1):
    counter = itertools.count(1)
    return translate_query(text, line, lambda: f"__tvf_{next(counter)}")


def test_group_windows_and_auxiliary_functions():
    out = translate(
        "SELECT account_id, TUMBLE_START(ts, INTERVAL '1' HOUR) AS s, TUMBLE_END(ts, INTERVAL '1' HOUR), "
        "TUMBLE_ROWTIME(ts, INTERVAL '1' HOUR), SUM(amount) FROM t GROUP BY account_id, TUMBLE(ts, INTERVAL '1' HOUR)"
    ).text
    assert "window.start AS s" in out and "window.end," in out and "window_time(window)" in out
    assert out.endswith("GROUP BY account_id, window(ts, '1 hours')")
    assert "window(ts, '10 minutes', '1 minutes')" in translate("SELECT 1 FROM t GROUP BY HOP(ts, INTERVAL '1' MINUTE, INTERVAL '10' MINUTE)").text
    session = translate("SELECT SESSION_START(ts, INTERVAL '5' SECOND) FROM t GROUP BY SESSION(ts, INTERVAL '5' SECOND)").text
    assert session == "SELECT session_window.start FROM t GROUP BY session_window(ts, '5 seconds')"


def test_window_tvfs_become_views():
    translation = translate(
        "SELECT window_start, SUM(price) FROM TABLE(\n  TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))\n"
        "GROUP BY window_start, window_end"
    )
    assert translation.text.startswith("SELECT window_start, SUM(price) FROM __tvf_1\n\nGROUP BY")
    (tvf,) = translation.tvfs
    assert (tvf.kind, tvf.source, tvf.time_column, tvf.size) == ("TUMBLE", "Bid", "bidtime", "10 minutes")
    assert "Bid" in translation.names
    hop = translate("SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '5' MINUTES, "
                    "SIZE => INTERVAL '10' MINUTES))").tvfs[0]
    assert (hop.kind, hop.slide, hop.size) == ("HOP", "5 minutes", "10 minutes")
    cumulate = translate("SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(ts), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))").tvfs[0]
    assert (cumulate.kind, cumulate.step, cumulate.size) == ("CUMULATE", "2 minutes", "10 minutes")


def test_identifiers_with_a_dollar_are_quoted_for_spark():
    # Flink's unquoted identifiers may hold '$' (PyFlink 2.3: SELECT n AS a$b FROM t names its column a$b, as Flink
    # names unaliased expressions EXPR$0); Spark's parser refuses '$' outside backticks
    assert translate("SELECT a$b + 1 AS c, x$y FROM v").text == "SELECT `a$b` + 1 AS c, `x$y` FROM v"
    assert translate("SELECT '$1' AS `d$`").text == "SELECT '$1' AS `d$`"


def test_functions_spark_spells_differently():
    assert translate_expression("FLOOR(ts TO HOUR)", 1) == "date_trunc('HOUR', ts)"
    assert translate_expression("FLOOR(x)", 1) == "FLOOR(x)"
    assert "date_trunc('DAY', ts) + INTERVAL 1 DAY" in translate_expression("CEIL(ts TO DAY)", 1)
    assert translate_expression("PROCTIME()", 1) == "current_timestamp()"
    assert translate_expression("TO_TIMESTAMP_LTZ(ms, 3)", 1) == "timestamp_millis(ms)"
    assert translate_expression("TO_TIMESTAMP_LTZ(s, 0)", 1) == "timestamp_seconds(s)"
    # one split per string (Spark computes it once for several indexes), the separator as a quoted regex
    assert translate_expression("SPLIT_INDEX(s, ',', 1)", 1) == "get(split(nullif(s, ''), '\\\\,', -1), 1)"
    assert translate_expression("SPLIT_INDEX(s, 'a.', 1)", 1) == "get(split(nullif(s, ''), 'a\\\\.', -1), 1)"
    # Flink's CAST to STRING: TRUE/FALSE for booleans, 3 fraction digits for timestamps, chosen on Spark's typeof(x)
    # and cut to VARCHAR(n)'s length (PyFlink 2.3: CAST('abcdef' AS VARCHAR(3)) is 'abc')
    cast = translate_expression("CAST(x AS VARCHAR(10))", 1)
    assert cast.startswith("substr(CASE WHEN typeof(x) = 'boolean' THEN upper(CAST(x AS STRING))")
    assert cast.endswith("ELSE CAST(x AS STRING) END, 1, 10)")
    assert translate_expression("CAST(x AS CHAR(3))", 1).startswith("rpad(CASE WHEN typeof(x)")
    assert translate_expression("CAST(x AS STRING)", 1).startswith("CASE WHEN typeof(x)")
    # a Flink string literal keeps its backslash: Spark's parser would read '\d' as 'd'
    assert translate_expression("REGEXP_EXTRACT(s, 'o_(\\d+)', 1)", 1) == (
        "CASE WHEN (s) RLIKE ('o_(\\\\d+)') THEN regexp_extract(s, 'o_(\\\\d+)', 1) END")
    # a cast to TIMESTAMP(p < 6) is cut to p fraction digits, as Flink's (PyFlink 2.3: '...00.987654' AS TIMESTAMP(0) is '...00')
    assert translate_expression("CAST(CAST(x AS BIGINT) AS TIMESTAMP(3))", 1) == (
        "timestamp_micros(CAST(floor(unix_micros(CAST(CAST(x AS BIGINT) AS TIMESTAMP)) / 1000) AS BIGINT) * 1000)")
    assert translate_expression("CAST(x AS TIMESTAMP(6))", 1) == "CAST(x AS TIMESTAMP)"
    assert translate_expression("TRY_CAST(b AS BYTES)", 1) == "TRY_CAST(b AS BINARY)"
    assert translate_expression("ROW(a, b)", 1) == "struct(a, b)"
    # Flink's GROUPING_ID is a bit vector over its own arguments; Spark's must name every grouping column
    assert translate_expression("GROUPING_ID(a, b)", 1) == "CAST(grouping(a) * 2 + grouping(b) * 1 AS BIGINT)"
    assert translate_expression("GROUPING(a)", 1) == "CAST(grouping(a) * 1 AS BIGINT)"
    assert translate_expression("REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)", 1) == (
        "CASE WHEN (url) RLIKE ('(&|^)channel_id=([^&]*)') THEN regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END")
    assert translate_expression("REGEXP_EXTRACT(s, 'a+')", 1) == "CASE WHEN (s) RLIKE ('a+') THEN regexp_extract(s, 'a+', 0) END"
    assert translate_expression("COUNT(DISTINCT bidder)", 1) == "size(collect_set(bidder))"
    assert translate_expression("COUNT(DISTINCT a, b)", 1) == "size(collect_set(struct(a, b)))"
    untouched = "TO_TIMESTAMP(s), TIMESTAMPADD(HOUR, 1, ts), EXTRACT(HOUR FROM ts)"
    assert translate_expression(untouched, 1) == untouched
    # Flink's DATE_FORMAT refuses a DATE (PyFlink 2.3: "Invalid input arguments"), which Spark's would format
    assert translate_expression("DATE_FORMAT(ts, 'yyyy')", 1) == (
        "(CASE WHEN typeof(ts) = 'date' THEN raise_error('DATE_FORMAT of a DATE is not supported (as in Flink): format a "
        "TIMESTAMP, CAST(d AS TIMESTAMP)') ELSE date_format(ts, 'yyyy') END)")
    # Flink's defaults and argument orders (recorded from PyFlink 2.3 in tests/table/pyflink_reference/expressions.json)
    assert translate_expression("STR_TO_MAP(s)", 1) == "str_to_map(s, ',', '=')"
    assert translate_expression("LTRIM(s, 'ab')", 1) == "trim(LEADING 'ab' FROM s)"
    assert translate_expression("CURRENT_DATABASE()", 1) == "'default_database'"
    assert translate_expression("SPLIT(s, '.')", 1) == "(CASE WHEN s = '' THEN CAST(array() AS ARRAY<STRING>) ELSE split(s, '\\\\.', -1) END)"
    for seeded in ("RAND(42)", "RAND_INTEGER(42, 10)", "TIMESTAMPDIFF(MONTH, a, b)", "BITMAP_BUILD(a)", "JSON_EXISTS(j, '$.a')"):
        with pytest.raises(SqlError, match=seeded.split("(")[0]):
            translate_expression(seeded, 1)
    assert translate_expression("t.window", 1) == "t.window"


def test_rewrites_keep_line_numbers():
    text = "SELECT FLOOR(\n  ts\n  TO HOUR),\n  x FROM t"
    assert translate(text).text.count("\n") == text.count("\n")


@pytest.mark.parametrize("text, construct, line", [
    ("SELECT *\nFROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) AS rn FROM t) WHERE rn <= 3", "Top-N", 2),
    ("SELECT SUM(x) OVER (PARTITION BY a ORDER BY ts) FROM t", "OVER aggregation", 1),
    ("SELECT * FROM r\nFOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00'", "temporal join", 2),
    ("SELECT * FROM o\nRIGHT JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.c = r.c", "lookup join", 2),
    ("SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.c > r.c", "lookup join", 1),
    ("SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.c = r.c\nJOIN s ON s.k = o.k", "lookup join", 2),
    ("SELECT * FROM t LEFT JOIN LATERAL TABLE(split(s)) AS T(w) ON w > 'a'", "LATERAL TABLE", 1),
    ("SELECT * FROM t, LATERAL split(s)", "LATERAL TABLE", 1),
    ("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A))", "MATCH_RECOGNIZE", 1),
    ("SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' MINUTE))", "window TVF SESSION", 1),
    ("SELECT * FROM TABLE(TUMBLE(TABLE t, ts, INTERVAL '1' MINUTE))", "window TVF TUMBLE", 1),
    ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts)))", "window TVF TUMBLE", 1),
    ("SELECT 1 FROM t GROUP BY TUMBLE(ts)", "group window TUMBLE", 1),
    ("SELECT TUMBLE_PROCTIME(ts, INTERVAL '1' MINUTE) FROM t", "TUMBLE_PROCTIME", 1),
])
def test_unsupported_constructs_are_refused_by_name(text, construct, line):
    with pytest.raises(SqlError) as error:
        translate(text)
    assert error.value.construct == construct
    assert error.value.line == line
    assert "Supported form:" in str(error.value)


def test_watermark_forms():
    assert watermark_delay("ts - INTERVAL '5' SECOND", "ts", 1) == "5 seconds"
    assert watermark_delay("`ts` - INTERVAL '1' MINUTE", "ts", 1) == "1 minutes"
    assert watermark_delay("ts", "ts", 1) == "0 seconds"
    with pytest.raises(SqlError, match="line 3: .*fixed interval"):
        watermark_delay("ts - INTERVAL '5' SECOND + other", "ts", 3)
    with pytest.raises(SqlError, match="WATERMARK"):
        watermark_delay("other - INTERVAL '5' SECOND", "ts", 1)


def test_count_distinct_keeps_its_filter_clause():
    out = translate_expression("count(distinct bidder) filter (where price < 10000)", 1)
    assert out == "size(collect_set(bidder) filter (where price < 10000))"


# --- Top-N: the query split into inner query, ranking and outer query (kindling.sql.ranking) ---------


def test_top_n_form_is_split_into_inner_ranking_and_outer():
    text = ("SELECT id, price\nFROM (\n  SELECT A.*, B.price, ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, "
            "B.`dateTime` ASC NULLS LAST) AS rownum\n  FROM auction A, bid B WHERE A.id = B.auction)\nWHERE rownum <= 1")
    top = find_top_n(text, 5)
    assert (top.function, top.partition, top.alias, top.limit, top.rank_selected) == ("ROW_NUMBER", ["A . id"], "rownum", 1, False)
    assert [(o.expression, o.descending, o.nulls_first) for o in top.order] == [("B . price", True, None), ("B . `dateTime`", False, False)]
    assert top.inner_text.startswith("\n  SELECT A.*, B.price, A . id AS __kindling_rank_p0, B . price AS __kindling_rank_o0, "
                                      "B . `dateTime` AS __kindling_rank_o1 \nFROM auction A, bid B")
    outer = top.outer_text("__rank_1", with_rowkind=True)
    assert "__rank_1" in outer and outer.count("\n") == text.count("\n")  # line numbers survive
    assert outer.splitlines()[0] == "SELECT id, price, __kindling_rowkind"
    assert top.inner_line == 6 and top.line == 7
    assert ranking_upsert_key(text, 1, ["id", "price"]) == ["id"]


@pytest.mark.parametrize("condition, limit", [("rn <= 10", 10), ("rn < 3", 2), ("rn = 1", 1), ("3 >= rn", 3),
                                              ("rn BETWEEN 1 AND 4 AND k > 2", 4)])
def test_top_n_rank_conditions(condition, limit):
    top = find_top_n(f"SELECT * FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY v) AS rn FROM t) WHERE {condition}", 1)
    assert top.limit == limit and top.rank_selected and top.function == "RANK"


def test_top_n_upsert_key_is_partition_and_rank_when_the_rank_is_selected():
    text = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid) WHERE rank_number <= 10"
    assert ranking_upsert_key(text, 1, ["auction", "price", "rank_number"]) == ["auction", "rank_number"]
    assert ranking_upsert_key(text.replace("ROW_NUMBER", "RANK"), 1, ["auction", "price", "rank_number"]) is None


@pytest.mark.parametrize("text, message, line", [
    ("SELECT k,\n ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t", "only in Top-N form", 2),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t)", "OVER aggregation", 1),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t)\nWHERE rn > 2", "upper bound", 2),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k) AS rn FROM t) WHERE rn <= 2", "needs ORDER BY", 1),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) FROM t) WHERE rn <= 2", "needs a name", 1),
    ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS rn FROM t) WHERE rn <= 2",
     "ROWS", 1),
    ("SELECT k, COUNT(*) FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM t) WHERE rn <= 2 GROUP BY k",
     "GROUP after a Top-N", 1),
])
def test_top_n_forms_kindling_cannot_run_are_refused_with_line_and_form(text, message, line):
    with pytest.raises(SqlError) as error:
        find_top_n(text, 1)
    assert message in str(error.value) and error.value.line == line
    assert str(error.value).startswith(f"SQL line {line}: Top-N: ") and "Supported form: SELECT ... FROM (SELECT" in str(error.value)


def test_queries_without_ranking_functions_are_not_top_n():
    assert find_top_n("SELECT a, SUM(b) OVER w FROM t", 1) is None
    assert find_top_n("SELECT row_number FROM t", 1) is None


def test_divisors_are_tagged_for_the_integer_division_check():
    from kindling.sql.division import _divisions, _marked
    from kindling.sql.tokens import tokenize

    tokens = tokenize("SELECT amount / 3, (a + b) / c.d, x / f(y)[1], a / -1 FROM t")
    marked = _marked(tokens, _divisions(tokens))
    assert "amount / (CASE WHEN 827364519000 = 827364519000 THEN (3) END)" in marked
    assert "(a + b) / (CASE WHEN 827364519001 = 827364519001 THEN (c.d) END)" in marked
    assert "x / (CASE WHEN 827364519002 = 827364519002 THEN (f(y)[1]) END)" in marked
    assert "a / -1" in marked  # a signed divisor is left to Spark


def test_collections_count_from_one_and_similar_to_matches_whole_strings():
    out = translate("SELECT ARRAY[a, b][1], MAP['k', v]['k'], t.arr[2][1], f(x)[3], ELEMENT(arr), ARRAY_CONTAINS(arr, x) FROM t").text
    assert out == ("SELECT try_element_at(array(a, b), 1), try_element_at(map('k', v), 'k'), try_element_at(try_element_at(t.arr, 2), 1), "
                   "try_element_at(f(x), 3), CASE WHEN size(arr) > 1 THEN raise_error('ELEMENT: the array has more than one element') "
                   "ELSE try_element_at(arr, 1) END, exists(arr, __kindling_element -> __kindling_element <=> (x)) FROM t")
    assert translate("SELECT tag NOT SIMILAR TO 'o_[0-9]+|a.b%' FROM t").text == \
        "SELECT tag NOT RLIKE '(?s)^(?:o.[0-9]+|a\\\\.b.*)\\\\z' FROM t"
    with pytest.raises(SqlError, match="SIMILAR TO is supported with a string literal"):
        translate("SELECT tag SIMILAR TO p FROM t")


def test_between_symmetric_orders_its_bounds():
    out = translate("SELECT a BETWEEN SYMMETRIC 10 AND b + 1 AS v, c BETWEEN ASYMMETRIC 1 AND 2 FROM t").text
    bounds = "(10) IS NULL OR (b + 1) IS NULL THEN NULL WHEN (10) <= (b + 1)"
    assert out == (f"SELECT a BETWEEN (CASE WHEN {bounds} THEN (10) ELSE (b + 1) END) AND (CASE WHEN {bounds} THEN (b + 1) "
                   "ELSE (10) END) AS v, c BETWEEN 1 AND 2 FROM t")


def test_overlaps_orders_each_period_and_includes_the_ends():
    out = translate("SELECT (a, INTERVAL '1' SECOND) OVERLAPS (b, c) AS v FROM t").text
    e0 = "((a) + (INTERVAL '1' SECOND))"
    assert out == (f"SELECT (CASE WHEN (a) IS NULL OR {e0} IS NULL OR (b) IS NULL OR (c) IS NULL THEN NULL "
                   f"ELSE greatest((a), {e0}) >= least((b), (c)) AND greatest((b), (c)) >= least((a), {e0}) END) AS v FROM t")


def test_json_functions_take_flinks_defaults_and_refuse_other_clauses():
    bound = "element_at(transform(array(named_struct('d', p, 'v', try_variant_get(try_parse_json(p), '$.a'))), __kindling_json -> "
    value, kind = "__kindling_json.v", "schema_of_variant(__kindling_json.v)"
    query = translate("SELECT JSON_QUERY(p, 'lax $.a'), p IS NOT JSON ARRAY FROM t").text
    assert query.startswith(f"SELECT {bound}CASE WHEN __kindling_json.d IS NULL THEN NULL WHEN ({value} IS NULL OR NOT {kind} "
                            "RLIKE '^(OBJECT|ARRAY)') THEN NULL ELSE (CASE WHEN schema_of_variant(")
    assert query.endswith(f"ELSE to_json({value}) END) END), 1), "
                          "(NOT (coalesce(schema_of_variant(try_parse_json(p)) RLIKE '^ARRAY', false))) FROM t")
    assert translate("SELECT JSON_VALUE(p, '$.a' RETURNING INT) FROM t").text == (
        f"SELECT {bound}CASE WHEN __kindling_json.d IS NULL THEN NULL WHEN ({value} IS NULL OR {kind} RLIKE "
        f"'^(OBJECT|ARRAY|VOID)') THEN NULL ELSE TRY_CAST(variant_get({value}, '$', 'string') AS INT) END), 1) FROM t")
    # strict (the default) answers a missing value with ON ERROR, lax with ON EMPTY
    strict = translate("SELECT JSON_VALUE(p, '$.a' DEFAULT 'e' ON EMPTY DEFAULT 'r' ON ERROR) FROM t").text
    lax = translate("SELECT JSON_VALUE(p, 'lax $.a' DEFAULT 'e' ON EMPTY DEFAULT 'r' ON ERROR) FROM t").text
    assert "THEN CAST('r' AS STRING) ELSE" in strict and "THEN CAST('e' AS STRING) ELSE" in lax
    wrapped = translate("SELECT JSON_QUERY(p, '$.a' WITH CONDITIONAL ARRAY WRAPPER EMPTY OBJECT ON ERROR) FROM t").text
    assert "THEN '{}' ELSE" in wrapped and f"WHEN schema_of_variant({value}) RLIKE '^ARRAY' THEN to_json({value}) ELSE concat('['" in wrapped
    with pytest.raises(SqlError, match="'WITH WRAPPER' is not supported"):
        translate("SELECT JSON_VALUE(p, '$.a' WITH WRAPPER) FROM t")
    with pytest.raises(SqlError, match="DEFAULT is supported as a string or number literal, without RETURNING"):
        translate("SELECT JSON_VALUE(p, '$.a' RETURNING INT DEFAULT 0 ON EMPTY) FROM t")
    with pytest.raises(SqlError, match=r"the path '\$.a\[\*\]' is not supported") as error:
        translate("SELECT JSON_QUERY(p, '$.a[*]') FROM t")
    assert error.value.construct == "JSON_QUERY"
    with pytest.raises(SqlError, match="IS JSON is supported after a column"):
        translate("SELECT a || b IS JSON FROM t")


def test_json_array_writes_nested_arrays_as_json_and_refuses_other_json_values():
    assert translate("SELECT JSON_ARRAY() FROM t").text == "SELECT '[]' FROM t"
    nested = translate("SELECT JSON_ARRAY(JSON_ARRAY(), 'x' NULL ON NULL) FROM t").text
    assert nested.startswith("SELECT concat('[', concat_ws(',', coalesce('[]', 'null'), coalesce(")
    for value in ("JSON_OBJECT('k' VALUE a)", "JSON_STRING(a)", "JSON_QUERY(a, '$.b')"):
        with pytest.raises(SqlError, match=f"JSON_ARRAY of a {value.split('(')[0]} value is not supported") as error:
            translate(f"SELECT JSON_ARRAY(1, {value}) FROM t")
        assert error.value.construct == "JSON_ARRAY"


def test_convert_tz_takes_javas_zone_names_and_refuses_zones_that_are_not_literals():
    from kindling.sql.time_zones import java_time_zone

    assert [java_time_zone(z) for z in ("GMT-0530", "GMT+5:30", "GMT+24", "utc", "UTC", "+08:00", "IST", "Etc/GMT+8")] == [
        "-05:30", "+05:30", "UTC", "UTC", "UTC", "UTC", "IST", "Etc/GMT+8"]
    assert "'America/Los_Angeles'" in translate("SELECT CONVERT_TZ(s, 'UTC', 'America/Los_Angeles') FROM t").text
    with pytest.raises(SqlError, match="CONVERT_TZ is supported with string literal time zones") as error:
        translate("SELECT CONVERT_TZ(s, zone, 'UTC') FROM t")
    assert error.value.construct == "CONVERT_TZ"


def test_lookup_joins_become_a_lateral_view_of_the_matching_rows():
    text = ("SELECT o.id, c.name FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c "
            "ON o.cust = c.id AND c.country = 'US' AND c.tier BETWEEN 1 AND o.level\nWHERE o.id > 1")
    translation = translate(text)
    join, = translation.lookups
    assert (join.table, join.alias, join.outer, join.key_columns, join.key_texts) == (
        "customers", "c", True, ["id", "country"], ["o.cust", "'US'"])
    assert (join.time_attribute, join.left) == ("o.pt", "orders AS o")
    assert translation.text == (
        f"SELECT o.id, c.name FROM orders AS o LATERAL VIEW OUTER inline(filter({join.function}(o.cust, 'US'), "
        "c -> (c.tier BETWEEN 1 AND o.level))) c\nWHERE o.id > 1")
    assert "customers" not in translation.names  # the dimension is looked up, not read as a stream
    two = translate("SELECT * FROM o JOIN a FOR SYSTEM_TIME AS OF o.pt ON a.k = o.k JOIN b FOR SYSTEM_TIME AS OF o.pt ON b.k = a.v")
    first, second = two.lookups
    assert (first.alias, second.alias, second.key_texts, second.left) == ("a", "b", ["a.v"], "o")
    assert two.text == f"SELECT * FROM o LATERAL VIEW inline({first.function}(o.k)) a LATERAL VIEW inline({second.function}(a.v)) b"


def test_lookup_hints_are_checked_and_their_retry_options_taken_with_flinks_messages():
    from kindling.sql.lookup_join import LookupRetry

    text = ("SELECT /*+ LOOKUP('table'='c', 'async'='true', 'output-mode'='allow_unordered', 'capacity'='100', 'timeout'='180s') */ "
            "o.id FROM o JOIN customers FOR SYSTEM_TIME AS OF o.pt AS c ON o.k = c.id")
    assert "LOOKUP" not in translate(text).text and "/*+" not in translate(text).text
    assert translate(text).lookups[0].retry is None
    kept = translate(text.replace("/*+ LOOKUP(", "/*+ BROADCAST(o), LOOKUP("))
    assert "/*+ BROADCAST(o) */" in kept.text
    retry = "'retry-predicate'='lookup_miss', 'retry-strategy'='fixed_delay', 'fixed-delay'='10s', 'max-attempts'='3'"
    assert translate(text.replace("'async'='true'", retry)).lookups[0].retry == LookupRetry(10.0, 3)
    # as in Flink, the first of two hints for one table takes effect
    two = text.replace("/*+ LOOKUP(", f"/*+ LOOKUP('table'='customers', {retry}), LOOKUP(")
    assert translate(two).lookups[0].retry == LookupRetry(10.0, 3)
    for wrong, message in (
            ("'max-attempts'='3'", "Invalid LOOKUP hint: retry options can be both null or all not null"),
            (retry.replace("lookup_miss", "exception"),
             "Invalid LOOKUP hint option: unsupported retry-predicate 'exception', only 'lookup_miss' is supported currently"),
            (retry.replace("'3'", "'-3'"), "Invalid LOOKUP hint option: max-attempts value should be positive integer but was -3"),
            (retry.replace("'3'", "'100.0'"), "Invalid LOOKUP hint options: Could not parse value '100.0' for key 'max-attempts'"),
            (retry.replace("'10s'", "'-10s'"), "Invalid LOOKUP hint options: Could not parse value '-10s' for key 'fixed-delay'"),
            (retry.replace("fixed_delay", "fixed-delay"),
             "Invalid LOOKUP hint options: Could not parse value 'fixed-delay' for key 'retry-strategy'")):
        with pytest.raises(SqlError) as error:
            translate(text.replace("'async'='true'", wrong))
        assert message in str(error.value) and error.value.construct == "LOOKUP hint"
    with pytest.raises(SqlError, match="names 'x', which is no lookup table"):
        translate(text.replace("'table'='c'", "'table'='x'"))
    with pytest.raises(SqlError, match="Could not parse value 'sorted' for key 'output-mode'"):
        translate(text.replace("allow_unordered", "sorted"))


def test_lateral_table_functions_become_spark_lateral_calls():
    assert translate("SELECT s, w FROM t, LATERAL TABLE(split(s)) AS T(w)").text == "SELECT s, w FROM t, LATERAL split(s) AS T(w)"
    assert translate("SELECT * FROM t CROSS JOIN LATERAL TABLE(f(UPPER(s), 2))").text == "SELECT * FROM t CROSS JOIN LATERAL f(UPPER(s), 2)"
    # LEFT JOIN ... ON TRUE: the function's outer variant (NULLs where it yields nothing) in an inner lateral join
    assert translate("SELECT s, w FROM t LEFT JOIN LATERAL TABLE(split(s)) AS T(w) ON TRUE WHERE s > 'a'").text == (
        "SELECT s, w FROM t , LATERAL __kindling_outer_split(s) AS T(w) WHERE s > 'a'")


def test_cross_join_unnest_becomes_a_lateral_view():
    assert (translate("SELECT o, x FROM orders CROSS JOIN UNNEST(ARRAY[a, b]) AS t (x) WHERE x > 1").text
            == "SELECT o, x FROM orders LATERAL VIEW explode(array(a, b)) t AS x WHERE x > 1")
    assert translate("SELECT k, v FROM t CROSS JOIN UNNEST(MAP['k', 1]) u (k, v)").text.endswith("LATERAL VIEW explode(map('k', 1)) u AS k, v")
    assert translate("SELECT a FROM t CROSS JOIN UNNEST(t.pairs) AS u (a, b)").text.endswith("LATERAL VIEW inline(t.pairs) u AS a, b")
    with pytest.raises(SqlError) as ordinality:
        translate("SELECT x FROM t CROSS JOIN UNNEST(t.xs) WITH ORDINALITY AS u (x, n)")
    assert ordinality.value.construct == "UNNEST WITH ORDINALITY"
    with pytest.raises(SqlError, match="alias naming its columns"):
        translate("SELECT * FROM t CROSS JOIN UNNEST(t.xs)")


def test_user_functions_spark_knows_under_another_name_are_called_by_it():
    renamed = {"upper": "__kindling_fn_upper"}
    out = translate_query("SELECT upper(name), UPPER(x), t.upper, upper FROM t", 1, lambda: "v", functions=renamed).text
    assert out == "SELECT __kindling_fn_upper(name), __kindling_fn_upper(x), t.upper, upper FROM t"


def test_session_tvf_aggregations_become_the_session_group_window():
    from kindling.sql.session_tvf import rewrite_session_tvfs

    text = ("SELECT window_start, window_end, k, SUM(v) AS s FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), "
            "INTERVAL '3' SECOND)) GROUP BY window_start, window_end, k")
    assert rewrite_session_tvfs(text, 1).split() == (
        "SELECT SESSION_START(ts, INTERVAL '3' SECOND) AS window_start, SESSION_END(ts, INTERVAL '3' SECOND) AS window_end, k, "
        "SUM(v) AS s FROM t GROUP BY SESSION(ts, INTERVAL '3' SECOND), k").split()
    nested = f"SELECT MAX(s) FROM ({text.replace(' PARTITION BY k', '').replace(', k', '')}) x"
    assert "FROM (SELECT SESSION_START(ts, INTERVAL '3' SECOND) AS window_start" in rewrite_session_tvfs(nested, 1)
    assert "GROUP BY SESSION(ts, INTERVAL '3' SECOND), ts IS NOT NULL" in rewrite_session_tvfs(nested, 1)
    assert rewrite_session_tvfs("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))", 1) is None


def test_the_names_a_query_may_read_are_those_in_table_positions():
    # Nexmark's bid view: `auction` is a field of the bid row and a view of its own; only nexmark is read
    names = translate_query("SELECT bid.auction, bid.price, `dateTime` FROM nexmark WHERE event_type = 2", 1,
                            lambda: "v").names
    assert "nexmark" in names and not {"bid", "auction", "price"} & names  # (a name after a comma counts: `dateTime`)
    names = translate_query("SELECT auction, o.price FROM bid AS o JOIN person p ON o.bidder = p.id, `category` "
                            "WHERE o.price IN (SELECT price FROM prices)", 1, lambda: "v").names
    assert {"bid", "person", "category", "prices"} <= names
    assert not {"auction", "o", "price", "bidder", "id"} & names
    # a function's argument, a select list after `*` and a grouping are values, not tables
    names = translate_query("SELECT *, bidder AS k, MOD(auction, 123) AS m FROM bid, person WHERE CONCAT(city, state) <> '' "
                            "GROUP BY price, channel", 1, lambda: "v").names
    assert {"bid", "person"} <= names
    assert not {"bidder", "auction", "price", "channel", "city", "state"} & names
