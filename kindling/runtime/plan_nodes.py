"""The nodes of a streaming query's analyzed plan, read from the JVM once per query.

A job's start asks two questions of each query's plan: which source scans it reads and whether it may keep
event-time state (:mod:`kindling.runtime.event_time_state`), and whether its output waits on the watermark
(:mod:`kindling.runtime.watermark_batches`). Each node read through Py4J costs several calls into the JVM, so the
plan is read once into :class:`PlanNode` facts and both questions are answered from them.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from pyspark.sql import DataFrame

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
_TRANSFORM_WITH_STATE = frozenset({"TransformWithState", "TransformWithStateInPandas", "TransformWithStateInPySpark"})
_MAP_GROUPS_WITH_STATE = frozenset({"FlatMapGroupsWithState", "FlatMapGroupsInPandasWithState"})
# The stateful nodes whose ``timed`` fact is read: whether the watermark or a timer can make them emit.
TIMED = frozenset({"Join"}) | _TRANSFORM_WITH_STATE | _MAP_GROUPS_WITH_STATE


@dataclass(frozen=True)
class PlanNode:
    """What the job's start needs to know of one analyzed-plan node.

    ``streaming``: whether the node's subtree reads a stream (every node below a static one is static).
    ``scan_id``: a stream scan's ``TABLE_SCAN`` option. ``groups_by_event_time``: an Aggregate grouped by an
    event-time column. ``timed``: for a join, whether it is an outer join of two streams; for
    ``transformWithState``, whether it has a time mode; for ``[flat]mapGroupsWithState``, whether it has a timeout;
    None where the node is not one of those or its fields could not be read.
    """

    name: str
    streaming: bool
    scan_id: Optional[str] = None
    groups_by_event_time: bool = False
    timed: Optional[bool] = None


def read_plan(frame: DataFrame) -> list[PlanNode]:
    """The nodes of ``frame``'s analyzed plan, parents before their children."""
    nodes: list[PlanNode] = []
    root = frame._jdf.queryExecution().analyzed()
    stack = [(root, bool(root.isStreaming()))]
    while stack:
        node, streaming = stack.pop()
        children = node.children()
        kids = [(kid, bool(kid.isStreaming())) for kid in (children.apply(i) for i in range(children.size()))]
        nodes.append(_facts(node, node.nodeName(), streaming, [kid_streaming for _, kid_streaming in kids]))
        stack.extend(kids)
    return nodes


def read_plans(frames: Sequence[Optional[DataFrame]]) -> list[Optional[list[PlanNode]]]:
    """Each frame's plan nodes; None for a query without a frame or whose plan could not be read (py4j, or a plan
    shape not seen before), which keeps every hold and Spark's batches without input."""
    plans: list[Optional[list[PlanNode]]] = []
    for frame in frames:
        try:
            plans.append(read_plan(frame) if frame is not None else None)
        except Exception as exc:
            log.debug("could not read a query plan: %s", exc)
            plans.append(None)
    return plans


def always_null(frame: DataFrame, column: str) -> bool:
    """Whether ``frame``'s ``column`` is null on every row by the frame's analyzed plan: defined as a null literal,
    directly or through aliases of it. False wherever that cannot be read from the plan: a union (whose output
    column carries its first input's id whatever the others hold), a column a Python function or a join computes,
    a plan whose text Spark shortened. Two Py4J calls and the plan's text: no analysis."""
    plan = frame._jdf.queryExecution().analyzed()
    target = next((a for a in str(plan.output().mkString("\n")).split("\n") if a.split("#")[0] == column), None)
    if target is None:
        return False
    text = str(plan.toString())
    if _UNION.search(text):
        return False
    for _ in range(64):  # (a chain of aliases: Spark renames a column in each projection that re-selects it)
        defined = re.search(r"(\S+(?: as [a-z_]+\))?) AS " + re.escape(target) + r"(?![0-9A-Za-z])", text)
        if defined is None:
            return False
        expression = defined.group(1).lstrip("[(, ")
        if _NULL.fullmatch(expression):
            return True
        if expression.split("#")[0] != column:
            return False
        target = expression
    return False


_UNION = re.compile(r"\bUnion\b")
_NULL = re.compile(r"null|cast\(null as [a-z_]+\)")


def _facts(node: Any, name: str, streaming: bool, children_streaming: list[bool]) -> PlanNode:
    if name == "StreamingRelationV2":
        scan_id = node.extraOptions().get(TABLE_SCAN)
        return PlanNode(name, streaming, scan_id=str(scan_id) if scan_id else None)
    if name == "Aggregate":
        return PlanNode(name, streaming, groups_by_event_time=_groups_by_event_time(node))
    try:
        if name == "Join":
            return PlanNode(name, streaming, timed=all(children_streaming) and node.joinType().sql() != "INNER")
        if name in _TRANSFORM_WITH_STATE:
            return PlanNode(name, streaming, timed=str(node.timeMode()) != "NoTime")
        if name in _MAP_GROUPS_WITH_STATE:
            return PlanNode(name, streaming, timed=str(node.timeout()) != "NoTimeout")
    except Exception:  # a Spark whose plan nodes look different: the node's timing stays unknown
        pass
    return PlanNode(name, streaming)


def _groups_by_event_time(aggregate: Any) -> bool:
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
