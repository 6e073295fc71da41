"""A sink's committed output up to a checkpoint's micro-batch, read back as rows in the table's column order.

* ``filesystem``: the table's visible files, less those that commit-log entries after the micro-batch
  published, plus the files the log still held pending at that micro-batch (committed to the checkpoint,
  not yet rolled into view), read with the table's own format.
* ``kafka``: the topic read with ``isolation.level = read_committed`` from its earliest offsets, with the table's
  own format: records of aborted transactions are not output. An exactly-once sink is read up to its cut at the
  micro-batch compared (:func:`output_cut`), also while the job keeps committing; other sinks to the current end.
* ``jdbc``: the table scanned as it stood after the micro-batch (an upsert sink's rows are the final value per key),
  read before the batch run, between two readings of the sink's commits table (:func:`output_cut`).
* ``elasticsearch-*``, ``opensearch``: every document of the (static) index after a refresh, as it stands.
* ``upsert-kafka``: the same read (and cut), reduced to the last record per key (a tombstone deletes the key): the
  final value per key, which is what an updating result is compared by.
* a changelog format (``debezium-json``, ``canal-json``, ``maxwell-json``) on ``kafka`` or ``filesystem``: the
  envelopes' rows applied in order (an insert adds a row, a delete removes one): the rows they leave.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import pyarrow as pa
from confluent_kafka import OFFSET_BEGINNING
from confluent_kafka import KafkaError as _KafkaError

from kindling.formats.changelog import CHANGELOG_FORMATS
from kindling.reconciliation.checkpoint import CheckpointError
from kindling.reconciliation.compare import Row

if TYPE_CHECKING:
    from kindling.connectors.kafka.options import SinkConfig
    from kindling.connectors.kafka.transactions import OutputCut
    from kindling.sql.catalog import CatalogTable
    from kindling.sql.session import SqlSession

READABLE = ("filesystem", "kafka", "upsert-kafka", "jdbc", "elasticsearch-6", "elasticsearch-7", "elasticsearch-8", "opensearch")
KAFKA_PARTITION_EOF = _KafkaError._PARTITION_EOF


class SinkNotReadable(ValueError):
    """The sink's committed output cannot be read back; the message names the connector or option."""


@dataclass(frozen=True)
class SinkCut:
    """A sink's committed output at the micro-batch compared, found while the job may keep committing: a Kafka topic's
    end offsets (read up to them later), or a JDBC table's rows (read at once: the table changes in place)."""

    offsets: Optional["OutputCut"] = None
    rows: Optional[list[Row]] = None


def output_cut(session: "SqlSession", table: "CatalogTable", checkpoint: Path, last_committed: Callable[[], int],
               batch_id: Optional[int], timeout: float = 60.0) -> tuple[int, Optional[SinkCut]]:
    """The checkpoint's last committed micro-batch and, for a sink that records its batches, its output cut at the batch compared.

    Spark commits a micro-batch to its checkpoint after the sink committed it, so the checkpoint's last batch L is read
    first and the sink after it, between two readings of the sink's own marker (its last committed batch M: the
    exactly-once Kafka sink's commit markers, the JDBC sink's commits table). An unchanged marker M <= L means that
    what was read is exactly the output of the batches up to L (the batches after M wrote nothing, or M would have
    moved). While the job commits L + 1, M > L: read both again, until ``timeout``. A chosen batch before L is cut only
    if no later batch wrote output. None: no cut (the sink is read as it stands, and the report says so).
    """
    last = last_committed()
    probe = _cut_probe(session, table, checkpoint)
    if probe is None:
        return last, None
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None:
            marker, cut = found
            if marker is None or marker <= (last if batch_id is None else batch_id):
                return last, cut
            if batch_id is not None and marker <= last:
                return last, None  # batches after the chosen one wrote output: no cut there
        if time.monotonic() > deadline:
            return last, None
        time.sleep(0.05)
        last = last_committed()


