"""The keyed operator's input in its worker as Spark's own Arrow batches, without PySpark's regrouping of every row.

PySpark's ``transformWithStateInPandas`` worker turns each Arrow batch it receives into pandas, walks it one row at
a time (``itertuples``) to find where a grouping key's rows end, and rebuilds a pandas frame per key from the row
tuples, before the stateful processor sees a record: a third of the keyed operator's time when it ran so
(``benchmarks/README.md``). kindling therefore packed each key group's records into one binary cell on the map side
(:mod:`kindling.datastream.key_group_batches`), which costs a second Python worker there: the map stage's rows go
to Python and back as Arrow (``benchmarks/stateful.py --stages``: the map stage's tasks took 2.95 s with it, 1.30 s
without).

Where kindling starts the session's Python workers itself (a local master: every worker is forked by
:mod:`kindling.runtime.warm_daemon`), each worker runs this module's version of that step instead, for kindling's
keyed operator only: a key group's rows are cut out of the Arrow batches Spark sends (the batches come sorted by
grouping key; a group may span batches) and handed to the operator as Arrow record batches, read as the unpacked
cells were. The map side then ships rows as they are, with no Python. Any other ``transformWithStateInPandas``
runs as PySpark runs it. On a remote cluster the executors' workers are PySpark's own, and the operator's input
stays packed (:func:`kindling.runtime.transform_with_state.arrow_input_available` decides, on the driver).

This module is imported by the worker daemon before it forks (nothing heavy at import) and :func:`install` runs in
each forked worker.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable, Iterator, Optional

# What this module reads of PySpark's own function for the transform-with-state step (names of its closure); a
# PySpark whose function holds other names keeps its own step, and kindling packs the operator's input.
REQUIRED = ("udf", "stateful_processor_api_client", "key_offsets", "value_offsets", "output_schema", "runner_conf")
_FUNCTION = "transform_with_state_func"


@functools.lru_cache(maxsize=1)
def worker_supports() -> bool:
    """Whether this PySpark's worker has the transform-with-state step this module replaces, as it reads it."""
    import pyspark.worker

    for const in pyspark.worker.read_udfs.__code__.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == _FUNCTION:
            return set(REQUIRED) <= set(const.co_freevars)
    return False


def install() -> None:
    """In a Python worker: PySpark's reading of a task's functions, with kindling's keyed operator's step replaced."""
    import pyspark.worker
    from pyspark.util import PythonEvalType

    original = pyspark.worker.read_udfs
    if getattr(original, "kindling_arrow_input", False):
        return

    def read_udfs(pickle_ser: Any, udf_info_list: Any, eval_type: int, runner_conf: Any, eval_conf: Any) -> Any:
        read = original(pickle_ser, udf_info_list, eval_type, runner_conf, eval_conf)
        if eval_type != PythonEvalType.SQL_TRANSFORM_WITH_STATE_PANDAS_UDF:
            return read
        function = read[0]
        cells = dict(zip(function.__code__.co_freevars, (cell.cell_contents for cell in function.__closure__ or ())))
        if not getattr(_hand_over(cells.get("udf")), "arrow_input", False):
            return read
        missing = [name for name in REQUIRED if name not in cells]
        if missing:  # the driver checked the same PySpark (worker_supports): a mismatch here is a different install
            raise RuntimeError(f"kindling's keyed operator expected PySpark's transform_with_state_func to hold {missing}; "
                               "the driver and this worker run different PySpark versions")
        return (_transform_with_state(cells), *read[1:])

    read_udfs.kindling_arrow_input = True  # type: ignore[attr-defined]
    pyspark.worker.read_udfs = read_udfs


def _hand_over(function: Any, depth: int = 0) -> Optional[Any]:
    """The object whose bound method PySpark wrapped (``fail_on_stopiteration``, a profiler) as the task's function."""
    owner = getattr(function, "__self__", None)
    if owner is not None:
        return owner
    if depth > 3:
        return None
    for cell in getattr(function, "__closure__", None) or ():
        try:
            found = _hand_over(cell.cell_contents, depth + 1)
        except ValueError:  # an empty cell
            continue
        if found is not None:
            return found
    return None


def _transform_with_state(cells: dict) -> Callable[[int, Iterator[Any]], Iterator[Any]]:
    """PySpark's step for a task of kindling's keyed operator: each grouping key's rows as Arrow record batches."""
    import itertools

    from pyspark.sql.conversion import PandasToArrowConversion
    from pyspark.sql.streaming.stateful_processor_util import TransformWithStateInPandasFuncMode as Mode

    udf, client = cells["udf"], cells["stateful_processor_api_client"]
    key_offsets, value_offsets = list(cells["key_offsets"]), list(cells["value_offsets"])
    output_schema, conf = cells["output_schema"], cells["runner_conf"]

    def converted(results: Iterator[Any]) -> Iterator[Any]:
        for result in results:
            yield PandasToArrowConversion.convert(
                [result], output_schema, timezone=conf.timezone, safecheck=conf.safecheck, arrow_cast=True,
                assign_cols_by_name=conf.assign_cols_by_name,
                int_to_decimal_coercion_enabled=conf.int_to_decimal_coercion_enabled)

    def transform_with_state_func(split_index: int, batches: Iterator[Any]) -> Iterator[Any]:
        for key, group in itertools.groupby(key_runs(batches, key_offsets, value_offsets), key=lambda run: run[0]):
            yield from converted(udf(client, Mode.PROCESS_DATA, key, (rows for _, rows in group)))
        yield from converted(udf(client, Mode.PROCESS_TIMER, None, iter([])))
        yield from converted(udf(client, Mode.COMPLETE, None, iter([])))

    return transform_with_state_func


def key_runs(batches: Iterator[Any], key_offsets: list, value_offsets: list) -> Iterator[tuple]:
    """(grouping key as a tuple of Python values, that key's consecutive rows of one batch as a record batch of the value
    columns) for each run of rows with one grouping key, in the batches' order."""
    import numpy as np

    for batch in batches:
        rows = batch.num_rows
        if rows == 0:
            continue
        changed = np.zeros(rows, dtype=bool)
        changed[0] = True
        keys = [batch.column(offset) for offset in key_offsets]
        for key in keys:
            values = key.to_numpy(zero_copy_only=False)
            changed[1:] |= values[1:] != values[:-1]
        starts = np.flatnonzero(changed)
        firsts = list(zip(*(key.take(starts).to_pylist() for key in keys)))
        values = batch.select(value_offsets)
        ends = starts[1:].tolist() + [rows]
        for key, start, end in zip(firsts, starts.tolist(), ends):
            yield key, values.slice(start, end - start)
