"""Spark's ``transformWithStateInPandas`` as kindling's keyed operator runs it: results handed over per partition.

Spark calls a stateful processor once per grouping key (for kindling, a key group) and turns every frame the
call returns into an Arrow batch of its own: a fixed cost of a pandas frame, Spark's conversion of it and a
batch for the JVM, about 2 ms per key group on the 2-core machine, paid 64 times a partition and micro-batch
whatever the records (``benchmarks/README.md``). The keyed operator gathers its results across key groups
instead and hands them over as one frame once enough have gathered, and the rest when Spark says the
partition's input has ended (its call for expired timers, made once per partition after the last key group).

PySpark builds the processor's Python function in ``GroupedData.transformWithStateInPandas`` from a utility
object that dispatches Spark's calls by mode; :func:`transform_with_state` does the same with a utility that
also asks the processor for its gathered results around the expired timers' call. The processor offers
``gathered()``: an iterator of the frames it still holds.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from pyspark.sql import DataFrame, GroupedData
from pyspark.sql.streaming.stateful_processor_util import (
    TransformWithStateInPandasFuncMode,
    TransformWithStateInPandasUdfUtils,
)
from pyspark.sql.types import StructType
from pyspark.util import PythonEvalType


class _HandOver(TransformWithStateInPandasUdfUtils):
    """PySpark's dispatch of Spark's calls, with the processor's gathered results handed over at the partition's
    end: before the expired timers (the key groups' results, as Spark would have had them first) and after them."""

    def transformWithStateUDF(self, stateful_processor_api_client: Any, mode: TransformWithStateInPandasFuncMode,
                              key: Any, input_rows: Any) -> Iterator[Any]:
        result = super().transformWithStateUDF(stateful_processor_api_client, mode, key, input_rows)
        if mode != TransformWithStateInPandasFuncMode.PROCESS_TIMER:
            return result
        return self._around(result)

    def _around(self, timers: Iterator[Any]) -> Iterator[Any]:
        processor = self._stateful_processor
        yield from processor.gathered()
        yield from timers
        yield from processor.gathered()


def transform_with_state(grouped: GroupedData, processor: Any, output_schema: StructType, time_mode: str,
                         event_time_column: Optional[str] = None) -> DataFrame:
    """``grouped.transformWithStateInPandas(processor, output_schema, "Append", time_mode, ...)``, with the
    processor's gathered results handed over at each partition's end (see the module's docstring)."""
    from pyspark.sql.functions import pandas_udf

    df = grouped._df
    session = df.sparkSession
    udf = pandas_udf(_HandOver(processor, time_mode).transformWithStateUDF, returnType=output_schema,
                     functionType=PythonEvalType.SQL_TRANSFORM_WITH_STATE_PANDAS_UDF)
    column = udf(*[df[name] for name in df.columns])
    jdf = grouped._jgd.transformWithStateInPandas(column._jc, session._jsparkSession.parseDataType(output_schema.json()),
                                                  "Append", time_mode, None, event_time_column or "")
    return DataFrame(jdf, session)