def _cut_probe(session: "SqlSession", table: "CatalogTable",
               checkpoint: Path) -> Optional[Callable[[], Optional[tuple[Optional[int], SinkCut]]]]:
    """A function reading the sink's marker and output once: (marker, cut), or None if a commit ran meanwhile."""
    config = _transactional_sink(table)
    if config is not None:
        from kindling.connectors.kafka.transactions import committed_cut

        def kafka() -> Optional[tuple[Optional[int], SinkCut]]:
            cut = committed_cut(config)
            return None if cut is None else (cut.batch_id, SinkCut(offsets=cut))

        return kafka
    if table.connector == "jdbc":
        from kindling.connectors.jdbc.options import jdbc_config
        from kindling.connectors.jdbc.sink import last_committed_batch, sink_identity

        jdbc = jdbc_config(table.connector_options())
        sink_id = sink_identity({"checkpointLocation": str(checkpoint)}, jdbc)

        def rows() -> Optional[tuple[Optional[int], SinkCut]]:
            before = last_committed_batch(jdbc, sink_id)
            ranges, session.input_ranges = session.input_ranges, None  # the sink is read whole
            try:
                read = _scanned_rows(session, table, table.options)
            finally:
                session.input_ranges = ranges
            return (before, SinkCut(rows=read)) if last_committed_batch(jdbc, sink_id) == before else None

        return rows
    return None


def _transactional_sink(table: "CatalogTable") -> Optional["SinkConfig"]:
    """The sink settings of an exactly-once Kafka or upsert-kafka table (None for any other table)."""
    if table.connector == "kafka":
        from kindling.connectors.kafka.options import sink_config
    elif table.connector == "upsert-kafka":
        from kindling.connectors.kafka.upsert import upsert_sink_config as sink_config
    else:
        return None
    config = sink_config(table.connector_options())
    return config if config.delivery_guarantee == "exactly-once" else None


def committed_rows(session: "SqlSession", table: "CatalogTable", checkpoint: Path, batch_id: int,
                   cut: Optional[SinkCut] = None) -> tuple[list[Row], list[str]]:
    """The sink's rows committed up to micro-batch ``batch_id`` of the query whose checkpoint is given, and notes.

    ``cut``: the sink's output at that batch (:func:`output_cut`); without it a Kafka topic is read to its end and a
    JDBC table as it stands.
    """
    connector = table.connector
    if cut is not None and cut.rows is not None:
        return cut.rows, []
    offsets = cut.offsets if cut is not None else None
    if connector == "filesystem":
        return _filesystem_rows(table, checkpoint, batch_id)
    if connector == "kafka":
        return _kafka_rows(session, table, offsets)
    if connector == "upsert-kafka":
        return _upsert_kafka_rows(table, offsets)
    if connector.startswith("elasticsearch-") or connector == "opensearch":
        return _index_rows(table), [f"the index of '{table.name}' is read as it stands: a job still running may have written "
                                    "micro-batches after the one compared"]
    if connector == "jdbc":
        rows = _scanned_rows(session, table, table.options)
        note = (f"the jdbc table '{table.name}' is read as it stands: a job still running may have written "
                "micro-batches after the one compared")
        return rows, [note]
    raise SinkNotReadable(f"reconcile: the output of connector '{connector}' (table '{table.name}') cannot be read back yet; "
                          f"readable sinks: {', '.join(READABLE)}")


def _filesystem_rows(table: "CatalogTable", checkpoint: Path, batch_id: int) -> tuple[list[Row], list[str]]:
    from kindling.connectors.filesystem.commit_log import CommitLog
    from kindling.connectors.filesystem.options import sink_config
    from kindling.connectors.filesystem.storage import Storage

    if table.partition_keys:
        raise SinkNotReadable(f"reconcile: the partitioned filesystem table '{table.name}' (PARTITIONED BY "
                              f"{', '.join(table.partition_keys)}) cannot be read back yet")
    config = sink_config(table.connector_options())
    storage = Storage(config)
    for _ in range(4):
        try:
            return _filesystem_snapshot(table, config, storage, CommitLog(storage, config, str(checkpoint)), batch_id)
        except FileNotFoundError:  # a running job published (and removed) a staged file meanwhile: look again
            pass
    return _filesystem_snapshot(table, config, storage, CommitLog(storage, config, str(checkpoint)), batch_id)


