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

import os
from typing import Any, Iterator, Optional

from pyspark.sql import DataFrame, GroupedData, SparkSession
from pyspark.sql.streaming.stateful_processor_util import (
    TransformWithStateInPandasFuncMode,
    TransformWithStateInPandasUdfUtils,
)
from pyspark.sql.types import StructType
from pyspark.util import PythonEvalType


class _HandOver(TransformWithStateInPandasUdfUtils):
    """PySpark's dispatch of Spark's calls, with the processor's gathered results handed over at the partition's
    end: before the expired timers (the key groups' results, as Spark would have had them first) and after them.
    ``arrow_input``: the workers hand each key group's rows over as Arrow record batches
    (:mod:`kindling.runtime.keyed_arrow_input`)."""

    def __init__(self, stateful_processor: Any, time_mode: str, arrow_input: bool = False) -> None:
        super().__init__(stateful_processor, time_mode)
        self.arrow_input = arrow_input

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


def arrow_input_available(session: SparkSession) -> bool:
    """Whether every Python worker of ``session`` hands a keyed operator's rows over as Arrow record batches
    (:mod:`kindling.runtime.keyed_arrow_input`): its workers are forked by kindling's daemon (a local master), and
    this PySpark's worker has the step that module replaces. Otherwise the operator's input is packed on the map side
    (:mod:`kindling.datastream.key_group_batches`), as it also is with the environment variable
    ``KINDLING_KEYED_INPUT=packed`` (a diagnostic switch; the state is the same either way)."""
    from kindling.runtime import keyed_arrow_input, warm_daemon

    if os.environ.get("KINDLING_KEYED_INPUT", "").lower() == "packed":
        return False
    conf = session.sparkContext.getConf()
    return (conf.get("spark.python.daemon.module", "") == warm_daemon.MODULE
            and (conf.get("spark.python.use.daemon", "true") or "true").lower() != "false"
            and keyed_arrow_input.worker_supports())


def transform_with_state(grouped: GroupedData, processor: Any, output_schema: StructType, time_mode: str,
                         event_time_column: Optional[str] = None, arrow_input: bool = False) -> DataFrame:
    """``grouped.transformWithStateInPandas(processor, output_schema, "Append", time_mode, ...)``, with the
    processor's gathered results handed over at each partition's end (see the module's docstring); with
    ``arrow_input`` the workers hand its input over as Arrow record batches (see :func:`arrow_input_available`)."""
    from pyspark.sql.functions import pandas_udf

    df = grouped._df
    session = df.sparkSession
    hand_over = _HandOver(processor, time_mode, arrow_input)
    udf = pandas_udf(hand_over.transformWithStateUDF, returnType=output_schema,
                     functionType=PythonEvalType.SQL_TRANSFORM_WITH_STATE_PANDAS_UDF)
    column = udf(*[df[name] for name in df.columns])
    jdf = grouped._jgd.transformWithStateInPandas(column._jc, session._jsparkSession.parseDataType(output_schema.json()),
                                                  "Append", time_mode, None, event_time_column or "")
    return DataFrame(jdf, session)
