"""What every connector shares: its Flink name, its options, its Spark Data Source and end-of-input.

A connector is a Spark Python Data Source registered under ``kindling_<name>``; users
name it as Flink does (``'connector' = 'kafka'``) and pass Flink option names. The
options are validated on the driver when the pipeline is built, so a bad value fails
before any Spark job starts, and again inside the Data Source (executors see only strings).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Optional, Sequence, Type

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import BooleanType, StringType, StructField, StructType

from kindling.connectors.watermark_use import new_scan_id
from kindling.options import OptionSet, ParsedOptions
from kindling.row_layout import EOS_COLUMN, INTERNAL_PREFIX, ROWKIND_COLUMN  # noqa: F401 - connectors take them from here

EOS_FIELD = StructField(EOS_COLUMN, BooleanType(), True)
# Offsets of a source that reached its end carry this flag, so the runtime knows the job may finish.
EOS_OFFSET_KEY = "eos"
# Table facts the SQL layer hands a connector (see kindling.options.TABLE_FACT_PREFIX):
# primary key and partition keys as ';'-separated column names; metadata columns as a JSON
# list of [column, metadata key, virtual] triples (for example [["ts", "timestamp", false]]).
TABLE_PRIMARY_KEY = "kindling.table.primary-key"
TABLE_PARTITION_KEYS = "kindling.table.partition-keys"
TABLE_METADATA = "kindling.table.metadata"
# The event-time (rowtime) column, for sources that track event time per split (Kafka's watermark
# alignment); set by the environment from the watermark strategy and by SQL from WATERMARK FOR.
TABLE_ROWTIME = "kindling.table.rowtime"
# How that column's values become the rowtime's epoch ms when it is converted ("<unit_ms> <offset_ms>":
# numbers times unit_ms, plus offset_ms; see kindling.sql.rowtime_source). Absent: the value as it is.
TABLE_ROWTIME_MILLIS = "kindling.table.rowtime.millis"
# The table's TIMESTAMP_LTZ columns (';'-separated names): Spark has one timestamp type, Flink prints and
# serialises these as instants (``1970-01-01T00:00:05Z``) where a TIMESTAMP prints as ``1970-01-01T00:00:05``.
TABLE_INSTANT_COLUMNS = "kindling.table.instant-columns"
# The physical columns' Flink types as the DDL spells them (a JSON object, column -> type such as "TIMESTAMP(3)"):
# Spark's types lose what a connector's Flink validation reads (TIMESTAMP precision, BINARY(n), CHAR(n), TIME).
TABLE_COLUMN_TYPES = "kindling.table.column-types"
# One scan of such a table (a fresh id per scan): the runtime tells that scan's reader, through
# kindling.connectors.watermark_use, whether the query it feeds keeps event-time state.
TABLE_SCAN = "kindling.table.scan"


def rowtime_options(column: str, conversion: Optional[str] = None) -> dict[str, str]:
    """The options telling a per-split source where one scan reads its rowtime: the column, its conversion
    (``TABLE_ROWTIME_MILLIS``, when not the value as it is) and a fresh scan id."""
    options = {TABLE_ROWTIME: column, TABLE_SCAN: new_scan_id()}
    if conversion is not None:
        options[TABLE_ROWTIME_MILLIS] = conversion
    return options


def rowtime_millis(options: Mapping[str, Any]) -> tuple[int, int]:
    """(unit_ms, offset_ms) of the rowtime column's conversion (``TABLE_ROWTIME_MILLIS``); (1, 0) without one."""
    text = options.get(TABLE_ROWTIME_MILLIS)
    if not text:
        return 1, 0
    unit, offset = str(text).split()
    return int(unit), int(offset)


def spark_format(connector: str) -> str:
    """Spark's format name for a kindling connector (kept apart from Spark's built-in names)."""
    return "kindling_" + connector.replace("-", "_")


def with_eos(schema: StructType) -> StructType:
    """The schema a source Data Source reports: the user's columns plus the end-of-input marker.

    Every column is nullable here, NOT NULL ones included: the marker row holds nulls."""
    return StructType([StructField(f.name, f.dataType, True, f.metadata) for f in schema.fields] + [EOS_FIELD])


def end_of_input_batch(target: pa.Schema) -> pa.RecordBatch:
    """The end-of-input marker as a source emits it: one row, EOS column true, every other column null."""
    columns = [pa.array([True], type=f.type) if f.name == EOS_COLUMN else pa.nulls(1, f.type) for f in target]
    return pa.RecordBatch.from_arrays(columns, schema=target)


def pack_batches(batches: list[pa.RecordBatch]) -> Optional[bytes]:
    """Record batches as one zstd-compressed Arrow IPC stream (None when there are no rows).

    How a sink's tasks send rows to the driver's commit inside their commit messages: they travel
    executor -> JVM -> driver worker, and the transfer costs more than the compression."""
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return None
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batches[0].schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as stream:
        for batch in batches:
            stream.write_batch(batch)
    return sink.getvalue().to_pybytes()


