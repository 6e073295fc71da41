"""The column-wise JSON encoder writes, byte for byte, what the per-row orjson path writes."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random

import pyarrow as pa
import pytest

from kindling.formats import FormatSettings, RowEncoder, encoding

ALPHABET = ['"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f", "/", ",", ":", "{", "}",
            "é", "ß", "中", "\u2028", "\U0001F600", " ", "a", "Z", "0", "'"]


def rand_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) if rng.random() < 0.5 else chr(rng.randint(32, 126)) for _ in range(rng.randint(0, 12)))


def maybe_null(rng: random.Random, values: list, p: float = 0.15) -> list:
    return [None if rng.random() < p else v for v in values]


def encoder(names, standard="SQL") -> RowEncoder:
    return RowEncoder(FormatSettings("json", timestamp_standard=standard), names)


def both(batch: pa.RecordBatch, standard="SQL"):
    enc = encoder(batch.schema.names, standard)
    columns = list(batch.columns)
    fast = enc._encode_json_columns(columns)
    if fast is not None:
        assert enc.json_objects(batch).equals(fast)
        fast = fast.to_pylist()
    return fast, enc._encode_json_rows(columns), enc.encode(batch)


def assert_same(batch: pa.RecordBatch, standard="SQL"):
    fast, slow, public = both(batch, standard)
    assert fast is not None, "expected the column-wise path"
    assert fast == slow
    assert public == slow
    for line in fast:
        json.loads(line)  # valid JSON


SPECIAL_FLOATS = [1.5, 0.1, 1e20, -0.0, 0.0, 5e-324, 1e-7, 1e-4, 9.999999999999999e-5, 1e10, 9999999999.999998,
                  1e16, 1.2345678901234568e17, -2.5e-300, 1.7976931348623157e308, math.nan, math.inf, -math.inf,
                  123456.0, -7.0, 1 / 3, 2.0**53 + 2]


def random_float(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(SPECIAL_FLOATS)
    if kind < 0.6:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)
    if kind < 0.8:
        return float(rng.randint(-(10**17), 10**17))
    return rng.uniform(-1000, 1000)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("standard", ["SQL", "ISO-8601"])
def test_flat_types_match_the_per_row_path(seed, standard):
    rng = random.Random(seed)
    n = 2000
    epoch = dt.datetime(1970, 1, 1)
    ts_values = [epoch + dt.timedelta(microseconds=rng.randint(-62135596800_000_000, 253402300799_999_999))
                 for _ in range(n)]
    ts_values[:4] = [dt.datetime(2026, 11, 22, 1, 2, 3), dt.datetime(2026, 11, 22, 1, 2, 3, 123000),
                     dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    i64 = [rng.randint(-(2**63), 2**63 - 1) for _ in range(n)]
    i64[:3] = [-(2**63), 2**63 - 1, 0]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(maybe_null(rng, i64), pa.int64()),
            pa.array(maybe_null(rng, [rng.randint(-(2**31), 2**31 - 1) for _ in range(n)]), pa.int32()),
            pa.array(maybe_null(rng, [rng.randint(0, 255) for _ in range(n)]), pa.uint8()),
            pa.array(maybe_null(rng, [rand_text(rng) for _ in range(n)]), pa.string()),
            pa.array(maybe_null(rng, [rand_text(rng) for _ in range(n)]), pa.large_string()),
            pa.array(maybe_null(rng, [rng.random() < 0.5 for _ in range(n)]), pa.bool_()),
            pa.array(maybe_null(rng, ts_values), pa.timestamp("us", "UTC")),
            pa.array(maybe_null(rng, ts_values), pa.timestamp("us")),
            pa.array(maybe_null(rng, [random_float(rng) for _ in range(n)]), pa.float64()),
            pa.array(maybe_null(rng, [random_float(rng) for _ in range(n)]), pa.float64()).cast(pa.float32(), safe=False),
            pa.array(maybe_null(rng, [decimal.Decimal(rng.randint(-(10**12), 10**12)).scaleb(-4) for _ in range(n)]),
                     pa.decimal128(18, 4)),
            pa.array(maybe_null(rng, [dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-700000, 2900000))
                                      for _ in range(n)]), pa.date32()),
        ],
        names=["id", "small", "tiny", "name", "k\"ey\n\u00e9", "ok", "ts", "ts_naive", "score", "f32", "amount", "day"],
    )
    assert_same(batch, standard)


def test_every_column_null_and_all_null_rows():
    batch = pa.RecordBatch.from_arrays(
        [pa.nulls(3, t) for t in (pa.int64(), pa.string(), pa.bool_(), pa.timestamp("us", "UTC"), pa.float64(),
                                  pa.date32(), pa.decimal128(10, 2), pa.null())],
        names=list("abcdefgh"),
    )
    fast, slow, _ = both(batch)
    assert fast == slow == [b'{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null,"g":null,"h":null}'] * 3


def test_known_output():
    batch = pa.RecordBatch.from_arrays(
        [pa.array([1, -9223372036854775808]), pa.array(['x"\\\n\t\x01\U0001F600é', None]),
         pa.array([dt.datetime(2026, 11, 22, 1, 2, 3, 120000), dt.datetime(2026, 11, 22, 1, 2, 3)], pa.timestamp("us", "UTC")),
         pa.array([1.5, math.nan]), pa.array([True, False])],
        names=["a", "b", "ts", "f", "ok"],
    )
    expected = [
        '{"a":1,"b":"x\\"\\\\\\n\\t\\u0001\U0001F600é","ts":"2026-11-22 01:02:03.12","f":1.5,"ok":true}'.encode(),
        b'{"a":-9223372036854775808,"b":null,"ts":"2026-11-22 01:02:03","f":null,"ok":false}',
    ]
    assert_same(batch)
    assert encoder(batch.schema.names).encode(batch) == expected
    iso = encoder(batch.schema.names, "ISO-8601").encode(batch)
    assert b'"ts":"2026-11-22T01:02:03.12Z"' in iso[0] and b'"ts":"2026-11-22T01:02:03Z"' in iso[1]


def test_empty_batch():
    batch = pa.RecordBatch.from_arrays([pa.array([], pa.int64()), pa.array([], pa.string())], names=["a", "b"])
    enc = encoder(["a", "b"])
    assert enc.encode(batch) == [] == enc._encode_json_rows(list(batch.columns))


def test_column_order_follows_the_encoder_names():
    batch = pa.RecordBatch.from_arrays([pa.array([1]), pa.array(["x"])], names=["a", "b"])
    assert encoder(["b", "a"]).encode(batch) == [b'{"b":"x","a":1}']


@pytest.mark.parametrize(
    "column",
    [
        pa.array([{"x": 1, "y": "a"}, None]),
        pa.array([[1, 2], None]),
        pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())),
        pa.array([b"\x00\xff", None], pa.binary()),
    ],
)
def test_nested_and_binary_columns_take_the_per_row_path(column):
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2]), column], names=["id", "v"])
    enc = encoder(["id", "v"])
    assert enc._encode_json_columns(list(batch.columns)) is None
    assert enc.encode(batch) == enc._encode_json_rows(list(batch.columns))


def test_timestamp_text_matches_python_formatting():
    rng = random.Random(7)
    epoch = dt.datetime(1970, 1, 1)
    values = [epoch + dt.timedelta(microseconds=rng.randint(-62135596800_000_000, 253402300799_999_999))
              for _ in range(5000)]
    values += [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), epoch,
               dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(2026, 1, 2, 3, 4, 5, 600)]

    def reference(v: dt.datetime, sep: str) -> str:
        text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}{sep}{v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        if v.microsecond:
            text += ("." + f"{v.microsecond:06d}").rstrip("0")
        return text

    for unit in ("us", "ns"):
        if unit == "ns":  # nanoseconds cover 1677-2262 only
            values = [v for v in values if 1678 <= v.year <= 2261]
        for tz in (None, "UTC"):
            column = pa.array(values, pa.timestamp("us")).cast(pa.timestamp(unit, tz))
            assert encoding._timestamp_strings(column, "SQL").to_pylist() == [reference(v, " ") for v in values]
            zone = "Z" if tz else ""
            assert encoding._timestamp_strings(column, "ISO-8601").to_pylist() == [
                reference(v, "T") + zone for v in values]
