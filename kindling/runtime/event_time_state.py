"""Which of a job's source scans feed no event-time state, declared before its queries start.

See :mod:`kindling.connectors.watermark_use` for why: a source keeping Flink's per-split watermark
holds partitions back only for queries with an operator that uses Spark's watermark. A query's
analyzed plan is read node by node (:mod:`kindling.runtime.plan_nodes`); every node outside a short list of record-at-a-time operators
counts as possibly stateful (a window aggregation, a join, deduplication, ``transformWithState`` with
its event-time timers, a streaming limit, anything unknown), so a scan is only ever released from its
hold when every query reading it is a plain pipeline of projections, filters, unions, Python map
functions and aggregations that do not group by an event-time column.
"""

from __future__ import annotations

from typing import Optional, Sequence

from kindling.connectors import watermark_use
from kindling.runtime.plan_nodes import RECORD_AT_A_TIME, PlanNode


def scans(nodes: Sequence[PlanNode]) -> tuple[set[str], bool]:
    """(the scan ids of a query's sources, whether its plan may keep event-time state), from its plan's nodes."""
    found: set[str] = set()
    stateful = False
    for node in nodes:
        if node.name not in RECORD_AT_A_TIME and not (node.name == "Aggregate" and not node.groups_by_event_time):
            stateful = True
        if node.scan_id:
            found.add(node.scan_id)
    return found, stateful


def declare(plans: Sequence[Optional[Sequence[PlanNode]]]) -> None:
    """Tell the scans of a job's queries (the nodes of each query's plan) whether they feed event-time state.

    A scan is released from its hold only when every query of the job reading it is stateless;
    with a query whose plan is unknown (None) nothing is released.
    """
    if any(nodes is None for nodes in plans):
        return
    stateless: set[str] = set()
    stateful: set[str] = set()
    for nodes in plans:
        assert nodes is not None
        ids, keeps_state = scans(nodes)
        (stateful if keeps_state else stateless).update(ids)
    watermark_use.declare(stateless - stateful, stateful)

