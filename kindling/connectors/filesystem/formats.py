"""File formats: Parquet (a bulk format) and JSON lines / CSV / raw text lines (row formats), Arrow in and Arrow out.

JSON and CSV are Flink's ``json`` and ``csv`` formats, shared with the Kafka connector: one
record per line, no CSV header, timestamps in Flink's SQL standard. ``raw`` is one value per line
(a STRING or BYTES column), read as Flink's text line format reads a file: every line, empty ones too. The changelog formats
(``debezium-json``, ``canal-json``, ``maxwell-json``) are row formats too: one change envelope per
line, read into rows with their row kinds (``ROWKIND_COLUMN``) and written from them. Row-format files can be
concatenated byte-wise (compaction of row formats); Parquet files are merged by rewriting
their records into one file.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.types import StructType

from kindling.connectors.filesystem.options import FileSystemConfig
from kindling.formats import FormatSettings, RowEncoder, ValueDecoder
from kindling.row_layout import ROWKIND_COLUMN


def _settings(config: FileSystemConfig) -> FormatSettings:
    if config.changelog_format is not None:
        return config.changelog_format
    return FormatSettings(config.format, field_delimiter=config.field_delimiter)


def _codec(config: FileSystemConfig) -> Optional[str]:
    return None if config.compression == "NONE" else config.compression.lower()


class FileWriter:
    """Writes Arrow batches into one open output stream in the configured format."""

    def __init__(self, stream, schema: pa.Schema, config: FileSystemConfig) -> None:
        self.stream = stream
        self.schema = schema
        self.config = config
        self.rows = 0
        self.footer = 0
        if config.format == "parquet":
            self._parquet = pq.ParquetWriter(stream, schema, compression=_codec(config))
        else:
            self._parquet = None
            self._encoder = RowEncoder(_settings(config), [n for n in schema.names if n != ROWKIND_COLUMN])

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self._parquet is not None:
            self._parquet.write_batch(batch)
        else:
            lines = self._encoder.encode(batch)
            self.stream.write(b"\n".join(lines) + b"\n")
        self.rows += batch.num_rows

    @property
    def size(self) -> int:
        return self.stream.tell()

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self._parquet is not None:
            self._parquet.close()
        size = self.stream.tell()
        if self._parquet is not None:
            # Everything but the column chunks (magic, footer, schema) is per-file overhead that a
            # merged file has only once: compaction counts the column chunks.
            metadata = self._parquet.writer.metadata
            chunks = sum(metadata.row_group(g).column(c).total_compressed_size
                         for g in range(metadata.num_row_groups) for c in range(metadata.num_columns))
            self.footer = max(0, size - chunks)
        self.stream.close()
        return size


def read_table(storage, path: str, data_schema: StructType, config: FileSystemConfig) -> pa.Table:
    """Every record of one file, as Arrow columns of ``data_schema`` (partition columns excluded); a changelog
    format's rows with their kinds in a last column, ``ROWKIND_COLUMN``."""
    from kindling.arrow import arrow_schema

    target = arrow_schema(data_schema)
    if config.format == "parquet":
        with storage.open_input(path) as handle:
            table = pq.read_table(handle)
        columns = []
        for field in target:
            if field.name in table.column_names:
                column = table.column(field.name)
                columns.append(column if column.type.equals(field.type) else column.cast(field.type))
            else:
                columns.append(pa.nulls(table.num_rows, field.type))
        return pa.Table.from_arrays(columns, schema=target)
    data = storage.read_bytes(path) or b""
    if config.format == "raw":
        lines = text_lines(data)
    else:
        lines = [line for line in data.split(b"\n") if line.strip()]
    changelog = config.changelog_format is not None
    if changelog:
        target = target.append(pa.field(ROWKIND_COLUMN, pa.string(), True))
    if not lines:
        return target.empty_table()
    decoded = ValueDecoder(data_schema, _settings(config)).decode(lines)
    if decoded.errors:
        index, error = decoded.errors[0]
        raise ValueError(f"filesystem source: line {index + 1} of {storage.uri(path)} is not valid {config.format}: {error}")
    arrays = decoded.arrays + ([decoded.kinds] if changelog else [])
    return pa.Table.from_arrays(arrays, schema=target)


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def text_lines(data: bytes) -> list[bytes]:
    """The lines of a text file as Flink's text line format reads them (Java's ``readLine``): split at ``\\n``,
    ``\\r`` or ``\\r\\n``, empty lines kept, no empty line after a final line break."""
    if not data:
        return []
    lines = _LINE_BREAK.split(data)
    if lines[-1] == b"":
        lines.pop()
    return lines


def merge_files(storage, sources: Sequence[str], final_stream, config: FileSystemConfig) -> int:
    """Write the records of ``sources`` into one file (concatenation for row formats); returns rows or bytes written."""
    if config.format != "parquet":
        written = 0
        for source in sources:
            data = storage.read_bytes(source)
            if data is None:
                raise FileNotFoundError(f"filesystem sink: staged file {storage.uri(source)} is missing")
            final_stream.write(data)
            written += len(data)
        final_stream.close()
        return written
    writer: Optional[pq.ParquetWriter] = None
    rows = 0
    for source in sources:
        with storage.open_input(source) as handle:
            parquet = pq.ParquetFile(handle)
            if writer is None:
                writer = pq.ParquetWriter(final_stream, parquet.schema_arrow, compression=_codec(config))
            for group in range(parquet.num_row_groups):
                table = parquet.read_row_group(group)
                writer.write_table(table)
                rows += table.num_rows
    if writer is not None:
        writer.close()
    final_stream.close()
    return rows
