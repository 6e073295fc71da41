"""Projection and filter pushdown into table scans, read off Spark's optimized plan of a planned query.

For each scan of a table in the plan (a relation carrying a ``TABLE_SCAN`` id), the columns any operator above
it references and the conjuncts of the filters applied straight to its rows (comparisons of a column with a
literal, ``IN``, ``IS [NOT] NULL`` and their ``NOT``) are declared for the scan's reader
(:mod:`kindling.connectors.scan_pushdown`). Everything here only narrows what a reader may skip: a plan
shape not recognised declares nothing, and Spark still evaluates every filter.
"""

from __future__ import annotations

import datetime
import decimal
import logging
from typing import Any, Optional

from pyspark.sql import DataFrame

from kindling.connectors import scan_pushdown
from kindling.connectors.base import TABLE_SCAN

log = logging.getLogger("kindling.sql")

_RELATIONS = ("StreamingRelationV2", "DataSourceV2Relation", "DataSourceV2ScanRelation", "StreamingDataSourceV2Relation")
_PASS_THROUGH = ("Filter", "Project", "SubqueryAlias")
_COMPARISONS = {"EqualTo": "EqualTo", "LessThan": "LessThan", "LessThanOrEqual": "LessThanOrEqual",
                "GreaterThan": "GreaterThan", "GreaterThanOrEqual": "GreaterThanOrEqual"}
_FLIPPED = {"EqualTo": "EqualTo", "LessThan": "GreaterThan", "LessThanOrEqual": "GreaterThanOrEqual",
            "GreaterThan": "LessThan", "GreaterThanOrEqual": "LessThanOrEqual"}


def _seq(scala: Any) -> list:
    return [scala.apply(i) for i in range(scala.size())]


def _attributes(attribute_set: Any) -> list:
    return _seq(attribute_set.toSeq())


def declare(df: DataFrame) -> None:
    """Declare, for every table scan in ``df``'s optimized plan, the columns it needs and the filters on its rows."""
    try:
        # Spark's optimized plan: filters pushed down to the scan, columns pruned (a streaming frame's own optimizedPlan
        # refuses to run before start, so the optimizer is run over its analyzed plan)
        execution = df._jdf.queryExecution()
        root = (df.sparkSession._jsparkSession.sessionState().optimizer().execute(execution.analyzed()) if df.isStreaming
                else execution.optimizedPlan())
        scans: list[tuple[Any, str]] = []
        referenced: set[int] = set()
        filters: dict[str, list[dict]] = {}
        stack = [(root, [])]
        for attribute in _seq(root.output()):
            referenced.add(attribute.exprId().id())
        while stack:
            node, ancestors = stack.pop()
            name = node.nodeName()
            for attribute in _attributes(node.references()):
                referenced.add(attribute.exprId().id())
            if name in _RELATIONS:
                scan_id = _scan_id(node)
                if scan_id:
                    scans.append((node, scan_id))
                    filters[scan_id] = _filters(ancestors, node)
                continue
            for child in _seq(node.children()):
                stack.append((child, [node] + ancestors))
        for relation, scan_id in scans:
            output = _seq(relation.output())
            columns = [a.name() for a in output if a.exprId().id() in referenced]
            scan_pushdown.declare(scan_id, columns, filters[scan_id])
    except Exception as exc:  # a plan shape not seen before: readers read everything, as without pushdown
        log.debug("no scan pushdown for this plan: %s", exc)


def _scan_id(relation: Any) -> Optional[str]:
    if relation.nodeName() == "DataSourceV2ScanRelation":
        relation = relation.relation()
    for accessor in ("extraOptions", "options"):
        options = getattr(relation, accessor, None)
        if options is None:
            continue
        try:
            value = options().get(TABLE_SCAN)
        except Exception:
            continue
        if value is not None and not hasattr(value, "isDefined"):
            return str(value)
        if value is not None and value.isDefined():
            return str(value.get())
    return None


def _filters(ancestors: list, relation: Any) -> list[dict]:
    """The conjuncts of the Filters between ``relation`` and the first node above it that is not a Filter, a column
    Project or an alias (those filters see exactly the scan's rows)."""
    own = {a.exprId().id(): a.name() for a in _seq(relation.output())}
    found: list[dict] = []
    for node in ancestors:
        name = node.nodeName()
        if name not in _PASS_THROUGH:
            break
        if name == "Project" and any(e.nodeName() != "AttributeReference" for e in _seq(node.projectList())):
            break  # a computed column could be what a filter above compares
        if name == "Filter":
            for conjunct in _conjuncts(node.condition()):
                spec = _spec(conjunct, own)
                if spec is not None:
                    found.append(spec)
    return found


def _conjuncts(expression: Any) -> list:
    if expression.nodeName() == "And":
        return [c for child in _seq(expression.children()) for c in _conjuncts(child)]
    return [expression]


def _column(expression: Any, own: dict[int, str]) -> Optional[str]:
    if expression.nodeName() != "AttributeReference":
        return None
    return own.get(expression.exprId().id())


def _literal(expression: Any) -> tuple[bool, Any]:
    """(whether the expression is a literal of a type a filter can carry, its Python value)."""
    if expression.nodeName() != "Literal":
        return False, None
    value = expression.value()
    if value is None:
        return True, None
    kind = expression.dataType().typeName()
    if kind in ("integer", "long", "short", "byte"):
        return True, int(value)
    if kind == "boolean":
        return True, bool(value)
    if kind == "string":
        return True, value.toString()
    if kind.startswith("decimal"):
        return True, decimal.Decimal(value.toString())
    if kind == "date":
        return True, datetime.date(1970, 1, 1) + datetime.timedelta(days=int(value))
    return False, None


def _spec(expression: Any, own: dict[int, str]) -> Optional[dict]:
    name = expression.nodeName()
    children = _seq(expression.children())
    if name == "Not" and len(children) == 1:
        child = _spec(children[0], own)
        return None if child is None else {"op": "Not", "child": child}
    if name in ("IsNull", "IsNotNull") and len(children) == 1:
        column = _column(children[0], own)
        return None if column is None else {"op": name, "column": column}
    if name in _COMPARISONS and len(children) == 2:
        left, right = children
        column, (is_literal, value) = _column(left, own), _literal(right)
        op = name
        if column is None:
            column, (is_literal, value), op = _column(right, own), _literal(left), _FLIPPED[name]
        if column is None or not is_literal or value is None:
            return None
        return {"op": op, "column": column, "value": value}
    if name in ("In", "InSet") and children:
        column = _column(children[0], own)
        if column is None:
            return None
        if name == "In":
            literals = [_literal(c) for c in children[1:]]
        else:
            hset = expression.hset()
            literals = [(True, v) for v in _seq(hset.toSeq())] if expression.child().dataType().typeName() in (
                "integer", "long", "short", "byte") else [(False, None)]
        if not literals or not all(ok for ok, _ in literals):
            return None
        return {"op": "In", "column": column, "value": [v for _, v in literals if v is not None]}
    return None
