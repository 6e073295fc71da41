"""Arrow batches -> bulk actions: one NDJSON text per row, built column-wise.

* Upsert mode (a PRIMARY KEY): ``+I``/``+U`` rows become ``update`` actions with ``doc_as_upsert``
  (Flink's ``UpdateRequest.doc(json).upsert(json)``: a partial-update merge), ``-D`` rows become
  ``delete`` actions, ``-U`` rows are dropped. The document id is the key columns' string forms (as
  Flink's ``KeyExtractor`` writes them) joined by ``document-id.key-delimiter``; ``sink.retry-on-conflicts``
  (other than -1) becomes the update's ``retry_on_conflict``.
* Append mode (no key): ``index`` actions without an id (Elasticsearch generates one).

Documents are Flink's JSON format (the shared encoder), the index comes from the index pattern.
"""

from __future__ import annotations

from typing import Optional, Union

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    MapType,
    StructType,
)

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN, upsert_kinds
from kindling.connectors.elasticsearch.index import IndexPattern, local_datetime_strings
from kindling.connectors.elasticsearch.options import SinkConfig
from kindling.formats.encoding import RowEncoder, json_strings
from kindling.formats.java_text import java_floating as java_double  # Double.toString, as Flink's key extractor writes it
from kindling.options import OptionError

_ILLEGAL_KEY_TYPES = (BinaryType, ArrayType, MapType, StructType)


def check_input(config: SinkConfig, schema: StructType, updating: bool) -> None:
    """Flink's planning checks against the rows the sink receives (raised before any row is written)."""
    label = config.flavor.name
    names = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
    missing = [k for k in config.key_fields if k not in names]
    if missing:
        raise OptionError(f"{label} sink: the primary key column '{missing[0]}' is not in the data ({', '.join(names)})")
    illegal = [schema[k].dataType.simpleString().upper() for k in config.key_fields
               if isinstance(schema[k].dataType, _ILLEGAL_KEY_TYPES)]
    if illegal:
        raise OptionError(f"The table has a primary key on columns of illegal types: [{', '.join(illegal)}].")
    if updating and not config.upsert:
        raise OptionError(f"{label} sink: the query produces updates (an unbounded GROUP BY, DISTINCT or Top-N) but the "
                          "table has no primary key; declare PRIMARY KEY (...) NOT ENFORCED so that updates and deletes "
                          "address one document each")
    IndexPattern.parse(config.index).check(StructType([schema[n] for n in names]), updating, config.instant_fields)


def key_strings(column: pa.Array) -> pa.Array:
    """A key column as Flink's KeyExtractor writes it (``toString`` of the value)."""
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return column.cast(pa.string())
    if pa.types.is_timestamp(t):
        return local_datetime_strings(column)
    if pa.types.is_floating(t):
        return pa.array([None if v is None else java_double(v) for v in column.to_pylist()], pa.string())
    return column.cast(pa.string())


class ActionBuilder:
    """Builds the bulk actions of one sink for Arrow batches of its input."""

    def __init__(self, config: SinkConfig, schema: StructType, zone: str = "UTC") -> None:
        self.config = config
        self.columns = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        self.pattern = IndexPattern.parse(config.index)
        self.zone = zone
        self._encoder = RowEncoder(config.json, self.columns, StructType([schema[n] for n in self.columns]))
        import orjson

        self._type = f',"_type":{orjson.dumps(config.document_type).decode()}' if config.document_type else ""

    def documents(self, batch: pa.RecordBatch) -> pa.Array:
        """The rows as JSON objects (Flink's json format), as a string array."""
        return self._encoder.json_objects(batch).cast(pa.string())

    def ids(self, batch: pa.RecordBatch) -> pa.Array:
        """Document ids: key columns' strings joined by the delimiter."""
        strings = [key_strings(batch.column(batch.schema.get_field_index(k))) for k in self.config.key_fields]
        nulls = [k for k, s in zip(self.config.key_fields, strings) if s.null_count]
        if nulls:
            raise ValueError(f"{self.config.flavor.name} sink: primary key column '{nulls[0]}' is NULL in a row; "
                             "a document id needs every key column")
        if len(strings) == 1:
            return strings[0]
        return pc.binary_join_element_wise(*strings, pa.scalar(self.config.key_delimiter))

    def build(self, batch: pa.RecordBatch) -> Optional[pa.Array]:
        """One NDJSON text (action line + source line) per kept row; None when no row is kept."""
        kinds: Optional[pa.Array] = None
        ids = self.ids(batch) if self.config.upsert else None
        if ROWKIND_COLUMN in batch.schema.names:
            kinds = batch.column(batch.schema.get_field_index(ROWKIND_COLUMN))
            if ids is not None:
                kinds = upsert_kinds(kinds, lambda: ids)
            keep = pc.is_valid(kinds) if ids is not None else pc.invert(pc.fill_null(pc.equal(kinds, "-U"), False))
            if not pc.all(keep).as_py():
                batch = batch.filter(keep)
                kinds = kinds.filter(keep)
                ids = ids.filter(keep) if ids is not None else None
        if batch.num_rows == 0:
            return None
        index = self.pattern.generate(batch, self.zone, self.config.instant_fields)
        index_json: Union[pa.Scalar, pa.Array] = (pa.scalar(json_strings(pa.array([index]))[0].as_py())
                                                  if isinstance(index, str) else json_strings(index))
        documents = self.documents(batch)
        if not self.config.upsert:
            return pc.binary_join_element_wise(pa.scalar('{"index":{"_index":'), index_json, pa.scalar(self._type + "}}\n"),
                                               documents, pa.scalar("\n"), pa.scalar(""))
        assert ids is not None
        id_json = json_strings(ids)
        retries = f',"retry_on_conflict":{self.config.retry_on_conflict}' if self.config.retry_on_conflict != -1 else ""
        upserts = pc.binary_join_element_wise(
            pa.scalar('{"update":{"_index":'), index_json, pa.scalar(self._type + ',"_id":'), id_json,
            pa.scalar(retries + '}}\n{"doc":'), documents, pa.scalar(',"doc_as_upsert":true}\n'), pa.scalar(""))
        if kinds is None or not pc.any(pc.fill_null(pc.equal(kinds, "-D"), False)).as_py():
            return upserts
        deletes = pc.binary_join_element_wise(pa.scalar('{"delete":{"_index":'), index_json,
                                              pa.scalar(self._type + ',"_id":'), id_json, pa.scalar("}}\n"), pa.scalar(""))
        return pc.if_else(pc.fill_null(pc.equal(kinds, "-D"), False), deletes, upserts)
