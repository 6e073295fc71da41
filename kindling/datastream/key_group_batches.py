"""How a keyed operator's records travel to its worker: packed per key group, as Arrow.

Spark's ``transformWithStateInPandas`` worker regroups its input one row at a time in Python (a named tuple
per row, then a pandas frame rebuilt from the tuples) before the operator sees a single record, which cost a
third of the keyed operator's time. So the records are packed before the shuffle: a stateless ``mapInArrow``
on the map side orders each partition's rows by key group (stably, so a key's records keep their arrival
order) and writes each group's rows as one Arrow IPC stream in one binary cell. Spark then shuffles,
sorts and regroups a few hundred rows per micro-batch instead of every record, and the operator unpacks each
group's cells into one Arrow table (:func:`table`) whose columns it reads as Spark itself would have converted
them (:func:`column_values`: straight from Arrow where that gives the same values, through Spark's pandas
conversion otherwise), so the operator reads the same values as from unpacked rows.

Packing changes only the operator's input, not its state: Spark's state schema (the grouping key, the
key group's blob) and the checkpoint stay as they were.

Where kindling starts the session's Python workers itself, they hand a key group's rows over as Arrow without
regrouping them (:mod:`kindling.runtime.keyed_arrow_input`) and nothing is packed: :func:`unpacked_table` reads
those batches into the table :func:`table` gives. Packing remains for workers kindling does not start (a remote
cluster's).
"""

from __future__ import annotations

import enum
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, StructField, StructType

from kindling.row_layout import INTERNAL_PREFIX


class InputForm(enum.Enum):
    """How a keyed operator's input reaches its runner on the worker."""

    FRAMES = "frames"  # pandas frames of plain columns (the test harness's; pandas has no null for a number)
    PACKED = "packed"  # the PACKED cells of each key group and map task (pack)
    ARROW = "arrow"  # Arrow record batches of the operator input's columns (kindling.runtime.keyed_arrow_input)


PACKED = INTERNAL_PREFIX + "packed"  # one key group's rows of a map partition, as an Arrow IPC stream
# Rows (or bytes) a map task gathers before it splits them by key group: the larger, the fewer packed rows
# Spark regroups. Bounded so that a large micro-batch (a backlog) does not sit in a Python worker whole, and so
# that a cell (at most one flush) stays far below what one of the keyed stage's Arrow batches may hold (kindling
# ends those at 256 MiB: kindling.runtime.session).
_FLUSH_ROWS = 1 << 17
_FLUSH_BYTES = 16 << 20


def pack(df: DataFrame, group_columns: Sequence[str]) -> DataFrame:
    """``df`` as one row per key group and batch of a map partition: the group columns, and the group's rows
    (``df``'s other columns, in arrival order) as an Arrow IPC stream in :data:`PACKED`."""
    schema = StructType([df.schema[c] for c in group_columns] + [StructField(PACKED, BinaryType(), False)])
    return df.mapInArrow(_packer(list(group_columns)), schema)


