"""Which streaming queries need Spark's no-data micro-batches: those whose output waits on the watermark.

Spark runs a micro-batch without input whenever a newer watermark would let a stateful operator
evict state, whether or not the eviction emits anything. For a window aggregation, an outer join
or an operator with timers that batch is where results come out. For an inner interval join, a
deduplication or an updating aggregation it only deletes state: a bounded Nexmark q4 at 1M events
spent 8.8 of its 33 s in the batch after its last input, removing the interval join's 980k rows
from a state store that was about to be discarded. Flink's inner joins and updating operators emit
nothing on a watermark either, so for such a query the batch is pure overhead: kindling starts a
bounded query of this kind with no-data batches off and finishes it once its input has been read.
An unbounded one keeps them: there they evict little at a time, and they keep the watermark a
checkpoint, the metrics and ``kindling reconcile`` see current between batches with input.

A query's analyzed plan is read node by node, and anything not known to be quiet counts as waiting
on the watermark, so a query is only ever run without no-data batches when every stateful operator
in it is one of: an inner join of two streams, a deduplication, a streaming limit, an aggregation
that does not group by an event-time column, ``transformWithState`` without a time mode and
``[flat]mapGroupsWithState`` without a timeout.
"""

from __future__ import annotations

from typing import Sequence

from kindling.runtime.plan_nodes import RECORD_AT_A_TIME, TIMED, PlanNode

# Stateful analyzed-plan nodes that emit only on input: a newer watermark just evicts their state.
_QUIET = frozenset({"Deduplicate", "DeduplicateWithinWatermark", "GlobalLimit", "LocalLimit"})


def output_waits_on_watermark(nodes: Sequence[PlanNode]) -> bool:
    """Whether some operator of a streaming query (the nodes of its plan) may emit because the watermark advanced.

    >>> from pyspark.sql import SparkSession
    >>> from kindling.runtime.plan_nodes import read_plan
    >>> spark = SparkSession.builder.getOrCreate()
    >>> ticks = spark.readStream.format("rate").load().withWatermark("timestamp", "1 second")
    >>> output_waits_on_watermark(read_plan(ticks.dropDuplicates(["value"])))
    False
    """
    # a static side keeps no state across micro-batches
    return any(_may_emit_on_watermark(node) for node in nodes if node.streaming)


def _may_emit_on_watermark(node: PlanNode) -> bool:
    if node.name in RECORD_AT_A_TIME or node.name in _QUIET:
        return False
    if node.name == "Aggregate":
        return node.groups_by_event_time
    if node.name in TIMED:
        return node.timed is not False  # unknown: assume the watermark matters
    return True
