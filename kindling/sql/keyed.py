"""SQL operators on the keyed operator: the one keyed-state core that the DataStream API's keyed functions run on.

Flink's SQL runtime operators the planner cannot hand to Spark (the retracting aggregation, the Top-N and
deduplication, processing-time window aggregation) are keyed functions with state and timers, as Flink's
are built on its keyed-state backend. Here each is an :class:`~kindling.datastream.operator.Adapter` of
:class:`~kindling.datastream.operator.KeyedRunner`: state kept by key group in Spark's state store (one read
and one write per key group and micro-batch), timers and time mode as for a ``KeyedProcessFunction``, and
Flink's ``table.exec.state.ttl`` as the runner's key TTL (a key's state is removed that long after its last
write). Rows reach an operator as tuples of its value columns and leave as tuples of its output columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType, TimestampType

from kindling import config as cfg

if TYPE_CHECKING:
    from kindling.datastream.operator import Adapter
    from kindling.env import StreamEnvironment


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


WINDOW_COLUMNS = frozenset({"window_start", "window_end", "window_time"})


def without_window(keys: Sequence[str], names: Optional[Sequence[Optional[str]]] = None) -> list[str]:
    """``keys`` but a window's start, end and time (by their ``names``, the keys' own by default): the keys a window
    operator's key group is a hash of (see :func:`keyed_frame`)."""
    return [k for k, n in zip(keys, keys if names is None else names) if (n or "").lower() not in WINDOW_COLUMNS]


def keyed_frame(env: "StreamEnvironment", df: DataFrame, keys: Sequence[str], values: Sequence[str], adapter: "Adapter",
                output: StructType, name: str, event_time: bool = False, rowtime: Optional[Column] = None,
                key_group_keys: Optional[Sequence[str]] = None) -> DataFrame:
    """``adapter`` run per key of ``keys`` over ``df``'s ``values`` columns; its rows as ``output``'s columns.

    ``event_time``: the operator runs in Spark's event-time mode (its timers fire on the watermark; ``rowtime``, a
    timestamp per row, is the records' event time). Otherwise processing-time mode (processing-time timers, key TTL).
    The operator is registered with ``env`` like a DataStream keyed operator, so a checkpoint's keyed-state layout
    is checked before a job resumes from it. ``key_group_keys``, some of ``keys``: a row's key group is a hash of
    those alone (by default of all ``keys``). A window operator names its keys without the window, as Flink keys
    it by them and keeps windows as state namespaces: the windows of one key then share a key group, and those a
    watermark closes fire in order of their ends.
    """
    from kindling.datastream import operator as op
    from kindling.datastream.stream import ROWTIME

    spark = df.sparkSession
    parallelism = int(spark.conf.get("spark.sql.shuffle.partitions"))
    value_names = [f"{op.INTERNAL_PREFIX}sv{n}" for n in range(len(values))]
    value_type = StructType([StructField(v, df.schema[c].dataType, True) for v, c in zip(value_names, values)])
    moment = rowtime if rowtime is not None else F.lit(None).cast(TimestampType())
    plain = df.select(*[F.col(_quote(k)).alias(k, metadata={}) for k in dict.fromkeys(keys)],
                      *[F.col(_quote(c)).alias(v, metadata={}) for c, v in zip(values, value_names)], moment.alias(ROWTIME))
    frame = op.operator_input(plain, [F.col(_quote(k)) for k in keys], 0, 1, value_names)
    key_types = [frame.schema[op.key_column(i)].dataType for i in range(len(keys))]
    runner = op.KeyedRunner(adapter, name, output, len(keys), parallelism, [value_names], None, event_time_mode=event_time,
                            key_groups=env.config.get(cfg.MAX_PARALLELISM), key_types=key_types, value_types=[value_type])
    bucket = f"{op.BUCKET}{len(env.keyed_operators)}"
    env.keyed_operators.append((name, bucket))
    hashed = None if key_group_keys is None else [list(keys).index(k) for k in dict.fromkeys(key_group_keys)]
    # A value column that is a key column travels once (as the key); no event time travels without a rowtime.
    key_fields = {j: list(keys).index(c) for j, c in enumerate(values) if c in keys}
    tagged = op.run_operator([frame], [value_type], len(keys), runner, output, with_slot=False, bucket=bucket,
                             hashed_keys=hashed, timed=rowtime is not None, key_fields=[key_fields])
    return tagged.select(*[F.col(_quote(f.name)) for f in output.fields])