def unpack_table(data: bytes) -> pa.Table:
    """The rows of :func:`pack_batches`."""
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def upsert_kinds(kinds: pa.Array, keys: Callable[[], pa.Array]) -> pa.Array:
    """The change each row makes to an upsert sink: '+I'/'+U' write, '-D' deletes, null skips the row.

    Flink's upsert writers (Elasticsearch, upsert-kafka, JDBC) delete on UPDATE_BEFORE. The planner
    sends one only where a filter above an aggregation drops the UPDATE_AFTER that would follow it
    (``HAVING``), so a '-U' becomes '-D' unless a later row of the batch has the same key; that later
    row then replaces the document and the '-U' is skipped (the sink's final state is the same).
    ``keys`` gives the rows' keys; it is called only when the batch holds a '-U'."""
    retracting = pc.fill_null(pc.equal(kinds, "-U"), False)
    if not pc.any(retracting).as_py():
        return kinds
    return pc.if_else(retracting, pc.if_else(_followed_by_same_key(keys()), pa.scalar(None, pa.string()),
                                             pa.scalar("-D")), kinds)


def _followed_by_same_key(keys: pa.Array) -> pa.Array:
    """True where a later row of the array has an equal key (nulls equal to nulls)."""
    count = len(keys)
    if count < 2:
        return pa.array([False] * count)
    order = pc.sort_indices(pa.table({"key": keys, "at": pa.array(range(count), pa.int64())}),
                            sort_keys=[("key", "ascending"), ("at", "ascending")])
    ordered = pc.take(keys, order)
    current, following = ordered.slice(0, count - 1), ordered.slice(1)
    same = pc.or_(pc.fill_null(pc.equal(current, following), False),
                  pc.and_(pc.is_null(current), pc.is_null(following)))
    return pc.take(pa.concat_arrays([same, pa.array([False])]), pc.sort_indices(order))


class Connector:
    """A connector known by its Flink name, with the option sets it accepts as a source and as a sink."""

    name: ClassVar[str]
    data_source: ClassVar[Type[DataSource]]
    source_options: ClassVar[Optional[OptionSet]] = None
    sink_options: ClassVar[Optional[OptionSet]] = None
    # Whether the source tracks event time per split (Flink's per-split watermark, idleness).
    per_split_event_time: ClassVar[bool] = False

    @classmethod
    def split_event_time_options(cls, rowtime: Optional[str], idleness_ms: Optional[int],
                                 alignment: Optional[tuple[str, int, int]]) -> dict[str, str]:
        """The source options that carry a DataStream watermark strategy to a source tracking event time per
        split: its rowtime column (None: a timestamp assigner function), idleness, and watermark alignment
        as (group, max drift ms, update interval ms). Sources that do not track it take nothing."""
        if alignment is not None:
            raise ValueError(f"with_watermark_alignment: the '{cls.name}' source does not track event time per split; "
                             "watermark alignment is supported by the kafka source")
        return {}

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        if cls.source_options is None:
            raise ValueError(f"connector '{cls.name}' cannot be used as a source (it is a sink only)")
        return cls.source_options.validate(options)

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        if cls.sink_options is None:
            raise ValueError(f"connector '{cls.name}' cannot be used as a sink (it is a source only)")
        return cls.sink_options.validate(options)

    @classmethod
    def prepare_sink(cls, options: Mapping[str, Any], schema: StructType, updating: bool) -> None:
        """Checks a sink can make only once its input is known, on the driver before the job starts: Flink's
        planning checks against the columns and the changelog (``updating``: the input carries updates or
        deletes), and a first request to the external system. Nothing by default."""

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        """Whether a source with these options ends by itself (Flink's Boundedness.BOUNDED)."""
        return False

    # A sink's end-of-input step, run on the driver after its bounded query stopped (e.g. the file sink
    # publishing what it still holds): ``on_bounded_finish(options, checkpoint)``; None when there is none.
    on_bounded_finish: ClassVar[Optional[Callable[[Mapping[str, str], str], None]]] = None
    # A source's clean-up on the driver after its job ended without failing (finished, cancelled or stopped),
    # e.g. Kinesis deregistering the EFO consumer it registered: Spark ends a Python source's reader by
    # ending its process, so the reader's stop() cannot reach external systems. ``on_job_end(options)``.
    on_job_end: ClassVar[Optional[Callable[[Mapping[str, str]], None]]] = None

    @classmethod
    def produces_changelog(cls, options: ParsedOptions) -> bool:
        """Whether the source's rows form a changelog, each with its kind in ``ROWKIND_COLUMN`` (a CDC format)."""
        return False

    @classmethod
    def consumes_updates(cls, options: Mapping[str, str]) -> bool:
        """Whether the sink accepts an updating query's changelog (Flink: a sink whose changelog mode is not
        insert-only); an append-only sink makes the planner refuse such a query naming the table."""
        return True

    @classmethod
    def needs_retractions(cls, options: Mapping[str, str]) -> bool:
        """Whether the sink writes every change as it is (a changelog format: Debezium, Canal, Maxwell), so an update
        must reach it as ``-U`` then ``+U`` (Flink's retract changelog) rather than as an upsert of the new row alone."""
        return False

    # A sink Spark writes itself, in the JVM (its format name, e.g. "noop"): the query never hands its rows to Python.
    spark_sink_format: ClassVar[Optional[str]] = None

    # Whether the sink reads none of its rows' values (Flink's blackhole): an INSERT's values need no cut to the
    # table's TIMESTAMP precision before it (its type is still checked against the table's).
    discards_values: ClassVar[bool] = False

    # Whether the source's reader selects only the columns and applies the filters the SQL planner declares for its
    # scan (kindling.connectors.scan_pushdown): the planner reads the optimized plan for them only then.
    reads_scan_needs: ClassVar[bool] = False

    # Whether the table can be looked up by key (Flink's LookupTableSource): the dimension of a lookup join.
    supports_lookup: ClassVar[bool] = False

    @classmethod
    def validate_lookup(cls, options: Mapping[str, Any]) -> ParsedOptions:
        """A lookup table's options, checked on the driver when the join is planned (a source's by default)."""
        return cls.validate_source(options)

    @classmethod
    def lookup_source(cls, options: Mapping[str, str], key_columns: Sequence[str], columns: Sequence[str],
                      schema: pa.Schema) -> Any:
        """The client a lookup join asks for ``columns`` (of Arrow types ``schema``) by ``key_columns`` (a
        ``kindling.connectors.lookup.LookupSource``), made on a worker; only connectors with ``supports_lookup``."""
        raise ValueError(f"connector '{cls.name}' cannot be looked up")

    @classmethod
    def sink_contents(cls, options: Mapping[str, str], columns: Sequence[str], limit: int) -> Optional["SinkContents"]:
        """What the sink holds now, up to ``limit`` rows of ``columns``, read from the external system; None when the
        connector cannot be read back that way. The job manager's dashboard charts it, as Kibana charts the index
        in Flink's PyFlink walkthrough."""
        return None

    @classmethod
    def default_schema(cls, options: ParsedOptions) -> Optional[StructType]:
        """A source's schema when the user gives none (for example Kafka's ``raw`` format)."""
        return None


