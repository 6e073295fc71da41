"""Which of a job's source scans feed no event-time state, declared before its queries start.

See :mod:`kindling.connectors.watermark_use` for why: a source keeping Flink's per-split watermark
holds partitions back only for queries with an operator that uses Spark's watermark. A query's
analyzed plan is read node by node; every node outside a short list of record-at-a-time operators
counts as possibly stateful (a window aggregation, a join, deduplication, ``transformWithState`` with
its event-time timers, a streaming limit, anything unknown), so a scan is only ever released from its
hold when every query reading it is a plain pipeline of projections, filters, unions, Python map
functions and aggregations that do not group by an event-time column.
"""

from __future__ import annotations

import logging
from typing import Any, Iterator, Optional, Sequence

from pyspark.sql import DataFrame

from kindling.connectors import watermark_use
from kindling.connectors.base import TABLE_SCAN

log = logging.getLogger("kindling.job")

_DELAY_KEY = "spark.watermarkDelayMs"  # Spark's metadata on an event-time column (EventTimeWatermark.delayKey)

# Analyzed-plan nodes that transform records one at a time and keep no state across micro-batches.
RECORD_AT_A_TIME = frozenset({
    "Project", "Filter", "EventTimeWatermark", "SubqueryAlias", "View", "Union", "Generate", "Expand",
    "Repartition", "RepartitionByExpression", "RebalancePartitions", "ResolvedHint", "CollectMetrics",
    "MapInPandas", "MapInArrow", "PythonMapInArrow", "MapPartitions", "MapElements", "TypedFilter",
    "DeserializeToObject", "SerializeFromObject", "AppendColumns", "Sample", "WithCTE", "CTERelationRef",
    "StreamingRelation", "StreamingRelationV2", "StreamingExecutionRelation", "LocalRelation", "OneRowRelation",
})


def scans(frame: DataFrame) -> tuple[set[str], bool]:
    """(the scan ids of ``frame``'s sources, whether its plan may keep event-time state)."""
    found: set[str] = set()
    stateful = False
    for node in plan_nodes(frame):
        name = node.nodeName()
        if name not in RECORD_AT_A_TIME and not (name == "Aggregate" and not groups_by_event_time(node)):
            stateful = True
        if name == "StreamingRelationV2":
            scan_id = node.extraOptions().get(TABLE_SCAN)
            if scan_id:
                found.add(str(scan_id))
    return found, stateful


def plan_nodes(frame: DataFrame, streaming_only: bool = False) -> Iterator[Any]:
    """The nodes of ``frame``'s analyzed plan (JVM objects), parents before their children; with
    ``streaming_only``, a subtree that reads no stream (the static side of a join) is left out."""
    stack = [frame._jdf.queryExecution().analyzed()]
    while stack:
        node = stack.pop()
        if streaming_only and not node.isStreaming():
            continue
        yield node
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))


def groups_by_event_time(aggregate) -> bool:
    """Whether an Aggregate groups by an event-time column (the rowtime itself, or a window over it): only
    then does Spark use the watermark for it (to drop late rows and evict finished groups). A group by a
    value computed from the rowtime (``FLOOR(ts TO HOUR)``) is an updating aggregation, as in Flink's planner,
    and holding a partition back would only delay its updates."""
    groups = aggregate.groupingExpressions()
    for i in range(groups.size()):
        expression = groups.apply(i)
        while expression.nodeName() == "Alias":
            expression = expression.child()
        if expression.nodeName() == "AttributeReference" and expression.metadata().contains(_DELAY_KEY):
            return True
    return False


def declare(frames: Sequence[Optional[DataFrame]]) -> None:
    """Tell the scans of a job's queries (one frame per query) whether they feed event-time state.

    A scan is released from its hold only when every query of the job reading it is stateless;
    with a query whose plan is unknown (None) nothing is released.
    """
    if any(frame is None for frame in frames):
        return
    stateless: set[str] = set()
    stateful: set[str] = set()
    try:
        for frame in frames:
            ids, keeps_state = scans(frame)
            (stateful if keeps_state else stateless).update(ids)
    except Exception as exc:  # py4j or a plan shape not seen before: keep every hold
        log.debug("could not read the query plans for event-time state: %s", exc)
        return
    watermark_use.declare(stateless - stateful, stateful)
