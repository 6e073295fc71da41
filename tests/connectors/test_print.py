"""The print sink: Flink's Row.toString lines, printed once per batch by the driver's commit."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from kindling.connectors import get_connector
from kindling.connectors.base import EOS_COLUMN, ROWKIND_COLUMN
from kindling.connectors.print import (
    NestedRow,
    PrintCommitMessage,
    PrintDataSource,
    format_batch,
    format_line,
    format_row,
    format_value,
)
from kindling.options import OptionError


@pytest.mark.parametrize(
    "values, kind, expected",
    [
        ([1, "alice", None], "+I", "+I[1, alice, null]"),
        ([True, False], None, "+I[true, false]"),
        ([], "+I", "+I[]"),
        (["x"], "-U", "-U[x]"),
        (["x"], "+U", "+U[x]"),
        (["x"], "-D", "-D[x]"),
        ([1.5, 1.0, -0.0, 0.001, 1234567.0], "+I", "+I[1.5, 1.0, -0.0, 0.001, 1234567.0]"),
        ([1e7, 1.25e-4, 1e100, -2.5e-10], "+I", "+I[1.0E7, 1.25E-4, 1.0E100, -2.5E-10]"),
        ([float("nan"), float("inf"), float("-inf")], "+I", "+I[NaN, Infinity, -Infinity]"),
        ([np.float32(0.1), np.float32(3e10)], "+I", "+I[0.1, 3.0E10]"),
        ([np.int64(7), np.bool_(True)], "+I", "+I[7, true]"),
        ([Decimal("1.50"), Decimal("-0.01")], "+I", "+I[1.50, -0.01]"),
        ([dt.datetime(2026, 11, 22, 1, 2, 3, 123000)], "+I", "+I[2026-11-22T01:02:03.123]"),
        ([dt.datetime(2026, 11, 22, 1, 2, 3, 123456)], "+I", "+I[2026-11-22T01:02:03.123456]"),
        ([dt.datetime(2026, 11, 22, 1, 2, 3)], "+I", "+I[2026-11-22T01:02:03]"),
        ([dt.datetime(2026, 11, 22, 1, 2)], "+I", "+I[2026-11-22T01:02]"),
        ([dt.datetime(2026, 11, 22, 2, 2, 3, 500000, tzinfo=dt.timezone(dt.timedelta(hours=1)))], "+I", "+I[2026-11-22T01:02:03.500]"),
        ([dt.date(2026, 1, 2), dt.time(13, 45, 0, 10000)], "+I", "+I[2026-01-02, 13:45:00.010]"),
        ([["a", "b"], [1, None], []], "+I", "+I[[a, b], [1, null], []]"),
        ([{"k": 1, "j": None}], "+I", "+I[{k=1, j=null}]"),
        ([NestedRow((1, "x"))], "+I", "+I[+I[1, x]]"),
        ([b"\x01\xff"], "+I", "+I[[1, -1]]"),
        (["with, comma", ""], "+I", "+I[with, comma, ]"),  # Flink does not quote strings either
    ],
)
def test_format_row(values, kind, expected):
    assert format_row(values, kind) == expected


def test_format_line_prefix():
    assert format_line([1], "+I", "orders") == "orders> +I[1]"
    assert format_line([1], "+I", None) == "+I[1]"
    assert format_value(None) == "null"


def test_format_batch_drops_internal_columns_reads_rowkind_and_skips_markers():
    batch = pa.RecordBatch.from_pydict(
        {
            "id": pa.array([1, 2, None], pa.int64()),
            "ratio": pa.array([0.1, None, None], pa.float32()),
            "tags": pa.array([["a"], [], None], pa.list_(pa.string())),
            "point": pa.array([{"x": 1, "y": 2.5}, None, None], pa.struct([("x", pa.int32()), ("y", pa.float64())])),
            "attrs": pa.array([[("k", 1)], [], None], pa.map_(pa.string(), pa.int64())),
            "at": pa.array([dt.datetime(2026, 11, 22, 1, 22, 3, 123000), None, None], pa.timestamp("us", tz="UTC")),
            ROWKIND_COLUMN: pa.array(["+I", "-D", None]),
            EOS_COLUMN: pa.array([False, None, True]),
            "__kindling_other": pa.array([1, 2, 3]),
        }
    )
    assert format_batch(batch, "sink") == [
        "sink> +I[1, 0.1, [a], +I[1, 2.5], {k=1}, 2026-11-22T01:22:03.123]",
        "sink> -D[2, null, [], null, {}, null]",
    ]


def _writer(**options):
    schema = StructType([StructField("id", LongType()), StructField("name", StringType())])
    return PrintDataSource({k.lower(): str(v) for k, v in options.items()}).streamWriter(schema, overwrite=False)


def _batch(ids):
    return pa.RecordBatch.from_pydict({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i}" for i in ids])})


def _messages(writer, *partitions):
    query_id = str(uuid.uuid4())
    messages = []
    for number, ids in enumerate(partitions):
        message = writer.write(iter([_batch(ids)]))
        message.query_id, message.partition_id = query_id, number
        messages.append(message)
    return messages


def test_write_formats_on_executors_and_commit_prints_once(capsys):
    writer = _writer(**{"print-identifier": "out", "sink.parallelism": 3})
    messages = _messages(writer, [1, 2], [3])
    assert isinstance(messages[0], PrintCommitMessage) and messages[0].lines == ["out> +I[1, n1]", "out> +I[2, n2]"]
    assert capsys.readouterr().out == ""  # write() prints nothing
    writer.commit(list(reversed(messages)), 0)  # partition order, not arrival order
    assert capsys.readouterr().out == "out> +I[1, n1]\nout> +I[2, n2]\nout> +I[3, n3]\n"
    # the same batch committed again (a re-run commit after a failure) prints nothing ...
    writer.commit(messages, 0)
    _writer(**{"print-identifier": "out"}).commit(messages, 0)  # ... also from a fresh writer
    assert capsys.readouterr().out == ""
    # the next batch prints
    later = _messages(writer, [4])
    for m in later:
        m.query_id = messages[0].query_id
    writer.commit(later, 1)
    assert capsys.readouterr().out == "out> +I[4, n4]\n"


def test_standard_error_and_empty_batches(capsys):
    writer = _writer(**{"standard-error": "true"})
    writer.commit(_messages(writer, [7]), 0)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "+I[7, n7]\n"
    writer.commit(_messages(writer, []) + [None], 0)
    assert capsys.readouterr().err == ""
    writer.abort(_messages(writer, [8]), 1)
    assert capsys.readouterr().err == ""


def test_print_options():
    connector = get_connector("print")
    parsed = connector.validate_sink({"print-identifier": "x", "standard-error": "true", "sink.parallelism": "2"})
    assert parsed["standard-error"] is True
    with pytest.raises(OptionError, match="standard-error"):
        connector.validate_sink({"standard-error": "maybe"})
    with pytest.raises(OptionError, match="print-identifer"):
        connector.validate_sink({"print-identifer": "x"})
    with pytest.raises(ValueError, match="sink only"):
        connector.validate_source({})


def test_timestamp_ltz_columns_print_as_instants():
    import datetime as dt

    import pyarrow as pa

    from kindling.connectors.print import format_batch

    batch = pa.RecordBatch.from_pydict({"ts": [dt.datetime(1970, 1, 1, 0, 0, 5)], "ltz": [dt.datetime(1970, 1, 1, 0, 0, 5, 250000)],
                                        "at": [dt.datetime(2024, 1, 1)]})
    assert format_batch(batch, instants=["ltz", "at"]) == ["+I[1970-01-01T00:00:05, 1970-01-01T00:00:05.250Z, 2024-01-01T00:00:00Z]"]