def _filesystem_snapshot(table: "CatalogTable", config: Any, storage: Any, log: Any, batch_id: int) -> tuple[list[Row], list[str]]:
    from kindling.connectors.filesystem.formats import read_table
    from kindling.connectors.filesystem.source import absolute_path, list_data_files

    # Listed before the log is read: a file visible here was published by an entry the log read below holds.
    visible = [absolute_path(storage, r) for r in list_data_files(storage)]
    entries = log.entries()
    if not entries:
        raise CheckpointError(f"the filesystem table '{table.name}' has no commit log in {storage.uri(log.directory)}: "
                              "was it written by this job?")
    later_finals: set[str] = set()
    later_groups: dict[str, dict[str, Any]] = {}  # staged path -> the later publication that took it
    at_batch = None
    for batch, seq in entries:
        entry = log.read(batch, seq) or {"publish": [], "pending": {}}
        if batch > batch_id:
            for item in entry["publish"]:
                later_finals.add(item["final"])
                for source in item["sources"]:
                    later_groups[source] = item
        else:
            at_batch = entry
    if at_batch is None:
        raise CheckpointError(f"the commit log of '{table.name}' no longer holds micro-batch {batch_id} (it keeps the last "
                              f"entries only, from batch {entries[0][0]}): reconcile a later checkpoint")
    schema = table.source_schema()
    tables = [read_table(storage, path, schema, config) for path in visible if path not in later_finals]
    pending = {f["path"]: f for b in at_batch.get("pending", {}).values() for f in b["files"]}
    taken: set[str] = set()
    for path in pending:
        if storage.exists(path):
            data = read_table(storage, path, schema, config)
            if data.num_rows == 0 and not storage.exists(path):
                raise FileNotFoundError(path)  # published between the two looks
            tables.append(data)
            continue
        item = later_groups.get(path)
        if item is None:
            raise CheckpointError(f"file {storage.uri(path)}, pending in '{table.name}' at micro-batch {batch_id}, is gone")
        if item["final"] in taken:
            continue
        # Published later, merged with the files pending before it (a merge keeps its sources' order, and files
        # pending at this batch come before any written after it): this batch's rows are the final file's first ones.
        ours = [source for source in item["sources"] if source in pending]
        if item["sources"][: len(ours)] != ours or any(pending[source].get("rows") is None for source in ours):
            raise CheckpointError(f"file {storage.uri(path)}, pending in '{table.name}' at micro-batch {batch_id}, was merged "
                                  "with other files by compaction: its rows cannot be told apart; reconcile a later checkpoint")
        final = read_table(storage, item["final"], schema, config)
        tables.append(final.slice(0, sum(int(pending[source]["rows"]) for source in ours)))
        taken.add(item["final"])
    notes = []
    if pending:
        notes.append(f"{len(pending)} file(s) of '{table.name}' were committed to the checkpoint but not yet rolled into view "
                     "at its micro-batch; their rows are compared too")
    rows = [tuple(r.values()) for data in tables for r in data.to_pylist()]
    if config.changelog_format is not None:  # change envelopes: the rows they leave, each row's kind in the last column
        return applied_changelog(rows, table.name, notes), notes
    return rows, notes


def applied_changelog(changes: list[tuple], table: str, notes: list[str]) -> list[Row]:
    """Changelog rows (the row kind last) applied in order to a multiset: +I/+U add a row, -U/-D remove one. A removal of
    a row the changes never added is told in ``notes`` (a sink written outside the job, or by another)."""
    final: Counter = Counter()
    unmatched = 0
    for change in changes:
        row, kind = change[:-1], change[-1]
        if kind in ("-U", "-D"):
            if final[row] > 0:
                final[row] -= 1
            else:
                unmatched += 1
        else:
            final[row] += 1
    if unmatched:
        notes.append(f"{unmatched} deletion(s) in '{table}' remove a row its changes never added; they are ignored")
    return list((+final).elements())


def _kafka_rows(session: "SqlSession", table: "CatalogTable", cut: Optional["OutputCut"]) -> tuple[list[Row], list[str]]:
    options = {k: v for k, v in table.options.items() if not k.startswith(("scan.", "sink."))}
    options.update({"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset",
                    "properties.isolation.level": "read_committed"})
    if cut is not None:
        options.update({"scan.bounded.mode": "specific-offsets",
                        "scan.bounded.specific-offsets": ";".join(f"partition:{p},offset:{end}" for p, end in cut.ends.items())})
    notes = []
    if table.options.get("sink.delivery-guarantee", "").lower() != "exactly-once":
        notes.append(f"the kafka sink of '{table.name}' is not exactly-once: after a failure it may hold records twice")
    elif cut is None:
        notes.append(f"the topic of '{table.name}' is read to its end: the job kept committing and no cut at the micro-batch "
                     "compared was found, so micro-batches after it may be in it")
    if (table.options.get("format") or table.options.get("value.format")) in CHANGELOG_FORMATS:
        return applied_changelog(_changes_read(session, table, options), table.name, notes), notes
    return _scanned_rows(session, table, options), notes


