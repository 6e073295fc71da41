"""The keyed operator's input columns read back as the function sees them, nulls included (they travel as Arrow's)."""

import datetime

from pyspark.sql.types import IntegerType, StringType, StructField, StructType, TimestampType

from kindling.datastream.operator_columns import NO_TIME, TS, OperatorColumns


def test_a_frame_reads_back_with_nulls_as_none_and_instants_as_utc_datetimes():
    record = StructType([StructField("n", IntegerType()), StructField("at", TimestampType()), StructField("s", StringType())])
    layout = OperatorColumns([IntegerType()], [record], chained=False, convert=lambda _: None)
    assert layout.names == ["__kindling_k0", TS, "__kindling_v0_0", "__kindling_v0_1", "__kindling_v0_2"]  # no mask column
    columns = {"__kindling_k0": [7, None], TS: [NO_TIME, 5], "__kindling_v0_0": [None, -1],
               "__kindling_v0_1": [1_500_000, None], "__kindling_v0_2": ["a", None]}
    inputs, keys, times, origins, fields = layout.read(columns.__getitem__, 2)
    assert inputs is None and origins is None
    assert keys == [[7, None]] and times == [None, 5]
    utc = datetime.timezone.utc
    assert fields == [[[None, -1], [datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=utc), None], ["a", None]]]
