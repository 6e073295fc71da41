"""A job for the kill-and-restart timer test: event-time timers registered per record, fired only at end of input.

    python timer_job.py <bootstrap servers> <output topic> <checkpoint dir>
"""

import sys
from datetime import datetime, timedelta, timezone

from kindling import KeyedProcessFunction, StreamEnvironment, WatermarkStrategy
from kindling.connectors.kafka import KafkaSink

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
RECORDS = [("a", T0 + timedelta(seconds=s), s) for s in (1, 3, 5)] + [("b", T0 + timedelta(seconds=s), s) for s in (2, 4, 6)]
RECORDS.sort(key=lambda r: r[1])


class RemindLater(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 60_000)
        return []

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), (timestamp - int(T0.timestamp() * 1000)) // 1000


def main(servers: str, topic: str, checkpoints: str) -> None:
    env = StreamEnvironment({"execution.checkpointing.interval": "700 ms", "state.checkpoints.dir": checkpoints,
                             "parallelism.default": 2, "kindling.log.level": "ERROR"})
    strategy = WatermarkStrategy.for_bounded_out_of_orderness("1 s").with_timestamp_assigner("ts")
    stream = env.from_collection(RECORDS, "k STRING, ts TIMESTAMP, s INT", strategy, rows_per_batch=1)
    fired = stream.key_by("k").process(RemindLater(), "k STRING, timer_s BIGINT")
    fired.sink_to(KafkaSink.builder().set_bootstrap_servers(servers).set_topic(topic).set_value_format("json")
                  .set_delivery_guarantee("exactly-once").set_transactional_id_prefix("timers-" + topic).build()).uid("timers")
    env.execute("timer-restart")


if __name__ == "__main__":
    main(*sys.argv[1:4])
