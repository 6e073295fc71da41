"""Late readings (book ch. 6, side outputs and late data): count readings per sensor and second; send late ones aside.

Readings later than the watermark for all their windows go to the ``late-readings`` side output
instead of being dropped; windows accept updates for ``--lateness`` after they close.

    python examples/sensors/late_readings.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sensors import READING, START, event_time  # noqa: E402

from kindling import StreamEnvironment, TumblingEventTimeWindows  # noqa: E402
from kindling.datastream.side_outputs import OutputTag  # noqa: E402
from kindling.datastream.window_functions import ProcessWindowFunction  # noqa: E402

LATE_READINGS = OutputTag("late-readings", READING)
COUNT = "id STRING, window_end TIMESTAMP, readings BIGINT"


class CountReadings(ProcessWindowFunction):
    def process(self, key: str, context: Any, elements: Iterable[Any]) -> Iterable[tuple]:
        from datetime import datetime, timezone

        yield key, datetime.fromtimestamp(context.window().end / 1000, tz=timezone.utc), sum(1 for _ in elements)


def build(env: StreamEnvironment, data: Sequence[Any], rows_per_batch: int = 0, lateness: str = "0 s") -> Tuple[Any, Any]:
    stream = env.from_collection(list(data), READING, event_time("1 s"), rows_per_batch=rows_per_batch)
    counts = (stream.key_by("id").window(TumblingEventTimeWindows.of("1 s")).allowed_lateness(lateness)
              .side_output_late_data(LATE_READINGS).process(CountReadings(), COUNT))
    return counts, counts.get_side_output(LATE_READINGS)


def sample() -> List[tuple]:
    from datetime import timedelta

    at = lambda s: START + timedelta(seconds=s)  # noqa: E731
    return [("sensor_1", at(0.1), 60.0), ("sensor_1", at(0.5), 61.0), ("sensor_1", at(2.5), 62.0),
            ("sensor_1", at(0.7), 59.0),   # late: the watermark is at 1.5 s
            ("sensor_1", at(3.2), 63.0), ("sensor_1", at(2.9), 64.0)]


def main(argv: Optional[List[str]] = None) -> None:
    env = StreamEnvironment({"execution.checkpointing.interval": "200 ms", "parallelism.default": 2,
                             "state.checkpoints.dir": ".kindling/checkpoints", "kindling.log.level": "ERROR"})
    counts, late = build(env, sample(), rows_per_batch=3)
    counts.print("counts")
    late.print("late")
    env.execute(f"late-readings-{__import__('os').getpid()}")


if __name__ == "__main__":
    main()