@dataclass
class SinkContents:
    """A sink's rows as the external system holds them (JSON values), where they were read, and how many there are."""

    location: str
    columns: list[str]
    key: list[str]
    rows: list[list[Any]]
    total: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Source:
    """A source as the DataStream API and SQL see it: a connector name, Flink options and a schema."""

    connector: str
    options: dict[str, str] = field(default_factory=dict)
    schema: Optional[StructType] = None

    def __post_init__(self) -> None:
        from kindling.connectors import get_connector

        self.options = {k: _option_string(v) for k, v in self.options.items()}
        connector = get_connector(self.connector)
        parsed = connector.validate_source(self.options)
        self._bounded = connector.is_bounded(parsed)
        self._changelog = connector.produces_changelog(parsed)
        if self.schema is None:
            self.schema = connector.default_schema(parsed)
        if self.schema is None:
            raise ValueError(f"source '{self.connector}' needs a schema (the columns it produces)")

    @property
    def bounded(self) -> bool:
        """Whether the source ends by itself (decided from its options when it was made)."""
        return self._bounded

    @property
    def changelog(self) -> bool:
        """Whether the source's rows carry row kinds (``ROWKIND_COLUMN``): an updating table."""
        return self._changelog

    def read_schema(self) -> StructType:
        """The schema the source's Data Source produces: the user's columns, the row kind of a changelog
        source, and the end-of-input marker."""
        assert self.schema is not None
        schema = self.schema
        if self._changelog:
            schema = StructType(schema.fields + [StructField(ROWKIND_COLUMN, StringType(), True)])
        return with_eos(schema)


@dataclass
class Sink:
    """A sink as the DataStream API and SQL see it: a connector name and Flink options."""

    connector: str
    options: dict[str, str] = field(default_factory=dict)
    # A step ``sink_to`` runs first (PyFlink's sink preprocessing): the stream -> (the stream to write, the sink), for
    # sinks whose options depend on the stream's records (a Kafka sink's serialization schemas).
    prepare: Optional[Callable[[Any], tuple[Any, "Sink"]]] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        from kindling.connectors import get_connector

        self.options = {k: _option_string(v) for k, v in self.options.items()}
        get_connector(self.connector).validate_sink(self.options)


def _option_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    return str(value)
