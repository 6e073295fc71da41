"""One Spark query for the sinks fed by one operator's outputs (its main output and its side outputs).

Each sink is otherwise a Spark query of its own, and every query runs the operator, and reads its
sources, again. When several sinks read branches of the same operator, kindling runs one query
over the operator's tagged output instead: its ``foreachBatch`` keeps the micro-batch (the
operator ran once) and hands each sink its branch through the sink connector's own stream
writer, as Spark drives a sink: ``write`` on the executors, then ``commit(messages, batch_id)``
on the driver. A batch replayed after a crash has the same id, so a sink that had committed it
already skips it (each connector fences on the batch id), and one that had not commits it now.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN, Sink

if TYPE_CHECKING:
    from kindling.datastream.stream import DataStreamSink


@dataclass
class OperatorSinks:
    """Sinks whose streams all branch off one operator's output, to be written by one query."""

    uid: str
    members: list["DataStreamSink"]
    tagged: DataFrame  # the operator's output: main and side-output rows, tagged
    bounded: bool
    event_time: bool

    @property
    def name(self) -> str:
        return ", ".join(m.get_name() for m in self.members)

    def start(self, checkpoint: str, query_name: str, interval: str) -> StreamingQuery:
        """Start the query; each micro-batch is computed once and written to every member sink."""
        from kindling.sql.changelog_sink import changelog_batch_writer

        writers = []
        for bound in self.members:
            # The sink's commit reads the batch's time and watermark from the query's checkpoint.
            sink = Sink(bound.sink.connector, {**bound.sink.options, "checkpointLocation": checkpoint})
            writers.append((bound.stream._branch, changelog_batch_writer(sink, f"{query_name}.{bound.get_uid()}")))

        def write_batch(batch: DataFrame, batch_id: int) -> None:
            batch.persist(StorageLevel.MEMORY_AND_DISK)
            try:
                for branch, write in writers:
                    write(_sink_columns(branch(batch)), batch_id)
            finally:
                batch.unpersist()

        from kindling.runtime.job import separate_exchanges

        def start() -> StreamingQuery:
            return (
                self.tagged.writeStream.foreachBatch(write_batch)
                .option("checkpointLocation", checkpoint)
                .queryName(query_name)
                .outputMode("append")
                .trigger(processingTime=interval)
                .start()
            )

        return separate_exchanges(start, self.tagged.sparkSession)()

    def on_finished(self, checkpoint: Path) -> Optional[Callable[[], None]]:
        """The member sinks' end-of-input steps (``on_bounded_finish``), run one after the other."""
        from kindling.connectors import get_connector

        steps = []
        for bound in self.members:
            finish = get_connector(bound.sink.connector).on_bounded_finish
            if finish is not None:
                steps.append((finish, dict(bound.sink.options)))
        if not steps:
            return None

        def run() -> None:
            for finish, options in steps:
                finish(options, str(checkpoint))

        return run


def operator_sinks(sinks: Sequence["DataStreamSink"]) -> list[OperatorSinks]:
    """Group the sinks that read branches (main output, side outputs) of the same operator; single sinks stay alone."""
    groups: dict[int, list["DataStreamSink"]] = {}
    origins = {}
    for bound in sinks:
        origin = bound.stream._origin
        if origin is None or bound.stream._branch is None or bound.output_mode != "append":
            continue
        groups.setdefault(id(origin), []).append(bound)
        origins[id(origin)] = origin
    result = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        origin = origins[key]
        uid = "+".join(m.get_uid() for m in members)
        result.append(OperatorSinks(uid, members, origin._tagged, bounded=all(m.stream.is_bounded for m in members),
                                    event_time=origin._event_time))
    return result


def _sink_columns(df: DataFrame) -> DataFrame:
    return df.select(*[c for c in df.columns if not c.startswith(INTERNAL_PREFIX) or c == ROWKIND_COLUMN])
