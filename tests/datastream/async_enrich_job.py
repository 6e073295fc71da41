"""A job for test_async_io_kill.py: Kafka records enriched by an async call to a local HTTP server, written exactly once.

    python async_enrich_job.py <bootstrap servers> <input topic> <output topic> <checkpoint dir> <server port>

Reads ``{"id": <bigint>, "payload": <string>}`` records, asks ``GET /<id>`` of the server for each (an AsyncFunction,
ordered, capacity 20), and writes ``{"id": ..., "payload": <the answer>}`` with an exactly-once Kafka sink.
"""

from __future__ import annotations

import asyncio
import sys

from kindling.common import Time, Types
from kindling.connectors.kafka import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.datastream import AsyncDataStream, AsyncFunction, WatermarkStrategy
from kindling.env import StreamEnvironment


class Enrich(AsyncFunction):
    """One HTTP/1.1 request per record, on asyncio streams: the server's answer becomes the record's payload."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def async_invoke(self, value):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(f"GET /{value[0]} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        response = await reader.read()
        writer.close()
        await writer.wait_closed()
        return [(value[0], response.split(b"\r\n\r\n", 1)[1].decode())]


def main(servers: str, source_topic: str, sink_topic: str, checkpoints: str, port: int) -> None:
    env = StreamEnvironment({"state.checkpoints.dir": checkpoints, "execution.checkpointing.interval": "500 ms",
                             "parallelism.default": 2})
    source = (KafkaSource.builder().set_bootstrap_servers(servers).set_topics(source_topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest()).set_value_format("json")
              .set_schema("id BIGINT, payload STRING").build())
    sink = (KafkaSink.builder().set_bootstrap_servers(servers).set_topic(sink_topic).set_value_format("json")
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).set_transactional_id_prefix(f"enrich-{sink_topic}").build())
    records = env.from_source(source, WatermarkStrategy.no_watermarks(), "Input")
    enriched = AsyncDataStream.ordered_wait(records, Enrich(port), Time.seconds(30), 20,
                                            Types.ROW_NAMED(["id", "payload"], [Types.LONG(), Types.STRING()]))
    enriched.sink_to(sink).name("Output").uid("enriched-sink")
    env.execute("Async Enrich")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
