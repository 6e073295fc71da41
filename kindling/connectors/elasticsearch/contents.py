"""A sink's index read back as it stands: every document of a static index after a refresh, in one search.

Reconciliation compares these documents with a batch run; the dashboard charts them (the role Kibana plays
in Flink's PyFlink walkthrough). A dynamic index (``'index' = 'logs-{ts|yyyy-MM-dd}'``) is many indices and is
refused by name.
"""

from __future__ import annotations

from typing import Any, Sequence

from kindling.connectors.elasticsearch.client import make_client
from kindling.connectors.elasticsearch.index import IndexPattern
from kindling.connectors.elasticsearch.options import SinkConfig

MAX_DOCUMENTS = 10_000  # Elasticsearch's default index.max_result_window: what one search returns


def index_documents(config: SinkConfig, fields: Sequence[str], limit: int = MAX_DOCUMENTS) -> tuple[list[tuple[Any, ...]], int]:
    """Up to ``limit`` documents of the sink's index as tuples of ``fields`` (``_source`` values as JSON gives
    them, None where a field is missing), and how many documents the index holds (0 if it does not exist)."""
    if IndexPattern.parse(config.index).dynamic:
        raise ValueError(f"the dynamic index '{config.index}' cannot be read back; a static 'index' can")
    client = make_client(config)
    try:
        if not client.indices.exists(index=config.index):
            return [], 0
        client.indices.refresh(index=config.index)
        response = client.search(index=config.index, body={"query": {"match_all": {}}, "size": min(limit, MAX_DOCUMENTS),
                                                           "track_total_hits": True})
    finally:
        client.close()
    hits = getattr(response, "body", response)["hits"]
    total = hits.get("total", {})
    count = total.get("value", 0) if isinstance(total, dict) else int(total or 0)
    return [tuple((hit.get("_source") or {}).get(name) for name in fields) for hit in hits["hits"]], count