def _changes_read(session: "SqlSession", table: "CatalogTable", options: dict[str, str]) -> list[Row]:
    """A changelog format's rows read back through the table's own connector, each with its row kind last."""
    from kindling.connectors.base import ROWKIND_COLUMN, Source

    readback = dataclasses.replace(table, options=options, watermark=None)
    source = Source(readback.connector, readback.connector_options(), readback.source_schema())
    names = [c.name for c in table.sink_columns()]
    df = session.env.read_bounded(source).select(*[f"`{n}`" for n in names], ROWKIND_COLUMN)
    return [tuple(row.values()) for row in df.toArrow().to_pylist()]


def _scanned_rows(session: "SqlSession", table: "CatalogTable", options: dict[str, str]) -> list[Row]:
    """The table read through its own connector in batch mode, with ``options``."""
    readback = dataclasses.replace(table, options=options, watermark=None)
    df, _ = session._table_frame(readback, table.line)
    names = [c.name for c in table.sink_columns()]
    return [tuple(row.values()) for row in df.select(*[f"`{n}`" for n in names]).toArrow().to_pylist()]


def _upsert_kafka_rows(table: "CatalogTable", cut: Optional["OutputCut"]) -> tuple[list[Row], list[str]]:
    from confluent_kafka import Consumer, TopicPartition

    from kindling.connectors.kafka.upsert import upsert_sink_config
    from kindling.formats import ValueDecoder

    config = upsert_sink_config(table.connector_options())
    if config.value_fields_include != "ALL":
        raise SinkNotReadable(f"reconcile: the upsert-kafka table '{table.name}' writes its values without the key columns "
                              "('value.fields-include' = 'EXCEPT_KEY'); only 'ALL' can be read back yet")
    consumer = Consumer({**config.client_properties, "bootstrap.servers": config.bootstrap_servers, "enable.auto.commit": False,
                         "group.id": "kindling-reconcile", "isolation.level": "read_committed", "enable.partition.eof": True})
    latest: dict[bytes, Optional[bytes]] = {}
    try:
        metadata = consumer.list_topics(config.topic, timeout=30).topics[config.topic]
        ends = {}
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(config.topic, partition), timeout=30)
            end = high if cut is None else min(high, cut.ends.get(partition, 0))
            if end > low:
                ends[partition] = end
        consumer.assign([TopicPartition(config.topic, p, OFFSET_BEGINNING) for p in ends])
        done: set[int] = set()
        while len(done) < len(ends):
            message = consumer.poll(10)
            if message is None:
                raise TimeoutError(f"reconcile: reading topic '{config.topic}' back stalled")
            if message.error():
                if message.error().code() == KAFKA_PARTITION_EOF:
                    done.add(message.partition())
                    continue
                raise RuntimeError(f"reconcile: reading topic '{config.topic}' back: {message.error()}")
            if message.offset() >= ends[message.partition()]:  # past the cut: a batch after the one compared
                done.add(message.partition())
                continue
            latest[message.key() or b""] = message.value()
    finally:
        consumer.close()
    values = [v for v in latest.values() if v is not None]
    schema = table.source_schema()
    decoded = ValueDecoder(schema, config.value_format).decode(values)
    if decoded.errors:
        raise SinkNotReadable(f"reconcile: a record of topic '{config.topic}' is not valid {config.value_format.name}: {decoded.errors[0][1]}")
    columns = pa.Table.from_arrays(decoded.arrays, names=schema.fieldNames())
    return [tuple(r.values()) for r in columns.to_pylist()], []


def _index_rows(table: "CatalogTable") -> list[Row]:
    from kindling.arrow import arrow_schema
    from kindling.connectors.elasticsearch.contents import MAX_DOCUMENTS, index_documents
    from kindling.connectors.elasticsearch.lookup import documents_to_arrow
    from kindling.connectors.elasticsearch.options import FLAVORS, sink_config

    config = sink_config(FLAVORS[table.connector], table.connector_options())
    names = [c.name for c in table.sink_columns()]
    try:
        documents, total = index_documents(config, names)
    except ValueError as exc:
        raise SinkNotReadable(f"reconcile: table '{table.name}': {exc}") from None
    if total > MAX_DOCUMENTS:
        raise SinkNotReadable(f"reconcile: index '{config.index}' holds more than {MAX_DOCUMENTS} documents, more than one "
                              "search reads back")
    schema = arrow_schema(table.source_schema())
    return [tuple(r.values()) for r in documents_to_arrow(documents, schema).to_pylist()]
