"""Following a topic as it grows (an output topic watched by the demo or a test), without a fetch storm.

A Kafka broker holds an empty fetch for up to ``fetch.wait.max.ms`` before answering, so a consumer
waiting for records costs nothing. Not every Kafka-protocol server does: the local broker kindling
starts for development (noida-db) answers at once, and librdkafka then refetches at once — an idle
consumer measured here kept ~0.65 of a core busy in its own process and ~0.45 in the broker's, on a
2-core machine. ``TopicTail`` fetches in short bursts, assigned from the next offset it owes and unassigned in
between, which costs a real broker nothing and an eager one almost nothing.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional, Sequence

BURST_S = 0.05  # how long one fetch burst may wait for records
QUIET_S = 0.2  # the pause between bursts that found nothing


class TopicTail:
    """Every record of ``topics`` from the start (or ``offsets``), handed out as it arrives.

    >>> tail = TopicTail({"bootstrap.servers": "127.0.0.1:9092"}, ["clicks"])  # doctest: +SKIP
    >>> [m.value() for m in tail.poll(1.0)]  # doctest: +SKIP
    """

    def __init__(self, consumer_config: Mapping[str, Any], topics: Sequence[str],
                 offsets: Optional[Mapping[tuple[str, int], int]] = None, metadata_timeout: float = 10.0) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        conf = {"group.id": "kindling-tail", "enable.auto.commit": False, **consumer_config}
        self.consumer = Consumer(conf)
        metadata = self.consumer.list_topics(timeout=metadata_timeout).topics
        missing = [t for t in topics if t not in metadata or metadata[t].error is not None]
        if missing:
            self.consumer.close()
            raise ValueError(f"cannot follow topic {missing[0]!r}: it does not exist on {conf.get('bootstrap.servers')}")
        starts = dict(offsets or {})
        # The next offset to hand out per partition. Each burst assigns from there and unassigns after:
        # pausing instead would drop what librdkafka had fetched beyond the burst and resume past it.
        self._next = {(t, p): starts.get((t, p), OFFSET_BEGINNING) for t in topics for p in sorted(metadata[t].partitions)}
        self._partition = TopicPartition

    @property
    def partitions(self) -> list:
        return [self._partition(t, p, offset) for (t, p), offset in self._next.items()]

    def poll(self, seconds: float, max_messages: int = 1000) -> list:
        """The next records (errors included, as librdkafka gives them), as soon as there are any; at most
        ``seconds`` waiting for them."""
        deadline = time.monotonic() + seconds
        while True:
            self.consumer.assign(self.partitions)
            try:
                messages = self.consumer.consume(max_messages, BURST_S)
            finally:
                self.consumer.unassign()
            for message in messages:
                if message.error() is None:
                    self._next[(message.topic(), message.partition())] = message.offset() + 1
            remaining = deadline - time.monotonic()
            if messages or remaining <= 0:
                return messages
            time.sleep(min(QUIET_S, remaining))

    def close(self) -> None:
        self.consumer.close()

    def __enter__(self) -> "TopicTail":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