def _packer(group_columns: List[str]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def packed(batches: Iterator[Any]) -> Iterator[Any]:
        pending: List[Any] = []
        rows = size = 0
        for batch in batches:
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            rows += batch.num_rows
            size += batch.nbytes
            if rows >= _FLUSH_ROWS or size >= _FLUSH_BYTES:
                yield split(pending, group_columns)
                pending, rows, size = [], 0, 0
        if pending:
            yield split(pending, group_columns)

    return packed


def split(batches: List[Any], group_columns: List[str]) -> Any:
    """The batches' rows as one row per key group: the group columns and the group's rows (the other columns) as an
    Arrow IPC stream."""
    import numpy as np
    import pyarrow as pa

    table = pa.Table.from_batches(batches)
    groups = [table.column(c).to_numpy() for c in group_columns]
    order = np.lexsort(groups[::-1]) if len(groups) > 1 else np.argsort(groups[0], kind="stable")
    table = table.take(order)
    keys = [g[order] for g in groups]
    changed = np.zeros(len(order), dtype=bool)
    changed[0] = True
    for key in keys:
        changed[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(changed)
    ends = np.append(starts[1:], len(order))
    # Every group's stream written one after another into one buffer: the binary column is that buffer and the
    # streams' offsets in it, no copy per group. A cell leaves out the group columns, which its row holds once.
    rows = table.drop_columns(group_columns)
    sink = pa.BufferOutputStream()
    offsets = [0]
    for start, end in zip(starts.tolist(), ends.tolist()):
        with pa.ipc.new_stream(sink, rows.schema) as writer:
            writer.write_table(rows.slice(start, end - start))
        offsets.append(sink.tell())
    blobs = pa.Array.from_buffers(pa.binary(), len(starts), [None, pa.py_buffer(np.array(offsets, dtype=np.int32)),
                                                             sink.getvalue()])
    columns = [pa.array(key[starts], type=table.schema.field(c).type) for key, c in zip(keys, group_columns)]
    return pa.RecordBatch.from_arrays(columns + [blobs], names=group_columns + [PACKED])


def table(packed: Iterator[Any]) -> Any:
    """A key group's records from its packed frames (as Spark hands them to the operator): one Arrow table of the
    packed columns, the map tasks' cells in the order Spark delivers them; None when nothing was packed."""
    import pyarrow as pa

    tables = []
    for frame in packed:
        for blob in frame.iloc[:, -1].tolist():
            tables.append(pa.ipc.open_stream(blob).read_all())
    if not tables:
        return None
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def unpacked_table(batches: Iterator[Any], layout: Sequence[str], group_columns: Sequence[str]) -> Any:
    """The same table as :func:`table` gives, from a key group's rows themselves: Arrow record batches of the operator
    input's columns (``layout``, in order; :mod:`kindling.runtime.keyed_arrow_input`), the group columns left out as a
    cell leaves them out; None when there are no rows."""
    import pyarrow as pa

    batches = [batch for batch in batches if batch.num_rows]
    if not batches:
        return None
    return pa.Table.from_batches(batches).rename_columns(list(layout)).drop_columns(list(group_columns))


def column_values(records: Any, name: str, timezone: str) -> list:
    """A packed column as Python values, exactly as Spark's conversion of the column to pandas and ``tolist()``
    give them, without pandas where Arrow gives the same values directly: numbers (numpy's, or Arrow's own where the
    column holds a null: an integer stays an int beside None, where pandas would make every value a float),
    booleans without a null (numpy's), strings (Arrow's own Python strings, None for a null)."""
    import pyarrow as pa
    from pyspark.sql.conversion import ArrowBatchTransformer

    column = records.column(name)
    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return column.to_numpy().tolist() if column.null_count == 0 else column.to_pylist()
    if column.null_count == 0 and pa.types.is_boolean(kind):
        return column.to_numpy().tolist()
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column.to_pylist()
    return ArrowBatchTransformer.to_pandas(records.select([name]), timezone=timezone)[0].tolist()


def in_key_order(records: Any, key: str) -> Tuple[Any, Optional[List[int]]]:
    """``records`` with each key's records together, and where each key's records start: keys in the order of their
    first record, a key's records in arrival order. For an integer key column, where ordering the Arrow table costs
    less than picking every record's Python objects; any other is returned as it is with no starts (the operator
    groups it itself), as is one holding a null."""
    import numpy as np
    import pyarrow as pa

    column = records.column(key)
    rows = records.num_rows
    if rows == 0 or not pa.types.is_integer(column.type) or column.null_count:
        return records, None
    keys = column.to_numpy(zero_copy_only=False)
    # One stable sort by key: each key's records in a run, in arrival order, so a run's first record is its key's
    # first. The runs are then put in order of those first records.
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.concatenate(([0], np.flatnonzero(ordered[1:] != ordered[:-1]) + 1))
    by_arrival = np.argsort(order[starts])
    lengths = np.diff(np.append(starts, rows))[by_arrival]
    placed = np.concatenate(([0], np.cumsum(lengths)[:-1]))  # where each run starts in the result
    picks = order[np.repeat(starts[by_arrival] - placed, lengths) + np.arange(rows)]
    if bool(np.all(picks[1:] > picks[:-1])):
        return records, placed.tolist()
    return records.take(picks), placed.tolist()
