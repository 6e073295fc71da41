"""The Nexmark suite as files: the queries, the source DDL with its parameters, the events materialised.

Shared by ``check.py`` (conformance), ``reference.py`` (expected results) and ``run.py``
(benchmark). A query file is the suite's: its sink ``CREATE TABLE``, maybe a view or a function,
and one ``INSERT INTO <sink> SELECT ...``; ``select_of`` gives the setup statements and the
SELECT so a harness can collect the result instead of discarding it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kindling.connectors.nexmark.config import SOURCE_OPTIONS, GeneratorConfig  # noqa: E402
from kindling.connectors.nexmark.generator import generate  # noqa: E402

QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q11", "q12", "q14", "q15", "q16", "q17", "q18", "q19",
           "q20", "q21", "q22"]
# Event time of event 0 for reproducible runs: 2026-01-01T00:00:00Z.
BASE_TIME = 1_767_225_600_000


@dataclass(frozen=True)
class Workload:
    """The parameters the suite's DDL takes (``${TPS}``, ``${EVENTS_NUM}``, ...)."""

    events: int
    tps: int = 10_000
    base_time: int = BASE_TIME
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46

    def values(self) -> dict[str, str]:
        return {
            "TPS": str(self.tps), "EVENTS_NUM": str(self.events), "BASE_TIME": str(self.base_time),
            "PERSON_PROPORTION": str(self.person_proportion), "AUCTION_PROPORTION": str(self.auction_proportion),
            "BID_PROPORTION": str(self.bid_proportion),
        }

    def source_options(self) -> dict[str, str]:
        """The nexmark connector options the DDL sets."""
        return {
            "first-event.rate": str(self.tps), "next-event.rate": str(self.tps), "events.num": str(self.events),
            "person.proportion": str(self.person_proportion), "auction.proportion": str(self.auction_proportion),
            "bid.proportion": str(self.bid_proportion), "kindling.base-time": str(self.base_time),
        }

    def generator_config(self) -> GeneratorConfig:
        return GeneratorConfig.from_options(SOURCE_OPTIONS.validate(self.source_options()))


def render(text: str, values: Mapping[str, str]) -> str:
    """Fill the suite's ``${NAME}`` parameters; an unknown one is an error."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"SQL parameter ${{{name}}} has no value; known: {', '.join(sorted(values))}")
        return values[name]

    return re.sub(r"\$\{([A-Z_]+)\}", replace, text)


def ddl(workload: Workload) -> str:
    return render((HERE / "ddl.sql").read_text(), workload.values())


def query_text(name: str) -> str:
    return (HERE / "queries" / f"{name}.sql").read_text()


def strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def select_of(text: str) -> tuple[list[str], str]:
    """A query file's statements before its INSERT (sink table, views, functions), and the INSERT's SELECT."""
    statements = [s.strip() for s in strip_comments(text).split(";") if s.strip()]
    inserts = [i for i, s in enumerate(statements) if re.match(r"(?is)^INSERT\s+INTO\s+", s)]
    if len(inserts) != 1:
        raise ValueError(f"a Nexmark query file has exactly one INSERT INTO; found {len(inserts)}")
    insert = statements[inserts[0]]
    select = re.sub(r"(?is)^INSERT\s+INTO\s+[`\w.]+\s*", "", insert, count=1)
    return statements[: inserts[0]], select


# -- the events, materialised -------------------------------------------------------------------

KINDS = ("person", "auction", "bid")


def materialise(workload: Workload, directory: Path, chunk: int = 1 << 17) -> dict[str, Path]:
    """Write the workload's events to ``<directory>/<person|auction|bid>.parquet`` (flat columns, plus ``seq``).

    ``seq`` is the event's number in the stream: ties between equal keys are broken by arrival,
    as Flink's Top-N and deduplication do for an in-order source. ``dateTime`` is UTC wall time.
    """
    directory.mkdir(parents=True, exist_ok=True)
    paths = {kind: directory / f"{kind}.parquet" for kind in KINDS}
    marker = directory / "COMPLETE"
    if marker.exists() and marker.read_text() == repr(workload):
        return paths
    config = workload.generator_config()
    writers: dict[str, pq.ParquetWriter] = {}
    try:
        for first in range(0, workload.events, chunk):
            events = generate(config, first, min(chunk, workload.events - first))
            seq = np.arange(first, first + len(events.event_type), dtype=np.int64)
            for code, kind in enumerate(KINDS):
                rows = np.flatnonzero(events.event_type == code)
                struct = getattr(events, kind).take(pa.array(rows))
                columns = {f.name: struct.field(i) for i, f in enumerate(struct.type)}
                for name, column in columns.items():
                    if pa.types.is_timestamp(column.type):
                        columns[name] = column.cast(pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("ms"))
                columns["seq"] = pa.array(seq[rows])
                table = pa.table(columns)
                if kind not in writers:
                    writers[kind] = pq.ParquetWriter(paths[kind], table.schema)
                writers[kind].write_table(table)
    finally:
        for writer in writers.values():
            writer.close()
    marker.write_text(repr(workload))
    return paths


def write_flink_json(workload: Workload, path: Path, chunk: int = 1 << 17) -> Path:
    """The events as JSON lines in the Nexmark table's shape (``event_type`` and three nested rows), for PyFlink's filesystem source."""
    import orjson

    marker = path.with_suffix(".complete")
    if marker.exists() and marker.read_text() == repr(workload):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    config = workload.generator_config()
    with path.open("wb") as out:
        for first in range(0, workload.events, chunk):
            events = generate(config, first, min(chunk, workload.events - first))
            table = pa.table({
                "event_type": pa.array(events.event_type),
                **{kind: _flink_rows(getattr(events, kind)) for kind in KINDS},
            })
            for row in table.to_pylist():
                out.write(orjson.dumps({k: v for k, v in row.items() if v is not None}))
                out.write(b"\n")
    marker.write_text(repr(workload))
    return path


def _flink_rows(struct: pa.StructArray) -> pa.StructArray:
    """Timestamps as Flink's JSON format reads TIMESTAMP(3): 'yyyy-MM-dd HH:mm:ss.SSS' (UTC wall time)."""
    import pyarrow.compute as pc

    children = []
    for i in range(struct.type.num_fields):
        child = struct.field(i)
        if pa.types.is_timestamp(child.type):
            # Arrow's %S prints the fraction of a millisecond-unit timestamp: "00.004"
            child = pc.strftime(child.cast(pa.timestamp("ms", tz="UTC")), format="%Y-%m-%d %H:%M:%S")
        children.append(child)
    return pa.StructArray.from_arrays(children, names=[f.name for f in struct.type], mask=struct.is_null())
